//! The reader's history cache at the DCPS level: instances, their states, and the
//! samples kept for the application until it takes them.
//!
//! Samples are kept serialized and decoded when the application takes them, in its own
//! thread and outside the participant's lock.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, SystemTime};

use super::sample::{InstanceHandle, InstanceState, SampleInfo, SampleState, Selection, ViewState};
use crate::endpoint::ChangeKind;
use crate::limits::Limits;
use crate::payload::ReceivedPayload;
use crate::qos::{EndpointQos, History, LENGTH_UNLIMITED};
use crate::seq_map::SeqMap;
use crate::time::Timestamp;
use crate::wire::Guid;

/// A sample as stored: its bytes and what the reader knows of it.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) payload: ReceivedPayload,
    /// True when `payload` is a key-only sample (dispose, unregister).
    pub(crate) key_only: bool,
    pub(crate) valid_data: bool,
    pub(crate) read: bool,
    pub(crate) source_timestamp: Option<SystemTime>,
    pub(crate) writer: Guid,
    pub(crate) sequence_number: i64,
    /// When the sample expires (its writer's LIFESPAN), if ever.
    pub(crate) expires: Option<Timestamp>,
    /// Its place in its publisher's order (PID_GROUP_SEQ_NUM, GROUP access scope; 0 when
    /// the writer sent none).
    pub(crate) group_seq: i64,
}

impl Stored {
    fn sample_state(&self) -> SampleState {
        if self.read {
            SampleState::Read
        } else {
            SampleState::NotRead
        }
    }
}

/// The view state of an instance the application has (`new` false) or has not seen.
fn view_state(new: bool) -> ViewState {
    if new {
        ViewState::New
    } else {
        ViewState::NotNew
    }
}

#[derive(Debug)]
struct Instance {
    state: InstanceState,
    /// The application has not yet seen a sample of this instance (since it was reborn).
    new: bool,
    writers: BTreeSet<Guid>,
    samples: VecDeque<Stored>,
    /// The first payload received for the instance (and whether it is key-only): its key,
    /// for the invalid-data sample that reports a state change once every sample was taken.
    key_payload: (ReceivedPayload, bool),
    /// The key in `ReaderCache::order` of each sample, in the same order as `samples`.
    arrival_ids: VecDeque<u64>,
    /// The other key hashes it is known by in `ReaderCache::by_hash`.
    variants: Vec<InstanceHandle>,
    /// Changes that came while it held `max_samples_per_instance` samples, in order, for
    /// a reader that holds them rather than reject them ([`ReaderCache::hold_when_full`]):
    /// they go in as the application takes its samples.
    waiting: VecDeque<(ChangeKind, Stored)>,
    /// When it is to be purged (READER_DATA_LIFECYCLE), and for which state.
    purge_at: Option<(InstanceState, Timestamp)>,
}

/// Takes of at most this many samples remove them one by one (no allocation); larger ones
/// instance by instance in one pass ([`ReaderCache::remove_many`]).
const SMALL_TAKE: usize = 16;

/// The per-instance depth (KEEP_LAST) or none (KEEP_ALL, bounded by
/// `max_samples_per_instance`), and the bounds of RESOURCE_LIMITS.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheLimits {
    pub(crate) depth: Option<usize>,
    pub(crate) max_samples: usize,
    pub(crate) max_instances: usize,
    pub(crate) max_samples_per_instance: usize,
}

impl CacheLimits {
    /// The limits of a reader with `qos`: its RESOURCE_LIMITS where set, the participant's
    /// `limits` where they are unlimited.
    pub(crate) fn new(qos: &EndpointQos, limits: &Limits) -> Self {
        let rl = &qos.resource_limits;
        let or = |v: i32, default: usize| match v {
            LENGTH_UNLIMITED => default,
            n => usize::try_from(n.max(1)).unwrap_or(default),
        };
        CacheLimits {
            depth: match qos.history {
                History::KeepLast { depth } => Some(usize::try_from(depth.max(1)).unwrap_or(1)),
                History::KeepAll => None,
            },
            max_samples: or(rl.max_samples, limits.max_samples_per_reader),
            max_instances: or(rl.max_instances, limits.max_instances_per_reader),
            max_samples_per_instance: or(
                rl.max_samples_per_instance,
                limits.max_samples_per_instance,
            ),
        }
    }
}

/// Why a sample was not stored (DCPS `SampleRejectedStatusKind`, plus samples that do not
/// decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SampleRejectedReason {
    /// The reader held `max_instances` instances and the sample was of a new one.
    InstancesLimit,
    /// The reader held `max_samples` samples.
    SamplesLimit,
    /// The sample's instance held `max_samples_per_instance` samples (KEEP_ALL).
    SamplesPerInstanceLimit,
    /// The payload does not decode as the reader's type (its key could not be read when it
    /// arrived, or the sample could not be read when taken): dropped.
    Undecodable,
    /// A dispose or unregister naming its instance by key hash alone (no serialized key, as
    /// Fast DDS and RTI Connext send them) of an instance the reader does not hold: there
    /// is nothing to dispose, and no key to report it with.
    UnknownInstance,
}

/// The SAMPLE_REJECTED status of a reader: samples that arrived but were not stored (or,
/// for [`SampleRejectedReason::Undecodable`], not handed out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleRejectedStatus {
    /// Samples rejected so far.
    pub total_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
    /// Why the last one was.
    pub last_reason: Option<SampleRejectedReason>,
}

/// A sample handed out, still serialized.
#[derive(Debug, Clone)]
pub struct Taken {
    /// The serialized sample, encapsulation included; for a dispose or unregister its key
    /// (or the key the instance was first seen with, when the writer sent only a key hash).
    pub payload: ReceivedPayload,
    /// True when `payload` is a key-only sample.
    pub key_only: bool,
    /// What the reader knows of it.
    pub info: SampleInfo,
}

#[derive(Debug)]
pub(crate) struct ReaderCache {
    limits: CacheLimits,
    instances: BTreeMap<InstanceHandle, Instance>,
    /// Every key hash an instance held is known by — its own and the variants other
    /// implementations compute (`ferrodds_cdr::key_hash_variants`) — to the instance.
    by_hash: BTreeMap<InstanceHandle, InstanceHandle>,
    /// Arrival order across instances: (instance, sequence of arrival).
    order: SeqMap<u64, InstanceHandle>,
    /// PRESENTATION ordered access of INSTANCE scope: a read or take of every instance
    /// hands out each instance's samples together (instances in the order their first
    /// sample held arrived), not interleaved in arrival order.
    by_instance: bool,
    arrivals: u64,
    len: usize,
    /// Samples held that were not read yet (so that "is there data?", asked before every
    /// wait, does not walk every instance).
    unread: usize,
    /// The earliest expiry among the samples held, if any has a lifespan (or earlier:
    /// it is lowered on insert and recomputed only by a purge).
    earliest_expiry: Option<Timestamp>,
    /// Samples dropped because a limit was reached, or because they do not decode — the
    /// RTPS reader is reliable up to here; beyond it the DCPS SAMPLE_REJECTED status applies.
    pub(crate) rejected: u64,
    pub(crate) last_rejected: Option<SampleRejectedReason>,
    /// A full instance's changes wait in it instead of being rejected.
    hold_when_full: bool,
    /// Changes waiting in all instances.
    waiting: usize,
    /// READER_DATA_LIFECYCLE's delays, and the instances due to be purged, by time.
    purge: PurgeDelays,
    purge_due: BTreeSet<(Timestamp, InstanceHandle)>,
}

/// READER_DATA_LIFECYCLE (DDS 1.4 §2.2.3.21): how long an instance that is
/// NOT_ALIVE_NO_WRITERS, or NOT_ALIVE_DISPOSED, keeps its samples before the reader drops
/// them and forgets it. `None`: forever (the default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeDelays {
    /// `autopurge_nowriter_samples_delay`.
    pub no_writers: Option<Duration>,
    /// `autopurge_disposed_samples_delay`.
    pub disposed: Option<Duration>,
}

impl ReaderCache {
    pub(crate) fn new(limits: CacheLimits) -> Self {
        Self {
            limits,
            instances: BTreeMap::new(),
            by_hash: BTreeMap::new(),
            order: SeqMap::new(),
            by_instance: false,
            arrivals: 0,
            len: 0,
            unread: 0,
            earliest_expiry: None,
            rejected: 0,
            last_rejected: None,
            hold_when_full: false,
            waiting: 0,
            purge: PurgeDelays::default(),
            purge_due: BTreeSet::new(),
        }
    }

    /// Purges instances that stay not alive for `delays` ([`PurgeDelays`]).
    pub(crate) fn set_purge_delays(&mut self, delays: PurgeDelays) {
        self.purge = delays;
    }

    /// Instance `handle`'s state may have changed at `now`: schedules its purge when it is
    /// not alive and a delay applies to its state, and cancels it when it is alive again.
    pub(crate) fn note_state(&mut self, handle: InstanceHandle, now: Timestamp) {
        let Some(i) = self.instances.get_mut(&handle) else {
            return;
        };
        let delay = match i.state {
            InstanceState::Alive => None,
            InstanceState::NotAliveDisposed => self.purge.disposed,
            InstanceState::NotAliveNoWriters => self.purge.no_writers,
        };
        let wanted = delay.map(|d| (i.state, now.after(d)));
        match (i.purge_at, wanted) {
            // Already scheduled for this state: it runs from when the state began.
            (Some((state, _)), Some((new_state, _))) if state == new_state => {}
            (old, new) => {
                if let Some((_, at)) = old {
                    self.purge_due.remove(&(at, handle));
                }
                if let Some((_, at)) = new {
                    self.purge_due.insert((at, handle));
                }
                i.purge_at = new;
            }
        }
    }

    /// When the next instance is due to be purged.
    pub(crate) fn next_purge(&self) -> Option<Timestamp> {
        self.purge_due.first().map(|(t, _)| *t)
    }

    /// Drops the samples of the instances due by `now` and forgets them; true when any was
    /// purged.
    pub(crate) fn purge(&mut self, now: Timestamp) -> bool {
        let mut any = false;
        while let Some(&(at, handle)) = self.purge_due.first() {
            if at > now {
                break;
            }
            self.purge_due.pop_first();
            let Some(i) = self.instances.remove(&handle) else {
                continue;
            };
            for s in &i.samples {
                self.unread -= usize::from(!s.read);
            }
            for arrival in &i.arrival_ids {
                self.order.remove(arrival);
            }
            self.len -= i.samples.len();
            self.waiting -= i.waiting.len();
            self.by_hash.remove(&handle);
            for v in &i.variants {
                self.by_hash.remove(v);
            }
            any = true;
        }
        any
    }

    /// Hands out samples instance by instance (see `by_instance`).
    pub(crate) fn order_by_instance(&mut self) {
        self.by_instance = true;
    }

    /// A full instance's changes wait, in order, until the application takes samples of
    /// it, instead of being rejected: a reliable KEEP_ALL reader loses nothing its writers
    /// would repeat. What waits counts against `max_samples` ([`ReaderCache::waiting`]),
    /// which the reader's flow control keeps it within.
    pub(crate) fn hold_when_full(&mut self) {
        self.hold_when_full = true;
    }

    /// Changes waiting for room in their instance.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }

    /// Counts `n` samples rejected for `reason`.
    pub(crate) fn reject(&mut self, reason: SampleRejectedReason, n: u64) {
        self.rejected += n;
        self.last_rejected = Some(reason);
    }

    /// The SAMPLE_REJECTED status.
    pub(crate) fn rejected_status(&self) -> SampleRejectedStatus {
        SampleRejectedStatus {
            total_count: self.rejected,
            last_reason: self.last_rejected,
            ..Default::default()
        }
    }

    /// Samples waiting.
    /// The most samples it holds (RESOURCE_LIMITS' `max_samples`, or the participant's).
    pub(crate) fn max_samples(&self) -> usize {
        self.limits.max_samples
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when a sample not yet read, and not expired by `now`, is waiting.
    pub(crate) fn has_unread(&self, now: Timestamp) -> bool {
        self.holds(now, self.unread, |s| !s.read)
    }

    /// True when `count` (of the samples held, those `counted` tells) is not zero and one
    /// of them has not expired by `now`: the count answers unless something may have
    /// expired, and only then are the instances walked.
    fn holds(&self, now: Timestamp, count: usize, counted: impl Fn(&Stored) -> bool) -> bool {
        if count == 0 {
            return false;
        }
        if self.earliest_expiry.is_none_or(|e| e > now) {
            // Nothing held has expired: every counted sample counts.
            return true;
        }
        self.instances.values().any(|i| {
            i.samples
                .iter()
                .any(|s| counted(s) && s.expires.is_none_or(|e| e > now))
        })
    }

    /// True when a sample `selection` selects, not expired by `now`, is waiting (what a
    /// DCPS read condition's trigger is).
    pub(crate) fn has_selected(&self, now: Timestamp, selection: Selection) -> bool {
        // The two selections waits use most (not read, and anything: a read condition of
        // every state) are answered by counts, not by walking every instance before every
        // wait.
        if selection.view_states == Selection::ANY.view_states
            && selection.instance_states == Selection::ANY.instance_states
            && selection.instance.is_none()
        {
            if selection.sample_states == SampleState::NotRead.mask() {
                return self.has_unread(now);
            }
            if selection.sample_states == Selection::ANY.sample_states {
                return self.holds(now, self.len, |_| true);
            }
        }
        let live = |s: &Stored| s.expires.is_none_or(|e| e > now);
        let selected = |handle: &InstanceHandle, i: &Instance| {
            let view = view_state(i.new);
            selection.instance.is_none_or(|h| h == *handle)
                && i.samples.iter().any(|s| {
                    let state = s.sample_state();
                    live(s) && selection.selects(state, view, i.state)
                })
        };
        match selection.instance {
            Some(h) => self.instances.get(&h).is_some_and(|i| selected(&h, i)),
            None => self.instances.iter().any(|(h, i)| selected(h, i)),
        }
    }

    /// The first instance, in handle order after `after` (from the first with `None`),
    /// holding a sample `selection` selects (its instance ignored) that has not expired
    /// by `now`: DCPS's `read/take_next_instance` (§2.2.2.5.3.16).
    pub(crate) fn next_instance(
        &self,
        now: Timestamp,
        after: Option<InstanceHandle>,
        selection: Selection,
    ) -> Option<InstanceHandle> {
        use std::ops::Bound::{Excluded, Unbounded};
        let from = after.map_or(Unbounded, Excluded);
        self.instances
            .range((from, Unbounded))
            .map(|(h, _)| *h)
            .find(|h| self.has_selected(now, selection.of_instance(*h)))
    }

    /// The instance a key hash names: its own, or one of the variants it was inserted with.
    pub(crate) fn instance_by_hash(&self, hash: InstanceHandle) -> Option<InstanceHandle> {
        self.by_hash.get(&hash).copied()
    }

    /// Adds a change from `writer` to instance `handle`; a new instance is also known by
    /// the key hashes `variants`. A change without payload (a dispose or unregister that
    /// named its instance by key hash) gets the instance's key.
    pub(crate) fn insert(
        &mut self,
        handle: InstanceHandle,
        kind: ChangeKind,
        stored: Stored,
        variants: &[InstanceHandle],
    ) {
        self.admit(handle, kind, stored, variants, false);
    }

    /// Lets in what waits in `handle` while it has room.
    fn admit_waiting(&mut self, handle: InstanceHandle) {
        let full = self.limits.max_samples_per_instance;
        // Bounded: each turn takes one change out of the instance's queue.
        loop {
            let Some(instance) = self.instances.get_mut(&handle) else {
                return;
            };
            if instance.samples.len() >= full {
                return;
            }
            let Some((kind, stored)) = instance.waiting.pop_front() else {
                return;
            };
            self.waiting -= 1;
            self.admit(handle, kind, stored, &[], true);
        }
    }

    /// Stores a change (`queued`: one that waited in its instance, let in now).
    fn admit(
        &mut self,
        handle: InstanceHandle,
        kind: ChangeKind,
        mut stored: Stored,
        variants: &[InstanceHandle],
        queued: bool,
    ) {
        let writer = stored.writer;
        if !self.instances.contains_key(&handle) {
            if self.instances.len() >= self.limits.max_instances {
                self.reject(SampleRejectedReason::InstancesLimit, 1);
                return;
            }
            let mut known_by = Vec::new();
            for &hash in std::iter::once(&handle).chain(variants) {
                if let std::collections::btree_map::Entry::Vacant(e) = self.by_hash.entry(hash) {
                    e.insert(handle);
                    if hash != handle {
                        known_by.push(hash);
                    }
                }
            }
            self.instances.insert(
                handle,
                Instance {
                    state: InstanceState::Alive,
                    new: true,
                    writers: BTreeSet::new(),
                    samples: VecDeque::new(),
                    // A copy of its own: a chunk of a writer's sample channel held for the
                    // instance's life would be one the writer never gets back.
                    key_payload: (stored.payload.to_owned_copy(), stored.key_only),
                    arrival_ids: VecDeque::new(),
                    variants: known_by,
                    waiting: VecDeque::new(),
                    purge_at: None,
                },
            );
        }
        let Some(instance) = self.instances.get_mut(&handle) else {
            return;
        };
        // A full instance's change waits behind what already waits, so that the instance's
        // changes keep their order (a dispose after samples that waited is seen after them).
        if self.hold_when_full
            && !queued
            && self.limits.depth.is_none()
            && (!instance.waiting.is_empty()
                || instance.samples.len() >= self.limits.max_samples_per_instance)
        {
            instance.waiting.push_back((kind, stored));
            self.waiting += 1;
            return;
        }
        if stored.payload.is_empty() {
            stored.payload = instance.key_payload.0.clone();
            stored.key_only = instance.key_payload.1;
        }
        match kind {
            ChangeKind::Alive => {
                if instance.state != InstanceState::Alive {
                    // Reborn: the application sees it as new again.
                    instance.new = true;
                }
                instance.state = InstanceState::Alive;
                instance.writers.insert(writer);
            }
            ChangeKind::Disposed | ChangeKind::DisposedUnregistered => {
                instance.state = InstanceState::NotAliveDisposed;
                if kind == ChangeKind::DisposedUnregistered {
                    instance.writers.remove(&writer);
                }
            }
            ChangeKind::Unregistered => {
                instance.writers.remove(&writer);
                if instance.writers.is_empty() && instance.state == InstanceState::Alive {
                    instance.state = InstanceState::NotAliveNoWriters;
                } else {
                    // Nothing for the application to see.
                    return;
                }
            }
        }
        if let Some(depth) = self.limits.depth {
            while instance.samples.len() >= depth.max(1) {
                if instance.samples.pop_front().is_some_and(|s| !s.read) {
                    self.unread -= 1;
                }
                // Its place in the arrival order goes with it (else `order` would grow by
                // one entry per sample replaced, for as long as the reader lives).
                if let Some(arrival) = instance.arrival_ids.pop_front() {
                    self.order.remove(&arrival);
                }
                self.len -= 1;
            }
        } else if instance.samples.len() >= self.limits.max_samples_per_instance {
            self.reject(SampleRejectedReason::SamplesPerInstanceLimit, 1);
            return;
        }
        if self.len >= self.limits.max_samples {
            self.reject(SampleRejectedReason::SamplesLimit, 1);
            return;
        }
        if let Some(e) = stored.expires {
            self.earliest_expiry = Some(self.earliest_expiry.map_or(e, |x| x.min(e)));
        }
        self.unread += usize::from(!stored.read);
        instance.samples.push_back(stored);
        self.len += 1;
        self.arrivals += 1;
        instance.arrival_ids.push_back(self.arrivals);
        self.order.insert(self.arrivals, handle);
    }

    /// Removes the sample of `handle` that `writer` sent as `sequence_number`, if it is
    /// still held (a sample that does not decode, found by a read: it is dropped at once, so
    /// that it is neither handed out nor counted again).
    pub(crate) fn discard(
        &mut self,
        handle: InstanceHandle,
        writer: InstanceHandle,
        sequence_number: i64,
    ) {
        let Some(instance) = self.instances.get_mut(&handle) else {
            return;
        };
        let Some(i) = instance.samples.iter().position(|s| {
            InstanceHandle::of_guid(s.writer) == writer && s.sequence_number == sequence_number
        }) else {
            return;
        };
        if instance.samples.remove(i).is_some_and(|s| !s.read) {
            self.unread -= 1;
        }
        if let Some(arrival) = instance.arrival_ids.remove(i) {
            self.order.remove(&arrival);
        }
        self.len -= 1;
    }

    /// True when the cache knows instance `handle` (it holds samples of it, or it is alive).
    /// True while the cache holds fewer than `max_instances` instances.
    pub(crate) fn has_room_for_instance(&self) -> bool {
        self.instances.len() < self.limits.max_instances
    }

    pub(crate) fn contains(&self, handle: InstanceHandle) -> bool {
        self.instances.contains_key(&handle)
    }

    /// A writer is gone: its instances without other writers become NOT_ALIVE_NO_WRITERS,
    /// which the application learns from an invalid-data sample. Returns those instances.
    pub(crate) fn writer_lost(&mut self, writer: Guid) -> Vec<InstanceHandle> {
        let handles: Vec<InstanceHandle> = self
            .instances
            .iter()
            .filter(|(_, i)| i.writers.contains(&writer))
            .map(|(h, _)| *h)
            .collect();
        let mut no_writers = Vec::new();
        for handle in handles {
            let Some(instance) = self.instances.get_mut(&handle) else {
                continue;
            };
            instance.writers.remove(&writer);
            if instance.writers.is_empty() && instance.state == InstanceState::Alive {
                instance.state = InstanceState::NotAliveNoWriters;
                no_writers.push(handle);
                // Any sample of the instance holds its key; the first one is kept for this.
                let (payload, key_only) = instance
                    .samples
                    .back()
                    .map(|s| (s.payload.clone(), s.key_only))
                    .unwrap_or_else(|| instance.key_payload.clone());
                let stored = Stored {
                    payload,
                    key_only,
                    valid_data: false,
                    read: false,
                    source_timestamp: None,
                    writer,
                    sequence_number: 0,
                    expires: None,
                    group_seq: 0,
                };
                instance.samples.push_back(stored);
                self.unread += 1;
                self.len += 1;
                self.arrivals += 1;
                instance.arrival_ids.push_back(self.arrivals);
                self.order.insert(self.arrivals, handle);
            }
        }
        no_writers
    }

    /// Drops the samples whose lifespan ended by `now`. Nothing to walk unless some sample
    /// held has a lifespan and the earliest of them has ended.
    fn purge_expired(&mut self, now: Timestamp) {
        if self.earliest_expiry.is_none_or(|e| e > now) {
            return;
        }
        let mut earliest: Option<Timestamp> = None;
        for instance in self.instances.values_mut() {
            let mut i = 0;
            while i < instance.samples.len() {
                match instance.samples[i].expires {
                    Some(e) if e <= now => {
                        if instance.samples.remove(i).is_some_and(|s| !s.read) {
                            self.unread -= 1;
                        }
                        if let Some(arrival) = instance.arrival_ids.remove(i) {
                            self.order.remove(&arrival);
                        }
                        self.len -= 1;
                    }
                    expires => {
                        if let Some(e) = expires {
                            earliest = Some(earliest.map_or(e, |x| x.min(e)));
                        }
                        i += 1;
                    }
                }
            }
        }
        self.earliest_expiry = earliest;
    }

    /// Hands out up to `max` of the samples `selection` selects, in arrival order: removes
    /// them (`take`) or marks them read. Samples it does not select are left as they are.
    /// Samples whose lifespan ended by `now` are dropped first.
    ///
    /// The view state is the instance's: every sample of an instance handed out by one call
    /// is NEW when the application had not seen the instance (since it was reborn), and the
    /// instance is NOT_NEW afterwards.
    pub(crate) fn collect(
        &mut self,
        now: Timestamp,
        max: usize,
        take: bool,
        selection: Selection,
    ) -> Vec<Taken> {
        self.purge_expired(now);
        let picked = self.select(now, max, selection);
        self.hand_out(&picked, take)
    }

    /// The samples `selection` selects, with their arrival ids, as [`Self::collect`] would
    /// hand them out but changing nothing (no sample becomes READ, no instance NOT_NEW):
    /// for a filter that must see the data before choosing what a read or take returns.
    pub(crate) fn peek(&self, now: Timestamp, selection: Selection) -> Vec<(u64, Taken)> {
        let picked = self.select(now, usize::MAX, selection);
        picked
            .iter()
            .filter_map(|&(arrival, handle, index)| {
                let instance = self.instances.get(&handle)?;
                let stored = instance.samples.get(index)?;
                Some((
                    arrival,
                    Taken {
                        payload: stored.payload.clone(),
                        key_only: stored.key_only,
                        info: sample_info(handle, instance.state, instance.new, stored),
                    },
                ))
            })
            .collect()
    }

    /// The writer and group sequence number of each sample `selection` selects, in the
    /// order [`Self::collect`] would hand them out (for GROUP ordered access across a
    /// subscriber's readers).
    pub(crate) fn group_order(&self, now: Timestamp, selection: Selection) -> Vec<(Guid, i64)> {
        self.select(now, usize::MAX, selection)
            .iter()
            .filter_map(|&(_, handle, index)| {
                let stored = self.instances.get(&handle)?.samples.get(index)?;
                Some((stored.writer, stored.group_seq))
            })
            .collect()
    }

    /// Hands out the samples with these arrival ids (from [`Self::peek`]) that are still
    /// held, in arrival order, as [`Self::collect`] does.
    pub(crate) fn collect_arrivals(
        &mut self,
        now: Timestamp,
        arrivals: &[u64],
        take: bool,
    ) -> Vec<Taken> {
        self.purge_expired(now);
        let mut picked: Vec<(u64, InstanceHandle, usize)> = arrivals
            .iter()
            .filter_map(|&arrival| {
                let handle = *self.order.get(&arrival)?;
                let index = self
                    .instances
                    .get(&handle)?
                    .arrival_ids
                    .binary_search(&arrival)
                    .ok()?;
                Some((arrival, handle, index))
            })
            .collect();
        picked.sort_unstable_by_key(|p| p.0);
        picked.dedup_by_key(|p| p.0);
        self.hand_out(&picked, take)
    }

    /// Up to `max` of the samples `selection` selects, in arrival order, as (arrival,
    /// instance, index in the instance's samples); expired ones left out. Arrival ids are
    /// increasing within an instance, so a sample's index is found by binary search rather
    /// than by a map built per call.
    fn select(
        &self,
        now: Timestamp,
        max: usize,
        selection: Selection,
    ) -> Vec<(u64, InstanceHandle, usize)> {
        let mut picked: Vec<(u64, InstanceHandle, usize)> = Vec::new();
        let selected = |arrival: u64, instance: &Instance| -> Option<usize> {
            let index = instance.arrival_ids.binary_search(&arrival).ok()?;
            let stored = instance.samples.get(index)?;
            if stored.expires.is_some_and(|e| e <= now) {
                return None;
            }
            selection
                .selects(
                    stored.sample_state(),
                    view_state(instance.new),
                    instance.state,
                )
                .then_some(index)
        };
        match selection.instance {
            Some(handle) => {
                if let Some(instance) = self.instances.get(&handle) {
                    for &arrival in &instance.arrival_ids {
                        if picked.len() >= max {
                            break;
                        }
                        if let Some(index) = selected(arrival, instance) {
                            picked.push((arrival, handle, index));
                        }
                    }
                }
            }
            None if self.by_instance => {
                let mut seen = BTreeSet::new();
                for (_, &handle) in self.order.iter() {
                    if picked.len() >= max {
                        break;
                    }
                    if !seen.insert(handle) {
                        continue;
                    }
                    let Some(instance) = self.instances.get(&handle) else {
                        continue;
                    };
                    for &arrival in &instance.arrival_ids {
                        if picked.len() >= max {
                            break;
                        }
                        if let Some(index) = selected(arrival, instance) {
                            picked.push((arrival, handle, index));
                        }
                    }
                }
            }
            None => {
                for (arrival, &handle) in self.order.iter() {
                    if picked.len() >= max {
                        break;
                    }
                    if let Some(index) = self
                        .instances
                        .get(&handle)
                        .and_then(|i| selected(arrival, i))
                    {
                        picked.push((arrival, handle, index));
                    }
                }
            }
        }
        picked
    }

    /// Hands out `picked` (from `select`): removes the samples (`take`) or marks them read;
    /// their instances are NOT_NEW afterwards.
    fn hand_out(&mut self, picked: &[(u64, InstanceHandle, usize)], take: bool) -> Vec<Taken> {
        let mut out = Vec::with_capacity(picked.len());
        for &(_, handle, index) in picked {
            let Some(instance) = self.instances.get_mut(&handle) else {
                continue;
            };
            let (state, new) = (instance.state, instance.new);
            let Some(stored) = instance.samples.get_mut(index) else {
                continue;
            };
            let info = sample_info(handle, state, new, stored);
            out.push(Taken {
                // A take removes the sample below: its bytes move instead of being copied.
                payload: if take {
                    std::mem::take(&mut stored.payload)
                } else {
                    stored.payload.clone()
                },
                key_only: stored.key_only,
                info,
            });
            if !stored.read {
                stored.read = true;
                self.unread -= 1;
            }
        }
        for &(_, handle, _) in picked {
            if let Some(i) = self.instances.get_mut(&handle) {
                i.new = false;
            }
        }
        if take {
            for &(arrival, _, _) in picked {
                self.order.remove(&arrival);
            }
            if picked.len() <= SMALL_TAKE {
                // Last first: within an instance, a later arrival has the higher index, so
                // the indices still to remove stay valid.
                for &(_, handle, index) in picked.iter().rev() {
                    if let Some(i) = self.instances.get_mut(&handle) {
                        if i.samples.remove(index).is_some() {
                            i.arrival_ids.remove(index);
                            self.len -= 1;
                        }
                    }
                }
            } else {
                self.remove_many(picked);
            }
            if self.waiting > 0 {
                for &(_, handle, _) in picked {
                    self.admit_waiting(handle);
                }
            }
            // Instances that are not alive and hold nothing are forgotten (only those this
            // take touched: the others did not change).
            for &(_, handle, _) in picked {
                let forget = self.instances.get(&handle).is_some_and(|i| {
                    i.samples.is_empty()
                        && i.waiting.is_empty()
                        && i.state != InstanceState::Alive
                        && i.writers.is_empty()
                });
                if forget {
                    if let Some(i) = self.instances.remove(&handle) {
                        if let Some((_, at)) = i.purge_at {
                            self.purge_due.remove(&(at, handle));
                        }
                        self.by_hash.remove(&handle);
                        for v in &i.variants {
                            self.by_hash.remove(v);
                        }
                    }
                }
            }
        }
        out
    }

    /// Removes the samples `picked` names, instance by instance, in one pass over each
    /// instance's samples: removing them one at a time from the middle of a `VecDeque` moves
    /// the rest each time (a take of n oldest samples moved n²/2).
    fn remove_many(&mut self, picked: &[(u64, InstanceHandle, usize)]) {
        let mut by_instance: BTreeMap<InstanceHandle, Vec<usize>> = BTreeMap::new();
        for &(_, handle, index) in picked {
            by_instance.entry(handle).or_default().push(index);
        }
        for (handle, mut indices) in by_instance {
            let Some(i) = self.instances.get_mut(&handle) else {
                continue;
            };
            indices.sort_unstable();
            indices.dedup();
            let removed = |n: &mut usize| {
                let hit = indices.binary_search(n).is_ok();
                *n += 1;
                !hit
            };
            let before = i.samples.len();
            let mut n = 0;
            i.samples.retain(|_| removed(&mut n));
            let mut n = 0;
            i.arrival_ids.retain(|_| removed(&mut n));
            self.len -= before - i.samples.len();
        }
    }

    /// The state of an instance, if known.
    pub(crate) fn instance_state(&self, handle: InstanceHandle) -> Option<InstanceState> {
        self.instances.get(&handle).map(|i| i.state)
    }
}

/// What the application is told of `stored`, a sample of instance `handle` (in `state`,
/// `new` to the application or not): the view state is the instance's.
fn sample_info(
    handle: InstanceHandle,
    state: InstanceState,
    new: bool,
    stored: &Stored,
) -> SampleInfo {
    SampleInfo {
        sample_state: stored.sample_state(),
        view_state: view_state(new),
        instance_state: state,
        valid_data: stored.valid_data,
        source_timestamp: stored.source_timestamp,
        instance_handle: handle,
        publication_handle: InstanceHandle::of_guid(stored.writer),
        sequence_number: stored.sequence_number,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{EntityId, GuidPrefix};

    const NOW: Timestamp = Timestamp(10_000_000_000);

    fn stored(writer: Guid, seq: i64, valid: bool) -> Stored {
        Stored {
            payload: vec![seq as u8].into(),
            key_only: !valid,
            valid_data: valid,
            read: false,
            source_timestamp: None,
            writer,
            sequence_number: seq,
            expires: None,
            group_seq: 0,
        }
    }

    fn writer(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    /// A cache of up to 100 samples, `depth` per instance (KEEP_LAST) or KEEP_ALL.
    fn cache(depth: Option<usize>) -> ReaderCache {
        ReaderCache::new(CacheLimits {
            depth,
            max_samples: 100,
            max_instances: usize::MAX,
            max_samples_per_instance: usize::MAX,
        })
    }

    /// The unread count `has_unread` relies on is the number of unread samples held.
    fn unread_is_counted(c: &ReaderCache) -> usize {
        let held = c
            .instances
            .values()
            .flat_map(|i| &i.samples)
            .filter(|s| !s.read)
            .count();
        assert_eq!(c.unread, held);
        held
    }

    #[test]
    fn keep_last_keeps_the_newest_per_instance_and_takes_in_arrival_order() {
        let mut c = cache(Some(2));
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        for seq in 1..=3 {
            c.insert(a, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
        }
        c.insert(b, ChangeKind::Alive, stored(writer(1), 4, true), &[]);
        // The sample the depth pushed out was not read: no longer counted.
        assert_eq!(unread_is_counted(&c), 3);
        let taken = c.collect(NOW, 10, true, Selection::ANY);
        let seqs: Vec<i64> = taken.iter().map(|t| t.info.sequence_number).collect();
        assert_eq!(seqs, vec![2, 3, 4]);
        // The view state is the instance's: both samples of `a` in this take are NEW.
        assert_eq!(taken[0].info.view_state, ViewState::New);
        assert_eq!(taken[1].info.view_state, ViewState::New);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn the_next_instance_is_the_next_handle_with_a_selected_sample() {
        let mut c = cache(None);
        let (a, b, d) = (
            InstanceHandle([1; 16]),
            InstanceHandle([2; 16]),
            InstanceHandle([3; 16]),
        );
        for (seq, h) in [(1, d), (2, a), (3, b)] {
            c.insert(h, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
        }
        let next = |c: &ReaderCache, after, sel| c.next_instance(NOW, after, sel);
        assert_eq!(next(&c, None, Selection::ANY), Some(a));
        assert_eq!(next(&c, Some(a), Selection::ANY), Some(b));
        assert_eq!(next(&c, Some(b), Selection::ANY), Some(d));
        assert_eq!(next(&c, Some(d), Selection::ANY), None);
        // A handle the reader does not hold still orders: the next one after it.
        assert_eq!(
            next(&c, Some(InstanceHandle([0; 16])), Selection::ANY),
            Some(a)
        );
        // Read b: with NOT_READ, the next after a is d; and the instance in the
        // selection is ignored.
        let _ = c.collect(NOW, 10, false, Selection::ANY.of_instance(b));
        assert_eq!(
            next(&c, Some(a), Selection::NOT_READ.of_instance(a)),
            Some(d)
        );
        assert_eq!(c.instance_by_hash(b), Some(b));
    }

    #[test]
    fn a_selection_hands_out_only_what_it_selects_and_leaves_the_rest_untouched() {
        let mut c = cache(None);
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        c.insert(a, ChangeKind::Alive, stored(writer(1), 1, true), &[]);
        c.insert(b, ChangeKind::Alive, stored(writer(1), 2, true), &[]);
        c.insert(a, ChangeKind::Alive, stored(writer(1), 3, true), &[]);
        let seqs = |t: &[Taken]| t.iter().map(|t| t.info.sequence_number).collect::<Vec<_>>();

        // Read one instance: only its samples become READ, and only it NOT_NEW.
        let read = c.collect(NOW, 10, false, Selection::ANY.of_instance(a));
        assert_eq!(seqs(&read), vec![1, 3]);
        assert_eq!(unread_is_counted(&c), 1);
        assert!(c.has_unread(NOW));
        // A read condition on READ samples of `a` triggers; on NOT_READ ones of `a`, not.
        let read_only = Selection {
            sample_states: SampleState::Read.mask(),
            ..Selection::ANY
        };
        assert!(c.has_selected(NOW, read_only.of_instance(a)));
        assert!(!c.has_selected(NOW, Selection::NOT_READ.of_instance(a)));
        assert!(c.has_selected(NOW, Selection::NOT_READ));
        assert!(read.iter().all(|t| t.info.view_state == ViewState::New));

        // Take what is not read: b's sample alone, a's stay.
        let taken = c.collect(NOW, 10, true, Selection::NOT_READ);
        assert_eq!(seqs(&taken), vec![2]);
        assert_eq!(c.len(), 2);
        assert_eq!(unread_is_counted(&c), 0);
        assert!(!c.has_unread(NOW));

        // Take the READ ones, one at a time: a sample in the middle of the arrival order
        // is removed, not whatever is first.
        c.insert(a, ChangeKind::Alive, stored(writer(1), 4, true), &[]);
        let read_only = Selection {
            sample_states: SampleState::Read.mask(),
            ..Selection::ANY
        };
        assert_eq!(seqs(&c.collect(NOW, 1, true, read_only)), vec![1]);
        assert_eq!(seqs(&c.collect(NOW, 10, true, read_only)), vec![3]);
        let rest = c.collect(NOW, 10, true, Selection::ANY);
        assert_eq!(seqs(&rest), vec![4]);
        assert_eq!(rest[0].info.sample_state, SampleState::NotRead);
        assert_eq!(rest[0].info.view_state, ViewState::NotNew);

        // An instance state mask: a disposed instance's samples only.
        c.insert(b, ChangeKind::Alive, stored(writer(1), 5, true), &[]);
        c.insert(
            a,
            ChangeKind::DisposedUnregistered,
            stored(writer(1), 6, false),
            &[],
        );
        let disposed = Selection {
            instance_states: InstanceState::NotAliveDisposed.mask(),
            ..Selection::ANY
        };
        assert_eq!(seqs(&c.collect(NOW, 10, true, disposed)), vec![6]);
        assert_eq!(seqs(&c.collect(NOW, 10, true, Selection::ANY)), vec![5]);
        assert_eq!(c.len(), 0);
        assert_eq!(unread_is_counted(&c), 0);
        // The disposed instance without writers, emptied by the take, is forgotten; the
        // alive one stays.
        assert!(!c.contains(a));
        assert!(c.contains(b));
    }

    #[test]
    fn a_peek_changes_nothing_and_the_samples_it_chose_are_handed_out_alone() {
        let mut c = cache(None);
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        for (h, seq) in [(a, 1), (b, 2), (a, 3), (b, 4)] {
            c.insert(h, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
        }
        let peeked = c.peek(NOW, Selection::ANY);
        assert_eq!(peeked.len(), 4);
        assert!(peeked
            .iter()
            .all(|(_, t)| t.info.sample_state == SampleState::NotRead));
        assert_eq!(unread_is_counted(&c), 4);
        // Choose the odd sequence numbers (and one twice, and one no longer held).
        let mut chosen: Vec<u64> = peeked
            .iter()
            .filter(|(_, t)| t.info.sequence_number % 2 == 1)
            .map(|(arrival, _)| *arrival)
            .collect();
        chosen.push(chosen[0]);
        chosen.push(999);
        let taken = c.collect_arrivals(NOW, &chosen, true);
        let seqs: Vec<i64> = taken.iter().map(|t| t.info.sequence_number).collect();
        assert_eq!(seqs, vec![1, 3]);
        let rest: Vec<i64> = c
            .collect(NOW, 10, true, Selection::ANY)
            .iter()
            .map(|t| t.info.sequence_number)
            .collect();
        assert_eq!(rest, vec![2, 4]);
        assert_eq!(unread_is_counted(&c), 0);
    }

    #[test]
    fn dispose_and_lost_writers_change_the_instance_state() {
        let mut c = cache(Some(5));
        let a = InstanceHandle([1; 16]);
        c.insert(a, ChangeKind::Alive, stored(writer(1), 1, true), &[]);
        c.insert(a, ChangeKind::Disposed, stored(writer(1), 2, false), &[]);
        let taken = c.collect(NOW, 10, false, Selection::ANY);
        assert_eq!(taken.len(), 2);
        assert!(taken
            .iter()
            .all(|t| t.info.instance_state == InstanceState::NotAliveDisposed));
        assert!(!taken[1].info.valid_data);
        // read marks them read; a second read sees them as read
        assert!(c.collect(NOW, 10, false, Selection::NOT_READ).is_empty());
        let b = InstanceHandle([2; 16]);
        c.insert(b, ChangeKind::Alive, stored(writer(2), 1, true), &[]);
        c.writer_lost(writer(2));
        assert_eq!(c.instance_state(b), Some(InstanceState::NotAliveNoWriters));
        let last = c.collect(NOW, 10, true, Selection::NOT_READ);
        assert_eq!(last.last().map(|t| t.info.valid_data), Some(false));
    }

    #[test]
    fn expired_samples_are_not_handed_out() {
        use std::time::Duration;
        let second = Duration::from_secs(1);
        let mut c = cache(None);
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        let mut gone = stored(writer(1), 1, true);
        gone.expires = Some(Timestamp(NOW.0 - second.as_nanos() as u64));
        c.insert(a, ChangeKind::Alive, gone, &[]);
        c.insert(b, ChangeKind::Alive, stored(writer(1), 2, true), &[]);
        let mut later = stored(writer(1), 3, true);
        later.expires = Some(NOW.after(60 * second));
        c.insert(a, ChangeKind::Alive, later, &[]);
        assert!(c.has_unread(NOW));
        c.purge_expired(NOW);
        assert_eq!(unread_is_counted(&c), 2);
        let taken = c.collect(NOW, 10, true, Selection::ANY);
        let seqs: Vec<i64> = taken.iter().map(|t| t.info.sequence_number).collect();
        assert_eq!(seqs, vec![2, 3]);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_selection_of_every_state_sees_read_samples_and_not_expired_ones() {
        use std::time::Duration;
        let second = Duration::from_secs(1);
        let mut c = cache(None);
        let a = InstanceHandle([1; 16]);
        assert!(!c.has_selected(NOW, Selection::ANY));
        c.insert(a, ChangeKind::Alive, stored(writer(1), 1, true), &[]);
        c.collect(NOW, 10, false, Selection::ANY);
        // Read, not taken: still selected by every state, no longer by NOT_READ.
        assert!(c.has_selected(NOW, Selection::ANY));
        assert!(!c.has_selected(NOW, Selection::NOT_READ));
        c.collect(NOW, 10, true, Selection::ANY);
        assert!(!c.has_selected(NOW, Selection::ANY));
        // A sample that expires: counted until then, not after (before any purge).
        let mut brief = stored(writer(1), 2, true);
        brief.expires = Some(NOW.after(second));
        c.insert(a, ChangeKind::Alive, brief, &[]);
        assert!(c.has_selected(NOW, Selection::ANY));
        assert!(!c.has_selected(NOW.after(2 * second), Selection::ANY));
        assert!(!c.has_unread(NOW.after(2 * second)));
    }

    #[test]
    fn a_lost_writer_is_reported_even_when_every_sample_was_taken() {
        let mut c = cache(Some(1));
        let a = InstanceHandle([1; 16]);
        c.insert(a, ChangeKind::Alive, stored(writer(1), 1, true), &[]);
        assert_eq!(c.collect(NOW, 10, true, Selection::ANY).len(), 1);
        assert_eq!(c.writer_lost(writer(1)), vec![a]);
        assert_eq!(unread_is_counted(&c), 1);
        let taken = c.collect(NOW, 10, true, Selection::ANY);
        assert_eq!(taken.len(), 1);
        assert!(!taken[0].info.valid_data);
        assert_eq!(
            taken[0].info.instance_state,
            InstanceState::NotAliveNoWriters
        );
        // The key comes from the first sample of the instance.
        assert_eq!(taken[0].payload, vec![1]);
    }

    #[test]
    fn a_large_take_removes_what_it_handed_out_and_keeps_the_rest_in_order() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: None,
            max_samples: 1000,
            max_instances: usize::MAX,
            max_samples_per_instance: usize::MAX,
        });
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        // 300 samples, alternating instances; the first 50 of `a` read first, so that a take
        // of unread samples picks around them.
        for seq in 0..300 {
            let handle = if seq % 2 == 0 { a } else { b };
            c.insert(handle, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
        }
        let seqs = |t: &[Taken]| t.iter().map(|t| t.info.sequence_number).collect::<Vec<_>>();
        let read = c.collect(NOW, 50, false, Selection::ANY.of_instance(a));
        assert_eq!(read.len(), 50);
        let taken = c.collect(NOW, 200, true, Selection::NOT_READ);
        assert_eq!(taken.len(), 200);
        let read_seqs = seqs(&read);
        let expected: Vec<i64> = (0..300)
            .filter(|s| !read_seqs.contains(s))
            .take(200)
            .collect();
        assert_eq!(seqs(&taken), expected);
        assert_eq!(c.len(), 100);
        assert_eq!(unread_is_counted(&c), 50);
        // What is left comes out in arrival order, each once.
        let rest = c.collect(NOW, 1000, true, Selection::ANY);
        let mut left: Vec<i64> = read_seqs
            .iter()
            .copied()
            .chain((0..300).filter(|s| !read_seqs.contains(s)).skip(200))
            .collect();
        left.sort_unstable();
        assert_eq!(seqs(&rest), left);
        assert_eq!(c.len(), 0);
        assert!(c.order.is_empty());
    }

    #[test]
    fn a_full_instance_holds_what_comes_in_order_until_samples_are_taken() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: None,
            max_samples: 100,
            max_instances: usize::MAX,
            max_samples_per_instance: 2,
        });
        c.hold_when_full();
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        for seq in 1..=5 {
            c.insert(a, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
        }
        c.insert(a, ChangeKind::Disposed, stored(writer(1), 6, false), &[]);
        // Another instance is not held back by a full one.
        c.insert(b, ChangeKind::Alive, stored(writer(1), 7, true), &[]);
        assert_eq!((c.len(), c.waiting()), (3, 4));
        assert_eq!(c.rejected, 0);
        let seqs = |t: &[Taken]| t.iter().map(|t| t.info.sequence_number).collect::<Vec<_>>();
        let state = |t: &[Taken]| t.iter().map(|t| t.info.instance_state).collect::<Vec<_>>();
        let first = c.collect(NOW, 100, true, Selection::ANY);
        assert_eq!(seqs(&first), [1, 2, 7]);
        // The dispose waits behind the samples that came before it.
        assert_eq!(state(&first)[..2], [InstanceState::Alive; 2]);
        assert_eq!((c.len(), c.waiting()), (2, 2));
        let second = c.collect(NOW, 100, true, Selection::ANY);
        assert_eq!(seqs(&second), [3, 4]);
        let third = c.collect(NOW, 100, true, Selection::ANY);
        assert_eq!(seqs(&third), [5, 6]);
        assert_eq!(state(&third), [InstanceState::NotAliveDisposed; 2]);
        assert_eq!((c.len(), c.waiting(), c.rejected), (0, 0, 0));
    }

    #[test]
    fn keep_all_rejects_beyond_max_samples() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: None,
            max_samples: 2,
            max_instances: usize::MAX,
            max_samples_per_instance: usize::MAX,
        });
        for seq in 1..=3 {
            c.insert(
                InstanceHandle::NIL,
                ChangeKind::Alive,
                stored(writer(1), seq, true),
                &[],
            );
        }
        assert_eq!((c.len(), c.rejected), (2, 1));
    }

    #[test]
    fn replaced_samples_leave_no_arrival_entries_behind() {
        // Regression: a KEEP_LAST reader dropped the sample a new one replaced but kept its
        // entry in the arrival order, so `order` grew by one entry per sample for as long as
        // the reader lived (and every take walked all of them).
        let mut c = ReaderCache::new(CacheLimits {
            depth: Some(1),
            max_samples: usize::MAX,
            max_instances: usize::MAX,
            max_samples_per_instance: usize::MAX,
        });
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        for seq in 1..=10_000 {
            let handle = if seq % 2 == 0 { a } else { b };
            c.insert(handle, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
        }
        assert_eq!((c.len(), c.order.len()), (2, 2));
        let seqs: Vec<i64> = c
            .collect(NOW, 10, true, Selection::ANY)
            .iter()
            .map(|t| t.info.sequence_number)
            .collect();
        assert_eq!(seqs, vec![9_999, 10_000]);
        assert!(c.order.is_empty());
    }

    #[test]
    fn instances_and_samples_per_instance_are_bounded() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: None,
            max_samples: 100,
            max_instances: 3,
            max_samples_per_instance: 2,
        });
        for n in 0..5u8 {
            for seq in 1..=3 {
                let handle = InstanceHandle([n; 16]);
                c.insert(handle, ChangeKind::Alive, stored(writer(1), seq, true), &[]);
            }
        }
        // 3 instances of 2 samples; per instance one more refused, 2 instances refused.
        assert_eq!(c.len(), 6);
        assert_eq!(c.rejected, 3 + 2 * 3);
        assert_eq!(
            c.rejected_status().last_reason,
            Some(SampleRejectedReason::InstancesLimit)
        );
        assert!(!c.contains(InstanceHandle([4; 16])));
    }

    #[test]
    fn a_key_hash_only_dispose_finds_its_instance_by_any_known_hash() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: None,
            max_samples: usize::MAX,
            max_instances: usize::MAX,
            max_samples_per_instance: usize::MAX,
        });
        let (a, other_rule) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        c.insert(
            a,
            ChangeKind::Alive,
            stored(writer(1), 1, true),
            &[other_rule],
        );
        assert_eq!(c.instance_by_hash(a), Some(a));
        assert_eq!(c.instance_by_hash(other_rule), Some(a));
        assert_eq!(c.instance_by_hash(InstanceHandle([3; 16])), None);
        // Fast DDS's dispose: no payload, the instance named by its hash.
        let mut dispose = stored(writer(1), 2, false);
        dispose.payload = ReceivedPayload::default();
        c.insert(a, ChangeKind::DisposedUnregistered, dispose, &[]);
        let taken = c.collect(NOW, usize::MAX, true, Selection::ANY);
        assert_eq!(taken.len(), 2);
        // It carries the key the instance was first seen with (sample 1's payload).
        assert_eq!(
            (&taken[1].payload[..], taken[1].key_only),
            (&[1u8][..], false)
        );
        assert_eq!(
            taken[1].info.instance_state,
            InstanceState::NotAliveDisposed
        );
        // Taken and disposed without writers: forgotten, with every hash it was known by.
        assert_eq!(c.instance_by_hash(a), None);
        assert_eq!(c.instance_by_hash(other_rule), None);
    }
}
