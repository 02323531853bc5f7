//! ddsperf's participant USER_DATA, by which it recognises its peers: it only answers pings
//! from, and only counts pongs of, participants whose USER_DATA reads
//! `DDSPerf:<has data reader>:<pid>:<hostname>` (`async_participant_data_listener` in
//! Cyclone DDS's `ddsperf.c`).

/// ddsperf's USER_DATA: `DDSPerf:<1 if it has a data reader, else 0>:<pid>:<hostname>`.
pub(crate) fn ddsperf_user_data(has_data_reader: bool) -> Vec<u8> {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "?".into());
    format!(
        "DDSPerf:{}:{}:{host}",
        u8::from(has_data_reader),
        std::process::id()
    )
    .into_bytes()
}
