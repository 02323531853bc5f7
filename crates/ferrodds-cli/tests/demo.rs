//! The README's main command works: `ferrodds demo` pings a pong in another process and
//! prints each echo; bad input gets one line and a non-zero exit.

#![allow(clippy::unwrap_used)]

use std::process::Command;

fn ferrodds() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ferrodds"))
}

#[test]
fn demo_pings_a_pong_in_another_process() {
    let out = ferrodds()
        .args([
            "demo",
            "--count",
            "3",
            "--interval-ms",
            "10",
            "--domain",
            "45",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for seq in 0..3 {
        assert!(
            stdout.contains(&format!("received echo #{seq}: 64 bytes")),
            "{stdout}"
        );
    }
    assert!(stdout.contains("3 echoes: round trip min"), "{stdout}");
}

#[test]
fn a_bad_interface_is_one_line_and_a_failure() {
    let out = ferrodds()
        .args(["ping", "--interface", "no-such-if0", "--domain", "46"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("ferrodds: ") && stderr.contains("no-such-if0"),
        "{stderr}"
    );
}
