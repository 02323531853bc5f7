//! What a reader hands out besides the data: DCPS `SampleInfo` and its states.

use crate::wire::Guid;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Whether the application has seen this sample before (DCPS SampleStateKind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleState {
    /// Returned by an earlier `read`.
    Read,
    /// Not returned before.
    NotRead,
}

/// Whether the instance is new to the application (DCPS ViewStateKind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViewState {
    /// First sample of the instance (or first since it was reborn).
    New,
    /// The application saw the instance before.
    NotNew,
}

/// The life of an instance (DCPS InstanceStateKind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstanceState {
    /// Writers are writing it.
    Alive,
    /// A writer disposed it.
    NotAliveDisposed,
    /// No writer writes it any more.
    NotAliveNoWriters,
}

impl InstanceState {
    /// The name DCPS and the interoperability suite print.
    pub const fn name(self) -> &'static str {
        match self {
            InstanceState::Alive => "ALIVE_INSTANCE_STATE",
            InstanceState::NotAliveDisposed => "NOT_ALIVE_DISPOSED_INSTANCE_STATE",
            InstanceState::NotAliveNoWriters => "NOT_ALIVE_NO_WRITERS_INSTANCE_STATE",
        }
    }
}

/// A handle naming an instance (its key hash) or an entity (its GUID).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct InstanceHandle(pub [u8; 16]);

impl InstanceHandle {
    /// The nil handle.
    pub const NIL: InstanceHandle = InstanceHandle([0; 16]);

    /// The handle of an entity.
    pub fn of_guid(guid: Guid) -> Self {
        InstanceHandle(guid.to_bytes())
    }
}

/// Information about a sample (DCPS SampleInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleInfo {
    /// Seen before or not.
    pub sample_state: SampleState,
    /// Instance new to the application or not.
    pub view_state: ViewState,
    /// The instance's state when the sample was handed out.
    pub instance_state: InstanceState,
    /// False for samples that only report an instance state change (dispose, unregister):
    /// their data holds only the key.
    pub valid_data: bool,
    /// When the writer wrote it, if it said.
    pub source_timestamp: Option<SystemTime>,
    /// The instance.
    pub instance_handle: InstanceHandle,
    /// The writer that wrote it.
    pub publication_handle: InstanceHandle,
    /// The writer's sequence number.
    pub sequence_number: i64,
}

/// Converts an RTPS time to a system time.
pub fn system_time(t: crate::wire::Time) -> Option<SystemTime> {
    t.to_nanos().map(|n| UNIX_EPOCH + Duration::from_nanos(n))
}

/// Converts a system time to an RTPS time.
pub fn rtps_time(t: SystemTime) -> crate::wire::Time {
    let nanos = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    crate::wire::Time::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}
