//! What the application last read of each status, and the statuses as a status condition
//! or listener sees them: DCPS's `*_change` fields and status conditions are relative to
//! the last read. A `*_status()` call reads a status (and so resets its changes); a status
//! condition holds while a status in its mask changed since. Kept in the core
//! ([`crate::ParticipantCore::status_changed`], [`crate::ParticipantCore::read_status`]) so
//! that the simulator tests status conditions in virtual time.

use std::collections::HashMap;

use super::event::Event;
use super::status::{
    DeadlineMissedStatus, IncompatibleStatus, InconsistentTopicStatus, LivelinessChangedStatus,
    LivelinessLostStatus, MatchedStatus, SampleLostStatus, SampleRejectedStatus,
};
use crate::wire::EntityId;

/// Which statuses a publisher's, subscriber's or participant's listener hears of (DCPS's
/// `StatusMask`): those its entities have no listener of their own for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatusMask(u32);

impl StatusMask {
    /// No status.
    pub const NONE: StatusMask = StatusMask(0);
    /// Every status.
    pub const ALL: StatusMask = StatusMask(u32::MAX);

    /// The mask of `kinds`.
    pub fn of(kinds: &[StatusKind]) -> StatusMask {
        StatusMask(kinds.iter().fold(0, |m, k| m | k.bit()))
    }

    /// Whether it holds `kind`.
    pub const fn contains(self, kind: StatusKind) -> bool {
        self.0 & kind.bit() != 0
    }
}

impl std::ops::BitOr for StatusMask {
    type Output = StatusMask;
    fn bitor(self, other: StatusMask) -> StatusMask {
        StatusMask(self.0 | other.0)
    }
}

/// A DCPS status of a reader or writer whose change a status listener hears of
/// (DATA_AVAILABLE has a listener of its own). The listener reads the status itself — the
/// entity's `*_status()` call — so that what it sees is never older than the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatusKind {
    /// A reader gained or lost a matched writer.
    SubscriptionMatched,
    /// A writer gained or lost a matched reader.
    PublicationMatched,
    /// A writer was found that does not fit a reader.
    RequestedIncompatibleQos,
    /// A reader was found that does not fit a writer.
    OfferedIncompatibleQos,
    /// A reader's deadline passed without a sample of an instance.
    RequestedDeadlineMissed,
    /// A writer's deadline passed without a write of an instance.
    OfferedDeadlineMissed,
    /// Samples for a reader were lost on the way.
    SampleLost,
    /// Samples for a reader were not stored.
    SampleRejected,
    /// A writer matched with a reader became alive or not alive.
    LivelinessChanged,
    /// A writer did not assert its liveliness within its lease.
    LivelinessLost,
    /// Samples arrived at a reader (a parent's listener hears of it when the reader has no
    /// data-available listener of its own).
    DataAvailable,
    /// Samples arrived at one of a subscriber's readers: a subscriber's or participant's
    /// listener with it in its mask is called instead of the readers' data-available
    /// listeners (DCPS: DATA_ON_READERS takes precedence).
    DataOnReaders,
    /// A remote endpoint of a topic has another type (a topic's status, heard by the
    /// topic's listener or else the participant's).
    InconsistentTopic,
}

impl StatusKind {
    /// Every status: a writer's or reader's counted ones first (SUBSCRIPTION_MATCHED to
    /// LIVELINESS_LOST), then DATA_AVAILABLE, DATA_ON_READERS and INCONSISTENT_TOPIC.
    pub const ALL: [StatusKind; 13] = [
        StatusKind::SubscriptionMatched,
        StatusKind::PublicationMatched,
        StatusKind::RequestedIncompatibleQos,
        StatusKind::OfferedIncompatibleQos,
        StatusKind::RequestedDeadlineMissed,
        StatusKind::OfferedDeadlineMissed,
        StatusKind::SampleLost,
        StatusKind::SampleRejected,
        StatusKind::LivelinessChanged,
        StatusKind::LivelinessLost,
        StatusKind::DataAvailable,
        StatusKind::DataOnReaders,
        StatusKind::InconsistentTopic,
    ];

    /// The DCPS status's name in snake case (`"subscription_matched"`, …), as listener
    /// callbacks are named after it (`on_subscription_matched`).
    pub const fn name(self) -> &'static str {
        match self {
            StatusKind::SubscriptionMatched => "subscription_matched",
            StatusKind::PublicationMatched => "publication_matched",
            StatusKind::RequestedIncompatibleQos => "requested_incompatible_qos",
            StatusKind::OfferedIncompatibleQos => "offered_incompatible_qos",
            StatusKind::RequestedDeadlineMissed => "requested_deadline_missed",
            StatusKind::OfferedDeadlineMissed => "offered_deadline_missed",
            StatusKind::SampleLost => "sample_lost",
            StatusKind::SampleRejected => "sample_rejected",
            StatusKind::LivelinessChanged => "liveliness_changed",
            StatusKind::LivelinessLost => "liveliness_lost",
            StatusKind::DataAvailable => "data_available",
            StatusKind::DataOnReaders => "data_on_readers",
            StatusKind::InconsistentTopic => "inconsistent_topic",
        }
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// The status an event of the core reports, and the entity it is of.
    pub fn of_event(event: &Event) -> Option<(EntityId, StatusKind)> {
        Some(match *event {
            Event::SubscriptionMatched { reader, .. } => (reader, StatusKind::SubscriptionMatched),
            Event::PublicationMatched { writer, .. } => (writer, StatusKind::PublicationMatched),
            Event::RequestedIncompatibleQos { reader, .. } => {
                (reader, StatusKind::RequestedIncompatibleQos)
            }
            Event::OfferedIncompatibleQos { writer, .. } => {
                (writer, StatusKind::OfferedIncompatibleQos)
            }
            Event::RequestedDeadlineMissed { reader, .. } => {
                (reader, StatusKind::RequestedDeadlineMissed)
            }
            Event::OfferedDeadlineMissed { writer, .. } => {
                (writer, StatusKind::OfferedDeadlineMissed)
            }
            Event::SampleLost { reader, .. } => (reader, StatusKind::SampleLost),
            Event::SampleRejected { reader, .. } => (reader, StatusKind::SampleRejected),
            Event::LivelinessChanged { reader, .. } => (reader, StatusKind::LivelinessChanged),
            Event::LivelinessLost { writer, .. } => (writer, StatusKind::LivelinessLost),
            _ => return None,
        })
    }
}

/// A status whose counters DCPS reports with their change since the last read.
pub trait Counted {
    /// Its counters (the second is 0 for statuses with one).
    fn counters(&self) -> [u64; 2];
    /// Sets the `*_change` fields.
    fn set_changes(&mut self, changes: [i64; 2]);
}

macro_rules! counted_total {
    ($($t:ty),*) => {$(
        impl Counted for $t {
            fn counters(&self) -> [u64; 2] {
                [self.total_count, 0]
            }
            fn set_changes(&mut self, changes: [i64; 2]) {
                self.total_count_change = changes[0];
            }
        }
    )*};
}

counted_total!(
    InconsistentTopicStatus,
    IncompatibleStatus,
    SampleLostStatus,
    SampleRejectedStatus,
    LivelinessLostStatus,
    DeadlineMissedStatus
);

impl Counted for MatchedStatus {
    fn counters(&self) -> [u64; 2] {
        [self.total_count, self.current_count]
    }
    fn set_changes(&mut self, changes: [i64; 2]) {
        self.total_count_change = changes[0];
        self.current_count_change = changes[1];
    }
}

impl Counted for LivelinessChangedStatus {
    fn counters(&self) -> [u64; 2] {
        [u64::from(self.alive_count), u64::from(self.not_alive_count)]
    }
    fn set_changes(&mut self, changes: [i64; 2]) {
        self.alive_count_change = changes[0];
        self.not_alive_count_change = changes[1];
    }
}

/// The counters of each entity's statuses as last read (topics by name).
#[derive(Debug, Default)]
pub struct StatusReads(
    HashMap<(EntityId, StatusKind), [u64; 2]>,
    HashMap<String, [u64; 2]>,
);

impl StatusReads {
    /// `status` of `id` with its changes since it was last read; now read.
    pub fn read<S: Counted>(&mut self, id: EntityId, kind: StatusKind, mut status: S) -> S {
        let now = status.counters();
        let before = self.0.insert((id, kind), now).unwrap_or_default();
        let change = |i: usize| (now[i] as i64).wrapping_sub(before[i] as i64);
        status.set_changes([change(0), change(1)]);
        status
    }

    /// Topic `name`'s INCONSISTENT_TOPIC `status` with its change since last read; now read.
    pub fn read_topic(
        &mut self,
        name: &str,
        mut status: InconsistentTopicStatus,
    ) -> InconsistentTopicStatus {
        let now = status.counters();
        let before = self.1.insert(name.to_owned(), now).unwrap_or_default();
        status.set_changes([(now[0] as i64).wrapping_sub(before[0] as i64), 0]);
        status
    }

    /// Whether status `kind` of `id`, whose counters are `now`, changed since last read.
    pub fn changed(&self, id: EntityId, kind: StatusKind, now: [u64; 2]) -> bool {
        self.0.get(&(id, kind)).copied().unwrap_or_default() != now
    }

    /// Forgets a deleted entity.
    pub fn forget(&mut self, id: EntityId) {
        self.0.retain(|(e, _), _| *e != id);
    }
}

/// A writer's or reader's statuses with counters ([`StatusKind::ALL`] begins with them).
pub const COUNTED: &[StatusKind] = StatusKind::ALL.split_at(10).0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_reports_the_change_since_the_last_read_and_resets_it() {
        let mut reads = StatusReads::default();
        let id = EntityId([0, 0, 1, 7]);
        let kind = StatusKind::PublicationMatched;
        let status = |total, current| MatchedStatus {
            total_count: total,
            current_count: current,
            ..Default::default()
        };
        assert!(reads.changed(id, kind, [2, 2]));
        let s = reads.read(id, kind, status(2, 2));
        assert_eq!((s.total_count_change, s.current_count_change), (2, 2));
        assert!(!reads.changed(id, kind, [2, 2]));
        let s = reads.read(id, kind, status(3, 1));
        assert_eq!((s.total_count_change, s.current_count_change), (1, -1));
        let s = reads.read(id, kind, status(3, 1));
        assert_eq!((s.total_count_change, s.current_count_change), (0, 0));
        reads.forget(id);
        assert!(reads.changed(id, kind, [3, 1]));
    }
}
