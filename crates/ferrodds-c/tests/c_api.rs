//! The C API from C: the committed header is what cbindgen makes of the crate today, and
//! the C test program (`tests/c/api_test.c`, which includes nothing of FerroDDS but the
//! header) builds against the shared library and passes.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{
    crate_dir, cyclone_peer, finish, json_lines, library_dir, reading, start, INTEROP_IDL,
};

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

/// A participant made from C with USER_DATA (`ferrodds_qset_userdata`) announces it, and
/// `ferrodds_set_qos` on the participant replaces it: a FerroDDS participant of the same
/// domain sees both. (Called in this process, through the same functions C calls.)
#[test]
fn a_c_participants_user_data_is_announced_and_replaced() {
    use ferrodds_c::entity::*;
    use ferrodds_c::qos::*;
    let domain = 208;
    let announced = |observer: &ferrodds::DomainParticipant, endpoint: ferrodds::Guid| {
        observer
            .discovered_participant_data()
            .into_iter()
            .find(|p| p.guid.prefix == endpoint.prefix)
            .map(|p| p.user_data.value)
    };
    let wait_for =
        |observer: &ferrodds::DomainParticipant, endpoint: ferrodds::Guid, want: &[u8]| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while announced(observer, endpoint).as_deref() != Some(want)
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            assert_eq!(announced(observer, endpoint).as_deref(), Some(want));
        };
    // SAFETY: the QoS is live until deleted, the bytes are what the lengths say.
    unsafe {
        let qos = ferrodds_create_qos();
        assert_eq!(ferrodds_qset_userdata(qos, b"from C".as_ptr().cast(), 6), 0);
        let p = ferrodds_create_participant(domain, qos);
        assert!(p > 0, "{p}");
        let observer = ferrodds::DomainParticipant::new(domain).unwrap();
        // The C participant's GUID endpoint: that of a writer it makes.
        let ty = ferrodds_create_type_from_idl(
            c"module m { struct T { long x; }; };".as_ptr(),
            c"m::T".as_ptr(),
        );
        let topic = ferrodds_create_topic(p, c"user_data_t".as_ptr(), ty);
        let writer = ferrodds_create_writer(p, topic, std::ptr::null());
        assert!(writer > 0, "{writer}");
        let mut guid = [0u8; 16];
        assert_eq!(ferrodds_get_guid(writer, guid.as_mut_ptr()), 0);
        let endpoint = ferrodds::Guid::from_bytes(guid);
        wait_for(&observer, endpoint, b"from C");
        assert_eq!(ferrodds_qset_userdata(qos, b"again".as_ptr().cast(), 5), 0);
        assert_eq!(ferrodds_set_qos(p, qos), 0);
        wait_for(&observer, endpoint, b"again");
        ferrodds_delete_qos(qos);
        assert_eq!(ferrodds_delete(p), 0);
        assert_eq!(ferrodds_delete(ty), 0);
    }
}
