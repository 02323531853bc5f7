//! XCDR1 and XCDR2 serialization for FerroDDS.
//!
//! This crate turns typed samples into the bytes DDS peers put in RTPS DATA payloads and
//! back: plain CDR, PL_CDR (XCDR1), PLAIN_CDR2, DELIMITED_CDR2 and PL_CDR2 (XCDR2), with the
//! 4-byte encapsulation header in front, in either byte order. It also computes key hashes
//! and gives a JSON view of any sample for debugging and tools.
//!
//! Types implement [`Cdr`], normally through `#[derive(Cdr)]` (feature `derive`, on by
//! default); see the derive macro's documentation for the attributes.
//!
//! ```
//! use ferrodds_cdr::{Cdr, XcdrVersion, Endianness};
//!
//! #[derive(Cdr, Debug, PartialEq)]
//! #[cdr(appendable, type_name = "demo::Sensor")]
//! struct Sensor {
//!     #[cdr(key)]
//!     id: i32,
//!     reading: f64,
//! }
//!
//! let s = Sensor { id: 7, reading: 1.5 };
//! let bytes = ferrodds_cdr::serialize(&s, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
//! assert_eq!(&bytes[..4], &[0x00, 0x09, 0x00, 0x00]); // D_CDR2_LE
//! assert_eq!(ferrodds_cdr::deserialize::<Sensor>(&bytes).unwrap(), s);
//! ```
//!
//! What it does not do: type objects and type assignability (XTypes TypeObject), which
//! belong to discovery; and any I/O.

#![forbid(unsafe_code)]

// Lets the derive macro's `::ferrodds_cdr::…` paths resolve inside this crate's own tests.
extern crate self as ferrodds_cdr;

/// The JSON crate the JSON view is built on, re-exported for derived code.
pub use serde_json;

mod builtin;
mod decoder;
pub mod dynamic;
mod encapsulation;
mod encoder;
mod error;
mod json;
mod key;
pub mod member;
mod sample;
mod wide;

pub use builtin::Octet;
pub use decoder::Decoder;
pub use encapsulation::{EncapsulationHeader, RepresentationId};
pub use encoder::Encoder;
pub use error::{
    DecodeError, DecodeErrorDetail, DecodeErrorKind, EncodeError, EncodeErrorDetail,
    EncodeErrorKind, Name, Path, PathSegment,
};
pub use json::{
    expect_object, found, from_json_str, json_text, member as json_member, to_json_string,
    JsonError, JsonView,
};
pub use key::{key_hash, key_hash_variants, KeyHash};
pub use sample::{
    deserialize, deserialize_into, deserialize_key_sample, serialize, serialize_into,
    serialize_key_sample,
};
pub use wide::{WChar, WString};

#[cfg(feature = "derive")]
pub use ferrodds_cdr_derive::Cdr;

/// The two extended CDR encodings of DDS-XTypes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XcdrVersion {
    /// XCDR1: classic CDR, 8-byte alignment for 8-byte primitives, PL_CDR for mutable types.
    Xcdr1,
    /// XCDR2: alignment capped at 4, DHEADERs for appendable types, EMHEADERs for mutable ones.
    Xcdr2,
}

impl XcdrVersion {
    /// The largest alignment the version applies.
    #[inline]
    pub const fn max_align(self) -> usize {
        match self {
            XcdrVersion::Xcdr1 => 8,
            XcdrVersion::Xcdr2 => 4,
        }
    }
}

/// Byte order of an encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endianness {
    /// Least significant byte first.
    Little,
    /// Most significant byte first ("network order").
    Big,
}

impl Endianness {
    /// The host's byte order, which encoders use unless asked otherwise.
    pub const NATIVE: Endianness = if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    };
}

/// How a type may evolve, which decides its encoding (XTypes 7.2.2.4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extensibility {
    /// No evolution: members are written back to back.
    Final,
    /// Members may be appended: XCDR2 puts a DHEADER (byte length) in front.
    Appendable,
    /// Members may be added, removed and reordered: each member carries its id.
    Mutable,
}

/// What kind of type this is, as far as the encoding rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKind {
    /// A primitive (boolean, octet, char, integers, floats), with its size. Collections of
    /// primitives carry no DHEADER in XCDR2.
    Primitive {
        /// Encoded size in bytes.
        size: usize,
    },
    /// An enum or bitmask: sized like a primitive, but collections of them carry a DHEADER in
    /// XCDR2 (as Cyclone DDS writes them).
    Enumerated {
        /// Encoded size in bytes.
        size: usize,
    },
    /// A string or wide string.
    String,
    /// A sequence.
    Sequence {
        /// The size of the elements when they are primitive, else 0 (it picks the EMHEADER
        /// length code of a mutable member).
        primitive_element_size: usize,
    },
    /// An array (of any number of dimensions).
    Array {
        /// True when the innermost elements are primitive (then there is no DHEADER).
        primitive_elements: bool,
    },
    /// A struct of the given extensibility.
    Struct(Extensibility),
    /// A union of the given extensibility.
    Union(Extensibility),
}

impl TypeKind {
    /// True for primitives (not enums and bitmasks).
    #[inline]
    pub const fn is_primitive(self) -> bool {
        matches!(self, TypeKind::Primitive { .. })
    }

    /// The size of a primitive, 0 for other kinds.
    #[inline]
    pub const fn primitive_size(self) -> usize {
        match self {
            TypeKind::Primitive { size } => size,
            _ => 0,
        }
    }
}

/// A type that can be encoded as XCDR1 and XCDR2 and viewed as JSON.
///
/// Implemented for the Rust types that correspond to IDL's (see the crate documentation's
/// table) and derived for structs, enums and unions with `#[derive(Cdr)]`.
pub trait Cdr: Sized + JsonView {
    /// The type's name as peers know it, such as `"ShapeType"` or `"my_module::Sensor"`.
    const TYPE_NAME: &'static str;
    /// The kind of type, for the rules that depend on it.
    const KIND: TypeKind;
    /// The smallest number of bytes any encoding of the type takes; used to refuse element
    /// counts the remaining input cannot hold.
    const MIN_SIZE: usize;
    /// True when the type has key members.
    const IS_KEYED: bool = false;
    /// True for arrays, whose nested dimensions form one multi-dimensional array.
    const IS_ARRAY: bool = false;
    /// For arrays, whether the innermost element is primitive (then XCDR2 puts no DHEADER in
    /// front of the array); for other types, whether the type itself is primitive.
    const FLAT_ELEMENT_IS_PRIMITIVE: bool = Self::KIND.is_primitive();

    /// The extensibility of the type (final for everything but derived structs and unions).
    fn extensibility() -> Extensibility {
        match Self::KIND {
            TypeKind::Struct(e) | TypeKind::Union(e) => e,
            _ => Extensibility::Final,
        }
    }

    /// The type described at run time (`crate::dynamic`): its values encode as this type's
    /// do. `#[derive(Cdr)]` builds it once per type.
    fn dynamic_type() -> dynamic::DynamicType;

    /// Appends the encoding of `self`.
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError>;

    /// Reads a value.
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError>;

    /// Reads a value into `self`, reusing the memory it holds where it can: a sequence's or
    /// string's buffer is refilled, not allocated anew (what a reader taking large samples
    /// into the same values again and again needs: a fresh allocation of a large buffer
    /// is paid page by page in faults once the allocator has given the last one back).
    /// On an error `self` holds some value of the type, partly read.
    fn decode_into(&mut self, d: &mut Decoder<'_>) -> Result<(), DecodeError> {
        *self = Self::decode(d)?;
        Ok(())
    }

    /// Appends the key holder of `self` (XTypes 7.6.8): the key members in member-id order,
    /// plainly, with no DHEADER or member header. For types without keys, the whole value.
    fn encode_key(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        self.encode(e)
    }

    /// Appends the key-only sample of `self`: the type's own encoding (headers included)
    /// with only its key members, which is what a dispose or unregister carries as its
    /// serialized key. For types without keys, the whole value.
    fn encode_key_sample(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        self.encode(e)
    }

    /// Reads a key-only sample (see [`Cdr::encode_key_sample`]); members that are not keys
    /// take their default value.
    fn decode_key_sample(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Self::decode(d)
    }

    /// Where the key holder ends at most, when it starts at `offset` of a stream aligned to
    /// at most `max_align`; `None` when unbounded.
    fn key_max_end(offset: usize, max_align: usize) -> Option<usize> {
        Self::max_end(offset, max_align)
    }

    /// Where an encoding of the type ends at most, when it starts at `offset` of a stream
    /// aligned to at most `max_align`; `None` when unbounded. (Used for key hashes.)
    fn max_end(offset: usize, max_align: usize) -> Option<usize>;

    /// The value a member takes when an appendable or mutable encoding leaves it out
    /// (XTypes 7.6.2.3): zero, empty, the first enumerator. `None` when the type has none.
    fn missing() -> Option<Self> {
        None
    }

    /// Appends the elements of a sequence or array, with no length. Primitives override it
    /// with a single copy.
    fn encode_elements(items: &[Self], e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        for (i, item) in items.iter().enumerate() {
            item.encode_flat(e).map_err(|err| err.at_index(i))?;
        }
        Ok(())
    }

    /// Reads `count` elements (already checked against the remaining input).
    fn decode_elements(d: &mut Decoder<'_>, count: usize) -> Result<Vec<Self>, DecodeError> {
        // Reserve no more memory than the remaining input takes: an element may be far
        // larger in memory than its smallest encoding (an appendable struct holding a big
        // array encodes in 4 bytes), and the count is still the sender's claim.
        let per_element = std::mem::size_of::<Self>().max(Self::MIN_SIZE).max(1);
        let mut out = Vec::with_capacity(count.min(d.remaining() / per_element));
        for i in 0..count {
            out.push(Self::decode_flat(d).map_err(|err| err.at_index(i))?);
        }
        Ok(out)
    }

    /// Reads `count` elements (already checked against the remaining input) into `items`,
    /// which ends up holding exactly them: the elements it already holds are read into
    /// ([`Cdr::decode_into`]), and its buffer is kept. Primitives override it with a single
    /// copy.
    fn decode_elements_into(
        items: &mut Vec<Self>,
        d: &mut Decoder<'_>,
        count: usize,
    ) -> Result<(), DecodeError> {
        items.truncate(count);
        for (i, item) in items.iter_mut().enumerate() {
            item.decode_flat_into(d).map_err(|err| err.at_index(i))?;
        }
        // Grows only as the input proves elements there (see `decode_elements`).
        for i in items.len()..count {
            items.push(Self::decode_flat(d).map_err(|err| err.at_index(i))?);
        }
        Ok(())
    }

    /// Encodes as the element of an enclosing array: nested arrays leave out their own
    /// DHEADER, since all dimensions form one array.
    fn encode_flat(&self, e: &mut Encoder<'_>) -> Result<(), EncodeError> {
        self.encode(e)
    }

    /// Decodes as the element of an enclosing array (see [`Cdr::encode_flat`]).
    fn decode_flat(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Self::decode(d)
    }

    /// [`Cdr::decode_flat`] into `self` (see [`Cdr::decode_into`]).
    fn decode_flat_into(&mut self, d: &mut Decoder<'_>) -> Result<(), DecodeError> {
        if Self::IS_ARRAY {
            *self = Self::decode_flat(d)?;
            Ok(())
        } else {
            self.decode_into(d)
        }
    }
}

/// Rounds `offset` up to a multiple of `size` capped at `max_align` (for `max_end`).
#[inline]
pub const fn align_up(offset: usize, size: usize, max_align: usize) -> usize {
    let a = if size < max_align { size } else { max_align };
    (offset + a - 1) & !(a - 1)
}
