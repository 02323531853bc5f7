//! Measurements: latency histograms (HDR, nanoseconds), sequence-gap loss per writer and
//! key the way ddsperf's `sub` counts it, and the process's CPU time.

use std::collections::HashMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::{json, Value};

/// The largest latency recorded exactly; longer ones are clamped to it.
const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// A latency histogram in nanoseconds (3 significant digits).
pub(crate) struct Latency {
    histogram: Histogram<u64>,
}

impl Latency {
    /// An empty histogram.
    pub(crate) fn new() -> Self {
        // INVARIANT: 1 ≤ low, high ≥ 2·low and 3 significant digits are valid bounds.
        #[allow(clippy::expect_used)]
        let histogram =
            Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid histogram bounds");
        Latency { histogram }
    }

    /// Records one latency.
    pub(crate) fn record(&mut self, d: Duration) {
        let ns = u64::try_from(d.as_nanos())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_LATENCY_NS);
        self.histogram.saturating_record(ns);
    }

    /// Forgets every value.
    pub(crate) fn reset(&mut self) {
        self.histogram.reset();
    }

    /// The statistics, in microseconds, or `None` when empty.
    pub(crate) fn summary(&self) -> Option<LatencySummary> {
        let h = &self.histogram;
        if h.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Some(LatencySummary {
            count: h.len(),
            min: us(h.min()),
            mean: h.mean() / 1e3,
            stddev: h.stdev() / 1e3,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        })
    }
}

/// Latency statistics in microseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LatencySummary {
    pub(crate) count: u64,
    pub(crate) min: f64,
    pub(crate) mean: f64,
    pub(crate) stddev: f64,
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) p999: f64,
    pub(crate) max: f64,
}

impl LatencySummary {
    /// Every figure divided by two: the "half round trip" ddsperf prints as latency.
    pub(crate) fn halved(self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            min: self.min / 2.0,
            mean: self.mean / 2.0,
            stddev: self.stddev / 2.0,
            p50: self.p50 / 2.0,
            p90: self.p90 / 2.0,
            p99: self.p99 / 2.0,
            p999: self.p999 / 2.0,
            max: self.max / 2.0,
        }
    }

    /// `min … p50 … max` on one line (µs).
    pub(crate) fn text(&self) -> String {
        format!(
            "min {} mean {} stddev {} p50 {} p90 {} p99 {} p99.9 {} max {} µs",
            fmt_us(self.min),
            fmt_us(self.mean),
            fmt_us(self.stddev),
            fmt_us(self.p50),
            fmt_us(self.p90),
            fmt_us(self.p99),
            fmt_us(self.p999),
            fmt_us(self.max)
        )
    }

    /// The short form for per-second lines.
    pub(crate) fn short_text(&self) -> String {
        format!(
            "p50 {} p90 {} p99 {} max {} µs",
            fmt_us(self.p50),
            fmt_us(self.p90),
            fmt_us(self.p99),
            fmt_us(self.max)
        )
    }

    /// The figures as a JSON object (µs).
    pub(crate) fn json(&self) -> Value {
        json!({
            "count": self.count,
            "min": round3(self.min),
            "mean": round3(self.mean),
            "stddev": round3(self.stddev),
            "p50": round3(self.p50),
            "p90": round3(self.p90),
            "p99": round3(self.p99),
            "p99_9": round3(self.p999),
            "max": round3(self.max),
        })
    }
}

/// A latency in µs with three significant digits or one decimal, whichever is longer.
fn fmt_us(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 10_000.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

/// `x` rounded to three decimals (JSON numbers stay short).
pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A rate as "12.3 k/s".
pub(crate) fn fmt_rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.2} M", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.1} k", per_second / 1e3)
    } else {
        format!("{per_second:.1} ")
    }
}

/// CPU time of this process (all threads), from `getrusage(RUSAGE_SELF)`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CpuTime {
    pub(crate) user: Duration,
    pub(crate) system: Duration,
}

impl CpuTime {
    /// The CPU time used so far (zero if the system will not say).
    pub(crate) fn now() -> CpuTime {
        use nix::sys::resource::{getrusage, UsageWho};
        let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else {
            return CpuTime::default();
        };
        let d = |tv: nix::sys::time::TimeVal| {
            Duration::from_secs(u64::try_from(tv.tv_sec()).unwrap_or(0))
                + Duration::from_micros(u64::try_from(tv.tv_usec()).unwrap_or(0))
        };
        CpuTime {
            user: d(usage.user_time()),
            system: d(usage.system_time()),
        }
    }

    /// The CPU time used since `earlier`.
    pub(crate) fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }

    /// User plus system time as a percentage of one core over `wall`.
    pub(crate) fn percent_of(self, wall: Duration) -> f64 {
        let wall = wall.as_secs_f64();
        if wall <= 0.0 {
            return 0.0;
        }
        (self.user + self.system).as_secs_f64() / wall * 100.0
    }

    /// As JSON: seconds of user and system time and the percentage of one core.
    pub(crate) fn json(self, wall: Duration) -> Value {
        json!({
            "user_s": round3(self.user.as_secs_f64()),
            "system_s": round3(self.system.as_secs_f64()),
            "percent": round3(self.percent_of(wall)),
        })
    }
}

/// What one received sample tells about loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeqCheck {
    /// The expected sample, or the first of its writer.
    InOrder,
    /// `n` samples of this writer and key were skipped.
    Gap(u64),
    /// Earlier than expected: a duplicate or a reordered sample.
    Late,
    /// The key value is not below the number of keys.
    KeyOutOfRange,
}

/// Expected sequence numbers per writer and key value, as ddsperf's `check_eseq` keeps
/// them: a writer numbers its samples 0, 1, 2, … and cycles through key values 0…n−1, so
/// the next sample of a key is `seq + n`.
pub(crate) struct SequenceTracker {
    keys: u32,
    expected: HashMap<[u8; 16], Vec<u32>>,
}

impl SequenceTracker {
    /// A tracker for writers that use `keys` key values.
    pub(crate) fn new(keys: u32) -> Self {
        SequenceTracker {
            keys: keys.max(1),
            expected: HashMap::new(),
        }
    }

    /// Notes sample `seq` with key `keyval` from `writer`.
    pub(crate) fn check(&mut self, writer: [u8; 16], seq: u32, keyval: u32) -> SeqCheck {
        let n = self.keys;
        if keyval >= n {
            return SeqCheck::KeyOutOfRange;
        }
        let k = keyval as usize;
        let Some(expected) = self.expected.get_mut(&writer) else {
            // First sample of this writer: what the other keys' next samples must be.
            let table = (0..n)
                .map(|i| {
                    let next = if i <= keyval { n } else { 0 };
                    seq.wrapping_add(i.wrapping_sub(keyval)).wrapping_add(next)
                })
                .collect();
            self.expected.insert(writer, table);
            return SeqCheck::InOrder;
        };
        let Some(e) = expected.get_mut(k) else {
            return SeqCheck::KeyOutOfRange;
        };
        let ahead = seq.wrapping_sub(*e);
        if ahead >= 1 << 31 {
            // Behind what was expected: do not count it as loss (ddsperf would add ~2^32).
            return SeqCheck::Late;
        }
        *e = seq.wrapping_add(n);
        if ahead == 0 {
            SeqCheck::InOrder
        } else {
            // Samples of this key come every n sequence numbers.
            SeqCheck::Gap(u64::from(ahead / n))
        }
    }

    /// How many writers were seen.
    pub(crate) fn writers(&self) -> usize {
        self.expected.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_summary_has_the_percentiles() {
        let mut l = Latency::new();
        for us in 1..=1000u64 {
            l.record(Duration::from_micros(us));
        }
        let s = l.summary().unwrap_or_else(|| unreachable!());
        assert_eq!(s.count, 1000);
        assert!((s.min - 1.0).abs() < 0.01, "{s:?}");
        assert!((s.p50 - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() < 1.0, "{s:?}");
        assert!((s.halved().p50 - 250.0).abs() < 1.0);
        l.reset();
        assert!(l.summary().is_none());
    }

    #[test]
    fn one_key_counts_gaps() {
        let mut t = SequenceTracker::new(1);
        let w = [1; 16];
        assert_eq!(t.check(w, 10, 0), SeqCheck::InOrder);
        assert_eq!(t.check(w, 11, 0), SeqCheck::InOrder);
        assert_eq!(t.check(w, 15, 0), SeqCheck::Gap(3));
        assert_eq!(t.check(w, 12, 0), SeqCheck::Late);
        assert_eq!(t.check(w, 16, 0), SeqCheck::InOrder);
        // Another writer starts on its own.
        assert_eq!(t.check([2; 16], 500, 0), SeqCheck::InOrder);
        assert_eq!(t.writers(), 2);
    }

    #[test]
    fn keys_cycle_as_ddsperf_publishes_them() {
        // Three keys: seq s carries key s % 3. Start in the middle (seq 4, key 1).
        let mut t = SequenceTracker::new(3);
        let w = [9; 16];
        for seq in 4..20u32 {
            assert_eq!(t.check(w, seq, seq % 3), SeqCheck::InOrder, "seq {seq}");
        }
        // Skip 20 (key 2) and 21 (key 0): key 2 then sees 23 and counts one lost.
        assert_eq!(t.check(w, 22, 1), SeqCheck::InOrder);
        assert_eq!(t.check(w, 23, 2), SeqCheck::Gap(1));
        assert_eq!(t.check(w, 24, 0), SeqCheck::Gap(1));
        assert_eq!(t.check(w, 5, 3), SeqCheck::KeyOutOfRange);
    }

    #[test]
    fn cpu_time_grows() {
        let start = CpuTime::now();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        let used = CpuTime::now().since(start);
        assert!(used.percent_of(Duration::from_secs(1000)) < 100.0);
    }
}
