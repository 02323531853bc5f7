//! Runtime types: a type described at run time (from a Python class, an IDL file or a peer's
//! TypeObject) and values of it, encoded and decoded by the same rules as `#[derive(Cdr)]`.
//!
//! [`DynamicType`] describes a type; [`DynamicValue`] holds a value of one; [`serialize`] and
//! [`deserialize`] turn values into XCDR1 or XCDR2 payloads and back; the JSON view
//! ([`DynamicValue::to_json`], [`DynamicValue::from_json`]) is the one derived types have.
//! The encoder and decoder call the same member helpers (`crate::member`) as derived code,
//! so that both paths produce the same bytes (checked against Cyclone DDS's vectors in
//! `tests/dynamic_vectors.rs`).
//!
//! Keys work as for derived types: [`key_hash`], [`key_hash_variants`], key-only samples
//! ([`serialize_key_sample`], [`deserialize_key_sample`], both forms peers write).
//!
//! Every `#[derive(Cdr)]` type has its runtime type: [`crate::Cdr::dynamic_type`].

pub mod assignable;
mod codec;
mod idl;
mod json_text;
mod key;
pub mod type_lookup;
pub mod type_object;
mod value;

use std::sync::Arc;

pub use bytes::Bytes;
pub use codec::{deserialize, deserialize_keys, deserialize_shared, serialize, serialize_into};
pub use idl::to_idl;
pub use json_text::JsonTextError;
pub use key::{
    decode_key_sample, deserialize_key_sample, encode_key_holder, encode_key_sample, key_hash,
    key_hash_variants, serialize_key_sample,
};
pub use value::DynamicValue;

use crate::{Extensibility, TypeKind};

/// A type known at run time.
#[derive(Debug, Clone, PartialEq)]
pub enum DynamicType {
    /// `boolean`.
    Bool,
    /// `uint8`.
    UInt8,
    /// `octet`: encoded as `uint8`, a type of its own in type objects.
    Octet,
    /// `int8`.
    Int8,
    /// `char` (ISO-8859-1).
    Char,
    /// `wchar` (a character of the basic multilingual plane).
    WChar,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
    /// `float`.
    Float32,
    /// `double`.
    Float64,
    /// `string`, or `string<bound>`.
    String {
        /// The most bytes it holds (without the terminating NUL).
        bound: Option<usize>,
    },
    /// `wstring`.
    WString,
    /// An enum.
    Enum(Arc<EnumType>),
    /// A bitmask.
    Bitmask(Arc<BitmaskType>),
    /// `sequence<T>`, or `sequence<T, bound>`.
    Sequence {
        /// The element type.
        element: Box<DynamicType>,
        /// The most elements it holds.
        bound: Option<usize>,
    },
    /// `T name[d0][d1]...`: one array of every dimension.
    Array {
        /// The innermost element type.
        element: Box<DynamicType>,
        /// The dimensions, outermost first.
        dimensions: Vec<usize>,
    },
    /// A struct.
    Struct(Arc<StructType>),
    /// A union.
    Union(Arc<UnionType>),
}

/// An enum: its enumerators and how many bits hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumType {
    /// Its name, such as `"demo::Color"`.
    pub name: String,
    /// `@bit_bound` (32 by default): 1 to 8 bits encode in 1 byte, 9 to 16 in 2, else 4.
    pub bit_bound: u32,
    /// The enumerators' names and values, the first one being the default.
    pub enumerators: Vec<(String, i32)>,
}

/// A bitmask: how many bits it has, and its named flags (which type objects carry; they do
/// not change the encoding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitmaskType {
    /// Its name.
    pub name: String,
    /// `@bit_bound` (32 by default): up to 8 bits encode in 1 byte, 16 in 2, 32 in 4, else 8.
    pub bit_bound: u32,
    /// The flags' names and bit positions.
    pub flags: Vec<(String, u16)>,
}

/// A struct.
#[derive(Debug, Clone, PartialEq)]
pub struct StructType {
    /// Its name, such as `"ShapeType"`.
    pub name: String,
    /// How it may evolve, which decides its encoding.
    pub extensibility: Extensibility,
    /// The struct it inherits from: its members come first.
    pub base: Option<Arc<StructType>>,
    /// Its own members, in declaration order.
    pub members: Vec<Member>,
}

/// A member of a struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Its member id (what a mutable encoding carries).
    pub id: u32,
    /// Its type.
    pub ty: DynamicType,
    /// `@key`.
    pub key: bool,
    /// `@optional`: its value may be absent.
    pub optional: bool,
    /// `@must_understand`.
    pub must_understand: bool,
}

impl Member {
    /// A plain member.
    pub fn new(name: &str, id: u32, ty: DynamicType) -> Self {
        Member {
            name: name.to_owned(),
            id,
            ty,
            key: false,
            optional: false,
            must_understand: false,
        }
    }

    /// The same member, a key.
    pub fn key(mut self) -> Self {
        self.key = true;
        self
    }

    /// The same member, optional.
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
}

/// A union.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionType {
    /// Its name.
    pub name: String,
    /// How it may evolve.
    pub extensibility: Extensibility,
    /// The discriminator's type: an integer, `boolean`, `char`, `octet` or an enum.
    pub discriminator: DynamicType,
    /// Its branches.
    pub cases: Vec<UnionCase>,
    /// Discriminator values that select no member, even where a default branch would take
    /// them (a unit variant of a derived union).
    pub no_member: Vec<i64>,
    /// The discriminator a union takes when an appendable or mutable encoding leaves it out
    /// (a derived union's first variant); `None`: the first branch's first label, else the
    /// discriminator type's default.
    pub default_discriminator: Option<i64>,
}

/// A branch of a union.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionCase {
    /// Its name.
    pub name: String,
    /// The discriminator values that select it (as integers: an enum's value, a char's code,
    /// 0 and 1 for a boolean).
    pub labels: Vec<i64>,
    /// The `default` branch, selected by every value no other branch names.
    pub default: bool,
    /// Its type.
    pub ty: DynamicType,
}

impl UnionType {
    /// The branch that discriminator `d` selects, if any.
    pub fn branch(&self, d: i64) -> Option<&UnionCase> {
        if self.no_member.contains(&d) {
            return None;
        }
        self.cases
            .iter()
            .find(|c| c.labels.contains(&d))
            .or_else(|| self.cases.iter().find(|c| c.default))
    }
}

impl StructType {
    /// How many members it has, the base's included.
    pub fn member_count(&self) -> usize {
        self.members.len() + self.base.as_ref().map_or(0, |b| b.member_count())
    }

    /// Member `index` of [`StructType::all_members`], without making the list.
    pub fn member_at(&self, index: usize) -> Option<&Member> {
        let inherited = self.member_count() - self.members.len();
        match (index.checked_sub(inherited), &self.base) {
            (Some(own), _) => self.members.get(own),
            (None, Some(base)) => base.member_at(index),
            (None, None) => None,
        }
    }

    /// The member with id `id` and its index in [`StructType::all_members`].
    pub fn member_with_id(&self, id: u32) -> Option<(usize, &Member)> {
        let inherited = self.member_count() - self.members.len();
        match self.members.iter().position(|m| m.id == id) {
            Some(i) => Some((inherited + i, &self.members[i])),
            None => self.base.as_ref().and_then(|b| b.member_with_id(id)),
        }
    }

    /// The bytes its members that are not optional take at least, the base's included
    /// (walked rather than listed: this runs for every sequence of structs decoded).
    fn required_size(&self) -> usize {
        let own: usize = self
            .members
            .iter()
            .filter(|m| !m.optional)
            .map(|m| m.ty.min_size())
            .fold(0, usize::saturating_add);
        // Saturating: a peer's type may declare arrays no input could hold.
        own.saturating_add(self.base.as_ref().map_or(0, |b| b.required_size()))
    }

    /// Every member, the base's first (as encoded).
    pub fn all_members(&self) -> Vec<&Member> {
        let mut out = match &self.base {
            Some(base) => base.all_members(),
            None => Vec::new(),
        };
        out.extend(self.members.iter());
        out
    }
}

/// The runtime type of a derived type, built once (`#[derive(Cdr)]` calls this). A type that
/// contains itself (through a sequence) has none yet: rather than wait for itself for ever,
/// building it panics, naming the type.
#[doc(hidden)]
pub fn cached(
    cell: &'static std::sync::OnceLock<DynamicType>,
    building: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
    name: &str,
    build: impl FnOnce() -> DynamicType,
) -> DynamicType {
    if let Some(ty) = cell.get() {
        return ty.clone();
    }
    assert!(
        !building.replace(true),
        "{name} contains itself: recursive types have no runtime type yet"
    );
    let ty = cell.get_or_init(build).clone();
    building.set(false);
    ty
}

/// The encoded size of an enum of `bit_bound` bits.
pub(crate) fn enum_size(bit_bound: u32) -> usize {
    match bit_bound {
        0..=8 => 1,
        9..=16 => 2,
        _ => 4,
    }
}

/// The encoded size of a bitmask of `bit_bound` bits.
pub(crate) fn bitmask_size(bit_bound: u32) -> usize {
    match bit_bound {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

impl DynamicType {
    /// True for the primitive types (what `kind()` calls `TypeKind::Primitive`), without
    /// computing the whole kind: asked for every sequence and array written.
    #[inline]
    pub fn is_primitive(&self) -> bool {
        matches!(
            self,
            DynamicType::Bool
                | DynamicType::UInt8
                | DynamicType::Octet
                | DynamicType::Int8
                | DynamicType::Char
                | DynamicType::Int16
                | DynamicType::UInt16
                | DynamicType::WChar
                | DynamicType::Int32
                | DynamicType::UInt32
                | DynamicType::Float32
                | DynamicType::Int64
                | DynamicType::UInt64
                | DynamicType::Float64
        )
    }

    /// The kind of type, for the encoding rules that depend on it.
    pub fn kind(&self) -> TypeKind {
        match self {
            DynamicType::Bool
            | DynamicType::UInt8
            | DynamicType::Octet
            | DynamicType::Int8
            | DynamicType::Char => TypeKind::Primitive { size: 1 },
            DynamicType::Int16 | DynamicType::UInt16 | DynamicType::WChar => {
                TypeKind::Primitive { size: 2 }
            }
            DynamicType::Int32 | DynamicType::UInt32 | DynamicType::Float32 => {
                TypeKind::Primitive { size: 4 }
            }
            DynamicType::Int64 | DynamicType::UInt64 | DynamicType::Float64 => {
                TypeKind::Primitive { size: 8 }
            }
            DynamicType::String { .. } | DynamicType::WString => TypeKind::String,
            DynamicType::Enum(e) => TypeKind::Enumerated {
                size: enum_size(e.bit_bound),
            },
            DynamicType::Bitmask(b) => TypeKind::Enumerated {
                size: bitmask_size(b.bit_bound),
            },
            DynamicType::Sequence { element, .. } => TypeKind::Sequence {
                primitive_element_size: element.kind().primitive_size(),
            },
            DynamicType::Array { element, .. } => TypeKind::Array {
                primitive_elements: element.is_primitive(),
            },
            DynamicType::Struct(s) => TypeKind::Struct(s.extensibility),
            DynamicType::Union(u) => TypeKind::Union(u.extensibility),
        }
    }

    /// The name of the type, as errors and type names say it.
    pub fn name(&self) -> &str {
        match self {
            DynamicType::Bool => "boolean",
            DynamicType::UInt8 => "uint8",
            DynamicType::Octet => "octet",
            DynamicType::Int8 => "int8",
            DynamicType::Char => "char8",
            DynamicType::WChar => "char16",
            DynamicType::WString => "wstring",
            DynamicType::Int16 => "int16",
            DynamicType::UInt16 => "uint16",
            DynamicType::Int32 => "int32",
            DynamicType::UInt32 => "uint32",
            DynamicType::Int64 => "int64",
            DynamicType::UInt64 => "uint64",
            DynamicType::Float32 => "float32",
            DynamicType::Float64 => "float64",
            DynamicType::String { .. } => "string",
            DynamicType::Enum(e) => &e.name,
            DynamicType::Bitmask(b) => &b.name,
            DynamicType::Sequence { .. } => "sequence",
            DynamicType::Array { .. } => "array",
            DynamicType::Struct(s) => &s.name,
            DynamicType::Union(u) => &u.name,
        }
    }

    /// `uint8` or `octet`: sequences of them are held as bytes.
    pub fn is_octet_like(&self) -> bool {
        matches!(self, DynamicType::UInt8 | DynamicType::Octet)
    }

    /// The extensibility (final for everything but structs and unions).
    pub fn extensibility(&self) -> Extensibility {
        match self {
            DynamicType::Struct(s) => s.extensibility,
            DynamicType::Union(u) => u.extensibility,
            _ => Extensibility::Final,
        }
    }

    /// The smallest number of bytes an encoding takes (to refuse element counts the
    /// remaining input cannot hold), as the derived types count it.
    pub(crate) fn min_size(&self) -> usize {
        match self.kind() {
            TypeKind::Primitive { size } | TypeKind::Enumerated { size } => size,
            TypeKind::String if *self == DynamicType::WString => 4,
            TypeKind::String => 5,
            TypeKind::Sequence { .. } => 4,
            TypeKind::Array { .. } => match self {
                DynamicType::Array {
                    element,
                    dimensions,
                } => dimensions
                    .iter()
                    .product::<usize>()
                    .saturating_mul(element.min_size()),
                _ => 0,
            },
            TypeKind::Struct(Extensibility::Final) => match self {
                DynamicType::Struct(s) => s.required_size(),
                _ => 0,
            },
            TypeKind::Struct(Extensibility::Appendable) => match self {
                DynamicType::Struct(s) => s.required_size().min(4),
                _ => 0,
            },
            TypeKind::Struct(Extensibility::Mutable) => 0,
            TypeKind::Union(_) => match self {
                DynamicType::Union(u) => u.discriminator.min_size().min(4),
                _ => 0,
            },
        }
    }
}
