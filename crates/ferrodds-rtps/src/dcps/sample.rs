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

impl SampleState {
    /// Its bit in a sample state mask (DCPS: READ 1, NOT_READ 2).
    pub const fn mask(self) -> u32 {
        match self {
            SampleState::Read => 1,
            SampleState::NotRead => 2,
        }
    }
}

impl ViewState {
    /// Its bit in a view state mask (DCPS: NEW 1, NOT_NEW 2).
    pub const fn mask(self) -> u32 {
        match self {
            ViewState::New => 1,
            ViewState::NotNew => 2,
        }
    }
}

impl InstanceState {
    /// Its bit in an instance state mask (DCPS: ALIVE 1, NOT_ALIVE_DISPOSED 2,
    /// NOT_ALIVE_NO_WRITERS 4).
    pub const fn mask(self) -> u32 {
        match self {
            InstanceState::Alive => 1,
            InstanceState::NotAliveDisposed => 2,
            InstanceState::NotAliveNoWriters => 4,
        }
    }
}

/// Which samples a read or take hands out: DCPS's three state masks (bits as
/// [`SampleState::mask`], [`ViewState::mask`], [`InstanceState::mask`]; a mask of 0 selects
/// nothing) and, for `read_instance`/`take_instance`, one instance. Samples it leaves out
/// stay in the reader untouched: a take removes, and a read marks READ, only what it hands
/// out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    /// Sample states selected.
    pub sample_states: u32,
    /// View states selected.
    pub view_states: u32,
    /// Instance states selected.
    pub instance_states: u32,
    /// Only samples of this instance, when set.
    pub instance: Option<InstanceHandle>,
}

impl Selection {
    /// Every sample (DCPS `ANY_SAMPLE_STATE | ANY_VIEW_STATE | ANY_INSTANCE_STATE`).
    pub const ANY: Selection = Selection {
        sample_states: 0b11,
        view_states: 0b11,
        instance_states: 0b111,
        instance: None,
    };

    /// The samples not read before.
    pub const NOT_READ: Selection = Selection {
        sample_states: SampleState::NotRead.mask(),
        ..Selection::ANY
    };

    /// Only the samples of `instance` (of those this selection selects).
    pub const fn of_instance(self, instance: InstanceHandle) -> Selection {
        Selection {
            instance: Some(instance),
            ..self
        }
    }

    /// True when a sample in these states is selected.
    pub const fn selects(
        self,
        sample: SampleState,
        view: ViewState,
        instance: InstanceState,
    ) -> bool {
        self.sample_states & sample.mask() != 0
            && self.view_states & view.mask() != 0
            && self.instance_states & instance.mask() != 0
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
