//! The Rust `ferrodds-idl` generates from `vec.idl` (the Cyclone golden vectors' types
//! written as IDL) against Cyclone DDS's bytes and the hand-declared types:
//! - every vector's value encodes to Cyclone's bytes in XCDR1 and XCDR2, both endiannesses
//!   (C's bytes where Cyclone's C and Python writers differ, padded as the C writer pads),
//!   and those bytes decode back to the value;
//! - key hashes agree with the hand-declared types';
//! - each generated type's runtime type (`Cdr::dynamic_type`) is the hand-declared type's,
//!   and its TypeObjects are the ones Cyclone DDS computes (`typeobjects.json`).

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::dynamic::type_object::{type_identifier, type_object, EquivalenceKind};
use ferrodds_cdr::dynamic::DynamicType;
use ferrodds_cdr::{deserialize, key_hash, serialize, Cdr, Endianness, XcdrVersion};
use serde_json::Value;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/cyclone/vec.rs"));
}

#[allow(dead_code, clippy::upper_case_acronyms, non_camel_case_types)]
mod hand {
    include!("support/hand_written_vec.rs");
}

use generated::vec as g;

const FORMATS: [(&str, XcdrVersion, Endianness); 4] = [
    ("xcdr1_le", XcdrVersion::Xcdr1, Endianness::Little),
    ("xcdr1_be", XcdrVersion::Xcdr1, Endianness::Big),
    ("xcdr2_le", XcdrVersion::Xcdr2, Endianness::Little),
    ("xcdr2_be", XcdrVersion::Xcdr2, Endianness::Big),
];

/// Pads an unpadded payload (Cyclone's Python writer) to 4 bytes with the count in the
/// options, as Cyclone's C writer and FerroDDS write it.
fn padded(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 4 && bytes[3] & 3 == 0 {
        let pad = bytes.len().wrapping_neg() & 3;
        bytes.resize(bytes.len() + pad, 0);
        bytes[3] |= pad as u8;
    }
    bytes
}

/// Checks one vector with the generated type `G` and the hand-declared `H`; returns the
/// failures, one line each, and how many byte strings were compared.
fn check<G, H>(v: &Value) -> (Vec<String>, usize)
where
    G: Cdr + PartialEq + std::fmt::Debug,
    H: Cdr + PartialEq + std::fmt::Debug,
{
    let sample = v["sample"].as_str().unwrap_or("?");
    let mut failures = Vec::new();
    let mut compared = 0;
    let value = match G::from_json(&v["value"]) {
        Ok(value) => value,
        Err(e) => {
            return (
                vec![format!(
                    "{sample}: the generated type cannot read the value: {e}"
                )],
                0,
            )
        }
    };
    let hand = H::from_json(&v["value"]).unwrap();
    if value.to_json() != v["value"] {
        failures.push(format!("{sample}: JSON view differs: {}", value.to_json()));
    }
    for (name, version, endianness) in FORMATS {
        let Some(python) = v[name].as_str() else {
            continue;
        };
        let expected = match v["c_encoder"][name].as_str() {
            Some(c) if c != "same" && c != "failed" => c,
            _ => python,
        };
        let expected = padded(hex::decode(expected).unwrap());
        match serialize(&value, version, endianness) {
            Ok(ours) if ours == expected => compared += 1,
            Ok(ours) => failures.push(format!(
                "{sample} {name}: generated type encodes {}, Cyclone {}",
                hex::encode(&ours),
                hex::encode(&expected)
            )),
            Err(e) => failures.push(format!("{sample} {name}: encoding failed: {e}")),
        }
        if serialize(&hand, version, endianness).ok() != Some(expected.clone()) {
            failures.push(format!(
                "{sample} {name}: the hand-declared type no longer matches"
            ));
        }
        match deserialize::<G>(&expected) {
            Ok(back) if back == value => {}
            Ok(back) => failures.push(format!("{sample} {name}: decoded {back:?}")),
            Err(e) => failures.push(format!("{sample} {name}: decoding failed: {e}")),
        }
    }
    if G::IS_KEYED != H::IS_KEYED {
        failures.push(format!(
            "{sample}: keyed {} vs hand-declared {}",
            G::IS_KEYED,
            H::IS_KEYED
        ));
    } else if G::IS_KEYED {
        for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
            let ours = key_hash(&value, version).map(|h| h.to_string());
            let theirs = key_hash(&hand, version).map(|h| h.to_string());
            if ours.as_ref().ok() != theirs.as_ref().ok() {
                failures.push(format!(
                    "{sample}: key hash {ours:?} vs hand-declared {theirs:?}"
                ));
            }
        }
    }
    (failures, compared)
}

/// `$f::<generated, hand-declared>` for the type named `$name`, for every vector type.
macro_rules! by_name {
    ($name:expr, $f:ident, $t:ty) => {
        match $name {
            "vec::Point" => Some($f::<g::Point, hand::Point> as $t),
            "vec::Primitives" => Some($f::<g::Primitives, hand::Primitives> as $t),
            "vec::Strings" => Some($f::<g::Strings, hand::Strings> as $t),
            "vec::Collections" => Some($f::<g::Collections, hand::Collections> as $t),
            "vec::Enums" => Some($f::<g::Enums, hand::Enums> as $t),
            "vec::U" => Some($f::<g::U, hand::U> as $t),
            "vec::UE" => Some($f::<g::UE, hand::UE> as $t),
            "vec::UB" => Some($f::<g::UB, hand::UB> as $t),
            "vec::UC" => Some($f::<g::UC, hand::UC> as $t),
            "vec::UA" => Some($f::<g::UA, hand::UA> as $t),
            "vec::Unions" => Some($f::<g::Unions, hand::Unions> as $t),
            "vec::UnionsApp" => Some($f::<g::UnionsApp, hand::UnionsApp> as $t),
            "vec::Appendable" => Some($f::<g::Appendable, hand::Appendable> as $t),
            "vec::Mutable" => Some($f::<g::Mutable, hand::Mutable> as $t),
            "vec::MutableKinds" => Some($f::<g::MutableKinds, hand::MutableKinds> as $t),
            "vec::Hashed" => Some($f::<g::Hashed, hand::Hashed> as $t),
            "vec::FinalOptionals" => Some($f::<g::FinalOptionals, hand::FinalOptionals> as $t),
            "vec::AppOptionals" => Some($f::<g::AppOptionals, hand::AppOptionals> as $t),
            "vec::BaseF" => Some($f::<g::BaseF, hand::BaseF> as $t),
            "vec::DerivedF" => Some($f::<g::DerivedF, hand::DerivedF> as $t),
            "vec::BaseA" => Some($f::<g::BaseA, hand::BaseA> as $t),
            "vec::DerivedA" => Some($f::<g::DerivedA, hand::DerivedA> as $t),
            "vec::BaseM" => Some($f::<g::BaseM, hand::BaseM> as $t),
            "vec::DerivedM" => Some($f::<g::DerivedM, hand::DerivedM> as $t),
            "vec::KeySmall" => Some($f::<g::KeySmall, hand::KeySmall> as $t),
            "vec::KeyBounded" => Some($f::<g::KeyBounded, hand::KeyBounded> as $t),
            "vec::KeyString" => Some($f::<g::KeyString, hand::KeyString> as $t),
            "vec::KeyNested" => Some($f::<g::KeyNested, hand::KeyNested> as $t),
            "vec::Nested" => Some($f::<g::Nested, hand::Nested> as $t),
            "vec::KeyedPayload" => Some($f::<g::KeyedPayload, hand::KeyedPayload> as $t),
            "vec::Align" => Some($f::<g::Align, hand::Align> as $t),
            "vec::AlignApp" => Some($f::<g::AlignApp, hand::AlignApp> as $t),
            "vec::AlignMut" => Some($f::<g::AlignMut, hand::AlignMut> as $t),
            "vec::Color" => Some($f::<g::Color, hand::Color> as $t),
            "vec::Small" => Some($f::<g::Small, hand::Small> as $t),
            "vec::Flags" => Some($f::<g::Flags, hand::Flags> as $t),
            _ => None,
        }
    };
}

#[test]
fn generated_types_encode_as_cyclone_does() {
    let vectors: Vec<Value> = serde_json::from_str(include_str!(
        "../../ferrodds-cdr/tests/cyclone/vectors.json"
    ))
    .unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut types = std::collections::BTreeSet::new();
    for v in &vectors {
        let name = v["type"].as_str().unwrap_or_default();
        types.insert(name.to_owned());
        match by_name!(name, check, fn(&Value) -> (Vec<String>, usize)) {
            Some(f) => {
                let (fail, n) = f(v);
                failures.extend(fail);
                compared += n;
            }
            None => failures.push(format!("no generated type for {name}")),
        }
    }
    assert_eq!(types.len(), 33, "every vector type is checked: {types:?}");
    assert!(compared >= 4 * 60, "only {compared} byte strings compared");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn dynamic_types<G: Cdr, H: Cdr>(_: &Value) -> (DynamicType, DynamicType) {
    (G::dynamic_type(), H::dynamic_type())
}

/// The one deliberate difference: in `vec::UE`, GREEN selects no branch. The hand-declared
/// type says so with a `Green` variant (recorded as a label without member); IDL says it by
/// leaving GREEN out, which the generator turns into a `no_branch` variant. Same bytes, same
/// TypeObject; only FerroDDS's list of member-less labels differs.
fn without_member_less_labels(ty: DynamicType) -> DynamicType {
    use std::sync::Arc;
    match ty {
        DynamicType::Union(u) => {
            let mut u = (*u).clone();
            if u.name == "vec::UE" {
                u.no_member.clear();
            }
            DynamicType::Union(Arc::new(u))
        }
        DynamicType::Struct(s) => {
            let mut s = (*s).clone();
            for m in &mut s.members {
                m.ty = without_member_less_labels(m.ty.clone());
            }
            DynamicType::Struct(Arc::new(s))
        }
        other => other,
    }
}

#[test]
fn generated_runtime_types_are_the_hand_declared_ones() {
    let mut failures = Vec::new();
    let records: Vec<Value> = serde_json::from_str(include_str!(
        "../../ferrodds-cdr/tests/cyclone/typeobjects.json"
    ))
    .unwrap();
    assert_eq!(records.len(), 36);
    for r in &records {
        let name = r["type"].as_str().unwrap_or_default();
        let Some(f) = by_name!(
            name,
            dynamic_types,
            fn(&Value) -> (DynamicType, DynamicType)
        ) else {
            failures.push(format!("no generated type for {name}"));
            continue;
        };
        let (mut generated, mut hand) = f(r);
        if name == "vec::UE" || name == "vec::Unions" {
            generated = without_member_less_labels(generated);
            hand = without_member_less_labels(hand);
        }
        if generated != hand {
            failures.push(format!(
                "{name}: generated {generated:#?}\nhand-declared {hand:#?}"
            ));
        }
        let generated = f(r).0;
        for (field, kind) in [
            ("minimal", EquivalenceKind::Minimal),
            ("complete", EquivalenceKind::Complete),
        ] {
            let object = hex::encode(type_object(&generated, kind).unwrap_or_default());
            if object != r[field]["type_object"].as_str().unwrap_or_default() {
                failures.push(format!(
                    "{name} {field}: TypeObject {object} is not Cyclone's"
                ));
            }
            let id = hex::encode(type_identifier(&generated, kind));
            if id != r[field]["type_identifier"].as_str().unwrap_or_default() {
                failures.push(format!("{name} {field}: identifier {id} is not Cyclone's"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn generated_constants_typedefs_and_flags() {
    assert_eq!(g::BOUND, 8);
    assert_eq!(g::GRID_ROWS, 2);
    let s: g::ShortString = "abcdefgh".into();
    let too_long = g::Strings {
        s: String::new(),
        bs: s + "i",
        ss: vec![],
    };
    // The typedef's bound reaches the member: nine characters do not fit `string<8>`.
    assert!(serialize(&too_long, XcdrVersion::Xcdr2, Endianness::Little).is_err());
    assert_eq!((g::Flags::F0.0 | g::Flags::F3.0), 0b1001);
    assert_eq!(g::Color::default(), g::Color::Red);
    let round = g::UC::Other('z');
    let bytes = serialize(&round, XcdrVersion::Xcdr2, Endianness::Big).unwrap();
    assert_eq!(deserialize::<g::UC>(&bytes).unwrap(), round);
}

#[test]
fn defaults_round_trip() {
    let sample = g::Nested::default();
    for (_, version, endianness) in FORMATS {
        let bytes = serialize(&sample, version, endianness).unwrap();
        assert_eq!(deserialize::<g::Nested>(&bytes).unwrap(), sample);
    }
}
