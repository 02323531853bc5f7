//! The writer's history cache, measured through `Writer`'s public API.
//!
//! A writer's changes live in a private `BTreeMap<sequence number, Change>` inside
//! `ferrodds_rtps::Writer`; there is no separate history type, so each bench drives
//! `Writer::write` / `Writer::handle_acknack` in a configuration that isolates one cache
//! operation. Every history is realistic: 100 instances, 1,000 changes (KEEP_LAST 10 per
//! instance, written round-robin), 64-byte serialized samples shared through an `Arc` as
//! `DataWriter::write` hands them over (a write clones the `Arc`, it copies no payload).
//!
//! - `insert_keep_all`: `write` into a KEEP_ALL, TRANSIENT_LOCAL history of 1,000–2,000
//!   changes with no matched reader: bounds check, `BTreeMap` insert at the end, nothing
//!   trimmed or sent. The pure insert.
//! - `write_keep_last/1000`: `write` into a full KEEP_LAST(10) TRANSIENT_LOCAL history
//!   (1,000 changes, 100 instances) with no reader: insert, then KEEP_LAST replacement —
//!   the writer finds the instance's changes by scanning the whole history for its key
//!   hash (the only lookup by instance a writer does) and removes the oldest.
//!   `write_keep_last/100`: the same with KEEP_LAST(1) (the default), 100 changes.
//! - `resend_on_nack`: `handle_acknack` from the matched reliable reader asking for one
//!   change of the 1,000 (a different one each time): lookup by sequence number, the DATA
//!   and the HEARTBEAT that follows a resend built and queued; the transmits are popped
//!   and dropped in the loop.
//! - `acknack_release_1`: `handle_acknack` acknowledging one more change (final flag set,
//!   nothing missing) from the one matched reliable reader of a VOLATILE KEEP_LAST(10)
//!   writer holding 1,000 unacknowledged changes: the reader proxy found and updated,
//!   the acknowledged change removed from the history. Ack matching plus removal.
//! - `acknack_release_100`: the same, each ACKNACK acknowledging 100 changes (as a reader
//!   answering a periodic HEARTBEAT does): per ACKNACK, so 100 removals each.
//! - `write_one_reader/64`, `/1024`: the whole `write` of a VOLATILE KEEP_LAST(10) writer
//!   (1,000 changes) with one matched reliable reader: insert, KEEP_LAST replacement, one
//!   INFO_TS + DATA (key hash inline QoS) + HEARTBEAT datagram built and queued, popped and
//!   dropped.
//!
//! Benches that refill or drain between operations time batches of operations and leave
//! the refill out.
//!
//! `cargo bench -p ferrodds-rtps --bench writer_history`

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use ferrodds_rtps::wire::{
    AckNack, EntityId, Guid, GuidPrefix, Locator, SequenceNumber, SequenceNumberSet, Time,
};
use ferrodds_rtps::{Change, ChangeKind, History, RemoteReader, Timestamp, Writer, WriterConfig};

const INSTANCES: usize = 100;
const DEPTH: usize = 10;
/// INSTANCES × DEPTH.
const HISTORY: usize = 1000;

const READER_PREFIX: GuidPrefix = GuidPrefix([2; 12]);
const READER_ID: EntityId = EntityId([0, 0, 1, 7]);
const WRITER_ID: EntityId = EntityId([0, 0, 1, 2]);

/// A writer and the changes it writes, one per instance, in turn.
struct Bench {
    writer: Writer,
    changes: Vec<Change>,
    next: usize,
    now: u64,
    acknack_count: u32,
}

impl Bench {
    /// A writer of `config` holding `HISTORY` changes (or as many as its KEEP_LAST depth
    /// lets it keep).
    fn new(config: WriterConfig, with_reader: bool, payload_len: usize) -> Bench {
        // How many changes the history holds once full.
        let kept = match config.history {
            History::KeepLast(depth) => (depth * INSTANCES).min(HISTORY),
            History::KeepAll => HISTORY,
        };
        let mut writer = Writer::new(Guid::new(GuidPrefix([1; 12]), WRITER_ID), config);
        if with_reader {
            let reader = RemoteReader {
                guid: Guid::new(READER_PREFIX, READER_ID),
                locators: vec![Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411)],
                reliable: true,
                transient_local: false,
                dispose_key: ferrodds_rtps::writer::DisposeKey::KeyOnlySample,
                reduced: false,
                filter: None,
                sample_channel: false,
            };
            writer.match_reader(Timestamp::ZERO, reader);
        }
        // Encapsulation header (CDR_LE), then the sample.
        let mut sample = vec![0x00, 0x01, 0x00, 0x00];
        sample.extend((4..payload_len).map(|i| i as u8));
        let payload: Arc<Vec<u8>> = Arc::from(sample);
        let changes = (0..INSTANCES)
            .map(|i| {
                // The key hash of an int32 key (XCDR2 big-endian, zero-padded).
                let mut key_hash = [0u8; 16];
                key_hash[..4].copy_from_slice(&(i as u32).to_be_bytes());
                Change {
                    original: None,
                    coherence: None,
                    kind: ChangeKind::Alive,
                    key_hash: Some(key_hash),
                    timestamp: Some(Time::from_nanos(1_700_000_000_000_000_000)),
                    payload: payload.clone().into(),
                    reduced_payload: None,
                }
            })
            .collect();
        let mut bench = Bench {
            writer,
            changes,
            next: 0,
            now: 0,
            acknack_count: 0,
        };
        bench.write_many(HISTORY);
        assert_eq!(bench.writer.history_len(), kept);
        bench
    }

    fn write(&mut self) -> SequenceNumber {
        let change = self.changes[self.next].clone();
        self.next = (self.next + 1) % INSTANCES;
        self.now += 1000;
        let seq = self.writer.write(Timestamp(self.now), change).unwrap();
        self.drain();
        seq
    }

    fn write_many(&mut self, n: usize) {
        for _ in 0..n {
            self.write();
        }
    }

    fn drain(&mut self) {
        while self.writer.poll_transmit().is_some() {}
    }

    /// An ACKNACK from the reader: everything below `base` received, `missing` not.
    fn acknack(&mut self, base: i64, missing: Option<i64>) {
        self.acknack_count += 1;
        let mut state = SequenceNumberSet::new(SequenceNumber(base));
        if let Some(seq) = missing {
            state.insert(SequenceNumber(seq));
        }
        let acknack = AckNack {
            reader_id: READER_ID,
            writer_id: WRITER_ID,
            reader_sn_state: state,
            count: self.acknack_count,
            final_flag: missing.is_none(),
        };
        // Past the 5 ms NACK suppression, so that every request is answered.
        self.now += 10_000_000;
        self.writer
            .handle_acknack(Timestamp(self.now), READER_PREFIX, black_box(&acknack));
        self.drain();
    }
}

/// Times `iters` runs of `op` in batches of at most `batch`, running `refill` (untimed)
/// with the batch's size after each.
fn timed_in_batches(
    iters: u64,
    batch: u64,
    bench: &mut Bench,
    mut op: impl FnMut(&mut Bench),
    mut refill: impl FnMut(&mut Bench, u64),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let n = (iters - done).min(batch);
        let start = Instant::now();
        for _ in 0..n {
            op(bench);
        }
        total += start.elapsed();
        done += n;
        refill(bench, n);
    }
    total
}

fn keep_last(transient_local: bool, depth: usize) -> WriterConfig {
    WriterConfig {
        history: History::KeepLast(depth),
        transient_local,
        ..WriterConfig::default()
    }
}

fn bench_history(c: &mut Criterion) {
    let mut group = c.benchmark_group("writer_history");

    group.bench_function("insert_keep_all", |b| {
        let config = WriterConfig {
            history: History::KeepAll,
            transient_local: true,
            max_samples: 2 * HISTORY,
            ..WriterConfig::default()
        };
        let mut bench = Bench::new(config, false, 64);
        b.iter_custom(|iters| {
            timed_in_batches(
                iters,
                HISTORY as u64,
                &mut bench,
                |bench| {
                    black_box(bench.write());
                },
                |bench, _| {
                    if bench.writer.history_len() == 2 * HISTORY {
                        // The next write finds the history full and, with no reader to
                        // wait for, drops all of it: back to 1,000.
                        bench.write_many(HISTORY);
                        assert_eq!(bench.writer.history_len(), HISTORY);
                    }
                },
            )
        });
    });

    for depth in [DEPTH, 1] {
        let history = depth * INSTANCES;
        group.bench_with_input(
            BenchmarkId::new("write_keep_last", history),
            &depth,
            |b, &depth| {
                let mut bench = Bench::new(keep_last(true, depth), false, 64);
                b.iter(|| black_box(bench.write()));
                assert_eq!(bench.writer.history_len(), history);
            },
        );
    }

    group.bench_function("resend_on_nack", |b| {
        let mut bench = Bench::new(keep_last(true, DEPTH), true, 64);
        let last = bench.writer.last_sequence_number().0;
        let mut i = 0;
        b.iter(|| {
            // One of the 1,000 held, in a stride that visits all of them.
            i = (i + 337) % HISTORY as i64;
            let seq = last - i;
            bench.acknack(seq, Some(seq));
        });
        assert!(bench.writer.stats().resent > 0);
    });

    for per_acknack in [1u64, 100] {
        group.bench_function(format!("acknack_release_{per_acknack}"), |b| {
            let mut bench = Bench::new(keep_last(false, DEPTH), true, 64);
            let mut acked = bench.writer.last_sequence_number().0 - HISTORY as i64;
            b.iter_custom(|iters| {
                timed_in_batches(
                    iters,
                    (100 / per_acknack).max(1),
                    &mut bench,
                    |bench| {
                        acked += per_acknack as i64;
                        bench.acknack(acked + 1, None);
                    },
                    |bench, n| {
                        assert_eq!(
                            bench.writer.history_len() as u64,
                            HISTORY as u64 - n * per_acknack
                        );
                        bench.write_many((n * per_acknack) as usize);
                    },
                )
            });
        });
    }

    for size in [64, 1024] {
        group.bench_with_input(
            BenchmarkId::new("write_one_reader", size),
            &size,
            |b, &size| {
                let mut bench = Bench::new(keep_last(false, DEPTH), true, size);
                b.iter(|| black_box(bench.write()));
                assert_eq!(bench.writer.history_len(), HISTORY);
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_history);
criterion_main!(benches);
