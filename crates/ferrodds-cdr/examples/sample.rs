//! Serializes a sample of the OMG interoperability suite's `ShapeType` in XCDR1 and XCDR2,
//! prints the bytes, the key hash and the JSON view, and decodes it back.
//!
//! `cargo run -p ferrodds-cdr --example sample -- [color] [x] [y] [size]`

use ferrodds_cdr::{deserialize, key_hash, serialize, Cdr, Endianness, JsonView, XcdrVersion};
use std::process::ExitCode;

/// `@appendable struct ShapeType { @key string<128> color; int32 x; int32 y; int32 shapesize;
/// sequence<uint8> additional_payload_size; };`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "ShapeType")]
struct ShapeType {
    #[cdr(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .chunks(4)
        .map(|c| c.iter().map(|b| format!("{b:02x}")).collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_arg(args: &[String], index: usize, name: &str, default: i32) -> Result<i32, String> {
    match args.get(index) {
        None => Ok(default),
        Some(text) => text
            .parse()
            .map_err(|_| format!("{name} must be an integer, got {text:?}")),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sample = ShapeType {
        color: args.first().cloned().unwrap_or_else(|| "BLUE".to_owned()),
        x: parse_arg(&args, 1, "x", 42)?,
        y: parse_arg(&args, 2, "y", 117)?,
        shapesize: parse_arg(&args, 3, "size", 30)?,
        additional_payload_size: Vec::new(),
    };
    println!("sample  {}", sample.to_json());
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        let bytes = serialize(&sample, version, Endianness::Little).map_err(|e| e.to_string())?;
        let back: ShapeType = deserialize(&bytes).map_err(|e| e.to_string())?;
        assert_eq!(back, sample, "a round trip gives the sample back");
        let hash = key_hash(&sample, version).map_err(|e| e.to_string())?;
        println!("{version:?}  {} bytes  {}", bytes.len(), hex(&bytes));
        println!("{version:?}  key hash {hash}");
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
