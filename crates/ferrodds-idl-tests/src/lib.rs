//! No code: this crate exists for its `build.rs`, which runs the IDL compiler
//! (`ferrodds-idl`) on every test IDL (`crates/ferrodds-idl/tests/idl/`) into `OUT_DIR`, and
//! for its tests, which `include!` the generated Rust — so every `cargo test --workspace`
//! compiles what the compiler writes and checks it against hand-written types and Cyclone
//! DDS's bytes.
