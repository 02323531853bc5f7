//! What a [`ParticipantCore`](crate::ParticipantCore) reports: discovery's events, and the
//! DCPS statuses of its readers and writers as they change.

use super::liveliness::{LivelinessChangedStatus, LivelinessLostStatus};
use super::status::{
    DeadlineMissedStatus, IncompatibleStatus, MatchedStatus, SampleLostStatus, SampleRejectedStatus,
};
use crate::discovery_engine::DiscoveryEvent;
use crate::wire::EntityId;

/// An event of the participant core. Each status event carries the status after the change
/// (DCPS's listener arguments); a driver that runs no listeners may ignore all but
/// [`Event::DataAvailable`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// What discovery found (participants, matches of every endpoint, TypeLookup replies).
    Discovery(DiscoveryEvent),
    /// Samples (or instance state changes) arrived for `reader` since it was last reported
    /// (DATA_AVAILABLE).
    DataAvailable {
        /// The local reader.
        reader: EntityId,
    },
    /// A DCPS reader gained or lost a matched writer.
    SubscriptionMatched {
        /// The local reader.
        reader: EntityId,
        /// Its status now.
        status: MatchedStatus,
    },
    /// A DCPS writer gained or lost a matched reader.
    PublicationMatched {
        /// The local writer.
        writer: EntityId,
        /// Its status now.
        status: MatchedStatus,
    },
    /// A writer was found whose QoS or type does not fit `reader`.
    RequestedIncompatibleQos {
        /// The local reader.
        reader: EntityId,
        /// Its status now.
        status: IncompatibleStatus,
    },
    /// A reader was found whose QoS or type does not fit `writer`.
    OfferedIncompatibleQos {
        /// The local writer.
        writer: EntityId,
        /// Its status now.
        status: IncompatibleStatus,
    },
    /// A deadline period of an instance of `reader` ended without a sample.
    RequestedDeadlineMissed {
        /// The local reader.
        reader: EntityId,
        /// Its status now.
        status: DeadlineMissedStatus,
    },
    /// A deadline period of an instance of `writer` ended without a write.
    OfferedDeadlineMissed {
        /// The local writer.
        writer: EntityId,
        /// Its status now.
        status: DeadlineMissedStatus,
    },
    /// Samples for `reader` were lost on the way (SAMPLE_LOST).
    SampleLost {
        /// The local reader.
        reader: EntityId,
        /// Its status now.
        status: SampleLostStatus,
    },
    /// A writer matched with `reader` became alive or not alive (LIVELINESS_CHANGED).
    LivelinessChanged {
        /// The local reader.
        reader: EntityId,
        /// Its status now.
        status: LivelinessChangedStatus,
    },
    /// `writer`'s lease ran out without an assertion (LIVELINESS_LOST).
    LivelinessLost {
        /// The local writer.
        writer: EntityId,
        /// Its status now.
        status: LivelinessLostStatus,
    },
    /// A remote endpoint of `topic` has another type (INCONSISTENT_TOPIC).
    InconsistentTopic {
        /// The topic's name.
        topic: String,
        /// How many remote endpoints of it have had another type.
        total_count: u64,
    },
    /// Samples for `reader` were not stored (resource limits, undecodable keys).
    SampleRejected {
        /// The local reader.
        reader: EntityId,
        /// Its status now.
        status: SampleRejectedStatus,
    },
}
