//! `ferrodds idl`: the command writes what the library writes, and an error is one line
//! naming the file, line and column, with a failing exit status.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn idl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ferrodds-idl/tests/idl")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferrodds-idl-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn ferrodds_idl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ferrodds"))
        .arg("idl")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn writes_rust_python_and_csharp() {
    let ros2 = idl_dir().join("ros2");
    let image = ros2.join("sensor_msgs/msg/Image.idl");
    let out = out_dir("ok");
    let o = out.to_str().unwrap();
    let done = ferrodds_idl(&[
        "-I",
        ros2.to_str().unwrap(),
        "--lang",
        "rust",
        "-o",
        o,
        image.to_str().unwrap(),
    ]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let printed = String::from_utf8_lossy(&done.stdout);
    for name in ["Image.rs", "Header.rs", "Time.rs", "idl_types.rs"] {
        assert!(printed.contains(name), "{printed}");
    }
    let expected = ferrodds_idl::Compiler::new()
        .include_dir(&ros2)
        .generate_rust(&[&image])
        .unwrap();
    for (name, text) in expected {
        assert_eq!(
            std::fs::read_to_string(out.join(&name)).unwrap(),
            text,
            "{name}"
        );
    }

    let done = ferrodds_idl(&[
        "-I",
        ros2.to_str().unwrap(),
        "--lang",
        "python",
        "--ros2-names",
        "-o",
        o,
        image.to_str().unwrap(),
    ]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let module = std::fs::read_to_string(out.join("sensor_msgs/msg/_Image.py")).unwrap();
    assert!(
        module.contains("class Image(IdlStruct, typename=\"sensor_msgs::msg::dds_::Image_\"):"),
        "{module}"
    );

    let done = ferrodds_idl(&[
        "-I",
        ros2.to_str().unwrap(),
        "--lang",
        "csharp",
        "--ros2-names",
        "-o",
        o,
        image.to_str().unwrap(),
    ]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let expected = ferrodds_idl::Compiler::new()
        .include_dir(&ros2)
        .ros2_type_names(true)
        .generate_csharp(&[&image])
        .unwrap();
    for (name, text) in expected {
        assert_eq!(
            std::fs::read_to_string(out.join(&name)).unwrap(),
            text,
            "{name}"
        );
    }
    let image_cs = std::fs::read_to_string(out.join("Image.cs")).unwrap();
    for expected in [
        "public sealed class ImageTypeSupport : global::FerroDDS.ITypeSupport<global::sensor_msgs.msg.Image>",
        "return \"sensor_msgs::msg::dds_::Image_\";",
        "\"            struct Image_ {\\n\" +",
    ] {
        assert!(image_cs.contains(expected), "{expected} not in {image_cs}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn errors_are_one_line_with_file_line_and_column() {
    let out = out_dir("error");
    std::fs::create_dir_all(&out).unwrap();
    let bad = out.join("bad.idl");
    std::fs::write(
        &bad,
        "module m {\n  struct S { sequence<long, 0> x; };\n};\n",
    )
    .unwrap();
    let done = ferrodds_idl(&[
        "--lang",
        "rust",
        "-o",
        out.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert!(!done.status.success());
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:2:29: a sequence's bound must be a positive integer",
            bad.display()
        )),
        "{stderr}"
    );
    let missing = ferrodds_idl(&["--lang", "python", "-o", out.to_str().unwrap(), "nope.idl"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope.idl"));
    let _ = std::fs::remove_dir_all(&out);
}
