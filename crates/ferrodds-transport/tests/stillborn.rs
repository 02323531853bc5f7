//! A process killed while iceoryx2 made one of its segments leaves the segment empty; the
//! next process to clean up after it must not wait on it forever (it did: `ferrodds demo`
//! hung at its start in CI). The killed process is a child of this test; its segment is
//! emptied by hand, as the kill would have left it, since a kill in the microseconds
//! between the two steps cannot be aimed at.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferrodds_transport::shared_memory::SharedMemoryTransport;
use ferrodds_transport::transport::Transport;
use iceoryx2::prelude::*;

const TEST: &str = "a_segment_a_killed_process_left_empty_does_not_hang_the_next_process";
const ROLE: &str = "FERRODDS_STILLBORN_ROLE";

/// Runs this test's binary as `role`, its stdout piped.
fn spawn(role: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads", "1"])
        .env(ROLE, role)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits at most `limit` for `child` to print `line`. The rest of its output is read too:
/// a child whose stdout is closed fails at its next line (the test harness's own).
fn await_line(child: &mut Child, line: &'static str, limit: Duration) -> bool {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if l.trim_end().ends_with(line) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(limit).is_ok()
}

/// The child's part: an inbox and a way to it (a connection between the two), then waiting
/// to be killed.
fn make_segments_and_wait() {
    let a = SharedMemoryTransport::open().unwrap();
    let b = SharedMemoryTransport::open().unwrap();
    let inbox = a.receive_channels().unwrap().remove(0);
    b.send(b"hello", &a.locator()).unwrap();
    let mut buf = [0u8; 16];
    inbox.receive(&mut buf).unwrap().unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

/// The connections in `/dev/shm` of the iceoryx2 node of process `pid`, found through its
/// ports in the node's directory.
fn connections_of(pid: u32) -> Vec<PathBuf> {
    let root = Config::global_config().global.root_path().to_string();
    let nodes = PathBuf::from(root).join("nodes");
    let mut ports = Vec::new();
    for dir in std::fs::read_dir(&nodes).unwrap().flatten() {
        let details = std::fs::read_to_string(dir.path().join("iox2_node.details"));
        if !details.is_ok_and(|d| d.lines().any(|l| l == format!("process = {pid}"))) {
            continue;
        }
        for tag in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = tag.file_name().into_string().unwrap();
            if let Some(port) = name
                .strip_prefix("iox2_")
                .and_then(|n| n.strip_suffix(".port_tag"))
            {
                ports.push(port.to_string());
            }
        }
    }
    assert!(!ports.is_empty(), "no node of process {pid} in {nodes:?}");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/dev/shm").unwrap().flatten() {
        let name = e.file_name().into_string().unwrap_or_default();
        if let Some(stem) = name.strip_suffix(".connection") {
            let ids: Vec<&str> = stem.split('_').skip(2).collect();
            if ids.iter().any(|id| ports.iter().any(|p| p == id)) {
                found.push(e.path());
            }
        }
    }
    found
}

#[test]
fn a_segment_a_killed_process_left_empty_does_not_hang_the_next_process() {
    match std::env::var(ROLE).as_deref() {
        Ok("maker") => return make_segments_and_wait(),
        Ok("opener") => {
            let t = SharedMemoryTransport::open().unwrap();
            drop(t);
            println!("opened");
            return;
        }
        _ => {}
    }
    let mut maker = spawn("maker");
    assert!(
        await_line(&mut maker, "ready", Duration::from_secs(30)),
        "the child made no segments within 30 s"
    );
    let pid = maker.id();
    maker.kill().unwrap();
    maker.wait().unwrap();
    let emptied = connections_of(pid);
    assert!(!emptied.is_empty(), "the killed process left no connection");
    for path in &emptied {
        std::fs::File::options()
            .write(true)
            .truncate(true)
            .open(path)
            .unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o200)).unwrap();
    }

    // The next process's node cleans up after the dead one.
    let mut opener = spawn("opener");
    let opened = await_line(&mut opener, "opened", Duration::from_secs(30));
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match opener.try_wait().unwrap() {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => break None,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    if status.is_none() {
        let _ = opener.kill();
        let _ = opener.wait();
    }
    assert!(
        opened,
        "the next process did not open its transport within 30 s: it waits on {emptied:?}"
    );
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    for path in &emptied {
        assert!(!path.exists(), "{path:?} is still there");
    }
}
