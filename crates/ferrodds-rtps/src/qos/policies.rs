//! The QoS policies (DDS 1.4 §2.2.3, DDS-XTypes 1.3 §7.6.3) as plain values with the
//! spec's defaults.

use super::Duration;

/// `QosPolicyId_t` (DDS 1.4 §2.3.3; DDS-XTypes 1.3 §7.6.3 adds 23 and 24): the ids the
/// `on_offered_incompatible_qos` / `on_requested_incompatible_qos` statuses report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum QosPolicyId {
    /// `USERDATA_QOS_POLICY_ID`.
    UserData = 1,
    /// `DURABILITY_QOS_POLICY_ID`.
    Durability = 2,
    /// `PRESENTATION_QOS_POLICY_ID`.
    Presentation = 3,
    /// `DEADLINE_QOS_POLICY_ID`.
    Deadline = 4,
    /// `LATENCYBUDGET_QOS_POLICY_ID`.
    LatencyBudget = 5,
    /// `OWNERSHIP_QOS_POLICY_ID`.
    Ownership = 6,
    /// `OWNERSHIPSTRENGTH_QOS_POLICY_ID`.
    OwnershipStrength = 7,
    /// `LIVELINESS_QOS_POLICY_ID`.
    Liveliness = 8,
    /// `TIMEBASEDFILTER_QOS_POLICY_ID`.
    TimeBasedFilter = 9,
    /// `PARTITION_QOS_POLICY_ID`.
    Partition = 10,
    /// `RELIABILITY_QOS_POLICY_ID`.
    Reliability = 11,
    /// `DESTINATIONORDER_QOS_POLICY_ID`.
    DestinationOrder = 12,
    /// `HISTORY_QOS_POLICY_ID`.
    History = 13,
    /// `RESOURCELIMITS_QOS_POLICY_ID`.
    ResourceLimits = 14,
    /// `ENTITYFACTORY_QOS_POLICY_ID`.
    EntityFactory = 15,
    /// `WRITERDATALIFECYCLE_QOS_POLICY_ID`.
    WriterDataLifecycle = 16,
    /// `READERDATALIFECYCLE_QOS_POLICY_ID`.
    ReaderDataLifecycle = 17,
    /// `TOPICDATA_QOS_POLICY_ID`.
    TopicData = 18,
    /// `GROUPDATA_QOS_POLICY_ID`.
    GroupData = 19,
    /// `TRANSPORTPRIORITY_QOS_POLICY_ID`.
    TransportPriority = 20,
    /// `LIFESPAN_QOS_POLICY_ID`.
    Lifespan = 21,
    /// `DURABILITYSERVICE_QOS_POLICY_ID`.
    DurabilityService = 22,
    /// `DATA_REPRESENTATION_QOS_POLICY_ID` (DDS-XTypes).
    DataRepresentation = 23,
    /// `TYPE_CONSISTENCY_ENFORCEMENT_QOS_POLICY_ID` (DDS-XTypes).
    TypeConsistencyEnforcement = 24,
}

impl QosPolicyId {
    /// Every id, in increasing order.
    pub const ALL: [QosPolicyId; 24] = [
        QosPolicyId::UserData,
        QosPolicyId::Durability,
        QosPolicyId::Presentation,
        QosPolicyId::Deadline,
        QosPolicyId::LatencyBudget,
        QosPolicyId::Ownership,
        QosPolicyId::OwnershipStrength,
        QosPolicyId::Liveliness,
        QosPolicyId::TimeBasedFilter,
        QosPolicyId::Partition,
        QosPolicyId::Reliability,
        QosPolicyId::DestinationOrder,
        QosPolicyId::History,
        QosPolicyId::ResourceLimits,
        QosPolicyId::EntityFactory,
        QosPolicyId::WriterDataLifecycle,
        QosPolicyId::ReaderDataLifecycle,
        QosPolicyId::TopicData,
        QosPolicyId::GroupData,
        QosPolicyId::TransportPriority,
        QosPolicyId::Lifespan,
        QosPolicyId::DurabilityService,
        QosPolicyId::DataRepresentation,
        QosPolicyId::TypeConsistencyEnforcement,
    ];

    /// The numeric id the DCPS API reports.
    pub const fn id(self) -> u32 {
        self as u32
    }

    /// The policy with numeric id `id`.
    pub fn from_id(id: u32) -> Option<QosPolicyId> {
        QosPolicyId::ALL.iter().copied().find(|p| p.id() == id)
    }

    /// The policy's name as the DDS specification spells it (`"RELIABILITY"`).
    pub const fn name(self) -> &'static str {
        match self {
            QosPolicyId::UserData => "USER_DATA",
            QosPolicyId::Durability => "DURABILITY",
            QosPolicyId::Presentation => "PRESENTATION",
            QosPolicyId::Deadline => "DEADLINE",
            QosPolicyId::LatencyBudget => "LATENCY_BUDGET",
            QosPolicyId::Ownership => "OWNERSHIP",
            QosPolicyId::OwnershipStrength => "OWNERSHIP_STRENGTH",
            QosPolicyId::Liveliness => "LIVELINESS",
            QosPolicyId::TimeBasedFilter => "TIME_BASED_FILTER",
            QosPolicyId::Partition => "PARTITION",
            QosPolicyId::Reliability => "RELIABILITY",
            QosPolicyId::DestinationOrder => "DESTINATION_ORDER",
            QosPolicyId::History => "HISTORY",
            QosPolicyId::ResourceLimits => "RESOURCE_LIMITS",
            QosPolicyId::EntityFactory => "ENTITY_FACTORY",
            QosPolicyId::WriterDataLifecycle => "WRITER_DATA_LIFECYCLE",
            QosPolicyId::ReaderDataLifecycle => "READER_DATA_LIFECYCLE",
            QosPolicyId::TopicData => "TOPIC_DATA",
            QosPolicyId::GroupData => "GROUP_DATA",
            QosPolicyId::TransportPriority => "TRANSPORT_PRIORITY",
            QosPolicyId::Lifespan => "LIFESPAN",
            QosPolicyId::DurabilityService => "DURABILITY_SERVICE",
            QosPolicyId::DataRepresentation => "DATA_REPRESENTATION",
            QosPolicyId::TypeConsistencyEnforcement => "TYPE_CONSISTENCY_ENFORCEMENT",
        }
    }
}

/// `ReliabilityQosPolicyKind`. Ordered: `BestEffort < Reliable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReliabilityKind {
    /// `BEST_EFFORT_RELIABILITY_QOS` (1 on the wire).
    BestEffort,
    /// `RELIABLE_RELIABILITY_QOS` (2 on the wire).
    Reliable,
}

impl ReliabilityKind {
    /// The wire value: 1 and 2, not the DCPS enum's 0 and 1 (DDSI-RTPS 2.5 §9.6.2.2.2
    /// maps the kinds this way).
    pub const fn to_wire(self) -> u32 {
        match self {
            ReliabilityKind::BestEffort => 1,
            ReliabilityKind::Reliable => 2,
        }
    }

    /// The kind of wire value `v`.
    pub const fn from_wire(v: u32) -> Option<ReliabilityKind> {
        match v {
            1 => Some(ReliabilityKind::BestEffort),
            2 => Some(ReliabilityKind::Reliable),
            _ => None,
        }
    }
}

/// RELIABILITY (DDS 1.4 §2.2.3.14). Its default depends on the entity: RELIABLE for
/// writers, BEST_EFFORT for readers, with a max blocking time of 100 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reliability {
    /// The kind.
    pub kind: ReliabilityKind,
    /// How long a reliable writer's `write` may block when its history is full.
    pub max_blocking_time: Duration,
}

impl Reliability {
    /// The default `max_blocking_time`: 100 ms.
    pub const DEFAULT_MAX_BLOCKING_TIME: Duration = Duration::from_millis(100);

    /// BEST_EFFORT with the default max blocking time (the readers' default).
    pub const fn best_effort() -> Reliability {
        Reliability {
            kind: ReliabilityKind::BestEffort,
            max_blocking_time: Reliability::DEFAULT_MAX_BLOCKING_TIME,
        }
    }

    /// RELIABLE with the default max blocking time (the writers' default).
    pub const fn reliable() -> Reliability {
        Reliability {
            kind: ReliabilityKind::Reliable,
            max_blocking_time: Reliability::DEFAULT_MAX_BLOCKING_TIME,
        }
    }
}

/// DURABILITY (DDS 1.4 §2.2.3.4). Ordered as RxO matching compares it:
/// `Volatile < TransientLocal < Transient < Persistent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Durability {
    /// `VOLATILE_DURABILITY_QOS` (0), the default.
    #[default]
    Volatile,
    /// `TRANSIENT_LOCAL_DURABILITY_QOS` (1).
    TransientLocal,
    /// `TRANSIENT_DURABILITY_QOS` (2).
    Transient,
    /// `PERSISTENT_DURABILITY_QOS` (3).
    Persistent,
}

impl Durability {
    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self as u32
    }

    /// The kind of wire value `v`.
    pub const fn from_wire(v: u32) -> Option<Durability> {
        match v {
            0 => Some(Durability::Volatile),
            1 => Some(Durability::TransientLocal),
            2 => Some(Durability::Transient),
            3 => Some(Durability::Persistent),
            _ => None,
        }
    }
}

/// HISTORY (DDS 1.4 §2.2.3.18). Default: KEEP_LAST with depth 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum History {
    /// `KEEP_LAST_HISTORY_QOS` (0): the last `depth` samples per instance.
    KeepLast {
        /// Samples kept per instance.
        depth: i32,
    },
    /// `KEEP_ALL_HISTORY_QOS` (1): every sample, within the resource limits.
    KeepAll,
}

impl Default for History {
    fn default() -> History {
        History::KeepLast { depth: 1 }
    }
}

/// The `LENGTH_UNLIMITED` value of resource limits.
pub const LENGTH_UNLIMITED: i32 = -1;

/// RESOURCE_LIMITS (DDS 1.4 §2.2.3.19). Default: all unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceLimits {
    /// Samples across all instances, or [`LENGTH_UNLIMITED`].
    pub max_samples: i32,
    /// Instances, or [`LENGTH_UNLIMITED`].
    pub max_instances: i32,
    /// Samples per instance, or [`LENGTH_UNLIMITED`].
    pub max_samples_per_instance: i32,
}

impl Default for ResourceLimits {
    fn default() -> ResourceLimits {
        ResourceLimits {
            max_samples: LENGTH_UNLIMITED,
            max_instances: LENGTH_UNLIMITED,
            max_samples_per_instance: LENGTH_UNLIMITED,
        }
    }
}

/// DURABILITY_SERVICE (DDS 1.4 §2.2.3.5): how the durability service of a TRANSIENT or
/// PERSISTENT writer keeps samples. Default: no cleanup delay, KEEP_LAST 1, unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DurabilityService {
    /// How long the service keeps an instance after it is disposed and has no writers.
    pub service_cleanup_delay: Duration,
    /// The service's history.
    pub history: History,
    /// The service's resource limits.
    pub resource_limits: ResourceLimits,
}

/// DEADLINE (DDS 1.4 §2.2.3.7). Default: infinite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Deadline {
    /// The longest time between two samples of an instance.
    pub period: Duration,
}

impl Default for Deadline {
    fn default() -> Deadline {
        Deadline {
            period: Duration::INFINITE,
        }
    }
}

/// LATENCY_BUDGET (DDS 1.4 §2.2.3.8). Default: zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LatencyBudget {
    /// The acceptable delay from write to delivery (a hint).
    pub duration: Duration,
}

/// LIVELINESS kinds, ordered as RxO matching compares them:
/// `Automatic < ManualByParticipant < ManualByTopic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum LivelinessKind {
    /// `AUTOMATIC_LIVELINESS_QOS` (0), the default.
    #[default]
    Automatic,
    /// `MANUAL_BY_PARTICIPANT_LIVELINESS_QOS` (1).
    ManualByParticipant,
    /// `MANUAL_BY_TOPIC_LIVELINESS_QOS` (2).
    ManualByTopic,
}

impl LivelinessKind {
    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self as u32
    }

    /// The kind of wire value `v`.
    pub const fn from_wire(v: u32) -> Option<LivelinessKind> {
        match v {
            0 => Some(LivelinessKind::Automatic),
            1 => Some(LivelinessKind::ManualByParticipant),
            2 => Some(LivelinessKind::ManualByTopic),
            _ => None,
        }
    }
}

/// LIVELINESS (DDS 1.4 §2.2.3.11). Default: AUTOMATIC, infinite lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Liveliness {
    /// Who asserts liveliness.
    pub kind: LivelinessKind,
    /// How long the entity counts as alive after an assertion.
    pub lease_duration: Duration,
}

impl Default for Liveliness {
    fn default() -> Liveliness {
        Liveliness {
            kind: LivelinessKind::Automatic,
            lease_duration: Duration::INFINITE,
        }
    }
}

/// OWNERSHIP (DDS 1.4 §2.2.3.9). Default: SHARED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ownership {
    /// `SHARED_OWNERSHIP_QOS` (0).
    #[default]
    Shared,
    /// `EXCLUSIVE_OWNERSHIP_QOS` (1).
    Exclusive,
}

impl Ownership {
    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self as u32
    }

    /// The kind of wire value `v`.
    pub const fn from_wire(v: u32) -> Option<Ownership> {
        match v {
            0 => Some(Ownership::Shared),
            1 => Some(Ownership::Exclusive),
            _ => None,
        }
    }
}

/// OWNERSHIP_STRENGTH (DDS 1.4 §2.2.3.10). Default: 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OwnershipStrength {
    /// The strength; the strongest writer of an EXCLUSIVE instance owns it.
    pub value: i32,
}

/// DESTINATION_ORDER (DDS 1.4 §2.2.3.17), ordered as RxO matching compares it.
/// Default: BY_RECEPTION_TIMESTAMP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum DestinationOrder {
    /// `BY_RECEPTION_TIMESTAMP_DESTINATIONORDER_QOS` (0).
    #[default]
    ByReceptionTimestamp,
    /// `BY_SOURCE_TIMESTAMP_DESTINATIONORDER_QOS` (1).
    BySourceTimestamp,
}

impl DestinationOrder {
    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self as u32
    }

    /// The kind of wire value `v`.
    pub const fn from_wire(v: u32) -> Option<DestinationOrder> {
        match v {
            0 => Some(DestinationOrder::ByReceptionTimestamp),
            1 => Some(DestinationOrder::BySourceTimestamp),
            _ => None,
        }
    }
}

/// PRESENTATION access scope, ordered as RxO matching compares it:
/// `Instance < Topic < Group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum PresentationAccessScope {
    /// `INSTANCE_PRESENTATION_QOS` (0), the default.
    #[default]
    Instance,
    /// `TOPIC_PRESENTATION_QOS` (1).
    Topic,
    /// `GROUP_PRESENTATION_QOS` (2).
    Group,
}

impl PresentationAccessScope {
    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self as u32
    }

    /// The scope of wire value `v`.
    pub const fn from_wire(v: u32) -> Option<PresentationAccessScope> {
        match v {
            0 => Some(PresentationAccessScope::Instance),
            1 => Some(PresentationAccessScope::Topic),
            2 => Some(PresentationAccessScope::Group),
            _ => None,
        }
    }
}

/// PRESENTATION (DDS 1.4 §2.2.3.6). Default: INSTANCE scope, neither coherent nor
/// ordered access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Presentation {
    /// The scope of coherence and ordering.
    pub access_scope: PresentationAccessScope,
    /// Coherent sets of changes are supported.
    pub coherent_access: bool,
    /// Changes keep their order across instances in the scope.
    pub ordered_access: bool,
}

/// PARTITION (DDS 1.4 §2.2.3.13): names, each possibly an `fnmatch` pattern. The
/// default, an empty list, behaves as the single name `""`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Partition {
    /// The partition names.
    pub names: Vec<String>,
}

impl Partition {
    /// The partitions named by `names`.
    pub fn new<I, S>(names: I) -> Partition
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Partition {
            names: names.into_iter().map(Into::into).collect(),
        }
    }
}

/// LIFESPAN (DDS 1.4 §2.2.3.16). Default: infinite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lifespan {
    /// How long a sample stays valid after it is written.
    pub duration: Duration,
}

impl Default for Lifespan {
    fn default() -> Lifespan {
        Lifespan {
            duration: Duration::INFINITE,
        }
    }
}

/// USER_DATA (DDS 1.4 §2.2.3.1): opaque bytes for the application. Default: empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct UserData {
    /// The bytes.
    pub value: Vec<u8>,
}

/// TOPIC_DATA (DDS 1.4 §2.2.3.2): opaque bytes attached to a topic. Default: empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TopicData {
    /// The bytes.
    pub value: Vec<u8>,
}

/// GROUP_DATA (DDS 1.4 §2.2.3.3): opaque bytes attached to a publisher or subscriber.
/// Default: empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GroupData {
    /// The bytes.
    pub value: Vec<u8>,
}

/// TIME_BASED_FILTER (DDS 1.4 §2.2.3.12). Default: zero (no filtering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TimeBasedFilter {
    /// The shortest interval between two samples of an instance the reader wants.
    pub minimum_separation: Duration,
}

/// A `DataRepresentationId_t` (DDS-XTypes 1.3 §7.6.3.1.1): an i16 on the wire. Values
/// other than the three named ones are kept as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataRepresentationId(pub i16);

impl DataRepresentationId {
    /// `XCDR_DATA_REPRESENTATION` (XCDR version 1).
    pub const XCDR: DataRepresentationId = DataRepresentationId(0);
    /// `XML_DATA_REPRESENTATION`.
    pub const XML: DataRepresentationId = DataRepresentationId(1);
    /// `XCDR2_DATA_REPRESENTATION`.
    pub const XCDR2: DataRepresentationId = DataRepresentationId(2);
}

/// DATA_REPRESENTATION (DDS-XTypes 1.3 §7.6.3.1). A writer offers its first listed
/// representation; a reader accepts any it lists. Absent on the wire (and an empty list,
/// which Cyclone DDS treats the same way) means `[XCDR]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataRepresentation {
    /// The representations, in order of preference.
    pub ids: Vec<DataRepresentationId>,
}

impl DataRepresentation {
    /// The representation a writer offers: its first one (XCDR for an empty list).
    pub fn offered(&self) -> DataRepresentationId {
        self.ids
            .first()
            .copied()
            .unwrap_or(DataRepresentationId::XCDR)
    }

    /// True if a reader with this policy accepts `id` (an empty list accepts XCDR only).
    pub fn accepts(&self, id: DataRepresentationId) -> bool {
        if self.ids.is_empty() {
            id == DataRepresentationId::XCDR
        } else {
            self.ids.contains(&id)
        }
    }
}

impl Default for DataRepresentation {
    fn default() -> DataRepresentation {
        DataRepresentation {
            ids: vec![DataRepresentationId::XCDR],
        }
    }
}

/// `TypeConsistencyKind` (DDS-XTypes 1.3 §7.6.3.4), a 16-bit enum on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TypeConsistencyKind {
    /// `DISALLOW_TYPE_COERCION` (0).
    DisallowTypeCoercion,
    /// `ALLOW_TYPE_COERCION` (1), the default.
    #[default]
    AllowTypeCoercion,
}

/// TYPE_CONSISTENCY_ENFORCEMENT (DDS-XTypes 1.3 §7.6.3.4), a reader policy. Parsed and
/// kept; FerroDDS matches on type names and does not evaluate type assignability, so
/// only `force_type_validation` affects matching (see
/// [`crate::discovery::match_endpoints`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeConsistencyEnforcement {
    /// Whether type coercion is allowed.
    pub kind: TypeConsistencyKind,
    /// Sequence bounds are ignored for assignability (default true).
    pub ignore_sequence_bounds: bool,
    /// String bounds are ignored for assignability (default true).
    pub ignore_string_bounds: bool,
    /// Member names are ignored for assignability (default false).
    pub ignore_member_names: bool,
    /// Type widening is refused (default false).
    pub prevent_type_widening: bool,
    /// Matching requires type information from both sides (default false).
    pub force_type_validation: bool,
}

impl Default for TypeConsistencyEnforcement {
    fn default() -> TypeConsistencyEnforcement {
        TypeConsistencyEnforcement {
            kind: TypeConsistencyKind::AllowTypeCoercion,
            ignore_sequence_bounds: true,
            ignore_string_bounds: true,
            ignore_member_names: false,
            prevent_type_widening: false,
            force_type_validation: false,
        }
    }
}

/// The QoS of a DataWriter or DataReader as SEDP carries it: every policy of
/// `PublicationBuiltinTopicData` and `SubscriptionBuiltinTopicData` (DDS 1.4 §2.2.5),
/// plus history and resource limits (which Cyclone DDS sends) and the DDS-XTypes ones.
///
/// One type serves both roles, as the policies are mostly shared: writer-only policies
/// (durability service, lifespan, ownership strength) keep their defaults on a reader,
/// and reader-only ones (time-based filter, type consistency) on a writer. The two
/// constructors differ only where the spec's defaults do: reliability.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EndpointQos {
    /// DURABILITY.
    pub durability: Durability,
    /// DURABILITY_SERVICE (writers).
    pub durability_service: DurabilityService,
    /// DEADLINE.
    pub deadline: Deadline,
    /// LATENCY_BUDGET.
    pub latency_budget: LatencyBudget,
    /// LIVELINESS.
    pub liveliness: Liveliness,
    /// RELIABILITY.
    pub reliability: Reliability,
    /// DESTINATION_ORDER.
    pub destination_order: DestinationOrder,
    /// HISTORY.
    pub history: History,
    /// RESOURCE_LIMITS.
    pub resource_limits: ResourceLimits,
    /// LIFESPAN (writers).
    pub lifespan: Lifespan,
    /// OWNERSHIP.
    pub ownership: Ownership,
    /// OWNERSHIP_STRENGTH (writers).
    pub ownership_strength: OwnershipStrength,
    /// TIME_BASED_FILTER (readers).
    pub time_based_filter: TimeBasedFilter,
    /// PRESENTATION (of the publisher or subscriber).
    pub presentation: Presentation,
    /// PARTITION (of the publisher or subscriber).
    pub partition: Partition,
    /// USER_DATA.
    pub user_data: UserData,
    /// TOPIC_DATA.
    pub topic_data: TopicData,
    /// GROUP_DATA (of the publisher or subscriber).
    pub group_data: GroupData,
    /// DATA_REPRESENTATION.
    pub data_representation: DataRepresentation,
    /// TYPE_CONSISTENCY_ENFORCEMENT (readers).
    pub type_consistency: TypeConsistencyEnforcement,
}

impl EndpointQos {
    /// The spec's defaults for a DataWriter (reliability RELIABLE).
    pub fn writer_default() -> EndpointQos {
        EndpointQos::with_reliability(Reliability::reliable())
    }

    /// The spec's defaults for a DataReader (reliability BEST_EFFORT).
    pub fn reader_default() -> EndpointQos {
        EndpointQos::with_reliability(Reliability::best_effort())
    }

    fn with_reliability(reliability: Reliability) -> EndpointQos {
        EndpointQos {
            durability: Durability::default(),
            durability_service: DurabilityService::default(),
            deadline: Deadline::default(),
            latency_budget: LatencyBudget::default(),
            liveliness: Liveliness::default(),
            reliability,
            destination_order: DestinationOrder::default(),
            history: History::default(),
            resource_limits: ResourceLimits::default(),
            lifespan: Lifespan::default(),
            ownership: Ownership::default(),
            ownership_strength: OwnershipStrength::default(),
            time_based_filter: TimeBasedFilter::default(),
            presentation: Presentation::default(),
            partition: Partition::default(),
            user_data: UserData::default(),
            topic_data: TopicData::default(),
            group_data: GroupData::default(),
            data_representation: DataRepresentation::default(),
            type_consistency: TypeConsistencyEnforcement::default(),
        }
    }

    /// The first policy that differs between `self` and `new` and may not change once the
    /// entity is enabled (DDS 1.4 §2.2.3, the "Changeable" column: DURABILITY,
    /// DURABILITY_SERVICE, PRESENTATION, OWNERSHIP, LIVELINESS, RELIABILITY,
    /// DESTINATION_ORDER, HISTORY, RESOURCE_LIMITS; XTypes adds DATA_REPRESENTATION and
    /// TYPE_CONSISTENCY_ENFORCEMENT); `None` when `set_qos` may apply `new`.
    pub fn immutable_change(&self, new: &EndpointQos) -> Option<QosPolicyId> {
        let checks = [
            (self.durability != new.durability, QosPolicyId::Durability),
            (
                self.durability_service != new.durability_service,
                QosPolicyId::DurabilityService,
            ),
            (
                self.presentation != new.presentation,
                QosPolicyId::Presentation,
            ),
            (self.ownership != new.ownership, QosPolicyId::Ownership),
            (self.liveliness != new.liveliness, QosPolicyId::Liveliness),
            (
                self.reliability != new.reliability,
                QosPolicyId::Reliability,
            ),
            (
                self.destination_order != new.destination_order,
                QosPolicyId::DestinationOrder,
            ),
            (self.history != new.history, QosPolicyId::History),
            (
                self.resource_limits != new.resource_limits,
                QosPolicyId::ResourceLimits,
            ),
            (
                self.data_representation != new.data_representation,
                QosPolicyId::DataRepresentation,
            ),
            (
                self.type_consistency != new.type_consistency,
                QosPolicyId::TypeConsistencyEnforcement,
            ),
        ];
        checks
            .into_iter()
            .find(|(differs, _)| *differs)
            .map(|(_, id)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_spec() {
        let w = EndpointQos::writer_default();
        let r = EndpointQos::reader_default();
        assert_eq!(w.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(r.reliability.kind, ReliabilityKind::BestEffort);
        assert_eq!(
            w.reliability.max_blocking_time.to_std(),
            Some(std::time::Duration::from_millis(100))
        );
        assert_eq!(w.durability, Durability::Volatile);
        assert!(w.deadline.period.is_infinite());
        assert_eq!(w.latency_budget.duration, Duration::ZERO);
        assert_eq!(w.liveliness.kind, LivelinessKind::Automatic);
        assert!(w.liveliness.lease_duration.is_infinite());
        assert_eq!(w.history, History::KeepLast { depth: 1 });
        assert_eq!(w.resource_limits.max_samples, LENGTH_UNLIMITED);
        assert!(w.lifespan.duration.is_infinite());
        assert_eq!(w.ownership, Ownership::Shared);
        assert_eq!(w.destination_order, DestinationOrder::ByReceptionTimestamp);
        assert_eq!(
            w.presentation.access_scope,
            PresentationAccessScope::Instance
        );
        assert!(w.partition.names.is_empty());
        assert_eq!(w.data_representation.ids, [DataRepresentationId::XCDR]);
        assert!(w.type_consistency.ignore_sequence_bounds);
        assert!(!w.type_consistency.force_type_validation);
        // Only reliability differs between the roles.
        let mut r2 = r.clone();
        r2.reliability = w.reliability;
        assert_eq!(r2, w);
    }

    #[test]
    fn wire_values() {
        assert_eq!(ReliabilityKind::BestEffort.to_wire(), 1);
        assert_eq!(ReliabilityKind::Reliable.to_wire(), 2);
        assert_eq!(ReliabilityKind::from_wire(0), None);
        for v in 0..4 {
            assert_eq!(Durability::from_wire(v).map(Durability::to_wire), Some(v));
        }
        assert_eq!(Durability::from_wire(4), None);
        assert_eq!(LivelinessKind::from_wire(3), None);
        assert_eq!(Ownership::from_wire(2), None);
        assert_eq!(DestinationOrder::from_wire(2), None);
        assert_eq!(PresentationAccessScope::from_wire(3), None);
        assert!(Durability::Volatile < Durability::TransientLocal);
        assert!(Durability::Transient < Durability::Persistent);
        assert!(LivelinessKind::Automatic < LivelinessKind::ManualByTopic);
    }

    #[test]
    fn only_changeable_policies_may_change() {
        let w = EndpointQos::writer_default();
        let mut changed = w.clone();
        changed.deadline.period = Duration::from_millis(1000);
        changed.partition = Partition::new(["a"]);
        changed.ownership_strength.value = 3;
        changed.user_data.value = vec![1, 2];
        assert_eq!(w.immutable_change(&changed), None);
        changed.history = History::KeepAll;
        assert_eq!(w.immutable_change(&changed), Some(QosPolicyId::History));
        let mut reliability = w.clone();
        reliability.reliability = Reliability::best_effort();
        assert_eq!(
            w.immutable_change(&reliability),
            Some(QosPolicyId::Reliability)
        );
    }

    #[test]
    fn policy_ids() {
        assert_eq!(QosPolicyId::Reliability.id(), 11);
        assert_eq!(QosPolicyId::DataRepresentation.id(), 23);
        for p in QosPolicyId::ALL {
            assert_eq!(QosPolicyId::from_id(p.id()), Some(p));
        }
        assert_eq!(QosPolicyId::from_id(0), None);
        assert_eq!(QosPolicyId::from_id(25), None);
        assert_eq!(QosPolicyId::LatencyBudget.name(), "LATENCY_BUDGET");
    }

    #[test]
    fn data_representation_offer_and_accept() {
        let both = DataRepresentation {
            ids: vec![DataRepresentationId::XCDR2, DataRepresentationId::XCDR],
        };
        assert_eq!(both.offered(), DataRepresentationId::XCDR2);
        assert!(both.accepts(DataRepresentationId::XCDR));
        let empty = DataRepresentation { ids: vec![] };
        assert_eq!(empty.offered(), DataRepresentationId::XCDR);
        assert!(empty.accepts(DataRepresentationId::XCDR));
        assert!(!empty.accepts(DataRepresentationId::XCDR2));
    }
}
