//! The parsed IDL, names resolved and constant expressions evaluated: what the generators
//! read. Every type refers to others by their absolute scoped name.

use crate::error::Location;
use std::fmt;
use std::path::PathBuf;

/// A parsed compilation: the files read (main files and what they include) and their
/// definitions in reading order.
#[derive(Debug, Clone, PartialEq)]
pub struct Specification {
    /// Every file read, by index ([`Definition::file`]).
    pub files: Vec<PathBuf>,
    /// Indices of the files named to the compiler (not those only included).
    pub main_files: Vec<usize>,
    /// The top-level definitions.
    pub definitions: Vec<Definition>,
}

/// An absolute scoped name, `["a", "b", "C"]` for `::a::b::C`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopedName(pub Vec<String>);

impl ScopedName {
    /// The last part.
    pub fn name(&self) -> &str {
        self.0.last().map(String::as_str).unwrap_or("")
    }

    /// The enclosing modules (everything but the last part).
    pub fn scope(&self) -> &[String] {
        match self.0.split_last() {
            Some((_, scope)) => scope,
            None => &[],
        }
    }
}

impl fmt::Display for ScopedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("::"))
    }
}

/// One definition, with the file it was read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Definition {
    /// `module m { ... };`
    Module(Module),
    /// `struct S { ... };`
    Struct(Struct),
    /// `union U switch (T) { ... };`
    Union(Union),
    /// `enum E { ... };`
    Enum(Enum),
    /// `bitmask B { ... };`
    Bitmask(Bitmask),
    /// `typedef T name;` (one per declarator)
    Typedef(Typedef),
    /// `const T NAME = expr;`
    Const(Const),
    /// `struct S;` or `union U;`
    Forward(Forward),
}

impl Definition {
    /// Where the definition starts.
    pub fn location(&self) -> &Location {
        match self {
            Definition::Module(d) => &d.location,
            Definition::Struct(d) => &d.location,
            Definition::Union(d) => &d.location,
            Definition::Enum(d) => &d.location,
            Definition::Bitmask(d) => &d.location,
            Definition::Typedef(d) => &d.location,
            Definition::Const(d) => &d.location,
            Definition::Forward(d) => &d.location,
        }
    }

    /// The index of the file it comes from in [`Specification::files`].
    pub fn file(&self) -> usize {
        match self {
            Definition::Module(d) => d.file,
            Definition::Struct(d) => d.file,
            Definition::Union(d) => d.file,
            Definition::Enum(d) => d.file,
            Definition::Bitmask(d) => d.file,
            Definition::Typedef(d) => d.file,
            Definition::Const(d) => d.file,
            Definition::Forward(d) => d.file,
        }
    }
}

/// A module; one IDL module may be opened several times, each a `Module`.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// The module's scoped name.
    pub name: ScopedName,
    /// What it holds.
    pub definitions: Vec<Definition>,
    /// Where `module` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// `@final`, `@appendable`, `@mutable` (XTypes 7.2.2.4.4.4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extensibility {
    /// `@final`
    Final,
    /// `@appendable`
    Appendable,
    /// `@mutable`
    Mutable,
}

/// `@autoid(SEQUENTIAL)` or `@autoid(HASH)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoId {
    /// Ids count up from the previous member's (the default).
    #[default]
    Sequential,
    /// Ids are hashes of the member names.
    Hash,
}

/// The built-in types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `boolean`
    Boolean,
    /// `octet`
    Octet,
    /// `char`
    Char,
    /// `wchar`
    WChar,
    /// `int8`
    Int8,
    /// `uint8`
    UInt8,
    /// `short`, `int16`
    Int16,
    /// `unsigned short`, `uint16`
    UInt16,
    /// `long`, `int32`
    Int32,
    /// `unsigned long`, `uint32`
    UInt32,
    /// `long long`, `int64`
    Int64,
    /// `unsigned long long`, `uint64`
    UInt64,
    /// `float`
    Float,
    /// `double`
    Double,
}

impl Primitive {
    /// The inclusive range of an integer type's values; `None` for the others.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Primitive::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Primitive::UInt8 | Primitive::Octet => (0, u8::MAX.into()),
            Primitive::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Primitive::UInt16 => (0, u16::MAX.into()),
            Primitive::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Primitive::UInt32 => (0, u32::MAX.into()),
            Primitive::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Primitive::UInt64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }

    /// The IDL 4 spelling.
    pub fn idl_name(self) -> &'static str {
        match self {
            Primitive::Boolean => "boolean",
            Primitive::Octet => "octet",
            Primitive::Char => "char",
            Primitive::WChar => "wchar",
            Primitive::Int8 => "int8",
            Primitive::UInt8 => "uint8",
            Primitive::Int16 => "int16",
            Primitive::UInt16 => "uint16",
            Primitive::Int32 => "int32",
            Primitive::UInt32 => "uint32",
            Primitive::Int64 => "int64",
            Primitive::UInt64 => "uint64",
            Primitive::Float => "float",
            Primitive::Double => "double",
        }
    }
}

/// A type as a member, typedef, sequence element or constant names it.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeSpec {
    /// A built-in type.
    Primitive(Primitive),
    /// `string` or `string<N>`.
    String(Option<u32>),
    /// `wstring` or `wstring<N>`.
    WString(Option<u32>),
    /// `sequence<T>` or `sequence<T, N>`.
    Sequence(Box<TypeSpec>, Option<u32>),
    /// A struct, union, enum, bitmask or typedef, by absolute name.
    Named(ScopedName),
}

/// A member of a struct, or the member of a union branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The member's name.
    pub name: String,
    /// Its type.
    pub ty: TypeSpec,
    /// Array dimensions, outermost first (`long a[2][3]` is `[2, 3]`).
    pub dimensions: Vec<u32>,
    /// `@key`
    pub key: bool,
    /// `@id(N)`
    pub id: Option<u32>,
    /// `@hashid` or `@hashid("name")`: the string whose hash is the id.
    pub hash_id: Option<String>,
    /// `@optional`
    pub optional: bool,
    /// `@must_understand`
    pub must_understand: bool,
    /// `@default(value)`
    pub default: Option<ConstValue>,
    /// Where the member's name is.
    pub location: Location,
}

/// A struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    /// The absolute name.
    pub name: ScopedName,
    /// The base struct of `struct D : B`.
    pub base: Option<ScopedName>,
    /// Members in declaration order (the base's not included).
    pub members: Vec<Member>,
    /// The extensibility annotation, if one was given (`@final` is what applies without).
    pub extensibility: Option<Extensibility>,
    /// `@autoid`
    pub autoid: AutoId,
    /// `@nested` (or `@topic(false)`): not meant as a topic type.
    pub nested: bool,
    /// `@topic`
    pub topic: bool,
    /// Where `struct` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// One branch of a union.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionCase {
    /// Its `case` labels.
    pub labels: Vec<ConstValue>,
    /// It has the `default:` label.
    pub default: bool,
    /// Its member.
    pub member: Member,
}

/// A union.
#[derive(Debug, Clone, PartialEq)]
pub struct Union {
    /// The absolute name.
    pub name: ScopedName,
    /// The discriminator's type (an integer, `char`, `wchar`, `boolean`, `octet` or an
    /// enum, possibly through typedefs).
    pub discriminator: TypeSpec,
    /// `switch (@key T)`
    pub discriminator_key: bool,
    /// Branches in declaration order.
    pub cases: Vec<UnionCase>,
    /// The extensibility annotation, if one was given.
    pub extensibility: Option<Extensibility>,
    /// Where `union` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// An enumerator and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumerator {
    /// Its name.
    pub name: String,
    /// Its value (`@value`, or one more than the previous one, from 0).
    pub value: i64,
    /// `@default_literal`
    pub default_literal: bool,
}

/// An enum.
#[derive(Debug, Clone, PartialEq)]
pub struct Enum {
    /// The absolute name.
    pub name: ScopedName,
    /// `@bit_bound` (32 when absent).
    pub bit_bound: Option<u32>,
    /// Enumerators in declaration order.
    pub enumerators: Vec<Enumerator>,
    /// Where `enum` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// A flag of a bitmask.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// Its name.
    pub name: String,
    /// Its bit (`@position`, or one more than the previous one, from 0).
    pub position: u32,
}

/// A bitmask.
#[derive(Debug, Clone, PartialEq)]
pub struct Bitmask {
    /// The absolute name.
    pub name: ScopedName,
    /// `@bit_bound` (32 when absent).
    pub bit_bound: u32,
    /// Flags in declaration order.
    pub flags: Vec<Flag>,
    /// Where `bitmask` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// A typedef (one per declarator of `typedef T a, b[3];`).
#[derive(Debug, Clone, PartialEq)]
pub struct Typedef {
    /// The absolute name.
    pub name: ScopedName,
    /// The type named.
    pub ty: TypeSpec,
    /// Array dimensions of the declarator.
    pub dimensions: Vec<u32>,
    /// Where `typedef` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// A constant's value.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstValue {
    /// Any integer type (and octet).
    Integer(i128),
    /// `float`, `double`.
    Float(f64),
    /// `boolean`
    Boolean(bool),
    /// `char` or `wchar`.
    Char(char),
    /// `string` or `wstring`.
    String(String),
    /// An enumerator.
    Enumerator {
        /// The enum.
        ty: ScopedName,
        /// The enumerator's name.
        name: String,
        /// Its value.
        value: i64,
    },
}

impl ConstValue {
    /// The integer a union label or bound stands for (enumerators by value, booleans 0/1,
    /// characters by code point).
    pub fn as_integer(&self) -> Option<i128> {
        match self {
            ConstValue::Integer(v) => Some(*v),
            ConstValue::Boolean(b) => Some(i128::from(*b)),
            ConstValue::Char(c) => Some(i128::from(u32::from(*c))),
            ConstValue::Enumerator { value, .. } => Some(i128::from(*value)),
            ConstValue::Float(_) | ConstValue::String(_) => None,
        }
    }
}

/// A constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Const {
    /// The absolute name.
    pub name: ScopedName,
    /// Its declared type.
    pub ty: TypeSpec,
    /// Its value, converted to the type.
    pub value: ConstValue,
    /// Where `const` is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// What a forward declaration announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardKind {
    /// `struct S;`
    Struct,
    /// `union U;`
    Union,
}

/// A forward declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Forward {
    /// The absolute name.
    pub name: ScopedName,
    /// Struct or union.
    pub kind: ForwardKind,
    /// Where it is.
    pub location: Location,
    /// The file index.
    pub file: usize,
}

/// A type the specification defines, looked up by name (see [`Specification::index`]).
#[derive(Debug, Clone, Copy)]
pub enum TypeDef<'a> {
    /// A struct.
    Struct(&'a Struct),
    /// A union.
    Union(&'a Union),
    /// An enum.
    Enum(&'a Enum),
    /// A bitmask.
    Bitmask(&'a Bitmask),
    /// A typedef.
    Typedef(&'a Typedef),
}

impl Specification {
    /// Every struct, union, enum, bitmask and typedef by absolute name.
    pub fn index(&self) -> std::collections::HashMap<ScopedName, TypeDef<'_>> {
        fn walk<'a>(
            defs: &'a [Definition],
            out: &mut std::collections::HashMap<ScopedName, TypeDef<'a>>,
        ) {
            for d in defs {
                match d {
                    Definition::Module(m) => walk(&m.definitions, out),
                    Definition::Struct(s) => {
                        out.insert(s.name.clone(), TypeDef::Struct(s));
                    }
                    Definition::Union(u) => {
                        out.insert(u.name.clone(), TypeDef::Union(u));
                    }
                    Definition::Enum(e) => {
                        out.insert(e.name.clone(), TypeDef::Enum(e));
                    }
                    Definition::Bitmask(b) => {
                        out.insert(b.name.clone(), TypeDef::Bitmask(b));
                    }
                    Definition::Typedef(t) => {
                        out.insert(t.name.clone(), TypeDef::Typedef(t));
                    }
                    Definition::Const(_) | Definition::Forward(_) => {}
                }
            }
        }
        let mut out = std::collections::HashMap::new();
        walk(&self.definitions, &mut out);
        out
    }
}
