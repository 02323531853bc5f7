//! Whole samples: encapsulation header, CDR stream, trailing padding.

use crate::encapsulation::{EncapsulationHeader, RepresentationId};
use crate::error::{DecodeError, EncodeError};
use crate::{Cdr, Decoder, Encoder, Endianness, XcdrVersion};

/// Serializes `sample` with its encapsulation header into a new buffer.
pub fn serialize<T: Cdr>(
    sample: &T,
    version: XcdrVersion,
    endianness: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    let mut buf = Vec::with_capacity(64);
    serialize_into(sample, version, endianness, &mut buf)?;
    Ok(buf)
}

/// Appends `sample` with its encapsulation header to `buf` (which may already hold, for
/// example, RTPS headers), padded to a multiple of 4 bytes as the header's options say.
/// On error `buf` is left as it was.
pub fn serialize_into<T: Cdr>(
    sample: &T,
    version: XcdrVersion,
    endianness: Endianness,
    buf: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encapsulate(buf, version, T::extensibility(), endianness, |e| {
        sample.encode(e).map_err(|err| err.in_member(T::TYPE_NAME))
    })
}

/// Appends an encapsulation header for `version`, `extensibility` and `endianness`, what
/// `encode` writes, and the padding to a multiple of 4 that the header's options count. On
/// error `buf` is left as it was.
pub(crate) fn encapsulate(
    buf: &mut Vec<u8>,
    version: XcdrVersion,
    extensibility: crate::Extensibility,
    endianness: Endianness,
    encode: impl FnOnce(&mut Encoder<'_>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    let start = buf.len();
    let id = RepresentationId::for_type(version, extensibility, endianness);
    buf.extend_from_slice(&EncapsulationHeader { id, options: 0 }.to_bytes());
    let mut e = Encoder::new(buf, version, endianness);
    if let Err(err) = encode(&mut e) {
        buf.truncate(start);
        return Err(err);
    }
    let pad = (buf.len() - start).wrapping_neg() & 3;
    buf.resize(buf.len() + pad, 0);
    buf[start + 3] = pad as u8;
    Ok(())
}

/// Deserializes a sample from a payload that starts with its encapsulation header.
///
/// Any XCDR1 or XCDR2 identifier is accepted whatever the type's extensibility (peers
/// differ in which they send, e.g. D_CDR2 for final types); the type decides the layout.
pub fn deserialize<T: Cdr>(payload: &[u8]) -> Result<T, DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    let mut d = Decoder::new(body, header.id.version(), header.id.endianness());
    T::decode(&mut d).map_err(|e| {
        let offset = e.offset + EncapsulationHeader::LEN;
        e.at_offset(offset).in_member(T::TYPE_NAME)
    })
}

/// Deserializes a sample into `value` (see [`Cdr::decode_into`]): as [`deserialize`], but
/// reusing the memory `value`'s sequences and strings hold.
pub fn deserialize_into<T: Cdr>(payload: &[u8], value: &mut T) -> Result<(), DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    let mut d = Decoder::new(body, header.id.version(), header.id.endianness());
    value.decode_into(&mut d).map_err(|e| {
        let offset = e.offset + EncapsulationHeader::LEN;
        e.at_offset(offset).in_member(T::TYPE_NAME)
    })
}

/// Serializes the key-only sample of `sample` (what a dispose or unregister carries as its
/// serialized key, DATA with the K flag) with its encapsulation header: the type's own
/// encoding with only its key members, headers included (a DHEADER for an appendable type
/// in XCDR2, as Cyclone DDS 11 writes it and XTypes' KeyHolder(T) has it).
pub fn serialize_key_sample<T: Cdr>(
    sample: &T,
    version: XcdrVersion,
    endianness: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    let mut buf = Vec::with_capacity(32);
    encapsulate(&mut buf, version, T::extensibility(), endianness, |e| {
        sample
            .encode_key_sample(e)
            .map_err(|err| err.in_member(T::TYPE_NAME))
    })?;
    Ok(buf)
}

/// Deserializes a key-only sample (members that are not keys take their defaults).
///
/// Peers disagree on the XCDR2 key-only sample of an appendable type: Cyclone DDS 11 writes
/// a DHEADER before the key members ([`serialize_key_sample`]), Cyclone DDS 0.10 writes the
/// key members alone. Both are accepted: a DHEADER that does not decode, or does not end
/// exactly where the payload does, is taken to be absent. (Nested appendable key members
/// are read with their DHEADERs in either case.)
pub fn deserialize_key_sample<T: Cdr>(payload: &[u8]) -> Result<T, DecodeError> {
    let headerless_form = T::IS_KEYED && T::extensibility() == crate::Extensibility::Appendable;
    read_key_sample(payload, headerless_form, T::decode_key_sample)
        .map_err(|e| e.in_member(T::TYPE_NAME))
}

/// Reads a key-only sample with `decode`; when `headerless_form` (a keyed appendable type),
/// an XCDR2 one without its DHEADER too (see [`deserialize_key_sample`]).
pub(crate) fn read_key_sample<V>(
    payload: &[u8],
    headerless_form: bool,
    decode: impl Fn(&mut Decoder<'_>) -> Result<V, DecodeError>,
) -> Result<V, DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    let (version, endianness) = (header.id.version(), header.id.endianness());
    let exact = body.len().saturating_sub(header.padding());
    let mut d = Decoder::new(body, version, endianness);
    let with_dheader = decode(&mut d).map(|v| (v, d.position()));
    let headerless = version == XcdrVersion::Xcdr2 && headerless_form;
    match with_dheader {
        Ok((value, end)) if end == exact || !headerless => Ok(value),
        first if headerless => {
            // Put back the DHEADER the writer left out, and read again.
            let key = body.get(..exact).unwrap_or(body);
            let len = u32::try_from(key.len()).unwrap_or(u32::MAX);
            let mut framed = Vec::with_capacity(4 + key.len());
            framed.extend_from_slice(&match endianness {
                Endianness::Little => len.to_le_bytes(),
                Endianness::Big => len.to_be_bytes(),
            });
            framed.extend_from_slice(key);
            let mut d = Decoder::new(&framed, version, endianness);
            match decode(&mut d) {
                Ok(value) => Ok(value),
                Err(_) => first.map(|(v, _)| v),
            }
        }
        other => other.map(|(v, _)| v),
    }
    .map_err(|e| {
        let offset = e.offset + EncapsulationHeader::LEN;
        e.at_offset(offset)
    })
}
