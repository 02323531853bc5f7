//! The statistics of the suite, computed the same way from both tools' per-second lines.
//!
//! - **Steady seconds of a ping run**: every per-second line with round trips except the
//!   first (it holds matching and the first, cold, round trips: ddsperf sends its first
//!   ping one second after it starts, ours as soon as the pong matched), and except lines
//!   covering less than half a second (ours prints the partial last second when it stops).
//! - **Latency of a run**: for each figure (p50, p90, p99, mean, max), the median over the
//!   steady seconds of that second's figure. With a target count (the keyed matrix), the
//!   steady seconds are taken in order until they hold at least that many round trips.
//! - **Steady seconds of a sub run**: the lines with data except the first and the last
//!   (the publisher started and stopped inside them), and except lines covering less than
//!   half a second. Rate = samples in them / their duration; MB/s = rate × sample size.
//! - **Over repetitions**: the median of the runs' figures (and their range in the JSON).

use serde::{Deserialize, Serialize};

use crate::parse::{LatencySecond, RoundTrip, ThroughputSecond};

/// A line covering less than this many seconds is a partial interval.
const MIN_INTERVAL: f64 = 0.5;

/// The median (the mean of the two middle values for an even count); `None` when empty.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Each line with the length of the interval it covers (from the previous line's time, or
/// from the process start for the first).
fn with_intervals<T>(lines: &[T], t: impl Fn(&T) -> f64) -> Vec<(&T, f64)> {
    let mut prev = 0.0;
    lines
        .iter()
        .map(|l| {
            let dt = t(l) - prev;
            prev = t(l);
            (l, dt)
        })
        .collect()
}

/// A ping run reduced to one figure per statistic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencyFigures {
    /// Steady seconds used.
    pub(crate) seconds: usize,
    /// Round trips in them.
    pub(crate) roundtrips: u64,
    /// Round trips per second over them.
    pub(crate) rate: f64,
    /// Each figure: the median over the seconds of that second's figure.
    #[serde(flatten)]
    pub(crate) rtt: RoundTrip,
    /// No steady second: the figures include the warm-up second.
    pub(crate) warmup_included: bool,
}

/// The mean and the sample standard deviation of `values` (`None` when there are none; the
/// deviation is 0 for one value).
pub(crate) fn mean_sd(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Some((mean, var.sqrt()))
}

/// The steady seconds of a ping run (see the module's text), with their lengths.
pub(crate) fn steady_latency(lines: &[LatencySecond]) -> Vec<(&LatencySecond, f64)> {
    let with_dt = with_intervals(lines, |l| l.t);
    let mut seen_first = false;
    with_dt
        .into_iter()
        .filter(|(l, dt)| {
            if l.roundtrips == 0 {
                return false;
            }
            if !seen_first {
                seen_first = true;
                return false;
            }
            *dt >= MIN_INTERVAL
        })
        .collect()
}

/// Round trips in the steady seconds of a ping run (to stop a run once it has enough).
pub(crate) fn steady_roundtrips(lines: &[LatencySecond]) -> u64 {
    steady_latency(lines)
        .iter()
        .map(|(l, _)| l.roundtrips)
        .sum()
}

/// The figures of a ping run, over its steady seconds (up to `target` round trips when
/// set); `None` when it measured nothing.
pub(crate) fn latency_figures(
    lines: &[LatencySecond],
    target: Option<u64>,
) -> Option<LatencyFigures> {
    let mut steady = steady_latency(lines);
    let mut warmup_included = false;
    if steady.is_empty() {
        steady = with_intervals(lines, |l| l.t)
            .into_iter()
            .filter(|(l, _)| l.roundtrips > 0)
            .collect();
        warmup_included = true;
    }
    if let Some(target) = target {
        let mut count = 0;
        let keep = steady
            .iter()
            .position(|(l, _)| {
                count += l.roundtrips;
                count >= target
            })
            .map_or(steady.len(), |i| i + 1);
        steady.truncate(keep);
    }
    if steady.is_empty() {
        return None;
    }
    let figure = |f: fn(&RoundTrip) -> f64| -> f64 {
        let v: Vec<f64> = steady.iter().map(|(l, _)| f(&l.rtt)).collect();
        median(&v).unwrap_or(f64::NAN)
    };
    let roundtrips: u64 = steady.iter().map(|(l, _)| l.roundtrips).sum();
    let secs: f64 = steady.iter().map(|(_, dt)| dt).sum();
    Some(LatencyFigures {
        seconds: steady.len(),
        roundtrips,
        rate: if secs > 0.0 {
            roundtrips as f64 / secs
        } else {
            0.0
        },
        rtt: RoundTrip {
            mean: figure(|r| r.mean),
            p50: figure(|r| r.p50),
            p90: figure(|r| r.p90),
            p99: figure(|r| r.p99),
            max: figure(|r| r.max),
        },
        warmup_included,
    })
}

/// A sub run reduced to rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThroughputFigures {
    /// Steady seconds used.
    pub(crate) seconds: usize,
    /// Their total length, s.
    pub(crate) duration: f64,
    /// Samples received in them.
    pub(crate) samples: u64,
    /// Samples per second over them.
    pub(crate) samples_per_s: f64,
    /// Megabytes (10^6 bytes) of samples per second over them.
    pub(crate) mb_per_s: f64,
    /// Sample size, bytes.
    pub(crate) size: u64,
    /// Fewer than three lines with data: the rates include the start and the end.
    pub(crate) edges_included: bool,
}

/// The rates of a sub run over its steady seconds; `None` when it received nothing.
pub(crate) fn throughput_figures(lines: &[ThroughputSecond]) -> Option<ThroughputFigures> {
    let with_data: Vec<(&ThroughputSecond, f64)> = with_intervals(lines, |l| l.t)
        .into_iter()
        .filter(|(l, _)| l.samples > 0)
        .collect();
    if with_data.is_empty() {
        return None;
    }
    let (steady, edges_included): (Vec<_>, bool) = if with_data.len() >= 3 {
        let inner = &with_data[1..with_data.len() - 1];
        let full: Vec<_> = inner
            .iter()
            .copied()
            .filter(|(_, dt)| *dt >= MIN_INTERVAL)
            .collect();
        if full.is_empty() {
            (with_data.clone(), true)
        } else {
            (full, false)
        }
    } else {
        (with_data.clone(), true)
    };
    let samples: u64 = steady.iter().map(|(l, _)| l.samples).sum();
    let duration: f64 = steady.iter().map(|(_, dt)| dt).sum();
    let size = steady.last().map_or(0, |(l, _)| l.size);
    let rate = if duration > 0.0 {
        samples as f64 / duration
    } else {
        0.0
    };
    Some(ThroughputFigures {
        seconds: steady.len(),
        duration,
        samples,
        samples_per_s: rate,
        mb_per_s: rate * size as f64 / 1e6,
        size,
        edges_included,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sec(t: f64, n: u64, p50: f64) -> LatencySecond {
        LatencySecond {
            t,
            roundtrips: n,
            min: p50 / 2.0,
            rtt: RoundTrip {
                mean: p50,
                p50,
                p90: p50 * 1.5,
                p99: p50 * 2.0,
                max: p50 * 10.0,
            },
        }
    }

    fn sub(t: f64, n: u64) -> ThroughputSecond {
        ThroughputSecond {
            t,
            samples: n,
            lost: 0,
            size: 1000,
        }
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 2.0]), Some(2.0));
    }

    #[test]
    fn the_first_second_with_round_trips_and_partial_seconds_are_not_steady() {
        // ddsperf-like: nothing in the first second, the first ping at 1 s.
        let lines = [
            sec(2.008, 100, 90.0),
            sec(3.011, 1000, 30.0),
            sec(4.01, 1000, 32.0),
            sec(5.0, 1000, 34.0),
        ];
        let f = latency_figures(&lines, None).unwrap();
        assert_eq!(f.seconds, 3);
        assert_eq!(f.roundtrips, 3000);
        assert_eq!(f.rtt.p50, 32.0);
        assert_eq!(f.rtt.p99, 64.0);
        assert!(!f.warmup_included);
        // ours-like: a partial last line.
        let lines = [
            sec(1.0, 500, 90.0),
            sec(2.0, 1000, 30.0),
            sec(3.0, 1000, 40.0),
            sec(3.1, 90, 500.0),
        ];
        let f = latency_figures(&lines, None).unwrap();
        assert_eq!(f.seconds, 2);
        assert_eq!(f.rtt.p50, 35.0);
        assert!((f.rate - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn a_target_count_takes_steady_seconds_in_order() {
        let lines = [
            sec(1.0, 500, 90.0),
            sec(2.0, 1000, 30.0),
            sec(3.0, 1000, 40.0),
            sec(4.0, 1000, 50.0),
        ];
        let f = latency_figures(&lines, Some(1500)).unwrap();
        assert_eq!(f.seconds, 2);
        assert_eq!(f.roundtrips, 2000);
        let f = latency_figures(&lines, Some(10)).unwrap();
        assert_eq!(f.seconds, 1);
        assert_eq!(f.rtt.p50, 30.0);
        let f = latency_figures(&lines, Some(1_000_000)).unwrap();
        assert_eq!(f.seconds, 3);
        assert_eq!(steady_roundtrips(&lines), 3000);
    }

    #[test]
    fn without_a_steady_second_the_warm_up_is_used_and_flagged() {
        let f = latency_figures(&[sec(1.0, 10, 50.0)], None).unwrap();
        assert!(f.warmup_included);
        assert_eq!(f.rtt.p50, 50.0);
        assert!(latency_figures(&[], None).is_none());
    }

    #[test]
    fn throughput_drops_the_first_and_last_second_with_data() {
        let lines = [
            sub(1.0, 100),
            sub(2.0, 1000),
            sub(3.0, 3000),
            sub(4.0, 20),
            sub(5.0, 0),
        ];
        let f = throughput_figures(&lines).unwrap();
        assert_eq!(f.seconds, 2);
        assert_eq!(f.samples, 4000);
        assert!((f.samples_per_s - 2000.0).abs() < 1e-9);
        assert!((f.mb_per_s - 2.0).abs() < 1e-9);
        assert!(!f.edges_included);
    }

    #[test]
    fn a_silent_second_inside_the_run_counts_as_time() {
        // ddsperf prints no line for a second without data: the next line spans two.
        let lines = [sub(1.0, 10), sub(2.0, 1000), sub(4.0, 1000), sub(5.0, 5)];
        let f = throughput_figures(&lines).unwrap();
        assert_eq!(f.samples, 2000);
        assert!((f.duration - 3.0).abs() < 1e-9);
    }

    #[test]
    fn short_runs_keep_their_edges_and_say_so() {
        let f = throughput_figures(&[sub(1.0, 10), sub(2.0, 30)]).unwrap();
        assert!(f.edges_included);
        assert_eq!(f.samples, 40);
        assert!(throughput_figures(&[sub(1.0, 0)]).is_none());
    }
}
