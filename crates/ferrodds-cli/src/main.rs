//! The `ferrodds` command.
//!
//! - `ferrodds demo`: starts a `pong` in a second process, sends it samples, and prints each
//!   echo with its round-trip time, then a summary.
//! - `ferrodds ping` / `ferrodds pong`: the two halves, to run in separate terminals or on
//!   separate machines.
//! - `ferrodds perf ping|pong|pub|sub`: latency and throughput, compatible with Cyclone DDS's
//!   `ddsperf` (see `perf/mod.rs`).
//!
//! - `ferrodds ls`, `typeof TOPIC`, `echo TOPIC`, `pub TOPIC`: the domain's participants and
//!   topics, a topic's type as IDL, its samples as JSON, samples written from JSON (see
//!   `tools.rs`).
//!
//! Errors print one line and exit with status 1.

mod durability;
mod idl;
mod perf;
mod record;
mod scale;
mod shapes;
mod tools;
mod why;

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use ferrodds::Cdr;
use ferrodds::{DataReader, DataWriter, DomainParticipant, Qos};

#[derive(Parser)]
#[command(
    name = "ferrodds",
    version,
    about = "FerroDDS: DDS publish/subscribe over RTPS"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Ping a pong in a second process and print every echo with its round-trip time.
    Demo(PingArgs),
    /// Send pings and print the echoes.
    Ping(PingArgs),
    /// Echo pings until stopped (or for --duration seconds).
    Pong(PongArgs),
    /// Measure discovery: start a second process, time creation to match on both sides.
    DiscoveryTime(DiscoveryArgs),
    /// The far side of `discovery-time` (started by it).
    #[command(hide = true)]
    DiscoveryPeer(Common),
    /// Latency and throughput, compatible with Cyclone DDS's ddsperf (`perf --help`).
    Perf(perf::PerfCommand),
    /// The OMG interoperability suite's shape application (also built as `shape_main`).
    Shapes(shapes::ShapesCommand),
    /// Compile IDL files to Rust (#[derive(Cdr)]), Python (ferrodds.idl) or C# types.
    Idl(idl::IdlArgs),
    /// The participants and topics of a domain, with types and QoS.
    Ls(tools::LsArgs),
    /// A topic's type as IDL, obtained from its endpoints (XTypes TypeLookup).
    Typeof(tools::TypeofArgs),
    /// A topic's samples as JSON lines, whatever its type.
    Echo(tools::EchoArgs),
    /// Samples written to a topic from JSON, typed by what its endpoints announced.
    Pub(tools::PubArgs),
    /// Why the writers and readers of a topic do or do not exchange data.
    Why(why::WhyArgs),
    /// Record topics to an MCAP file, whatever their types.
    Record(record::RecordArgs),
    /// Replay an MCAP file `record` wrote: the same bytes, at the recorded pace.
    Replay(record::ReplayArgs),
    /// The durability service: keeps what TRANSIENT and PERSISTENT writers write and hands
    /// it to late joiners once the writers are gone (PERSISTENT: in an SQLite store).
    Durability(durability::DurabilityArgs),
    /// One process of the hundred-participant benchmark (`scripts/bench-scale`).
    #[command(hide = true)]
    ScaleNode(scale::ScaleArgs),
}

#[derive(Args, Clone)]
struct DiscoveryArgs {
    /// Runs (each on its own domain, base-domain + run).
    #[arg(long, default_value_t = 20)]
    runs: u32,
    /// Domain of the first run.
    #[arg(long, default_value_t = 60)]
    base_domain: u32,
    /// Network interface.
    #[arg(long, short, default_value = "lo")]
    interface: String,
}

#[derive(Args, Clone)]
struct Common {
    /// DDS domain id.
    #[arg(long, short, default_value_t = 0)]
    domain: u32,
    /// Network interface (name or address).
    #[arg(long, short, default_value = "lo")]
    interface: String,
}

#[derive(Args, Clone)]
struct PingArgs {
    #[command(flatten)]
    common: Common,
    /// Number of pings.
    #[arg(long, short, default_value_t = 10)]
    count: u32,
    /// Payload bytes per ping.
    #[arg(long, short, default_value_t = 64)]
    size: usize,
    /// Pause between pings, in milliseconds.
    #[arg(long, default_value_t = 100)]
    interval_ms: u64,
}

#[derive(Args, Clone)]
struct PongArgs {
    #[command(flatten)]
    common: Common,
    /// Stop after this many seconds (0: run until killed).
    #[arg(long, default_value_t = 0)]
    duration: u64,
}

/// `@final struct ferrodds::demo::Ping { uint32 seq; sequence<octet> payload; };`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "ferrodds::demo::Ping")]
struct Ping {
    seq: u32,
    payload: Vec<u8>,
}

const PING_TOPIC: &str = "ferrodds_demo_ping";
const PONG_TOPIC: &str = "ferrodds_demo_pong";

fn participant(c: &Common) -> ferrodds::Result<DomainParticipant> {
    DomainParticipant::builder()?
        .domain_id(c.domain)
        .interface(&c.interface)?
        .build()
}

fn endpoints(
    p: &DomainParticipant,
    out: &str,
    inp: &str,
) -> ferrodds::Result<(DataWriter<Ping>, DataReader<Ping>)> {
    let w = p.create_writer(
        &p.create_topic::<Ping>(out)?,
        Qos::writer().reliable().keep_last(1),
    )?;
    let r = p.create_reader(
        &p.create_topic::<Ping>(inp)?,
        Qos::reader().reliable().keep_all(),
    )?;
    Ok((w, r))
}

fn pong(args: &PongArgs) -> Result<(), String> {
    let p = participant(&args.common).map_err(|e| e.to_string())?;
    let (writer, reader) = endpoints(&p, PONG_TOPIC, PING_TOPIC).map_err(|e| e.to_string())?;
    eprintln!(
        "pong: domain {}, participant {:?}, waiting for pings",
        args.common.domain,
        p.guid_prefix()
    );
    let end = (args.duration > 0).then(|| Instant::now() + Duration::from_secs(args.duration));
    while end.is_none_or(|e| Instant::now() < e) {
        // Waits until the end (or a second at a time without one): an idle pong sleeps.
        let left = end.map_or(Duration::from_secs(1), |e| {
            e.saturating_duration_since(Instant::now())
        });
        if reader.wait_for_data(left) {
            for s in reader.take().map_err(|e| e.to_string())? {
                if let Some(data) = &s.data {
                    writer.write(data).map_err(|e| e.to_string())?;
                }
            }
        }
    }
    Ok(())
}

fn ping(args: &PingArgs) -> Result<(), String> {
    let p = participant(&args.common).map_err(|e| e.to_string())?;
    let (writer, reader) = endpoints(&p, PING_TOPIC, PONG_TOPIC).map_err(|e| e.to_string())?;
    let started = Instant::now();
    writer
        .wait_for_matched(1, Duration::from_secs(20))
        .and_then(|()| reader.wait_for_matched(1, Duration::from_secs(20)))
        .map_err(|_| format!("no pong answered within 20 s ({})", discovery_summary(&p)))?;
    println!(
        "matched a pong in {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let mut rtts = Vec::new();
    for seq in 0..args.count {
        let ping = Ping {
            seq,
            payload: vec![seq as u8; args.size],
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut sent = Instant::now();
        writer.write(&ping).map_err(|e| e.to_string())?;
        let echo = loop {
            if Instant::now() >= deadline {
                return Err(format!("ping {seq}: no echo within 5 s"));
            }
            if reader.wait_for_data(Duration::from_millis(200)) {
                let got = reader.take().map_err(|e| e.to_string())?;
                if let Some(s) = got
                    .into_iter()
                    .find(|s| s.data.as_ref().is_some_and(|d| d.seq == seq))
                {
                    break s;
                }
            } else {
                // The pong's writer may not have matched our reader yet when the first ping
                // arrived (discovery completes on each side separately): ask again.
                sent = Instant::now();
                writer.write(&ping).map_err(|e| e.to_string())?;
            }
        };
        let rtt = sent.elapsed();
        rtts.push(rtt);
        println!(
            "received echo #{seq}: {} bytes from writer {:02x?}, round trip {:.1} µs",
            echo.data.as_ref().map_or(0, |d| d.payload.len()),
            &echo.info.publication_handle.0[12..],
            rtt.as_secs_f64() * 1e6
        );
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
    rtts.sort();
    if let (Some(min), Some(max)) = (rtts.first(), rtts.last()) {
        let median = rtts[rtts.len() / 2];
        println!(
            "{} echoes: round trip min {:.1} µs, median {:.1} µs, max {:.1} µs",
            rtts.len(),
            min.as_secs_f64() * 1e6,
            median.as_secs_f64() * 1e6,
            max.as_secs_f64() * 1e6
        );
    }
    Ok(())
}

/// What this participant saw of discovery, for the error when no pong matched: whether
/// anything arrived at all, and whether it came from another participant.
fn discovery_summary(p: &DomainParticipant) -> String {
    let received = p.receive_stats();
    let refused = p.discovery_stats();
    format!(
        "domain {}, participant index {}, metatraffic at {}; {} datagrams received ({} \
         malformed, {} our own), {} participants discovered, {} endpoints discovered; \
         discovery refused: {refused:?}",
        p.domain_id(),
        p.participant_index(),
        p.metatraffic_address()
            .map_or_else(|| "-".to_owned(), |a| a.to_string()),
        received.datagrams,
        received.malformed + received.bad_datagrams,
        received.own,
        p.discovered_participants().len(),
        p.discovered_endpoints().len(),
    )
}

/// The last lines a child wrote to its stderr, kept by a thread that reads them as they come.
struct StderrTail(std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>);

impl StderrTail {
    const LINES: usize = 20;

    fn follow(stderr: std::process::ChildStderr) -> Self {
        use std::io::BufRead;
        let lines = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let kept = std::sync::Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() == Self::LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        StderrTail(lines)
    }

    fn text(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

fn demo(args: &PingArgs) -> Result<(), String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to start the pong: {e}"))?;
    let duration = (u64::from(args.count) * (args.interval_ms + 100) / 1000 + 30).to_string();
    let mut child = Command::new(exe)
        .args([
            "pong",
            "--domain",
            &args.common.domain.to_string(),
            "--interface",
            &args.common.interface,
            "--duration",
            &duration,
        ])
        .stdout(Stdio::null())
        // Kept, not shown: the pong's own lines would interleave with the echoes printed
        // here; they go into the error if the demo fails.
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the pong process: {e}"))?;
    let pong_stderr = child.stderr.take().map(StderrTail::follow);
    println!(
        "started pong as process {} (domain {}, interface {})",
        child.id(),
        args.common.domain,
        args.common.interface
    );
    let result = ping(args).map_err(|e| {
        let pong = match child.try_wait() {
            Ok(Some(status)) => format!("the pong exited ({status})"),
            Ok(None) => format!("the pong (process {}) was still running", child.id()),
            Err(err) => format!("the pong's state is unknown ({err})"),
        };
        let said = pong_stderr
            .as_ref()
            .map(StderrTail::text)
            .unwrap_or_default();
        format!("{e}; {pong}, its stderr: {said}")
    });
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Microseconds since the Unix epoch: comparable across the two processes.
fn unix_micros() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0)
}

/// Creates a participant and a reader, prints when it was created and when the reader
/// matched (Unix microseconds), and lingers so the other side can match too.
fn discovery_peer(c: &Common) -> Result<(), String> {
    let created = unix_micros();
    let p = participant(c).map_err(|e| e.to_string())?;
    let r = p
        .create_reader(
            &p.create_topic::<Ping>(PING_TOPIC)
                .map_err(|e| e.to_string())?,
            Qos::reader().reliable(),
        )
        .map_err(|e| e.to_string())?;
    r.wait_for_matched(1, Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    println!("{created} {}", unix_micros());
    std::thread::sleep(Duration::from_millis(300));
    Ok(())
}

/// Cold starts: each run starts a peer process and a participant here at once; the time from
/// the later of the two creations to the later of the two matches is the discovery time.
fn discovery_time(args: &DiscoveryArgs) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut times = Vec::new();
    for run in 0..args.runs {
        let domain = args.base_domain + run;
        let child = Command::new(&exe)
            .args([
                "discovery-peer",
                "--domain",
                &domain.to_string(),
                "--interface",
                &args.interface,
            ])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the peer process: {e}"))?;
        let common = Common {
            domain,
            interface: args.interface.clone(),
        };
        let created = unix_micros();
        let p = participant(&common).map_err(|e| e.to_string())?;
        let w = p
            .create_writer(
                &p.create_topic::<Ping>(PING_TOPIC)
                    .map_err(|e| e.to_string())?,
                Qos::writer(),
            )
            .map_err(|e| e.to_string())?;
        w.wait_for_matched(1, Duration::from_secs(10))
            .map_err(|e| format!("run {run}: {e}"))?;
        let matched = unix_micros();
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut fields = text.split_whitespace().map(str::parse::<u128>);
        let (Some(Ok(peer_created)), Some(Ok(peer_matched))) = (fields.next(), fields.next())
        else {
            return Err(format!("run {run}: the peer process reported {text:?}"));
        };
        let micros = matched
            .max(peer_matched)
            .saturating_sub(created.max(peer_created));
        times.push(micros as f64 / 1000.0);
        println!(
            "run {run:2}: matched on both sides {:.2} ms after the second participant was created",
            micros as f64 / 1000.0
        );
    }
    times.sort_by(f64::total_cmp);
    if let (Some(min), Some(max)) = (times.first(), times.last()) {
        println!(
            "discovery time over {} runs: min {min:.2} ms, median {:.2} ms, max {max:.2} ms",
            times.len(),
            times[times.len() / 2]
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Cmd::Demo(a) => demo(a),
        Cmd::Ping(a) => ping(a),
        Cmd::Pong(a) => pong(a),
        Cmd::DiscoveryTime(a) => discovery_time(a),
        Cmd::DiscoveryPeer(c) => discovery_peer(c),
        Cmd::Perf(a) => perf::run(a),
        Cmd::Shapes(a) => shapes::run(a),
        Cmd::Idl(a) => idl::run(a),
        Cmd::Ls(a) => tools::ls(a),
        Cmd::Typeof(a) => tools::type_of(a),
        Cmd::Echo(a) => tools::echo(a),
        Cmd::Pub(a) => tools::publish(a),
        Cmd::Why(a) => why::run(a),
        Cmd::Record(a) => record::record(a),
        Cmd::Replay(a) => record::replay(a),
        Cmd::Durability(a) => durability::run(a),
        Cmd::ScaleNode(a) => scale::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferrodds: {e}");
            ExitCode::FAILURE
        }
    }
}
