//! A DCPS data writer's state in the core: whom it is matched with, and its statuses. (Its
//! history is the RTPS writer's.)

use super::deadline::DeadlineTracker;
use super::liveliness::{LivelinessLostStatus, OwnLiveliness};
use super::sample::InstanceHandle;
use super::status::{DeadlineMissedStatus, IncompatibleStatus, Matches};
use crate::endpoint::ChangeKind;
use crate::qos::{EndpointQos, Presentation};
use crate::time::Timestamp;
use crate::wire::Guid;

/// The DCPS state of one local writer.
#[derive(Debug)]
pub struct DcpsWriter {
    matches: Matches,
    pub(crate) incompatible: IncompatibleStatus,
    pub(crate) deadline: DeadlineTracker,
    pub(crate) deadline_reported: u64,
    pub(crate) liveliness: OwnLiveliness,
    /// Its publisher's PRESENTATION, and the publisher (for coherent sets and group order).
    pub(crate) presentation: Presentation,
    pub(crate) group: Option<u32>,
}

impl DcpsWriter {
    /// A writer with `qos`, created at `now` (when its liveliness lease starts).
    pub fn new(qos: &EndpointQos, now: Timestamp) -> Self {
        DcpsWriter {
            matches: Matches::default(),
            incompatible: IncompatibleStatus::default(),
            deadline: DeadlineTracker::new(qos.deadline.period.to_std()),
            deadline_reported: 0,
            liveliness: OwnLiveliness::new(qos, now),
            presentation: qos.presentation,
            group: None,
        }
    }

    /// The writer as one of publisher `group`'s: its changes are marked with the
    /// publisher's coherent sets and (GROUP scope) order.
    pub fn with_group(mut self, group: u32) -> Self {
        self.group = Some(group);
        self
    }

    /// LIVELINESS_LOST.
    pub fn liveliness_lost(&self) -> LivelinessLostStatus {
        self.liveliness.status()
    }

    /// The readers matched, and PUBLICATION_MATCHED.
    pub fn matches(&self) -> &Matches {
        &self.matches
    }

    /// OFFERED_INCOMPATIBLE_QOS.
    pub fn incompatible(&self) -> &IncompatibleStatus {
        &self.incompatible
    }

    /// OFFERED_DEADLINE_MISSED at `now`.
    pub fn deadline_missed(&mut self, now: Timestamp) -> DeadlineMissedStatus {
        self.deadline.status(now)
    }

    pub(crate) fn reader_matched(&mut self, remote: Guid) {
        self.matches.add(remote);
    }

    pub(crate) fn reader_unmatched(&mut self, remote: Guid) {
        self.matches.remove(remote);
    }

    /// A change of `kind` to instance `handle` was written at `now`.
    pub(crate) fn written(&mut self, kind: ChangeKind, handle: InstanceHandle, now: Timestamp) {
        // Every write asserts the writer's liveliness (DDS 1.4 §2.2.3.11).
        let _ = self.liveliness.asserted(now);
        if kind == ChangeKind::Alive {
            self.deadline.updated(handle, now);
        } else {
            self.deadline.removed(handle, now);
        }
    }
}
