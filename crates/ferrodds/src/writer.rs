//! Writers. `DynamicWriter` writes to a topic whose type is known at run time: serialized
//! samples, or dynamic values it serializes with the runtime codec (what the Python binding
//! and the tools use). `DataWriter<T>` is a thin typed layer over it: it serializes `T` with
//! the derived code and hands the bytes to the same writer.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use ferrodds_cdr::dynamic::{self, DynamicType, DynamicValue};
use ferrodds_cdr::{
    key_hash, serialize_into, Cdr, EncapsulationHeader, Endianness, RepresentationId, XcdrVersion,
};
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::original_writer::OriginalWriterInfo;
use ferrodds_rtps::qos::DataRepresentationId;
use ferrodds_rtps::wire::{EntityId, Guid};
use ferrodds_rtps::{
    Change, ChangeKind, History, LocalEndpoint, Reducer, WriteError, Writer, WriterConfig,
};

use ferrodds_rtps::dcps::sample::rtps_time;
use ferrodds_rtps::dcps::status::{DeadlineMissedStatus, IncompatibleStatus, LivelinessLostStatus};
use ferrodds_rtps::dcps::{DcpsWriter, InstanceHandle};
use ferrodds_rtps::payload::{Chunk, Payload};
use ferrodds_rtps::payload_pool::PayloadPool;

use crate::error::{Error, Result};
use crate::loan::{Loan, LoanPayload, Plain, SampleLoan};
use crate::participant::{DomainParticipant, DynamicTopic, Topic};
use crate::qos::{PublishMode, Qos};
use crate::runtime::{Core, StatusKind};
use crate::type_support::TypeSupport;
use ferrodds_transport::SampleChannel;

/// Writes samples of type `T` to a topic: a [`DynamicWriter`] that serializes `T` with its
/// derived code.
pub struct DataWriter<T> {
    untyped: DynamicWriter,
    _type: PhantomData<fn(&T)>,
}

impl<T> Clone for DataWriter<T> {
    fn clone(&self) -> Self {
        DataWriter {
            untyped: self.untyped.clone(),
            _type: PhantomData,
        }
    }
}

/// Writes to a topic whose type is known at run time (a [`DynamicType`]): dynamic values,
/// or samples already serialized.
#[derive(Clone)]
pub struct DynamicWriter {
    inner: Arc<WriterInner>,
}

struct WriterInner {
    participant: DomainParticipant,
    entity_id: EntityId,
    guid: Guid,
    qos: Qos,
    version: XcdrVersion,
    ty: DynamicType,
    keyed: bool,
    /// The size of the last sample serialized: the next one's buffer is made that large,
    /// so that a large sample is serialized without the buffer growing (and being copied)
    /// a dozen times on the way.
    last_size: AtomicUsize,
    /// The typed writer's type was found plain (its loans need no further check).
    plain: AtomicBool,
    /// Sample buffers the history let go, for the next samples (refilled under the
    /// participant's lock after each write; taken before it, to serialize into).
    spare: Mutex<PayloadPool>,
    /// The instances written and not unregistered (keyed topics), by key hash, with their
    /// key-only samples: what deleting the writer unregisters, and with autodispose
    /// disposes (WRITER_DATA_LIFECYCLE).
    /// foldhash rather than SipHash: looked up at every write (see `by_instance` in
    /// ferrodds_rtps's writer).
    registered: Mutex<HashMap<[u8; 16], Vec<u8>, foldhash::fast::RandomState>>,
    /// A writer created disabled: its announcement, made by [`DynamicWriter::enable`].
    unannounced: Mutex<Option<LocalEndpoint>>,
    /// WRITER_DATA_LIFECYCLE's autodispose_unregistered_instances, which `set_qos` may
    /// change (`qos` holds what it was created with).
    autodispose: AtomicBool,
    /// Its sample channel, made at the first loan where the participant has shared
    /// memory (`None` inside when it could not be made: loans are process memory then).
    channel: OnceLock<Option<SampleChannel>>,
    /// The participant has shared memory: loans lie in the writer's sample channel.
    shares_memory: bool,
}

impl WriterInner {
    /// The writer's sample channel, made now if this is the first loan (chunks first
    /// sized for `len` bytes).
    fn channel(&self, len: usize) -> Option<&SampleChannel> {
        if !self.shares_memory {
            return None;
        }
        self.channel
            .get_or_init(|| match SampleChannel::create(&self.guid.to_bytes(), len) {
                Ok(c) => Some(c),
                Err(e) => {
                    tracing::warn!(writer = ?self.guid, error = %e, "loans stay in process memory: no sample channel");
                    None
                }
            })
            .as_ref()
    }

    /// A buffer for the next sample: one the history let go, or a new one.
    fn sample_buffer(&self) -> Arc<Vec<u8>> {
        let kept = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        kept.unwrap_or_else(|| {
            Arc::new(Vec::with_capacity(
                self.last_size.load(Ordering::Relaxed).max(64),
            ))
        })
    }

    /// Notes the size of `payload`, and gives back what a buffer made for a far larger
    /// sample has spare (the history would hold it).
    fn serialized(&self, payload: &mut Vec<u8>) {
        self.last_size.store(payload.len(), Ordering::Relaxed);
        if payload.capacity() > 2 * payload.len() + 4096 {
            payload.shrink_to_fit();
        }
    }
}

impl WriterInner {
    /// Keeps [`WriterInner::registered`] up to date after a change of `kind` to instance
    /// `key` was written: a new instance's key-only sample is made once, from `payload`.
    fn track(&self, kind: ChangeKind, key: [u8; 16], payload: &[u8]) {
        let mut registered = self.registered.lock().unwrap_or_else(|p| p.into_inner());
        match kind {
            ChangeKind::Alive if !registered.contains_key(&key) => {
                let key_sample =
                    dynamic::deserialize_keys(&self.ty, payload)
                        .ok()
                        .and_then(|keys| {
                            let (ty, version) = (&self.ty, self.version);
                            dynamic::serialize_key_sample(ty, &keys, version, Endianness::NATIVE)
                                .ok()
                        });
                if let Some(k) = key_sample {
                    registered.insert(key, k);
                }
            }
            // A dispose's payload is the key-only sample; it registers the instance too.
            ChangeKind::Disposed if !registered.contains_key(&key) => {
                registered.insert(key, payload.to_vec());
            }
            ChangeKind::Unregistered | ChangeKind::DisposedUnregistered => {
                registered.remove(&key);
            }
            _ => {}
        }
    }

    /// Registers instance `key` with its key-only sample (DCPS `register_instance`: nothing
    /// is sent; the writer's deletion will unregister it).
    fn register(&self, key: [u8; 16], key_sample: Vec<u8>) -> InstanceHandle {
        self.registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_insert(key_sample);
        InstanceHandle(key)
    }

    /// The key-only sample of registered instance `handle`.
    fn key_sample(&self, handle: InstanceHandle) -> Result<Vec<u8>> {
        self.registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&handle.0)
            .cloned()
            .ok_or(Error::UnknownInstance(handle))
    }

    /// True when instance `handle` is registered.
    fn is_registered(&self, handle: InstanceHandle) -> bool {
        self.registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(&handle.0)
    }

    /// Before the writer goes: its registered instances are unregistered (and, with
    /// autodispose, disposed), and it lingers until its readers acknowledged that, for at
    /// most [`LINGER`].
    fn release_instances(&self) {
        let registered =
            std::mem::take(&mut *self.registered.lock().unwrap_or_else(|p| p.into_inner()));
        if registered.is_empty() {
            return;
        }
        let kind = if self.autodispose.load(Ordering::Relaxed) {
            ChangeKind::DisposedUnregistered
        } else {
            ChangeKind::Unregistered
        };
        let shared = &self.participant.inner.shared;
        let mut core = shared.lock();
        if core.closed {
            return;
        }
        let now = shared.now();
        let timestamp = Some(rtps_time(SystemTime::now()));
        for (key, key_sample) in registered {
            let change = Change {
                original: None,
                coherence: None,
                kind,
                key_hash: Some(key),
                timestamp,
                payload: Payload::from(key_sample),
                reduced_payload: None,
            };
            // A KEEP_ALL history full of unacknowledged samples takes no more: those
            // instances are left to the readers' NOT_ALIVE_NO_WRITERS.
            let _ = core.node.write(now, self.entity_id, change);
        }
        core.hand_over(
            self.entity_id,
            self.qos.publish_mode == PublishMode::Asynchronous,
        );
        shared.finish_write(core, self.entity_id);
        let id = self.entity_id;
        shared.wait_until(LINGER, |core| {
            core.node
                .rtps
                .writer(id)
                .is_none_or(|w| w.all_acknowledged())
        });
    }
}

/// How long a deleted writer waits for its readers to acknowledge its last changes (the
/// unregisters and disposes of its instances); Cyclone DDS's writer linger is 1 s.
const LINGER: Duration = Duration::from_millis(500);

impl Drop for WriterInner {
    fn drop(&mut self) {
        self.release_instances();
        self.participant.inner.shared.withdraw(self.guid);
    }
}

impl<T: Cdr> DataWriter<T> {
    pub(crate) fn new(participant: &DomainParticipant, topic: &Topic<T>, qos: Qos) -> Result<Self> {
        let support = TypeSupport::of::<T>(&topic.type_name);
        Ok(DataWriter {
            untyped: DynamicWriter::create(participant, &topic.name, &support, qos, true)?,
            _type: PhantomData,
        })
    }

    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        self.untyped.guid()
    }

    /// Changes its QoS; see [`DynamicWriter::set_qos`].
    pub fn set_qos(&self, qos: Qos) -> Result<()> {
        self.untyped.set_qos(qos)
    }

    /// The untyped writer under this one.
    pub fn untyped(&self) -> &DynamicWriter {
        &self.untyped
    }

    /// Writes a sample, stamped now.
    pub fn write(&self, sample: &T) -> Result<()> {
        self.write_with_timestamp(sample, SystemTime::now())
    }

    /// Writes a sample with a given source timestamp.
    pub fn write_with_timestamp(&self, sample: &T, timestamp: SystemTime) -> Result<()> {
        let inner = &self.untyped.inner;
        let mut payload = inner.sample_buffer();
        let bytes = Arc::make_mut(&mut payload);
        serialize_into(sample, inner.version, Endianness::NATIVE, bytes)?;
        inner.serialized(bytes);
        let key = self.key_hash(sample)?;
        self.untyped
            .submit(ChangeKind::Alive, key, timestamp, payload)
    }

    /// Lends a zeroed sample of a plain type ([`crate::Plain`]) in the buffer that will be
    /// sent: fill it in place and hand it to [`DataWriter::write_loan`]; nothing is
    /// serialized or copied on the way. An error when `T` is not plain (checked once).
    pub fn loan(&self) -> Result<Loan<T>>
    where
        T: Plain,
    {
        let inner = &self.untyped.inner;
        if !inner.plain.load(Ordering::Relaxed) {
            crate::loan::check_plain::<T>(inner.version)?;
            inner.plain.store(true, Ordering::Relaxed);
        }
        Loan::new(self.untyped.loan(std::mem::size_of::<T>()))
    }

    /// Writes a lent sample, stamped now: its buffer becomes the history's.
    pub fn write_loan(&self, loan: Loan<T>) -> Result<()>
    where
        T: Plain,
    {
        let key = self.key_hash(&loan)?;
        let payload = self.untyped.lent_payload(loan.sample.into_payload())?;
        self.untyped
            .submit(ChangeKind::Alive, key, SystemTime::now(), payload)
    }

    /// Disposes the instance of `sample` (only its key matters).
    pub fn dispose(&self, sample: &T) -> Result<()> {
        self.write_key(sample, ChangeKind::Disposed)
    }

    /// Unregisters the instance of `sample`.
    pub fn unregister(&self, sample: &T) -> Result<()> {
        self.write_key(sample, ChangeKind::Unregistered)
    }

    /// Registers the instance of `sample` (only its key matters) and returns its handle:
    /// DCPS `register_instance`. Nothing is sent; writing registers an instance too, and
    /// the writer's deletion unregisters what it has registered (WRITER_DATA_LIFECYCLE).
    pub fn register_instance(&self, sample: &T) -> Result<InstanceHandle> {
        let Some(key) = self.key_hash(sample)? else {
            return Ok(InstanceHandle::NIL);
        };
        let version = self.untyped.inner.version;
        let key_sample = ferrodds_cdr::serialize_key_sample(sample, version, Endianness::NATIVE)?;
        Ok(self.untyped.inner.register(key, key_sample))
    }

    /// The handle of `sample`'s instance if this writer has registered it (written,
    /// disposed or registered, and not unregistered): DCPS `lookup_instance`.
    pub fn lookup_instance(&self, sample: &T) -> Result<Option<InstanceHandle>> {
        Ok(self
            .key_hash(sample)?
            .map(InstanceHandle)
            .filter(|h| self.untyped.inner.is_registered(*h)))
    }

    /// Unregisters instance `handle` (disposing it too with autodispose):
    /// `unregister_instance` by handle. [`Error::UnknownInstance`] when it is not registered.
    pub fn unregister_instance(&self, handle: InstanceHandle) -> Result<()> {
        self.untyped.unregister_instance(handle)
    }

    /// Disposes instance `handle`: `dispose_instance` by handle.
    /// [`Error::UnknownInstance`] when it is not registered.
    pub fn dispose_instance(&self, handle: InstanceHandle) -> Result<()> {
        self.untyped.dispose_instance(handle)
    }

    /// The instance handle (key hash) of `sample`.
    pub fn instance_handle(&self, sample: &T) -> Result<InstanceHandle> {
        Ok(self
            .key_hash(sample)?
            .map(InstanceHandle)
            .unwrap_or(InstanceHandle::NIL))
    }

    fn key_hash(&self, sample: &T) -> Result<Option<[u8; 16]>> {
        Ok(if T::IS_KEYED {
            Some(key_hash(sample, self.untyped.inner.version)?.0)
        } else {
            None
        })
    }

    fn write_key(&self, sample: &T, kind: ChangeKind) -> Result<()> {
        // The serialized key: the type's own encoding with only its key members.
        let version = self.untyped.inner.version;
        let payload = ferrodds_cdr::serialize_key_sample(sample, version, Endianness::NATIVE)?;
        let key = self.key_hash(sample)?;
        self.untyped.submit(kind, key, SystemTime::now(), payload)
    }

    /// Sends the samples writer batching holds back now (nothing to do without
    /// [`Qos::batching`]).
    pub fn flush(&self) -> Result<()> {
        self.untyped.flush()
    }

    /// Waits until every matched reliable reader acknowledged everything written.
    pub fn wait_for_acknowledgments(&self, timeout: Duration) -> Result<()> {
        self.untyped.wait_for_acknowledgments(timeout)
    }

    /// The readers matched now.
    pub fn matched_subscriptions(&self) -> Vec<Guid> {
        self.untyped.matched_subscriptions()
    }

    /// The PUBLICATION_MATCHED status.
    pub fn publication_matched_status(&self) -> crate::MatchedStatus {
        self.untyped.publication_matched_status()
    }

    /// The listener for the statuses in `mask`; see [`DynamicWriter::set_listener`].
    pub fn set_listener(
        &self,
        mask: crate::StatusMask,
        f: impl Fn(StatusKind) + Send + Sync + 'static,
    ) {
        self.untyped.set_listener(mask, f)
    }

    /// A status condition for the statuses in `mask`; see
    /// [`DynamicWriter::status_condition`].
    pub fn status_condition(&self, mask: crate::StatusMask) -> crate::Condition {
        self.untyped.status_condition(mask)
    }

    /// Calls `f` whenever one of the writer's statuses changes; see
    /// [`DynamicWriter::set_status_listener`].
    pub fn set_status_listener(&self, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.untyped.set_status_listener(f)
    }

    /// Waits until at least `count` readers are matched.
    pub fn wait_for_matched(&self, count: usize, timeout: Duration) -> Result<()> {
        self.untyped.wait_for_matched(count, timeout)
    }

    /// The OFFERED_INCOMPATIBLE_QOS status.
    pub fn offered_incompatible_qos(&self) -> IncompatibleStatus {
        self.untyped.offered_incompatible_qos()
    }

    /// Asserts the writer's liveliness; see [`DynamicWriter::assert_liveliness`].
    pub fn assert_liveliness(&self) -> Result<()> {
        self.untyped.assert_liveliness()
    }

    /// The LIVELINESS_LOST status.
    pub fn liveliness_lost_status(&self) -> LivelinessLostStatus {
        self.untyped.liveliness_lost_status()
    }

    /// The OFFERED_DEADLINE_MISSED status: deadline periods in which an instance was not
    /// written (all zero without a DEADLINE QoS).
    pub fn offered_deadline_missed(&self) -> DeadlineMissedStatus {
        self.untyped.offered_deadline_missed()
    }

    /// The XCDR version this writer writes.
    pub fn data_representation(&self) -> XcdrVersion {
        self.untyped.data_representation()
    }
}

impl DynamicWriter {
    pub(crate) fn new(
        participant: &DomainParticipant,
        topic: &DynamicTopic,
        qos: Qos,
    ) -> Result<Self> {
        DynamicWriter::create(participant, &topic.name, &topic.support, qos, true)
    }

    /// A writer not announced (DDS's disabled entity) until [`DynamicWriter::enable`].
    pub(crate) fn new_disabled(
        participant: &DomainParticipant,
        topic: &DynamicTopic,
        qos: Qos,
    ) -> Result<Self> {
        DynamicWriter::create(participant, &topic.name, &topic.support, qos, false)
    }

    /// Changes its QoS (DCPS `set_qos`) to `qos`, in which only the policies DDS lets
    /// change may differ from what the writer has: DEADLINE, LATENCY_BUDGET,
    /// OWNERSHIP_STRENGTH, LIFESPAN, PARTITION, USER_DATA, TOPIC_DATA, GROUP_DATA,
    /// TRANSPORT_PRIORITY and WRITER_DATA_LIFECYCLE. A writer made by a publisher keeps the
    /// publisher's PRESENTATION, and its PARTITION when `qos` names none. The writer is announced again, so
    /// that matched readers see the change; readers that no longer fit (another
    /// partition, a deadline longer than they request) are unmatched, and readers that now
    /// fit are matched. Any other change is [`Error::ImmutablePolicy`] and changes nothing.
    pub fn set_qos(&self, mut qos: Qos) -> Result<()> {
        let inner = &self.inner;
        // As at creation: the representation it sends, when the application named none.
        if !qos.representation_set {
            qos.policies.data_representation.ids = vec![match inner.version {
                XcdrVersion::Xcdr1 => DataRepresentationId::XCDR,
                XcdrVersion::Xcdr2 => DataRepresentationId::XCDR2,
            }];
        }
        let created = &inner.qos;
        if qos.publish_mode != created.publish_mode {
            return Err(Error::ImmutablePolicy("PUBLISH_MODE"));
        }
        if qos.batch_delay != created.batch_delay {
            return Err(Error::ImmutablePolicy("batching (batch_delay)"));
        }
        if qos.ignore_local != created.ignore_local {
            return Err(Error::ImmutablePolicy("IGNORE_LOCAL"));
        }
        let shared = &inner.participant.inner.shared;
        let core = shared.lock();
        let mut unannounced = inner.unannounced.lock().unwrap_or_else(|p| p.into_inner());
        let current = match &*unannounced {
            Some(endpoint) => endpoint.qos.clone(),
            None => core
                .node
                .discovery
                .endpoint_qos(inner.guid)
                .cloned()
                .ok_or(Error::Closed)?,
        };
        crate::qos::check_change(created.parent.is_some(), &current, &mut qos.policies)?;
        inner.autodispose.store(qos.autodispose, Ordering::Relaxed);
        if let Some(endpoint) = &mut *unannounced {
            // Announced with it when enabled.
            endpoint.qos = qos.policies;
            return Ok(());
        }
        drop(unannounced);
        shared.update_endpoints(core, [(inner.guid, qos.policies)]);
        Ok(())
    }

    /// Announces a writer created disabled: from now on it matches readers. What it wrote
    /// before is in its history and reaches only the readers that take history
    /// (TRANSIENT_LOCAL or stronger) — where DDS refuses a disabled writer's writes
    /// (NOT_ENABLED), FerroDDS keeps them, which is how a durability service hands out a
    /// writer's samples without sending them again to the readers that had them. Does
    /// nothing on a writer already enabled.
    pub fn enable(&self) {
        let endpoint = self
            .inner
            .unannounced
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(endpoint) = endpoint {
            let shared = &self.inner.participant.inner.shared;
            shared.announce(shared.lock(), endpoint);
        }
    }

    /// Creates the RTPS writer and its DCPS state, and announces it (`announce`) or keeps
    /// the announcement for [`DynamicWriter::enable`].
    fn create(
        participant: &DomainParticipant,
        topic_name: &str,
        support: &TypeSupport,
        mut qos: Qos,
        announce: bool,
    ) -> Result<Self> {
        let version = if qos.representation_set {
            match qos.policies.data_representation.offered() {
                DataRepresentationId::XCDR2 => XcdrVersion::Xcdr2,
                DataRepresentationId::XCDR => XcdrVersion::Xcdr1,
                other => {
                    return Err(Error::BadParameter(format!(
                        "data representation {} is not supported; use XCDR (0) or XCDR2 (2)",
                        other.0
                    )))
                }
            }
        } else {
            support.default_version()
        };
        qos.policies.data_representation.ids = vec![match version {
            XcdrVersion::Xcdr1 => DataRepresentationId::XCDR,
            XcdrVersion::Xcdr2 => DataRepresentationId::XCDR2,
        }];
        let keyed = support.keyed();
        let shared = &participant.inner.shared;
        let mut core = shared.lock();
        let entity_id = core.next_entity_id(if keyed { 0x02 } else { 0x03 });
        let guid = Guid::new(core.node.rtps.prefix(), entity_id);
        let config = WriterConfig {
            reliable: qos.is_reliable(),
            transient_local: qos.is_transient_local(),
            history: match qos.depth() {
                Some(d) => History::KeepLast(d),
                None => History::KeepAll,
            },
            max_samples: qos.sample_limit(if qos.depth().is_some() {
                1_000_000
            } else {
                5000
            }),
            batch_delay: qos.batch_delay,
            large_datagrams: shared.large_datagrams.clone(),
            recycle_payloads: true,
            reduce: (version == XcdrVersion::Xcdr2 && core.node.discovery.config().fast_dds_xcdr1)
                .then(|| xcdr1_reducer(support.ty.clone())),
            ..WriterConfig::default()
        };
        core.node.rtps.add_writer(Writer::new(guid, config));
        let shares_memory = core.node.discovery.config().channel_host.is_some();
        let now = shared.now();
        if let Some(parent) = qos.parent {
            core.parents.insert(entity_id, parent);
        }
        core.node.add_data_writer(entity_id, {
            let writer = DcpsWriter::new(&qos.policies, now);
            match qos.group {
                Some(group) => writer.with_group(group),
                None => writer,
            }
        });
        let endpoint = LocalEndpoint {
            guid,
            kind: EndpointKind::Writer,
            topic_name: topic_name.to_owned(),
            type_name: support.type_name.clone(),
            qos: qos.policies.clone(),
            keyed,
            ty: Some(support.ty.clone()),
            ignore_local: qos.ignore_local,
            content_filter: None,
        };
        let unannounced = if announce {
            shared.announce(core, endpoint);
            None
        } else {
            drop(core);
            Some(endpoint)
        };
        Ok(DynamicWriter {
            inner: Arc::new(WriterInner {
                participant: participant.clone(),
                entity_id,
                guid,
                autodispose: AtomicBool::new(qos.autodispose),
                qos,
                version,
                last_size: AtomicUsize::new(0),
                plain: AtomicBool::new(false),
                spare: Mutex::new(PayloadPool::new()),
                registered: Mutex::new(HashMap::default()),
                unannounced: Mutex::new(unannounced),
                ty: support.ty.clone(),
                keyed,
                channel: OnceLock::new(),
                shares_memory,
            }),
        })
    }

    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        self.inner.guid
    }

    /// The type it writes.
    pub fn dynamic_type(&self) -> &DynamicType {
        &self.inner.ty
    }

    /// Writes a value of the writer's type, stamped now.
    pub fn write(&self, value: &DynamicValue) -> Result<()> {
        self.write_with_timestamp(value, SystemTime::now())
    }

    /// Writes a value with a given source timestamp.
    pub fn write_with_timestamp(&self, value: &DynamicValue, timestamp: SystemTime) -> Result<()> {
        let ty = &self.inner.ty;
        let mut payload = self.inner.sample_buffer();
        let bytes = Arc::make_mut(&mut payload);
        dynamic::serialize_into(ty, value, self.inner.version, Endianness::NATIVE, bytes)?;
        self.inner.serialized(bytes);
        let key = self.key_hash(value)?;
        self.submit(ChangeKind::Alive, key, timestamp, payload)
    }

    /// Lends a buffer for a serialized sample of `len` bytes (after the encapsulation
    /// header, which is written): fill it in place with the type's encoding in this
    /// machine's byte order ([`SampleLoan::endianness`]) and hand it to
    /// [`DynamicWriter::write_loan`], which sends it without copying it.
    pub fn loan(&self, len: usize) -> SampleLoan {
        let (version, extensibility) = (self.inner.version, self.inner.ty.extensibility());
        let chunk_len = SampleLoan::chunk_len(len);
        // A chunk of the sample channel while it has one to lend (the history holds
        // fewer than `ferrodds_transport::sample_channel::BORROWED`), else the heap.
        match self
            .inner
            .channel(chunk_len)
            .and_then(|c| c.loan(chunk_len))
        {
            Some(chunk) => SampleLoan::in_chunk(chunk, version, extensibility, len),
            None => SampleLoan::new(version, extensibility, len),
        }
    }

    /// Writes a lent buffer, stamped now: it becomes the history's. On a keyed topic the
    /// key is read from it (its key members only); a buffer whose key does not decode is
    /// an error, and nothing is written.
    pub fn write_loan(&self, loan: SampleLoan) -> Result<()> {
        let payload = loan.into_payload();
        let key = if self.inner.keyed {
            let ty = &self.inner.ty;
            let keys = dynamic::deserialize_keys(ty, payload.bytes())?;
            Some(dynamic::key_hash(ty, &keys, self.inner.version)?.0)
        } else {
            None
        };
        let payload = self.lent_payload(payload)?;
        self.submit(ChangeKind::Alive, key, SystemTime::now(), payload)
    }

    /// A filled loan as the history holds it: a chunk of the sample channel is published
    /// first (before the change is written, so that a reader finds it in its queue when
    /// the DATA that refers to it comes).
    fn lent_payload(&self, payload: LoanPayload) -> Result<Payload> {
        Ok(match payload {
            LoanPayload::Heap(v) => Payload::from(v),
            LoanPayload::Chunk(chunk) => {
                let channel = self
                    .inner
                    .channel
                    .get()
                    .and_then(Option::as_ref)
                    .ok_or_else(|| {
                        Error::SharedMemory(std::io::Error::other(
                            "the writer has no sample channel",
                        ))
                    })?;
                let (chunk, bytes) = channel.send(chunk).map_err(Error::SharedMemory)?;
                Payload::Shared(Box::new(Chunk {
                    bytes,
                    number: chunk,
                }))
            }
        })
    }

    /// Writes a sample serialized elsewhere — a recording being replayed, a bridge — as it
    /// is: `payload` starts with its encapsulation header and goes out unchanged, stamped
    /// `timestamp`. The header must be one this writer may send: its data representation
    /// (XCDR1 or XCDR2), the form its type's extensibility takes in it (XTypes 7.6.3.1.2),
    /// either byte order; anything else is [`Error::Encapsulation`]. On a keyed topic the
    /// key is read from the sample (as [`DynamicWriter::write_loan`] does); a sample whose
    /// key does not decode is an error. Nothing is written on an error.
    pub fn write_serialized(&self, payload: Vec<u8>, timestamp: SystemTime) -> Result<()> {
        self.submit_serialized(ChangeKind::Alive, payload, timestamp)
    }

    /// [`DynamicWriter::write_serialized`] of bytes the caller keeps (a C or C# program's
    /// buffer): they are copied into a buffer the history let go, so that a steady stream
    /// of writes allocates nothing for its samples (a new `Vec` for each grew the heap of
    /// the C benchmark's pong by 6 KB per sample and had the pages faulted in). A sample
    /// whose length is not a multiple of 4 is padded with zeros, and its encapsulation
    /// options count the padding (XTypes 7.6.3.1.2), as RTPS carries a payload: readers
    /// then hand out exactly the sample.
    pub fn write_serialized_slice(&self, bytes: &[u8], timestamp: SystemTime) -> Result<()> {
        let mut buffer = self.serialized_buffer(bytes.len());
        buffer.bytes().extend_from_slice(bytes);
        self.write_serialized_buffer(buffer, timestamp)
    }

    /// An empty buffer with room for `size` bytes, to serialize a sample into where the
    /// history will keep it (one the history let go, when it has one);
    /// [`DynamicWriter::write_serialized_buffer`] writes it. The C API lends these to C
    /// and C# programs, whose samples then cross into the writer without the copy that
    /// [`DynamicWriter::write_serialized_slice`] makes of each.
    pub fn serialized_buffer(&self, size: usize) -> SerializedBuffer {
        let mut payload = self.inner.sample_buffer();
        let buffer = Arc::make_mut(&mut payload);
        buffer.clear();
        buffer.reserve(size);
        SerializedBuffer(payload)
    }

    /// Writes the sample serialized in `buffer` (from [`DynamicWriter::serialized_buffer`]),
    /// checked and padded as [`DynamicWriter::write_serialized_slice`] says, stamped
    /// `timestamp`.
    pub fn write_serialized_buffer(
        &self,
        mut buffer: SerializedBuffer,
        timestamp: SystemTime,
    ) -> Result<()> {
        let bytes = buffer.bytes();
        pad_serialized(bytes);
        self.inner.serialized(bytes);
        self.submit_serialized_from(ChangeKind::Alive, buffer.0, timestamp, None)
    }

    /// Disposes the instance whose key-only sample (what a reader hands out for a dispose,
    /// encapsulation header included) is `key_sample`, stamped `timestamp`; the bytes go
    /// out unchanged, checked as [`DynamicWriter::write_serialized`] checks a sample.
    pub fn dispose_serialized(&self, key_sample: Vec<u8>, timestamp: SystemTime) -> Result<()> {
        self.submit_serialized(ChangeKind::Disposed, key_sample, timestamp)
    }

    /// Unregisters the instance whose key-only sample is `key_sample` (see
    /// [`DynamicWriter::dispose_serialized`]).
    pub fn unregister_serialized(&self, key_sample: Vec<u8>, timestamp: SystemTime) -> Result<()> {
        self.submit_serialized(ChangeKind::Unregistered, key_sample, timestamp)
    }

    /// Writes a change another writer wrote, as a durability service relays it: `payload`
    /// is a sample (`kind` alive) or a key-only sample (disposed, unregistered), checked as
    /// [`DynamicWriter::write_serialized`] checks one, sent with PID_ORIGINAL_WRITER_INFO
    /// naming `writer` and the sequence number the change had there. A reader that took
    /// the change from that writer already drops it.
    pub fn write_relayed(
        &self,
        kind: ChangeKind,
        payload: Vec<u8>,
        timestamp: SystemTime,
        writer: Guid,
        sequence_number: i64,
    ) -> Result<()> {
        self.submit_serialized_from(
            kind,
            payload,
            timestamp,
            Some(OriginalWriterInfo {
                writer,
                sequence_number: ferrodds_rtps::wire::SequenceNumber(sequence_number),
            }),
        )
    }

    fn submit_serialized(
        &self,
        kind: ChangeKind,
        payload: Vec<u8>,
        timestamp: SystemTime,
    ) -> Result<()> {
        self.submit_serialized_from(kind, payload, timestamp, None)
    }

    fn submit_serialized_from(
        &self,
        kind: ChangeKind,
        payload: impl Into<Arc<Vec<u8>>>,
        timestamp: SystemTime,
        original: Option<OriginalWriterInfo>,
    ) -> Result<()> {
        let payload: Arc<Vec<u8>> = payload.into();
        self.check_encapsulation(&payload)?;
        let key = if self.inner.keyed {
            let ty = &self.inner.ty;
            let keys = if kind == ChangeKind::Alive {
                dynamic::deserialize_keys(ty, &payload)?
            } else {
                dynamic::deserialize_key_sample(ty, &payload)?
            };
            Some(dynamic::key_hash(ty, &keys, self.inner.version)?.0)
        } else {
            None
        };
        self.submit_from(kind, key, timestamp, payload, original)
    }

    /// Whether `payload`'s encapsulation header is one this writer sends, in either byte
    /// order: readers matched it on its data representation, and decode the body as the
    /// header's form says.
    fn check_encapsulation(&self, payload: &[u8]) -> Result<()> {
        let expected = RepresentationId::for_type(
            self.inner.version,
            self.inner.ty.extensibility(),
            Endianness::NATIVE,
        );
        let found = match payload {
            [a, b, _, _, ..] => Some(u16::from_be_bytes([*a, *b])),
            _ => None,
        };
        let header = EncapsulationHeader::parse(payload).ok();
        let acceptable = header.is_some_and(|h| {
            h.id == RepresentationId::for_type(
                self.inner.version,
                self.inner.ty.extensibility(),
                h.id.endianness(),
            )
        });
        if acceptable {
            Ok(())
        } else {
            Err(Error::Encapsulation { found, expected })
        }
    }

    /// Disposes the instance of `value` (only its key matters).
    pub fn dispose(&self, value: &DynamicValue) -> Result<()> {
        self.write_key(value, ChangeKind::Disposed)
    }

    /// Unregisters the instance of `value`.
    pub fn unregister(&self, value: &DynamicValue) -> Result<()> {
        self.write_key(value, ChangeKind::Unregistered)
    }

    /// Registers the instance of `value` (only its key matters): DCPS `register_instance`;
    /// see [`DataWriter::register_instance`].
    pub fn register_instance(&self, value: &DynamicValue) -> Result<InstanceHandle> {
        let Some(key) = self.key_hash(value)? else {
            return Ok(InstanceHandle::NIL);
        };
        let (ty, version) = (&self.inner.ty, self.inner.version);
        let key_sample = dynamic::serialize_key_sample(ty, value, version, Endianness::NATIVE)?;
        Ok(self.inner.register(key, key_sample))
    }

    /// The handle of `value`'s instance if this writer has it registered: DCPS
    /// `lookup_instance`.
    pub fn lookup_instance(&self, value: &DynamicValue) -> Result<Option<InstanceHandle>> {
        Ok(self
            .key_hash(value)?
            .map(InstanceHandle)
            .filter(|h| self.inner.is_registered(*h)))
    }

    /// Unregisters registered instance `handle` (disposing it too with autodispose).
    pub fn unregister_instance(&self, handle: InstanceHandle) -> Result<()> {
        let key_sample = self.inner.key_sample(handle)?;
        self.submit(
            ChangeKind::Unregistered,
            Some(handle.0),
            SystemTime::now(),
            key_sample,
        )
    }

    /// Disposes registered instance `handle`.
    pub fn dispose_instance(&self, handle: InstanceHandle) -> Result<()> {
        let key_sample = self.inner.key_sample(handle)?;
        self.submit(
            ChangeKind::Disposed,
            Some(handle.0),
            SystemTime::now(),
            key_sample,
        )
    }

    /// The instance handle (key hash) of `value`.
    pub fn instance_handle(&self, value: &DynamicValue) -> Result<InstanceHandle> {
        Ok(self
            .key_hash(value)?
            .map(InstanceHandle)
            .unwrap_or(InstanceHandle::NIL))
    }

    fn key_hash(&self, value: &DynamicValue) -> Result<Option<[u8; 16]>> {
        Ok(if self.inner.keyed {
            Some(dynamic::key_hash(&self.inner.ty, value, self.inner.version)?.0)
        } else {
            None
        })
    }

    fn write_key(&self, value: &DynamicValue, kind: ChangeKind) -> Result<()> {
        let (ty, version) = (&self.inner.ty, self.inner.version);
        let payload = dynamic::serialize_key_sample(ty, value, version, Endianness::NATIVE)?;
        let key = self.key_hash(value)?;
        self.submit(kind, key, SystemTime::now(), payload)
    }

    /// Hands a serialized change to the RTPS writer, waiting (KEEP_ALL) for room.
    pub(crate) fn submit(
        &self,
        kind: ChangeKind,
        key_hash: Option<[u8; 16]>,
        timestamp: SystemTime,
        payload: impl Into<Payload>,
    ) -> Result<()> {
        self.submit_from(kind, key_hash, timestamp, payload, None)
    }

    /// [`DynamicWriter::submit`] of a change written by `original` (relayed).
    fn submit_from(
        &self,
        kind: ChangeKind,
        key_hash: Option<[u8; 16]>,
        timestamp: SystemTime,
        payload: impl Into<Payload>,
        original: Option<OriginalWriterInfo>,
    ) -> Result<()> {
        let shared = &self.inner.participant.inner.shared;
        // WRITER_DATA_LIFECYCLE: with autodispose, unregistering disposes.
        let kind =
            if kind == ChangeKind::Unregistered && self.inner.autodispose.load(Ordering::Relaxed) {
                ChangeKind::DisposedUnregistered
            } else {
                kind
            };
        let change = Change {
            coherence: None,
            original: original.map(Box::new),
            kind,
            key_hash,
            timestamp: Some(rtps_time(timestamp)),
            payload: payload.into(),
            reduced_payload: None,
        };
        // Set when the history is first found full (reading the clock on every write
        // showed in profiles).
        let mut deadline = None;
        let mut core = shared.lock();
        loop {
            let now = shared.now();
            match core.node.write(now, self.inner.entity_id, change.clone()) {
                Ok(_) => break,
                Err(WriteError::TooLarge(n)) => return Err(Error::TooLarge(n)),
                Err(WriteError::HistoryFull(_)) => {
                    // KEEP_ALL and full: wait for acknowledgments, up to max_blocking_time.
                    let deadline = *deadline.get_or_insert_with(|| {
                        Instant::now()
                            .checked_add(self.inner.qos.blocking_time())
                            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365))
                    });
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() || core.closed {
                        return Err(Error::Timeout(
                            self.inner.qos.blocking_time(),
                            "the history is full of unacknowledged samples",
                        ));
                    }
                    core = shared.wait_changed(core, left.min(Duration::from_millis(10)));
                }
                Err(_) => return Err(Error::Closed),
            }
        }
        if let Some(writer) = core
            .node
            .rtps
            .writer(self.inner.entity_id)
            .filter(|w| w.has_recycled_payloads())
        {
            let mut spare = self.inner.spare.lock().unwrap_or_else(|p| p.into_inner());
            writer.recycle_payloads_into(&mut spare);
        }
        self.hand_over(&mut core);
        shared.finish_write(core, self.inner.entity_id);
        if let Some(key) = key_hash {
            self.inner.track(kind, key, &change.payload);
        }
        // A history with no reliable reader to wait for lets the change go within the
        // write, while this function still held its buffer: kept for the next sample now,
        // or every such write would allocate. (Mostly the history holds it: no lock then.)
        if let Payload::Heap(mut payload) = change.payload {
            if Arc::get_mut(&mut payload).is_none() {
                return Ok(());
            }
            self.inner
                .spare
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .keep(payload);
        }
        Ok(())
    }

    /// Sends the samples writer batching holds back now (nothing to do without
    /// [`Qos::batching`]).
    pub fn flush(&self) -> Result<()> {
        let shared = &self.inner.participant.inner.shared;
        let mut core = shared.lock();
        core.node
            .rtps
            .writer(self.inner.entity_id)
            .ok_or(Error::Closed)?
            .flush();
        self.hand_over(&mut core);
        shared.finish(core);
        Ok(())
    }

    /// Takes what this writer wants sent: `finish` sends it, or, when publishing
    /// asynchronously, the timer thread.
    fn hand_over(&self, core: &mut Core) {
        let asynchronous = self.inner.qos.publish_mode == PublishMode::Asynchronous;
        core.hand_over(self.inner.entity_id, asynchronous);
    }

    /// Waits until every matched reliable reader has answered this writer (an ACKNACK).
    /// Matching is seen from each side at its own time: a reader that has not answered may
    /// not have matched this writer yet, and a VOLATILE one takes only what is written after
    /// it did (Cyclone DDS's readers do so). A program that writes once right after
    /// [`DynamicWriter::wait_for_matched`] waits for this too.
    pub fn wait_for_readers_heard(&self, timeout: Duration) -> Result<()> {
        self.wait_for(
            timeout,
            Writer::reliable_readers_heard,
            "matched readers did not answer the writer",
        )
    }

    /// Waits until every matched reliable reader acknowledged everything written.
    pub fn wait_for_acknowledgments(&self, timeout: Duration) -> Result<()> {
        self.wait_for(
            timeout,
            Writer::all_acknowledged,
            "readers did not acknowledge every sample",
        )
    }

    /// Waits until `done` holds of the RTPS writer (or it is gone).
    fn wait_for(
        &self,
        timeout: Duration,
        done: fn(&Writer) -> bool,
        what: &'static str,
    ) -> Result<()> {
        let id = self.inner.entity_id;
        let shared = &self.inner.participant.inner.shared;
        if shared.wait_until(timeout, |core| {
            core.node.rtps.writer(id).is_none_or(|w| done(w))
        }) {
            Ok(())
        } else {
            Err(Error::Timeout(timeout, what))
        }
    }

    /// The readers matched now.
    pub fn matched_subscriptions(&self) -> Vec<Guid> {
        let core = self.inner.participant.inner.shared.lock();
        core.node
            .data_writer_ref(self.inner.entity_id)
            .map(|w| w.matches().remotes().iter().copied().collect())
            .unwrap_or_default()
    }

    /// Calls `f` (from a participant thread, without locks held) whenever one of the
    /// writer's statuses changes — PUBLICATION_MATCHED, OFFERED_INCOMPATIBLE_QOS,
    /// OFFERED_DEADLINE_MISSED — with the status that changed: DCPS's status listeners,
    /// which read the status with this writer's `*_status()` calls. Replaces the listener
    /// set before. A status that changed before the listener was set (a match found as
    /// the writer was created) is reported to it at once, from this thread.
    pub fn set_status_listener(&self, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.set_listener(crate::status::counted_mask(), f);
    }

    /// Calls `f` as [`DynamicWriter::set_status_listener`] does, for the statuses in
    /// `mask` only (DCPS's listener with its status mask): the others go to the
    /// publisher's or participant's listener. An empty mask removes the listener.
    pub fn set_listener(
        &self,
        mask: crate::StatusMask,
        f: impl Fn(StatusKind) + Send + Sync + 'static,
    ) {
        crate::status::set_listener(
            &self.inner.participant.inner.shared,
            self.inner.entity_id,
            mask,
            std::sync::Arc::new(f),
        );
    }

    /// A status condition of this writer for the statuses in `mask`: a wait set attached to
    /// it wakes while one of them changed since this writer's `*_status()` call for it last
    /// read it.
    pub fn status_condition(&self, mask: crate::StatusMask) -> crate::Condition {
        crate::Condition::Status(self.inner.entity_id, mask)
    }

    /// The PUBLICATION_MATCHED status: readers matched so far and now, and the last one
    /// that matched or left.
    pub fn publication_matched_status(&self) -> crate::MatchedStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::PublicationMatched,
            |node, _| node.data_writer_ref(id).map(|w| w.matches().status()),
        )
    }

    /// Waits until at least `count` readers are matched.
    pub fn wait_for_matched(&self, count: usize, timeout: Duration) -> Result<()> {
        let id = self.inner.entity_id;
        let shared = &self.inner.participant.inner.shared;
        if shared.wait_until(timeout, |core| {
            core.node
                .data_writer_ref(id)
                .is_some_and(|w| w.matches().remotes().len() >= count)
        }) {
            Ok(())
        } else {
            Err(Error::Timeout(timeout, "not enough readers matched"))
        }
    }

    /// Asserts the writer's liveliness, as a write does: a MANUAL_BY_TOPIC writer tells its
    /// readers (a HEARTBEAT with the liveliness flag), a MANUAL_BY_PARTICIPANT writer
    /// asserts its participant; an AUTOMATIC writer needs nothing.
    pub fn assert_liveliness(&self) -> Result<()> {
        let shared = &self.inner.participant.inner.shared;
        let now = shared.now();
        let mut core = shared.lock();
        if core.closed {
            return Err(Error::Closed);
        }
        core.node
            .assert_writer_liveliness(now, self.inner.entity_id);
        core.after_input();
        shared.finish(core);
        Ok(())
    }

    /// The LIVELINESS_LOST status: times this (MANUAL) writer did not assert its
    /// liveliness within its lease.
    pub fn liveliness_lost_status(&self) -> LivelinessLostStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::LivelinessLost,
            |node, _| node.data_writer_ref(id).map(|w| w.liveliness_lost()),
        )
    }

    /// The OFFERED_INCOMPATIBLE_QOS status.
    pub fn offered_incompatible_qos(&self) -> IncompatibleStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::OfferedIncompatibleQos,
            |node, _| node.data_writer_ref(id).map(|w| w.incompatible().clone()),
        )
    }

    /// The OFFERED_DEADLINE_MISSED status: deadline periods in which an instance was not
    /// written (all zero without a DEADLINE QoS).
    pub fn offered_deadline_missed(&self) -> DeadlineMissedStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::OfferedDeadlineMissed,
            |node, now| node.data_writer(id).map(|w| w.deadline_missed(now)),
        )
    }

    /// The XCDR version this writer writes.
    pub fn data_representation(&self) -> XcdrVersion {
        self.inner.version
    }
}

/// A buffer of a writer's history, lent to serialize one sample into
/// ([`DynamicWriter::serialized_buffer`]): the history keeps it as it is handed back, the
/// `Arc` it is shared through included.
#[derive(Debug)]
pub struct SerializedBuffer(Arc<Vec<u8>>);

impl SerializedBuffer {
    /// The bytes (empty when lent; the sample is what is in them when written).
    pub fn bytes(&mut self) -> &mut Vec<u8> {
        // Unshared from the start: `make_mut` never copies here.
        Arc::make_mut(&mut self.0)
    }
}

/// Pads a serialized sample to a multiple of 4 bytes, as RTPS carries a payload: zeros,
/// counted in the encapsulation options (XTypes 7.6.3.1.2) so that readers hand out exactly
/// the sample (Cyclone DDS's serializer, and FerroDDS's, write it so from the start).
/// Options that count padding already are the writer's word, and left alone.
fn pad_serialized(bytes: &mut Vec<u8>) {
    let pad = (4 - bytes.len() % 4) % 4;
    if pad != 0 && bytes.len() >= 4 && bytes[3] & 3 == 0 {
        bytes.resize(bytes.len() + pad, 0);
        bytes[3] |= pad as u8;
    }
}

/// The XCDR1 form of an XCDR2 writer's changes, for the Fast DDS 2.x readers of the
/// compatibility mode (`ParticipantBuilder::fast_dds_xcdr1`): decoded with the writer's
/// type and encoded again, in the byte order the change has. A key-only change
/// (dispose, unregister) becomes an XCDR1 key-only sample. `None` when the payload does not
/// decode, which a payload this writer checked on its way in always does.
fn xcdr1_reducer(ty: DynamicType) -> Reducer {
    Reducer(Arc::new(move |kind, payload| {
        let endianness = EncapsulationHeader::parse(payload).ok()?.id.endianness();
        if kind == ChangeKind::Alive {
            let value = dynamic::deserialize(&ty, payload).ok()?;
            dynamic::serialize(&ty, &value, XcdrVersion::Xcdr1, endianness).ok()
        } else {
            let key = dynamic::deserialize_key_sample(&ty, payload).ok()?;
            dynamic::serialize_key_sample(&ty, &key, XcdrVersion::Xcdr1, endianness).ok()
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_not_ending_on_4_bytes_is_padded_and_says_so() {
        let padded = |b: &[u8]| {
            let mut b = b.to_vec();
            pad_serialized(&mut b);
            b
        };
        assert_eq!(
            padded(&[0, 1, 0, 0, 7, 0, 0, 0, 1]),
            [0, 1, 0, 3, 7, 0, 0, 0, 1, 0, 0, 0]
        );
        assert_eq!(padded(&[0, 1, 0, 0, 7, 0, 0, 0]), [0, 1, 0, 0, 7, 0, 0, 0]);
        // Options that count padding already are the writer's word: left alone.
        assert_eq!(padded(&[0, 1, 0, 1, 7]), [0, 1, 0, 1, 7]);
    }
    use ferrodds_cdr::dynamic::{Member, StructType};
    use ferrodds_cdr::Extensibility;
    use ferrodds_rtps::dcps::InstanceState;

    /// `@appendable struct test::Reading { @key long id; string text; };`
    fn reading_type() -> DynamicType {
        DynamicType::Struct(Arc::new(StructType {
            name: "test::Reading".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![
                Member::new("id", 0, DynamicType::Int32).key(),
                Member::new("text", 1, DynamicType::String { bound: None }),
            ],
        }))
    }

    fn reading(id: i64, text: &str) -> DynamicValue {
        DynamicValue::Struct(vec![
            Some(DynamicValue::Int(id)),
            Some(DynamicValue::String(text.into())),
        ])
    }

    #[test]
    fn the_xcdr1_reducer_encodes_samples_and_keys_again_in_xcdr1() {
        let ty = reading_type();
        let value = reading(7, "seven");
        let reduce = xcdr1_reducer(ty.clone());
        for endianness in [Endianness::Little, Endianness::Big] {
            let xcdr2 = dynamic::serialize(&ty, &value, XcdrVersion::Xcdr2, endianness).unwrap();
            let xcdr1 = dynamic::serialize(&ty, &value, XcdrVersion::Xcdr1, endianness).unwrap();
            assert_ne!(xcdr1, xcdr2);
            assert_eq!((reduce.0)(ChangeKind::Alive, &xcdr2), Some(xcdr1));
            let key2 =
                dynamic::serialize_key_sample(&ty, &value, XcdrVersion::Xcdr2, endianness).unwrap();
            let key1 =
                dynamic::serialize_key_sample(&ty, &value, XcdrVersion::Xcdr1, endianness).unwrap();
            assert_eq!((reduce.0)(ChangeKind::Disposed, &key2), Some(key1));
        }
        // What does not decode has no reduced form (its readers get it as it is).
        assert_eq!((reduce.0)(ChangeKind::Alive, &[0, 7, 0, 0, 1]), None);
    }

    /// A writer and a reliable KEEP_ALL reader of `reading_type` on `topic` in one
    /// participant (domain 169, which the CLI's record/replay tests leave to these; each
    /// test its own topic, as the participants of one process find each other).
    fn pair(topic: &str) -> (DomainParticipant, DynamicWriter, crate::DynamicReader) {
        let p = DomainParticipant::builder()
            .unwrap()
            .domain_id(169)
            .interface("lo")
            .unwrap()
            .allow_multicast(false)
            .build()
            .unwrap();
        let topic = p
            .create_dynamic_topic(topic, "test::Reading", reading_type())
            .unwrap();
        let reader = p
            .create_dynamic_reader(&topic, Qos::reader().reliable().keep_all())
            .unwrap();
        let writer = p
            .create_dynamic_writer(&topic, Qos::writer().reliable().keep_all())
            .unwrap();
        writer.wait_for_matched(1, Duration::from_secs(10)).unwrap();
        (p, writer, reader)
    }

    fn take(reader: &crate::DynamicReader, n: usize) -> Vec<crate::Sample<Vec<u8>>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = Vec::new();
        while got.len() < n && Instant::now() < deadline {
            reader.wait_for_data(Duration::from_millis(100));
            got.extend(reader.take_serialized(n - got.len()));
        }
        got
    }

    #[test]
    fn serialized_samples_go_out_unchanged_in_either_byte_order() {
        let (_p, writer, reader) = pair("serialized_unchanged");
        assert_eq!(writer.data_representation(), XcdrVersion::Xcdr2);
        let ty = reading_type();
        let stamp = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut sent = Vec::new();
        for (i, order) in [Endianness::Big, Endianness::Little]
            .into_iter()
            .enumerate()
        {
            let value = reading(7 + i as i64, "hello");
            let bytes = dynamic::serialize(&ty, &value, XcdrVersion::Xcdr2, order).unwrap();
            writer.write_serialized(bytes.clone(), stamp).unwrap();
            sent.push((bytes, writer.instance_handle(&value).unwrap()));
        }
        let key = dynamic::serialize_key_sample(
            &ty,
            &reading(7, ""),
            XcdrVersion::Xcdr2,
            Endianness::Big,
        )
        .unwrap();
        writer.dispose_serialized(key.clone(), stamp).unwrap();
        let got = take(&reader, 3);
        assert_eq!(got.len(), 3, "{got:?}");
        for (s, (bytes, handle)) in got.iter().zip(&sent) {
            assert_eq!(s.data.as_ref(), Some(bytes));
            assert!(s.info.valid_data);
            assert_eq!(s.info.instance_handle, *handle);
            assert_eq!(s.info.source_timestamp, Some(stamp));
        }
        let disposed = &got[2];
        assert!(!disposed.info.valid_data);
        assert_eq!(
            disposed.info.instance_state,
            InstanceState::NotAliveDisposed
        );
        assert_eq!(disposed.info.instance_handle, sent[0].1);
        assert_eq!(disposed.key, Some(key));
    }

    #[test]
    fn other_encapsulations_and_undecodable_keys_are_refused() {
        let (_p, writer, reader) = pair("serialized_refused");
        let ty = reading_type();
        let good = dynamic::serialize(
            &ty,
            &reading(1, "x"),
            XcdrVersion::Xcdr2,
            Endianness::Little,
        )
        .unwrap();
        let with_id = |id: u16| {
            let mut b = good.clone();
            b[..2].copy_from_slice(&id.to_be_bytes());
            b
        };
        let now = SystemTime::now();
        // XCDR1 (another data representation), PLAIN_CDR2 and PL_CDR2 (the forms of final and
        // mutable types), an identifier no XCDR version has, and no header at all.
        for (payload, found) in [
            (with_id(0x0001), Some(0x0001)),
            (with_id(0x0007), Some(0x0007)),
            (with_id(0x000b), Some(0x000b)),
            (with_id(0x0004), Some(0x0004)),
            (vec![0x00, 0x09], None),
        ] {
            match writer.write_serialized(payload, now) {
                Err(Error::Encapsulation { found: f, expected }) => {
                    assert_eq!(f, found);
                    assert_eq!(expected.version(), XcdrVersion::Xcdr2);
                }
                other => panic!("expected an encapsulation error, got {other:?}"),
            }
        }
        let err = writer
            .write_serialized(vec![0x00, 0x09, 0x00, 0x00], now)
            .unwrap_err();
        assert!(matches!(err, Error::Decode(_)), "{err}");
        assert!(err.to_string().contains("deserialize"), "{err}");
        let msg = writer
            .write_serialized(with_id(0x0001), now)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("0x0001") && msg.contains("DCdr2"), "{msg}");
        // Nothing of it was written; a good sample after it is.
        writer.write_serialized(good.clone(), now).unwrap();
        let got = take(&reader, 1);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data, Some(good));
        assert!(reader.take_serialized(10).is_empty());
    }
}
