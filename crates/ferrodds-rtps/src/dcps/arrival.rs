//! A received change on its way from the RTPS reader into the DCPS cache, in two steps so
//! that the costly part can run outside whatever lock the driver keeps the core in.
//!
//! 1. **Preparation** — finding the instance (decoding the key and hashing it) and running
//!    the content filter — needs only the payload and the reader's type, not the core. The
//!    core hands it out as a [`Preparation`]; the driver runs [`Preparation::prepare`]
//!    wherever it likes (the runtime: in the receive thread, with the lock released) and
//!    gives the [`Prepared`] result back.
//! 2. **Admission** — the instance lookup by key hash, ownership, lifespan, time-based
//!    filter, deadline, resource limits, the cache — happens in the core.
//!
//! Changes of one reader are admitted in the order they arrived, whatever order their
//! preparations come back in: each waits in a slot of the reader's queue until every
//! earlier one is prepared.

use std::sync::Arc;

use super::delivery::ContentFilter;
use super::instance_keys::InstanceKeys;
use super::sample::InstanceHandle;
use crate::endpoint::ChangeKind;
use crate::reader::ReceivedChange;
use crate::wire::EntityId;

/// How a prepared change names its instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// By the key hash of the key in its payload.
    Instance(InstanceHandle),
    /// By PID_KEY_HASH alone (a dispose or unregister without a key payload, as Fast DDS
    /// and RTI Connext send them): looked up among the instances held.
    ByKeyHash,
    /// Its key does not decode as the reader's type.
    Undecodable,
}

/// A received change whose instance and content-filter verdict are yet to be found.
pub struct Preparation {
    pub(crate) reader: EntityId,
    pub(crate) ticket: u64,
    pub(crate) change: ReceivedChange,
    pub(crate) keys: Arc<InstanceKeys>,
    pub(crate) filter: Option<ContentFilter>,
}

impl std::fmt::Debug for Preparation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preparation")
            .field("reader", &self.reader)
            .field("ticket", &self.ticket)
            .field("writer", &self.change.writer)
            .field("sequence_number", &self.change.sequence_number)
            .finish_non_exhaustive()
    }
}

/// A prepared change, for [`ParticipantCore::handle_prepared`](crate::ParticipantCore::handle_prepared).
#[derive(Debug)]
pub struct Prepared {
    pub(crate) reader: EntityId,
    pub(crate) ticket: u64,
    pub(crate) change: ReceivedChange,
    pub(crate) found: Found,
    pub(crate) passes_filter: bool,
}

impl Preparation {
    /// The reader the change is for.
    pub fn reader(&self) -> EntityId {
        self.reader
    }

    /// Finds the change's instance and runs the content filter: the decoding a core leaves
    /// to its driver's thread.
    pub fn prepare(self) -> Prepared {
        let (found, passes_filter) = examine(&self.keys, self.filter.as_ref(), &self.change);
        Prepared {
            reader: self.reader,
            ticket: self.ticket,
            change: self.change,
            found,
            passes_filter,
        }
    }
}

/// The instance of `change` and whether the filter lets it in. A filter judges samples
/// only; a dispose or unregister is judged by whether the reader knows its instance.
///
/// The key functions and the filter are code the core does not own (derived code, the
/// application's predicate) run on bytes from the network: one that panics drops the change
/// it was looking at (an undecodable key, or a sample the filter does not let in) rather
/// than unwind through the driver, whose reader would otherwise wait for the change's slot
/// for ever.
pub(crate) fn examine(
    keys: &InstanceKeys,
    filter: Option<&ContentFilter>,
    change: &ReceivedChange,
) -> (Found, bool) {
    let key_only = change.kind != ChangeKind::Alive;
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| find(keys, change)))
        .unwrap_or(Found::Undecodable);
    let passes = key_only
        || found == Found::Undecodable
        || filter.is_none_or(|f| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&change.payload)))
                .unwrap_or(false)
        });
    (found, passes)
}

/// How `change` names its instance.
fn find(keys: &InstanceKeys, change: &ReceivedChange) -> Found {
    let key_only = change.kind != ChangeKind::Alive;
    if !keys.keyed() {
        Found::Instance(InstanceHandle::NIL)
    } else if change.payload.is_empty() && key_only {
        Found::ByKeyHash
    } else {
        match keys.of_payload(&change.payload, key_only) {
            Some(handle) => Found::Instance(handle),
            None => Found::Undecodable,
        }
    }
}
