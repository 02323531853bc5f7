//! DEADLINE (DDS 1.4 §2.2.3.7): every instance is expected to be updated at least once per
//! period; each period that passes without an update counts once in the writer's
//! OFFERED_DEADLINE_MISSED and the reader's REQUESTED_DEADLINE_MISSED status.
//!
//! Each instance keeps the time its current period ends, ordered in a queue, so that
//! counting the periods that ended by `now` touches only the instances that missed one, and
//! the earliest end is the endpoint's next timer (the core reports a miss as an event when
//! it is due). Instances are tracked from their first update until they are unregistered or
//! disposed (or, on a reader, lose their last writer).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::sample::InstanceHandle;
use crate::time::Timestamp;

/// The OFFERED_DEADLINE_MISSED / REQUESTED_DEADLINE_MISSED status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeadlineMissedStatus {
    /// How many deadline periods ended without an update, over all instances.
    pub total_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
    /// The instance whose deadline was missed last.
    pub last_instance_handle: InstanceHandle,
}

/// Per-instance deadlines of one writer or reader.
#[derive(Debug)]
pub(crate) struct DeadlineTracker {
    /// `None`: no deadline (the default, infinite period).
    period: Option<Duration>,
    /// When the current period of each tracked instance ends.
    due: BTreeMap<InstanceHandle, Timestamp>,
    /// The same, ordered by time.
    queue: BTreeSet<(Timestamp, InstanceHandle)>,
    status: DeadlineMissedStatus,
}

impl DeadlineTracker {
    /// A tracker for `period` (`None` or zero: no deadline).
    pub(crate) fn new(period: Option<Duration>) -> Self {
        DeadlineTracker {
            period: period.filter(|p| !p.is_zero()),
            due: BTreeMap::new(),
            queue: BTreeSet::new(),
            status: DeadlineMissedStatus::default(),
        }
    }

    /// Counts the periods that ended by `now`; true when any did.
    pub(crate) fn count(&mut self, now: Timestamp) -> bool {
        let Some(period) = self.period else {
            return false;
        };
        let mut missed_any = false;
        while let Some(&(due, handle)) = self.queue.first() {
            if due > now {
                break;
            }
            self.queue.pop_first();
            let late = now.since(due);
            let missed = 1 + late.as_nanos() / period.as_nanos().max(1);
            self.status.total_count = self
                .status
                .total_count
                .saturating_add(u64::try_from(missed).unwrap_or(u64::MAX));
            self.status.last_instance_handle = handle;
            let step = period
                .checked_mul(u32::try_from(missed).unwrap_or(u32::MAX))
                .unwrap_or(Duration::MAX);
            let next = due.after(step);
            self.due.insert(handle, next);
            self.queue.insert((next, handle));
            missed_any = true;
        }
        missed_any
    }

    /// A new period (`set_qos`; `None` or zero: no deadline), from `now`: what ended
    /// before counts under the old period, and every instance tracked starts a period of
    /// the new length now. Instances not tracked (there was no deadline) are from their
    /// next update.
    pub(crate) fn set_period(&mut self, period: Option<Duration>, now: Timestamp) {
        let period = period.filter(|p| !p.is_zero());
        if period == self.period {
            return;
        }
        self.count(now);
        self.period = period;
        self.queue.clear();
        match period {
            None => self.due.clear(),
            Some(period) => {
                let next = now.after(period);
                for (handle, due) in &mut self.due {
                    *due = next;
                    self.queue.insert((next, *handle));
                }
            }
        }
    }

    /// When the next period ends, if any instance is tracked.
    pub(crate) fn next_due(&self) -> Option<Timestamp> {
        self.queue.first().map(|(t, _)| *t)
    }

    /// Instances with a due time.
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.due.len()
    }

    /// `handle` was written (writer) or received (reader) at `now`.
    pub(crate) fn updated(&mut self, handle: InstanceHandle, now: Timestamp) {
        if let Some(period) = self.period {
            self.count(now);
            let next = now.after(period);
            if let Some(old) = self.due.insert(handle, next) {
                self.queue.remove(&(old, handle));
            }
            self.queue.insert((next, handle));
        }
    }

    /// `handle` is no longer alive: its deadline no longer applies.
    pub(crate) fn removed(&mut self, handle: InstanceHandle, now: Timestamp) {
        if self.period.is_some() {
            self.count(now);
            if let Some(old) = self.due.remove(&handle) {
                self.queue.remove(&(old, handle));
            }
        }
    }

    /// The status at `now`.
    pub(crate) fn status(&mut self, now: Timestamp) -> DeadlineMissedStatus {
        self.count(now);
        self.status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp(n * 1_000_000)
    }

    #[test]
    fn a_new_period_starts_now_for_every_instance_tracked() {
        let mut d = DeadlineTracker::new(Some(Duration::from_millis(100)));
        let a = InstanceHandle([1; 16]);
        d.updated(a, ms(1000));
        d.set_period(Some(Duration::from_millis(500)), ms(1050));
        assert_eq!(
            d.next_due(),
            Some(ms(1550)),
            "the new period, from the change"
        );
        assert_eq!(
            d.status(ms(1500)).total_count,
            0,
            "the old period would have ended"
        );
        assert_eq!(d.status(ms(1560)).total_count, 1);
        d.set_period(None, ms(1600));
        assert_eq!(d.next_due(), None, "no deadline");
        d.updated(a, ms(1700));
        assert_eq!(
            d.status(ms(9000)).total_count,
            1,
            "nothing counts without one"
        );
    }

    #[test]
    fn each_period_without_an_update_counts_once() {
        let mut d = DeadlineTracker::new(Some(Duration::from_millis(100)));
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        assert_eq!(d.status(ms(500)).total_count, 0, "nothing tracked yet");
        d.updated(a, ms(1000));
        d.updated(b, ms(1000));
        d.updated(a, ms(1090));
        assert_eq!(d.next_due(), Some(ms(1100)), "b's");
        assert_eq!(d.status(ms(1150)).total_count, 1, "b missed once");
        assert_eq!(d.status(ms(1150)).last_instance_handle, b);
        assert_eq!(d.next_due(), Some(ms(1190)), "a's");
        // a: due at 1190, 1290; b: due at 1200, 1300 → by 1305: a twice, b twice more.
        assert_eq!(d.status(ms(1305)).total_count, 5);
        d.removed(b, ms(1305));
        assert_eq!(d.status(ms(1395)).total_count, 6, "only a counts now");
        assert_eq!(d.tracked(), 1);
    }

    #[test]
    fn no_deadline_counts_nothing() {
        let mut d = DeadlineTracker::new(None);
        d.updated(InstanceHandle([1; 16]), ms(0));
        assert_eq!(d.next_due(), None);
        assert_eq!(d.status(ms(10_000)), DeadlineMissedStatus::default());
    }
}
