//! Arbitrary text read as JSON views of a set of runtime types, by the direct reader and
//! through a document: both must agree (see `ferrodds_fuzz::json_text`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrodds_fuzz::json_text(data));
