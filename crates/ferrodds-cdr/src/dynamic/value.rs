//! Values of runtime types, and their JSON view (the same as derived types have: see
//! `crate::json`).

use std::borrow::Cow;

use bytes::Bytes;

use serde_json::{Map, Number, Value};

use super::{DynamicType, StructType, UnionType};
use crate::json::{found, octets_from_json, octets_to_json, JsonError};

/// A value of a [`DynamicType`]. Which variant goes with which type:
///
/// | type | value |
/// |---|---|
/// | boolean | `Bool` |
/// | int8 … int64 | `Int` |
/// | octet, uint8 … uint64 | `UInt` |
/// | float | `Float32` (decoding gives this; `Float` encodes too) |
/// | double | `Float` |
/// | char, wchar | `Char` |
/// | string, wstring | `String` |
/// | enum | `Enum` (the enumerator's value) |
/// | bitmask | `Bitmask` |
/// | `sequence<octet>` | `Bytes` (decoding gives this; `Sequence` of `UInt` encodes too) |
/// | sequence, array | `Sequence` (arrays: nested per dimension) |
/// | struct | `Struct` (one entry per member, the base's first; `None`: an absent optional) |
/// | union | `Union` |
#[derive(Debug, Clone, PartialEq)]
pub enum DynamicValue {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A floating-point number (a `double`, or a `float` given as a double).
    Float(f64),
    /// A `float` as decoded, every bit kept.
    Float32(f32),
    /// A character.
    Char(char),
    /// A string.
    String(String),
    /// An enumerator's value.
    Enum(i32),
    /// A bitmask's bits.
    Bitmask(u64),
    /// The elements of a sequence of octets, as they are: no value per byte. A [`Bytes`],
    /// so that it can be a view into a received payload
    /// ([`crate::dynamic::deserialize_shared`]) or into a buffer a binding's object owns,
    /// rather than a copy; `Bytes::from(vec)` makes one from a `Vec<u8>` without a copy.
    Bytes(Bytes),
    /// The elements of a sequence or of one dimension of an array.
    Sequence(Vec<DynamicValue>),
    /// The members of a struct, the base's first.
    Struct(Vec<Option<DynamicValue>>),
    /// A union: its discriminator (as an integer) and the selected branch's value, if any.
    Union {
        /// The discriminator.
        discriminator: i64,
        /// The branch's value.
        value: Option<Box<DynamicValue>>,
    },
}

impl DynamicValue {
    /// The value a member takes when an encoding leaves it out (XTypes 7.6.2.3): zero,
    /// empty, the first enumerator, each member's default.
    pub fn default_of(ty: &DynamicType) -> DynamicValue {
        match ty {
            DynamicType::Bool => DynamicValue::Bool(false),
            DynamicType::Int8 | DynamicType::Int16 | DynamicType::Int32 | DynamicType::Int64 => {
                DynamicValue::Int(0)
            }
            DynamicType::UInt8
            | DynamicType::Octet
            | DynamicType::UInt16
            | DynamicType::UInt32
            | DynamicType::UInt64 => DynamicValue::UInt(0),
            DynamicType::Float32 => DynamicValue::Float32(0.0),
            DynamicType::Float64 => DynamicValue::Float(0.0),
            DynamicType::Char | DynamicType::WChar => DynamicValue::Char('\0'),
            DynamicType::String { .. } | DynamicType::WString => {
                DynamicValue::String(String::new())
            }
            DynamicType::Enum(e) => {
                DynamicValue::Enum(e.enumerators.first().map_or(0, |(_, v)| *v))
            }
            DynamicType::Bitmask(_) => DynamicValue::Bitmask(0),
            DynamicType::Sequence { element, .. } if element.is_octet_like() => {
                DynamicValue::Bytes(Bytes::new())
            }
            DynamicType::Sequence { .. } => DynamicValue::Sequence(Vec::new()),
            DynamicType::Array {
                element,
                dimensions,
            } => default_array(element, dimensions),
            DynamicType::Struct(s) => DynamicValue::Struct(
                s.all_members()
                    .iter()
                    .map(|m| (!m.optional).then(|| DynamicValue::default_of(&m.ty)))
                    .collect(),
            ),
            DynamicType::Union(u) => {
                // The first branch, as derived unions default.
                let discriminator = u.default_discriminator.unwrap_or_else(|| {
                    u.cases
                        .first()
                        .and_then(|c| c.labels.first().copied())
                        .unwrap_or_else(|| {
                            DynamicValue::default_of(&u.discriminator).as_discriminator()
                        })
                });
                DynamicValue::Union {
                    discriminator,
                    value: u
                        .branch(discriminator)
                        .map(|c| Box::new(DynamicValue::default_of(&c.ty))),
                }
            }
        }
    }

    /// A union discriminator's value as the integer `UnionType` labels are (a boolean's 0 or
    /// 1, a character's code, an enumerator's value).
    pub fn as_discriminator(&self) -> i64 {
        match self {
            DynamicValue::Bool(b) => i64::from(*b),
            DynamicValue::Int(i) => *i,
            DynamicValue::UInt(v) => i64::try_from(*v).unwrap_or(i64::MAX),
            DynamicValue::Char(c) => i64::from(u32::from(*c)),
            DynamicValue::Enum(v) => i64::from(*v),
            _ => 0,
        }
    }

    /// The octets of a sequence (or array dimension) of octets: `Bytes` as they are, a
    /// `Sequence` of `UInt`s copied when each fits an octet; `None` otherwise.
    pub fn as_octets(&self) -> Option<Cow<'_, [u8]>> {
        match self {
            DynamicValue::Bytes(bytes) => Some(Cow::Borrowed(bytes)),
            DynamicValue::Sequence(items) => items
                .iter()
                .map(|v| match v {
                    DynamicValue::UInt(b) => u8::try_from(*b).ok(),
                    _ => None,
                })
                .collect::<Option<Vec<u8>>>()
                .map(Cow::Owned),
            _ => None,
        }
    }

    /// The JSON view of this value of `ty`.
    pub fn to_json(&self, ty: &DynamicType) -> Value {
        match (ty, self) {
            (_, DynamicValue::Bool(b)) => Value::Bool(*b),
            (_, DynamicValue::Int(i)) => Value::from(*i),
            (_, DynamicValue::UInt(u)) => Value::from(*u),
            (DynamicType::Float32, DynamicValue::Float(f)) => float_json(f64::from(*f as f32)),
            (_, DynamicValue::Float(f)) => float_json(*f),
            (_, DynamicValue::Float32(f)) => float_json(f64::from(*f)),
            (_, DynamicValue::Char(c)) => Value::String(c.to_string()),
            (_, DynamicValue::String(s)) => Value::String(s.clone()),
            (DynamicType::Enum(e), DynamicValue::Enum(v)) => e
                .enumerators
                .iter()
                .find(|(_, value)| value == v)
                .map_or_else(|| Value::from(*v), |(name, _)| Value::String(name.clone())),
            (_, DynamicValue::Enum(v)) => Value::from(*v),
            (_, DynamicValue::Bitmask(b)) => Value::from(*b),
            (_, DynamicValue::Bytes(bytes)) => octets_to_json(bytes),
            (DynamicType::Sequence { element, .. }, DynamicValue::Sequence(items)) => {
                // Octets given one value each (encoding takes them so): the same base64 view.
                match element.is_octet_like().then(|| self.as_octets()).flatten() {
                    Some(bytes) => octets_to_json(&bytes),
                    None => Value::Array(items.iter().map(|v| v.to_json(element)).collect()),
                }
            }
            (
                DynamicType::Array {
                    element,
                    dimensions,
                },
                DynamicValue::Sequence(items),
            ) => {
                let inner = inner_array(element, dimensions);
                Value::Array(items.iter().map(|v| v.to_json(&inner)).collect())
            }
            (DynamicType::Struct(s), DynamicValue::Struct(values)) => {
                let mut map = Map::new();
                for (m, v) in s.all_members().iter().zip(values) {
                    map.insert(
                        m.name.clone(),
                        v.as_ref().map_or(Value::Null, |v| v.to_json(&m.ty)),
                    );
                }
                Value::Object(map)
            }
            (
                DynamicType::Union(u),
                DynamicValue::Union {
                    discriminator,
                    value,
                },
            ) => {
                let mut map = Map::new();
                map.insert(
                    "discriminator".into(),
                    discriminator_json(&u.discriminator, *discriminator),
                );
                if let (Some(case), Some(v)) = (u.branch(*discriminator), value) {
                    map.insert(case.name.clone(), v.to_json(&case.ty));
                }
                Value::Object(map)
            }
            (_, DynamicValue::Sequence(items)) => {
                Value::Array(items.iter().map(|v| v.to_json(ty)).collect())
            }
            (_, DynamicValue::Struct(_) | DynamicValue::Union { .. }) => Value::Null,
        }
    }

    /// The value of `ty` a JSON view describes.
    pub fn from_json(ty: &DynamicType, json: &Value) -> Result<DynamicValue, JsonError> {
        let expected = |what: &str| JsonError::new(what, found(json));
        match ty {
            DynamicType::Bool => json
                .as_bool()
                .map(DynamicValue::Bool)
                .ok_or_else(|| expected("a boolean")),
            DynamicType::Int8 | DynamicType::Int16 | DynamicType::Int32 | DynamicType::Int64 => {
                let (lo, hi) = signed_range(ty);
                json.as_i64()
                    .filter(|v| (lo..=hi).contains(v))
                    .map(DynamicValue::Int)
                    .ok_or_else(|| expected(&format!("an integer from {lo} to {hi}")))
            }
            DynamicType::UInt8
            | DynamicType::Octet
            | DynamicType::UInt16
            | DynamicType::UInt32
            | DynamicType::UInt64 => {
                let hi = unsigned_max(ty);
                json.as_u64()
                    .filter(|v| *v <= hi)
                    .map(DynamicValue::UInt)
                    .ok_or_else(|| expected(&format!("an integer from 0 to {hi}")))
            }
            DynamicType::Float32 | DynamicType::Float64 => match json {
                Value::Number(n) => n.as_f64().map(DynamicValue::Float),
                Value::String(s) => match s.as_str() {
                    "NaN" => Some(DynamicValue::Float(f64::NAN)),
                    "Infinity" => Some(DynamicValue::Float(f64::INFINITY)),
                    "-Infinity" => Some(DynamicValue::Float(f64::NEG_INFINITY)),
                    _ => None,
                },
                _ => None,
            }
            .ok_or_else(|| expected("a number, \"NaN\", \"Infinity\" or \"-Infinity\"")),
            DynamicType::Char | DynamicType::WChar => {
                let mut chars = json.as_str().unwrap_or_default().chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(DynamicValue::Char(c)),
                    _ => Err(expected("a one-character string")),
                }
            }
            DynamicType::String { .. } | DynamicType::WString => json
                .as_str()
                .map(|s| DynamicValue::String(s.to_owned()))
                .ok_or_else(|| expected("a string")),
            DynamicType::Enum(e) => {
                let by_name = json.as_str().and_then(|name| {
                    e.enumerators
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| *v)
                });
                by_name.map(DynamicValue::Enum).ok_or_else(|| {
                    let names: Vec<&str> = e.enumerators.iter().map(|(n, _)| n.as_str()).collect();
                    expected(&format!("one of {}", names.join(", ")))
                })
            }
            DynamicType::Bitmask(_) => json
                .as_u64()
                .map(DynamicValue::Bitmask)
                .ok_or_else(|| expected("a bitmask's integer value")),
            DynamicType::Sequence { element, .. } if element.is_octet_like() => {
                octets_from_json(json).map(|b| DynamicValue::Bytes(b.into()))
            }
            DynamicType::Sequence { element, .. } => {
                let items = json.as_array().ok_or_else(|| expected("an array"))?;
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| DynamicValue::from_json(element, v).map_err(|e| e.at_index(i)))
                    .collect::<Result<_, _>>()
                    .map(DynamicValue::Sequence)
            }
            DynamicType::Array {
                element,
                dimensions,
            } => {
                let items = json.as_array().ok_or_else(|| expected("an array"))?;
                let (first, _) = dimensions.split_first().unwrap_or((&0, &[]));
                if items.len() != *first {
                    return Err(expected(&format!("an array of {first} elements")));
                }
                let inner = inner_array(element, dimensions);
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| DynamicValue::from_json(&inner, v).map_err(|e| e.at_index(i)))
                    .collect::<Result<_, _>>()
                    .map(DynamicValue::Sequence)
            }
            DynamicType::Struct(s) => struct_from_json(s, json),
            DynamicType::Union(u) => union_from_json(u, json),
        }
    }
}

fn struct_from_json(s: &StructType, json: &Value) -> Result<DynamicValue, JsonError> {
    let object = json
        .as_object()
        .ok_or_else(|| JsonError::new(format!("an object ({})", s.name), found(json)))?;
    let mut values = Vec::new();
    for m in s.all_members() {
        let v = match object.get(&m.name) {
            None | Some(Value::Null) if m.optional => None,
            None => {
                return Err(JsonError::new(
                    format!("member {} of {}", m.name, s.name),
                    "it absent",
                ))
            }
            Some(v) => {
                Some(DynamicValue::from_json(&m.ty, v).map_err(|e| e.in_member(m.name.clone()))?)
            }
        };
        values.push(v);
    }
    Ok(DynamicValue::Struct(values))
}

fn union_from_json(u: &UnionType, json: &Value) -> Result<DynamicValue, JsonError> {
    let object = json
        .as_object()
        .ok_or_else(|| JsonError::new(format!("an object ({})", u.name), found(json)))?;
    let d_json = object.get("discriminator").unwrap_or(&Value::Null);
    let discriminator = DynamicValue::from_json(&u.discriminator, d_json)
        .map_err(|e| e.in_member("discriminator"))?
        .as_discriminator();
    let value = match u.branch(discriminator) {
        Some(case) => {
            let v = object.get(&case.name).ok_or_else(|| {
                JsonError::new(format!("branch {} of {}", case.name, u.name), "it absent")
            })?;
            Some(Box::new(
                DynamicValue::from_json(&case.ty, v).map_err(|e| e.in_member(case.name.clone()))?,
            ))
        }
        None => None,
    };
    Ok(DynamicValue::Union {
        discriminator,
        value,
    })
}

/// The type of one element of the outermost dimension of an array.
pub(crate) fn inner_array(element: &DynamicType, dimensions: &[usize]) -> DynamicType {
    match dimensions {
        [] | [_] => element.clone(),
        [_, rest @ ..] => DynamicType::Array {
            element: Box::new(element.clone()),
            dimensions: rest.to_vec(),
        },
    }
}

fn default_array(element: &DynamicType, dimensions: &[usize]) -> DynamicValue {
    match dimensions.split_first() {
        None => DynamicValue::default_of(element),
        Some((n, rest)) => {
            DynamicValue::Sequence((0..*n).map(|_| default_array(element, rest)).collect())
        }
    }
}

pub(crate) fn discriminator_json(ty: &DynamicType, d: i64) -> Value {
    match ty {
        DynamicType::Bool => Value::Bool(d != 0),
        DynamicType::Char => Value::String(
            char::from_u32(u32::try_from(d).unwrap_or(0))
                .unwrap_or('\0')
                .to_string(),
        ),
        DynamicType::Enum(_) => {
            DynamicValue::Enum(i32::try_from(d).unwrap_or(i32::MAX)).to_json(ty)
        }
        _ => Value::from(d),
    }
}

fn float_json(f: f64) -> Value {
    if f.is_nan() {
        Value::String("NaN".into())
    } else if f.is_infinite() {
        Value::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

fn signed_range(ty: &DynamicType) -> (i64, i64) {
    match ty {
        DynamicType::Int8 => (i64::from(i8::MIN), i64::from(i8::MAX)),
        DynamicType::Int16 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        DynamicType::Int32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => (i64::MIN, i64::MAX),
    }
}

fn unsigned_max(ty: &DynamicType) -> u64 {
    match ty {
        DynamicType::UInt8 | DynamicType::Octet => u64::from(u8::MAX),
        DynamicType::UInt16 => u64::from(u16::MAX),
        DynamicType::UInt32 => u64::from(u32::MAX),
        _ => u64::MAX,
    }
}
