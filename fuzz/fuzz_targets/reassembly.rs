//! An RTPS reader matched with one writer, driven by DATA_FRAG, DATA, HEARTBEAT,
//! HEARTBEAT_FRAG and GAP submessages decoded from the input; what it holds under
//! reassembly stays within its limits (see `ferrodds_fuzz::reassembly`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferrodds_fuzz::reassembly(data));
