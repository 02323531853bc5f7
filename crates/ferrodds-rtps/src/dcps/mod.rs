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
pub mod instance_keys;
pub mod liveliness;
mod reader;
pub mod sample;
pub mod status;
mod writer;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, SystemTime};

pub use arrival::{Preparation, Prepared};
pub use cache::{PurgeDelays, Taken};
pub use delivery::ContentFilter;
pub use event::Event;
pub use instance_keys::InstanceKeys;
pub use liveliness::Heard;
pub use reader::DcpsReader;
pub use sample::{InstanceHandle, InstanceState, SampleInfo, SampleState, Selection, ViewState};
pub use writer::DcpsWriter;

use crate::discovery_engine::{Discovery, DiscoveryEvent};
use crate::qos::{LivelinessKind, QosPolicyId};
use crate::reader::ReceivedChange;
use crate::time::{earliest, Timestamp};
use crate::wire::{EntityId, Guid};
use reader::Slot;

/// The DCPS endpoints of a core and what they have to report.
#[derive(Debug)]
pub(crate) struct Dcps {
    pub(crate) readers: BTreeMap<EntityId, DcpsReader>,
    pub(crate) writers: BTreeMap<EntityId, DcpsWriter>,
    /// Each endpoint's next deadline timer, ordered by time, and the same per endpoint.
    timers: BTreeSet<(Timestamp, EntityId)>,
    scheduled: BTreeMap<EntityId, Timestamp>,
    pub(crate) events: VecDeque<Event>,
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
}

impl Dcps {
    pub(crate) fn new() -> Self {
        Dcps {
            readers: BTreeMap::new(),
            writers: BTreeMap::new(),
            timers: BTreeSet::new(),
            scheduled: BTreeMap::new(),
            events: VecDeque::new(),
            preparations: VecDeque::new(),
            defer_preparation: false,
            wall_epoch: SystemTime::UNIX_EPOCH,
            next_ticket: 0,
            touched: Vec::new(),
            reader_ids: Vec::new(),
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
                    self.events
                        .push_back(Event::SubscriptionMatched { reader: id, status });
                    self.events.push_back(Event::LivelinessChanged {
                        reader: id,
                        status: liveliness,
                    });
                    self.touch(id);
                    self.reschedule(id);
                }
            }
            DiscoveryEvent::IncompatibleQos {
                local, policies, ..
            } => self.incompatible(local.entity_id, policies.last().copied(), None),
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
            reader.admit(change, found, passes, now, wall);
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
        while reader.slots.front().is_some_and(|s| s.prepared.is_some()) {
            let Some(Slot {
                prepared: Some(p), ..
            }) = reader.slots.pop_front()
            else {
                break;
            };
            reader.admit(p.change, p.found, p.passes_filter, now, wall);
        }
        self.touch(id);
        self.reschedule(id);
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
