//! The participant core: a participant's RTPS endpoints and its discovery engine behind one
//! sans-IO surface — `handle_datagram`, `handle_timeout`, `poll_transmit`, `poll_event`,
//! `poll_timeout` — so that every driver (the threaded runtime, the network simulator, the
//! fuzz targets) feeds the protocol the same way instead of repeating the glue between the
//! routing and discovery. (The DCPS caches and QoS rules join it next: docs/architecture.md.)

use crate::discovery_engine::{Discovery, DiscoveryConfig, DiscoveryEvent, LocalEndpoint};
use crate::participant::Participant;
use crate::time::{earliest, Timestamp};
use crate::transmit::Transmit;
use crate::wire::{Guid, Locator};

/// A participant's endpoints and its discovery, driven as one.
#[derive(Debug)]
pub struct ParticipantCore {
    /// The endpoints and the routing of received submessages. User endpoints are added
    /// here, then announced with [`ParticipantCore::add_local`].
    pub rtps: Participant,
    /// SPDP, SEDP, TypeLookup and matching.
    pub discovery: Discovery,
}

impl ParticipantCore {
    /// The core of `rtps`, running discovery as `config` says (its builtin endpoints are
    /// added to `rtps`; the first SPDP announcement is queued).
    pub fn new(now: Timestamp, mut rtps: Participant, config: DiscoveryConfig) -> Self {
        let discovery = Discovery::new(now, config, &mut rtps);
        ParticipantCore { rtps, discovery }
    }

    /// Takes in one datagram that came from `origin`, and what discovery makes of it.
    pub fn handle_datagram(&mut self, now: Timestamp, origin: Locator, datagram: &[u8]) {
        self.rtps.handle_datagram(now, origin, datagram);
        self.discovery.process(now, &mut self.rtps);
    }

    /// Runs what is due: the endpoints' timers (heartbeats, repairs), then discovery's
    /// (announcements, leases, TypeLookup retries).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.rtps.handle_timeout(now);
        self.discovery.handle_timeout(now, &mut self.rtps);
        self.discovery.process(now, &mut self.rtps);
    }

    /// When [`ParticipantCore::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        earliest(self.rtps.poll_timeout(), self.discovery.poll_timeout())
    }

    /// The next datagram to send: discovery's SPDP first, then the endpoints'.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.discovery
            .poll_transmit()
            .or_else(|| self.rtps.poll_transmit())
    }

    /// The next discovery event (matches, incompatibilities, participants).
    pub fn poll_event(&mut self) -> Option<DiscoveryEvent> {
        self.discovery.poll_event()
    }

    /// Announces a local endpoint (already added to [`ParticipantCore::rtps`]) and matches
    /// it.
    pub fn add_local(&mut self, now: Timestamp, endpoint: LocalEndpoint) {
        self.discovery.add_local(now, endpoint, &mut self.rtps);
    }

    /// Withdraws a local endpoint and ends its matches.
    pub fn remove_local(&mut self, now: Timestamp, guid: Guid) {
        self.discovery.remove_local(now, guid, &mut self.rtps);
    }
}
