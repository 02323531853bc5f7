//! `ferrodds perf pub`: publishes data on `DDSPerf{R,U}Data<T>`, as ddsperf's `pubthread`
//! does: sequence numbers 0, 1, 2, … cycling through the key values, source timestamps with
//! the lowest bit clear (a set bit asks subscribers for a pong), bursts of `--burst`
//! samples at `--rate` bursts per second (averaged over the run) or as fast as `write`
//! returns. A reliable KEEP_ALL writer blocks when 10000 samples are unacknowledged.
//! Samples share datagrams (writer batching, as ddsperf turns on Cyclone's), flushed when a
//! burst is done and the rate makes the writer wait, unless `--no-batch`.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ferrodds::DataWriter;
use serde_json::json;

use super::node::{now_nanos, system_time, Node};
use super::report::Reporter;
use super::stats::{fmt_rate, round3, CpuTime, Latency};
use super::types::PerfSample;
use super::{run_loop, Settings, Stop, Tick};

/// How a pub run goes.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Bursts per second, or `None` for as fast as possible.
    pub(crate) rate: Option<f64>,
    /// Samples per burst.
    pub(crate) burst: u32,
    /// KeyedSeq's sequence length.
    pub(crate) baggage: usize,
    /// Stop after this many samples.
    pub(crate) count: Option<u64>,
}

/// How long to wait for reliable readers to acknowledge the last samples.
const LINGER_AFTER_COUNT: Duration = Duration::from_secs(10);
const LINGER_AFTER_DURATION: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Counters {
    written: u64,
    bytes: u64,
    interval_written: u64,
    interval_bytes: u64,
    timeouts: u64,
}

struct Stats {
    counters: Counters,
    interval: Latency,
    total: Latency,
}

fn lock(stats: &Mutex<Stats>) -> MutexGuard<'_, Stats> {
    stats.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes of samples under 1 KiB timed for the `write_us` figures: one in this many.
const TIMED_EVERY: u64 = 16;

/// The publishing loop (its own thread).
fn publish<T: PerfSample>(
    writer: &DataWriter<T>,
    config: &Config,
    keys: u32,
    batch: bool,
    stats: &Mutex<Stats>,
    stop: &Stop,
) -> Duration {
    let mut sample = T::make(0, 0, config.baggage);
    let size = u64::from(sample.size());
    let mut seq = 0u32;
    let mut keyval = 0u32;
    let mut total = 0u64;
    let mut in_burst = 0u32;
    let first = Instant::now();
    while !stop.is_stopped() {
        sample.set_seq(seq);
        sample.set_keyval(keyval);
        let ts = system_time(now_nanos() & !1);
        // Small samples' writes are timed one in TIMED_EVERY: two clock reads a write were a
        // tenth of a 64-byte publisher's time (ddsperf times none).
        let before = (size >= 1024 || total.is_multiple_of(TIMED_EVERY)).then(Instant::now);
        let result = writer.write_with_timestamp(&sample, ts);
        let took = before.map(|b| b.elapsed());
        match result {
            Ok(()) => {}
            Err(ferrodds::Error::Timeout(..)) => {
                // Blocked for the whole max blocking time: count it and write it again.
                lock(stats).counters.timeouts += 1;
                continue;
            }
            Err(e) => {
                stop.fail(format!("pub: cannot write: {e}"));
                return first.elapsed();
            }
        }
        {
            let mut st = lock(stats);
            st.counters.written += 1;
            st.counters.bytes += size;
            st.counters.interval_written += 1;
            st.counters.interval_bytes += size;
            if let Some(took) = took {
                st.interval.record(took);
                st.total.record(took);
            }
        }
        total += 1;
        seq = seq.wrapping_add(1);
        keyval = (keyval + 1) % keys;
        if config.count.is_some_and(|c| total >= c) {
            break;
        }
        if let Some(rate) = config.rate {
            in_burst += 1;
            if in_burst >= config.burst {
                in_burst = 0;
                // ddsperf's rule: bursts so far over the time so far (plus 5 ms) must not
                // exceed the rate.
                if batch {
                    // The burst is complete: send it now rather than after the batch delay.
                    let _ = writer.flush();
                }
                let bursts = (total / u64::from(config.burst)) as f64;
                while !stop.is_stopped() && bursts / (first.elapsed().as_secs_f64() + 5e-3) > rate {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }
    first.elapsed()
}

/// Runs `pub` until the duration, the count, or a signal ends it.
pub(crate) fn run<T: PerfSample>(
    settings: &Settings,
    config: &Config,
    stop: &Stop,
) -> Result<(), String> {
    let node = Node::<T>::new(settings, false)?;
    let reporter = Reporter::new(settings.json, "pub", settings.duration, config.count);
    let stats = Arc::new(Mutex::new(Stats {
        counters: Counters::default(),
        interval: Latency::new(),
        total: Latency::new(),
    }));
    let size = T::make(0, 0, config.baggage).size();
    reporter.note(&format!(
        "ferrodds perf pub: domain {}, topic DDSPerf{}Data{}, size {size} bytes, {} key(s), rate {}",
        settings.domain,
        if settings.reliable { 'R' } else { 'U' },
        T::SUFFIX,
        settings.keys,
        config
            .rate
            .map_or("unlimited".to_string(), |r| format!("{r} bursts of {}/s", config.burst))
    ));
    let publisher = {
        let writer = node.data_writer.clone();
        let config = config.clone();
        let stats = Arc::clone(&stats);
        let stop = stop.clone();
        let keys = settings.keys;
        let reliable = settings.reliable;
        let batch = settings.batch;
        std::thread::Builder::new()
            .name("perf-pub".into())
            .spawn(move || {
                let publishing = publish(&writer, &config, keys, batch, &stats, &stop);
                let _ = writer.flush();
                if reliable && stop.error().is_none() {
                    let linger = if config.count.is_some() {
                        LINGER_AFTER_COUNT
                    } else {
                        LINGER_AFTER_DURATION
                    };
                    // Unacknowledged samples at the end are reported by the readers.
                    let _ = writer.wait_for_acknowledgments(linger);
                }
                stop.stop();
                publishing
            })
            .map_err(|e| format!("cannot start the publishing thread: {e}"))?
    };

    let start = Instant::now();
    let cpu_start = CpuTime::now();
    let mut cpu_last = cpu_start;
    // The run loop's end (duration) stops the publisher, which then lingers for
    // acknowledgments; the summary waits for it.
    run_loop(
        stop,
        settings.duration,
        super::MAINTAIN,
        |tick| match tick {
            Tick::Maintain => node.maintain(),
            Tick::Second(dt) => {
                let (n, bytes, written, timeouts, latency) = {
                    let mut st = lock(&stats);
                    let c = &mut st.counters;
                    let n = std::mem::take(&mut c.interval_written);
                    let bytes = std::mem::take(&mut c.interval_bytes);
                    let (written, timeouts) = (c.written, c.timeouts);
                    let latency = st.interval.summary();
                    st.interval.reset();
                    (n, bytes, written, timeouts, latency)
                };
                reporter.progress(written);
                let cpu_now = CpuTime::now();
                let cpu = cpu_now.since(cpu_last);
                cpu_last = cpu_now;
                let t = reporter.elapsed();
                let secs = dt.as_secs_f64();
                let rate = n as f64 / secs;
                let mbps = bytes as f64 / secs / 1e6;
                reporter.emit(
                &format!(
                    "{t:8.3} pub {n} samples ({}samples/s, {mbps:.2} MB/s), total {written}, write {}, timeouts {timeouts}, cpu {:.0}%",
                    fmt_rate(rate),
                    latency.map_or("-".into(), |l| l.short_text()),
                    cpu.percent_of(dt)
                ),
                &json!({
                    "mode": "pub", "kind": "interval", "t": round3(t), "samples": n,
                    "rate": round3(rate), "mb_per_s": round3(mbps), "total": written,
                    "write_us": latency.map(|l| l.json()), "timeouts": timeouts,
                    "cpu": cpu.json(dt),
                }),
            );
            }
        },
    );
    stop.stop();
    let publishing = publisher.join().unwrap_or_else(|_| start.elapsed());
    node.close();
    reporter.finish();

    let cpu = CpuTime::now().since(cpu_start);
    let st = lock(&stats);
    let secs = publishing.as_secs_f64();
    let rate = st.counters.written as f64 / secs;
    let mbps = st.counters.bytes as f64 / secs / 1e6;
    let readers = node.data_writer.matched_subscriptions().len();
    let latency = st.total.summary();
    let mut text = format!(
        "pub summary: {} samples of {size} bytes in {secs:.2} s ({}samples/s, {mbps:.2} MB/s) to {readers} reader(s), {} timeouts\n",
        st.counters.written,
        fmt_rate(rate),
        st.counters.timeouts
    );
    if let Some(l) = latency {
        text += &format!("  write call       {}\n", l.text());
    }
    text += &format!(
        "  cpu user {:.2} s, system {:.2} s ({:.0}% of one core)",
        cpu.user.as_secs_f64(),
        cpu.system.as_secs_f64(),
        cpu.percent_of(publishing)
    );
    reporter.emit(
        &text,
        &json!({
            "mode": "pub", "kind": "summary", "datagrams": node.datagrams(), "seconds": round3(secs),
            "samples": st.counters.written, "size": size, "rate": round3(rate),
            "mb_per_s": round3(mbps), "readers": readers, "timeouts": st.counters.timeouts,
            "write_us": latency.map(|l| l.json()), "cpu": cpu.json(publishing),
        }),
    );
    Ok(())
}
