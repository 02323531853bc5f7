//! Runtime types against Cyclone DDS's bytes: every type of the CDR vector set
//! (`cyclone/vectors.json`, made by `cyclone/gen_vectors.py` from Cyclone DDS 11's Python
//! package and C library) described at run time, each vector's JSON view read into a dynamic
//! value, encoded in all four formats and compared with Cyclone's bytes, and Cyclone's bytes
//! decoded back to the same value. `cyclone_vectors.rs` checks the same vectors through
//! `#[derive(Cdr)]`, so both paths produce the same bytes.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use ferrodds_cdr::dynamic::{
    self, BitmaskType, DynamicType, DynamicValue, EnumType, Member, StructType, UnionCase,
    UnionType,
};
use ferrodds_cdr::member::hashed_member_id;
use ferrodds_cdr::{Decoder, Encoder, Endianness, Extensibility, XcdrVersion};
use md5::Digest;
use serde_json::Value;

use DynamicType as T;
use Extensibility::{Appendable, Final, Mutable};

fn string() -> T {
    T::String { bound: None }
}

fn seq(element: T) -> T {
    T::Sequence {
        element: Box::new(element),
        bound: None,
    }
}

fn array(element: T, dimensions: &[usize]) -> T {
    T::Array {
        element: Box::new(element),
        dimensions: dimensions.to_vec(),
    }
}

/// A struct whose members are numbered 0, 1, 2... after its base's.
fn struct_(name: &str, ext: Extensibility, members: Vec<(&str, T)>) -> T {
    derived(name, ext, None, members)
}

fn derived(name: &str, ext: Extensibility, base: Option<&T>, members: Vec<(&str, T)>) -> T {
    let base = base.map(|b| match b {
        T::Struct(s) => Arc::clone(s),
        _ => panic!("a base must be a struct"),
    });
    let first = base.as_ref().map_or(0, |b| b.all_members().len() as u32);
    T::Struct(Arc::new(StructType {
        name: name.into(),
        extensibility: ext,
        base,
        members: members
            .into_iter()
            .enumerate()
            .map(|(i, (n, ty))| Member::new(n, first + i as u32, ty))
            .collect(),
    }))
}

/// `ty` with member `name` changed by `f`.
fn with(ty: T, name: &str, f: impl Fn(&mut Member)) -> T {
    let T::Struct(s) = ty else { panic!() };
    let mut s = (*s).clone();
    f(s.members.iter_mut().find(|m| m.name == name).unwrap());
    T::Struct(Arc::new(s))
}

fn key(ty: T, name: &str) -> T {
    with(ty, name, |m| m.key = true)
}

fn optional(ty: T, names: &[&str]) -> T {
    names
        .iter()
        .fold(ty, |t, n| with(t, n, |m| m.optional = true))
}

fn union(name: &str, ext: Extensibility, discriminator: T, cases: Vec<(&str, &[i64], T)>) -> T {
    T::Union(Arc::new(UnionType {
        name: name.into(),
        extensibility: ext,
        discriminator,
        cases: cases
            .into_iter()
            .map(|(n, labels, ty)| UnionCase {
                name: n.into(),
                labels: labels.to_vec(),
                default: labels.is_empty(),
                ty,
            })
            .collect(),
        no_member: Vec::new(),
        default_discriminator: None,
    }))
}

/// The vector set's types, as `gen_vectors.py` declares them.
fn types() -> Vec<(&'static str, T)> {
    let color = T::Enum(Arc::new(EnumType {
        name: "vec::Color".into(),
        bit_bound: 32,
        enumerators: vec![("RED".into(), 0), ("GREEN".into(), 1), ("BLUE".into(), 2)],
    }));
    let small = T::Enum(Arc::new(EnumType {
        name: "vec::Small".into(),
        bit_bound: 8,
        enumerators: vec![("S_A".into(), 0), ("S_B".into(), 1), ("S_C".into(), 2)],
    }));
    let flags = T::Bitmask(Arc::new(BitmaskType {
        name: "vec::Flags".into(),
        bit_bound: 16,
        flags: (0..4).map(|i| (format!("F{i}"), i)).collect(),
    }));
    let point = struct_("vec::Point", Final, vec![("x", T::Int32), ("y", T::Int32)]);
    let u = union(
        "vec::U",
        Final,
        T::Int32,
        vec![
            ("a", &[1, 2], T::Int32),
            ("b", &[3], string()),
            ("c", &[], T::Float64),
        ],
    );
    let ue = union(
        "vec::UE",
        Final,
        color.clone(),
        vec![("r", &[0], T::Int16), ("p", &[2], point.clone())],
    );
    let ub = union(
        "vec::UB",
        Final,
        T::Bool,
        vec![("t", &[1], T::Int32), ("f", &[], string())],
    );
    let uc = union(
        "vec::UC",
        Final,
        T::Char,
        vec![("a", &[97], T::Int64), ("b", &[98], T::Octet)],
    );
    let ua = union(
        "vec::UA",
        Appendable,
        T::Int16,
        vec![("one", &[1], T::Int32), ("two", &[2], point.clone())],
    );
    let appendable = key(
        struct_(
            "vec::Appendable",
            Appendable,
            vec![
                ("id", T::Int32),
                ("name", string()),
                ("p", point.clone()),
                ("pts", seq(point.clone())),
            ],
        ),
        "id",
    );
    let mut mutable = optional(
        key(
            struct_(
                "vec::Mutable",
                Mutable,
                vec![
                    ("id", T::Int32),
                    ("name", string()),
                    ("value", T::Float64),
                    ("opt", T::Int32),
                    ("opt_s", string()),
                    ("data", seq(T::UInt8)),
                    ("mu", T::Int16),
                    ("app", appendable.clone()),
                ],
            ),
            "id",
        ),
        &["opt", "opt_s"],
    );
    // @id(10) on name: the members after it follow on.
    for (n, id) in [
        ("name", 10),
        ("value", 11),
        ("opt", 12),
        ("opt_s", 13),
        ("data", 14),
        ("mu", 15),
        ("app", 16),
    ] {
        mutable = with(mutable, n, |m| m.id = id);
    }
    let mutable = with(mutable, "mu", |m| m.must_understand = true);
    let mut hashed = struct_(
        "vec::Hashed",
        Mutable,
        vec![("a", T::Int32), ("b", string()), ("c", T::Int64)],
    );
    for n in ["a", "b", "c"] {
        hashed = with(hashed, n, |m| m.id = hashed_member_id(n));
    }
    let final_optionals = optional(
        struct_(
            "vec::FinalOptionals",
            Final,
            vec![
                ("a", T::Int32),
                ("b", T::Int32),
                ("c", string()),
                ("d", point.clone()),
                ("e", T::Float64),
            ],
        ),
        &["b", "c", "d", "e"],
    );
    let base_f = key(
        struct_("vec::BaseF", Final, vec![("id", T::Int32), ("a", T::Int16)]),
        "id",
    );
    let base_a = key(
        struct_(
            "vec::BaseA",
            Appendable,
            vec![("id", T::Int32), ("a", T::Int16)],
        ),
        "id",
    );
    let base_m = key(
        struct_(
            "vec::BaseM",
            Mutable,
            vec![("id", T::Int32), ("a", T::Int16)],
        ),
        "id",
    );
    vec![
        ("vec::Color", color.clone()),
        ("vec::Small", small.clone()),
        ("vec::Flags", flags.clone()),
        ("vec::Point", point.clone()),
        (
            "vec::Primitives",
            struct_(
                "vec::Primitives",
                Final,
                vec![
                    ("b", T::Bool),
                    ("o", T::Octet),
                    ("c", T::Char),
                    ("i8", T::Int8),
                    ("u8", T::UInt8),
                    ("i16", T::Int16),
                    ("u16", T::UInt16),
                    ("i32", T::Int32),
                    ("u32", T::UInt32),
                    ("i64", T::Int64),
                    ("u64", T::UInt64),
                    ("f32", T::Float32),
                    ("f64", T::Float64),
                ],
            ),
        ),
        (
            "vec::Strings",
            struct_(
                "vec::Strings",
                Final,
                vec![
                    ("s", string()),
                    ("bs", T::String { bound: Some(8) }),
                    ("ss", seq(string())),
                ],
            ),
        ),
        (
            "vec::Collections",
            struct_(
                "vec::Collections",
                Final,
                vec![
                    ("arr", array(T::Int32, &[3])),
                    ("grid", array(T::Int16, &[2, 3])),
                    ("pts", array(point.clone(), &[2])),
                    ("bytes", seq(T::UInt8)),
                    ("longs", seq(T::Int64)),
                    (
                        "bounded_pts",
                        T::Sequence {
                            element: Box::new(point.clone()),
                            bound: Some(4),
                        },
                    ),
                    ("nested", seq(seq(T::Int16))),
                    ("names", array(string(), &[2])),
                ],
            ),
        ),
        (
            "vec::Enums",
            struct_(
                "vec::Enums",
                Final,
                vec![
                    ("c", color.clone()),
                    ("s", small.clone()),
                    ("f", flags.clone()),
                    ("cs", seq(color.clone())),
                ],
            ),
        ),
        ("vec::U", u.clone()),
        ("vec::UE", ue.clone()),
        ("vec::UB", ub.clone()),
        ("vec::UC", uc.clone()),
        ("vec::UA", ua.clone()),
        (
            "vec::Unions",
            struct_(
                "vec::Unions",
                Final,
                vec![
                    ("u1", u.clone()),
                    ("u2", ue),
                    ("u3", ub),
                    ("u4", uc),
                    ("tail", T::Int8),
                ],
            ),
        ),
        (
            "vec::UnionsApp",
            struct_("vec::UnionsApp", Final, vec![("ua", ua), ("tail", T::Int8)]),
        ),
        ("vec::Appendable", appendable.clone()),
        ("vec::Mutable", mutable.clone()),
        (
            "vec::MutableKinds",
            struct_(
                "vec::MutableKinds",
                Mutable,
                vec![
                    ("b", T::Bool),
                    ("s", small),
                    ("f", flags),
                    ("c", color),
                    ("s16", seq(T::Int16)),
                    ("s32", seq(T::Int32)),
                    ("ss", seq(string())),
                    ("arr", array(T::Int32, &[2])),
                    ("parr", array(point.clone(), &[2])),
                    ("u", u),
                    ("pt", point.clone()),
                    ("ch", T::Char),
                ],
            ),
        ),
        ("vec::Hashed", hashed),
        ("vec::FinalOptionals", final_optionals.clone()),
        (
            "vec::AppOptionals",
            optional(
                struct_(
                    "vec::AppOptionals",
                    Appendable,
                    vec![("a", T::Int8), ("b", T::Int64), ("c", string())],
                ),
                &["b", "c"],
            ),
        ),
        ("vec::BaseF", base_f.clone()),
        (
            "vec::DerivedF",
            derived(
                "vec::DerivedF",
                Final,
                Some(&base_f),
                vec![("b", string()), ("c", T::Float64)],
            ),
        ),
        ("vec::BaseA", base_a.clone()),
        (
            "vec::DerivedA",
            derived(
                "vec::DerivedA",
                Appendable,
                Some(&base_a),
                vec![("b", string())],
            ),
        ),
        ("vec::BaseM", base_m.clone()),
        (
            "vec::DerivedM",
            derived(
                "vec::DerivedM",
                Mutable,
                Some(&base_m),
                vec![("b", string())],
            ),
        ),
        (
            "vec::KeySmall",
            key(
                key(
                    struct_(
                        "vec::KeySmall",
                        Final,
                        vec![("id", T::Int32), ("x", T::Int64), ("v", T::Int32)],
                    ),
                    "id",
                ),
                "x",
            ),
        ),
        (
            "vec::KeyBounded",
            key(
                key(
                    struct_(
                        "vec::KeyBounded",
                        Final,
                        vec![
                            ("id", T::Int32),
                            ("name", T::String { bound: Some(12) }),
                            ("v", T::Int32),
                        ],
                    ),
                    "id",
                ),
                "name",
            ),
        ),
        (
            "vec::KeyString",
            key(
                struct_(
                    "vec::KeyString",
                    Appendable,
                    vec![("name", string()), ("v", T::Float64)],
                ),
                "name",
            ),
        ),
        (
            "vec::KeyNested",
            key(
                key(
                    struct_(
                        "vec::KeyNested",
                        Final,
                        vec![("p", point.clone()), ("tag", T::Octet), ("other", string())],
                    ),
                    "p",
                ),
                "tag",
            ),
        ),
        (
            "vec::Nested",
            struct_(
                "vec::Nested",
                Final,
                vec![
                    ("a", appendable.clone()),
                    ("m", mutable),
                    ("sa", seq(appendable)),
                    ("fo", final_optionals),
                ],
            ),
        ),
        (
            "vec::KeyedPayload",
            key(
                struct_(
                    "vec::KeyedPayload",
                    Appendable,
                    vec![("id", T::Int32), ("payload", seq(T::UInt8))],
                ),
                "id",
            ),
        ),
        (
            "vec::Align",
            struct_(
                "vec::Align",
                Final,
                vec![
                    ("a", T::Int8),
                    ("b", T::Int64),
                    ("c", T::Int8),
                    ("d", T::Float64),
                    ("e", T::Float32),
                ],
            ),
        ),
        (
            "vec::AlignApp",
            struct_(
                "vec::AlignApp",
                Appendable,
                vec![("a", T::Int8), ("b", T::Int64)],
            ),
        ),
        (
            "vec::AlignMut",
            struct_(
                "vec::AlignMut",
                Mutable,
                vec![("a", T::Int8), ("b", T::Int64), ("c", seq(T::Int64))],
            ),
        ),
    ]
}

const FORMATS: [(&str, XcdrVersion, Endianness); 4] = [
    ("xcdr1_le", XcdrVersion::Xcdr1, Endianness::Little),
    ("xcdr1_be", XcdrVersion::Xcdr1, Endianness::Big),
    ("xcdr2_le", XcdrVersion::Xcdr2, Endianness::Little),
    ("xcdr2_be", XcdrVersion::Xcdr2, Endianness::Big),
];

/// Pads an unpadded payload (Cyclone's Python writer) as Cyclone's C writer does.
fn padded(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes[3] & 3 == 0 {
        let pad = bytes.len().wrapping_neg() & 3;
        bytes.resize(bytes.len() + pad, 0);
        bytes[3] |= pad as u8;
    }
    bytes
}

fn check(ty: &T, v: &Value) -> Vec<String> {
    let sample = v["sample"].as_str().unwrap_or("?");
    let mut failures = Vec::new();
    let mut fail = |what: String| failures.push(format!("{sample}: {what}"));
    let value = match DynamicValue::from_json(ty, &v["value"]) {
        Ok(value) => value,
        Err(e) => {
            fail(format!("cannot read Cyclone's value: {e}"));
            return failures;
        }
    };
    if value.to_json(ty) != v["value"] {
        fail(format!("JSON view differs: ours {}", value.to_json(ty)));
    }
    // The text path (no document in between) writes the document's text and reads it back.
    let text = value.to_json_text(ty);
    if text != ferrodds_cdr::json_text(&value.to_json(ty)) {
        fail(format!("JSON text differs from the document's: {text}"));
    }
    match DynamicValue::from_json_text(ty, &text) {
        Ok(back) if back == value => {}
        other => fail(format!("JSON text read back as {other:?}")),
    }
    for (name, version, endianness) in FORMATS {
        let Some(python) = v[name].as_str().map(|h| hex::decode(h).unwrap()) else {
            continue;
        };
        // Where Cyclone's C writer disagrees with its Python one, C is the reference.
        let expected = match v["c_encoder"][name].as_str() {
            Some(c) if c != "same" && c != "failed" => hex::decode(c).unwrap(),
            _ => python.clone(),
        };
        let expected = padded(expected);
        match dynamic::serialize(ty, &value, version, endianness) {
            Ok(ours) if ours == expected => {}
            Ok(ours) => fail(format!(
                "{name}: we encode\n   {}\n Cyclone\n   {}",
                hex::encode(&ours),
                hex::encode(&expected)
            )),
            Err(e) => fail(format!("{name}: encoding failed: {e}")),
        }
        match dynamic::deserialize(ty, &expected) {
            Ok(back) if back.to_json(ty) == v["value"] => {}
            Ok(back) => fail(format!("{name}: decoded {}", back.to_json(ty))),
            Err(e) => fail(format!("{name}: decoding failed: {e}")),
        }
        // The keys alone (what a reader finds a large sample's instance with) hash as the
        // whole sample's do.
        if ty.is_keyed() {
            let whole = dynamic::key_hash(ty, &value, XcdrVersion::Xcdr2).ok();
            match dynamic::deserialize_keys(ty, &expected) {
                Ok(keys) if dynamic::key_hash(ty, &keys, XcdrVersion::Xcdr2).ok() == whole => {}
                Ok(keys) => fail(format!("{name}: keys decoded to {}", keys.to_json(ty))),
                Err(e) => fail(format!("{name}: keys do not decode: {e}")),
            }
        }
    }
    if ty.is_keyed() {
        check_keys(ty, &value, v, &mut fail);
    }
    failures
}

/// The key holder, the key-only sample and the key hash, against Cyclone's.
fn check_keys(ty: &T, value: &DynamicValue, v: &Value, fail: &mut impl FnMut(String)) {
    let holder = v["key_xcdr2_be"].as_str().unwrap_or_default();
    let mut ours = Vec::new();
    let mut e = Encoder::new(&mut ours, XcdrVersion::Xcdr2, Endianness::Big);
    match dynamic::encode_key_holder(ty, value, &mut e) {
        Ok(()) if hex::encode(&ours) == holder => {}
        Ok(()) => fail(format!(
            "key holder {} vs Cyclone {holder}",
            hex::encode(&ours)
        )),
        Err(e) => fail(format!("key holder failed: {e}")),
    }
    if let Some(expected) = v["key_sample_xcdr2_be"].as_str() {
        let mut ours = Vec::new();
        let mut e = Encoder::new(&mut ours, XcdrVersion::Xcdr2, Endianness::Big);
        match dynamic::encode_key_sample(ty, value, &mut e) {
            Ok(()) if hex::encode(&ours) == expected => {}
            Ok(()) => fail(format!(
                "key sample {} vs Cyclone {expected}",
                hex::encode(&ours)
            )),
            Err(e) => fail(format!("key sample failed: {e}")),
        }
        let mut d = Decoder::new(&ours, XcdrVersion::Xcdr2, Endianness::Big);
        match dynamic::decode_key_sample(ty, &mut d) {
            Ok(keys)
                if dynamic::key_hash(ty, &keys, XcdrVersion::Xcdr2).ok()
                    == dynamic::key_hash(ty, value, XcdrVersion::Xcdr2).ok() => {}
            Ok(keys) => fail(format!("key sample decoded to {}", keys.to_json(ty))),
            Err(e) => fail(format!("key sample does not decode: {e}")),
        }
    }
    // The spec's hash over Cyclone's holder (raw when it fits, else MD5 of it as it is),
    // and Cyclone's own hash among the variants.
    let holder_bytes = hex::decode(holder).unwrap_or_default();
    let spec = if v["key_hash_method"] == "raw" {
        let mut h = holder_bytes.clone();
        h.resize(16, 0);
        hex::encode(h)
    } else {
        hex::encode(md5::Md5::digest(&holder_bytes))
    };
    match dynamic::key_hash(ty, value, XcdrVersion::Xcdr2) {
        Ok(h) if h.to_string() == spec => {}
        Ok(h) => fail(format!("key hash {h} vs the spec's {spec}")),
        Err(e) => fail(format!("key hash failed: {e}")),
    }
    let cyclone = v["key_hash"].as_str().unwrap_or_default();
    match dynamic::key_hash_variants(ty, value) {
        Ok(hashes) if hashes.iter().any(|h| h.to_string() == cyclone) => {}
        Ok(hashes) => fail(format!("Cyclone's key hash {cyclone} not among {hashes:?}")),
        Err(e) => fail(format!("key hash variants failed: {e}")),
    }
}

#[test]
fn runtime_types_agree_with_cyclone_byte_for_byte() {
    let vectors: Vec<Value> = serde_json::from_str(include_str!("cyclone/vectors.json")).unwrap();
    let types = types();
    let mut failures = Vec::new();
    let (mut checked, mut keyed) = (0, 0);
    for v in &vectors {
        let name = v["type"].as_str().unwrap_or_default();
        let Some((_, ty)) = types.iter().find(|(n, _)| *n == name) else {
            failures.push(format!("no runtime type for {name}"));
            continue;
        };
        failures.extend(check(ty, v));
        checked += 1;
        keyed += usize::from(ty.is_keyed());
    }
    assert!(checked >= 60, "only {checked} vectors");
    assert!(keyed >= 20, "only {keyed} keyed vectors");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_value_that_is_not_of_its_type_is_an_error_not_a_panic() {
    let point = struct_("vec::Point", Final, vec![("x", T::Int32), ("y", T::Int32)]);
    let wrong = DynamicValue::Struct(vec![Some(DynamicValue::String("x".into())), None]);
    let err =
        dynamic::serialize(&point, &wrong, XcdrVersion::Xcdr2, Endianness::Little).unwrap_err();
    assert_eq!(
        err.to_string(),
        "vec::Point.x: expected a value of int32, found another kind of value"
    );
    let too_big = DynamicValue::Struct(vec![
        Some(DynamicValue::Int(1 << 40)),
        Some(DynamicValue::Int(0)),
    ]);
    assert!(dynamic::serialize(&point, &too_big, XcdrVersion::Xcdr2, Endianness::Little).is_err());
    // Truncated input: an error with the member it was in.
    let bytes = dynamic::serialize(
        &point,
        &DynamicValue::default_of(&point),
        XcdrVersion::Xcdr2,
        Endianness::Little,
    )
    .unwrap();
    let err = dynamic::deserialize(&point, &bytes[..8]).unwrap_err();
    assert!(err.to_string().contains("vec::Point.y"), "{err}");
    // A run of numbers with one out of range, or of another kind, deep in it: the error
    // names the element, and the buffer holds what it held before.
    let readings = struct_("vec::Readings", Final, vec![("r", seq(T::Int16))]);
    for (bad, says) in [
        (DynamicValue::Int(70_000), "vec::Readings.r[2]"),
        (DynamicValue::UInt(1), "vec::Readings.r[2]"),
    ] {
        let items = vec![
            DynamicValue::Int(1),
            DynamicValue::Int(-2),
            bad,
            DynamicValue::Int(4),
        ];
        let value = DynamicValue::Struct(vec![Some(DynamicValue::Sequence(items))]);
        let mut buf = vec![0xAA; 3];
        let err = dynamic::serialize_into(
            &readings,
            &value,
            XcdrVersion::Xcdr2,
            Endianness::Little,
            &mut buf,
        )
        .unwrap_err();
        assert!(err.to_string().starts_with(says), "{err}");
        assert_eq!(buf, vec![0xAA; 3]);
    }
}

#[test]
fn hostile_bytes_are_errors_never_panics() {
    // Every truncation of every vector, and every single-bit flip of the first 64 bytes, in
    // every format: decoding returns, whatever it returns.
    let vectors: Vec<Value> = serde_json::from_str(include_str!("cyclone/vectors.json")).unwrap();
    let types = types();
    let mut decoded = 0usize;
    for v in &vectors {
        let name = v["type"].as_str().unwrap_or_default();
        let (_, ty) = types.iter().find(|(n, _)| *n == name).unwrap();
        for (format, ..) in FORMATS {
            let Some(bytes) = v[format].as_str().map(|h| hex::decode(h).unwrap()) else {
                continue;
            };
            for len in 0..bytes.len() {
                decoded += usize::from(dynamic::deserialize(ty, &bytes[..len]).is_ok());
                let _ = dynamic::deserialize_key_sample(ty, &bytes[..len]);
            }
            for i in 0..bytes.len().min(64) {
                for bit in 0..8 {
                    let mut flipped = bytes.clone();
                    flipped[i] ^= 1 << bit;
                    decoded += usize::from(dynamic::deserialize(ty, &flipped).is_ok());
                }
            }
        }
    }
    // Some mutations still decode (a flipped bit in a value), most do not.
    assert!(decoded > 0);
}

/// Where the TypeObjects of `ty`, their hashes and identifiers differ from Cyclone's record.
fn type_objects_differ(name: &str, ty: &T, r: &Value) -> Vec<String> {
    use dynamic::type_object::{equivalence_hash, type_identifier, type_object, EquivalenceKind};
    let mut failures = Vec::new();
    for (field, kind) in [
        ("minimal", EquivalenceKind::Minimal),
        ("complete", EquivalenceKind::Complete),
    ] {
        let expected = &r[field];
        let object = type_object(ty, kind).unwrap_or_default();
        if hex::encode(&object) != expected["type_object"].as_str().unwrap_or_default() {
            failures.push(format!(
                "{name} {field}: type object\n   {}\n Cyclone\n   {}",
                hex::encode(&object),
                expected["type_object"]
            ));
        }
        if hex::encode(equivalence_hash(&object)) != expected["hash"].as_str().unwrap_or_default() {
            failures.push(format!("{name} {field}: hash"));
        }
        let id = hex::encode(type_identifier(ty, kind));
        if id != expected["type_identifier"].as_str().unwrap_or_default() {
            failures.push(format!("{name} {field}: identifier {id}"));
        }
    }
    failures
}

/// The XTypes type representation of every runtime type against Cyclone DDS's
/// (`cyclone/typeobjects.json`, made by `cyclone/gen_typeobjects.py`): both TypeObjects,
/// their hashes and identifiers, and the TypeInformation a Cyclone C application sends
/// (its IDL compiler's dependency order, where the Python binding's differs).
#[test]
fn type_objects_agree_with_cyclone() {
    use dynamic::type_object::type_information;
    let records: Vec<Value> =
        serde_json::from_str(include_str!("cyclone/typeobjects.json")).unwrap();
    let types = types();
    let mut failures = Vec::new();
    let mut infos = 0;
    for r in &records {
        let name = r["type"].as_str().unwrap_or_default();
        let Some((_, ty)) = types.iter().find(|(n, _)| *n == name) else {
            failures.push(format!("no runtime type for {name}"));
            continue;
        };
        failures.extend(type_objects_differ(name, ty, r));
        let expected_info = r["idlc"]["type_information"]
            .as_str()
            .or_else(|| r["type_information"].as_str());
        if let Some(expected) = expected_info {
            infos += 1;
            let ours = hex::encode(type_information(ty));
            if ours != expected {
                failures.push(format!(
                    "{name}: type information\n   {ours}\n Cyclone\n   {expected}"
                ));
            }
        }
    }
    assert!(records.len() >= 36, "only {} records", records.len());
    assert!(infos >= 33, "only {infos} type informations compared");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Cyclone's COMPLETE TypeObjects read back into runtime types: each one, with the types it
/// refers to looked up by identifier, gives a runtime type whose TypeObjects are Cyclone's
/// again, minimal and complete, and which encodes the vectors as Cyclone does.
#[test]
fn cyclone_type_objects_become_runtime_types() {
    use dynamic::type_object::parse_complete;
    let records: Vec<Value> =
        serde_json::from_str(include_str!("cyclone/typeobjects.json")).unwrap();
    let mut library: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut add = |r: &Value| {
        let id = hex::decode(r["complete"]["type_identifier"].as_str().unwrap()).unwrap();
        let object = hex::decode(r["complete"]["type_object"].as_str().unwrap()).unwrap();
        if !library.iter().any(|(i, _)| *i == id) {
            library.push((id, object));
        }
    };
    for r in &records {
        add(r);
        for dep in r["dependencies"].as_array().into_iter().flatten() {
            add(dep);
        }
    }
    let lookup = |id: &[u8]| {
        library
            .iter()
            .find(|(i, _)| i.as_slice() == id)
            .map(|(_, o)| o.as_slice())
    };
    let vectors: Vec<Value> = serde_json::from_str(include_str!("cyclone/vectors.json")).unwrap();
    let mut failures = Vec::new();
    for r in &records {
        let name = r["type"].as_str().unwrap_or_default();
        let object = hex::decode(r["complete"]["type_object"].as_str().unwrap()).unwrap();
        let ty = match parse_complete(&object, &lookup) {
            Ok(ty) => ty,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        failures.extend(type_objects_differ(name, &ty, r));
        for v in vectors.iter().filter(|v| v["type"] == name) {
            failures.extend(check(&ty, v));
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
fn hostile_type_objects_are_errors_never_panics() {
    use dynamic::type_object::parse_complete;
    let records: Vec<Value> =
        serde_json::from_str(include_str!("cyclone/typeobjects.json")).unwrap();
    let objects: Vec<Vec<u8>> = records
        .iter()
        .map(|r| hex::decode(r["complete"]["type_object"].as_str().unwrap()).unwrap())
        .collect();
    // Every reference resolves to the object itself: a cycle, which must end at the depth
    // bound.
    for object in &objects {
        let itself = |_: &[u8]| Some(object.as_slice());
        for len in 0..object.len() {
            let _ = parse_complete(&object[..len], &itself);
        }
        for i in 0..object.len() {
            for bit in 0..8 {
                let mut flipped = object.clone();
                flipped[i] ^= 1 << bit;
                let _ = parse_complete(&flipped, &itself);
            }
        }
    }
    // A struct whose member is a sequence of sequences of … 100,000 deep, in one type
    // identifier: refused at the depth bound, not a stack overflow.
    let mut deep = Vec::new();
    let mut e = Encoder::new(&mut deep, XcdrVersion::Xcdr2, Endianness::Little);
    let object = e.begin_length();
    e.write_u8(0xf2); // EK_COMPLETE
    e.write_u8(0x51); // TK_STRUCTURE
    e.write_u16(1); // final
    let header = e.begin_length();
    e.write_bytes(&[0, 0, 0]); // no base, no annotations
    e.write_str("Deep").unwrap();
    e.end_length(header).unwrap();
    let members = e.begin_length();
    e.write_u32(1);
    let member = e.begin_length();
    e.write_u32(0);
    e.write_u16(1);
    for _ in 0..100_000 {
        e.write_bytes(&[0x80, 0xf3]); // a plain small sequence, EK_BOTH
        e.write_u16(1); // element flags
        e.write_u8(0); // unbounded
    }
    e.write_u8(0x04); // int32, innermost
    e.end_length(member).unwrap();
    e.end_length(members).unwrap();
    e.end_length(object).unwrap();
    let err = parse_complete(&deep, &|_: &[u8]| None).unwrap_err();
    assert!(err.to_string().contains("deeper"), "{err}");
}
