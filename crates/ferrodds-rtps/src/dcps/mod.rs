//! DCPS in the sans-IO core: what a data reader keeps for the application and what it lets
//! in, what a data writer reports, and the statuses of both — driven by the timestamps the
//! driver hands in, reporting through [`Event`]s, with no clock, thread or lock of its own.
//!
//! - [`sample`]: instance handles, sample/view/instance states, `SampleInfo`.
//! - `cache`: a reader's instances and samples (KEEP_LAST/KEEP_ALL, RESOURCE_LIMITS,
//!   instance states, key-hash aliases for other vendors' disposes, lifespan expiry).
//! - `delivery`: the QoS rules applied to an arriving change (content filter, exclusive
//!   ownership, lifespan, time-based filter, deadline).
//! - `deadline`: DEADLINE counting, per instance, on a queue of due times.
//! - [`liveliness`]: LIVELINESS_CHANGED of readers (their writers alive or not) and
//!   LIVELINESS_LOST of writers, from stamps the RTPS reader keeps, looked at on timers.
//! - `presentation`: PRESENTATION's coherent sets, marked by publishers and held back by
//!   subscribers until whole; `begin_access`/`end_access`.
//! - [`arrival`]: a received change's two steps, preparation (key, filter; may run
//!   outside the driver's lock) and admission.
//! - [`instance_keys`]: how a reader finds an instance, for a derived or a runtime type.
//! - [`DcpsReader`], [`DcpsWriter`]: the per-endpoint state; [`status`], [`Event`].
//!
//! [`ParticipantCore`](crate::ParticipantCore) owns one of each per DCPS endpoint and
//! drives them from its `handle_*` calls; endpoints without DCPS state (the builtin ones,
//! the simulator's bare RTPS endpoints) are left alone.

pub mod arrival;
mod cache;
mod deadline;
mod delivery;
mod event;
pub mod filter_expression;
pub mod instance_keys;
pub mod liveliness;
mod presentation;
mod reader;
pub mod sample;
pub mod status;
pub mod status_reads;
mod writer;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, SystemTime};

pub use arrival::{Preparation, Prepared};
pub use cache::{PurgeDelays, Taken};
pub use delivery::ContentFilter;
pub use event::Event;
pub use filter_expression::{FilterError, FilterExpression};
pub use instance_keys::InstanceKeys;
pub use liveliness::Heard;
pub use reader::DcpsReader;
pub use sample::{InstanceHandle, InstanceState, SampleInfo, SampleState, Selection, ViewState};
pub use writer::DcpsWriter;

use crate::coherence::Coherence;
use crate::discovery_engine::{Discovery, DiscoveryEvent};
use crate::qos::{LivelinessKind, PresentationAccessScope, QosPolicyId};
use crate::reader::ReceivedChange;
use crate::time::{earliest, Timestamp};
use crate::wire::{EntityId, Guid, GuidPrefix, SequenceNumber};
use presentation::{EndMarkers, GroupSet, Held, Outcome, PublisherGroup};
use reader::Slot;

/// At most this many group coherent sets are collected at once per participant; beyond,
/// the oldest is given up (a peer could otherwise open sets that never end).
const MAX_GROUP_SETS: usize = 256;

/// The DCPS endpoints of a core and what they have to report.
#[derive(Debug)]
pub(crate) struct Dcps {
    pub(crate) readers: BTreeMap<EntityId, DcpsReader>,
    pub(crate) writers: BTreeMap<EntityId, DcpsWriter>,
    /// Each endpoint's next deadline timer, ordered by time, and the same per endpoint.
    timers: BTreeSet<(Timestamp, EntityId)>,
    scheduled: BTreeMap<EntityId, Timestamp>,
    pub(crate) events: VecDeque<Event>,
    /// Per topic name: remote endpoints found with another type (INCONSISTENT_TOPIC).
    pub(crate) inconsistent_topics: BTreeMap<String, u64>,
    preparations: VecDeque<Preparation>,
    /// True when the driver prepares changes itself ([`Dcps::preparations`]); false: the
    /// core prepares them as they arrive.
    pub(crate) defer_preparation: bool,
    /// The wall-clock time at `Timestamp(0)`: source timestamps and lifespans are wall-clock
    /// times, compared with the driver's `now` through this.
    pub(crate) wall_epoch: SystemTime,
    next_ticket: u64,
    /// Readers that stored or rejected something since events were last made (a few at
    /// a time: a vector, reused, rather than a set allocated per input).
    touched: Vec<EntityId>,
    /// The readers' ids, reused by each input's pass over them.
    pub(crate) reader_ids: Vec<EntityId>,
    /// Local publishers' coherent sets and group order, by publisher.
    publishers: BTreeMap<u32, PublisherGroup>,
    /// Group coherent sets being collected: by (local subscriber, remote participant,
    /// group sequence number of the set).
    group_sets: BTreeMap<(u32, GuidPrefix, i64), GroupSet>,
    /// Subscribers between `begin_access` and `end_access` (calls nest), and the sets
    /// that completed meanwhile, per reader, in order.
    access: BTreeMap<u32, u32>,
    deferred: Vec<(EntityId, Vec<Held>)>,
}

impl Dcps {
    pub(crate) fn new() -> Self {
        Dcps {
            readers: BTreeMap::new(),
            writers: BTreeMap::new(),
            timers: BTreeSet::new(),
            scheduled: BTreeMap::new(),
            events: VecDeque::new(),
            inconsistent_topics: BTreeMap::new(),
            preparations: VecDeque::new(),
            defer_preparation: false,
            wall_epoch: SystemTime::UNIX_EPOCH,
            next_ticket: 0,
            touched: Vec::new(),
            reader_ids: Vec::new(),
            publishers: BTreeMap::new(),
            group_sets: BTreeMap::new(),
            access: BTreeMap::new(),
            deferred: Vec::new(),
        }
    }

    /// `now` as a wall-clock time.
    pub(crate) fn wall(&self, now: Timestamp) -> SystemTime {
        self.wall_epoch + Duration::from_nanos(now.0)
    }

    /// Forgets a local endpoint's DCPS state and its queued work.
    pub(crate) fn remove(&mut self, id: EntityId) {
        self.readers.remove(&id);
        self.writers.remove(&id);
        self.preparations.retain(|p| p.reader != id);
        self.deferred.retain(|d| d.0 != id);
        self.touched.retain(|t| *t != id);
        if let Some(t) = self.scheduled.remove(&id) {
            self.timers.remove(&(t, id));
        }
    }

    /// Folds a discovery event into the statuses of the local DCPS endpoint it concerns.
    pub(crate) fn on_discovery_event(
        &mut self,
        event: &DiscoveryEvent,
        discovery: &Discovery,
        now: Timestamp,
    ) {
        match event {
            DiscoveryEvent::Matched { local, remote } => {
                let id = local.entity_id;
                if let Some(w) = self.writers.get_mut(&id) {
                    w.reader_matched(*remote);
                    let status = w.matches().status();
                    self.events
                        .push_back(Event::PublicationMatched { writer: id, status });
                }
                if let Some(r) = self.readers.get_mut(&id) {
                    r.writer_matched(*remote, discovery.endpoint_qos(*remote), now);
                    let status = r.matches().status();
                    let liveliness = r.liveliness.status();
                    self.events
                        .push_back(Event::SubscriptionMatched { reader: id, status });
                    self.events.push_back(Event::LivelinessChanged {
                        reader: id,
                        status: liveliness,
                    });
                    self.reschedule(id);
                }
            }
            DiscoveryEvent::QosChanged { local, remote } => {
                // A reader keeps its writers' OWNERSHIP_STRENGTH and LIFESPAN.
                if let Some(r) = self.readers.get_mut(&local.entity_id) {
                    r.delivery
                        .writer_matched(*remote, discovery.endpoint_qos(*remote));
                }
            }
            DiscoveryEvent::Unmatched { local, remote } => {
                let id = local.entity_id;
                if let Some(w) = self.writers.get_mut(&id) {
                    w.reader_unmatched(*remote);
                    let status = w.matches().status();
                    self.events
                        .push_back(Event::PublicationMatched { writer: id, status });
                }
                if let Some(r) = self.readers.get_mut(&id) {
                    r.writer_unmatched(*remote, now);
                    let status = r.matches().status();
                    let liveliness = r.liveliness.status();
                    let group = r.group;
                    self.events
                        .push_back(Event::SubscriptionMatched { reader: id, status });
                    self.events.push_back(Event::LivelinessChanged {
                        reader: id,
                        status: liveliness,
                    });
                    self.touch(id);
                    self.reschedule(id);
                    // A group set no longer waits for the part of a writer gone.
                    if let Some(sub) = group {
                        let keys: Vec<_> = self
                            .group_sets
                            .keys()
                            .filter(|k| k.0 == sub && k.1 == remote.prefix)
                            .copied()
                            .collect();
                        for key in keys {
                            self.check_group(key, now);
                        }
                    }
                }
            }
            DiscoveryEvent::IncompatibleQos {
                local, policies, ..
            } => self.incompatible(local.entity_id, policies.last().copied(), None),
            DiscoveryEvent::InconsistentTopic { topic, .. } => {
                let count = self.inconsistent_topics.entry(topic.clone()).or_default();
                *count += 1;
                let total_count = *count;
                self.events.push_back(Event::InconsistentTopic {
                    topic: topic.clone(),
                    total_count,
                });
            }
            DiscoveryEvent::IncompatibleType { local, reason, .. } => self.incompatible(
                local.entity_id,
                Some(QosPolicyId::TypeConsistencyEnforcement),
                Some(reason.clone()),
            ),
            _ => {}
        }
    }

    fn incompatible(
        &mut self,
        id: EntityId,
        policy: Option<QosPolicyId>,
        mismatch: Option<ferrodds_cdr::dynamic::assignable::NotAssignable>,
    ) {
        let update = |s: &mut status::IncompatibleStatus| {
            s.total_count += 1;
            s.last_policy = policy;
            s.last_type_mismatch = mismatch.clone();
            s.clone()
        };
        if let Some(w) = self.writers.get_mut(&id) {
            let status = update(&mut w.incompatible);
            self.events
                .push_back(Event::OfferedIncompatibleQos { writer: id, status });
        } else if let Some(r) = self.readers.get_mut(&id) {
            let status = update(&mut r.incompatible);
            self.events
                .push_back(Event::RequestedIncompatibleQos { reader: id, status });
        }
    }

    /// A change the RTPS reader `id` delivered: admitted now, or queued for preparation.
    pub(crate) fn receive(&mut self, id: EntityId, change: ReceivedChange, now: Timestamp) {
        let wall = self.wall(now);
        if !self.readers.contains_key(&id) {
            return;
        }
        self.touch(id);
        let Some(reader) = self.readers.get_mut(&id) else {
            return;
        };
        if (!self.defer_preparation || !reader.needs_preparation()) && reader.slots.is_empty() {
            let (found, passes) = reader.prepare_inline(&change);
            if reader.presentation.coherent_access {
                self.offer(
                    id,
                    Held {
                        change,
                        found,
                        passes,
                    },
                    now,
                );
            } else if !is_end_marker(&change) {
                reader.admit(change, found, passes, now, wall);
            }
            self.reschedule(id);
            return;
        }
        self.next_ticket += 1;
        let ticket = self.next_ticket;
        reader.slots.push_back(Slot {
            ticket,
            prepared: None,
        });
        let preparation = Preparation {
            reader: id,
            ticket,
            change,
            keys: reader.keys.clone(),
            filter: reader.delivery.filter().cloned(),
        };
        if self.defer_preparation {
            self.preparations.push_back(preparation);
        } else {
            self.handle_prepared(preparation.prepare(), now);
        }
    }

    /// The next change for the driver to prepare.
    pub(crate) fn poll_preparation(&mut self) -> Option<Preparation> {
        self.preparations.pop_front()
    }

    /// A prepared change is back: it and every prepared one behind it, in arrival order,
    /// are admitted.
    pub(crate) fn handle_prepared(&mut self, prepared: Prepared, now: Timestamp) {
        let wall = self.wall(now);
        let id = prepared.reader;
        let Some(reader) = self.readers.get_mut(&id) else {
            return;
        };
        let Some(slot) = reader
            .slots
            .iter_mut()
            .find(|s| s.ticket == prepared.ticket && s.prepared.is_none())
        else {
            return;
        };
        slot.prepared = Some(prepared);
        let mut coherent = Vec::new();
        while reader.slots.front().is_some_and(|s| s.prepared.is_some()) {
            let Some(Slot {
                prepared: Some(p), ..
            }) = reader.slots.pop_front()
            else {
                break;
            };
            if reader.presentation.coherent_access {
                coherent.push(Held {
                    change: p.change,
                    found: p.found,
                    passes: p.passes_filter,
                });
            } else if !is_end_marker(&p.change) {
                reader.admit(p.change, p.found, p.passes_filter, now, wall);
            }
        }
        for held in coherent {
            self.offer(id, held, now);
        }
        self.touch(id);
        self.reschedule(id);
    }

    /// A change for reader `id`, whose subscriber has coherent access: held with its set,
    /// or let in.
    fn offer(&mut self, id: EntityId, held: Held, now: Timestamp) {
        let Some(r) = self.readers.get_mut(&id) else {
            return;
        };
        let group_scope = r.presentation.access_scope == PresentationAccessScope::Group;
        let limit = r.cache.max_samples();
        let group = r.group;
        let mut out = Vec::new();
        r.coherent.offer(held, group_scope, limit, &mut out);
        for outcome in out {
            match outcome {
                Outcome::Admit(changes) => self.commit(id, changes, now),
                Outcome::GroupPart {
                    writer,
                    set,
                    writers,
                } => self.group_part(group, id, writer, set, writers, now),
            }
        }
    }

    /// Lets `changes` into reader `id`'s cache, or, while its subscriber is being
    /// accessed, keeps them until the access ends.
    fn commit(&mut self, id: EntityId, changes: Vec<Held>, now: Timestamp) {
        if changes.is_empty() {
            return;
        }
        let wall = self.wall(now);
        let Some(r) = self.readers.get_mut(&id) else {
            return;
        };
        if r.group
            .is_some_and(|g| self.access.get(&g).is_some_and(|&n| n > 0))
        {
            self.deferred.push((id, changes));
            return;
        }
        for h in changes {
            r.admit(h.change, h.found, h.passes, now, wall);
        }
        self.touch(id);
        self.reschedule(id);
    }

    /// Writer `writer`'s part of group set `set` is complete in reader `id` (of subscriber
    /// `group`): the set is let in when every part its subscriber's readers wait for is.
    fn group_part(
        &mut self,
        group: Option<u32>,
        id: EntityId,
        writer: Guid,
        set: i64,
        writers: Option<std::sync::Arc<[EntityId]>>,
        now: Timestamp,
    ) {
        let Some(sub) = group else {
            let part = self.take_group_part(id, writer.prefix, set, Some(writer));
            self.commit(id, part, now);
            return;
        };
        let key = (sub, writer.prefix, set);
        if !self.group_sets.contains_key(&key) && self.group_sets.len() >= MAX_GROUP_SETS {
            self.group_sets.pop_first();
        }
        let state = self.group_sets.entry(key).or_default();
        state.done.insert(writer.entity_id);
        if writers.is_some() {
            state.writers = writers;
        }
        if state.writers.is_none() {
            // Not listed (another vendor's publisher, or a set a change ended rather than
            // a marker): the part goes in on its own, as with TOPIC scope.
            let part = self.take_group_part(id, writer.prefix, set, Some(writer));
            self.commit(id, part, now);
            return;
        }
        self.check_group(key, now);
    }

    fn take_group_part(
        &mut self,
        id: EntityId,
        prefix: GuidPrefix,
        set: i64,
        writer: Option<Guid>,
    ) -> Vec<Held> {
        self.readers
            .get_mut(&id)
            .map(|r| r.coherent.take_group(prefix, set, writer))
            .unwrap_or_default()
    }

    /// Lets group set `key` into its subscriber's readers if every listed writer that one
    /// of them is matched with finished its part.
    fn check_group(&mut self, key: (u32, GuidPrefix, i64), now: Timestamp) {
        let (sub, prefix, set) = key;
        let Some(state) = self.group_sets.get(&key) else {
            return;
        };
        let Some(listed) = &state.writers else {
            return;
        };
        let readers = &self.readers;
        let waited_for = |w: &EntityId| {
            let guid = Guid::new(prefix, *w);
            readers
                .values()
                .any(|r| r.group == Some(sub) && r.matches().remotes().contains(&guid))
        };
        if !listed
            .iter()
            .all(|w| state.done.contains(w) || !waited_for(w))
        {
            return;
        }
        self.group_sets.remove(&key);
        let ids: Vec<EntityId> = self
            .readers
            .iter()
            .filter(|(_, r)| r.group == Some(sub))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let part = self.take_group_part(id, prefix, set, None);
            self.commit(id, part, now);
        }
    }

    /// The application begins reading subscriber `group` (`Subscriber::begin_access`).
    pub(crate) fn begin_access(&mut self, group: u32) {
        *self.access.entry(group).or_default() += 1;
    }

    /// DCPS `get_datareaders` of subscriber `group`: its readers, one entry per sample
    /// `selection` selects, in the order that reading one sample from each in turn reads
    /// them in. Each reader's own order is kept; between readers, samples of one remote
    /// publisher go by their group sequence numbers (GROUP ordered access), samples
    /// without one after those with, and publishers by their participant's GUID prefix.
    pub(crate) fn readers_in_order(
        &self,
        group: u32,
        now: Timestamp,
        selection: Selection,
    ) -> Vec<EntityId> {
        let queues: Vec<(EntityId, Vec<(crate::wire::GuidPrefix, i64)>)> = self
            .readers
            .iter()
            .filter(|(_, r)| r.group == Some(group))
            .map(|(id, r)| {
                let order = r
                    .cache
                    .group_order(now, selection)
                    .into_iter()
                    .map(|(writer, seq)| (writer.prefix, if seq > 0 { seq } else { i64::MAX }))
                    .collect();
                (*id, order)
            })
            .collect();
        let total = queues.iter().map(|(_, q)| q.len()).sum();
        let mut heads = vec![0usize; queues.len()];
        let mut out = Vec::with_capacity(total);
        for _ in 0..total {
            // The reader whose next sample comes first (a few readers: a scan is enough).
            let next = (0..queues.len())
                .filter(|&k| heads[k] < queues[k].1.len())
                .min_by_key(|&k| (queues[k].1[heads[k]], k));
            let Some(k) = next else { break };
            heads[k] += 1;
            out.push(queues[k].0);
        }
        out
    }

    /// The application ends reading subscriber `group`: the sets that completed meanwhile
    /// go in.
    pub(crate) fn end_access(&mut self, group: u32, now: Timestamp) {
        match self.access.get_mut(&group) {
            Some(n) if *n > 1 => {
                *n -= 1;
                return;
            }
            Some(_) => {
                self.access.remove(&group);
            }
            None => return,
        }
        let readers = &self.readers;
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|(id, _)| readers.get(id).is_some_and(|r| r.group == Some(group)));
        self.deferred = rest;
        for (id, changes) in due {
            self.commit(id, changes, now);
        }
    }

    /// Local writer `id` is one of publisher `group`'s.
    pub(crate) fn add_to_publisher(&mut self, group: u32) {
        self.publishers.entry(group).or_default();
    }

    /// The coherence of the next change of writer `id`, which gets sequence number `next`
    /// (`None` when its publisher has no coherent set open and no group order).
    pub(crate) fn mark(&mut self, id: EntityId, next: SequenceNumber) -> Option<Coherence> {
        let w = self.writers.get(&id)?;
        self.publishers
            .get_mut(&w.group?)?
            .mark(id, &w.presentation, next)
    }

    /// True when some local writer belongs to a publisher (whose changes may be marked).
    pub(crate) fn has_publishers(&self) -> bool {
        !self.publishers.is_empty()
    }

    /// Publisher `group` opens a coherent set.
    pub(crate) fn begin_coherent_changes(&mut self, group: u32) {
        self.publishers.entry(group).or_default().begin();
    }

    /// Publisher `group` closes its coherent set: the end markers its writers send.
    pub(crate) fn end_coherent_changes(&mut self, group: u32) -> EndMarkers {
        let writers = &self.writers;
        let Some(p) = self.publishers.get_mut(&group) else {
            return Vec::new();
        };
        p.end(|id| {
            writers
                .get(&id)
                .is_some_and(|w| w.presentation.access_scope == PresentationAccessScope::Group)
        })
    }

    fn touch(&mut self, id: EntityId) {
        if !self.touched.contains(&id) {
            self.touched.push(id);
        }
    }

    /// The RTPS reader under DCPS reader `id` counts `lost` samples lost so far.
    pub(crate) fn lost(&mut self, id: EntityId, lost: u64) {
        let Some(r) = self.readers.get_mut(&id) else {
            return;
        };
        if r.lost.total_count != lost {
            r.lost.total_count = lost;
            let status = r.lost;
            self.events
                .push_back(Event::SampleLost { reader: id, status });
        }
    }

    /// Puts endpoint `id`'s timer where its deadline or liveliness is next due.
    pub(crate) fn reschedule(&mut self, id: EntityId) {
        let due = match (self.readers.get(&id), self.writers.get(&id)) {
            (Some(r), _) => earliest(
                earliest(r.delivery.deadline.next_due(), r.liveliness.next_due()),
                r.cache.next_purge(),
            ),
            (None, Some(w)) => earliest(w.deadline.next_due(), w.liveliness.next_due()),
            (None, None) => None,
        };
        if self.scheduled.get(&id).copied() == due {
            return;
        }
        if let Some(old) = self.scheduled.remove(&id) {
            self.timers.remove(&(old, id));
        }
        if let Some(due) = due {
            self.scheduled.insert(id, due);
            self.timers.insert((due, id));
        }
    }

    /// After a write: the writer's deadline.
    pub(crate) fn written(&mut self, id: EntityId) {
        self.reschedule(id);
    }

    /// The next deadline timer.
    pub(crate) fn poll_timeout(&self) -> Option<Timestamp> {
        self.timers.first().map(|(t, _)| *t)
    }

    /// Counts the deadlines that passed by `now`, checks the leases that may have run
    /// out, and reports what changed a status. `heard(reader, writer)`: when the writer
    /// matched with a reader was last heard from.
    pub(crate) fn handle_timeout(
        &mut self,
        now: Timestamp,
        heard: &mut dyn FnMut(EntityId, Guid) -> Heard,
    ) {
        while let Some(&(due, id)) = self.timers.first() {
            if due > now {
                break;
            }
            self.timers.pop_first();
            self.scheduled.remove(&id);
            self.report_deadline(id, now);
            self.check_liveliness(id, now, heard);
            if let Some(r) = self.readers.get_mut(&id) {
                r.cache.purge(now);
            }
            self.reschedule(id);
        }
    }

    /// Looks at the liveliness of endpoint `id`: a reader's writers (those whose lease ran
    /// out, and those not alive that came back), or a writer's own lease.
    pub(crate) fn check_liveliness(
        &mut self,
        id: EntityId,
        now: Timestamp,
        heard: &mut dyn FnMut(EntityId, Guid) -> Heard,
    ) {
        if let Some(r) = self.readers.get_mut(&id) {
            let transitions = r.liveliness.check(now, &mut |w| heard(id, w));
            if transitions.is_empty() {
                return;
            }
            for &(writer, alive) in &transitions {
                if !alive {
                    r.writer_not_alive(writer, now);
                }
            }
            let status = r.liveliness.status();
            self.events
                .push_back(Event::LivelinessChanged { reader: id, status });
            self.touch(id);
        } else if let Some(w) = self.writers.get_mut(&id) {
            if w.liveliness.check(now) {
                let status = w.liveliness.status();
                self.events
                    .push_back(Event::LivelinessLost { writer: id, status });
            }
        }
    }

    /// Readers some of whose writers are not alive: an input may have brought them back.
    pub(crate) fn readers_waiting_for_liveliness(&self, out: &mut Vec<EntityId>) {
        out.extend(
            self.readers
                .iter()
                .filter(|(_, r)| r.liveliness.has_not_alive())
                .map(|(id, _)| *id),
        );
    }

    /// The participant asserted at `now`: its MANUAL_BY_PARTICIPANT writers are renewed in
    /// place (a write of such a writer comes here, so nothing is allocated); only those
    /// whose liveliness had been lost get their lease timer back.
    pub(crate) fn assert_manual_by_participant(&mut self, now: Timestamp) {
        let mut lost = Vec::new();
        for (id, w) in &mut self.writers {
            if w.liveliness.kind() == LivelinessKind::ManualByParticipant
                && w.liveliness.asserted(now)
            {
                lost.push(*id);
            }
        }
        for id in lost {
            self.reschedule(id);
        }
    }

    fn report_deadline(&mut self, id: EntityId, now: Timestamp) {
        if let Some(r) = self.readers.get_mut(&id) {
            let status = r.delivery.deadline.status(now);
            if status.total_count != r.deadline_reported {
                r.deadline_reported = status.total_count;
                self.events
                    .push_back(Event::RequestedDeadlineMissed { reader: id, status });
            }
        } else if let Some(w) = self.writers.get_mut(&id) {
            let status = w.deadline.status(now);
            if status.total_count != w.deadline_reported {
                w.deadline_reported = status.total_count;
                self.events
                    .push_back(Event::OfferedDeadlineMissed { writer: id, status });
            }
        }
    }

    /// Makes the events of what the readers touched since the last call stored or
    /// rejected.
    pub(crate) fn flush(&mut self) {
        for &id in &self.touched {
            let Some(r) = self.readers.get_mut(&id) else {
                continue;
            };
            let rejected = r.sample_rejected();
            if rejected.total_count != r.rejected_reported {
                r.rejected_reported = rejected.total_count;
                self.events.push_back(Event::SampleRejected {
                    reader: id,
                    status: rejected,
                });
            }
            if std::mem::take(&mut r.data_arrived) {
                self.events.push_back(Event::DataAvailable { reader: id });
            }
        }
        self.touched.clear();
    }
}

/// A change that only ends a coherent set (no sample): a reader without coherent access
/// drops it.
fn is_end_marker(change: &ReceivedChange) -> bool {
    change.coherence.as_ref().is_some_and(|c| c.end)
}
