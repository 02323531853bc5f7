//! `DomainParticipant`: the entry point; it owns the transport, the protocol state and
//! the threads that drive them.

use std::marker::PhantomData;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferrodds_cdr::dynamic::DynamicType;
use ferrodds_cdr::Cdr;
use ferrodds_rtps::dcps::status::InconsistentTopicStatus;
use ferrodds_rtps::diagnosis::TopicDiagnosis;
use ferrodds_rtps::discovery::{EndpointData, EndpointKind, ParticipantData};
use ferrodds_rtps::discovery_engine::SharedEndpoints;
use ferrodds_rtps::type_lookup::TypeLookupStats;
use ferrodds_rtps::wire::{Guid, GuidPrefix, Locator};
use ferrodds_rtps::{
    DiscoveryConfig, DiscoveryStats, Limits, Participant, ParticipantCore, ReaderStats, WriteError,
    WriterStats,
};
use ferrodds_transport::{InterfaceSelector, TransportConfig};

use crate::error::{Error, Result};
use crate::qos::{Presentation, Qos};
use crate::reader::{DataReader, DynamicReader};
use crate::runtime::{self, Core, SendStats, Shared, StatusKind, StatusMask, Ways};
use crate::type_support::TypeSupport;
use crate::writer::{DataWriter, DynamicWriter};
use crate::FilterExpression;

/// A participant in a DDS domain.
///
/// Dropping the last handle (participants, topics, writers and readers all hold one)
/// stops its threads.
#[derive(Clone)]
pub struct DomainParticipant {
    pub(crate) inner: Arc<ParticipantInner>,
}

pub(crate) struct ParticipantInner {
    pub(crate) shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    domain_id: u32,
}

impl Drop for ParticipantInner {
    fn drop(&mut self) {
        let now = self.shared.now();
        let mut core = self.shared.lock();
        core.node.discovery.goodbye(now);
        core.collect_transmits();
        self.shared.finish(core);
        self.shared.shut_down();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        let me = std::thread::current().id();
        for t in threads {
            // The last handle may go on one of the participant's own threads (a listener
            // that held the last reader): that thread ends by itself once it returns.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

impl std::fmt::Debug for DomainParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DomainParticipant")
            .field("domain_id", &self.inner.domain_id)
            .field("prefix", &self.guid_prefix())
            .finish()
    }
}

/// A unique GUID prefix: our vendor id, the process id, the time, and a counter.
fn new_prefix() -> GuidPrefix {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut p = [0u8; 12];
    p[0..2].copy_from_slice(&ferrodds_rtps::wire::VendorId::FERRODDS.0);
    p[2..4].copy_from_slice(&(std::process::id() as u16).to_be_bytes());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ d.as_secs() as u32)
        .unwrap_or(0);
    p[4..8].copy_from_slice(&nanos.to_be_bytes());
    p[8..12].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    GuidPrefix(p)
}

fn rtps_locator(l: ferrodds_transport::Locator) -> Option<Locator> {
    let addr = SocketAddrV4::try_from(l).ok()?;
    Some(Locator::udpv4(*addr.ip(), addr.port()))
}

/// The process's one [`SharedEndpoints`]: every participant learns every remote endpoint
/// of its domain, and holds the ones it checked alike once for all of them (equal data
/// only: nothing one participant decides for itself is given to another).
fn shared_endpoints() -> Arc<SharedEndpoints> {
    static SHARED: std::sync::OnceLock<Arc<SharedEndpoints>> = std::sync::OnceLock::new();
    SHARED.get_or_init(Arc::default).clone()
}

/// The SPDP period for `asked` and `lease`: peers drop a participant they have not heard
/// from for its lease, so it announces itself at least three times per lease (a lost
/// announcement or two must not make a live participant vanish), and never more often than
/// every 10 ms.
fn announce_period(asked: Duration, lease: Duration) -> Duration {
    asked.min(lease / 3).max(Duration::from_millis(10))
}

/// Builds a participant from configuration.
#[derive(Debug, Clone)]
pub struct ParticipantBuilder {
    config: ferrodds_transport::TransportConfigBuilder,
    announce_period: Duration,
    lease_duration: Duration,
    user_data: Vec<u8>,
    limits: Limits,
    type_information: bool,
}

impl ParticipantBuilder {
    /// Starts from the configuration file named by `FERRODDS_CONFIG`, or the defaults.
    pub fn from_env() -> Result<Self> {
        Ok(Self::from_config(TransportConfig::from_env()?))
    }

    /// Starts from a transport configuration.
    pub fn from_config(config: TransportConfig) -> Self {
        ParticipantBuilder {
            config: config.to_builder(),
            announce_period: Duration::from_secs(2),
            lease_duration: Duration::from_secs(20),
            user_data: Vec::new(),
            limits: Limits::default(),
            type_information: true,
        }
    }

    /// Whether SEDP announces the types of this participant's endpoints (XTypes
    /// TypeInformation; on by default). Peers use it to obtain the types over TypeLookup
    /// (Cyclone DDS's `cyclonedds typeof` and `subscribe`) and to check them for
    /// assignability. Turn it off to talk to Cyclone DDS 0.10 applications whose types'
    /// identifiers differ from ours (a key member, a `uint8` written `octet`): Cyclone 0.10
    /// cannot use a type it obtains over TypeLookup when it holds a sequence or array, and
    /// then never matches (Cyclone DDS 11 fails with it alike). See `docs/interop.md`.
    pub fn type_information(mut self, announce: bool) -> Self {
        self.type_information = announce;
        self
    }

    /// Resource limits: how much remote participants can make this one hold (remote
    /// participants and endpoints, instances and samples per reader, fragments and bytes
    /// under reassembly). What arrives beyond a limit is dropped and counted; see
    /// [`Limits`] and `docs/robustness.md`.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The domain id.
    pub fn domain_id(mut self, domain_id: u32) -> Self {
        self.config = self.config.domain_id(domain_id);
        self
    }

    /// The network interface, by name ("lo") or address.
    pub fn interface(mut self, name_or_address: &str) -> Result<Self> {
        let selector: InterfaceSelector = name_or_address
            .parse()
            .map_err(|e| Error::BadParameter(format!("interface {name_or_address:?}: {e}")))?;
        self.config = self.config.interface(selector);
        Ok(self)
    }

    /// The latency mode (off by default; `transport.busy_poll` in the configuration file):
    /// a thread spins on non-blocking receives of user traffic instead of sleeping in the
    /// kernel, saving the wake-up of a sleeping thread on every sample at the price of a
    /// core kept busy for as long as the participant lives.
    pub fn busy_poll(mut self, on: bool) -> Self {
        self.config = self.config.busy_poll(on);
        self
    }

    /// Whether user traffic with the other participants of this process goes through a
    /// queue instead of UDP (on by default; `transport.in_process` in the configuration
    /// file). Discovery stays on UDP either way.
    pub fn in_process(mut self, on: bool) -> Self {
        self.config = self.config.in_process(on);
        self
    }

    /// The compatibility mode for Fast DDS 2.x (off by default; `compatibility.fast_dds_xcdr1`
    /// in the configuration file). Fast DDS 2.x writes only XCDR1 and announces no data
    /// representation, so by the spec (XTypes 1.3 §7.6.3.1.1) its endpoints do not match
    /// ours that offer or accept only XCDR2, though Fast DDS reports a match on its side.
    /// On, they match: this participant's readers take its XCDR1 samples, and its writers
    /// that offer XCDR2 send Fast DDS readers each sample in XCDR1 (serialized a second
    /// time, from the first, for as long as such a reader is matched). See
    /// `docs/interop.md`, "Data representation".
    pub fn fast_dds_xcdr1(mut self, on: bool) -> Self {
        self.config = self.config.fast_dds_xcdr1(on);
        self
    }

    /// Whether user traffic with the other FerroDDS participants of this host goes through
    /// shared memory instead of UDP (on by default; `transport.shared_memory` in the
    /// configuration file). Where shared memory cannot be set up the participant says so
    /// in one warning and uses UDP. Discovery stays on UDP either way.
    pub fn shared_memory(mut self, on: bool) -> Self {
        self.config = self.config.shared_memory(on);
        self
    }

    /// How long a thread waiting on this participant (`wait_for_data`, a wait set, a wait
    /// for matches or acknowledgments) spins before it sleeps (zero by default;
    /// `transport.wait_spin_us` in the configuration file). A sample that arrives during
    /// the spin is seen without the scheduler waking the thread, which on a virtual
    /// machine is most of a loopback round trip; every wait costs up to the spin in CPU.
    pub fn wait_spin(mut self, spin: Duration) -> Self {
        self.config = self.config.wait_spin(spin);
        self
    }

    /// The longest the shared-memory receive thread spins for the next datagram before it
    /// sleeps (250 µs by default; `transport.receive_spin_us` in the configuration file;
    /// zero: it sleeps at once). Within it the spin follows the gaps between the datagrams
    /// received lately (at least 30 µs, or the maximum when lower). Traffic that keeps coming within the spin
    /// (replies, streams) is received without a wake-up through the scheduler; an idle
    /// participant spins once after its last datagram.
    pub fn receive_spin(mut self, spin: Duration) -> Self {
        self.config = self.config.receive_spin(spin);
        self
    }

    /// Whether SPDP uses multicast (else only the peers list).
    pub fn allow_multicast(mut self, allow: bool) -> Self {
        self.config = self.config.allow_multicast(allow);
        self
    }

    /// The period of SPDP announcements after the first few (at most a third of the lease,
    /// whatever is asked for here).
    pub fn announce_period(mut self, period: Duration) -> Self {
        self.announce_period = period;
        self
    }

    /// How long peers keep us without hearing from us. We announce ourselves at least three
    /// times per lease.
    pub fn lease_duration(mut self, lease: Duration) -> Self {
        self.lease_duration = lease;
        self
    }

    /// USER_DATA of the participant, announced over SPDP (tools such as Cyclone's `ddsperf`
    /// recognise their peers by it).
    pub fn user_data(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.user_data = bytes.into();
        self
    }

    /// Creates the participant: opens the sockets, starts the threads, announces itself.
    pub fn build(self) -> Result<DomainParticipant> {
        let config = self.config.build()?;
        let ways = Ways::open(&config)?;
        let prefix = new_prefix();
        let mut own = ParticipantData::new(prefix);
        own.metatraffic_unicast_locators =
            rtps_locator(ways.metatraffic_unicast).into_iter().collect();
        own.default_unicast_locators = rtps_locator(ways.default_unicast).into_iter().collect();
        own.metatraffic_multicast_locators = ways
            .metatraffic_multicast
            .and_then(rtps_locator)
            .into_iter()
            .collect();
        own.domain_id = Some(config.domain_id());
        own.lease_duration = ferrodds_rtps::qos::Duration::from_std(self.lease_duration);
        own.user_data = ferrodds_rtps::qos::UserData {
            value: self.user_data.clone(),
        };
        let spdp_destinations = ways
            .spdp_destinations
            .iter()
            .filter_map(|l| rtps_locator(*l))
            .collect();
        let local = runtime::LocalAddress {
            participant_index: ways.participant_index,
            metatraffic_unicast: ways.metatraffic_unicast,
        };
        // What discovery keeps of a peer's locators besides UDPv4, and prefers (in-process
        // first, then shared memory), announced before the UDP ones (other vendors skip
        // their kinds; discovery prefers the first kind a peer shares).
        let other_locators: Vec<Locator> = ways
            .other_locators()
            .iter()
            .map(|l| runtime::rtps_locator(*l))
            .collect();
        own.default_unicast_locators
            .splice(0..0, other_locators.iter().copied());
        // With shared memory, readers take samples from the sample channels of the host's
        // writers; the shared-memory locator's address names the host.
        let channel_host = other_locators
            .iter()
            .find(|l| l.kind == ferrodds_transport::KIND_SHARED_MEMORY)
            .map(|l| l.address);
        let shared_now = ferrodds_rtps::Timestamp(0);
        let rtps = Participant::with_limits(prefix, self.limits);
        let node = ParticipantCore::new(
            shared_now,
            rtps,
            DiscoveryConfig {
                own,
                spdp_destinations,
                announce_period: announce_period(self.announce_period, self.lease_duration),
                type_information: self.type_information,
                other_locators,
                fast_dds_xcdr1: config.fast_dds_xcdr1(),
                shared_endpoints: Some(shared_endpoints()),
                channel_host,
            },
        );
        let mut core = Core::new(node);
        core.collect_transmits();
        let shared = Shared::new(core, ways, local, config.wait_spin())
            .map_err(|e| Error::BadParameter(format!("cannot clone a socket: {e}")))?;
        let threads = runtime::start(&shared, config.busy_poll())
            .map_err(|e| Error::BadParameter(format!("cannot start threads: {e}")))?;
        // The first announcement goes out now.
        shared.finish(shared.lock());
        Ok(DomainParticipant {
            inner: Arc::new(ParticipantInner {
                shared,
                threads: Mutex::new(threads),
                domain_id: config.domain_id(),
            }),
        })
    }
}

impl DomainParticipant {
    /// A participant in `domain_id` with the configuration of `FERRODDS_CONFIG` (or the
    /// defaults).
    pub fn new(domain_id: u32) -> Result<Self> {
        ParticipantBuilder::from_env()?.domain_id(domain_id).build()
    }

    /// A builder, for settings beyond the domain id.
    pub fn builder() -> Result<ParticipantBuilder> {
        ParticipantBuilder::from_env()
    }

    /// The domain id.
    pub fn domain_id(&self) -> u32 {
        self.inner.domain_id
    }

    /// Asserts the liveliness of this participant's MANUAL_BY_PARTICIPANT writers, here
    /// and (a participant message) at every reader of them. AUTOMATIC writers are asserted
    /// by the participant on its own; MANUAL_BY_TOPIC ones by their own writes and
    /// [`DataWriter::assert_liveliness`](crate::DataWriter::assert_liveliness).
    pub fn assert_liveliness(&self) -> Result<()> {
        let shared = &self.inner.shared;
        let now = shared.now();
        let mut core = shared.lock();
        if core.closed {
            return Err(crate::Error::Closed);
        }
        core.node.assert_liveliness(now);
        core.after_input();
        shared.finish(core);
        Ok(())
    }

    /// DCPS `set_qos` of the participant for USER_DATA, the policy of a participant that
    /// may change: the new bytes are announced over SPDP at once, and peers show them in
    /// their discovered participants' data (`DCPSParticipant`).
    pub fn set_user_data(&self, bytes: impl Into<Vec<u8>>) -> Result<()> {
        let shared = &self.inner.shared;
        let now = shared.now();
        let mut core = shared.lock();
        if core.closed {
            return Err(crate::Error::Closed);
        }
        if core.node.set_user_data(now, bytes.into()) {
            core.after_input();
        }
        shared.finish(core);
        Ok(())
    }

    /// The participant's USER_DATA.
    pub fn user_data(&self) -> Vec<u8> {
        self.inner.shared.lock().node.user_data().to_vec()
    }

    /// The participant's GUID prefix.
    pub fn guid_prefix(&self) -> GuidPrefix {
        self.inner.shared.lock().node.rtps.prefix()
    }

    /// The participant index the transport chose (it decides the unicast ports).
    pub fn participant_index(&self) -> u32 {
        self.inner.shared.local.participant_index
    }

    /// A topic of type `T`.
    pub fn create_topic<T: Cdr>(&self, name: &str) -> Result<Topic<T>> {
        check_topic_name(name)?;
        Ok(Topic {
            participant: self.clone(),
            name: name.to_owned(),
            type_name: T::TYPE_NAME.to_owned(),
            _type: PhantomData,
        })
    }

    /// A topic of type `T` whose type name peers know differently from `T::TYPE_NAME`.
    pub fn create_topic_with_type_name<T: Cdr>(
        &self,
        name: &str,
        type_name: &str,
    ) -> Result<Topic<T>> {
        let mut t = self.create_topic(name)?;
        t.type_name = type_name.to_owned();
        Ok(t)
    }

    /// A topic whose type is known at run time (`ty`, announced to peers as `type_name`),
    /// for [`DynamicWriter`]s and [`DynamicReader`]s.
    pub fn create_dynamic_topic(
        &self,
        name: &str,
        type_name: &str,
        ty: DynamicType,
    ) -> Result<DynamicTopic> {
        check_topic_name(name)?;
        Ok(DynamicTopic {
            participant: self.clone(),
            name: name.to_owned(),
            support: TypeSupport::dynamic(type_name, ty),
        })
    }

    /// The topic `name` as remote participants publish or subscribe it, with the type they
    /// use, obtained over XTypes: the TypeInformation a remote endpoint of the topic
    /// announced, and the TypeObjects of the type and its dependencies asked for with the
    /// TypeLookup service. Waits up to `timeout` for such an endpoint and for the answers.
    pub fn find_topic(&self, name: &str, timeout: Duration) -> Result<DynamicTopic> {
        check_topic_name(name)?;
        let shared = &self.inner.shared;
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let mut core = shared.lock();
            let now = shared.now();
            let mut found = None;
            let ParticipantCore {
                discovery, rtps, ..
            } = &mut core.node;
            for (type_name, info) in discovery.topic_types(name) {
                let Some(info) = info else { continue };
                match discovery.resolve_type(&info) {
                    Some(Ok(ty)) => {
                        found = Some(Ok((type_name, ty)));
                        break;
                    }
                    Some(Err(e)) => found = Some(Err(Error::Type(e))),
                    None => discovery.request_type(now, &info, rtps),
                }
            }
            core.collect_transmits();
            shared.finish(core);
            match found {
                Some(Ok((type_name, ty))) => {
                    return self.create_dynamic_topic(name, &type_name, ty)
                }
                Some(Err(e)) => return Err(e),
                None => {}
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(
                    timeout,
                    "no remote endpoint of the topic described its type",
                ));
            }
            // Any input wakes us (a reply, an SEDP announcement); the cap bounds a wait on
            // a quiet network.
            let core = shared.lock();
            drop(shared.wait_changed(core, left.min(Duration::from_millis(100))));
        }
    }

    /// Why the writers and readers of topic `name` do or do not exchange data: every
    /// endpoint of the topic discovery knows (this participant's and remote ones), and for
    /// each writer/reader pair every obstacle discovery's matching rules find — type name or
    /// assignability (the member), partition, each requested/offered QoS policy with both
    /// sides' values. Waits up to `wait` for the types remote endpoints described (over
    /// TypeLookup), so that types are compared as discovery compares them.
    pub fn diagnose_topic(&self, name: &str, wait: Duration) -> Result<TopicDiagnosis> {
        check_topic_name(name)?;
        let shared = &self.inner.shared;
        let deadline = std::time::Instant::now() + wait;
        loop {
            let mut core = shared.lock();
            let now = shared.now();
            let ParticipantCore {
                discovery, rtps, ..
            } = &mut core.node;
            let complete = discovery.request_topic_types(now, name, rtps);
            let endpoints = discovery.topic_endpoints(name);
            core.collect_transmits();
            shared.finish(core);
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if complete || left.is_zero() {
                return Ok(TopicDiagnosis::new(endpoints));
            }
            let core = shared.lock();
            drop(shared.wait_changed(core, left.min(Duration::from_millis(100))));
        }
    }

    /// A writer of a dynamic topic in the default publisher.
    pub fn create_dynamic_writer(&self, topic: &DynamicTopic, qos: Qos) -> Result<DynamicWriter> {
        topic.check_participant(self)?;
        DynamicWriter::new(self, topic, qos)
    }

    /// A reader of a dynamic topic in the default subscriber.
    pub fn create_dynamic_reader(&self, topic: &DynamicTopic, qos: Qos) -> Result<DynamicReader> {
        topic.check_participant(self)?;
        DynamicReader::new(self, topic, qos)
    }

    /// What the TypeLookup service answered, obtained and refused.
    pub fn type_lookup_stats(&self) -> TypeLookupStats {
        self.inner.shared.lock().node.discovery.type_lookup_stats()
    }

    /// Calls `f` (from a participant thread, without locks held) with the entity and the
    /// status, for the statuses in `mask` of this participant's readers and writers that
    /// neither they nor their publisher or subscriber have a listener for (DCPS's fallback
    /// to the participant). Replaces the listener set before; an empty mask removes it.
    pub fn set_listener(
        &self,
        mask: StatusMask,
        f: impl Fn(Guid, StatusKind) + Send + Sync + 'static,
    ) {
        if mask == StatusMask::NONE {
            // Not a listener: waiting threads may go on receiving for themselves (the C#
            // binding sets none on every entity it creates).
            self.inner.shared.lock().participant_listener = None;
            return;
        }
        runtime::listener_installed();
        let mut core = self.inner.shared.lock();
        core.participant_listener = Some((mask, Arc::new(f)));
    }

    /// A publisher whose writers share `partition` (empty: the default partition).
    pub fn create_publisher(&self, partition: &[&str]) -> Publisher {
        Publisher {
            participant: self.clone(),
            group: Group::new(partition),
        }
    }

    /// A subscriber whose readers share `partition` (empty: the default partition).
    pub fn create_subscriber(&self, partition: &[&str]) -> Subscriber {
        Subscriber {
            participant: self.clone(),
            group: Group::new(partition),
        }
    }

    /// A writer in the default publisher.
    pub fn create_writer<T: Cdr>(&self, topic: &Topic<T>, qos: Qos) -> Result<DataWriter<T>> {
        topic.check_participant(self)?;
        DataWriter::new(self, topic, qos)
    }

    /// A reader in the default subscriber.
    pub fn create_reader<T: Cdr>(&self, topic: &Topic<T>, qos: Qos) -> Result<DataReader<T>> {
        topic.check_participant(self)?;
        DataReader::new(self, topic, qos)
    }

    /// A reader in the default subscriber that takes in only the samples `filter` accepts:
    /// a content filter, applied by the reader as samples arrive (a closure cannot be
    /// announced: writers send everything; see
    /// [`DomainParticipant::create_reader_with_expression`]). Dispose and unregister reach it only for instances it accepted a
    /// sample of.
    pub fn create_reader_with_filter<T: Cdr + 'static>(
        &self,
        topic: &Topic<T>,
        qos: Qos,
        filter: impl Fn(&T) -> bool + Send + Sync + 'static,
    ) -> Result<DataReader<T>> {
        topic.check_participant(self)?;
        DataReader::with_filter(self, topic, qos, filter)
    }

    /// A reader in the default subscriber that takes in only the samples the filter
    /// expression `expression` keeps (DDS SQL over `T`'s members, `%n` for
    /// `parameters[n]`): a content-filtered topic's reader. The filter is announced, so
    /// writers that can evaluate it (FerroDDS's, RTI Connext's) send only what passes; the
    /// reader applies it too, to what others send.
    pub fn create_reader_with_expression<T: Cdr + 'static>(
        &self,
        topic: &Topic<T>,
        qos: Qos,
        expression: &str,
        parameters: &[&str],
    ) -> Result<DataReader<T>> {
        topic.check_participant(self)?;
        DataReader::with_expression(self, topic, qos, expression, parameters)
    }

    /// A reader of `topic` in the default subscriber that takes in only the samples the
    /// filter expression `expression` keeps (DDS SQL over the topic's members, `%n` for
    /// `parameters[n]`): a content-filtered topic's reader. The filter is announced, so
    /// writers that can evaluate it send only what passes; the reader applies it too, to
    /// what others send.
    pub fn create_filtered_reader(
        &self,
        topic: &DynamicTopic,
        qos: Qos,
        expression: &str,
        parameters: &[&str],
    ) -> Result<DynamicReader> {
        topic.check_participant(self)?;
        DynamicReader::filtered(self, topic, qos, topic.filter(expression, parameters)?)
    }

    /// What arrived and was dropped, counted: datagrams that are not RTPS, malformed
    /// submessages, submessages for others.
    pub fn receive_stats(&self) -> ferrodds_rtps::ReceiveStats {
        self.inner.shared.receive_stats()
    }

    /// Datagrams sent, and sends the operating system refused (the datagram is lost).
    pub fn send_stats(&self) -> SendStats {
        self.inner.shared.send_stats()
    }

    /// Each transport's name (`"in-process"`, `"udpv4"`) and the datagrams it sent, in the
    /// order the participant prefers them.
    pub fn datagrams_by_transport(&self) -> Vec<(&'static str, u64)> {
        self.inner.shared.sent_by_transport()
    }

    /// What discovery refused, counted: discovery data that did not parse, participants
    /// and endpoints beyond the limits, locators rewritten or dropped, GUIDs that do not
    /// belong to their sender.
    pub fn discovery_stats(&self) -> DiscoveryStats {
        self.inner.shared.lock().node.discovery.stats()
    }

    /// The RTPS readers' counts, summed over the participant's readers (builtin ones
    /// included): fragments dropped, changes from unknown writers, duplicates, ...
    pub fn reader_stats(&self) -> ReaderStats {
        self.inner.shared.lock().node.rtps.reader_stats()
    }

    /// The RTPS writers' counts, summed over the participant's writers (builtin ones
    /// included): resends, heartbeats, ACKNACKs ignored, ...
    pub fn writer_stats(&self) -> WriterStats {
        self.inner.shared.lock().node.rtps.writer_stats()
    }

    /// The resource limits the participant was built with.
    pub fn limits(&self) -> Limits {
        self.inner.shared.lock().node.rtps.limits().clone()
    }

    /// The unicast address discovery traffic reaches this participant at.
    pub fn metatraffic_address(&self) -> Option<SocketAddrV4> {
        SocketAddrV4::try_from(self.inner.shared.local.metatraffic_unicast).ok()
    }

    /// What the remote participants discovered so far announced (SPDP): vendor,
    /// locators, lease, user data, name.
    pub fn discovered_participant_data(&self) -> Vec<ParticipantData> {
        self.inner
            .shared
            .lock()
            .node
            .discovery
            .remote_participants()
            .cloned()
            .collect()
    }

    /// The remote writers and readers discovered so far (SEDP), whatever their topic.
    pub fn discovered_endpoints(&self) -> Vec<DiscoveredEndpoint> {
        self.inner
            .shared
            .lock()
            .node
            .discovery
            .remote_endpoints()
            .map(|(kind, data, describes_type)| DiscoveredEndpoint {
                kind,
                data: data.clone(),
                describes_type,
            })
            .collect()
    }

    /// Remote participants discovered so far.
    pub fn discovered_participants(&self) -> Vec<GuidPrefix> {
        self.inner
            .shared
            .lock()
            .node
            .discovery
            .remote_participants()
            .map(|p| p.guid.prefix)
            .collect()
    }
}

/// A remote writer or reader, as its participant announced it (SEDP).
#[derive(Debug, Clone)]
pub struct DiscoveredEndpoint {
    /// A writer or a reader.
    pub kind: EndpointKind,
    /// What it announced: its GUID, topic and type names, QoS and locators.
    pub data: EndpointData,
    /// It described its type (XTypes TypeInformation): [`DomainParticipant::find_topic`]
    /// can obtain the type.
    pub describes_type: bool,
}

/// A topic: a name and a type.
#[derive(Clone)]
pub struct Topic<T> {
    pub(crate) participant: DomainParticipant,
    pub(crate) name: String,
    pub(crate) type_name: String,
    _type: PhantomData<fn() -> T>,
}

impl<T> Topic<T> {
    fn check_participant(&self, participant: &DomainParticipant) -> Result<()> {
        check_same(participant, &self.participant, &self.name)
    }

    /// Changes the topic's TOPIC_DATA, as [`DynamicTopic::set_topic_data`] does.
    pub fn set_topic_data(&self, bytes: impl Into<Vec<u8>>) {
        self.participant
            .inner
            .shared
            .set_topic_data(&self.name, bytes.into());
    }

    /// The topic's TOPIC_DATA, as [`DynamicTopic::topic_data`] gives it.
    pub fn topic_data(&self) -> Vec<u8> {
        self.participant.inner.shared.topic_data(&self.name)
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The type name peers see.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The INCONSISTENT_TOPIC status: remote endpoints found with this topic's name and
    /// another type (another type name where no type information was given, or a type
    /// that is not assignable), with the change since this call last read it.
    pub fn inconsistent_topic_status(&self) -> InconsistentTopicStatus {
        self.participant.inconsistent_topic_status(&self.name)
    }

    /// Calls `f` with [`StatusKind::InconsistentTopic`] (from a participant thread, with
    /// no lock held) when a remote endpoint of this topic's name with another type is
    /// found: the topic's listener, which the participant's stands in for while there is
    /// none. Replaces the one set before, for every topic of this name of the participant.
    pub fn set_listener(&self, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.participant.set_topic_listener(&self.name, Arc::new(f));
    }

    /// Removes the listener of the topics of this name of the participant.
    pub fn remove_listener(&self) {
        self.participant.remove_topic_listener(&self.name);
    }
}

impl DomainParticipant {
    /// Topic `name`'s INCONSISTENT_TOPIC status, read (its change since the last read).
    fn inconsistent_topic_status(&self, name: &str) -> InconsistentTopicStatus {
        let mut core = self.inner.shared.lock();
        let status = core.node.inconsistent_topic(name);
        core.node.read_topic_status(name, status)
    }

    /// Removes the listener of the topics named `name`.
    fn remove_topic_listener(&self, name: &str) {
        self.inner.shared.lock().topic_listeners.remove(name);
    }

    /// Sets the listener of the topics named `name`.
    fn set_topic_listener(&self, name: &str, f: runtime::StatusCallback) {
        runtime::listener_installed();
        self.inner
            .shared
            .lock()
            .topic_listeners
            .insert(name.to_owned(), f);
    }
}

fn check_topic_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 256 {
        return Err(Error::BadParameter(format!(
            "a topic name has 1 to 256 characters; {name:?} does not"
        )));
    }
    Ok(())
}

fn check_same(participant: &DomainParticipant, of: &DomainParticipant, name: &str) -> Result<()> {
    if Arc::ptr_eq(&of.inner, &participant.inner) {
        Ok(())
    } else {
        Err(Error::BadParameter(format!(
            "topic {name:?} belongs to another participant"
        )))
    }
}

/// A topic whose type is known at run time: made from a [`DynamicType`]
/// ([`DomainParticipant::create_dynamic_topic`]) or found on the network
/// ([`DomainParticipant::find_topic`]).
#[derive(Clone)]
pub struct DynamicTopic {
    pub(crate) participant: DomainParticipant,
    pub(crate) name: String,
    pub(crate) support: TypeSupport,
}

impl DynamicTopic {
    fn check_participant(&self, participant: &DomainParticipant) -> Result<()> {
        check_same(participant, &self.participant, &self.name)
    }

    /// Changes the topic's TOPIC_DATA (DCPS `set_qos` of a topic; the topic policy peers
    /// see): its writers and readers in this participant announce the new bytes at once,
    /// and those made later announce them too (over what their own QoS says). Empty clears
    /// it. Topics of one name in a participant are one topic: they share it.
    pub fn set_topic_data(&self, bytes: impl Into<Vec<u8>>) {
        self.participant
            .inner
            .shared
            .set_topic_data(&self.name, bytes.into());
    }

    /// The TOPIC_DATA [`set_topic_data`](Self::set_topic_data) set (empty: none).
    pub fn topic_data(&self) -> Vec<u8> {
        self.participant.inner.shared.topic_data(&self.name)
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The type name peers see.
    pub fn type_name(&self) -> &str {
        &self.support.type_name
    }

    /// The type.
    pub fn dynamic_type(&self) -> &DynamicType {
        &self.support.ty
    }

    /// The INCONSISTENT_TOPIC status: remote endpoints found with this topic's name and
    /// another type (another type name where no type information was given, or a type
    /// that is not assignable), with the change since this call last read it.
    pub fn inconsistent_topic_status(&self) -> InconsistentTopicStatus {
        self.participant.inconsistent_topic_status(&self.name)
    }

    /// Calls `f` with [`StatusKind::InconsistentTopic`] (from a participant thread, with
    /// no lock held) when a remote endpoint of this topic's name with another type is
    /// found: the topic's listener, which the participant's stands in for while there is
    /// none. Replaces the one set before, for every topic of this name of the participant.
    pub fn set_listener(&self, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.participant.set_topic_listener(&self.name, Arc::new(f));
    }

    /// Removes the listener of the topics of this name of the participant.
    pub fn remove_listener(&self) {
        self.participant.remove_topic_listener(&self.name);
    }

    /// The filter expression `expression` with `parameters` over this topic's type.
    pub fn filter(&self, expression: &str, parameters: &[&str]) -> Result<FilterExpression> {
        FilterExpression::new(&self.support.ty, expression, parameters).map_err(|error| {
            Error::Filter {
                expression: expression.to_owned(),
                error,
            }
        })
    }
}

impl std::fmt::Debug for DynamicTopic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTopic")
            .field("name", &self.name)
            .field("type_name", &self.support.type_name)
            .finish()
    }
}

/// A publisher's or subscriber's identity in the core, its PARTITION (shared by its
/// clones: `set_partition` changes it for all) and its PRESENTATION.
#[derive(Clone, Debug)]
struct Group {
    id: u32,
    partition: Arc<Mutex<Vec<String>>>,
    presentation: Option<Presentation>,
}

impl Group {
    fn new(partition: &[&str]) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        Group {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            partition: Arc::new(Mutex::new(
                partition.iter().map(|s| (*s).to_owned()).collect(),
            )),
            presentation: None,
        }
    }

    fn partition(&self) -> Vec<String> {
        self.partition
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Moves the group, and every writer or reader it made, to `names` (PARTITION is
    /// changeable, DDS 1.4 §2.2.3.13): each endpoint is announced again and matches again
    /// ([`ferrodds_rtps::ParticipantCore::update_local`]). An endpoint created disabled
    /// and not enabled yet keeps the partition it was made with.
    fn set_partition(&self, participant: &DomainParticipant, names: Vec<String>) {
        *self.partition.lock().unwrap_or_else(|p| p.into_inner()) = names.clone();
        let shared = &participant.inner.shared;
        let core = shared.lock();
        let members: Vec<_> = core
            .parents
            .iter()
            .filter(|(_, group)| **group == self.id)
            .map(|(id, _)| *id)
            .collect();
        let prefix = core.node.rtps.prefix();
        let updates: Vec<_> = members
            .into_iter()
            .filter_map(|id| {
                let guid = Guid::new(prefix, id);
                let mut qos = core.node.discovery.endpoint_qos(guid).cloned()?;
                qos.partition.names = names.clone();
                Some((guid, qos))
            })
            .collect();
        shared.update_endpoints(core, updates);
    }

    /// DCPS `set_qos` of the group: the PARTITION of `qos`; its PRESENTATION may not change.
    fn set_qos(&self, participant: &DomainParticipant, qos: &Qos) -> Result<()> {
        if qos.policies.presentation != self.presentation.unwrap_or_default() {
            return Err(Error::ImmutablePolicy("PRESENTATION"));
        }
        self.set_partition(participant, qos.policies.partition.names.clone());
        Ok(())
    }

    /// `qos` in this group's partition, with its presentation; an endpoint joins the
    /// group in the core only when coherent or ordered access makes the group matter.
    fn apply(&self, qos: Qos) -> Qos {
        let partition = self.partition();
        let mut qos = if partition.is_empty() {
            qos
        } else {
            qos.partition(partition)
        };
        if let Some(p) = &self.presentation {
            if p.coherent_access || p.ordered_access {
                qos.group = Some(self.id);
            }
            qos = qos.presentation(*p);
        }
        qos.parent = Some(self.id);
        qos
    }

    /// Sets this publisher's or subscriber's listener.
    fn set_listener(
        &self,
        participant: &DomainParticipant,
        mask: StatusMask,
        f: impl Fn(Guid, StatusKind) + Send + Sync + 'static,
    ) {
        let mut core = participant.inner.shared.lock();
        if mask == StatusMask::NONE {
            core.group_listeners.remove(&self.id);
            return;
        }
        runtime::listener_installed();
        core.group_listeners.insert(self.id, (mask, Arc::new(f)));
    }
}

/// Groups writers under one partition and one PRESENTATION.
#[derive(Clone, Debug)]
pub struct Publisher {
    participant: DomainParticipant,
    group: Group,
}

impl Publisher {
    /// The publisher with PRESENTATION `presentation` for the writers it creates from now
    /// on: with coherent access, what they write between
    /// [`Publisher::begin_coherent_changes`] and [`Publisher::end_coherent_changes`]
    /// reaches readers with coherent access as one set (per writer with INSTANCE or TOPIC
    /// scope, across the publisher's writers with GROUP scope).
    pub fn with_presentation(mut self, presentation: Presentation) -> Self {
        self.group.presentation = Some(presentation);
        self
    }

    /// Its PARTITION (empty: the default partition).
    pub fn partition(&self) -> Vec<String> {
        self.group.partition()
    }

    /// Changes its QoS (DCPS `set_qos` of a publisher): the PARTITION of `qos` (see
    /// `set_partition`). Its PRESENTATION may not change: one other than the
    /// publisher's is [`Error::ImmutablePolicy`], and nothing changes.
    pub fn set_qos(&self, qos: &Qos) -> Result<()> {
        self.group.set_qos(&self.participant, qos)
    }

    /// Changes its PARTITION (DCPS `set_qos` of a publisher) to `names`, for the writers
    /// it creates from now on and those it made: each is announced again, and matches
    /// readers of the new partition instead of the old.
    pub fn set_partition<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) {
        let names = names.into_iter().map(Into::into).collect();
        self.group.set_partition(&self.participant, names);
    }

    /// Its PRESENTATION (`None`: the default, INSTANCE scope without coherent or ordered
    /// access).
    pub fn presentation(&self) -> Option<Presentation> {
        self.group.presentation
    }

    /// A writer in this publisher's partition.
    pub fn create_writer<T: Cdr>(&self, topic: &Topic<T>, qos: Qos) -> Result<DataWriter<T>> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DataWriter::new(&self.participant, topic, qos)
    }

    /// A writer of a dynamic topic in this publisher's partition.
    pub fn create_dynamic_writer(&self, topic: &DynamicTopic, qos: Qos) -> Result<DynamicWriter> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DynamicWriter::new(&self.participant, topic, qos)
    }

    /// A writer of a dynamic topic in this publisher's partition, created disabled: it is
    /// announced, and matches readers, only at [`DynamicWriter::enable`]; what it writes
    /// before goes into its history for the readers that take history.
    pub fn create_dynamic_writer_disabled(
        &self,
        topic: &DynamicTopic,
        qos: Qos,
    ) -> Result<DynamicWriter> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DynamicWriter::new_disabled(&self.participant, topic, qos)
    }

    /// Calls `f` (from a participant thread, without locks held) with the writer and the
    /// status, for the statuses in `mask` of this publisher's writers that have no status
    /// listener of their own (DCPS's fallback from an entity to its parent). Replaces the
    /// listener set before; an empty mask removes it.
    pub fn set_listener(
        &self,
        mask: StatusMask,
        f: impl Fn(Guid, StatusKind) + Send + Sync + 'static,
    ) {
        self.group.set_listener(&self.participant, mask, f);
    }

    /// Begins a coherent set (calls nest; the outermost pair counts).
    pub fn begin_coherent_changes(&self) {
        let shared = &self.participant.inner.shared;
        shared.lock().node.begin_coherent_changes(self.group.id);
    }

    /// Ends the coherent set: each writer that wrote in it sends the marker that ends it,
    /// and readers with coherent access take the set in.
    pub fn end_coherent_changes(&self) -> Result<()> {
        let shared = &self.participant.inner.shared;
        let mut core = shared.lock();
        let now = shared.now();
        let sent = core
            .node
            .end_coherent_changes(now, self.group.id)
            .map_err(|e| match e {
                WriteError::HistoryFull(_) => Error::Timeout(
                    Duration::ZERO,
                    "the history is full: the coherent set could not be ended",
                ),
                _ => Error::Closed,
            });
        if let Ok(writers) = &sent {
            for &id in writers {
                core.hand_over(id, false);
            }
        }
        shared.finish(core);
        sent.map(|_| ())
    }
}

/// Groups readers under one partition and one PRESENTATION.
#[derive(Clone, Debug)]
pub struct Subscriber {
    participant: DomainParticipant,
    group: Group,
}

impl Subscriber {
    /// The subscriber with PRESENTATION `presentation` for the readers it creates from now
    /// on: with coherent access they take in a coherent set only once all of it came; with
    /// ordered access of INSTANCE scope a read or take hands out each instance's samples
    /// together.
    pub fn with_presentation(mut self, presentation: Presentation) -> Self {
        self.group.presentation = Some(presentation);
        self
    }

    /// Its PARTITION (empty: the default partition).
    pub fn partition(&self) -> Vec<String> {
        self.group.partition()
    }

    /// Changes its PARTITION to `names`, moving the readers it made and those it makes
    /// (see [`Publisher::set_partition`]).
    pub fn set_partition<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) {
        let names = names.into_iter().map(Into::into).collect();
        self.group.set_partition(&self.participant, names);
    }

    /// DCPS `set_qos` of a subscriber (see [`Publisher::set_qos`]).
    pub fn set_qos(&self, qos: &Qos) -> Result<()> {
        self.group.set_qos(&self.participant, qos)
    }

    /// Its PRESENTATION (`None`: the default).
    pub fn presentation(&self) -> Option<Presentation> {
        self.group.presentation
    }

    /// Calls `f` (from a participant thread, without locks held) with the reader and the
    /// status, for the statuses in `mask` of this subscriber's readers that have no
    /// listener of their own for them. With [`StatusKind::DataOnReaders`] in `mask`, data
    /// arriving at any of its readers calls `f` once per input (with one of the readers)
    /// instead of the readers' data-available listeners, as DCPS says; with
    /// [`StatusKind::DataAvailable`], readers without a data-available listener call it.
    pub fn set_listener(
        &self,
        mask: StatusMask,
        f: impl Fn(Guid, StatusKind) + Send + Sync + 'static,
    ) {
        self.group.set_listener(&self.participant, mask, f);
    }

    /// Begins reading the subscriber's readers as one (calls nest): coherent sets that
    /// complete before [`Subscriber::end_access`] wait for it, so that every reader read
    /// meanwhile shows the same sets.
    pub fn begin_access(&self) {
        let shared = &self.participant.inner.shared;
        shared.lock().node.begin_access(self.group.id);
    }

    /// DCPS `get_datareaders`: the GUIDs of this subscriber's readers, one entry per sample
    /// `selection` selects, in the order that reading one sample (`take_selection(1, ...)`)
    /// from each in turn reads them in. With ordered access of GROUP scope, samples of one
    /// publisher come in the order it wrote them, whichever of its writers wrote each; call
    /// it between [`Subscriber::begin_access`] and [`Subscriber::end_access`] so that no
    /// sample arrives meanwhile.
    pub fn datareaders(&self, selection: ferrodds_rtps::dcps::Selection) -> Vec<Guid> {
        let shared = &self.participant.inner.shared;
        let now = shared.now();
        let core = shared.lock();
        let prefix = core.node.rtps.prefix();
        core.node
            .readers_in_order(self.group.id, now, selection)
            .into_iter()
            .map(|id| Guid::new(prefix, id))
            .collect()
    }

    /// Ends the access: the sets that completed meanwhile go into the readers.
    pub fn end_access(&self) {
        let shared = &self.participant.inner.shared;
        let mut core = shared.lock();
        let now = shared.now();
        core.node.end_access(now, self.group.id);
        core.after_input();
        shared.finish(core);
    }

    /// A reader in this subscriber's partition.
    pub fn create_reader<T: Cdr>(&self, topic: &Topic<T>, qos: Qos) -> Result<DataReader<T>> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DataReader::new(&self.participant, topic, qos)
    }

    /// A reader of a dynamic topic in this subscriber's partition.
    pub fn create_dynamic_reader(&self, topic: &DynamicTopic, qos: Qos) -> Result<DynamicReader> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DynamicReader::new(&self.participant, topic, qos)
    }

    /// A reader in this subscriber's partition that takes in only the samples the filter
    /// expression keeps (see [`DomainParticipant::create_filtered_reader`]).
    pub fn create_filtered_reader(
        &self,
        topic: &DynamicTopic,
        qos: Qos,
        expression: &str,
        parameters: &[&str],
    ) -> Result<DynamicReader> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DynamicReader::filtered(
            &self.participant,
            topic,
            qos,
            topic.filter(expression, parameters)?,
        )
    }

    /// A reader in this subscriber's partition that takes in only the samples the filter
    /// expression keeps, announced to writers (see
    /// [`DomainParticipant::create_reader_with_expression`]).
    pub fn create_reader_with_expression<T: Cdr + 'static>(
        &self,
        topic: &Topic<T>,
        qos: Qos,
        expression: &str,
        parameters: &[&str],
    ) -> Result<DataReader<T>> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DataReader::with_expression(&self.participant, topic, qos, expression, parameters)
    }

    /// A reader in this subscriber's partition that takes in only the samples `filter`
    /// accepts (see [`DomainParticipant::create_reader_with_filter`]).
    pub fn create_reader_with_filter<T: Cdr + 'static>(
        &self,
        topic: &Topic<T>,
        qos: Qos,
        filter: impl Fn(&T) -> bool + Send + Sync + 'static,
    ) -> Result<DataReader<T>> {
        let qos = self.group.apply(qos);
        topic.check_participant(&self.participant)?;
        DataReader::with_filter(&self.participant, topic, qos, filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_come_at_least_three_times_per_lease() {
        let s = Duration::from_secs;
        // The defaults are left alone.
        assert_eq!(announce_period(s(2), s(20)), s(2));
        // A lease shorter than the period asked for shortens the period.
        assert_eq!(announce_period(s(2), s(3)), s(1));
        assert_eq!(
            announce_period(s(2), s(1)),
            Duration::from_millis(333) + Duration::from_nanos(333_333)
        );
        // A lease of nothing does not make the timer spin.
        assert_eq!(
            announce_period(s(2), Duration::ZERO),
            Duration::from_millis(10)
        );
    }
}
