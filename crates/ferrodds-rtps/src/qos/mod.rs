//! The DDS QoS policies that travel in discovery and decide whether a writer and a
//! reader match, as plain Rust values with the defaults of DDS 1.4 §2.2.3 and
//! DDS-XTypes 1.3 §7.6.3, and the rules that compare them ([`matching`]).
//!
//! This module knows nothing of the wire: how each policy is encoded in a parameter
//! list lives in [`crate::discovery`]. The one wire-shaped type here is [`Duration`],
//! RTPS's `Duration_t` (seconds and 2^-32 fractions), because that is the precision the
//! peers compare durations in.
//!
//! Policies that are only a kind are enums ([`Durability`], [`Ownership`],
//! [`DestinationOrder`]); the others are small structs. Each implements `Default` with
//! the spec's default, except [`Reliability`], whose default depends on the entity
//! (RELIABLE for writers, BEST_EFFORT for readers): [`EndpointQos::writer_default`] and
//! [`EndpointQos::reader_default`] hold the two complete sets.

mod duration;
pub mod matching;
mod policies;

pub use duration::Duration;
pub use matching::{
    check_compatibility, match_qos, partitions_match, IncompatibleQos, QosMismatch,
};
pub use policies::{
    DataRepresentation, DataRepresentationId, Deadline, DestinationOrder, Durability,
    DurabilityService, EndpointQos, GroupData, History, LatencyBudget, Lifespan, Liveliness,
    LivelinessKind, Ownership, OwnershipStrength, Partition, Presentation, PresentationAccessScope,
    QosPolicyId, Reliability, ReliabilityKind, ResourceLimits, TimeBasedFilter, TopicData,
    TypeConsistencyEnforcement, TypeConsistencyKind, UserData, LENGTH_UNLIMITED,
};
