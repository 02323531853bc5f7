//! IDL `wchar` and `wstring`: UTF-16 code units, 2 bytes each.
//!
//! XCDR2 (XTypes 7.4.3.5.2) writes a wstring as its length in bytes followed by the code
//! units, with no terminator. XCDR1 gives no portable layout for wide strings; we write the
//! length in code units and the units, also with no terminator, as XCDR2 does, and say so
//! in `docs/serialization.md`.

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::json::{found, JsonError, JsonView};
use crate::{Cdr, Decoder, Encoder, TypeKind};
use serde_json::Value;

/// An IDL `wchar`: a character of the basic multilingual plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct WChar(pub char);

/// An IDL `wstring`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct WString(pub String);

impl From<&str> for WString {
    fn from(s: &str) -> Self {
        WString(s.to_owned())
    }
}

impl Cdr for WChar {
    const TYPE_NAME: &'static str = "char16";
    const KIND: TypeKind = TypeKind::Primitive { size: 2 };
    const MIN_SIZE: usize = 2;

    fn dynamic_type() -> crate::dynamic::DynamicType {
        crate::dynamic::DynamicType::WChar
    }

    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        let mut units = [0u16; 2];
        match self.0.encode_utf16(&mut units).len() {
            1 => {
                e.write_u16(units[0]);
                Ok(())
            }
            _ => Err(EncodeError::new(EncodeErrorKind::WideCharOutOfRange(
                self.0,
            ))),
        }
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let unit = d.read_u16()?;
        char::from_u32(u32::from(unit))
            .map(WChar)
            .ok_or_else(|| d.error(DecodeErrorKind::InvalidChar(u32::from(unit))))
    }

    fn max_end(offset: usize, max_align: usize) -> Option<usize> {
        Some(crate::align_up(offset, 2, max_align) + 2)
    }

    fn missing() -> Option<Self> {
        Some(WChar('\0'))
    }
}

impl Cdr for WString {
    const TYPE_NAME: &'static str = "wstring";
    const KIND: TypeKind = TypeKind::String;
    const MIN_SIZE: usize = 4;

    fn dynamic_type() -> crate::dynamic::DynamicType {
        crate::dynamic::DynamicType::WString
    }

    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        let units: Vec<u16> = self.0.encode_utf16().collect();
        let len = if e.is_xcdr2() {
            units.len() * 2
        } else {
            units.len()
        };
        e.write_length(len)?;
        u16::encode_elements(&units, e)
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let start = d.position();
        let count = if d.is_xcdr2() {
            let bytes = d.read_count("wstring length", 1)?;
            if bytes % 2 != 0 {
                return Err(DecodeError::new(
                    DecodeErrorKind::OddWideStringLength(bytes as u64),
                    start,
                ));
            }
            bytes / 2
        } else {
            d.read_count("wstring length", 2)?
        };
        let units = u16::decode_elements(d, count)?;
        String::from_utf16(&units)
            .map(WString)
            .map_err(|_| DecodeError::new(DecodeErrorKind::InvalidUtf16, start))
    }

    fn max_end(_: usize, _: usize) -> Option<usize> {
        None
    }

    fn missing() -> Option<Self> {
        Some(WString::default())
    }
}

impl JsonView for WChar {
    fn to_json(&self) -> Value {
        Value::String(self.0.to_string())
    }

    fn from_json(value: &Value) -> Result<Self, JsonError> {
        let c = char::from_json(value)?;
        if c.len_utf16() != 1 {
            return Err(JsonError::new(
                "a character of the basic multilingual plane",
                found(value),
            ));
        }
        Ok(WChar(c))
    }
}

impl JsonView for WString {
    fn to_json(&self) -> Value {
        Value::String(self.0.clone())
    }

    fn from_json(value: &Value) -> Result<Self, JsonError> {
        String::from_json(value).map(WString)
    }
}
