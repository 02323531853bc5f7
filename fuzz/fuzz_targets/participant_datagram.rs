//! Datagrams fed to a participant running discovery, with a matched user writer and
//! reader; its tables stay bounded and it sends nothing to third parties (see
//! `ferrodds_fuzz::participant_datagram`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrodds_fuzz::participant_datagram(data));
