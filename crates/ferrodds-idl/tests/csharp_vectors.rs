//! The C# `ferrodds-idl` generates, compiled with Mono's `mcs` and run with `mono`, against
//! Cyclone DDS's bytes (`ferrodds-cdr/tests/cyclone/vectors.json`, the types of `vec.idl`):
//! - every vector, in each of the four formats, decodes, and the value written again is
//!   Cyclone's bytes in XCDR1 and XCDR2 little endian (C's bytes where Cyclone's C and
//!   Python writers differ, padded as the C writer pads) — decoder and encoder both;
//! - decoded into the value of the same type decoded before (as `TakeReusing` reads into the
//!   samples of the last take), every vector reads the same: no member of the older value
//!   shows through, absent and key-only members included;
//! - the key-only samples Cyclone writes (and the form without a DHEADER that Cyclone DDS
//!   0.10 writes) decode to the key with every other member at its default, and each type's
//!   default value encodes as ferrodds-cdr's runtime types encode theirs;
//! - every truncation of every vector, and every byte of it changed, gives a
//!   `CdrException` or a value, never another exception;
//! - the generated JSON code writes every vector as `ferrodds-cdr`'s JSON view does (the
//!   same JSON values, which read back to Cyclone's bytes), reads the view's text back to
//!   Cyclone's bytes, and gives a `JsonException` or a value for every truncation of the
//!   text and every character of it changed, and for nesting deeper than any type;
//! - the C# of every other test IDL compiles.
//!
//! Needs `mcs` and `mono` (Debian's mono-devel; scripts/test installs it): without them the
//! test fails under CI (`CI=true`) and is skipped, saying so, elsewhere.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::dynamic::{self, DynamicType, DynamicValue};
use ferrodds_cdr::{Endianness, Extensibility, XcdrVersion};
use ferrodds_idl::Compiler;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a compiler or driver run may take before it is killed.
const TIMEOUT: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn idl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/idl")
}

/// Whether `mcs` and `mono` run; without them, a failure in CI and a skip elsewhere.
fn mono_present() -> bool {
    let runs = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if runs("mcs") && runs("mono") {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "mcs and mono are missing (apt-get install mono-devel, as scripts/test does)"
    );
    eprintln!("skipped: mcs or mono is missing (apt-get install mono-devel)");
    false
}

/// Runs `command` in `dir` to its end, killing it after [`TIMEOUT`]; its standard output.
/// Panics with its output when it fails.
fn run(command: &mut Command, dir: &Path, what: &str) -> String {
    let out_path = dir.join(format!("{what}.out"));
    let err_path = dir.join(format!("{what}.err"));
    let mut child = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran longer than {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(status.success(), "{what}: {status}\n{out}\n{err}");
    out
}

/// Generates the C# of `files` into `dir`; returns the paths written.
fn generate(compiler: Compiler, files: &[PathBuf], dir: &Path) -> Vec<String> {
    compiler
        .compile_csharp(files, dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|p| p.display().to_string())
        .collect()
}

/// Compiles the binding's CDR runtime and interface into `dir/FerroDDS.dll` as
/// `bindings/csharp/build.sh` compiles the binding (documentation complete, warnings as
/// errors), then `sources` against it: generated code needs only the runtime's public API.
fn mcs(dir: &Path, sources: &[String], target: &str, out: &str) {
    let runtime = repo().join("bindings/csharp/FerroDDS");
    let flags = ["-nologo", "-langversion:7", "-warnaserror+"];
    run(
        Command::new("mcs")
            .args(flags)
            .args([
                "-target:library",
                "-unsafe+",
                "-doc:FerroDDS.xml",
                "-out:FerroDDS.dll",
            ])
            .arg(runtime.join("Cdr.cs"))
            .arg(runtime.join("Json.cs"))
            .arg(runtime.join("TypeSupport.cs")),
        dir,
        "mcs-runtime",
    );
    run(
        Command::new("mcs")
            .args(flags)
            .arg(format!("-target:{target}"))
            .arg(format!("-out:{out}"))
            .arg("-r:FerroDDS.dll")
            .args(sources),
        dir,
        &format!("mcs-{out}"),
    );
}

/// Pads an unpadded payload (Cyclone's Python writer) to 4 bytes with the count in the
/// options, as Cyclone's C writer and FerroDDS write it.
fn padded(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 4 && bytes[3] & 3 == 0 {
        let pad = bytes.len().wrapping_neg() & 3;
        bytes.resize(bytes.len() + pad, 0);
        bytes[3] |= pad as u8;
    }
    bytes
}

/// A format's bytes as Cyclone writes them: C's where its C and Python writers differ.
fn cyclone(v: &Value, format: &str) -> Option<Vec<u8>> {
    let python = v[format].as_str()?;
    let expected = match v["c_encoder"][format].as_str() {
        Some(c) if c != "same" && c != "failed" => c,
        _ => python,
    };
    Some(hex::decode(expected).unwrap())
}

fn extensibility(ty: &DynamicType) -> &'static str {
    match ty.extensibility() {
        Extensibility::Final => "final",
        Extensibility::Appendable => "appendable",
        Extensibility::Mutable => "mutable",
    }
}

/// `value` in XCDR1 and XCDR2 little endian, as the driver prints it.
fn both(ty: &DynamicType, value: &DynamicValue) -> String {
    let encode =
        |version| hex::encode(dynamic::serialize(ty, value, version, Endianness::Little).unwrap());
    format!(
        "{} {}",
        encode(XcdrVersion::Xcdr1),
        encode(XcdrVersion::Xcdr2)
    )
}

/// The cases for the driver and, by case id, what it must print.
struct Cases {
    lines: Vec<String>,
    expected: BTreeMap<String, String>,
    /// For `tojson` cases: the type, and the JSON view `ferrodds-cdr` gives the value.
    views: BTreeMap<String, (DynamicType, Value)>,
}

impl Cases {
    fn add(
        &mut self,
        command: &str,
        id: String,
        ty: &DynamicType,
        bytes: Option<&[u8]>,
        expected: String,
    ) {
        let mut line = format!("{command} {id} {} {}", ty.name(), extensibility(ty));
        if let Some(bytes) = bytes {
            line = format!("{line} {}", hex::encode(bytes));
        }
        self.lines.push(line);
        self.expected.insert(id, expected);
    }
}

/// The cases of every vector: its formats, its key-only sample, the type's default, and
/// the hostile variants of its XCDR2 and XCDR1 bytes.
fn cases(vectors: &[Value], spec: &ferrodds_idl::ast::Specification) -> Cases {
    let mut cases = Cases {
        lines: Vec::new(),
        expected: BTreeMap::new(),
        views: BTreeMap::new(),
    };
    let mut defaults = std::collections::BTreeSet::new();
    let mut absent = Vec::new();
    for v in vectors {
        let name = v["type"].as_str().unwrap();
        let sample = v["sample"].as_str().unwrap();
        let ty = ferrodds_idl::dynamic::dynamic_type(spec, name).unwrap();
        let le = |format| hex::encode(padded(cyclone(v, format).unwrap()));
        let written = format!("{} {}", le("xcdr1_le"), le("xcdr2_le"));
        for format in ["xcdr1_le", "xcdr1_be", "xcdr2_le", "xcdr2_be"] {
            let bytes = cyclone(v, format).unwrap();
            let id = format!("{sample}/{format}");
            cases.add(
                "decode",
                id.clone(),
                &ty,
                Some(&padded(bytes.clone())),
                written.clone(),
            );
            if padded(bytes.clone()) != bytes {
                // As Cyclone's Python writer sends it: no padding, options 0.
                cases.add(
                    "decode",
                    format!("{id}/unpadded"),
                    &ty,
                    Some(&bytes),
                    written.clone(),
                );
            }
            if format.ends_with("_le") {
                cases.add(
                    "hostile",
                    format!("{id}/hostile"),
                    &ty,
                    Some(&padded(bytes)),
                    String::new(),
                );
            }
        }
        // The JSON view, both ways, from the XCDR2 bytes.
        let bytes = padded(cyclone(v, "xcdr2_le").unwrap());
        let view = dynamic::deserialize(&ty, &bytes).unwrap().to_json(&ty);
        let text = ferrodds_cdr::json_text(&view);
        let id = format!("{sample}/tojson");
        cases.add("tojson", id.clone(), &ty, Some(&bytes), written.clone());
        cases.views.insert(id, (ty.clone(), view.clone()));
        cases.add(
            "fromjson",
            format!("{sample}/fromjson"),
            &ty,
            Some(text.as_bytes()),
            written.clone(),
        );
        cases.add(
            "jsonhostile",
            format!("{sample}/jsonhostile"),
            &ty,
            Some(text.as_bytes()),
            String::new(),
        );
        // The same with absent optionals left out rather than null, read after the others
        // (in reverse order, each into the value of the type read before it: absent
        // members of a value read into must come out null).
        let mut without = view.clone();
        drop_nulls(&mut without);
        if without != view {
            absent.push((
                format!("{sample}/fromjson/absent"),
                ty.clone(),
                ferrodds_cdr::json_text(&without),
                written.clone(),
            ));
        }
        if let Some(key) = v["key_sample_xcdr2_be"].as_str() {
            let key = hex::decode(key).unwrap();
            let id = match ty.extensibility() {
                Extensibility::Final => 0x06,
                Extensibility::Appendable => 0x08,
                Extensibility::Mutable => 0x0a,
            };
            let mut forms = vec![("key", key.clone())];
            if ty.extensibility() == Extensibility::Appendable {
                forms.push(("key/without_dheader", key[4..].to_vec()));
            }
            for (form, body) in forms {
                let mut payload = vec![0, id, 0, 0];
                payload.extend(body);
                let payload = padded(payload);
                let value = dynamic::deserialize_key_sample(&ty, &payload).unwrap();
                cases.add(
                    "decode",
                    format!("{sample}/{form}"),
                    &ty,
                    Some(&payload),
                    both(&ty, &value),
                );
            }
        }
        if defaults.insert(name.to_owned()) {
            let value = DynamicValue::default_of(&ty);
            cases.add(
                "default",
                format!("{name}/default"),
                &ty,
                None,
                both(&ty, &value),
            );
            if matches!(ty, DynamicType::Struct(_)) {
                // What the binding registers the type from must declare this very type.
                cases.add("idl", format!("{name}/idl"), &ty, None, String::new());
            }
        }
    }
    for (id, ty, text, written) in absent.into_iter().rev() {
        cases.add("fromjson", id, &ty, Some(text.as_bytes()), written);
    }
    cases
}

/// `json` with every member whose value is null left out, at every depth.
fn drop_nulls(json: &mut Value) {
    match json {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// The `TypeName` and `Idl` the driver printed for `name` (`ok <name> <hex>`): the IDL
/// declares the type under that name, as `vec.idl` does.
fn check_idl(
    name: &str,
    printed: &str,
    spec: &ferrodds_idl::ast::Specification,
) -> Result<(), String> {
    let mut fields = printed.split(' ');
    let (Some("ok"), Some(type_name), Some(idl)) = (fields.next(), fields.next(), fields.next())
    else {
        return Err(printed.to_owned());
    };
    let idl = String::from_utf8(hex::decode(idl).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let declared = ferrodds_idl::parse_str("Idl", &idl).map_err(|e| format!("{e}\n{idl}"))?;
    let registered =
        ferrodds_idl::dynamic::dynamic_type(&declared, type_name).map_err(|e| e.to_string())?;
    let expected = ferrodds_idl::dynamic::dynamic_type(spec, name).map_err(|e| e.to_string())?;
    if type_name != name || registered != expected {
        return Err(format!("{type_name} declared as\n{idl}"));
    }
    Ok(())
}

/// The JSON the driver printed (`ok <hex>`) is the JSON view `view` of a value of `ty`, and
/// reads back to `written` (XCDR1 and XCDR2 as the driver prints them).
fn check_json(ty: &DynamicType, view: &Value, printed: &str, written: &str) -> Result<(), String> {
    let hex = printed
        .strip_prefix("ok ")
        .ok_or_else(|| printed.to_owned())?;
    let text = String::from_utf8(hex::decode(hex).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let json: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    if json != *view {
        return Err(format!("C# writes\n    {text}\n  the view is\n    {view}"));
    }
    let value = DynamicValue::from_json(ty, &json).map_err(|e| e.to_string())?;
    let again = both(ty, &value);
    if again != written {
        return Err(format!(
            "{text} reads as\n    {again}\n  expected\n    {written}"
        ));
    }
    Ok(())
}

#[test]
fn generated_csharp_reads_and_writes_what_cyclone_does() {
    if !mono_present() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("csharp_vectors");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let vec_idl = idl_dir().join("vec.idl");
    let mut sources = generate(Compiler::new(), std::slice::from_ref(&vec_idl), &dir);
    sources.push(
        repo()
            .join("bindings/csharp/tests/VectorDriver.cs")
            .display()
            .to_string(),
    );
    mcs(&dir, &sources, "exe", "driver.exe");

    let vectors: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../ferrodds-cdr/tests/cyclone/vectors.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(vectors.len(), 69);
    let spec = Compiler::new().parse(&[&vec_idl]).unwrap();
    let mut cases = cases(&vectors, &spec);
    cases.lines.push("api union_api vec::U final".into());
    cases.expected.insert("union_api".into(), String::new());
    std::fs::write(dir.join("cases.txt"), cases.lines.join("\n")).unwrap();
    let printed = run(
        Command::new("mono").args(["--debug", "driver.exe", "cases.txt"]),
        &dir,
        "driver",
    );

    let mut results = BTreeMap::new();
    for line in printed.lines() {
        if let Some((id, result)) = line.split_once(' ') {
            results.insert(id.to_owned(), result.to_owned());
        }
    }
    let mut failures = Vec::new();
    for (id, expected) in &cases.expected {
        match results.get(id).map(String::as_str) {
            None => failures.push(format!("{id}: no result")),
            Some(r) if id.ends_with("/tojson") => {
                let (ty, view) = &cases.views[id];
                if let Err(e) = check_json(ty, view, r, expected) {
                    failures.push(format!("{id}: {e}"));
                }
            }
            Some(r) if id.ends_with("hostile") => {
                if !r.starts_with("ok ") {
                    failures.push(format!("{id}: {r}"));
                }
            }
            Some(r) if id.ends_with("/idl") => {
                if let Err(e) = check_idl(id.trim_end_matches("/idl"), r, &spec) {
                    failures.push(format!("{id}: {e}"));
                }
            }
            Some("ok") if expected.is_empty() => {}
            Some(r) => match r.strip_prefix("ok ") {
                Some(written) if written == expected => {}
                Some(written) => failures.push(format!(
                    "{id}: C# writes\n    {written}\n  expected\n    {expected}"
                )),
                None => failures.push(format!("{id}: {r}")),
            },
        }
    }
    assert!(
        cases.expected.len() > 69 * 9,
        "only {} cases",
        cases.expected.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.expected.len(),
        failures.join("\n")
    );
}

#[test]
fn generated_csharp_of_every_test_idl_compiles() {
    if !mono_present() {
        return;
    }
    let idl = idl_dir();
    let ros2 = idl.join("ros2");
    let ros2_files: Vec<PathBuf> = ["Image", "PointCloud2", "JointState"]
        .iter()
        .map(|m| ros2.join(format!("sensor_msgs/msg/{m}.idl")))
        .collect();
    let runs = [
        (
            Compiler::new().include_dir(&idl),
            vec![idl.join("kinds.idl"), idl.join("wide.idl")],
            "kinds",
        ),
        (
            Compiler::new().include_dir(&ros2).ros2_type_names(true),
            ros2_files,
            "ros2",
        ),
    ];
    for (compiler, files, name) in runs {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("csharp_{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sources = generate(compiler, &files, &dir);
        mcs(&dir, &sources, "library", &format!("{name}.dll"));
    }
}
