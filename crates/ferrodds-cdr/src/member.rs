//! Building blocks for encoders of aggregate types: struct framing (DHEADER, parameter
//! lists), member headers of mutable types, optional members, sequences and bounds.
//!
//! `#[derive(Cdr)]` generates calls to these; they are public so that hand-written `Cdr`
//! impls can use them too. Spec references are to DDS-XTypes 1.3, section 7.4.

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
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
        e.write_u16(PID_LIST_END);
        e.write_u16(0);
    }
    match dheader {
        Some(at) => e.end_length(at),
        None => Ok(()),
    }
}

/// Opens an aggregate for reading: reads the XCDR2 DHEADER of appendable and mutable types
/// and narrows the window to it. Pass the result to [`end_aggregate_decode`].
#[inline]
pub fn begin_aggregate_decode(
    d: &mut Decoder<'_>,
    ext: Extensibility,
) -> Result<Option<usize>, DecodeError> {
    if d.is_xcdr2() && ext != Extensibility::Final {
        d.begin_delimited("DHEADER").map(Some)
    } else {
        Ok(None)
    }
}

/// Closes an aggregate opened by [`begin_aggregate_decode`], skipping members appended by
/// a newer version of the type.
#[inline]
pub fn end_aggregate_decode(d: &mut Decoder<'_>, outer: Option<usize>) {
    if let Some(outer) = outer {
        d.restore(outer);
    }
}

/// Where a member of a mutable type began, for [`end_member`].
#[derive(Debug)]
pub struct MemberStart {
    /// Buffer index of the length field to patch, if any.
    length_at: Option<usize>,
    /// Buffer index of the XCDR1 parameter header.
    header_at: usize,
    id: u32,
    must_understand: bool,
}

/// Writes the header of member `id` of a mutable type; the member follows, then
/// [`end_member`].
///
/// XCDR2 (7.4.3.5.4): an EMHEADER, with length code 0–3 for 1-, 2-, 4- and 8-byte
/// primitives and otherwise code 4 with a NEXTINT giving the member's size. XCDR1
/// (7.4.1.2.1): a short parameter header (16-bit id and length) when the id fits, else
/// PID_EXTENDED with 32-bit id and length.
#[inline]
pub fn begin_member(e: &mut Encoder<'_>, id: u32, must_understand: bool, kind: TypeKind) -> MemberStart {
    e.align(4);
    let header_at = e.buffer_index();
    if e.is_xcdr2() {
        let m = if must_understand { EMHEADER_MUST_UNDERSTAND } else { 0 };
        let lc = match kind {
            TypeKind::Primitive { size: 1 } => Some(0),
            TypeKind::Primitive { size: 2 } => Some(1),
            TypeKind::Primitive { size: 4 } => Some(2),
            TypeKind::Primitive { size: 8 } => Some(3),
            _ => None,
        };
        match lc {
            Some(lc) => {
                e.write_u32(m | (lc << 28) | (id & MAX_MEMBER_ID));
                MemberStart { length_at: None, header_at, id, must_understand }
            }
            None => {
                e.write_u32(m | (4 << 28) | (id & MAX_MEMBER_ID));
                let at = e.begin_length();
                MemberStart { length_at: Some(at), header_at, id, must_understand }
            }
        }
    } else if id < u32::from(PID_EXTENDED) {
        let flag = if must_understand { PID_FLAG_MUST_UNDERSTAND } else { 0 };
        e.write_u16(flag | id as u16);
        e.write_u16(0);
        MemberStart { length_at: Some(header_at + 2), header_at, id, must_understand }
    } else {
        write_extended_header(e, id, must_understand);
        MemberStart { length_at: Some(header_at + 8), header_at, id, must_understand }
    }
}

fn write_extended_header(e: &mut Encoder<'_>, id: u32, must_understand: bool) {
    e.write_u16(PID_EXTENDED | PID_FLAG_MUST_UNDERSTAND);
    e.write_u16(8);
    let m = if must_understand { EMHEADER_MUST_UNDERSTAND } else { 0 };
    e.write_u32(m | (id & MAX_MEMBER_ID));
    e.write_u32(0);
}

/// Finishes a member begun with [`begin_member`], filling in its length.
#[inline]
pub fn end_member(e: &mut Encoder<'_>, start: MemberStart) -> Result<(), EncodeError> {
    let Some(length_at) = start.length_at else { return Ok(()) };
    if e.is_xcdr2() {
        return e.end_length(length_at);
    }
    // XCDR1: the parameter's length counts from after the header, padded to 4 (7.4.1.2.1).
    e.align(4);
    let end = e.buffer_index();
    if length_at == start.header_at + 2 {
        let len = end - (length_at + 2);
        if let Ok(len16) = u16::try_from(len) {
            e.patch_u16(length_at, len16);
            return Ok(());
        }
        // Too long for a short header: switch to the extended form. Moving the value by 8
        // bytes keeps its alignment, since XCDR1 aligns to at most 8.
        let mut tail = Vec::new();
        let value = e.take_tail(start.header_at + 4, &mut tail);
        debug_assert_eq!(value, len);
        e.truncate_to(start.header_at);
        write_extended_header(e, start.id, start.must_understand);
        e.write_bytes(&tail);
        let len32 = u32::try_from(len)
            .map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))?;
        e.patch_u32(start.header_at + 8, len32);
        Ok(())
    } else {
        let len = end - (length_at + 4);
        let len32 = u32::try_from(len)
            .map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))?;
        e.patch_u32(length_at, len32);
        Ok(())
    }
}

/// The header of a member of a mutable type, as read.
#[derive(Debug)]
pub struct MemberHeader {
    /// The member id.
    pub id: u32,
    /// True when the sender marked the member must-understand.
    pub must_understand: bool,
    outer_end: usize,
}

/// Reads the next member header of a mutable type, narrowing the window to the member;
/// `None` at the end of the member list. Call [`end_member_decode`] after the member.
pub fn next_member(d: &mut Decoder<'_>) -> Result<Option<MemberHeader>, DecodeError> {
    if d.is_xcdr2() {
        if d.is_at_end() {
            return Ok(None);
        }
        d.align(4)?;
        let header = d.read_u32()?;
        let must_understand = header & EMHEADER_MUST_UNDERSTAND != 0;
        let id = header & MAX_MEMBER_ID;
        let lc = ((header >> 28) & 0x7) as u8;
        let len = match lc {
            0..=3 => 1usize << lc,
            4 => d.read_u32()? as usize,
            // Codes 5-7: NEXTINT is also the member's first word (its DHEADER or sequence
            // length), so it stays in the member's window.
            5..=7 => {
                let mark = d.mark();
                let next = d.read_u32()? as u64;
                d.rewind(mark);
                let len = match lc {
                    5 => 4 + next,
                    6 => 4 + next.saturating_mul(4),
                    _ => 4 + next.saturating_mul(8),
                };
                usize::try_from(len).unwrap_or(usize::MAX)
            }
            _ => unreachable!("a 3-bit field"),
        };
        let outer_end = d.limit(len, "member length")?;
        Ok(Some(MemberHeader { id, must_understand, outer_end }))
    } else {
        loop {
            if d.is_at_end() {
                // Tolerated: a list that ends without PID_LIST_END at the end of the input.
                return Ok(None);
            }
            d.align(4)?;
            let pid = d.read_u16()?;
            let len = d.read_u16()? as usize;
            let flags = pid & (PID_FLAG_MUST_UNDERSTAND | PID_FLAG_IMPL_SPECIFIC);
            let short_id = pid & 0x3fff;
            if short_id == PID_LIST_END {
                return Ok(None);
            }
            if short_id == PID_EXTENDED {
                if len != 8 {
                    return Err(d.error(DecodeErrorKind::LengthCodeMismatch {
                        code: 1,
                        claimed: len as u64,
                        needed: 8,
                    }));
                }
                let ext = d.read_u32()?;
                let len = d.read_u32()? as usize;
                let outer_end = d.limit(len, "member length")?;
                return Ok(Some(MemberHeader {
                    id: ext & MAX_MEMBER_ID,
                    must_understand: ext & EMHEADER_MUST_UNDERSTAND != 0
                        || flags & PID_FLAG_MUST_UNDERSTAND != 0,
                    outer_end,
                }));
            }
            let outer_end = d.limit(len, "parameter length")?;
            if flags & PID_FLAG_IMPL_SPECIFIC != 0 {
                // Vendor parameters are not members of the type: skip them.
                d.restore(outer_end);
                continue;
            }
            return Ok(Some(MemberHeader {
                id: u32::from(short_id),
                must_understand: flags & PID_FLAG_MUST_UNDERSTAND != 0,
                outer_end,
            }));
        }
    }
}

/// Finishes a member read after [`next_member`], skipping whatever of it was not read.
#[inline]
pub fn end_member_decode(d: &mut Decoder<'_>, header: MemberHeader) {
    d.restore(header.outer_end);
}

/// Encodes an optional member of a final or appendable type: XCDR2 writes a boolean
/// presence flag and the value (7.4.3.5.3); XCDR1 writes the value as a parameter with
/// a short header, of length 0 when absent (7.4.1.1.2).
#[inline]
pub fn encode_optional<T: Cdr>(
    value: &Option<T>,
    id: u32,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    if e.is_xcdr2() {
        e.write_u8(u8::from(value.is_some()));
        match value {
            Some(v) => v.encode(e),
            None => Ok(()),
        }
    } else {
        let start = begin_member(e, id, false, TypeKind::Sequence);
        if let Some(v) = value {
            v.encode(e)?;
        }
        end_member(e, start)
    }
}

/// Decodes an optional member of a final or appendable type (see [`encode_optional`]).
#[inline]
pub fn decode_optional<T: Cdr>(d: &mut Decoder<'_>) -> Result<Option<T>, DecodeError> {
    if d.is_xcdr2() {
        if d.read_bool()? {
            T::decode(d).map(Some)
        } else {
            Ok(None)
        }
    } else {
        let Some(header) = next_member(d)? else { return Ok(None) };
        let value = if d.is_at_end() { None } else { Some(T::decode(d)?) };
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
pub fn decode_sequence<T: Cdr>(d: &mut Decoder<'_>, bound: Option<usize>) -> Result<Vec<T>, DecodeError> {
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
                DecodeErrorKind::BoundExceeded { bound, found: count as u64 },
                start,
            ));
        }
    }
    let items = T::decode_elements(d, count)?;
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
pub fn encode_bounded_string(s: &str, bound: usize, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
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
            DecodeErrorKind::BoundExceeded { bound, found: s.len() as u64 },
            start,
        ));
    }
    Ok(s.to_owned())
}

/// Refuses a length above its bound.
#[inline]
pub fn check_bound(len: usize, bound: usize) -> Result<(), EncodeError> {
    if len > bound {
        Err(EncodeError::new(EncodeErrorKind::BoundExceeded { bound, found: len }))
    } else {
        Ok(())
    }
}

/// Where a bounded string ends at most (for key hashes).
pub fn bounded_string_max_end(offset: usize, bound: usize, max_align: usize) -> Option<usize> {
    Some(crate::align_up(offset, 4, max_align) + 4 + bound + 1)
}

/// Where a bounded sequence ends at most (for key hashes).
pub fn bounded_sequence_max_end<T: Cdr>(offset: usize, bound: usize, max_align: usize) -> Option<usize> {
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
    Ok(match size {
        1 => i32::from(d.read_u8()?),
        2 => i32::from(d.read_i16()?),
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
pub fn missing_member(d: &Decoder<'_>, type_name: &'static str, member: &'static str) -> DecodeError {
    d.error(DecodeErrorKind::MissingMember { type_name, member })
}

/// The error for an unknown member marked must-understand.
#[cold]
pub fn unknown_must_understand(d: &Decoder<'_>, type_name: &'static str, id: u32) -> DecodeError {
    d.error(DecodeErrorKind::UnknownMustUnderstand { type_name, id })
}

/// The error for a member seen twice.
#[cold]
pub fn duplicate_member(d: &Decoder<'_>, type_name: &'static str, id: u32) -> DecodeError {
    d.error(DecodeErrorKind::DuplicateMember { type_name, id })
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
    fn xcdr1_long_parameters_switch_to_the_extended_header() {
        let mut buf = Vec::new();
        let mut e = Encoder::new(&mut buf, XcdrVersion::Xcdr1, Endianness::Little);
        let start = begin_member(&mut e, 5, true, TypeKind::Sequence);
        e.write_bytes(&vec![7u8; 70_000]);
        end_member(&mut e, start).unwrap();
        assert_eq!(&buf[..12], &[0x01, 0x7f, 8, 0, 5, 0, 0, 0x80, 0x70, 0x11, 0x01, 0]);
        let mut d = Decoder::new(&buf, XcdrVersion::Xcdr1, Endianness::Little);
        let h = next_member(&mut d).unwrap().unwrap();
        assert_eq!((h.id, h.must_understand, d.remaining()), (5, true, 70_000));
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
