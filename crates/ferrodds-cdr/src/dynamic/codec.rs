//! Encoding and decoding of dynamic values: the rules of `builtin.rs` and of the derive
//! macro's generated code, driven by a [`DynamicType`] instead of by Rust types.

use super::value::inner_array;
use super::{enum_size, DynamicType, DynamicValue, StructType, UnionType};
use crate::encapsulation::EncapsulationHeader;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::member::{self, begin_aggregate, begin_aggregate_decode, begin_member};
use crate::{Cdr, Decoder, Encoder, Endianness, Extensibility, XcdrVersion};
use bytes::Bytes;

/// Serializes `value` of `ty` with its encapsulation header, padded to a multiple of 4 bytes
/// as the header's options say (as `crate::serialize` does for derived types).
pub fn serialize(
    ty: &DynamicType,
    value: &DynamicValue,
    version: XcdrVersion,
    endianness: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    let mut buf = Vec::with_capacity(64);
    serialize_into(ty, value, version, endianness, &mut buf)?;
    Ok(buf)
}

/// Appends `value` of `ty` with its encapsulation header to `buf` (as
/// `crate::serialize_into` does for derived types); on error `buf` is left as it was.
pub fn serialize_into(
    ty: &DynamicType,
    value: &DynamicValue,
    version: XcdrVersion,
    endianness: Endianness,
    buf: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    crate::sample::encapsulate(buf, version, ty.extensibility(), endianness, |e| {
        encode_value(ty, value, e).map_err(|err| err.in_member(ty.name().to_owned()))
    })
}

/// Deserializes a value of `ty` from a payload that starts with its encapsulation header
/// (any XCDR1 or XCDR2 identifier, as `crate::deserialize` accepts).
pub fn deserialize(ty: &DynamicType, payload: &[u8]) -> Result<DynamicValue, DecodeError> {
    deserialize_from(ty, payload, None)
}

/// [`deserialize`] from a payload held in a [`Bytes`]: the value's sequences of octets are
/// views into `payload` (each keeps it alive) rather than copies of their bytes. For a
/// large sample read once and let go (a binding that copies the octets into its own
/// objects next), one copy fewer.
pub fn deserialize_shared(ty: &DynamicType, payload: &Bytes) -> Result<DynamicValue, DecodeError> {
    deserialize_from(ty, payload, Some(payload))
}

fn deserialize_from(
    ty: &DynamicType,
    payload: &[u8],
    shared: Option<&Bytes>,
) -> Result<DynamicValue, DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    let mut d = Decoder::new(body, header.id.version(), header.id.endianness());
    if let Some(shared) = shared {
        d = d.sharing(shared);
    }
    // A struct (almost every topic type) straight from `decode_struct`: each layer a value
    // passes through is a copy of it, read back just after it was written.
    let value = match ty {
        DynamicType::Struct(s) => decode_struct(s, &mut d),
        _ => decode_value(ty, &mut d),
    };
    value.map_err(|e| {
        let offset = e.offset + EncapsulationHeader::LEN;
        e.at_offset(offset).in_member(ty.name().to_owned())
    })
}

/// The key members of a sample of `ty`, decoded from a payload that starts with its
/// encapsulation header; every other member holds its default. What a reader needs to find
/// a sample's instance, at a fraction of [`deserialize`]'s cost for a large sample: members
/// after the last key are not read at all, and those before it are stepped over (a
/// sequence of octets or numbers in one step) rather than built.
pub fn deserialize_keys(ty: &DynamicType, payload: &[u8]) -> Result<DynamicValue, DecodeError> {
    let DynamicType::Struct(s) = ty else {
        return deserialize(ty, payload);
    };
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    // Without the padding the header counts: a key is never read out of it.
    let body = &body[..body.len().saturating_sub(header.padding())];
    let mut d = Decoder::new(body, header.id.version(), header.id.endianness());
    decode_struct_keys(s, &mut d).map_err(|e| {
        let offset = e.offset + EncapsulationHeader::LEN;
        e.at_offset(offset).in_member(ty.name().to_owned())
    })
}

fn decode_struct_keys(s: &StructType, d: &mut Decoder<'_>) -> Result<DynamicValue, DecodeError> {
    let outer = begin_aggregate_decode(d, s.extensibility)?;
    let value = if s.extensibility == Extensibility::Mutable {
        decode_mutable(s, d, true)?
    } else {
        let mut values = Vec::with_capacity(s.member_count());
        decode_member_keys_into(s, d, &mut values, true)?;
        DynamicValue::Struct(values)
    };
    member::end_aggregate_decode(d, outer);
    Ok(value)
}

/// The key members of a final or appendable struct (and its bases); `last` says whether
/// nothing follows it (then what comes after its last key is not read).
fn decode_member_keys_into(
    s: &StructType,
    d: &mut Decoder<'_>,
    values: &mut Vec<Option<DynamicValue>>,
    last: bool,
) -> Result<(), DecodeError> {
    if let Some(base) = &s.base {
        let keys_after_base = s.members.iter().any(|m| m.key);
        decode_member_keys_into(base, d, values, last && !keys_after_base)?;
    }
    let appendable = s.extensibility == Extensibility::Appendable;
    let last_key = s.members.iter().rposition(|m| m.key);
    for (i, m) in s.members.iter().enumerate() {
        let past_keys = last_key.is_none_or(|k| i > k);
        if !m.key && ((last && past_keys) || (appendable && d.is_at_end())) {
            values.push((!m.optional).then(|| DynamicValue::default_of(&m.ty)));
            continue;
        }
        let name = || m.name.clone();
        if m.optional {
            let value = member::decode_optional_with(d, |d| decode(&m.ty, d))
                .map_err(|e| e.in_member(name()))?;
            values.push(if m.key { value } else { None });
        } else if m.key {
            decode_value_with(&m.ty, d, |v| values.push(Some(v)))
                .map_err(|e| e.in_member(name()))?;
        } else {
            skip(&m.ty, d).map_err(|e| e.in_member(name()))?;
            values.push(Some(DynamicValue::default_of(&m.ty)));
        }
    }
    Ok(())
}

/// Steps over a value of `ty`: octets, numbers and their sequences, and strings without
/// building anything; other types are decoded and dropped.
fn skip(ty: &DynamicType, d: &mut Decoder<'_>) -> Result<(), DecodeError> {
    if ty.is_primitive() {
        return decode(ty, d).map(drop);
    }
    match ty {
        DynamicType::String { bound: None } => d.read_str().map(drop),
        DynamicType::Sequence {
            element,
            bound: None,
        } if element.is_primitive() => {
            let size = element.min_size().max(1);
            let count = d.read_count("sequence length", size)?;
            if count > 0 && size > 1 {
                d.align(size)?;
            }
            d.skip(count.saturating_mul(size), "elements")
        }
        _ => decode(ty, d).map(drop),
    }
}

fn mismatch(ty: &DynamicType) -> EncodeError {
    EncodeError::new(EncodeErrorKind::ValueMismatch {
        type_name: ty.name().to_owned().into(),
    })
}

/// Appends the encoding of `value` of `ty`: everything `encode_value` does not write itself
/// (reached only through it).
fn encode(ty: &DynamicType, value: &DynamicValue, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
    match (ty, value) {
        (DynamicType::Bool, DynamicValue::Bool(b)) => e.write_u8(u8::from(*b)),
        (DynamicType::Int8, DynamicValue::Int(v)) => e.write_u8(int(ty, *v)? as u8),
        (DynamicType::UInt8 | DynamicType::Octet, DynamicValue::UInt(v)) => {
            e.write_u8(uint(ty, *v)? as u8)
        }
        (DynamicType::Int16, DynamicValue::Int(v)) => e.write_i16(int(ty, *v)? as i16),
        (DynamicType::UInt16, DynamicValue::UInt(v)) => e.write_u16(uint(ty, *v)? as u16),
        (DynamicType::Int32, DynamicValue::Int(v)) => e.write_i32(int(ty, *v)? as i32),
        (DynamicType::UInt32, DynamicValue::UInt(v)) => e.write_u32(uint(ty, *v)? as u32),
        (DynamicType::Int64, DynamicValue::Int(v)) => e.write_i64(*v),
        (DynamicType::UInt64, DynamicValue::UInt(v)) => e.write_u64(*v),
        (DynamicType::Float32, DynamicValue::Float32(v)) => e.write_f32(*v),
        (DynamicType::Float32, DynamicValue::Float(v)) => e.write_f32(*v as f32),
        (DynamicType::Float64, DynamicValue::Float(v)) => e.write_f64(*v),
        (DynamicType::Char, DynamicValue::Char(c)) => {
            let code = u32::from(*c);
            if code > 0xff {
                return Err(EncodeError::new(EncodeErrorKind::CharOutOfRange(*c)));
            }
            e.write_u8(code as u8);
        }
        (DynamicType::WChar, DynamicValue::Char(c)) => crate::WChar(*c).encode(e)?,
        (DynamicType::WString, DynamicValue::String(s)) => {
            crate::WString(s.clone()).encode(e)?;
        }
        (DynamicType::String { bound }, DynamicValue::String(s)) => {
            if let Some(bound) = bound {
                member::check_bound(s.len(), *bound)?;
            }
            e.write_str(s)?;
        }
        (DynamicType::Enum(t), DynamicValue::Enum(v)) => {
            member::encode_enum(e, *v, enum_size(t.bit_bound));
        }
        (DynamicType::Bitmask(t), DynamicValue::Bitmask(v)) => {
            match super::bitmask_size(t.bit_bound) {
                1 => e.write_u8(*v as u8),
                2 => e.write_u16(*v as u16),
                4 => e.write_u32(*v as u32),
                _ => e.write_u64(*v),
            }
        }
        (DynamicType::Sequence { element, bound }, DynamicValue::Sequence(items)) => {
            if let Some(bound) = bound {
                member::check_bound(items.len(), *bound)?;
            }
            if e.is_xcdr2() && !element.is_primitive() {
                let at = e.begin_length();
                e.write_length(items.len())?;
                encode_elements(element, items, e)?;
                e.end_length(at)?;
            } else {
                e.write_length(items.len())?;
                encode_elements(element, items, e)?;
            }
        }
        (
            DynamicType::Array {
                element,
                dimensions,
            },
            DynamicValue::Sequence(_),
        ) => {
            // All dimensions form one array, with one DHEADER in XCDR2 unless the innermost
            // elements are primitive.
            if e.is_xcdr2() && !element.is_primitive() {
                let at = e.begin_length();
                encode_flat(element, dimensions, value, e)?;
                e.end_length(at)?;
            } else {
                encode_flat(element, dimensions, value, e)?;
            }
        }
        (DynamicType::Struct(s), DynamicValue::Struct(values)) => encode_struct(s, values, e)?,
        (
            DynamicType::Union(u),
            DynamicValue::Union {
                discriminator,
                value,
            },
        ) => {
            let dheader = begin_aggregate(e, u.extensibility);
            encode(
                &u.discriminator,
                &discriminator_value(&u.discriminator, *discriminator),
                e,
            )
            .map_err(|err| err.in_member("discriminator"))?;
            if let (Some(case), Some(v)) = (u.branch(*discriminator), value) {
                encode_value(&case.ty, v, e).map_err(|err| err.in_member(case.name.clone()))?;
            }
            member::end_aggregate(e, u.extensibility, dheader)?;
        }
        _ => return Err(mismatch(ty)),
    }
    Ok(())
}

/// A value anywhere in a sample — the one entry to encoding (the general [`encode`] is
/// reached only through it, so what it handles is handled nowhere else): primitives,
/// unbounded strings, octet sequences and structs written here, without a call into the
/// general [`encode`] — whose dispatch on the pair (type, value) and whose
/// prologue for every value showed at the top of a profile — everything else through it.
#[inline(always)]
pub(crate) fn encode_value(
    ty: &DynamicType,
    value: &DynamicValue,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    match (ty, value) {
        (DynamicType::Int32, DynamicValue::Int(v)) if i32::try_from(*v).is_ok() => {
            e.write_i32(*v as i32)
        }
        (DynamicType::UInt32, DynamicValue::UInt(v)) if u32::try_from(*v).is_ok() => {
            e.write_u32(*v as u32)
        }
        (DynamicType::Int64, DynamicValue::Int(v)) => e.write_i64(*v),
        (DynamicType::UInt64, DynamicValue::UInt(v)) => e.write_u64(*v),
        (DynamicType::Float64, DynamicValue::Float(v)) => e.write_f64(*v),
        (DynamicType::Float32, DynamicValue::Float32(v)) => e.write_f32(*v),
        (DynamicType::Int16, DynamicValue::Int(v)) if i16::try_from(*v).is_ok() => {
            e.write_i16(*v as i16)
        }
        (DynamicType::UInt16, DynamicValue::UInt(v)) if u16::try_from(*v).is_ok() => {
            e.write_u16(*v as u16)
        }
        (DynamicType::Bool, DynamicValue::Bool(b)) => e.write_u8(u8::from(*b)),
        (DynamicType::UInt8 | DynamicType::Octet, DynamicValue::UInt(v)) if *v <= 0xff => {
            e.write_u8(*v as u8)
        }
        (DynamicType::String { bound: None }, DynamicValue::String(s)) => return e.write_str(s),
        (DynamicType::Sequence { element, bound }, DynamicValue::Bytes(bytes))
            if element.is_octet_like() =>
        {
            if let Some(bound) = bound {
                member::check_bound(bytes.len(), *bound)?;
            }
            e.write_length(bytes.len())?;
            e.write_bytes(bytes);
        }
        (DynamicType::Struct(s), DynamicValue::Struct(values)) => {
            return encode_struct(s, values, e)
        }
        _ => return encode(ty, value, e),
    }
    Ok(())
}

/// The elements of a sequence (or of an array's innermost dimension).
fn encode_elements(
    element: &DynamicType,
    items: &[DynamicValue],
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    if let Some(done) = encode_primitives(element, items, e) {
        return done;
    }
    for (i, item) in items.iter().enumerate() {
        // A sequence's elements that are arrays leave out their own DHEADER.
        let r = match element {
            DynamicType::Array {
                element: inner,
                dimensions,
            } => encode_flat(inner, dimensions, item, e),
            _ => encode_value(element, item, e),
        };
        r.map_err(|err| err.at_index(i))?;
    }
    Ok(())
}

/// A run of 16-, 32- and 64-bit numbers (the common sequences and arrays: coordinates,
/// covariances, readings) written in one tight loop per type instead of a full dispatch per
/// element; `None` for other element types. A value of the wrong kind falls back to the
/// general path, which reports it.
fn encode_primitives(
    element: &DynamicType,
    items: &[DynamicValue],
    e: &mut Encoder<'_>,
) -> Option<Result<(), EncodeError>> {
    // One pass: written as they come, the run undone (and left to the general path, which
    // reports the offending element) at the first element of the wrong kind or range.
    macro_rules! run {
        ($variant:path, $size:literal, $x:ident => $fits:expr, $write:expr) => {{
            let start = e.buffer_index();
            // One reservation for the run (and its alignment), not a check per element.
            e.reserve(items.len() * $size + $size);
            for v in items {
                match v {
                    $variant($x) if $fits => $write,
                    _ => {
                        e.truncate(start);
                        return None;
                    }
                }
            }
            Some(Ok(()))
        }};
    }
    match element {
        DynamicType::Float64 => run!(DynamicValue::Float, 8, x => true, e.write_f64(*x)),
        DynamicType::Float32 => run!(DynamicValue::Float32, 4, x => true, e.write_f32(*x)),
        DynamicType::Int64 => run!(DynamicValue::Int, 8, x => true, e.write_i64(*x)),
        DynamicType::UInt64 => run!(DynamicValue::UInt, 8, x => true, e.write_u64(*x)),
        DynamicType::Int32 => {
            run!(DynamicValue::Int, 4, x => i32::try_from(*x).is_ok(), e.write_i32(*x as i32))
        }
        DynamicType::UInt32 => {
            run!(DynamicValue::UInt, 4, x => u32::try_from(*x).is_ok(), e.write_u32(*x as u32))
        }
        DynamicType::Int16 => {
            run!(DynamicValue::Int, 2, x => i16::try_from(*x).is_ok(), e.write_i16(*x as i16))
        }
        DynamicType::UInt16 => {
            run!(DynamicValue::UInt, 2, x => u16::try_from(*x).is_ok(), e.write_u16(*x as u16))
        }
        _ => None,
    }
}

/// Every dimension of an array, outermost first, without a DHEADER.
fn encode_flat(
    element: &DynamicType,
    dimensions: &[usize],
    value: &DynamicValue,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let Some((n, rest)) = dimensions.split_first() else {
        return encode_value(element, value, e);
    };
    let DynamicValue::Sequence(items) = value else {
        return Err(mismatch(&DynamicType::Array {
            element: Box::new(element.clone()),
            dimensions: dimensions.to_vec(),
        }));
    };
    if items.len() != *n {
        return Err(EncodeError::new(EncodeErrorKind::BoundExceeded {
            bound: *n,
            found: items.len(),
        }));
    }
    if rest.is_empty() {
        if let Some(done) = encode_primitives(element, items, e) {
            return done;
        }
    }
    for (i, item) in items.iter().enumerate() {
        let r = if rest.is_empty() {
            encode_value(element, item, e)
        } else {
            encode_flat(element, rest, item, e)
        };
        r.map_err(|err| err.at_index(i))?;
    }
    Ok(())
}

/// A struct: its DHEADER (appendable, mutable in XCDR2) and members.
fn encode_struct(
    s: &StructType,
    values: &[Option<DynamicValue>],
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let dheader = begin_aggregate(e, s.extensibility);
    encode_members(s, values, e)?;
    member::end_aggregate(e, s.extensibility, dheader)
}

/// A struct's members (the base's first), framed as its extensibility says. (Walks the
/// bases instead of listing all members: this runs for every sample.)
fn encode_members(
    s: &StructType,
    values: &[Option<DynamicValue>],
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let Some(inherited) = values.len().checked_sub(s.members.len()) else {
        return Err(struct_mismatch(s));
    };
    match &s.base {
        Some(base) => encode_members(base, &values[..inherited], e)?,
        None if inherited != 0 => return Err(struct_mismatch(s)),
        None => {}
    }
    for (m, v) in s.members.iter().zip(&values[inherited..]) {
        // The common member — present, not optional, not in a mutable struct — written
        // here; the rest in an outlined function, so that this loop stays small.
        match v {
            Some(v) if !m.optional && s.extensibility != Extensibility::Mutable => {
                encode_value(&m.ty, v, e).map_err(|err| err.in_member(m.name.clone()))?
            }
            v => encode_framed_member(s, m, v.as_ref(), e)?,
        }
    }
    Ok(())
}

/// A member of a mutable struct (with its EMHEADER or parameter header), an optional one, or
/// a missing one (an error).
#[inline(never)]
fn encode_framed_member(
    s: &StructType,
    m: &super::Member,
    v: Option<&DynamicValue>,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let name = || m.name.clone();
    match (s.extensibility, v) {
        (Extensibility::Mutable, None) => {}
        (Extensibility::Mutable, Some(v)) => {
            let start = begin_member(e, m.id, m.must_understand, m.ty.kind());
            encode_value_outlined(&m.ty, v, e).map_err(|err| err.in_member(name()))?;
            member::end_member(e, start).map_err(|err| err.in_member(name()))?;
        }
        (_, v) if m.optional => {
            member::encode_optional_with(v, m.id, m.must_understand, e, |v, e| {
                encode_value_outlined(&m.ty, v, e)
            })
            .map_err(|err| err.in_member(name()))?;
        }
        (_, Some(v)) => encode_value_outlined(&m.ty, v, e).map_err(|err| err.in_member(name()))?,
        (_, None) => return Err(struct_mismatch(s).in_member(name())),
    }
    Ok(())
}

/// [`encode_value`] as a call, for the paths that are not worth its code inlined.
#[inline(never)]
fn encode_value_outlined(
    ty: &DynamicType,
    value: &DynamicValue,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    encode_value(ty, value, e)
}

fn struct_mismatch(s: &StructType) -> EncodeError {
    EncodeError::new(EncodeErrorKind::ValueMismatch {
        type_name: s.name.clone().into(),
    })
}

fn int(ty: &DynamicType, v: i64) -> Result<i64, EncodeError> {
    let ok = match ty {
        DynamicType::Int8 => i8::try_from(v).is_ok(),
        DynamicType::Int16 => i16::try_from(v).is_ok(),
        DynamicType::Int32 => i32::try_from(v).is_ok(),
        _ => true,
    };
    ok.then_some(v).ok_or_else(|| mismatch(ty))
}

fn uint(ty: &DynamicType, v: u64) -> Result<u64, EncodeError> {
    let ok = match ty {
        DynamicType::UInt8 | DynamicType::Octet => u8::try_from(v).is_ok(),
        DynamicType::UInt16 => u16::try_from(v).is_ok(),
        DynamicType::UInt32 => u32::try_from(v).is_ok(),
        _ => true,
    };
    ok.then_some(v).ok_or_else(|| mismatch(ty))
}

/// A union discriminator held as an integer, as a value of its type.
fn discriminator_value(ty: &DynamicType, d: i64) -> DynamicValue {
    match ty {
        DynamicType::Bool => DynamicValue::Bool(d != 0),
        DynamicType::Char => {
            DynamicValue::Char(char::from_u32(u32::try_from(d).unwrap_or(0)).unwrap_or('\0'))
        }
        DynamicType::Enum(_) => DynamicValue::Enum(i32::try_from(d).unwrap_or(i32::MAX)),
        DynamicType::UInt8
        | DynamicType::Octet
        | DynamicType::UInt16
        | DynamicType::UInt32
        | DynamicType::UInt64 => DynamicValue::UInt(u64::try_from(d).unwrap_or(0)),
        _ => DynamicValue::Int(d),
    }
}

/// Reads a value of `ty`.
pub(crate) fn decode(ty: &DynamicType, d: &mut Decoder<'_>) -> Result<DynamicValue, DecodeError> {
    Ok(match ty {
        DynamicType::Bool => DynamicValue::Bool(d.read_bool()?),
        DynamicType::Int8 => DynamicValue::Int(i64::from(d.read_u8()? as i8)),
        DynamicType::UInt8 | DynamicType::Octet => DynamicValue::UInt(u64::from(d.read_u8()?)),
        DynamicType::Int16 => DynamicValue::Int(i64::from(d.read_i16()?)),
        DynamicType::UInt16 => DynamicValue::UInt(u64::from(d.read_u16()?)),
        DynamicType::Int32 => DynamicValue::Int(i64::from(d.read_i32()?)),
        DynamicType::UInt32 => DynamicValue::UInt(u64::from(d.read_u32()?)),
        DynamicType::Int64 => DynamicValue::Int(d.read_i64()?),
        DynamicType::UInt64 => DynamicValue::UInt(d.read_u64()?),
        // Kept as it came: through an f64, a signalling NaN would come back quiet.
        DynamicType::Float32 => DynamicValue::Float32(d.read_f32()?),
        DynamicType::Float64 => DynamicValue::Float(d.read_f64()?),
        DynamicType::Char => DynamicValue::Char(char::from(d.read_u8()?)),
        DynamicType::WChar => DynamicValue::Char(crate::WChar::decode(d)?.0),
        DynamicType::WString => DynamicValue::String(crate::WString::decode(d)?.0),
        DynamicType::String { bound } => DynamicValue::String(match bound {
            Some(bound) => member::decode_bounded_string(d, *bound)?,
            None => d.read_str()?.to_owned(),
        }),
        DynamicType::Enum(t) => {
            let at = d.position();
            let v = member::decode_enum(d, enum_size(t.bit_bound))?;
            if !t.enumerators.iter().any(|(_, value)| *value == v) {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnknownEnumerator {
                        type_name: t.name.clone().into(),
                        value: i64::from(v),
                    },
                    at,
                ));
            }
            DynamicValue::Enum(v)
        }
        DynamicType::Bitmask(t) => DynamicValue::Bitmask(match super::bitmask_size(t.bit_bound) {
            1 => u64::from(d.read_u8()?),
            2 => u64::from(d.read_u16()?),
            4 => u64::from(d.read_u32()?),
            _ => d.read_u64()?,
        }),
        DynamicType::Sequence { element, bound } => {
            let outer = if d.is_xcdr2() && !element.is_primitive() {
                Some(d.begin_delimited("sequence DHEADER")?)
            } else {
                None
            };
            let start = d.position();
            let count = d.read_count("sequence length", element.min_size())?;
            if element.is_octet_like() && bound.is_none_or(|b| count <= b) {
                return Ok(DynamicValue::Bytes(d.octets(count, "octets")?));
            }
            if let Some(bound) = bound {
                if count > *bound {
                    return Err(DecodeError::new(
                        DecodeErrorKind::BoundExceeded {
                            bound: *bound,
                            found: count as u64,
                        },
                        start,
                    ));
                }
            }
            let items = decode_elements(element, count, d)?;
            if let Some(outer) = outer {
                d.restore(outer);
            }
            DynamicValue::Sequence(items)
        }
        DynamicType::Array {
            element,
            dimensions,
        } => {
            if d.is_xcdr2() && !element.is_primitive() {
                let outer = d.begin_delimited("array DHEADER")?;
                let value = decode_flat(element, dimensions, d)?;
                d.restore(outer);
                value
            } else {
                decode_flat(element, dimensions, d)?
            }
        }
        DynamicType::Struct(s) => decode_struct(s, d)?,
        DynamicType::Union(u) => decode_union(u, d)?,
    })
}

/// A member, element or branch: primitives and unbounded strings read here, without a call
/// into the general [`decode`], everything else through it (as `encode_value`). The value
/// goes to `put` as soon as it is made: handed straight to the vector that keeps it, it is
/// written there once, rather than built on the stack and copied (a copy the processor
/// stalls on, reading back the bytes just written as a whole).
#[inline(always)]
fn decode_value_with(
    ty: &DynamicType,
    d: &mut Decoder<'_>,
    put: impl FnOnce(DynamicValue),
) -> Result<(), DecodeError> {
    match ty {
        DynamicType::Int32 => put(DynamicValue::Int(i64::from(d.read_i32()?))),
        DynamicType::UInt32 => put(DynamicValue::UInt(u64::from(d.read_u32()?))),
        DynamicType::Int64 => put(DynamicValue::Int(d.read_i64()?)),
        DynamicType::UInt64 => put(DynamicValue::UInt(d.read_u64()?)),
        DynamicType::Float64 => put(DynamicValue::Float(d.read_f64()?)),
        DynamicType::Float32 => put(DynamicValue::Float32(d.read_f32()?)),
        DynamicType::Int16 => put(DynamicValue::Int(i64::from(d.read_i16()?))),
        DynamicType::UInt16 => put(DynamicValue::UInt(u64::from(d.read_u16()?))),
        DynamicType::Bool => put(DynamicValue::Bool(d.read_bool()?)),
        DynamicType::UInt8 | DynamicType::Octet => put(DynamicValue::UInt(u64::from(d.read_u8()?))),
        DynamicType::String { bound: None } => put(DynamicValue::String(d.read_str()?.to_owned())),
        DynamicType::Sequence { element, bound } if element.is_octet_like() => {
            // The common `sequence<octet>`: bytes as they are (as `decode` reads them).
            let start = d.position();
            let count = d.read_count("sequence length", 1)?;
            if let Some(bound) = bound {
                if count > *bound {
                    return Err(DecodeError::new(
                        DecodeErrorKind::BoundExceeded {
                            bound: *bound,
                            found: count as u64,
                        },
                        start,
                    ));
                }
            }
            put(DynamicValue::Bytes(d.octets(count, "octets")?));
        }
        DynamicType::Struct(s) => put(decode_struct(s, d)?),
        _ => put(decode(ty, d)?),
    }
    Ok(())
}

/// [`decode_value_with`], returning the value.
#[inline(always)]
fn decode_value(ty: &DynamicType, d: &mut Decoder<'_>) -> Result<DynamicValue, DecodeError> {
    let mut out = DynamicValue::Bool(false);
    decode_value_with(ty, d, |v| out = v)?;
    Ok(out)
}

/// `count` elements (already checked against the remaining input).
fn decode_elements(
    element: &DynamicType,
    count: usize,
    d: &mut Decoder<'_>,
) -> Result<Vec<DynamicValue>, DecodeError> {
    if let Some(run) = decode_primitives(element, count, d) {
        return run;
    }
    // No more reserved than the remaining input could encode (the count is the sender's).
    let per_element = element.min_size().max(1);
    let mut out = Vec::with_capacity(count.min(d.remaining() / per_element));
    for i in 0..count {
        match element {
            DynamicType::Array {
                element: inner,
                dimensions,
            } => out.push(decode_flat(inner, dimensions, d).map_err(|err| err.at_index(i))?),
            _ => decode_value_with(element, d, |v| out.push(v)).map_err(|err| err.at_index(i))?,
        }
    }
    Ok(out)
}

/// `count` 16-, 32- or 64-bit numbers read in one go: aligned once, bounds-checked once, then
/// converted in a tight loop; `None` for other element types.
fn decode_primitives(
    element: &DynamicType,
    count: usize,
    d: &mut Decoder<'_>,
) -> Option<Result<Vec<DynamicValue>, DecodeError>> {
    fn run<const N: usize>(
        count: usize,
        d: &mut Decoder<'_>,
        convert: impl Fn([u8; N], bool) -> DynamicValue,
    ) -> Result<Vec<DynamicValue>, DecodeError> {
        if count > 0 {
            d.align(N)?;
        }
        let big = d.endianness() == Endianness::Big;
        let bytes = d.bytes(count.saturating_mul(N), "elements")?;
        Ok(bytes
            .chunks_exact(N)
            .map(|c| {
                let mut a = [0; N];
                a.copy_from_slice(c);
                convert(a, big)
            })
            .collect())
    }
    macro_rules! num {
        ($n:literal, $ty:ty, $wrap:expr) => {
            Some(run::<$n>(count, d, |a, big| {
                $wrap(if big {
                    <$ty>::from_be_bytes(a)
                } else {
                    <$ty>::from_le_bytes(a)
                })
            }))
        };
    }
    match element {
        DynamicType::Float64 => num!(8, f64, DynamicValue::Float),
        DynamicType::Float32 => num!(4, f32, DynamicValue::Float32),
        DynamicType::Int64 => num!(8, i64, DynamicValue::Int),
        DynamicType::UInt64 => num!(8, u64, DynamicValue::UInt),
        DynamicType::Int32 => num!(4, i32, |v: i32| DynamicValue::Int(i64::from(v))),
        DynamicType::UInt32 => num!(4, u32, |v: u32| DynamicValue::UInt(u64::from(v))),
        DynamicType::Int16 => num!(2, i16, |v: i16| DynamicValue::Int(i64::from(v))),
        DynamicType::UInt16 => num!(2, u16, |v: u16| DynamicValue::UInt(u64::from(v))),
        _ => None,
    }
}

fn decode_flat(
    element: &DynamicType,
    dimensions: &[usize],
    d: &mut Decoder<'_>,
) -> Result<DynamicValue, DecodeError> {
    let Some((n, rest)) = dimensions.split_first() else {
        return decode(element, d);
    };
    let inner = inner_array(element, dimensions);
    let needed = n.saturating_mul(inner.min_size());
    if needed > d.remaining() {
        return Err(d.error(DecodeErrorKind::UnexpectedEnd {
            what: "array",
            needed,
            remaining: d.remaining(),
        }));
    }
    if rest.is_empty() {
        if let Some(run) = decode_primitives(element, *n, d) {
            return run.map(DynamicValue::Sequence);
        }
    }
    let mut items = Vec::with_capacity(*n);
    for i in 0..*n {
        let item = if rest.is_empty() {
            decode_value(element, d)
        } else {
            decode_flat(element, rest, d)
        };
        items.push(item.map_err(|err| err.at_index(i))?);
    }
    Ok(DynamicValue::Sequence(items))
}

/// A struct: its DHEADER (appendable, mutable in XCDR2) and members.
fn decode_struct(s: &StructType, d: &mut Decoder<'_>) -> Result<DynamicValue, DecodeError> {
    let outer = begin_aggregate_decode(d, s.extensibility)?;
    let value = if s.extensibility == Extensibility::Mutable {
        decode_mutable(s, d, false)?
    } else {
        decode_members(s, d)?
    };
    member::end_aggregate_decode(d, outer);
    Ok(value)
}

/// The members of a final or appendable struct; an appendable one's members missing at the
/// end take their defaults.
fn decode_members(s: &StructType, d: &mut Decoder<'_>) -> Result<DynamicValue, DecodeError> {
    let mut values = Vec::with_capacity(s.member_count());
    decode_members_into(s, d, &mut values)?;
    Ok(DynamicValue::Struct(values))
}

fn decode_members_into(
    s: &StructType,
    d: &mut Decoder<'_>,
    values: &mut Vec<Option<DynamicValue>>,
) -> Result<(), DecodeError> {
    if let Some(base) = &s.base {
        decode_members_into(base, d, values)?;
    }
    let appendable = s.extensibility == Extensibility::Appendable;
    for m in &s.members {
        let name = || m.name.clone();
        let value = if appendable && d.is_at_end() {
            (!m.optional).then(|| DynamicValue::default_of(&m.ty))
        } else if m.optional {
            member::decode_optional_with(d, |d| decode(&m.ty, d))
                .map_err(|e| e.in_member(name()))?
        } else {
            decode_value_with(&m.ty, d, |v| values.push(Some(v)))
                .map_err(|e| e.in_member(name()))?;
            continue;
        };
        values.push(value);
    }
    Ok(())
}

/// The members of a mutable struct, in any order; absent ones take their defaults (keys
/// must be present). With `keys_only`, members that are not keys are stepped over.
fn decode_mutable(
    s: &StructType,
    d: &mut Decoder<'_>,
    keys_only: bool,
) -> Result<DynamicValue, DecodeError> {
    let mut values: Vec<Option<DynamicValue>> = vec![None; s.member_count()];
    while let Some(header) = member::next_member(d)? {
        match s.member_with_id(header.id) {
            Some((_, m)) if keys_only && !m.key => {}
            Some((i, m)) => {
                if values[i].is_some() {
                    return Err(member::duplicate_member(d, s.name.clone(), header.id));
                }
                values[i] = Some(decode_value(&m.ty, d).map_err(|e| e.in_member(m.name.clone()))?);
            }
            None if header.must_understand => {
                return Err(member::unknown_must_understand(
                    d,
                    s.name.clone(),
                    header.id,
                ));
            }
            None => {}
        }
        member::end_member_decode(d, header);
    }
    for (i, v) in values.iter_mut().enumerate() {
        let Some(m) = s.member_at(i) else { continue };
        if v.is_none() && !m.optional {
            if m.key {
                return Err(member::missing_member(d, s.name.clone(), m.name.clone()));
            }
            *v = Some(DynamicValue::default_of(&m.ty));
        }
    }
    Ok(DynamicValue::Struct(values))
}

fn decode_union(u: &UnionType, d: &mut Decoder<'_>) -> Result<DynamicValue, DecodeError> {
    let outer = begin_aggregate_decode(d, u.extensibility)?;
    let discriminator = decode(&u.discriminator, d)
        .map_err(|e| e.in_member("discriminator"))?
        .as_discriminator();
    let value = match u.branch(discriminator) {
        Some(case) => Some(Box::new(
            decode(&case.ty, d).map_err(|e| e.in_member(case.name.clone()))?,
        )),
        // A discriminator no branch names, in a union without a default: legal IDL, the
        // union holds no member.
        None => None,
    };
    member::end_aggregate_decode(d, outer);
    Ok(DynamicValue::Union {
        discriminator,
        value,
    })
}
