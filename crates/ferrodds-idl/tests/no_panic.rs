//! The compiler never panics, whatever it reads: token soup, random text, every truncation
//! of the test IDLs, and bytes of them changed. Each input either compiles or gives an error;
//! every output (Rust, Python, C#) is generated when it parses.

#![allow(clippy::unwrap_used)]

use ferrodds_idl::Compiler;
use proptest::prelude::*;
use std::path::Path;

/// Parses and generates every language; returns whether it parsed.
fn compile(text: &str) -> bool {
    let compiler = Compiler::new()
        .source("fuzz.idl", text)
        .include_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/idl/ros2"))
        .include_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/idl"));
    let parsed = compiler.parse(&["fuzz.idl"]).is_ok();
    let _ = compiler.generate_rust(&["fuzz.idl"]);
    let _ = compiler.generate_python(&["fuzz.idl"]);
    let _ = compiler.generate_csharp(&["fuzz.idl"]);
    parsed
}

const PIECES: &[&str] = &[
    "module",
    "struct",
    "union",
    "switch",
    "case",
    "default",
    "enum",
    "bitmask",
    "typedef",
    "const",
    "sequence",
    "string",
    "wstring",
    "long",
    "unsigned",
    "short",
    "double",
    "octet",
    "char",
    "boolean",
    "int8",
    "uint64",
    "TRUE",
    "@key",
    "@id(",
    "@optional",
    "@mutable",
    "@appendable",
    "@bit_bound(",
    "@position(",
    "@value(",
    "@default(",
    "@extensibility(",
    "MUTABLE",
    "@autoid",
    "@verbatim(",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ">>",
    "<<",
    ";",
    ":",
    "::",
    ",",
    "=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "~",
    "0",
    "1",
    "7",
    "0x10",
    "4294967296",
    "99999999999999999999999999999999999999999",
    "1.5",
    "'a'",
    "\"s\"",
    "A",
    "B",
    "x",
    "y",
    "\n#define A 3\n",
    "\n#ifdef A\n",
    "\n#endif\n",
    "\n#else\n",
    "\n#include \"x.idl\"\n",
    "\n#include \"std_msgs/msg/Header.idl\"\n",
    "\n#pragma keylist A x\n",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "std_msgs::msg::Header",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|p| p.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn token_soup_never_panics(text in soup()) {
        compile(&text);
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        compile(&text);
    }
}

fn test_idls() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/idl");
    let mut files = vec![
        dir.join("shape.idl"),
        dir.join("vec.idl"),
        dir.join("kinds.idl"),
        dir.join("wide.idl"),
    ];
    for m in ["Image", "PointCloud2", "PointField", "JointState"] {
        files.push(dir.join(format!("ros2/sensor_msgs/msg/{m}.idl")));
    }
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect()
}

#[test]
fn every_truncation_of_the_test_idls_is_an_error_or_compiles() {
    for text in test_idls() {
        assert!(compile(&text), "the whole file compiles");
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for cut in cuts {
            compile(&text[..cut]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn changed_bytes_never_panic(which in 0usize..8, at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = test_idls()[which].clone().into_bytes();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        compile(&String::from_utf8_lossy(&bytes));
    }
}
