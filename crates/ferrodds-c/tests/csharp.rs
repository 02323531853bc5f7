//! The C# binding (`bindings/csharp`) on Mono: `build.sh` builds FerroDDS.dll and the C#
//! test programs with `mcs`, and `mono` runs them against this crate's shared library —
//! the binding's own tests (`bindings/csharp/tests/ApiTests.cs`, a case per behaviour),
//! C# and Cyclone DDS both ways, and a C# writer read by a Rust `DynamicReader`. Without
//! Mono these tests fail in CI (`CI=true`) and are skipped, saying why, elsewhere.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{crate_dir, cyclone_peer, finish, json_lines, library_dir, reading};

/// How long a C# program may run before it is killed.
const LIMIT: u64 = 120;

/// The directory of the built binding and test programs (built once: tests run in
/// parallel), or `None` when Mono is missing outside CI.
fn csharp() -> Option<PathBuf> {
    let missing = ["mcs", "mono"].into_iter().find(|tool| {
        Command::new(tool)
            .arg("--version")
            .output()
            .map_or(true, |o| !o.status.success())
    });
    if let Some(tool) = missing {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and `{tool}` cannot be run: install mono-devel (scripts/test does)"
        );
        eprintln!("skipping the C# binding's test: `{tool}` cannot be run (Debian: apt-get install mono-devel)");
        return None;
    }
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    Some(BUILT.get_or_init(build).clone())
}

fn build() -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("csharp");
    // The tests' types, generated as `ferrodds idl --lang csharp` generates them.
    ferrodds_idl::Compiler::new()
        .compile_csharp(
            &[crate_dir().join("../../bindings/csharp/tests/demo.idl")],
            &out,
        )
        .unwrap_or_else(|e| panic!("the C# of bindings/csharp/tests/demo.idl: {e}"));
    let output = Command::new("sh")
        .arg(crate_dir().join("../../bindings/csharp/build.sh"))
        .arg("--tests")
        .arg(&out)
        .output()
        .expect("run sh");
    assert!(
        output.status.success(),
        "bindings/csharp/build.sh failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// `program` of the build started under Mono with `args`, this crate's shared library on
/// its library path, its output piped.
fn start_mono(dir: &Path, program: &str, args: &[&str]) -> Child {
    let mut path = std::ffi::OsString::from(library_dir());
    if let Some(more) = std::env::var_os("LD_LIBRARY_PATH") {
        path.push(":");
        path.push(more);
    }
    Command::new("mono")
        .arg("--debug")
        .arg(dir.join(program))
        .args(args)
        .env("LD_LIBRARY_PATH", path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mono")
}

/// Runs the cases of ApiTests.exe in `domain` and asserts each passed.
fn api_cases(domain: u32, cases: &[&str]) {
    let Some(dir) = csharp() else { return };
    let domain = domain.to_string();
    let args: Vec<&str> = std::iter::once(domain.as_str())
        .chain(cases.iter().copied())
        .collect();
    let (status, out, err) = finish(start_mono(&dir, "ApiTests.exe", &args), LIMIT);
    for case in cases {
        assert!(
            out.lines().any(|l| l == format!("ok {case}")),
            "the C# case {case} did not pass ({status}):\n{out}\n{err}"
        );
    }
    assert!(status.success(), "ApiTests.exe: {status}\n{out}\n{err}");
}

#[test]
fn csharp_entities_and_qos() {
    api_cases(186, &["entities_and_qos"]);
}

#[test]
fn csharp_write_take_dispose_and_instance_states() {
    api_cases(187, &["write_take", "dispose_and_instance_states"]);
}

#[test]
fn csharp_group_order_and_participant_qos() {
    api_cases(209, &["group_order_and_participant_qos"]);
}

#[test]
fn csharp_instances_by_handle() {
    api_cases(210, &["instances_by_handle"]);
}

#[test]
fn csharp_transient_local_late_joiner() {
    api_cases(188, &["late_joiner"]);
}

#[test]
fn csharp_wait_sets_and_conditions() {
    api_cases(189, &["waitset_and_conditions"]);
}

#[test]
fn csharp_listeners() {
    api_cases(190, &["listeners"]);
}

#[test]
fn csharp_json_samples() {
    api_cases(191, &["json"]);
}

#[test]
fn csharp_misuse_is_an_exception_with_the_native_message() {
    api_cases(
        192,
        &[
            "null_arguments",
            "deleted_entities",
            "wrong_kind_of_entity",
            "bytes_that_are_not_a_sample",
        ],
    );
}

const COUNT: i64 = 7;

/// Cyclone's peer (tests/interop/cyclone_peer.py) started with `args`.
fn start_cyclone(mode: &str, domain: &str, topic: &str, args: &[&str]) -> Child {
    Command::new("python3")
        .arg(cyclone_peer())
        .args([
            mode, "--domain", domain, "--topic", topic, "--type", "reading",
        ])
        .args(["--count", &COUNT.to_string()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs cyclone_peer.py")
}

/// Asserts that `lines` (a peer's JSON lines) hold readings 0..COUNT exactly, and a dispose
/// of sensor 1 (a line for which `disposed` holds).
fn assert_readings_and_dispose(
    who: &str,
    lines: &[serde_json::Value],
    disposed: impl Fn(&serde_json::Value) -> bool,
) {
    let mut seen = vec![false; COUNT as usize];
    for line in lines.iter().filter(|l| l["valid_data"] == true) {
        let sample = &line["sample"];
        let i = sample["stamp"].as_i64().expect("a stamp") - 1_700_000_000_000;
        assert_eq!(sample, &reading(i), "reading {i} as {who} took it");
        seen[i as usize] = true;
    }
    assert!(seen.iter().all(|&s| s), "{who} took {seen:?}:\n{lines:?}");
    assert!(
        lines.iter().any(|l| disposed(l)
            && l["sample"]["sensor_id"] == 1
            && l["sample"]["name"] == "sensor-1"),
        "no dispose of sensor 1 at {who}:\n{lines:?}"
    );
}

#[test]
fn a_csharp_writer_reaches_a_cyclone_reader() {
    let Some(dir) = csharp() else { return };
    // TRANSIENT_LOCAL on both sides: the C# writer may match Cyclone's reader (and write)
    // before Cyclone has discovered the writer, and a volatile reader that learns of a
    // writer late starts after what it already wrote.
    let (domain, topic) = ("193", "csharp_to_cyclone");
    let cyclone = start_cyclone(
        "sub",
        domain,
        topic,
        &["--transient-local", "--expect-dispose", "--timeout", "60"],
    );
    let count = COUNT.to_string();
    let (status, out, err) = finish(
        start_mono(&dir, "InteropPeer.exe", &["pub", domain, topic, &count]),
        LIMIT,
    );
    assert!(
        status.success(),
        "InteropPeer.exe pub: {status}\n{out}\n{err}"
    );
    let (status, out, err) = finish(cyclone, LIMIT);
    assert!(
        status.success(),
        "cyclone_peer.py sub: {status}\n{out}\n{err}"
    );
    // Cyclone hands out the dispose as an invalid sample only when the instance has no
    // unread sample to carry the state.
    assert_readings_and_dispose("Cyclone", &json_lines(&out), |l| {
        l["instance_state"] == "NOT_ALIVE_DISPOSED"
    });
}

#[test]
fn a_csharp_reader_takes_what_a_cyclone_writer_wrote() {
    let Some(dir) = csharp() else { return };
    let (domain, topic) = ("194", "cyclone_to_csharp");
    let count = COUNT.to_string();
    let csharp = start_mono(&dir, "InteropPeer.exe", &["sub", domain, topic, &count]);
    let (status, out, err) = finish(
        start_cyclone(
            "pub",
            domain,
            topic,
            &["--dispose", "1", "--wait-match", "30"],
        ),
        LIMIT,
    );
    assert!(
        status.success(),
        "cyclone_peer.py pub: {status}\n{out}\n{err}"
    );
    let (status, out, err) = finish(csharp, LIMIT);
    assert!(
        status.success(),
        "InteropPeer.exe sub: {status}\n{out}\n{err}"
    );
    assert_readings_and_dispose("the C# reader", &json_lines(&out), |l| {
        l["valid_data"] == false && l["instance_state"] == "NotAliveDisposedInstanceState"
    });
}

/// The test type of bindings/csharp/tests/demo.idl.
const READING_IDL: &str = "module demo { @final struct Reading { @key long id; string text; }; };";

#[test]
fn a_rust_reader_takes_what_a_csharp_writer_wrote() {
    let Some(dir) = csharp() else { return };
    let topic_name = "csharp_to_rust";
    let spec = ferrodds_idl::parse_str("reading.idl", READING_IDL).expect("the IDL");
    let ty = ferrodds_idl::dynamic::dynamic_type(&spec, "demo::Reading").expect("the type");
    let participant = ferrodds::DomainParticipant::new(195).expect("a participant");
    let topic = participant
        .create_dynamic_topic(topic_name, "demo::Reading", ty.clone())
        .expect("a topic");
    let reader = participant
        .create_dynamic_reader(&topic, ferrodds::Qos::reader().reliable().keep_all())
        .expect("a reader");
    let count = COUNT.to_string();
    let csharp = start_mono(
        &dir,
        "InteropPeer.exe",
        &["typed-pub", "195", topic_name, &count],
    );

    let mut values = Vec::new();
    let mut disposed = Vec::new();
    let end = Instant::now() + Duration::from_secs(60);
    while (values.len() < COUNT as usize || disposed.is_empty()) && Instant::now() < end {
        reader.wait_for_data(Duration::from_millis(200));
        for sample in reader.take().expect("take") {
            match (&sample.data, &sample.key) {
                (Some(value), _) => values.push(value.to_json(&ty)),
                (None, Some(key))
                    if sample.info.instance_state == ferrodds::InstanceState::NotAliveDisposed =>
                {
                    disposed.push(key.to_json(&ty))
                }
                _ => {}
            }
        }
    }
    let (status, out, err) = finish(csharp, LIMIT);
    assert!(
        status.success(),
        "InteropPeer.exe typed-pub: {status}\n{out}\n{err}"
    );
    let expected: Vec<serde_json::Value> = (0..COUNT)
        .map(|i| serde_json::json!({"id": i % 3, "text": format!("reading {i} \u{b0}C \u{4e2d}")}))
        .collect();
    assert_eq!(
        values, expected,
        "what the C# writer wrote, as Rust took it"
    );
    assert!(
        disposed.iter().any(|k| k["id"] == 1),
        "no dispose of id 1: {disposed:?}"
    );
}
