//! What a test does when something it needs is missing (root, a peer, a namespace): outside CI
//! it says so on stderr and skips; in CI (`CI=true`, where `scripts/test` has installed
//! everything) it fails, so that a test that did not run can never count as passed there.
//!
//! Included by test crates with `#[path = ".../tests/support/cannot_run.rs"] mod cannot_run;`.

#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::process::{Command, Stdio};

/// True when running under CI (`CI` set to anything but empty, `0` or `false`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// `test` cannot run because of `why`: panics in CI; elsewhere prints `SKIPPED test: why`
/// (past the test harness's capture, so it shows in a normal `cargo test` run) and returns.
pub fn skip(test: &str, why: &str) {
    assert!(
        !in_ci(),
        "{test} could not run in CI: {why} (scripts/test installs what the tests need)"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Fails (always) unless `python3` can import `module`: a test whose peer cannot start would
/// otherwise pass wherever it expects nothing to arrive.
pub fn require_python_module(module: &str, install: &str) {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 cannot import {module}; install it: {install} (scripts/test does)"
    );
}
