//! Type assignability (DDS-XTypes 1.3 §7.2.4): whether a reader of type T1 can take the
//! samples of a writer of type T2 — `T1 is-assignable-from T2` — under the options of the
//! reader's TYPE_CONSISTENCY_ENFORCEMENT QoS.
//!
//! The rules, as the spec states them and Cyclone DDS applies them (it is the peer the tests
//! run against):
//!
//! - Primitives: the same kind (`octet` is not `uint8`). A bitmask is assignable from a
//!   bitmask of the same bit bound, or from the unsigned integer of its size (and back).
//! - Strings: the same character type; bounds only when `ignore_string_bounds` is off (T1's
//!   bound at least T2's). Sequences likewise with `ignore_sequence_bounds`, then the element
//!   types strongly assignable. Arrays: the same dimensions, elements strongly assignable.
//!   *Strongly* assignable: equal, or assignable and T2 delimited (primitive, string,
//!   enumerated, appendable or mutable, or a collection of such).
//! - Enums: literals of the same value have the same name; all literals alike (enums are
//!   final here: runtime types do not carry an enum's extensibility).
//! - Structs: the same extensibility; members matched by id, with the same name (unless
//!   `ignore_member_names`) and assignable types (nested keys erased); key members, and
//!   non-optional must-understand ones, present on both sides; string, sequence and
//!   enumerated key members no wider in T2 than in T1; at least one member in common. Final:
//!   the same members, in order, optional alike, strongly assignable. Appendable: the same
//!   for the members both have by position (one is a prefix of the other). Mutable: any
//!   subset. `prevent_type_widening`: T2 has no member T1 lacks.
//! - Unions: the same extensibility, strongly assignable discriminators, branches of the
//!   same id with the same name, the branches the labels of each select assignable, at least
//!   one label in common; final (or `prevent_type_widening`): the same labels.

use std::fmt;
use std::sync::Arc;

use super::{DynamicType, Member, StructType, UnionType};
use crate::Extensibility;

/// The options of TYPE_CONSISTENCY_ENFORCEMENT that decide assignability (its kind and
/// `force_type_validation` decide whether assignability is consulted at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssignabilityRules {
    /// Sequence bounds are not compared (default true).
    pub ignore_sequence_bounds: bool,
    /// String bounds are not compared (default true).
    pub ignore_string_bounds: bool,
    /// Member names are not compared, only ids (default false).
    pub ignore_member_names: bool,
    /// T2 may not have members (or union labels) T1 lacks (default false).
    pub prevent_type_widening: bool,
}

impl Default for AssignabilityRules {
    fn default() -> Self {
        AssignabilityRules {
            ignore_sequence_bounds: true,
            ignore_string_bounds: true,
            ignore_member_names: false,
            prevent_type_widening: false,
        }
    }
}

/// Why T1 is not assignable from T2.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mismatch {
    /// Different kinds of type (a struct and a union, `octet` and `uint8`, …).
    DifferentKinds,
    /// Final, appendable and mutable do not mix.
    DifferentExtensibility,
    /// A bound of T2 exceeds T1's, or array dimensions differ.
    Bound,
    /// Members (or union branches, enum literals) of the same id have different names.
    NameDiffers {
        /// The member id (an enum literal's value).
        id: u32,
    },
    /// A member one side must have (key, must-understand, or every member of a final type,
    /// or with `prevent_type_widening`) is missing on the other.
    MissingMember {
        /// Its id.
        id: u32,
    },
    /// Members at the same position of a final or appendable struct differ in id or in
    /// being optional.
    MemberMismatch {
        /// The position.
        index: usize,
    },
    /// A key member is wider in T2 (a longer string or sequence, more enum literals).
    KeyWidened {
        /// Its id.
        id: u32,
    },
    /// The two types have no member (or union label) in common.
    NoCommonMember,
    /// An enum literal or union label of one side is missing on the other (final types).
    MissingCase,
    /// The reader's TYPE_CONSISTENCY_ENFORCEMENT is DISALLOW_TYPE_COERCION and the types
    /// are not the same.
    NotIdentical,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::DifferentKinds => f.write_str("different kinds of type"),
            Mismatch::DifferentExtensibility => f.write_str("different extensibility"),
            Mismatch::Bound => f.write_str("a bound or dimension differs"),
            Mismatch::NameDiffers { id } => write!(f, "member {id} has different names"),
            Mismatch::MissingMember { id } => write!(f, "member {id} is missing on one side"),
            Mismatch::MemberMismatch { index } => {
                write!(f, "the members at position {index} differ")
            }
            Mismatch::KeyWidened { id } => {
                write!(f, "key member {id} is wider in the writer's type")
            }
            Mismatch::NoCommonMember => f.write_str("no member in common"),
            Mismatch::MissingCase => f.write_str("an enumerator or union label is missing"),
            Mismatch::NotIdentical => {
                f.write_str("not the same type, and the reader disallows type coercion")
            }
        }
    }
}

/// T1 is not assignable from T2: what failed, and where (the reader's type names and member
/// names leading to it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} not assignable: {mismatch}", path.join("."))]
pub struct NotAssignable {
    /// The path to the mismatch, from the top-level type.
    pub path: Vec<String>,
    /// What failed.
    pub mismatch: Mismatch,
}

type Check = Result<(), NotAssignable>;

fn fail(mismatch: Mismatch) -> Check {
    Err(NotAssignable {
        path: Vec::new(),
        mismatch,
    })
}

/// Adds `at` to the front of an error's path while it unwinds.
fn at(at: &str, r: Check) -> Check {
    r.map_err(|mut e| {
        e.path.insert(0, at.to_owned());
        e
    })
}

/// Whether a reader of `t1` takes the samples of a writer of `t2` (see the module
/// documentation for the rules).
pub fn is_assignable(t1: &DynamicType, t2: &DynamicType, rules: &AssignabilityRules) -> Check {
    at(t1.name(), assignable(t1, t2, rules, false))
}

fn assignable(
    t1: &DynamicType,
    t2: &DynamicType,
    rules: &AssignabilityRules,
    key_erased: bool,
) -> Check {
    use DynamicType as T;
    if t1 == t2 {
        return Ok(());
    }
    match (t1, t2) {
        (T::Bitmask(b1), T::Bitmask(b2)) => bound_eq(b1.bit_bound == b2.bit_bound),
        (T::Bitmask(b), other) | (other, T::Bitmask(b)) => match (other, b.bit_bound) {
            (T::UInt8, 1..=8)
            | (T::UInt16, 9..=16)
            | (T::UInt32, 17..=32)
            | (T::UInt64, 33..=64) => Ok(()),
            (T::UInt8 | T::UInt16 | T::UInt32 | T::UInt64, _) => fail(Mismatch::Bound),
            _ => fail(Mismatch::DifferentKinds),
        },
        (T::Enum(e1), T::Enum(e2)) => {
            for (name, value) in &e1.enumerators {
                match e2.enumerators.iter().find(|(_, v)| v == value) {
                    Some((n2, _)) if n2 != name => {
                        return fail(Mismatch::NameDiffers { id: *value as u32 })
                    }
                    Some(_) => {}
                    None => return fail(Mismatch::MissingCase),
                }
            }
            if e2.enumerators.len() != e1.enumerators.len() {
                return fail(Mismatch::MissingCase);
            }
            Ok(())
        }
        (T::String { bound: b1 }, T::String { bound: b2 }) => {
            bound_eq(rules.ignore_string_bounds || bound_fits(*b1, *b2))
        }
        (T::WString, T::WString) => Ok(()),
        (
            T::Sequence {
                element: e1,
                bound: b1,
            },
            T::Sequence {
                element: e2,
                bound: b2,
            },
        ) => {
            bound_eq(rules.ignore_sequence_bounds || bound_fits(*b1, *b2))?;
            strongly(e1, e2, rules)
        }
        (
            T::Array {
                element: e1,
                dimensions: d1,
            },
            T::Array {
                element: e2,
                dimensions: d2,
            },
        ) => {
            bound_eq(d1 == d2)?;
            strongly(e1, e2, rules)
        }
        (T::Struct(s1), T::Struct(s2)) => structs(s1, s2, rules, key_erased),
        (T::Union(u1), T::Union(u2)) => unions(u1, u2, rules),
        _ => fail(Mismatch::DifferentKinds),
    }
}

fn bound_eq(ok: bool) -> Check {
    if ok {
        Ok(())
    } else {
        fail(Mismatch::Bound)
    }
}

/// T1's bound holds T2's (`None`: unbounded).
fn bound_fits(b1: Option<usize>, b2: Option<usize>) -> bool {
    match (b1, b2) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(b1), Some(b2)) => b1 >= b2,
    }
}

/// Equal, or assignable and T2 delimited (its end can be found without knowing it).
fn strongly(t1: &DynamicType, t2: &DynamicType, rules: &AssignabilityRules) -> Check {
    if t1 == t2 {
        return Ok(());
    }
    if !delimited(t2) {
        return fail(Mismatch::DifferentKinds);
    }
    assignable(t1, t2, rules, true)
}

fn delimited(t: &DynamicType) -> bool {
    match t {
        DynamicType::Sequence { element, .. } | DynamicType::Array { element, .. } => {
            delimited(element)
        }
        DynamicType::Struct(_) | DynamicType::Union(_) => t.extensibility() != Extensibility::Final,
        _ => true,
    }
}

fn structs(
    s1: &StructType,
    s2: &StructType,
    rules: &AssignabilityRules,
    key_erased: bool,
) -> Check {
    if s1.extensibility != s2.extensibility {
        return fail(Mismatch::DifferentExtensibility);
    }
    let (m1s, m2s) = (s1.all_members(), s2.all_members());
    let ext = s1.extensibility;
    let mut common = false;
    for (i, m1) in m1s.iter().enumerate() {
        let m2 = m2s.iter().find(|m| m.id == m1.id);
        if let Some(m2) = m2 {
            common = true;
            if m1.name != m2.name && !rules.ignore_member_names {
                return fail(Mismatch::NameDiffers { id: m1.id });
            }
            at(&m1.name, assignable(&m1.ty, &m2.ty, rules, true))?;
            if !key_erased && m2.key {
                at(&m1.name, key_not_widened(m1, m2, rules))?;
            }
        } else {
            let required = (m1.key && !key_erased)
                || (m1.must_understand && !m1.optional)
                || ext == Extensibility::Final;
            if required {
                return fail(Mismatch::MissingMember { id: m1.id });
            }
        }
        // Final and appendable: the members both have at a position agree there.
        let positional =
            ext == Extensibility::Final || (ext == Extensibility::Appendable && i < m2s.len());
        if positional {
            let Some(p2) = m2s.get(i) else {
                return fail(Mismatch::MissingMember { id: m1.id });
            };
            if p2.id != m1.id || p2.optional != m1.optional {
                return fail(Mismatch::MemberMismatch { index: i });
            }
            at(&m1.name, strongly(&m1.ty, &p2.ty, rules))?;
        }
    }
    for m2 in &m2s {
        let required = (m2.key && !key_erased)
            || (m2.must_understand && !m2.optional)
            || ext == Extensibility::Final
            || (rules.prevent_type_widening && !m2.optional);
        if required && !m1s.iter().any(|m| m.id == m2.id) {
            return fail(Mismatch::MissingMember { id: m2.id });
        }
    }
    if !common {
        return fail(Mismatch::NoCommonMember);
    }
    Ok(())
}

/// The rules for a key member of T2 and its counterpart in T1: a string or sequence no
/// longer, an enum with no literal T1 lacks, a struct or union whose key holder T1's
/// key holder is assignable from.
fn key_not_widened(m1: &Member, m2: &Member, rules: &AssignabilityRules) -> Check {
    use DynamicType as T;
    let widened = || fail(Mismatch::KeyWidened { id: m1.id });
    match (&m1.ty, &m2.ty) {
        (T::String { bound: b1 }, T::String { bound: b2 })
        | (T::Sequence { bound: b1, .. }, T::Sequence { bound: b2, .. }) => {
            if bound_fits(*b1, *b2) {
                Ok(())
            } else {
                widened()
            }
        }
        (T::Enum(e1), T::Enum(e2)) => {
            if e2
                .enumerators
                .iter()
                .all(|(_, v)| e1.enumerators.iter().any(|(_, v1)| v1 == v))
            {
                Ok(())
            } else {
                widened()
            }
        }
        (T::Struct(s1), T::Struct(s2)) => {
            assignable(&key_holder(s1), &key_holder(s2), rules, false)
        }
        _ => Ok(()),
    }
}

/// A struct's key members (all of them when none is a key), as a struct of its own.
fn key_holder(s: &StructType) -> DynamicType {
    let all = s.all_members();
    let keyed = all.iter().any(|m| m.key);
    DynamicType::Struct(Arc::new(StructType {
        name: s.name.clone(),
        extensibility: s.extensibility,
        base: None,
        members: all
            .into_iter()
            .filter(|m| m.key || !keyed)
            .cloned()
            .collect(),
    }))
}

fn unions(u1: &UnionType, u2: &UnionType, rules: &AssignabilityRules) -> Check {
    if u1.extensibility != u2.extensibility {
        return fail(Mismatch::DifferentExtensibility);
    }
    at(
        "discriminator",
        strongly(&u1.discriminator, &u2.discriminator, rules),
    )?;
    let exact = u1.extensibility == Extensibility::Final || rules.prevent_type_widening;
    // Branch ids are their positions (runtime unions carry no member ids).
    for (id, c1) in u1.cases.iter().enumerate() {
        if let Some(c2) = u2.cases.get(id) {
            if c1.name != c2.name && !rules.ignore_member_names {
                return fail(Mismatch::NameDiffers { id: id as u32 });
            }
            if exact && (c1.labels != c2.labels || c1.default != c2.default) {
                return fail(Mismatch::MissingCase);
            }
        } else if exact {
            return fail(Mismatch::MissingCase);
        }
    }
    if exact && u2.cases.len() != u1.cases.len() {
        return fail(Mismatch::MissingCase);
    }
    // Every label of T2 selects, in T1, a branch assignable from T2's.
    let mut common = false;
    for c2 in &u2.cases {
        for label in &c2.labels {
            let explicit = u1.cases.iter().find(|c| c.labels.contains(label));
            common |= explicit.is_some();
            if let Some(c1) = explicit.or_else(|| u1.cases.iter().find(|c| c.default)) {
                at(&c1.name, assignable(&c1.ty, &c2.ty, rules, true))?;
            }
        }
        if c2.default {
            if let Some(c1) = u1.cases.iter().find(|c| c.default) {
                at(&c1.name, assignable(&c1.ty, &c2.ty, rules, true))?;
            }
        }
    }
    if !common {
        return fail(Mismatch::NoCommonMember);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamic::{EnumType, UnionCase};

    fn st(name: &str, ext: Extensibility, members: Vec<Member>) -> DynamicType {
        DynamicType::Struct(Arc::new(StructType {
            name: name.into(),
            extensibility: ext,
            base: None,
            members,
        }))
    }

    fn check(t1: &DynamicType, t2: &DynamicType) -> Check {
        is_assignable(t1, t2, &AssignabilityRules::default())
    }

    fn mismatch(t1: &DynamicType, t2: &DynamicType) -> Mismatch {
        check(t1, t2).unwrap_err().mismatch
    }

    fn v1(ext: Extensibility) -> DynamicType {
        st(
            "Shape",
            ext,
            vec![
                Member::new("color", 0, DynamicType::String { bound: Some(128) }).key(),
                Member::new("x", 1, DynamicType::Int32),
            ],
        )
    }

    fn v2(ext: Extensibility) -> DynamicType {
        st(
            "ShapeV2",
            ext,
            vec![
                Member::new("color", 0, DynamicType::String { bound: Some(128) }).key(),
                Member::new("x", 1, DynamicType::Int32),
                Member::new("y", 2, DynamicType::Int32),
            ],
        )
    }

    #[test]
    fn appendable_and_mutable_versions_are_assignable_both_ways() {
        for ext in [Extensibility::Appendable, Extensibility::Mutable] {
            check(&v1(ext), &v2(ext)).unwrap();
            check(&v2(ext), &v1(ext)).unwrap();
        }
        // With prevent_type_widening, the older reader refuses the newer writer.
        let strict = AssignabilityRules {
            prevent_type_widening: true,
            ..AssignabilityRules::default()
        };
        let e = is_assignable(
            &v1(Extensibility::Appendable),
            &v2(Extensibility::Appendable),
            &strict,
        );
        assert_eq!(e.unwrap_err().mismatch, Mismatch::MissingMember { id: 2 });
    }

    #[test]
    fn final_versions_are_not() {
        let f = Extensibility::Final;
        assert_eq!(mismatch(&v1(f), &v2(f)), Mismatch::MissingMember { id: 2 });
        assert_eq!(mismatch(&v2(f), &v1(f)), Mismatch::MissingMember { id: 2 });
        assert_eq!(
            mismatch(&v1(f), &v1(Extensibility::Appendable)),
            Mismatch::DifferentExtensibility
        );
    }

    #[test]
    fn member_types_names_keys_and_kinds() {
        let a = Extensibility::Appendable;
        let retyped = st(
            "Shape",
            a,
            vec![
                Member::new("color", 0, DynamicType::String { bound: Some(128) }).key(),
                Member::new("x", 1, DynamicType::Float64),
            ],
        );
        let e = check(&v1(a), &retyped).unwrap_err();
        assert_eq!(e.mismatch, Mismatch::DifferentKinds);
        assert_eq!(e.path, vec!["Shape".to_owned(), "x".to_owned()]);
        assert_eq!(
            e.to_string(),
            "Shape.x not assignable: different kinds of type"
        );
        let renamed = st(
            "Shape",
            a,
            vec![
                Member::new("colour", 0, DynamicType::String { bound: Some(128) }).key(),
                Member::new("x", 1, DynamicType::Int32),
            ],
        );
        assert_eq!(mismatch(&v1(a), &renamed), Mismatch::NameDiffers { id: 0 });
        let ignore = AssignabilityRules {
            ignore_member_names: true,
            ..AssignabilityRules::default()
        };
        is_assignable(&v1(a), &renamed, &ignore).unwrap();
        let unkeyed = st(
            "Shape",
            Extensibility::Mutable,
            vec![Member::new("x", 1, DynamicType::Int32)],
        );
        assert_eq!(
            mismatch(&v1(Extensibility::Mutable), &unkeyed),
            Mismatch::MissingMember { id: 0 }
        );
        // A longer key string in the writer's type widens the key.
        let longer = st(
            "Shape",
            a,
            vec![
                Member::new("color", 0, DynamicType::String { bound: Some(256) }).key(),
                Member::new("x", 1, DynamicType::Int32),
            ],
        );
        assert_eq!(mismatch(&v1(a), &longer), Mismatch::KeyWidened { id: 0 });
        check(&longer, &v1(a)).unwrap();
        // octet is not uint8.
        let octets = |e| DynamicType::Sequence {
            element: Box::new(e),
            bound: None,
        };
        assert_eq!(
            mismatch(&octets(DynamicType::Octet), &octets(DynamicType::UInt8)),
            Mismatch::DifferentKinds
        );
        let disjoint = st(
            "D",
            Extensibility::Mutable,
            vec![Member::new("z", 9, DynamicType::Int32)],
        );
        let other = st(
            "E",
            Extensibility::Mutable,
            vec![Member::new("w", 8, DynamicType::Int32)],
        );
        assert_eq!(mismatch(&disjoint, &other), Mismatch::NoCommonMember);
    }

    #[test]
    fn enums_bitmasks_and_unions() {
        let e = |names: &[(&str, i32)]| {
            DynamicType::Enum(Arc::new(EnumType {
                name: "E".into(),
                bit_bound: 32,
                enumerators: names.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
            }))
        };
        check(&e(&[("A", 0), ("B", 1)]), &e(&[("A", 0), ("B", 1)])).unwrap();
        assert_eq!(
            mismatch(&e(&[("A", 0), ("B", 1)]), &e(&[("A", 0), ("C", 1)])),
            Mismatch::NameDiffers { id: 1 }
        );
        assert_eq!(
            mismatch(&e(&[("A", 0)]), &e(&[("A", 0), ("B", 1)])),
            Mismatch::MissingCase
        );
        let bitmask = DynamicType::Bitmask(Arc::new(crate::dynamic::BitmaskType {
            name: "B".into(),
            bit_bound: 16,
            flags: vec![],
        }));
        check(&bitmask, &DynamicType::UInt16).unwrap();
        assert_eq!(mismatch(&bitmask, &DynamicType::UInt32), Mismatch::Bound);
        let u = |ext, cases: Vec<(&str, Vec<i64>, DynamicType)>| {
            DynamicType::Union(Arc::new(UnionType {
                name: "U".into(),
                extensibility: ext,
                discriminator: DynamicType::Int32,
                cases: cases
                    .into_iter()
                    .map(|(n, labels, ty)| UnionCase {
                        name: n.into(),
                        labels,
                        default: false,
                        ty,
                    })
                    .collect(),
                no_member: vec![],
                default_discriminator: None,
            }))
        };
        let a = Extensibility::Appendable;
        let small = u(a, vec![("i", vec![1], DynamicType::Int32)]);
        let big = u(
            a,
            vec![
                ("i", vec![1], DynamicType::Int32),
                ("s", vec![2], DynamicType::String { bound: None }),
            ],
        );
        check(&small, &big).unwrap();
        check(&big, &small).unwrap();
        let f = Extensibility::Final;
        let small_f = u(f, vec![("i", vec![1], DynamicType::Int32)]);
        let big_f = u(
            f,
            vec![
                ("i", vec![1], DynamicType::Int32),
                ("s", vec![2], DynamicType::String { bound: None }),
            ],
        );
        assert_eq!(mismatch(&small_f, &big_f), Mismatch::MissingCase);
        let retyped = u(a, vec![("i", vec![1], DynamicType::Float64)]);
        assert_eq!(mismatch(&small, &retyped), Mismatch::DifferentKinds);
    }
}
