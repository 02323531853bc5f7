//! Processes the tests start under `timeout`, stopped so that nothing outlives a test.

#![allow(dead_code)]

use std::process::Child;
use std::time::{Duration, Instant};

/// A process run as `timeout SECONDS PROGRAM...`, stopped when dropped (also when a test
/// panics).
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

/// Stops a process started as `timeout SECONDS PROGRAM...`: SIGTERM, which `timeout` passes
/// on to the program (SIGKILL would end `timeout` alone and leave the program running), then
/// SIGKILL if it has not ended within 5 s.
pub(crate) fn stop(child: &mut Child) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
