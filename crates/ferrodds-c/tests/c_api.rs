//! The C API from C: the committed header is what cbindgen makes of the crate today, and
//! the C test program (`tests/c/api_test.c`, which includes nothing of FerroDDS but the
//! header) builds against the shared library and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory of this crate's shared library, built by cargo for this test. Not the
/// copy `cargo test` left in `target/<profile>/deps`: cargo runs a test as soon as the
/// crate's Rust library is linked, while the same compiler run may still be writing the
/// shared library beside it, so this asks cargo for it (up to date, it returns at once).
fn library_dir() -> PathBuf {
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

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let dir = crate_dir();
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut generated);
    let path = dir.join("include/ferrodds.h");
    if std::env::var_os("FERRODDS_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/ferrodds.h is not what cbindgen generates from the crate: run \
         FERRODDS_BLESS=1 cargo test -p ferrodds-c --test c_api and commit it"
    );
}

/// Compiles `source` (in tests/c, or a path from the repository's root) against the header
/// and the shared library into a binary named `name` (each test its own: tests run in
/// parallel).
fn build_c(source: &str, name: &str) -> PathBuf {
    let dir = crate_dir();
    let libs = library_dir();
    assert!(
        libs.join("libferrodds_c.so").exists(),
        "no libferrodds_c.so in {}",
        libs.display()
    );
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let output = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
        .arg(&out)
        .arg(if source.contains('/') {
            dir.join("../..").join(source)
        } else {
            dir.join("tests/c").join(source)
        })
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-L")
        .arg(&libs)
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg("-lferrodds_c")
        .output()
        .expect("run cc (Debian: build-essential)");
    assert!(
        output.status.success(),
        "cc failed on {source}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// `program` started with `args`, its output piped.
fn start(program: &Path, args: &[&str]) -> std::process::Child {
    Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()))
}

/// Waits at most `seconds` for `child` (killed then); its exit status, standard output
/// and standard error.
fn finish(
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

/// Builds `source` as [`build_c`] does, runs it with `args` and asserts it succeeded; its
/// standard output.
fn run_c(source: &str, name: &str, args: &[&str]) -> String {
    let program = build_c(source, name);
    let (status, stdout, stderr) = finish(start(&program, args), 60);
    assert!(
        status.success(),
        "{name} failed ({status}):\n{stdout}\n{stderr}"
    );
    stdout
}

#[test]
fn the_c_example_runs() {
    let stdout = run_c("examples/c/readings.c", "readings", &["185"]);
    assert_eq!(
        stdout,
        "json: {\"id\":7,\"text\":\"hi\"}\nbytes: 00 01 00 01 07 00 00 00 03 00 00 00 68 69 00 00\n"
    );
}

#[test]
fn the_c_test_program_passes() {
    let stdout = run_c("api_test.c", "api_test", &["182"]);
    assert!(stdout.contains("checks passed"), "{stdout}");
}

/// Reading `i` of tests/interop/README.md, as Cyclone's peer prints it and FerroDDS's JSON
/// view writes it (`blob` as base64 text).
fn reading(i: i64) -> serde_json::Value {
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

fn cyclone_peer() -> PathBuf {
    crate_dir().join("../../tests/interop/cyclone_peer.py")
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

const COUNT: i64 = 7;

#[test]
fn a_c_writer_reaches_a_cyclone_reader() {
    let peer = build_c("interop_peer.c", "interop_peer_pub");
    let (domain, topic) = ("183", "c_to_cyclone");
    let cyclone = Command::new("python3")
        .arg(cyclone_peer())
        .args([
            "sub", "--domain", domain, "--topic", topic, "--type", "reading",
        ])
        .args([
            "--count",
            &COUNT.to_string(),
            "--expect-dispose",
            "--timeout",
            "40",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs cyclone_peer.py");
    let (status, out, err) = finish(
        start(&peer, &["pub", domain, topic, &COUNT.to_string()]),
        60,
    );
    assert!(status.success(), "interop_peer pub: {status}\n{out}\n{err}");
    let (status, out, err) = finish(cyclone, 60);
    assert!(
        status.success(),
        "cyclone_peer.py sub: {status}\n{out}\n{err}"
    );
    let lines = json_lines(&out);
    let mut seen = vec![false; COUNT as usize];
    for line in &lines {
        if line["valid_data"] == true {
            let sample = &line["sample"];
            let i = sample["stamp"].as_i64().expect("a stamp") - 1_700_000_000_000;
            assert_eq!(sample, &reading(i), "reading {i} as Cyclone took it");
            seen[i as usize] = true;
        }
    }
    assert!(seen.iter().all(|&s| s), "Cyclone took {seen:?}:\n{out}");
    assert!(
        // Cyclone hands out the dispose as an invalid sample only when the instance has
        // no unread sample to carry the state.
        lines
            .iter()
            .any(|l| l["instance_state"] == "NOT_ALIVE_DISPOSED"
                && l["sample"]["sensor_id"] == 1
                && l["sample"]["name"] == "sensor-1"),
        "no dispose of sensor 1 at Cyclone:\n{out}"
    );
}

#[test]
fn a_c_reader_takes_what_a_cyclone_writer_wrote() {
    let peer = build_c("interop_peer.c", "interop_peer_sub");
    let (domain, topic) = ("184", "cyclone_to_c");
    let c = start(&peer, &["sub", domain, topic, &COUNT.to_string()]);
    let cyclone = Command::new("python3")
        .arg(cyclone_peer())
        .args([
            "pub", "--domain", domain, "--topic", topic, "--type", "reading",
        ])
        .args([
            "--count",
            &COUNT.to_string(),
            "--dispose",
            "1",
            "--wait-match",
            "20",
        ])
        .output()
        .expect("python3 runs cyclone_peer.py");
    assert!(
        cyclone.status.success(),
        "cyclone_peer.py pub: {}\n{}",
        cyclone.status,
        String::from_utf8_lossy(&cyclone.stderr)
    );
    let (status, out, err) = finish(c, 60);
    assert!(status.success(), "interop_peer sub: {status}\n{out}\n{err}");

    // What Cyclone sends, byte for byte: FerroDDS's own XCDR2 of the same value.
    let spec = ferrodds_idl::parse_str("interop.idl", INTEROP_IDL).expect("the IDL");
    let ty = ferrodds_idl::dynamic::dynamic_type(&spec, "interop::Reading").expect("the type");
    let lines = json_lines(&out);
    let mut seen = vec![false; COUNT as usize];
    for line in &lines {
        if line["valid_data"] == true {
            let sample = &line["sample"];
            let i = sample["stamp"].as_i64().expect("a stamp") - 1_700_000_000_000;
            let want = reading(i);
            assert_eq!(sample, &want, "reading {i} as the C reader took it");
            let value = ferrodds::dynamic::DynamicValue::from_json(&ty, &want).expect("a reading");
            let bytes = ferrodds::dynamic::serialize(
                &ty,
                &value,
                ferrodds::ferrodds_cdr::XcdrVersion::Xcdr2,
                ferrodds::ferrodds_cdr::Endianness::Little,
            )
            .expect("serializes");
            assert_eq!(line["hex"], hex(&bytes), "reading {i}'s bytes");
            seen[i as usize] = true;
        }
    }
    assert!(
        seen.iter().all(|&s| s),
        "the C reader took {seen:?}:\n{out}"
    );
    assert!(
        lines.iter().any(|l| l["valid_data"] == false
            && l["instance_state"] == 32
            && l["sample"]["sensor_id"] == 1
            && l["sample"]["name"] == "sensor-1"),
        "no dispose of sensor 1 at the C reader:\n{out}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The type of tests/interop/README.md (the C peer holds the same text).
const INTEROP_IDL: &str = "module interop {
  @final struct Position { double x; double y; double z; };
  @appendable struct Reading {
    @key int32 sensor_id; @key string name; string unit; Position pos;
    sequence<double> values; sequence<uint8> blob; int64 stamp;
  };
};
";
