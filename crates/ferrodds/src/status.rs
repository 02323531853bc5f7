//! What the application last read of each status: DCPS's `*_change` fields and status
//! conditions are relative to it. A `*_status()` call reads a status (and so resets its
//! changes); a status condition holds while a status in its mask changed since.

use std::collections::HashMap;

use ferrodds_rtps::dcps::status::{
    DeadlineMissedStatus, IncompatibleStatus, InconsistentTopicStatus, LivelinessChangedStatus,
    LivelinessLostStatus, MatchedStatus, SampleLostStatus, SampleRejectedStatus,
};
use ferrodds_rtps::wire::EntityId;
use ferrodds_rtps::Timestamp;

use crate::runtime::{Core, Shared, StatusCallback, StatusKind, StatusMask};
use ferrodds_rtps::ParticipantCore;

/// A status whose counters DCPS reports with their change since the last read.
pub(crate) trait Counted {
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
pub(crate) struct StatusReads(
    HashMap<(EntityId, StatusKind), [u64; 2]>,
    HashMap<String, [u64; 2]>,
);

impl StatusReads {
    /// `status` of `id` with its changes since it was last read; now read.
    pub(crate) fn read<S: Counted>(&mut self, id: EntityId, kind: StatusKind, mut status: S) -> S {
        let now = status.counters();
        let before = self.0.insert((id, kind), now).unwrap_or_default();
        let change = |i: usize| (now[i] as i64).wrapping_sub(before[i] as i64);
        status.set_changes([change(0), change(1)]);
        status
    }

    /// Topic `name`'s INCONSISTENT_TOPIC `status` with its change since last read; now read.
    pub(crate) fn read_topic(
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
    fn changed(&self, id: EntityId, kind: StatusKind, now: [u64; 2]) -> bool {
        self.0.get(&(id, kind)).copied().unwrap_or_default() != now
    }

    /// Forgets a deleted entity.
    pub(crate) fn forget(&mut self, id: EntityId) {
        self.0.retain(|(e, _), _| *e != id);
    }
}

/// A writer's or reader's statuses with counters ([`StatusKind::ALL`] begins with them).
const COUNTED: &[StatusKind] = StatusKind::ALL.split_at(10).0;

/// The counters of status `kind` of writer or reader `id` as the core holds them at `now`
/// (`None`: the entity has no such status).
pub(crate) fn counters(
    core: &mut Core,
    id: EntityId,
    kind: StatusKind,
    now: Timestamp,
) -> Option<[u64; 2]> {
    let node = &mut core.node;
    let c = match kind {
        StatusKind::SubscriptionMatched => node.data_reader_ref(id)?.matches().status().counters(),
        StatusKind::PublicationMatched => node.data_writer_ref(id)?.matches().status().counters(),
        StatusKind::RequestedIncompatibleQos => node.data_reader_ref(id)?.incompatible().counters(),
        StatusKind::OfferedIncompatibleQos => node.data_writer_ref(id)?.incompatible().counters(),
        StatusKind::RequestedDeadlineMissed => {
            node.data_reader(id)?.deadline_missed(now).counters()
        }
        StatusKind::OfferedDeadlineMissed => node.data_writer(id)?.deadline_missed(now).counters(),
        StatusKind::SampleLost => node.data_reader_ref(id)?.sample_lost().counters(),
        StatusKind::SampleRejected => node.data_reader_ref(id)?.sample_rejected().counters(),
        StatusKind::LivelinessChanged => node.data_reader_ref(id)?.liveliness_changed().counters(),
        StatusKind::LivelinessLost => node.data_writer_ref(id)?.liveliness_lost().counters(),
        _ => return None,
    };
    Some(c)
}

/// Whether a status of writer or reader `id` in `mask` changed since the application last
/// read it (DATA_AVAILABLE: samples not read yet are waiting): a status condition's
/// trigger.
pub(crate) fn changed_since_read(
    core: &mut Core,
    id: EntityId,
    mask: StatusMask,
    now: Timestamp,
) -> bool {
    COUNTED
        .iter()
        .chain(&[StatusKind::DataAvailable])
        .filter(|&&k| mask.contains(k))
        .any(|&kind| match kind {
            StatusKind::DataAvailable => core
                .node
                .data_reader_ref(id)
                .is_some_and(|r| r.has_unread(now)),
            kind => counters(core, id, kind, now)
                .is_some_and(|c| core.status_reads.changed(id, kind, c)),
        })
}

/// Status `kind` of writer or reader `id`, as `get` finds it in the core, with its changes
/// since the application last read it; now read.
pub(crate) fn read_status<S: Counted + Default>(
    shared: &Shared,
    id: EntityId,
    kind: StatusKind,
    get: impl FnOnce(&mut ParticipantCore, Timestamp) -> Option<S>,
) -> S {
    let now = shared.now();
    let mut core = shared.lock();
    let status = get(&mut core.node, now).unwrap_or_default();
    core.status_reads.read(id, kind, status)
}

/// Every status with counters (what a status listener hears of by default).
pub(crate) fn counted_mask() -> StatusMask {
    StatusMask::of(COUNTED)
}

/// Sets writer or reader `id`'s listener for the statuses in `mask` (none: removes it).
/// A status in the mask that counted something already (a match found as the entity was
/// created) is reported to the listener at once, from this thread: a listener set late
/// hears of what it missed. The status is not read.
pub(crate) fn set_listener(
    shared: &Shared,
    id: EntityId,
    mask: StatusMask,
    listener: StatusCallback,
) {
    let now = shared.now();
    let earlier: Vec<StatusKind> = {
        let mut core = shared.lock();
        if mask == StatusMask::NONE {
            core.status_listeners.remove(&id);
            return;
        }
        core.status_listeners.insert(id, (mask, listener.clone()));
        COUNTED
            .iter()
            .copied()
            .filter(|&k| mask.contains(k))
            .filter(|&k| counters(&mut core, id, k, now).is_some_and(|c| c[0] > 0))
            .collect()
    };
    for kind in earlier {
        listener(kind);
    }
}

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
