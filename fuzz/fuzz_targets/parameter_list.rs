//! Arbitrary bytes parsed as a parameter list and as SPDP and SEDP data; what parses
//! round-trips (see `ferrodds_fuzz::parameter_list`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrodds_fuzz::parameter_list(data));
