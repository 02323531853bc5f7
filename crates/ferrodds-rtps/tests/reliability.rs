//! Delivery over the simulated network: reliable KEEP_ALL delivers every sample once and
//! in order through loss, duplication and reordering, fragmented samples included;
//! best-effort never delivers a duplicate or an out-of-order sample; late joiners get what
//! durability promises.

#![allow(clippy::unwrap_used)]

mod sim;

use std::sync::Arc;
use std::time::Duration;

use ferrodds_rtps::wire::{EntityId, Guid};
use ferrodds_rtps::{
    Change, ChangeKind, History, Reader, ReaderConfig, ReaderFilter, RemoteReader, RemoteWriter,
    WriteError, Writer, WriterConfig,
};
use sim::{Faults, Network};

const WRITER_ID: EntityId = EntityId([0, 0, 1, 0x02]);
const READER_ID: EntityId = EntityId([0, 0, 1, 0x07]);

fn sample(i: u32, size: usize) -> Arc<Vec<u8>> {
    // An encapsulation header, the sample's number, then a pattern that depends on it.
    let mut v = vec![0u8, 1, 0, 0];
    v.extend_from_slice(&i.to_le_bytes());
    v.extend((0..size).map(|k| (k as u32).wrapping_mul(31).wrapping_add(i) as u8));
    v.into()
}

/// A new sample (no key, no timestamp) with `payload`.
fn alive(payload: Arc<Vec<u8>>) -> Change {
    Change {
        original: None,
        coherence: None,
        kind: ChangeKind::Alive,
        key_hash: None,
        timestamp: None,
        payload: payload.into(),
        reduced_payload: None,
    }
}

struct Setup {
    net: Network,
    writer: Guid,
    reader: Guid,
}

/// A writer on node 0 and a reader on node 1, matched.
fn setup(
    seed: u64,
    faults: Faults,
    wc: WriterConfig,
    rc: ReaderConfig,
    transient_reader: bool,
    match_now: bool,
) -> Setup {
    let mut net = Network::new(seed, faults);
    let (_, wp, wl) = net.add_node();
    let (_, rp, rl) = net.add_node();
    let writer = Guid::new(wp, WRITER_ID);
    let reader = Guid::new(rp, READER_ID);
    let reliable_w = wc.reliable;
    let reliable_r = rc.reliable;
    net.nodes[0].rtps.add_writer(Writer::new(writer, wc));
    net.nodes[1].rtps.add_reader(Reader::new(reader, rc));
    let mut s = Setup {
        net,
        writer,
        reader,
    };
    if match_now {
        connect(&mut s, reliable_w, reliable_r, transient_reader, wl, rl);
    }
    s
}

fn connect(
    s: &mut Setup,
    reliable_w: bool,
    reliable_r: bool,
    transient_reader: bool,
    wl: ferrodds_rtps::wire::Locator,
    rl: ferrodds_rtps::wire::Locator,
) {
    connect_filtered(s, reliable_w, reliable_r, transient_reader, wl, rl, None);
}

fn connect_filtered(
    s: &mut Setup,
    reliable_w: bool,
    reliable_r: bool,
    transient_reader: bool,
    wl: ferrodds_rtps::wire::Locator,
    rl: ferrodds_rtps::wire::Locator,
    filter: Option<ReaderFilter>,
) {
    let reader = remote_reader(s, rl, reliable_r, transient_reader, filter);
    connect_reader(s, reader, reliable_w, wl);
}

/// The writer's view of the reader of `s` at `rl`.
fn remote_reader(
    s: &Setup,
    rl: ferrodds_rtps::wire::Locator,
    reliable: bool,
    transient_local: bool,
    filter: Option<ReaderFilter>,
) -> RemoteReader {
    RemoteReader {
        guid: s.reader,
        locators: vec![rl],
        reliable,
        transient_local,
        dispose_key: ferrodds_rtps::writer::DisposeKey::KeyOnlySample,
        reduced: false,
        filter,
        sample_channel: false,
    }
}

/// Matches the writer with `reader` as given, and the reader with the writer.
fn connect_reader(
    s: &mut Setup,
    reader: RemoteReader,
    reliable_w: bool,
    wl: ferrodds_rtps::wire::Locator,
) {
    let now = s.net.now;
    s.net.nodes[0]
        .rtps
        .writer(WRITER_ID)
        .unwrap()
        .match_reader(now, reader);
    s.net.nodes[1].rtps.reader(READER_ID).unwrap().match_writer(
        now,
        RemoteWriter {
            guid: s.writer,
            locators: vec![wl],
            reliable: reliable_w,
        },
    );
}

fn drain(net: &mut Network, got: &mut Vec<(i64, Vec<u8>)>) {
    while let Some(c) = net.nodes[1].rtps.reader(READER_ID).unwrap().poll_change() {
        got.push((c.sequence_number.0, c.payload.into_vec()));
    }
}

/// Writes `count` samples of `size` bytes, in bursts, blocking (in simulated time) while a
/// KEEP_ALL history is full, then waits until the reader has them all or `limit` passes.
/// What a run delivered, what was written, and (dropped datagrams, changes resent).
type Run = (Vec<(i64, Vec<u8>)>, Vec<Arc<Vec<u8>>>, (u64, u64));

fn run_reliable(seed: u64, faults: Faults, count: u32, size: usize, wc: WriterConfig) -> Run {
    let mut s = setup(seed, faults, wc, ReaderConfig::default(), false, true);
    let mut got = Vec::new();
    let mut written = Vec::new();
    let mut i = 0u32;
    let mut blocked_steps = 0;
    while i < count {
        let burst = 1 + s.net.rng.below(5) as u32;
        for _ in 0..burst.min(count - i) {
            let payload = sample(i, size);
            let now = s.net.now;
            let change = alive(payload.clone());
            match s.net.nodes[0]
                .rtps
                .writer(WRITER_ID)
                .unwrap()
                .write(now, change)
            {
                Ok(_) => {
                    written.push(payload);
                    i += 1;
                }
                Err(WriteError::HistoryFull(_)) => {
                    blocked_steps += 1;
                    assert!(
                        blocked_steps < 100_000,
                        "seed {seed}: writer blocked for good"
                    );
                    break;
                }
                Err(e) => panic!("seed {seed}: {e}"),
            }
        }
        let pause = Duration::from_micros(100 + s.net.rng.below(2000));
        s.net.advance(pause);
        drain(&mut s.net, &mut got);
    }
    let want = count as usize;
    let finished = s.net.run_until(Duration::from_secs(120), |n| {
        drain(n, &mut got);
        got.len() >= want
    });
    drain(&mut s.net, &mut got);
    assert!(
        finished,
        "seed {seed}: only {} of {count} samples after 120 s simulated",
        got.len()
    );
    let stats = s.net.nodes[0].rtps.writer(WRITER_ID).unwrap().stats();
    (
        got,
        written,
        (
            s.net.datagrams_dropped,
            stats.resent + stats.fragments_resent,
        ),
    )
}

fn assert_exactly_once_in_order(seed: u64, got: &[(i64, Vec<u8>)], written: &[Arc<Vec<u8>>]) {
    assert_eq!(got.len(), written.len(), "seed {seed}: delivered count");
    for (k, ((seq, payload), sent)) in got.iter().zip(written).enumerate() {
        assert_eq!(*seq, k as i64 + 1, "seed {seed}: sample {k} out of order");
        assert_eq!(
            payload.as_slice(),
            &sent[..],
            "seed {seed}: sample {k} corrupted"
        );
    }
}

#[test]
fn reliable_keep_all_delivers_everything_once_in_order_under_20_percent_faults() {
    let wc = WriterConfig {
        history: History::KeepAll,
        max_samples: 16,
        ..WriterConfig::default()
    };
    let (mut dropped, mut resent) = (0, 0);
    for seed in 0..1000 {
        let (got, written, (d, r)) = run_reliable(seed, Faults::lossy(0.2), 40, 32, wc.clone());
        assert_exactly_once_in_order(seed, &got, &written);
        dropped += d;
        resent += r;
    }
    // The faults really happened, and repair really worked. (Repairs are packed several to
    // a datagram, so fewer datagrams travel, and fewer are dropped, than changes resent.)
    assert!(
        dropped > 5_000 && resent > 5_000,
        "dropped {dropped}, resent {resent}"
    );
}

#[test]
fn batching_writers_deliver_everything_once_in_order_under_20_percent_faults() {
    // New changes wait up to 1 ms to share a datagram; the writer here writes bursts of 1–5
    // changes 0.1–2.1 ms apart, so batches of several changes form, and a lost datagram
    // loses several changes at once. (writer.rs's tests check that batches do form.)
    let wc = WriterConfig {
        history: History::KeepAll,
        max_samples: 16,
        batch_delay: Some(std::time::Duration::from_millis(1)),
        ..WriterConfig::default()
    };
    let (mut dropped, mut resent) = (0, 0);
    for seed in 0..300 {
        let (got, written, (d, r)) = run_reliable(seed, Faults::lossy(0.2), 40, 32, wc.clone());
        assert_exactly_once_in_order(seed, &got, &written);
        dropped += d;
        resent += r;
    }
    assert!(
        dropped > 1_000 && resent > 1_000,
        "dropped {dropped}, resent {resent}"
    );
}

#[test]
fn reliable_fragmented_samples_survive_20_percent_faults() {
    let wc = WriterConfig {
        history: History::KeepAll,
        max_samples: 4,
        fragment_size: 1024,
        max_message_size: 4 * 1024,
        ..WriterConfig::default()
    };
    let mut resent = 0;
    for seed in 0..200 {
        let (got, written, (_, r)) = run_reliable(seed, Faults::lossy(0.2), 6, 20_000, wc.clone());
        assert_exactly_once_in_order(seed, &got, &written);
        resent += r;
    }
    assert!(resent > 200, "fragments were repaired: {resent}");
}

#[test]
fn a_perfect_network_needs_no_repair() {
    let wc = WriterConfig {
        history: History::KeepAll,
        ..WriterConfig::default()
    };
    let mut s = setup(1, Faults::NONE, wc, ReaderConfig::default(), false, true);
    for i in 0..100 {
        let now = s.net.now;
        let change = alive(sample(i, 100));
        s.net.nodes[0]
            .rtps
            .writer(WRITER_ID)
            .unwrap()
            .write(now, change)
            .unwrap();
    }
    let mut got = Vec::new();
    assert!(s.net.run_until(Duration::from_secs(1), |n| {
        drain(n, &mut got);
        got.len() == 100
    }));
    let w = s.net.nodes[0].rtps.writer(WRITER_ID).unwrap();
    assert_eq!(w.stats().resent, 0);
    assert!(s.net.run_until(Duration::from_secs(1), |n| n.nodes[0]
        .rtps
        .writer(WRITER_ID)
        .unwrap()
        .all_acknowledged()));
}

#[test]
fn best_effort_never_delivers_a_duplicate_or_out_of_order() {
    for seed in 0..1000 {
        let wc = WriterConfig {
            reliable: false,
            history: History::KeepLast(1),
            ..WriterConfig::default()
        };
        let rc = ReaderConfig {
            reliable: false,
            ..ReaderConfig::default()
        };
        let mut s = setup(seed, Faults::lossy(0.2), wc, rc, false, true);
        let mut got = Vec::new();
        for i in 0..50 {
            let now = s.net.now;
            let change = alive(sample(i, 16));
            s.net.nodes[0]
                .rtps
                .writer(WRITER_ID)
                .unwrap()
                .write(now, change)
                .unwrap();
            let pause = Duration::from_micros(s.net.rng.below(1500));
            s.net.advance(pause);
            drain(&mut s.net, &mut got);
        }
        s.net.advance(Duration::from_millis(50));
        drain(&mut s.net, &mut got);
        assert!(
            got.len() > 5,
            "seed {seed}: best effort at 20% loss still delivers most"
        );
        for pair in got.windows(2) {
            assert!(
                pair[0].0 < pair[1].0,
                "seed {seed}: {} then {}",
                pair[0].0,
                pair[1].0
            );
        }
        for (seq, payload) in &got {
            assert_eq!(
                payload.as_slice(),
                &sample(*seq as u32 - 1, 16)[..],
                "seed {seed}"
            );
        }
    }
}

#[test]
fn transient_local_late_joiner_receives_the_history() {
    for seed in 0..50 {
        let wc = WriterConfig {
            transient_local: true,
            history: History::KeepLast(3),
            ..WriterConfig::default()
        };
        let mut s = setup(
            seed,
            Faults::lossy(0.1),
            wc,
            ReaderConfig::default(),
            true,
            false,
        );
        for i in 0..5 {
            let now = s.net.now;
            let change = alive(sample(i, 8));
            s.net.nodes[0]
                .rtps
                .writer(WRITER_ID)
                .unwrap()
                .write(now, change)
                .unwrap();
        }
        let (wl, rl) = (
            ferrodds_rtps::wire::Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7410),
            ferrodds_rtps::wire::Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7412),
        );
        connect(&mut s, true, true, true, wl, rl);
        let mut got = Vec::new();
        assert!(
            s.net.run_until(Duration::from_secs(30), |n| {
                drain(n, &mut got);
                got.len() >= 3
            }),
            "seed {seed}: got {got:?}"
        );
        let seqs: Vec<i64> = got.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            seqs,
            vec![3, 4, 5],
            "seed {seed}: KEEP_LAST(3) history, in order"
        );
    }
}

#[test]
fn volatile_late_joiner_receives_only_new_samples() {
    let wc = WriterConfig {
        transient_local: true,
        history: History::KeepLast(3),
        ..WriterConfig::default()
    };
    let mut s = setup(
        7,
        Faults::lossy(0.1),
        wc,
        ReaderConfig::default(),
        false,
        false,
    );
    for i in 0..5 {
        let now = s.net.now;
        let change = alive(sample(i, 8));
        s.net.nodes[0]
            .rtps
            .writer(WRITER_ID)
            .unwrap()
            .write(now, change)
            .unwrap();
    }
    let (wl, rl) = (
        ferrodds_rtps::wire::Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7410),
        ferrodds_rtps::wire::Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7412),
    );
    connect(&mut s, true, true, false, wl, rl);
    s.net.advance(Duration::from_millis(500));
    let now = s.net.now;
    let change = alive(sample(5, 8));
    s.net.nodes[0]
        .rtps
        .writer(WRITER_ID)
        .unwrap()
        .write(now, change)
        .unwrap();
    let mut got = Vec::new();
    assert!(s.net.run_until(Duration::from_secs(30), |n| {
        drain(n, &mut got);
        !got.is_empty()
    }));
    s.net.advance(Duration::from_millis(500));
    drain(&mut s.net, &mut got);
    assert_eq!(got.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![6]);
}

/// A stream over a lossy link with some latency is repaired without a retransmission
/// storm: a lost change is resent about once per request round, not once for every
/// ACKNACK that lists it while its resend is on the way. (Before `nack_suppression`, every
/// DATA after a hole carried a HEARTBEAT asking for an ACKNACK, each ACKNACK listed every
/// hole, and the writer resent every hole each time: over real sockets 2000 samples at 10 %
/// loss cost some 90,000 datagrams.)
#[test]
fn a_lossy_stream_is_repaired_without_a_retransmission_storm() {
    let wc = WriterConfig {
        history: History::KeepAll,
        ..WriterConfig::default()
    };
    // A 2 ms round trip, and a write every 20 µs: some 100 DATA, each drawing an ACKNACK
    // that lists the holes, pass while a resend travels.
    let faults = Faults {
        loss: 0.1,
        duplication: 0.0,
        jitter: Duration::ZERO,
        latency: Duration::from_millis(1),
    };
    let count = 2000u32;
    for seed in 0..5 {
        let mut s = setup(
            seed,
            faults,
            wc.clone(),
            ReaderConfig::default(),
            false,
            true,
        );
        let mut written = Vec::new();
        let mut got = Vec::new();
        for i in 0..count {
            let now = s.net.now;
            let payload = sample(i, 64);
            let change = alive(payload.clone());
            s.net.nodes[0]
                .rtps
                .writer(WRITER_ID)
                .unwrap()
                .write(now, change)
                .unwrap();
            written.push(payload);
            s.net.advance(Duration::from_micros(20));
            drain(&mut s.net, &mut got);
        }
        assert!(
            s.net.run_until(Duration::from_secs(60), |n| {
                drain(n, &mut got);
                got.len() >= count as usize
            }),
            "seed {seed}: {} of {count}",
            got.len()
        );
        assert_exactly_once_in_order(seed, &got, &written);
        let resent = s.net.nodes[0]
            .rtps
            .writer(WRITER_ID)
            .unwrap()
            .stats()
            .resent;
        // About 200 of the 2000 DATA are lost, and a tenth of their resends too.
        assert!(
            resent < u64::from(count) / 4,
            "seed {seed}: {resent} resends for {count} samples at 10 % loss"
        );
    }
}

/// A reader whose content filter the writer evaluates (writer-side filtering) is sent only
/// the samples that pass, gets each of them once and in order through loss, and counts
/// none of those it was not sent as lost; the writer's KEEP_ALL history is never held up
/// for good by changes the reader will never get.
#[test]
fn a_filtered_reader_is_sent_only_what_passes_under_20_percent_faults() {
    let wc = WriterConfig {
        history: History::KeepAll,
        max_samples: 16,
        ..WriterConfig::default()
    };
    // Keeps samples whose number (after the encapsulation header) is a multiple of 3.
    let keeps: ferrodds_rtps::dcps::ContentFilter = Arc::new(|p: &[u8]| {
        p.get(4..8)
            .and_then(|b| b.try_into().ok())
            .is_some_and(|b| u32::from_le_bytes(b) % 3 == 0)
    });
    let count = 60u32;
    // Both forms of the GAPs that say what was dropped: FerroDDS readers get lists, other
    // vendors a range of one and a list (see `ReaderFilter::list_only`).
    for seed in 0..200 {
        let list_only = seed % 2 == 0;
        let filter = ReaderFilter {
            keeps: keeps.clone(),
            list_only,
        };
        let mut s = setup(
            seed,
            Faults::lossy(0.2),
            wc.clone(),
            ReaderConfig::default(),
            false,
            false,
        );
        let (wl, rl) = (s.net.locator(0), s.net.locator(1));
        connect_filtered(&mut s, true, true, false, wl, rl, Some(filter.clone()));
        let mut got = Vec::new();
        let mut i = 0u32;
        for _ in 0..100_000 {
            if i == count {
                break;
            }
            let now = s.net.now;
            let change = alive(sample(i, 16));
            match s.net.nodes[0]
                .rtps
                .writer(WRITER_ID)
                .unwrap()
                .write(now, change)
            {
                Ok(_) => i += 1,
                Err(WriteError::HistoryFull(_)) => {}
                Err(e) => panic!("seed {seed}: {e}"),
            }
            s.net.advance(Duration::from_micros(300));
            drain(&mut s.net, &mut got);
        }
        assert_eq!(i, count, "seed {seed}: the writer stayed blocked");
        let want: Vec<u32> = (0..count).filter(|n| n % 3 == 0).collect();
        s.net.run_until(Duration::from_secs(60), |n| {
            drain(n, &mut got);
            got.len() >= want.len()
                && n.nodes[0]
                    .rtps
                    .writer(WRITER_ID)
                    .unwrap()
                    .all_acknowledged()
        });
        drain(&mut s.net, &mut got);
        let numbers: Vec<u32> = got
            .iter()
            .map(|(_, p)| u32::from_le_bytes(p[4..8].try_into().unwrap()))
            .collect();
        assert_eq!(numbers, want, "seed {seed}: what the reader got");
        let writer = s.net.nodes[0].rtps.writer(WRITER_ID).unwrap();
        assert!(
            writer.all_acknowledged(),
            "seed {seed}: not all acknowledged"
        );
        let stats = writer.stats();
        assert_eq!(
            stats.filtered,
            u64::from(count) - want.len() as u64,
            "seed {seed}"
        );
        assert_eq!(
            stats.written - stats.filtered + stats.resent,
            s.net.data_sent,
            "seed {seed}: DATA sent besides the passing changes and their resends"
        );
        let reader = s.net.nodes[1].rtps.reader(READER_ID).unwrap().stats();
        if list_only {
            assert_eq!(
                reader.lost, 0,
                "seed {seed}: filtered changes counted as lost"
            );
        }
    }
}

/// A sample channel as the reader sees one: the chunks the writer sent, in order; the
/// reader's subscription lets earlier ones go on its way to the one it wants, as
/// iceoryx2's queue does.
#[derive(Debug, Default)]
struct FakeChannel {
    queue: std::sync::Mutex<std::collections::VecDeque<(u64, bytes::Bytes)>>,
}

#[derive(Debug)]
struct FakeOpener(Arc<FakeChannel>);

#[derive(Debug)]
struct FakeSource(Arc<FakeChannel>, Option<(u64, bytes::Bytes)>);

impl ferrodds_rtps::payload::ChannelOpener for FakeOpener {
    fn open(&self, _: Guid) -> Option<Box<dyn ferrodds_rtps::payload::ChunkSource>> {
        Some(Box::new(FakeSource(Arc::clone(&self.0), None)))
    }
}

impl ferrodds_rtps::payload::ChunkSource for FakeSource {
    fn take(&mut self, chunk: u64) -> Option<ferrodds_rtps::payload::ReceivedPayload> {
        loop {
            let (n, b) = match self.1.take() {
                Some(early) => early,
                None => self.0.queue.lock().unwrap().pop_front()?,
            };
            if n > chunk {
                self.1 = Some((n, b));
                return None;
            }
            if n == chunk {
                return Some(ferrodds_rtps::payload::ReceivedPayload::Shared(b));
            }
        }
    }
}

#[test]
fn samples_in_a_writers_channel_go_by_reference_and_what_the_reader_misses_by_repair() {
    use ferrodds_rtps::payload::{Chunk, Payload};
    for seed in 0..4u64 {
        let channel = Arc::new(FakeChannel::default());
        let rc = ReaderConfig {
            channels: Some(Arc::new(FakeOpener(Arc::clone(&channel)))),
            ..ReaderConfig::default()
        };
        let wc = WriterConfig {
            history: History::KeepAll,
            ..WriterConfig::default()
        };
        // Loss and duplicates, in order (as shared memory delivers: a DATA that overtook
        // the one before would make the reader let that one's chunk go).
        let faults = Faults {
            loss: 0.1,
            duplication: 0.05,
            ..Faults::NONE
        };
        let mut s = setup(seed, faults, wc, rc, false, false);
        let (wl, rl) = (s.net.locator(0), s.net.locator(1));
        // It takes from the writer's sample channel.
        let reader = RemoteReader {
            sample_channel: true,
            ..remote_reader(&s, rl, true, false, None)
        };
        connect_reader(&mut s, reader, true, wl);
        let count = 200u32;
        let mut written = Vec::new();
        // (sequence number, bytes, delivered where the chunk lies)
        let mut got: Vec<(i64, Vec<u8>, bool)> = Vec::new();
        let drain = |net: &mut sim::Network, got: &mut Vec<(i64, Vec<u8>, bool)>| {
            while let Some(c) = net.nodes[1].rtps.reader(READER_ID).unwrap().poll_change() {
                let shared = c.payload.is_shared();
                got.push((c.sequence_number.0, c.payload.to_vec(), shared));
            }
        };
        let mut i = 0u32;
        let mut steps = 0;
        while i < count {
            steps += 1;
            assert!(steps < 100_000, "seed {seed}: writer blocked for good");
            let bytes = bytes::Bytes::from(sample(i, 64 + 4 * (i as usize % 9)).to_vec());
            let chunk = 1000 + u64::from(i);
            // Every seventh chunk does not reach the reader's queue (it was full).
            if i % 7 != 3 {
                channel
                    .queue
                    .lock()
                    .unwrap()
                    .push_back((chunk, bytes.clone()));
            }
            let change = Change {
                payload: Payload::Shared(Box::new(Chunk {
                    bytes: bytes.clone(),
                    number: chunk,
                })),
                ..alive(Arc::new(Vec::new()))
            };
            let now = s.net.now;
            match s.net.nodes[0]
                .rtps
                .writer(WRITER_ID)
                .unwrap()
                .write(now, change)
            {
                Ok(_) => {
                    written.push(bytes);
                    i += 1;
                }
                Err(WriteError::HistoryFull(_)) => {}
                Err(e) => panic!("seed {seed}: {e}"),
            }
            let pause = Duration::from_micros(100 + s.net.rng.below(1000));
            s.net.advance(pause);
            drain(&mut s.net, &mut got);
        }
        let finished = s.net.run_until(Duration::from_secs(120), |n| {
            drain(n, &mut got);
            got.len() >= count as usize
        });
        assert!(finished, "seed {seed}: only {} of {count}", got.len());
        for (k, ((seq, bytes, _), sent)) in got.iter().zip(&written).enumerate() {
            assert_eq!(*seq, k as i64 + 1, "seed {seed}: sample {k} out of order");
            assert_eq!(&bytes[..], &sent[..], "seed {seed}: sample {k} corrupted");
        }
        let by_reference = got.iter().filter(|g| g.2).count();
        let stats = s.net.nodes[1].rtps.reader(READER_ID).unwrap().stats();
        assert!(
            by_reference > count as usize / 2,
            "seed {seed}: {by_reference} of {count} taken from the channel"
        );
        assert!(
            stats.channel_missed >= u64::from(count / 14),
            "seed {seed}: {} DATAs without their chunk",
            stats.channel_missed
        );
        // What did not come by the channel came with its bytes: as a copy of its own.
        assert!(got.iter().any(|g| !g.2));
    }
}
