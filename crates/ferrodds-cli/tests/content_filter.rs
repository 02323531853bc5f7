//! Writer-side content filtering between processes and vendors. A content-filtered topic's
//! reader announces its filter in SEDP (`PID_CONTENT_FILTER_PROPERTY`); a writer that can
//! evaluate it sends that reader only the samples that pass, and a GAP for the others.
//!
//! - FerroDDS writing (in this process) to a shape application subscribing with
//!   `--cft "shapesize <= 20"`: FerroDDS's own, RTI Connext 6.1's and Fast DDS 2.9.1's. The
//!   writer counts the samples it did not send; the subscriber prints only those that pass.
//! - FerroDDS reading with a filter (in this process) from a shape application whose sizes
//!   run 1 to 50 (`-z 0 --size-modulo 50`): what reached the reader's RTPS layer, beside
//!   what it took, says whether the writer filtered.
//!
//! Domains 204–207, 211 and 212 (Fast DDS 2.9.1, both ways).

#![allow(clippy::unwrap_used)]

mod shapes_common;

use std::time::{Duration, Instant};

use ferrodds::qos::DataRepresentationId;
use ferrodds::{DomainParticipant, Qos};
use ferrodds_cdr::Cdr;
use shapes_common::{App, Vendor};

/// The suite's type, as the shape applications have it.
#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "ShapeType")]
struct ShapeType {
    #[cdr(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

const WRITTEN: i32 = 100;

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .build()
        .unwrap()
}

/// Waits up to `limit` for `done`, every 20 ms.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// FerroDDS writes sizes 1 to 40, 100 samples, to `vendor`'s filtered subscriber: the 40
/// larger than 20 are never sent, and the subscriber prints none of them.
fn a_writer_filters_for(vendor: Vendor, domain: u32) {
    // Fast DDS 2.9.1 announces no data representation whatever its QoS says, which is
    // XCDR1's: the writer writes XCDR1 to it.
    let version = if vendor == Vendor::FastDds { 1 } else { 2 };
    let mut sub = App::spawn(
        vendor,
        &format!("-S -t Square -r -k 0 -x {version} --cft \"shapesize <= 20\" -d {domain}"),
    );
    let p = participant(domain);
    let topic = p.create_topic::<ShapeType>("Square").unwrap();
    let id = if version == 1 {
        DataRepresentationId::XCDR
    } else {
        DataRepresentationId::XCDR2
    };
    let writer = p
        .create_writer(
            &topic,
            Qos::writer()
                .reliable()
                .keep_all()
                .data_representation([id]),
        )
        .unwrap();
    if !wait_until(Duration::from_secs(30), || {
        writer.publication_matched_status().current_count > 0
    }) {
        sub.interrupt();
        panic!(
            "{vendor:?}'s subscriber never matched\n{}",
            sub.transcript()
        );
    }
    for i in 0..WRITTEN {
        let shape = ShapeType {
            color: "BLUE".into(),
            x: i,
            y: i,
            shapesize: 1 + i % 40,
            additional_payload_size: Vec::new(),
        };
        writer.write(&shape).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    writer
        .wait_for_acknowledgments(Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{vendor:?}: {e}\n{}", sub.transcript()));
    let filtered = p.writer_stats().filtered;
    let mut sizes = Vec::new();
    while let Ok(s) = sub.next_sample(Duration::from_secs(2)) {
        sizes.push(s.size);
        if sizes.len() >= 60 {
            break;
        }
    }
    sub.interrupt();
    assert_eq!(
        filtered,
        40,
        "{vendor:?}'s filter was not applied by the writer\n{}",
        sub.transcript()
    );
    assert!(
        !sizes.is_empty(),
        "{vendor:?} printed nothing\n{}",
        sub.transcript()
    );
    assert!(
        sizes.iter().all(|&s| (1..=20).contains(&s)),
        "{vendor:?} printed {sizes:?}"
    );
}

/// What a FerroDDS reader filtering `shapesize <= 20` got from `vendor`'s publisher of sizes
/// 1 to 50: (samples taken, changes that reached its RTPS layer).
fn a_reader_filtered_by(vendor: Vendor, domain: u32) -> (u64, u64) {
    let p = participant(domain);
    let topic = p.create_topic::<ShapeType>("Square").unwrap();
    let reader = p
        .create_reader_with_expression(
            &topic,
            Qos::reader().reliable().keep_all(),
            "shapesize <= %0",
            &["20"],
        )
        .unwrap();
    let mut publisher = App::spawn(
        vendor,
        &format!("-P -t Square -r -k 0 -z 0 --size-modulo 50 -d {domain}"),
    );
    let mut taken = 0u64;
    let take = |taken: &mut u64| {
        for s in reader.take().unwrap() {
            if let Some(shape) = s.data {
                assert!(
                    (1..=20).contains(&shape.shapesize),
                    "{vendor:?}: took size {}",
                    shape.shapesize
                );
                *taken += 1;
            }
        }
    };
    // Until 60 samples passed (about 150 written, three rounds of sizes), at most 60 s.
    let end = Instant::now() + Duration::from_secs(60);
    while taken < 60 && Instant::now() < end {
        reader.wait_for_data(Duration::from_millis(200));
        take(&mut taken);
    }
    publisher.interrupt();
    std::thread::sleep(Duration::from_millis(200));
    take(&mut taken);
    assert!(
        taken >= 60,
        "{vendor:?}: only {taken} samples\n{}",
        publisher.transcript()
    );
    (taken, reader.protocol_stats().delivered)
}

#[test]
fn ferrodds_writer_filters_for_ferrodds() {
    a_writer_filters_for(Vendor::Ferro, 204);
}

#[test]
fn ferrodds_writer_filters_for_rti_connext() {
    a_writer_filters_for(Vendor::Rti, 205);
}

/// Nothing reached the reader that its filter then dropped: what came is what it took, and
/// at most the publisher's unregister of its one instance as it stopped (FerroDDS sends
/// one; RTI's reader-side effect of a writer leaving is made here). Without writer-side
/// filtering, 30 of every 50 sizes would have come as well.
fn only_what_passes(vendor: Vendor, taken: u64, delivered: u64) {
    assert!(
        (taken..=taken + 1).contains(&delivered),
        "{vendor:?} → FerroDDS: took {taken} samples, {delivered} changes came"
    );
}

#[test]
fn ferrodds_reader_is_sent_only_what_passes_by_ferrodds() {
    let (taken, delivered) = a_reader_filtered_by(Vendor::Ferro, 206);
    only_what_passes(Vendor::Ferro, taken, delivered);
}

#[test]
fn ferrodds_reader_is_sent_only_what_passes_by_rti_connext() {
    let (taken, delivered) = a_reader_filtered_by(Vendor::Rti, 207);
    only_what_passes(Vendor::Rti, taken, delivered);
}

#[test]
fn ferrodds_writer_filters_for_fast_dds() {
    a_writer_filters_for(Vendor::FastDds, 211);
}

#[test]
fn ferrodds_reader_is_sent_only_what_passes_by_fast_dds() {
    let (taken, delivered) = a_reader_filtered_by(Vendor::FastDds, 212);
    only_what_passes(Vendor::FastDds, taken, delivered);
}
