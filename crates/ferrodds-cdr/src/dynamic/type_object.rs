//! XTypes 1.3 type representation (§7.3.4) of runtime types: the MINIMAL and COMPLETE
//! `TypeObject` of a struct, union, enum or bitmask, its `TypeIdentifier` (the first 14 bytes
//! of the MD5 of the serialized TypeObject), the plain identifiers of strings, sequences and
//! arrays, and the `TypeInformation` that SEDP carries (`PID_TYPE_INFORMATION`).
//!
//! Serialized as Cyclone DDS serializes them (XCDR2, little-endian, no encapsulation header),
//! byte for byte: `tests/type_objects.rs` checks every type of the vector set against
//! Cyclone's (`tests/cyclone/typeobjects.json`, whose `TYPEOBJECTS.md` lists the rules this
//! module follows). Annotations are never written (Cyclone writes none either).

use md5::{Digest, Md5};

use super::{DynamicType, StructType, UnionType};
use crate::member::hashed_member_id;
use crate::{Encoder, Endianness, Extensibility, XcdrVersion};

/// Which of the two representations (XTypes 7.3.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EquivalenceKind {
    /// Names hashed, no type name: what assignability compares.
    Minimal,
    /// Everything: what a peer needs to rebuild the type.
    Complete,
}

impl EquivalenceKind {
    const fn code(self) -> u8 {
        match self {
            EquivalenceKind::Minimal => EK_MINIMAL,
            EquivalenceKind::Complete => EK_COMPLETE,
        }
    }
}

const EK_MINIMAL: u8 = 0xf1;
const EK_COMPLETE: u8 = 0xf2;
const EK_BOTH: u8 = 0xf3;
const TI_STRING8_SMALL: u8 = 0x70;
const TI_STRING8_LARGE: u8 = 0x71;
const TI_STRING16_SMALL: u8 = 0x72;
const TI_PLAIN_SEQUENCE_SMALL: u8 = 0x80;
const TI_PLAIN_SEQUENCE_LARGE: u8 = 0x81;
const TI_PLAIN_ARRAY_SMALL: u8 = 0x90;
const TI_PLAIN_ARRAY_LARGE: u8 = 0x91;
const TK_ENUM: u8 = 0x40;
const TK_BITMASK: u8 = 0x41;
const TK_STRUCTURE: u8 = 0x51;
const TK_UNION: u8 = 0x52;

// Member flags (XTypes 7.3.4.5) and type flags.
const TRY_CONSTRUCT1: u16 = 0x0001;
const IS_OPTIONAL: u16 = 0x0008;
const IS_MUST_UNDERSTAND: u16 = 0x0010;
const IS_KEY: u16 = 0x0020;
const IS_DEFAULT: u16 = 0x0040;
const IS_FINAL: u16 = 0x0001;
const IS_APPENDABLE: u16 = 0x0002;
const IS_MUTABLE: u16 = 0x0004;
const IS_AUTOID_HASH: u16 = 0x0010;

/// The first four bytes of the MD5 of a name (a minimal member's `name_hash`).
fn name_hash(name: &str) -> [u8; 4] {
    let d = Md5::digest(name.as_bytes());
    [d[0], d[1], d[2], d[3]]
}

fn encoder(buf: &mut Vec<u8>) -> Encoder<'_> {
    Encoder::new(buf, XcdrVersion::Xcdr2, Endianness::Little)
}

/// Runs `f` inside a DHEADER (the members of an appendable type).
fn delimited(e: &mut Encoder<'_>, f: impl FnOnce(&mut Encoder<'_>)) {
    let at = e.begin_length();
    f(e);
    // INVARIANT: type objects are far below 4 GiB.
    let _ = e.end_length(at);
}

/// A sequence of appendable elements: DHEADER, count, elements.
fn sequence<T>(e: &mut Encoder<'_>, items: &[T], mut f: impl FnMut(&mut Encoder<'_>, &T)) {
    delimited(e, |e| {
        e.write_u32(items.len() as u32);
        for item in items {
            f(e, item);
        }
    });
}

fn string(e: &mut Encoder<'_>, s: &str) {
    // INVARIANT: names hold no NUL (nor do IDL identifiers).
    let _ = e.write_str(s);
}

/// The serialized TypeObject of a struct, union, enum or bitmask; `None` for the other types,
/// whose identifiers are plain.
pub fn type_object(ty: &DynamicType, kind: EquivalenceKind) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(128);
    let mut e = encoder(&mut buf);
    let complete = kind == EquivalenceKind::Complete;
    match ty {
        DynamicType::Struct(s) => delimited(&mut e, |e| {
            e.write_u8(kind.code());
            e.write_u8(TK_STRUCTURE);
            struct_type(e, s, kind);
        }),
        DynamicType::Union(u) => delimited(&mut e, |e| {
            e.write_u8(kind.code());
            e.write_u8(TK_UNION);
            union_type(e, u, kind);
        }),
        DynamicType::Enum(t) => delimited(&mut e, |e| {
            e.write_u8(kind.code());
            e.write_u8(TK_ENUM);
            e.write_u16(IS_FINAL);
            // Header: CommonEnumeratedHeader (bit bound) and, complete, the type detail.
            delimited(e, |e| {
                e.write_u16(t.bit_bound as u16);
                if complete {
                    type_detail(e, &t.name);
                }
            });
            let mut literals: Vec<(usize, &(String, i32))> =
                t.enumerators.iter().enumerate().collect();
            literals.sort_by_key(|(_, (_, v))| *v);
            sequence(e, &literals, |e, (i, (name, value))| {
                delimited(e, |e| {
                    delimited(e, |e| {
                        e.write_i32(*value);
                        e.write_u16(if *i == 0 { IS_DEFAULT } else { 0 });
                    });
                    member_detail(e, name, kind);
                });
            });
        }),
        DynamicType::Bitmask(b) => delimited(&mut e, |e| {
            e.write_u8(kind.code());
            e.write_u8(TK_BITMASK);
            delimited(e, |e| {
                e.write_u16(IS_FINAL);
                delimited(e, |e| {
                    e.write_u16(b.bit_bound as u16);
                    if complete {
                        type_detail(e, &b.name);
                    }
                });
                let mut flags: Vec<&(String, u16)> = b.flags.iter().collect();
                flags.sort_by_key(|(_, position)| *position);
                sequence(e, &flags, |e, (name, position)| {
                    delimited(e, |e| {
                        e.write_u16(*position);
                        e.write_u16(0);
                        member_detail(e, name, kind);
                    });
                });
            });
        }),
        _ => return None,
    }
    Some(buf)
}

/// `CompleteTypeDetail`: no annotations, the type's name.
fn type_detail(e: &mut Encoder<'_>, name: &str) {
    e.write_u8(0);
    e.write_u8(0);
    string(e, name);
}

/// `MinimalMemberDetail` (the name's hash) or `CompleteMemberDetail` (the name, no
/// annotations).
fn member_detail(e: &mut Encoder<'_>, name: &str, kind: EquivalenceKind) {
    match kind {
        EquivalenceKind::Minimal => e.write_bytes(&name_hash(name)),
        EquivalenceKind::Complete => {
            string(e, name);
            e.write_u8(0);
            e.write_u8(0);
        }
    }
}

fn type_flags(ext: Extensibility) -> u16 {
    match ext {
        Extensibility::Final => IS_FINAL,
        Extensibility::Appendable => IS_APPENDABLE,
        Extensibility::Mutable => IS_MUTABLE,
    }
}

fn struct_type(e: &mut Encoder<'_>, s: &StructType, kind: EquivalenceKind) {
    // @autoid(HASH) is not kept in a StructType; every id being its name's hash says it.
    let autoid_hash =
        !s.members.is_empty() && s.members.iter().all(|m| m.id == hashed_member_id(&m.name));
    e.write_u16(type_flags(s.extensibility) | if autoid_hash { IS_AUTOID_HASH } else { 0 });
    delimited(e, |e| {
        match &s.base {
            Some(base) => type_identifier_into(e, &DynamicType::Struct(base.clone()), kind),
            None => e.write_u8(0),
        }
        if kind == EquivalenceKind::Complete {
            type_detail(e, &s.name);
        }
    });
    sequence(e, &s.members, |e, m| {
        delimited(e, |e| {
            e.write_u32(m.id);
            let mut flags = TRY_CONSTRUCT1;
            if m.key {
                flags |= IS_KEY;
            }
            if m.optional {
                flags |= IS_OPTIONAL;
            }
            // Keys go without must-understand, as Cyclone DDS sends them (for RTI).
            if m.must_understand && !m.key {
                flags |= IS_MUST_UNDERSTAND;
            }
            e.write_u16(flags);
            type_identifier_into(e, &m.ty, kind);
            member_detail(e, &m.name, kind);
        });
    });
}

fn union_type(e: &mut Encoder<'_>, u: &UnionType, kind: EquivalenceKind) {
    let complete = kind == EquivalenceKind::Complete;
    e.write_u16(type_flags(u.extensibility));
    delimited(e, |e| {
        if complete {
            type_detail(e, &u.name);
        }
    });
    delimited(e, |e| {
        e.write_u16(TRY_CONSTRUCT1 | IS_MUST_UNDERSTAND);
        type_identifier_into(e, &u.discriminator, kind);
        if complete {
            e.write_u8(0);
            e.write_u8(0);
        }
    });
    let cases: Vec<(u32, &super::UnionCase)> = u
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32, c))
        .collect();
    sequence(e, &cases, |e, (id, c)| {
        delimited(e, |e| {
            e.write_u32(*id);
            e.write_u16(TRY_CONSTRUCT1 | if c.default { IS_DEFAULT } else { 0 });
            type_identifier_into(e, &c.ty, kind);
            e.write_u32(c.labels.len() as u32);
            for label in &c.labels {
                e.write_i32(*label as i32);
            }
            member_detail(e, &c.name, kind);
        });
    });
}

/// The 14-byte equivalence hash of a serialized TypeObject.
pub fn equivalence_hash(type_object: &[u8]) -> [u8; 14] {
    let d = Md5::digest(type_object);
    let mut hash = [0u8; 14];
    hash.copy_from_slice(&d[..14]);
    hash
}

/// The serialized TypeIdentifier of `ty`: a hash identifier for structs, unions, enums and
/// bitmasks, a plain one for the others.
pub fn type_identifier(ty: &DynamicType, kind: EquivalenceKind) -> Vec<u8> {
    let mut buf = Vec::with_capacity(16);
    let mut e = encoder(&mut buf);
    type_identifier_into(&mut e, ty, kind);
    buf
}

/// True when the identifier of `ty` says everything about it (no hash of a named type
/// inside): its collections are then `EK_BOTH`.
fn fully_descriptive(ty: &DynamicType) -> bool {
    match ty {
        DynamicType::Sequence { element, .. } | DynamicType::Array { element, .. } => {
            fully_descriptive(element)
        }
        DynamicType::Struct(_)
        | DynamicType::Union(_)
        | DynamicType::Enum(_)
        | DynamicType::Bitmask(_) => false,
        _ => true,
    }
}

fn type_identifier_into(e: &mut Encoder<'_>, ty: &DynamicType, kind: EquivalenceKind) {
    let primitive = |e: &mut Encoder<'_>, tk: u8| e.write_u8(tk);
    match ty {
        DynamicType::Bool => primitive(e, 0x01),
        DynamicType::Octet => primitive(e, 0x02),
        DynamicType::Int16 => primitive(e, 0x03),
        DynamicType::Int32 => primitive(e, 0x04),
        DynamicType::Int64 => primitive(e, 0x05),
        DynamicType::UInt16 => primitive(e, 0x06),
        DynamicType::UInt32 => primitive(e, 0x07),
        DynamicType::UInt64 => primitive(e, 0x08),
        DynamicType::Float32 => primitive(e, 0x09),
        DynamicType::Float64 => primitive(e, 0x0a),
        DynamicType::Int8 => primitive(e, 0x0c),
        DynamicType::UInt8 => primitive(e, 0x0d),
        DynamicType::Char => primitive(e, 0x10),
        DynamicType::WChar => primitive(e, 0x11),
        DynamicType::String { bound } => {
            let bound = bound.unwrap_or(0);
            match u8::try_from(bound) {
                Ok(small) => {
                    e.write_u8(TI_STRING8_SMALL);
                    e.write_u8(small);
                }
                Err(_) => {
                    e.write_u8(TI_STRING8_LARGE);
                    e.write_u32(bound as u32);
                }
            }
        }
        DynamicType::WString => {
            e.write_u8(TI_STRING16_SMALL);
            e.write_u8(0);
        }
        DynamicType::Sequence { element, bound } => {
            let bound = bound.unwrap_or(0);
            let small = u8::try_from(bound).ok();
            e.write_u8(if small.is_some() {
                TI_PLAIN_SEQUENCE_SMALL
            } else {
                TI_PLAIN_SEQUENCE_LARGE
            });
            collection_header(e, element, kind);
            match small {
                Some(b) => e.write_u8(b),
                None => e.write_u32(bound as u32),
            }
            type_identifier_into(e, element, kind);
        }
        DynamicType::Array {
            element,
            dimensions,
        } => {
            let small = dimensions.iter().all(|d| *d <= 255);
            e.write_u8(if small {
                TI_PLAIN_ARRAY_SMALL
            } else {
                TI_PLAIN_ARRAY_LARGE
            });
            collection_header(e, element, kind);
            e.write_u32(dimensions.len() as u32);
            for d in dimensions {
                if small {
                    e.write_u8(*d as u8);
                } else {
                    e.write_u32(*d as u32);
                }
            }
            type_identifier_into(e, element, kind);
        }
        DynamicType::Struct(_)
        | DynamicType::Union(_)
        | DynamicType::Enum(_)
        | DynamicType::Bitmask(_) => {
            let object = type_object(ty, kind).unwrap_or_default();
            e.write_u8(kind.code());
            e.write_bytes(&equivalence_hash(&object));
        }
    }
}

/// `PlainCollectionHeader`: the equivalence kind and the element's flags.
fn collection_header(e: &mut Encoder<'_>, element: &DynamicType, kind: EquivalenceKind) {
    e.write_u8(if fully_descriptive(element) {
        EK_BOTH
    } else {
        kind.code()
    });
    e.write_u16(TRY_CONSTRUCT1);
}

/// The named types `ty` refers to, transitively, in the order of a depth-first walk that
/// visits each member's type in declaration order (what Cyclone's IDL compiler lists), each
/// once, `ty` itself excluded.
pub fn dependencies(ty: &DynamicType) -> Vec<DynamicType> {
    fn walk(ty: &DynamicType, out: &mut Vec<DynamicType>) {
        let visit = |t: &DynamicType, out: &mut Vec<DynamicType>| {
            let named = matches!(
                t,
                DynamicType::Struct(_)
                    | DynamicType::Union(_)
                    | DynamicType::Enum(_)
                    | DynamicType::Bitmask(_)
            );
            if named {
                if !out.contains(t) {
                    out.push(t.clone());
                    walk(t, out);
                }
            } else {
                walk(t, out);
            }
        };
        match ty {
            DynamicType::Struct(s) => {
                if let Some(base) = &s.base {
                    visit(&DynamicType::Struct(base.clone()), out);
                }
                for m in &s.members {
                    visit(&m.ty, out);
                }
            }
            DynamicType::Union(u) => {
                visit(&u.discriminator, out);
                for c in &u.cases {
                    visit(&c.ty, out);
                }
            }
            DynamicType::Sequence { element, .. } | DynamicType::Array { element, .. } => {
                visit(element, out)
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(ty, &mut out);
    out
}

/// The `TypeInformation` of `ty` (the value of `PID_TYPE_INFORMATION`): its minimal and
/// complete identifiers with their TypeObjects' sizes, and those of every type it depends on.
pub fn type_information(ty: &DynamicType) -> Vec<u8> {
    let deps = dependencies(ty);
    let mut buf = Vec::with_capacity(256);
    let mut e = encoder(&mut buf);
    delimited(&mut e, |e| {
        for (id, kind) in [
            (0x1001u32, EquivalenceKind::Minimal),
            (0x1002u32, EquivalenceKind::Complete),
        ] {
            // EMHEADER: length code 4 (a NEXTINT follows), member id; then the appendable
            // TypeIdentifierWithDependencies.
            e.write_u32((4 << 28) | id);
            delimited(e, |e| {
                delimited(e, |e| {
                    delimited(e, |e| with_size(e, ty, kind));
                    let mut listed: Vec<Vec<u8>> = Vec::new();
                    for d in &deps {
                        let id = type_identifier(d, kind);
                        if !listed.contains(&id) {
                            listed.push(id);
                        }
                    }
                    e.write_i32(listed.len() as i32);
                    let unique: Vec<&DynamicType> = {
                        let mut seen: Vec<Vec<u8>> = Vec::new();
                        deps.iter()
                            .filter(|d| {
                                let id = type_identifier(d, kind);
                                let new = !seen.contains(&id);
                                seen.push(id);
                                new
                            })
                            .collect()
                    };
                    sequence(e, &unique, |e, d| delimited(e, |e| with_size(e, d, kind)));
                })
            });
        }
    });
    buf
}

/// `TypeIdentifierWithSize` (its members; the caller writes the DHEADER).
fn with_size(e: &mut Encoder<'_>, ty: &DynamicType, kind: EquivalenceKind) {
    let object = type_object(ty, kind).unwrap_or_default();
    e.write_u8(kind.code());
    e.write_bytes(&equivalence_hash(&object));
    e.write_u32(object.len() as u32);
}

/// Why a TypeObject could not become a runtime type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypeObjectError {
    /// The bytes are not a TypeObject (truncated, a length past the end, …).
    #[error("malformed type object: {0}")]
    Malformed(#[from] crate::DecodeError),
    /// A construct this implementation does not read yet (minimal objects, annotations,
    /// strongly connected components, maps, aliases, …).
    #[error("unsupported in a type object: {0}")]
    Unsupported(&'static str),
    /// A type it refers to, whose TypeObject was not given.
    #[error("unknown type {}", hex_id(.0))]
    UnknownType(Vec<u8>),
    /// Types nested deeper than [`MAX_TYPE_DEPTH`] (or referring to themselves).
    #[error("types nested deeper than {MAX_TYPE_DEPTH}")]
    TooDeep,
}

fn hex_id(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// How deep types (named ones and collections) may nest in a type read from a peer.
pub const MAX_TYPE_DEPTH: usize = 32;

type Lookup<'l> = &'l dyn Fn(&[u8]) -> Option<&'l [u8]>;

/// The runtime type a COMPLETE TypeObject describes; `lookup` gives the TypeObject of each
/// type it refers to by its identifier (`f2` and the 14-byte hash). Every byte is the
/// sender's: counts are checked against the input, nesting and references are bounded, and
/// nothing fails by panicking.
pub fn parse_complete(object: &[u8], lookup: Lookup<'_>) -> Result<DynamicType, TypeObjectError> {
    parse_object(object, lookup, 0)
}

fn parse_object(
    object: &[u8],
    lookup: Lookup<'_>,
    depth: usize,
) -> Result<DynamicType, TypeObjectError> {
    use crate::Decoder;
    use std::sync::Arc;
    if depth > MAX_TYPE_DEPTH {
        return Err(TypeObjectError::TooDeep);
    }
    let d = &mut Decoder::new(object, XcdrVersion::Xcdr2, Endianness::Little);
    let outer = d.begin_delimited("TypeObject")?;
    if d.read_u8()? != EK_COMPLETE {
        return Err(TypeObjectError::Unsupported(
            "a type object other than COMPLETE",
        ));
    }
    let tk = d.read_u8()?;
    let ty = match tk {
        TK_STRUCTURE => {
            let ext = extensibility(d.read_u16()?);
            let header = d.begin_delimited("struct header")?;
            let base = match read_identifier(d, lookup, depth)? {
                None => None,
                Some(DynamicType::Struct(s)) => Some(s),
                Some(_) => return Err(TypeObjectError::Unsupported("a base that is not a struct")),
            };
            let name = read_type_detail(d)?;
            d.restore(header);
            let (seq, count) = sequence_count(d, "struct members")?;
            let mut members = Vec::with_capacity(count.min(d.remaining() / 8));
            for _ in 0..count {
                let m = d.begin_delimited("struct member")?;
                let id = d.read_u32()?;
                let flags = d.read_u16()?;
                let ty = read_identifier(d, lookup, depth)?
                    .ok_or(TypeObjectError::Unsupported("a member of no type"))?;
                let name = read_member_detail(d)?;
                d.restore(m);
                members.push(super::Member {
                    name,
                    id,
                    ty,
                    key: flags & IS_KEY != 0,
                    optional: flags & IS_OPTIONAL != 0,
                    must_understand: flags & IS_MUST_UNDERSTAND != 0,
                });
            }
            d.restore(seq);
            DynamicType::Struct(Arc::new(StructType {
                name,
                extensibility: ext,
                base,
                members,
            }))
        }
        TK_UNION => {
            let ext = extensibility(d.read_u16()?);
            let header = d.begin_delimited("union header")?;
            let name = read_type_detail(d)?;
            d.restore(header);
            let disc = d.begin_delimited("discriminator")?;
            let _flags = d.read_u16()?;
            let discriminator = read_identifier(d, lookup, depth)?
                .ok_or(TypeObjectError::Unsupported("a discriminator of no type"))?;
            read_annotations(d)?;
            d.restore(disc);
            let (seq, count) = sequence_count(d, "union members")?;
            let mut cases = Vec::with_capacity(count.min(d.remaining() / 8));
            for _ in 0..count {
                let m = d.begin_delimited("union member")?;
                let _id = d.read_u32()?;
                let flags = d.read_u16()?;
                let ty = read_identifier(d, lookup, depth)?
                    .ok_or(TypeObjectError::Unsupported("a branch of no type"))?;
                let labels = d.read_count("labels", 4)?;
                let mut label_values = Vec::with_capacity(labels);
                for _ in 0..labels {
                    label_values.push(i64::from(d.read_i32()?));
                }
                let name = read_member_detail(d)?;
                d.restore(m);
                cases.push(super::UnionCase {
                    name,
                    labels: label_values,
                    default: flags & IS_DEFAULT != 0,
                    ty,
                });
            }
            d.restore(seq);
            DynamicType::Union(Arc::new(UnionType {
                name,
                extensibility: ext,
                discriminator,
                cases,
                no_member: Vec::new(),
                default_discriminator: None,
            }))
        }
        TK_ENUM => {
            let _flags = d.read_u16()?;
            let header = d.begin_delimited("enum header")?;
            let bit_bound = u32::from(d.read_u16()?);
            let name = read_type_detail(d)?;
            d.restore(header);
            let (seq, count) = sequence_count(d, "enumerators")?;
            let mut enumerators = Vec::with_capacity(count.min(d.remaining() / 8));
            let mut default_at = 0;
            for i in 0..count {
                let l = d.begin_delimited("enumerator")?;
                let common = d.begin_delimited("enumerator value")?;
                let value = d.read_i32()?;
                let flags = d.read_u16()?;
                d.restore(common);
                let name = read_member_detail(d)?;
                d.restore(l);
                if flags & IS_DEFAULT != 0 {
                    default_at = i;
                }
                enumerators.push((name, value));
            }
            d.restore(seq);
            // The default enumerator first (the value a missing member takes).
            if default_at < enumerators.len() {
                let default = enumerators.remove(default_at);
                enumerators.insert(0, default);
            }
            DynamicType::Enum(Arc::new(super::EnumType {
                name,
                bit_bound,
                enumerators,
            }))
        }
        TK_BITMASK => {
            let body = d.begin_delimited("bitmask")?;
            let _flags = d.read_u16()?;
            let header = d.begin_delimited("bitmask header")?;
            let bit_bound = u32::from(d.read_u16()?);
            let name = read_type_detail(d)?;
            d.restore(header);
            let (seq, count) = sequence_count(d, "bit flags")?;
            let mut flags = Vec::with_capacity(count.min(d.remaining() / 8));
            for _ in 0..count {
                let f = d.begin_delimited("bit flag")?;
                let position = d.read_u16()?;
                let _flags = d.read_u16()?;
                let name = read_member_detail(d)?;
                d.restore(f);
                flags.push((name, position));
            }
            d.restore(seq);
            d.restore(body);
            DynamicType::Bitmask(Arc::new(super::BitmaskType {
                name,
                bit_bound,
                flags,
            }))
        }
        _ => {
            return Err(TypeObjectError::Unsupported(
                "a type kind other than struct, union, enum, bitmask",
            ))
        }
    };
    d.restore(outer);
    Ok(ty)
}

fn extensibility(flags: u16) -> Extensibility {
    if flags & IS_MUTABLE != 0 {
        Extensibility::Mutable
    } else if flags & IS_APPENDABLE != 0 {
        Extensibility::Appendable
    } else {
        Extensibility::Final
    }
}

/// The DHEADER and count of a sequence of appendable elements: the window to restore after
/// the elements, and how many there are (each at least its own DHEADER).
fn sequence_count(
    d: &mut crate::Decoder<'_>,
    what: &'static str,
) -> Result<(usize, usize), TypeObjectError> {
    let outer = d.begin_delimited(what)?;
    Ok((outer, d.read_count(what, 4)?))
}

/// Absent annotations (one presence byte each); present ones are not read yet.
fn read_annotations(d: &mut crate::Decoder<'_>) -> Result<(), TypeObjectError> {
    for _ in 0..2 {
        if d.read_u8()? != 0 {
            return Err(TypeObjectError::Unsupported("annotations"));
        }
    }
    Ok(())
}

/// `CompleteTypeDetail`: annotations, then the type's name.
fn read_type_detail(d: &mut crate::Decoder<'_>) -> Result<String, TypeObjectError> {
    read_annotations(d)?;
    Ok(d.read_str()?.to_owned())
}

/// `CompleteMemberDetail`: the name, then annotations.
fn read_member_detail(d: &mut crate::Decoder<'_>) -> Result<String, TypeObjectError> {
    let name = d.read_str()?.to_owned();
    read_annotations(d)?;
    Ok(name)
}

/// A TypeIdentifier: `None` for TK_NONE (no base).
fn read_identifier(
    d: &mut crate::Decoder<'_>,
    lookup: Lookup<'_>,
    depth: usize,
) -> Result<Option<DynamicType>, TypeObjectError> {
    if depth > MAX_TYPE_DEPTH {
        return Err(TypeObjectError::TooDeep);
    }
    let ek = d.read_u8()?;
    let collection = |d: &mut crate::Decoder<'_>| -> Result<(), TypeObjectError> {
        let _equivalence = d.read_u8()?;
        let _element_flags = d.read_u16()?;
        Ok(())
    };
    let element = |d: &mut crate::Decoder<'_>| -> Result<Box<DynamicType>, TypeObjectError> {
        read_identifier(d, lookup, depth + 1)?
            .map(Box::new)
            .ok_or(TypeObjectError::Unsupported("a collection of no type"))
    };
    Ok(Some(match ek {
        0x00 => return Ok(None),
        0x01 => DynamicType::Bool,
        0x02 => DynamicType::Octet,
        0x03 => DynamicType::Int16,
        0x04 => DynamicType::Int32,
        0x05 => DynamicType::Int64,
        0x06 => DynamicType::UInt16,
        0x07 => DynamicType::UInt32,
        0x08 => DynamicType::UInt64,
        0x09 => DynamicType::Float32,
        0x0a => DynamicType::Float64,
        0x0c => DynamicType::Int8,
        0x0d => DynamicType::UInt8,
        0x10 => DynamicType::Char,
        0x11 => DynamicType::WChar,
        TI_STRING8_SMALL => bounded_string(usize::from(d.read_u8()?)),
        TI_STRING8_LARGE => bounded_string(d.read_u32()? as usize),
        TI_STRING16_SMALL => {
            d.read_u8()?;
            DynamicType::WString
        }
        0x73 => {
            d.read_u32()?;
            DynamicType::WString
        }
        TI_PLAIN_SEQUENCE_SMALL | TI_PLAIN_SEQUENCE_LARGE => {
            collection(d)?;
            let bound = if ek == TI_PLAIN_SEQUENCE_SMALL {
                usize::from(d.read_u8()?)
            } else {
                d.read_u32()? as usize
            };
            DynamicType::Sequence {
                element: element(d)?,
                bound: (bound != 0).then_some(bound),
            }
        }
        TI_PLAIN_ARRAY_SMALL | TI_PLAIN_ARRAY_LARGE => {
            collection(d)?;
            let small = ek == TI_PLAIN_ARRAY_SMALL;
            let count = d.read_count("array bounds", if small { 1 } else { 4 })?;
            let mut dimensions = Vec::with_capacity(count);
            for _ in 0..count {
                dimensions.push(if small {
                    usize::from(d.read_u8()?)
                } else {
                    d.read_u32()? as usize
                });
            }
            DynamicType::Array {
                element: element(d)?,
                dimensions,
            }
        }
        EK_COMPLETE => {
            let hash = d.bytes(14, "equivalence hash")?;
            let mut id = vec![EK_COMPLETE];
            id.extend_from_slice(hash);
            let object = lookup(&id).ok_or(TypeObjectError::UnknownType(id))?;
            parse_object(object, lookup, depth + 1)?
        }
        EK_MINIMAL => return Err(TypeObjectError::Unsupported("a minimal type identifier")),
        _ => return Err(TypeObjectError::Unsupported("this kind of type identifier")),
    }))
}

fn bounded_string(bound: usize) -> DynamicType {
    DynamicType::String {
        bound: (bound != 0).then_some(bound),
    }
}
