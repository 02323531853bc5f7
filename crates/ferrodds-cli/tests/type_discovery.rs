//! Cyclone DDS's own tools see FerroDDS types over XTypes: with only a FerroDDS shape
//! publisher running, Cyclone DDS 11.0.1's command line (PyPI `cyclonedds`) prints the type's
//! IDL (`cyclonedds typeof`, which needs our TypeInformation in SEDP and our answer to its
//! TypeLookup request) and the samples (`cyclonedds subscribe`, which builds its reader
//! from the type it obtained). Domain 67.
//!
//! Needs python3 with cyclonedds and multicast on `lo` (root turns it on here).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[path = "../../../tests/support/cannot_run.rs"]
mod cannot_run;

const DOMAIN: &str = "67";

/// Cyclone pinned to loopback, SPDP over multicast (as `tests/interop/cyclone_peer.py`).
const CYCLONE_URI: &str = "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
    <NetworkInterface name=\"lo\" multicast=\"true\"/></Interfaces>\
    <AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn shape_publisher() -> Killed {
    let _ = Command::new("ip")
        .args(["link", "set", "lo", "multicast", "on"])
        .status();
    let child = Command::new(env!("CARGO_BIN_EXE_ferrodds"))
        .args(["shapes", "-P", "-t", "Square", "-c", "BLUE", "-w"])
        .args(["--interface", "lo", "-x", "2", "-d", DOMAIN])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the FerroDDS shape publisher");
    Killed(child)
}

/// `cyclonedds COMMAND -i DOMAIN --runtime 3s Square`, running.
fn cyclonedds_on_square(command: &str) -> Killed {
    let args = [
        command,
        "-i",
        DOMAIN,
        "--runtime",
        "3s",
        "--suppress-progress-bar",
        "Square",
    ];
    Killed(
        cyclonedds(&args)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run cyclonedds {command}: {e}")),
    )
}

/// `cyclonedds ARGS` (the console script of PyPI's cyclonedds, run as its module so that
/// PATH does not matter).
fn cyclonedds(args: &[&str]) -> Command {
    cannot_run::require_python_module("cyclonedds", "pip install cyclonedds==11.0.1");
    let mut c = Command::new("python3");
    c.args(["-m", "cyclonedds.tools.cli.main"])
        .args(args)
        .env("CYCLONEDDS_URI", CYCLONE_URI)
        .env("COLUMNS", "200")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[test]
fn cyclonedds_typeof_prints_the_idl_of_a_ferrodds_type() {
    let _publisher = shape_publisher();
    // A few attempts: the first scan may start before the publisher's SEDP is out.
    let mut last = String::new();
    for _ in 0..3 {
        let mut child = cyclonedds_on_square("typeof");
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.0.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut out = String::new();
        let mut err = String::new();
        child
            .0
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child
            .0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let idl: Vec<&str> = out.lines().map(str::trim).collect();
        let has = |p: &dyn Fn(&str) -> bool| idl.iter().any(|l| p(l));
        if has(&|l| l == "struct ShapeType {")
            && has(&|l| l.starts_with("@key string<128>") && l.ends_with("color;"))
            && has(&|l| l == "long x;")
            && has(&|l| l == "long shapesize;")
            && has(&|l| l.starts_with("sequence<octet>") && l.ends_with("additional_payload_size;"))
        {
            return;
        }
        last = format!("stdout:\n{out}\nstderr:\n{err}");
    }
    panic!("cyclonedds typeof did not print ShapeType's IDL; last attempt:\n{last}");
}

#[test]
fn cyclonedds_subscribe_prints_ferrodds_samples() {
    let _publisher = shape_publisher();
    let mut child = cyclonedds_on_square("subscribe");
    let (tx, rx) = mpsc::channel();
    let stdout = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let mut samples = 0;
    while samples < 3 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            break;
        };
        if line.starts_with("ShapeType(color='BLUE', x=") && line.contains("shapesize=") {
            samples += 1;
        }
        seen.push(line);
    }
    let _ = child.0.kill();
    let mut err = String::new();
    let _ = child.0.stderr.take().unwrap().read_to_string(&mut err);
    assert_eq!(
        samples,
        3,
        "cyclonedds subscribe printed no BLUE samples:\n{}\nstderr:\n{err}",
        seen.join("\n")
    );
}
