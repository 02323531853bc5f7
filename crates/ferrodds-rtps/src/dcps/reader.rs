//! A DCPS data reader's state in the core: its cache, how it finds instances, what it lets
//! in, whom it is matched with, and its statuses.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::SystemTime;

use super::arrival::{examine, Found, Prepared};
use super::cache::{CacheLimits, PurgeDelays, ReaderCache, SampleRejectedReason, Stored, Taken};
use super::delivery::{Admit, Candidate, ContentFilter, Delivery};
use super::instance_keys::InstanceKeys;
use super::liveliness::{LivelinessChangedStatus, WriterLiveliness};
use super::presentation::CoherentReader;
use super::sample::{system_time, InstanceHandle, InstanceState, SampleInfo, Selection};
use super::status::{
    DeadlineMissedStatus, IncompatibleStatus, Matches, SampleLostStatus, SampleRejectedStatus,
};
use crate::endpoint::ChangeKind;
use crate::limits::Limits;
use crate::qos::{Durability, EndpointQos, Presentation, PresentationAccessScope};
use crate::reader::ReceivedChange;
use crate::time::Timestamp;
use crate::wire::Guid;

/// A change waiting in arrival order for its preparation (`None` while it is out).
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) ticket: u64,
    pub(crate) prepared: Option<Prepared>,
}

/// The DCPS state of one local reader.
#[derive(Debug)]
pub struct DcpsReader {
    pub(crate) cache: ReaderCache,
    pub(crate) keys: Arc<InstanceKeys>,
    pub(crate) delivery: Delivery,
    matches: Matches,
    pub(crate) incompatible: IncompatibleStatus,
    /// Changes out for preparation or waiting for an earlier one, in arrival order.
    pub(crate) slots: VecDeque<Slot>,
    /// Set when something was stored since DATA_AVAILABLE was last reported.
    pub(crate) data_arrived: bool,
    /// The SAMPLE_REJECTED and deadline counts last reported as events.
    pub(crate) rejected_reported: u64,
    pub(crate) deadline_reported: u64,
    /// SAMPLE_LOST, from the RTPS reader's count.
    pub(crate) lost: SampleLostStatus,
    /// Reliable KEEP_ALL: what does not fit is left with its writers rather than rejected.
    flow_controlled: bool,
    /// The matched writers' liveliness.
    pub(crate) liveliness: WriterLiveliness,
    /// Its subscriber's PRESENTATION.
    pub(crate) presentation: Presentation,
    /// The subscriber it belongs to, for GROUP scope and `begin_access`.
    pub(crate) group: Option<u32>,
    /// Coherent sets being received.
    pub(crate) coherent: CoherentReader,
    /// A reader that takes in history (TRANSIENT_LOCAL or stronger): what it let in of
    /// the durable writers, whose history a durability service may relay again.
    relayed: Option<Relayed>,
}

/// The history a reader may get twice — from a TRANSIENT or PERSISTENT writer, and after
/// it left from the durability service that kept it (PID_ORIGINAL_WRITER_INFO) — is let in
/// once: per original writer, only what comes after the highest sequence number let in.
#[derive(Debug, Default)]
struct Relayed {
    /// Matched writers offering TRANSIENT or PERSISTENT durability.
    durable: BTreeSet<Guid>,
    /// Per original writer, the highest sequence number let in (kept after the writer
    /// left: that is when its history comes again).
    highest: BTreeMap<Guid, i64>,
    /// Changes dropped as already let in.
    duplicates: u64,
}

/// At most this many original writers are remembered per reader (a peer relaying made-up
/// writers cannot grow the map beyond).
const MAX_RELAYED_WRITERS: usize = 4096;

impl Relayed {
    /// False when `change` repeats what was let in.
    fn admits(&mut self, change: &ReceivedChange) -> bool {
        let (writer, sn) = match change.original {
            Some(o) => (o.writer, o.sequence_number.0),
            None if self.durable.contains(&change.writer) => {
                (change.writer, change.sequence_number.0)
            }
            None => return true,
        };
        match self.highest.get_mut(&writer) {
            Some(h) if *h >= sn => {
                self.duplicates += 1;
                false
            }
            Some(h) => {
                *h = sn;
                true
            }
            None => {
                if self.highest.len() < MAX_RELAYED_WRITERS {
                    self.highest.insert(writer, sn);
                }
                true
            }
        }
    }
}

impl DcpsReader {
    /// A reader with `qos` (its RESOURCE_LIMITS bounded by the participant's `limits`),
    /// finding instances with `keys`, letting in what `filter` accepts.
    pub fn new(
        qos: &EndpointQos,
        limits: &Limits,
        keys: InstanceKeys,
        filter: Option<ContentFilter>,
    ) -> Self {
        let flow_controlled = matches!(qos.history, crate::qos::History::KeepAll)
            && qos.reliability.kind == crate::qos::ReliabilityKind::Reliable;
        let mut cache = ReaderCache::new(CacheLimits::new(qos, limits));
        if flow_controlled {
            cache.hold_when_full();
        }
        let presentation = qos.presentation;
        if presentation.ordered_access
            && presentation.access_scope == PresentationAccessScope::Instance
        {
            cache.order_by_instance();
        }
        DcpsReader {
            cache,
            keys: Arc::new(keys),
            delivery: Delivery::new(qos, filter),
            matches: Matches::default(),
            incompatible: IncompatibleStatus::default(),
            slots: VecDeque::new(),
            data_arrived: false,
            rejected_reported: 0,
            deadline_reported: 0,
            lost: SampleLostStatus::default(),
            flow_controlled,
            liveliness: WriterLiveliness::default(),
            presentation,
            group: None,
            coherent: CoherentReader::default(),
            relayed: (qos.durability >= Durability::TransientLocal).then(Relayed::default),
        }
    }

    /// Relayed history dropped because the reader had it already.
    pub fn relayed_duplicates(&self) -> u64 {
        self.relayed.as_ref().map_or(0, |r| r.duplicates)
    }

    /// The reader as one of subscriber `group`'s: a GROUP-scope coherent set is let into
    /// the subscriber's readers together, and `begin_access` holds sets back.
    pub fn with_group(mut self, group: u32) -> Self {
        self.group = Some(group);
        self
    }

    /// Coherent sets dropped because they were not received whole.
    pub fn coherent_sets_dropped(&self) -> u64 {
        self.coherent.dropped
    }

    /// The reader with READER_DATA_LIFECYCLE's purge delays.
    pub fn with_purge_delays(mut self, delays: PurgeDelays) -> Self {
        self.cache.set_purge_delays(delays);
        self
    }

    /// READER_DATA_LIFECYCLE changed (`set_qos`): the new purge delays.
    pub fn set_purge_delays(&mut self, delays: PurgeDelays) {
        self.cache.set_purge_delays(delays);
    }

    /// How many more changes its RTPS reader may deliver (`None`: any number): for a
    /// reliable KEEP_ALL reader, the samples its cache has room for beside those it holds
    /// and those out for preparation. DCPS says such a reader must not drop what its
    /// writers would repeat, so the rest waits, unacknowledged, with the writers.
    ///
    /// Changes of an instance that holds `max_samples_per_instance` samples wait in the
    /// cache ([`ReaderCache::hold_when_full`]) and count here, so that they too stay within
    /// `max_samples`.
    pub fn room(&self) -> Option<usize> {
        self.flow_controlled.then(|| {
            let held = self.cache.len() + self.cache.waiting() + self.slots.len();
            self.cache.max_samples().saturating_sub(held)
        })
    }

    /// Hands out up to `max` of the samples `selection` selects, in arrival order, removing
    /// them (`take`) or marking them read; the others stay as they were. Samples whose
    /// lifespan ended by `now` are dropped first.
    pub fn collect(
        &mut self,
        now: Timestamp,
        max: usize,
        take: bool,
        selection: Selection,
    ) -> Vec<Taken> {
        self.cache.collect(now, max, take, selection)
    }

    /// The samples `selection` selects with their arrival ids, as `collect` would hand
    /// them out, changing nothing: for a filter that must see the data first (a query
    /// condition), followed by [`Self::collect_arrivals`].
    pub fn peek(&self, now: Timestamp, selection: Selection) -> Vec<(u64, Taken)> {
        self.cache.peek(now, selection)
    }

    /// Hands out the samples with these arrival ids (from [`Self::peek`]) still held, in
    /// arrival order, removing them (`take`) or marking them read.
    pub fn collect_arrivals(&mut self, now: Timestamp, arrivals: &[u64], take: bool) -> Vec<Taken> {
        self.cache.collect_arrivals(now, arrivals, take)
    }

    /// Drops samples the application found it cannot decode (left in the cache by a
    /// read) and counts them in SAMPLE_REJECTED.
    pub fn reject_undecodable<'a>(&mut self, samples: impl IntoIterator<Item = &'a SampleInfo>) {
        let mut n = 0;
        for info in samples {
            self.cache.discard(
                info.instance_handle,
                info.publication_handle,
                info.sequence_number,
            );
            n += 1;
        }
        if n > 0 {
            self.cache.reject(SampleRejectedReason::Undecodable, n);
        }
    }

    /// Samples waiting (expired ones included until the next collect).
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// True when no sample is waiting.
    pub fn is_empty(&self) -> bool {
        self.cache.len() == 0
    }

    /// True when a sample not yet read, and alive at `now`, is waiting.
    pub fn has_unread(&self, now: Timestamp) -> bool {
        self.cache.has_unread(now)
    }

    /// True when a sample `selection` selects, alive at `now`, is waiting.
    pub fn has_selected(&self, now: Timestamp, selection: Selection) -> bool {
        self.cache.has_selected(now, selection)
    }

    /// The writers matched, and SUBSCRIPTION_MATCHED.
    pub fn matches(&self) -> &Matches {
        &self.matches
    }

    /// REQUESTED_INCOMPATIBLE_QOS.
    pub fn incompatible(&self) -> &IncompatibleStatus {
        &self.incompatible
    }

    /// SAMPLE_REJECTED.
    pub fn sample_rejected(&self) -> SampleRejectedStatus {
        self.cache.rejected_status()
    }

    /// SAMPLE_LOST.
    pub fn sample_lost(&self) -> SampleLostStatus {
        self.lost
    }

    /// LIVELINESS_CHANGED.
    pub fn liveliness_changed(&self) -> LivelinessChangedStatus {
        self.liveliness.status()
    }

    /// REQUESTED_DEADLINE_MISSED at `now`.
    pub fn deadline_missed(&mut self, now: Timestamp) -> DeadlineMissedStatus {
        self.delivery.deadline.status(now)
    }

    /// The first instance after `after` (in handle order) with a sample `selection`
    /// selects, for `read/take_next_instance`.
    pub fn next_instance(
        &self,
        now: Timestamp,
        after: Option<InstanceHandle>,
        selection: Selection,
    ) -> Option<InstanceHandle> {
        self.cache.next_instance(now, after, selection)
    }

    /// The instance a key hash names, if the reader holds it (DCPS `lookup_instance`).
    pub fn lookup_instance(&self, key_hash: InstanceHandle) -> Option<InstanceHandle> {
        self.cache.instance_by_hash(key_hash)
    }

    /// The state of an instance, if the reader holds it.
    pub fn instance_state(&self, handle: InstanceHandle) -> Option<InstanceState> {
        self.cache.instance_state(handle)
    }

    /// True when received changes must be prepared (a key to find, a filter to run)
    /// before they are admitted.
    pub(crate) fn needs_preparation(&self) -> bool {
        self.keys.keyed() || self.delivery.filtered()
    }

    /// Prepares a change here and now (for a reader that needs nothing costly, or a
    /// driver that prepares inline).
    pub(crate) fn prepare_inline(&self, change: &ReceivedChange) -> (Found, bool) {
        examine(&self.keys, self.delivery.filter(), change)
    }

    pub(crate) fn writer_matched(
        &mut self,
        remote: Guid,
        qos: Option<&EndpointQos>,
        now: Timestamp,
    ) {
        self.matches.add(remote);
        if let Some(r) = &mut self.relayed {
            if qos.is_some_and(|q| q.durability >= Durability::Transient) {
                r.durable.insert(remote);
            }
        }
        self.delivery.writer_matched(remote, qos);
        self.liveliness.matched(remote, qos, now);
    }

    /// A matched writer is no longer alive: it owns nothing, and its instances without
    /// other writers become NOT_ALIVE_NO_WRITERS (it is still matched; its next write
    /// makes them alive again).
    pub(crate) fn writer_not_alive(&mut self, remote: Guid, now: Timestamp) {
        self.delivery.writer_not_alive(remote);
        self.instances_lose(remote, now);
    }

    /// A writer is gone: its instances without other writers become NOT_ALIVE_NO_WRITERS.
    pub(crate) fn writer_unmatched(&mut self, remote: Guid, now: Timestamp) {
        self.matches.remove(remote);
        if let Some(r) = &mut self.relayed {
            r.durable.remove(&remote);
        }
        self.coherent.forget_writer(remote);
        self.liveliness.unmatched(remote);
        self.delivery.writer_lost(remote);
        self.instances_lose(remote, now);
    }

    /// The instances `writer` wrote lose it; those left without writers change state,
    /// which the application hears as data.
    fn instances_lose(&mut self, writer: Guid, now: Timestamp) {
        let gone = self.cache.writer_lost(writer);
        if !gone.is_empty() {
            self.data_arrived = true;
        }
        for handle in gone {
            self.delivery.deadline.removed(handle, now);
            self.cache.note_state(handle, now);
        }
    }

    /// Admits a prepared change into the cache (`now`/`wall`: its arrival).
    pub(crate) fn admit(
        &mut self,
        change: ReceivedChange,
        found: Found,
        passes_filter: bool,
        now: Timestamp,
        wall: SystemTime,
    ) {
        if let Some(r) = &mut self.relayed {
            if !r.admits(&change) {
                return;
            }
        }
        let key_only = change.kind != ChangeKind::Alive;
        let handle = match found {
            Found::Instance(handle) => handle,
            Found::ByKeyHash => {
                let Some(handle) = change
                    .key_hash
                    .and_then(|h| self.cache.instance_by_hash(InstanceHandle(h)))
                else {
                    // An instance this reader never held: nothing to dispose.
                    self.cache.reject(SampleRejectedReason::UnknownInstance, 1);
                    return;
                };
                handle
            }
            Found::Undecodable => {
                // A keyed sample whose key does not decode belongs to no instance.
                self.cache.reject(SampleRejectedReason::Undecodable, 1);
                return;
            }
        };
        let source_timestamp = change.timestamp.and_then(system_time);
        let candidate = Candidate {
            handle,
            kind: change.kind,
            writer: change.writer,
            passes_filter,
            source_timestamp,
            known_instance: self.cache.contains(handle),
            instance_room: self.cache.has_room_for_instance(),
        };
        let expires = match self.delivery.admit(&candidate, now, wall) {
            Admit::Deliver { expires } => expires,
            Admit::Drop => return,
            Admit::NoRoom => {
                self.cache.reject(SampleRejectedReason::InstancesLimit, 1);
                return;
            }
        };
        // The hashes other implementations know a new instance by: computed once per
        // instance, here, rather than for every sample in preparation.
        let variants = if candidate.known_instance || !self.keys.keyed() {
            Vec::new()
        } else {
            self.keys.variants(&change.payload, key_only)
        };
        let group_seq = change
            .coherence
            .as_ref()
            .and_then(|c| c.group.as_ref())
            .map_or(0, |g| g.seq);
        let stored = Stored {
            payload: change.payload,
            key_only,
            valid_data: !key_only,
            read: false,
            source_timestamp,
            writer: change.writer,
            sequence_number: change.sequence_number.0,
            expires,
            group_seq,
        };
        self.cache.insert(handle, change.kind, stored, &variants);
        self.cache.note_state(handle, now);
        if self
            .cache
            .instance_state(handle)
            .is_some_and(|s| s != InstanceState::Alive)
        {
            self.delivery.deadline.removed(handle, now);
        }
        self.data_arrived = true;
    }
}
