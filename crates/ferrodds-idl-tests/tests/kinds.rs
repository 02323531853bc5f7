//! `kinds.idl` and `wide.idl`: every construct the compiler reads beyond the other test IDLs
//! (constant expressions of every type, reopened modules, typedefs of arrays and bounded
//! sequences, bitmasks with positions, unions over enums through a typedef, octets and
//! negative labels, forward declarations, inheritance, Rust and Python keywords as names,
//! @hashid, @id, #pragma keylist, wide characters and strings), generated, compiled and
//! round-tripped.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::dynamic::DynamicType;
use ferrodds_cdr::{deserialize, serialize, Cdr, Endianness, WString, XcdrVersion};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/kinds/idl_types.rs"));
}

use generated::kinds::{self, inner};

fn round_trip<T: Cdr + PartialEq + std::fmt::Debug>(sample: &T) {
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        for endianness in [Endianness::Little, Endianness::Big] {
            let bytes = serialize(sample, version, endianness).unwrap();
            assert_eq!(
                &deserialize::<T>(&bytes).unwrap(),
                sample,
                "{version:?} {endianness:?}"
            );
        }
    }
}

#[test]
fn constants() {
    assert_eq!(kinds::BIG, u64::MAX);
    assert_eq!(kinds::NEGATIVE, -10);
    assert_eq!(kinds::MASK, 269);
    assert_eq!(kinds::HALF, 0.5);
    assert_eq!(kinds::TENTH, 0.1f32);
    assert_eq!(kinds::LETTER, 'k');
    assert_eq!(kinds::GREETING, "hello, world\n");
    const { assert!(kinds::YES) };
    assert_eq!(kinds::SMALL, 0x7f);
    assert_eq!(kinds::TINY, i8::MIN);
    assert_eq!(kinds::PORT, 7400);
    assert_eq!(kinds::SIZE, 20);
    assert_eq!(inner::DEFAULT_MODE, inner::Mode::Off);
    assert_eq!(generated::wide::OMEGA, 'w');
    assert_eq!(generated::wide::WIDE_GREETING, "hi");
}

fn node(id: i32) -> kinds::Node {
    kinds::Node {
        id,
        values: vec![id, -id],
    }
}

fn sample() -> kinds::Kinds {
    kinds::Kinds {
        base: node(1),
        ll: i64::MIN,
        ull: u64::MAX,
        us: 7,
        s: -7,
        i8: -8,
        u8: 8,
        c: 'c',
        flag: true,
        module: 1,
        r#type: 2,
        self_: 3,
        from: 4,
        class: 5,
        position: [1, 2, 3],
        path: [[1, 2, 3], [4, 5, 6]],
        names: vec!["a".into(), "bb".into()],
        name_lists: vec![vec!["x".into()], vec![]],
        bounded: "b".repeat(20),
        nodes: vec![vec![node(2), node(3)], vec![]],
        grid: [[node(4), node(5), node(6)], [node(7), node(8), node(9)]],
        maybe_vector: Some([7, 8, 9]),
        maybe_choice: None,
        choice: kinds::Choice::Other(inner::Mode::Off, "other".into()),
        by_octet: kinds::ByOctet::Many(vec![1, 2, 3]),
        signed_: kinds::Signed::Negative(-10, true),
        everything: kinds::Everything::Grid([[1, 2], [3, 4]]),
        permissions: kinds::Permissions(kinds::Permissions::READ.0 | kinds::Permissions::ADMIN.0),
        wide: kinds::Wide::HIGH,
        mode: inner::Mode::Standby,
        shape: generated::ShapeType {
            color: "GREEN".into(),
            ..Default::default()
        },
    }
}

#[test]
fn every_kind_round_trips() {
    round_trip(&sample());
    let mut other = sample();
    other.choice = kinds::Choice::On(5);
    other.maybe_choice = Some(kinds::Choice::Other(inner::Mode::Standby, String::new()));
    other.by_octet = kinds::ByOctet::Other(9);
    other.signed_ = kinds::Signed::Zero("zero".into());
    other.everything = kinds::Everything::Node(node(10));
    round_trip(&other);
    other.everything = kinds::Everything::Vector([1, 2, 3]);
    round_trip(&other);
    round_trip(&kinds::Keyed { id: 1, value: 2 });
    round_trip(&kinds::Empty {});
    round_trip(&generated::wide::Wide {
        id: 1,
        letter: ferrodds_cdr::WChar('Ω'),
        text: WString("wide ✓".into()),
        bounded: WString("b".into()),
        many: vec![WString("x".into()), WString::default()],
    });
}

fn members(ty: DynamicType) -> Vec<ferrodds_cdr::dynamic::Member> {
    match ty {
        DynamicType::Struct(s) => s.members.clone(),
        other => panic!("not a struct: {other:?}"),
    }
}

#[test]
fn names_ids_and_keys_reach_the_runtime_type() {
    let kinds_members = members(kinds::Kinds::dynamic_type());
    let names: Vec<&str> = kinds_members.iter().map(|m| m.name.as_str()).collect();
    // Escaped (`_module`) and Rust-keyword names keep their IDL names.
    assert_eq!(&names[8..13], ["module", "type", "self", "from", "class"]);
    assert!(
        matches!(kinds::Kinds::dynamic_type(), DynamicType::Struct(s) if s.base.as_ref().is_some_and(|b| b.name == "kinds::Node"))
    );

    // Hashed ids as cyclonedds's and ferrodds's Python packages compute them (hashlib):
    // read from the Python output's member headers for the same IDL.
    let ids: Vec<(String, u32, bool)> = members(kinds::Hashing::dynamic_type())
        .into_iter()
        .map(|m| (m.name, m.id, m.must_understand))
        .collect();
    assert_eq!(
        ids,
        [
            ("id".to_owned(), 79104952, false),
            ("renamed".to_owned(), 75434407, false),
            ("hashed".to_owned(), 24944607, false),
            ("pinned".to_owned(), 100, true),
            ("after_pinned".to_owned(), 216166289, false),
            ("blob".to_owned(), 193996526, false),
        ]
    );

    // #pragma keylist made `id` the key of `Keyed`.
    let keyed = members(kinds::Keyed::dynamic_type());
    assert!(keyed[0].key && !keyed[1].key);
    const { assert!(<kinds::Keyed as Cdr>::IS_KEYED) };

    // Positions with gaps: the constants sit at their bits; the runtime type names no flags
    // (the derive would put them at consecutive bits).
    assert_eq!(kinds::Permissions::WRITE.0, 1 << 4);
    assert_eq!(kinds::Permissions::EXECUTE.0, 1 << 5);
    assert_eq!(kinds::Wide::HIGH.0, 1 << 39);
    match kinds::Permissions::dynamic_type() {
        DynamicType::Bitmask(b) => assert_eq!((b.bit_bound, b.flags.len()), (12, 0)),
        other => panic!("{other:?}"),
    }
    match inner::Mode::dynamic_type() {
        DynamicType::Enum(e) => assert_eq!(
            e.enumerators,
            [
                ("ON".to_owned(), 1),
                ("OFF".to_owned(), 2),
                ("STANDBY".to_owned(), 10)
            ]
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bounds_through_typedefs_apply() {
    let mut too_many = sample();
    too_many.names = vec![String::new(); 5];
    assert!(serialize(&too_many, XcdrVersion::Xcdr2, Endianness::Little).is_err());
    let mut too_long = sample();
    too_long.bounded = "b".repeat(21);
    assert!(serialize(&too_long, XcdrVersion::Xcdr2, Endianness::Little).is_err());
}
