//! `ferrodds perf ping`: round trips to every peer that answers.
//!
//! As ddsperf: a ping is a sample on the ping topic written with its source timestamp's
//! lowest bit set; peers write it back on their pong writer for us (our GUID as the
//! partition). Without `--rate`, the next ping goes out as soon as every ready peer
//! answered the last one (from the pong listener, as ddsperf does), or after 1 s (a
//! "timeout"). With `--rate`, pings go out on a timer whatever comes back.
//!
//! The round trip is measured here with the monotonic clock, from just before the write
//! to the pong's arrival in the listener; ddsperf computes the same from the echoed
//! source timestamp and prints half of it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ferrodds::{DataWriter, Sample};
use serde_json::json;

use super::node::{now_nanos, system_time, writer_prefix, Node};
use super::report::Reporter;
use super::stats::{fmt_rate, CpuTime, Latency};
use super::types::PerfSample;
use super::{run_loop, Settings, Stop, Tick, Trigger};

/// How a ping run goes.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Pings per second, or `None` for one at a time.
    pub(crate) rate: Option<f64>,
    /// KeyedSeq's sequence length.
    pub(crate) baggage: usize,
    /// Stop after this many round trips.
    pub(crate) count: Option<u64>,
}

/// How many recent pings' send times are kept (pongs to older ones are not timed).
const RING: usize = 4096;

/// Without a rate: how long to wait for every pong before sending a new ping.
const PING_TIMEOUT: Duration = Duration::from_secs(1);

struct State {
    /// Send time of recent pings, by sequence number modulo [`RING`].
    sent: Vec<Option<(u32, Instant)>>,
    /// The last ping sent (one-at-a-time mode), when, and how many pongs it awaits.
    current: Option<(u32, Instant)>,
    expected: usize,
    seen: usize,
    interval: Latency,
    total: Latency,
    interval_roundtrips: u64,
    roundtrips: u64,
    /// Pongs to pings we no longer (or never) sent.
    untimed: u64,
    timeouts: u64,
    peers: HashSet<[u8; 12]>,
}

struct Pinger<T> {
    writer: DataWriter<T>,
    state: Mutex<State>,
    /// Peers ready to answer, refreshed by the main loop.
    ready: AtomicUsize,
    one_at_a_time: bool,
    count: Option<u64>,
    stop: Stop,
}

impl<T: PerfSample> Pinger<T> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes ping `seq` (the sample's sequence number is set here).
    fn send(&self, mut sample: T, seq: u32) {
        sample.set_seq(seq);
        let now = Instant::now();
        {
            let mut st = self.lock();
            st.sent[seq as usize % RING] = Some((seq, now));
            st.current = Some((seq, now));
            st.expected = self.ready.load(Ordering::Relaxed).max(1);
            st.seen = 0;
        }
        // Our lock is released: a write may run listeners, ours included.
        let ts = system_time(now_nanos() | 1);
        if let Err(e) = self.writer.write_with_timestamp(&sample, ts) {
            if !matches!(e, ferrodds::Error::Timeout(..)) {
                self.stop.fail(format!("cannot write a ping: {e}"));
            }
        }
    }

    /// Handles pongs (from the listener or the waiting thread).
    fn on_pongs(&self, samples: Vec<Sample<T>>) {
        let now = Instant::now();
        let mut next = None;
        {
            let mut st = self.lock();
            for s in samples {
                let Some(data) = s.data else {
                    continue;
                };
                let seq = data.seq();
                match st.sent[seq as usize % RING] {
                    Some((sent_seq, at)) if sent_seq == seq => {
                        let rtt = now.saturating_duration_since(at);
                        st.interval.record(rtt);
                        st.total.record(rtt);
                        st.interval_roundtrips += 1;
                        st.roundtrips += 1;
                        st.peers.insert(writer_prefix(&s.info));
                    }
                    _ => st.untimed += 1,
                }
                if self.one_at_a_time && st.current.is_some_and(|(c, _)| c == seq) {
                    st.seen += 1;
                    if st.seen >= st.expected {
                        next = Some((data, seq.wrapping_add(1)));
                    }
                }
            }
            if self.count.is_some_and(|c| st.roundtrips >= c) {
                self.stop.stop();
                next = None;
            }
        }
        if let Some((sample, seq)) = next {
            if !self.stop.is_stopped() {
                self.send(sample, seq);
            }
        }
    }
}

/// Runs `ping` until the duration, the count, or a signal ends it.
pub(crate) fn run<T: PerfSample>(
    settings: &Settings,
    config: &Config,
    stop: &Stop,
) -> Result<(), String> {
    let node = Node::<T>::new(settings, false)?;
    let reporter = Reporter::new(settings.json, "ping", settings.duration, config.count);
    let pinger = Arc::new(Pinger {
        writer: node.ping_writer.clone(),
        state: Mutex::new(State {
            sent: vec![None; RING],
            current: None,
            expected: 1,
            seen: 0,
            interval: Latency::new(),
            total: Latency::new(),
            interval_roundtrips: 0,
            roundtrips: 0,
            untimed: 0,
            timeouts: 0,
            peers: HashSet::new(),
        }),
        ready: AtomicUsize::new(0),
        one_at_a_time: config.rate.is_none(),
        count: config.count,
        stop: stop.clone(),
    });

    let reader = node.pong_reader.clone();
    let p = Arc::clone(&pinger);
    let take = move || {
        if let Ok(samples) = reader.take() {
            p.on_pongs(samples);
        }
    };
    match settings.trigger {
        Trigger::Listener => node.pong_reader.set_data_available_listener(take),
        Trigger::Waitset => {
            let reader = node.pong_reader.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.is_stopped() {
                    if reader.wait_for_data(Duration::from_millis(100)) {
                        take();
                    }
                }
            });
        }
    }

    if let Some(rate) = config.rate {
        let p = Arc::clone(&pinger);
        let stop = stop.clone();
        let baggage = config.baggage;
        std::thread::spawn(move || {
            let period = Duration::from_secs_f64(1.0 / rate);
            let mut next = Instant::now();
            let mut seq = 0u32;
            while !stop.is_stopped() {
                if p.ready.load(Ordering::Relaxed) > 0 {
                    p.send(T::make(seq, 0, baggage), seq);
                    seq = seq.wrapping_add(1);
                }
                next += period;
                let now = Instant::now();
                if next < now {
                    // Fell behind (a slow write, a descheduled thread): do not catch up.
                    next = now;
                }
                std::thread::sleep(next - now);
            }
        });
    }

    reporter.note(&format!(
        "ferrodds perf ping: domain {}, topic DDSPerf{}Ping{}, size {} bytes, waiting for peers",
        settings.domain,
        if settings.reliable { 'R' } else { 'U' },
        T::SUFFIX,
        T::make(0, 0, config.baggage).size()
    ));
    let start = Instant::now();
    let cpu_start = CpuTime::now();
    let mut cpu_last = cpu_start;
    let mut next_seq = 0u32;
    run_loop(
        stop,
        settings.duration,
        super::PING_MAINTAIN,
        |tick| match tick {
            Tick::Maintain => {
                node.maintain();
                let ready = node.ready_peers().len();
                pinger.ready.store(ready, Ordering::Relaxed);
                if !pinger.one_at_a_time || ready == 0 {
                    return;
                }
                let resend = {
                    let mut st = pinger.lock();
                    match st.current {
                        None => true,
                        Some((_, at)) if at.elapsed() >= PING_TIMEOUT => {
                            if st.seen < st.expected {
                                st.timeouts += 1;
                            }
                            true
                        }
                        Some(_) => false,
                    }
                };
                if resend {
                    let seq = pinger
                        .lock()
                        .current
                        .map_or(next_seq, |(c, _)| c.wrapping_add(1));
                    next_seq = seq.wrapping_add(1);
                    pinger.send(T::make(seq, 0, config.baggage), seq);
                }
            }
            Tick::Second(dt) => {
                let (summary, n, timeouts, peers, total) = {
                    let mut st = pinger.lock();
                    let summary = st.interval.summary();
                    st.interval.reset();
                    let n = std::mem::take(&mut st.interval_roundtrips);
                    (summary, n, st.timeouts, st.peers.len(), st.roundtrips)
                };
                reporter.progress(if config.count.is_some() { total } else { 0 });
                let cpu_now = CpuTime::now();
                let cpu = cpu_now.since(cpu_last);
                cpu_last = cpu_now;
                let Some(s) = summary else {
                    return;
                };
                let t = reporter.elapsed();
                let rate = n as f64 / dt.as_secs_f64();
                reporter.emit(
                &format!(
                    "{t:8.3} ping {n} round trips ({}/s) from {peers} peer(s): rtt {}, half p50 {:.2} µs, timeouts {timeouts}, cpu {:.0}%",
                    fmt_rate(rate).trim_end(),
                    s.short_text(),
                    s.p50 / 2.0,
                    cpu.percent_of(dt)
                ),
                &json!({
                    "mode": "ping", "kind": "interval", "t": super::stats::round3(t),
                    "roundtrips": n, "rate": super::stats::round3(rate), "peers": peers,
                    "rtt_us": s.json(), "half_rtt_us": s.halved().json(),
                    "timeouts": timeouts, "cpu": cpu.json(dt),
                }),
            );
            }
        },
    );
    node.close();
    reporter.finish();

    let wall = start.elapsed();
    let cpu = CpuTime::now().since(cpu_start);
    let st = pinger.lock();
    let size = T::make(0, 0, config.baggage).size();
    let rate = st.roundtrips as f64 / wall.as_secs_f64();
    let summary = st.total.summary();
    let mut text = format!(
        "ping summary: {} round trips in {:.2} s ({}/s) from {} peer(s), size {size} bytes, {} timeouts, {} untimed pongs\n",
        st.roundtrips,
        wall.as_secs_f64(),
        fmt_rate(rate).trim_end(),
        st.peers.len(),
        st.timeouts,
        st.untimed
    );
    if let Some(s) = summary {
        text += &format!("  round trip       {}\n", s.text());
        text += &format!(
            "  half round trip  {} (what ddsperf prints)\n",
            s.halved().text()
        );
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
            "mode": "ping", "kind": "summary", "datagrams": node.datagrams(), "seconds": super::stats::round3(wall.as_secs_f64()),
            "roundtrips": st.roundtrips, "rate": super::stats::round3(rate),
            "peers": st.peers.len(), "size": size, "timeouts": st.timeouts, "untimed": st.untimed,
            "rtt_us": summary.map(|s| s.json()), "half_rtt_us": summary.map(|s| s.halved().json()),
            "cpu": cpu.json(wall), "pings_answered": node.pings_answered.load(Ordering::Relaxed),
            "peer_prefixes": st.peers.iter().map(|p| p.iter().map(|b| format!("{b:02x}")).collect::<String>()).collect::<Vec<_>>(),
        }),
    );
    if st.roundtrips == 0 && stop.error().is_none() {
        return Err("ping: no round trip: no peer answered".into());
    }
    Ok(())
}
