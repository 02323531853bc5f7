//! Key-only samples (what disposes and unregisters carry) and key hashes of the OMG
//! interoperability suite's ShapeType, against the bytes real peers send.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::{
    deserialize_key_sample, key_hash, key_hash_variants, serialize_key_sample, Cdr, Endianness,
    XcdrVersion,
};

/// `@appendable struct ShapeType { @key string<128> color; int32 x; int32 y; int32 shapesize;
/// sequence<uint8> additional_payload_size; };`
#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "ShapeType")]
struct ShapeType {
    #[cdr(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

fn blue() -> ShapeType {
    ShapeType {
        color: "BLUE".into(),
        ..ShapeType::default()
    }
}

/// Cyclone DDS 11 (and FerroDDS): D_CDR2_LE, a DHEADER, then the key member.
const WITH_DHEADER: [u8; 20] = [
    0x00, 0x09, 0x00, 0x03, 0x09, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, b'B', b'L', b'U', b'E',
    0x00, 0x00, 0x00, 0x00,
];

/// Cyclone DDS 0.10.2: the same encapsulation, the key member without a DHEADER.
const WITHOUT_DHEADER: [u8; 16] = [
    0x00, 0x09, 0x00, 0x03, 0x05, 0x00, 0x00, 0x00, b'B', b'L', b'U', b'E', 0x00, 0x00, 0x00, 0x00,
];

#[test]
fn we_write_the_key_only_sample_with_its_dheader() {
    let bytes = serialize_key_sample(&blue(), XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    assert_eq!(bytes, WITH_DHEADER);
}

#[test]
fn both_forms_of_the_key_only_sample_are_read() {
    assert_eq!(
        deserialize_key_sample::<ShapeType>(&WITH_DHEADER).unwrap(),
        blue()
    );
    assert_eq!(
        deserialize_key_sample::<ShapeType>(&WITHOUT_DHEADER).unwrap(),
        blue()
    );
    // A key whose length happens to equal what follows it is still read right both ways.
    let long = ShapeType {
        color: "a-colour-longer-than-sixteen".into(),
        ..ShapeType::default()
    };
    let framed = serialize_key_sample(&long, XcdrVersion::Xcdr2, Endianness::Big).unwrap();
    assert_eq!(deserialize_key_sample::<ShapeType>(&framed).unwrap(), long);
    let mut bare = framed[..4].to_vec();
    bare.extend_from_slice(&framed[8..]);
    assert_eq!(deserialize_key_sample::<ShapeType>(&bare).unwrap(), long);
    // XCDR1 has no DHEADER at all.
    let xcdr1 = serialize_key_sample(&long, XcdrVersion::Xcdr1, Endianness::Little).unwrap();
    assert_eq!(xcdr1[..2], [0x00, 0x01]);
    assert_eq!(deserialize_key_sample::<ShapeType>(&xcdr1).unwrap(), long);
}

#[test]
fn garbage_is_still_an_error() {
    let mut bad = WITHOUT_DHEADER;
    bad[4] = 0x40; // a string length past the end
    assert!(deserialize_key_sample::<ShapeType>(&bad).is_err());
    assert!(deserialize_key_sample::<ShapeType>(&WITH_DHEADER[..6]).is_err());
}

#[test]
fn a_string_key_hashes_its_holder_as_it_is() {
    // string<128>: the holder can exceed 16 bytes, so the hash is the MD5 of the holder
    // 00 00 00 05 'B' 'L' 'U' 'E' 00 — not of the holder padded to 16 (what FerroDDS sent
    // before: cdac8f73…, which Fast DDS 2.9.1, computing cac217c3…, did not recognise).
    let hash = key_hash(&blue(), XcdrVersion::Xcdr2).unwrap().to_string();
    assert!(hash.starts_with("cac217c3"), "{hash}");
    assert_eq!(
        hash,
        key_hash(&blue(), XcdrVersion::Xcdr1).unwrap().to_string()
    );
    let variants: Vec<String> = key_hash_variants(&blue())
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(variants[0], hash);
    assert!(
        variants.iter().any(|v| v.starts_with("cdac8f73")),
        "{variants:?}"
    );
}
