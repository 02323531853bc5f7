//! The plan of a run, how each pair of processes is started, and the records kept.
//!
//! Every case runs Cyclone's pair and ours back to back, in an order that is reversed on
//! every other repetition, so that a drift of the machine (another process, thermal
//! state) falls on both. Cyclone's processes use domain 100, ours domain 101; both stay
//! on the loopback interface (`CYCLONEDDS_URI` for ddsperf, `-i lo` for ours).
//!
//! Both publishers batch by default: ddsperf 0.10.2 turns on Cyclone's write batching itself
//! (`dds_write_set_batch (true)` right after creating its participant,
//! `src/tools/ddsperf/ddsperf.c`, and flushes after every ping and pong), and so does
//! `ferrodds perf pub`; `--no-batch` gives our unbatched row.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::parse::{self, FloorRun, LatencySecond, ThroughputSecond, Totals};
use crate::process::{run_to_end, Ended, Running};
use crate::stats::{self, LatencyFigures, ThroughputFigures};

/// Cyclone's domain.
pub(crate) const CYCLONE_DOMAIN: u32 = 100;
/// Ours.
pub(crate) const OURS_DOMAIN: u32 = 101;

/// Cyclone DDS on loopback only, multicast for SPDP only (as in the ddsperf tests). No
/// `Internal/WriteBatch`: ddsperf turns write batching on itself.
pub(crate) const CYCLONEDDS_URI: &str = "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
     <NetworkInterface name=\"lo\" multicast=\"true\"/></Interfaces>\
     <AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>";

/// Who runs a case, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Variant {
    /// ddsperf ↔ ddsperf (its publisher batches writes: ddsperf turns batching on).
    Cyclone,
    /// ferrodds perf ↔ ferrodds perf (its publisher batches writes by default).
    Ours,
    /// … with `--busy-poll` on both sides.
    OursBusyPoll,
    /// … with `--no-batch` on the publisher: each sample its own datagram.
    OursNoBatch,
    /// … over shared memory (`--transport shm`); every other row of ours is `--transport
    /// udp`, so that the comparison with Cyclone is UDP with UDP.
    OursShm,
    /// … over shared memory, the publisher in asynchronous publish mode
    /// (`--asynchronous`): the study section's row.
    OursShmAsync,
    /// `ping --loan` ↔ `pong --loan` over shared memory: a plain type lent by the writer
    /// and taken where it lies.
    OursShmLoan,
    /// … with `--busy-poll` on both sides.
    OursShmLoanBusy,
}

impl Variant {
    /// The name in tables and plots.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Variant::Cyclone => "Cyclone",
            Variant::Ours => "FerroDDS",
            Variant::OursBusyPoll => "FerroDDS busy-poll",
            Variant::OursNoBatch => "FerroDDS unbatched",
            Variant::OursShm => "FerroDDS shared memory",
            Variant::OursShmAsync => "FerroDDS shared memory, asynchronous",
            Variant::OursShmLoan => "FerroDDS shared memory, lent",
            Variant::OursShmLoanBusy => "FerroDDS shared memory, lent, busy-poll",
        }
    }

    fn is_cyclone(self) -> bool {
        self == Variant::Cyclone
    }

    fn slug(self) -> &'static str {
        match self {
            Variant::Cyclone => "cyclone",
            Variant::Ours => "ours",
            Variant::OursBusyPoll => "ours-busy",
            Variant::OursNoBatch => "ours-nobatch",
            Variant::OursShm => "ours-shm",
            Variant::OursShmAsync => "ours-shm-async",
            Variant::OursShmLoan => "ours-shm-loan",
            Variant::OursShmLoanBusy => "ours-shm-loan-busy",
        }
    }
}

/// A cell of the keyed latency matrix (OpenDDSharp's LatencyTest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MatrixCell {
    /// Key values (`-n`).
    pub(crate) instances: u32,
    /// Samples per instance: the run measures instances × this many round trips.
    pub(crate) samples_per_instance: u32,
    /// Sample size, bytes.
    pub(crate) size: u64,
}

/// What a run measures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// `--quick`.
    pub(crate) quick: bool,
    /// Repetitions of every case.
    pub(crate) reps: u32,
    /// Latency payloads, bytes (KS sample size, its 12 fixed bytes included).
    pub(crate) latency_sizes: Vec<u64>,
    /// How long each ping runs, s.
    pub(crate) latency_seconds: u32,
    /// How long the UDP floor measures each size and mode, s (after 0.5 s of warm-up).
    pub(crate) floor_seconds: f64,
    /// Throughput payloads, bytes.
    pub(crate) throughput_sizes: Vec<u64>,
    /// How long each publisher runs, s.
    pub(crate) throughput_seconds: u32,
    /// The keyed matrix.
    pub(crate) matrix: Vec<MatrixCell>,
    /// The longest a matrix ping may run before it is stopped, s.
    pub(crate) matrix_max_seconds: u32,
    /// How long an idle pong's wake-ups are counted, s (after [`IDLE_SETTLE`]).
    #[serde(default)]
    pub(crate) idle_seconds: u32,
    /// The study of large samples in bursts (see [`Study`]); `None` in older results.
    #[serde(default)]
    pub(crate) study: Option<Study>,
    /// Shared-memory round trips by payload, copied and lent (the `loans` part): sample
    /// sizes, bytes.
    #[serde(default)]
    pub(crate) loan_sizes: Vec<u64>,
}

/// A published comparison of Fast DDS and Cyclone DDS, reproduced: samples of `size` bytes
/// written in bursts of `burst`, `rate` bursts a second (more than any row reaches, so the
/// bursts go back to back and writes block on flow control), reliable KEEP_ALL, `runs`
/// runs of `seconds` each per row, reduced to mean, standard deviation and median.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Study {
    /// Sample size, bytes.
    pub(crate) size: u64,
    /// Samples per burst.
    pub(crate) burst: u32,
    /// Bursts per second asked for.
    pub(crate) rate: u32,
    /// Runs per row.
    pub(crate) runs: u32,
    /// How long each publisher runs, s.
    pub(crate) seconds: u32,
}

/// The largest IPv4 UDP datagram: the floor's stand-in for larger payloads.
pub(crate) const MAX_DATAGRAM: u64 = 65_507;

impl Plan {
    /// The whole suite.
    pub(crate) fn full(reps: u32) -> Plan {
        let mut matrix = Vec::new();
        for size in [2048, 16_384, 65_536] {
            for instances in [100, 200, 500, 1000] {
                for samples_per_instance in [10, 20, 30] {
                    matrix.push(MatrixCell {
                        instances,
                        samples_per_instance,
                        size,
                    });
                }
            }
        }
        Plan {
            quick: false,
            reps,
            latency_sizes: vec![64, 1024, 4096, 16_384, 65_536],
            loan_sizes: LOAN_SIZES.to_vec(),
            latency_seconds: 6,
            floor_seconds: 1.5,
            throughput_sizes: vec![64, 1024, 8192, 65_536, 1_048_576, 11_000_000],
            throughput_seconds: 5,
            matrix,
            matrix_max_seconds: 15,
            idle_seconds: 10,
            study: Some(Study {
                size: 11_000_000,
                burst: 10,
                rate: 100,
                runs: 5,
                seconds: 6,
            }),
        }
    }

    /// One short repetition of a few cases: checks that the suite works.
    pub(crate) fn quick() -> Plan {
        Plan {
            quick: true,
            reps: 1,
            latency_sizes: vec![64, 16_384],
            loan_sizes: vec![64, 1_048_576],
            latency_seconds: 3,
            floor_seconds: 0.5,
            throughput_sizes: vec![1024, 1_048_576],
            throughput_seconds: 4,
            matrix: vec![
                MatrixCell {
                    instances: 100,
                    samples_per_instance: 10,
                    size: 2048,
                },
                MatrixCell {
                    instances: 1000,
                    samples_per_instance: 30,
                    size: 65_536,
                },
            ],
            matrix_max_seconds: 10,
            idle_seconds: 3,
            study: Some(Study {
                size: 1_048_576,
                burst: 10,
                rate: 100,
                runs: 1,
                seconds: 3,
            }),
        }
    }

    /// How many process pairs (and floor runs) the plan starts, for the progress line.
    pub(crate) fn runs(
        &self,
        sections: &Sections,
        busy_poll: bool,
        no_batch: bool,
        shm: bool,
    ) -> usize {
        let mut per_rep = 0;
        if sections.latency {
            per_rep +=
                self.latency_sizes.len() * (2 + 2 + usize::from(busy_poll) + usize::from(shm));
        }
        if sections.throughput {
            per_rep +=
                self.throughput_sizes.len() * (2 + usize::from(no_batch) + usize::from(shm) * 2);
        }
        if sections.matrix {
            per_rep += self.matrix.len() * 2;
        }
        if sections.idle {
            per_rep += 2;
        }
        if sections.loans && shm {
            // Round trips, and lent throughput at the throughput sizes.
            per_rep += self.loan_sizes.len() * LOAN_VARIANTS.len() + self.throughput_sizes.len();
        }
        let study = match (&self.study, sections.study) {
            (Some(st), true) => st.runs as usize * (2 + 2 * usize::from(shm)),
            _ => 0,
        };
        per_rep * self.reps as usize + study
    }
}

/// Which parts of the suite run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Sections {
    /// Ping/pong by payload, with the UDP floor.
    pub(crate) latency: bool,
    /// Pub/sub by payload.
    pub(crate) throughput: bool,
    /// The keyed latency matrix.
    pub(crate) matrix: bool,
    /// An idle pong's wake-ups per second.
    #[serde(default)]
    pub(crate) idle: bool,
    /// Large samples in bursts, synchronous and asynchronous ([`Study`]).
    #[serde(default)]
    pub(crate) study: bool,
    /// Shared-memory round trips from 64 B to 4 MiB, copied and lent.
    #[serde(default)]
    pub(crate) loans: bool,
}

/// The payloads of the `loans` part: 64 B to 4 MiB.
pub(crate) const LOAN_SIZES: [u64; 6] = [64, 1024, 16_384, 65_536, 1_048_576, 4_194_304];

/// The rows of the `loans` part, in their order: KS copied through the inbox, and a plain
/// type lent, blocking and busy-polling.
pub(crate) const LOAN_VARIANTS: [Variant; 3] = [
    Variant::OursShm,
    Variant::OursShmLoan,
    Variant::OursShmLoanBusy,
];

/// One idle pong: how often its threads woke, from `/proc`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IdleRun {
    /// Whose pong.
    pub(crate) variant: Variant,
    /// Repetition (from 0).
    pub(crate) rep: u32,
    /// Context switches per second, summed over its threads.
    pub(crate) wakeups_per_s: Option<f64>,
    /// Its threads.
    pub(crate) threads: Option<usize>,
    /// Why there is no figure.
    pub(crate) error: Option<String>,
}

/// One pair's run: who, which repetition, its per-second lines and what they reduce to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PairRun<S, F> {
    /// Who ran it.
    pub(crate) variant: Variant,
    /// Repetition (from 0).
    pub(crate) rep: u32,
    /// The figures over the steady seconds.
    pub(crate) figures: Option<F>,
    /// Why there are none.
    pub(crate) error: Option<String>,
    /// How the two processes ended.
    pub(crate) exits: Vec<String>,
    /// The measuring side's per-second lines, as parsed.
    pub(crate) seconds: Vec<S>,
}

impl<S, F> PairRun<S, F> {
    /// The record of a run that printed `lines` (or failed), reduced by `figures`.
    pub(crate) fn new(
        variant: Variant,
        rep: u32,
        lines: Result<Vec<S>, String>,
        exits: Vec<String>,
        figures: impl FnOnce(&[S]) -> Option<F>,
    ) -> Self {
        let (seconds, error) = match lines {
            Ok(l) => (l, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        PairRun {
            variant,
            rep,
            figures: figures(&seconds),
            error,
            exits,
            seconds,
        }
    }
}

/// One ping/pong pair's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LatencyRun {
    /// Payload, bytes.
    pub(crate) size: u64,
    /// The run (full round trips, µs).
    #[serde(flatten)]
    pub(crate) run: PairRun<LatencySecond, LatencyFigures>,
}

/// One keyed-matrix run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MatrixRun {
    /// The cell.
    pub(crate) cell: MatrixCell,
    /// Round trips wanted: instances × samples per instance.
    pub(crate) target: u64,
    /// The run; its figures are over the first steady seconds holding `target` round trips.
    #[serde(flatten)]
    pub(crate) run: PairRun<LatencySecond, LatencyFigures>,
}

/// One pub/sub pair's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ThroughputRun {
    /// Payload, bytes.
    pub(crate) size: u64,
    /// What the subscriber received and lost over its whole run.
    pub(crate) totals: Option<Totals>,
    /// The run (the subscriber's lines).
    #[serde(flatten)]
    pub(crate) run: PairRun<ThroughputSecond, ThroughputFigures>,
}

/// A plain copy of a sample's bytes, over and over: the ceiling shared memory is held to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MemcpyRun {
    /// Repetition.
    pub(crate) rep: u32,
    /// Payload, bytes.
    pub(crate) size: u64,
    /// Copies per second.
    pub(crate) samples_per_s: f64,
}

/// Copies `size` bytes from one buffer into another for `seconds`: copies per second. The
/// buffers rotate through at least [`MEMCPY_SPAN`] on each side (all allocated and touched
/// beforehand), so that a large sample is read from memory and written to memory as a new
/// sample's bytes are, not from the cache a single pair of buffers would stay in (11 MB
/// twice fits the 32 MiB L3 of the suite's machine); one byte of each copy changes so that
/// none is left out. In the bench's own process, between two runs, so that nothing
/// competes.
pub(crate) fn memcpy_rate(size: u64, seconds: f64) -> f64 {
    let size = usize::try_from(size).unwrap_or(usize::MAX).max(1);
    let pairs = (MEMCPY_SPAN / size).clamp(1, 4096);
    let sources: Vec<Vec<u8>> = (0..pairs).map(|i| vec![i as u8; size]).collect();
    let mut targets: Vec<Vec<u8>> = (0..pairs).map(|_| vec![0u8; size]).collect();
    let start = Instant::now();
    let mut copies = 0usize;
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..16 {
            let i = copies % pairs;
            targets[i].copy_from_slice(&sources[i]);
            targets[i][copies % size] ^= 1;
            std::hint::black_box(&mut targets[i]);
            copies += 1;
        }
    }
    copies as f64 / start.elapsed().as_secs_f64()
}

/// How many bytes the plain copies rotate through on each side.
pub(crate) const MEMCPY_SPAN: usize = 256 << 20;

/// One UDP floor measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FloorRecord {
    /// Repetition (from 0).
    pub(crate) rep: u32,
    /// "block" or "busy".
    pub(crate) mode: String,
    /// Datagram size, bytes.
    pub(crate) size: u64,
    /// What it measured.
    pub(crate) run: Option<FloorRun>,
    /// Why there is nothing.
    pub(crate) error: Option<String>,
}

/// The programs a run starts.
pub(crate) struct Tools {
    /// `ferrodds` (its `perf` command).
    pub(crate) ferrodds: PathBuf,
    /// `ddsperf`.
    pub(crate) ddsperf: PathBuf,
    /// The compiled `udp_floor`.
    pub(crate) floor: PathBuf,
    /// Where every process's output is kept.
    pub(crate) logs: PathBuf,
    /// `--busy-poll` is accepted by `ferrodds perf ping` and `pong`.
    pub(crate) busy_poll: bool,
    /// `--no-batch` is accepted by `ferrodds perf pub`.
    pub(crate) no_batch: bool,
    /// `--transport` is accepted by `ferrodds perf`.
    pub(crate) transport: bool,
}

/// A subscriber's per-second lines and its totals.
pub(crate) type SubOutput = (Vec<ThroughputSecond>, Option<Totals>);

/// Starts pairs, one at a time, and names their logs in order.
pub(crate) struct Runner {
    tools: Tools,
    started: usize,
}

/// How long the passive side (pong, sub) may live beyond the active one's duration; it is
/// normally stopped long before.
const PASSIVE_EXTRA_SECONDS: u32 = 60;
/// Between starting the passive side and the active one.
const PASSIVE_HEAD_START: Duration = Duration::from_millis(200);
/// After a publisher ends, for the subscriber's last per-second line.
const SUB_TAIL: Duration = Duration::from_millis(1500);
/// How long a process may take to end after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// How long an idle pong runs before its wake-ups are counted (discovery of nobody, the
/// first announcements).
pub(crate) const IDLE_SETTLE: Duration = Duration::from_secs(3);

fn ended_text(e: &Ended) -> String {
    format!("{}: {}", e.name, e.how)
}

impl Runner {
    /// A runner of `tools`.
    pub(crate) fn new(tools: Tools) -> Runner {
        Runner { tools, started: 0 }
    }

    /// The programs.
    pub(crate) fn tools(&self) -> &Tools {
        &self.tools
    }

    fn name(&mut self, what: &str) -> String {
        self.started += 1;
        format!("{:04}-{what}", self.started)
    }

    fn ddsperf(&self, args: &[String]) -> Command {
        let mut c = Command::new(&self.tools.ddsperf);
        c.env("CYCLONEDDS_URI", CYCLONEDDS_URI)
            .arg("-i")
            .arg(CYCLONE_DOMAIN.to_string())
            .args(args);
        c
    }

    fn ours(&self, variant: Variant, args: &[String]) -> Command {
        let mut c = Command::new(&self.tools.ferrodds);
        c.env_remove("FERRODDS_CONFIG")
            .arg("perf")
            .args(args)
            .args(["-d", &OURS_DOMAIN.to_string(), "-i", "lo", "--json"]);
        if self.tools.transport {
            let shm = matches!(
                variant,
                Variant::OursShm
                    | Variant::OursShmAsync
                    | Variant::OursShmLoan
                    | Variant::OursShmLoanBusy
            );
            c.args(["--transport", if shm { "shm" } else { "udp" }]);
        }
        c
    }

    /// Runs a ping/pong pair for `seconds` (or until the steady seconds hold `target` round
    /// trips) and returns the pinging side's per-second lines.
    pub(crate) fn latency(
        &mut self,
        variant: Variant,
        size: u64,
        keys: Option<u32>,
        seconds: u32,
        target: Option<u64>,
    ) -> (Result<Vec<LatencySecond>, String>, Vec<String>) {
        let s = |x: &dyn ToString| x.to_string();
        let mut common: Vec<String> = Vec::new();
        if let Some(n) = keys {
            common.extend([s(&"-n"), s(&n)]);
        }
        let passive_seconds = seconds + PASSIVE_EXTRA_SECONDS;
        let (pong, ping) = match variant {
            Variant::Cyclone => {
                let mut pong = common.clone();
                pong.extend([s(&"-D"), s(&passive_seconds), s(&"pong")]);
                let mut ping = common.clone();
                ping.extend([s(&"-D"), s(&seconds), s(&"ping"), s(&"size"), s(&size)]);
                (self.ddsperf(&pong), self.ddsperf(&ping))
            }
            Variant::Ours
            | Variant::OursBusyPoll
            | Variant::OursNoBatch
            | Variant::OursShm
            | Variant::OursShmAsync
            | Variant::OursShmLoan
            | Variant::OursShmLoanBusy => {
                let mut pong = vec![s(&"pong")];
                pong.extend(common.iter().cloned());
                pong.extend([s(&"-D"), s(&passive_seconds)]);
                let mut ping = vec![s(&"ping")];
                ping.extend(common.iter().cloned());
                ping.extend([s(&"-D"), s(&seconds), s(&"--size"), s(&size)]);
                if matches!(variant, Variant::OursShmLoan | Variant::OursShmLoanBusy) {
                    pong.extend([s(&"--loan"), s(&"--size"), s(&size)]);
                    ping.push(s(&"--loan"));
                }
                if matches!(variant, Variant::OursBusyPoll | Variant::OursShmLoanBusy) {
                    pong.push(s(&"--busy-poll"));
                    ping.push(s(&"--busy-poll"));
                }
                (self.ours(variant, &pong), self.ours(variant, &ping))
            }
        };
        let tag = format!("{}-{size}", variant.slug());
        let pong_name = self.name(&format!("{tag}-pong"));
        let ping_name = self.name(&format!("{tag}-ping"));
        let logs = self.tools.logs.clone();
        let pong = match Running::start(&pong_name, pong, &logs) {
            Ok(p) => p,
            Err(e) => return (Err(e), Vec::new()),
        };
        std::thread::sleep(PASSIVE_HEAD_START);
        let mut ping = match Running::start(&ping_name, ping, &logs) {
            Ok(p) => p,
            Err(e) => return (Err(e), vec![ended_text(&pong.stop(STOP_GRACE))]),
        };
        let parse = |text: &str| {
            if variant.is_cyclone() {
                parse::ddsperf_latency(text)
            } else {
                parse::ours_latency(text)
            }
        };
        let limit = Instant::now() + Duration::from_secs(u64::from(seconds) + 20);
        let mut asked_to_stop = false;
        while !ping.has_ended() && Instant::now() < limit {
            if let (Some(t), false) = (target, asked_to_stop) {
                if stats::steady_roundtrips(&parse(&ping.stdout_so_far())) >= t {
                    ping.terminate();
                    asked_to_stop = true;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let ping = ping.wait(STOP_GRACE);
        let pong = pong.stop(STOP_GRACE);
        let exits = vec![ended_text(&ping), ended_text(&pong)];
        let lines = parse(&ping.stdout);
        if lines.is_empty() {
            return (
                Err(format!(
                    "no round trip measured ({}: {}; {}: {})",
                    ping.how,
                    ping.tail(),
                    pong.how,
                    pong.tail()
                )),
                exits,
            );
        }
        (Ok(lines), exits)
    }

    /// Runs a pub/sub pair, the publisher for `seconds`, and returns the subscriber's
    /// per-second lines and totals.
    pub(crate) fn throughput(
        &mut self,
        variant: Variant,
        size: u64,
        seconds: u32,
    ) -> (Result<SubOutput, String>, Vec<String>) {
        self.throughput_in_bursts(variant, size, seconds, None)
    }

    /// [`Runner::throughput`], the publisher writing `bursts` = (bursts per second, samples
    /// per burst) when given.
    pub(crate) fn throughput_in_bursts(
        &mut self,
        variant: Variant,
        size: u64,
        seconds: u32,
        bursts: Option<(u32, u32)>,
    ) -> (Result<SubOutput, String>, Vec<String>) {
        let s = |x: &dyn ToString| x.to_string();
        let passive_seconds = seconds + PASSIVE_EXTRA_SECONDS;
        let mut pub_args = pub_args(variant, size, seconds);
        if let Some((rate, burst)) = bursts {
            if variant.is_cyclone() {
                pub_args.extend([format!("{rate}Hz"), s(&"burst"), s(&burst)]);
            } else {
                pub_args.extend([s(&"--rate"), s(&rate), s(&"--burst"), s(&burst)]);
            }
        }
        let (sub, publisher) = if variant.is_cyclone() {
            (
                self.ddsperf(&[s(&"-D"), s(&passive_seconds), s(&"sub")]),
                self.ddsperf(&pub_args),
            )
        } else {
            let mut sub = vec![s(&"sub"), s(&"-D"), s(&passive_seconds)];
            if matches!(variant, Variant::OursShmLoan | Variant::OursShmLoanBusy) {
                sub.extend([s(&"--loan"), s(&"--size"), s(&size)]);
            }
            (self.ours(variant, &sub), self.ours(variant, &pub_args))
        };
        let tag = match bursts {
            Some((rate, burst)) => format!("{}-{size}-{rate}x{burst}", variant.slug()),
            None => format!("{}-{size}", variant.slug()),
        };
        let sub_name = self.name(&format!("{tag}-sub"));
        let pub_name = self.name(&format!("{tag}-pub"));
        let logs = self.tools.logs.clone();
        let sub = match Running::start(&sub_name, sub, &logs) {
            Ok(p) => p,
            Err(e) => return (Err(e), Vec::new()),
        };
        std::thread::sleep(PASSIVE_HEAD_START);
        let publisher = match run_to_end(
            &pub_name,
            publisher,
            &logs,
            Duration::from_secs(u64::from(seconds) + 30),
        ) {
            Ok(p) => p,
            Err(e) => return (Err(e), vec![ended_text(&sub.stop(STOP_GRACE))]),
        };
        std::thread::sleep(SUB_TAIL);
        let sub = sub.stop(STOP_GRACE);
        let exits = vec![ended_text(&publisher), ended_text(&sub)];
        let (lines, totals) = if variant.is_cyclone() {
            parse::ddsperf_sub(&sub.stdout)
        } else {
            parse::ours_sub(&sub.stdout)
        };
        if lines.is_empty() {
            return (
                Err(format!(
                    "nothing received ({}: {}; {}: {})",
                    publisher.how,
                    publisher.tail(),
                    sub.how,
                    sub.tail()
                )),
                exits,
            );
        }
        (Ok((lines, totals)), exits)
    }

    /// Runs `variant`'s pong alone (no ping anywhere) and counts its threads' context
    /// switches over `seconds`: how often an idle participant wakes.
    pub(crate) fn idle(&mut self, variant: Variant, seconds: u32) -> Result<(f64, usize), String> {
        let s = |x: &dyn ToString| x.to_string();
        let lifetime = seconds + PASSIVE_EXTRA_SECONDS;
        let cmd = if variant.is_cyclone() {
            self.ddsperf(&[s(&"-D"), s(&lifetime), s(&"pong")])
        } else {
            self.ours(variant, &[s(&"pong"), s(&"-D"), s(&lifetime)])
        };
        let name = self.name(&format!("{}-idle-pong", variant.slug()));
        let mut pong = Running::start(&name, cmd, &self.tools.logs.clone())?;
        std::thread::sleep(IDLE_SETTLE);
        let before = process_switches(pong.id());
        std::thread::sleep(Duration::from_secs(u64::from(seconds)));
        let after = process_switches(pong.id());
        let ended = pong.has_ended();
        let stopped = pong.stop(STOP_GRACE);
        match (before, after) {
            _ if ended => Err(format!("the pong ended early ({})", stopped.how)),
            (Ok((a, _)), Ok((b, threads))) => Ok((
                b.saturating_sub(a) as f64 / f64::from(seconds.max(1)),
                threads,
            )),
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    }

    /// Measures the UDP floor in `mode` ("block" or "busy") at `size`.
    pub(crate) fn floor(
        &mut self,
        mode: &str,
        size: u64,
        seconds: f64,
    ) -> Result<FloorRun, String> {
        let mut cmd = Command::new(&self.tools.floor);
        cmd.args(["-m", mode, "-D", &format!("{seconds}"), "-w", "0.5"])
            .arg(size.to_string());
        let name = self.name(&format!("floor-{mode}-{size}"));
        let logs = self.tools.logs.clone();
        let ended = run_to_end(&name, cmd, &logs, Duration::from_secs_f64(seconds + 30.0))?;
        parse::floor(&ended.stdout)
            .into_iter()
            .next()
            .ok_or_else(|| {
                format!(
                    "udp_floor measured nothing ({}: {})",
                    ended.how,
                    ended.tail()
                )
            })
    }
}

/// Context switches, voluntary and not, that a `/proc/<pid>/task/<tid>/status` text
/// counts.
pub(crate) fn context_switches(status: &str) -> Option<u64> {
    let mut total = None;
    for line in status.lines() {
        if let Some(rest) = line
            .strip_prefix("voluntary_ctxt_switches:")
            .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
        {
            *total.get_or_insert(0) += rest.trim().parse::<u64>().ok()?;
        }
    }
    total
}

/// The context switches of every thread of process `pid`, and how many threads it has.
fn process_switches(pid: u32) -> Result<(u64, usize), String> {
    let dir = format!("/proc/{pid}/task");
    let tasks = std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))?;
    let (mut total, mut threads) = (0, 0);
    for task in tasks.flatten() {
        // A thread that ended between the listing and the read is left out.
        if let Ok(status) = std::fs::read_to_string(task.path().join("status")) {
            total += context_switches(&status)
                .ok_or_else(|| format!("{dir}: no context switch counts"))?;
            threads += 1;
        }
    }
    Ok((total, threads))
}

/// The publisher's arguments (before the common ones `ddsperf` and `ours` add): both tools
/// batch by default; only `OursNoBatch` turns it off.
fn pub_args(variant: Variant, size: u64, seconds: u32) -> Vec<String> {
    let (seconds, size) = (seconds.to_string(), size.to_string());
    let args: &[&str] = match variant {
        Variant::Cyclone => &["-D", &seconds, "pub", "size", &size],
        Variant::OursNoBatch => &["pub", "-D", &seconds, "--size", &size, "--no-batch"],
        Variant::Ours | Variant::OursBusyPoll | Variant::OursShm => {
            &["pub", "-D", &seconds, "--size", &size]
        }
        Variant::OursShmLoan | Variant::OursShmLoanBusy => {
            &["pub", "-D", &seconds, "--size", &size, "--loan"]
        }
        Variant::OursShmAsync => &["pub", "-D", &seconds, "--size", &size, "--asynchronous"],
    };
    args.iter().map(|a| a.to_string()).collect()
}

/// Whether `ferrodds perf MODE --help` lists `option`, with a value or without.
pub(crate) fn ours_accepts_option(ferrodds: &Path, mode: &str, option: &str) -> bool {
    Command::new(ferrodds)
        .args(["perf", mode, "--help"])
        .output()
        .ok()
        .is_some_and(|o| parse::help_offers_option(&String::from_utf8_lossy(&o.stdout), option))
}

/// Whether `ferrodds perf MODE --help` lists `option` as a flag.
pub(crate) fn ours_accepts(ferrodds: &Path, mode: &str, option: &str) -> bool {
    Command::new(ferrodds)
        .args(["perf", mode, "--help"])
        .output()
        .ok()
        .is_some_and(|o| parse::help_offers_flag(&String::from_utf8_lossy(&o.stdout), option))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_plan_is_the_issues() {
        let p = Plan::full(2);
        assert_eq!(p.latency_sizes, [64, 1024, 4096, 16_384, 65_536]);
        assert_eq!(
            p.throughput_sizes,
            [64, 1024, 8192, 65_536, 1_048_576, 11_000_000]
        );
        assert_eq!(p.matrix.len(), 3 * 4 * 3);
        let all = Sections {
            latency: true,
            throughput: true,
            matrix: true,
            idle: true,
            study: false,
            loans: false,
        };
        // 5 sizes × (2 floors + 2 pairs), 6 × 2, 36 × 2, 2 idle pongs; twice.
        assert_eq!(p.runs(&all, false, false, false), 2 * (20 + 12 + 72 + 2));
        assert_eq!(p.runs(&all, true, true, false), 2 * (25 + 18 + 72 + 2));
        // Shared memory: a latency pair per size, a throughput pair and a memcpy per size.
        assert_eq!(p.runs(&all, true, true, true), 2 * (30 + 30 + 72 + 2));
        // The study: 5 runs of Cyclone and ours over UDP, and of ours over shared memory
        // synchronous and asynchronous; once, whatever the repetitions.
        let with_study = Sections { study: true, ..all };
        assert_eq!(
            p.runs(&with_study, true, true, true),
            2 * (30 + 30 + 72 + 2) + 5 * 4
        );
        // Loans: 64 B to 4 MiB, copied, lent and lent busy-polling, per repetition; only
        // where shared memory can be measured.
        assert_eq!(
            p.loan_sizes,
            [64, 1024, 16_384, 65_536, 1_048_576, 4_194_304]
        );
        let with_loans = Sections { loans: true, ..all };
        assert_eq!(
            p.runs(&with_loans, true, true, true),
            2 * (30 + 30 + 72 + 2 + 18 + 6)
        );
        assert_eq!(
            p.runs(&with_loans, true, true, false),
            2 * (25 + 18 + 72 + 2)
        );
    }

    #[test]
    fn context_switches_are_summed_from_a_status_text() {
        let status = "Name:\tferrodds-recv-0\nState:\tS (sleeping)\n\
                      voluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(context_switches(status), Some(123));
        assert_eq!(context_switches("Name:\tx\n"), None);
        assert_eq!(
            context_switches("voluntary_ctxt_switches:\tmany\n"),
            None,
            "a count that is not a number is no count"
        );
    }

    #[test]
    fn only_the_unbatched_row_turns_batching_off() {
        let joined = |v| pub_args(v, 1024, 5).join(" ");
        assert_eq!(joined(Variant::Cyclone), "-D 5 pub size 1024");
        assert_eq!(joined(Variant::Ours), "pub -D 5 --size 1024");
        assert_eq!(
            joined(Variant::OursNoBatch),
            "pub -D 5 --size 1024 --no-batch"
        );
        assert_eq!(
            joined(Variant::OursShmAsync),
            "pub -D 5 --size 1024 --asynchronous"
        );
        assert!(!CYCLONEDDS_URI.contains("WriteBatch"));
        assert!(CYCLONEDDS_URI.contains("<NetworkInterface name=\"lo\" multicast=\"true\"/>"));
    }
}
