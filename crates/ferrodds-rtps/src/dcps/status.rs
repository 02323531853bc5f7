//! The DCPS communication statuses a core keeps per endpoint and reports as
//! [`Event`](super::Event)s when they change.

use std::collections::BTreeSet;

use ferrodds_cdr::dynamic::assignable::NotAssignable;

use crate::qos::QosPolicyId;
use crate::wire::Guid;

pub use super::cache::{SampleRejectedReason, SampleRejectedStatus};
pub use super::deadline::DeadlineMissedStatus;
pub use super::liveliness::{LivelinessChangedStatus, LivelinessLostStatus};

/// The OFFERED/REQUESTED_INCOMPATIBLE_QOS status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncompatibleStatus {
    /// How many remote endpoints did not match because of QoS.
    pub total_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
    /// The policy that failed last.
    pub last_policy: Option<QosPolicyId>,
    /// When the last failure was TYPE_CONSISTENCY_ENFORCEMENT: what in the types is not
    /// assignable.
    pub last_type_mismatch: Option<NotAssignable>,
}

/// The INCONSISTENT_TOPIC status of a topic: remote endpoints of its name whose type is
/// another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InconsistentTopicStatus {
    /// Remote endpoints found so far with the topic's name and another type.
    pub total_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
}

/// The SAMPLE_LOST status: samples a reader will never receive — a best-effort reader
/// skipped them, or a reliable writer declared them gone (GAP, or a HEARTBEAT past them)
/// before they arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleLostStatus {
    /// Samples lost so far.
    pub total_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
}

/// The PUBLICATION_MATCHED / SUBSCRIPTION_MATCHED status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MatchedStatus {
    /// Remote endpoints matched so far, including those no longer matched.
    pub total_count: u64,
    /// Remote endpoints matched now.
    pub current_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
    /// Change of `current_count` since the application last read this status.
    pub current_count_change: i64,
    /// The remote endpoint that matched or unmatched last.
    pub last_remote: Option<Guid>,
}

/// The remote endpoints a local one is matched with, and its *_MATCHED status.
#[derive(Debug, Clone, Default)]
pub struct Matches {
    remotes: BTreeSet<Guid>,
    status: MatchedStatus,
    /// Matches gained plus matches lost, for conditions that wait for either.
    changes: u64,
}

impl Matches {
    /// The remote endpoints matched now.
    pub fn remotes(&self) -> &BTreeSet<Guid> {
        &self.remotes
    }

    /// PUBLICATION_MATCHED / SUBSCRIPTION_MATCHED.
    pub fn status(&self) -> MatchedStatus {
        self.status
    }

    /// How many times a remote endpoint matched or unmatched.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// `remote` matched; false when it already was.
    pub(crate) fn add(&mut self, remote: Guid) -> bool {
        if !self.remotes.insert(remote) {
            return false;
        }
        self.changes += 1;
        self.status.total_count += 1;
        self.status.current_count += 1;
        self.status.last_remote = Some(remote);
        true
    }

    /// `remote` no longer matches; false when it did not.
    pub(crate) fn remove(&mut self, remote: Guid) -> bool {
        if !self.remotes.remove(&remote) {
            return false;
        }
        self.changes += 1;
        self.status.current_count = self.status.current_count.saturating_sub(1);
        self.status.last_remote = Some(remote);
        true
    }
}
