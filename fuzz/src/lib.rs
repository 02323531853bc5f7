//! What the fuzz targets run, kept out of the targets so that each target is one line and
//! the seed corpus is written from the same types (`cargo run --example write_seeds`).
//!
//! `cdr_decode`: arbitrary bytes are decoded as each of a representative set of derived
//! types. Decoding must never panic, and whatever decodes must re-encode in the same XCDR
//! version and byte order, and decode again to the same value (round trip). The keyed
//! types are also decoded as key-only samples (what dispose and unregister carry), which
//! must re-encode to the same key. The same bytes go through each type's runtime type
//! (`ferrodds_cdr::dynamic`), which must agree with the derived code where both decode.
//!
//! The RTPS targets (in [`rtps`], re-exported here):
//!
//! - `rtps_message`: arbitrary bytes parsed as an RTPS message; every submessage is
//!   iterated and, where it parses, emitted and parsed again (round trip), as is the whole
//!   message.
//! - `parameter_list`: arbitrary bytes parsed as a parameter list and as SPDP and SEDP
//!   data; what parses is emitted and must parse to the same value.
//! - `reassembly`: an RTPS reader matched with one writer is driven by a sequence of
//!   DATA_FRAG, DATA, HEARTBEAT, HEARTBEAT_FRAG and GAP submessages decoded from the
//!   input; it must never panic, and what it holds under reassembly must stay within its
//!   configured bounds.
//! - `participant_datagram`: arbitrary datagrams fed to a participant running discovery,
//!   with a user writer and reader matched to a remote participant, timers interleaved.
//!
//! `json_text`: arbitrary text read as a value of each of a set of runtime types by the
//! JSON view's direct reader (`DynamicValue::from_json_text`) and through a
//! `serde_json::Value` document: both must give the same value or the same error.

use ferrodds_cdr::{
    deserialize, key_hash, serialize, Cdr, Decoder, EncapsulationHeader, Encoder, Endianness,
    WString, XcdrVersion,
};
use std::fmt::Debug;

pub mod rtps;
pub use rtps::{datagram_records, parameter_list, participant_datagram, reassembly, rtps_message};

/// A final struct of two members.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "fuzz::Point")]
pub struct Point {
    /// Abscissa.
    pub x: i32,
    /// Ordinate.
    pub y: i32,
}

/// A plain enum with an explicit value.
#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "fuzz::Mode")]
pub enum Mode {
    /// 0.
    Idle,
    /// 1.
    Run,
    /// 7.
    Fault = 7,
}

/// An enum of 16 bits on the wire.
#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(type_name = "fuzz::Level", bit_bound = 16)]
pub enum Level {
    /// 0.
    Low,
    /// 300.
    High = 300,
}

/// A bitmask.
#[derive(Cdr, Debug, Clone, Copy, PartialEq)]
#[cdr(bitmask, type_name = "fuzz::Flags")]
pub struct Flags(pub u32);

/// An appendable struct with a key, a bounded string and an enum.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "fuzz::Header")]
pub struct Header {
    /// Key.
    #[cdr(key)]
    pub id: u32,
    /// Bounded string.
    #[cdr(bound = 16)]
    pub frame: String,
    /// 8-byte member (aligned to 8 in XCDR1).
    pub stamp: i64,
    /// Enum member.
    pub mode: Mode,
    /// Optional member of an appendable struct.
    pub note: Option<String>,
}

/// A union on int32 with a unit branch, a multi-label branch and a default branch.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = i32, type_name = "fuzz::Command")]
pub enum Command {
    /// Case 1.
    #[cdr(case = 1)]
    Stop,
    /// Cases 2 and 3.
    #[cdr(case = 2, case = 3)]
    Move(i32, [f32; 3]),
    /// Case 4.
    #[cdr(case = 4)]
    Say(String),
    /// Everything else.
    #[cdr(default)]
    Other(i32, Vec<u8>),
}

/// An appendable union on an enum, without a default branch but with a no_branch variant.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, appendable, discriminator = Mode, type_name = "fuzz::Status")]
pub enum Status {
    /// Idle.
    #[cdr(case = Mode::Idle)]
    Idle(u16),
    /// Running.
    #[cdr(case = Mode::Run)]
    Run(Header),
    /// Any other mode.
    #[cdr(no_branch)]
    Unselected(Mode),
}

/// A union on a char without a default branch (an unknown discriminator is an error).
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(union, discriminator = char, type_name = "fuzz::Tagged")]
pub enum Tagged {
    /// 'a'.
    #[cdr(case = 'a')]
    A(i64),
    /// 'b'.
    #[cdr(case = 'b')]
    B(bool),
}

/// A mutable struct with a nested appendable struct, sequences, strings, optionals and
/// unions.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "fuzz::Telemetry")]
pub struct Telemetry {
    /// Key.
    #[cdr(key)]
    pub id: i32,
    /// Nested appendable struct.
    pub header: Header,
    /// Sequence of strings.
    pub names: Vec<String>,
    /// Sequence of 8-byte primitives.
    #[cdr(id = 20)]
    pub readings: Vec<f64>,
    /// Sequence of sequences.
    pub samples: Vec<Vec<i16>>,
    /// Optional string.
    pub note: Option<String>,
    /// Optional struct.
    pub extra: Option<Header>,
    /// Must-understand union.
    #[cdr(must_understand)]
    pub command: Command,
    /// Bitmask.
    pub flags: Flags,
    /// Boolean.
    pub ok: bool,
    /// IDL char.
    pub c: char,
    /// Wide string.
    pub w: WString,
    /// Bounded sequence of structs.
    #[cdr(bound = 4)]
    pub points: Vec<Point>,
    /// Union on a char.
    pub tagged: Tagged,
}

/// A final struct with arrays.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "fuzz::Frame")]
pub struct Frame {
    /// Two-dimensional array of primitives.
    pub grid: [[i16; 3]; 2],
    /// Array of structs.
    pub points: [Point; 2],
    /// Array of strings.
    pub names: [String; 2],
    /// Array of octets.
    pub bytes: [u8; 5],
    /// Optional member of a final struct.
    pub tag: Option<i32>,
    /// 16-bit enum.
    pub level: Level,
    /// Appendable union.
    pub status: Status,
    /// 8-byte integer.
    pub big: u64,
    /// Float.
    pub f: f32,
    /// Array of sequences.
    pub runs: [Vec<u8>; 2],
}

/// Base of an inheritance (mutable).
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "fuzz::Base")]
pub struct Base {
    /// Key.
    #[cdr(key)]
    pub id: i32,
    /// Member.
    pub a: i16,
}

/// Derived struct with hashed member ids.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, autoid = "hash", type_name = "fuzz::Derived")]
pub struct Derived {
    /// The base.
    #[cdr(base)]
    pub base: Base,
    /// Member.
    pub b: String,
    /// Optional member of a mutable struct.
    pub c: Option<f64>,
}

/// A keyed struct of the members the JSON view's reader walks itself: octets (base64),
/// sequences of structs and of octets, a nested struct, an optional.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "fuzz::Blob")]
pub struct Blob {
    /// Key.
    #[cdr(key)]
    pub id: i32,
    /// Sequence of octets.
    pub payload: Vec<u8>,
    /// Sequence of structs.
    pub headers: Vec<Header>,
    /// Nested final struct.
    pub point: Point,
    /// Optional string.
    pub note: Option<String>,
    /// Sequence of sequences of octets.
    pub runs: Vec<Vec<u8>>,
}

/// A recursive type: hostile input can nest it as deep as its length allows.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "fuzz::Tree")]
pub struct Tree {
    /// Value.
    pub v: i32,
    /// Children.
    pub kids: Vec<Tree>,
}

/// Decodes `data` as `T`; when it decodes, re-encodes it in the version and byte order it
/// came in, decodes that again, and checks that nothing changed.
pub fn round_trip<T: Cdr + PartialEq + Debug>(data: &[u8]) {
    let Ok(first) = deserialize::<T>(data) else {
        return;
    };
    let header =
        EncapsulationHeader::parse(data).expect("the payload decoded, so its header parses");
    let (version, endianness) = (header.id.version(), header.id.endianness());
    let bytes = serialize(&first, version, endianness)
        .unwrap_or_else(|e| panic!("decoded {first:?} but cannot encode it again: {e}"));
    let second = deserialize::<T>(&bytes).unwrap_or_else(|e| {
        panic!("decoded {first:?}, encoded it as {bytes:02x?}, which does not decode: {e}")
    });
    // Values are equal, or (a NaN is never equal to itself) their JSON views are.
    assert!(
        first == second || first.to_json() == second.to_json(),
        "decoded {first:?}, encoded it as {bytes:02x?}, which decodes to {second:?}"
    );
    let again = serialize(&second, version, endianness)
        .unwrap_or_else(|e| panic!("cannot encode {second:?} again: {e}"));
    assert_eq!(
        bytes, again,
        "encoding {second:?} twice gives different bytes"
    );
}

/// The runtime path beside the derived one: `data` decoded through `T`'s runtime type must
/// never panic, and when both paths decode it, both must encode it to the same bytes.
/// (They may disagree on what decodes: a runtime union takes a discriminator no branch
/// names as legal IDL, a derived one refuses it.)
pub fn runtime_round_trip<T: Cdr + Debug>(data: &[u8]) {
    let ty = T::dynamic_type();
    // The keys alone (how a reader finds a large sample's instance) never panic either.
    let keys = ferrodds_cdr::dynamic::deserialize_keys(&ty, data);
    let Ok(dynamic_value) = ferrodds_cdr::dynamic::deserialize(&ty, data) else {
        return;
    };
    // Where both decode, the keys hash as the whole sample's do.
    if let (Ok(keys), true) = (&keys, ty.is_keyed()) {
        use ferrodds_cdr::dynamic::key_hash;
        use ferrodds_cdr::XcdrVersion::Xcdr2;
        assert_eq!(
            key_hash(&ty, keys, Xcdr2).ok(),
            key_hash(&ty, &dynamic_value, Xcdr2).ok(),
            "the keys of {dynamic_value:?} read alone: {keys:?}"
        );
    }
    let header =
        EncapsulationHeader::parse(data).expect("the payload decoded, so its header parses");
    let (version, endianness) = (header.id.version(), header.id.endianness());
    let ours = ferrodds_cdr::dynamic::serialize(&ty, &dynamic_value, version, endianness)
        .unwrap_or_else(|e| panic!("decoded {dynamic_value:?} but cannot encode it: {e}"));
    if let Ok(derived) = deserialize::<T>(data) {
        let theirs = serialize(&derived, version, endianness)
            .unwrap_or_else(|e| panic!("decoded {derived:?} but cannot encode it: {e}"));
        assert_eq!(
            ours, theirs,
            "the runtime path encodes {dynamic_value:?} otherwise than the derived one {derived:?}"
        );
    }
}

/// Decodes the body of `data` as a key-only sample of `T`; when it decodes, encodes its
/// key-only sample again and checks that it decodes to the same key.
pub fn key_sample_round_trip<T: Cdr + Debug>(data: &[u8]) {
    let Ok(header) = EncapsulationHeader::parse(data) else {
        return;
    };
    let (version, endianness) = (header.id.version(), header.id.endianness());
    let body = &data[EncapsulationHeader::LEN..];
    let Ok(first) = T::decode_key_sample(&mut Decoder::new(body, version, endianness)) else {
        return;
    };
    let mut bytes = Vec::new();
    first
        .encode_key_sample(&mut Encoder::new(&mut bytes, version, endianness))
        .unwrap_or_else(|e| panic!("decoded key sample {first:?} but cannot encode it: {e}"));
    let second = T::decode_key_sample(&mut Decoder::new(&bytes, version, endianness))
        .unwrap_or_else(|e| {
            panic!("key sample {first:?} encoded as {bytes:02x?} does not decode: {e}")
        });
    let hash = |v: &T| key_hash(v, version).expect("a decoded key encodes");
    assert_eq!(
        hash(&first),
        hash(&second),
        "key sample {first:?} came back as {second:?}"
    );
}

/// The `cdr_decode` target: `data` decoded as each type of the set.
pub fn cdr_decode(data: &[u8]) {
    round_trip::<Telemetry>(data);
    round_trip::<Frame>(data);
    round_trip::<Derived>(data);
    round_trip::<Header>(data);
    round_trip::<Command>(data);
    round_trip::<Tree>(data);
    // Not Telemetry: a key-only sample leaves its union member out, and unions have no
    // default to take its place, so its own key samples do not decode (MissingMember).
    key_sample_round_trip::<Header>(data);
    key_sample_round_trip::<Derived>(data);
    // Not Tree: a type that contains itself has no runtime type yet.
    runtime_round_trip::<Telemetry>(data);
    runtime_round_trip::<Frame>(data);
    runtime_round_trip::<Derived>(data);
    runtime_round_trip::<Header>(data);
    runtime_round_trip::<Command>(data);
}

/// The `json_text` target: `data`, when it is UTF-8, read as each type of the set by the
/// direct reader and through the document.
pub fn json_text(data: &[u8]) {
    use ferrodds_cdr::dynamic::DynamicValue;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for ty in [
        Blob::dynamic_type(),
        Telemetry::dynamic_type(),
        Frame::dynamic_type(),
        Derived::dynamic_type(),
    ] {
        let direct = DynamicValue::from_json_text(&ty, text).map_err(|e| e.to_string());
        let document = serde_json::from_str::<serde_json::Value>(text)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|json| DynamicValue::from_json(&ty, &json).map_err(|e| e.to_string()));
        // Debug, not `==`: a NaN read both ways is the same value.
        assert_eq!(format!("{direct:?}"), format!("{document:?}"), "{text}");
    }
}

/// The JSON texts of the seed values, named for their file in `fuzz/seeds/json_text/`.
pub fn json_seeds() -> Vec<(String, Vec<u8>)> {
    use ferrodds_cdr::dynamic;
    fn text<T: Cdr>(value: &T) -> Vec<u8> {
        let ty = T::dynamic_type();
        let bytes = serialize(value, XcdrVersion::Xcdr2, Endianness::Little).expect("a seed");
        let value = dynamic::deserialize(&ty, &bytes).expect("a seed decodes");
        value.to_json_text(&ty).into_bytes()
    }
    let blob = Blob {
        id: -3,
        payload: (0..=255).collect(),
        headers: vec![header(1), header(2)],
        point: Point { x: 1, y: 2 },
        note: None,
        runs: vec![vec![], vec![0xFF; 7]],
    };
    let values = seed_values();
    vec![
        ("blob.json".into(), text(&blob)),
        ("telemetry.json".into(), text(&values.0)),
        ("frame.json".into(), text(&values.1)),
        ("derived.json".into(), text(&values.2)),
    ]
}

fn header(id: u32) -> Header {
    Header {
        id,
        frame: "map".into(),
        stamp: -5_000_000_000,
        mode: Mode::Run,
        note: Some("n".into()),
    }
}

/// Valid encodings of each type, in each version and byte order, named for their file in
/// `fuzz/seeds/cdr_decode/`.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let (telemetry, frame, derived) = seed_values();
    let tree = Tree {
        v: 1,
        kids: vec![
            Tree {
                v: 2,
                kids: vec![Tree { v: 3, kids: vec![] }],
            },
            Tree { v: 4, kids: vec![] },
        ],
    };
    let mut out = Vec::new();
    for (version, v) in [(XcdrVersion::Xcdr1, "xcdr1"), (XcdrVersion::Xcdr2, "xcdr2")] {
        for (endianness, e) in [(Endianness::Little, "le"), (Endianness::Big, "be")] {
            let mut add = |name: &str, bytes: Result<Vec<u8>, ferrodds_cdr::EncodeError>| {
                let bytes = bytes.unwrap_or_else(|err| panic!("seed {name}: {err}"));
                out.push((format!("{name}_{v}_{e}.bin"), bytes));
            };
            add("telemetry", serialize(&telemetry, version, endianness));
            add("frame", serialize(&frame, version, endianness));
            add("derived", serialize(&derived, version, endianness));
            add(
                "command",
                serialize(&Command::Other(9, vec![1, 2]), version, endianness),
            );
            add("tree", serialize(&tree, version, endianness));
            add("header_key", key_sample(&header(5), version, endianness));
            add("derived_key", key_sample(&derived, version, endianness));
        }
    }
    out
}

/// The seed values of Telemetry, Frame and Derived (both corpora start from them).
fn seed_values() -> (Telemetry, Frame, Derived) {
    let telemetry = Telemetry {
        id: 7,
        header: header(1),
        names: vec!["a".into(), "".into()],
        readings: vec![1.5, -0.25],
        samples: vec![vec![1, 2], vec![]],
        note: None,
        extra: Some(header(2)),
        command: Command::Move(3, [1.0, 2.0, 3.0]),
        flags: Flags(0b1010),
        ok: true,
        c: 'é',
        w: WString::from("wide ✓"),
        points: vec![Point { x: 1, y: -1 }],
        tagged: Tagged::A(-9),
    };
    let frame = Frame {
        grid: [[1, 2, 3], [4, 5, 6]],
        points: [Point { x: 1, y: 2 }, Point { x: 3, y: 4 }],
        names: ["x".into(), "yz".into()],
        bytes: [1, 2, 3, 4, 5],
        tag: Some(11),
        level: Level::High,
        status: Status::Run(header(3)),
        big: u64::MAX,
        f: 0.5,
        runs: [vec![1], vec![2, 3]],
    };
    let derived = Derived {
        base: Base { id: 4, a: -2 },
        b: "derived".into(),
        c: Some(2.5),
    };
    (telemetry, frame, derived)
}

/// A key-only sample with its encapsulation header.
fn key_sample<T: Cdr>(
    value: &T,
    version: XcdrVersion,
    endianness: Endianness,
) -> Result<Vec<u8>, ferrodds_cdr::EncodeError> {
    let id = ferrodds_cdr::RepresentationId::for_type(version, T::extensibility(), endianness);
    let mut bytes = EncapsulationHeader { id, options: 0 }.to_bytes().to_vec();
    value.encode_key_sample(&mut Encoder::new(&mut bytes, version, endianness))?;
    Ok(bytes)
}
