// The hand-declared Rust types of crates/ferrodds-cdr/tests/cyclone_vectors.rs (which hold
// them to Cyclone DDS's bytes and TypeObjects), made public for the comparison with the
// generated ones.

use ferrodds_cdr::{Cdr, Octet};

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "vec::Color")]
pub(crate) enum Color {
    #[cdr(name = "RED")]
    Red,
    #[cdr(name = "GREEN")]
    Green,
    #[cdr(name = "BLUE")]
    Blue,
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "vec::Small", bit_bound = 8)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub(crate) enum Small {
    S_A,
    S_B,
    S_C,
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(bitmask, type_name = "vec::Flags", flags = "F0 F1 F2 F3")]
pub(crate) struct Flags(pub(crate) u16);

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "vec::Point")]
pub(crate) struct Point {
    x: i32,
    y: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Primitives")]
pub(crate) struct Primitives {
    b: bool,
    o: Octet,
    c: char,
    i8: i8,
    u8: u8,
    i16: i16,
    u16: u16,
    i32: i32,
    u32: u32,
    i64: i64,
    u64: u64,
    f32: f32,
    f64: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Strings")]
pub(crate) struct Strings {
    s: String,
    #[cdr(bound = 8)]
    bs: String,
    ss: Vec<String>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Collections")]
pub(crate) struct Collections {
    arr: [i32; 3],
    grid: [[i16; 3]; 2],
    pts: [Point; 2],
    bytes: Vec<u8>,
    longs: Vec<i64>,
    #[cdr(bound = 4)]
    bounded_pts: Vec<Point>,
    nested: Vec<Vec<i16>>,
    names: [String; 2],
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Enums")]
pub(crate) struct Enums {
    c: Color,
    s: Small,
    f: Flags,
    cs: Vec<Color>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = i32, type_name = "vec::U")]
pub(crate) enum U {
    #[cdr(case = 1, case = 2, name = "a")]
    A(i32, i32),
    #[cdr(case = 3, name = "b")]
    B(String),
    #[cdr(default, name = "c")]
    C(i32, f64),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = Color, type_name = "vec::UE")]
pub(crate) enum UE {
    #[cdr(case = Color::Red, name = "r")]
    R(i16),
    #[cdr(case = Color::Green)]
    Green,
    #[cdr(case = Color::Blue, name = "p")]
    P(Point),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = bool, type_name = "vec::UB")]
pub(crate) enum UB {
    #[cdr(case = true, name = "t")]
    T(i32),
    #[cdr(default, name = "f")]
    F(bool, String),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = char, type_name = "vec::UC")]
pub(crate) enum UC {
    #[cdr(case = 'a', name = "a")]
    A(i64),
    #[cdr(case = 'b', name = "b")]
    B(Octet),
    #[cdr(no_branch)]
    Other(char),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, appendable, discriminator = i16, type_name = "vec::UA")]
pub(crate) enum UA {
    #[cdr(case = 1, name = "one")]
    One(i32),
    #[cdr(case = 2, name = "two")]
    Two(Point),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Unions")]
pub(crate) struct Unions {
    u1: U,
    u2: UE,
    u3: UB,
    u4: UC,
    tail: i8,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::UnionsApp")]
pub(crate) struct UnionsApp {
    ua: UA,
    tail: i8,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::Appendable")]
pub(crate) struct Appendable {
    #[cdr(key)]
    id: i32,
    name: String,
    p: Point,
    pts: Vec<Point>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "vec::Mutable")]
pub(crate) struct Mutable {
    #[cdr(key)]
    id: i32,
    #[cdr(id = 10)]
    name: String,
    value: f64,
    opt: Option<i32>,
    opt_s: Option<String>,
    data: Vec<u8>,
    #[cdr(must_understand)]
    mu: i16,
    app: Appendable,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "vec::MutableKinds")]
pub(crate) struct MutableKinds {
    b: bool,
    s: Small,
    f: Flags,
    c: Color,
    s16: Vec<i16>,
    s32: Vec<i32>,
    ss: Vec<String>,
    arr: [i32; 2],
    parr: [Point; 2],
    u: U,
    pt: Point,
    ch: char,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, autoid = "hash", type_name = "vec::Hashed")]
pub(crate) struct Hashed {
    a: i32,
    b: String,
    c: i64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::FinalOptionals")]
pub(crate) struct FinalOptionals {
    a: i32,
    b: Option<i32>,
    c: Option<String>,
    d: Option<Point>,
    e: Option<f64>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::AppOptionals")]
pub(crate) struct AppOptionals {
    a: i8,
    b: Option<i64>,
    c: Option<String>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::BaseF")]
pub(crate) struct BaseF {
    #[cdr(key)]
    id: i32,
    a: i16,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::DerivedF")]
pub(crate) struct DerivedF {
    #[cdr(base)]
    base: BaseF,
    b: String,
    c: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::BaseA")]
pub(crate) struct BaseA {
    #[cdr(key)]
    id: i32,
    a: i16,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::DerivedA")]
pub(crate) struct DerivedA {
    #[cdr(base)]
    base: BaseA,
    b: String,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "vec::BaseM")]
pub(crate) struct BaseM {
    #[cdr(key)]
    id: i32,
    a: i16,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "vec::DerivedM")]
pub(crate) struct DerivedM {
    #[cdr(base)]
    base: BaseM,
    b: String,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::KeySmall")]
pub(crate) struct KeySmall {
    #[cdr(key)]
    id: i32,
    #[cdr(key)]
    x: i64,
    v: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::KeyBounded")]
pub(crate) struct KeyBounded {
    #[cdr(key)]
    id: i32,
    #[cdr(key, bound = 12)]
    name: String,
    v: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::KeyString")]
pub(crate) struct KeyString {
    #[cdr(key)]
    name: String,
    v: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::KeyNested")]
pub(crate) struct KeyNested {
    #[cdr(key)]
    p: Point,
    #[cdr(key)]
    tag: Octet,
    other: String,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Nested")]
pub(crate) struct Nested {
    a: Appendable,
    m: Mutable,
    sa: Vec<Appendable>,
    fo: FinalOptionals,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::KeyedPayload")]
pub(crate) struct KeyedPayload {
    #[cdr(key)]
    id: i32,
    payload: Vec<u8>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "vec::Align")]
pub(crate) struct Align {
    a: i8,
    b: i64,
    c: i8,
    d: f64,
    e: f32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "vec::AlignApp")]
pub(crate) struct AlignApp {
    a: i8,
    b: i64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "vec::AlignMut")]
pub(crate) struct AlignMut {
    a: i8,
    b: i64,
    c: Vec<i64>,
}

