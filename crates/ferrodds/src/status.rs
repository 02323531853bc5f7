//! The statuses as the application reads them and listeners hear of them, over the
//! core's record of what was read (`ferrodds_rtps::dcps::status_reads`).

use ferrodds_rtps::dcps::status_reads::{Counted, COUNTED};
use ferrodds_rtps::wire::EntityId;
use ferrodds_rtps::{ParticipantCore, Timestamp};

use crate::runtime::{Shared, StatusCallback, StatusKind, StatusMask};

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
    core.node.read_status(id, kind, status)
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
        crate::runtime::listener_installed();
        core.status_listeners.insert(id, (mask, listener.clone()));
        COUNTED
            .iter()
            .copied()
            .filter(|&k| mask.contains(k))
            .filter(|&k| {
                core.node
                    .status_counters(id, k, now)
                    .is_some_and(|c| c[0] > 0)
            })
            .collect()
    };
    for kind in earlier {
        listener(kind);
    }
}
