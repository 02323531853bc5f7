//! Process faults over loopback: peers that are killed (SIGKILL: no goodbye), restarted, or
//! vanish while a KEEP_ALL writer waits for them. The writer or reader under test lives in
//! this process; the peer that dies is a `robust_peer` process with a 2 s lease.
//!
//! The times measured (lease expiry, catch-up) are printed as `FIGURE` lines
//! (`cargo test --test faults -- --nocapture`) and appended to
//! `target/tmp/robustness-figures.jsonl`. Domain ids 93–98.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod robust_common;

use std::time::{Duration, Instant};

use ferrodds::{DomainParticipant, Error, InstanceState, Qos};
use robust_common::robust_peer::{reading, Reading};
use robust_common::{ferro_peer, report, Proc};
use serde_json::json;

/// Runs the FerroDDS peer when this binary was started as one.
/// Ignored: it is not a test but the peer process's entry point, which `ferro_peer` starts
/// with `--ignored`; run alone it would pass without testing anything.
#[test]
#[ignore = "the robust_peer entry point, started by the other tests"]
fn robust_peer_process() {
    robust_common::peer_entry();
}

/// The lease of the peers that die.
const LEASE: Duration = Duration::from_secs(2);
const LEASE_MS: &str = "2000";
const T: Duration = Duration::from_secs(20);

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .build()
        .unwrap()
}

/// A `robust_peer sub` on loopback with the short lease.
fn sub(domain: u32, count: u32, extra: &[&str]) -> Proc {
    let d = domain.to_string();
    let n = count.to_string();
    let mut args = vec![
        "sub",
        "--domain",
        &d,
        "--no-multicast",
        "--lease-ms",
        LEASE_MS,
        "--count",
        &n,
        "--progress-every",
        "10",
        "--timeout-s",
        "60",
    ];
    args.extend_from_slice(extra);
    ferro_peer("ferrodds sub", None, &args)
}

/// Polls `cond` every 10 ms until it holds or `timeout` passes; how long it took.
fn within(timeout: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if cond() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// A participant given a lease shorter than the default announcement period (2 s), and no
/// period, stays known to its peers while it lives: its announcements come often enough.
#[test]
fn a_short_lease_keeps_a_live_participant_known() {
    const SHORT_LEASE: Duration = Duration::from_secs(1);
    let a = participant(93);
    let b = DomainParticipant::builder()
        .unwrap()
        .domain_id(93)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .lease_duration(SHORT_LEASE)
        .build()
        .unwrap();
    let prefix = b.guid_prefix();
    assert!(
        within(T, || a.discovered_participants().contains(&prefix)).is_some(),
        "a discovers b"
    );
    // Three leases long, b must never drop out.
    let start = Instant::now();
    while start.elapsed() < 3 * SHORT_LEASE {
        assert!(
            a.discovered_participants().contains(&prefix),
            "b (lease {SHORT_LEASE:?}) was dropped while alive, after {:?}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A reader killed mid-stream is noticed by the writer when its lease expires: it is no
/// longer matched, and the KEEP_ALL writer stops holding samples for it.
#[test]
fn a_killed_reader_is_unmatched_when_its_lease_expires() {
    let p = participant(94);
    let topic = p.create_topic::<Reading>("robust").unwrap();
    let writer = p
        .create_writer(&topic, Qos::writer().reliable().keep_all())
        .unwrap();
    let mut r = sub(94, 1_000_000, &[]);
    writer.wait_for_matched(1, T).unwrap();
    // Stream until the reader has taken some, then kill it.
    let mut i = 0;
    let mut received = 0;
    let deadline = Instant::now() + T;
    while received < 100 {
        assert!(
            Instant::now() < deadline,
            "the reader got {received} samples"
        );
        writer.write(&reading(i)).unwrap();
        i += 1;
        std::thread::sleep(Duration::from_millis(2));
        while let Some((_, v)) = r.next(Duration::ZERO) {
            received = received.max(v["received"].as_u64().unwrap_or(0));
        }
    }
    r.kill();
    let killed = Instant::now();
    for _ in 0..20 {
        writer.write(&reading(i)).unwrap();
        i += 1;
    }
    assert_eq!(
        writer.matched_subscriptions().len(),
        1,
        "the dead reader is still matched before its lease expires"
    );
    assert!(
        writer
            .wait_for_acknowledgments(Duration::from_millis(200))
            .is_err(),
        "the dead reader never acknowledges"
    );
    let took = within(T, || writer.matched_subscriptions().is_empty())
        .expect("the dead reader is unmatched");
    let after_kill = killed.elapsed();
    // It announced itself every third of a lease, the last time at most that long before
    // the kill.
    assert!(
        after_kill >= LEASE * 2 / 3 - Duration::from_millis(100)
            && after_kill <= LEASE + Duration::from_millis(1500),
        "unmatched {after_kill:?} after the kill (lease {LEASE:?})"
    );
    writer
        .wait_for_acknowledgments(Duration::ZERO)
        .expect("nothing is held for the dead reader any more");
    report(json!({
        "test": "killed_reader",
        "lease_ms": 2000,
        "announce_period_ms": 667,
        "unmatched_after_kill_ms": after_kill.as_millis() as u64,
        "samples_written_before_kill": i - 20,
        "waited_ms": took.as_millis() as u64,
    }));
}

/// A TRANSIENT_LOCAL reader killed mid-stream and started again gets the whole history,
/// exactly once and in order, while the writer goes on writing; the dead one is dropped
/// when its lease expires, and a reader that exits normally is dropped at once (goodbye).
#[test]
fn a_restarted_transient_local_reader_catches_up() {
    const COUNT: u32 = 400;
    let p = participant(95);
    let topic = p.create_topic::<Reading>("robust").unwrap();
    let writer = p
        .create_writer(
            &topic,
            Qos::writer().reliable().keep_all().transient_local(),
        )
        .unwrap();
    let mut first = sub(95, COUNT, &["--transient-local"]);
    writer.wait_for_matched(1, T).unwrap();
    let mut second: Option<Proc> = None;
    let mut restarted = None;
    let mut received_by_first = 0;
    for i in 0..COUNT as i32 {
        writer.write(&reading(i)).unwrap();
        std::thread::sleep(Duration::from_millis(3));
        if second.is_none() {
            while let Some((_, v)) = first.next(Duration::ZERO) {
                received_by_first = received_by_first.max(v["received"].as_u64().unwrap_or(0));
            }
            if received_by_first >= 100 && i >= 150 {
                first.kill();
                restarted = Some((Instant::now(), i + 1));
                second = Some(sub(95, COUNT, &["--transient-local"]));
            }
        }
    }
    let mut second = second.expect("the first reader was killed mid-stream");
    let (restarted_at, history_len) = restarted.unwrap();
    let (done_at, done) = second.event("done", Duration::from_secs(60));
    assert_eq!(
        (
            &done["complete"],
            &done["duplicates"],
            &done["out_of_order"],
            &done["corrupt"]
        ),
        (&json!(true), &json!(0), &json!(0), &json!(0)),
        "the restarted reader has everything once, in order: {done}"
    );
    assert_eq!(second.wait(T), 0);
    // The restarted reader said goodbye when it exited; the killed one was dropped on its
    // lease. Nothing is left matched.
    let gone = within(T, || writer.matched_subscriptions().is_empty());
    assert!(gone.is_some(), "both readers are unmatched");
    writer.wait_for_acknowledgments(Duration::ZERO).unwrap();
    report(json!({
        "test": "restarted_transient_local_reader",
        "history_at_restart": history_len,
        "samples": COUNT,
        "write_period_ms": 3,
        "complete_after_restart_ms": done_at.saturating_duration_since(restarted_at).as_millis() as u64,
    }));
}

/// A KEEP_ALL writer whose reader dies does not block forever: with the dead reader still
/// matched a write into a full history fails with a timeout after max_blocking_time, and
/// once the reader's lease expires writes go through again — a write blocked at that
/// moment returns early with success.
#[test]
fn a_keep_all_writer_with_a_dead_reader_times_out_then_recovers() {
    let p = participant(96);
    let topic = p.create_topic::<Reading>("robust").unwrap();
    let short = Duration::from_millis(300);
    let history = 20;
    let impatient = p
        .create_writer(
            &topic,
            Qos::writer()
                .reliable()
                .keep_all()
                .max_samples(history)
                .max_blocking_time(short),
        )
        .unwrap();
    let patient = p
        .create_writer(
            &topic,
            Qos::writer()
                .reliable()
                .keep_all()
                .max_samples(history)
                .max_blocking_time(Duration::from_secs(15)),
        )
        .unwrap();
    let mut r = sub(96, 1_000_000, &[]);
    impatient.wait_for_matched(1, T).unwrap();
    patient.wait_for_matched(1, T).unwrap();
    for i in 0..10 {
        impatient.write(&reading(i)).unwrap();
        patient.write(&reading(i)).unwrap();
    }
    impatient.wait_for_acknowledgments(T).unwrap();
    patient.wait_for_acknowledgments(T).unwrap();
    r.event("progress", T);

    r.kill();
    let killed = Instant::now();
    for i in 10..10 + history as i32 {
        impatient.write(&reading(i)).unwrap();
        patient.write(&reading(i)).unwrap();
    }
    // The history is full of samples the dead reader will never acknowledge.
    let started = Instant::now();
    let result = impatient.write(&reading(100));
    let blocked = started.elapsed();
    assert!(
        matches!(result, Err(Error::Timeout(..))),
        "a full KEEP_ALL history with a dead reader: {result:?}"
    );
    assert!(
        blocked >= short - Duration::from_millis(20) && blocked < short * 3,
        "write returned after {blocked:?}, max_blocking_time {short:?}"
    );
    assert_eq!(
        impatient.matched_subscriptions().len(),
        1,
        "the timeout came while the dead reader was still matched ({:?} after the kill)",
        killed.elapsed()
    );
    // The patient writer blocks until the lease expires frees its history.
    let started = Instant::now();
    patient
        .write(&reading(100))
        .expect("the write goes through once the dead reader is dropped");
    let patient_blocked = started.elapsed();
    let freed_after_kill = killed.elapsed();
    assert!(
        patient_blocked < Duration::from_secs(10),
        "released by the lease expiry, not by max_blocking_time: {patient_blocked:?}"
    );
    assert!(patient.matched_subscriptions().is_empty());
    // And the impatient one writes again without waiting.
    let started = Instant::now();
    for i in 0..2 * history as i32 {
        impatient.write(&reading(200 + i)).unwrap();
    }
    assert!(started.elapsed() < short);
    report(json!({
        "test": "keep_all_writer_dead_reader",
        "lease_ms": 2000,
        "max_samples": history,
        "max_blocking_ms": short.as_millis() as u64,
        "timed_out_after_ms": blocked.as_millis() as u64,
        "blocked_write_released_after_kill_ms": freed_after_kill.as_millis() as u64,
    }));
}

/// Starts a `robust_peer pub` with the short lease writing readings every 2 ms.
fn streaming_pub(domain: &str) -> Proc {
    ferro_peer(
        "ferrodds pub",
        None,
        &[
            "pub",
            "--domain",
            domain,
            "--no-multicast",
            "--lease-ms",
            LEASE_MS,
            "--count",
            "100000",
            "--period-us",
            "2000",
        ],
    )
}

/// A writer killed mid-stream is noticed by the reader when its lease expires: no longer
/// matched, and its instances become NOT_ALIVE_NO_WRITERS (seen on the samples still
/// waiting, and an invalid-data sample per instance).
#[test]
fn a_killed_writer_is_noticed_by_the_reader() {
    let p = participant(97);
    let topic = p.create_topic::<Reading>("robust").unwrap();
    let reader = p
        .create_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    let mut w = streaming_pub("97");
    reader.wait_for_matched(1, T).unwrap();
    // Samples arrive; leave them in the reader's cache.
    assert!(
        within(T, || reader.read().is_ok_and(|s| s.len() >= 30)).is_some(),
        "samples arrive before the kill"
    );
    w.kill();
    let killed = Instant::now();
    within(T, || reader.matched_publications().is_empty()).expect("the dead writer is unmatched");
    let after_kill = killed.elapsed();
    assert!(
        after_kill <= LEASE + Duration::from_millis(1500),
        "unmatched {after_kill:?} after the kill"
    );
    let samples = reader.take().unwrap();
    let lost: Vec<i32> = samples
        .iter()
        .filter(|s| !s.info.valid_data)
        .map(|s| s.value().unwrap().sensor_id)
        .collect();
    assert!(
        samples
            .iter()
            .all(|s| s.info.instance_state == InstanceState::NotAliveNoWriters),
        "every instance lost its writer"
    );
    assert_eq!(
        lost.len(),
        3,
        "one invalid-data sample per instance: {lost:?}"
    );
    report(json!({
        "test": "killed_writer",
        "lease_ms": 2000,
        "unmatched_after_kill_ms": after_kill.as_millis() as u64,
    }));
}

/// Known gap: when the application has already taken every sample of an instance, the
/// reader cache has no key left to build the invalid-data sample from, so a lost writer's
/// NOT_ALIVE_NO_WRITERS never reaches the application (`ReaderCache::writer_lost` only
/// reports instances that still hold a sample).
#[test]
fn a_reader_that_took_everything_still_learns_its_writer_is_gone() {
    let p = participant(98);
    let topic = p.create_topic::<Reading>("robust").unwrap();
    let reader = p
        .create_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    let mut w = streaming_pub("98");
    reader.wait_for_matched(1, T).unwrap();
    let mut got = 0;
    assert!(within(T, || {
        got += reader.take().map(|s| s.len()).unwrap_or(0);
        got >= 30
    })
    .is_some());
    w.kill();
    let mut states = Vec::new();
    within(T, || {
        if let Ok(samples) = reader.take() {
            states.extend(samples.into_iter().map(|s| s.info.instance_state));
        }
        reader.matched_publications().is_empty()
    })
    .expect("the dead writer is unmatched");
    states.extend(
        reader
            .take()
            .unwrap()
            .into_iter()
            .map(|s| s.info.instance_state),
    );
    assert!(
        states.contains(&InstanceState::NotAliveNoWriters),
        "the application learns that the instances lost their writer: {states:?}"
    );
}
