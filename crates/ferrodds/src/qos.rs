//! QoS for writers and readers: the DDS policies, with builder-style setters over the
//! spec's defaults.
//!
//! ```
//! use ferrodds::Qos;
//! use std::time::Duration;
//! let qos = Qos::writer().reliable().keep_all().transient_local().max_blocking_time(Duration::from_secs(1));
//! ```

use std::time::Duration;

use ferrodds_rtps::dcps::PurgeDelays;
/// A QoS policy's duration (DDS `Duration_t`: seconds and nanoseconds, or infinite), as
/// [`DurabilityService::service_cleanup_delay`] holds it.
pub use ferrodds_rtps::qos::Duration as PolicyDuration;
pub use ferrodds_rtps::qos::{
    DataRepresentationId, DestinationOrder, Durability, DurabilityService, EndpointQos, History,
    LivelinessKind, Ownership, Partition, Presentation, PresentationAccessScope, QosPolicyId,
    Reliability, ReliabilityKind, ResourceLimits, TypeConsistencyEnforcement, TypeConsistencyKind,
};
use ferrodds_rtps::qos::{Duration as RtpsDuration, LENGTH_UNLIMITED};

/// How writes leave the process (Fast DDS's publish modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PublishMode {
    /// In the writer's calling thread (the default: lowest latency).
    #[default]
    Synchronous,
    /// From the participant's own thread; `write` returns once the sample is queued.
    Asynchronous,
}

/// The QoS of one writer or reader.
#[derive(Debug, Clone, PartialEq)]
pub struct Qos {
    pub(crate) policies: EndpointQos,
    pub(crate) publish_mode: PublishMode,
    /// Writer batching: how long a new sample may wait for others to share its datagram.
    pub(crate) batch_delay: Option<Duration>,
    /// When set, the data representation was chosen by the application.
    pub(crate) representation_set: bool,
    /// Matches no endpoint of its own participant ([`Qos::ignore_local`]).
    pub(crate) ignore_local: bool,
    /// WRITER_DATA_LIFECYCLE's autodispose_unregistered_instances (default true).
    pub(crate) autodispose: bool,
    /// READER_DATA_LIFECYCLE's purge delays (default: none).
    pub(crate) purge: PurgeDelays,
    /// The publisher or subscriber (with coherent or ordered access) it belongs to.
    pub(crate) group: Option<u32>,
    /// The publisher or subscriber it was created in (whose listener hears of its
    /// statuses when it has no listener of its own).
    pub(crate) parent: Option<u32>,
}

impl Qos {
    /// A writer's defaults: RELIABLE (max blocking 100 ms), VOLATILE, KEEP_LAST 1.
    pub fn writer() -> Self {
        Qos {
            policies: EndpointQos::writer_default(),
            publish_mode: PublishMode::Synchronous,
            batch_delay: None,
            representation_set: false,
            ignore_local: false,
            autodispose: true,
            purge: PurgeDelays::default(),
            group: None,
            parent: None,
        }
    }

    /// A reader's defaults: BEST_EFFORT, VOLATILE, KEEP_LAST 1, accepting XCDR1 and XCDR2.
    pub fn reader() -> Self {
        let mut policies = EndpointQos::reader_default();
        policies.data_representation.ids =
            vec![DataRepresentationId::XCDR, DataRepresentationId::XCDR2];
        Qos {
            policies,
            publish_mode: PublishMode::Synchronous,
            batch_delay: None,
            representation_set: false,
            ignore_local: false,
            autodispose: true,
            purge: PurgeDelays::default(),
            group: None,
            parent: None,
        }
    }

    /// The policies as SEDP carries them.
    pub fn policies(&self) -> &EndpointQos {
        &self.policies
    }

    /// The policies, to set what the builder methods do not cover.
    pub fn policies_mut(&mut self) -> &mut EndpointQos {
        &mut self.policies
    }

    /// RELIABLE.
    pub fn reliable(mut self) -> Self {
        self.policies.reliability.kind = ReliabilityKind::Reliable;
        self
    }

    /// BEST_EFFORT.
    pub fn best_effort(mut self) -> Self {
        self.policies.reliability.kind = ReliabilityKind::BestEffort;
        self
    }

    /// How long a reliable KEEP_ALL `write` waits for room before it fails with a timeout.
    pub fn max_blocking_time(mut self, d: Duration) -> Self {
        self.policies.reliability.max_blocking_time = RtpsDuration::from_std(d);
        self
    }

    /// KEEP_LAST `depth`.
    pub fn keep_last(mut self, depth: u32) -> Self {
        self.policies.history = History::KeepLast {
            depth: i32::try_from(depth.max(1)).unwrap_or(i32::MAX),
        };
        self
    }

    /// KEEP_ALL.
    pub fn keep_all(mut self) -> Self {
        self.policies.history = History::KeepAll;
        self
    }

    /// VOLATILE.
    pub fn volatile(mut self) -> Self {
        self.policies.durability = Durability::Volatile;
        self
    }

    /// TRANSIENT_LOCAL: a writer keeps its history for late-joining readers.
    pub fn transient_local(mut self) -> Self {
        self.policies.durability = Durability::TransientLocal;
        self
    }

    /// DURABILITY of any kind. A TRANSIENT or PERSISTENT writer keeps its history for late
    /// joiners as a TRANSIENT_LOCAL one does; what it wrote outlives it when a durability
    /// service runs in the domain (`ferrodds durability`), which keeps it as
    /// [`Qos::durability_service`] says.
    pub fn durability(mut self, kind: Durability) -> Self {
        self.policies.durability = kind;
        self
    }

    /// DURABILITY_SERVICE (a TRANSIENT or PERSISTENT writer's): how the durability service
    /// keeps its samples — its history (KEEP_LAST 1 by default), resource limits and how long
    /// a disposed instance is kept once its writer is gone.
    pub fn durability_service(mut self, service: DurabilityService) -> Self {
        self.policies.durability_service = service;
        self
    }

    /// RESOURCE_LIMITS max_samples (all instances).
    pub fn max_samples(mut self, n: u32) -> Self {
        self.policies.resource_limits.max_samples = i32::try_from(n).unwrap_or(i32::MAX);
        self
    }

    /// PARTITION names (wildcards allowed).
    pub fn partition<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.policies.partition.names = names.into_iter().map(Into::into).collect();
        self
    }

    /// USER_DATA: bytes announced with the endpoint (peers see them in discovery, as
    /// Cyclone DDS's DCPSPublication/DCPSSubscription built-in topics show them).
    pub fn user_data(mut self, value: impl Into<Vec<u8>>) -> Self {
        self.policies.user_data.value = value.into();
        self
    }

    /// TOPIC_DATA: bytes announced with the endpoint, of its topic.
    pub fn topic_data(mut self, value: impl Into<Vec<u8>>) -> Self {
        self.policies.topic_data.value = value.into();
        self
    }

    /// GROUP_DATA: bytes announced with the endpoint, of its publisher or subscriber.
    pub fn group_data(mut self, value: impl Into<Vec<u8>>) -> Self {
        self.policies.group_data.value = value.into();
        self
    }

    /// LATENCY_BUDGET: the delay from write to delivery the application accepts (a hint,
    /// matched as DDS says: offered at most what is requested).
    pub fn latency_budget(mut self, budget: Duration) -> Self {
        self.policies.latency_budget.duration = RtpsDuration::from_std(budget);
        self
    }

    /// DEADLINE period.
    pub fn deadline(mut self, period: Duration) -> Self {
        self.policies.deadline.period = RtpsDuration::from_std(period);
        self
    }

    /// LIVELINESS: who asserts a writer's liveliness (`kind`) and how long it counts as
    /// alive after each assertion (`lease`; `None`: forever, the default). A writer offers
    /// it, a reader requests at least as much.
    pub fn liveliness(mut self, kind: LivelinessKind, lease: Option<Duration>) -> Self {
        self.policies.liveliness.kind = kind;
        self.policies.liveliness.lease_duration =
            lease.map_or(RtpsDuration::INFINITE, RtpsDuration::from_std);
        self
    }

    /// OWNERSHIP EXCLUSIVE with OWNERSHIP_STRENGTH `strength` (which only a writer announces):
    /// a reader takes each instance from its strongest writer only.
    pub fn exclusive_ownership(mut self, strength: i32) -> Self {
        self.policies.ownership = Ownership::Exclusive;
        self.policies.ownership_strength.value = strength;
        self
    }

    /// LIFESPAN (a writer's): readers drop its samples this long after their source
    /// timestamp.
    pub fn lifespan(mut self, duration: Duration) -> Self {
        self.policies.lifespan.duration = RtpsDuration::from_std(duration);
        self
    }

    /// TYPE_CONSISTENCY_ENFORCEMENT (a reader's): which writers' types it takes. By
    /// default any type assignable to its own (XTypes 7.2.4), ignoring string and sequence
    /// bounds, comparing member names.
    pub fn type_consistency(mut self, policy: TypeConsistencyEnforcement) -> Self {
        self.policies.type_consistency = policy;
        self
    }

    /// TIME_BASED_FILTER (a reader's): at most one sample per instance per
    /// `minimum_separation`.
    pub fn time_based_filter(mut self, minimum_separation: Duration) -> Self {
        self.policies.time_based_filter.minimum_separation =
            RtpsDuration::from_std(minimum_separation);
        self
    }

    /// DATA_REPRESENTATION: a writer offers the first; a reader accepts any listed.
    pub fn data_representation(
        mut self,
        ids: impl IntoIterator<Item = DataRepresentationId>,
    ) -> Self {
        self.policies.data_representation.ids = ids.into_iter().collect();
        self.representation_set = true;
        self
    }

    /// Writer batching (what Cyclone DDS calls WriteBatch): samples written in quick
    /// succession share datagrams, up to the largest datagram the writer builds. A datagram
    /// goes out when it is full, on [`DataWriter::flush`](crate::DataWriter::flush), or
    /// `max_delay` after its first sample was written. Many small samples per second cost
    /// far fewer system calls on both sides this way; a lone sample waits up to
    /// `max_delay`. Off by default. Repairs and heartbeats are never held back.
    pub fn batching(mut self, max_delay: Duration) -> Self {
        self.batch_delay = Some(max_delay);
        self
    }

    /// Matches no reader or writer of its own participant (Cyclone DDS's IGNORELOCAL
    /// PARTICIPANT, which ddsperf sets): a participant that both writes and reads a topic
    /// then does not receive its own samples. Other participants of the process, and of
    /// the host, are matched as ever.
    pub fn ignore_local(mut self) -> Self {
        self.ignore_local = true;
        self
    }

    /// READER_DATA_LIFECYCLE (a reader's): an instance that has had no writers for
    /// `no_writers`, or has been disposed for `disposed`, loses its samples (taken or not)
    /// and is forgotten. `None`: kept until taken (the default).
    pub fn reader_data_lifecycle(
        mut self,
        no_writers: Option<Duration>,
        disposed: Option<Duration>,
    ) -> Self {
        self.purge = PurgeDelays {
            no_writers,
            disposed,
        };
        self
    }

    /// DESTINATION_ORDER: by reception (the default) or by source timestamp, with which a
    /// reader drops a change stamped earlier than the last its instance took (a writer
    /// offers at least what a reader requests).
    pub fn destination_order(mut self, order: DestinationOrder) -> Self {
        self.policies.destination_order = order;
        self
    }

    /// PRESENTATION, which DDS sets on the publisher or subscriber
    /// ([`Publisher::with_presentation`](crate::Publisher::with_presentation)): here for an
    /// endpoint whose group is the participant's default one (matching only: coherent sets
    /// and `begin_access` need a publisher or subscriber).
    pub fn presentation(mut self, presentation: Presentation) -> Self {
        self.policies.presentation = presentation;
        self
    }

    /// WRITER_DATA_LIFECYCLE (a writer's): with `true` (the default, as DDS says) an
    /// unregistered instance is disposed too, and deleting the writer disposes the
    /// instances it still has registered; with `false` both only unregister (readers see
    /// NOT_ALIVE_NO_WRITERS once no writer is left).
    pub fn autodispose_unregistered_instances(mut self, on: bool) -> Self {
        self.autodispose = on;
        self
    }

    /// Synchronous or asynchronous publication.
    pub fn publish_mode(mut self, mode: PublishMode) -> Self {
        self.publish_mode = mode;
        self
    }

    pub(crate) fn is_reliable(&self) -> bool {
        self.policies.reliability.kind == ReliabilityKind::Reliable
    }

    pub(crate) fn is_transient_local(&self) -> bool {
        self.policies.durability >= Durability::TransientLocal
    }

    pub(crate) fn blocking_time(&self) -> Duration {
        self.policies
            .reliability
            .max_blocking_time
            .to_std()
            .unwrap_or(Duration::MAX)
    }

    /// KEEP_LAST depth, or `None` for KEEP_ALL.
    pub(crate) fn depth(&self) -> Option<usize> {
        match self.policies.history {
            History::KeepLast { depth } => Some(usize::try_from(depth.max(1)).unwrap_or(1)),
            History::KeepAll => None,
        }
    }

    /// max_samples, with "unlimited" as a large bound.
    pub(crate) fn sample_limit(&self, unlimited: usize) -> usize {
        match self.policies.resource_limits.max_samples {
            LENGTH_UNLIMITED => unlimited,
            n => usize::try_from(n.max(1)).unwrap_or(unlimited),
        }
    }
}

/// What `set_qos` of a writer or reader may change from `current` to `new`. One made by a
/// publisher or subscriber (`in_group`) keeps the policies it has from it when `new` does
/// not name them: PRESENTATION always (a `DataWriterQos` has none), PARTITION when `new`
/// has none. Any change of a policy DDS marks unchangeable is
/// [`Error::ImmutablePolicy`](crate::Error::ImmutablePolicy).
pub(crate) fn check_change(
    in_group: bool,
    current: &EndpointQos,
    new: &mut EndpointQos,
) -> crate::Result<()> {
    if in_group {
        new.presentation = current.presentation;
        if new.partition.names.is_empty() {
            new.partition = current.partition.clone();
        }
    }
    match current.immutable_change(new) {
        Some(policy) => Err(crate::Error::ImmutablePolicy(policy.name())),
        None => Ok(()),
    }
}
