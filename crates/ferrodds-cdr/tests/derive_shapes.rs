//! Every shape the derive macro supports compiles, round-trips in both versions and byte
//! orders, and reports errors with member paths.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::{deserialize, serialize, Cdr, Endianness, JsonView, WString, XcdrVersion};

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "t::Point")]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "t::Color")]
enum Color {
    #[cdr(name = "RED")]
    Red,
    #[cdr(name = "GREEN")]
    Green = 5,
    #[cdr(name = "BLUE")]
    Blue,
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(bit_bound = 8)]
enum Small {
    A,
    B,
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(bitmask)]
struct Flags(u16);

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = i32)]
enum U {
    #[cdr(case = 1, case = 2)]
    A(i32, i32),
    #[cdr(case = 3)]
    B(String),
    #[cdr(default)]
    C(i32, f64),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = Color, appendable)]
enum UE {
    #[cdr(case = Color::Red)]
    R(i16),
    #[cdr(case = Color::Green)]
    G,
    #[cdr(case = Color::Blue)]
    P(Point),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable)]
struct App {
    #[cdr(key)]
    id: i32,
    #[cdr(bound = 8)]
    name: String,
    p: Point,
    pts: Vec<Point>,
    opt: Option<i64>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable)]
struct Mut {
    #[cdr(key)]
    id: i32,
    #[cdr(id = 10)]
    name: String,
    value: f64,
    opt: Option<i32>,
    #[cdr(must_understand)]
    mu: i16,
    app: App,
    grid: [[i16; 3]; 2],
    names: [String; 2],
    nested: Vec<Vec<i16>>,
    #[cdr(bound = 4)]
    bounded: Vec<Point>,
    c: char,
    w: WString,
    colors: Vec<Color>,
    small: Small,
    flags: Flags,
    u: U,
    ue: UE,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable)]
struct BaseM {
    #[cdr(key)]
    id: i32,
    a: i16,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable)]
struct DerivedM {
    #[cdr(base)]
    base: BaseM,
    b: String,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
struct BaseF {
    #[cdr(key)]
    id: i32,
    a: i16,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
struct DerivedF {
    #[cdr(base)]
    base: BaseF,
    b: String,
    c: f64,
}

fn sample() -> Mut {
    Mut {
        id: -7,
        name: "hello".into(),
        value: 1.5,
        opt: Some(3),
        mu: 9,
        app: App {
            id: 1,
            name: "n".into(),
            p: Point { x: 1, y: 2 },
            pts: vec![Point { x: 3, y: 4 }],
            opt: None,
        },
        grid: [[1, 2, 3], [4, 5, 6]],
        names: ["a".into(), "".into()],
        nested: vec![vec![1], vec![], vec![2, 3]],
        bounded: vec![Point { x: 5, y: 6 }],
        c: 'é',
        w: WString::from("wide ✓"),
        colors: vec![Color::Blue, Color::Red],
        small: Small::B,
        flags: Flags(0b101),
        u: U::C(99, -2.25),
        ue: UE::G,
    }
}

fn round_trip<T: Cdr + PartialEq + std::fmt::Debug>(value: &T) {
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        for endianness in [Endianness::Little, Endianness::Big] {
            let bytes = serialize(value, version, endianness).unwrap();
            assert_eq!(bytes.len() % 4, 0);
            let back: T =
                deserialize(&bytes).unwrap_or_else(|e| panic!("{version:?} {endianness:?}: {e}"));
            assert_eq!(&back, value, "{version:?} {endianness:?}");
        }
    }
    let json = value.to_json();
    assert_eq!(&T::from_json(&json).unwrap(), value, "json {json}");
}

#[test]
fn every_shape_round_trips() {
    round_trip(&sample());
    round_trip(&DerivedM {
        base: BaseM { id: 1, a: 2 },
        b: "x".into(),
    });
    round_trip(&DerivedF {
        base: BaseF { id: 1, a: 2 },
        b: "x".into(),
        c: 0.5,
    });
    round_trip(&U::A(2, 5));
    round_trip(&U::B("b".into()));
    round_trip(&UE::P(Point { x: 1, y: 1 }));
}

#[test]
fn json_view_reads_like_the_idl() {
    let json = sample().to_json();
    assert_eq!(
        json["u"],
        serde_json::json!({"discriminator": 99, "c": -2.25})
    );
    assert_eq!(json["ue"], serde_json::json!({"discriminator": "GREEN"}));
    assert_eq!(json["colors"], serde_json::json!(["BLUE", "RED"]));
    assert_eq!(json["app"]["opt"], serde_json::Value::Null);
    assert_eq!(json["c"], "é");
    let derived = DerivedF {
        base: BaseF { id: 1, a: 2 },
        b: "x".into(),
        c: 0.5,
    }
    .to_json();
    assert_eq!(derived.to_string(), r#"{"id":1,"a":2,"b":"x","c":0.5}"#);
}

#[test]
fn errors_name_the_member() {
    let mut s = sample();
    s.app.name = "too long a name".into();
    let err = serialize(&s, XcdrVersion::Xcdr2, Endianness::Little).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Mut.app.name: expected at most 8 element(s), found 15"
    );

    let mut json = sample().to_json();
    json["app"]["pts"][0]["y"] = serde_json::json!("four");
    let err = Mut::from_json(&json).unwrap_err();
    assert_eq!(err.to_string(), "at app.pts[0].y: expected an integer in -2147483648..=2147483647 (int32), found string \"four\"");

    let bytes = serialize(
        &Point { x: 1, y: 2 },
        XcdrVersion::Xcdr2,
        Endianness::Little,
    )
    .unwrap();
    let err = deserialize::<Point>(&bytes[..9]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 8 (t::Point.y): expected 4 byte(s) of int32, found only 1"
    );
}

#[test]
fn d_cdr2_payloads_are_accepted_whatever_the_type() {
    // RustDDS rejected encapsulation 0x0009 (D_CDR2 LE) from OpenDDS: the identifier a peer
    // picks must not decide whether we decode; the type decides the layout.
    let mut bytes = serialize(
        &Point { x: 1, y: 2 },
        XcdrVersion::Xcdr2,
        Endianness::Little,
    )
    .unwrap();
    assert_eq!(&bytes[..2], &[0x00, 0x07]);
    bytes[1] = 0x09;
    assert_eq!(deserialize::<Point>(&bytes).unwrap(), Point { x: 1, y: 2 });
    bytes[1] = 0x0b; // PL_CDR2 LE
    assert_eq!(deserialize::<Point>(&bytes).unwrap(), Point { x: 1, y: 2 });
}

#[test]
fn key_only_samples_of_types_with_unions_decode() {
    #[derive(Cdr, Debug, Clone, PartialEq)]
    struct WithUnion {
        #[cdr(key)]
        id: i32,
        u: U,
        ue: UE,
    }
    let v = WithUnion {
        id: 4,
        u: U::B("x".into()),
        ue: UE::P(Point { x: 1, y: 2 }),
    };
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        let mut buf = Vec::new();
        let mut e = ferrodds_cdr::Encoder::new(&mut buf, version, Endianness::Little);
        v.encode_key_sample(&mut e).unwrap();
        let mut d = ferrodds_cdr::Decoder::new(&buf, version, Endianness::Little);
        let keys = WithUnion::decode_key_sample(&mut d).unwrap();
        assert_eq!(keys.id, 4);
        assert_eq!(
            keys.u,
            U::A(1, 0),
            "the first branch, first label, default value"
        );
        assert_eq!(keys.ue, UE::R(0));
    }
}

/// A type that contains itself.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "t::Tree")]
struct Tree {
    v: i32,
    kids: Vec<Tree>,
}

#[test]
#[should_panic(expected = "t::Tree contains itself")]
fn a_recursive_type_has_no_runtime_type_yet_and_says_so() {
    // Encoding it works as ever; only its runtime type is missing (it would wait for itself).
    let t = Tree {
        v: 1,
        kids: vec![Tree { v: 2, kids: vec![] }],
    };
    let bytes = serialize(&t, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    assert_eq!(deserialize::<Tree>(&bytes).unwrap(), t);
    let _ = Tree::dynamic_type();
}
