//! Child processes with bounded lives: output goes to files (no pipe can fill up and block
//! a child), every wait has a limit, a child still running when its handle goes away (an
//! error, a panic, an early return) is killed and reaped, and SIGINT, SIGTERM or SIGHUP to
//! the suite kills every child it has running before it exits.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, SigSet, Signal};
use nix::unistd::Pid;

/// The pids of the children started and not yet reaped. A pid is removed in the same
/// critical section that reaps it, so the signal thread never signals a reused pid.
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<u32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// From now on, SIGINT, SIGTERM and SIGHUP kill every running child and end the process
/// (status 130). Call it before any other thread starts: the signals are blocked here and
/// in the threads started later, and taken by one waiting thread. (Children do not inherit
/// the blocked mask: the standard library resets it when it starts a process.)
pub(crate) fn end_children_on_signals() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGHUP);
    if set.thread_block().is_err() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Ok(signal) = set.wait() {
                let children = live();
                for &pid in children.iter() {
                    if let Ok(pid) = i32::try_from(pid) {
                        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                    }
                }
                eprintln!(
                    "ferrodds-bench: {signal}: killed {} running process(es)",
                    children.len()
                );
                std::process::exit(130);
            }
        });
}

/// How often a waiting loop looks at its child.
const POLL: Duration = Duration::from_millis(20);

/// A running child whose stdout and stderr go to files.
pub(crate) struct Running {
    name: String,
    child: Child,
    out: PathBuf,
    err: PathBuf,
    status: Option<ExitStatus>,
}

/// How a child ended.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    /// Its name in the logs.
    pub(crate) name: String,
    /// `exit N`, `signal N` or `killed after the time limit`.
    pub(crate) how: String,
    /// What it printed on stdout.
    pub(crate) stdout: String,
    /// What it printed on stderr.
    pub(crate) stderr: String,
}

impl Ended {
    /// The last lines of stderr (or stdout), to quote in an error.
    pub(crate) fn tail(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text.lines().collect();
        let from = lines.len().saturating_sub(4);
        lines[from..].join(" | ")
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "ended".to_string(),
    }
}

impl Running {
    /// Starts `cmd` (stdin closed) with its output in `<logs>/<name>.out` and `.err`.
    pub(crate) fn start(name: &str, mut cmd: Command, logs: &Path) -> Result<Running, String> {
        let out = logs.join(format!("{name}.out"));
        let err = logs.join(format!("{name}.err"));
        let create =
            |p: &Path| File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()));
        let child = cmd
            .stdin(Stdio::null())
            .stdout(create(&out)?)
            .stderr(create(&err)?)
            .spawn()
            .map_err(|e| format!("cannot start {name} ({:?}): {e}", cmd.get_program()))?;
        live().push(child.id());
        Ok(Running {
            name: name.to_string(),
            child,
            out,
            err,
            status: None,
        })
    }

    /// The child's process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// True once the child has ended.
    pub(crate) fn has_ended(&mut self) -> bool {
        if self.status.is_none() {
            let mut children = live();
            if let Ok(Some(s)) = self.child.try_wait() {
                self.status = Some(s);
                let id = self.child.id();
                children.retain(|p| *p != id);
            }
        }
        self.status.is_some()
    }

    /// What the child printed on stdout so far.
    pub(crate) fn stdout_so_far(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Waits up to `limit` for the child to end; true if it did.
    pub(crate) fn wait_up_to(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while !self.has_ended() {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(POLL);
        }
        true
    }

    /// Sends SIGTERM (ddsperf and ferrodds perf both end their run on it).
    pub(crate) fn terminate(&mut self) {
        if !self.has_ended() {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            }
        }
    }

    /// Asks the child to stop (SIGTERM), kills it if it has not ended after `grace`, and
    /// returns what it printed.
    pub(crate) fn stop(mut self, grace: Duration) -> Ended {
        self.terminate();
        let ended_in_time = self.wait_up_to(grace);
        self.finish(ended_in_time)
    }

    /// Waits up to `limit` for the child to end by itself, kills it past that, and returns
    /// what it printed.
    pub(crate) fn wait(mut self, limit: Duration) -> Ended {
        let ended_in_time = self.wait_up_to(limit);
        self.finish(ended_in_time)
    }

    fn finish(mut self, ended_in_time: bool) -> Ended {
        let how = if ended_in_time {
            self.status.map_or_else(|| "ended".to_string(), describe)
        } else {
            self.kill_and_reap();
            "killed after the time limit".to_string()
        };
        Ended {
            name: self.name.clone(),
            how,
            stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.err).unwrap_or_default(),
        }
    }

    fn kill_and_reap(&mut self) {
        if self.status.is_none() {
            let mut children = live();
            // Harmless on a child that has exited but is not reaped yet.
            let _ = self.child.kill();
            if let Ok(s) = self.child.wait() {
                self.status = Some(s);
            }
            let id = self.child.id();
            children.retain(|p| *p != id);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}

/// Runs `cmd` to its end (killed after `limit`) and returns what it printed.
pub(crate) fn run_to_end(
    name: &str,
    cmd: Command,
    logs: &Path,
    limit: Duration,
) -> Result<Ended, String> {
    Ok(Running::start(name, cmd, logs)?.wait(limit))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A test's log directory, removed when the test ends (one per test: they run in
    /// parallel).
    struct Logs(PathBuf);

    impl Drop for Logs {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    impl std::ops::Deref for Logs {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    fn logs(test: &str) -> Logs {
        let dir =
            std::env::temp_dir().join(format!("ferrodds-bench-test-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Logs(dir)
    }

    #[test]
    fn output_goes_to_files_and_status_is_told() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let e = run_to_end("sh-exit", cmd, &logs("sh-exit"), Duration::from_secs(20)).unwrap();
        assert_eq!(e.stdout, "out\n");
        assert_eq!(e.stderr, "err\n");
        assert_eq!(e.how, "exit 3");
        assert_eq!(e.tail(), "err");
    }

    #[test]
    fn a_child_past_its_limit_is_killed() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let e = run_to_end(
            "sleep-limit",
            cmd,
            &logs("sleep-limit"),
            Duration::from_millis(50),
        )
        .unwrap();
        assert_eq!(e.how, "killed after the time limit");
    }

    #[test]
    fn stop_sends_sigterm() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let logs = logs("sleep-term");
        let r = Running::start("sleep-term", cmd, &logs).unwrap();
        let id = r.child.id();
        let e = r.stop(Duration::from_secs(20));
        assert_eq!(e.how, "signal 15");
        assert!(!live().contains(&id));
    }

    #[test]
    fn a_dropped_child_is_killed_and_reaped() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let logs = logs("sleep-drop");
        let r = Running::start("sleep-drop", cmd, &logs).unwrap();
        let id = r.child.id();
        assert!(live().contains(&id));
        let pid = Pid::from_raw(i32::try_from(id).unwrap());
        drop(r);
        // Reaped: the pid no longer names our child (signal 0 only checks existence).
        assert!(kill(pid, None).is_err());
        assert!(!live().contains(&id));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let cmd = Command::new("/nonexistent/ferrodds-bench-no-such-program");
        assert!(Running::start("missing", cmd, &logs("missing")).is_err());
    }
}
