//! Everything a run measured (saved as `docs/bench/results.json`), and its reduction over
//! repetitions: the median of the runs' figures, with their range.

use serde::{Deserialize, Serialize};

use crate::machine::Machine;
use crate::parse::RoundTrip;
use crate::stats::{median, LatencyFigures, ThroughputFigures};
use crate::suite::{
    FloorRecord, IdleRun, LatencyRun, MatrixCell, MatrixRun, MemcpyRun, PairRun, Plan, Sections,
    ThroughputRun, Variant,
};

/// A whole run of the suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Results {
    /// When it started (UTC).
    pub(crate) date: String,
    /// What it was to measure.
    pub(crate) plan: Plan,
    /// Which parts ran.
    pub(crate) sections: Sections,
    /// The machine and the versions.
    pub(crate) machine: Machine,
    /// The busy-poll row ran (`ferrodds perf` accepts `--busy-poll`).
    pub(crate) busy_poll: bool,
    /// The unbatched row ran (`ferrodds perf pub` accepts `--no-batch`).
    pub(crate) no_batch: bool,
    /// Rows skipped and why; failed runs.
    pub(crate) notes: Vec<String>,
    /// How long the run took, minutes.
    pub(crate) minutes: f64,
    /// Ping/pong runs.
    pub(crate) latency: Vec<LatencyRun>,
    /// UDP floor runs.
    pub(crate) floor: Vec<FloorRecord>,
    /// Pub/sub runs.
    pub(crate) throughput: Vec<ThroughputRun>,
    /// Keyed-matrix runs.
    pub(crate) matrix: Vec<MatrixRun>,
    /// Idle pongs.
    #[serde(default)]
    pub(crate) idle: Vec<IdleRun>,
    /// The shared-memory rows ran (`ferrodds perf` accepts `--transport`).
    #[serde(default)]
    pub(crate) shm: bool,
    /// Plain copies, beside the shared-memory throughput.
    #[serde(default)]
    pub(crate) memcpy: Vec<MemcpyRun>,
    /// The study's runs ([`crate::suite::Study`]).
    #[serde(default)]
    pub(crate) study: Vec<ThroughputRun>,
    /// The `loans` part's round trips (shared memory, copied and lent, 64 B to 4 MiB).
    #[serde(default)]
    pub(crate) loans: Vec<LatencyRun>,
}

/// A figure over repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Agg {
    /// The median of the runs' values.
    pub(crate) value: f64,
    /// The smallest.
    pub(crate) min: f64,
    /// The largest.
    pub(crate) max: f64,
    /// How many runs gave a value.
    pub(crate) runs: usize,
}

/// The median and range of `values` (`None` when there are none).
pub(crate) fn agg(values: impl IntoIterator<Item = f64>) -> Option<Agg> {
    let v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    Some(Agg {
        value: median(&v)?,
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        runs: v.len(),
    })
}

/// A figure of `variant`'s runs over repetitions.
fn over_runs<'a, S: 'a, F: 'a>(
    runs: impl Iterator<Item = &'a PairRun<S, F>>,
    variant: Variant,
    f: impl Fn(&F) -> f64,
) -> Option<Agg> {
    agg(runs
        .filter(|r| r.variant == variant)
        .filter_map(|r| r.figures.as_ref().map(&f)))
}

/// `what, variant, repetition N: error` for a run that measured nothing.
fn failure<S, F>(what: String, run: &PairRun<S, F>) -> Option<String> {
    run.error.as_ref().map(|e| {
        format!(
            "{what}, {}, repetition {}: {e}",
            run.variant.label(),
            run.rep + 1
        )
    })
}

/// A round-trip figure of `variant` at `size` over the repetitions among `runs`.
fn round_trips(
    runs: &[LatencyRun],
    size: u64,
    variant: Variant,
    f: fn(&RoundTrip) -> f64,
) -> Option<Agg> {
    let runs = runs.iter().filter(|r| r.size == size);
    over_runs(runs.map(|r| &r.run), variant, |x| f(&x.rtt))
}

impl Results {
    /// A latency figure of `variant` at `size` over repetitions.
    pub(crate) fn latency(
        &self,
        size: u64,
        variant: Variant,
        f: fn(&RoundTrip) -> f64,
    ) -> Option<Agg> {
        round_trips(&self.latency, size, variant, f)
    }

    /// A round-trip figure of the `loans` part.
    pub(crate) fn loan_latency(
        &self,
        size: u64,
        variant: Variant,
        f: fn(&RoundTrip) -> f64,
    ) -> Option<Agg> {
        round_trips(&self.loans, size, variant, f)
    }

    /// The round trips per second of `variant` at `size` over repetitions.
    pub(crate) fn latency_rate(&self, size: u64, variant: Variant) -> Option<Agg> {
        let runs = self.latency.iter().filter(|r| r.size == size);
        over_runs(runs.map(|r| &r.run), variant, |x| x.rate)
    }

    /// A UDP floor figure (`mode` "block" or "busy") at `size` over repetitions.
    pub(crate) fn floor(&self, size: u64, mode: &str, f: fn(&RoundTrip) -> f64) -> Option<Agg> {
        agg(self
            .floor
            .iter()
            .filter(|r| r.size == size && r.mode == mode)
            .filter_map(|r| r.run.as_ref().map(|x| f(&x.rtt))))
    }

    /// A throughput figure of `variant` at `size` over repetitions.
    pub(crate) fn throughput(
        &self,
        size: u64,
        variant: Variant,
        f: fn(&ThroughputFigures) -> f64,
    ) -> Option<Agg> {
        let runs = self.throughput.iter().filter(|r| r.size == size);
        over_runs(runs.map(|r| &r.run), variant, f)
    }

    /// The samples/s of `variant`'s study runs, one per run that measured.
    pub(crate) fn study_rates(&self, variant: Variant) -> Vec<f64> {
        self.study
            .iter()
            .filter(|r| r.run.variant == variant)
            .filter_map(|r| r.run.figures.as_ref().map(|f| f.samples_per_s))
            .collect()
    }

    /// Samples lost by `variant`'s subscribers at `size`, summed over repetitions (`None`
    /// when no run reported totals).
    pub(crate) fn lost(&self, size: u64, variant: Variant) -> Option<u64> {
        let totals: Vec<u64> = self
            .throughput
            .iter()
            .filter(|r| r.size == size && r.run.variant == variant)
            .filter_map(|r| r.totals.map(|t| t.lost))
            .collect();
        (!totals.is_empty()).then(|| totals.iter().sum())
    }

    /// A keyed-matrix figure over repetitions.
    pub(crate) fn matrix(
        &self,
        cell: MatrixCell,
        variant: Variant,
        f: fn(&LatencyFigures) -> f64,
    ) -> Option<Agg> {
        let runs = self.matrix.iter().filter(|r| r.cell == cell);
        over_runs(runs.map(|r| &r.run), variant, f)
    }

    /// The runs that measured nothing, one line each.
    /// An idle pong's wake-ups per second (`threads`: its thread count instead), over
    /// repetitions.
    pub(crate) fn idle(&self, variant: Variant, threads: bool) -> Option<Agg> {
        agg(self
            .idle
            .iter()
            .filter(|r| r.variant == variant)
            .filter_map(|r| {
                if threads {
                    r.threads.map(|t| t as f64)
                } else {
                    r.wakeups_per_s
                }
            }))
    }

    /// Plain copies of `size` bytes per second, over repetitions.
    pub(crate) fn memcpy(&self, size: u64) -> Option<Agg> {
        agg(self
            .memcpy
            .iter()
            .filter(|m| m.size == size)
            .map(|m| m.samples_per_s))
    }

    pub(crate) fn failures(&self) -> Vec<String> {
        let latency = self
            .latency
            .iter()
            .filter_map(|r| failure(format!("latency {} B", r.size), &r.run));
        let floor = self.floor.iter().filter_map(|r| {
            r.error.as_ref().map(|e| {
                format!(
                    "UDP floor {} {} B, repetition {}: {e}",
                    r.mode,
                    r.size,
                    r.rep + 1
                )
            })
        });
        let throughput = self
            .throughput
            .iter()
            .filter_map(|r| failure(format!("throughput {} B", r.size), &r.run));
        let study = self
            .study
            .iter()
            .filter_map(|r| failure(format!("study {} B", r.size), &r.run))
            .chain(
                self.loans
                    .iter()
                    .filter_map(|r| failure(format!("loans {} B", r.size), &r.run)),
            );
        let matrix = self.matrix.iter().filter_map(|r| {
            let c = r.cell;
            let what = format!(
                "matrix {}×{} at {} B",
                c.instances, c.samples_per_instance, c.size
            );
            failure(what, &r.run)
        });
        latency
            .chain(floor)
            .chain(throughput)
            .chain(study)
            .chain(matrix)
            .chain(self.idle.iter().filter_map(|r| {
                let e = r.error.as_ref()?;
                Some(format!(
                    "idle {}, repetition {}: {e}",
                    r.variant.label(),
                    r.rep + 1
                ))
            }))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn aggregates_are_medians_with_ranges() {
        let a = agg([3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            a,
            Agg {
                value: 2.0,
                min: 1.0,
                max: 3.0,
                runs: 3
            }
        );
        assert_eq!(agg([5.0, 7.0]).unwrap().value, 6.0);
        assert!(agg([]).is_none());
        assert!(agg([f64::NAN]).is_none());
    }
}
