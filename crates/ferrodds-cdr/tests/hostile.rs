//! Hostile bytes: lengths that claim more than the input holds, malformed members, invalid
//! values and encapsulation headers. Every test asserts the exact error — its kind, its
//! byte offset in the payload (encapsulation header included) and its member path — so
//! that the messages a user sees stay precise. The memory bound on hostile counts is
//! measured separately, in `hostile_memory.rs` (it needs its own global allocator).

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::{
    deserialize, serialize, Cdr, DecodeErrorKind, Decoder, Endianness, WString, XcdrVersion,
};
use std::fmt::Debug;

// Encapsulation identifiers, as the first two bytes of a payload (options zero).
const CDR_BE: [u8; 4] = [0x00, 0x00, 0, 0];
const CDR_LE: [u8; 4] = [0x00, 0x01, 0, 0];
const PL_CDR_LE: [u8; 4] = [0x00, 0x03, 0, 0];
const CDR2_LE: [u8; 4] = [0x00, 0x07, 0, 0];
const D_CDR2_LE: [u8; 4] = [0x00, 0x09, 0, 0];
const PL_CDR2_LE: [u8; 4] = [0x00, 0x0b, 0, 0];

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Numbers")]
struct Numbers {
    items: Vec<u32>,
}

#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(type_name = "h::Point")]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Points")]
struct Points {
    pts: Vec<Point>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Named")]
struct Named {
    flag: bool,
    name: String,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "h::App")]
struct App {
    a: i32,
    b: String,
}

#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(mutable, type_name = "h::Mut")]
struct Mut {
    #[cdr(id = 1)]
    a: i32,
    #[cdr(id = 2)]
    s: String,
    #[cdr(id = 3)]
    v: Vec<i32>,
    #[cdr(id = 4)]
    w: Vec<i64>,
    #[cdr(id = 5)]
    p: Point,
    #[cdr(id = 6)]
    o: Option<u8>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Nested")]
struct Nested {
    deep: Vec<Vec<Vec<u32>>>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Grid")]
struct Grid {
    tag: u32,
    pts: [Point; 1000],
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "h::Color")]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "h::Level", bit_bound = 16)]
enum Level {
    Low,
    High = 40_000,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Painted")]
struct Painted {
    c: Color,
    l: Level,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = i32, type_name = "h::U")]
enum U {
    #[cdr(case = 1)]
    A(i32),
    #[cdr(case = 2)]
    B(String),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = Color, type_name = "h::UColor")]
enum UColor {
    #[cdr(case = Color::Red)]
    R(i32),
    #[cdr(default)]
    Other(Color, u8),
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Holder")]
struct Holder {
    u: U,
    c: UColor,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "h::Wide")]
struct Wide {
    w: WString,
}

/// A recursive type: the only kind that input can nest without bound.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "h::Tree")]
struct Tree {
    v: i32,
    kids: Vec<Tree>,
}

/// A payload: the encapsulation header, then the body's pieces.
fn payload(header: [u8; 4], body: &[&[u8]]) -> Vec<u8> {
    let mut out = header.to_vec();
    for piece in body {
        out.extend_from_slice(piece);
    }
    out
}

fn le(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// Decoding `bytes` as `T` fails with exactly `kind`, at byte `offset` of the payload, in
/// member `path`; returns the message, for the tests that check it too.
#[track_caller]
fn expect_error<T: Cdr + Debug>(
    bytes: &[u8],
    kind: DecodeErrorKind,
    offset: usize,
    path: &str,
) -> String {
    let err = match deserialize::<T>(bytes) {
        Ok(value) => panic!("expected {kind:?}, decoded {value:?}"),
        Err(err) => err,
    };
    assert_eq!(
        (&err.kind, err.offset, err.path.to_string().as_str()),
        (&kind, offset, path),
        "{err}"
    );
    err.to_string()
}

// --- lengths that claim more than the input holds

#[test]
fn a_sequence_claiming_u32_max_elements_in_20_bytes_fails_at_once() {
    let bytes = payload(CDR_LE, &[&le(u32::MAX), &[0; 12]]);
    assert_eq!(bytes.len(), 20);
    let msg = expect_error::<Numbers>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: u32::MAX.into(),
            remaining: 12,
        },
        4,
        "h::Numbers.items",
    );
    assert_eq!(
        msg,
        "at byte 4 (h::Numbers.items): expected sequence length to fit the 12 byte(s) left, \
         found 4294967295"
    );
    // The same in XCDR2 and big-endian.
    for header in [CDR2_LE, CDR_BE] {
        let bytes = payload(header, &[&[0xff; 4], &[0; 12]]);
        expect_error::<Numbers>(
            &bytes,
            DecodeErrorKind::LengthExceedsInput {
                what: "sequence length",
                claimed: u32::MAX.into(),
                remaining: 12,
            },
            4,
            "h::Numbers.items",
        );
    }
    // A count that would fit as bytes but not as 4-byte elements: 4 elements, 12 bytes.
    let bytes = payload(CDR_LE, &[&le(4), &[0; 12]]);
    expect_error::<Numbers>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: 4,
            remaining: 12,
        },
        4,
        "h::Numbers.items",
    );
}

#[test]
fn a_sequence_of_structs_checks_its_dheader_and_then_its_count() {
    // XCDR2: a sequence of structs has a DHEADER first.
    let bytes = payload(CDR2_LE, &[&le(u32::MAX), &[0; 12]]);
    expect_error::<Points>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence DHEADER",
            claimed: u32::MAX.into(),
            remaining: 12,
        },
        4,
        "h::Points.pts",
    );
    // A truthful DHEADER, then a count of 8-byte points that 8 bytes cannot hold.
    let bytes = payload(CDR2_LE, &[&le(12), &le(2), &[0; 8]]);
    expect_error::<Points>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: 2,
            remaining: 8,
        },
        8,
        "h::Points.pts",
    );
    // The count is checked against the DHEADER's window, not the whole input.
    let bytes = payload(CDR2_LE, &[&le(8), &le(1), &[0; 4], &[0; 8]]);
    expect_error::<Points>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: 1,
            remaining: 4,
        },
        8,
        "h::Points.pts",
    );
}

#[test]
fn a_string_claiming_u32_max_bytes_fails_at_once() {
    let bytes = payload(CDR_LE, &[&[1, 0, 0, 0], &le(u32::MAX), &[b'a'; 8]]);
    assert_eq!(bytes.len(), 20);
    expect_error::<Named>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "string length",
            claimed: u32::MAX.into(),
            remaining: 8,
        },
        8,
        "h::Named.name",
    );
}

#[test]
fn a_dheader_claiming_u32_max_bytes_fails_at_once() {
    let bytes = payload(D_CDR2_LE, &[&le(u32::MAX), &[0; 12]]);
    let msg = expect_error::<App>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "DHEADER",
            claimed: u32::MAX.into(),
            remaining: 12,
        },
        4,
        "h::App",
    );
    assert_eq!(
        msg,
        "at byte 4 (h::App): expected DHEADER to fit the 12 byte(s) left, found 4294967295"
    );
    // One byte too many is as wrong as four billion.
    let bytes = payload(D_CDR2_LE, &[&le(13), &[0; 12]]);
    expect_error::<App>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "DHEADER",
            claimed: 13,
            remaining: 12,
        },
        4,
        "h::App",
    );
}

/// An XCDR2 `h::Mut` holding one member: DHEADER (exact), EMHEADER, then `rest`.
fn one_member(emheader: u32, rest: &[u8]) -> Vec<u8> {
    let len = 4 + rest.len() as u32;
    payload(PL_CDR2_LE, &[&le(len), &le(emheader), rest])
}

#[test]
fn emheader_lengths_claiming_too_much_fail_at_their_nextint() {
    let lc = |code: u32, id: u32| (code << 28) | id;
    // LC 4: an explicit NEXTINT after the EMHEADER gives the length.
    let bytes = one_member(lc(4, 5), &[&le(u32::MAX)[..], &[0; 8]].concat());
    let msg = expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "member length NEXTINT (EMHEADER length code 4: NEXTINT bytes)",
            claimed: u32::MAX.into(),
            remaining: 8,
        },
        12,
        "h::Mut",
    );
    assert_eq!(
        msg,
        "at byte 12 (h::Mut): expected member length NEXTINT (EMHEADER length code 4: NEXTINT \
         bytes) to fit the 8 byte(s) left, found 4294967295"
    );
    // LC 5-7: the NEXTINT is the member's own first word, so it counts in the member.
    let huge = u64::from(u32::MAX);
    for (code, id, claimed, what) in [
        (
            5,
            2,
            4 + huge,
            "member length NEXTINT (EMHEADER length code 5: 4 + NEXTINT bytes)",
        ),
        (
            6,
            3,
            4 + 4 * huge,
            "member length NEXTINT (EMHEADER length code 6: 4 + 4 x NEXTINT bytes)",
        ),
        (
            7,
            4,
            4 + 8 * huge,
            "member length NEXTINT (EMHEADER length code 7: 4 + 8 x NEXTINT bytes)",
        ),
    ] {
        let bytes = one_member(lc(code, id), &[&le(u32::MAX)[..], &[0; 8]].concat());
        expect_error::<Mut>(
            &bytes,
            DecodeErrorKind::LengthExceedsInput {
                what,
                claimed,
                remaining: 12,
            },
            12,
            "h::Mut",
        );
    }
    // LC 6 with a count that fits as a byte length but not as 4-byte elements.
    let bytes = one_member(lc(6, 3), &[&le(3)[..], &[0; 8]].concat());
    expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "member length NEXTINT (EMHEADER length code 6: 4 + 4 x NEXTINT bytes)",
            claimed: 16,
            remaining: 12,
        },
        12,
        "h::Mut",
    );
    // LC 3: an 8-byte member with 2 bytes left in the DHEADER's window.
    let bytes = one_member(lc(3, 1), &[1, 2]);
    expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "member (EMHEADER length code 3: 8 bytes)",
            claimed: 8,
            remaining: 2,
        },
        8,
        "h::Mut",
    );
}

#[test]
fn xcdr1_parameter_lengths_past_the_end_fail_at_the_length() {
    // Extended header: PID_EXTENDED|must-understand, length 8, member id 5, length 2^32-1.
    let bytes = payload(
        PL_CDR_LE,
        &[&[0x01, 0x7f, 8, 0], &le(5), &le(u32::MAX), &[0; 4]],
    );
    let msg = expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "PL_CDR extended parameter length",
            claimed: u32::MAX.into(),
            remaining: 4,
        },
        12,
        "h::Mut",
    );
    assert_eq!(
        msg,
        "at byte 12 (h::Mut): expected PL_CDR extended parameter length to fit the 4 byte(s) \
         left, found 4294967295"
    );
    // Short header: id 5, length 0x7ffc.
    let bytes = payload(PL_CDR_LE, &[&[5, 0, 0xfc, 0x7f], &[0; 12]]);
    expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "PL_CDR parameter length",
            claimed: 0x7ffc,
            remaining: 12,
        },
        6,
        "h::Mut",
    );
    // An optional member of a final struct is a parameter too (XCDR1).
    #[derive(Cdr, Debug, PartialEq)]
    #[cdr(type_name = "h::Opt")]
    struct Opt {
        a: u8,
        o: Option<i64>,
    }
    let bytes = payload(
        CDR_LE,
        &[
            &[9, 0, 0, 0],
            &[0x01, 0x7f, 8, 0],
            &le(1),
            &le(1000),
            &[0; 8],
        ],
    );
    expect_error::<Opt>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "PL_CDR extended parameter length",
            claimed: 1000,
            remaining: 8,
        },
        16,
        "h::Opt.o",
    );
}

#[test]
fn nested_sequences_fail_at_the_first_count_that_cannot_fit() {
    // The outer count itself.
    let bytes = payload(CDR_LE, &[&le(u32::MAX), &[0; 12]]);
    expect_error::<Nested>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: u32::MAX.into(),
            remaining: 12,
        },
        4,
        "h::Nested.deep",
    );
    // 3 outer elements fit 12 bytes (4 each at least); the first one's count does not.
    let bytes = payload(CDR_LE, &[&le(3), &le(u32::MAX), &[0; 8]]);
    expect_error::<Nested>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: u32::MAX.into(),
            remaining: 8,
        },
        8,
        "h::Nested.deep[0]",
    );
    // Three levels: 2, then 1, then 2^32-1.
    let bytes = payload(CDR_LE, &[&le(2), &le(1), &le(u32::MAX), &[0; 4]]);
    expect_error::<Nested>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence length",
            claimed: u32::MAX.into(),
            remaining: 4,
        },
        12,
        "h::Nested.deep[0][0]",
    );
    // XCDR2: sequences of sequences carry DHEADERs; the inner one claims too much.
    let bytes = payload(CDR2_LE, &[&le(12), &le(1), &le(u32::MAX), &[0; 4]]);
    expect_error::<Nested>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence DHEADER",
            claimed: u32::MAX.into(),
            remaining: 4,
        },
        12,
        "h::Nested.deep[0]",
    );
}

#[test]
fn an_array_of_structs_in_a_short_buffer_fails_before_reading_elements() {
    let bytes = payload(CDR_LE, &[&le(7), &[0; 12]]);
    let msg = expect_error::<Grid>(
        &bytes,
        DecodeErrorKind::UnexpectedEnd {
            what: "array",
            needed: 8000,
            remaining: 12,
        },
        8,
        "h::Grid.pts",
    );
    assert_eq!(
        msg,
        "at byte 8 (h::Grid.pts): expected 8000 byte(s) of array, found only 12"
    );
    // XCDR2: the array of structs has a DHEADER, checked first.
    let bytes = payload(CDR2_LE, &[&le(7), &le(8000), &[0; 8]]);
    expect_error::<Grid>(
        &bytes,
        DecodeErrorKind::LengthExceedsInput {
            what: "array DHEADER",
            claimed: 8000,
            remaining: 8,
        },
        8,
        "h::Grid.pts",
    );
}

// --- members of mutable types

#[test]
fn an_unknown_must_understand_member_is_an_error_and_an_unknown_optional_one_is_skipped() {
    let must = (1 << 31) | (2 << 28) | 99;
    let bytes = one_member(must, &le(7));
    let msg = expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::UnknownMustUnderstand {
            type_name: "h::Mut".into(),
            id: 99,
        },
        12,
        "h::Mut",
    );
    assert_eq!(
        msg,
        "at byte 12 (h::Mut): found member id 0x63 marked must-understand, which h::Mut does \
         not have"
    );
    let bytes = one_member((2 << 28) | 99, &le(7));
    assert_eq!(deserialize::<Mut>(&bytes).unwrap(), Mut::default());

    // XCDR1, extended header: must-understand is bit 30 of the id word.
    let param = |flags: u32| {
        payload(
            PL_CDR_LE,
            &[&[0x01, 0x7f, 8, 0], &le(flags | 99), &le(4), &le(7)],
        )
    };
    expect_error::<Mut>(
        &param(0x4000_0000),
        DecodeErrorKind::UnknownMustUnderstand {
            type_name: "h::Mut".into(),
            id: 99,
        },
        16,
        "h::Mut",
    );
    assert_eq!(deserialize::<Mut>(&param(0)).unwrap(), Mut::default());

    // XCDR1, short header: must-understand is 0x4000 of the parameter id.
    let short = |pid: u16| payload(PL_CDR_LE, &[&pid.to_le_bytes(), &[4, 0], &le(7)]);
    expect_error::<Mut>(
        &short(0x4000 | 99),
        DecodeErrorKind::UnknownMustUnderstand {
            type_name: "h::Mut".into(),
            id: 99,
        },
        8,
        "h::Mut",
    );
    assert_eq!(deserialize::<Mut>(&short(99)).unwrap(), Mut::default());
    // A vendor-specific parameter (0x8000) is skipped even with must-understand set.
    assert_eq!(
        deserialize::<Mut>(&short(0x8000 | 0x4000 | 1)).unwrap(),
        Mut::default()
    );
}

#[test]
fn a_member_id_seen_twice_is_an_error() {
    let a = (2 << 28) | 1; // member a, LC 2 (4 bytes)
    let bytes = payload(PL_CDR2_LE, &[&le(16), &le(a), &le(1), &le(a), &le(2)]);
    let msg = expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::DuplicateMember {
            type_name: "h::Mut".into(),
            id: 1,
        },
        20,
        "h::Mut",
    );
    assert_eq!(
        msg,
        "at byte 20 (h::Mut): found member id 0x1 of h::Mut twice"
    );
    // XCDR1: the same with short parameter headers.
    let bytes = payload(PL_CDR_LE, &[&[1, 0, 4, 0], &le(1), &[1, 0, 4, 0], &le(2)]);
    expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::DuplicateMember {
            type_name: "h::Mut".into(),
            id: 1,
        },
        16,
        "h::Mut",
    );
}

#[test]
fn a_member_shorter_than_its_value_fails_inside_its_window() {
    // Member a (int32) given a 1-byte window by length code 0.
    let bytes = one_member(1, &[7, 0, 0, 0]);
    expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::UnexpectedEnd {
            what: "int32",
            needed: 4,
            remaining: 1,
        },
        12,
        "h::Mut.a",
    );
}

#[test]
fn an_xcdr1_extended_parameter_header_of_the_wrong_length_is_refused() {
    let bytes = payload(PL_CDR_LE, &[&[0x01, 0x7f, 4, 0], &le(1), &le(4), &le(7)]);
    let msg = expect_error::<Mut>(
        &bytes,
        DecodeErrorKind::ExtendedHeaderLength(4),
        6,
        "h::Mut",
    );
    assert_eq!(
        msg,
        "at byte 6 (h::Mut): expected the length of a PID_EXTENDED parameter header to be 8, \
         found 4"
    );
}

// --- invalid values

#[test]
fn a_boolean_other_than_0_or_1_is_refused() {
    let bytes = payload(CDR_LE, &[&[2, 0, 0, 0], &le(1), &[0]]);
    let msg = expect_error::<Named>(&bytes, DecodeErrorKind::InvalidBool(2), 4, "h::Named.flag");
    assert_eq!(
        msg,
        "at byte 4 (h::Named.flag): expected a boolean (0 or 1), found 2"
    );
}

/// `h::Named { flag: true, name }` in XCDR1 with a string of raw `bytes` and length `len`.
fn named(len: u32, bytes: &[u8]) -> Vec<u8> {
    payload(CDR_LE, &[&[1, 0, 0, 0], &le(len), bytes])
}

#[test]
fn strings_must_be_utf8_terminated_and_free_of_nul() {
    let msg = expect_error::<Named>(
        &named(5, &[b'a', b'b', 0xff, b'c', 0]),
        DecodeErrorKind::InvalidUtf8 { valid_up_to: 2 },
        14,
        "h::Named.name",
    );
    assert_eq!(
        msg,
        "at byte 14 (h::Named.name): expected UTF-8 text, found invalid bytes at offset 2 of \
         the string"
    );
    let msg = expect_error::<Named>(
        &named(3, b"abc"),
        DecodeErrorKind::StringNotTerminated(b'c'),
        14,
        "h::Named.name",
    );
    assert_eq!(
        msg,
        "at byte 14 (h::Named.name): expected a string terminated by NUL, found byte 0x63 in \
         its last place"
    );
    let msg = expect_error::<Named>(
        &named(4, b"a\0b\0"),
        DecodeErrorKind::NulInString(1),
        13,
        "h::Named.name",
    );
    assert_eq!(
        msg,
        "at byte 13 (h::Named.name): expected a string without NUL before its terminator, \
         found NUL at byte 1 of the string"
    );
    expect_error::<Named>(
        &named(0, &[]),
        DecodeErrorKind::StringLengthZero,
        8,
        "h::Named.name",
    );
    // A string ending exactly at the end of the input, without its NUL.
    expect_error::<Named>(
        &named(4, b"abc"),
        DecodeErrorKind::LengthExceedsInput {
            what: "string length",
            claimed: 4,
            remaining: 3,
        },
        8,
        "h::Named.name",
    );
}

#[test]
fn wide_strings_must_be_whole_utf16() {
    // XCDR2 counts bytes: an odd count cannot be UTF-16 code units.
    let bytes = payload(CDR2_LE, &[&le(3), &[0x41, 0, 0x42]]);
    let msg = expect_error::<Wide>(
        &bytes,
        DecodeErrorKind::OddWideStringLength(3),
        4,
        "h::Wide.w",
    );
    assert_eq!(
        msg,
        "at byte 4 (h::Wide.w): expected a wstring length in bytes that is even (2 per UTF-16 \
         code unit), found 3"
    );
    // An unpaired surrogate.
    let bytes = payload(CDR2_LE, &[&le(2), &[0x00, 0xd8]]);
    expect_error::<Wide>(&bytes, DecodeErrorKind::InvalidUtf16, 4, "h::Wide.w");
}

#[test]
fn unknown_enumerators_are_refused() {
    let bytes = payload(CDR_LE, &[&le(7), &[0, 0]]);
    let msg = expect_error::<Painted>(
        &bytes,
        DecodeErrorKind::UnknownEnumerator {
            type_name: "h::Color".into(),
            value: 7,
        },
        4,
        "h::Painted.c",
    );
    assert_eq!(
        msg,
        "at byte 4 (h::Painted.c): expected an enumerator of h::Color, found value 7"
    );
    // 16-bit enums read their two bytes as unsigned: 0x9c40 is High (40000), 0xffff nothing.
    let bytes = payload(CDR_LE, &[&le(2), &[0x40, 0x9c]]);
    assert_eq!(
        deserialize::<Painted>(&bytes).unwrap(),
        Painted {
            c: Color::Blue,
            l: Level::High
        }
    );
    let bytes = payload(CDR_LE, &[&le(2), &[0xff, 0xff]]);
    expect_error::<Painted>(
        &bytes,
        DecodeErrorKind::UnknownEnumerator {
            type_name: "h::Level".into(),
            value: 65535,
        },
        8,
        "h::Painted.l",
    );
}

#[test]
fn unknown_union_discriminators_are_refused() {
    let bytes = payload(CDR_LE, &[&le(9), &le(0), &le(0), &[0]]);
    let msg = expect_error::<Holder>(
        &bytes,
        DecodeErrorKind::UnknownDiscriminator {
            type_name: "h::U".into(),
            value: "9".into(),
        },
        4,
        "h::Holder.u",
    );
    assert_eq!(
        msg,
        "at byte 4 (h::Holder.u): expected a discriminator selecting a branch of h::U, found 9"
    );
    // An enum discriminator that names no enumerator fails in the discriminator.
    let bytes = payload(CDR_LE, &[&le(1), &le(5), &le(3), &[0]]);
    expect_error::<Holder>(
        &bytes,
        DecodeErrorKind::UnknownEnumerator {
            type_name: "h::Color".into(),
            value: 3,
        },
        12,
        "h::Holder.c.discriminator",
    );
    // A known one without a branch of its own goes to the default branch.
    let bytes = payload(CDR_LE, &[&le(1), &le(5), &le(2), &[4]]);
    assert_eq!(
        deserialize::<Holder>(&bytes).unwrap(),
        Holder {
            u: U::A(5),
            c: UColor::Other(Color::Blue, 4)
        }
    );
}

// --- encapsulation

#[test]
fn unknown_encapsulations_and_truncated_headers_are_refused() {
    for id in [0x0004u16, 0x0010, 0x0015, 0xffff] {
        let mut bytes = id.to_be_bytes().to_vec();
        bytes.extend_from_slice(&[0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
        let msg =
            expect_error::<Point>(&bytes, DecodeErrorKind::UnsupportedEncapsulation(id), 0, "");
        assert_eq!(
            msg,
            format!(
                "at byte 0: expected an encapsulation id of CDR, PL_CDR, CDR2, D_CDR2 or \
                 PL_CDR2, found {id:#06x}"
            )
        );
    }
    for len in 0..4 {
        let bytes = &CDR_LE[..len];
        let msg = expect_error::<Point>(
            bytes,
            DecodeErrorKind::UnexpectedEnd {
                what: "encapsulation header",
                needed: 4,
                remaining: len,
            },
            0,
            "",
        );
        assert_eq!(
            msg,
            format!("at byte 0: expected 4 byte(s) of encapsulation header, found only {len}")
        );
    }
    // A header and nothing else.
    expect_error::<Point>(
        &CDR_LE,
        DecodeErrorKind::UnexpectedEnd {
            what: "int32",
            needed: 4,
            remaining: 0,
        },
        4,
        "h::Point.x",
    );
}

// --- nesting

/// `h::Tree` in XCDR1 nested `depth` deep: each level an int32 and a count of 1, the last
/// level a count of 0.
fn tree(depth: usize) -> Vec<u8> {
    let mut bytes = CDR_LE.to_vec();
    for level in 0..depth {
        bytes.extend_from_slice(&le(level as u32));
        bytes.extend_from_slice(&le(u32::from(level + 1 < depth)));
    }
    bytes
}

#[test]
fn recursive_types_nest_at_most_max_depth_deep() {
    // A few kilobytes of input would overflow the stack without the limit.
    let value = deserialize::<Tree>(&tree(Decoder::MAX_DEPTH)).unwrap();
    let mut depth = 1;
    let mut t = &value;
    while let [kid] = t.kids.as_slice() {
        t = kid;
        depth += 1;
    }
    assert_eq!(depth, Decoder::MAX_DEPTH);

    let err = deserialize::<Tree>(&tree(Decoder::MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::NestingTooDeep { limit: 128 });
    assert_eq!(err.offset, 4 + 128 * 8);
    let path = format!("h::Tree{}", ".kids[0]".repeat(128));
    assert_eq!(err.path.to_string(), path);
    assert!(err
        .to_string()
        .ends_with("expected structs and unions nested at most 128 deep, found deeper nesting"));

    // Far deeper input fails the same way, on the default test thread's stack.
    let err = deserialize::<Tree>(&tree(100_000)).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::NestingTooDeep { limit: 128 });

    // XCDR2: the same limit, whatever the DHEADERs say.
    let mut nested = Tree { v: 0, kids: vec![] };
    for v in 1..=Decoder::MAX_DEPTH as i32 {
        nested = Tree {
            v,
            kids: vec![nested],
        };
    }
    let bytes = serialize(&nested, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    let err = deserialize::<Tree>(&bytes).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::NestingTooDeep { limit: 128 });
    nested = nested.kids.pop().unwrap();
    let bytes = serialize(&nested, XcdrVersion::Xcdr2, Endianness::Big).unwrap();
    assert_eq!(deserialize::<Tree>(&bytes).unwrap(), nested);
}
