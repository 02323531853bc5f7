//! Arbitrary bytes parsed as an RTPS message; every submessage that parses round-trips
//! (see `ferrodds_fuzz::rtps_message`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrodds_fuzz::rtps_message(data));
