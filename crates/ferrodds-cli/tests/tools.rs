//! `ferrodds ls`, `typeof`, `echo` and `pub` against peers whose types FerroDDS has no code
//! for: Cyclone DDS's `ddsperf` (0.10.2, Debian's `cyclonedds-tools`) and a Cyclone DDS
//! 11.0.1 publisher in Python (`tests/interop/cyclone_xtypes_pub.py`, PyPI `cyclonedds`).
//! Cyclone's own IDL compiler (`idlc`, Debian's `cyclonedds-dev`) must accept what `typeof`
//! prints. Fast DDS 2.9 (Debian's `libfastrtps-dev`, `tests/interop/fastdds_shape`) describes
//! no types: `echo` and `pub` take the type from an IDL file there. Each test has its own
//! domain (120–123, 125).
//!
//! Needs multicast on `lo` (root turns it on here); `scripts/test` installs the peers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod process_guard;
mod shapes_common;

use process_guard::Running;
use shapes_common::cannot_run;

/// Cyclone DDS on loopback only, multicast for SPDP only.
const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces><AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>"#;

/// No process of a test lives longer than this.
const HARD_LIMIT: Duration = Duration::from_secs(40);

fn loopback_multicast() {
    let _ = Command::new("ip")
        .args(["link", "set", "lo", "multicast", "on"])
        .status();
}

/// True when `program` runs; otherwise the test cannot run (a failure in CI).
fn have(test: &str, program: &str, probe: &[&str], package: &str) -> bool {
    let found = Command::new(program)
        .args(probe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        cannot_run::skip(
            test,
            &format!("{program} not found (install it with: apt-get install -y {package})"),
        );
    }
    found
}

fn ddsperf(domain: u32, args: &[&str]) -> Running {
    loopback_multicast();
    let child = Command::new("timeout")
        .arg(HARD_LIMIT.as_secs().to_string())
        .arg("ddsperf")
        .args(["-D", "30", "-i", &domain.to_string()])
        .args(args)
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ddsperf");
    Running(child)
}

/// `ferrodds ARGS...` on loopback, bounded by [`HARD_LIMIT`].
fn ferrodds(args: &[&str]) -> Command {
    let mut c = Command::new("timeout");
    c.arg(HARD_LIMIT.as_secs().to_string())
        .arg(env!("CARGO_BIN_EXE_ferrodds"))
        .args(args)
        .args(["--interface", "lo"])
        .env_remove("FERRODDS_CONFIG")
        .stdin(Stdio::null());
    c
}

fn run(mut c: Command) -> Output {
    let out = c.output().expect("run ferrodds");
    assert!(
        out.status.success(),
        "{c:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// What `echo` printed: one JSON object a line.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect()
}

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

/// `ls` lists ddsperf's participant, its vendor, its data topic with the type and the
/// writer's QoS; `typeof` prints the type (found over TypeLookup) with its key; `echo`
/// prints its samples as JSON in the type's shape.
#[test]
fn ls_typeof_and_echo_see_a_ddsperf_publisher() {
    let test = "ls_typeof_and_echo_see_a_ddsperf_publisher";
    if !have(test, "ddsperf", &["help"], "cyclonedds-tools") {
        return;
    }
    let domain = 120;
    let _peer = ddsperf(domain, &["pub", "20Hz", "size", "100"]);
    let d = domain.to_string();

    let listing = run(ferrodds(&["ls", "-d", &d, "--duration", "3", "--json"]));
    let all: Value = serde_json::from_str(&stdout(&listing)).expect("ls --json prints JSON");
    let participants = all["participants"].as_array().unwrap();
    assert!(
        participants.iter().any(|p| p["vendor"] == "Cyclone DDS"
            && p["hosts"] == serde_json::json!(["127.0.0.1"])
            && p["locators"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l.as_str().unwrap().starts_with("udpv4/127.0.0.1:"))),
        "{all:#}"
    );
    let topics = all["topics"].as_array().unwrap();
    let data = topics
        .iter()
        .find(|t| t["topic"] == "DDSPerfRDataKS")
        .unwrap_or_else(|| panic!("no DDSPerfRDataKS in {all:#}"));
    assert_eq!(data["types"], serde_json::json!(["KeyedSeq"]), "{data:#}");
    assert_eq!(data["writers"], 1, "{data:#}");
    let writer = &data["endpoints"][0];
    assert_eq!(writer["kind"], "writer");
    assert_eq!(writer["qos"]["reliability"], "reliable");
    assert_eq!(writer["qos"]["history"], "keep-all");
    assert_eq!(writer["describes_type"], true);
    // The text form says the same.
    let text = stdout(&run(ferrodds(&["ls", "-d", &d, "--duration", "2"])));
    assert!(
        text.contains("DDSPerfRDataKS  type KeyedSeq  writers 1") && text.contains("Cyclone DDS"),
        "{text}"
    );

    let idl = stdout(&run(ferrodds(&["typeof", "-d", &d, "DDSPerfRDataKS"])));
    assert!(idl.contains("struct KeyedSeq {"), "{idl}");
    assert!(idl.contains("@key unsigned long keyval;"), "{idl}");
    assert!(idl.contains("sequence<octet> baggage;"), "{idl}");

    let echoed = stdout(&run(ferrodds(&[
        "echo",
        "-d",
        &d,
        "-n",
        "5",
        "DDSPerfRDataKS",
    ])));
    let samples = json_lines(&echoed);
    assert_eq!(samples.len(), 5, "{echoed}");
    let mut last_seq = None;
    for s in &samples {
        assert_eq!(s["keyval"], 0, "{s}");
        // ddsperf's 100-byte sample: 12 bytes of header fields, the rest baggage.
        let baggage = s["baggage"].as_str().expect("octets as base64");
        assert!(!baggage.is_empty(), "{s}");
        let seq = s["seq"].as_u64().expect("a sequence number");
        if let Some(prev) = last_seq {
            assert!(seq > prev, "samples in order: {echoed}");
        }
        last_seq = Some(seq);
    }
}

/// `pub` obtains ddsperf's type from its reader and writes samples it counts, none lost.
#[test]
fn pub_writes_samples_ddsperf_receives() {
    let test = "pub_writes_samples_ddsperf_receives";
    if !have(test, "ddsperf", &["help"], "cyclonedds-tools") {
        return;
    }
    let domain = 121;
    let mut peer = ddsperf(domain, &["sub"]);
    let d = domain.to_string();
    let samples: Vec<String> = (1..=5)
        .map(|i| format!(r#"{{"seq": {i}, "keyval": 0, "baggage": "AAEC"}}"#))
        .collect();
    let mut args = vec!["pub", "-d", &d, "DDSPerfRDataKS"];
    args.extend(samples.iter().map(String::as_str));
    run(ferrodds(&args));
    // ddsperf sub prints a line a second with the samples it received and lost.
    let lines = BufReader::new(peer.0.stdout.take().unwrap()).lines();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if line.contains(" total 5 lost 0 ") {
            return;
        }
        seen.push(line);
    }
    panic!(
        "ddsperf did not count 5 samples, none lost:\n{}",
        seen.join("\n")
    );
}

/// A Cyclone DDS 11 publisher of a rich type (mutable, keyed, enum, union, nested structs,
/// sequences, array, optional, octets): `typeof` prints IDL that Cyclone's `idlc` compiles,
/// `echo` prints exactly the values the publisher wrote, and `pub` writes a sample of that
/// type from JSON that `echo` prints back exactly.
#[test]
fn typeof_echo_and_pub_follow_a_cyclone_python_type() {
    let test = "typeof_echo_and_pub_follow_a_cyclone_python_type";
    if !have(test, "idlc", &["-v"], "cyclonedds-dev") {
        return;
    }
    cannot_run::require_python_module("cyclonedds", "pip install cyclonedds==11.0.1");
    loopback_multicast();
    let domain = 122;
    let d = domain.to_string();
    let mut peer = Running(
        Command::new("timeout")
            .arg(HARD_LIMIT.as_secs().to_string())
            .arg("python3")
            .arg(interop_dir().join("cyclone_xtypes_pub.py"))
            .args(["--domain", &d, "--topic", "telemetry", "--count", "4"])
            .args(["--period", "0.1", "--seconds", "35"])
            .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Cyclone publisher"),
    );
    let mut printed = BufReader::new(peer.0.stdout.take().unwrap()).lines();
    let expected: Vec<Value> = (0..4)
        .map(|_| serde_json::from_str(&printed.next().unwrap().unwrap()).unwrap())
        .collect();

    let idl = stdout(&run(ferrodds(&["typeof", "-d", &d, "telemetry"])));
    for part in [
        "module xtypes {",
        "@mutable",
        "struct Telemetry {",
        "@key long id;",
        "union Reading switch (long) {",
        "enum Mode {",
        "@optional string note;",
        "float gains[3];",
    ] {
        assert!(idl.contains(part), "no {part:?} in\n{idl}");
    }
    let dir = std::env::temp_dir().join(format!("ferrodds-typeof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("telemetry.idl");
    std::fs::write(&file, &idl).unwrap();
    let idlc = Command::new("idlc")
        .arg("-o")
        .arg(&dir)
        .arg(&file)
        .output()
        .expect("run idlc");
    assert!(
        idlc.status.success(),
        "idlc rejects what typeof printed:\n{idl}\n{}",
        String::from_utf8_lossy(&idlc.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);

    // echo runs while pub writes a sample of our own (id 77) into the topic.
    let echo = ferrodds(&["echo", "-d", &d, "--duration", "12", "telemetry"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start echo");
    let ours = serde_json::json!({
        "id": 77, "name": "from ferrodds pub", "mode": "FAULT",
        "position": {"x": 1.5, "y": -2.0, "z": 0.0},
        "path": [{"x": 0.0, "y": 1.0, "z": 2.0}],
        "gains": [0.25, 0.5, 4.0],
        "reading": {"discriminator": 2, "label": "written from JSON"},
        "note": "a note", "raw": "AQID"
    });
    std::thread::sleep(Duration::from_secs(3));
    run(ferrodds(&["pub", "-d", &d, "telemetry", &ours.to_string()]));
    let out = echo.wait_with_output_bounded();
    let got = json_lines(&out);
    for e in &expected {
        assert!(got.contains(e), "echo never printed {e}:\n{out}");
    }
    assert!(got.contains(&ours), "echo never printed {ours}:\n{out}");
    assert!(
        got.iter().all(|g| expected.contains(g) || *g == ours),
        "echo printed a sample nobody wrote:\n{out}"
    );
}

trait WaitBounded {
    fn wait_with_output_bounded(self) -> String;
}

impl WaitBounded for Child {
    /// The standard output of a process that ends by itself within [`HARD_LIMIT`].
    fn wait_with_output_bounded(self) -> String {
        let out = self.wait_with_output().expect("wait for the process");
        assert!(
            out.status.success(),
            "failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 output")
    }
}

/// A bad sample is one line naming where it was and what was wrong, and a failure.
#[test]
fn pub_rejects_a_sample_that_is_not_the_type() {
    let test = "pub_rejects_a_sample_that_is_not_the_type";
    if !have(test, "ddsperf", &["help"], "cyclonedds-tools") {
        return;
    }
    let domain = 123;
    let _peer = ddsperf(domain, &["sub"]);
    let d = domain.to_string();
    let out = ferrodds(&[
        "pub",
        "-d",
        &d,
        "--wait",
        "1",
        "DDSPerfRDataKS",
        r#"{"seq": "one", "keyval": 0, "baggage": ""}"#,
    ])
    .output()
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("sample 1") && err.contains("KeyedSeq"),
        "{err}"
    );
}

/// Fast DDS 2.9 does not describe its types, so `typeof` cannot find the shape type; `echo`
/// and `pub` read it from the IDL file Fast DDS's own type is generated from, and exchange
/// samples with Fast DDS's shape application both ways.
#[test]
fn echo_and_pub_take_the_type_from_an_idl_file() {
    use shapes_common::{App, Vendor};
    let domain = 125;
    let d = domain.to_string();
    let idl = interop_dir().join("fastdds_shape/ShapeType.idl");
    let idl = idl.to_str().unwrap();
    let mut publisher = App::spawn(
        Vendor::FastDds,
        &format!("-P -t Square -c BLUE -z 25 -d {domain}"),
    );
    let mut subscriber = App::spawn(Vendor::FastDds, &format!("-S -t Square -d {domain}"));

    let out = ferrodds(&["typeof", "-d", &d, "--timeout", "3", "Square"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "Fast DDS described its type after all"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("described its type"), "{err}");

    let echoed = stdout(&run(ferrodds(&[
        "echo",
        "-d",
        &d,
        "--idl",
        idl,
        "--type",
        "ShapeType",
        "-n",
        "3",
        "Square",
    ])));
    let samples = json_lines(&echoed);
    assert_eq!(samples.len(), 3, "{echoed}");
    for s in &samples {
        assert_eq!(s["color"], "BLUE", "{echoed}");
        assert_eq!(s["shapesize"], 25, "{echoed}");
    }

    run(ferrodds(&[
        "pub",
        "-d",
        &d,
        "--idl",
        idl,
        "--type",
        "ShapeType",
        "Square",
        r#"{"color": "RED", "x": 11, "y": 22, "shapesize": 33, "additional_payload_size": ""}"#,
    ]));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match subscriber.next_sample(left) {
            Ok(s) if s.color == "RED" => {
                assert_eq!(
                    (s.x, s.y, s.size),
                    (11, 22, 33),
                    "{}",
                    subscriber.transcript()
                );
                break;
            }
            Ok(_) => {}
            Err(_) => panic!(
                "Fast DDS never printed the sample pub wrote:\n{}\n{}",
                subscriber.transcript(),
                publisher.transcript()
            ),
        }
    }
    publisher.interrupt();
    subscriber.interrupt();
}
