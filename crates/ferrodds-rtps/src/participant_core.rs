//! The participant core: a participant's RTPS endpoints and its discovery engine behind one
//! sans-IO surface — `handle_datagram`, `handle_timeout`, `poll_transmit`, `poll_event`,
//! `poll_timeout` — so that every driver (the threaded runtime, the network simulator, the
//! fuzz targets) feeds the protocol the same way instead of repeating the glue between the
//! routing, discovery and DCPS.
//!
//! The DCPS layer ([`crate::dcps`]) lives here too: a local endpoint given a
//! [`DcpsReader`]/[`DcpsWriter`] has its received changes admitted into its cache by the
//! QoS rules, its matches and statuses kept, and its status changes reported by
//! [`ParticipantCore::poll_event`], all on the `now` the driver passes.

use std::time::SystemTime;

use crate::dcps::status::InconsistentTopicStatus;
use crate::dcps::status_reads::{Counted, StatusKind, StatusMask, StatusReads, COUNTED};
use crate::dcps::{
    Dcps, DcpsReader, DcpsWriter, Event, Heard, InstanceHandle, Preparation, Prepared,
};
use crate::discovery_engine::{Discovery, DiscoveryConfig, DiscoveryEvent, LocalEndpoint};
use crate::participant::Participant;
use crate::qos::{EndpointQos, LivelinessKind};
use crate::time::{earliest, Timestamp};
use crate::transmit::Transmit;
use crate::wire::{EntityId, Guid, Locator, SequenceNumber};
use crate::writer::{Change, WriteError};

/// A participant's endpoints, its discovery and its DCPS state, driven as one.
#[derive(Debug)]
pub struct ParticipantCore {
    /// The endpoints and the routing of received submessages. User endpoints are added
    /// here, then announced with [`ParticipantCore::add_local`].
    pub rtps: Participant,
    /// SPDP, SEDP, TypeLookup and matching.
    pub discovery: Discovery,
    dcps: Dcps,
    /// What the application last read of each status.
    status_reads: StatusReads,
}

impl ParticipantCore {
    /// The core of `rtps`, running discovery as `config` says (its builtin endpoints are
    /// added to `rtps`; the first SPDP announcement is queued).
    pub fn new(now: Timestamp, mut rtps: Participant, config: DiscoveryConfig) -> Self {
        let discovery = Discovery::new(now, config, &mut rtps);
        ParticipantCore {
            rtps,
            discovery,
            dcps: Dcps::new(),
            status_reads: StatusReads::default(),
        }
    }

    /// The counters of status `kind` of writer or reader `id` at `now` (`None`: the entity
    /// has no such status).
    pub fn status_counters(
        &mut self,
        id: EntityId,
        kind: StatusKind,
        now: Timestamp,
    ) -> Option<[u64; 2]> {
        let c = match kind {
            StatusKind::SubscriptionMatched => {
                self.data_reader_ref(id)?.matches().status().counters()
            }
            StatusKind::PublicationMatched => {
                self.data_writer_ref(id)?.matches().status().counters()
            }
            StatusKind::RequestedIncompatibleQos => {
                self.data_reader_ref(id)?.incompatible().counters()
            }
            StatusKind::OfferedIncompatibleQos => {
                self.data_writer_ref(id)?.incompatible().counters()
            }
            StatusKind::RequestedDeadlineMissed => {
                self.data_reader(id)?.deadline_missed(now).counters()
            }
            StatusKind::OfferedDeadlineMissed => {
                self.data_writer(id)?.deadline_missed(now).counters()
            }
            StatusKind::SampleLost => self.data_reader_ref(id)?.sample_lost().counters(),
            StatusKind::SampleRejected => self.data_reader_ref(id)?.sample_rejected().counters(),
            StatusKind::LivelinessChanged => {
                self.data_reader_ref(id)?.liveliness_changed().counters()
            }
            StatusKind::LivelinessLost => self.data_writer_ref(id)?.liveliness_lost().counters(),
            _ => return None,
        };
        Some(c)
    }

    /// Whether a status of writer or reader `id` in `mask` changed since the application
    /// last read it ([`ParticipantCore::read_status`]; DATA_AVAILABLE: samples not read
    /// yet are waiting): a status condition's trigger.
    pub fn status_changed(&mut self, id: EntityId, mask: StatusMask, now: Timestamp) -> bool {
        COUNTED
            .iter()
            .chain(&[StatusKind::DataAvailable])
            .filter(|&&k| mask.contains(k))
            .any(|&kind| match kind {
                StatusKind::DataAvailable => {
                    self.data_reader_ref(id).is_some_and(|r| r.has_unread(now))
                }
                kind => self
                    .status_counters(id, kind, now)
                    .is_some_and(|c| self.status_reads.changed(id, kind, c)),
            })
    }

    /// The application reads `status` (status `kind` of `id`, as the core holds it): it
    /// gets its changes since the last read, and the status counts as read.
    pub fn read_status<S: Counted>(&mut self, id: EntityId, kind: StatusKind, status: S) -> S {
        self.status_reads.read(id, kind, status)
    }

    /// The application reads topic `name`'s INCONSISTENT_TOPIC `status` (as
    /// [`ParticipantCore::read_status`]).
    pub fn read_topic_status(
        &mut self,
        name: &str,
        status: InconsistentTopicStatus,
    ) -> InconsistentTopicStatus {
        self.status_reads.read_topic(name, status)
    }

    /// Sets the wall-clock time at `Timestamp(0)` (the Unix epoch unless set): what
    /// source timestamps and lifespans are measured against.
    pub fn set_wall_clock(&mut self, at_zero: SystemTime) {
        self.dcps.wall_epoch = at_zero;
    }

    /// `now` as a wall-clock time.
    pub fn wall_time(&self, now: Timestamp) -> SystemTime {
        self.dcps.wall(now)
    }

    /// With `true`, received changes for readers with keys or a content filter wait for
    /// the driver to prepare them ([`ParticipantCore::poll_preparation`]), so that it can
    /// do so without its lock; with `false` (the default) the core prepares them itself.
    pub fn defer_preparation(&mut self, defer: bool) {
        self.dcps.defer_preparation = defer;
    }

    /// Takes in one datagram that came from `origin`, and what discovery and the DCPS
    /// readers make of it.
    pub fn handle_datagram(&mut self, now: Timestamp, origin: Locator, datagram: &[u8]) {
        self.rtps.handle_datagram(now, origin, datagram);
        self.discovery.process(now, &mut self.rtps);
        self.after_input(now);
    }

    /// Runs what is due: the endpoints' timers (heartbeats, repairs), then discovery's
    /// (announcements, leases, TypeLookup retries), then the DCPS deadlines.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.rtps.handle_timeout(now);
        self.discovery.handle_timeout(now, &mut self.rtps);
        self.discovery.process(now, &mut self.rtps);
        let (rtps, discovery) = (&self.rtps, &self.discovery);
        self.dcps.handle_timeout(now, &mut |reader, writer| {
            heard(rtps, discovery, now, reader, writer)
        });
        self.after_input(now);
    }

    /// Discovery's events into the DCPS statuses, and the DCPS readers' received changes
    /// into their caches.
    fn after_input(&mut self, now: Timestamp) {
        let mut asserted = false;
        while let Some(event) = self.discovery.poll_event() {
            if matches!(event, DiscoveryEvent::LivelinessAsserted { .. }) {
                // Not passed on: one per SPDP announcement of every peer.
                asserted = true;
                continue;
            }
            self.dcps.on_discovery_event(&event, &self.discovery, now);
            self.dcps.events.push_back(Event::Discovery(event));
        }
        // Only the readers the input routed something to can have changes or losses.
        let mut ids = std::mem::take(&mut self.dcps.reader_ids);
        ids.clear();
        self.rtps.take_touched_readers(&mut ids);
        // Readers without DCPS state (discovery's, a simulator's bare ones) keep their
        // changes for whoever polls them.
        ids.retain(|id| self.dcps.readers.contains_key(id));
        for &id in &ids {
            let Some(reader) = self.rtps.reader(id) else {
                continue;
            };
            let lost = reader.stats().lost;
            self.dcps.lost(id, lost);
            self.route_changes(now, id);
        }
        // Writers that are not alive may have come back: those of the readers this input
        // reached, or of every reader after a participant's assertion. Readers whose
        // writers are all alive cost nothing here.
        if asserted {
            ids.clear();
            self.dcps.readers_waiting_for_liveliness(&mut ids);
        } else {
            ids.retain(|id| {
                self.dcps
                    .readers
                    .get(id)
                    .is_some_and(|r| r.liveliness.has_not_alive())
            });
        }
        for &id in &ids {
            let (rtps, discovery) = (&self.rtps, &self.discovery);
            self.dcps.check_liveliness(id, now, &mut |reader, writer| {
                heard(rtps, discovery, now, reader, writer)
            });
            self.dcps.reschedule(id);
        }
        self.dcps.reader_ids = ids;
        self.dcps.flush();
    }

    /// The application asserted the liveliness of this participant
    /// (`DomainParticipant::assert_liveliness`): its MANUAL_BY_PARTICIPANT writers are
    /// renewed, here and (a MANUAL participant message) at every reader.
    pub fn assert_liveliness(&mut self, now: Timestamp) {
        self.assert_participant(now, true);
    }

    /// Changes the participant's USER_DATA and announces it ([`Discovery::set_user_data`]).
    pub fn set_user_data(&mut self, now: Timestamp, value: Vec<u8>) -> bool {
        let changed = self.discovery.set_user_data(now, value);
        self.after_input(now);
        changed
    }

    /// The participant's USER_DATA.
    pub fn user_data(&self) -> &[u8] {
        self.discovery.user_data()
    }

    fn assert_participant(&mut self, now: Timestamp, explicit: bool) {
        self.discovery
            .assert_liveliness(now, explicit, &mut self.rtps);
        self.dcps.assert_manual_by_participant(now);
    }

    /// The application asserted the liveliness of writer `id`
    /// (`DataWriter::assert_liveliness`): a MANUAL_BY_TOPIC writer sends a HEARTBEAT with
    /// the liveliness flag to its readers; a MANUAL_BY_PARTICIPANT one asserts its
    /// participant; an AUTOMATIC one needs nothing.
    pub fn assert_writer_liveliness(&mut self, now: Timestamp, id: EntityId) {
        let Some(kind) = self.dcps.writers.get(&id).map(|w| w.liveliness.kind()) else {
            return;
        };
        match kind {
            LivelinessKind::Automatic => {}
            LivelinessKind::ManualByParticipant => self.assert_participant(now, true),
            LivelinessKind::ManualByTopic => {
                if let Some(w) = self.rtps.writer(id) {
                    w.assert_liveliness();
                }
                if let Some(w) = self.dcps.writers.get_mut(&id) {
                    if w.liveliness.asserted(now) {
                        self.dcps.reschedule(id);
                    }
                }
            }
        }
    }

    /// Hands reader `id`'s delivered changes to its cache, and tells the RTPS reader the
    /// room left there ([`DcpsReader::room`]); more changes come if the room grew.
    fn route_changes(&mut self, now: Timestamp, id: EntityId) {
        // Bounded: each turn delivers at most the room the cache had.
        for _ in 0..4 {
            while let Some(change) = self.rtps.reader(id).and_then(|r| r.poll_change()) {
                self.dcps.receive(id, change, now);
            }
            let room = self.dcps.readers.get(&id).and_then(DcpsReader::room);
            match self.rtps.reader(id) {
                Some(r) => r.set_room(now, room),
                None => return,
            }
            if self.rtps.reader(id).is_none_or(|r| !r.has_changes()) {
                return;
            }
        }
    }

    /// After the application took or read from reader `id`: the room its cache has now
    /// lets held changes in (see [`DcpsReader::room`]), and an ACKNACK is due for them.
    /// True when it let any in: the driver then runs what is due and prepares them, as
    /// after input.
    pub fn reader_collected(&mut self, now: Timestamp, id: EntityId) -> bool {
        if self
            .dcps
            .readers
            .get(&id)
            .and_then(DcpsReader::room)
            .is_none()
        {
            return false;
        }
        let delivered = |c: &mut Self| c.rtps.reader(id).map(|r| r.stats().delivered);
        let before = delivered(self);
        self.route_changes(now, id);
        self.dcps.flush();
        delivered(self) != before
    }

    /// When [`ParticipantCore::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        earliest(
            earliest(self.rtps.poll_timeout(), self.discovery.poll_timeout()),
            self.dcps.poll_timeout(),
        )
    }

    /// The earliest deadline a write by writer `id` can have moved: that writer's and the
    /// DCPS deadlines' (a write changes no other timer), without walking every endpoint
    /// as [`ParticipantCore::poll_timeout`] does.
    pub fn poll_timeout_after_write(&self, id: EntityId) -> Option<Timestamp> {
        earliest(self.rtps.writer_timeout(id), self.dcps.poll_timeout())
    }

    /// The next datagram to send: discovery's SPDP first, then the endpoints'.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.discovery
            .poll_transmit()
            .or_else(|| self.rtps.poll_transmit())
    }

    /// The next event: discovery's, and the DCPS statuses that changed.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.dcps.events.pop_front()
    }

    /// The next received change to prepare (with [`ParticipantCore::defer_preparation`]).
    pub fn poll_preparation(&mut self) -> Option<Preparation> {
        self.dcps.poll_preparation()
    }

    /// A change prepared by the driver: admitted, with the ones that arrived after it and
    /// were waiting for it.
    pub fn handle_prepared(&mut self, now: Timestamp, prepared: Prepared) {
        self.handle_prepared_all(now, std::iter::once(prepared));
    }

    /// [`ParticipantCore::handle_prepared`] for several at once.
    pub fn handle_prepared_all(
        &mut self,
        now: Timestamp,
        prepared: impl IntoIterator<Item = Prepared>,
    ) {
        for p in prepared {
            self.dcps.handle_prepared(p, now);
        }
        self.dcps.flush();
    }

    /// Gives the local reader `id` (already added to [`ParticipantCore::rtps`]) its DCPS
    /// state: from now on its changes go to `reader`'s cache.
    pub fn add_data_reader(&mut self, id: EntityId, reader: DcpsReader) {
        let room = reader.room();
        if let Some(r) = self.rtps.reader(id) {
            r.set_room(Timestamp(0), room);
        }
        self.dcps.readers.insert(id, reader);
    }

    /// Gives the local writer `id` its DCPS state.
    pub fn add_data_writer(&mut self, id: EntityId, writer: DcpsWriter) {
        if let Some(group) = writer.group {
            self.dcps.add_to_publisher(group);
        }
        self.dcps.writers.insert(id, writer);
        // Its liveliness lease runs from its creation.
        self.dcps.reschedule(id);
    }

    /// The DCPS state of local reader `id`.
    pub fn data_reader(&mut self, id: EntityId) -> Option<&mut DcpsReader> {
        self.dcps.readers.get_mut(&id)
    }

    /// The INCONSISTENT_TOPIC status of topic `name`: remote endpoints of it with another
    /// type.
    pub fn inconsistent_topic(&self, name: &str) -> crate::dcps::status::InconsistentTopicStatus {
        crate::dcps::status::InconsistentTopicStatus {
            total_count: self
                .dcps
                .inconsistent_topics
                .get(name)
                .copied()
                .unwrap_or(0),
            ..Default::default()
        }
    }

    /// The DCPS state of local reader `id`, to look at.
    pub fn data_reader_ref(&self, id: EntityId) -> Option<&DcpsReader> {
        self.dcps.readers.get(&id)
    }

    /// The DCPS state of local writer `id`.
    pub fn data_writer(&mut self, id: EntityId) -> Option<&mut DcpsWriter> {
        self.dcps.writers.get_mut(&id)
    }

    /// The DCPS state of local writer `id`, to look at.
    pub fn data_writer_ref(&self, id: EntityId) -> Option<&DcpsWriter> {
        self.dcps.writers.get(&id)
    }

    /// Writes a change with local writer `id`, and keeps its DCPS state (deadline) up to
    /// date.
    pub fn write(
        &mut self,
        now: Timestamp,
        id: EntityId,
        mut change: Change,
    ) -> Result<SequenceNumber, WriteError> {
        let (kind, handle) = (
            change.kind,
            change.key_hash.map_or(InstanceHandle::NIL, InstanceHandle),
        );
        let writer = self.rtps.writer(id).ok_or(WriteError::NoWriter)?;
        if self.dcps.has_publishers() {
            let next = SequenceNumber(writer.last_sequence_number().0 + 1);
            if let Some(coherence) = self.dcps.mark(id, next) {
                change.coherence = Some(Box::new(coherence));
            }
        }
        let sn = writer.write(now, change)?;
        if let Some(w) = self.dcps.writers.get_mut(&id) {
            w.written(kind, handle, now);
            let by_participant = w.liveliness.kind() == LivelinessKind::ManualByParticipant;
            self.dcps.written(id);
            if by_participant {
                self.assert_participant(now, false);
            }
        }
        Ok(sn)
    }

    /// Publisher `group` begins a coherent set (`Publisher::begin_coherent_changes`; calls
    /// nest): the changes its writers with coherent access write until the matching
    /// [`ParticipantCore::end_coherent_changes`] reach readers with coherent access as one.
    pub fn begin_coherent_changes(&mut self, group: u32) {
        self.dcps.begin_coherent_changes(group);
    }

    /// Publisher `group` ends its coherent set: each writer that wrote in it sends the
    /// marker that ends its part. Returns the writers that did.
    pub fn end_coherent_changes(
        &mut self,
        now: Timestamp,
        group: u32,
    ) -> Result<Vec<EntityId>, WriteError> {
        let mut sent = Vec::new();
        for (id, coherence) in self.dcps.end_coherent_changes(group) {
            let Some(writer) = self.rtps.writer(id) else {
                continue;
            };
            writer.write(
                now,
                Change {
                    original: None,
                    kind: crate::ChangeKind::Alive,
                    key_hash: None,
                    timestamp: None,
                    payload: crate::payload::Payload::default(),
                    reduced_payload: None,
                    coherence: Some(Box::new(coherence)),
                },
            )?;
            sent.push(id);
        }
        Ok(sent)
    }

    /// The application begins reading subscriber `group` (`Subscriber::begin_access`;
    /// calls nest): coherent sets that complete meanwhile wait until it ends.
    pub fn begin_access(&mut self, group: u32) {
        self.dcps.begin_access(group);
    }

    /// DCPS `get_datareaders` of subscriber `group` ([`Dcps::readers_in_order`]): a reader
    /// per sample `selection` selects, in the order to read them one by one.
    pub fn readers_in_order(
        &self,
        group: u32,
        now: Timestamp,
        selection: crate::dcps::Selection,
    ) -> Vec<EntityId> {
        self.dcps.readers_in_order(group, now, selection)
    }

    /// The application ends reading subscriber `group`: the sets that completed go in.
    pub fn end_access(&mut self, now: Timestamp, group: u32) {
        self.dcps.end_access(group, now);
        self.dcps.flush();
    }

    /// Announces a local endpoint (already added to [`ParticipantCore::rtps`]) and matches
    /// it.
    pub fn add_local(&mut self, now: Timestamp, endpoint: LocalEndpoint) {
        self.discovery.add_local(now, endpoint, &mut self.rtps);
        self.after_input(now);
    }

    /// Changes the QoS of local endpoint `guid` (`set_qos`): announces it again, matches
    /// again ([`Discovery::update_local`]) and gives its DCPS state the new DEADLINE. The
    /// caller checked that no immutable policy changed ([`EndpointQos::immutable_change`]).
    /// False when there is no such endpoint.
    pub fn update_local(&mut self, now: Timestamp, guid: Guid, qos: EndpointQos) -> bool {
        let period = qos.deadline.period.to_std();
        if !self.discovery.update_local(now, guid, qos, &mut self.rtps) {
            return false;
        }
        let id = guid.entity_id;
        if let Some(w) = self.dcps.writers.get_mut(&id) {
            w.deadline.set_period(period, now);
        }
        if let Some(r) = self.dcps.readers.get_mut(&id) {
            r.delivery.deadline.set_period(period, now);
        }
        self.dcps.reschedule(id);
        self.after_input(now);
        true
    }

    /// Withdraws a local endpoint, ends its matches and forgets its DCPS state (its RTPS
    /// endpoint stays in [`ParticipantCore::rtps`] for the caller to remove).
    pub fn remove_local(&mut self, now: Timestamp, guid: Guid) {
        self.discovery.remove_local(now, guid, &mut self.rtps);
        self.after_input(now);
        self.dcps.remove(guid.entity_id);
        self.status_reads.forget(guid.entity_id);
    }
}

/// When the writer matched with local reader `reader` was last heard from, in each way
/// that renews a writer's liveliness. This participant's own writers are renewed by its
/// process being alive (AUTOMATIC) and by its own assertions.
fn heard(
    rtps: &Participant,
    discovery: &Discovery,
    now: Timestamp,
    reader: EntityId,
    writer: Guid,
) -> Heard {
    let (anything, asserted) = rtps
        .reader_ref(reader)
        .and_then(|r| r.writer_heard(writer))
        .unzip();
    let (participant, participant_manual) = if writer.prefix == rtps.prefix() {
        (Some(now), discovery.own_manual_assertion())
    } else {
        discovery
            .participant_liveliness(writer.prefix)
            .map_or((None, None), |(automatic, manual)| {
                (Some(automatic), manual)
            })
    };
    Heard {
        anything,
        asserted,
        participant,
        participant_manual,
    }
}
