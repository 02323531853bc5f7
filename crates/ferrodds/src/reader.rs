//! Readers. `DynamicReader` reads a topic whose type is known at run time: it takes
//! samples as dynamic values (decoded by the runtime codec) or as the bytes that arrived
//! (what the Python binding and the tools use). `DataReader<T>` is a thin typed layer over
//! it that decodes `T` with the derived code, in the caller's thread.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use ferrodds_cdr::dynamic::{Bytes, DynamicType, DynamicValue};
use ferrodds_cdr::{Cdr, DecodeError, XcdrVersion};
use ferrodds_rtps::dcps::status::{
    DeadlineMissedStatus, IncompatibleStatus, LivelinessChangedStatus, SampleLostStatus,
    SampleRejectedStatus,
};
use ferrodds_rtps::dcps::{
    ContentFilter, DcpsReader, FilterExpression, InstanceHandle, SampleInfo, Selection, Taken,
};
use ferrodds_rtps::discovery::ContentFilterProperty;
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::payload::ReceivedPayload;
use ferrodds_rtps::payload_pool::{ReceivePool, RECEIVE_KEPT_BYTES};
use ferrodds_rtps::wire::{EntityId, Guid};
use ferrodds_rtps::{LocalEndpoint, Reader, ReaderStats, Timestamp};

use crate::error::{Error, Result};
use crate::loan::{Loaned, Plain};
use crate::participant::{DomainParticipant, DynamicTopic, Topic};
use crate::qos::Qos;
use crate::runtime::{Callback, Interest, ReaderHooks, StatusKind, StatusMask};
use crate::type_support::{decode_dynamic, decode_typed, TypeSupport};
use crate::waitset::Condition;

/// A reader's content filter as its creator gives it.
enum GivenFilter {
    /// A predicate of the application's: applied here alone, never announced.
    Closure(ContentFilter),
    /// A filter expression: applied here, and announced in SEDP
    /// (`PID_CONTENT_FILTER_PROPERTY`) for writers that filter before sending.
    Expression(FilterExpression),
}

/// A sample and what the reader knows about it. A sample without data
/// (`info.valid_data` false) only reports that its instance changed state — disposed,
/// unregistered, its writers gone — so that it cannot be mistaken for data: its `data` is
/// `None` and `key` holds the instance's key.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<T> {
    /// The data; `None` for a sample that only reports an instance state change.
    pub data: Option<T>,
    /// For a sample without data, the instance's key: a `T` with its key members set and
    /// the others at their defaults (`None` for samples with data: the key is in `data`).
    pub key: Option<T>,
    /// Its sample info.
    pub info: SampleInfo,
}

impl<T> Sample<T> {
    /// `value` as the data of a valid sample, or as the key of one without data, as
    /// `info.valid_data` says.
    pub(crate) fn new(value: T, info: SampleInfo) -> Self {
        let (data, key) = if info.valid_data {
            (Some(value), None)
        } else {
            (None, Some(value))
        };
        Sample { data, key, info }
    }

    /// The data, or for a sample without data its key: what the sample holds.
    pub fn value(&self) -> Option<&T> {
        self.data.as_ref().or(self.key.as_ref())
    }
}

/// A decoded sample's bytes are done with: reused for a later sample (a large reassembly
/// buffer by any reader of the process), or, a chunk of a writer's sample channel, let go
/// (back to the writer's pool). The bytes given to the reader's own pool.
fn release_payload(spare: &mut ReceivePool, payload: impl Into<ReceivedPayload>) -> usize {
    let ReceivedPayload::Owned(payload) = payload.into() else {
        return 0;
    };
    let bytes = payload.capacity();
    if bytes >= ferrodds_rtps::buffer_pool::MIN_POOLED {
        ferrodds_rtps::buffer_pool::recycle(payload);
        0
    } else {
        spare.keep(payload);
        bytes
    }
}

/// The bytes a payload holds of the process's heap (none for a chunk of a sample channel).
fn owned_capacity(payload: &ReceivedPayload) -> usize {
    match payload {
        ReceivedPayload::Owned(v) => v.capacity(),
        ReceivedPayload::Shared(_) => 0,
    }
}

/// Reads samples of type `T` from a topic: a [`DynamicReader`] whose samples are decoded
/// as `T` by its derived code.
pub struct DataReader<T> {
    untyped: DynamicReader,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for DataReader<T> {
    fn clone(&self) -> Self {
        DataReader {
            untyped: self.untyped.clone(),
            _type: PhantomData,
        }
    }
}

/// Reads a topic whose type is known at run time (a [`DynamicType`]).
#[derive(Clone)]
pub struct DynamicReader {
    inner: Arc<ReaderInner>,
    /// Shared: a handle is cloned where it is used (the C API's registry lends one per
    /// take), and a type is a tree of allocations.
    ty: Arc<DynamicType>,
}

pub(crate) struct ReaderInner {
    pub(crate) participant: DomainParticipant,
    pub(crate) entity_id: EntityId,
    guid: Guid,
    /// Buffers of samples decoded, handed back to the RTPS reader at the next collect (under
    /// the participant's lock, which the decoding does not hold).
    spare: Mutex<ReceivePool>,
    /// Whether it matches writers of its own participant (not a DDS policy; it may not
    /// change).
    ignore_local: bool,
    /// Made by a subscriber, whose PRESENTATION (and PARTITION) it has.
    in_group: bool,
}

impl Drop for ReaderInner {
    fn drop(&mut self) {
        self.participant.inner.shared.withdraw(self.guid);
    }
}

impl<T: Cdr> DataReader<T> {
    pub(crate) fn new(participant: &DomainParticipant, topic: &Topic<T>, qos: Qos) -> Result<Self> {
        Self::with_content_filter(participant, topic, qos, None)
    }

    /// A reader that only takes in the samples `filter` accepts (a content filter, applied
    /// as samples arrive; see `delivery.rs`).
    pub(crate) fn with_filter(
        participant: &DomainParticipant,
        topic: &Topic<T>,
        qos: Qos,
        filter: impl Fn(&T) -> bool + Send + Sync + 'static,
    ) -> Result<Self>
    where
        T: 'static,
    {
        let filter: ContentFilter = Arc::new(move |payload: &[u8]| {
            decode_typed::<T>(payload, false).is_ok_and(|sample| filter(&sample))
        });
        Self::with_content_filter(participant, topic, qos, Some(GivenFilter::Closure(filter)))
    }

    /// A reader that only takes in the samples the filter expression keeps (DDS SQL over
    /// `T`'s members), announced so that writers able to evaluate it send only those.
    pub(crate) fn with_expression(
        participant: &DomainParticipant,
        topic: &Topic<T>,
        qos: Qos,
        expression: &str,
        parameters: &[&str],
    ) -> Result<Self> {
        let expression = FilterExpression::new(&T::dynamic_type(), expression, parameters)
            .map_err(|error| Error::Filter {
                expression: expression.to_owned(),
                error,
            })?;
        Self::with_content_filter(
            participant,
            topic,
            qos,
            Some(GivenFilter::Expression(expression)),
        )
    }

    fn with_content_filter(
        participant: &DomainParticipant,
        topic: &Topic<T>,
        qos: Qos,
        filter: Option<GivenFilter>,
    ) -> Result<Self> {
        let support = TypeSupport::of::<T>(&topic.type_name);
        Ok(DataReader {
            untyped: DynamicReader::create(participant, &topic.name, &support, qos, filter)?,
            _type: PhantomData,
        })
    }

    /// The untyped reader under this one.
    pub fn untyped(&self) -> &DynamicReader {
        &self.untyped
    }

    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.untyped.guid()
    }

    /// Changes its QoS; see [`DynamicReader::set_qos`].
    pub fn set_qos(&self, qos: Qos) -> Result<()> {
        self.untyped.set_qos(qos)
    }

    fn decode_all(&self, taken: Vec<Taken>) -> Result<Vec<Sample<T>>> {
        self.untyped.decode_all(taken, decode_typed::<T>)
    }

    /// Removes and returns up to `max` samples of a plain type as they arrived, without a
    /// copy or a decode: each `Loaned` derefs to the `T` in the received buffer. `None` for
    /// a sample without data (a dispose or an unregister). An error when `T` is not plain
    /// ([`crate::Plain`]), or a sample is not a `T` in this machine's byte order (such
    /// samples are taken all the same; [`DataReader::take`] decodes any byte order).
    pub fn take_loaned(&self, max: usize) -> Result<Vec<Sample<Loaned<T>>>>
    where
        T: Plain,
    {
        crate::loan::check_plain::<T>(XcdrVersion::Xcdr2)?;
        self.untyped
            .take_loaned(max)
            .into_iter()
            .map(|s| {
                let data = s.data.map(Loaned::new).transpose()?;
                Ok(Sample {
                    data,
                    key: None,
                    info: s.info,
                })
            })
            .collect()
    }

    /// Removes up to `max` samples into the front of `samples`, and says how many:
    /// `samples[..n]` are the samples taken, oldest first (DCPS `take` into the
    /// application's sample buffers, as Cyclone DDS's `dds_take` fills the array it is
    /// given). Each is decoded into the value its slot already holds, reusing that value's
    /// sequences and strings instead of allocating them anew; `samples` grows when shorter
    /// and is never shortened, so a vector kept from one call to the next (what the slots
    /// past `n` are for) makes a steady stream of large samples cost no allocation and no
    /// fresh page of memory per sample. A sample that does not decode is dropped and
    /// counted, as in [`DataReader::take`].
    pub fn take_into(&self, samples: &mut Vec<Sample<T>>, max: usize) -> usize {
        let taken = self.untyped.collect(max, true, Selection::ANY);
        self.untyped
            .decode_all_into(taken, samples, |payload, key_only, value| match value {
                Some(value) if !key_only => ferrodds_cdr::deserialize_into(payload, value),
                value => {
                    *value = Some(decode_typed(payload, key_only)?);
                    Ok(())
                }
            })
    }

    /// Removes and returns every sample waiting, oldest first.
    pub fn take(&self) -> Result<Vec<Sample<T>>> {
        self.decode_all(self.untyped.collect(usize::MAX, true, Selection::ANY))
    }

    /// Removes and returns up to `max` samples.
    pub fn take_max(&self, max: usize) -> Result<Vec<Sample<T>>> {
        self.decode_all(self.untyped.collect(max, true, Selection::ANY))
    }

    /// Removes and returns up to `max` of the samples `selection` selects (state masks, one
    /// instance: DCPS `take_w_condition`/`take_instance`); the others stay.
    pub fn take_selection(&self, max: usize, selection: Selection) -> Result<Vec<Sample<T>>> {
        self.decode_all(self.untyped.collect(max, true, selection))
    }

    /// Removes and returns the samples of instance `handle`: DCPS `take_instance`.
    pub fn take_instance(&self, handle: InstanceHandle) -> Result<Vec<Sample<T>>> {
        self.take_selection(usize::MAX, Selection::ANY.of_instance(handle))
    }

    /// Returns the samples of instance `handle` without removing them: DCPS
    /// `read_instance`.
    pub fn read_instance(&self, handle: InstanceHandle) -> Result<Vec<Sample<T>>> {
        self.read_selection(usize::MAX, Selection::ANY.of_instance(handle))
    }

    /// Removes and returns the samples of the first instance after `previous` (in
    /// instance-handle order; from the first with `None`) that has any: DCPS
    /// `take_next_instance`, to walk the instances one at a time. Empty at the end.
    pub fn take_next_instance(&self, previous: Option<InstanceHandle>) -> Result<Vec<Sample<T>>> {
        let taken = self
            .untyped
            .collect_next(usize::MAX, true, previous, Selection::ANY);
        self.decode_all(taken)
    }

    /// [`DataReader::take_next_instance`] without removing the samples: DCPS
    /// `read_next_instance`.
    pub fn read_next_instance(&self, previous: Option<InstanceHandle>) -> Result<Vec<Sample<T>>> {
        let taken = self
            .untyped
            .collect_next(usize::MAX, false, previous, Selection::ANY);
        self.decode_all(taken)
    }

    /// The instance of `sample` (only its key matters), if this reader holds it: DCPS
    /// `lookup_instance`.
    pub fn lookup_instance(&self, sample: &T) -> Result<Option<InstanceHandle>> {
        if !T::IS_KEYED {
            return Ok(None);
        }
        let mut hashes = Vec::with_capacity(2);
        for version in [XcdrVersion::Xcdr2, XcdrVersion::Xcdr1] {
            hashes.push(ferrodds_cdr::key_hash(sample, version)?.0);
        }
        Ok(self.untyped.lookup(&hashes))
    }

    /// Returns every sample waiting without removing them (they become READ).
    pub fn read(&self) -> Result<Vec<Sample<T>>> {
        self.decode_all(self.untyped.collect(usize::MAX, false, Selection::ANY))
    }

    /// Returns the samples not read before, without removing them.
    pub fn read_unread(&self) -> Result<Vec<Sample<T>>> {
        self.decode_all(self.untyped.collect(usize::MAX, false, Selection::NOT_READ))
    }

    /// Returns up to `max` of the samples `selection` selects without removing them; they,
    /// and only they, become READ.
    pub fn read_selection(&self, max: usize, selection: Selection) -> Result<Vec<Sample<T>>> {
        self.decode_all(self.untyped.collect(max, false, selection))
    }

    /// The SAMPLE_REJECTED status: samples that arrived but were dropped because a
    /// resource limit was reached (RESOURCE_LIMITS, or the participant's [`Limits`] where
    /// those are unlimited) or because they do not decode as `T`.
    ///
    /// [`Limits`]: crate::Limits
    pub fn sample_rejected_status(&self) -> SampleRejectedStatus {
        self.untyped.sample_rejected_status()
    }

    /// The SAMPLE_LOST status: samples this reader will never receive.
    pub fn sample_lost_status(&self) -> SampleLostStatus {
        self.untyped.sample_lost_status()
    }

    /// What reached this reader from the network; see [`DynamicReader::protocol_stats`].
    pub fn protocol_stats(&self) -> ReaderStats {
        self.untyped.protocol_stats()
    }

    /// Waits until a sample not yet read is waiting; false on timeout.
    pub fn wait_for_data(&self, timeout: Duration) -> bool {
        self.untyped.wait_for_data(timeout)
    }

    /// The SUBSCRIPTION_MATCHED status.
    pub fn subscription_matched_status(&self) -> crate::MatchedStatus {
        self.untyped.subscription_matched_status()
    }

    /// The listener for the statuses in `mask`; see [`DynamicReader::set_listener`].
    pub fn set_listener(&self, mask: StatusMask, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.untyped.set_listener(mask, f)
    }

    /// A status condition for the statuses in `mask`; see
    /// [`DynamicReader::status_condition`].
    pub fn status_condition(&self, mask: StatusMask) -> Condition {
        self.untyped.status_condition(mask)
    }

    /// Waits until at least `count` writers are matched.
    pub fn wait_for_matched(&self, count: usize, timeout: Duration) -> Result<()> {
        self.untyped.wait_for_matched(count, timeout)
    }

    /// The writers matched now.
    pub fn matched_publications(&self) -> Vec<Guid> {
        self.untyped.matched_publications()
    }

    /// The REQUESTED_INCOMPATIBLE_QOS status.
    pub fn requested_incompatible_qos(&self) -> IncompatibleStatus {
        self.untyped.requested_incompatible_qos()
    }

    /// The LIVELINESS_CHANGED status; see [`DynamicReader::liveliness_changed_status`].
    pub fn liveliness_changed_status(&self) -> LivelinessChangedStatus {
        self.untyped.liveliness_changed_status()
    }

    /// The REQUESTED_DEADLINE_MISSED status: deadline periods in which an instance received
    /// no sample (all zero without a DEADLINE QoS).
    pub fn requested_deadline_missed(&self) -> DeadlineMissedStatus {
        self.untyped.requested_deadline_missed()
    }

    /// Calls `f` (from a participant thread, without locks held) whenever samples arrive:
    /// DCPS's `on_data_available`.
    pub fn set_data_available_listener(&self, f: impl Fn() + Send + Sync + 'static) {
        self.untyped.set_data_available_listener(f)
    }

    /// Calls `f` (from a participant thread, without locks held) whenever one of the
    /// reader's statuses changes; see [`DynamicReader::set_status_listener`].
    pub fn set_status_listener(&self, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.untyped.set_status_listener(f)
    }

    /// A future that resolves to the samples waiting once there is at least one. It needs
    /// no particular executor: the participant's threads wake it.
    pub fn take_async(&self) -> TakeFuture<T> {
        TakeFuture {
            reader: self.clone(),
        }
    }

    pub(crate) fn entity_id(&self) -> EntityId {
        self.untyped.inner.entity_id
    }

    pub(crate) fn participant(&self) -> &DomainParticipant {
        &self.untyped.inner.participant
    }
}

impl DynamicReader {
    pub(crate) fn entity_id(&self) -> EntityId {
        self.inner.entity_id
    }

    pub(crate) fn new(
        participant: &DomainParticipant,
        topic: &DynamicTopic,
        qos: Qos,
    ) -> Result<Self> {
        DynamicReader::create(participant, &topic.name, &topic.support, qos, None)
    }

    /// A reader that takes in only the samples `filter` keeps (a content-filtered topic's).
    pub(crate) fn filtered(
        participant: &DomainParticipant,
        topic: &DynamicTopic,
        qos: Qos,
        filter: FilterExpression,
    ) -> Result<Self> {
        DynamicReader::create(
            participant,
            &topic.name,
            &topic.support,
            qos,
            Some(GivenFilter::Expression(filter)),
        )
    }

    /// Removes and returns up to `max` of the samples `selection` selects that `query`
    /// keeps (a DCPS QueryCondition); the others stay as they were. Samples without data
    /// (a dispose) are matched on their key members, the others at their defaults.
    pub fn take_query(
        &self,
        max: usize,
        selection: Selection,
        query: &FilterExpression,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.take_if(max, selection, |s| s.value().map(|v| query.matches(v)))
    }

    /// Returns up to `max` of the samples `selection` selects that `query` keeps, without
    /// removing them; they, and only they, become READ.
    pub fn read_query(
        &self,
        max: usize,
        selection: Selection,
        query: &FilterExpression,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.read_if(max, selection, |s| s.value().map(|v| query.matches(v)))
    }

    /// A filter expression (DDS SQL, `%n` for `parameters[n]`) over this reader's type,
    /// for [`DynamicReader::take_query`] and a query condition.
    pub fn query(&self, expression: &str, parameters: &[&str]) -> Result<FilterExpression> {
        FilterExpression::new(&self.ty, expression, parameters).map_err(|error| Error::Filter {
            expression: expression.to_owned(),
            error,
        })
    }

    /// Creates the RTPS reader and its DCPS state, and announces it.
    fn create(
        participant: &DomainParticipant,
        topic_name: &str,
        support: &TypeSupport,
        qos: Qos,
        filter: Option<GivenFilter>,
    ) -> Result<Self> {
        let shared = &participant.inner.shared;
        let mut core = shared.lock();
        let entity_id = core.next_entity_id(if support.keyed() { 0x07 } else { 0x04 });
        let (filter, announced) = match filter {
            None => (None, None),
            Some(GivenFilter::Closure(filter)) => (Some(filter), None),
            Some(GivenFilter::Expression(expression)) => {
                // The content-filtered topic has no name of its own in this API: one unique
                // in the participant, as DDS wants it.
                let [a, b, c, _] = entity_id.0;
                let announced = ContentFilterProperty::sql(
                    &format!("{topic_name}_filtered_{a:02x}{b:02x}{c:02x}"),
                    topic_name,
                    expression.text(),
                    expression.parameters(),
                );
                let ty = support.ty.clone();
                let filter: ContentFilter = Arc::new(move |payload: &[u8]| {
                    decode_dynamic(&ty, payload, false)
                        .is_ok_and(|sample| expression.matches(&sample))
                });
                (Some(filter), Some(announced))
            }
        };
        let guid = Guid::new(core.node.rtps.prefix(), entity_id);
        let participant_limits = core.node.rtps.limits().clone();
        let mut config = participant_limits.reader_config(qos.is_reliable());
        if core.node.discovery.config().channel_host.is_some() {
            // Samples that writers of the host lend lie in their sample channels.
            config.channels = Some(Arc::new(crate::channel::SharedMemoryChannels));
        }
        core.node.rtps.add_reader(Reader::new(guid, config));
        let dcps = DcpsReader::new(
            &qos.policies,
            &participant_limits,
            support.keys.clone(),
            filter,
        )
        .with_purge_delays(qos.purge);
        let dcps = match qos.group {
            Some(group) => dcps.with_group(group),
            None => dcps,
        };
        core.node.add_data_reader(entity_id, dcps);
        if let Some(parent) = qos.parent {
            core.parents.insert(entity_id, parent);
        }
        core.readers.insert(entity_id, ReaderHooks::default());
        let endpoint = LocalEndpoint {
            guid,
            kind: EndpointKind::Reader,
            topic_name: topic_name.to_owned(),
            type_name: support.type_name.clone(),
            qos: qos.policies.clone(),
            keyed: support.keyed(),
            ty: Some(support.ty.clone()),
            ignore_local: qos.ignore_local,
            content_filter: announced,
        };
        shared.announce(core, endpoint);
        Ok(DynamicReader {
            inner: Arc::new(ReaderInner {
                participant: participant.clone(),
                entity_id,
                guid,
                spare: Mutex::new(ReceivePool::with_limit(RECEIVE_KEPT_BYTES)),
                ignore_local: qos.ignore_local,
                in_group: qos.parent.is_some(),
            }),
            ty: Arc::new(support.ty.clone()),
        })
    }

    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.inner.guid
    }

    /// Changes its QoS (DCPS `set_qos`) to `qos`, in which only the policies DDS lets
    /// change may differ from what the reader has: DEADLINE, LATENCY_BUDGET,
    /// TIME_BASED_FILTER, PARTITION, USER_DATA, TOPIC_DATA, GROUP_DATA and
    /// READER_DATA_LIFECYCLE. The reader is announced again; writers that no longer fit
    /// (another partition, a deadline longer than it now requests) are unmatched, and
    /// writers that now fit are matched. Any other change is [`Error::ImmutablePolicy`]
    /// and changes nothing. A reader made by a subscriber keeps the subscriber's
    /// PRESENTATION, and its PARTITION when `qos` names none.
    pub fn set_qos(&self, qos: Qos) -> Result<()> {
        let inner = &self.inner;
        if qos.ignore_local != inner.ignore_local {
            return Err(Error::ImmutablePolicy("IGNORE_LOCAL"));
        }
        let shared = &inner.participant.inner.shared;
        let mut core = shared.lock();
        let current = core
            .node
            .discovery
            .endpoint_qos(inner.guid)
            .cloned()
            .ok_or(Error::Closed)?;
        let mut qos = qos;
        crate::qos::check_change(inner.in_group, &current, &mut qos.policies)?;
        if let Some(r) = core.node.data_reader(inner.entity_id) {
            r.set_purge_delays(qos.purge);
        }
        shared.update_endpoints(core, [(inner.guid, qos.policies)]);
        Ok(())
    }

    pub(crate) fn collect(&self, max: usize, take: bool, selection: Selection) -> Vec<Taken> {
        self.collect_with(|r, now| r.collect(now, max, take, selection))
    }

    /// [`DynamicReader::collect`] from the first instance after `previous` (in handle
    /// order) that holds a sample `selection` selects: DCPS `read/take_next_instance`.
    pub(crate) fn collect_next(
        &self,
        max: usize,
        take: bool,
        previous: Option<InstanceHandle>,
        selection: Selection,
    ) -> Vec<Taken> {
        self.collect_with(|r, now| match r.next_instance(now, previous, selection) {
            Some(next) => r.collect(now, max, take, selection.of_instance(next)),
            None => Vec::new(),
        })
    }

    /// The instance one of `key_hashes` names (an instance's key hash in each XCDR
    /// version's form), if the reader holds it.
    pub(crate) fn lookup(&self, key_hashes: &[[u8; 16]]) -> Option<InstanceHandle> {
        let core = self.inner.participant.inner.shared.lock();
        let reader = core.node.data_reader_ref(self.inner.entity_id)?;
        key_hashes
            .iter()
            .find_map(|h| reader.lookup_instance(InstanceHandle(*h)))
    }

    fn collect_with(&self, f: impl FnOnce(&mut DcpsReader, Timestamp) -> Vec<Taken>) -> Vec<Taken> {
        let shared = &self.inner.participant.inner.shared;
        let now = shared.now();
        let mut core = shared.lock();
        let id = self.inner.entity_id;
        if let Some(reader) = core.node.rtps.reader(id) {
            reader
                .recycle_payloads(&mut self.inner.spare.lock().unwrap_or_else(|p| p.into_inner()));
        }
        let taken = core
            .node
            .data_reader(id)
            .map(|r| f(r, now))
            .unwrap_or_default();
        shared.after_collect(core, now, id);
        taken
    }

    /// Decodes what was collected with `decode`. A sample that does not decode (a writer
    /// sent bytes that are not of the reader's type) is dropped and counted in the
    /// SAMPLE_REJECTED status, so that it cannot take the good samples collected with it
    /// down.
    pub(crate) fn decode_all<V>(
        &self,
        taken: Vec<Taken>,
        decode: impl Fn(&[u8], bool) -> Result<V, DecodeError>,
    ) -> Result<Vec<Sample<V>>> {
        let mut out = Vec::with_capacity(taken.len());
        let (mut undecodable, mut released) = (Vec::new(), 0);
        let mut spare = self.inner.spare.lock().unwrap_or_else(|p| p.into_inner());
        for t in taken {
            match decode(&t.payload, t.key_only) {
                Ok(data) => {
                    released += release_payload(&mut spare, t.payload);
                    out.push(Sample::new(data, t.info));
                }
                Err(_) => undecodable.push(t),
            }
        }
        spare.follow_demand(released);
        drop(spare);
        self.reject_undecodable(&undecodable);
        Ok(out)
    }

    /// Decodes what was collected into the front of `out`, each sample into the value its
    /// slot already holds (`decode_into` reuses that value's memory, or makes one when the
    /// slot has none); `out` grows when shorter, and is never shortened. How many samples
    /// it holds now; undecodable ones are dropped and counted, as in [`Self::decode_all`].
    pub(crate) fn decode_all_into<V>(
        &self,
        taken: Vec<Taken>,
        out: &mut Vec<Sample<V>>,
        decode_into: impl Fn(&[u8], bool, &mut Option<V>) -> Result<(), DecodeError>,
    ) -> usize {
        let mut n = 0;
        let (mut undecodable, mut released) = (Vec::new(), 0);
        let mut spare = self.inner.spare.lock().unwrap_or_else(|p| p.into_inner());
        for t in taken {
            let slot = out.get_mut(n);
            let mut value = slot.and_then(|s| s.data.take().or_else(|| s.key.take()));
            match (decode_into(&t.payload, t.key_only, &mut value), value) {
                (Ok(()), Some(value)) => {
                    released += release_payload(&mut spare, t.payload);
                    let sample = Sample::new(value, t.info);
                    match out.get_mut(n) {
                        Some(slot) => *slot = sample,
                        None => out.push(sample),
                    }
                    n += 1;
                }
                (_, value) => {
                    // The slot keeps its value (its memory) for the next sample.
                    if let Some(slot) = out.get_mut(n) {
                        slot.data = value;
                    }
                    undecodable.push(t);
                }
            }
        }
        spare.follow_demand(released);
        drop(spare);
        self.reject_undecodable(&undecodable);
        n
    }

    fn reject_undecodable(&self, undecodable: &[Taken]) {
        if undecodable.is_empty() {
            return;
        }
        let mut core = self.inner.participant.inner.shared.lock();
        if let Some(r) = core.node.data_reader(self.inner.entity_id) {
            // A read left them in the cache: drop them there too.
            r.reject_undecodable(undecodable.iter().map(|t| &t.info));
        }
    }

    /// The SAMPLE_REJECTED status: samples that arrived but were dropped because a
    /// resource limit was reached (RESOURCE_LIMITS, or the participant's [`Limits`] where
    /// those are unlimited) or because they do not decode as the reader's type.
    ///
    /// [`Limits`]: crate::Limits
    pub fn sample_rejected_status(&self) -> SampleRejectedStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::SampleRejected,
            |node, _| node.data_reader_ref(id).map(|r| r.sample_rejected()),
        )
    }

    /// The SAMPLE_LOST status: samples this reader will never receive (a best-effort
    /// reader skipped them, or a writer declared them gone before they arrived).
    pub fn sample_lost_status(&self) -> SampleLostStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::SampleLost,
            |node, _| node.data_reader_ref(id).map(|r| r.sample_lost()),
        )
    }

    /// What reached this reader from the network, counted by its RTPS layer (before the
    /// DCPS policies: a content filter's drops are in `delivered`). Beside the samples
    /// taken, it shows what writers sent it: a writer that filters for it (writer-side
    /// content filtering) sends only what passes.
    pub fn protocol_stats(&self) -> ReaderStats {
        let core = self.inner.participant.inner.shared.lock();
        core.node
            .rtps
            .reader_ref(self.inner.entity_id)
            .map(Reader::stats)
            .unwrap_or_default()
    }

    /// The type it reads.
    pub fn dynamic_type(&self) -> &DynamicType {
        &self.ty
    }

    fn decode_values(&self, taken: Vec<Taken>) -> Result<Vec<Sample<DynamicValue>>> {
        let ty = &self.ty;
        self.decode_all(taken, |payload, key_only| {
            decode_dynamic(ty, payload, key_only)
        })
    }

    /// Removes and returns every sample waiting, oldest first, as dynamic values.
    pub fn take(&self) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect(usize::MAX, true, Selection::ANY))
    }

    /// Removes and returns up to `max` samples.
    pub fn take_max(&self, max: usize) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect(max, true, Selection::ANY))
    }

    /// Removes and returns up to `max` of the samples `selection` selects; the others stay.
    pub fn take_selection(
        &self,
        max: usize,
        selection: Selection,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect(max, true, selection))
    }

    /// Removes and returns up to `max` of the samples `selection` selects of the first
    /// instance after `previous` (in instance-handle order; from the first with `None`)
    /// that has any: DCPS `take_next_instance`. Empty when no instance after it has one.
    pub fn take_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        selection: Selection,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect_next(max, true, previous, selection))
    }

    /// [`DynamicReader::take_next_instance`] without removing the samples (they become
    /// READ): DCPS `read_next_instance`.
    pub fn read_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        selection: Selection,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect_next(max, false, previous, selection))
    }

    /// The instance of `value` (only its key matters), if this reader holds it: DCPS
    /// `lookup_instance`.
    pub fn lookup_instance(&self, value: &DynamicValue) -> Result<Option<InstanceHandle>> {
        let mut hashes = Vec::with_capacity(2);
        for version in [XcdrVersion::Xcdr2, XcdrVersion::Xcdr1] {
            hashes.push(ferrodds_cdr::dynamic::key_hash(&self.ty, value, version)?.0);
        }
        Ok(self.lookup(&hashes))
    }

    /// Returns every sample waiting without removing them (they become READ).
    pub fn read(&self) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect(usize::MAX, false, Selection::ANY))
    }

    /// Returns up to `max` samples without removing them (they become READ).
    pub fn read_max(&self, max: usize) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect(max, false, Selection::ANY))
    }

    /// Returns up to `max` of the samples `selection` selects without removing them; they,
    /// and only they, become READ.
    pub fn read_selection(
        &self,
        max: usize,
        selection: Selection,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect(max, false, selection))
    }

    /// Removes and returns up to `max` of the samples `selection` selects that `keep`
    /// keeps (`Some(true)`: a DCPS query condition whose filter is code); the others stay
    /// as they were. `keep` sees every candidate before any is handed out; `None` stops
    /// the call with nothing handed out (a filter that failed).
    pub fn take_if(
        &self,
        max: usize,
        selection: Selection,
        keep: impl FnMut(&Sample<DynamicValue>) -> Option<bool>,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.collect_if(max, true, selection, keep)
    }

    /// Returns up to `max` of the samples `selection` selects that `keep` keeps, without
    /// removing them; they, and only they, become READ. `keep` as for [`Self::take_if`].
    pub fn read_if(
        &self,
        max: usize,
        selection: Selection,
        keep: impl FnMut(&Sample<DynamicValue>) -> Option<bool>,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.collect_if(max, false, selection, keep)
    }

    /// Looks at the selected samples without changing them, runs `keep` on each (outside
    /// the lock: it is the application's code), then hands out the first `max` it kept that
    /// are still held. A sample that does not decode is left to the next plain read or take
    /// (which reports it).
    fn collect_if(
        &self,
        max: usize,
        take: bool,
        selection: Selection,
        keep: impl FnMut(&Sample<DynamicValue>) -> Option<bool>,
    ) -> Result<Vec<Sample<DynamicValue>>> {
        self.decode_values(self.collect_taken_if(max, take, selection, keep))
    }

    /// [`DynamicReader::take_query`] with the samples as they arrived, serialized (as
    /// [`DynamicReader::take_serialized`] returns them).
    pub fn take_serialized_query(
        &self,
        max: usize,
        selection: Selection,
        query: &FilterExpression,
    ) -> Vec<Sample<Vec<u8>>> {
        self.collect_taken_if(max, true, selection, |s| {
            s.value().map(|v| query.matches(v))
        })
        .into_iter()
        .map(|t| Sample::new(t.payload.into_vec(), t.info))
        .collect()
    }

    /// [`DynamicReader::read_query`] with the samples serialized.
    pub fn read_serialized_query(
        &self,
        max: usize,
        selection: Selection,
        query: &FilterExpression,
    ) -> Vec<Sample<Vec<u8>>> {
        self.collect_taken_if(max, false, selection, |s| {
            s.value().map(|v| query.matches(v))
        })
        .into_iter()
        .map(|t| Sample::new(t.payload.into_vec(), t.info))
        .collect()
    }

    /// [`DynamicReader::collect_if`]'s samples as the cache hands them out.
    fn collect_taken_if(
        &self,
        max: usize,
        take: bool,
        selection: Selection,
        mut keep: impl FnMut(&Sample<DynamicValue>) -> Option<bool>,
    ) -> Vec<Taken> {
        let shared = &self.inner.participant.inner.shared;
        let id = self.inner.entity_id;
        let peeked = {
            let now = shared.now();
            let core = shared.lock();
            core.node
                .data_reader_ref(id)
                .map(|r| r.peek(now, selection))
                .unwrap_or_default()
        };
        let mut chosen = Vec::new();
        for (arrival, t) in peeked {
            if chosen.len() >= max {
                break;
            }
            let Ok(data) = decode_dynamic(&self.ty, &t.payload, t.key_only) else {
                continue;
            };
            match keep(&Sample::new(data, t.info)) {
                Some(true) => chosen.push(arrival),
                Some(false) => {}
                None => return Vec::new(),
            }
        }
        if chosen.is_empty() {
            return Vec::new();
        }
        let now = shared.now();
        let mut core = shared.lock();
        let taken = core
            .node
            .data_reader(id)
            .map(|r| r.collect_arrivals(now, &chosen, take))
            .unwrap_or_default();
        shared.after_collect(core, now, id);
        taken
    }

    /// Removes up to `max` samples as they lie, serialized, encapsulation header included:
    /// a sample a FerroDDS writer of this host lent ([`DynamicWriter::loan`]) is where the
    /// writer wrote it, in its sample channel in shared memory
    /// ([`ReceivedPayload::Shared`], held from reuse until dropped), any other in the
    /// reader's buffer. Nothing is copied or decoded.
    ///
    /// [`DynamicWriter::loan`]: crate::DynamicWriter::loan
    pub fn take_loaned(&self, max: usize) -> Vec<Sample<ReceivedPayload>> {
        self.collect(max, true, Selection::ANY)
            .into_iter()
            .map(|t| Sample::new(t.payload, t.info))
            .collect()
    }

    /// Removes and returns up to `max` samples as they arrived: the serialized payload,
    /// encapsulation header included (for a dispose or unregister, the serialized key, or
    /// nothing when the writer sent only a key hash).
    pub fn take_serialized(&self, max: usize) -> Vec<Sample<Vec<u8>>> {
        self.take_serialized_selection(max, Selection::ANY)
    }

    /// Gives back the bytes of samples taken serialized ([`DynamicReader::take_serialized`]
    /// and the like) once the application is done with them: the next samples received
    /// are copied into them instead of into fresh allocations (what the C API's
    /// `ferrodds_return_loan` does with the buffers it lent).
    pub fn return_payloads(&self, payloads: impl IntoIterator<Item = Vec<u8>>) {
        let payloads: Vec<Vec<u8>> = payloads.into_iter().collect();
        let mut spare = self.inner.spare.lock().unwrap_or_else(|p| p.into_inner());
        // The limit first: raised after keeping, it would have let the last of a larger
        // demand than before go.
        spare.follow_demand(
            payloads
                .iter()
                .map(Vec::capacity)
                .filter(|&c| c < ferrodds_rtps::buffer_pool::MIN_POOLED)
                .sum(),
        );
        for p in payloads {
            release_payload(&mut spare, p);
        }
    }

    /// Reads, or removes (`take`), up to `max` of the samples `selection` selects, decoded
    /// with their sequences of octets as views into the received payloads
    /// ([`ferrodds_cdr::dynamic::deserialize_shared`]) rather than copies: one copy fewer
    /// for an application that copies them into objects of its own next (the Python
    /// binding makes `bytes` of them). Each sample comes with the payload its views keep
    /// alive (none for a dispose's key, which is copied); hand it to
    /// [`DynamicReader::return_shared`] once the sample is dropped, and the next samples
    /// are received into it. Undecodable samples are dropped and counted, as in
    /// [`DynamicReader::take`].
    pub fn collect_shared(
        &self,
        max: usize,
        take: bool,
        selection: Selection,
    ) -> Vec<(Sample<DynamicValue>, Option<Bytes>)> {
        let taken = self.collect(max, take, selection);
        let mut out = Vec::with_capacity(taken.len());
        let mut undecodable = Vec::new();
        let mut spare = self.inner.spare.lock().unwrap_or_else(|p| p.into_inner());
        // What this take will give back: the pool's limit follows it now, as the payloads
        // come back one by one.
        spare.follow_demand(
            taken
                .iter()
                .map(|t| owned_capacity(&t.payload))
                .filter(|&c| c < ferrodds_rtps::buffer_pool::MIN_POOLED)
                .sum(),
        );
        for t in taken {
            if t.key_only {
                // A dispose's or unregister's key: small, copied as `decode_values` does.
                match decode_dynamic(&self.ty, &t.payload, true) {
                    Ok(key) => {
                        release_payload(&mut spare, t.payload);
                        out.push((Sample::new(key, t.info), None));
                    }
                    Err(_) => undecodable.push(t),
                }
                continue;
            }
            let payload = match t.payload {
                ReceivedPayload::Owned(v) => Bytes::from(v),
                ReceivedPayload::Shared(b) => b,
            };
            match ferrodds_cdr::dynamic::deserialize_shared(&self.ty, &payload) {
                Ok(value) => out.push((Sample::new(value, t.info), Some(payload))),
                Err(_) => undecodable.push(Taken {
                    payload: ReceivedPayload::default(),
                    ..t
                }),
            }
        }
        drop(spare);
        self.reject_undecodable(&undecodable);
        out
    }

    /// Gives back payloads of [`DynamicReader::collect_shared`], so that the next samples
    /// are received into them; one still viewed (a value decoded from it is alive) is let
    /// go instead.
    pub fn return_shared(&self, payloads: impl IntoIterator<Item = Bytes>) {
        let mut spare = self.inner.spare.lock().unwrap_or_else(|p| p.into_inner());
        for p in payloads {
            if let Ok(p) = p.try_into_mut() {
                release_payload(&mut spare, Vec::from(p));
            }
        }
    }

    /// Removes and returns up to `max` samples that `selection` selects, serialized as
    /// [`DynamicReader::take_serialized`] returns them.
    pub fn take_serialized_selection(
        &self,
        max: usize,
        selection: Selection,
    ) -> Vec<Sample<Vec<u8>>> {
        self.collect(max, true, selection)
            .into_iter()
            .map(|t| Sample::new(t.payload.into_vec(), t.info))
            .collect()
    }

    /// [`DynamicReader::take_next_instance`] with the samples as they arrived, serialized
    /// (what the C API lends).
    pub fn take_serialized_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        selection: Selection,
    ) -> Vec<Sample<Vec<u8>>> {
        self.collect_next(max, true, previous, selection)
            .into_iter()
            .map(|t| Sample::new(t.payload.into_vec(), t.info))
            .collect()
    }

    /// [`DynamicReader::read_next_instance`], serialized.
    pub fn read_serialized_next_instance(
        &self,
        max: usize,
        previous: Option<InstanceHandle>,
        selection: Selection,
    ) -> Vec<Sample<Vec<u8>>> {
        self.collect_next(max, false, previous, selection)
            .into_iter()
            .map(|t| Sample::new(t.payload.into_vec(), t.info))
            .collect()
    }

    /// Returns up to `max` samples that `selection` selects, serialized, leaving them in
    /// the reader (marked read).
    pub fn read_serialized_selection(
        &self,
        max: usize,
        selection: Selection,
    ) -> Vec<Sample<Vec<u8>>> {
        self.collect(max, false, selection)
            .into_iter()
            .map(|t| Sample::new(t.payload.into_vec(), t.info))
            .collect()
    }

    /// Waits until a sample not yet read is waiting; false on timeout.
    pub fn wait_for_data(&self, timeout: Duration) -> bool {
        self.wait_for_selection(Selection::NOT_READ, timeout)
    }

    /// Waits until a sample `selection` selects is waiting (a read condition with its state
    /// masks); false on timeout.
    pub fn wait_for_selection(&self, selection: Selection, timeout: Duration) -> bool {
        let id = self.inner.entity_id;
        let shared = &self.inner.participant.inner.shared;
        // Only data for this reader (an event) makes the selection hold: a datagram for
        // another reader leaves the thread asleep.
        shared.wait_until_for(Interest::Readers(&[id]), timeout, |core| {
            let now = shared.now();
            core.node
                .data_reader_ref(id)
                .is_some_and(|r| r.has_selected(now, selection))
        })
    }

    /// The SUBSCRIPTION_MATCHED status: writers matched so far and now, and the last one
    /// that matched or left.
    pub fn subscription_matched_status(&self) -> crate::MatchedStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::SubscriptionMatched,
            |node, _| node.data_reader_ref(id).map(|r| r.matches().status()),
        )
    }

    /// Waits until at least `count` writers are matched.
    pub fn wait_for_matched(&self, count: usize, timeout: Duration) -> Result<()> {
        let id = self.inner.entity_id;
        if self
            .inner
            .participant
            .inner
            .shared
            .wait_until(timeout, |core| {
                core.node
                    .data_reader_ref(id)
                    .is_some_and(|r| r.matches().remotes().len() >= count)
            })
        {
            Ok(())
        } else {
            Err(Error::Timeout(timeout, "not enough writers matched"))
        }
    }

    /// The writers matched now.
    pub fn matched_publications(&self) -> Vec<Guid> {
        let core = self.inner.participant.inner.shared.lock();
        core.node
            .data_reader_ref(self.inner.entity_id)
            .map(|r| r.matches().remotes().iter().copied().collect())
            .unwrap_or_default()
    }

    /// A query condition of this reader: a wait set attached to it wakes while samples
    /// `selection` selects that `query` keeps are waiting.
    pub fn query_condition(&self, selection: Selection, query: FilterExpression) -> Condition {
        Condition::Query(
            self.inner.entity_id,
            selection,
            Arc::new((DynamicType::clone(&self.ty), query)),
        )
    }

    /// A status condition of this reader for the statuses in `mask`: a wait set attached to
    /// it wakes while one of them changed since this reader's `*_status()` call for it last
    /// read it (DATA_AVAILABLE: while samples not read yet are waiting).
    pub fn status_condition(&self, mask: StatusMask) -> Condition {
        Condition::Status(self.inner.entity_id, mask)
    }

    /// The LIVELINESS_CHANGED status: how many matched writers are alive and not alive
    /// now, and which changed last.
    pub fn liveliness_changed_status(&self) -> LivelinessChangedStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::LivelinessChanged,
            |node, _| node.data_reader_ref(id).map(|r| r.liveliness_changed()),
        )
    }

    /// The REQUESTED_INCOMPATIBLE_QOS status.
    pub fn requested_incompatible_qos(&self) -> IncompatibleStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::RequestedIncompatibleQos,
            |node, _| node.data_reader_ref(id).map(|r| r.incompatible().clone()),
        )
    }

    /// The REQUESTED_DEADLINE_MISSED status: deadline periods in which an instance received
    /// no sample (all zero without a DEADLINE QoS).
    pub fn requested_deadline_missed(&self) -> DeadlineMissedStatus {
        let id = self.inner.entity_id;
        crate::status::read_status(
            &self.inner.participant.inner.shared,
            id,
            StatusKind::RequestedDeadlineMissed,
            |node, now| node.data_reader(id).map(|r| r.deadline_missed(now)),
        )
    }

    /// Calls `f` (from a participant thread, without locks held) whenever samples arrive:
    /// DCPS's `on_data_available`.
    pub fn set_data_available_listener(&self, f: impl Fn() + Send + Sync + 'static) {
        let callback: Callback = Arc::new(f);
        crate::runtime::listener_installed();
        let mut core = self.inner.participant.inner.shared.lock();
        if let Some(r) = core.readers.get_mut(&self.inner.entity_id) {
            r.on_data = Some(callback);
        }
    }

    /// Calls `f` (from a participant thread, without locks held) whenever one of the
    /// reader's statuses changes — SUBSCRIPTION_MATCHED, REQUESTED_INCOMPATIBLE_QOS,
    /// REQUESTED_DEADLINE_MISSED, SAMPLE_LOST, SAMPLE_REJECTED — with the status that
    /// changed: DCPS's status listeners, which read the status with this reader's
    /// `*_status()` calls. Replaces the listener set before. A status that changed
    /// before the listener was set (a match found as the reader was created) is reported
    /// to it at once, from this thread.
    pub fn set_status_listener(&self, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        self.set_listener(crate::status::counted_mask(), f);
    }

    /// Calls `f` as [`DynamicReader::set_status_listener`] does, for the statuses in
    /// `mask` only (DCPS's listener with its status mask): the others go to the
    /// subscriber's or participant's listener. With DATA_AVAILABLE in `mask`, `f` hears
    /// of new samples when no [`DynamicReader::set_data_available_listener`] is set. An
    /// empty mask removes the listener.
    pub fn set_listener(&self, mask: StatusMask, f: impl Fn(StatusKind) + Send + Sync + 'static) {
        crate::status::set_listener(
            &self.inner.participant.inner.shared,
            self.inner.entity_id,
            mask,
            Arc::new(f),
        );
    }
}

/// The future of [`DataReader::take_async`].
pub struct TakeFuture<T> {
    reader: DataReader<T>,
}

impl<T: Cdr> Future for TakeFuture<T> {
    type Output = Result<Vec<Sample<T>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let taken = {
            let shared = &self.reader.participant().inner.shared;
            let now = shared.now();
            let mut core = shared.lock();
            if core.closed {
                return Poll::Ready(Err(Error::Closed));
            }
            let id = self.reader.entity_id();
            let taken = match core.node.data_reader(id) {
                Some(r) if r.is_empty() => Vec::new(),
                Some(r) => r.collect(now, usize::MAX, true, Selection::ANY),
                None => return Poll::Ready(Err(Error::Closed)),
            };
            if taken.is_empty() {
                // Nothing waiting (or only expired samples). One waker per waiting task:
                // a future polled again while pending (as executors do on spurious
                // wake-ups) must not add another.
                let Some(hooks) = core.readers.get_mut(&id) else {
                    return Poll::Ready(Err(Error::Closed));
                };
                if !hooks.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    hooks.wakers.push(cx.waker().clone());
                }
                return Poll::Pending;
            }
            taken
        };
        Poll::Ready(self.reader.decode_all(taken))
    }
}
