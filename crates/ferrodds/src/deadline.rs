//! DEADLINE (DDS 1.4 §2.2.3.7): every instance is expected to be updated at least once per
//! period; each period that passes without an update counts once in the writer's
//! OFFERED_DEADLINE_MISSED and the reader's REQUESTED_DEADLINE_MISSED status.
//!
//! Nothing runs on a timer: each instance keeps the time its current period ends, and
//! asking for the status (or updating the instance) first counts the periods that ended
//! since. Instances are tracked from their first update until they are unregistered or
//! disposed (or, on a reader, lose their last writer).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::sample::InstanceHandle;

/// The OFFERED_DEADLINE_MISSED / REQUESTED_DEADLINE_MISSED status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeadlineMissedStatus {
    /// How many deadline periods ended without an update, over all instances.
    pub total_count: u64,
    /// The instance whose deadline was missed last.
    pub last_instance_handle: InstanceHandle,
}

/// Per-instance deadlines of one writer or reader.
#[derive(Debug)]
pub(crate) struct DeadlineTracker {
    /// `None`: no deadline (the default, infinite period).
    period: Option<Duration>,
    /// When the current period of each tracked instance ends.
    due: BTreeMap<InstanceHandle, Instant>,
    status: DeadlineMissedStatus,
}

impl DeadlineTracker {
    /// A tracker for `period` (`None` or zero: no deadline).
    pub(crate) fn new(period: Option<Duration>) -> Self {
        DeadlineTracker {
            period: period.filter(|p| !p.is_zero()),
            due: BTreeMap::new(),
            status: DeadlineMissedStatus::default(),
        }
    }

    /// Counts the periods that ended by `now`.
    fn count(&mut self, now: Instant) {
        let Some(period) = self.period else {
            return;
        };
        for (handle, due) in self.due.iter_mut() {
            if *due > now {
                continue;
            }
            let late = now.duration_since(*due);
            let missed = 1 + late.as_nanos() / period.as_nanos().max(1);
            self.status.total_count = self
                .status
                .total_count
                .saturating_add(u64::try_from(missed).unwrap_or(u64::MAX));
            self.status.last_instance_handle = *handle;
            let step = period
                .checked_mul(u32::try_from(missed).unwrap_or(u32::MAX))
                .unwrap_or(Duration::MAX);
            *due = due.checked_add(step).unwrap_or(now + period);
        }
    }

    /// `handle` was written (writer) or received (reader) at `now`.
    /// Instances with a due time.
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.due.len()
    }

    pub(crate) fn updated(&mut self, handle: InstanceHandle, now: Instant) {
        if let Some(period) = self.period {
            self.count(now);
            self.due.insert(handle, now + period);
        }
    }

    /// `handle` is no longer alive: its deadline no longer applies.
    pub(crate) fn removed(&mut self, handle: InstanceHandle, now: Instant) {
        if self.period.is_some() {
            self.count(now);
            self.due.remove(&handle);
        }
    }

    /// The status at `now`.
    pub(crate) fn status(&mut self, now: Instant) -> DeadlineMissedStatus {
        self.count(now);
        self.status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_period_without_an_update_counts_once() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut d = DeadlineTracker::new(Some(ms(100)));
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        assert_eq!(d.status(t0 + ms(500)).total_count, 0, "nothing tracked yet");
        d.updated(a, t0);
        d.updated(b, t0);
        d.updated(a, t0 + ms(90));
        assert_eq!(d.status(t0 + ms(150)).total_count, 1, "b missed once");
        assert_eq!(d.status(t0 + ms(150)).last_instance_handle, b);
        // a: due at 190, 290; b: due at 200, 300 → by 305: a twice, b twice more.
        assert_eq!(d.status(t0 + ms(305)).total_count, 5);
        d.removed(b, t0 + ms(305));
        assert_eq!(d.status(t0 + ms(395)).total_count, 6, "only a counts now");
    }

    #[test]
    fn no_deadline_counts_nothing() {
        let t0 = Instant::now();
        let mut d = DeadlineTracker::new(None);
        d.updated(InstanceHandle([1; 16]), t0);
        assert_eq!(
            d.status(t0 + Duration::from_secs(10)),
            DeadlineMissedStatus::default()
        );
    }
}
