//! The statuses the suite reads, printed the way `shape_main`'s listeners print them.
//!
//! FerroDDS has no status listeners yet, so the application polls the statuses between
//! writes and reads (every few milliseconds) and prints a line when one changed. A match
//! that comes and goes between two polls is not printed; the suite never depends on one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ferrodds::{DataReader, DataWriter, IncompatibleStatus};

use super::shape::{policy_name, ShapeType, TYPE_NAME};

/// What was last printed for one writer or reader.
#[derive(Debug)]
pub(crate) struct Watch {
    topic: String,
    matched: usize,
    incompatible: u64,
    deadline_missed: u64,
}

impl Watch {
    pub(crate) fn new(topic: &str) -> Watch {
        Watch {
            topic: topic.to_string(),
            matched: 0,
            incompatible: 0,
            deadline_missed: 0,
        }
    }

    fn matched(&mut self, function: &str, what: &str, now: usize) {
        if now != self.matched {
            let change = now as i64 - self.matched as i64;
            println!(
                "{function}() topic: '{}'  type: '{TYPE_NAME}' : matched {what} {now} (change = {change})",
                self.topic
            );
            self.matched = now;
        }
    }

    fn incompatible(&mut self, function: &str, status: &IncompatibleStatus) {
        if status.total_count > self.incompatible {
            let id = status.last_policy.map_or(0, |p| p.id());
            println!(
                "{function}() topic: '{}'  type: '{TYPE_NAME}' : {id} ({})",
                self.topic,
                policy_name(id)
            );
            self.incompatible = status.total_count;
        }
    }

    fn deadline(&mut self, function: &str, total: u64) {
        if total > self.deadline_missed {
            println!(
                "{function}() topic: '{}'  type: '{TYPE_NAME}' : (total = {total}, change = {})",
                self.topic,
                total - self.deadline_missed
            );
            self.deadline_missed = total;
        }
    }

    /// Prints what changed for a writer.
    pub(crate) fn poll_writer(&mut self, writer: &DataWriter<ShapeType>) {
        self.matched(
            "on_publication_matched",
            "readers",
            writer.matched_subscriptions().len(),
        );
        self.incompatible(
            "on_offered_incompatible_qos",
            &writer.offered_incompatible_qos(),
        );
        self.deadline(
            "on_offered_deadline_missed",
            writer.offered_deadline_missed().total_count,
        );
    }

    /// Prints what changed for a reader.
    pub(crate) fn poll_reader(&mut self, reader: &DataReader<ShapeType>) {
        self.matched(
            "on_subscription_matched",
            "writers",
            reader.matched_publications().len(),
        );
        self.incompatible(
            "on_requested_incompatible_qos",
            &reader.requested_incompatible_qos(),
        );
        self.deadline(
            "on_requested_deadline_missed",
            reader.requested_deadline_missed().total_count,
        );
    }
}

/// Set when the application should stop (SIGINT, SIGTERM, or the iterations are done).
#[derive(Debug, Clone, Default)]
pub(crate) struct Stop(Arc<AtomicBool>);

impl Stop {
    pub(crate) fn stop(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub(crate) fn stopped(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// SIGINT (how the suite ends an application) and SIGTERM stop the loop, so that a
    /// publisher still disposes or unregisters its instances and the participant says
    /// goodbye; a second signal exits at once. Called before the participant starts its
    /// threads, so that they inherit the blocked mask and only the waiting thread takes the
    /// signals.
    pub(crate) fn on_signals(&self) {
        use nix::sys::signal::{SigSet, Signal};
        let mut set = SigSet::empty();
        set.add(Signal::SIGINT);
        set.add(Signal::SIGTERM);
        if set.thread_block().is_err() {
            return;
        }
        let stop = self.clone();
        let _ = std::thread::Builder::new()
            .name("shapes-signals".into())
            .spawn(move || {
                let mut seen = 0;
                while set.wait().is_ok() {
                    seen += 1;
                    if seen > 1 {
                        std::process::exit(130);
                    }
                    stop.stop();
                }
            });
    }
}
