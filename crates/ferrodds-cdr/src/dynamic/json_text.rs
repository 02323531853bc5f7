//! The JSON view of runtime-typed values as text, written and read without a JSON document
//! in between: the path of the bindings' `write_json` and `take_json`.
//!
//! Through a `serde_json::Value` a 64 KiB sequence of octets costs three large allocations
//! each way (the base64 string in the document, the text, the decoded bytes), and the
//! allocator hands such blocks back to the kernel and faults them in again on every sample:
//! most of the 24–31 µs a 64 KiB sample took each way (`json_view` in the serialization
//! benchmark). Here base64 goes straight into the text, and comes straight out of the text
//! being parsed (serde_json lends strings without escapes).
//!
//! The text and the values are exactly those of [`DynamicValue::to_json`] and
//! [`DynamicValue::from_json`]: structs, unions, sequences and octets are walked here; every
//! other value goes through its `Value` (small by nature). A text the fast reading does not
//! take — a syntax error, a value of the wrong kind, a member name with escapes — is read
//! again through the document, so that what is accepted and every error message are the
//! document path's.

use std::fmt;

use base64_simd::STANDARD as BASE64;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize as _;
use serde_json::Value;

use super::value::{discriminator_json, inner_array};
use super::{DynamicType, DynamicValue, StructType};
use crate::json::{octets_from_json, write_str, write_text, JsonError};

/// Why JSON text is not a value of a type.
#[derive(Debug)]
pub enum JsonTextError {
    /// The text is not JSON (serde_json's message says line and column).
    Syntax(serde_json::Error),
    /// The text is JSON but not a value of the type.
    Value(JsonError),
}

impl fmt::Display for JsonTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonTextError::Syntax(e) => write!(f, "not JSON: {e}"),
            JsonTextError::Value(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for JsonTextError {}

impl DynamicValue {
    /// The JSON view of this value of `ty` as compact text: the text of
    /// `json_text(&self.to_json(ty))`, written without the document.
    pub fn to_json_text(&self, ty: &DynamicType) -> String {
        let mut out = String::new();
        self.write_json_text(ty, &mut out);
        out
    }

    /// Appends the JSON view of this value of `ty` to `out` (see [`Self::to_json_text`]).
    pub fn write_json_text(&self, ty: &DynamicType, out: &mut String) {
        match (ty, self) {
            (_, DynamicValue::Bytes(bytes)) => write_octets(bytes, out),
            (_, DynamicValue::String(s)) => write_str(s, out),
            (DynamicType::Sequence { element, .. }, DynamicValue::Sequence(items)) => {
                match element.is_octet_like().then(|| self.as_octets()).flatten() {
                    Some(bytes) => write_octets(&bytes, out),
                    None => write_items(items, element, out),
                }
            }
            (
                DynamicType::Array {
                    element,
                    dimensions,
                },
                DynamicValue::Sequence(items),
            ) => write_items(items, &inner_array(element, dimensions), out),
            (DynamicType::Struct(s), DynamicValue::Struct(values)) => {
                out.push('{');
                for (i, (m, v)) in s.all_members().iter().zip(values).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(&m.name, out);
                    out.push(':');
                    match v {
                        Some(v) => v.write_json_text(&m.ty, out),
                        None => out.push_str("null"),
                    }
                }
                out.push('}');
            }
            (
                DynamicType::Union(u),
                DynamicValue::Union {
                    discriminator,
                    value,
                },
            ) => {
                out.push_str("{\"discriminator\":");
                write_text(&discriminator_json(&u.discriminator, *discriminator), out);
                if let (Some(case), Some(v)) = (u.branch(*discriminator), value) {
                    out.push(',');
                    write_str(&case.name, out);
                    out.push(':');
                    v.write_json_text(&case.ty, out);
                }
                out.push('}');
            }
            // Scalars, enums, bitmasks, and values that do not fit their type: the document's
            // text of the same value.
            _ => write_text(&self.to_json(ty), out),
        }
    }

    /// The value of `ty` that JSON text describes: the value of
    /// `from_json(ty, &serde_json::from_str(text)?)`, read without the document.
    pub fn from_json_text(ty: &DynamicType, text: &str) -> Result<DynamicValue, JsonTextError> {
        if let Some(value) = read_direct(ty, text) {
            return Ok(value);
        }
        // Not taken by the fast reading: the document says why (or takes it after all).
        let json: Value = serde_json::from_str(text).map_err(JsonTextError::Syntax)?;
        DynamicValue::from_json(ty, &json).map_err(JsonTextError::Value)
    }
}

/// The value the text describes, read without a document; `None` when the text is not one
/// the direct reading takes.
fn read_direct(ty: &DynamicType, text: &str) -> Option<DynamicValue> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(ty).deserialize(&mut de).ok()?;
    de.end().ok().map(|()| value)
}

fn write_octets(bytes: &[u8], out: &mut String) {
    // Base64 never needs an escape.
    out.reserve(bytes.len().div_ceil(3) * 4 + 2);
    out.push('"');
    BASE64.encode_append(bytes, out);
    out.push('"');
}

fn write_items(items: &[DynamicValue], ty: &DynamicType, out: &mut String) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        item.write_json_text(ty, out);
    }
    out.push(']');
}

/// Reads a value of its type. Errors only make the caller read the text again through the
/// document, so they carry no detail.
struct Seed<'t>(&'t DynamicType);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = DynamicValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<DynamicValue, D::Error> {
        match self.0 {
            DynamicType::Struct(s) => d.deserialize_map(StructVisitor(s)),
            DynamicType::Sequence { element, .. } if element.is_octet_like() => {
                d.deserialize_any(OctetsVisitor)
            }
            DynamicType::Sequence { element, .. } => d.deserialize_seq(ItemsVisitor(element)),
            ty => {
                let json = Value::deserialize(d)?;
                DynamicValue::from_json(ty, &json).map_err(de::Error::custom)
            }
        }
    }
}

/// An optional member: `null` is its absence.
struct OptionalSeed<'t>(&'t DynamicType);

impl<'de> DeserializeSeed<'de> for OptionalSeed<'_> {
    type Value = Option<DynamicValue>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptionalSeed<'_> {
    type Value = Option<DynamicValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Seed(self.0).deserialize(d).map(Some)
    }
}

struct StructVisitor<'t>(&'t StructType);

impl<'de> Visitor<'de> for StructVisitor<'_> {
    type Value = DynamicValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object ({})", self.0.name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DynamicValue, A::Error> {
        let members = self.0.all_members();
        // `None`: not named (yet). A member named twice keeps its last value, as a document
        // does.
        let mut values: Vec<Option<Option<DynamicValue>>> = vec![None; members.len()];
        // Borrowed names only: a name with escapes fails here and is read through the
        // document.
        while let Some(name) = map.next_key::<&'de str>()? {
            match members.iter().position(|m| m.name == name) {
                Some(i) if members[i].optional => {
                    values[i] = Some(map.next_value_seed(OptionalSeed(&members[i].ty))?);
                }
                Some(i) => values[i] = Some(Some(map.next_value_seed(Seed(&members[i].ty))?)),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        members
            .iter()
            .zip(values)
            .map(|(m, v)| match v {
                Some(v) => Ok(v),
                None if m.optional => Ok(None),
                None => Err(de::Error::missing_field("a member")),
            })
            .collect::<Result<_, _>>()
            .map(DynamicValue::Struct)
    }
}

struct ItemsVisitor<'t>(&'t DynamicType);

impl<'de> Visitor<'de> for ItemsVisitor<'_> {
    type Value = DynamicValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DynamicValue, A::Error> {
        // Capacity from what was read, never from what the text claims.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed(self.0))? {
            items.push(item);
        }
        Ok(DynamicValue::Sequence(items))
    }
}

/// A sequence of octets: base64 text decoded from the text itself, or an array of integers.
struct OctetsVisitor;

impl<'de> Visitor<'de> for OctetsVisitor {
    type Value = DynamicValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("base64 text or an array of integers from 0 to 255")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<DynamicValue, E> {
        BASE64
            .decode_to_vec(text)
            .map(DynamicValue::Bytes)
            .map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DynamicValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        octets_from_json(&Value::Array(items))
            .map(DynamicValue::Bytes)
            .map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamic::{Member, StructType};
    use crate::json::json_text;
    use crate::Extensibility;
    use std::sync::Arc;

    fn octets() -> DynamicType {
        DynamicType::Sequence {
            element: Box::new(DynamicType::UInt8),
            bound: None,
        }
    }

    fn ty() -> DynamicType {
        DynamicType::Struct(Arc::new(StructType {
            name: "t::S".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![
                Member::new("id", 0, DynamicType::Int32).key(),
                Member::new("note", 1, DynamicType::String { bound: None }).optional(),
                Member::new("payload", 2, octets()),
                Member::new(
                    "points",
                    3,
                    DynamicType::Sequence {
                        element: Box::new(DynamicType::Float64),
                        bound: None,
                    },
                ),
            ],
        }))
    }

    /// The fast reading and the document agree: same value, or an error in both.
    fn both(text: &str) -> Result<DynamicValue, String> {
        let ty = ty();
        let slow = serde_json::from_str::<Value>(text)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|json| DynamicValue::from_json(&ty, &json).map_err(|e| e.to_string()));
        let fast = DynamicValue::from_json_text(&ty, text).map_err(|e| e.to_string());
        assert_eq!(fast, slow, "{text}");
        fast
    }

    #[test]
    fn reads_what_the_document_reads() {
        let v = both(r#"{"id":3,"note":null,"payload":"AAEC","points":[1.5,2]}"#).unwrap();
        assert_eq!(
            v,
            DynamicValue::Struct(vec![
                Some(DynamicValue::Int(3)),
                None,
                Some(DynamicValue::Bytes(vec![0, 1, 2])),
                Some(DynamicValue::Sequence(vec![
                    DynamicValue::Float(1.5),
                    DynamicValue::Float(2.0)
                ])),
            ])
        );
        // Any order, unknown members, absent optionals, octets as integers, a member named
        // twice (the last wins, even when the first would not be read), escaped names.
        both(r#"{"points":[],"zzz":{"a":[1,{}]},"payload":[1,2,255],"id":-1}"#).unwrap();
        both(r#"{"id":"x","id":4,"payload":"","points":[]}"#).unwrap();
        both(r#"{"\u0069d":4,"payload":"","points":[]}"#).unwrap();
        both(r#"{"id":4,"note":"a\"b","payload":"","points":[]}"#).unwrap();
    }

    #[test]
    fn common_texts_are_read_without_the_document() {
        for text in [
            r#"{"id":3,"note":null,"payload":"AAEC","points":[1.5,2]}"#,
            r#"{"id":3,"note":"x","payload":[1,2],"points":[],"other":{"a":[]}}"#,
            r#" { "payload" : "" , "id" : 3 , "points" : [ ] } "#,
        ] {
            assert!(read_direct(&ty(), text).is_some(), "{text}");
        }
    }

    #[test]
    fn errors_are_the_documents() {
        for text in [
            "",
            "{",
            "[1]",
            r#"{"id":3}"#,
            r#"{"id":3,"payload":"***","points":[]}"#,
            r#"{"id":3,"payload":[256],"points":[]}"#,
            r#"{"id":3000000000,"payload":"","points":[]}"#,
            r#"{"id":3,"payload":"","points":[true]}"#,
            r#"{"id":3,"payload":"","points":[]} x"#,
            r#"{"id":null,"payload":"","points":[]}"#,
        ] {
            assert!(both(text).is_err(), "{text}");
        }
        assert_eq!(
            DynamicValue::from_json_text(&ty(), "{")
                .unwrap_err()
                .to_string(),
            "not JSON: EOF while parsing an object at line 1 column 1"
        );
    }

    #[test]
    fn writes_the_documents_text() {
        let ty = ty();
        for v in [
            DynamicValue::Struct(vec![
                Some(DynamicValue::Int(-7)),
                Some(DynamicValue::String("quote \" and \n".into())),
                Some(DynamicValue::Bytes((0..=255).collect())),
                Some(DynamicValue::Sequence(vec![
                    DynamicValue::Float(f64::NAN),
                    DynamicValue::Float(1e300),
                    DynamicValue::Float(-0.0),
                ])),
            ]),
            DynamicValue::default_of(&ty),
        ] {
            assert_eq!(v.to_json_text(&ty), json_text(&v.to_json(&ty)));
        }
    }
}
