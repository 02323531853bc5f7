//! `robust_peer`: one publisher or subscriber process for the robustness tests
//! (`tests/loss.rs`, `tests/faults.rs`), speaking the Cyclone interop peer's types
//! (`interop::Reading`, `interop::Blob`, see `tests/interop/README.md`) so that either side
//! can be a Cyclone DDS process instead.
//!
//! ```text
//! cargo run --example robust_peer -- pub --domain 80 --count 2000
//! cargo run --example robust_peer -- sub --domain 80 --count 2000
//! cargo run --example robust_peer -- pub --domain 80 --type blob --size 4194304 --count 5
//! ```
//!
//! Both roles use RELIABLE, KEEP_ALL endpoints on topic `robust` (`--topic`), and reach
//! their peers over UDP only (no shared memory, no in-process queues). Sample `i` is
//! the interop peer's reading `i` (its `stamp` carries `i`) or blob `i` (`id` = `i`,
//! `data[k] = (k*31 + i) % 256`, `--size` bytes).
//!
//! - `pub` waits for `--readers` matched readers, writes `--count` samples (`--period-us`
//!   apart), waits for every reader to acknowledge them, lingers, exits 0 (3 when the
//!   acknowledgments did not come within `--ack-timeout-s`).
//! - `sub` takes samples until `--count` valid samples arrived or `--timeout-s` passed. It
//!   checks each: its content is exactly sample `i`, and per writer the `i`s arrive in order
//!   from `--first` (0) without gaps or repeats, with increasing RTPS sequence numbers. Exits
//!   0 when complete and clean, 1 otherwise.
//!
//! Output: JSON lines on stdout, one per event, each with `"event"` and `"ms"` (milliseconds
//! since the process started): `started`, `matched`, `progress` (every `--progress-every`
//! samples), `written` (all written), `acked`, and `done` (the summary; for `sub`:
//! `received`, `duplicates`, `out_of_order`, `corrupt`, `complete`, `first_ms`, `last_ms`).
//!
//! Other options: `--interface lo` (`auto`: chosen by the participant), `--watch` (`peers`
//! and `endpoints` lines whenever the participants discovered or the endpoints matched
//! change), `--no-multicast` (SPDP to the unicast peers list only),
//! `--lease-ms` (our participant's lease; the participant announces itself three times per
//! lease), `--transient-local`, `--max-samples`, `--max-blocking-ms`, `--linger-ms`.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use ferrodds::{Cdr, DataReader, DomainParticipant, Error, InstanceHandle, Qos};
use serde_json::{json, Value};

/// `interop::Position`.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "interop::Position")]
pub(crate) struct Position {
    x: f64,
    y: f64,
    z: f64,
}

/// `interop::Reading`: three instances; `stamp` carries the sample number.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "interop::Reading")]
pub(crate) struct Reading {
    #[cdr(key)]
    pub(crate) sensor_id: i32,
    #[cdr(key)]
    name: String,
    unit: String,
    pos: Position,
    values: Vec<f64>,
    blob: Vec<u8>,
    stamp: i64,
}

/// `interop::Blob`: one instance per sample; `id` is the sample number.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "interop::Blob")]
pub(crate) struct Blob {
    #[cdr(key)]
    pub(crate) id: i32,
    pub(crate) data: Vec<u8>,
}

/// The `stamp` of reading 0.
const READING_BASE_STAMP: i64 = 1_700_000_000_000;

/// Reading `i`, exactly as the Cyclone interop peer builds it.
pub(crate) fn reading(i: i32) -> Reading {
    Reading {
        sensor_id: i % 3,
        name: format!("sensor-{}", i % 3),
        unit: "\u{b0}C".into(),
        pos: Position {
            x: f64::from(i),
            y: f64::from(-i),
            z: 0.5 * f64::from(i),
        },
        values: vec![f64::from(i) * 0.25; (i % 5) as usize],
        blob: (0..i % 11).map(|k| ((i * 7 + k) % 256) as u8).collect(),
        stamp: READING_BASE_STAMP + i64::from(i),
    }
}

/// Byte `k` of blob `i`.
fn blob_byte(i: i32, k: usize) -> u8 {
    ((k.wrapping_mul(31)).wrapping_add(i as usize) % 256) as u8
}

/// Blob `i` of `size` bytes, exactly as the Cyclone interop peer builds it.
pub(crate) fn blob(i: i32, size: usize) -> Blob {
    Blob {
        id: i,
        data: (0..size).map(|k| blob_byte(i, k)).collect(),
    }
}

/// The sample type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `interop::Reading`.
    Reading,
    /// `interop::Blob` of `--size` bytes.
    Blob,
}

/// Command-line options.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// `pub` or `sub`.
    pub(crate) role: String,
    /// Domain id.
    pub(crate) domain: u32,
    /// Interface name or address.
    pub(crate) interface: String,
    /// SPDP over multicast (else the unicast peers list).
    pub(crate) multicast: bool,
    /// Topic name.
    pub(crate) topic: String,
    /// Sample type.
    pub(crate) kind: Kind,
    /// Samples to write / to expect.
    pub(crate) count: u32,
    /// Blob size.
    pub(crate) size: usize,
    /// First sample number (pub writes `first..first+count`; sub expects it first).
    pub(crate) first: u32,
    /// Pause between writes.
    pub(crate) period: Duration,
    /// Our participant's lease.
    pub(crate) lease: Option<Duration>,
    /// TRANSIENT_LOCAL.
    pub(crate) transient_local: bool,
    /// RESOURCE_LIMITS max_samples (writer).
    pub(crate) max_samples: Option<u32>,
    /// max_blocking_time (writer).
    pub(crate) max_blocking: Duration,
    /// Readers to wait for before writing (0: do not wait).
    pub(crate) readers: usize,
    /// How long to wait for the readers.
    pub(crate) match_timeout: Duration,
    /// How long to wait for acknowledgments.
    pub(crate) ack_timeout: Duration,
    /// How long the sub waits for everything.
    pub(crate) timeout: Duration,
    /// Stay alive this long at the end.
    pub(crate) linger: Duration,
    /// A `progress` line every this many samples (0: none).
    pub(crate) progress_every: u32,
    /// `peers` and `endpoints` lines when those counts change.
    pub(crate) watch: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            role: String::new(),
            domain: 0,
            interface: "lo".into(),
            multicast: true,
            topic: "robust".into(),
            kind: Kind::Reading,
            count: 100,
            size: 4 * 1024 * 1024,
            first: 0,
            period: Duration::ZERO,
            lease: None,
            transient_local: false,
            max_samples: None,
            max_blocking: Duration::from_secs(10),
            readers: 1,
            match_timeout: Duration::from_secs(30),
            ack_timeout: Duration::from_secs(60),
            timeout: Duration::from_secs(60),
            linger: Duration::from_millis(200),
            progress_every: 0,
            watch: false,
        }
    }
}

impl Options {
    /// Parses `pub|sub` and the options after it.
    pub(crate) fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options::default();
        let mut it = args.iter();
        o.role = it.next().cloned().unwrap_or_default();
        if o.role != "pub" && o.role != "sub" {
            return Err(format!("the role is `pub` or `sub`, not {:?}", o.role));
        }
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            let num = |v: String| -> Result<u64, String> {
                v.parse::<u64>().map_err(|e| format!("{flag} {v:?}: {e}"))
            };
            let ms = |v: String| num(v).map(Duration::from_millis);
            match flag.as_str() {
                "--domain" => o.domain = num(value()?)? as u32,
                "--interface" => o.interface = value()?,
                "--no-multicast" => o.multicast = false,
                "--topic" => o.topic = value()?,
                "--type" => {
                    o.kind = match value()?.as_str() {
                        "reading" => Kind::Reading,
                        "blob" => Kind::Blob,
                        other => return Err(format!("--type is reading or blob, not {other:?}")),
                    }
                }
                "--count" => o.count = num(value()?)? as u32,
                "--size" => o.size = num(value()?)? as usize,
                "--first" => o.first = num(value()?)? as u32,
                "--period-us" => o.period = Duration::from_micros(num(value()?)?),
                "--lease-ms" => o.lease = Some(ms(value()?)?),
                "--transient-local" => o.transient_local = true,
                "--watch" => o.watch = true,
                "--max-samples" => o.max_samples = Some(num(value()?)? as u32),
                "--max-blocking-ms" => o.max_blocking = ms(value()?)?,
                "--readers" => o.readers = num(value()?)? as usize,
                "--match-timeout-s" => o.match_timeout = Duration::from_secs(num(value()?)?),
                "--ack-timeout-s" => o.ack_timeout = Duration::from_secs(num(value()?)?),
                "--timeout-s" => o.timeout = Duration::from_secs(num(value()?)?),
                "--linger-ms" => o.linger = ms(value()?)?,
                "--progress-every" => o.progress_every = num(value()?)? as u32,
                other => return Err(format!("unknown option {other:?}")),
            }
        }
        Ok(o)
    }
}

/// Prints JSON lines with the time since start.
#[derive(Clone, Copy)]
struct Out {
    start: Instant,
}

impl Out {
    fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn emit(&self, event: &str, mut fields: Value) {
        if let Value::Object(map) = &mut fields {
            map.insert("event".into(), json!(event));
            map.insert("ms".into(), json!(self.ms()));
        }
        let mut stdout = std::io::stdout().lock();
        // A closed stdout (the test gave up on us) must not turn into a panic.
        let _ = writeln!(stdout, "{fields}");
        let _ = stdout.flush();
    }
}

/// With `--watch`: a thread that prints `peers` when the number of participants discovered
/// changes and `endpoints` when the number matched by `matched` does, every 20 ms for the
/// life of the process (the tests that cut hosts off see who noticed).
fn watch(
    o: &Options,
    out: Out,
    p: &DomainParticipant,
    matched: impl Fn() -> usize + Send + 'static,
) {
    if !o.watch {
        return;
    }
    let p = p.clone();
    std::thread::spawn(move || {
        let (mut peers, mut endpoints) = (usize::MAX, usize::MAX);
        loop {
            let now = (p.discovered_participants().len(), matched());
            if now.0 != peers {
                peers = now.0;
                out.emit("peers", json!({ "participants": peers }));
            }
            if now.1 != endpoints {
                endpoints = now.1;
                out.emit("endpoints", json!({ "matched": endpoints }));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

fn participant(o: &Options) -> ferrodds::Result<DomainParticipant> {
    // UDP only: the tests that run it put loss and faults on the network between peers
    // of one host, which shared memory would go around.
    let mut b = DomainParticipant::builder()?
        .domain_id(o.domain)
        .interface(&o.interface)?
        .allow_multicast(o.multicast)
        .in_process(false)
        .shared_memory(false);
    if let Some(lease) = o.lease {
        b = b.lease_duration(lease);
    }
    b.build()
}

/// Runs the role in `args` (`pub ...` or `sub ...`); the process exit code.
pub(crate) fn run(args: &[String]) -> i32 {
    let out = Out {
        start: Instant::now(),
    };
    let o = match Options::parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("robust_peer: {e}");
            return 4;
        }
    };
    let result = match (o.role.as_str(), o.kind) {
        ("pub", Kind::Reading) => publish(&o, &out, reading),
        ("pub", Kind::Blob) => publish(&o, &out, |i| blob(i, o.size)),
        (_, Kind::Reading) => subscribe(&o, &out, |s: &Reading| {
            let i = i32::try_from(s.stamp - READING_BASE_STAMP).ok()?;
            (*s == reading(i)).then_some(i)
        }),
        (_, Kind::Blob) => subscribe(&o, &out, |s: &Blob| {
            let intact = s.data.len() == o.size
                && s.data
                    .iter()
                    .enumerate()
                    .all(|(k, b)| *b == blob_byte(s.id, k));
            intact.then_some(s.id)
        }),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            out.emit("error", json!({ "error": e.to_string() }));
            eprintln!("robust_peer: {e}");
            4
        }
    }
}

fn publish<T: Cdr + 'static>(
    o: &Options,
    out: &Out,
    make: impl Fn(i32) -> T,
) -> ferrodds::Result<i32> {
    let p = participant(o)?;
    let topic = p.create_topic::<T>(&o.topic)?;
    let mut qos = Qos::writer()
        .reliable()
        .keep_all()
        .max_blocking_time(o.max_blocking);
    if o.transient_local {
        qos = qos.transient_local();
    }
    if let Some(n) = o.max_samples {
        qos = qos.max_samples(n);
    }
    let writer = p.create_writer(&topic, qos)?;
    let watched = writer.clone();
    watch(o, *out, &p, move || watched.matched_subscriptions().len());
    out.emit(
        "started",
        json!({ "role": "pub", "pid": std::process::id(), "guid": format!("{:?}", writer.guid()) }),
    );
    if o.readers > 0 {
        writer.wait_for_matched(o.readers, o.match_timeout)?;
        out.emit(
            "matched",
            json!({ "readers": writer.matched_subscriptions().len() }),
        );
    }
    let first_write = out.ms();
    let mut blocked = 0u64;
    for n in 0..o.count {
        if n > 0 && !o.period.is_zero() {
            std::thread::sleep(o.period);
        }
        let i = i32::try_from(o.first + n).unwrap_or(i32::MAX);
        let sample = make(i);
        // KEEP_ALL: a full history makes write wait up to max_blocking_time; keep trying
        // (bounded by the acknowledgment timeout) and count how often it timed out.
        let deadline = Instant::now() + o.ack_timeout;
        loop {
            match writer.write(&sample) {
                Ok(()) => break,
                Err(Error::Timeout(..)) if Instant::now() < deadline => blocked += 1,
                Err(e) => return Err(e),
            }
        }
        if o.progress_every > 0 && (n + 1) % o.progress_every == 0 {
            out.emit("progress", json!({ "written": n + 1 }));
        }
    }
    out.emit(
        "written",
        json!({ "written": o.count, "first_write_ms": first_write, "write_timeouts": blocked }),
    );
    let acked = writer.wait_for_acknowledgments(o.ack_timeout).is_ok();
    out.emit(
        "acked",
        json!({ "acked": acked, "readers": writer.matched_subscriptions().len() }),
    );
    std::thread::sleep(o.linger);
    let stats = p.receive_stats();
    out.emit(
        "done",
        json!({ "acked": acked, "write_timeouts": blocked, "datagrams_received": stats.datagrams }),
    );
    Ok(if acked { 0 } else { 3 })
}

/// What the subscriber checks per writer.
#[derive(Default)]
struct PerWriter {
    next: i64,
    last_sequence_number: i64,
}

fn subscribe<T: Cdr + 'static>(
    o: &Options,
    out: &Out,
    check: impl Fn(&T) -> Option<i32>,
) -> ferrodds::Result<i32> {
    let p = participant(o)?;
    let topic = p.create_topic::<T>(&o.topic)?;
    let mut qos = Qos::reader().reliable().keep_all();
    if o.transient_local {
        qos = qos.transient_local();
    }
    let reader: DataReader<T> = p.create_reader(&topic, qos)?;
    let watched = reader.clone();
    watch(o, *out, &p, move || watched.matched_publications().len());
    out.emit(
        "started",
        json!({ "role": "sub", "pid": std::process::id(), "guid": format!("{:?}", reader.guid()) }),
    );
    let deadline = Instant::now() + o.timeout;
    let mut writers: BTreeMap<InstanceHandle, PerWriter> = BTreeMap::new();
    let (mut received, mut duplicates, mut out_of_order, mut corrupt, mut invalid) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut first_ms, mut last_ms) = (None, None);
    let mut matched_reported = false;
    let mut problems: Vec<String> = Vec::new();
    while received < u64::from(o.count) && Instant::now() < deadline {
        if !matched_reported && !reader.matched_publications().is_empty() {
            matched_reported = true;
            out.emit(
                "matched",
                json!({ "writers": reader.matched_publications().len() }),
            );
        }
        if !reader.wait_for_data(Duration::from_millis(100)) {
            continue;
        }
        for s in reader.take()? {
            let Some(data) = &s.data else {
                invalid += 1;
                continue;
            };
            let w = writers
                .entry(s.info.publication_handle)
                .or_insert_with(|| PerWriter {
                    next: i64::from(o.first),
                    last_sequence_number: 0,
                });
            let Some(i) = check(data) else {
                corrupt += 1;
                if problems.len() < 10 {
                    problems.push(format!("corrupt sample after {}", w.next - 1));
                }
                continue;
            };
            let i = i64::from(i);
            if i < w.next || s.info.sequence_number <= w.last_sequence_number {
                duplicates += 1;
                if problems.len() < 10 {
                    problems.push(format!("sample {i} again (expected {})", w.next));
                }
                continue;
            }
            if i > w.next {
                out_of_order += 1;
                if problems.len() < 10 {
                    problems.push(format!("sample {i} where {} was due", w.next));
                }
            }
            w.next = i + 1;
            w.last_sequence_number = s.info.sequence_number;
            received += 1;
            first_ms.get_or_insert(out.ms());
            last_ms = Some(out.ms());
            if o.progress_every > 0 && received % u64::from(o.progress_every) == 0 {
                out.emit("progress", json!({ "received": received }));
            }
        }
    }
    let complete = received == u64::from(o.count);
    let clean = duplicates == 0 && out_of_order == 0 && corrupt == 0;
    let stats = p.receive_stats();
    out.emit(
        "done",
        json!({
            "received": received,
            "expected": o.count,
            "complete": complete,
            "duplicates": duplicates,
            "out_of_order": out_of_order,
            "corrupt": corrupt,
            "invalid": invalid,
            "writers": writers.len(),
            "first_ms": first_ms,
            "last_ms": last_ms,
            "problems": problems,
            "datagrams_received": stats.datagrams,
        }),
    );
    std::thread::sleep(o.linger);
    Ok(if complete && clean { 0 } else { 1 })
}

#[allow(dead_code)] // when the tests include this file as a module
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(run(&args));
}
