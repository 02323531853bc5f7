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
    let start = buf.len();
    let id = RepresentationId::for_type(version, T::extensibility(), endianness);
    buf.extend_from_slice(&EncapsulationHeader { id, options: 0 }.to_bytes());
    let mut e = Encoder::new(buf, version, endianness);
    if let Err(err) = sample.encode(&mut e) {
        buf.truncate(start);
        return Err(err.in_member(T::TYPE_NAME));
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
