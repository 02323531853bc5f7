//! What the figures were measured on and with: the machine, its load, the versions.

use std::process::Command;

use serde::{Deserialize, Serialize};

/// The machine and the software of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Machine {
    /// Logical CPUs.
    pub(crate) nproc: usize,
    /// `model name` from /proc/cpuinfo.
    pub(crate) cpu: String,
    /// `uname -r`.
    pub(crate) kernel: String,
    /// /proc/loadavg's three averages when the suite started.
    pub(crate) load_before: String,
    /// … and when it ended.
    pub(crate) load_after: String,
    /// Share of all cores busy (0 to 1, /proc/stat) in the second before the first pair,
    /// the suite's build done: other work on the machine.
    #[serde(default)]
    pub(crate) cpu_busy_before: Option<f64>,
    /// … in the second after the last pair ended.
    #[serde(default)]
    pub(crate) cpu_busy_after: Option<f64>,
    /// Debian's `cyclonedds-tools` version (ddsperf's).
    pub(crate) ddsperf_version: String,
    /// `git describe`-like commit of FerroDDS (with `-dirty` for local changes).
    pub(crate) ferrodds_commit: String,
    /// `rustc --version`.
    pub(crate) rustc: String,
    /// `gcc --version`'s first line (the UDP floor's compiler).
    pub(crate) gcc: String,
}

/// The first line of a command's stdout, or "unknown".
fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The three load averages of /proc/loadavg.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_string())
}

/// `(busy, total)` jiffies of all cores from /proc/stat's `cpu` line (idle and iowait are
/// not busy).
pub(crate) fn cpu_jiffies(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((total.saturating_sub(idle), total))
}

/// The share of all cores busy over the next `over` (0 to 1).
pub(crate) fn cpu_busy(over: std::time::Duration) -> Option<f64> {
    let read = || cpu_jiffies(&std::fs::read_to_string("/proc/stat").ok()?);
    let (b0, t0) = read()?;
    std::thread::sleep(over);
    let (b1, t1) = read()?;
    let dt = t1.checked_sub(t0).filter(|d| *d > 0)?;
    Some(b1.saturating_sub(b0) as f64 / dt as f64)
}

/// `model name` of the first CPU in /proc/cpuinfo's text.
pub(crate) fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim().to_string())
    })
}

/// The `Version:` field of `dpkg -s` output.
pub(crate) fn dpkg_version(status: &str) -> Option<String> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Version:").map(|v| v.trim().to_string()))
}

impl Machine {
    /// Looks at this machine now (the load average after the run is filled in later).
    pub(crate) fn now() -> Machine {
        let dpkg = Command::new("dpkg")
            .args(["-s", "cyclonedds-tools"])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let commit = first_line("git", &["rev-parse", "--short=12", "HEAD"]);
        let dirty = Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no"])
            .output()
            .ok()
            .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
        Machine {
            nproc: std::thread::available_parallelism().map_or(0, |n| n.get()),
            cpu: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|s| cpu_model(&s))
                .unwrap_or_else(|| "unknown".to_string()),
            kernel: first_line("uname", &["-r"]),
            load_before: load_average(),
            load_after: String::new(),
            cpu_busy_before: None,
            cpu_busy_after: None,
            ddsperf_version: dpkg_version(&dpkg).unwrap_or_else(|| "unknown".to_string()),
            ferrodds_commit: if dirty {
                format!("{commit}-dirty")
            } else {
                commit
            },
            rustc: first_line("rustc", &["--version"]),
            gcc: first_line("gcc", &["--version"]),
        }
    }
}

/// Today's date and time in UTC, `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// A Unix time as `YYYY-MM-DD HH:MM UTC` (proleptic Gregorian calendar).
pub(crate) fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn busy_jiffies_leave_out_idle_and_iowait() {
        let stat = "cpu  100 5 50 800 40 1 2 3 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(cpu_jiffies(stat), Some((161, 1001)));
        assert_eq!(cpu_jiffies("intr 1 2"), None);
    }

    #[test]
    fn cpu_and_package_fields() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            cpu_model(cpuinfo).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        let dpkg = "Package: cyclonedds-tools\nStatus: install ok installed\nVersion: 0.10.2-2\n";
        assert_eq!(dpkg_version(dpkg).as_deref(), Some("0.10.2-2"));
        assert_eq!(dpkg_version(""), None);
    }
}
