//! Interoperability with real Cyclone DDS (PyPI `cyclonedds` 11.0.1, driven through
//! `tests/interop/cyclone_peer.py`): a keyed struct with strings, sequences and a nested
//! struct in both directions, reliable and best-effort; TRANSIENT_LOCAL late joiners;
//! dispose seen as an instance state; a 16 MiB sample; a type FerroDDS was never compiled
//! with, obtained over XTypes TypeLookup and read as dynamic values; older and newer
//! versions of a type, and a type that is not assignable. Each test asserts the values
//! received, and uses its own domain id (50–69, 175).
//!
//! Needs python3 with cyclonedds and multicast on `lo` (`scripts/test` installs and sets
//! both; as root the test turns multicast on itself).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Once;
use std::time::{Duration, Instant};

use ferrodds::{DataReader, DomainParticipant, InstanceState, JsonView, Qos};
use ferrodds_cdr::Cdr;
use serde_json::Value;

mod spdp_flood;
use sha2::{Digest, Sha256};

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "interop::Position")]
struct Position {
    x: f64,
    y: f64,
    z: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "interop::Reading")]
struct Reading {
    #[cdr(key)]
    sensor_id: i32,
    #[cdr(key)]
    name: String,
    unit: String,
    pos: Position,
    values: Vec<f64>,
    blob: Vec<u8>,
    stamp: i64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "interop::Blob")]
struct Blob {
    #[cdr(key)]
    id: i32,
    data: Vec<u8>,
}

/// Reading `i` exactly as the Cyclone peer builds it.
fn reading(i: i32) -> Reading {
    Reading {
        sensor_id: i % 3,
        name: format!("sensor-{}", i % 3),
        unit: "\u{b0}C".into(),
        pos: Position {
            x: f64::from(i),
            y: f64::from(-i),
            z: 0.5 * f64::from(i),
        },
        values: vec![f64::from(i) * 0.25; (i % 5) as usize],
        blob: (0..i % 11).map(|k| ((i * 7 + k) % 256) as u8).collect(),
        stamp: 1_700_000_000_000 + i64::from(i),
    }
}

fn blob(i: i32, size: usize) -> Blob {
    Blob {
        id: i,
        data: (0..size)
            .map(|k| ((k * 31 + i as usize) % 256) as u8)
            .collect(),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn multicast_on_lo() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Loopback multicast is off by default; SPDP with Cyclone uses it. Root can turn it on.
        let _ = Command::new("ip")
            .args(["link", "set", "lo", "multicast", "on"])
            .status();
    });
}

fn participant(domain: u32) -> DomainParticipant {
    multicast_on_lo();
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .build()
        .unwrap()
}

/// A running Cyclone peer whose stdout lines arrive on a channel.
struct Peer {
    child: Child,
    lines: mpsc::Receiver<String>,
    args: String,
}

impl Peer {
    fn start(args: &[&str]) -> Peer {
        Peer::start_script("cyclone_peer.py", args)
    }

    /// Runs `tests/interop/SCRIPT` with `args`.
    fn start_script(script: &str, args: &[&str]) -> Peer {
        let script = format!(
            "{}/../../tests/interop/{script}",
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
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            child,
            lines,
            args: args.join(" "),
        }
    }

    /// The next JSON line, within `timeout`.
    fn next_json(&self, timeout: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(timeout).ok()?;
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("peer printed non-JSON {line:?}: {e}")),
        )
    }

    /// Waits for the peer to exit; its exit code.
    fn wait(mut self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!(
            "Cyclone peer `{}` did not exit within {timeout:?}",
            self.args
        );
    }

    /// Collects JSON lines until the peer's stdout closes or `timeout` passes.
    fn all_json(&self, timeout: Duration) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => out.push(serde_json::from_str(&line).unwrap()),
                Err(_) => break,
            }
        }
        out
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const MATCH: Duration = Duration::from_secs(20);

/// FerroDDS writes `count` readings; Cyclone reads them; the values Cyclone prints are ours.
/// Takes valid samples until `n` came or `timeout` passed.
fn take_valid(reader: &DataReader<Reading>, n: usize, timeout: Duration) -> Vec<Reading> {
    let mut got = Vec::new();
    let deadline = Instant::now() + timeout;
    while got.len() < n && Instant::now() < deadline {
        if reader.wait_for_data(Duration::from_millis(200)) {
            got.extend(reader.take().unwrap().into_iter().filter_map(|s| s.data));
        }
    }
    got
}

fn ferro_to_cyclone(domain: u32, reliable: bool) {
    let d = domain.to_string();
    let rel = if reliable {
        "--reliable"
    } else {
        "--best-effort"
    };
    let peer = Peer::start(&[
        "sub",
        "--domain",
        &d,
        "--topic",
        "readings",
        "--type",
        "reading",
        "--count",
        "10",
        rel,
        "--timeout",
        "40",
    ]);
    let p = participant(domain);
    let qos = if reliable {
        Qos::writer().reliable().keep_all()
    } else {
        Qos::writer().best_effort()
    };
    let writer = p
        .create_writer(&p.create_topic::<Reading>("readings").unwrap(), qos)
        .unwrap();
    writer.wait_for_matched(1, MATCH).unwrap();
    // Cyclone's reader may see the match after our writer does; best-effort loses what
    // it sends in between.
    std::thread::sleep(Duration::from_millis(if reliable { 0 } else { 500 }));
    for i in 0..10 {
        writer.write(&reading(i)).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    if reliable {
        writer
            .wait_for_acknowledgments(Duration::from_secs(20))
            .unwrap();
    }
    let lines = peer.all_json(Duration::from_secs(40));
    let samples: Vec<&Value> = lines
        .iter()
        .filter(|l| l["valid_data"] == Value::Bool(true))
        .map(|l| &l["sample"])
        .collect();
    let expected: Vec<Value> = (0..10).map(|i| reading(i).to_json()).collect();
    if reliable {
        // Cyclone orders within a take batch by timestamp; compare as sets of values.
        for e in &expected {
            assert!(
                samples.contains(&e),
                "Cyclone did not print {e}; it printed {samples:?}"
            );
        }
    } else {
        assert!(
            samples.len() >= 8,
            "best effort on loopback delivers nearly all: {samples:?}"
        );
        for s in &samples {
            assert!(
                expected.contains(s),
                "Cyclone printed a value we never wrote: {s}"
            );
        }
    }
    assert_eq!(peer.wait(Duration::from_secs(20)), 0);
}

/// Cyclone writes `count` readings; FerroDDS reads them and gets Cyclone's values.
fn cyclone_to_ferro(domain: u32, reliable: bool) {
    let d = domain.to_string();
    let p = participant(domain);
    let qos = if reliable {
        Qos::reader().reliable().keep_all()
    } else {
        Qos::reader().best_effort().keep_all()
    };
    let reader = p
        .create_reader(&p.create_topic::<Reading>("readings").unwrap(), qos)
        .unwrap();
    let rel = if reliable {
        "--reliable"
    } else {
        "--best-effort"
    };
    let mut args = vec![
        "pub", "--domain", &d, "--topic", "readings", "--type", "reading", "--count", "10", rel,
        "--linger", "2",
    ];
    if !reliable {
        args.extend(["--settle", "0.5", "--period-ms", "10"]);
    }
    let peer = Peer::start(&args);
    let got = take_valid(&reader, 10, Duration::from_secs(40));
    assert_eq!(
        peer.wait(Duration::from_secs(40)),
        0,
        "the Cyclone publisher succeeded"
    );
    let expected: Vec<Reading> = (0..10).map(reading).collect();
    if reliable {
        assert_eq!(
            got, expected,
            "every sample, in order, with Cyclone's values"
        );
    } else {
        assert!(
            got.len() >= 8,
            "best effort on loopback delivers nearly all: {}",
            got.len()
        );
        for s in &got {
            assert!(expected.contains(s), "a value Cyclone never wrote: {s:?}");
        }
    }
}

#[test]
fn ferrodds_to_cyclone_reliable() {
    ferro_to_cyclone(50, true);
}

#[test]
fn ferrodds_to_cyclone_best_effort() {
    ferro_to_cyclone(51, false);
}

#[test]
fn cyclone_to_ferrodds_reliable() {
    cyclone_to_ferro(52, true);
}

#[test]
fn cyclone_to_ferrodds_best_effort() {
    cyclone_to_ferro(53, false);
}

/// WRITER_DATA_LIFECYCLE: a FerroDDS writer deleted with its instances registered
/// disposes them (autodispose, the default), and Cyclone's reader sees NOT_ALIVE_DISPOSED.
#[test]
fn a_deleted_ferrodds_writer_disposes_its_instances_at_cyclone() {
    let peer = Peer::start(&[
        "sub",
        "--domain",
        "175",
        "--topic",
        "lifecycle",
        "--type",
        "reading",
        "--count",
        "3",
        "--reliable",
        "--keep-all",
        "--expect-dispose",
        "--timeout",
        "40",
    ]);
    let p = participant(175);
    let writer = p
        .create_writer(
            &p.create_topic::<Reading>("lifecycle").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, MATCH).unwrap();
    writer.untyped().wait_for_readers_heard(MATCH).unwrap();
    for i in 0..3 {
        writer.write(&reading(i)).unwrap();
    }
    writer
        .wait_for_acknowledgments(Duration::from_secs(20))
        .unwrap();
    drop(writer);
    let lines = peer.all_json(Duration::from_secs(40));
    let disposed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["valid_data"] == Value::Bool(false))
        .collect();
    assert!(
        !disposed.is_empty(),
        "no dispose reached Cyclone: {lines:?}"
    );
    for l in &disposed {
        assert_eq!(l["instance_state"], "NOT_ALIVE_DISPOSED", "{l}");
    }
    assert_eq!(peer.wait(Duration::from_secs(20)), 0);
}

#[test]
fn cyclone_late_joiner_gets_ferrodds_history() {
    let p = participant(54);
    let writer = p
        .create_writer(
            &p.create_topic::<Reading>("tl").unwrap(),
            Qos::writer().reliable().transient_local().keep_last(10),
        )
        .unwrap();
    for i in 0..5 {
        writer.write(&reading(i)).unwrap();
    }
    let peer = Peer::start(&[
        "sub",
        "--domain",
        "54",
        "--topic",
        "tl",
        "--type",
        "reading",
        "--count",
        "5",
        "--reliable",
        "--transient-local",
        "--timeout",
        "40",
    ]);
    let lines = peer.all_json(Duration::from_secs(40));
    let samples: Vec<&Value> = lines
        .iter()
        .filter(|l| l["valid_data"] == Value::Bool(true))
        .map(|l| &l["sample"])
        .collect();
    for i in 0..5 {
        assert!(
            samples.contains(&&reading(i).to_json()),
            "late joiner lacks sample {i}: {samples:?}"
        );
    }
    assert_eq!(peer.wait(Duration::from_secs(20)), 0);
}

#[test]
fn ferrodds_late_joiner_gets_cyclone_history() {
    let peer = Peer::start(&[
        "pub",
        "--domain",
        "55",
        "--topic",
        "tl",
        "--type",
        "reading",
        "--count",
        "5",
        "--reliable",
        "--transient-local",
        "--history-depth",
        "10",
        "--no-wait-match",
        "--linger",
        "15",
    ]);
    // Wait until Cyclone has written everything, then join.
    let mut written = 0;
    while written < 5 {
        let line = peer
            .next_json(Duration::from_secs(30))
            .expect("the Cyclone publisher reports its writes");
        if line.get("written").is_some() {
            written += 1;
        }
    }
    let p = participant(55);
    let reader = p
        .create_reader(
            &p.create_topic::<Reading>("tl").unwrap(),
            Qos::reader().reliable().transient_local().keep_all(),
        )
        .unwrap();
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while got.len() < 5 && Instant::now() < deadline {
        if reader.wait_for_data(Duration::from_millis(200)) {
            got.extend(reader.take().unwrap().into_iter().filter_map(|s| s.data));
        }
    }
    assert_eq!(got, (0..5).map(reading).collect::<Vec<_>>());
}

#[test]
fn ferrodds_dispose_shows_in_cyclone() {
    let peer = Peer::start(&[
        "sub",
        "--domain",
        "56",
        "--topic",
        "d",
        "--type",
        "reading",
        "--count",
        "3",
        "--reliable",
        "--expect-dispose",
        "--timeout",
        "40",
    ]);
    let p = participant(56);
    let writer = p
        .create_writer(
            &p.create_topic::<Reading>("d").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, MATCH).unwrap();
    for i in 0..3 {
        writer.write(&reading(i)).unwrap();
    }
    writer.dispose(&reading(1)).unwrap();
    writer
        .wait_for_acknowledgments(Duration::from_secs(20))
        .unwrap();
    let lines = peer.all_json(Duration::from_secs(40));
    let disposed = lines.iter().any(|l| {
        l["instance_state"] == "NOT_ALIVE_DISPOSED"
            && l["sample"]["sensor_id"] == 1
            && l["sample"]["name"] == "sensor-1"
    });
    assert!(disposed, "Cyclone saw instance 1 disposed: {lines:?}");
    assert!(
        !lines
            .iter()
            .any(|l| l["instance_state"] == "NOT_ALIVE_DISPOSED" && l["sample"]["sensor_id"] != 1),
        "{lines:?}"
    );
    assert_eq!(peer.wait(Duration::from_secs(20)), 0);
}

#[test]
fn cyclone_dispose_shows_in_ferrodds() {
    let p = participant(57);
    let reader = p
        .create_reader(
            &p.create_topic::<Reading>("d").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    let peer = Peer::start(&[
        "pub",
        "--domain",
        "57",
        "--topic",
        "d",
        "--type",
        "reading",
        "--count",
        "3",
        "--reliable",
        "--dispose",
        "1",
        "--linger",
        "2",
    ]);
    let mut samples = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(40);
    while !samples
        .iter()
        .any(|s: &ferrodds::Sample<Reading>| !s.info.valid_data)
        && Instant::now() < deadline
    {
        if reader.wait_for_data(Duration::from_millis(200)) {
            samples.extend(reader.take().unwrap());
        }
    }
    assert_eq!(peer.wait(Duration::from_secs(40)), 0);
    let dispose = samples
        .iter()
        .find(|s| !s.info.valid_data)
        .expect("an invalid-data sample reports the dispose");
    assert_eq!(dispose.info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(
        (
            dispose.key.as_ref().unwrap().sensor_id,
            dispose.key.as_ref().unwrap().name.as_str(),
        ),
        (1, "sensor-1")
    );
    let alive_1 = samples
        .iter()
        .find(|s| s.data.as_ref().is_some_and(|d| d.sensor_id == 1))
        .expect("instance 1's sample");
    assert_eq!(
        alive_1.info.instance_handle, dispose.info.instance_handle,
        "the dispose names the same instance"
    );
}

#[test]
fn sixteen_mebibytes_from_ferrodds_to_cyclone() {
    let size = 16 * 1024 * 1024;
    let peer = Peer::start(&[
        "sub",
        "--domain",
        "58",
        "--topic",
        "blob",
        "--type",
        "blob",
        "--count",
        "1",
        "--reliable",
        "--timeout",
        "60",
    ]);
    let p = participant(58);
    let writer = p
        .create_writer(
            &p.create_topic::<Blob>("blob").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, MATCH).unwrap();
    let b = blob(3, size);
    writer.write(&b).unwrap();
    writer
        .wait_for_acknowledgments(Duration::from_secs(60))
        .unwrap();
    let lines = peer.all_json(Duration::from_secs(60));
    let got = lines
        .iter()
        .find(|l| l["valid_data"] == Value::Bool(true))
        .expect("Cyclone received the blob");
    assert_eq!(got["sample"]["len"], size);
    assert_eq!(got["sample"]["sha256"], sha256_hex(&b.data));
    assert_eq!(peer.wait(Duration::from_secs(20)), 0);
}

#[test]
fn sixteen_mebibytes_from_cyclone_to_ferrodds() {
    let size = 16 * 1024 * 1024;
    let p = participant(59);
    let reader = p
        .create_reader(
            &p.create_topic::<Blob>("blob").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    let size_arg = size.to_string();
    let peer = Peer::start(&[
        "pub",
        "--domain",
        "59",
        "--topic",
        "blob",
        "--type",
        "blob",
        "--count",
        "1",
        "--reliable",
        "--blob-size",
        &size_arg,
        "--linger",
        "2",
    ]);
    assert!(
        reader.wait_for_data(Duration::from_secs(60)),
        "the 16 MiB sample arrived"
    );
    let got = reader.take().unwrap();
    assert_eq!(got.len(), 1);
    assert!(
        got[0].data == Some(blob(0, size)),
        "16 MiB from Cyclone arrives intact"
    );
    assert_eq!(peer.wait(Duration::from_secs(40)), 0);
}

/// A FerroDDS participant flooded with 2,200 made-up participants (infinite leases, one
/// source address) before a Cyclone DDS peer starts still matches it and takes its data:
/// such a flood once kept every later peer out for good.
#[test]
fn cyclone_matches_after_a_participant_flood() {
    let p = participant(60);
    let reader = p
        .create_reader(
            &p.create_topic::<Reading>("after_flood").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    spdp_flood::forged_participants(p.metatraffic_address().unwrap(), 60, 2200);
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.discovery_stats().participants_evicted < 1000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        p.discovery_stats().participants_evicted >= 1000,
        "{:?}",
        p.discovery_stats()
    );
    let started = Instant::now();
    let peer = Peer::start(&[
        "pub",
        "--domain",
        "60",
        "--topic",
        "after_flood",
        "--type",
        "reading",
        "--count",
        "10",
        "--reliable",
        "--linger",
        "1",
    ]);
    let got = take_valid(&reader, 10, Duration::from_secs(30));
    println!(
        "Cyclone's samples arrived {:?} after it started, {:?}",
        started.elapsed(),
        p.discovery_stats()
    );
    assert_eq!(
        peer.wait(Duration::from_secs(30)),
        0,
        "the Cyclone publisher"
    );
    assert_eq!(got, (0..10).map(reading).collect::<Vec<_>>());
    assert!(p.discovered_participants().len() <= 1024);
}

/// FerroDDS reads a topic whose type it was never compiled with: `xtypes::Telemetry`
/// (mutable, keyed, an enum, a union, nested appendable structs, a sequence of structs, an
/// array, an optional, octets) published by Cyclone DDS. The type comes from the
/// TypeInformation in Cyclone's SEDP and the TypeObjects it returns over TypeLookup; the
/// samples are read as dynamic values and must be, as JSON, what Cyclone says it wrote.
#[test]
fn a_cyclone_type_is_obtained_over_type_lookup_and_read_as_json() {
    let domain = 68;
    let peer = Peer::start_script(
        "cyclone_xtypes_pub.py",
        &[
            "--domain",
            &domain.to_string(),
            "--topic",
            "telemetry",
            "--count",
            "5",
        ],
    );
    let expected: Vec<Value> = (0..5)
        .map(|_| {
            peer.next_json(MATCH)
                .expect("the Cyclone publisher started")
        })
        .collect();
    let p = participant(domain);
    let topic = p
        .find_topic("telemetry", MATCH)
        .expect("the type of a Cyclone topic, over TypeLookup");
    assert_eq!(topic.type_name(), "xtypes::Telemetry");
    let stats = p.type_lookup_stats();
    assert!(stats.types_received >= 4, "{stats:?}");
    let reader = p
        .create_dynamic_reader(&topic, Qos::reader().reliable())
        .unwrap();
    let ty = topic.dynamic_type().clone();
    let mut got: Vec<Value> = Vec::new();
    let deadline = Instant::now() + MATCH;
    while got.len() < expected.len() && Instant::now() < deadline {
        if !reader.wait_for_data(Duration::from_millis(200)) {
            continue;
        }
        for s in reader.take().unwrap() {
            if !s.info.valid_data {
                continue;
            }
            let json = s.value().unwrap().to_json(&ty);
            if !got.contains(&json) {
                got.push(json);
            }
        }
    }
    got.sort_by_key(|v| v["id"].as_i64());
    assert_eq!(got, expected);
    // The instances are the peer's keys, as our key hash of its key says.
    assert_eq!(reader.sample_rejected_status().total_count, 0);
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "ferro::ShapeV1")]
struct VersionV1 {
    #[cdr(key)]
    color: String,
    x: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "ferro::ShapeV2")]
struct VersionV2 {
    #[cdr(key)]
    color: String,
    x: i32,
    y: i32,
}

/// Cyclone publishes version 2 of an appendable type (one member more); a FerroDDS reader
/// of version 1, under another type name, matches through XTypes assignability (Cyclone's
/// type obtained over TypeLookup) and takes the members it knows.
#[test]
fn a_newer_cyclone_type_is_read_by_an_older_ferrodds_reader() {
    let domain = 69;
    let _peer = Peer::start_script(
        "cyclone_versions.py",
        &[
            "pub",
            "--domain",
            "69",
            "--topic",
            "v2_to_v1",
            "--version",
            "2",
            "--count",
            "3",
        ],
    );
    let p = participant(domain);
    let r = p
        .create_reader(
            &p.create_topic::<VersionV1>("v2_to_v1").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    r.wait_for_matched(1, MATCH).unwrap();
    let mut got = Vec::new();
    let deadline = Instant::now() + MATCH;
    while got.len() < 3 && Instant::now() < deadline {
        r.wait_for_data(Duration::from_millis(200));
        for s in r.take().unwrap() {
            if let Some(data) = s.data.filter(|d| !got.contains(d)) {
                got.push(data);
            }
        }
    }
    got.sort_by_key(|v| v.x);
    let expected: Vec<VersionV1> = (0..3)
        .map(|i| VersionV1 {
            color: format!("C{i}"),
            x: i,
        })
        .collect();
    assert_eq!(got, expected);
}

fn reliable_writer<T: Cdr>(p: &DomainParticipant, topic: &str) -> ferrodds::DataWriter<T> {
    p.create_writer(
        &p.create_topic::<T>(topic).unwrap(),
        Qos::writer().reliable(),
    )
    .unwrap()
}

/// A Cyclone subscriber of `versions::Shape` version `version` on domain 69.
fn versions_sub(topic: &str, version: &str, more: &[&str]) -> Peer {
    let mut args = vec![
        "sub",
        "--domain",
        "69",
        "--topic",
        topic,
        "--version",
        version,
    ];
    args.extend_from_slice(more);
    Peer::start_script("cyclone_versions.py", &args)
}

/// A FerroDDS writer of version 2; a Cyclone reader of version 1 asks for our type over
/// TypeLookup, finds it assignable and takes the members it knows.
#[test]
fn a_newer_ferrodds_type_is_read_by_an_older_cyclone_reader() {
    let p = participant(69);
    let w = reliable_writer::<VersionV2>(&p, "v2_to_cyclone_v1");
    let peer = versions_sub("v2_to_cyclone_v1", "1", &["--count", "3"]);
    w.wait_for_matched(1, MATCH).unwrap();
    for i in 0..3 {
        w.write(&VersionV2 {
            color: format!("C{i}"),
            x: i,
            y: 10 * i,
        })
        .unwrap();
    }
    let mut got: Vec<Value> = (0..3).filter_map(|_| peer.next_json(MATCH)).collect();
    got.sort_by_key(|v| v["x"].as_i64());
    let expected: Vec<Value> = (0..3)
        .map(|i| serde_json::json!({"color": format!("C{i}"), "x": i}))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(peer.wait(MATCH), 0);
}

/// A Cyclone reader whose `x` is a double cannot take a FerroDDS writer's `long x`: our
/// writer reports the reader incompatible (TYPE_CONSISTENCY_ENFORCEMENT, and where), and
/// Cyclone receives nothing.
#[test]
fn a_cyclone_reader_of_a_type_that_is_not_assignable_is_reported_incompatible() {
    let p = participant(69);
    let w = reliable_writer::<VersionV1>(&p, "not_assignable_cyclone");
    let peer = versions_sub(
        "not_assignable_cyclone",
        "bad",
        &["--count", "1", "--timeout", "6"],
    );
    let deadline = Instant::now() + MATCH;
    while w.offered_incompatible_qos().total_count == 0 && Instant::now() < deadline {
        let _ = w.write(&VersionV1 {
            color: "C0".into(),
            x: 0,
        });
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = w.offered_incompatible_qos();
    assert_eq!(status.total_count, 1, "{status:?}");
    assert_eq!(
        status.last_policy,
        Some(ferrodds::qos::QosPolicyId::TypeConsistencyEnforcement)
    );
    let reason = status.last_type_mismatch.unwrap();
    assert_eq!(reason.path, ["versions::Shape", "x"], "{reason}");
    assert!(w.matched_subscriptions().is_empty());
    // Cyclone, for its part, takes nothing (it exits 1 after its timeout).
    assert_eq!(peer.wait(MATCH), 1);
}
