//! Writes of bytes serialized elsewhere (the C API's `ferrodds_write`, and through it C#)
//! reuse the buffers the writer's history let go. A test binary of its own: it counts the
//! process's allocations.
//!
//! Before, each such write copied the bytes into a new `Vec`: in the C benchmark's pong
//! the heap grew by about 6 KB per 8 KiB sample written and the pages were faulted in
//! (2,200 more page faults than the Rust pong in 1,000 round trips), and its round trip
//! took 1.9x the Rust program's.

#![allow(clippy::unwrap_used)]

use std::alloc::System;
use std::time::SystemTime;

use ferrodds::{DomainParticipant, Qos};
use ferrodds_cdr::{Cdr, Endianness, Octet};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "test::Block")]
struct Block {
    seq: u32,
    data: Vec<Octet>,
}

const SIZE: usize = 8192;
const WRITES: usize = 200;

#[test]
fn serialized_writes_of_borrowed_bytes_reuse_the_historys_buffers() {
    let p = DomainParticipant::builder()
        .unwrap()
        .domain_id(223)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .build()
        .unwrap();
    // No reader: KEEP_LAST 1 lets each sample go at the next write.
    let writer = p
        .create_writer(&p.create_topic::<Block>("blocks").unwrap(), Qos::writer())
        .unwrap();
    let w = writer.untyped();
    let bytes = ferrodds_cdr::serialize(
        &Block {
            seq: 1,
            data: vec![Octet(7); SIZE],
        },
        w.data_representation(),
        Endianness::NATIVE,
    )
    .unwrap();
    for _ in 0..10 {
        w.write_serialized_slice(&bytes, SystemTime::now()).unwrap();
    }
    let region = Region::new(GLOBAL);
    for _ in 0..WRITES {
        w.write_serialized_slice(&bytes, SystemTime::now()).unwrap();
    }
    let allocated = region.change().bytes_allocated;
    // A copy of its own per write would be WRITES * SIZE bytes at least; what is left
    // (bookkeeping, the participant's own threads meanwhile) is far below one sample per
    // ten writes.
    assert!(
        allocated < WRITES * SIZE / 10,
        "{allocated} bytes allocated for {WRITES} writes of {SIZE} bytes"
    );
}
