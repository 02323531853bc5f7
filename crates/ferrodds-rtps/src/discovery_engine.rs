//! Discovery (RTPS 2.5 §8.5): SPDP announces participants, SEDP announces endpoints, and
//! local endpoints are matched with remote ones by topic, type, partition and QoS.
//!
//! The engine owns no sockets and no clock. It creates the builtin SEDP writers and
//! readers inside a [`Participant`], reads what they deliver after each datagram
//! ([`Discovery::process`]), sends SPDP announcements on its own, and reports matches and
//! incompatibilities as [`DiscoveryEvent`]s.
//!
//! # What it believes
//!
//! Discovery data comes from anyone who can send a datagram, so the engine trusts it only
//! as far as it can check it, and counts what it refuses ([`DiscoveryStats`]):
//!
//! - **Locators are bound to the sender's address** (no amplification). A unicast locator
//!   a participant announces is used as announced only when its address is the source
//!   address of the SPDP datagram; any other UDPv4 unicast locator is rewritten to the
//!   source address with its announced port (a multi-homed or NATed peer is still reached
//!   where it spoke from). So an SPDP message can never make us send discovery or user
//!   traffic to a third party's address. Locators no transport of ours sends to are not
//!   kept (`DiscoveryConfig::other_locators` names what else we reach; a list holding
//!   one of those keeps only those).
//!   An endpoint's (SEDP) unicast locators are kept only on addresses of its participant's
//!   locators; with none left, the participant's default locators apply.
//! - **Identities are consistent.** An SPDP participant GUID must have the GUID prefix of
//!   the message that carries it, and an SEDP endpoint GUID the prefix of its SEDP writer.
//!   A known participant's locators are those of its first announcement: a later
//!   announcement renews its lease but cannot move it elsewhere.
//! - **Tables are bounded** by the participant's [`Limits`]: remote participants, remote
//!   endpoints (in all and per participant), locators per list. Beyond a bound the
//!   announcement is dropped, except that a remote participant that never ran SEDP with us
//!   (unverified) gives way to a newcomer, and is held no longer than
//!   `Limits::unverified_lease` (see `admission.rs`). A verified one is never evicted.
//!
//! It cannot tell a forged source address from a real one (RTPS has no handshake): a
//! sender forging its address draws one SPDP answer and the SEDP traffic of one remote
//! participant per GUID it invents, at most `max_unverified_per_source` per address at once.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::admission::{Source, Unverified};
use crate::dcps::instance_keys::decode_dynamic;
use crate::dcps::FilterExpression;
pub use crate::discovery::EndpointKind;
use crate::discovery::{
    BuiltinEndpointSet, ContentFilterProperty, DiscoveredReaderData, DiscoveredWriterData,
    EndpointData, ParticipantData,
};
use crate::endpoint::{build, inline_qos, parse_inline_qos, ChangeKind, History};
use crate::limits::Limits;
use crate::liveliness::{LivelinessSchedule, ParticipantMessage, KIND_AUTOMATIC, KIND_MANUAL};
use crate::participant::Participant;
use crate::payload::Payload;
use crate::qos::{
    match_qos, DataRepresentationId, Durability, EndpointQos, IncompatibleQos, QosMismatch,
    QosPolicyId, ReliabilityKind,
};
use crate::reader::{Reader, ReceivedChange, RemoteWriter};
use crate::time::{earliest, Timestamp};
use crate::transmit::Transmit;
use crate::type_lookup::{TypeLookup, TypeLookupStats};
use crate::wire::Endianness as WireEndianness;
use crate::wire::{
    Data, DataPayload, EntityId, Guid, GuidPrefix, InfoTimestamp, Locator, SequenceNumber,
    Submessage, Time, VendorId,
};
use crate::writer::{Change, DisposeKey, ReaderFilter, RemoteReader, Writer, WriterConfig};
use ferrodds_cdr::dynamic::assignable::NotAssignable;

use crate::diagnosis::{types_fit, TopicEndpoint};
use ferrodds_cdr::dynamic::type_lookup::TypeInformation;
use ferrodds_cdr::dynamic::type_object::TypeObjectError;
use ferrodds_cdr::dynamic::DynamicType;

/// What a local writer makes of a remote reader's content filter: a filter to apply
/// before sending, when it is DDS SQL that reads the writer's type; otherwise `None`, and
/// the writer sends everything (the reader filters anyway). A sample the filter cannot
/// decode is sent.
fn reader_filter(
    ty: Option<&DynamicType>,
    filter: Option<&ContentFilterProperty>,
    list_only: bool,
) -> Option<ReaderFilter> {
    let (ty, filter) = (ty?, filter.filter(|f| f.is_sql())?);
    let parameters: Vec<&str> = filter
        .expression_parameters
        .iter()
        .map(String::as_str)
        .collect();
    let expression = FilterExpression::new(ty, &filter.filter_expression, &parameters).ok()?;
    let ty = ty.clone();
    Some(ReaderFilter {
        keeps: Arc::new(move |payload: &[u8]| {
            decode_dynamic(&ty, payload, false).map_or(true, |sample| expression.matches(&sample))
        }),
        list_only,
    })
}

/// A local endpoint to announce and match.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalEndpoint {
    /// Its GUID (the participant's prefix).
    pub guid: Guid,
    /// Writer or reader.
    pub kind: EndpointKind,
    /// Topic name.
    pub topic_name: String,
    /// Type name, as peers know it.
    pub type_name: String,
    /// QoS.
    pub qos: EndpointQos,
    /// True when the topic's type has keys (the GUID's entity kind says so on the wire).
    pub keyed: bool,
    /// The topic's type: announced in SEDP (`PID_TYPE_INFORMATION`) and described to peers
    /// that ask (the TypeLookup service). `None` announces the type by name alone.
    pub ty: Option<DynamicType>,
    /// Matches no endpoint of its own participant (Cyclone DDS's IGNORELOCAL
    /// PARTICIPANT): a participant that both writes and reads a topic does not receive
    /// its own samples.
    pub ignore_local: bool,
    /// A content-filtered topic's reader: its filter, announced in SEDP so that writers
    /// that can evaluate it send only what passes.
    pub content_filter: Option<ContentFilterProperty>,
}

/// What discovery found out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryEvent {
    /// A remote participant appeared.
    ParticipantDiscovered {
        /// Its GUID prefix.
        prefix: GuidPrefix,
        /// Its vendor.
        vendor: Option<VendorId>,
    },
    /// A remote participant left (goodbye) or its lease expired.
    ParticipantLost {
        /// Its GUID prefix.
        prefix: GuidPrefix,
    },
    /// A local endpoint matched a remote one.
    Matched {
        /// The local endpoint.
        local: Guid,
        /// The remote endpoint.
        remote: Guid,
    },
    /// A match ended.
    Unmatched {
        /// The local endpoint.
        local: Guid,
        /// The remote endpoint.
        remote: Guid,
    },
    /// A matched endpoint changed its QoS (`set_qos`, here or at the peer) and the two still
    /// match: what the local endpoint keeps of the other's QoS (a writer's
    /// OWNERSHIP_STRENGTH and LIFESPAN, at a reader) is to be read again.
    QosChanged {
        /// The local endpoint.
        local: Guid,
        /// The matched endpoint whose QoS changed (or the other end of the pair, when the
        /// local one changed).
        remote: Guid,
    },
    /// A remote endpoint of a topic a local endpoint has, whose type is another (another
    /// name without type information, or a type that is not assignable): DCPS's
    /// INCONSISTENT_TOPIC. Once per remote endpoint and topic.
    InconsistentTopic {
        /// The topic.
        topic: String,
        /// The remote endpoint.
        remote: Guid,
    },
    /// Same topic and type, but the QoS do not fit (DCPS on_offered/requested_incompatible_qos).
    IncompatibleQos {
        /// The local endpoint.
        local: Guid,
        /// The remote endpoint.
        remote: Guid,
        /// The policies that do not fit.
        policies: Vec<QosPolicyId>,
    },
    /// The TypeLookup service received TypeObjects asked for ([`Discovery::request_type`]):
    /// [`Discovery::resolve_type`] may now succeed.
    TypesReceived,
    /// A remote participant renewed the liveliness of its writers (an SPDP announcement or
    /// a participant message): [`Discovery::participant_liveliness`] has the times.
    LivelinessAsserted {
        /// Its GUID prefix.
        prefix: GuidPrefix,
    },
    /// Same topic, but the reader's type is not assignable from the writer's (XTypes
    /// TYPE_CONSISTENCY_ENFORCEMENT): reported as an incompatible QoS of that policy.
    IncompatibleType {
        /// The local endpoint.
        local: Guid,
        /// The remote endpoint.
        remote: Guid,
        /// What is not assignable, and where.
        reason: NotAssignable,
    },
}

/// How discovery behaves.
#[derive(Debug, Clone)]
pub struct DiscoveryConfig {
    /// Our participant as SPDP announces it (locators filled in by the driver).
    pub own: ParticipantData,
    /// Where SPDP announcements go: the multicast group and the peers list.
    pub spdp_destinations: Vec<Locator>,
    /// Period of SPDP announcements after the first few.
    pub announce_period: Duration,
    /// Announce the types of local endpoints in SEDP (`PID_TYPE_INFORMATION`), so that
    /// peers can obtain them over TypeLookup (Cyclone DDS's `typeof` and `subscribe`) and
    /// check them for assignability. Off, endpoints are announced by type name alone, as
    /// Cyclone DDS 0.10 needs for types whose identifiers differ from its own (it cannot
    /// read a TypeObject with a sequence or array that it receives over TypeLookup; see
    /// `docs/interop.md`). The TypeLookup service answers either way.
    pub type_information: bool,
    /// What the driver's transports reach besides UDPv4 (this process's participants,
    /// this host's), most preferred first: locators whose kind and address match one of
    /// these (the port is the peer's own) are kept as announced, bounded like the others,
    /// and preferred — a unicast list holding one keeps only the locators of the first of
    /// these it matches, so that a peer is not sent everything twice. Other kinds are
    /// dropped. UDPv4 is always kept, bound to the sender's address.
    pub other_locators: Vec<Locator>,
    /// The opt-in compatibility mode for Fast DDS 2.x (see [`fast_dds_xcdr1`]): its
    /// endpoints that announce no DATA_REPRESENTATION match ours that offer or accept only
    /// XCDR2, and its readers get XCDR1 from our writers' [`crate::WriterConfig::reduce`].
    /// Off, matching follows the spec to the letter, as Cyclone DDS and RTI Connext do.
    pub fast_dds_xcdr1: bool,
    /// Where the remote endpoints this participant learns are held once for its process
    /// (`None`: it holds its own copies).
    pub shared_endpoints: Option<Arc<SharedEndpoints>>,
    /// This host's address when its FerroDDS readers take samples from the sample
    /// channels of writers of the host (shared memory is on): announced with each local
    /// reader, and compared with what remote readers announce to tell which of them a
    /// local writer may send references to its channel.
    pub channel_host: Option<[u8; 16]>,
}

/// What discovery refused, counted (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// SPDP and SEDP samples that did not parse, dropped.
    pub malformed: u64,
    /// SPDP announcements of new participants dropped because `max_remote_participants`
    /// were known, all of them verified (they ran SEDP with us).
    pub participants_rejected: u64,
    /// Unverified participants pushed out by newcomers (`max_remote_participants` or
    /// `max_unverified_per_source` reached).
    pub participants_evicted: u64,
    /// Participants that proved themselves by running SEDP with us.
    pub participants_verified: u64,
    /// SEDP announcements of new endpoints dropped because `max_remote_endpoints` (or
    /// `max_endpoints_per_participant` of their participant) were known.
    pub endpoints_rejected: u64,
    /// SPDP unicast locators not on the sender's address, rewritten to it.
    pub locators_rewritten: u64,
    /// Locators dropped: beyond `max_locators` in a list, or (SEDP) not on an address of
    /// the endpoint's participant.
    pub locators_dropped: u64,
    /// Announcements of a known participant with other locators than its first: the
    /// lease was renewed, the locators kept.
    pub locator_changes_ignored: u64,
    /// SPDP samples whose participant GUID prefix is not their sender's, dropped.
    pub mismatched_participants: u64,
    /// SEDP samples announcing (or disposing) an endpoint of another participant than
    /// their sender, dropped.
    pub foreign_endpoints: u64,
}

#[derive(Debug)]
struct RemoteParticipant {
    data: ParticipantData,
    expires: Timestamp,
    /// The lease it announced (honoured in full once verified).
    lease: Duration,
    /// When it was first heard, and from where (its place among the unverified).
    since: Timestamp,
    source: Source,
    /// It ran SEDP with us.
    verified: bool,
    /// When it last renewed its AUTOMATIC writers (an SPDP announcement or an AUTOMATIC
    /// participant message) and its MANUAL_BY_PARTICIPANT ones (a MANUAL message).
    heard: Timestamp,
    manual: Option<Timestamp>,
}

impl RemoteParticipant {
    /// The lease it is held for from now: an unverified one's is capped.
    fn lease(&self, limits: &Limits) -> Duration {
        if self.verified {
            self.lease
        } else {
            self.lease.min(limits.unverified_lease)
        }
    }
}

#[derive(Debug, Clone)]
struct RemoteEndpoint {
    kind: EndpointKind,
    /// What it announced, once checked; shared through [`SharedEndpoints`] with the other
    /// participants of the process that hold the same.
    data: Arc<EndpointData>,
    /// Its `PID_TYPE_INFORMATION`, parsed (`None`: absent or unreadable).
    type_information: Option<Arc<TypeInformation>>,
}

/// The remote endpoints the participants of a process know, each held once: every
/// participant learns every remote endpoint of its domain, and in a process of many
/// participants (a hundred-participant system in four processes) the copies were half its
/// memory. A participant that checked an announcement (its locators bound and bounded by
/// its own rules) takes the copy here when it is the same, and puts its own here when
/// not; a copy lives as long as a participant holds it. The driver gives one to the
/// participants that share a configuration ([`DiscoveryConfig::shared_endpoints`]).
#[derive(Default)]
pub struct SharedEndpoints {
    /// By GUID: the data (alive while a participant holds it) and its type information.
    known: std::sync::Mutex<HashMap<Guid, Kept>>,
}

/// An announcement as [`SharedEndpoints`] keeps it.
type Kept = (Weak<EndpointData>, Option<Arc<TypeInformation>>);

/// One announcement as held: the data and its type information, parsed.
type Shared = (Arc<EndpointData>, Option<Arc<TypeInformation>>);

/// `data` held by itself, its type information parsed.
fn held_alone(data: EndpointData) -> Shared {
    let info = data
        .type_information
        .as_deref()
        .and_then(|b| TypeInformation::parse(b).ok())
        .map(Arc::new);
    (Arc::new(data), info)
}

impl SharedEndpoints {
    /// The copy of `data` (and its parsed type information), made if none is held.
    fn intern(&self, data: EndpointData) -> Shared {
        let Ok(mut known) = self.known.lock() else {
            return held_alone(data);
        };
        if let Some((weak, info)) = known.get(&data.guid) {
            if let Some(held) = weak.upgrade().filter(|held| **held == data) {
                return (held, info.clone());
            }
        }
        let made = held_alone(data);
        // Entries whose every holder let go are dropped when the map doubles.
        if known.len() >= 64 && known.len().is_power_of_two() {
            known.retain(|_, (w, _)| w.strong_count() > 0);
        }
        known.insert(made.0.guid, (Arc::downgrade(&made.0), made.1.clone()));
        made
    }
}

impl std::fmt::Debug for SharedEndpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEndpoints").finish_non_exhaustive()
    }
}

/// How the types of a writer and a reader compare.
enum TypeMatch {
    /// They match (assignable, or the same type name where either has no type
    /// information).
    Yes,
    /// Different type names (and no type information to say more): they do not meet, as
    /// different topics do not.
    No,
    /// Not assignable.
    Incompatible(NotAssignable),
    /// The remote type is being obtained over TypeLookup.
    Pending,
}

/// Delays of the first SPDP announcements after start, before the regular period: a
/// participant that starts after us hears us soon even if the first datagram was lost.
const STARTUP_ANNOUNCEMENTS: [Duration; 3] = [
    Duration::from_millis(20),
    Duration::from_millis(100),
    Duration::from_millis(500),
];

/// The SPDP/SEDP engine, without I/O.
#[derive(Debug)]
pub struct Discovery {
    config: DiscoveryConfig,
    prefix: GuidPrefix,
    remotes: BTreeMap<GuidPrefix, RemoteParticipant>,
    /// The remote participants that have not run SEDP with us yet, oldest first.
    unverified: Unverified,
    locals: BTreeMap<Guid, LocalEndpoint>,
    remote_endpoints: BTreeMap<Guid, RemoteEndpoint>,
    /// The TypeInformation of local endpoints that have a type.
    local_types: BTreeMap<Guid, TypeInformation>,
    matched: BTreeSet<(Guid, Guid)>,
    /// Local and remote endpoints waiting for the remote type to match.
    pending_types: BTreeSet<(Guid, Guid)>,
    /// Remote endpoints reported as INCONSISTENT_TOPIC (each once).
    inconsistent: BTreeSet<Guid>,
    incompatible: BTreeSet<(Guid, Guid)>,
    events: VecDeque<DiscoveryEvent>,
    next_announce: Timestamp,
    /// No remote participant's lease runs out before this (`None`: none is known): what
    /// [`Discovery::poll_timeout`] answers and [`Discovery::handle_timeout`] checks before
    /// it walks the participants. Lowered wherever a lease is set, made exact by that walk.
    /// A walk per poll was a step per remote participant on every datagram.
    next_expiry: Option<Timestamp>,
    announcements: usize,
    spdp_sequence: i64,
    transmits: VecDeque<Transmit>,
    /// SPDP and SEDP messages that did not parse, dropped (also in [`DiscoveryStats`]).
    pub malformed: u64,
    stats: DiscoveryStats,
    limits: Limits,
    types: TypeLookup,
    /// When our participant messages are due (writer liveliness).
    liveliness: LivelinessSchedule,
    /// When the application last asserted this participant's liveliness.
    own_manual: Option<Timestamp>,
}

/// The builtin endpoints matched with a remote participant's, by the bit of its
/// `BuiltinEndpointSet` that announces the remote one: (bit, ours, theirs).
const BUILTIN_WRITERS: [(u32, EntityId, EntityId); 5] = [
    (
        BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_READER,
        EntityId::PARTICIPANT_MESSAGE_WRITER,
        EntityId::PARTICIPANT_MESSAGE_READER,
    ),
    (
        BuiltinEndpointSet::PUBLICATIONS_DETECTOR,
        EntityId::SEDP_PUBLICATIONS_WRITER,
        EntityId::SEDP_PUBLICATIONS_READER,
    ),
    (
        BuiltinEndpointSet::SUBSCRIPTIONS_DETECTOR,
        EntityId::SEDP_SUBSCRIPTIONS_WRITER,
        EntityId::SEDP_SUBSCRIPTIONS_READER,
    ),
    (
        BuiltinEndpointSet::TYPE_LOOKUP_REQUEST_DATA_READER,
        EntityId::TYPE_LOOKUP_REQUEST_WRITER,
        EntityId::TYPE_LOOKUP_REQUEST_READER,
    ),
    (
        BuiltinEndpointSet::TYPE_LOOKUP_REPLY_DATA_READER,
        EntityId::TYPE_LOOKUP_REPLY_WRITER,
        EntityId::TYPE_LOOKUP_REPLY_READER,
    ),
];
const BUILTIN_READERS: [(u32, EntityId, EntityId); 5] = [
    (
        BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_WRITER,
        EntityId::PARTICIPANT_MESSAGE_READER,
        EntityId::PARTICIPANT_MESSAGE_WRITER,
    ),
    (
        BuiltinEndpointSet::PUBLICATIONS_ANNOUNCER,
        EntityId::SEDP_PUBLICATIONS_READER,
        EntityId::SEDP_PUBLICATIONS_WRITER,
    ),
    (
        BuiltinEndpointSet::SUBSCRIPTIONS_ANNOUNCER,
        EntityId::SEDP_SUBSCRIPTIONS_READER,
        EntityId::SEDP_SUBSCRIPTIONS_WRITER,
    ),
    (
        BuiltinEndpointSet::TYPE_LOOKUP_REQUEST_DATA_WRITER,
        EntityId::TYPE_LOOKUP_REQUEST_READER,
        EntityId::TYPE_LOOKUP_REQUEST_WRITER,
    ),
    (
        BuiltinEndpointSet::TYPE_LOOKUP_REPLY_DATA_WRITER,
        EntityId::TYPE_LOOKUP_REPLY_READER,
        EntityId::TYPE_LOOKUP_REPLY_WRITER,
    ),
];

/// The TypeLookup writers: reliable and volatile, as Cyclone DDS's; the topic is keyless,
/// so KEEP_LAST keeps the last requests or replies written.
fn type_lookup_writer_config() -> WriterConfig {
    WriterConfig {
        reliable: true,
        transient_local: false,
        history: History::KeepLast(64),
        heartbeat_period: Duration::from_millis(100),
        ..WriterConfig::default()
    }
}

/// The participant-message writer: reliable, TRANSIENT_LOCAL, KEEP_LAST 1 per kind
/// (RTPS §8.4.13.3).
fn participant_message_writer_config() -> WriterConfig {
    WriterConfig {
        reliable: true,
        transient_local: true,
        history: History::KeepLast(1),
        heartbeat_period: Duration::from_millis(100),
        ..WriterConfig::default()
    }
}

fn sedp_writer_config() -> WriterConfig {
    WriterConfig {
        reliable: true,
        transient_local: true,
        history: History::KeepLast(1),
        max_samples: 100_000,
        heartbeat_period: Duration::from_millis(100),
        ..WriterConfig::default()
    }
}

impl Discovery {
    /// The engine for `participant`; adds the builtin SPDP reader and SEDP endpoints to it.
    pub fn new(now: Timestamp, config: DiscoveryConfig, participant: &mut Participant) -> Self {
        let prefix = participant.prefix();
        let limits = participant.limits().clone();
        let g = |id| Guid::new(prefix, id);
        participant.add_writer(Writer::new(
            g(EntityId::SEDP_PUBLICATIONS_WRITER),
            sedp_writer_config(),
        ));
        participant.add_writer(Writer::new(
            g(EntityId::SEDP_SUBSCRIPTIONS_WRITER),
            sedp_writer_config(),
        ));
        participant.add_reader(Reader::new(
            g(EntityId::SEDP_PUBLICATIONS_READER),
            limits.discovery_reader_config(true),
        ));
        participant.add_reader(Reader::new(
            g(EntityId::SEDP_SUBSCRIPTIONS_READER),
            limits.discovery_reader_config(true),
        ));
        for id in [
            EntityId::TYPE_LOOKUP_REQUEST_WRITER,
            EntityId::TYPE_LOOKUP_REPLY_WRITER,
        ] {
            participant.add_writer(Writer::new(g(id), type_lookup_writer_config()));
        }
        for id in [
            EntityId::TYPE_LOOKUP_REQUEST_READER,
            EntityId::TYPE_LOOKUP_REPLY_READER,
        ] {
            participant.add_reader(Reader::new(g(id), limits.discovery_reader_config(true)));
        }
        participant.add_writer(Writer::new(
            g(EntityId::PARTICIPANT_MESSAGE_WRITER),
            participant_message_writer_config(),
        ));
        participant.add_reader(Reader::new(
            g(EntityId::PARTICIPANT_MESSAGE_READER),
            limits.discovery_reader_config(true),
        ));
        let mut spdp = limits.discovery_reader_config(false);
        spdp.stateless = true;
        participant.add_reader(Reader::new(g(EntityId::SPDP_PARTICIPANT_READER), spdp));
        let mut own = config.own.clone();
        own.guid = Guid::new(prefix, EntityId::PARTICIPANT);
        own.available_builtin_endpoints = BuiltinEndpointSet(
            BuiltinEndpointSet::PARTICIPANT_ANNOUNCER
                | BuiltinEndpointSet::PARTICIPANT_DETECTOR
                | BuiltinEndpointSet::PUBLICATIONS_ANNOUNCER
                | BuiltinEndpointSet::PUBLICATIONS_DETECTOR
                | BuiltinEndpointSet::SUBSCRIPTIONS_ANNOUNCER
                | BuiltinEndpointSet::SUBSCRIPTIONS_DETECTOR
                | BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_WRITER
                | BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_READER
                | BuiltinEndpointSet::TYPE_LOOKUP_REQUEST_DATA_WRITER
                | BuiltinEndpointSet::TYPE_LOOKUP_REQUEST_DATA_READER
                | BuiltinEndpointSet::TYPE_LOOKUP_REPLY_DATA_WRITER
                | BuiltinEndpointSet::TYPE_LOOKUP_REPLY_DATA_READER,
        );
        let mut d = Discovery {
            config: DiscoveryConfig { own, ..config },
            prefix,
            remotes: BTreeMap::new(),
            unverified: Unverified::default(),
            locals: BTreeMap::new(),
            remote_endpoints: BTreeMap::new(),
            local_types: BTreeMap::new(),
            matched: BTreeSet::new(),
            pending_types: BTreeSet::new(),
            inconsistent: BTreeSet::new(),
            incompatible: BTreeSet::new(),
            events: VecDeque::new(),
            next_announce: now,
            next_expiry: None,
            announcements: 0,
            spdp_sequence: 0,
            transmits: VecDeque::new(),
            malformed: 0,
            stats: DiscoveryStats::default(),
            types: TypeLookup::new(g(EntityId::TYPE_LOOKUP_REQUEST_WRITER), limits.clone()),
            limits,
            liveliness: LivelinessSchedule::default(),
            own_manual: None,
        };
        d.announce(now, None);
        d
    }

    /// How it was configured.
    pub fn config(&self) -> &DiscoveryConfig {
        &self.config
    }

    /// What discovery refused, counted.
    pub fn stats(&self) -> DiscoveryStats {
        DiscoveryStats {
            malformed: self.malformed,
            ..self.stats
        }
    }

    /// Remote endpoints known (matched or not).
    pub fn remote_endpoint_count(&self) -> usize {
        self.remote_endpoints.len()
    }

    /// Remote participants known.
    pub fn remote_participants(&self) -> impl Iterator<Item = &ParticipantData> {
        self.remotes.values().map(|r| &r.data)
    }

    /// Remote endpoints known: each one's side, what it announced in SEDP, and whether it
    /// described its type (TypeInformation that `ferrodds typeof` can follow).
    pub fn remote_endpoints(
        &self,
    ) -> impl Iterator<Item = (EndpointKind, &EndpointData, bool)> + '_ {
        self.remote_endpoints
            .values()
            .map(|r| (r.kind, &*r.data, r.type_information.is_some()))
    }

    /// The local and remote endpoints of `topic_name`, as [`crate::diagnosis`] judges them:
    /// each remote type that is held already resolved; [`Discovery::request_topic_types`]
    /// asks for the others.
    pub fn topic_endpoints(&self, topic_name: &str) -> Vec<TopicEndpoint> {
        let own = &self.config.own;
        let locals = self
            .locals
            .values()
            .filter(|l| l.topic_name == topic_name)
            .map(|l| TopicEndpoint {
                kind: l.kind,
                data: self.endpoint_data(l),
                local: true,
                vendor: own.vendor_id,
                participant_locators: own.default_unicast_locators.clone(),
                describes_type: l.ty.is_some() && self.config.type_information,
                ty: l.ty.clone(),
                by_name_only: false,
            });
        let remotes = self
            .remote_endpoints
            .values()
            .filter(|r| r.data.topic_name == topic_name)
            .map(|r| {
                let participant = self.remotes.get(&r.data.guid.prefix).map(|p| &p.data);
                TopicEndpoint {
                    kind: r.kind,
                    data: (*r.data).clone(),
                    local: false,
                    vendor: participant.and_then(|p| p.vendor_id),
                    participant_locators: participant
                        .map(|p| p.default_unicast_locators.clone())
                        .unwrap_or_default(),
                    describes_type: r.type_information.is_some(),
                    ty: r
                        .type_information
                        .as_ref()
                        .and_then(|info| self.types.resolve(info))
                        .and_then(Result::ok),
                    by_name_only: participant.is_some_and(cyclone_before_11),
                }
            });
        locals.chain(remotes).collect()
    }

    /// Asks for the types of `topic_name`'s remote endpoints not held yet; true when none
    /// is missing any more (held, or known to be unobtainable).
    pub fn request_topic_types(
        &mut self,
        now: Timestamp,
        topic_name: &str,
        participant: &mut Participant,
    ) -> bool {
        let missing: Vec<TypeInformation> = self
            .remote_endpoints
            .values()
            .filter(|r| r.data.topic_name == topic_name)
            .filter_map(|r| r.type_information.as_deref().cloned())
            .filter(|info| self.types.resolve(info).is_none() && !self.types.cannot_obtain(info))
            .collect();
        for info in &missing {
            self.request_type(now, info, participant);
        }
        missing.is_empty()
    }

    /// Remote endpoints matched with `local`.
    pub fn matched_with(&self, local: Guid) -> impl Iterator<Item = Guid> + '_ {
        self.matched
            .range((local, Guid::UNKNOWN)..)
            .take_while(move |(l, _)| *l == local)
            .map(|(_, r)| *r)
    }

    /// The QoS an endpoint announced: a remote one discovered through SEDP, or one of ours.
    /// (A reader needs its writers' OWNERSHIP_STRENGTH and LIFESPAN.)
    pub fn endpoint_qos(&self, guid: Guid) -> Option<&EndpointQos> {
        self.remote_endpoints
            .get(&guid)
            .map(|r| &r.data.qos)
            .or_else(|| self.locals.get(&guid).map(|l| &l.qos))
    }

    /// The local endpoints of `topic` and their QoS (to change what they announce of
    /// their topic: TOPIC_DATA).
    pub fn local_endpoints_of(&self, topic: &str) -> Vec<(Guid, EndpointQos)> {
        self.locals
            .values()
            .filter(|l| l.topic_name == topic)
            .map(|l| (l.guid, l.qos.clone()))
            .collect()
    }

    /// What the TypeLookup service answered, obtained and refused.
    pub fn type_lookup_stats(&self) -> TypeLookupStats {
        self.types.stats()
    }

    /// The types remote endpoints announced for `topic_name`: each type name, with the
    /// TypeInformation of the first endpoint that sent one.
    pub fn topic_types(&self, topic_name: &str) -> Vec<(String, Option<TypeInformation>)> {
        let mut out: Vec<(String, Option<TypeInformation>)> = Vec::new();
        for r in self.remote_endpoints.values() {
            if r.data.topic_name != topic_name {
                continue;
            }
            let info = r.type_information.as_deref().cloned();
            match out.iter_mut().find(|(n, _)| *n == r.data.type_name) {
                Some((_, known @ None)) => *known = info,
                Some(_) => {}
                None => out.push((r.data.type_name.clone(), info)),
            }
        }
        out
    }

    /// Asks the remote participants for the complete type `info` describes (and the types
    /// it depends on) that we do not hold yet; [`DiscoveryEvent::TypesReceived`] follows
    /// each reply that brought some.
    pub fn request_type(
        &mut self,
        now: Timestamp,
        info: &TypeInformation,
        participant: &mut Participant,
    ) {
        if let Some(request) = self.types.request(now, info) {
            write_builtin(
                participant,
                EntityId::TYPE_LOOKUP_REQUEST_WRITER,
                now,
                request,
            );
        }
    }

    /// The runtime type `info` describes, once the TypeLookup service holds its
    /// TypeObjects (ours, or obtained with [`Discovery::request_type`]); `None` until then.
    pub fn resolve_type(
        &self,
        info: &TypeInformation,
    ) -> Option<Result<DynamicType, TypeObjectError>> {
        self.types.resolve(info)
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<DiscoveryEvent> {
        self.events.pop_front()
    }

    /// The next SPDP datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// When the engine next has work (announcements, lease expiry).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        earliest(
            earliest(Some(self.next_announce), self.next_expiry),
            earliest(self.types.poll_timeout(), self.liveliness.poll_timeout()),
        )
    }

    /// Announces, and drops participants whose lease expired.
    pub fn handle_timeout(&mut self, now: Timestamp, participant: &mut Participant) {
        if now >= self.next_announce {
            self.announce(now, None);
        }
        if self.liveliness.automatic_due(now) {
            self.write_participant_message(now, KIND_AUTOMATIC, participant);
        }
        let gave_up = self.types.gave_up();
        if let Some(request) = self.types.handle_timeout(now) {
            write_builtin(
                participant,
                EntityId::TYPE_LOOKUP_REQUEST_WRITER,
                now,
                request,
            );
        }
        if self.types.gave_up() != gave_up {
            // Types no peer described: those pairs fall back to their type names.
            self.retry_pending_types(now, participant);
        }
        if self.next_expiry.is_some_and(|t| t <= now) {
            let mut expired = Vec::new();
            let mut next = None;
            for (prefix, r) in &self.remotes {
                if r.expires <= now {
                    expired.push(*prefix);
                } else {
                    next = earliest(next, Some(r.expires));
                }
            }
            self.next_expiry = next;
            for prefix in expired {
                self.remove_participant(prefix, participant);
            }
        }
    }

    /// Announces a local endpoint over SEDP and matches it with the remote ones known.
    pub fn add_local(
        &mut self,
        now: Timestamp,
        endpoint: LocalEndpoint,
        participant: &mut Participant,
    ) {
        self.announce_endpoint(now, &endpoint, participant);
        let guid = endpoint.guid;
        let writer = endpoint.kind == EndpointKind::Writer;
        self.locals.insert(guid, endpoint);
        if writer {
            self.schedule_liveliness(now);
        }
        let remotes: Vec<Guid> = self.remote_endpoints.keys().copied().collect();
        for remote in remotes {
            self.try_match(now, guid, remote, participant);
        }
        let locals: Vec<Guid> = self.locals.keys().copied().filter(|g| *g != guid).collect();
        for other in locals {
            self.try_match_local(now, guid, other, participant);
        }
    }

    /// Gives local endpoint `guid` the QoS `qos` (its immutable policies unchanged: see
    /// [`EndpointQos::immutable_change`]): announces it again over SEDP, ends the matches
    /// that no longer fit (a PARTITION left, a DEADLINE or LATENCY_BUDGET now offered
    /// below what is requested), keeps those that still do ([`DiscoveryEvent::QosChanged`])
    /// and makes the new ones. False when there is no such endpoint.
    pub fn update_local(
        &mut self,
        now: Timestamp,
        guid: Guid,
        qos: EndpointQos,
        participant: &mut Participant,
    ) -> bool {
        let Some(endpoint) = self.locals.get_mut(&guid) else {
            return false;
        };
        endpoint.qos = qos;
        let endpoint = endpoint.clone();
        self.announce_endpoint(now, &endpoint, participant);
        let remotes: Vec<Guid> = self.remote_endpoints.keys().copied().collect();
        for remote in remotes {
            self.rematch(now, guid, remote, participant);
        }
        let locals: Vec<Guid> = self.locals.keys().copied().filter(|g| *g != guid).collect();
        for other in locals {
            if self.matched.contains(&(guid, other)) {
                let (Some(a), Some(b)) = (self.locals.get(&guid), self.locals.get(&other)) else {
                    continue;
                };
                let (w, r) = if a.kind == EndpointKind::Writer {
                    (a, b)
                } else {
                    (b, a)
                };
                if match_qos(&w.qos, &r.qos).is_ok() {
                    for pair in [(guid, other), (other, guid)] {
                        self.events.push_back(DiscoveryEvent::QosChanged {
                            local: pair.0,
                            remote: pair.1,
                        });
                    }
                    continue;
                }
                self.unmatch(guid, other, participant);
                self.unmatch(other, guid, participant);
            }
            self.try_match_local(now, guid, other, participant);
        }
        true
    }

    /// Matching again between local endpoint `local` and remote endpoint `remote` after
    /// either changed its QoS: a match that still fits is kept, one that does not ends,
    /// and a pair that did not match may now.
    fn rematch(
        &mut self,
        now: Timestamp,
        local: Guid,
        remote: Guid,
        participant: &mut Participant,
    ) {
        if self.matched.contains(&(local, remote)) {
            let (Some(l), Some(r)) = (self.locals.get(&local), self.remote_endpoints.get(&remote))
            else {
                return;
            };
            let fits = match l.kind {
                EndpointKind::Writer => match_qos(&l.qos, &r.data.qos),
                EndpointKind::Reader => match_qos(&r.data.qos, &l.qos),
            }
            .is_ok();
            if fits {
                self.events
                    .push_back(DiscoveryEvent::QosChanged { local, remote });
                return;
            }
            self.unmatch(local, remote, participant);
        }
        self.try_match(now, local, remote, participant);
    }

    /// Publishes `endpoint` over SEDP (again, after a change of its QoS).
    fn announce_endpoint(
        &mut self,
        now: Timestamp,
        endpoint: &LocalEndpoint,
        participant: &mut Participant,
    ) {
        let writer_id = match endpoint.kind {
            EndpointKind::Writer => EntityId::SEDP_PUBLICATIONS_WRITER,
            EndpointKind::Reader => EntityId::SEDP_SUBSCRIPTIONS_WRITER,
        };
        let mut data = self.endpoint_data(endpoint);
        let encode = |data: EndpointData| match endpoint.kind {
            EndpointKind::Writer => {
                DiscoveredWriterData { endpoint: data }.to_vec(WireEndianness::Little)
            }
            EndpointKind::Reader => {
                DiscoveredReaderData { endpoint: data }.to_vec(WireEndianness::Little)
            }
        };
        // Without the type, for readers that cannot use it (Cyclone DDS 0.10).
        let mut reduced = None;
        if let Some(ty) = &endpoint.ty {
            let info = self.types.register(ty);
            if let Ok(parsed) = TypeInformation::parse(&info) {
                self.local_types.insert(endpoint.guid, parsed);
            }
            if self.config.type_information {
                reduced = encode(data.clone()).ok().map(Arc::new);
                data.type_information = Some(info);
            }
        }
        match encode(data) {
            Ok(payload) => {
                if let Some(w) = participant.writer(writer_id) {
                    let change = Change {
                        original: None,
                        coherence: None,
                        kind: ChangeKind::Alive,
                        key_hash: Some(endpoint.guid.to_bytes()),
                        timestamp: None,
                        payload: Payload::from(payload),
                        reduced_payload: reduced,
                    };
                    // SEDP writers are KEEP_LAST: a write never blocks.
                    let _ = w.write(now, change);
                }
            }
            Err(_) => self.malformed += 1,
        }
    }

    /// Matches two endpoints of this participant: traffic between them goes through our own
    /// unicast locator like any other.
    fn try_match_local(&mut self, now: Timestamp, a: Guid, b: Guid, participant: &mut Participant) {
        let (Some(ea), Some(eb)) = (self.locals.get(&a), self.locals.get(&b)) else {
            return;
        };
        if ea.kind == eb.kind
            || ea.topic_name != eb.topic_name
            || ea.ignore_local
            || eb.ignore_local
        {
            return;
        }
        let (w, r) = if ea.kind == EndpointKind::Writer {
            (ea, eb)
        } else {
            (eb, ea)
        };
        let (wg, rg) = (w.guid, r.guid);
        // Types as between participants: assignability when both have one, names otherwise.
        match (&r.ty, &w.ty, self.config.type_information) {
            (Some(rt), Some(wt), true) => {
                if let Err(reason) = types_fit(rt, wt, &r.qos.type_consistency) {
                    self.report_incompatible(&[(wg, rg), (rg, wg)], |local, remote| {
                        DiscoveryEvent::IncompatibleType {
                            local,
                            remote,
                            reason: reason.clone(),
                        }
                    });
                    return;
                }
            }
            _ if w.type_name != r.type_name => return,
            _ => {}
        }
        match match_qos(&w.qos, &r.qos) {
            Ok(()) => {}
            Err(QosMismatch::Partition) => return,
            Err(QosMismatch::Incompatible(mismatch)) => {
                let policies: Vec<QosPolicyId> = mismatch.policies().collect();
                self.report_incompatible(&[(wg, rg), (rg, wg)], |local, remote| {
                    DiscoveryEvent::IncompatibleQos {
                        local,
                        remote,
                        policies: policies.clone(),
                    }
                });
                return;
            }
        }
        let mut locators = self.config.own.default_unicast_locators.clone();
        prefer_reachable(&mut locators, &self.config.other_locators);
        let reader_reliable = r.qos.reliability.kind == ReliabilityKind::Reliable;
        let writer_reliable = w.qos.reliability.kind == ReliabilityKind::Reliable;
        let transient_local = r.qos.durability >= Durability::TransientLocal;
        if let Some(writer) = participant.writer(wg.entity_id) {
            writer.match_reader(
                now,
                RemoteReader {
                    guid: rg,
                    locators: locators.clone(),
                    reliable: reader_reliable,
                    transient_local,
                    dispose_key: DisposeKey::KeyOnlySample,
                    reduced: false,
                    filter: reader_filter(w.ty.as_ref(), r.content_filter.as_ref(), true),
                    sample_channel: false,
                },
            );
        }
        if let Some(reader) = participant.reader(rg.entity_id) {
            reader.match_writer(
                now,
                RemoteWriter {
                    guid: wg,
                    locators,
                    reliable: writer_reliable,
                },
            );
        }
        for (local, remote) in [(wg, rg), (rg, wg)] {
            self.incompatible.remove(&(local, remote));
            if self.matched.insert((local, remote)) {
                self.events
                    .push_back(DiscoveryEvent::Matched { local, remote });
            }
        }
    }

    /// Reports each (local, remote) pair incompatible once.
    fn report_incompatible(
        &mut self,
        pairs: &[(Guid, Guid)],
        event: impl Fn(Guid, Guid) -> DiscoveryEvent,
    ) {
        for &(local, remote) in pairs {
            if self.incompatible.insert((local, remote)) {
                self.events.push_back(event(local, remote));
            }
        }
    }

    /// Withdraws a local endpoint (disposes its SEDP instance) and ends its matches.
    pub fn remove_local(&mut self, now: Timestamp, guid: Guid, participant: &mut Participant) {
        let Some(endpoint) = self.locals.remove(&guid) else {
            return;
        };
        let writer_id = match endpoint.kind {
            EndpointKind::Writer => EntityId::SEDP_PUBLICATIONS_WRITER,
            EndpointKind::Reader => EntityId::SEDP_SUBSCRIPTIONS_WRITER,
        };
        if let Some(w) = participant.writer(writer_id) {
            // The key-only payload of a builtin topic is a parameter list with the GUID.
            let payload = key_only_payload(guid);
            let change = Change {
                original: None,
                coherence: None,
                kind: ChangeKind::DisposedUnregistered,
                key_hash: Some(guid.to_bytes()),
                timestamp: None,
                payload: Payload::from(payload),
                reduced_payload: None,
            };
            let _ = w.write(now, change);
        }
        let pairs: Vec<(Guid, Guid)> = self
            .matched
            .iter()
            .filter(|(l, r)| *l == guid || *r == guid)
            .copied()
            .collect();
        for (local, remote) in pairs {
            self.unmatch(local, remote, participant);
        }
        self.incompatible.retain(|(l, r)| *l != guid && *r != guid);
        self.pending_types.retain(|(l, _)| *l != guid);
        self.local_types.remove(&guid);
        if endpoint.kind == EndpointKind::Writer {
            self.schedule_liveliness(now);
        }
    }

    /// The participant messages our writers' LIVELINESS needs, from their QoS.
    fn schedule_liveliness(&mut self, now: Timestamp) {
        let writers = self
            .locals
            .values()
            .filter(|e| e.kind == EndpointKind::Writer)
            .map(|e| {
                (
                    e.qos.liveliness.kind,
                    e.qos.liveliness.lease_duration.to_std(),
                )
            });
        self.liveliness.set_writers(now, writers);
    }

    /// The application asserted the liveliness of this participant's writers (`explicit`:
    /// `assert_liveliness` on the participant; otherwise a write by a
    /// MANUAL_BY_PARTICIPANT writer): a MANUAL participant message goes out when due
    /// ([`LivelinessSchedule::manual_asserted`]).
    pub fn assert_liveliness(
        &mut self,
        now: Timestamp,
        explicit: bool,
        participant: &mut Participant,
    ) {
        self.own_manual = Some(now);
        if self.liveliness.manual_asserted(now, explicit) {
            self.write_participant_message(now, KIND_MANUAL, participant);
        }
    }

    fn write_participant_message(
        &mut self,
        now: Timestamp,
        kind: [u8; 4],
        participant: &mut Participant,
    ) {
        let message = ParticipantMessage {
            prefix: self.prefix,
            kind,
        };
        if let Some(w) = participant.writer(EntityId::PARTICIPANT_MESSAGE_WRITER) {
            let change = Change {
                original: None,
                coherence: None,
                kind: ChangeKind::Alive,
                key_hash: Some(message.key_hash()),
                timestamp: Some(Time::from_nanos(now.0)),
                payload: Payload::from(message.to_vec()),
                reduced_payload: None,
            };
            // KEEP_LAST: a write never blocks.
            let _ = w.write(now, change);
        }
    }

    /// When this participant's application last asserted its liveliness.
    pub fn own_manual_assertion(&self) -> Option<Timestamp> {
        self.own_manual
    }

    /// When remote participant `prefix` last renewed its writers' liveliness: AUTOMATIC
    /// (an SPDP announcement or an AUTOMATIC participant message) and MANUAL.
    pub fn participant_liveliness(
        &self,
        prefix: GuidPrefix,
    ) -> Option<(Timestamp, Option<Timestamp>)> {
        self.remotes.get(&prefix).map(|r| (r.heard, r.manual))
    }

    /// Takes in the participant messages received.
    fn handle_participant_messages(&mut self, now: Timestamp, participant: &mut Participant) {
        let Some(r) = participant.reader(EntityId::PARTICIPANT_MESSAGE_READER) else {
            return;
        };
        while let Some(c) = r.poll_change() {
            if c.kind != ChangeKind::Alive {
                continue;
            }
            let message = match ParticipantMessage::parse(&c.payload) {
                Ok(m) => m,
                Err(_) => {
                    self.malformed += 1;
                    continue;
                }
            };
            // A participant speaks for its own writers only.
            if message.prefix != c.writer.prefix {
                self.stats.mismatched_participants += 1;
                continue;
            }
            let Some(remote) = self.remotes.get_mut(&message.prefix) else {
                continue;
            };
            match message.kind {
                KIND_AUTOMATIC => remote.heard = now,
                KIND_MANUAL => remote.manual = Some(now),
                // Other vendors' kinds.
                _ => continue,
            }
            self.events.push_back(DiscoveryEvent::LivelinessAsserted {
                prefix: message.prefix,
            });
        }
    }

    /// Reads what the builtin readers received and acts on it.
    pub fn process(&mut self, now: Timestamp, participant: &mut Participant) {
        for prefix in participant.take_contacts() {
            self.verify(now, prefix);
        }
        let mut spdp = Vec::new();
        if let Some(r) = participant.reader(EntityId::SPDP_PARTICIPANT_READER) {
            while let Some(c) = r.poll_change() {
                spdp.push(c);
            }
        }
        for change in spdp {
            self.handle_spdp(now, &change, participant);
        }
        for (reader_id, kind) in [
            (EntityId::SEDP_PUBLICATIONS_READER, EndpointKind::Writer),
            (EntityId::SEDP_SUBSCRIPTIONS_READER, EndpointKind::Reader),
        ] {
            let mut changes = Vec::new();
            if let Some(r) = participant.reader(reader_id) {
                while let Some(c) = r.poll_change() {
                    changes.push(c);
                }
            }
            for change in changes {
                self.handle_sedp(now, kind, &change, participant);
            }
        }
        self.handle_type_lookup(now, participant);
        self.handle_participant_messages(now, participant);
    }

    /// Answers TypeLookup requests and takes in replies.
    fn handle_type_lookup(&mut self, now: Timestamp, participant: &mut Participant) {
        let mut requests = Vec::new();
        if let Some(r) = participant.reader(EntityId::TYPE_LOOKUP_REQUEST_READER) {
            while let Some(c) = r.poll_change() {
                if c.kind == ChangeKind::Alive {
                    requests.push(c.payload);
                }
            }
        }
        for request in requests {
            if let Some(reply) = self.types.handle_request(&request) {
                write_builtin(participant, EntityId::TYPE_LOOKUP_REPLY_WRITER, now, reply);
            }
        }
        let mut received = 0;
        if let Some(r) = participant.reader(EntityId::TYPE_LOOKUP_REPLY_READER) {
            while let Some(c) = r.poll_change() {
                if c.kind == ChangeKind::Alive {
                    received += self.types.handle_reply(&c.payload);
                }
            }
        }
        if received > 0 {
            self.events.push_back(DiscoveryEvent::TypesReceived);
            self.retry_pending_types(now, participant);
        }
    }

    /// Matches again the pairs that waited for a remote type.
    fn retry_pending_types(&mut self, now: Timestamp, participant: &mut Participant) {
        let pending: Vec<(Guid, Guid)> = std::mem::take(&mut self.pending_types)
            .into_iter()
            .collect();
        for (local, remote) in pending {
            self.try_match(now, local, remote, participant);
        }
    }

    /// How the type of local endpoint `local` compares with remote endpoint `remote`'s
    /// (XTypes 7.6.3.4.2): by assignability when both have type information (the type
    /// names do not matter then), by type name otherwise. A remote type not held yet is
    /// asked for.
    fn type_match(
        &mut self,
        now: Timestamp,
        local: Guid,
        remote: Guid,
        participant: &mut Participant,
    ) -> TypeMatch {
        let (Some(l), Some(r)) = (self.locals.get(&local), self.remote_endpoints.get(&remote))
        else {
            return TypeMatch::No;
        };
        let by_name = if l.type_name == r.data.type_name {
            TypeMatch::Yes
        } else {
            TypeMatch::No
        };
        // Cyclone DDS 0.10 gets no type information from us, and its own is not used:
        // names decide between us both ways (see `cyclone_before_11`).
        let legacy = self
            .remotes
            .get(&remote.prefix)
            .is_some_and(|p| cyclone_before_11(&p.data));
        let (Some(ty), Some(local_info), Some(info), true, false) = (
            &l.ty,
            self.local_types.get(&local),
            r.type_information.as_deref(),
            self.config.type_information,
            legacy,
        ) else {
            return by_name;
        };
        let reader_qos = match l.kind {
            EndpointKind::Reader => &l.qos,
            EndpointKind::Writer => &r.data.qos,
        };
        // The same minimal type: nothing to look up.
        if local_info.minimal.id.is_some() && local_info.minimal.id == info.minimal.id {
            return TypeMatch::Yes;
        }
        let remote_type = match self.types.resolve(info) {
            Some(Ok(t)) => t,
            // A type we cannot read (annotations, maps, a recursive type): its name decides.
            Some(Err(_)) => return by_name,
            None if self.types.cannot_obtain(info) => return by_name,
            None => {
                let info = info.clone();
                self.request_type(now, &info, participant);
                return TypeMatch::Pending;
            }
        };
        let tce = &reader_qos.type_consistency;
        let verdict = match l.kind {
            EndpointKind::Reader => types_fit(ty, &remote_type, tce),
            EndpointKind::Writer => types_fit(&remote_type, ty, tce),
        };
        match verdict {
            Ok(()) => TypeMatch::Yes,
            Err(reason) => TypeMatch::Incompatible(reason),
        }
    }

    fn handle_spdp(
        &mut self,
        now: Timestamp,
        change: &ReceivedChange,
        participant: &mut Participant,
    ) {
        let sender = change.writer.prefix;
        if change.kind != ChangeKind::Alive {
            // A goodbye: the key hash (or the key payload) names the participant, which
            // must be the sender.
            let prefix = change
                .key_hash
                .map(|k| Guid::from_bytes(k).prefix)
                .or_else(|| {
                    ParticipantData::parse(&change.payload)
                        .ok()
                        .map(|p| p.guid.prefix)
                });
            match prefix {
                Some(prefix) if prefix == sender => self.remove_participant(prefix, participant),
                Some(_) => self.stats.mismatched_participants += 1,
                None => {}
            }
            return;
        }
        let mut data = match ParticipantData::parse(&change.payload) {
            Ok(d) => d,
            Err(_) => {
                self.malformed += 1;
                return;
            }
        };
        let prefix = data.guid.prefix;
        if prefix == self.prefix || prefix == GuidPrefix::UNKNOWN {
            return;
        }
        if prefix != sender {
            self.stats.mismatched_participants += 1;
            return;
        }
        self.bind_locators(&mut data, &change.origin);
        let lease = data
            .lease_duration
            .to_std()
            .unwrap_or(Duration::from_secs(3600 * 24 * 365));
        if let Some(known) = self.remotes.get_mut(&prefix) {
            known.lease = lease;
            known.expires = now.after(known.lease(&self.limits));
            known.heard = now;
            self.next_expiry = earliest(self.next_expiry, Some(known.expires));
            self.events
                .push_back(DiscoveryEvent::LivelinessAsserted { prefix });
            // The locators of the first announcement stay: a later one (from the same
            // participant, or from someone using its GUID) cannot move it elsewhere.
            let old = &known.data;
            if (
                &data.metatraffic_unicast_locators,
                &data.default_unicast_locators,
                &data.metatraffic_multicast_locators,
                &data.default_multicast_locators,
            ) != (
                &old.metatraffic_unicast_locators,
                &old.default_unicast_locators,
                &old.metatraffic_multicast_locators,
                &old.default_multicast_locators,
            ) {
                self.stats.locator_changes_ignored += 1;
                data.metatraffic_unicast_locators = old.metatraffic_unicast_locators.clone();
                data.default_unicast_locators = old.default_unicast_locators.clone();
                data.metatraffic_multicast_locators = old.metatraffic_multicast_locators.clone();
                data.default_multicast_locators = old.default_multicast_locators.clone();
            }
            known.data = data;
            return;
        }
        let source = change.origin.as_udpv4().map(|a| *a.ip());
        if !self.make_room(source, participant) {
            self.stats.participants_rejected += 1;
            return;
        }
        self.events
            .push_back(DiscoveryEvent::ParticipantDiscovered {
                prefix,
                vendor: data.vendor_id,
            });
        let set = data.available_builtin_endpoints;
        let locators = data.metatraffic_unicast_locators.clone();
        let g = |id| Guid::new(prefix, id);
        let reader = |id| RemoteReader {
            guid: g(id),
            locators: locators.clone(),
            reliable: true,
            transient_local: true,
            dispose_key: DisposeKey::KeyOnlySample,
            reduced: false,
            filter: None,
            sample_channel: false,
        };
        let writer = |id| RemoteWriter {
            guid: g(id),
            locators: locators.clone(),
            reliable: true,
        };
        for (bit, ours, theirs) in BUILTIN_WRITERS {
            if set.contains(bit) {
                if let Some(w) = participant.writer(ours) {
                    let mut remote = reader(theirs);
                    let sedp = matches!(
                        ours,
                        EntityId::SEDP_PUBLICATIONS_WRITER | EntityId::SEDP_SUBSCRIPTIONS_WRITER
                    );
                    // The TypeLookup topics are volatile.
                    remote.transient_local = sedp || ours == EntityId::PARTICIPANT_MESSAGE_WRITER;
                    // Cyclone DDS 0.10 gets our endpoints without their types (see
                    // `cyclone_before_11`).
                    remote.reduced = sedp && cyclone_before_11(&data);
                    w.match_reader(now, remote);
                }
            }
        }
        for (bit, ours, theirs) in BUILTIN_READERS {
            if set.contains(bit) {
                if let Some(r) = participant.reader(ours) {
                    r.match_writer(now, writer(theirs));
                }
            }
        }
        // Answer a newcomer directly, so it need not wait for our next announcement.
        let unicast = data.metatraffic_unicast_locators.clone();
        let remote = RemoteParticipant {
            data,
            expires: now,
            lease,
            since: now,
            source,
            verified: false,
            heard: now,
            manual: None,
        };
        let expires = now.after(remote.lease(&self.limits));
        self.next_expiry = earliest(self.next_expiry, Some(expires));
        self.unverified.insert(prefix, now, source);
        self.remotes
            .insert(prefix, RemoteParticipant { expires, ..remote });
        if !unicast.is_empty() {
            self.announce(now, Some(&unicast));
        }
    }

    /// Applies the locator rule of the module documentation to an SPDP announcement that
    /// came from `origin`: unicast locators on the sender's address, at most
    /// `max_locators` per list.
    fn bind_locators(&mut self, data: &mut ParticipantData, origin: &Locator) {
        let source = origin.as_udpv4().map(|a| *a.ip());
        let max = self.limits.max_locators;
        let other = &self.config.other_locators;
        for list in [
            &mut data.metatraffic_unicast_locators,
            &mut data.default_unicast_locators,
        ] {
            let announced = std::mem::take(list);
            for l in announced {
                let bound = match (source, l.as_udpv4()) {
                    // The driver did not say where the datagram came from.
                    (None, _) => Some(l),
                    // Another kind: kept when a transport of ours sends to it.
                    (Some(_), None) => reachable(other, &l).then_some(l),
                    (Some(src), Some(addr)) if *addr.ip() == src => Some(l),
                    (Some(src), Some(addr)) => {
                        self.stats.locators_rewritten += 1;
                        Some(Locator::udpv4(src, addr.port()))
                    }
                };
                if let Some(l) = bound {
                    push_bounded(list, l, max, &mut self.stats.locators_dropped);
                }
            }
            prefer_reachable(list, other);
        }
        for list in [
            &mut data.metatraffic_multicast_locators,
            &mut data.default_multicast_locators,
        ] {
            let announced = std::mem::take(list);
            for l in announced {
                push_bounded(list, l, max, &mut self.stats.locators_dropped);
            }
        }
    }

    fn handle_sedp(
        &mut self,
        now: Timestamp,
        kind: EndpointKind,
        change: &ReceivedChange,
        participant: &mut Participant,
    ) {
        let sender = change.writer.prefix;
        if change.kind != ChangeKind::Alive {
            let guid = change
                .key_hash
                .map(Guid::from_bytes)
                .or_else(|| parse_endpoint(kind, &change.payload).ok().map(|d| d.guid));
            match guid {
                Some(guid) if guid.prefix == sender => {
                    self.remove_remote_endpoint(guid, participant)
                }
                Some(_) => self.stats.foreign_endpoints += 1,
                None => {}
            }
            return;
        }
        let mut data = match parse_endpoint(kind, &change.payload) {
            Ok(d) => d,
            Err(_) => {
                self.malformed += 1;
                return;
            }
        };
        let guid = data.guid;
        if guid.prefix == self.prefix {
            return;
        }
        if guid.prefix != sender {
            self.stats.foreign_endpoints += 1;
            return;
        }
        // Unicast locators only on addresses of the participant (bound to where its SPDP
        // came from); none left means the participant's default locators.
        let addresses: Vec<Ipv4Addr> = self
            .remotes
            .get(&sender)
            .map(|p| {
                p.data
                    .metatraffic_unicast_locators
                    .iter()
                    .chain(&p.data.default_unicast_locators)
                    .filter_map(|l| l.as_udpv4().map(|a| *a.ip()))
                    .collect()
            })
            .unwrap_or_default();
        let max = self.limits.max_locators;
        let announced = std::mem::take(&mut data.unicast_locators);
        for l in announced {
            match l.as_udpv4() {
                Some(a) if addresses.contains(a.ip()) => push_bounded(
                    &mut data.unicast_locators,
                    l,
                    max,
                    &mut self.stats.locators_dropped,
                ),
                Some(_) => self.stats.locators_dropped += 1,
                None if reachable(&self.config.other_locators, &l) => push_bounded(
                    &mut data.unicast_locators,
                    l,
                    max,
                    &mut self.stats.locators_dropped,
                ),
                None => {}
            }
        }
        prefer_reachable(&mut data.unicast_locators, &self.config.other_locators);
        let announced = std::mem::take(&mut data.multicast_locators);
        for l in announced {
            push_bounded(
                &mut data.multicast_locators,
                l,
                max,
                &mut self.stats.locators_dropped,
            );
        }
        let known = self.remote_endpoints.get(&guid);
        if known.is_some_and(|known| *known.data == data) {
            return;
        }
        // Only its QoS changed (`set_qos` at the peer): matches that still fit are kept
        // (with their reliability state), the others end, new ones are made.
        let qos_only = known.is_some_and(|known| {
            known.kind == kind
                && (EndpointData {
                    qos: data.qos.clone(),
                    ..(*known.data).clone()
                }) == data
        });
        if qos_only {
            let (data, type_information) = self.hold(data);
            if let Some(known) = self.remote_endpoints.get_mut(&guid) {
                known.data = data;
                known.type_information = type_information;
            }
            let locals: Vec<Guid> = self.locals.keys().copied().collect();
            for local in locals {
                self.rematch(now, local, guid, participant);
            }
            return;
        }
        if known.is_none() {
            let of_participant = self
                .remote_endpoints
                .range(Guid::new(sender, EntityId([0; 4]))..=Guid::new(sender, EntityId([0xff; 4])))
                .count();
            if self.remote_endpoints.len() >= self.limits.max_remote_endpoints
                || of_participant >= self.limits.max_endpoints_per_participant
            {
                self.stats.endpoints_rejected += 1;
                return;
            }
        }
        // A changed QoS re-runs matching from scratch.
        self.remove_remote_endpoint(guid, participant);
        let (data, type_information) = self.hold(data);
        self.remote_endpoints.insert(
            guid,
            RemoteEndpoint {
                kind,
                data,
                type_information,
            },
        );
        let locals: Vec<Guid> = self.locals.keys().copied().collect();
        for local in locals {
            self.try_match(now, local, guid, participant);
        }
    }

    /// A checked announcement as this participant holds it: the process's copy where
    /// there is one, with its type information parsed.
    fn hold(&self, data: EndpointData) -> Shared {
        match &self.config.shared_endpoints {
            Some(shared) => shared.intern(data),
            None => held_alone(data),
        }
    }

    fn try_match(
        &mut self,
        now: Timestamp,
        local: Guid,
        remote: Guid,
        participant: &mut Participant,
    ) {
        if self.matched.contains(&(local, remote)) {
            return;
        }
        let (Some(l), Some(r)) = (self.locals.get(&local), self.remote_endpoints.get(&remote))
        else {
            return;
        };
        if l.kind == r.kind || l.topic_name != r.data.topic_name {
            return;
        }
        let verdict = self.type_match(now, local, remote, participant);
        if matches!(verdict, TypeMatch::No | TypeMatch::Incompatible(_))
            && self.inconsistent.insert(remote)
        {
            if let Some(l) = self.locals.get(&local) {
                self.events.push_back(DiscoveryEvent::InconsistentTopic {
                    topic: l.topic_name.clone(),
                    remote,
                });
            }
        }
        match verdict {
            TypeMatch::Yes => {}
            TypeMatch::No => return,
            TypeMatch::Pending => {
                self.pending_types.insert((local, remote));
                return;
            }
            TypeMatch::Incompatible(reason) => {
                self.report_incompatible(&[(local, remote)], |local, remote| {
                    DiscoveryEvent::IncompatibleType {
                        local,
                        remote,
                        reason: reason.clone(),
                    }
                });
                return;
            }
        }
        let (Some(l), Some(r)) = (self.locals.get(&local), self.remote_endpoints.get(&remote))
        else {
            return;
        };
        let (offered, requested) = match l.kind {
            EndpointKind::Writer => (&l.qos, &r.data.qos),
            EndpointKind::Reader => (&r.data.qos, &l.qos),
        };
        // A reader that reads XCDR1 only, served in that form by a writer that offers XCDR2.
        let mut xcdr1_reader = false;
        match match_qos(offered, requested) {
            Ok(()) => {}
            // Different partitions are not an error: the endpoints just do not meet.
            Err(QosMismatch::Partition) => return,
            Err(QosMismatch::Incompatible(mismatch))
                if self.config.fast_dds_xcdr1
                    && fast_dds_xcdr1(
                        l.kind,
                        offered,
                        requested,
                        self.remotes
                            .get(&remote.prefix)
                            .and_then(|p| p.data.vendor_id)
                            .or(r.data.vendor_id),
                        &mismatch,
                    ) =>
            {
                xcdr1_reader = l.kind == EndpointKind::Writer;
            }
            Err(QosMismatch::Incompatible(mismatch)) => {
                let policies: Vec<QosPolicyId> = mismatch.policies().collect();
                self.report_incompatible(&[(local, remote)], |local, remote| {
                    DiscoveryEvent::IncompatibleQos {
                        local,
                        remote,
                        policies: policies.clone(),
                    }
                });
                return;
            }
        }
        let mut locators = r.data.unicast_locators.clone();
        if locators.is_empty() {
            if let Some(p) = self.remotes.get(&remote.prefix) {
                locators = p.data.default_unicast_locators.clone();
            }
        }
        let reliable = r.data.qos.reliability.kind == ReliabilityKind::Reliable;
        match l.kind {
            EndpointKind::Writer => {
                let transient_local = r.data.qos.durability >= Durability::TransientLocal;
                if let Some(w) = participant.writer(local.entity_id) {
                    w.match_reader(
                        now,
                        RemoteReader {
                            guid: remote,
                            locators,
                            reliable,
                            transient_local,
                            dispose_key: self
                                .remotes
                                .get(&remote.prefix)
                                .map_or(DisposeKey::KeyOnlySample, |p| dispose_key(&p.data)),
                            reduced: xcdr1_reader,
                            filter: reader_filter(
                                l.ty.as_ref(),
                                r.data.content_filter.as_ref(),
                                r.data.vendor_id == Some(VendorId::FERRODDS),
                            ),
                            sample_channel: self.config.channel_host.is_some()
                                && r.data.reads_channels == self.config.channel_host,
                        },
                    );
                }
            }
            EndpointKind::Reader => {
                if let Some(rd) = participant.reader(local.entity_id) {
                    rd.match_writer(
                        now,
                        RemoteWriter {
                            guid: remote,
                            locators,
                            reliable,
                        },
                    );
                }
            }
        }
        self.matched.insert((local, remote));
        // Should the pair stop fitting after a change of QoS, that is reported again.
        self.incompatible.remove(&(local, remote));
        self.events
            .push_back(DiscoveryEvent::Matched { local, remote });
    }

    fn unmatch(&mut self, local: Guid, remote: Guid, participant: &mut Participant) {
        if !self.matched.remove(&(local, remote)) {
            return;
        }
        if let Some(w) = participant.writer(local.entity_id) {
            w.unmatch_reader(remote);
        }
        if let Some(r) = participant.reader(local.entity_id) {
            r.unmatch_writer(remote);
        }
        self.events
            .push_back(DiscoveryEvent::Unmatched { local, remote });
    }

    fn remove_remote_endpoint(&mut self, guid: Guid, participant: &mut Participant) {
        self.inconsistent.remove(&guid);
        if self.remote_endpoints.remove(&guid).is_none() {
            return;
        }
        let pairs: Vec<(Guid, Guid)> = self
            .matched
            .iter()
            .filter(|(_, r)| *r == guid)
            .copied()
            .collect();
        for (local, remote) in pairs {
            self.unmatch(local, remote, participant);
        }
        self.incompatible.retain(|(_, r)| *r != guid);
        self.pending_types.retain(|(_, r)| *r != guid);
    }

    /// Makes room for a new participant announced from `source` (see `admission.rs`):
    /// pushes out unverified ones as the limits say; false when the table is full of
    /// verified participants.
    fn make_room(&mut self, source: Source, participant: &mut Participant) -> bool {
        if self.unverified.count_from(source) >= self.limits.max_unverified_per_source {
            if let Some(oldest) = self.unverified.oldest_from(source) {
                self.stats.participants_evicted += 1;
                self.remove_participant(oldest, participant);
            }
        }
        if self.remotes.len() < self.limits.max_remote_participants {
            return true;
        }
        match self.unverified.oldest() {
            Some(oldest) => {
                self.stats.participants_evicted += 1;
                self.remove_participant(oldest, participant);
                self.remotes.len() < self.limits.max_remote_participants
            }
            None => false,
        }
    }

    /// `prefix` ran SEDP with us: it is held for its announced lease and never pushed out.
    fn verify(&mut self, now: Timestamp, prefix: GuidPrefix) {
        let Some(remote) = self.remotes.get_mut(&prefix) else {
            return;
        };
        if remote.verified {
            return;
        }
        remote.verified = true;
        remote.expires = now.after(remote.lease);
        self.next_expiry = earliest(self.next_expiry, Some(remote.expires));
        self.unverified.remove(prefix, remote.since, remote.source);
        self.stats.participants_verified += 1;
    }

    fn remove_participant(&mut self, prefix: GuidPrefix, participant: &mut Participant) {
        let Some(remote) = self.remotes.remove(&prefix) else {
            return;
        };
        if !remote.verified {
            self.unverified.remove(prefix, remote.since, remote.source);
        }
        let endpoints: Vec<Guid> = self
            .remote_endpoints
            .keys()
            .filter(|g| g.prefix == prefix)
            .copied()
            .collect();
        for guid in endpoints {
            self.remove_remote_endpoint(guid, participant);
        }
        let g = |id| Guid::new(prefix, id);
        for (_, ours, theirs) in BUILTIN_WRITERS {
            if let Some(w) = participant.writer(ours) {
                w.unmatch_reader(g(theirs));
            }
        }
        for (_, ours, theirs) in BUILTIN_READERS {
            if let Some(r) = participant.reader(ours) {
                r.unmatch_writer(g(theirs));
            }
        }
        self.events
            .push_back(DiscoveryEvent::ParticipantLost { prefix });
    }

    fn endpoint_data(&self, e: &LocalEndpoint) -> EndpointData {
        let mut data = EndpointData::new(e.guid, &e.topic_name, &e.type_name, e.qos.clone());
        data.participant_guid = self.config.own.guid;
        data.unicast_locators = self.config.own.default_unicast_locators.clone();
        data.content_filter = e.content_filter.clone();
        if e.kind == EndpointKind::Reader {
            data.reads_channels = self.config.channel_host;
        }
        data
    }

    /// Says goodbye: an SPDP DATA disposing and unregistering our participant, to the SPDP
    /// destinations and every known participant, so that peers drop us at once instead of
    /// waiting for our lease to expire.
    pub fn goodbye(&mut self, now: Timestamp) {
        let mut destinations = self.config.spdp_destinations.clone();
        for remote in self.remotes.values() {
            destinations.extend(remote.data.metatraffic_unicast_locators.iter().copied());
        }
        destinations.sort_by_key(|l| (l.kind, l.port, l.address));
        destinations.dedup();
        if destinations.is_empty() {
            return;
        }
        self.spdp_sequence += 1;
        let key = self.config.own.guid.to_bytes();
        let qos_bytes = inline_qos(
            Some(key),
            ChangeKind::DisposedUnregistered,
            None,
            None,
            None,
        );
        let payload = participant_key_payload(self.config.own.guid);
        let data = Data {
            extra_flags: 0,
            reader_id: EntityId::SPDP_PARTICIPANT_READER,
            writer_id: EntityId::SPDP_PARTICIPANT_WRITER,
            writer_sn: SequenceNumber(self.spdp_sequence),
            inline_qos: parse_inline_qos(&qos_bytes),
            payload: DataPayload::Key(&payload),
            non_standard_payload: false,
        };
        let ts = InfoTimestamp {
            timestamp: Some(Time::from_nanos(now.0)),
        };
        let subs: [Submessage<'_>; 2] = [ts.into(), data.into()];
        if let Some(t) = build(self.prefix, None, &subs, &destinations) {
            self.transmits.push_back(t);
        }
    }

    /// Our USER_DATA (DCPS `set_qos` of the participant): announced at once, to the SPDP
    /// destinations and to every participant known, so that peers see it without waiting
    /// for the next periodic announcement. False when it did not change.
    pub fn set_user_data(&mut self, now: Timestamp, value: Vec<u8>) -> bool {
        if self.config.own.user_data.value == value {
            return false;
        }
        self.config.own.user_data.value = value;
        self.announce(now, None);
        let unicast: Vec<Locator> = self
            .remotes
            .values()
            .flat_map(|r| r.data.metatraffic_unicast_locators.iter().copied())
            .filter(|l| !self.config.spdp_destinations.contains(l))
            .collect();
        if !unicast.is_empty() {
            self.announce(now, Some(&unicast));
        }
        true
    }

    /// Our USER_DATA as announced.
    pub fn user_data(&self) -> &[u8] {
        &self.config.own.user_data.value
    }

    /// Sends our SPDP data to the SPDP destinations, or to `only` (a newcomer).
    fn announce(&mut self, now: Timestamp, only: Option<&[Locator]>) {
        if only.is_none() {
            let delay = STARTUP_ANNOUNCEMENTS
                .get(self.announcements)
                .copied()
                .unwrap_or(self.config.announce_period);
            self.announcements += 1;
            self.next_announce = now.after(delay);
        }
        let destinations = only
            .map(<[Locator]>::to_vec)
            .unwrap_or_else(|| self.config.spdp_destinations.clone());
        if destinations.is_empty() {
            return;
        }
        let Ok(payload) = self.config.own.to_vec(WireEndianness::Little) else {
            self.malformed += 1;
            return;
        };
        self.spdp_sequence += 1;
        let qos_bytes = inline_qos(
            Some(self.config.own.guid.to_bytes()),
            ChangeKind::Alive,
            None,
            None,
            None,
        );
        let data = Data {
            extra_flags: 0,
            reader_id: EntityId::SPDP_PARTICIPANT_READER,
            writer_id: EntityId::SPDP_PARTICIPANT_WRITER,
            writer_sn: SequenceNumber(self.spdp_sequence),
            inline_qos: parse_inline_qos(&qos_bytes),
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        };
        let ts = InfoTimestamp {
            timestamp: Some(Time::from_nanos(now.0)),
        };
        let subs: [Submessage<'_>; 2] = [ts.into(), data.into()];
        if let Some(t) = build(self.prefix, None, &subs, &destinations) {
            self.transmits.push_back(t);
        }
    }
}

/// What the disposes and unregisters of our writers carry for the readers of a remote
/// participant: the key hash alone for Fast DDS, the key members without the DHEADER for
/// Cyclone DDS before 11 (0.10 announces RTPS 2.1; 11 announces 2.5), the key-only sample
/// for everyone else (captured and tested against each: `docs/interop.md`).
fn dispose_key(participant: &ParticipantData) -> DisposeKey {
    match participant.vendor_id {
        Some(VendorId::FAST_DDS) => DisposeKey::KeyHashOnly,
        _ if cyclone_before_11(participant) => DisposeKey::KeyMembers,
        _ => DisposeKey::KeyOnlySample,
    }
}

/// Cyclone DDS before 11 (0.10 announces RTPS 2.1; 11 announces 2.5). Its SEDP readers get
/// our endpoints without PID_TYPE_INFORMATION: Cyclone 0.10 marks key members
/// must-understand in its TypeObjects (11 does not, nor do we), so the identifiers of a
/// keyed type differ from its own, and it cannot use the TypeObject it then obtains over
/// TypeLookup when the type holds a sequence or an array (its element reads as invalid): it
/// never matches, and Debian's ddsperf 0.10.2 crashed on the reply. Without type
/// information it matches by type name, as it always did; and we match its endpoints by
/// type name too, as their identifiers are not comparable with ours (`docs/interop.md`).
fn cyclone_before_11(participant: &ParticipantData) -> bool {
    participant.vendor_id == Some(VendorId::CYCLONE_DDS)
        && participant
            .protocol_version
            .is_some_and(|v| v < crate::wire::ProtocolVersion::V2_5)
}

/// Fast DDS 2.x (2.9.1, as Debian ships it for ROS 2) writes XCDR1 alone and announces no
/// DATA_REPRESENTATION, which XTypes 1.3 §7.6.3.1.1 reads as `[XCDR]`; its readers cannot
/// decode XCDR2 (they ignore the encapsulation identifier). By the spec, then, its writers
/// do not match our readers that accept only XCDR2, nor its readers our writers that offer
/// XCDR2, while Fast DDS itself reports a match on its side and waits for data. In the
/// opt-in mode ([`DiscoveryConfig::fast_dds_xcdr1`]) such a pair matches when the data
/// representation is all that differs and the remote endpoint is Fast DDS's (vendor 1.15):
/// our reader takes its XCDR1 samples (FerroDDS decodes both representations whatever its
/// QoS says), and our writer sends its reader the XCDR1 form of each change (its
/// [`crate::WriterConfig::reduce`]). Keyed on the vendor (its SPDP's, else its SEDP's) and
/// not on a version: a Fast DDS
/// that announces XCDR2 matches by the spec, and one that reads XCDR1 only is served
/// correctly in XCDR1 whatever its version.
fn fast_dds_xcdr1(
    local: EndpointKind,
    offered: &EndpointQos,
    requested: &EndpointQos,
    vendor: Option<VendorId>,
    mismatch: &IncompatibleQos,
) -> bool {
    let xcdr = DataRepresentationId::XCDR;
    vendor == Some(VendorId::FAST_DDS)
        && mismatch.policies().eq([QosPolicyId::DataRepresentation])
        && match local {
            // Our writer offers XCDR2, the reader reads XCDR1.
            EndpointKind::Writer => {
                offered.data_representation.offered() == DataRepresentationId::XCDR2
                    && requested.data_representation.accepts(xcdr)
            }
            // Its writer writes XCDR1.
            EndpointKind::Reader => offered.data_representation.offered() == xcdr,
        }
}

/// Writes a TypeLookup request or reply (keyless, never blocking: KEEP_LAST).
fn write_builtin(participant: &mut Participant, id: EntityId, now: Timestamp, payload: Vec<u8>) {
    if let Some(w) = participant.writer(id) {
        let change = Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: None,
            timestamp: Some(Time::from_nanos(now.0)),
            payload: Payload::from(payload),
            reduced_payload: None,
        };
        let _ = w.write(now, change);
    }
}

/// Appends `l` to `list` unless it is there already; beyond `max`, counts it as dropped.
fn push_bounded(list: &mut Vec<Locator>, l: Locator, max: usize, dropped: &mut u64) {
    if list.contains(&l) {
        return;
    }
    if list.len() >= max {
        *dropped += 1;
        return;
    }
    list.push(l);
}

/// Parses SEDP data of a writer or reader (their defaults differ).
fn parse_endpoint(
    kind: EndpointKind,
    payload: &[u8],
) -> Result<EndpointData, crate::discovery::DiscoveryError> {
    match kind {
        EndpointKind::Writer => DiscoveredWriterData::parse(payload).map(|d| d.endpoint),
        EndpointKind::Reader => DiscoveredReaderData::parse(payload).map(|d| d.endpoint),
    }
}

/// The serialized key of a participant: PL_CDR_LE with PID_PARTICIPANT_GUID.
fn participant_key_payload(guid: Guid) -> Vec<u8> {
    let mut out = Vec::new();
    let mut b = crate::wire::ParameterListBuilder::encapsulated(&mut out, WireEndianness::Little);
    // INVARIANT: a 16-byte value always fits a parameter.
    let _ = b.push_guid(crate::wire::parameter_list::pid::PARTICIPANT_GUID, guid);
    b.finish();
    out
}

/// The serialized key of a builtin-topic instance: PL_CDR_LE with PID_ENDPOINT_GUID.
fn key_only_payload(guid: Guid) -> Vec<u8> {
    let mut out = Vec::new();
    let mut b = crate::wire::ParameterListBuilder::encapsulated(&mut out, WireEndianness::Little);
    // INVARIANT: a 16-byte value always fits a parameter.
    let _ = b.push_guid(crate::wire::parameter_list::pid::ENDPOINT_GUID, guid);
    b.finish();
    out
}

/// Whether `l`, of a kind other than UDPv4, is one the transports reach (`other`: kind and
/// address; the port is the peer's).
fn reachable(other: &[Locator], l: &Locator) -> bool {
    other
        .iter()
        .any(|o| o.kind == l.kind && o.address == l.address)
}

/// Keeps only the locators of `list` that the most preferred transport other than UDP
/// reaches, when it reaches any: `other` is in the driver's order of preference (this
/// process before this host), and the UDPv4 locators, or a second kind, would carry
/// everything again.
fn prefer_reachable(list: &mut Vec<Locator>, other: &[Locator]) {
    let same = |o: &Locator, l: &Locator| o.kind == l.kind && o.address == l.address;
    if let Some(best) = other.iter().find(|o| list.iter().any(|l| same(o, l))) {
        list.retain(|l| same(best, l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::GuidPrefix;

    fn announcement(n: u8) -> EndpointData {
        let guid = Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 0x07]));
        EndpointData::new(guid, "T", "test::Type", EndpointQos::reader_default())
    }

    #[test]
    fn participants_hold_an_announcement_they_checked_alike_once() {
        let shared = SharedEndpoints::default();
        let (a, _) = shared.intern(announcement(1));
        let (b, _) = shared.intern(announcement(1));
        assert!(Arc::ptr_eq(&a, &b));
        // What one participant made of it differently (its locators) is its own.
        let mut other = announcement(1);
        other.unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7411)];
        let (c, _) = shared.intern(other.clone());
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, other);
        // Once nobody holds a copy, it is made again.
        drop((a, b, c));
        let (d, _) = shared.intern(announcement(1));
        assert_eq!(Arc::strong_count(&d), 1);
        // Entries nobody holds are dropped as the map grows.
        for n in 2..=200 {
            drop(shared.intern(announcement(n)));
        }
        let left = shared.known.lock().map(|k| k.len()).unwrap_or(0);
        assert!(left < 150, "{left} entries left");
    }
}
