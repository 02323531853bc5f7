//! What the tests that run other programs share: the shared library cargo built, starting
//! a program and finishing it within a bound, and the interop type of
//! tests/interop/README.md with its readings. (Each test crate uses part of it.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory of this crate's shared library, built by cargo for this test. Not the
/// copy `cargo test` left in `target/<profile>/deps`: cargo runs a test as soon as the
/// crate's Rust library is linked, while the same compiler run may still be writing the
/// shared library beside it, so this asks cargo for it (up to date, it returns at once).
pub(crate) fn library_dir() -> PathBuf {
    let output = Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "--lib",
            "--message-format=json",
            "-p",
            "ferrodds-c",
        ])
        .current_dir(crate_dir())
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "cargo build -p ferrodds-c failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "ferrodds_c")
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .find(|f| f.extension().is_some_and(|e| e == "so"))
        .and_then(|f| f.parent().map(Path::to_path_buf))
        .expect("cargo names libferrodds_c.so among its artifacts")
}

/// `program` started with `args`, its output piped.
pub(crate) fn start(program: &Path, args: &[&str]) -> std::process::Child {
    Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()))
}

/// Waits at most `seconds` for `child` (killed then); its exit status, standard output
/// and standard error.
pub(crate) fn finish(
    mut child: std::process::Child,
    seconds: u64,
) -> (std::process::ExitStatus, String, String) {
    use std::io::Read;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the program") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().expect("wait for the killed program");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    (status, out, err)
}

/// Reading `i` of tests/interop/README.md, as Cyclone's peer prints it and FerroDDS's JSON
/// view writes it (`blob` as base64 text).
pub(crate) fn reading(i: i64) -> serde_json::Value {
    let blob: Vec<u8> = (0..i % 11).map(|k| ((i * 7 + k) % 256) as u8).collect();
    let blob = base64_simd::STANDARD.encode_to_string(&blob);
    serde_json::json!({
        "sensor_id": i % 3,
        "name": format!("sensor-{}", i % 3),
        "unit": "\u{b0}C",
        "pos": {"x": i as f64, "y": (-i) as f64, "z": 0.5 * i as f64},
        "values": vec![i as f64 * 0.25; (i % 5) as usize],
        "blob": blob,
        "stamp": 1_700_000_000_000i64 + i,
    })
}

pub(crate) fn cyclone_peer() -> PathBuf {
    crate_dir().join("../../tests/interop/cyclone_peer.py")
}

pub(crate) fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// The type of tests/interop/README.md (the C peer holds the same text).
pub(crate) const INTEROP_IDL: &str = "module interop {
  @final struct Position { double x; double y; double z; };
  @appendable struct Reading {
    @key int32 sensor_id; @key string name; string unit; Position pos;
    sequence<double> values; sequence<uint8> blob; int64 stamp;
  };
};
";
