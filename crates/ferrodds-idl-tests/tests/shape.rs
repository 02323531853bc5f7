//! The OMG interoperability suite's `shape.idl`, generated, against the `ShapeType` that
//! `ferrodds shapes` declares by hand (crates/ferrodds-cli/src/shapes/shape.rs, copied here:
//! it is private to the binary): same bytes, same key hash, same runtime type.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::{deserialize, key_hash, serialize, Cdr, Endianness, XcdrVersion};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/cyclone/shape.rs"));
}

/// `crates/ferrodds-cli/src/shapes/shape.rs`'s type.
#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "ShapeType")]
struct HandShapeType {
    #[cdr(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

fn samples() -> Vec<(generated::ShapeType, HandShapeType)> {
    [
        ("BLUE", 10, 20, 30, vec![]),
        ("RED", -1, 0, 99, vec![1, 2, 3]),
        ("", 0, 0, 0, vec![255; 100]),
    ]
    .into_iter()
    .map(|(color, x, y, shapesize, payload)| {
        (
            generated::ShapeType {
                color: color.into(),
                x,
                y,
                shapesize,
                additional_payload_size: payload.clone(),
            },
            HandShapeType {
                color: color.into(),
                x,
                y,
                shapesize,
                additional_payload_size: payload,
            },
        )
    })
    .collect()
}

#[test]
fn generated_shape_type_is_the_hand_declared_one() {
    assert_eq!(
        generated::ShapeType::dynamic_type(),
        HandShapeType::dynamic_type()
    );
    assert_eq!(generated::ShapeType::TYPE_NAME, "ShapeType");
    for (generated, hand) in samples() {
        for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
            for endianness in [Endianness::Little, Endianness::Big] {
                let bytes = serialize(&generated, version, endianness).unwrap();
                assert_eq!(bytes, serialize(&hand, version, endianness).unwrap());
                assert_eq!(
                    deserialize::<generated::ShapeType>(&bytes).unwrap(),
                    generated
                );
            }
            assert_eq!(
                key_hash(&generated, version).unwrap(),
                key_hash(&hand, version).unwrap()
            );
        }
    }
}

#[test]
fn shape_bytes_and_key_hash_are_the_suites() {
    let (blue, _) = &samples()[0];
    let blue = generated::ShapeType {
        additional_payload_size: vec![7],
        x: 1,
        y: 2,
        ..blue.clone()
    };
    // The same bytes the Python output must give (crates/ferrodds-py/tests/test_idl_compiler.py).
    let bytes = serialize(&blue, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    assert_eq!(
        hex::encode(bytes),
        concat!(
            "00090003",
            "1d000000",
            "05000000",
            "424c554500",
            "000000",
            "01000000",
            "02000000",
            "1e000000",
            "01000000",
            "07",
            "000000"
        )
    );
    // docs/serialization.md: "BLUE" hashes to cac217c3... as Fast DDS and RTI send it.
    let hash = key_hash(&blue, XcdrVersion::Xcdr2).unwrap().to_string();
    assert!(hash.starts_with("cac217c3"), "{hash}");
    // The bound applies: 129 characters do not fit `string<128>`.
    let long = generated::ShapeType {
        color: "x".repeat(129),
        ..Default::default()
    };
    assert!(serialize(&long, XcdrVersion::Xcdr2, Endianness::Little).is_err());
}
