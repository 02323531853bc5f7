//! Keys of dynamic values: the key holder and key hash (`crate::key`), and key-only samples
//! (what disposes and unregisters carry), by the rules the derive macro follows.

use super::codec::{decode, encode_value};
use super::{enum_size, DynamicType, DynamicValue, StructType};
use crate::error::{DecodeError, EncodeError};
use crate::key::{hash_holder, variants_of, KeyHash};
use crate::member::{self, begin_aggregate, begin_member};
use crate::{align_up, Decoder, Encoder, Endianness, Extensibility, XcdrVersion};

impl DynamicType {
    /// True when the type has key members (its own or its base's).
    pub fn is_keyed(&self) -> bool {
        match self {
            DynamicType::Struct(s) => struct_keyed(s),
            _ => false,
        }
    }
}

fn struct_keyed(s: &StructType) -> bool {
    s.members.iter().any(|m| m.key) || s.base.as_deref().is_some_and(struct_keyed)
}

/// The key members of a keyed struct's own members, in member-id order (the holder's; of
/// equal ids, in declaration order), found without a list: the key hash of every sample a runtime type's
/// writer writes walks them, and a type has few keys.
fn own_keys_by_id(s: &StructType) -> impl Iterator<Item = (usize, &super::Member)> {
    let mut last: Option<(u32, usize)> = None;
    std::iter::from_fn(move || {
        let (place, next) = s
            .members
            .iter()
            .enumerate()
            .filter(|(i, m)| m.key && last.is_none_or(|l| (m.id, *i) > l))
            .min_by_key(|(i, m)| (m.id, *i))?;
        last = Some((next.id, place));
        Some((place, next))
    })
}

/// The members that make a struct's key holder, with their places among its own members:
/// its own keys by member id, or every member of a struct without keys.
fn holder_members_of(s: &StructType, keyed: bool) -> impl Iterator<Item = (usize, &super::Member)> {
    let mut keys = own_keys_by_id(s);
    let mut all = s.members.iter().enumerate();
    std::iter::from_fn(move || if keyed { keys.next() } else { all.next() })
}

/// The index of a struct's own member among all its members (the base's come first).
fn base_len(s: &StructType) -> usize {
    s.base.as_ref().map_or(0, |b| b.member_count())
}

fn members_of<'v>(
    s: &StructType,
    value: &'v DynamicValue,
) -> Result<&'v [Option<DynamicValue>], EncodeError> {
    match value {
        DynamicValue::Struct(values) if values.len() == s.member_count() => Ok(values),
        _ => Err(mismatch(s)),
    }
}

fn mismatch(s: &StructType) -> EncodeError {
    EncodeError::new(crate::EncodeErrorKind::ValueMismatch {
        type_name: s.name.clone().into(),
    })
}

/// Appends the key holder of `value` (XTypes 7.6.8): its key members in member-id order,
/// flattened, with no DHEADER or member header; a struct without keys holds all members.
pub fn encode_key_holder(
    ty: &DynamicType,
    value: &DynamicValue,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    match ty {
        DynamicType::Struct(s) => holder_members(s, members_of(s, value)?, e),
        _ => encode_value(ty, value, e),
    }
}

fn holder_members(
    s: &StructType,
    values: &[Option<DynamicValue>],
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let split = base_len(s);
    let (base_values, own_values) = values.split_at(split.min(values.len()));
    let keyed = struct_keyed(s);
    if let Some(base) = &s.base {
        if !keyed || struct_keyed(base) {
            holder_members(base, base_values, e)?;
        }
    }
    for (i, m) in holder_members_of(s, keyed) {
        let v = own_values.get(i).ok_or_else(|| mismatch(s))?;
        let r = if m.optional {
            member::encode_optional_with(v.as_ref(), m.id, m.must_understand, e, |v, e| {
                encode_key_holder(&m.ty, v, e)
            })
        } else {
            let v = v.as_ref().ok_or_else(|| mismatch(s))?;
            encode_key_holder(&m.ty, v, e)
        };
        r.map_err(|err| err.in_member(m.name.clone()))?;
    }
    Ok(())
}

/// Where an encoding of `ty` ends at most, from `offset` of a stream aligned to at most
/// `max_align`; `None` when unbounded.
fn max_end(ty: &DynamicType, offset: usize, max_align: usize) -> Option<usize> {
    let primitive = |size: usize| Some(align_up(offset, size, max_align) + size);
    match ty {
        DynamicType::Bool
        | DynamicType::UInt8
        | DynamicType::Octet
        | DynamicType::Int8
        | DynamicType::Char => Some(offset + 1),
        DynamicType::Int16 | DynamicType::UInt16 | DynamicType::WChar => primitive(2),
        DynamicType::WString => None,
        DynamicType::Int32 | DynamicType::UInt32 | DynamicType::Float32 => primitive(4),
        DynamicType::Int64 | DynamicType::UInt64 | DynamicType::Float64 => primitive(8),
        DynamicType::String { bound } => {
            bound.and_then(|b| member::bounded_string_max_end(offset, b, max_align))
        }
        DynamicType::Enum(e) => Some(member::enum_max_end(
            offset,
            enum_size(e.bit_bound),
            max_align,
        )),
        DynamicType::Bitmask(b) => primitive(super::bitmask_size(b.bit_bound)),
        DynamicType::Sequence { element, bound } => {
            let bound = (*bound)?;
            let mut end = align_up(offset, 4, max_align);
            if max_align == XcdrVersion::Xcdr2.max_align() && !element.is_primitive() {
                end += 4;
            }
            end += 4;
            for _ in 0..bound {
                end = max_end(element, end, max_align)?;
            }
            Some(end)
        }
        DynamicType::Array {
            element,
            dimensions,
        } => {
            let mut end = if !element.is_primitive() && max_align == 4 {
                align_up(offset, 4, 4) + 4
            } else {
                offset
            };
            for _ in 0..dimensions.iter().product::<usize>() {
                end = max_end(element, end, max_align)?;
            }
            Some(end)
        }
        DynamicType::Struct(s) => {
            let start = match s.extensibility {
                Extensibility::Final => offset,
                Extensibility::Appendable => align_up(offset, 4, max_align) + 4,
                Extensibility::Mutable => return None,
            };
            let mut end = start;
            for m in s.all_members() {
                if m.optional {
                    return None;
                }
                end = max_end(&m.ty, end, max_align)?;
            }
            Some(end)
        }
        DynamicType::Union(_) => None,
    }
}

/// Where the key holder of `ty` ends at most (see [`max_end`]).
fn key_max_end(ty: &DynamicType, offset: usize, max_align: usize) -> Option<usize> {
    let DynamicType::Struct(s) = ty else {
        return max_end(ty, offset, max_align);
    };
    struct_key_max_end(s, offset, max_align)
}

fn struct_key_max_end(s: &StructType, offset: usize, max_align: usize) -> Option<usize> {
    let keyed = struct_keyed(s);
    let mut end = offset;
    if let Some(base) = &s.base {
        if !keyed || struct_keyed(base) {
            end = struct_key_max_end(base, end, max_align)?;
        }
    }
    for (_, m) in holder_members_of(s, keyed) {
        if m.optional {
            return None;
        }
        end = key_max_end(&m.ty, end, max_align)?;
    }
    Some(end)
}

/// The key holder of `value` aligned as `version` aligns, and whether its maximum size fits
/// in 16 bytes.
fn holder(
    ty: &DynamicType,
    value: &DynamicValue,
    version: XcdrVersion,
) -> Result<(Vec<u8>, bool), EncodeError> {
    let mut holder = Vec::with_capacity(32);
    let mut e = Encoder::new(&mut holder, version, Endianness::Big);
    encode_key_holder(ty, value, &mut e)?;
    let fits = key_max_end(ty, 0, version.max_align()).is_some_and(|end| end <= 16);
    Ok((holder, fits))
}

/// The key hash of `value` (see `crate::key_hash`).
pub fn key_hash(
    ty: &DynamicType,
    value: &DynamicValue,
    version: XcdrVersion,
) -> Result<KeyHash, EncodeError> {
    let (holder, fits) = holder(ty, value, version)?;
    Ok(hash_holder(&holder, fits))
}

/// The key hashes implementations compute for `value` (see `crate::key_hash_variants`).
pub fn key_hash_variants(
    ty: &DynamicType,
    value: &DynamicValue,
) -> Result<Vec<KeyHash>, EncodeError> {
    Ok(variants_of([
        holder(ty, value, XcdrVersion::Xcdr2)?,
        holder(ty, value, XcdrVersion::Xcdr1)?,
    ]))
}

/// Appends the key-only sample of `value`: the type's own encoding with only its key
/// members (in declaration order), headers included; the whole value for a type without
/// keys.
pub fn encode_key_sample(
    ty: &DynamicType,
    value: &DynamicValue,
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let DynamicType::Struct(s) = ty else {
        return encode_value(ty, value, e);
    };
    if !struct_keyed(s) {
        return encode_value(ty, value, e);
    }
    let dheader = begin_aggregate(e, s.extensibility);
    key_sample_members(s, s.extensibility, members_of(s, value)?, e)?;
    member::end_aggregate(e, s.extensibility, dheader)
}

fn key_sample_members(
    s: &StructType,
    ext: Extensibility,
    values: &[Option<DynamicValue>],
    e: &mut Encoder<'_>,
) -> Result<(), EncodeError> {
    let split = base_len(s);
    let (base_values, own_values) = values.split_at(split.min(values.len()));
    if let Some(base) = &s.base {
        if struct_keyed(base) {
            key_sample_members(base, ext, base_values, e)?;
        }
    }
    for (m, v) in s.members.iter().zip(own_values).filter(|(m, _)| m.key) {
        let v = v.as_ref().ok_or_else(|| mismatch(s))?;
        let r = if ext == Extensibility::Mutable {
            let start = begin_member(e, m.id, false, m.ty.kind());
            encode_key_sample(&m.ty, v, e).and_then(|()| member::end_member(e, start))
        } else {
            encode_key_sample(&m.ty, v, e)
        };
        r.map_err(|err| err.in_member(m.name.clone()))?;
    }
    Ok(())
}

/// Reads a key-only sample; the members that are not keys take their defaults.
pub fn decode_key_sample(
    ty: &DynamicType,
    d: &mut Decoder<'_>,
) -> Result<DynamicValue, DecodeError> {
    match ty {
        DynamicType::Struct(s) if struct_keyed(s) && s.extensibility != Extensibility::Mutable => {
            let outer = member::begin_aggregate_decode(d, s.extensibility)?;
            let value = DynamicValue::Struct(key_sample_values(s, d)?);
            member::end_aggregate_decode(d, outer);
            Ok(value)
        }
        // A mutable type's absent members take their defaults anyway.
        _ => decode(ty, d),
    }
}

fn key_sample_values(
    s: &StructType,
    d: &mut Decoder<'_>,
) -> Result<Vec<Option<DynamicValue>>, DecodeError> {
    let mut values = match &s.base {
        Some(base) if struct_keyed(base) => key_sample_values(base, d)?,
        Some(base) => base
            .all_members()
            .iter()
            .map(|m| (!m.optional).then(|| DynamicValue::default_of(&m.ty)))
            .collect(),
        None => Vec::new(),
    };
    for m in &s.members {
        values.push(if m.key {
            Some(decode_key_sample(&m.ty, d).map_err(|e| e.in_member(m.name.clone()))?)
        } else {
            (!m.optional).then(|| DynamicValue::default_of(&m.ty))
        });
    }
    Ok(values)
}

/// Serializes the key-only sample of `value` with its encapsulation header (see
/// `crate::serialize_key_sample`).
pub fn serialize_key_sample(
    ty: &DynamicType,
    value: &DynamicValue,
    version: XcdrVersion,
    endianness: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    let mut buf = Vec::with_capacity(32);
    crate::sample::encapsulate(&mut buf, version, ty.extensibility(), endianness, |e| {
        encode_key_sample(ty, value, e).map_err(|err| err.in_member(ty.name().to_owned()))
    })?;
    Ok(buf)
}

/// Deserializes a key-only sample, in either form peers write (see
/// `crate::deserialize_key_sample`).
pub fn deserialize_key_sample(
    ty: &DynamicType,
    payload: &[u8],
) -> Result<DynamicValue, DecodeError> {
    let headerless_form = ty.is_keyed() && ty.extensibility() == Extensibility::Appendable;
    crate::sample::read_key_sample(payload, headerless_form, |d| decode_key_sample(ty, d))
        .map_err(|e| e.in_member(ty.name().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamic::{Extensibility, Member};

    #[test]
    fn keys_come_in_member_id_order_and_equal_ids_in_declaration_order() {
        let s = StructType {
            name: "Keys".into(),
            extensibility: Extensibility::Mutable,
            base: None,
            members: vec![
                Member::new("a", 5, DynamicType::Int32).key(),
                Member::new("b", 1, DynamicType::Int32).key(),
                Member::new("c", 2, DynamicType::Int32),
                Member::new("d", 5, DynamicType::Int32).key(),
                Member::new("e", 3, DynamicType::Int32).key(),
            ],
        };
        let names = |keyed| {
            holder_members_of(&s, keyed)
                .map(|(i, m)| {
                    assert!(std::ptr::eq(m, &s.members[i]), "{} at its place", m.name);
                    m.name.as_str()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(names(true), ["b", "e", "a", "d"]);
        assert_eq!(names(false), ["a", "b", "c", "d", "e"]);
    }
}
