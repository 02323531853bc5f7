//! `ferrodds perf sub`: receives `DDSPerf{R,U}Data<T>` and counts samples, bytes (the size
//! ddsperf reports: the fixed part plus the sequence) and samples lost, from sequence gaps
//! per writer and key value as ddsperf's `check_eseq` finds them. A data sample whose source
//! timestamp has its lowest bit set is a ping (ddsperf `pub … ping X%`) and is answered on
//! the writer's participant's pong writer, with that bit cleared.
//!
//! Loss counts samples: where ddsperf, with `-n` keys, adds the sequence-number distance
//! (`n` per lost sample), this adds one.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ferrodds::{DataReader, Sample};
use serde_json::json;

use super::node::{now_nanos, source_nanos, system_time, writer_prefix, Node, PongWriters};
use super::report::Reporter;
use super::stats::{fmt_rate, round3, CpuTime, Latency, SeqCheck, SequenceTracker};
use super::types::PerfSample;
use super::{run_loop, History, Settings, Stop, Tick, Trigger};

/// How a sub run goes.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Measure one-way latency from source timestamps.
    pub(crate) latency: bool,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    received: u64,
    bytes: u64,
    lost: u64,
    late: u64,
}

struct State {
    tracker: SequenceTracker,
    total: Counts,
    interval: Counts,
    last_size: u32,
    interval_latency: Latency,
    total_latency: Latency,
    pings_answered: u64,
    /// When the first and the last data arrived.
    first: Option<Instant>,
    last: Option<Instant>,
}

struct Subscriber<T> {
    state: Mutex<State>,
    pong_writers: Arc<PongWriters<T>>,
    latency: bool,
    keys: u32,
    stop: Stop,
}

impl<T: PerfSample> Subscriber<T> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn on_data(&self, samples: &[Sample<T>]) {
        let now = now_nanos();
        let arrival = Instant::now();
        let mut pings = Vec::new();
        {
            let mut st = self.lock();
            st.first.get_or_insert(arrival);
            st.last = Some(arrival);
            for s in samples {
                let Some(data) = &s.data else {
                    continue;
                };
                let size = data.size();
                match st
                    .tracker
                    .check(s.info.publication_handle.0, data.seq(), data.keyval())
                {
                    SeqCheck::InOrder => {}
                    SeqCheck::Gap(n) => {
                        st.total.lost += n;
                        st.interval.lost += n;
                    }
                    SeqCheck::Late => {
                        st.total.late += 1;
                        st.interval.late += 1;
                    }
                    SeqCheck::KeyOutOfRange => {
                        self.stop.fail(format!(
                            "sub: received key value {} but --keys is {}: give sub at least the publisher's number of keys",
                            data.keyval(),
                            self.keys
                        ));
                        return;
                    }
                }
                let st = &mut *st;
                for c in [&mut st.total, &mut st.interval] {
                    c.received += 1;
                    c.bytes += u64::from(size);
                }
                st.last_size = size;
                let source = source_nanos(&s.info);
                if self.latency {
                    if let Some(sent) = source {
                        let d = Duration::from_nanos(now.saturating_sub(sent));
                        st.interval_latency.record(d);
                        st.total_latency.record(d);
                    }
                }
                if let Some(ts) = source.filter(|ts| ts & 1 == 1) {
                    pings.push((writer_prefix(&s.info), data.clone(), ts & !1));
                }
            }
            st.pings_answered += pings.len() as u64;
        }
        // Our lock is released: writes may run listeners.
        for (prefix, data, ts) in pings {
            if let Some(w) = self.pong_writers.get(prefix) {
                let _ = w.write_with_timestamp(&data, system_time(ts));
            }
        }
    }
}

fn start_taking<T: PerfSample>(
    reader: &DataReader<T>,
    sub: &Arc<Subscriber<T>>,
    trigger: Trigger,
    stop: &Stop,
) {
    let r = reader.clone();
    let s = Arc::clone(sub);
    // ddsperf takes up to 1000 samples at a time. Into the same slots each time
    // (`take_into`): their buffers are refilled, not allocated anew for every sample.
    let slots = Mutex::new(Vec::new());
    let take = move || {
        let mut slots = slots.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match r.take_into(&mut slots, 1000) {
                0 => break,
                n => s.on_data(&slots[..n]),
            }
        }
    };
    match trigger {
        Trigger::Listener => reader.set_data_available_listener(take),
        Trigger::Waitset => {
            let r = reader.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.is_stopped() {
                    if r.wait_for_data(Duration::from_millis(100)) {
                        take();
                    }
                }
            });
        }
    }
}

/// Runs `sub` until the duration or a signal ends it.
pub(crate) fn run<T: PerfSample>(
    settings: &Settings,
    config: &Config,
    stop: &Stop,
) -> Result<(), String> {
    let node = Node::<T>::new(settings, true)?;
    let reader = node
        .data_reader
        .clone()
        .ok_or("sub: no data reader was created")?;
    let reporter = Reporter::new(settings.json, "sub", settings.duration, None);
    let sub = Arc::new(Subscriber {
        state: Mutex::new(State {
            tracker: SequenceTracker::new(settings.keys),
            total: Counts::default(),
            interval: Counts::default(),
            last_size: 0,
            interval_latency: Latency::new(),
            total_latency: Latency::new(),
            pings_answered: 0,
            first: None,
            last: None,
        }),
        pong_writers: Arc::clone(&node.pong_writers),
        latency: config.latency,
        keys: settings.keys,
        stop: stop.clone(),
    });
    start_taking(&reader, &sub, settings.trigger, stop);
    reporter.note(&format!(
        "ferrodds perf sub: domain {}, topic DDSPerf{}Data{}, {} key(s), waiting for data",
        settings.domain,
        if settings.reliable { 'R' } else { 'U' },
        T::SUFFIX,
        settings.keys
    ));

    let start = Instant::now();
    let cpu_start = CpuTime::now();
    let mut cpu_last = cpu_start;
    run_loop(
        stop,
        settings.duration,
        super::MAINTAIN,
        |tick| match tick {
            Tick::Maintain => node.maintain(),
            Tick::Second(dt) => {
                reporter.progress(0);
                let (c, total, size, writers, latency) = {
                    let mut st = sub.lock();
                    let c = std::mem::take(&mut st.interval);
                    let latency = st.interval_latency.summary();
                    st.interval_latency.reset();
                    (c, st.total, st.last_size, st.tracker.writers(), latency)
                };
                let cpu_now = CpuTime::now();
                let cpu = cpu_now.since(cpu_last);
                cpu_last = cpu_now;
                if c.received == 0 {
                    return;
                }
                let t = reporter.elapsed();
                let secs = dt.as_secs_f64();
                let rate = c.received as f64 / secs;
                let mbps = c.bytes as f64 / secs / 1e6;
                let lat =
                    latency.map_or(String::new(), |l| format!(", latency {}", l.short_text()));
                reporter.emit(
                &format!(
                    "{t:8.3} sub {} samples ({}samples/s, {mbps:.2} MB/s, {:.2} Mb/s), lost {}, size {size}, total {} lost {} from {writers} writer(s){lat}, cpu {:.0}%",
                    c.received,
                    fmt_rate(rate),
                    mbps * 8.0,
                    c.lost,
                    total.received,
                    total.lost,
                    cpu.percent_of(dt)
                ),
                &json!({
                    "mode": "sub", "kind": "interval", "t": round3(t), "samples": c.received,
                    "rate": round3(rate), "mb_per_s": round3(mbps), "lost": c.lost,
                    "late": c.late, "size": size, "total": total.received,
                    "total_lost": total.lost, "writers": writers,
                    "latency_us": latency.map(|l| l.json()), "cpu": cpu.json(dt),
                }),
            );
            }
        },
    );
    node.close();
    reporter.finish();

    let wall = start.elapsed();
    let cpu = CpuTime::now().since(cpu_start);
    let st = sub.lock();
    // Rates over the time data flowed, from the first sample to the last.
    let receiving = match (st.first, st.last) {
        (Some(first), Some(last)) => last - first,
        _ => wall,
    }
    .max(Duration::from_millis(1));
    let secs = receiving.as_secs_f64();
    let rate = st.total.received as f64 / secs;
    let mbps = st.total.bytes as f64 / secs / 1e6;
    let latency = st.total_latency.summary();
    let mut text = format!(
        "sub summary: {} samples ({} bytes) from {} writer(s) in {secs:.2} s from the first to the last ({}samples/s, {mbps:.2} MB/s), lost {}, late {}, pings answered {}\n",
        st.total.received,
        st.total.bytes,
        st.tracker.writers(),
        fmt_rate(rate),
        st.total.lost,
        st.total.late,
        st.pings_answered
    );
    if let Some(l) = latency {
        text += &format!("  one-way latency  {}\n", l.text());
    }
    text += &format!(
        "  cpu user {:.2} s, system {:.2} s ({:.0}% of one core over {:.2} s)",
        cpu.user.as_secs_f64(),
        cpu.system.as_secs_f64(),
        cpu.percent_of(wall),
        wall.as_secs_f64()
    );
    reporter.emit(
        &text,
        &json!({
            "mode": "sub", "kind": "summary", "datagrams": node.datagrams(), "seconds": round3(secs),
            "samples": st.total.received, "bytes": st.total.bytes,
            "writers": st.tracker.writers(), "rate": round3(rate), "mb_per_s": round3(mbps),
            "lost": st.total.lost, "late": st.total.late, "pings_answered": st.pings_answered,
            "latency_us": latency.map(|l| l.json()), "cpu": cpu.json(wall),
        }),
    );
    // ddsperf's rule: a reliable KEEP_ALL subscriber must lose nothing.
    if st.total.lost > 0 && settings.reliable && settings.history == History::KeepAll {
        return Err(format!(
            "sub: {} samples lost on a reliable KEEP_ALL subscription",
            st.total.lost
        ));
    }
    Ok(())
}
