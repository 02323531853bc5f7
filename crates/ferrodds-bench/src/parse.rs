//! What the measuring tools print, turned into per-second records: Cyclone's `ddsperf`
//! (text), `ferrodds perf --json` (one JSON object per line) and `udp_floor` (JSON).
//!
//! Every latency here is a **full round trip in µs**: ddsperf prints half round trips
//! (it divides each measured round trip by two before its statistics), so its figures are
//! doubled on the way in; `ferrodds perf` prints full round trips (`rtt_us`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Round-trip statistics: full round trips, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct RoundTrip {
    /// The mean.
    pub(crate) mean: f64,
    /// The median.
    pub(crate) p50: f64,
    /// The 90th percentile.
    pub(crate) p90: f64,
    /// The 99th percentile.
    pub(crate) p99: f64,
    /// The longest.
    pub(crate) max: f64,
}

/// One per-second line of a pinging process: the round trips it measured in that second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencySecond {
    /// Seconds since the process started, when the line was printed.
    pub(crate) t: f64,
    /// Round trips measured in the interval.
    pub(crate) roundtrips: u64,
    /// The shortest round trip, µs.
    pub(crate) min: f64,
    /// The others.
    #[serde(flatten)]
    pub(crate) rtt: RoundTrip,
}

/// One per-second line of a subscribing process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThroughputSecond {
    /// Seconds since the process started, when the line was printed.
    pub(crate) t: f64,
    /// Samples received in the interval.
    pub(crate) samples: u64,
    /// Samples lost (sequence gaps) in the interval.
    pub(crate) lost: u64,
    /// Sample size in bytes (the KS topic's whole sample, its 12 fixed bytes included).
    pub(crate) size: u64,
}

/// What a subscriber counted over its whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Totals {
    /// Samples received.
    pub(crate) received: u64,
    /// Samples lost.
    pub(crate) lost: u64,
}

/// One measurement of `udp_floor` (one mode, one size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FloorRun {
    /// "block" or "busy".
    pub(crate) mode: String,
    /// Datagram size in bytes.
    pub(crate) size: u64,
    /// Round trips measured (after the warm-up).
    pub(crate) roundtrips: u64,
    /// Seconds measured.
    pub(crate) seconds: f64,
    /// Datagrams sent again after 1 s without an answer.
    pub(crate) timeouts: u64,
    /// Over every round trip measured.
    #[serde(flatten)]
    pub(crate) rtt: RoundTrip,
}

/// The words after `key` on a line split by whitespace: `value_after(["a","1"], "a")`.
fn value_after<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    let i = words.iter().position(|w| *w == key)?;
    words.get(i + 1).copied()
}

/// A ddsperf duration such as `15.123us` in µs.
fn ddsperf_us(word: &str) -> Option<f64> {
    word.strip_suffix("us")?.parse().ok()
}

/// `[pid] 12.345  rest…` → `(12.345, words of rest)`.
fn ddsperf_prefix(line: &str) -> Option<(f64, Vec<&str>)> {
    let rest = line.strip_prefix('[')?;
    let (_pid, rest) = rest.split_once("] ")?;
    let mut words = rest.split_whitespace();
    let t = words.next()?.parse().ok()?;
    Some((t, words.collect()))
}

/// ddsperf `ping`'s round-trip lines, one per second and peer:
///
/// `[pid] T  host:pid size S mean Xus min Xus 50% Xus 90% Xus 99% Xus max Xus cnt N`
///
/// (`sublat` lines, one-way latencies of `sub -l`, are not round trips and are skipped.)
/// ddsperf computes each percentile from the first 20000 round trips of the second, mean,
/// min and max from all of them; every value is half a round trip, doubled here.
pub(crate) fn ddsperf_latency(text: &str) -> Vec<LatencySecond> {
    text.lines()
        .filter_map(|line| {
            let (t, words) = ddsperf_prefix(line)?;
            if words.contains(&"sublat") {
                return None;
            }
            let us = |key: &str| {
                value_after(&words, key)
                    .and_then(ddsperf_us)
                    .map(|v| v * 2.0)
            };
            Some(LatencySecond {
                t,
                roundtrips: value_after(&words, "cnt")?.parse().ok()?,
                min: us("min")?,
                rtt: RoundTrip {
                    mean: us("mean")?,
                    p50: us("50%")?,
                    p90: us("90%")?,
                    p99: us("99%")?,
                    max: us("max")?,
                },
            })
        })
        .collect()
}

/// ddsperf `sub`'s lines, one per second with data:
///
/// `[pid] T  size S total N lost L delta D lost L1 rate X kS/s Y Mb/s (…)`
///
/// and the totals of the last one (`total`, the first `lost`).
pub(crate) fn ddsperf_sub(text: &str) -> (Vec<ThroughputSecond>, Option<Totals>) {
    let mut seconds = Vec::new();
    let mut totals = None;
    for line in text.lines() {
        let Some((t, words)) = ddsperf_prefix(line) else {
            continue;
        };
        let parsed = (|| {
            // `lost` appears twice: after `total` (cumulative) and after `delta`.
            let total_at = words.iter().position(|w| *w == "total")?;
            let delta_at = words.iter().position(|w| *w == "delta")?;
            let at = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
            (words.get(total_at + 2) == Some(&"lost") && words.get(delta_at + 2) == Some(&"lost"))
                .then_some(())?;
            Some((
                ThroughputSecond {
                    t,
                    samples: at(delta_at + 1)?,
                    lost: at(delta_at + 3)?,
                    size: value_after(&words, "size")?.parse().ok()?,
                },
                Totals {
                    received: at(total_at + 1)?,
                    lost: at(total_at + 3)?,
                },
            ))
        })();
        if let Some((second, t)) = parsed {
            seconds.push(second);
            totals = Some(t);
        }
    }
    (seconds, totals)
}

/// `{"mean": …, "p50": …, "p90": …, "p99": …, "max": …}` (µs).
fn json_round_trip(v: &Value) -> Option<RoundTrip> {
    Some(RoundTrip {
        mean: v["mean"].as_f64()?,
        p50: v["p50"].as_f64()?,
        p90: v["p90"].as_f64()?,
        p99: v["p99"].as_f64()?,
        max: v["max"].as_f64()?,
    })
}

/// The JSON objects of a `ferrodds perf --json` run (lines that are not JSON are skipped:
/// there should be none on stdout).
fn json_lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(Value::is_object)
}

/// `ferrodds perf ping --json`'s interval lines (`rtt_us` is the full round trip).
pub(crate) fn ours_latency(text: &str) -> Vec<LatencySecond> {
    json_lines(text)
        .filter(|v| v["mode"] == "ping" && v["kind"] == "interval")
        .filter_map(|v| {
            Some(LatencySecond {
                t: v["t"].as_f64()?,
                roundtrips: v["roundtrips"].as_u64()?,
                min: v["rtt_us"]["min"].as_f64()?,
                rtt: json_round_trip(&v["rtt_us"])?,
            })
        })
        .collect()
}

/// `ferrodds perf sub --json`'s interval lines, and the totals of its summary (or of its
/// last interval line when it printed no summary).
pub(crate) fn ours_sub(text: &str) -> (Vec<ThroughputSecond>, Option<Totals>) {
    let mut seconds = Vec::new();
    let mut last_interval = None;
    let mut summary = None;
    for v in json_lines(text).filter(|v| v["mode"] == "sub") {
        if v["kind"] == "interval" {
            let parsed = (|| {
                Some((
                    ThroughputSecond {
                        t: v["t"].as_f64()?,
                        samples: v["samples"].as_u64()?,
                        lost: v["lost"].as_u64()?,
                        size: v["size"].as_u64()?,
                    },
                    Totals {
                        received: v["total"].as_u64()?,
                        lost: v["total_lost"].as_u64()?,
                    },
                ))
            })();
            if let Some((s, t)) = parsed {
                seconds.push(s);
                last_interval = Some(t);
            }
        } else if v["kind"] == "summary" {
            if let (Some(received), Some(lost)) = (v["samples"].as_u64(), v["lost"].as_u64()) {
                summary = Some(Totals { received, lost });
            }
        }
    }
    (seconds, summary.or(last_interval))
}

/// `udp_floor`'s lines.
pub(crate) fn floor(text: &str) -> Vec<FloorRun> {
    json_lines(text)
        .filter_map(|v| {
            Some(FloorRun {
                mode: v["mode"].as_str()?.to_string(),
                size: v["size"].as_u64()?,
                roundtrips: v["roundtrips"].as_u64()?,
                seconds: v["seconds"].as_f64()?,
                timeouts: v["timeouts"].as_u64().unwrap_or(0),
                rtt: json_round_trip(&v["rtt_us"])?,
            })
        })
        .collect()
}

/// Whether `--help` text lists `option` on a line of options, with a value or without.
pub(crate) fn help_offers_option(help: &str, option: &str) -> bool {
    help.lines()
        .filter(|line| line.trim_start().starts_with('-'))
        .any(|line| {
            line.split(|c: char| c.is_whitespace() || c == ',')
                .any(|w| w == option)
        })
}

/// Whether `--help` text offers `option` as a flag (no value): a line of options naming it,
/// with no `<VALUE>` after it.
pub(crate) fn help_offers_flag(help: &str, option: &str) -> bool {
    help.lines().any(|line| {
        if !line.trim_start().starts_with('-') {
            return false;
        }
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        words
            .iter()
            .position(|w| *w == option)
            .is_some_and(|i| words.get(i + 1).is_none_or(|next| !next.starts_with('<')))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const DDSPERF_PING: &str = include_str!("../fixtures/ddsperf-ping.txt");
    const DDSPERF_SUB: &str = include_str!("../fixtures/ddsperf-sub.txt");
    const OURS_PING: &str = include_str!("../fixtures/ferrodds-ping.jsonl");
    const OURS_SUB: &str = include_str!("../fixtures/ferrodds-sub.jsonl");
    const FLOOR: &str = include_str!("../fixtures/udp-floor.jsonl");

    #[test]
    fn ddsperf_ping_lines_are_doubled_into_full_round_trips() {
        let s = ddsperf_latency(DDSPERF_PING);
        assert_eq!(s.len(), 2, "{s:?}");
        // [22362] 2.008  vm:22350 size 64 mean 39.206us min 4.752us 50% 5.775us 90% 8.921us
        // 99% 134.757us max 8360.511us cnt 12815
        assert_eq!(s[0].t, 2.008);
        assert_eq!(s[0].roundtrips, 12815);
        assert_eq!(s[0].rtt.p50, 11.55);
        assert_eq!(s[0].rtt.p90, 17.842);
        assert_eq!(s[0].rtt.p99, 269.514);
        assert_eq!(s[0].min, 9.504);
        assert_eq!(s[1].roundtrips, 10852);
        // The rss/cpu lines and the participant lines are not round trips.
        assert!(s.iter().all(|x| x.rtt.p50 > 0.0));
    }

    #[test]
    fn ddsperf_pong_prints_no_round_trip() {
        assert!(ddsperf_latency(include_str!("../fixtures/ddsperf-pong.txt")).is_empty());
    }

    #[test]
    fn ddsperf_sub_lines_give_deltas_and_totals() {
        let (s, totals) = ddsperf_sub(DDSPERF_SUB);
        assert_eq!(s.len(), 5, "{s:?}");
        assert_eq!(
            s[1],
            ThroughputSecond {
                t: 2.0,
                samples: 310505,
                lost: 0,
                size: 1024
            }
        );
        assert_eq!(
            totals,
            Some(Totals {
                received: 751251,
                lost: 0
            })
        );
    }

    #[test]
    fn ddsperf_sub_lost_counts_are_told_apart() {
        let line = "[7] 3.001  size 64 total 900 lost 12 delta 300 lost 5 rate 0.30 kS/s 0.15 Mb/s (0.09 kS/s 0.05 Mb/s)";
        let (s, totals) = ddsperf_sub(line);
        assert_eq!(s[0].samples, 300);
        assert_eq!(s[0].lost, 5);
        assert_eq!(
            totals,
            Some(Totals {
                received: 900,
                lost: 12
            })
        );
    }

    #[test]
    fn ddsperf_sublat_and_odd_lines_are_not_round_trips() {
        let text = "[1] 1.000  sublat vm:2 size 12 mean 1.000us min 1.000us 50% 1.000us 90% 1.000us 99% 1.000us max 1.000us cnt 5\n\
                    garbage\n[x] 1.0 y\n[1] 2.000  vm:2 size 12 mean 1.0us";
        assert!(ddsperf_latency(text).is_empty());
    }

    #[test]
    fn ferrodds_ping_intervals_are_full_round_trips() {
        let s = ours_latency(OURS_PING);
        // Four intervals; the summary line is not one.
        assert_eq!(s.len(), 4, "{s:?}");
        assert_eq!(s[0].t, 1.001);
        assert_eq!(s[0].roundtrips, 22417);
        assert_eq!(s[0].rtt.p50, 23.375);
        assert_eq!(s[0].rtt.p99, 63.263);
        assert!(s
            .iter()
            .all(|x| x.roundtrips > 0 && x.rtt.p50 > 0.0 && x.rtt.p99 >= x.rtt.p50));
        assert!(s.windows(2).all(|w| w[0].t < w[1].t));
    }

    #[test]
    fn ferrodds_sub_intervals_and_summary() {
        let (s, totals) = ours_sub(OURS_SUB);
        assert!(s.len() >= 3, "{s:?}");
        assert!(s.iter().all(|x| x.size == 1024));
        let totals = totals.unwrap();
        assert_eq!(totals.received, s.iter().map(|x| x.samples).sum::<u64>());
        assert_eq!(totals.lost, 0);
    }

    #[test]
    fn floor_lines() {
        let f = floor(FLOOR);
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].mode, "block");
        assert_eq!(f[0].size, 64);
        assert_eq!(f[3].mode, "busy");
        assert_eq!(f[3].size, 65507);
        assert!(f.iter().all(|r| r.roundtrips > 0 && r.rtt.p99 >= r.rtt.p50));
    }

    #[test]
    fn flags_are_found_in_help_text() {
        let help = "Options:\n  -d, --domain <DOMAIN>  DDS domain id\n      --busy-poll        Spin\n      --batch <N>  Batch\n";
        assert!(help_offers_flag(help, "--busy-poll"));
        assert!(!help_offers_flag(help, "--batch"));
        assert!(!help_offers_flag(help, "--domain"));
        assert!(!help_offers_flag(help, "--nothing"));
        assert!(help_offers_flag("  --batch\n", "--batch"));
        let no_batch =
            "      --no-batch\n          No writer batching: each sample in a datagram\n";
        assert!(help_offers_flag(no_batch, "--no-batch"));
        assert!(!help_offers_flag(no_batch, "--batch"));
    }
}
