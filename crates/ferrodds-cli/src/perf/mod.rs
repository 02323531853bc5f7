//! `ferrodds perf`: latency and throughput, speaking Cyclone DDS's `ddsperf` protocol so
//! that either side of a pair can be ddsperf.
//!
//! - `ping`: sends pings and measures round trips to every peer that answers (ddsperf
//!   `ping`); as fast as the pongs come back, or at `--rate`.
//! - `pong`: only answers pings (ddsperf `pong`). Every mode answers pings, as in ddsperf.
//! - `pub`: publishes data as fast as possible or at `--rate` bursts per second (ddsperf
//!   `pub`).
//! - `sub`: receives data, counts samples, bytes and sequence gaps per writer (ddsperf
//!   `sub`).
//!
//! The protocol (topics, types, partitions, QoS) is described in `node.rs` and `types.rs`;
//! the defaults are ddsperf's, so `ferrodds perf pong` answers a plain `ddsperf ping` and
//! `ferrodds perf sub` receives a plain `ddsperf pub`, and the other way round.
//!
//! Options follow ddsperf's where the `ferrodds` command does not already use the letter:
//! `-T` topic, `-u` best effort, `-k` history, `-n` keys, `-D` duration; but the domain is
//! `-d`/`--domain` (ddsperf: `-i`) and `-i`/`--interface` names the network interface (for
//! ddsperf, set `CYCLONEDDS_URI`). ddsperf's mode words become options: `ping 1kHz size 1k`
//! is `ping --rate 1kHz --size 1k`, `pub 100Hz burst 10` is `pub --rate 100Hz --burst 10`.
//!
//! Output: a line per second on stdout while something happens (round trips with their
//! percentiles, samples and MB/s with loss, the process's CPU use) and a summary at the end
//! (min, mean, stddev, p50, p90, p99, p99.9, max from an HDR histogram; round trips also
//! halved, as ddsperf prints them); with `--json`, the same as one JSON object per line
//! (`"kind": "interval"` or `"summary"`, latencies in µs). Notes go to stderr, and so does
//! a progress bar when stderr is a terminal and the run is bounded (`-D` of 3 s or more,
//! or `--count`). SIGINT/SIGTERM end the run with its summary.

mod loaned;
mod node;
mod ping;
mod pong;
mod publish;
mod report;
mod stats;
mod subscribe;
mod types;
mod user_data;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand, ValueEnum};

use types::{with_topic_type, TopicKind};

/// The arguments of `ferrodds perf`, parsed by [`run`] so that a bad option is one line.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub(crate) struct PerfCommand {
    /// Mode and options (see `ferrodds perf --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(Parser, Debug)]
#[command(
    name = "ferrodds perf",
    about = "Latency and throughput, compatible with Cyclone DDS's ddsperf",
    long_about = "Latency and throughput, compatible with Cyclone DDS's ddsperf: \
                  `ferrodds perf pong` answers `ddsperf ping`, `ferrodds perf sub` receives \
                  `ddsperf pub`, and the other way round, with no options on either side.\n\n\
                  Latencies are round trips measured by the pinging side; ddsperf prints half \
                  of it, which the summary gives too (\"half\")."
)]
struct PerfCli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// Send pings and measure round trips (ddsperf `ping`).
    Ping(PingArgs),
    /// Answer pings (ddsperf `pong`).
    Pong(PongArgs),
    /// Publish data (ddsperf `pub`).
    Pub(PubArgs),
    /// Receive data and count it, and what was lost (ddsperf `sub`).
    Sub(SubArgs),
}

/// Options of every mode.
#[derive(Args, Debug, Clone)]
struct CommonArgs {
    /// DDS domain id (ddsperf: -i).
    #[arg(long, short = 'd', default_value_t = 0)]
    domain: u32,
    /// Network interface, by name ("lo") or address [default: as FERRODDS_CONFIG says, or
    /// chosen automatically].
    #[arg(long, short = 'i')]
    interface: Option<String>,
    /// Topic type (ddsperf -T): KS (seq, key, sequence of octets), K32, K256, OU, UK16,
    /// UK1024, S16, S256, S4k, S32k.
    #[arg(
        long,
        short = 'T',
        value_enum,
        default_value = "KS",
        hide_possible_values = true
    )]
    topic: TopicKind,
    /// Best-effort instead of reliable (ddsperf -u).
    #[arg(long, short = 'u')]
    best_effort: bool,
    /// History of data readers and writers: "all" or a KEEP_LAST depth (ddsperf -k);
    /// pings and pongs always keep the last 1.
    #[arg(long, short = 'k', default_value = "all", value_parser = parse_history)]
    history: History,
    /// Number of key values data cycles through (ddsperf -n).
    #[arg(long, short = 'n', default_value_t = 1)]
    keys: u32,
    /// Stop after this many seconds (ddsperf -D) [default: run until interrupted].
    #[arg(long, short = 'D', value_parser = parse_seconds)]
    duration: Option<Duration>,
    /// One JSON object per line on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// How samples are taken: in a listener (ddsperf's default) or by a thread waiting for
    /// data (ddsperf's "waitset").
    #[arg(long, value_enum, default_value = "listener")]
    trigger: Trigger,
    /// The latency mode: a thread spins on non-blocking receives of user data instead of
    /// sleeping (a core kept busy; FERRODDS_CONFIG's transport.busy_poll).
    #[arg(long)]
    busy_poll: bool,
    /// How user data reaches FerroDDS peers on this host: "shm" over shared memory (an
    /// error where it cannot be set up), "udp" over UDP alone, "auto" as configured
    /// (shared memory on by default, with UDP where it is not available). Discovery, and
    /// peers of other vendors, use UDP in every case.
    #[arg(long, value_enum, default_value = "auto")]
    transport: TransportChoice,
}

/// `--transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportChoice {
    /// As the configuration says.
    Auto,
    /// UDP only (no shared memory, no in-process queues).
    Udp,
    /// Shared memory, required.
    Shm,
}

#[derive(Args, Debug)]
struct PingArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Pings per second ("100", "100Hz", "2kHz"); "inf" (default): a new ping as soon as
    /// every peer answered the last one, or after 1 s.
    #[arg(long, short = 'r', value_parser = parse_rate)]
    rate: Option<f64>,
    /// Sample size in bytes for topic KS, fixed part included: 0 (minimal, 12) or at
    /// least 12; k/M/kB/KiB/MB/MiB suffixes.
    #[arg(long, short = 's', default_value = "0", value_parser = parse_size)]
    size: u32,
    /// Stop after this many round trips.
    #[arg(long, short = 'c')]
    count: Option<u64>,
    /// Round trips of a plain type of exactly --size bytes, lent by the writer and taken
    /// where they lie (zero copy between FerroDDS processes of one host; both sides
    /// `ferrodds perf`, the pong with --loan and the same --size).
    #[arg(long)]
    loan: bool,
}

#[derive(Args, Debug)]
struct PongArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Answer `ping --loan` (see there) of this --size.
    #[arg(long)]
    loan: bool,
    /// The size of `ping --loan`'s samples (only with --loan).
    #[arg(long, short = 's', default_value = "0", value_parser = parse_size)]
    size: u32,
}

#[derive(Args, Debug)]
struct PubArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Bursts per second ("1000", "10kHz"); "inf" (default) publishes as fast as possible.
    #[arg(long, short = 'r', value_parser = parse_rate)]
    rate: Option<f64>,
    /// Samples per burst.
    #[arg(long, short = 'b', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    burst: u32,
    /// Sample size in bytes for topic KS, fixed part included: 0 (minimal, 12) or at
    /// least 12; k/M/kB/KiB/MB/MiB suffixes.
    #[arg(long, short = 's', default_value = "0", value_parser = parse_size)]
    size: u32,
    /// Stop after this many samples (then wait up to 10 s for reliable readers to
    /// acknowledge them).
    #[arg(long, short = 'c')]
    count: Option<u64>,
    /// No writer batching: each sample in a datagram of its own. By default samples share
    /// datagrams, as ddsperf's do (it turns on Cyclone's write batching), which go out when
    /// full, when a rate is set and the burst is done, or 1 ms after their first sample.
    #[arg(long)]
    no_batch: bool,
    /// Asynchronous publish mode (Fast DDS's ASYNCHRONOUS_PUBLISH_MODE): a write queues the
    /// sample and returns; the participant's timer thread sends it. By default the writing
    /// thread sends.
    #[arg(long)]
    asynchronous: bool,
    /// Samples of a plain type of exactly --size bytes, lent by the writer and taken where
    /// they lie by `sub --loan` of the same --size (see `ping --loan`); only the sequence
    /// number is written into each.
    #[arg(long)]
    loan: bool,
}

#[derive(Args, Debug)]
struct SubArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Also measure one-way latency from the source timestamps (ddsperf -l; needs
    /// synchronised clocks, so one machine or PTP).
    #[arg(long, short = 'l')]
    latency: bool,
    /// Receive `pub --loan` (see there) of this --size.
    #[arg(long)]
    loan: bool,
    /// The size of `pub --loan`'s samples (only with --loan).
    #[arg(long, short = 's', default_value = "0", value_parser = parse_size)]
    size: u32,
}

/// A data history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum History {
    /// KEEP_ALL.
    KeepAll,
    /// KEEP_LAST n.
    KeepLast(u32),
}

/// How samples are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Trigger {
    /// In the participant's receive thread, when data arrives.
    Listener,
    /// In a thread of our own that waits for data.
    Waitset,
}

/// What every mode is told.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) domain: u32,
    pub(crate) interface: Option<String>,
    pub(crate) topic: TopicKind,
    pub(crate) reliable: bool,
    pub(crate) history: History,
    pub(crate) keys: u32,
    pub(crate) duration: Option<Duration>,
    pub(crate) json: bool,
    pub(crate) trigger: Trigger,
    pub(crate) busy_poll: bool,
    pub(crate) transport: TransportChoice,
    /// Writer batching on the data writer.
    pub(crate) batch: bool,
    /// Asynchronous publish mode on the data writer.
    pub(crate) asynchronous: bool,
}

impl Settings {
    fn from_common(c: &CommonArgs) -> Result<Settings, String> {
        let keys = c.keys.max(1);
        if keys > 1 && !c.topic.is_keyed() {
            return Err(format!(
                "--keys {keys}: topic {} has no key",
                c.topic
                    .to_possible_value()
                    .map_or_else(|| "?".to_string(), |v| v.get_name().to_string())
            ));
        }
        Ok(Settings {
            domain: c.domain,
            interface: c.interface.clone(),
            topic: c.topic,
            reliable: !c.best_effort,
            history: c.history,
            keys,
            duration: c.duration,
            json: c.json,
            trigger: c.trigger,
            busy_poll: c.busy_poll,
            transport: c.transport,
            batch: false,
            asynchronous: false,
        })
    }
}

/// The length of KeyedSeq's sequence for `--size` (ddsperf: 0 or at least 12, the fixed
/// part included; only KS has a sequence).
fn baggage(size: u32, topic: TopicKind) -> Result<usize, String> {
    if size == 0 {
        return Ok(0);
    }
    if topic != TopicKind::Ks {
        return Err(format!(
            "--size {size}: only topic KS has a sequence to size"
        ));
    }
    if size < 12 {
        return Err(format!(
            "--size {size}: too small for the 12 fixed bytes (use 0 or at least 12)"
        ));
    }
    Ok((size - 12) as usize)
}

fn parse_history(s: &str) -> Result<History, String> {
    if s == "all" {
        return Ok(History::KeepAll);
    }
    match s.parse::<u32>() {
        // ddsperf: -k 0 is KEEP_ALL too.
        Ok(0) => Ok(History::KeepAll),
        Ok(n) => Ok(History::KeepLast(n)),
        Err(_) => Err("expected \"all\" or a depth".into()),
    }
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s.parse().map_err(|_| "expected seconds".to_string())?;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err("expected a positive number of seconds".into());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// "inf" (infinity: as fast as possible), or a positive number with an optional Hz or kHz
/// suffix.
fn parse_rate(s: &str) -> Result<f64, String> {
    if s == "inf" || s == "infHz" {
        return Ok(f64::INFINITY);
    }
    let (number, mult) = if let Some(n) = s.strip_suffix("kHz") {
        (n, 1000.0)
    } else if let Some(n) = s.strip_suffix("Hz") {
        (n, 1.0)
    } else {
        (s, 1.0)
    };
    let r: f64 = number
        .trim()
        .parse()
        .map_err(|_| "expected a rate such as 1000, 100Hz, 2kHz or inf".to_string())?;
    if !r.is_finite() || r <= 0.0 {
        return Err("the rate must be positive".into());
    }
    Ok(r * mult)
}

/// A size with ddsperf's suffixes (B, k, kB, KiB = 1024; M, MB, MiB = 1048576).
fn parse_size(s: &str) -> Result<u32, String> {
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, suffix) = s.split_at(digits);
    let mult: u64 = match suffix.trim() {
        "" | "B" => 1,
        "k" | "kB" | "KiB" => 1024,
        "M" | "MB" | "MiB" => 1_048_576,
        _ => return Err("expected bytes, optionally with k/M/kB/KiB/MB/MiB".into()),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| "expected bytes, optionally with k/M/kB/KiB/MB/MiB".to_string())?;
    n.checked_mul(mult)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| "too large".to_string())
}

/// Stops a run: set by the duration, a signal, the mode itself, or a fatal error.
#[derive(Clone, Default)]
pub(crate) struct Stop {
    flag: Arc<AtomicBool>,
    error: Arc<Mutex<Option<String>>>,
    /// Wakes [`run_loop`] at once when the run is stopped (it sleeps until its next tick).
    woken: Arc<(Mutex<()>, Condvar)>,
}

impl Stop {
    /// Asks the run to end.
    pub(crate) fn stop(&self) {
        self.flag.store(true, Ordering::Release);
        let (lock, woken) = &*self.woken;
        // Taken so that a sleeper between its check and its wait is not missed.
        drop(lock.lock().unwrap_or_else(|p| p.into_inner()));
        woken.notify_all();
    }

    /// Sleeps until `until` or until the run is stopped.
    fn sleep_until(&self, until: Instant) {
        let (lock, woken) = &*self.woken;
        let mut guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        while !self.is_stopped() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            guard = woken
                .wait_timeout(guard, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Ends the run with an error (the first one is kept).
    pub(crate) fn fail(&self, message: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        e.get_or_insert(message);
        drop(e);
        self.stop();
    }

    /// True once the run should end.
    pub(crate) fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// The error the run ended with, if any.
    pub(crate) fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// How often a pinging run looks after its pings (a resend when one went unanswered).
pub(crate) const PING_MAINTAIN: Duration = Duration::from_millis(100);
/// How often the other modes look for newly discovered peers (a peer found in between is
/// answered through a writer made on its first ping): seldom, so that an idle run sleeps.
pub(crate) const MAINTAIN: Duration = Duration::from_secs(1);

/// What the run loop tells a mode.
pub(crate) enum Tick {
    /// The maintenance period passed.
    Maintain,
    /// A second passed (or the run ends): report the interval of this length.
    Second(Duration),
}

/// Ticks until `stop` or the end of `duration`, reporting each second and a last partial
/// interval at the end.
pub(crate) fn run_loop(
    stop: &Stop,
    duration: Option<Duration>,
    maintain_every: Duration,
    mut f: impl FnMut(Tick),
) {
    let start = Instant::now();
    let end = duration.map(|d| start + d);
    let mut last_report = start;
    let mut next_report = start + Duration::from_secs(1);
    loop {
        let now = Instant::now();
        if end.is_some_and(|e| now >= e) {
            stop.stop();
        }
        if stop.is_stopped() {
            break;
        }
        if now >= next_report {
            f(Tick::Second(now - last_report));
            last_report = now;
            next_report = if now > next_report + Duration::from_millis(500) {
                now + Duration::from_secs(1)
            } else {
                next_report + Duration::from_secs(1)
            };
        }
        f(Tick::Maintain);
        let mut wake = (Instant::now() + maintain_every).min(next_report);
        if let Some(e) = end {
            wake = wake.min(e);
        }
        // Woken early by a stop (count reached, signal, error), so an idle run sleeps.
        stop.sleep_until(wake);
    }
    let now = Instant::now();
    if now > last_report + Duration::from_millis(50) {
        f(Tick::Second(now - last_report));
    }
}

/// SIGINT, SIGTERM and SIGHUP stop the run (a second one exits at once). Called before
/// any thread starts, so that they all inherit the blocked mask and only the waiting
/// thread takes the signals.
fn handle_signals(stop: &Stop) {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGHUP);
    if set.thread_block().is_err() {
        return;
    }
    let stop = stop.clone();
    let _ = std::thread::Builder::new()
        .name("perf-signals".into())
        .spawn(move || {
            let mut seen = 0;
            while set.wait().is_ok() {
                seen += 1;
                if seen > 1 {
                    std::process::exit(130);
                }
                stop.stop();
            }
        });
}

/// Runs `ferrodds perf` with its arguments.
pub(crate) fn run(command: &PerfCommand) -> Result<(), String> {
    let argv = std::iter::once("ferrodds perf".to_string()).chain(command.args.iter().cloned());
    let cli = match PerfCli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    print!("{e}");
                    Ok(())
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                | ErrorKind::MissingSubcommand => Err(
                    "perf: a mode is needed: ping, pong, pub or sub (see `ferrodds perf --help`)"
                        .into(),
                ),
                _ => {
                    let text = e.to_string();
                    let first = text.lines().next().unwrap_or("invalid arguments");
                    Err(format!("perf: {}", first.trim_start_matches("error: ")))
                }
            };
        }
    };
    let stop = Stop::default();
    let result = match &cli.mode {
        Mode::Ping(a) if a.loan => {
            let settings = Settings::from_common(&a.common)?;
            handle_signals(&stop);
            loaned::run_ping(&settings, a.size, a.count, &stop)
        }
        Mode::Pong(a) if a.loan => {
            let settings = Settings::from_common(&a.common)?;
            handle_signals(&stop);
            loaned::run_pong(&settings, a.size, &stop)
        }
        Mode::Pub(a) if a.loan => {
            let settings = Settings::from_common(&a.common)?;
            handle_signals(&stop);
            loaned::run_pub(&settings, a.size, &stop)
        }
        Mode::Sub(a) if a.loan => {
            let settings = Settings::from_common(&a.common)?;
            handle_signals(&stop);
            loaned::run_sub(&settings, a.size, &stop)
        }
        Mode::Ping(a) => {
            let settings = Settings::from_common(&a.common)?;
            let config = ping::Config {
                rate: a.rate.filter(|r| r.is_finite()),
                baggage: baggage(a.size, settings.topic)?,
                count: a.count,
            };
            handle_signals(&stop);
            with_topic_type!(settings.topic, T => ping::run::<T>(&settings, &config, &stop))
        }
        Mode::Pong(a) => {
            let settings = Settings::from_common(&a.common)?;
            handle_signals(&stop);
            with_topic_type!(settings.topic, T => pong::run::<T>(&settings, &stop))
        }
        Mode::Pub(a) => {
            let settings = Settings {
                batch: !a.no_batch,
                asynchronous: a.asynchronous,
                ..Settings::from_common(&a.common)?
            };
            let config = publish::Config {
                rate: a.rate.filter(|r| r.is_finite()),
                burst: a.burst,
                baggage: baggage(a.size, settings.topic)?,
                count: a.count,
            };
            handle_signals(&stop);
            with_topic_type!(settings.topic, T => publish::run::<T>(&settings, &config, &stop))
        }
        Mode::Sub(a) => {
            let settings = Settings::from_common(&a.common)?;
            let config = subscribe::Config { latency: a.latency };
            handle_signals(&stop);
            with_topic_type!(settings.topic, T => subscribe::run::<T>(&settings, &config, &stop))
        }
    };
    result.and_then(|()| stop.error().map_or(Ok(()), Err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_ddsperfs_suffixes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert_eq!(parse_size("1MB"), Ok(1_048_576));
        assert!(parse_size("1G").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999M").is_err());
        assert_eq!(baggage(0, TopicKind::Ks), Ok(0));
        assert_eq!(baggage(64, TopicKind::Ks), Ok(52));
        assert!(baggage(8, TopicKind::Ks).is_err());
        assert!(baggage(64, TopicKind::K32).is_err());
    }

    #[test]
    fn rates_take_hz_and_khz() {
        assert_eq!(parse_rate("100"), Ok(100.0));
        assert_eq!(parse_rate("100Hz"), Ok(100.0));
        assert_eq!(parse_rate("2kHz"), Ok(2000.0));
        assert_eq!(parse_rate("inf"), Ok(f64::INFINITY));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn history_is_all_or_a_depth() {
        assert_eq!(parse_history("all"), Ok(History::KeepAll));
        assert_eq!(parse_history("0"), Ok(History::KeepAll));
        assert_eq!(parse_history("5"), Ok(History::KeepLast(5)));
        assert!(parse_history("some").is_err());
    }

    #[test]
    fn the_cli_is_well_formed() {
        use clap::CommandFactory;
        PerfCli::command().debug_assert();
    }
}
