//! Building blocks for encoders of aggregate types: struct framing (DHEADER, parameter
//! lists), member headers of mutable types, optional members, sequences and bounds.
//!
//! `#[derive(Cdr)]` generates calls to these; they are public so that hand-written `Cdr`
//! impls can use them too. Spec references are to DDS-XTypes 1.3, section 7.4.

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, Name};
use crate::{Cdr, Decoder, Encoder, Extensibility, TypeKind, XcdrVersion};

/// XCDR1 parameter id that says an extended header follows (7.4.1.2.1).
pub const PID_EXTENDED: u16 = 0x3f01;
/// XCDR1 parameter id that ends a parameter list (7.4.1.2.1).
pub const PID_LIST_END: u16 = 0x3f02;
/// XCDR1 must-understand flag in a parameter id.
pub const PID_FLAG_MUST_UNDERSTAND: u16 = 0x4000;
/// XCDR1 implementation-specific flag in a parameter id.
pub const PID_FLAG_IMPL_SPECIFIC: u16 = 0x8000;
/// XCDR2 must-understand flag in an EMHEADER (7.4.3.5.4).
pub const EMHEADER_MUST_UNDERSTAND: u32 = 0x8000_0000;
/// Largest member id an EMHEADER or extended parameter header can hold.
pub const MAX_MEMBER_ID: u32 = 0x0fff_ffff;

/// Opens an aggregate of extensibility `ext`: XCDR2 appendable and mutable types get a
/// DHEADER. Pass the result to [`end_aggregate`].
#[inline]
pub fn begin_aggregate(e: &mut Encoder<'_>, ext: Extensibility) -> Option<usize> {
    if e.is_xcdr2() && ext != Extensibility::Final {
        Some(e.begin_length())
    } else {
        None
    }
}

/// Closes an aggregate opened by [`begin_aggregate`]: ends an XCDR1 parameter list, fills
/// the DHEADER.
#[inline]
pub fn end_aggregate(
    e: &mut Encoder<'_>,
    ext: Extensibility,
    dheader: Option<usize>,
) -> Result<(), EncodeError> {
    if ext == Extensibility::Mutable && !e.is_xcdr2() {
        e.align(4);
        e.write_u16(PID_LIST_END | PID_FLAG_MUST_UNDERSTAND);
        e.write_u16(0);
    }
    match dheader {
        Some(at) => e.end_length(at),
        None => Ok(()),
    }
}

/// Opens an aggregate for reading: counts one more level of nesting (refusing more than
/// [`Decoder::MAX_DEPTH`]), reads the XCDR2 DHEADER of appendable and mutable types and
/// narrows the window to it. Pass the result to [`end_aggregate_decode`].
#[inline]
pub fn begin_aggregate_decode(
    d: &mut Decoder<'_>,
    ext: Extensibility,
) -> Result<Option<usize>, DecodeError> {
    d.enter()?;
    if d.is_xcdr2() && ext != Extensibility::Final {
        d.begin_delimited("DHEADER").map(Some)
    } else {
        Ok(None)
    }
}

/// Closes an aggregate opened by [`begin_aggregate_decode`], skipping members appended by
/// a newer version of the type, and leaves its level of nesting.
#[inline]
pub fn end_aggregate_decode(d: &mut Decoder<'_>, outer: Option<usize>) {
    if let Some(outer) = outer {
        d.restore(outer);
    }
    d.leave();
}

/// Where a member of a mutable type (or an XCDR1 optional) began, for [`end_member`].
#[derive(Debug)]
pub struct MemberStart {
    /// Buffer index of the length field to patch, if any.
    length_at: Option<usize>,
    /// XCDR1: the outer alignment origin, restored after the parameter's value.
    outer_origin: Option<usize>,
    /// XCDR1: pad the parameter to a multiple of 4 (members of mutable types; optionals of
    /// final and appendable types are not padded).
    pad: bool,
}

/// The EMHEADER length code for a member of kind `kind` (XTypes 7.4.3.5.4), chosen as
/// Cyclone DDS chooses it, and whether a separate NEXTINT follows. With codes 5–7 the
/// member's own first word (string length, sequence count or DHEADER) is the NEXTINT.
#[inline]
pub const fn length_code(kind: TypeKind) -> (u32, bool) {
    match kind {
        TypeKind::Primitive { size: 1 } | TypeKind::Enumerated { size: 1 } => (0, false),
        TypeKind::Primitive { size: 2 } | TypeKind::Enumerated { size: 2 } => (1, false),
        TypeKind::Primitive { size: 4 } | TypeKind::Enumerated { size: 4 } => (2, false),
        TypeKind::Primitive { size: 8 } | TypeKind::Enumerated { size: 8 } => (3, false),
        TypeKind::String => (5, false),
        TypeKind::Sequence {
            primitive_element_size: 0 | 1,
        } => (5, false),
        TypeKind::Sequence {
            primitive_element_size: 4,
        } => (6, false),
        TypeKind::Sequence {
            primitive_element_size: 8,
        } => (7, false),
        TypeKind::Array {
            primitive_elements: false,
        } => (5, false),
        _ => (4, true),
    }
}

/// Writes the header of member `id` of a mutable type; the member follows, then
/// [`end_member`].
///
/// XCDR2 (7.4.3.5.4): an EMHEADER with the length code of [`length_code`]. XCDR1
/// (7.4.1.2.1): a PID_EXTENDED parameter header with the 32-bit id and length, which is what
/// Cyclone DDS writes for every member; the value is aligned from its own start and padded
/// to a multiple of 4.
#[inline]
pub fn begin_member(
    e: &mut Encoder<'_>,
    id: u32,
    must_understand: bool,
    kind: TypeKind,
) -> MemberStart {
    e.align(4);
    if e.is_xcdr2() {
        let m = if must_understand {
            EMHEADER_MUST_UNDERSTAND
        } else {
            0
        };
        let (lc, nextint) = length_code(kind);
        e.write_u32(m | (lc << 28) | (id & MAX_MEMBER_ID));
        let length_at = if nextint {
            Some(e.begin_length())
        } else {
            None
        };
        MemberStart {
            length_at,
            outer_origin: None,
            pad: false,
        }
    } else {
        begin_parameter(e, id, must_understand, true)
    }
}

/// XCDR1's extended parameter header (`PID_EXTENDED | must-understand`, length 8, flags and
/// id, value length), the value's alignment origin set to its start.
fn begin_parameter(e: &mut Encoder<'_>, id: u32, must_understand: bool, pad: bool) -> MemberStart {
    e.align(4);
    e.write_u16(PID_EXTENDED | PID_FLAG_MUST_UNDERSTAND);
    e.write_u16(8);
    let m = if must_understand {
        PL_EXTENDED_MUST_UNDERSTAND
    } else {
        0
    };
    e.write_u32(m | (id & MAX_MEMBER_ID));
    let length_at = e.buffer_index();
    e.write_u32(0);
    let outer_origin = e.set_origin(e.buffer_index());
    MemberStart {
        length_at: Some(length_at),
        outer_origin: Some(outer_origin),
        pad,
    }
}

/// Finishes a member begun with [`begin_member`], filling in its length.
#[inline]
pub fn end_member(e: &mut Encoder<'_>, start: MemberStart) -> Result<(), EncodeError> {
    if start.pad {
        e.align(4);
    }
    if let Some(origin) = start.outer_origin {
        e.set_origin(origin);
    }
    match start.length_at {
        Some(at) => e.end_length(at),
        None => Ok(()),
    }
}

/// The must-understand flag inside XCDR1's extended parameter header.
pub const PL_EXTENDED_MUST_UNDERSTAND: u32 = 0x4000_0000;

/// The header of a member of a mutable type, as read.
#[derive(Debug)]
pub struct MemberHeader {
    /// The member id.
    pub id: u32,
    /// True when the sender marked the member must-understand.
    pub must_understand: bool,
    outer_end: usize,
    outer_origin: Option<usize>,
}

/// Reads the next member header of a mutable type, narrowing the window to the member;
/// `None` at the end of the member list. Call [`end_member_decode`] after the member.
pub fn next_member(d: &mut Decoder<'_>) -> Result<Option<MemberHeader>, DecodeError> {
    if d.is_xcdr2() {
        if d.is_at_end() {
            return Ok(None);
        }
        d.align(4)?;
        let header_at = d.position();
        let header = d.read_u32()?;
        let must_understand = header & EMHEADER_MUST_UNDERSTAND != 0;
        let id = header & MAX_MEMBER_ID;
        let lc = ((header >> 28) & 0x7) as u8;
        // The length, what gave it (for errors) and where that is.
        let (len, what, len_at) = match lc {
            0..=3 => (1usize << lc, EMHEADER_LENGTHS[usize::from(lc)], header_at),
            4 => {
                let at = d.position();
                (d.read_u32()? as usize, EMHEADER_LENGTHS[4], at)
            }
            // Codes 5-7: NEXTINT is also the member's first word (its DHEADER or sequence
            // length), so it stays in the member's window.
            _ => {
                let mark = d.mark();
                let next = u64::from(d.read_u32()?);
                d.rewind(mark);
                let len = match lc {
                    5 => 4 + next,
                    6 => 4 + next.saturating_mul(4),
                    _ => 4 + next.saturating_mul(8),
                };
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                (len, EMHEADER_LENGTHS[usize::from(lc)], mark)
            }
        };
        let outer_end = d.limit(len, what).map_err(|e| e.at_offset(len_at))?;
        Ok(Some(MemberHeader {
            id,
            must_understand,
            outer_end,
            outer_origin: None,
        }))
    } else {
        loop {
            if d.is_at_end() {
                // Tolerated: a list that ends without PID_LIST_END at the end of the input.
                return Ok(None);
            }
            match next_parameter(d)? {
                Parameter::End => return Ok(None),
                Parameter::VendorSpecific(header) => end_member_decode(d, header),
                Parameter::Member(header) => return Ok(Some(header)),
            }
        }
    }
}

/// What gives a member's length under each EMHEADER length code, for errors.
const EMHEADER_LENGTHS: [&str; 8] = [
    "member (EMHEADER length code 0: 1 byte)",
    "member (EMHEADER length code 1: 2 bytes)",
    "member (EMHEADER length code 2: 4 bytes)",
    "member (EMHEADER length code 3: 8 bytes)",
    "member length NEXTINT (EMHEADER length code 4: NEXTINT bytes)",
    "member length NEXTINT (EMHEADER length code 5: 4 + NEXTINT bytes)",
    "member length NEXTINT (EMHEADER length code 6: 4 + 4 x NEXTINT bytes)",
    "member length NEXTINT (EMHEADER length code 7: 4 + 8 x NEXTINT bytes)",
];

enum Parameter {
    End,
    VendorSpecific(MemberHeader),
    Member(MemberHeader),
}

/// Reads one XCDR1 parameter header, short or extended (7.4.1.2.1).
fn next_parameter(d: &mut Decoder<'_>) -> Result<Parameter, DecodeError> {
    d.align(4)?;
    let pid = d.read_u16()?;
    let short_len_at = d.position();
    let short_len = d.read_u16()? as usize;
    let flags = pid & (PID_FLAG_MUST_UNDERSTAND | PID_FLAG_IMPL_SPECIFIC);
    let short_id = pid & 0x3fff;
    if short_id == PID_LIST_END {
        return Ok(Parameter::End);
    }
    let (id, must_understand, len) = if short_id == PID_EXTENDED {
        if short_len != 8 {
            return Err(DecodeError::new(
                DecodeErrorKind::ExtendedHeaderLength(short_len as u16),
                short_len_at,
            ));
        }
        let ext = d.read_u32()?;
        let len_at = d.position();
        let len = d.read_u32()? as usize;
        // Bit 30 is the flag; Cyclone's Python binding sets bit 31 for optional members.
        (
            ext & MAX_MEMBER_ID,
            ext & (PL_EXTENDED_MUST_UNDERSTAND | EMHEADER_MUST_UNDERSTAND) != 0,
            (len, "PL_CDR extended parameter length", len_at),
        )
    } else {
        (
            u32::from(short_id),
            flags & PID_FLAG_MUST_UNDERSTAND != 0,
            (short_len, "PL_CDR parameter length", short_len_at),
        )
    };
    let (len, what, len_at) = len;
    let outer_end = d.limit(len, what).map_err(|e| e.at_offset(len_at))?;
    let outer_origin = Some(d.set_origin_here());
    let header = MemberHeader {
        id,
        must_understand,
        outer_end,
        outer_origin,
    };
    if short_id != PID_EXTENDED && flags & PID_FLAG_IMPL_SPECIFIC != 0 {
        // Vendor parameters are not members of the type.
        return Ok(Parameter::VendorSpecific(header));
    }
    Ok(Parameter::Member(header))
}

/// Finishes a member read after [`next_member`], skipping whatever of it was not read.
#[inline]
pub fn end_member_decode(d: &mut Decoder<'_>, header: MemberHeader) {
    if let Some(origin) = header.outer_origin {
        d.restore_origin(origin);
    }
    d.restore(header.outer_end);
}

/// Encodes an optional member of a final or appendable type: XCDR2 writes a boolean
/// presence flag and the value (7.4.3.5.3); XCDR1 writes an extended parameter header whose
/// length is the value's, 0 when absent, and no padding (7.4.1.1.2).
#[inline]
pub fn encode_optional<T: Cdr>(
    value: &Option<T>,
    id: u32,
    must_understand: bool,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    encode_optional_with(value.as_ref(), id, must_understand, e, T::encode)
}

/// [`encode_optional`] with the value's encoder given (runtime types).
#[inline]
pub fn encode_optional_with<V>(
    value: Option<&V>,
    id: u32,
    must_understand: bool,
    e: &mut Encoder<'_>,
    encode: impl FnOnce(&V, &mut Encoder<'_>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    if e.is_xcdr2() {
        e.write_u8(u8::from(value.is_some()));
        match value {
            Some(v) => encode(v, e),
            None => Ok(()),
        }
    } else {
        let start = begin_parameter(e, id, must_understand, false);
        if let Some(v) = value {
            encode(v, e)?;
        }
        end_member(e, start)
    }
}

/// Decodes an optional member of a final or appendable type (see [`encode_optional`]).
#[inline]
pub fn decode_optional<T: Cdr>(d: &mut Decoder<'_>) -> Result<Option<T>, DecodeError> {
    decode_optional_with(d, T::decode)
}

/// [`decode_optional`] with the value's decoder given (runtime types).
#[inline]
pub fn decode_optional_with<V>(
    d: &mut Decoder<'_>,
    decode: impl FnOnce(&mut Decoder<'_>) -> Result<V, DecodeError>,
) -> Result<Option<V>, DecodeError> {
    if d.is_xcdr2() {
        if d.read_bool()? {
            decode(d).map(Some)
        } else {
            Ok(None)
        }
    } else {
        let header = match next_parameter(d)? {
            Parameter::Member(h) | Parameter::VendorSpecific(h) => h,
            Parameter::End => {
                return Err(d.error(DecodeErrorKind::UnexpectedEnd {
                    what: "optional member parameter",
                    needed: 4,
                    remaining: d.remaining(),
                }))
            }
        };
        let value = if d.is_at_end() {
            None
        } else {
            Some(decode(d)?)
        };
        end_member_decode(d, header);
        Ok(value)
    }
}

/// Encodes a sequence: in XCDR2 a DHEADER first unless the elements are primitive
/// (7.4.3.5.3), then the element count and the elements.
#[inline]
pub fn encode_sequence<T: Cdr>(items: &[T], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
    if e.is_xcdr2() && !T::KIND.is_primitive() {
        let at = e.begin_length();
        e.write_length(items.len())?;
        T::encode_elements(items, e)?;
        e.end_length(at)
    } else {
        e.write_length(items.len())?;
        T::encode_elements(items, e)
    }
}

/// Decodes a sequence (see [`encode_sequence`]), refusing more than `bound` elements.
#[inline]
pub fn decode_sequence<T: Cdr>(
    d: &mut Decoder<'_>,
    bound: Option<usize>,
) -> Result<Vec<T>, DecodeError> {
    read_sequence::<T, _>(d, bound, T::decode_elements)
}

/// Decodes a sequence into `items` (see [`Cdr::decode_into`]), refusing more than `bound`
/// elements.
#[inline]
pub fn decode_sequence_into<T: Cdr>(
    d: &mut Decoder<'_>,
    bound: Option<usize>,
    items: &mut Vec<T>,
) -> Result<(), DecodeError> {
    read_sequence::<T, _>(d, bound, |d, count| {
        T::decode_elements_into(items, d, count)
    })
}

/// A sequence's DHEADER (XCDR2, elements not primitive), length and bound around what
/// `elements` reads.
#[inline]
fn read_sequence<T: Cdr, R>(
    d: &mut Decoder<'_>,
    bound: Option<usize>,
    elements: impl FnOnce(&mut Decoder<'_>, usize) -> Result<R, DecodeError>,
) -> Result<R, DecodeError> {
    let outer = if d.is_xcdr2() && !T::KIND.is_primitive() {
        Some(d.begin_delimited("sequence DHEADER")?)
    } else {
        None
    };
    let start = d.position();
    let count = d.read_count("sequence length", T::MIN_SIZE)?;
    if let Some(bound) = bound {
        if count > bound {
            return Err(DecodeError::new(
                DecodeErrorKind::BoundExceeded {
                    bound,
                    found: count as u64,
                },
                start,
            ));
        }
    }
    let items = elements(d, count)?;
    if let Some(outer) = outer {
        d.restore(outer);
    }
    Ok(items)
}

/// Encodes a sequence of at most `bound` elements.
#[inline]
pub fn encode_bounded_sequence<T: Cdr>(
    items: &[T],
    bound: usize,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    check_bound(items.len(), bound)?;
    encode_sequence(items, e)
}

/// Encodes a string of at most `bound` bytes.
#[inline]
pub fn encode_bounded_string(
    s: &str,
    bound: usize,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    check_bound(s.len(), bound)?;
    e.write_str(s)
}

/// Decodes a string of at most `bound` bytes.
#[inline]
pub fn decode_bounded_string(d: &mut Decoder<'_>, bound: usize) -> Result<String, DecodeError> {
    let start = d.position();
    let s = d.read_str()?;
    if s.len() > bound {
        return Err(DecodeError::new(
            DecodeErrorKind::BoundExceeded {
                bound,
                found: s.len() as u64,
            },
            start,
        ));
    }
    Ok(s.to_owned())
}

/// Refuses a length above its bound.
#[inline]
pub fn check_bound(len: usize, bound: usize) -> Result<(), EncodeError> {
    if len > bound {
        Err(EncodeError::new(EncodeErrorKind::BoundExceeded {
            bound,
            found: len,
        }))
    } else {
        Ok(())
    }
}

/// Where a bounded string ends at most (for key hashes).
pub fn bounded_string_max_end(offset: usize, bound: usize, max_align: usize) -> Option<usize> {
    Some(crate::align_up(offset, 4, max_align) + 4 + bound + 1)
}

/// Where a bounded sequence ends at most (for key hashes).
pub fn bounded_sequence_max_end<T: Cdr>(
    offset: usize,
    bound: usize,
    max_align: usize,
) -> Option<usize> {
    let mut end = crate::align_up(offset, 4, max_align);
    if max_align == XcdrVersion::Xcdr2.max_align() && !T::KIND.is_primitive() {
        end += 4;
    }
    end += 4;
    for _ in 0..bound {
        end = T::max_end(end, max_align)?;
    }
    Some(end)
}

/// Encodes an enum's value in `size` bytes (1, 2 or 4, from its bit bound; XTypes 7.4.3.4.6).
#[inline]
pub fn encode_enum(e: &mut Encoder<'_>, value: i32, size: usize) {
    match size {
        1 => e.write_u8(value as u8),
        2 => e.write_i16(value as i16),
        _ => e.write_i32(value),
    }
}

/// Decodes an enum's value of `size` bytes (see [`encode_enum`]).
#[inline]
pub fn decode_enum(d: &mut Decoder<'_>, size: usize) -> Result<i32, DecodeError> {
    // 1- and 2-byte values are unsigned, as the derive's enumerator range (0 to 2^bits - 1)
    // and Cyclone DDS read them.
    Ok(match size {
        1 => i32::from(d.read_u8()?),
        2 => i32::from(d.read_u16()?),
        _ => d.read_i32()?,
    })
}

/// Where an enum of `size` bytes ends (for key hashes).
pub fn enum_max_end(offset: usize, size: usize, max_align: usize) -> usize {
    crate::align_up(offset, size, max_align) + size
}

/// The member id `@autoid(HASH)` gives a member (7.3.1.2.1.1): the first four bytes of the
/// MD5 of its name, read little-endian, masked to 28 bits.
pub fn hashed_member_id(name: &str) -> u32 {
    use md5::{Digest, Md5};
    let digest = Md5::digest(name.as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]) & MAX_MEMBER_ID
}

/// The error for a member that is absent and has no default.
#[cold]
pub fn missing_member(
    d: &Decoder<'_>,
    type_name: impl Into<Name>,
    member: impl Into<Name>,
) -> DecodeError {
    d.error(DecodeErrorKind::MissingMember {
        type_name: type_name.into(),
        member: member.into(),
    })
}

/// The error for an unknown member marked must-understand.
#[cold]
pub fn unknown_must_understand(
    d: &Decoder<'_>,
    type_name: impl Into<Name>,
    id: u32,
) -> DecodeError {
    d.error(DecodeErrorKind::UnknownMustUnderstand {
        type_name: type_name.into(),
        id,
    })
}

/// The error for a member seen twice.
#[cold]
pub fn duplicate_member(d: &Decoder<'_>, type_name: impl Into<Name>, id: u32) -> DecodeError {
    d.error(DecodeErrorKind::DuplicateMember {
        type_name: type_name.into(),
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Endianness;

    #[test]
    fn hashed_ids_follow_the_md5_rule() {
        // MD5("a") = 0cc175b9...; little-endian first word 0xb975c10c, masked to 28 bits.
        assert_eq!(hashed_member_id("a"), 0x0975_c10c);
    }

    #[test]
    fn xcdr1_members_use_the_extended_header_and_align_from_their_value() {
        let mut buf = Vec::new();
        let mut e = Encoder::new(&mut buf, XcdrVersion::Xcdr1, Endianness::Little);
        let start = begin_member(&mut e, 5, true, TypeKind::Primitive { size: 8 });
        e.write_u8(9);
        e.write_u64(2);
        end_member(&mut e, start).unwrap();
        // The value starts at byte 12; its u64 is 8-aligned from there (byte 20), where the
        // stream's own alignment would have put it at 24.
        assert_eq!(
            buf,
            [
                1, 0x7f, 8, 0, 5, 0, 0, 0x40, 16, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0,
                0, 0, 0
            ]
        );
        let mut d = Decoder::new(&buf, XcdrVersion::Xcdr1, Endianness::Little);
        let h = next_member(&mut d).unwrap().unwrap();
        assert_eq!((h.id, h.must_understand), (5, true));
        assert_eq!((d.read_u8().unwrap(), d.read_u64().unwrap()), (9, 2));
        end_member_decode(&mut d, h);
        assert!(d.is_at_end());
    }

    #[test]
    fn emheader_length_codes_5_to_7_keep_nextint_in_the_member() {
        // id 3, LC 6: a sequence of two int32 whose count is the NEXTINT.
        let data = [0x03, 0, 0, 0x60, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0];
        let mut d = Decoder::new(&data, XcdrVersion::Xcdr2, Endianness::Little);
        let h = next_member(&mut d).unwrap().unwrap();
        assert_eq!(h.id, 3);
        assert_eq!(Vec::<i32>::decode(&mut d).unwrap(), vec![1, 2]);
        end_member_decode(&mut d, h);
        assert!(next_member(&mut d).unwrap().is_none());
    }
}
