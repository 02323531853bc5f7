//! What `loss.rs` and `faults.rs` share: peer processes (FerroDDS's `robust_peer` and the
//! Cyclone DDS interop peer) whose JSON lines arrive with the instant they were read,
//! network namespaces that delete themselves, and nftables rules that drop datagrams.
//!
//! The FerroDDS peer is `examples/robust_peer.rs`, compiled into each test binary as a
//! module: the test binary runs it when it is started again (`std::env::current_exe()`) with
//! the peer's arguments in `FERRODDS_ROBUST_PEER` and a filter selecting the test
//! `robust_peer_process`, which every including test file defines by calling
//! [`peer_entry`]. No separate build step, no second binary to find.

#![allow(dead_code)] // each test file uses a part of it

#[path = "../../../../tests/support/cannot_run.rs"]
pub(crate) mod cannot_run;
#[path = "../../examples/robust_peer.rs"]
pub(crate) mod robust_peer;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The environment variable carrying the peer's arguments (separated by U+001F).
const PEER_ENV: &str = "FERRODDS_ROBUST_PEER";

/// Runs the peer when this process was started as one; returns at once otherwise. Call it
/// from a `#[test] fn robust_peer_process()`.
pub(crate) fn peer_entry() {
    if let Ok(args) = std::env::var(PEER_ENV) {
        let args: Vec<String> = args.split('\u{1f}').map(str::to_owned).collect();
        let code = robust_peer::run(&args);
        std::process::exit(code);
    }
}

/// A child process whose stdout JSON lines arrive on a channel.
pub(crate) struct Proc {
    pub(crate) name: String,
    child: Child,
    lines: mpsc::Receiver<(Instant, Value)>,
    /// Everything it printed that was not JSON, and its stderr: shown when a test fails.
    chatter: Arc<Mutex<Vec<String>>>,
    /// The JSON lines consumed so far.
    pub(crate) seen: Vec<Value>,
}

impl Proc {
    fn spawn(name: &str, mut command: Command) -> Proc {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({command:?}): {e}"));
        let chatter = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            let chatter = Arc::clone(&chatter);
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    let now = Instant::now();
                    match serde_json::from_str::<Value>(&line) {
                        Ok(v) if line.starts_with('{') => {
                            if tx.send((now, v)).is_err() {
                                break;
                            }
                        }
                        _ => chatter.lock().unwrap_or_else(|p| p.into_inner()).push(line),
                    }
                }
            });
        }
        if let Some(mut stderr) = child.stderr.take() {
            let chatter = Arc::clone(&chatter);
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text);
                let mut c = chatter.lock().unwrap_or_else(|p| p.into_inner());
                c.extend(text.lines().map(|l| format!("stderr: {l}")));
            });
        }
        Proc {
            name: name.to_owned(),
            child,
            lines,
            chatter,
            seen: Vec::new(),
        }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next JSON line within `timeout`, with the instant it was read.
    pub(crate) fn next(&mut self, timeout: Duration) -> Option<(Instant, Value)> {
        let (at, v) = self.lines.recv_timeout(timeout).ok()?;
        self.seen.push(v.clone());
        Some((at, v))
    }

    /// Waits for a line satisfying `pred`, skipping others; panics after `timeout`.
    pub(crate) fn expect(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> (Instant, Value) {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next(left) {
                Some((at, v)) if pred(&v) => return (at, v),
                Some(_) => {}
                None => break,
            }
        }
        panic!(
            "{}: no {what} within {timeout:?}; last lines {:?}",
            self.name,
            self.seen.iter().rev().take(5).collect::<Vec<_>>()
        );
    }

    /// Waits for the event `name` of a FerroDDS peer.
    pub(crate) fn event(&mut self, name: &str, timeout: Duration) -> (Instant, Value) {
        self.expect(&format!("\"{name}\" event"), timeout, |v| {
            v["event"] == name
        })
    }

    /// Waits for the process to exit; its exit code (-1 for a signal). Kills it and panics
    /// after `timeout`.
    pub(crate) fn wait(&mut self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("{} did not exit within {timeout:?}", self.name);
    }

    /// SIGKILL: the process dies without saying goodbye.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            // Give the reader threads a moment to collect the last words.
            std::thread::sleep(Duration::from_millis(50));
            let chatter = self.chatter.lock().unwrap_or_else(|p| p.into_inner());
            eprintln!("--- {} printed:", self.name);
            for line in chatter.iter().rev().take(40).rev() {
                eprintln!("  {line}");
            }
            for v in self.seen.iter().rev().take(10).rev() {
                eprintln!("  {v}");
            }
        }
    }
}

/// `command` run inside `netns` (if any) with `ip netns exec`.
fn in_netns(netns: Option<&Netns>, program: &str) -> Command {
    match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", &ns.name, program]);
            c
        }
        None => Command::new(program),
    }
}

/// A FerroDDS `robust_peer` process (this test binary, started again) with `args`.
pub(crate) fn ferro_peer(name: &str, netns: Option<&Netns>, args: &[&str]) -> Proc {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let exe = exe.to_str().expect("a UTF-8 path to the test binary");
    let mut c = in_netns(netns, exe);
    c.args([
        "robust_peer_process",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
        "--quiet",
    ])
    .env(PEER_ENV, args.join("\u{1f}"));
    Proc::spawn(name, c)
}

/// A Cyclone DDS interop peer (`tests/interop/cyclone_peer.py`) with `args`.
pub(crate) fn cyclone_peer(name: &str, netns: Option<&Netns>, args: &[&str]) -> Proc {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/interop/cyclone_peer.py"
    );
    cannot_run::require_python_module("cyclonedds", "pip install cyclonedds==11.0.1");
    let mut c = in_netns(netns, "python3");
    c.arg(script).args(args);
    Proc::spawn(name, c)
}

/// A figure for `docs/robustness.md`: printed (see it with `--nocapture`) and appended to
/// `robustness-figures.jsonl` in the target's temporary directory.
pub(crate) fn report(figure: Value) {
    println!("FIGURE {figure}");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("robustness-figures.jsonl");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        use std::io::Write;
        let _ = writeln!(f, "{figure}");
    }
}

/// A network namespace of this test process, deleted on drop (even when the test fails).
/// Inside it only `lo` exists, up and with multicast on, so everything the test sends stays
/// inside it.
pub(crate) struct Netns {
    pub(crate) name: String,
}

/// The `apt-get` line that brings what the namespace tests use.
pub(crate) const INSTALL_HINT: &str =
    "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nftables iproute2";

fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Netns {
    /// Creates `ferrodds-<tag>-<pid>`, or returns why it cannot (not root, no `ip`): the
    /// caller skips then. Namespaces left by test processes that died are deleted first.
    pub(crate) fn create(tag: &str) -> Result<Netns, String> {
        remove_stale();
        let name = format!("ferrodds-{tag}-{}", std::process::id());
        let _ = run("ip", &["netns", "del", &name]);
        run("ip", &["netns", "add", &name])?;
        let ns = Netns { name };
        ns.exec("ip", &["link", "set", "lo", "up"])?;
        ns.exec("ip", &["link", "set", "lo", "multicast", "on"])?;
        Ok(ns)
    }

    /// Creates the namespace, or prints why the test is skipped and returns `None`.
    pub(crate) fn create_or_skip(tag: &str) -> Option<Netns> {
        match Netns::create(tag) {
            Ok(ns) => {
                // nftables is part of the test's setup: its absence is an error, not a skip.
                if let Err(e) = ns.exec("nft", &["list", "ruleset"]) {
                    panic!(
                        "nftables is needed inside the namespace ({e}); install it: {INSTALL_HINT}"
                    );
                }
                Some(ns)
            }
            Err(e) => {
                cannot_run::skip(
                    tag,
                    &format!(
                        "cannot create a network namespace ({e}); the loss tests need root, \
                         iproute2 and nftables ({INSTALL_HINT})"
                    ),
                );
                None
            }
        }
    }

    /// Runs `program args` inside the namespace.
    pub(crate) fn exec(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["netns", "exec", &self.name, program];
        all.extend_from_slice(args);
        run("ip", &all)
    }

    /// Loads an nftables script inside the namespace.
    pub(crate) fn nft(&self, script: &str) {
        let path = std::env::temp_dir().join(format!("{}-{}.nft", self.name, rand_suffix()));
        std::fs::write(&path, script).expect("write the nft script");
        let result = self.exec("nft", &["-f", path.to_str().unwrap_or_default()]);
        let _ = std::fs::remove_file(&path);
        if let Err(e) = result {
            panic!("nft rejected\n{script}\n{e}");
        }
    }

    /// Drops `percent`% of the UDP datagrams arriving in the namespace (input hook: the
    /// sender sees success, the datagram silently vanishes). Everything UDP in the namespace
    /// is DDS traffic of the test — SPDP/SEDP metatraffic and user traffic, on the domain's
    /// well-known ports or, for Cyclone DDS, ports the kernel chose.
    pub(crate) fn drop_received(&self, percent: u32) {
        self.nft(&format!(
            "table inet ferrodds_in {{\n  chain input {{\n    type filter hook input priority 0; policy accept;\n    meta l4proto udp numgen random mod 100 < {percent} counter drop\n  }}\n}}\n"
        ));
    }

    /// Makes every UDP `sendto` in the namespace fail (output hook: EPERM).
    pub(crate) fn refuse_sends(&self) {
        self.nft(
            "table inet ferrodds_out {\n  chain output {\n    type filter hook output priority 0; policy accept;\n    meta l4proto udp counter drop\n  }\n}\n",
        );
    }

    /// Removes the rule of [`Netns::refuse_sends`]; how many datagrams it refused.
    pub(crate) fn allow_sends(&self) -> u64 {
        let n = self.dropped("ferrodds_out");
        self.nft("delete table inet ferrodds_out\n");
        n
    }

    /// Datagrams dropped so far by the rule in `table`.
    pub(crate) fn dropped(&self, table: &str) -> u64 {
        let listing = self
            .exec("nft", &["list", "table", "inet", table])
            .unwrap_or_default();
        listing
            .split_whitespace()
            .skip_while(|w| *w != "packets")
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if let Err(e) = run("ip", &["netns", "del", &self.name]) {
            eprintln!("cannot delete network namespace {}: {e}", self.name);
        }
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Deletes `ferrodds-*-<pid>` namespaces whose process is gone (a test killed before its
/// guards ran).
fn remove_stale() {
    let Ok(list) = run("ip", &["netns", "list"]) else {
        return;
    };
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        let Some(pid) = name
            .strip_prefix("ferrodds-")
            .and_then(|rest| rest.rsplit('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run("ip", &["netns", "del", name]);
        }
    }
}

/// Hosts of their own on one Ethernet segment: a network namespace per host, each with an
/// `eth0` (address `10.77.<subnet>.<n>/24`, a default route through it, multicast on)
/// cabled by a veth pair to a bridge in a namespace of its own (the switch, IGMP snooping
/// off so that multicast floods as on a plain switch). Everything is deleted on drop.
pub(crate) struct Lan {
    pub(crate) switch: Netns,
    pub(crate) hosts: Vec<Netns>,
    subnet: u8,
}

impl Lan {
    /// `count` hosts on a segment; `Err` says why it cannot be built (not root, no `ip`).
    pub(crate) fn create(tag: &str, subnet: u8, count: usize) -> Result<Lan, String> {
        let switch = Netns::create(&format!("{tag}sw"))?;
        switch.exec(
            "ip",
            &[
                "link",
                "add",
                "br0",
                "type",
                "bridge",
                "mcast_snooping",
                "0",
            ],
        )?;
        switch.exec("ip", &["link", "set", "br0", "up"])?;
        let mut hosts = Vec::new();
        for n in 1..=count {
            let host = Netns::create(&format!("{tag}h{n}"))?;
            let port = format!("port{n}");
            run(
                "ip",
                &[
                    "-n",
                    &switch.name,
                    "link",
                    "add",
                    &port,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    "eth0",
                    "netns",
                    &host.name,
                ],
            )?;
            switch.exec("ip", &["link", "set", &port, "master", "br0", "up"])?;
            let address = format!("10.77.{subnet}.{n}/24");
            host.exec("ip", &["addr", "add", &address, "dev", "eth0"])?;
            host.exec("ip", &["link", "set", "eth0", "multicast", "on", "up"])?;
            host.exec("ip", &["route", "add", "default", "dev", "eth0"])?;
            hosts.push(host);
        }
        Ok(Lan {
            switch,
            hosts,
            subnet,
        })
    }

    /// Host `n`'s (1-based) address.
    pub(crate) fn address(&self, n: usize) -> String {
        format!("10.77.{}.{n}", self.subnet)
    }

    /// Pulls host `n`'s cable out of the switch (`false`) or plugs it back in (`true`): its
    /// `eth0` loses its carrier, and nothing passes either way.
    pub(crate) fn cable(&self, n: usize, plugged: bool) {
        let state = if plugged { "up" } else { "down" };
        if let Err(e) = self
            .switch
            .exec("ip", &["link", "set", &format!("port{n}"), state])
        {
            panic!("cannot set host {n}'s switch port {state}: {e}");
        }
    }
}

/// A FerroDDS `robust_peer` process on host `n` of `lan`.
pub(crate) fn ferro_peer_on(name: &str, lan: &Lan, n: usize, args: &[&str]) -> Proc {
    ferro_peer(name, Some(&lan.hosts[n - 1]), args)
}
