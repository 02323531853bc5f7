//! `ferrodds perf pong`: only answers pings (every mode does; see `node.rs`), and says
//! how many each second.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::json;

use super::node::Node;
use super::report::Reporter;
use super::stats::{fmt_rate, round3, CpuTime};
use super::types::PerfSample;
use super::{run_loop, Settings, Stop, Tick};

/// Runs `pong` until the duration or a signal ends it.
pub(crate) fn run<T: PerfSample>(settings: &Settings, stop: &Stop) -> Result<(), String> {
    let node = Node::<T>::new(settings, false)?;
    let reporter = Reporter::new(settings.json, "pong", settings.duration, None);
    reporter.note(&format!(
        "ferrodds perf pong: domain {}, topic DDSPerf{}Ping{}, answering pings",
        settings.domain,
        if settings.reliable { 'R' } else { 'U' },
        T::SUFFIX
    ));
    let start = Instant::now();
    let cpu_start = CpuTime::now();
    let mut cpu_last = cpu_start;
    let mut last = 0u64;
    run_loop(
        stop,
        settings.duration,
        super::MAINTAIN,
        |tick| match tick {
            Tick::Maintain => node.maintain(),
            Tick::Second(dt) => {
                reporter.progress(0);
                let total = node.pings_answered.load(Ordering::Relaxed);
                let n = total - last;
                last = total;
                let cpu_now = CpuTime::now();
                let cpu = cpu_now.since(cpu_last);
                cpu_last = cpu_now;
                if n == 0 {
                    return;
                }
                let t = reporter.elapsed();
                let rate = n as f64 / dt.as_secs_f64();
                reporter.emit(
                    &format!(
                        "{t:8.3} pong answered {n} pings ({}/s), total {total}, cpu {:.0}%",
                        fmt_rate(rate).trim_end(),
                        cpu.percent_of(dt)
                    ),
                    &json!({
                        "mode": "pong", "kind": "interval", "t": round3(t), "answered": n,
                        "rate": round3(rate), "total": total, "cpu": cpu.json(dt),
                    }),
                );
            }
        },
    );
    node.close();
    reporter.finish();
    let wall = start.elapsed();
    let cpu = CpuTime::now().since(cpu_start);
    let total = node.pings_answered.load(Ordering::Relaxed);
    let rate = total as f64 / wall.as_secs_f64();
    reporter.emit(
        &format!(
            "pong summary: answered {total} pings in {:.2} s ({}/s)\n  cpu user {:.2} s, system {:.2} s ({:.0}% of one core)",
            wall.as_secs_f64(),
            fmt_rate(rate).trim_end(),
            cpu.user.as_secs_f64(),
            cpu.system.as_secs_f64(),
            cpu.percent_of(wall)
        ),
        &json!({
            "mode": "pong", "kind": "summary", "datagrams": node.datagrams(), "seconds": round3(wall.as_secs_f64()),
            "answered": total, "rate": round3(rate), "cpu": cpu.json(wall),
        }),
    );
    Ok(())
}
