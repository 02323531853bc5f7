//! `ferrodds perf ping --loan` and `pong --loan`: round trips of a plain type, lent and
//! taken in place, nothing serialized or copied by FerroDDS on the way.
//!
//! The type is `@final struct ferrodds::Lent { unsigned long seq; octet data[SIZE - 4]; }`,
//! a plain type (its bytes are its encoding) of exactly `--size` bytes. The ping lends a
//! sample from its writer ([`ferrodds::DynamicWriter::loan`]: where shared memory is on, a
//! chunk of the writer's sample channel), writes its sequence number into the first four
//! bytes and nothing else, and writes the loan; the pong takes it as it lies
//! ([`ferrodds::DynamicReader::take_loaned`]), lends one of its own, copies the four bytes
//! and writes it back. So the bytes the application touches do not grow with the size:
//! what does is FerroDDS's doing. Each side waits for data in the thread that pings or
//! answers (the `waitset` trigger), reliable, KEEP_LAST 1. Not a ddsperf mode: both sides
//! must be `ferrodds perf`.

use std::time::{Duration, Instant};

use ferrodds::{
    DomainParticipant, DynamicReader, DynamicTopic, DynamicWriter, Qos, ReceivedPayload,
};
use serde_json::json;

use super::report::Reporter;
use super::stats::{fmt_rate, round3, CpuTime, Latency};
use super::{run_loop, Settings, Stop, Tick};

/// The smallest size: the sequence number and one octet.
pub(crate) const MIN_SIZE: u32 = 5;

/// How long a side waits for its peer before it gives up.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// A participant with a writer on one topic and a reader on the other.
struct Ends {
    writer: DynamicWriter,
    reader: DynamicReader,
    participant: DomainParticipant,
    size: usize,
}

/// The participant of a `--loan` run, as the common options say.
fn participant(settings: &Settings) -> Result<DomainParticipant, String> {
    super::node::participant(settings, Vec::new())
}

/// Topic `name` of `ferrodds::Lent` of `size` bytes.
fn lent_topic(p: &DomainParticipant, name: &str, size: u32) -> Result<DynamicTopic, String> {
    if size < MIN_SIZE {
        return Err(format!("--loan: --size must be at least {MIN_SIZE} bytes"));
    }
    let idl = format!(
        "module ferrodds {{ @final struct Lent {{ unsigned long seq; octet data[{}]; }}; }};",
        size - 4
    );
    let spec = ferrodds_idl::parse_str("lent.idl", &idl).map_err(|e| e.to_string())?;
    let ty =
        ferrodds_idl::dynamic::dynamic_type(&spec, "ferrodds::Lent").map_err(|e| e.to_string())?;
    p.create_dynamic_topic(name, "ferrodds::Lent", ty)
        .map_err(|e| e.to_string())
}

/// The QoS of `--loan` entities: reliable unless `-u`; `keep_all` for data, KEEP_LAST 1
/// for pings and pongs.
fn loan_qos(settings: &Settings, q: Qos, keep_all: bool) -> Qos {
    let q = if keep_all {
        q.keep_all().max_blocking_time(Duration::from_secs(10))
    } else {
        q.keep_last(1).max_blocking_time(Duration::from_secs(1))
    };
    if settings.reliable {
        q.reliable()
    } else {
        q.best_effort()
    }
}

impl Ends {
    fn new(settings: &Settings, size: u32, out: &str, inp: &str) -> Result<Ends, String> {
        let participant = participant(settings)?;
        let writer = participant
            .create_dynamic_writer(
                &lent_topic(&participant, out, size)?,
                loan_qos(settings, Qos::writer(), false),
            )
            .map_err(|e| e.to_string())?;
        let reader = participant
            .create_dynamic_reader(
                &lent_topic(&participant, inp, size)?,
                loan_qos(settings, Qos::reader(), false),
            )
            .map_err(|e| e.to_string())?;
        Ok(Ends {
            writer,
            reader,
            participant,
            size: size as usize,
        })
    }

    /// Lends a sample, writes `seq` into it, and writes it; whether it lay in shared
    /// memory.
    fn send(&self, seq: [u8; 4]) -> Result<bool, String> {
        write_lent(&self.writer, self.size, seq)
            .map_err(|e| format!("cannot write a lent sample: {e}"))
    }

    fn wait_for_peer(&self, stop: &Stop) -> Result<(), String> {
        wait_matched(
            stop,
            "a pong (`ferrodds perf pong --loan` with the same --size)",
            || {
                !self.writer.matched_subscriptions().is_empty()
                    && !self.reader.matched_publications().is_empty()
            },
        )
    }
}

/// Lends a sample of `size` bytes from `writer`, writes `seq` into its first four bytes
/// (nothing else), and writes it; whether it lay in shared memory.
fn write_lent(writer: &DynamicWriter, size: usize, seq: [u8; 4]) -> ferrodds::Result<bool> {
    let mut loan = writer.loan(size);
    loan[..4].copy_from_slice(&seq);
    let shared = loan.is_shared();
    writer.write_loan(loan)?;
    Ok(shared)
}

/// Waits until `matched` (checked every 20 ms), `stop`, or [`MATCH_TIMEOUT`]: an error
/// naming the `peer` that did not come.
fn wait_matched(stop: &Stop, peer: &str, matched: impl Fn() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + MATCH_TIMEOUT;
    while !stop.is_stopped() && !matched() {
        if Instant::now() >= deadline {
            return Err(format!(
                "--loan: no {peer} in {} s",
                MATCH_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The sequence number in a received sample (after its encapsulation header).
fn seq_of(payload: &ReceivedPayload) -> Option<[u8; 4]> {
    payload.get(4..8)?.try_into().ok()
}

#[derive(Default)]
struct Counts {
    roundtrips: u64,
    /// Pongs read where the peer wrote them (its sample channel).
    in_place: u64,
    /// Pings lent in shared memory.
    lent_shared: u64,
}

/// Runs the pinging side until the duration, the count, or a signal ends it.
pub(crate) fn run_ping(
    settings: &Settings,
    size: u32,
    count: Option<u64>,
    stop: &Stop,
) -> Result<(), String> {
    let ends = Ends::new(settings, size, "FerroDDSLoanPing", "FerroDDSLoanPong")?;
    let reporter = Reporter::new(settings.json, "ping", settings.duration, count);
    reporter.note(&format!(
        "ferrodds perf ping --loan: domain {}, size {size} bytes, waiting for a pong",
        settings.domain
    ));
    ends.wait_for_peer(stop)?;
    let state = std::sync::Mutex::new((Latency::new(), Latency::new(), Counts::default(), 0u64));
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let start = Instant::now();
    let cpu_start = CpuTime::now();
    let mut cpu_last = cpu_start;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut seq = 0u32;
            while !stop.is_stopped() {
                seq = seq.wrapping_add(1);
                let sent = Instant::now();
                let shared = match ends.send(seq.to_ne_bytes()) {
                    Ok(shared) => shared,
                    Err(e) => return stop.fail(e),
                };
                // Until the pong to this ping, or a second (then the next ping).
                let deadline = sent + Duration::from_secs(1);
                'wait: while !stop.is_stopped() && Instant::now() < deadline {
                    if !ends.reader.wait_for_data(Duration::from_millis(100)) {
                        continue;
                    }
                    for s in ends.reader.take_loaned(16) {
                        let Some(data) = s.data else { continue };
                        if seq_of(&data) != Some(seq.to_ne_bytes()) {
                            continue;
                        }
                        let rtt = sent.elapsed();
                        let mut st = lock();
                        st.0.record(rtt);
                        st.1.record(rtt);
                        st.2.roundtrips += 1;
                        st.2.in_place += u64::from(data.is_shared());
                        st.2.lent_shared += u64::from(shared);
                        st.3 += 1;
                        if count.is_some_and(|c| st.2.roundtrips >= c) {
                            stop.stop();
                        }
                        break 'wait;
                    }
                }
            }
        });
        run_loop(stop, settings.duration, super::MAINTAIN, |tick| {
            let Tick::Second(dt) = tick else { return };
            let (summary, n, total) = {
                let mut st = lock();
                let summary = st.0.summary();
                st.0.reset();
                (summary, std::mem::take(&mut st.3), st.2.roundtrips)
            };
            reporter.progress(if count.is_some() { total } else { 0 });
            let cpu_now = CpuTime::now();
            let cpu = cpu_now.since(cpu_last);
            cpu_last = cpu_now;
            let Some(s) = summary else { return };
            let t = reporter.elapsed();
            let rate = n as f64 / dt.as_secs_f64();
            reporter.emit(
                &format!(
                    "{t:8.3} ping --loan {n} round trips ({}/s): rtt {}, cpu {:.0}%",
                    fmt_rate(rate).trim_end(),
                    s.short_text(),
                    cpu.percent_of(dt)
                ),
                &json!({
                    "mode": "ping", "kind": "interval", "loan": true, "t": round3(t),
                    "roundtrips": n, "rate": round3(rate), "peers": 1,
                    "rtt_us": s.json(), "half_rtt_us": s.halved().json(), "timeouts": 0,
                    "cpu": cpu.json(dt),
                }),
            );
        });
    });
    reporter.finish();
    let wall = start.elapsed();
    let cpu = CpuTime::now().since(cpu_start);
    let st = lock();
    let summary = st.1.summary();
    let c = &st.2;
    let rate = c.roundtrips as f64 / wall.as_secs_f64();
    let mut text = format!(
        "ping --loan summary: {} round trips in {:.2} s ({}/s), size {size} bytes; pings lent in shared memory {}, pongs read in place {}\n",
        c.roundtrips,
        wall.as_secs_f64(),
        fmt_rate(rate).trim_end(),
        c.lent_shared,
        c.in_place
    );
    if let Some(s) = summary {
        text += &format!("  round trip       {}\n", s.text());
    }
    text += &format!(
        "  cpu user {:.2} s, system {:.2} s ({:.0}% of one core)",
        cpu.user.as_secs_f64(),
        cpu.system.as_secs_f64(),
        cpu.percent_of(wall)
    );
    reporter.emit(
        &text,
        &json!({
            "mode": "ping", "kind": "summary", "loan": true,
            "datagrams": super::node::datagrams(&ends.participant),
            "seconds": round3(wall.as_secs_f64()), "roundtrips": c.roundtrips,
            "rate": round3(rate), "peers": 1, "size": size, "timeouts": 0, "untimed": 0,
            "lent_shared": c.lent_shared, "in_place": c.in_place,
            "rtt_us": summary.map(|s| s.json()), "half_rtt_us": summary.map(|s| s.halved().json()),
            "cpu": cpu.json(wall),
        }),
    );
    if c.roundtrips == 0 && stop.error().is_none() {
        return Err("ping --loan: no round trip: the pong did not answer".into());
    }
    Ok(())
}

/// Runs the answering side until the duration or a signal ends it.
pub(crate) fn run_pong(settings: &Settings, size: u32, stop: &Stop) -> Result<(), String> {
    let ends = Ends::new(settings, size, "FerroDDSLoanPong", "FerroDDSLoanPing")?;
    let reporter = Reporter::new(settings.json, "pong", settings.duration, None);
    reporter.note(&format!(
        "ferrodds perf pong --loan: domain {}, size {size} bytes, answering pings",
        settings.domain
    ));
    let answered = std::sync::atomic::AtomicU64::new(0);
    let in_place = std::sync::atomic::AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.is_stopped() {
                if !ends.reader.wait_for_data(Duration::from_millis(100)) {
                    continue;
                }
                for s in ends.reader.take_loaned(16) {
                    let Some(data) = s.data else { continue };
                    let Some(seq) = seq_of(&data) else { continue };
                    let shared = data.is_shared();
                    // Given back before the answer: the writer may reuse it at once.
                    drop(data);
                    if let Err(e) = ends.send(seq) {
                        return stop.fail(e);
                    }
                    answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    in_place.fetch_add(u64::from(shared), std::sync::atomic::Ordering::Relaxed);
                }
            }
        });
        run_loop(stop, settings.duration, super::MAINTAIN, |_| {});
    });
    reporter.finish();
    let total = answered.load(std::sync::atomic::Ordering::Relaxed);
    let wall = start.elapsed();
    reporter.emit(
        &format!(
            "pong --loan summary: answered {total} pings in {:.2} s, {} read in place",
            wall.as_secs_f64(),
            in_place.load(std::sync::atomic::Ordering::Relaxed)
        ),
        &json!({
            "mode": "pong", "kind": "summary", "loan": true, "answered": total,
            "in_place": in_place.load(std::sync::atomic::Ordering::Relaxed),
            "seconds": round3(wall.as_secs_f64()),
        }),
    );
    Ok(())
}

/// The data topic of `pub --loan` and `sub --loan`.
const DATA_TOPIC: &str = "FerroDDSLoanData";

/// Runs `pub --loan`: lends samples of `size` bytes, writes the sequence number into each
/// and writes it, as fast as the writer takes them (reliable KEEP_ALL: a write waits while
/// the readers lag), until the duration or a signal ends it.
pub(crate) fn run_pub(settings: &Settings, size: u32, stop: &Stop) -> Result<(), String> {
    let p = participant(settings)?;
    let writer = p
        .create_dynamic_writer(
            &lent_topic(&p, DATA_TOPIC, size)?,
            loan_qos(settings, Qos::writer(), true),
        )
        .map_err(|e| e.to_string())?;
    let reporter = Reporter::new(settings.json, "pub", settings.duration, None);
    reporter.note(&format!(
        "ferrodds perf pub --loan: domain {}, size {size} bytes, waiting for a subscriber",
        settings.domain
    ));
    wait_matched(stop, "subscriber", || {
        !writer.matched_subscriptions().is_empty()
    })?;
    let written = std::sync::atomic::AtomicU64::new(0);
    let lent_shared = std::sync::atomic::AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut seq = 0u32;
            while !stop.is_stopped() {
                seq = seq.wrapping_add(1);
                let shared = match write_lent(&writer, size as usize, seq.to_ne_bytes()) {
                    Ok(shared) => shared,
                    Err(ferrodds::Error::Timeout(..)) => continue,
                    Err(e) => return stop.fail(format!("cannot write a lent sample: {e}")),
                };
                written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                lent_shared.fetch_add(u64::from(shared), std::sync::atomic::Ordering::Relaxed);
            }
        });
        run_loop(stop, settings.duration, super::MAINTAIN, |_| {});
    });
    // What was written reaches the subscriber before the writer goes (as `pub --count`).
    let _ = writer.wait_for_acknowledgments(Duration::from_secs(10));
    reporter.finish();
    let total = written.load(std::sync::atomic::Ordering::Relaxed);
    let secs = start.elapsed().as_secs_f64();
    reporter.emit(
        &format!(
            "pub --loan summary: {total} samples in {secs:.2} s ({}/s), {} lent in shared memory",
            fmt_rate(total as f64 / secs).trim_end(),
            lent_shared.load(std::sync::atomic::Ordering::Relaxed)
        ),
        &json!({
            "mode": "pub", "kind": "summary", "loan": true, "samples": total,
            "seconds": round3(secs), "rate": round3(total as f64 / secs),
            "lent_shared": lent_shared.load(std::sync::atomic::Ordering::Relaxed),
            "datagrams": super::node::datagrams(&p),
        }),
    );
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct SubCounts {
    received: u64,
    lost: u64,
    in_place: u64,
}

/// Runs `sub --loan`: takes what `pub --loan` writes where it lies, reads each sample's
/// sequence number (and nothing else), and counts samples, samples read in place, and
/// samples lost (sequence gaps per writer), each second.
pub(crate) fn run_sub(settings: &Settings, size: u32, stop: &Stop) -> Result<(), String> {
    let p = participant(settings)?;
    let reader = p
        .create_dynamic_reader(
            &lent_topic(&p, DATA_TOPIC, size)?,
            loan_qos(settings, Qos::reader(), true),
        )
        .map_err(|e| e.to_string())?;
    let reporter = Reporter::new(settings.json, "sub", settings.duration, None);
    reporter.note(&format!(
        "ferrodds perf sub --loan: domain {}, size {size} bytes, waiting for data",
        settings.domain
    ));
    // (interval, total, last sequence number per writer)
    let state = std::sync::Mutex::new((
        SubCounts::default(),
        SubCounts::default(),
        std::collections::HashMap::<[u8; 16], u32>::new(),
    ));
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.is_stopped() {
                if !reader.wait_for_data(Duration::from_millis(100)) {
                    continue;
                }
                let taken = reader.take_loaned(256);
                let mut guard = lock();
                let st = &mut *guard;
                for s in taken {
                    let Some(data) = s.data else { continue };
                    let Some(seq) = seq_of(&data) else { continue };
                    let seq = u32::from_ne_bytes(seq);
                    let lost = match st.2.insert(s.info.publication_handle.0, seq) {
                        Some(prev) => u64::from(seq.wrapping_sub(prev).saturating_sub(1)),
                        None => 0,
                    };
                    for c in [&mut st.0, &mut st.1] {
                        c.received += 1;
                        c.lost += lost;
                        c.in_place += u64::from(data.is_shared());
                    }
                }
            }
        });
        run_loop(stop, settings.duration, super::MAINTAIN, |tick| {
            let Tick::Second(dt) = tick else { return };
            let (c, total, writers) = {
                let mut st = lock();
                (std::mem::take(&mut st.0), st.1, st.2.len())
            };
            if c.received == 0 {
                return;
            }
            let t = reporter.elapsed();
            let rate = c.received as f64 / dt.as_secs_f64();
            let mbps = rate * f64::from(size) / 1e6;
            reporter.emit(
                &format!(
                    "{t:8.3} sub --loan {} samples ({}/s, {mbps:.0} MB/s), {} in place, lost {}",
                    c.received,
                    fmt_rate(rate).trim_end(),
                    c.in_place,
                    c.lost
                ),
                &json!({
                    "mode": "sub", "kind": "interval", "loan": true, "t": round3(t),
                    "samples": c.received, "rate": round3(rate), "mb_per_s": round3(mbps),
                    "lost": c.lost, "size": size, "total": total.received,
                    "total_lost": total.lost, "writers": writers, "in_place": c.in_place,
                }),
            );
        });
    });
    reporter.finish();
    let st = lock();
    let total = st.1;
    let secs = start.elapsed().as_secs_f64();
    reporter.emit(
        &format!(
            "sub --loan summary: {} samples, {} read in place, lost {}, from {} writer(s)",
            total.received,
            total.in_place,
            total.lost,
            st.2.len()
        ),
        &json!({
            "mode": "sub", "kind": "summary", "loan": true, "samples": total.received,
            "in_place": total.in_place, "lost": total.lost, "writers": st.2.len(),
            "seconds": round3(secs), "datagrams": super::node::datagrams(&p),
        }),
    );
    Ok(())
}
