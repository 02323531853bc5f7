//! `Cdr` for the Rust types that stand for IDL's built-in types.
//!
//! | IDL | Rust |
//! |---|---|
//! | boolean | `bool` |
//! | uint8 / int8 | `u8` / `i8` |
//! | octet | [`Octet`] (or `u8`: the same bytes; only a TypeObject tells them apart) |
//! | char | `char` (ISO-8859-1 only) |
//! | wchar / wstring | [`crate::WChar`] / [`crate::WString`] |
//! | int16–int64, uint16–uint64 | `i16`–`i64`, `u16`–`u64` |
//! | float, double | `f32`, `f64` |
//! | string | `String` (bounded: `#[cdr(bound = N)]`) |
//! | sequence<T> | `Vec<T>` (bounded: `#[cdr(bound = N)]`) |
//! | T a[N][M] | `[[T; M]; N]` |

use crate::dynamic::DynamicType;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::{align_up, Cdr, Decoder, Encoder, TypeKind};

/// Refills `items` with `count` one-byte elements, in one copy.
#[inline]
fn refill_bytes<T: bytemuck::Pod>(
    items: &mut Vec<T>,
    d: &mut Decoder<'_>,
    count: usize,
    what: &'static str,
) -> Result<(), DecodeError> {
    let bytes = d.bytes(count, what)?;
    items.clear();
    items.extend_from_slice(bytemuck::cast_slice(bytes));
    Ok(())
}

macro_rules! numeric {
    ($($ty:ty, $name:literal, $write:ident, $read:ident, $dynamic:ident;)*) => {$(
        impl Cdr for $ty {
            const TYPE_NAME: &'static str = $name;
            const KIND: TypeKind = TypeKind::Primitive { size: std::mem::size_of::<$ty>() };
            const MIN_SIZE: usize = std::mem::size_of::<$ty>();

            fn dynamic_type() -> DynamicType {
                DynamicType::$dynamic
            }

            #[inline]
            fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
                e.$write(*self);
                Ok(())
            }

            #[inline]
            fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
                d.$read()
            }

            fn max_end(offset: usize, max_align: usize) -> Option<usize> {
                Some(align_up(offset, std::mem::size_of::<$ty>(), max_align) + std::mem::size_of::<$ty>())
            }

            fn missing() -> Option<Self> {
                Some(0 as $ty)
            }

            #[inline]
            fn encode_elements(items: &[Self], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
                if items.is_empty() {
                    return Ok(());
                }
                e.align(std::mem::size_of::<$ty>());
                if e.is_native_order() {
                    e.write_bytes(bytemuck::cast_slice(items));
                } else {
                    e.reserve(std::mem::size_of_val(items));
                    for item in items {
                        e.write_bytes(&if e.endianness() == crate::Endianness::Big {
                            item.to_be_bytes()
                        } else {
                            item.to_le_bytes()
                        });
                    }
                }
                Ok(())
            }

            #[inline]
            fn decode_elements(d: &mut Decoder<'_>, count: usize) -> Result<Vec<Self>, DecodeError> {
                const N: usize = std::mem::size_of::<$ty>();
                if count == 0 {
                    return Ok(Vec::new());
                }
                d.align(N)?;
                let bytes = d.bytes(count * N, $name)?;
                if d.is_native_order() {
                    Ok(bytemuck::pod_collect_to_vec(bytes))
                } else {
                    let big = d.endianness() == crate::Endianness::Big;
                    Ok(bytes
                        .chunks_exact(N)
                        .map(|c| {
                            let mut a = [0u8; N];
                            a.copy_from_slice(c);
                            if big { <$ty>::from_be_bytes(a) } else { <$ty>::from_le_bytes(a) }
                        })
                        .collect())
                }
            }

            #[inline]
            fn decode_elements_into(items: &mut Vec<Self>, d: &mut Decoder<'_>, count: usize) -> Result<(), DecodeError> {
                const N: usize = std::mem::size_of::<$ty>();
                items.clear();
                if count == 0 {
                    return Ok(());
                }
                d.align(N)?;
                let bytes = d.bytes(count * N, $name)?;
                if d.is_native_order() {
                    items.resize(count, 0 as $ty);
                    bytemuck::cast_slice_mut::<$ty, u8>(items).copy_from_slice(bytes);
                } else {
                    let big = d.endianness() == crate::Endianness::Big;
                    items.extend(bytes.chunks_exact(N).map(|c| {
                        let mut a = [0u8; N];
                        a.copy_from_slice(c);
                        if big { <$ty>::from_be_bytes(a) } else { <$ty>::from_le_bytes(a) }
                    }));
                }
                Ok(())
            }
        }
    )*};
}

numeric! {
    i16, "int16", write_i16, read_i16, Int16;
    u16, "uint16", write_u16, read_u16, UInt16;
    i32, "int32", write_i32, read_i32, Int32;
    u32, "uint32", write_u32, read_u32, UInt32;
    i64, "int64", write_i64, read_i64, Int64;
    u64, "uint64", write_u64, read_u64, UInt64;
    f32, "float32", write_f32, read_f32, Float32;
    f64, "float64", write_f64, read_f64, Float64;
}

impl Cdr for u8 {
    const TYPE_NAME: &'static str = "uint8";
    const KIND: TypeKind = TypeKind::Primitive { size: 1 };
    const MIN_SIZE: usize = 1;

    fn dynamic_type() -> DynamicType {
        DynamicType::UInt8
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_u8(*self);
        Ok(())
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        d.read_u8()
    }
    fn max_end(offset: usize, _: usize) -> Option<usize> {
        Some(offset + 1)
    }
    fn missing() -> Option<Self> {
        Some(0)
    }
    #[inline]
    fn encode_elements(items: &[Self], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_bytes(items);
        Ok(())
    }
    #[inline]
    fn decode_elements(d: &mut Decoder<'_>, count: usize) -> Result<Vec<Self>, DecodeError> {
        Ok(d.bytes(count, "octets")?.to_vec())
    }
    #[inline]
    fn decode_elements_into(
        items: &mut Vec<Self>,
        d: &mut Decoder<'_>,
        count: usize,
    ) -> Result<(), DecodeError> {
        refill_bytes(items, d, count, "octets")
    }
}

/// IDL `octet`: encoded as `uint8` is, but a type of its own for XTypes (a TypeObject
/// says `octet` where a peer's IDL does, so that its type identifier is the peer's).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    bytemuck::Pod,
    bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct Octet(pub u8);

impl Cdr for Octet {
    const TYPE_NAME: &'static str = "octet";
    const KIND: TypeKind = TypeKind::Primitive { size: 1 };
    const MIN_SIZE: usize = 1;

    fn dynamic_type() -> DynamicType {
        DynamicType::Octet
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_u8(self.0);
        Ok(())
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        d.read_u8().map(Octet)
    }
    fn max_end(offset: usize, _: usize) -> Option<usize> {
        Some(offset + 1)
    }
    fn missing() -> Option<Self> {
        Some(Octet(0))
    }
    // Octet sequences are payloads (ddsperf's baggage, images): copied as bytes, one
    // memcpy each way, not element by element (a zeroed buffer filled by a loop cost a
    // memset and a slower copy: 43% of an 11 MB publisher's time).
    #[inline]
    fn encode_elements(items: &[Self], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_bytes(bytemuck::cast_slice(items));
        Ok(())
    }
    #[inline]
    fn decode_elements(d: &mut Decoder<'_>, count: usize) -> Result<Vec<Self>, DecodeError> {
        Ok(bytemuck::cast_slice(d.bytes(count, "octets")?).to_vec())
    }
    #[inline]
    fn decode_elements_into(
        items: &mut Vec<Self>,
        d: &mut Decoder<'_>,
        count: usize,
    ) -> Result<(), DecodeError> {
        refill_bytes(items, d, count, "octets")
    }
}

impl crate::JsonView for Octet {
    fn to_json(&self) -> serde_json::Value {
        self.0.to_json()
    }
    fn from_json(value: &serde_json::Value) -> Result<Self, crate::JsonError> {
        u8::from_json(value).map(Octet)
    }
    fn sequence_to_json(items: &[Octet]) -> serde_json::Value {
        let bytes: Vec<u8> = items.iter().map(|o| o.0).collect();
        crate::json::octets_to_json(&bytes)
    }
    fn sequence_from_json(value: &serde_json::Value) -> Result<Vec<Octet>, crate::JsonError> {
        crate::json::octets_from_json(value).map(|bytes| bytes.into_iter().map(Octet).collect())
    }
}

impl Cdr for i8 {
    const TYPE_NAME: &'static str = "int8";
    const KIND: TypeKind = TypeKind::Primitive { size: 1 };
    const MIN_SIZE: usize = 1;

    fn dynamic_type() -> DynamicType {
        DynamicType::Int8
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_u8(*self as u8);
        Ok(())
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(d.read_u8()? as i8)
    }
    fn max_end(offset: usize, _: usize) -> Option<usize> {
        Some(offset + 1)
    }
    fn missing() -> Option<Self> {
        Some(0)
    }
    #[inline]
    fn encode_elements(items: &[Self], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_bytes(bytemuck::cast_slice(items));
        Ok(())
    }
    #[inline]
    fn decode_elements(d: &mut Decoder<'_>, count: usize) -> Result<Vec<Self>, DecodeError> {
        Ok(bytemuck::cast_slice(d.bytes(count, "int8s")?).to_vec())
    }
    #[inline]
    fn decode_elements_into(
        items: &mut Vec<Self>,
        d: &mut Decoder<'_>,
        count: usize,
    ) -> Result<(), DecodeError> {
        refill_bytes(items, d, count, "int8s")
    }
}

impl Cdr for bool {
    const TYPE_NAME: &'static str = "boolean";
    const KIND: TypeKind = TypeKind::Primitive { size: 1 };
    const MIN_SIZE: usize = 1;

    fn dynamic_type() -> DynamicType {
        DynamicType::Bool
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_u8(u8::from(*self));
        Ok(())
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        d.read_bool()
    }
    fn max_end(offset: usize, _: usize) -> Option<usize> {
        Some(offset + 1)
    }
    fn missing() -> Option<Self> {
        Some(false)
    }
}

/// IDL `char` is one octet; Rust's `char` holds it as the ISO-8859-1 code point.
impl Cdr for char {
    const TYPE_NAME: &'static str = "char8";
    const KIND: TypeKind = TypeKind::Primitive { size: 1 };
    const MIN_SIZE: usize = 1;

    fn dynamic_type() -> DynamicType {
        DynamicType::Char
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        let code = u32::from(*self);
        if code > 0xff {
            return Err(EncodeError::new(EncodeErrorKind::CharOutOfRange(*self)));
        }
        e.write_u8(code as u8);
        Ok(())
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(char::from(d.read_u8()?))
    }
    fn max_end(offset: usize, _: usize) -> Option<usize> {
        Some(offset + 1)
    }
    fn missing() -> Option<Self> {
        Some('\0')
    }
}

impl Cdr for String {
    const TYPE_NAME: &'static str = "string";
    const KIND: TypeKind = TypeKind::String;
    const MIN_SIZE: usize = 5;

    fn dynamic_type() -> DynamicType {
        DynamicType::String { bound: None }
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        e.write_str(self)
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        d.read_str().map(str::to_owned)
    }
    #[inline]
    fn decode_into(&mut self, d: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let s = d.read_str()?;
        self.clear();
        self.push_str(s);
        Ok(())
    }
    fn max_end(_: usize, _: usize) -> Option<usize> {
        None
    }
    fn missing() -> Option<Self> {
        Some(String::new())
    }
}

impl<T: Cdr> Cdr for Vec<T> {
    const TYPE_NAME: &'static str = "sequence";
    const KIND: TypeKind = TypeKind::Sequence {
        primitive_element_size: T::KIND.primitive_size(),
    };
    const MIN_SIZE: usize = 4;

    fn dynamic_type() -> DynamicType {
        DynamicType::Sequence {
            element: Box::new(T::dynamic_type()),
            bound: None,
        }
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        crate::member::encode_sequence(self, e)
    }
    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        crate::member::decode_sequence(d, None)
    }
    #[inline]
    fn decode_into(&mut self, d: &mut Decoder<'_>) -> Result<(), DecodeError> {
        crate::member::decode_sequence_into(d, None, self)
    }
    fn max_end(_: usize, _: usize) -> Option<usize> {
        None
    }
    fn missing() -> Option<Self> {
        Some(Vec::new())
    }
}

impl<T: Cdr, const N: usize> Cdr for [T; N] {
    const TYPE_NAME: &'static str = "array";
    const KIND: TypeKind = TypeKind::Array {
        primitive_elements: T::FLAT_ELEMENT_IS_PRIMITIVE,
    };
    const MIN_SIZE: usize = N * T::MIN_SIZE;
    const IS_ARRAY: bool = true;
    const FLAT_ELEMENT_IS_PRIMITIVE: bool = T::FLAT_ELEMENT_IS_PRIMITIVE;

    /// Nested arrays are one array of several dimensions, outermost first.
    fn dynamic_type() -> DynamicType {
        match T::dynamic_type() {
            DynamicType::Array {
                element,
                dimensions,
            } if T::IS_ARRAY => {
                let mut all = vec![N];
                all.extend(dimensions);
                DynamicType::Array {
                    element,
                    dimensions: all,
                }
            }
            element => DynamicType::Array {
                element: Box::new(element),
                dimensions: vec![N],
            },
        }
    }

    #[inline]
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        if e.is_xcdr2() && !Self::FLAT_ELEMENT_IS_PRIMITIVE {
            let at = e.begin_length();
            T::encode_elements(self, e)?;
            e.end_length(at)
        } else {
            T::encode_elements(self, e)
        }
    }

    #[inline]
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        if d.is_xcdr2() && !Self::FLAT_ELEMENT_IS_PRIMITIVE {
            let outer = d.begin_delimited("array DHEADER")?;
            let value = Self::decode_flat(d)?;
            d.restore(outer);
            Ok(value)
        } else {
            Self::decode_flat(d)
        }
    }

    fn encode_flat(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        T::encode_elements(self, e)
    }

    fn decode_flat(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        if N.saturating_mul(T::MIN_SIZE) > d.remaining() {
            return Err(d.error(DecodeErrorKind::UnexpectedEnd {
                what: "array",
                needed: N * T::MIN_SIZE,
                remaining: d.remaining(),
            }));
        }
        let items = T::decode_elements(d, N)?;
        // INVARIANT: decode_elements returns exactly N items or an error.
        Ok(items
            .try_into()
            .unwrap_or_else(|_| unreachable!("decode_elements returned a wrong count")))
    }

    fn encode_key(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        self.encode(e)
    }

    fn max_end(offset: usize, max_align: usize) -> Option<usize> {
        let mut end = if !T::FLAT_ELEMENT_IS_PRIMITIVE && max_align == 4 {
            align_up(offset, 4, 4) + 4
        } else {
            offset
        };
        for _ in 0..N {
            end = T::max_end(end, max_align)?;
        }
        Some(end)
    }

    fn missing() -> Option<Self> {
        let items: Option<Vec<T>> = (0..N).map(|_| T::missing()).collect();
        items?.try_into().ok()
    }

    fn encode_elements(items: &[Self], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        for (i, item) in items.iter().enumerate() {
            item.encode_flat(e).map_err(|err| err.at_index(i))?;
        }
        Ok(())
    }
}
