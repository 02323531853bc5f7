//! `ferrodds-bench`: the benchmark suite. It runs Cyclone DDS's `ddsperf` pairs and
//! `ferrodds perf` pairs alternately on loopback, with the same sizes and settings, in one
//! run on one machine, beside a raw UDP ping-pong floor; then writes the tables into
//! `docs/benchmarks.md` (between `<!-- suite:begin -->` and `<!-- suite:end -->`), every
//! measurement into `docs/bench/results.json`, and plots into `docs/bench/*.svg`.
//!
//! It orchestrates and reduces; it measures nothing itself. `scripts/bench` installs what
//! is missing, builds, compiles the floor and runs it. `ferrodds-bench render` rewrites the
//! section and the plots from a saved `results.json`.
//!
//! Not here: assertions on figures (a benchmark is not a test), and any tuning of the
//! tools: both run with their defaults but for the options the suite names.

#![forbid(unsafe_code)]

mod machine;
mod parse;
mod plot;
mod process;
mod report;
mod results;
mod stats;
mod suite;

use std::path::{Path, PathBuf};
use std::time::Instant;

use machine::Machine;
use results::Results;
use suite::{
    FloorRecord, IdleRun, LatencyRun, MatrixRun, MemcpyRun, PairRun, Plan, Runner, Sections,
    ThroughputRun, Tools, Variant,
};

/// How long each plain copy is timed, s.
const MEMCPY_SECONDS: f64 = 1.0;

const USAGE: &str = "\
usage: ferrodds-bench [OPTIONS]           run the suite, write docs/benchmarks.md and docs/bench/
       ferrodds-bench render [--docs DIR]  rewrite them from DIR/bench/results.json

  --quick           one short repetition of a few cases (checks that the suite works)
  --reps N          repetitions of every case [default: 2]
  --only LIST       some of latency,throughput,matrix,idle,study,loans [default: all]
  --ferrodds PATH   the ferrodds binary [default: next to this one]
  --floor PATH      the compiled udp_floor [default: next to this one]
  --ddsperf PATH    Cyclone DDS's ddsperf [default: ddsperf]
  --docs DIR        where benchmarks.md and bench/ are [default: docs]
  --logs DIR        where every process's output is kept [default: a new temporary directory]";

struct Options {
    render_only: bool,
    quick: bool,
    reps: u32,
    sections: Sections,
    ferrodds: Option<PathBuf>,
    floor: Option<PathBuf>,
    ddsperf: PathBuf,
    docs: PathBuf,
    logs: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        render_only: false,
        quick: false,
        reps: 2,
        sections: Sections {
            latency: true,
            throughput: true,
            matrix: true,
            idle: true,
            study: true,
            loans: true,
        },
        ferrodds: None,
        floor: None,
        ddsperf: PathBuf::from("ddsperf"),
        docs: PathBuf::from("docs"),
        logs: None,
    };
    let mut it = args.iter();
    let mut reps_given = false;
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "render" => o.render_only = true,
            "--quick" => o.quick = true,
            "--reps" => {
                o.reps = value()?
                    .parse()
                    .ok()
                    .filter(|n| (1..=100).contains(n))
                    .ok_or("--reps: expected 1 to 100")?;
                reps_given = true;
            }
            "--only" => {
                let list = value()?;
                o.sections = Sections {
                    latency: false,
                    throughput: false,
                    matrix: false,
                    idle: false,
                    study: false,
                    loans: false,
                };
                for part in list.split(',') {
                    match part.trim() {
                        "latency" => o.sections.latency = true,
                        "throughput" => o.sections.throughput = true,
                        "matrix" => o.sections.matrix = true,
                        "idle" => o.sections.idle = true,
                        "study" => o.sections.study = true,
                        "loans" => o.sections.loans = true,
                        other => return Err(format!("--only: unknown part {other:?}")),
                    }
                }
            }
            "--ferrodds" => o.ferrodds = Some(value()?.into()),
            "--floor" => o.floor = Some(value()?.into()),
            "--ddsperf" => o.ddsperf = value()?.into(),
            "--docs" => o.docs = value()?.into(),
            "--logs" => o.logs = Some(value()?.into()),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.quick && reps_given {
        return Err("--quick is one repetition: leave out --reps".into());
    }
    Ok(o)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the markdown section, the JSON and the plots under `docs`.
fn publish(r: &Results, docs: &Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    write(&docs.join("bench/results.json"), &(json + "\n"))?;
    let md_path = docs.join("benchmarks.md");
    let doc = std::fs::read_to_string(&md_path).unwrap_or_else(|_| "# Benchmarks\n".into());
    write(&md_path, &report::splice(&doc, &report::render(r)))?;
    if r.sections.latency {
        plot::latency(r, &docs.join("bench/latency.svg"))?;
    }
    if r.sections.throughput {
        plot::throughput(r, &docs.join("bench/throughput.svg"))?;
    }
    Ok(())
}

/// Where the run's logs go, created.
fn logs_dir(given: Option<PathBuf>) -> Result<PathBuf, String> {
    let dir = given.unwrap_or_else(|| {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        std::env::temp_dir().join(format!("ferrodds-bench-{stamp}"))
    });
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Counts runs and prints a line per run on stderr with the time left.
struct Progress {
    total: usize,
    done: usize,
    start: Instant,
}

impl Progress {
    fn step(&mut self, what: &str, outcome: &str) {
        self.done += 1;
        let elapsed = self.start.elapsed().as_secs_f64();
        let left = if self.done > 0 {
            elapsed / self.done as f64 * (self.total.saturating_sub(self.done)) as f64
        } else {
            0.0
        };
        eprintln!(
            "[{:>3}/{} {:>5.0} s, ~{:.0} s left] {what}: {outcome}",
            self.done, self.total, elapsed, left
        );
    }
}

/// What a run printed, in a word: its figures, or why it has none.
fn outcome<S, F>(run: &PairRun<S, F>, figures: impl Fn(&F) -> String) -> String {
    match (&run.figures, &run.error) {
        (Some(f), _) => figures(f),
        (None, Some(e)) => format!("FAILED: {e}"),
        (None, None) => "FAILED: nothing measured".to_string(),
    }
}

fn latency_outcome(f: &stats::LatencyFigures) -> String {
    format!(
        "p50 {} µs, p99 {} µs, {} round trips/s",
        report::us(f.rtt.p50),
        report::us(f.rtt.p99),
        report::rate(f.rate)
    )
}

/// One pub/sub pair's run of `variant` at `size`, reported on the progress line as `what`.
fn throughput_run(
    runner: &mut Runner,
    progress: &mut Progress,
    what: &str,
    variant: Variant,
    size: u64,
    plan: &Plan,
    rep: u32,
) -> ThroughputRun {
    let (got, exits) = runner.throughput(variant, size, plan.throughput_seconds);
    let (lines, totals) = match got {
        Ok((l, t)) => (Ok(l), t),
        Err(e) => (Err(e), None),
    };
    let run = PairRun::new(variant, rep, lines, exits, stats::throughput_figures);
    let lost = totals.map_or_else(|| "?".to_string(), |t| t.lost.to_string());
    let text = outcome(&run, |f| {
        format!(
            "{} samples/s, {} MB/s, lost {lost}",
            report::rate(f.samples_per_s),
            report::mbps(f.mb_per_s)
        )
    });
    progress.step(what, &text);
    ThroughputRun { size, totals, run }
}

/// Runs the plan, saving what it has after every run into the logs directory.
fn execute(plan: &Plan, runner: &mut Runner, r: &mut Results, logs: &Path) {
    let tools_busy = runner.tools().busy_poll;
    let tools_no_batch = runner.tools().no_batch;
    let tools_shm = runner.tools().transport;
    let mut progress = Progress {
        total: plan.runs(&r.sections, tools_busy, tools_no_batch, tools_shm),
        done: 0,
        start: Instant::now(),
    };
    let save = |r: &Results| {
        if let Ok(json) = serde_json::to_string(r) {
            let _ = std::fs::write(logs.join("results-partial.json"), json);
        }
    };
    for rep in 0..plan.reps {
        // The order of the pairs is reversed on every other repetition.
        let order = |mut v: Vec<Variant>| {
            if rep % 2 == 1 {
                v.reverse();
            }
            v
        };
        if r.sections.latency {
            for &size in &plan.latency_sizes {
                let fsize = size.min(suite::MAX_DATAGRAM);
                for mode in ["block", "busy"] {
                    let (run, error) = match runner.floor(mode, fsize, plan.floor_seconds) {
                        Ok(f) => (Some(f), None),
                        Err(e) => (None, Some(e)),
                    };
                    let text = match (&run, &error) {
                        (Some(f), _) => format!(
                            "p50 {} µs, p99 {} µs",
                            report::us(f.rtt.p50),
                            report::us(f.rtt.p99)
                        ),
                        (None, e) => format!("FAILED: {}", e.as_deref().unwrap_or("?")),
                    };
                    progress.step(&format!("UDP floor {mode} {fsize} B"), &text);
                    let mode = mode.to_string();
                    r.floor.push(FloorRecord {
                        rep,
                        mode,
                        size: fsize,
                        run,
                        error,
                    });
                }
                let mut variants = vec![Variant::Cyclone, Variant::Ours];
                if tools_busy {
                    variants.push(Variant::OursBusyPoll);
                }
                if tools_shm {
                    variants.push(Variant::OursShm);
                }
                for variant in order(variants) {
                    let (lines, exits) =
                        runner.latency(variant, size, None, plan.latency_seconds, None);
                    let run = PairRun::new(variant, rep, lines, exits, |l| {
                        stats::latency_figures(l, None)
                    });
                    let what = format!("latency {} {}", report::size_label(size), variant.label());
                    progress.step(&what, &outcome(&run, latency_outcome));
                    r.latency.push(LatencyRun { size, run });
                    save(r);
                }
            }
        }
        if r.sections.throughput {
            for &size in &plan.throughput_sizes {
                let mut variants = vec![Variant::Cyclone, Variant::Ours];
                if tools_no_batch {
                    variants.push(Variant::OursNoBatch);
                }
                if tools_shm {
                    variants.push(Variant::OursShm);
                }
                for variant in order(variants) {
                    let what = format!(
                        "throughput {} {}",
                        report::size_label(size),
                        variant.label()
                    );
                    let run =
                        throughput_run(runner, &mut progress, &what, variant, size, plan, rep);
                    r.throughput.push(run);
                    save(r);
                }
                if tools_shm {
                    let samples_per_s = suite::memcpy_rate(size, MEMCPY_SECONDS);
                    progress.step(
                        &format!("memcpy {}", report::size_label(size)),
                        &format!("{} copies/s", report::rate(samples_per_s)),
                    );
                    r.memcpy.push(MemcpyRun {
                        rep,
                        size,
                        samples_per_s,
                    });
                }
            }
        }
        if r.sections.matrix {
            for &cell in &plan.matrix {
                let target = u64::from(cell.instances) * u64::from(cell.samples_per_instance);
                for variant in order(vec![Variant::Cyclone, Variant::Ours]) {
                    let (lines, exits) = runner.latency(
                        variant,
                        cell.size,
                        Some(cell.instances),
                        plan.matrix_max_seconds,
                        Some(target),
                    );
                    let run = PairRun::new(variant, rep, lines, exits, |l| {
                        stats::latency_figures(l, Some(target))
                    });
                    let what = format!(
                        "matrix {}×{} {} {}",
                        cell.instances,
                        cell.samples_per_instance,
                        report::size_label(cell.size),
                        variant.label()
                    );
                    progress.step(&what, &outcome(&run, latency_outcome));
                    r.matrix.push(MatrixRun { cell, target, run });
                    save(r);
                }
            }
        }
        if r.sections.idle {
            for variant in order(vec![Variant::Cyclone, Variant::Ours]) {
                let (wakeups_per_s, threads, error) = match runner.idle(variant, plan.idle_seconds)
                {
                    Ok((w, t)) => (Some(w), Some(t), None),
                    Err(e) => (None, None, Some(e)),
                };
                let text = match (wakeups_per_s, &error) {
                    (Some(w), _) => format!("{w:.1} wake-ups/s"),
                    (None, e) => format!("FAILED: {}", e.as_deref().unwrap_or("?")),
                };
                progress.step(&format!("idle pong {}", variant.label()), &text);
                r.idle.push(IdleRun {
                    variant,
                    rep,
                    wakeups_per_s,
                    threads,
                    error,
                });
                save(r);
            }
        }
    }
    if r.sections.loans && tools_shm {
        for rep in 0..plan.reps {
            for &size in &plan.loan_sizes {
                let mut variants = suite::LOAN_VARIANTS.to_vec();
                if rep % 2 == 1 {
                    variants.reverse();
                }
                for variant in variants {
                    let (lines, exits) =
                        runner.latency(variant, size, None, plan.latency_seconds, None);
                    let run = PairRun::new(variant, rep, lines, exits, |l| {
                        stats::latency_figures(l, None)
                    });
                    let what = format!("loans {} {}", report::size_label(size), variant.label());
                    progress.step(&what, &outcome(&run, latency_outcome));
                    r.loans.push(LatencyRun { size, run });
                    save(r);
                }
            }
            // Lent throughput beside the copied shared-memory rows (kept with the other
            // throughput runs, as `Variant::OursShmLoan`).
            for &size in &plan.throughput_sizes {
                let what = format!("loans throughput {}", report::size_label(size));
                let run = throughput_run(
                    runner,
                    &mut progress,
                    &what,
                    Variant::OursShmLoan,
                    size,
                    plan,
                    rep,
                );
                r.throughput.push(run);
                save(r);
            }
        }
    }
    if let (Some(study), true) = (plan.study, r.sections.study) {
        for run in 0..study.runs {
            let mut variants = vec![Variant::Cyclone, Variant::Ours];
            if tools_shm {
                variants.extend([Variant::OursShm, Variant::OursShmAsync]);
            }
            if run % 2 == 1 {
                variants.reverse();
            }
            for variant in variants {
                let bursts = Some((study.rate, study.burst));
                let (got, exits) =
                    runner.throughput_in_bursts(variant, study.size, study.seconds, bursts);
                let (lines, totals) = match got {
                    Ok((l, t)) => (Ok(l), t),
                    Err(e) => (Err(e), None),
                };
                let run = PairRun::new(variant, run, lines, exits, stats::throughput_figures);
                let text = outcome(&run, |f| {
                    format!("{} samples/s", report::rate(f.samples_per_s))
                });
                let what = format!(
                    "study {} in bursts of {} {}",
                    report::size_label(study.size),
                    study.burst,
                    variant.label()
                );
                progress.step(&what, &text);
                r.study.push(ThroughputRun {
                    size: study.size,
                    totals,
                    run,
                });
                save(r);
            }
        }
    }
}

fn run(o: Options) -> Result<(), String> {
    if o.render_only {
        let path = o.docs.join("bench/results.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let r: Results =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        publish(&r, &o.docs)?;
        eprintln!(
            "rewrote {} and its plots",
            o.docs.join("benchmarks.md").display()
        );
        return Ok(());
    }
    let here = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let ferrodds = o.ferrodds.unwrap_or_else(|| here.join("ferrodds"));
    let floor = o.floor.unwrap_or_else(|| here.join("udp_floor"));
    for (what, p) in [("ferrodds", &ferrodds), ("udp_floor", &floor)] {
        if !p.is_file() {
            return Err(format!(
                "{what} not found at {} (scripts/bench builds it)",
                p.display()
            ));
        }
    }
    if std::process::Command::new(&o.ddsperf)
        .arg("help")
        .output()
        .is_err()
    {
        return Err(format!(
            "{} not found (apt-get install cyclonedds-tools; scripts/bench does it)",
            o.ddsperf.display()
        ));
    }
    let logs = logs_dir(o.logs)?;
    let mut notes = Vec::new();
    let busy_poll = suite::ours_accepts(&ferrodds, "ping", "--busy-poll")
        && suite::ours_accepts(&ferrodds, "pong", "--busy-poll");
    if !busy_poll && o.sections.latency {
        notes.push(
            "FerroDDS busy-poll row skipped: `ferrodds perf ping --help` / `pong --help` do \
             not list `--busy-poll`."
                .to_string(),
        );
    }
    let no_batch = suite::ours_accepts(&ferrodds, "pub", "--no-batch");
    let shm = suite::ours_accepts_option(&ferrodds, "pub", "--transport");
    if !shm && (o.sections.throughput || o.sections.latency) {
        notes.push(
            "Shared-memory rows skipped: `ferrodds perf pub --help` does not list \
             `--transport`."
                .to_string(),
        );
    }
    if !no_batch && o.sections.throughput {
        notes.push(
            "FerroDDS unbatched throughput row skipped: `ferrodds perf pub --help` does not \
             list `--no-batch`."
                .to_string(),
        );
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
    let plan = if o.quick {
        Plan::quick()
    } else {
        Plan::full(o.reps)
    };
    let mut r = Results {
        date: machine::utc_now(),
        plan: plan.clone(),
        sections: o.sections,
        machine: Machine::now(),
        busy_poll,
        no_batch,
        notes,
        minutes: 0.0,
        latency: Vec::new(),
        floor: Vec::new(),
        throughput: Vec::new(),
        matrix: Vec::new(),
        idle: Vec::new(),
        shm,
        memcpy: Vec::new(),
        study: Vec::new(),
        loans: Vec::new(),
    };
    // What else runs here: one second of /proc/stat before the first pair and after the last.
    r.machine.cpu_busy_before = machine::cpu_busy(std::time::Duration::from_secs(1));
    eprintln!(
        "ferrodds-bench: {} repetition(s), {} runs; logs in {}; load average {}, cores busy \
         with other work {}",
        plan.reps,
        plan.runs(&o.sections, busy_poll, no_batch, shm),
        logs.display(),
        r.machine.load_before,
        r.machine
            .cpu_busy_before
            .map_or_else(|| "?".to_string(), |b| format!("{:.0} %", b * 100.0))
    );
    let start = Instant::now();
    let mut runner = Runner::new(Tools {
        ferrodds,
        ddsperf: o.ddsperf,
        floor,
        logs: logs.clone(),
        busy_poll,
        no_batch,
        transport: shm,
    });
    execute(&plan, &mut runner, &mut r, &logs);
    r.minutes = start.elapsed().as_secs_f64() / 60.0;
    r.machine.load_after = machine::load_average();
    r.machine.cpu_busy_after = machine::cpu_busy(std::time::Duration::from_secs(1));
    publish(&r, &o.docs)?;
    let failures = r.failures();
    eprintln!(
        "ferrodds-bench: done in {:.1} min; wrote {} and {}; {} failed run(s)",
        r.minutes,
        o.docs.join("benchmarks.md").display(),
        o.docs.join("bench/").display(),
        failures.len()
    );
    for f in failures {
        eprintln!("  {f}");
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_options(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("ferrodds-bench: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    process::end_children_on_signals();
    if let Err(e) = run(options) {
        eprintln!("ferrodds-bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options() {
        let o = parse_options(&args("--reps 3 --only latency,matrix --docs d")).unwrap();
        assert_eq!(o.reps, 3);
        assert!(o.sections.latency && o.sections.matrix && !o.sections.throughput);
        assert!(!o.sections.idle);
        assert!(parse_options(&args("--only idle")).unwrap().sections.idle);
        assert_eq!(o.docs, PathBuf::from("d"));
        assert!(parse_options(&args("--quick")).unwrap().quick);
        assert!(parse_options(&args("render")).unwrap().render_only);
        assert!(parse_options(&args("--reps 0")).is_err());
        assert!(parse_options(&args("--reps")).is_err());
        assert!(parse_options(&args("--only nothing")).is_err());
        assert!(parse_options(&args("--quick --reps 2")).is_err());
        assert!(parse_options(&args("--bogus")).is_err());
        assert_eq!(parse_options(&args("--help")).err().as_deref(), Some(""));
    }
}
