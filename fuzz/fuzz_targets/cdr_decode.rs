//! Arbitrary bytes decoded as a representative set of derived types; whatever decodes must
//! round-trip (see `ferrodds_fuzz::cdr_decode`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrodds_fuzz::cdr_decode(data));
