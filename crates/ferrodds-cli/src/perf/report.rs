//! Output: a line per second and a summary, as text or as one JSON object per line, and a
//! progress bar on stderr for long runs when it is a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

/// Runs at least this long get a progress bar (when stderr is a terminal).
const PROGRESS_MIN: Duration = Duration::from_secs(3);

/// Where lines go.
pub(crate) struct Reporter {
    json: bool,
    start: Instant,
    bar: Option<ProgressBar>,
    /// What the bar counts: seconds of the run, or samples / round trips.
    bar_counts_items: bool,
}

impl Reporter {
    /// A reporter for a run of `mode` that ends after `duration` or `count` items, if set.
    pub(crate) fn new(
        json: bool,
        mode: &str,
        duration: Option<Duration>,
        count: Option<u64>,
    ) -> Self {
        let start = Instant::now();
        let long = duration.is_some_and(|d| d >= PROGRESS_MIN) || count.is_some();
        let bar = (long && std::io::stderr().is_terminal()).then(|| {
            let (len, template, items) = match (count, duration) {
                (Some(n), _) => (
                    n,
                    "{prefix} [{bar:40}] {human_pos}/{human_len} ({per_sec}, {eta} left)",
                    true,
                ),
                (None, Some(d)) => (d.as_secs(), "{prefix} [{bar:40}] {pos}/{len} s", false),
                (None, None) => (0, "{prefix} {elapsed}", false),
            };
            let bar = ProgressBar::new(len);
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(format!("perf {mode}"));
            (bar, items)
        });
        let (bar, bar_counts_items) = match bar {
            Some((b, items)) => (Some(b), items),
            None => (None, false),
        };
        Reporter {
            json,
            start,
            bar,
            bar_counts_items,
        }
    }

    /// Seconds since the start.
    pub(crate) fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Prints `text` (or `json`, with `--json`) on stdout, above the progress bar.
    pub(crate) fn emit(&self, text: &str, json: &Value) {
        let line = if self.json {
            json.to_string()
        } else {
            text.to_owned()
        };
        let print = || {
            let mut out = std::io::stdout().lock();
            // A closed stdout (e.g. `| head`) is not worth failing the run for.
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        };
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Prints a note on stderr (text mode only; JSON consumers read stdout).
    pub(crate) fn note(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Moves the bar: to `items` done when it counts items, else to the elapsed seconds.
    pub(crate) fn progress(&self, items: u64) {
        if let Some(bar) = &self.bar {
            if self.bar_counts_items {
                bar.set_position(items);
            } else {
                bar.set_position(self.start.elapsed().as_secs());
            }
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
