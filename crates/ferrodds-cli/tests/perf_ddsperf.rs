//! `ferrodds perf` against Cyclone DDS's `ddsperf` (0.10.2, Debian's `cyclonedds-tools`)
//! and against itself: ping ↔ pong and pub → sub in every pairing, each bounded in time,
//! each asserting what the measuring side counted (round trips, samples received, loss).
//! Benchmarks are not tests: nothing here asserts a latency or a rate.
//!
//! The ddsperf tests skip (with a message) when `ddsperf` is not installed, and fail in CI; install it with
//! `apt-get install -y cyclonedds-tools`. They need multicast on `lo` (for SPDP), which the
//! test turns on when it runs as root. Each test has its own domain (70–79), and the tests
//! run one at a time so that they do not compete for the CPU.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../../tests/support/cannot_run.rs"]
mod cannot_run;

/// Cyclone DDS on loopback only, multicast for SPDP only (as in `interop_cyclone.rs`).
const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces><AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>"#;

/// How long the active side (ping, pub) runs.
const ACTIVE_SECONDS: &str = "2";
/// A bound on the passive side (pong, sub), which is normally stopped with SIGTERM first.
const PASSIVE_SECONDS: &str = "15";
/// No process of a test lives longer than this.
const HARD_LIMIT: Duration = Duration::from_secs(40);

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn loopback_multicast() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let shown = Command::new("ip").args(["link", "show", "lo"]).output();
        if let Ok(out) = shown {
            if !String::from_utf8_lossy(&out.stdout).contains("MULTICAST") {
                let _ = Command::new("ip")
                    .args(["link", "set", "lo", "multicast", "on"])
                    .status();
            }
        }
    });
}

/// True when `ddsperf` can be run; otherwise says how to get it.
fn have_ddsperf(test: &str) -> bool {
    let found = Command::new("ddsperf")
        .arg("help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        cannot_run::skip(
            test,
            "ddsperf not found (install it with: apt-get install -y cyclonedds-tools)",
        );
    }
    found
}

/// A process whose output goes to files (no pipe can fill up and block it).
struct Proc {
    name: String,
    child: Child,
    out: PathBuf,
    err: PathBuf,
    started: Instant,
}

/// What a process printed and how it ended.
struct Finished {
    name: String,
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Finished {
    fn show(&self) -> String {
        format!(
            "--- {} ({}) stdout:\n{}--- stderr:\n{}",
            self.name, self.status, self.stdout, self.stderr
        )
    }

    /// The JSON lines of a `ferrodds perf --json` run.
    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\n{}", self.show()))
            })
            .collect()
    }

    /// The summary object of a `ferrodds perf --json` run.
    fn summary(&self) -> Value {
        self.json_lines()
            .into_iter()
            .find(|v| v["kind"] == "summary")
            .unwrap_or_else(|| panic!("no summary\n{}", self.show()))
    }
}

fn start(name: &str, mut cmd: Command) -> Proc {
    let dir = std::env::temp_dir();
    let tag = format!("ferrodds-perf-test-{}-{name}", std::process::id());
    let out = dir.join(format!("{tag}.out"));
    let err = dir.join(format!("{tag}.err"));
    let child = cmd
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
    Proc {
        name: name.into(),
        child,
        out,
        err,
        started: Instant::now(),
    }
}

impl Proc {
    /// Waits for the process to end by itself (killing it past the hard limit).
    fn wait(mut self) -> Finished {
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if self.started.elapsed() > HARD_LIMIT {
                let _ = self.child.kill();
                break self.child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let read = |p: &PathBuf| {
            let s = std::fs::read_to_string(p).unwrap_or_default();
            let _ = std::fs::remove_file(p);
            s
        };
        Finished {
            name: self.name,
            status,
            stdout: read(&self.out),
            stderr: read(&self.err),
        }
    }

    /// Lets the process finish its work for `grace`, then asks it to stop (SIGTERM; both
    /// ddsperf and ferrodds perf end their run and report on it) and waits.
    fn stop_after(self, grace: Duration) -> Finished {
        std::thread::sleep(grace);
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        self.wait()
    }
}

fn ferrodds(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ferrodds"));
    c.arg("perf").args(args);
    c
}

fn ddsperf(domain: u32, args: &[&str]) -> Command {
    let mut c = Command::new("ddsperf");
    c.args(["-i", &domain.to_string()]).args(args);
    c
}

/// Runs `passive` (pong or sub) first, then `active` (ping or pub) to its end, then stops
/// `passive`.
fn pair(passive: (&str, Command), active: (&str, Command)) -> (Finished, Finished) {
    let _serial = serial();
    loopback_multicast();
    let p = start(passive.0, passive.1);
    std::thread::sleep(Duration::from_millis(300));
    let a = start(active.0, active.1).wait();
    let p = p.stop_after(Duration::from_millis(700));
    (p, a)
}

/// The sum of `cnt N` over ddsperf's latency lines.
fn ddsperf_roundtrips(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.split(" cnt ").nth(1))
        .filter_map(|n| n.trim().parse::<u64>().ok())
        .sum()
}

/// `(total, lost)` from ddsperf's last `sub` line (`… total N lost L delta …`).
fn ddsperf_received(out: &str) -> Option<(u64, u64)> {
    out.lines().rev().find_map(|l| {
        let rest = l.split(" total ").nth(1)?;
        let mut words = rest.split_whitespace();
        let total = words.next()?.parse().ok()?;
        (words.next()? == "lost").then_some(())?;
        let lost = words.next()?.parse().ok()?;
        Some((total, lost))
    })
}

fn d(domain: u32) -> String {
    domain.to_string()
}

#[test]
fn ddsperf_ping_is_answered_by_ferrodds_pong() {
    if !have_ddsperf("ddsperf_ping_is_answered_by_ferrodds_pong") {
        return;
    }
    let domain = 70;
    let (pong, ping) = pair(
        (
            "ferrodds-pong",
            ferrodds(&[
                "pong",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                PASSIVE_SECONDS,
                "--json",
            ]),
        ),
        (
            "ddsperf-ping",
            ddsperf(domain, &["-D", ACTIVE_SECONDS, "ping"]),
        ),
    );
    let n = ddsperf_roundtrips(&ping.stdout);
    assert!(
        n > 0,
        "ddsperf counted no round trip\n{}\n{}",
        ping.show(),
        pong.show()
    );
    // ddsperf exits 1 when a known peer failed to match all its endpoints.
    assert!(ping.status.success(), "{}\n{}", ping.show(), pong.show());
    let answered = pong.summary()["answered"].as_u64().unwrap();
    assert!(
        answered >= n,
        "pong answered {answered}, ddsperf counted {n}\n{}",
        pong.show()
    );
}

#[test]
fn ferrodds_ping_is_answered_by_ddsperf_pong() {
    if !have_ddsperf("ferrodds_ping_is_answered_by_ddsperf_pong") {
        return;
    }
    let domain = 71;
    let (pong, ping) = pair(
        (
            "ddsperf-pong",
            ddsperf(domain, &["-D", PASSIVE_SECONDS, "pong"]),
        ),
        (
            "ferrodds-ping",
            ferrodds(&[
                "ping",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                ACTIVE_SECONDS,
                "--json",
            ]),
        ),
    );
    assert!(ping.status.success(), "{}\n{}", ping.show(), pong.show());
    let s = ping.summary();
    assert!(s["roundtrips"].as_u64().unwrap() > 0, "{}", ping.show());
    assert_eq!(s["peers"], 1, "{}", ping.show());
    assert!(
        s["rtt_us"]["p50"].as_f64().unwrap() > 0.0,
        "{}",
        ping.show()
    );
    // ddsperf found every endpoint of ours it expects (it exits 1 otherwise).
    assert!(pong.status.success(), "{}\n{}", pong.show(), ping.show());
}

#[test]
fn ddsperf_pub_is_received_by_ferrodds_sub() {
    if !have_ddsperf("ddsperf_pub_is_received_by_ferrodds_sub") {
        return;
    }
    let domain = 72;
    let (sub, publisher) = pair(
        (
            "ferrodds-sub",
            ferrodds(&[
                "sub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                PASSIVE_SECONDS,
                "--json",
            ]),
        ),
        (
            "ddsperf-pub",
            ddsperf(domain, &["-D", ACTIVE_SECONDS, "pub"]),
        ),
    );
    assert!(publisher.status.success(), "{}", publisher.show());
    let s = sub.summary();
    let received = s["samples"].as_u64().unwrap();
    let lost = s["lost"].as_u64().unwrap();
    assert!(received > 0, "{}\n{}", sub.show(), publisher.show());
    assert!(
        lost * 100 <= received,
        "lost {lost} of {received}\n{}",
        sub.show()
    );
    assert_eq!(s["writers"], 1, "{}", sub.show());
}

#[test]
fn ferrodds_pub_is_received_by_ddsperf_sub() {
    if !have_ddsperf("ferrodds_pub_is_received_by_ddsperf_sub") {
        return;
    }
    let domain = 73;
    let (sub, publisher) = pair(
        (
            "ddsperf-sub",
            ddsperf(domain, &["-D", PASSIVE_SECONDS, "sub"]),
        ),
        (
            "ferrodds-pub",
            ferrodds(&[
                "pub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                ACTIVE_SECONDS,
                "--json",
            ]),
        ),
    );
    assert!(publisher.status.success(), "{}", publisher.show());
    let written = publisher.summary()["samples"].as_u64().unwrap();
    let (received, lost) = ddsperf_received(&sub.stdout).unwrap_or_else(|| {
        panic!(
            "ddsperf sub received nothing\n{}\n{}",
            sub.show(),
            publisher.show()
        )
    });
    assert!(
        received > 0 && received <= written,
        "{}\n{}",
        sub.show(),
        publisher.show()
    );
    assert!(
        lost * 100 <= received,
        "lost {lost} of {received}\n{}",
        sub.show()
    );
}

#[test]
fn ferrodds_ping_with_a_size_and_rate_is_answered_by_ddsperf_pong() {
    if !have_ddsperf("ferrodds_ping_with_a_size_and_rate_is_answered_by_ddsperf_pong") {
        return;
    }
    let domain = 74;
    let (pong, ping) = pair(
        (
            "ddsperf-pong",
            ddsperf(domain, &["-D", PASSIVE_SECONDS, "pong"]),
        ),
        (
            "ferrodds-ping",
            ferrodds(&[
                "ping",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                ACTIVE_SECONDS,
                "--rate",
                "500Hz",
                "--size",
                "1k",
                "--json",
            ]),
        ),
    );
    assert!(ping.status.success(), "{}\n{}", ping.show(), pong.show());
    let s = ping.summary();
    assert_eq!(s["size"], 1024, "{}", ping.show());
    let n = s["roundtrips"].as_u64().unwrap();
    // At most 500 per second for 2 s (the first ones go out once the pong matched).
    assert!(n > 0 && n <= 1100, "{}", ping.show());
}

#[test]
fn best_effort_keyless_data_from_ferrodds_reaches_ddsperf() {
    if !have_ddsperf("best_effort_keyless_data_from_ferrodds_reaches_ddsperf") {
        return;
    }
    let domain = 75;
    let (sub, publisher) = pair(
        (
            "ddsperf-sub",
            ddsperf(domain, &["-D", PASSIVE_SECONDS, "-u", "-TOU", "sub"]),
        ),
        (
            "ferrodds-pub",
            ferrodds(&[
                "pub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                ACTIVE_SECONDS,
                "-u",
                "-T",
                "OU",
                "--rate",
                "20kHz",
                "--json",
            ]),
        ),
    );
    assert!(publisher.status.success(), "{}", publisher.show());
    let (received, _lost) = ddsperf_received(&sub.stdout).unwrap_or_else(|| {
        panic!(
            "ddsperf sub received nothing\n{}\n{}",
            sub.show(),
            publisher.show()
        )
    });
    assert!(received > 0, "{}\n{}", sub.show(), publisher.show());
    assert!(sub.stdout.contains("size 4 "), "{}", sub.show());
}

#[test]
fn ferrodds_ping_and_pong() {
    let domain = 76;
    let (pong, ping) = pair(
        (
            "ferrodds-pong",
            ferrodds(&[
                "pong",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                PASSIVE_SECONDS,
                "--json",
            ]),
        ),
        (
            "ferrodds-ping",
            ferrodds(&[
                "ping",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                ACTIVE_SECONDS,
                "--json",
            ]),
        ),
    );
    assert!(ping.status.success(), "{}\n{}", ping.show(), pong.show());
    assert!(pong.status.success(), "{}", pong.show());
    let s = ping.summary();
    let n = s["roundtrips"].as_u64().unwrap();
    assert!(n > 0, "{}", ping.show());
    assert_eq!(s["peers"], 1, "{}", ping.show());
    for key in ["min", "p50", "p90", "p99", "p99_9", "max"] {
        assert!(
            s["rtt_us"][key].as_f64().unwrap() > 0.0,
            "{key}: {}",
            ping.show()
        );
    }
    assert!(s["half_rtt_us"]["p50"].as_f64() < s["rtt_us"]["p50"].as_f64());
    let answered = pong.summary()["answered"].as_u64().unwrap();
    assert!(answered >= n, "{}\n{}", pong.show(), ping.show());
    // Every line is an interval or the summary.
    for v in ping.json_lines() {
        assert!(v["kind"] == "interval" || v["kind"] == "summary", "{v}");
    }
}

#[test]
fn ferrodds_pub_and_sub_with_keys_and_a_size() {
    let domain = 77;
    let (sub, publisher) = pair(
        (
            "ferrodds-sub",
            ferrodds(&[
                "sub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                PASSIVE_SECONDS,
                "-n",
                "4",
                "--json",
            ]),
        ),
        (
            "ferrodds-pub",
            ferrodds(&[
                "pub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                ACTIVE_SECONDS,
                "-n",
                "4",
                "--size",
                "100",
                "--json",
            ]),
        ),
    );
    assert!(publisher.status.success(), "{}", publisher.show());
    let p = publisher.summary();
    let s = sub.summary();
    let written = p["samples"].as_u64().unwrap();
    let received = s["samples"].as_u64().unwrap();
    let lost = s["lost"].as_u64().unwrap();
    assert!(
        received > 0 && received <= written,
        "{}\n{}",
        sub.show(),
        publisher.show()
    );
    assert!(
        lost * 100 <= received,
        "lost {lost} of {received}\n{}",
        sub.show()
    );
    assert_eq!(
        s["bytes"].as_u64().unwrap(),
        received * 100,
        "{}",
        sub.show()
    );
    assert_eq!(p["size"], 100);
}

#[test]
fn ferrodds_pub_count_is_all_received_by_ferrodds_sub() {
    let domain = 78;
    let (sub, publisher) = pair(
        (
            "ferrodds-sub",
            ferrodds(&[
                "sub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                PASSIVE_SECONDS,
                "--json",
            ]),
        ),
        (
            "ferrodds-pub",
            // Waits for the reader before the count starts to matter: 300 ms after the sub.
            ferrodds(&[
                "pub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                "10",
                "--count",
                "20000",
                "--rate",
                "20kHz",
                "--json",
            ]),
        ),
    );
    assert!(publisher.status.success(), "{}", publisher.show());
    assert_eq!(
        publisher.summary()["samples"],
        20000,
        "{}",
        publisher.show()
    );
    let s = sub.summary();
    let received = s["samples"].as_u64().unwrap();
    assert!(received > 0 && received <= 20000, "{}", sub.show());
    assert_eq!(s["lost"], 0, "{}", sub.show());
    // Reliable KEEP_ALL: a sub that lost nothing exits 0.
    assert!(sub.status.success(), "{}", sub.show());
}

#[test]
fn ferrodds_sub_answers_pings_in_the_data() {
    if !have_ddsperf("ferrodds_sub_answers_pings_in_the_data") {
        return;
    }
    let domain = 79;
    let (sub, publisher) = pair(
        (
            "ferrodds-sub",
            ferrodds(&[
                "sub",
                "-d",
                &d(domain),
                "-i",
                "lo",
                "-D",
                PASSIVE_SECONDS,
                "--json",
            ]),
        ),
        // ddsperf: 1000 samples per second, 10 % of them pings.
        (
            "ddsperf-pub",
            ddsperf(domain, &["-D", ACTIVE_SECONDS, "pub", "1kHz", "10%"]),
        ),
    );
    let s = sub.summary();
    assert!(s["samples"].as_u64().unwrap() > 0, "{}", sub.show());
    assert!(s["pings_answered"].as_u64().unwrap() > 0, "{}", sub.show());
    assert!(
        ddsperf_roundtrips(&publisher.stdout) > 0,
        "ddsperf pub saw no pong\n{}\n{}",
        publisher.show(),
        sub.show()
    );
}

#[test]
fn bad_options_are_one_line_and_a_failure() {
    let cases: &[&[&str]] = &[
        &[],
        &["ping", "--rate", "fast"],
        &["pub", "--size", "8"],
        &["pub", "-T", "K32", "--size", "100"],
        &["sub", "-T", "OU", "-n", "3"],
        &["pong", "--history", "some"],
        &["dance"],
        &["ping", "--interface", "no-such-if0", "-d", "70"],
    ];
    for args in cases {
        let out = ferrodds(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("ferrodds: "), "{args:?}: {stderr}");
    }
    let help = ferrodds(&["--help"]).output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for mode in ["ping", "pong", "pub", "sub"] {
        assert!(text.contains(mode), "{text}");
    }
}

// Shared memory (issue 13): FerroDDS processes of one host reach each other through
// iceoryx2; everyone else, and every process where shared memory cannot be set up, over UDP.

/// The datagrams a `ferrodds perf` summary says `transport` sent.
fn datagrams(summary: &Value, transport: &str) -> u64 {
    summary["datagrams"][transport].as_u64().unwrap_or(0)
}

#[test]
fn one_writer_reaches_a_ferrodds_sub_over_shared_memory_and_a_ddsperf_sub_over_udp() {
    if !have_ddsperf(
        "one_writer_reaches_a_ferrodds_sub_over_shared_memory_and_a_ddsperf_sub_over_udp",
    ) {
        return;
    }
    let _serial = serial();
    loopback_multicast();
    let domain = 41;
    let sub = |transport| {
        ferrodds(&[
            "sub",
            "-d",
            &d(domain),
            "-i",
            "lo",
            "-D",
            PASSIVE_SECONDS,
            "--json",
            "--transport",
            transport,
        ])
    };
    let ferro_sub = start("ferrodds-sub", sub("shm"));
    let cyclone_sub = start(
        "ddsperf-sub",
        ddsperf(domain, &["-D", PASSIVE_SECONDS, "sub"]),
    );
    std::thread::sleep(Duration::from_millis(500));
    let publisher = start(
        "ferrodds-pub",
        ferrodds(&[
            "pub",
            "-d",
            &d(domain),
            "-i",
            "lo",
            "-D",
            ACTIVE_SECONDS,
            "--size",
            "64KiB",
            "--rate",
            "500",
            "--json",
            "--transport",
            "shm",
        ]),
    )
    .wait();
    let ferro_sub = ferro_sub.stop_after(Duration::from_millis(700));
    let cyclone_sub = cyclone_sub.stop_after(Duration::ZERO);
    let all = || {
        format!(
            "{}\n{}\n{}",
            publisher.show(),
            ferro_sub.show(),
            cyclone_sub.show()
        )
    };
    assert!(publisher.status.success(), "{}", all());
    let p = publisher.summary();
    let s = ferro_sub.summary();
    let written = p["samples"].as_u64().unwrap();
    let received = s["samples"].as_u64().unwrap();
    assert!(received > 0 && received <= written, "{}", all());
    assert_eq!(s["lost"], 0, "{}", all());
    assert!(ferro_sub.status.success(), "{}", all());
    // The FerroDDS reader was sent its data, and answered, over shared memory; Cyclone's
    // over UDP (each 64 KiB sample is several datagrams either way).
    assert!(datagrams(&p, "shared-memory") >= received, "{}", all());
    assert!(datagrams(&s, "shared-memory") > 0, "{}", all());
    let (cyclone_received, lost) = ddsperf_received(&cyclone_sub.stdout)
        .unwrap_or_else(|| panic!("ddsperf sub received nothing\n{}", all()));
    assert!(
        cyclone_received > 0 && cyclone_received <= written,
        "{}",
        all()
    );
    assert!(lost * 100 <= cyclone_received, "{}", all());
    assert!(datagrams(&p, "udpv4") >= cyclone_received, "{}", all());
}

/// `ferrodds perf ARGS` in a mount namespace of its own, after `setup` (shell commands run
/// as root there).
fn in_mount_namespace(setup: &str, args: &[&str]) -> Command {
    let mut c = Command::new("unshare");
    c.args(["--mount", "sh", "-c"])
        .arg(format!("{setup} && exec \"$0\" perf \"$@\""))
        .arg(env!("CARGO_BIN_EXE_ferrodds"))
        .args(args);
    c
}

fn can_unshare(test: &str) -> bool {
    let ok = Command::new("unshare")
        .args(["--mount", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        cannot_run::skip(
            test,
            "cannot make a mount namespace (needs root and unshare)",
        );
    }
    ok
}

#[test]
fn without_shared_memory_participants_say_so_once_and_use_udp() {
    if !can_unshare("without_shared_memory_participants_say_so_once_and_use_udp") {
        return;
    }
    let domain = 42;
    // A read-only /dev/shm: iceoryx2 can make nothing.
    let no_shm = "mount -t tmpfs -o ro tmpfs /dev/shm";
    let (sub, publisher) = pair(
        (
            "ferrodds-sub",
            in_mount_namespace(
                no_shm,
                &[
                    "sub",
                    "-d",
                    &d(domain),
                    "-i",
                    "lo",
                    "-D",
                    PASSIVE_SECONDS,
                    "--json",
                ],
            ),
        ),
        (
            "ferrodds-pub",
            in_mount_namespace(
                no_shm,
                &[
                    "pub",
                    "-d",
                    &d(domain),
                    "-i",
                    "lo",
                    "-D",
                    ACTIVE_SECONDS,
                    "--size",
                    "1KiB",
                    "--json",
                ],
            ),
        ),
    );
    let all = || format!("{}\n{}", publisher.show(), sub.show());
    assert!(publisher.status.success(), "{}", all());
    for f in [&sub, &publisher] {
        let warnings: Vec<&str> = f
            .stderr
            .lines()
            .filter(|l| l.contains("shared memory unavailable"))
            .collect();
        assert_eq!(warnings.len(), 1, "{}", all());
        assert!(warnings[0].contains("reached over UDP"), "{}", all());
    }
    let (p, s) = (publisher.summary(), sub.summary());
    let received = s["samples"].as_u64().unwrap();
    assert!(received > 0, "{}", all());
    assert_eq!(s["lost"], 0, "{}", all());
    assert!(p["datagrams"].get("shared-memory").is_none(), "{}", all());
    // Samples share datagrams (writer batching): only that UDP carried them.
    assert!(datagrams(&p, "udpv4") > 100, "{}", all());
    // And with shared memory asked for by name, the run refuses in one line.
    let refused = start(
        "ferrodds-pub-shm",
        in_mount_namespace(
            no_shm,
            &["pub", "-d", &d(domain), "-D", "1", "--transport", "shm"],
        ),
    )
    .wait();
    assert!(!refused.status.success(), "{}", refused.show());
    assert!(
        refused
            .stderr
            .trim_end()
            .ends_with("--transport shm: shared memory is not available here"),
        "{}",
        refused.show()
    );
}

/// Runs `script` (sh, with `$0` the `ferrodds` binary) in a mount namespace of its own, to
/// the end. Its first lines give it a /dev/shm and an iceoryx2 directory of its own, so
/// that what is left at the end is what its processes left; its last ones print "done"
/// and list that.
fn in_own_shared_memory(script: &str) -> Finished {
    let script = format!(
        "set -u\nmount -t tmpfs tmpfs /dev/shm\n\
         mkdir -p /tmp/iceoryx2 && mount -t tmpfs tmpfs /tmp/iceoryx2\n{script}\
         echo done\nls -A /dev/shm\nfind /tmp/iceoryx2 -type f\n"
    );
    start("namespace", {
        let mut c = Command::new("unshare");
        c.args([
            "--mount",
            "sh",
            "-c",
            &script,
            env!("CARGO_BIN_EXE_ferrodds"),
        ]);
        c
    })
    .wait()
}

/// The files [`in_own_shared_memory`] listed at the end, but iceoryx2's one global file.
fn left_behind(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| *l != "done")
        .skip(1)
        .filter(|l| !l.ends_with(".global_mgmt"))
        .collect()
}

#[test]
fn a_writer_killed_in_the_middle_of_large_samples_leaves_the_reader_going_and_nothing_behind() {
    let test =
        "a_writer_killed_in_the_middle_of_large_samples_leaves_the_reader_going_and_nothing_behind";
    if !can_unshare(test) {
        return;
    }
    let _serial = serial();
    loopback_multicast();
    let domain = 43;
    let dir = std::env::temp_dir().join(format!("ferrodds-shm-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        r#"F="$0"; OUT="{out}"; D={domain}
"$F" perf sub -d $D -i lo -D 20 --json --transport shm > "$OUT/sub.json" 2> "$OUT/sub.err" &
SUB=$!
sleep 0.5
"$F" perf pub -d $D -i lo -s 4MiB --transport shm -D 15 > /dev/null 2>&1 &
P1=$!
sleep 1.5
kill -9 $P1
wait $P1
"$F" perf pub -d $D -i lo -s 4MiB --transport shm -D 2 --json > "$OUT/pub.json" 2> "$OUT/pub.err"
kill -TERM $SUB
wait $SUB
echo "sub exit $?"
# A process that ends without dropping its participant (exit with a listener thread still
# holding it) leaves what a killed one leaves; the next participant of the host removes it.
"$F" perf pong -d $D -i lo -D 1 --transport shm > /dev/null 2>&1
"#,
        out = dir.display(),
    );
    let run = in_own_shared_memory(&script);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let (sub_out, pub_out, sub_err) = (read("sub.json"), read("pub.json"), read("sub.err"));
    let _ = std::fs::remove_dir_all(&dir);
    let all = format!("{}\nsub:\n{sub_out}{sub_err}\npub:\n{pub_out}", run.show());
    let summary = |out: &str| -> Value {
        out.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["kind"] == "summary")
            .unwrap_or_else(|| panic!("no summary\n{all}"))
    };
    let (s, p) = (summary(&sub_out), summary(&pub_out));
    assert!(run.stdout.contains("sub exit 0"), "{all}");
    // The reader heard both writers and received from the second after the first died.
    assert_eq!(s["writers"], 2, "{all}");
    assert_eq!(s["lost"], 0, "{all}");
    let second = p["samples"].as_u64().unwrap();
    assert!(
        second > 0 && datagrams(&p, "shared-memory") > second,
        "{all}"
    );
    assert!(s["samples"].as_u64().unwrap() > 0, "{all}");
    // Nothing left: no segment, no node, no service, once a later participant has started
    // (it removes what dead processes left).
    let left = left_behind(&run.stdout);
    assert!(left.is_empty(), "left behind: {left:?}\n{all}");
}

/// Zero-copy loans between processes, and processes killed while holding them: a pinging
/// writer killed with its sample in its channel (and in the pong's hands), then a pong
/// killed with the new ping's samples in its subscriber. The survivors go on (a new ping
/// is answered; the ping is answered again by a new pong), samples are read where they
/// were written, and nothing is left behind once a later participant has started.
#[test]
fn processes_killed_while_holding_loans_leave_the_others_going_and_nothing_behind() {
    let test = "processes_killed_while_holding_loans_leave_the_others_going_and_nothing_behind";
    if !can_unshare(test) {
        return;
    }
    let _serial = serial();
    loopback_multicast();
    let domain = 224;
    let dir = std::env::temp_dir().join(format!("ferrodds-loan-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        r#"F="$0"; OUT="{out}"; D={domain}
L="--loan -s 1MiB -i lo --transport shm -d $D"
"$F" perf pong $L -D 30 > "$OUT/pong1.out" 2>&1 &
PONG1=$!
sleep 0.5
"$F" perf ping $L -D 20 > /dev/null 2>&1 &
P1=$!
sleep 1.5
kill -9 $P1
wait $P1
"$F" perf ping $L -D 7 --json > "$OUT/ping.json" 2> "$OUT/ping.err" &
P2=$!
sleep 2.5
kill -9 $PONG1
wait $PONG1
"$F" perf pong $L -D 30 > "$OUT/pong2.out" 2>&1 &
PONG2=$!
wait $P2
echo "ping exit $?"
kill -TERM $PONG2
wait $PONG2
echo "pong exit $?"
"$F" perf pong -d $D -i lo -D 1 --transport shm > /dev/null 2>&1
"#,
        out = dir.display(),
    );
    let run = in_own_shared_memory(&script);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let (ping_out, ping_err) = (read("ping.json"), read("ping.err"));
    let _ = std::fs::remove_dir_all(&dir);
    let all = format!("{}\nping:\n{ping_out}{ping_err}", run.show());
    let lines: Vec<Value> = ping_out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let summary = lines
        .iter()
        .find(|v| v["kind"] == "summary")
        .unwrap_or_else(|| panic!("no summary\n{all}"));
    assert!(run.stdout.contains("ping exit 0"), "{all}");
    assert!(run.stdout.contains("pong exit 0"), "{all}");
    // The pong that outlived the first ping answered the second, and the second pong
    // answered it after the first pong died: round trips in its last seconds.
    assert!(summary["roundtrips"].as_u64().unwrap() > 0, "{all}");
    let late = lines
        .iter()
        .filter(|v| v["kind"] == "interval" && v["t"].as_f64().unwrap_or(0.0) > 4.5)
        .filter_map(|v| v["roundtrips"].as_u64())
        .sum::<u64>();
    assert!(late > 0, "answered by the second pong\n{all}");
    // Read where they were written: lent in the ping's channel, taken in place by a pong
    // and back.
    assert!(summary["lent_shared"].as_u64().unwrap() > 0, "{all}");
    assert!(summary["in_place"].as_u64().unwrap() > 0, "{all}");
    // Nothing left.
    let left = left_behind(&run.stdout);
    assert!(left.is_empty(), "left behind: {left:?}\n{all}");
}

/// `pub --loan` → `sub --loan` over shared memory: every sample received, in order, most
/// of them read where the writer wrote them (the writer's history holds up to 8 chunks,
/// then it lends from the heap until acknowledgments free one).
#[test]
fn lent_samples_are_received_in_order_where_they_were_written() {
    // Domain 225.
    let common = [
        "-d",
        "225",
        "-i",
        "lo",
        "--transport",
        "shm",
        "--loan",
        "-s",
        "1MiB",
    ];
    let (sub, publisher) = pair(
        ("ferrodds-sub-loan", {
            let mut a = vec!["sub", "-D", PASSIVE_SECONDS, "--json"];
            a.extend(common);
            ferrodds(&a)
        }),
        ("ferrodds-pub-loan", {
            let mut a = vec!["pub", "-D", "2", "--json"];
            a.extend(common);
            ferrodds(&a)
        }),
    );
    let (s, p) = (sub.summary(), publisher.summary());
    let all = format!("{}\n{}", sub.show(), publisher.show());
    let received = s["samples"].as_u64().unwrap();
    assert!(received > 0, "{all}");
    assert_eq!(s["lost"], 0, "{all}");
    assert_eq!(received, p["samples"].as_u64().unwrap(), "{all}");
    assert!(p["lent_shared"].as_u64().unwrap() > 0, "{all}");
    assert!(s["in_place"].as_u64().unwrap() > 0, "{all}");
    assert!(datagrams(&s, "shared-memory") > 0, "{all}");
}
