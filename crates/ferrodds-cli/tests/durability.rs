//! `ferrodds durability` end to end, the service run as a user runs it:
//!
//! - a TRANSIENT writer's samples (the last per instance, its DURABILITY_SERVICE's
//!   KEEP_LAST 1) reach a TRANSIENT reader that joins after the writer is gone; a
//!   TRANSIENT_LOCAL reader that had them from the writer does not get them twice, and a
//!   VOLATILE one gets nothing (domain 179);
//! - a PERSISTENT writer's samples survive the service's restart on the same SQLite store
//!   and reach a reader that joins afterwards (domain 180).
//!
//! Every wait is bounded; every process is killed when its test ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferrodds::qos::Durability;
use ferrodds::{Cdr, DataReader, DataWriter, DomainParticipant, Qos};

/// No wait in these tests is longer.
const LIMIT: Duration = Duration::from_secs(30);

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "kept::Reading")]
struct Reading {
    #[cdr(key)]
    id: i32,
    text: String,
}

/// The service, killed when dropped, and the lines it prints on stderr.
struct Service {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Service {
    fn start(domain: u32, store: Option<&PathBuf>) -> Service {
        let _ = Command::new("ip")
            .args(["link", "set", "lo", "multicast", "on"])
            .status();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferrodds"));
        cmd.args(["durability", "-d", &domain.to_string(), "-i", "lo"]);
        if let Some(path) = store {
            cmd.arg("--store").arg(path);
        }
        let mut child = cmd
            .args(["--duration", "60"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ferrodds durability");
        let (tx, lines) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Service {
            child,
            lines,
            seen: Vec::new(),
        };
        s.wait_for("ready");
        s
    }

    /// Waits (up to `LIMIT`) for a line containing `what`.
    fn wait_for(&mut self, what: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line.clone());
            if line.contains(what) {
                return line;
            }
        }
        panic!("no line with {what:?} from the service: {:#?}", self.seen);
    }

    /// SIGINT, as Ctrl-C: the service ends cleanly.
    fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "the service exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "the service did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .build()
        .unwrap()
}

fn reader(p: &DomainParticipant, durability: Durability) -> DataReader<Reading> {
    let t = p.create_topic::<Reading>("kept").unwrap();
    p.create_reader(
        &t,
        Qos::reader().reliable().keep_all().durability(durability),
    )
    .unwrap()
}

/// Takes what arrives within `wait`, stopping early once `n` samples came.
fn take(r: &DataReader<Reading>, n: usize, wait: Duration) -> Vec<(i32, String)> {
    let deadline = Instant::now() + wait;
    let mut got = Vec::new();
    while Instant::now() < deadline && got.len() < n {
        r.wait_for_data(Duration::from_millis(100));
        got.extend(
            r.take()
                .unwrap()
                .into_iter()
                .filter_map(|s| s.data.map(|d| (d.id, d.text))),
        );
    }
    got
}

/// A durable writer that writes (1, a), (2, b), (1, c), waits until every reader matched
/// (`readers`, the service's included) acknowledged them, and is deleted without
/// disposing: the service then hands out (1, c) and (2, b).
fn write_and_leave(
    p: &DomainParticipant,
    durability: Durability,
    readers: usize,
    svc: &mut Service,
) {
    let t = p.create_topic::<Reading>("kept").unwrap();
    let w: DataWriter<Reading> = p
        .create_writer(
            &t,
            Qos::writer()
                .reliable()
                .keep_all()
                .durability(durability)
                .autodispose_unregistered_instances(false),
        )
        .unwrap();
    w.wait_for_matched(readers, LIMIT).unwrap();
    for (id, text) in [(1, "a"), (2, "b"), (1, "c")] {
        w.write(&Reading {
            id,
            text: text.into(),
        })
        .unwrap();
    }
    w.wait_for_acknowledgments(LIMIT).unwrap();
    drop(w);
    let line = svc.wait_for("gone");
    assert!(line.contains("2 changes handed out"), "{line}");
}

fn sorted(mut v: Vec<(i32, String)>) -> Vec<(i32, String)> {
    v.sort();
    v
}

#[test]
fn a_transient_writers_samples_reach_a_reader_that_joins_after_it_left() {
    const DOMAIN: u32 = 179;
    let mut svc = Service::start(DOMAIN, None);
    let early = participant(DOMAIN);
    let local = reader(&early, Durability::TransientLocal);
    let volatile = reader(&early, Durability::Volatile);
    let writing = participant(DOMAIN);
    // Our two readers and the service's.
    write_and_leave(&writing, Durability::Transient, 3, &mut svc);
    assert_eq!(
        take(&local, 3, LIMIT),
        [(1, "a".into()), (2, "b".into()), (1, "c".into())]
    );
    assert_eq!(take(&volatile, 3, LIMIT).len(), 3);

    let late = participant(DOMAIN);
    let transient = reader(&late, Durability::Transient);
    assert_eq!(
        sorted(take(&transient, 2, LIMIT)),
        [(1, "c".into()), (2, "b".into())],
        "the service's history: the last sample of each instance"
    );
    // The early readers matched the service's writer too: the TRANSIENT_LOCAL one had the
    // samples from the writer and drops them, the VOLATILE one is sent nothing.
    for r in [&local, &volatile] {
        let deadline = Instant::now() + LIMIT;
        while r.matched_publications().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(r.matched_publications().len(), 1, "the service's writer");
    }
    assert_eq!(take(&local, 1, Duration::from_secs(1)), []);
    assert_eq!(take(&volatile, 1, Duration::from_secs(1)), []);
    svc.stop();
}

#[test]
fn a_persistent_writers_samples_survive_the_services_restart() {
    const DOMAIN: u32 = 180;
    let store = std::env::temp_dir().join(format!("ferrodds-durability-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&store);
    let mut svc = Service::start(DOMAIN, Some(&store));
    let writing = participant(DOMAIN);
    write_and_leave(&writing, Durability::Persistent, 1, &mut svc);
    svc.stop();
    drop(writing);

    let svc = Service::start(DOMAIN, Some(&store));
    assert!(
        svc.seen
            .iter()
            .any(|l| l.contains("1 writers from the store")),
        "{:#?}",
        svc.seen
    );
    let late = participant(DOMAIN);
    let persistent = reader(&late, Durability::Persistent);
    assert_eq!(
        sorted(take(&persistent, 2, LIMIT)),
        [(1, "c".into()), (2, "b".into())]
    );
    svc.stop();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
}
