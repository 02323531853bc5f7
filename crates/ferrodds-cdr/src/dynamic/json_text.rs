//! The JSON view of runtime-typed values as text, written and read without a JSON document
//! in between: the path of the bindings' `write_json` and `take_json`.
//!
//! Through a `serde_json::Value` a 64 KiB sequence of octets costs three large allocations
//! each way (the base64 string in the document, the text, the decoded bytes), and the
//! allocator hands such blocks back to the kernel and faults them in again on every sample:
//! most of the 24–31 µs a 64 KiB sample took each way (`json_view` in the serialization
//! benchmark). Here base64 goes straight into the text, and comes straight out of the text
//! being read (a `Reader` that borrows it).
//!
//! The text and the values are exactly those of [`DynamicValue::to_json`] and
//! [`DynamicValue::from_json`]: structs, sequences and octets are walked here (and unions,
//! when writing); every other value goes through its `Value` (small by nature). A text the
//! fast reading does not take — a syntax error, a value of the wrong kind, a member name
//! with escapes — is read again through the document, so that what is accepted and every
//! error message are the document path's.

use std::fmt;

use base64_simd::STANDARD as BASE64;
use serde::de::IgnoredAny;
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
    let mut reader = Reader {
        text,
        pos: 0,
        depth: 0,
    };
    let value = reader.value(ty)?;
    reader.skip_whitespace();
    (reader.pos == text.len()).then_some(value)
}

/// Room reserved beyond a sequence of octets' text for what follows it (the members after
/// it, the closing braces, the NUL the C API adds): reserving the text alone, the `}` after
/// a 64 KiB payload's 87 KB made the string double, copying the text into a block the
/// allocator maps fresh from the kernel.
const AFTER_OCTETS: usize = 128;

fn write_octets(bytes: &[u8], out: &mut String) {
    // Base64 never needs an escape.
    out.reserve(bytes.len().div_ceil(3) * 4 + 2 + AFTER_OCTETS);
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

/// Reads the JSON view's text by its type, borrowing from the text.
///
/// serde_json finds the end of a string eight bytes at a time: 19.5 µs for the base64 of a
/// 64 KiB payload, more than half of a Python `write_json` (35.5 µs); `memchr` finds the
/// closing quote in 1.3 (docs/serialization.md, "JSON view"). Only the structure the type gives — objects, arrays,
/// base64 — is read here, and every byte of the text is checked by this reader or by
/// serde_json: member names (no escape, no control character), punctuation and whitespace
/// here; base64 by its decoder (whose alphabet has neither quotes nor control characters);
/// every other value, and every member the type does not know, by serde_json reading that
/// value's own text. So the reader accepts exactly what the document accepts, or declines.
/// It never recurses deeper than the type: what the text nests by itself is skipped by
/// counting brackets, not by recursion.
struct Reader<'t> {
    text: &'t str,
    pos: usize,
    /// The objects and arrays the reader is in.
    depth: usize,
}

/// How deep the reader follows a text: the document (serde_json) refuses deeper than 128,
/// so what nests deeper than this is left for the document to refuse.
const MAX_DEPTH: usize = 100;

impl<'t> Reader<'t> {
    fn skip_whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Consumes `byte` after whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// Where the string whose content starts at `from` ends (its closing quote), and
    /// whether it holds an escape.
    fn string_end(&self, from: usize) -> Option<(usize, bool)> {
        let bytes = self.text.as_bytes();
        let mut at = from;
        let mut escaped = false;
        loop {
            at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
            if bytes[at] == b'"' {
                return Some((at, escaped));
            }
            escaped = true;
            at += 2; // the backslash and the character it escapes
        }
    }

    /// A string's content without escapes, consumed; `None` for any other value.
    fn plain_string(&mut self) -> Option<&'t str> {
        self.eat(b'"')?;
        let (end, escaped) = self.string_end(self.pos)?;
        let content = &self.text[self.pos..end];
        self.pos = end + 1;
        (!escaped).then_some(content)
    }

    /// The text of the next value, consumed, found by counting brackets outside strings:
    /// whether it is JSON is for serde_json to say.
    fn skip_value(&mut self) -> Option<&'t str> {
        self.skip_whitespace();
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(&byte) = bytes.get(self.pos) {
            match byte {
                b'"' => self.pos = self.string_end(self.pos + 1)?.0,
                b'{' | b'[' if self.depth + depth == MAX_DEPTH => return None,
                b'{' | b'[' => depth += 1,
                b'}' | b']' | b',' if depth == 0 => break,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
            self.pos += 1;
            if depth == 0 && matches!(byte, b'"' | b'}' | b']') {
                break;
            }
        }
        Some(self.text[start..self.pos].trim_end_matches([' ', '\t', '\n', '\r']))
    }

    /// The next value as a document, read by serde_json.
    fn json_value(&mut self) -> Option<Value> {
        serde_json::from_str(self.skip_value()?).ok()
    }

    fn value(&mut self, ty: &DynamicType) -> Option<DynamicValue> {
        match ty {
            DynamicType::Struct(s) => self.nested(|r| r.structure(s)),
            DynamicType::Sequence { element, .. } if element.is_octet_like() => {
                if self.peek()? == b'"' {
                    BASE64
                        .decode_to_vec(self.plain_string()?)
                        .ok()
                        .map(|b| DynamicValue::Bytes(b.into()))
                } else {
                    octets_from_json(&self.json_value()?)
                        .ok()
                        .map(|b| DynamicValue::Bytes(b.into()))
                }
            }
            DynamicType::Sequence { element, .. } => self.nested(|r| r.items(element)),
            ty => DynamicValue::from_json(ty, &self.json_value()?).ok(),
        }
    }

    /// Reads an object or array, one level deeper.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth == MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn items(&mut self, element: &DynamicType) -> Option<DynamicValue> {
        self.eat(b'[')?;
        // Capacity from what was read, never from what the text claims.
        let mut items = Vec::new();
        if self.peek()? != b']' {
            loop {
                items.push(self.value(element)?);
                match self.peek()? {
                    b',' => self.pos += 1,
                    b']' => break,
                    _ => return None,
                }
            }
        }
        self.pos += 1;
        Some(DynamicValue::Sequence(items))
    }

    fn structure(&mut self, s: &StructType) -> Option<DynamicValue> {
        self.eat(b'{')?;
        let members = s.all_members();
        // `None`: not named (yet). A member named twice keeps its last value, as a document
        // does.
        let mut values: Vec<Option<Option<DynamicValue>>> = vec![None; members.len()];
        if self.peek()? == b'}' {
            self.pos += 1;
        } else {
            loop {
                // A name with an escape or a control character is read through the document.
                let name = self.plain_string()?;
                if name.bytes().any(|b| b < 0x20) {
                    return None;
                }
                self.eat(b':')?;
                match members.iter().position(|m| m.name == name) {
                    Some(i) if members[i].optional && self.peek()? == b'n' => {
                        (self.skip_value()? == "null").then_some(())?;
                        values[i] = Some(None);
                    }
                    Some(i) => values[i] = Some(Some(self.value(&members[i].ty)?)),
                    None => {
                        serde_json::from_str::<IgnoredAny>(self.skip_value()?).ok()?;
                    }
                }
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => break,
                    _ => return None,
                }
            }
            self.pos += 1;
        }
        members
            .iter()
            .zip(values)
            .map(|(m, v)| match v {
                Some(v) => Some(v),
                None if m.optional => Some(None),
                None => None,
            })
            .collect::<Option<_>>()
            .map(DynamicValue::Struct)
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
                Some(DynamicValue::Bytes(vec![0, 1, 2].into())),
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
    fn nesting_the_type_does_not_know_is_counted_not_recursed() {
        // Deeper than serde_json's recursion limit: the reader declines without a stack
        // overflow, and the document's error is the answer.
        let deep = format!(
            r#"{{"id":1,"x":{}{},"payload":"","points":[]}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(read_direct(&ty(), &deep).is_none());
        assert!(both(&deep).is_err());
        let shallow = r#"{"id":1,"x":[[{"a":"]}"}]],"payload":"","points":[]}"#;
        assert!(read_direct(&ty(), shallow).is_some());
    }

    proptest::proptest! {
        /// Texts near valid ones, bytes replaced, inserted and removed: what the reader
        /// takes, the document takes as the same value.
        #[test]
        fn what_the_reader_takes_the_document_takes(
            base in 0usize..4,
            edits in proptest::collection::vec((0usize..200, 0usize..3, 0usize..24), 0..4),
        ) {
            let mut text: Vec<u8> = [
                r#"{"id":3,"note":null,"payload":"AAEC","points":[1.5,2]}"#,
                r#"{"id":-3,"note":"n","payload":[1,2],"points":[],"more":{"a":[1,"]"]}}"#,
                r#" { "payload" : "QUJD" , "id" : 3 , "points" : [ 1e3 ] } "#,
                r#"{"id":3,"payload":"","points":[],"note":"\"x\""}"#,
            ][base]
            .bytes()
            .collect();
            const BYTES: &[u8] = b"{}[],:\"\\ \n\x01nul0123e.-+/=AQ";
            for (at, op, b) in edits {
                let at = at % (text.len() + 1);
                let b = BYTES[b % BYTES.len()];
                match op {
                    0 if at < text.len() => text[at] = b,
                    1 => text.insert(at, b),
                    _ if at < text.len() => {
                        text.remove(at);
                    }
                    _ => {}
                }
            }
            let text = String::from_utf8(text).unwrap();
            if let Some(fast) = read_direct(&ty(), &text) {
                let json: Value = serde_json::from_str(&text).unwrap();
                let slow = DynamicValue::from_json(&ty(), &json).unwrap();
                proptest::prop_assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{}", text);
            }
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
