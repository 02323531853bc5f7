//! Writes the seed corpora of the RTPS targets from the captures of real peers
//! (`crates/ferrodds-rtps/tests/vectors/*.pcap`: Cyclone DDS, Fast DDS, RTI Connext):
//!
//! - `fuzz/seeds/rtps_message/`: every UDP payload of the three captures;
//! - `fuzz/seeds/parameter_list/`: the serialized payload of every DATA whose payload is a
//!   parameter list (SPDP, SEDP, participant messages; disposals' key payloads) and every
//!   DATA's inline QoS (as a bare list);
//! - `fuzz/seeds/participant_datagram/`: the first datagrams of each capture (discovery,
//!   then the first samples) in the target's record format, a handful per seed, in capture
//!   order (so that SPDP precedes SEDP).
//!
//! Identical payloads are written once.
//!
//! `cargo run --manifest-path fuzz/Cargo.toml --example pcap_seeds`. Files are named by
//! capture and frame, so running it again rewrites the same files.

#[path = "../../crates/ferrodds-rtps/tests/pcap/mod.rs"]
mod pcap;

use std::path::Path;

use ferrodds_rtps::wire::{DataPayload, Endianness, Message, Submessage};

const CAPTURES: [(&str, &str); 3] = [
    ("cyclone_pingpong.pcap", "cyclone"),
    ("fastdds_pingpong.pcap", "fastdds"),
    ("interop_rti_ping_fastdds_pong.pcap", "rti_fastdds"),
];

/// Datagrams per `participant_datagram` seed.
const PER_SEED: usize = 8;
/// Datagrams of each capture made into `participant_datagram` seeds.
const FOR_PARTICIPANT: usize = 128;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let vectors = root.join("../crates/ferrodds-rtps/tests/vectors");
    let dirs = ["rtps_message", "parameter_list", "participant_datagram"]
        .map(|d| root.join("seeds").join(d));
    for d in &dirs {
        std::fs::create_dir_all(d)?;
    }
    let mut counts = [0usize; 3];
    let mut seen = std::collections::BTreeSet::new();
    for (file, name) in CAPTURES {
        let path = vectors.join(file);
        let datagrams = pcap::udp_datagrams(&path.to_string_lossy());
        for d in &datagrams {
            // Every seed must itself pass the targets.
            ferrodds_fuzz::rtps_message(&d.payload);
            if !seen.insert(d.payload.clone()) {
                continue;
            }
            std::fs::write(
                dirs[0].join(format!("{name}_{:04}.bin", d.frame)),
                &d.payload,
            )?;
            counts[0] += 1;
            let Ok((_, iter)) = Message::parse(&d.payload) else {
                continue;
            };
            for (i, sm) in iter.flatten().enumerate() {
                let Submessage::Data(data) = sm else {
                    continue;
                };
                let mut lists = Vec::new();
                if let DataPayload::Data(p) | DataPayload::Key(p) = data.payload {
                    if matches!(p.get(..2), Some([0, 2 | 3])) {
                        lists.push(("pl", p.to_vec()));
                    }
                }
                if let Some(q) = data.inline_qos {
                    let mut bytes = q.as_bytes().to_vec();
                    // The sentinel, PID 1 in the list's byte order.
                    bytes.extend_from_slice(match q.endianness() {
                        Endianness::Little => &[1, 0, 0, 0],
                        Endianness::Big => &[0, 1, 0, 0],
                    });
                    lists.push(("qos", bytes));
                }
                for (kind, bytes) in lists {
                    ferrodds_fuzz::parameter_list(&bytes);
                    if !seen.insert(bytes.clone()) {
                        continue;
                    }
                    let seed = format!("{name}_{:04}_{i}_{kind}.bin", d.frame);
                    std::fs::write(dirs[1].join(seed), &bytes)?;
                    counts[1] += 1;
                }
            }
        }
        let first = &datagrams[..datagrams.len().min(FOR_PARTICIPANT)];
        for (n, chunk) in first.chunks(PER_SEED).enumerate() {
            let payloads: Vec<&[u8]> = chunk.iter().map(|d| &d.payload[..]).collect();
            let bytes = ferrodds_fuzz::datagram_records(&payloads);
            ferrodds_fuzz::participant_datagram(&bytes);
            std::fs::write(dirs[2].join(format!("{name}_{n:03}.bin")), &bytes)?;
            counts[2] += 1;
        }
    }
    for (d, n) in dirs.iter().zip(counts) {
        println!("{}: {n} seeds", d.display());
    }
    Ok(())
}
