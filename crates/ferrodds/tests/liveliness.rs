//! LIVELINESS between processes, against Cyclone DDS (PyPI `cyclonedds` 11.0.1, driven
//! through `tests/interop/cyclone_liveliness.py`): a Cyclone writer of each kind seen
//! alive, not alive and alive again by a FerroDDS reader (its writes, its silence, its
//! assertions, its process killed), and FerroDDS writers of each kind seen the same way by
//! a Cyclone reader — which proves the participant messages and the HEARTBEAT liveliness
//! flag on the wire both ways. Domains 170–179.
//!
//! Needs python3 with cyclonedds and multicast on `lo` (`scripts/test` installs and sets
//! both; as root the test turns multicast on itself).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Once};
use std::time::{Duration, Instant};

use ferrodds::qos::LivelinessKind;
use ferrodds::{DataReader, DomainParticipant, Qos, StatusKind};
use ferrodds_cdr::Cdr;
use serde_json::Value;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "live::Beat")]
struct Beat {
    #[cdr(key)]
    id: i32,
    count: i32,
}

fn participant(domain: u32) -> DomainParticipant {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = Command::new("ip")
            .args(["link", "set", "lo", "multicast", "on"])
            .status();
    });
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .build()
        .unwrap()
}

/// The Cyclone peer, its JSON lines stamped with when they arrived.
struct Peer {
    child: Child,
    lines: mpsc::Receiver<(Instant, Value)>,
}

impl Peer {
    fn start(args: &[&str]) -> Peer {
        let script = format!(
            "{}/../../tests/interop/cyclone_liveliness.py",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut child = Command::new("python3")
            .arg(script)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the Cyclone peer");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("peer printed non-JSON {line:?}: {e}"));
                if tx.send((Instant::now(), value)).is_err() {
                    break;
                }
            }
        });
        Peer { child, lines }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (when, alive, not alive) as the reader saw them.
type Timeline = Vec<(Instant, u32, u32)>;

/// Samples `reader`'s LIVELINESS_CHANGED every 20 ms (taking its data) until the peer
/// prints `{"phase":"end"}` or `limit` passes, noting when each phase started; `on_phase`
/// runs as each starts (with its index).
fn watch(
    reader: &DataReader<Beat>,
    peer: &mut Peer,
    limit: Duration,
    mut on_phase: impl FnMut(usize, &mut Peer),
) -> (Timeline, Vec<Instant>) {
    let (mut timeline, mut phases) = (Vec::new(), Vec::new());
    let end = Instant::now() + limit;
    while Instant::now() < end {
        while let Ok((at, line)) = peer.lines.try_recv() {
            match line["phase"].as_str() {
                Some("end") => return (timeline, phases),
                Some(_) => {
                    phases.push(at);
                    on_phase(phases.len() - 1, peer);
                }
                None => {}
            }
        }
        let s = reader.liveliness_changed_status();
        timeline.push((Instant::now(), s.alive_count, s.not_alive_count));
        let _ = reader.take();
        std::thread::sleep(Duration::from_millis(20));
    }
    (timeline, phases)
}

/// The (alive, not alive) counts seen between `from` and `to`.
fn seen(timeline: &Timeline, from: Instant, to: Instant) -> Vec<(u32, u32)> {
    timeline
        .iter()
        .filter(|(t, ..)| *t >= from && *t < to)
        .map(|&(_, a, n)| (a, n))
        .collect()
}

fn cyclone_writer(
    domain: u32,
    kind: &str,
    lease_ms: u32,
    phases: &str,
) -> (Peer, DomainParticipant, DataReader<Beat>, Arc<AtomicUsize>) {
    let d = domain.to_string();
    let lease = lease_ms.to_string();
    let peer = Peer::start(&[
        "write",
        "--domain",
        &d,
        "--topic",
        "beats",
        "--kind",
        kind,
        "--lease-ms",
        &lease,
        "--phases",
        phases,
    ]);
    let p = participant(domain);
    let topic = p.create_topic::<Beat>("beats").unwrap();
    let reader = p.create_reader(&topic, Qos::reader().reliable()).unwrap();
    let changes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&changes);
    reader.untyped().set_status_listener(move |kind| {
        if kind == StatusKind::LivelinessChanged {
            counted.fetch_add(1, Ordering::Relaxed);
        }
    });
    reader.wait_for_matched(1, Duration::from_secs(30)).unwrap();
    (peer, p, reader, changes)
}

fn all(v: &[(u32, u32)], expected: (u32, u32)) -> bool {
    !v.is_empty() && v.iter().all(|&s| s == expected)
}

fn any(v: &[(u32, u32)], expected: (u32, u32)) -> bool {
    v.contains(&expected)
}

#[test]
fn a_cyclone_manual_by_topic_writer_is_alive_while_it_writes_or_asserts() {
    let (mut peer, _p, reader, changes) = cyclone_writer(
        170,
        "manual_by_topic",
        400,
        "write:1.5,idle:1.5,assert:1.5,idle:1.5,write:1.5",
    );
    let (timeline, phases) = watch(&reader, &mut peer, Duration::from_secs(40), |_, _| {});
    assert_eq!(phases.len(), 5, "the peer ran every phase");
    let after = |i: usize, ms: u64| phases[i] + Duration::from_millis(ms);
    let w1 = seen(&timeline, after(0, 300), phases[1]);
    assert!(all(&w1, (1, 0)), "writing: alive ({w1:?})");
    let idle = seen(&timeline, after(1, 900), phases[2]);
    assert!(
        all(&idle, (0, 1)),
        "silent for longer than its lease: not alive ({idle:?})"
    );
    let asserting = seen(&timeline, after(2, 500), phases[3]);
    assert!(all(&asserting, (1, 0)), "asserting: alive ({asserting:?})");
    let idle = seen(&timeline, after(3, 900), phases[4]);
    assert!(all(&idle, (0, 1)), "silent again ({idle:?})");
    let w2 = seen(&timeline, after(4, 500), after(4, 1500));
    assert!(all(&w2, (1, 0)), "writing again: alive ({w2:?})");
    // The listener heard each change: matched, lost, back, lost, back.
    assert!(changes.load(Ordering::Relaxed) >= 5);
}

#[test]
fn a_cyclone_automatic_writer_stays_alive_while_idle_and_not_once_its_process_dies() {
    let (mut peer, _p, reader, _) =
        cyclone_writer(171, "automatic", 500, "write:0.5,idle:3,idle:30");
    let mut killed_at = None;
    let (timeline, phases) = watch(&reader, &mut peer, Duration::from_secs(8), |i, peer| {
        if i == 2 {
            // Killed: no goodbye, its participant's lease is Cyclone's 10 s default.
            let _ = peer.child.kill();
            killed_at = Some(Instant::now());
        }
    });
    assert!(phases.len() >= 3, "the peer reached its last phase");
    let idle = seen(&timeline, phases[1], phases[2]);
    assert!(
        all(&idle, (1, 0)),
        "idle with an alive process: alive by its participant's messages ({idle:?})"
    );
    let killed = killed_at.unwrap();
    let after_death = seen(
        &timeline,
        killed + Duration::from_millis(1500),
        Instant::now(),
    );
    assert!(
        any(&after_death, (0, 1)),
        "killed: not alive after its 500 ms lease, long before its participant's lease ({after_death:?})"
    );
    assert_eq!(reader.subscription_matched_status().current_count, 1);
}

/// A FerroDDS writer of `kind` (lease 400 ms) as a Cyclone reader sees it: alive while
/// `keep_alive` runs every 100 ms for 2 s, then (for manual kinds) not alive.
fn ferrodds_writer_seen_by_cyclone(
    domain: u32,
    kind: LivelinessKind,
    keep_alive: impl Fn(&DomainParticipant, &ferrodds::DataWriter<Beat>),
) {
    let d = domain.to_string();
    let peer = Peer::start(&[
        "watch",
        "--domain",
        &d,
        "--topic",
        "beats",
        "--seconds",
        "4",
    ]);
    let p = participant(domain);
    let topic = p.create_topic::<Beat>("beats").unwrap();
    let qos = Qos::writer()
        .reliable()
        .liveliness(kind, Some(Duration::from_millis(400)));
    let writer = p.create_writer(&topic, qos).unwrap();
    writer.wait_for_matched(1, Duration::from_secs(30)).unwrap();
    writer.write(&Beat { id: 1, count: 0 }).unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        keep_alive(&p, &writer);
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut statuses = Vec::new();
    while let Ok((_, line)) = peer.lines.recv_timeout(Duration::from_secs(10)) {
        let t = line["t"].as_f64().unwrap();
        let s = (
            line["alive"].as_u64().unwrap() as u32,
            line["not_alive"].as_u64().unwrap() as u32,
        );
        statuses.push((t, s));
    }
    let between = |a: f64, b: f64| -> Vec<(u32, u32)> {
        statuses
            .iter()
            .filter(|(t, _)| *t >= a && *t < b)
            .map(|(_, s)| *s)
            .collect()
    };
    // Cyclone's clock starts at its match, a little before our writer's start.
    let kept = between(0.3, 1.8);
    assert!(
        all(&kept, (1, 0)),
        "{kind:?} kept alive: Cyclone sees it alive ({kept:?})"
    );
    let after = between(3.0, 4.0);
    if kind == LivelinessKind::Automatic {
        assert!(
            all(&after, (1, 0)),
            "automatic: alive while we live ({after:?})"
        );
    } else {
        assert!(
            all(&after, (0, 1)),
            "{kind:?} silent: Cyclone sees it lost ({after:?})"
        );
        assert!(writer.liveliness_lost_status().total_count >= 1);
    }
}

#[test]
fn cyclone_sees_a_ferrodds_automatic_writer_alive_by_our_participant_messages() {
    ferrodds_writer_seen_by_cyclone(172, LivelinessKind::Automatic, |_, _| {});
}

#[test]
fn cyclone_sees_a_ferrodds_manual_by_participant_writer_by_our_assertions() {
    ferrodds_writer_seen_by_cyclone(173, LivelinessKind::ManualByParticipant, |p, _| {
        p.assert_liveliness().unwrap();
    });
}

#[test]
fn cyclone_sees_a_ferrodds_manual_by_topic_writer_by_our_heartbeats() {
    ferrodds_writer_seen_by_cyclone(174, LivelinessKind::ManualByTopic, |_, w| {
        w.assert_liveliness().unwrap();
    });
}
