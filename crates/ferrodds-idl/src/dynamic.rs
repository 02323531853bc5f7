//! A type declared in IDL as a runtime type ([`ferrodds_cdr::dynamic::DynamicType`]): what
//! the tools use to read and write a topic from an IDL file without generated code
//! (`ferrodds echo --idl`, `ferrodds pub --idl`), and the way back of
//! [`ferrodds_cdr::dynamic::to_idl`], so that IDL written from a type reads back as the same
//! type.
//!
//! The runtime type is the one `#[derive(Cdr)]` gives the code [`crate::Compiler`] generates
//! for the same IDL: member ids counted as XTypes counts them (sequential from the base's
//! member count, or from the last `@id`; hashed with `@autoid(HASH)` and `@hashid`),
//! extensibility `@final` where none is written, enums of 32 bits unless `@bit_bound` says
//! otherwise, typedefs resolved, array dimensions of a member and of its typedef'd type
//! joined into one array.

use std::collections::HashMap;
use std::sync::Arc;

use ferrodds_cdr::dynamic::{
    BitmaskType, DynamicType, EnumType, Member as DynamicMember, StructType, UnionCase as Case,
    UnionType,
};
use ferrodds_cdr::Extensibility as CdrExtensibility;

use crate::ast::{
    AutoId, Extensibility, Member, Primitive, ScopedName, Specification, Struct, TypeDef, TypeSpec,
};

/// Why a name of a specification has no runtime type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicTypeError {
    /// No struct, union, enum, bitmask or typedef of that name (the names there are listed).
    #[error("no type {name} in the IDL (types there: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The types the IDL declares, comma-separated.
        known: String,
    },
    /// The type contains itself (a recursive type), which runtime types cannot hold.
    #[error("{name} contains itself, which runtime types cannot describe")]
    Recursive {
        /// The type met again.
        name: String,
    },
    /// A bound, dimension, enumerator value or flag position out of the runtime type's range.
    #[error("{name}: {what} out of range")]
    OutOfRange {
        /// The type.
        name: String,
        /// What is out of range.
        what: String,
    },
}

/// The runtime type of `name` (`a::b::C`, a leading `::` allowed) declared in `spec`.
pub fn dynamic_type(spec: &Specification, name: &str) -> Result<DynamicType, DynamicTypeError> {
    let scoped = ScopedName(
        name.trim_start_matches("::")
            .split("::")
            .map(str::to_owned)
            .collect(),
    );
    let mut b = Builder {
        index: spec.index(),
        building: Vec::new(),
        done: HashMap::new(),
    };
    if !b.index.contains_key(&scoped) {
        let mut known: Vec<String> = b.index.keys().map(ToString::to_string).collect();
        known.sort();
        return Err(DynamicTypeError::Unknown {
            name: name.to_owned(),
            known: known.join(", "),
        });
    }
    b.named(&scoped)
}

struct Builder<'s> {
    index: HashMap<ScopedName, TypeDef<'s>>,
    /// The named types being built, to catch recursion.
    building: Vec<ScopedName>,
    /// Named types built, each once (so that a type used twice is one `Arc`).
    done: HashMap<ScopedName, DynamicType>,
}

fn out_of_range(name: &ScopedName, what: &str) -> DynamicTypeError {
    DynamicTypeError::OutOfRange {
        name: name.to_string(),
        what: what.to_owned(),
    }
}

fn extensibility(e: Option<Extensibility>) -> CdrExtensibility {
    match e {
        None | Some(Extensibility::Final) => CdrExtensibility::Final,
        Some(Extensibility::Appendable) => CdrExtensibility::Appendable,
        Some(Extensibility::Mutable) => CdrExtensibility::Mutable,
    }
}

fn primitive(p: Primitive) -> DynamicType {
    match p {
        Primitive::Boolean => DynamicType::Bool,
        Primitive::Octet => DynamicType::Octet,
        Primitive::Char => DynamicType::Char,
        Primitive::WChar => DynamicType::WChar,
        Primitive::Int8 => DynamicType::Int8,
        Primitive::UInt8 => DynamicType::UInt8,
        Primitive::Int16 => DynamicType::Int16,
        Primitive::UInt16 => DynamicType::UInt16,
        Primitive::Int32 => DynamicType::Int32,
        Primitive::UInt32 => DynamicType::UInt32,
        Primitive::Int64 => DynamicType::Int64,
        Primitive::UInt64 => DynamicType::UInt64,
        Primitive::Float => DynamicType::Float32,
        Primitive::Double => DynamicType::Float64,
    }
}

/// `ty` as an array of `dimensions` (outermost first); an array of arrays is one array.
fn array(ty: DynamicType, dimensions: &[u32]) -> DynamicType {
    if dimensions.is_empty() {
        return ty;
    }
    let mut dims: Vec<usize> = dimensions.iter().map(|d| *d as usize).collect();
    match ty {
        DynamicType::Array {
            element,
            dimensions: inner,
        } => {
            dims.extend(inner);
            DynamicType::Array {
                element,
                dimensions: dims,
            }
        }
        other => DynamicType::Array {
            element: Box::new(other),
            dimensions: dims,
        },
    }
}

impl Builder<'_> {
    fn spec(&mut self, ty: &TypeSpec) -> Result<DynamicType, DynamicTypeError> {
        Ok(match ty {
            TypeSpec::Primitive(p) => primitive(*p),
            TypeSpec::String(bound) => DynamicType::String {
                bound: bound.map(|b| b as usize),
            },
            TypeSpec::WString(_) => DynamicType::WString,
            TypeSpec::Sequence(element, bound) => DynamicType::Sequence {
                element: Box::new(self.spec(element)?),
                bound: bound.map(|b| b as usize),
            },
            TypeSpec::Named(name) => self.named(name)?,
        })
    }

    fn named(&mut self, name: &ScopedName) -> Result<DynamicType, DynamicTypeError> {
        if let Some(done) = self.done.get(name) {
            return Ok(done.clone());
        }
        if self.building.contains(name) {
            return Err(DynamicTypeError::Recursive {
                name: name.to_string(),
            });
        }
        let Some(def) = self.index.get(name).copied() else {
            // The parser resolved every name; one missing here is a forward declaration
            // never completed.
            return Err(DynamicTypeError::Unknown {
                name: name.to_string(),
                known: String::new(),
            });
        };
        self.building.push(name.clone());
        let built = self.definition(name, def);
        self.building.pop();
        let built = built?;
        self.done.insert(name.clone(), built.clone());
        Ok(built)
    }

    fn definition(
        &mut self,
        name: &ScopedName,
        def: TypeDef<'_>,
    ) -> Result<DynamicType, DynamicTypeError> {
        Ok(match def {
            TypeDef::Typedef(t) => {
                let ty = self.spec(&t.ty)?;
                array(ty, &t.dimensions)
            }
            TypeDef::Enum(e) => DynamicType::Enum(Arc::new(EnumType {
                name: name.to_string(),
                bit_bound: e.bit_bound.unwrap_or(32),
                enumerators: e
                    .enumerators
                    .iter()
                    .map(|en| {
                        i32::try_from(en.value)
                            .map(|v| (en.name.clone(), v))
                            .map_err(|_| out_of_range(name, &format!("value of {}", en.name)))
                    })
                    .collect::<Result<_, _>>()?,
            })),
            TypeDef::Bitmask(b) => DynamicType::Bitmask(Arc::new(BitmaskType {
                name: name.to_string(),
                bit_bound: b.bit_bound,
                flags: b
                    .flags
                    .iter()
                    .map(|f| {
                        u16::try_from(f.position)
                            .map(|p| (f.name.clone(), p))
                            .map_err(|_| out_of_range(name, &format!("position of {}", f.name)))
                    })
                    .collect::<Result<_, _>>()?,
            })),
            TypeDef::Struct(s) => DynamicType::Struct(self.structure(s)?),
            TypeDef::Union(u) => {
                let discriminator = self.spec(&u.discriminator)?;
                let mut cases = Vec::with_capacity(u.cases.len());
                for c in &u.cases {
                    let mut labels = Vec::with_capacity(c.labels.len());
                    for l in &c.labels {
                        let v = l
                            .as_integer()
                            .and_then(|v| i64::try_from(v).ok())
                            .ok_or_else(|| out_of_range(name, "a case label"))?;
                        labels.push(v);
                    }
                    let ty = self.member_type(&c.member)?;
                    cases.push(Case {
                        name: c.member.name.clone(),
                        labels,
                        default: c.default,
                        ty,
                    });
                }
                DynamicType::Union(Arc::new(UnionType {
                    name: name.to_string(),
                    extensibility: extensibility(u.extensibility),
                    discriminator,
                    cases,
                    no_member: Vec::new(),
                    default_discriminator: None,
                }))
            }
        })
    }

    fn member_type(&mut self, m: &Member) -> Result<DynamicType, DynamicTypeError> {
        let ty = self.spec(&m.ty)?;
        Ok(array(ty, &m.dimensions))
    }

    fn structure(&mut self, s: &Struct) -> Result<Arc<StructType>, DynamicTypeError> {
        let base = match &s.base {
            Some(b) => match self.named(b)? {
                DynamicType::Struct(base) => Some(base),
                _ => {
                    return Err(DynamicTypeError::Unknown {
                        name: b.to_string(),
                        known: "a struct".into(),
                    })
                }
            },
            None => None,
        };
        let mut next = base.as_ref().map_or(0, |b| b.member_count() as u32);
        let mut members = Vec::with_capacity(s.members.len());
        for m in &s.members {
            let id = match (&m.id, &m.hash_id, s.autoid) {
                (Some(id), _, _) => *id,
                (None, Some(h), _) => crate::rust_gen::hashed_id(h),
                (None, None, AutoId::Hash) => crate::rust_gen::hashed_id(&m.name),
                (None, None, AutoId::Sequential) => next,
            };
            next = id.wrapping_add(1);
            let mut member = DynamicMember::new(&m.name, id, self.member_type(m)?);
            member.key = m.key;
            member.optional = m.optional;
            member.must_understand = m.must_understand;
            members.push(member);
        }
        Ok(Arc::new(StructType {
            name: s.name.to_string(),
            extensibility: extensibility(s.extensibility),
            base,
            members,
        }))
    }
}

#[cfg(test)]
mod tests {
    use ferrodds_cdr::dynamic::{to_idl, UnionCase};

    use super::*;

    fn rich() -> DynamicType {
        let color = Arc::new(EnumType {
            name: "demo::Color".into(),
            bit_bound: 8,
            enumerators: vec![("RED".into(), 0), ("GREEN".into(), 1), ("BLUE".into(), 7)],
        });
        let point = Arc::new(StructType {
            name: "geo::Point".into(),
            extensibility: CdrExtensibility::Final,
            base: None,
            members: vec![
                DynamicMember::new("x", 0, DynamicType::Float64),
                DynamicMember::new("y", 1, DynamicType::Float64),
            ],
        });
        let base = Arc::new(StructType {
            name: "demo::Base".into(),
            extensibility: CdrExtensibility::Appendable,
            base: None,
            members: vec![DynamicMember::new("stamp", 0, DynamicType::Int64).key()],
        });
        let flags = Arc::new(BitmaskType {
            name: "demo::Flags".into(),
            bit_bound: 16,
            flags: vec![("A".into(), 0), ("B".into(), 3)],
        });
        let choice = Arc::new(UnionType {
            name: "demo::Choice".into(),
            extensibility: CdrExtensibility::Appendable,
            discriminator: DynamicType::Enum(Arc::clone(&color)),
            cases: vec![
                UnionCase {
                    name: "where".into(),
                    labels: vec![0, 1],
                    default: false,
                    ty: DynamicType::Struct(Arc::clone(&point)),
                },
                UnionCase {
                    name: "note".into(),
                    labels: vec![],
                    default: true,
                    ty: DynamicType::String { bound: Some(20) },
                },
            ],
            no_member: vec![],
            default_discriminator: None,
        });
        DynamicType::Struct(Arc::new(StructType {
            name: "demo::Top".into(),
            extensibility: CdrExtensibility::Mutable,
            base: Some(base),
            members: vec![
                DynamicMember::new("id", 1, DynamicType::UInt32).key(),
                DynamicMember::new("color", 2, DynamicType::Enum(color)),
                DynamicMember::new("choice", 10, DynamicType::Union(choice)),
                DynamicMember::new(
                    "path",
                    11,
                    DynamicType::Sequence {
                        element: Box::new(DynamicType::Struct(point)),
                        bound: Some(16),
                    },
                )
                .optional(),
                DynamicMember::new(
                    "grid",
                    12,
                    DynamicType::Array {
                        element: Box::new(DynamicType::Int16),
                        dimensions: vec![2, 3],
                    },
                ),
                DynamicMember::new(
                    "rows",
                    13,
                    DynamicType::Sequence {
                        element: Box::new(DynamicType::Array {
                            element: Box::new(DynamicType::Octet),
                            dimensions: vec![4],
                        }),
                        bound: None,
                    },
                ),
                DynamicMember::new("flags", 14, DynamicType::Bitmask(flags)),
                DynamicMember::new("wide", 15, DynamicType::WString),
                DynamicMember::new("letter", 16, DynamicType::Char),
            ],
        }))
    }

    #[test]
    fn idl_written_from_a_type_reads_back_as_that_type() {
        let ty = rich();
        let idl = to_idl(&ty);
        let spec = crate::parse_str("rich.idl", &idl).unwrap_or_else(|e| panic!("{e}\n{idl}"));
        assert_eq!(dynamic_type(&spec, "demo::Top").unwrap(), ty, "\n{idl}");
        assert_eq!(dynamic_type(&spec, "::demo::Top").unwrap(), ty);
    }

    #[test]
    fn ids_count_as_xtypes_counts_them() {
        let spec = crate::parse_str(
            "ids.idl",
            "@appendable struct B { long a; long b; };
             @mutable struct D : B { long c; @id(10) long d; long e; };
             @mutable @autoid(HASH) struct H { long x; @hashid(\"other\") long y; };
             typedef long Row[3]; struct G { Row grid[2]; };",
        )
        .unwrap();
        let DynamicType::Struct(d) = dynamic_type(&spec, "D").unwrap() else {
            panic!("a struct");
        };
        let ids: Vec<u32> = d.members.iter().map(|m| m.id).collect();
        assert_eq!(ids, [2, 10, 11]);
        let DynamicType::Struct(h) = dynamic_type(&spec, "H").unwrap() else {
            panic!("a struct");
        };
        assert_eq!(h.members[0].id, crate::rust_gen::hashed_id("x"));
        assert_eq!(h.members[1].id, crate::rust_gen::hashed_id("other"));
        let DynamicType::Struct(g) = dynamic_type(&spec, "G").unwrap() else {
            panic!("a struct");
        };
        assert_eq!(
            g.members[0].ty,
            DynamicType::Array {
                element: Box::new(DynamicType::Int32),
                dimensions: vec![2, 3]
            }
        );
    }

    #[test]
    fn unknown_and_recursive_types_are_errors() {
        let spec = crate::parse_str(
            "r.idl",
            "struct Node; struct Node { sequence<Node> children; }; struct Leaf { long v; };",
        )
        .unwrap();
        assert_eq!(
            dynamic_type(&spec, "Tree"),
            Err(DynamicTypeError::Unknown {
                name: "Tree".into(),
                known: "Leaf, Node".into()
            })
        );
        assert_eq!(
            dynamic_type(&spec, "Node"),
            Err(DynamicTypeError::Recursive {
                name: "Node".into()
            })
        );
    }
}
