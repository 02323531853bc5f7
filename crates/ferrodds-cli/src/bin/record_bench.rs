//! `record_bench`: how fast `ferrodds record` writes what it receives to a file, and how fast
//! `ferrodds replay` reads a recording back — the numbers issue 14 asks for (record
//! throughput in MB/s and samples/s at 64 B, 1 KiB, 64 KiB and 11 MB with no loss; replay
//! read rate in frames/s). Run it as `scripts/bench-record` (which builds it), with the
//! machine to itself.
//!
//! For each size, this process publishes samples of
//! `@final struct ferrodds::bench::Blob { unsigned long seq; sequence<octet> data; }` (reliable,
//! KEEP_ALL, batched below 1 KiB as `ferrodds perf pub` does) as fast as the writer takes them,
//! to a `ferrodds record` started as a user starts it: a process of its own, writing to a
//! file in `--dir` (local disk). Publishing starts once the recorder's reader matched and
//! stops after `--seconds` or `--megabytes`, whichever comes first; when every sample is
//! acknowledged the recorder is sent SIGINT, and it finishes the file. Then:
//!
//! - *record rate*: the bytes and samples the recorder wrote, over its own time from the
//!   first sample it took to the file finished (it reports both, `--json`);
//! - *no loss*: the samples in the file (counted by `ferrodds replay --dry-run`) must equal
//!   the samples written, and the sequence numbers must run without a gap (the recorder's
//!   count and the file's agree too); a run that lost any is reported as such and the
//!   command exits non-zero;
//! - *replay read rate*: `ferrodds replay FILE --dry-run --rate 0` reads every message as
//!   fast as it can, sending nothing: frames (messages) per second and MB/s.
//!
//! The file is deleted after each size unless `--keep`. Results go to stdout as a table (and
//! as JSON lines with `--json`), for `docs/benchmarks.md`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ferrodds::{Cdr, DomainParticipant, Qos};
use serde_json::{json, Value};

/// The benchmark's sample.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "ferrodds::bench::Blob")]
struct Blob {
    seq: u32,
    data: Vec<u8>,
}

const TOPIC: &str = "ferrodds_record_bench";

struct Options {
    sizes: Vec<usize>,
    seconds: f64,
    megabytes: f64,
    domain: u32,
    interface: String,
    dir: PathBuf,
    keep: bool,
    json: bool,
}

fn usage() -> &'static str {
    "usage: record_bench [--sizes 64,1KiB,64KiB,11MB] [--seconds S (default 5)] \
     [--megabytes M (default 4000)] [--domain D (default 168)] [--interface lo] \
     [--dir /tmp] [--keep] [--json]"
}

fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: usize = n.parse().map_err(|_| format!("bad size {s:?}"))?;
    let factor = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1024,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        _ => return Err(format!("bad size unit in {s:?}")),
    };
    Ok(n * factor)
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        sizes: vec![64, 1024, 64 * 1024, 11_000_000],
        seconds: 5.0,
        megabytes: 4000.0,
        domain: 168,
        interface: "lo".into(),
        dir: std::env::temp_dir(),
        keep: false,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--sizes" => {
                o.sizes = value()?
                    .split(',')
                    .map(parse_size)
                    .collect::<Result<_, _>>()?
            }
            "--seconds" => o.seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--megabytes" => {
                o.megabytes = value()?.parse().map_err(|e| format!("--megabytes: {e}"))?
            }
            "--domain" => o.domain = value()?.parse().map_err(|e| format!("--domain: {e}"))?,
            "--interface" => o.interface = value()?,
            "--dir" => o.dir = PathBuf::from(value()?),
            "--keep" => o.keep = true,
            "--json" => o.json = true,
            "-h" | "--help" => {
                println!("{}", usage());
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}; {}", usage())),
        }
    }
    Ok(o)
}

/// The `ferrodds` binary beside this one.
fn ferrodds() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let path = exe.with_file_name("ferrodds");
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found: build it with `cargo build --release -p ferrodds-cli`",
            path.display()
        ))
    }
}

/// The JSON object a `--json` run printed last on stdout.
fn last_json(stdout: &[u8]) -> Option<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
}

/// The result of one size.
struct Run {
    size: usize,
    written: u64,
    recorded: u64,
    in_file: u64,
    gaps: u64,
    record_seconds: f64,
    record_bytes: u64,
    read_frames_per_s: f64,
    read_mb_per_s: f64,
}

impl Run {
    fn lost(&self) -> bool {
        self.written != self.recorded || self.in_file != self.written || self.gaps != 0
    }
}

/// Counts the gaps in the recorded sequence numbers: the file's messages, streamed with
/// the `mcap` crate (each a `Blob`: encapsulation header, then `seq`).
fn sequence_gaps(file: &Path, expected: u64) -> Result<u64, String> {
    use mcap::records::{op, Record};
    use mcap::sans_io::{LinearReadEvent, LinearReader};
    use std::io::Read;
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", file.display());
    let mut f = std::fs::File::open(file).map_err(|e| fail(&e))?;
    let mut reader = LinearReader::new();
    let (mut next, mut gaps) = (0u64, 0u64);
    while let Some(event) = reader.next_event() {
        match event.map_err(|e| fail(&e))? {
            LinearReadEvent::ReadRequest(need) => {
                let n = f
                    .read(reader.insert(need.max(1 << 20)))
                    .map_err(|e| fail(&e))?;
                reader.notify_read(n);
            }
            LinearReadEvent::Record { opcode, data } if opcode == op::MESSAGE => {
                if let Record::Message { data, .. } =
                    mcap::parse_record(opcode, data).map_err(|e| fail(&e))?
                {
                    let seq = match data.get(4..8) {
                        Some(&[a, b, c, d]) => u64::from(u32::from_le_bytes([a, b, c, d])),
                        _ => return Err(fail(&"a message too short for a Blob")),
                    };
                    if seq != next {
                        gaps += 1;
                    }
                    next = seq + 1;
                }
            }
            LinearReadEvent::Record { .. } => {}
        }
    }
    if next != expected {
        gaps += 1;
    }
    Ok(gaps)
}

fn run_size(o: &Options, exe: &Path, size: usize) -> Result<Run, String> {
    let file = o.dir.join(format!("ferrodds-record-bench-{size}.mcap"));
    let p = DomainParticipant::builder()
        .map_err(|e| e.to_string())?
        .domain_id(o.domain)
        .interface(&o.interface)
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let topic = p.create_topic::<Blob>(TOPIC).map_err(|e| e.to_string())?;
    let mut qos = Qos::writer()
        .reliable()
        .keep_all()
        .max_blocking_time(Duration::from_secs(60));
    if size < 1024 {
        qos = qos.batching(Duration::from_millis(1));
    }
    let writer = p.create_writer(&topic, qos).map_err(|e| e.to_string())?;
    let recorder = Command::new(exe)
        .args(["record", "--json", "-o"])
        .arg(&file)
        .args(["-d", &o.domain.to_string(), "-i", &o.interface, TOPIC])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start ferrodds record: {e}"))?;
    let stop_recorder = |child: std::process::Child| -> Result<Value, String> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let out = child
            .wait_with_output()
            .map_err(|e| format!("ferrodds record: {e}"))?;
        if !out.status.success() {
            return Err(format!("ferrodds record failed: {}", out.status));
        }
        last_json(&out.stdout).ok_or_else(|| "ferrodds record printed no summary".to_owned())
    };
    if let Err(e) = writer.wait_for_matched(1, Duration::from_secs(30)) {
        let _ = stop_recorder(recorder);
        return Err(format!("the recorder did not match: {e}"));
    }
    let mut sample = Blob {
        seq: 0,
        data: vec![0x5a; size.saturating_sub(8)],
    };
    let budget = (o.megabytes * 1e6) as u64;
    let deadline = Instant::now() + Duration::from_secs_f64(o.seconds);
    let mut written = 0u64;
    let mut bytes = 0u64;
    while Instant::now() < deadline && bytes < budget {
        sample.seq = u32::try_from(written).map_err(|_| "too many samples")?;
        if let Err(e) = writer.write(&sample) {
            let _ = stop_recorder(recorder);
            return Err(format!("write: {e}"));
        }
        written += 1;
        bytes += size as u64;
    }
    let _ = writer.flush();
    let acked = writer.wait_for_acknowledgments(Duration::from_secs(120));
    let summary = stop_recorder(recorder)?;
    acked.map_err(|e| format!("the recorder did not acknowledge everything: {e}"))?;
    drop(writer);
    drop(p);
    let read = Command::new(exe)
        .args(["replay", "--dry-run", "--rate", "0", "--json"])
        .arg(&file)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start ferrodds replay: {e}"))?;
    let read = last_json(&read.stdout).ok_or("ferrodds replay --dry-run printed no summary")?;
    let gaps = sequence_gaps(&file, written)?;
    if !o.keep {
        let _ = std::fs::remove_file(&file);
    }
    let num = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    Ok(Run {
        size,
        written,
        recorded: summary["samples"].as_u64().unwrap_or(0),
        in_file: read["frames"].as_u64().unwrap_or(0),
        gaps,
        record_seconds: num(&summary, "seconds"),
        record_bytes: summary["bytes"].as_u64().unwrap_or(0),
        read_frames_per_s: num(&read, "frames_per_s"),
        read_mb_per_s: num(&read, "mb_per_s"),
    })
}

fn main() -> std::process::ExitCode {
    let result = (|| -> Result<bool, String> {
        let o = options()?;
        let exe = ferrodds()?;
        let mut all_whole = true;
        println!(
            "{:>10} {:>10} {:>10} {:>6} {:>10} {:>12} {:>14} {:>10}",
            "size",
            "written",
            "recorded",
            "lost",
            "rec MB/s",
            "rec samp/s",
            "read frames/s",
            "read MB/s"
        );
        for &size in &o.sizes {
            let r = run_size(&o, &exe, size)?;
            let secs = r.record_seconds.max(1e-9);
            let mbps = r.record_bytes as f64 / secs / 1e6;
            let rate = r.recorded as f64 / secs;
            all_whole &= !r.lost();
            println!(
                "{:>10} {:>10} {:>10} {:>6} {:>10.1} {:>12.0} {:>14.0} {:>10.1}",
                r.size,
                r.written,
                r.recorded,
                if r.lost() { "LOST" } else { "none" },
                mbps,
                rate,
                r.read_frames_per_s,
                r.read_mb_per_s
            );
            if o.json {
                println!(
                    "{}",
                    json!({
                        "size": r.size, "written": r.written, "recorded": r.recorded,
                        "in_file": r.in_file, "sequence_gaps": r.gaps,
                        "record_seconds": r.record_seconds, "record_mb_per_s": mbps,
                        "record_samples_per_s": rate,
                        "read_frames_per_s": r.read_frames_per_s,
                        "read_mb_per_s": r.read_mb_per_s,
                    })
                );
            }
        }
        Ok(all_whole)
    })();
    match result {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("record_bench: samples were lost (see the table)");
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("record_bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
