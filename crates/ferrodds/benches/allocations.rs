//! Allocations per write and per take in steady state, counted by a counting allocator
//! (`stats_alloc`), for each way two participants reach each other: UDP, shared memory and
//! the in-process queues. Not timed; run with
//! `cargo bench -p ferrodds --bench allocations`.
//!
//! Two participants of this process, a reliable KEEP_ALL writer and reader of an octet
//! sequence. After a warm-up, each round writes a burst and waits until the reader holds it
//! (every allocation of every thread in that phase — serializing, sending, receiving,
//! reassembling, caching — counted against the writes), then takes it (counted against the
//! takes, decoding included): with `take`, which decodes each sample into a new value, and
//! with `take_into` into the same slots every round, which decodes into the values they
//! hold.

use std::alloc::System;
use std::time::{Duration, Instant};

use ferrodds::{DomainParticipant, Qos};
use ferrodds_cdr::{Cdr, Octet};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "bench::Payload")]
struct Payload {
    seq: u32,
    data: Vec<Octet>,
}

const DOMAIN: u32 = 99;
const WARM_UP: u32 = 200;
const ROUNDS: u32 = 20;

/// One transport: allocations (and bytes allocated) per write and per take at `size`.
fn measure(transport: &str, size: usize, burst: u32, into: bool) -> [(f64, f64); 2] {
    let make = || {
        DomainParticipant::builder()
            .expect("configuration")
            .domain_id(DOMAIN)
            .interface("lo")
            .expect("loopback")
            .allow_multicast(false)
            .in_process(transport == "in-process")
            .shared_memory(transport == "shared-memory")
            .build()
            .expect("participant")
    };
    let (a, b) = (make(), make());
    let topic = format!("alloc-{transport}-{size}");
    let qos = |q: Qos| q.reliable().keep_all();
    let writer = a
        .create_writer(
            &a.create_topic::<Payload>(&topic).expect("topic"),
            // Room to wait for acknowledgments under a heap profiler.
            qos(Qos::writer()).max_blocking_time(Duration::from_secs(10)),
        )
        .expect("writer");
    let reader = b
        .create_reader(
            &b.create_topic::<Payload>(&topic).expect("topic"),
            qos(Qos::reader()),
        )
        .expect("reader");
    writer
        .wait_for_matched(1, Duration::from_secs(10))
        .expect("matched");
    reader
        .wait_for_matched(1, Duration::from_secs(10))
        .expect("matched");
    // One sample, its number changed for each write: the application allocates nothing.
    let mut sample = Payload {
        seq: 0,
        data: vec![Octet(7); size],
    };
    let mut slots = Vec::new();
    let mut round = |count: u32| -> [(usize, usize); 2] {
        let written = Region::new(GLOBAL);
        for _ in 0..count {
            sample.seq += 1;
            writer.write(&sample).expect("write");
        }
        writer
            .wait_for_acknowledgments(Duration::from_secs(30))
            .expect("acknowledged");
        let w = written.change();
        let taken = Region::new(GLOBAL);
        let mut got = 0;
        let deadline = Instant::now() + Duration::from_secs(30);
        while got < count && Instant::now() < deadline {
            got += if into {
                reader.take_into(&mut slots, usize::MAX)
            } else {
                reader.take().expect("take").len()
            } as u32;
        }
        let t = taken.change();
        assert_eq!(got, count, "{transport} {size}: every sample");
        [
            (w.allocations, w.bytes_allocated),
            (t.allocations, t.bytes_allocated),
        ]
    };
    round(WARM_UP);
    let mut sums = [(0usize, 0usize); 2];
    let rounds = std::env::var("ALLOCATIONS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    for _ in 0..rounds {
        let r = round(burst);
        for (s, x) in sums.iter_mut().zip(r) {
            s.0 += x.0;
            s.1 += x.1;
        }
    }
    let n = f64::from(rounds * burst);
    sums.map(|(allocs, bytes)| (allocs as f64 / n, bytes as f64 / n))
}

fn main() {
    println!("| transport | payload | allocations / write | bytes / write | allocations / take | bytes / take | allocations / take_into | bytes / take_into |");
    println!("|---|---|---|---|---|---|---|---|");
    // `ALLOCATIONS_ONLY=udpv4:64` measures one case (for a heap profiler to look at).
    let only = std::env::var("ALLOCATIONS_ONLY").ok();
    for &(size, burst) in &[(64usize, 100u32), (8192, 100), (1 << 20, 10)] {
        for transport in ["udpv4", "shared-memory", "in-process"] {
            if only
                .as_deref()
                .is_some_and(|o| o != format!("{transport}:{size}"))
            {
                continue;
            }
            let [w, t] = measure(transport, size, burst, false);
            let [_, i] = measure(transport, size, burst, true);
            println!(
                "| {transport} | {size} B | {:.1} | {:.0} | {:.1} | {:.0} | {:.1} | {:.0} |",
                w.0, w.1, t.0, t.1, i.0, i.1
            );
        }
    }
}
