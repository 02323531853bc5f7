//! Parsing whole SPDP and SEDP datagrams captured from Cyclone DDS 0.10.2, Fast DDS 2.9.1
//! and RTI Connext 6.1.2 (`tests/vectors/`, read at start with the capture tests' pcap
//! reader).
//!
//! Each bench takes one datagram as the vendor sent it and does what a receiver does with
//! it: `Message::parse`, every submessage walked, and the payload of each DATA from a
//! builtin discovery writer parsed into `ParticipantData`, `DiscoveredWriterData` or
//! `DiscoveredReaderData` (which own their strings and lists, so the time includes those
//! allocations and freeing them). The datagram chosen per vendor and kind is the first
//! whose discovery DATAs are all full samples of that kind, fewest first (Cyclone sends
//! its two subscriptions together); the bench prints its frame, size and sample count at
//! start, and its size is the bench's throughput.
//!
//! `cargo bench -p ferrodds-rtps --bench discovery_parse`

#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/pcap/mod.rs"]
mod pcap;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ferrodds_rtps::discovery::{DiscoveredReaderData, DiscoveredWriterData, ParticipantData};
use ferrodds_rtps::wire::{DataPayload, EntityId, Message, Submessage, VendorId};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

const VENDORS: [(&str, VendorId, &str); 3] = [
    ("cyclone", VendorId([0x01, 0x10]), "cyclone_pingpong.pcap"),
    ("fastdds", VendorId([0x01, 0x0f]), "fastdds_pingpong.pcap"),
    (
        "connext",
        VendorId([0x01, 0x01]),
        "interop_rti_ping_fastdds_pong.pcap",
    ),
];

const KINDS: [(&str, EntityId); 3] = [
    ("spdp", EntityId::SPDP_PARTICIPANT_WRITER),
    ("sedp_publication", EntityId::SEDP_PUBLICATIONS_WRITER),
    ("sedp_subscription", EntityId::SEDP_SUBSCRIPTIONS_WRITER),
];

/// Parses a datagram and the discovery data it carries; returns how many samples it held.
fn parse_datagram(datagram: &[u8]) -> usize {
    let (header, iter) = Message::parse(datagram).unwrap();
    black_box(header);
    let mut samples = 0;
    for sm in iter {
        let Submessage::Data(data) = sm.unwrap() else {
            continue;
        };
        let DataPayload::Data(payload) = data.payload else {
            continue;
        };
        match data.writer_id {
            EntityId::SPDP_PARTICIPANT_WRITER => {
                black_box(ParticipantData::parse(payload).unwrap());
            }
            EntityId::SEDP_PUBLICATIONS_WRITER => {
                black_box(DiscoveredWriterData::parse(payload).unwrap());
            }
            EntityId::SEDP_SUBSCRIPTIONS_WRITER => {
                black_box(DiscoveredReaderData::parse(payload).unwrap());
            }
            _ => continue,
        }
        samples += 1;
    }
    samples
}

/// The first datagram from `vendor` whose discovery DATAs are all full samples from
/// `writer`, preferring one that holds a single sample; with its frame number.
fn pick(file: &str, vendor: VendorId, writer: EntityId) -> (usize, Vec<u8>) {
    let discovery = KINDS.map(|(_, id)| id);
    let candidates: Vec<(usize, usize, Vec<u8>)> = pcap::udp_datagrams(&format!("{DIR}/{file}"))
        .into_iter()
        .filter_map(|d| {
            let (header, iter) = Message::parse(&d.payload).ok()?;
            let writers: Vec<(EntityId, bool)> = iter
                .filter_map(Result::ok)
                .filter_map(|sm| match sm {
                    Submessage::Data(data) if discovery.contains(&data.writer_id) => {
                        Some((data.writer_id, matches!(data.payload, DataPayload::Data(_))))
                    }
                    _ => None,
                })
                .collect();
            let wanted = !writers.is_empty() && writers.iter().all(|w| *w == (writer, true));
            (header.vendor_id == vendor && wanted).then_some((writers.len(), d.frame, d.payload))
        })
        .collect();
    let fewest = candidates
        .iter()
        .map(|c| c.0)
        .min()
        .unwrap_or_else(|| panic!("{file}: no {writer:?} sample from {vendor:?}"));
    let (_, frame, datagram) = candidates.into_iter().find(|c| c.0 == fewest).unwrap();
    (frame, datagram)
}

fn bench_discovery(c: &mut Criterion) {
    for (kind, writer) in KINDS {
        let mut group = c.benchmark_group(kind);
        for (vendor_name, vendor, file) in VENDORS {
            let (frame, datagram) = pick(file, vendor, writer);
            let samples = parse_datagram(&datagram);
            eprintln!(
                "{kind}/{vendor_name}: {file} frame {frame}, {} bytes, {samples} sample(s)",
                datagram.len()
            );
            group.throughput(Throughput::Bytes(datagram.len() as u64));
            group.bench_function(vendor_name, |b| {
                b.iter(|| parse_datagram(black_box(&datagram)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench_discovery);
criterion_main!(benches);
