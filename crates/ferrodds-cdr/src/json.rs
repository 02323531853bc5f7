//! A JSON view of samples, for debugging and tools (what OpenDDS's
//! `encode_to_string`/`decode_from_string` do).
//!
//! The mapping: structs are objects keyed by member name (base members first); enums are
//! their enumerator's name; bitmasks are their integer value; unions are
//! `{"discriminator": d, "<branch>": value}`; absent optionals are `null`; `char` is a
//! one-character string; sequences and arrays are arrays, except sequences of octets
//! (`sequence<octet>`, `sequence<uint8>`, `Vec<u8>`), which are base64 text (RFC 4648, with
//! padding) as System.Text.Json, protobuf's JSON mapping and rosbridge write bytes: an image
//! or a point cloud stays about its own size instead of growing fourfold into numbers, and
//! reading it back is one decode rather than a value per byte (reading also takes an array
//! of integers, as hand-written JSON may have it); floats that JSON cannot hold are the
//! strings `"NaN"`, `"Infinity"` and `"-Infinity"`.

use crate::error::{Path, PathSegment};
use base64_simd::STANDARD as BASE64;
use serde_json::{Map, Number, Value};
use std::fmt::{self, Write as _};

/// Conversion between a sample and its JSON view.
pub trait JsonView: Sized {
    /// The JSON view of `self`.
    fn to_json(&self) -> Value;
    /// The value a JSON view describes.
    fn from_json(value: &Value) -> Result<Self, JsonError>;

    /// The JSON view of a sequence of this type: an array (octets override it with base64).
    #[doc(hidden)]
    fn sequence_to_json(items: &[Self]) -> Value {
        Value::Array(items.iter().map(Self::to_json).collect())
    }

    /// The sequence of this type a JSON view describes (octets also take base64 text).
    #[doc(hidden)]
    fn sequence_from_json(value: &Value) -> Result<Vec<Self>, JsonError> {
        elements_from_json(value)
    }
}

/// The elements of a JSON array, each read as a `T`.
fn elements_from_json<T: JsonView>(value: &Value) -> Result<Vec<T>, JsonError> {
    let items = value
        .as_array()
        .ok_or_else(|| JsonError::new("an array", found(value)))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| T::from_json(v).map_err(|e| e.at_index(i)))
        .collect()
}

/// The JSON view of a sequence of octets: base64 text.
pub(crate) fn octets_to_json(bytes: &[u8]) -> Value {
    Value::String(BASE64.encode_to_string(bytes))
}

/// The octets a JSON view of a sequence of octets describes: base64 text, or an array of
/// integers from 0 to 255.
pub(crate) fn octets_from_json(value: &Value) -> Result<Vec<u8>, JsonError> {
    match value {
        Value::String(text) => BASE64.decode_to_vec(text).map_err(|e| {
            JsonError::new(
                "base64 text (or an array of integers from 0 to 255)",
                format!("{} ({e})", found(value)),
            )
        }),
        Value::Array(_) => elements_from_json::<u8>(value),
        _ => Err(JsonError::new(
            "base64 text or an array of integers from 0 to 255",
            found(value),
        )),
    }
}

/// Why a JSON view could not be read: what was expected, where, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Where in the sample (empty at the top).
    pub path: Path,
    /// What the type needed there.
    pub expected: String,
    /// What the JSON held there.
    pub found: String,
}

impl JsonError {
    /// A new error at the top level.
    #[cold]
    pub fn new(expected: impl Into<String>, found: impl Into<String>) -> Self {
        Self {
            path: Path::default(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// Adds the member the error happened in (called while unwinding).
    #[cold]
    pub fn in_member(mut self, name: impl Into<crate::error::Name>) -> Self {
        self.path.push_front(PathSegment::Member(name.into()));
        self
    }

    /// Adds the element index the error happened in (called while unwinding).
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.path.push_front(PathSegment::Index(index));
        self
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "expected {}, found {}", self.expected, self.found)
        } else {
            write!(
                f,
                "at {}: expected {}, found {}",
                self.path, self.expected, self.found
            )
        }
    }
}

impl std::error::Error for JsonError {}

/// Describes a JSON value for an error message.
pub fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("string \"{}…\"", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("string {s:?}"),
        Value::Array(a) => format!("an array of {} element(s)", a.len()),
        Value::Object(o) => format!("an object with {} member(s)", o.len()),
    }
}

/// The JSON view of a sample as text.
pub fn to_json_string<T: JsonView>(sample: &T) -> String {
    json_text(&sample.to_json())
}

/// `value` as compact JSON text, the same text `value.to_string()` gives, faster for long
/// strings: serde_json looks up every byte of a string in its escape table (60 µs for the
/// 87 KiB of base64 a 64 KiB payload becomes), where most strings here need no escape at all
/// (base64 never does), which one vectorized pass tells.
pub fn json_text(value: &Value) -> String {
    let mut out = String::new();
    write_text(value, &mut out);
    out
}

pub(crate) fn write_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_text(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (name, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(name, out);
                out.push(':');
                write_text(item, out);
            }
            out.push('}');
        }
        // Numbers, booleans and null: serde_json's own text (writing to a String cannot fail).
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

pub(crate) fn write_str(s: &str, out: &mut String) {
    // A fold rather than `any`: without the early exit the compiler vectorizes it (3 µs
    // for 87 KiB, where `any` takes 49).
    let needs_escape = s.bytes().fold(false, |found, b| {
        found | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if needs_escape {
        let _ = write!(out, "{}", Value::from(s));
    } else {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Reads a sample from JSON text; syntax errors say line and column.
pub fn from_json_str<T: JsonView>(text: &str) -> Result<T, JsonError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        JsonError::new(
            "JSON text",
            format!(
                "a syntax error at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    T::from_json(&value)
}

macro_rules! json_int {
    ($($ty:ty, $name:literal, $via:ident $({ $($more:tt)* })?;)*) => {$(
        impl JsonView for $ty {
            fn to_json(&self) -> Value {
                Value::from(*self)
            }
            fn from_json(value: &Value) -> Result<Self, JsonError> {
                value
                    .$via()
                    .and_then(|v| <$ty>::try_from(v).ok())
                    .ok_or_else(|| JsonError::new(
                        format!("an integer in {}..={} ({})", <$ty>::MIN, <$ty>::MAX, $name),
                        found(value),
                    ))
            }
            $($($more)*)?
        }
    )*};
}

json_int! {
    // A sequence of octets is base64 text (see the module's doc).
    u8, "uint8", as_u64 {
        fn sequence_to_json(items: &[u8]) -> Value {
            octets_to_json(items)
        }
        fn sequence_from_json(value: &Value) -> Result<Vec<u8>, JsonError> {
            octets_from_json(value)
        }
    };
    u16, "uint16", as_u64;
    u32, "uint32", as_u64;
    u64, "uint64", as_u64;
    i8, "int8", as_i64;
    i16, "int16", as_i64;
    i32, "int32", as_i64;
    i64, "int64", as_i64;
}

fn float_to_json(v: f64) -> Value {
    match Number::from_f64(v) {
        Some(n) => Value::Number(n),
        None if v.is_nan() => Value::from("NaN"),
        None if v > 0.0 => Value::from("Infinity"),
        None => Value::from("-Infinity"),
    }
}

fn float_from_json(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

impl JsonView for f64 {
    fn to_json(&self) -> Value {
        float_to_json(*self)
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        float_from_json(value).ok_or_else(|| JsonError::new("a number", found(value)))
    }
}

impl JsonView for f32 {
    fn to_json(&self) -> Value {
        float_to_json(f64::from(*self))
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        float_from_json(value)
            .map(|v| v as f32)
            .ok_or_else(|| JsonError::new("a number", found(value)))
    }
}

impl JsonView for bool {
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        value
            .as_bool()
            .ok_or_else(|| JsonError::new("a boolean", found(value)))
    }
}

impl JsonView for char {
    fn to_json(&self) -> Value {
        Value::String(self.to_string())
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        let mut chars = value.as_str().map(str::chars);
        match chars.as_mut().map(|c| (c.next(), c.next())) {
            Some((Some(c), None)) => Ok(c),
            _ => Err(JsonError::new("a one-character string", found(value))),
        }
    }
}

impl JsonView for String {
    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| JsonError::new("a string", found(value)))
    }
}

impl<T: JsonView> JsonView for Vec<T> {
    fn to_json(&self) -> Value {
        T::sequence_to_json(self)
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        T::sequence_from_json(value)
    }
}

impl<T: JsonView, const N: usize> JsonView for [T; N] {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(T::to_json).collect())
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        let items = match value.as_array() {
            Some(items) if items.len() == N => items,
            _ => {
                return Err(JsonError::new(
                    format!("an array of {N} element(s)"),
                    found(value),
                ))
            }
        };
        let values: Vec<T> = items
            .iter()
            .enumerate()
            .map(|(i, v)| T::from_json(v).map_err(|e| e.at_index(i)))
            .collect::<Result<_, _>>()?;
        // INVARIANT: exactly N items were converted.
        Ok(values
            .try_into()
            .unwrap_or_else(|_| unreachable!("length checked above")))
    }
}

impl<T: JsonView> JsonView for Option<T> {
    fn to_json(&self) -> Value {
        match self {
            Some(v) => v.to_json(),
            None => Value::Null,
        }
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        match value {
            Value::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }
}

/// The object a struct's or union's view must be (used by derived code).
pub fn expect_object<'v>(
    value: &'v Value,
    type_name: &str,
) -> Result<&'v Map<String, Value>, JsonError> {
    value
        .as_object()
        .ok_or_else(|| JsonError::new(format!("an object for {type_name}"), found(value)))
}

/// Reads member `name` of an object; a missing member reads as `null`, so that absent
/// optional members may be left out.
pub fn member<T: JsonView>(
    object: &Map<String, Value>,
    name: &'static str,
) -> Result<T, JsonError> {
    T::from_json(object.get(name).unwrap_or(&Value::Null)).map_err(|e| e.in_member(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_errors_give_the_range() {
        let e = i8::from_json(&Value::from(300)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected an integer in -128..=127 (int8), found number 300"
        );
    }

    #[test]
    fn non_finite_floats_survive() {
        assert!(f64::from_json(&f64::NAN.to_json()).unwrap().is_nan());
        assert_eq!(
            f32::from_json(&f32::NEG_INFINITY.to_json()).unwrap(),
            f32::NEG_INFINITY
        );
    }

    #[test]
    fn nested_errors_name_the_element() {
        let e = Vec::<[u8; 2]>::from_json(&serde_json::json!([[1, 2], [3, "x"]])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "at [1][1]: expected an integer in 0..=255 (uint8), found string \"x\""
        );
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = from_json_str::<Vec<u8>>("[1, 2").unwrap_err();
        assert!(e.found.contains("line 1 column 5"), "{e}");
    }

    #[test]
    fn octet_sequences_are_base64_and_read_from_base64_or_numbers() {
        let bytes = vec![0u8, 1, 255];
        assert_eq!(bytes.to_json(), Value::from("AAH/"));
        assert_eq!(Vec::<u8>::from_json(&Value::from("AAH/")).unwrap(), bytes);
        assert_eq!(
            Vec::<u8>::from_json(&serde_json::json!([0, 1, 255])).unwrap(),
            bytes
        );
        // Arrays of octets and sequences of other integers stay arrays.
        assert_eq!([0u8, 1].to_json(), serde_json::json!([0, 1]));
        assert_eq!(vec![1u16].to_json(), serde_json::json!([1]));
        let e = Vec::<u8>::from_json(&Value::from("AA!/")).unwrap_err();
        assert!(e.to_string().starts_with("expected base64 text"), "{e}");
        let e = Vec::<u8>::from_json(&serde_json::json!([1, 256])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "at [1]: expected an integer in 0..=255 (uint8), found number 256"
        );
    }

    #[test]
    fn json_text_is_serde_json_text() {
        let value = serde_json::json!({
            "a": [1, -2, 3.5, true, null, "plain", "esc\"aped\\\n\u{1}", "ünï"],
            "q\"uoted": {"empty": [], "nested": {}},
        });
        assert_eq!(json_text(&value), value.to_string());
    }
}
