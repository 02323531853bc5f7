//! The UDPv4 sockets of one participant, opened from a [`TransportConfig`].

use std::collections::HashSet;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use crate::config::{ParticipantIndex, TransportConfig};
use crate::hub::{Deliver, Membership};
use crate::interface::{InterfaceError, NetworkInterface};
use crate::locator::Locator;
use crate::ports::{PortError, PortMapping, Ports};
use crate::shared_multicast::MulticastGroup;
use crate::transport::{Datagram, ReceiveChannel, Traffic, Transport};
use crate::udp::{Received, SocketError, SocketOptions, UdpSocket};

/// Whether a participant uses multicast, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MulticastStatus {
    /// SPDP and user multicast sockets are open; SPDP is sent to the group.
    Enabled,
    /// `allow_multicast` is false.
    DisabledByConfig,
    /// The interface does not have `IFF_MULTICAST` (on Linux, `lo` until
    /// `ip link set lo multicast on`).
    InterfaceNotMulticast,
}

/// Why a participant's transport could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// No interface matches the configuration.
    #[error(transparent)]
    Interface(#[from] InterfaceError),
    /// The domain or participant index has no ports.
    #[error(transparent)]
    Port(#[from] PortError),
    /// A fixed participant index whose ports another socket holds.
    #[error("participant index {participant_index} in domain {domain_id} is taken: {source}")]
    ParticipantIndexInUse {
        /// The domain.
        domain_id: u32,
        /// The index.
        participant_index: u32,
        /// The failed bind.
        #[source]
        source: SocketError,
    },
    /// Automatic selection found every index taken.
    #[error(
        "no free participant index in domain {domain_id}: the unicast ports of indices 0 to \
         {max_participant_index} are all taken (raise max_participant_index)"
    )]
    NoFreeParticipantIndex {
        /// The domain.
        domain_id: u32,
        /// The highest index tried.
        max_participant_index: u32,
    },
    /// A socket could not be made.
    #[error(transparent)]
    Socket(#[from] SocketError),
    /// A way in could not be set up for its receive thread (a socket's handle of its own).
    #[error("cannot set up a receive channel: {0}")]
    Channel(#[source] io::Error),
    /// A peer's host name could not be resolved.
    #[error("cannot resolve peer `{peer}`: {source}")]
    Peer {
        /// The peer as configured.
        peer: String,
        /// The resolver's error.
        #[source]
        source: io::Error,
    },
}

/// The sockets of one participant in one domain: metatraffic and user unicast, bound on a
/// participant index found free on this host, and — when multicast is enabled — the SPDP
/// and user multicast sockets, shared with the host's other participants.
///
/// It sends and receives datagrams; it knows nothing of what they hold.
#[derive(Debug)]
pub struct UdpTransport {
    domain_id: u32,
    participant_id: u32,
    ports: Ports,
    interface: NetworkInterface,
    multicast: MulticastStatus,
    multicast_group: Ipv4Addr,
    metatraffic_unicast: UdpSocket,
    user_unicast: UdpSocket,
    spdp_multicast: Option<MulticastSocket>,
    user_multicast: Option<MulticastSocket>,
    spdp_destinations: Vec<Locator>,
}

/// A multicast socket of the transport's own, or the process's shared one.
#[derive(Debug)]
enum MulticastSocket {
    Own(UdpSocket),
    Shared(Arc<MulticastGroup>),
}

impl MulticastSocket {
    fn socket(&self) -> &UdpSocket {
        match self {
            MulticastSocket::Own(s) => s,
            MulticastSocket::Shared(g) => g.socket(),
        }
    }
}

impl UdpTransport {
    /// Chooses the interface, binds the unicast sockets on the first free participant index
    /// (or the fixed one), opens the multicast sockets if multicast is enabled, and resolves
    /// the peers (which may block on DNS for peers given by name).
    pub fn open(config: &TransportConfig) -> Result<UdpTransport, TransportError> {
        UdpTransport::open_with(config, false)
    }

    /// [`UdpTransport::open`], with the multicast sockets the process's participants share
    /// ([`MulticastGroup`]): one socket and one receive thread per group and port for
    /// them all, which [`Transport::join_shared`] joins (its receive channels are the
    /// unicast sockets only). What a participant runtime opens.
    pub fn open_sharing_multicast(
        config: &TransportConfig,
    ) -> Result<UdpTransport, TransportError> {
        UdpTransport::open_with(config, true)
    }

    fn open_with(config: &TransportConfig, share: bool) -> Result<UdpTransport, TransportError> {
        let interface = config.interface().resolve()?;
        let multicast = if !config.allow_multicast() {
            MulticastStatus::DisabledByConfig
        } else if !interface.multicast {
            MulticastStatus::InterfaceNotMulticast
        } else {
            MulticastStatus::Enabled
        };
        let options = config.socket_options(interface.address);
        let domain_id = config.domain_id();
        let (participant_id, metatraffic_unicast, user_unicast) = bind_unicast_pair(
            domain_id,
            config.participant_index(),
            config.max_participant_index(),
            &options,
        )?;
        let ports = Ports::new(domain_id, participant_id)?;
        let group = config.multicast_group();
        let bind = |port| -> Result<MulticastSocket, SocketError> {
            Ok(if share {
                MulticastSocket::Shared(MulticastGroup::bind(
                    group,
                    port,
                    interface.address,
                    &options,
                )?)
            } else {
                MulticastSocket::Own(UdpSocket::bind_multicast(
                    group,
                    port,
                    interface.address,
                    &options,
                )?)
            })
        };
        let (spdp_multicast, user_multicast) = if multicast == MulticastStatus::Enabled {
            (
                Some(bind(ports.spdp_multicast)?),
                Some(bind(ports.user_multicast)?),
            )
        } else {
            (None, None)
        };
        let spdp_destinations = spdp_destinations(config, &interface, multicast, ports)?;
        Ok(UdpTransport {
            domain_id,
            participant_id,
            ports,
            interface,
            multicast,
            multicast_group: group,
            metatraffic_unicast,
            user_unicast,
            spdp_multicast,
            user_multicast,
            spdp_destinations,
        })
    }

    /// The domain id.
    pub fn domain_id(&self) -> u32 {
        self.domain_id
    }

    /// The participant index the unicast sockets are bound on.
    pub fn participant_id(&self) -> u32 {
        self.participant_id
    }

    /// The four ports.
    pub fn ports(&self) -> Ports {
        self.ports
    }

    /// The interface in use.
    pub fn interface(&self) -> &NetworkInterface {
        &self.interface
    }

    /// Whether multicast is used.
    pub fn multicast(&self) -> MulticastStatus {
        self.multicast
    }

    /// Metatraffic (discovery) unicast socket; also the one to send discovery traffic from.
    pub fn metatraffic_unicast(&self) -> &UdpSocket {
        &self.metatraffic_unicast
    }

    /// User data unicast socket; also the one to send user data from.
    pub fn user_unicast(&self) -> &UdpSocket {
        &self.user_unicast
    }

    /// SPDP multicast socket, when multicast is enabled.
    pub fn spdp_multicast(&self) -> Option<&UdpSocket> {
        self.spdp_multicast.as_ref().map(MulticastSocket::socket)
    }

    /// User data multicast socket, when multicast is enabled.
    pub fn user_multicast(&self) -> Option<&UdpSocket> {
        self.user_multicast.as_ref().map(MulticastSocket::socket)
    }

    /// `interface:metatraffic unicast port`, to announce in SPDP.
    pub fn metatraffic_unicast_locator(&self) -> Locator {
        Locator::udpv4(self.interface.address, self.ports.metatraffic_unicast)
    }

    /// `interface:user unicast port`, to announce in SPDP.
    pub fn default_unicast_locator(&self) -> Locator {
        Locator::udpv4(self.interface.address, self.ports.user_unicast)
    }

    /// `group:SPDP port`, when multicast is enabled.
    pub fn metatraffic_multicast_locator(&self) -> Option<Locator> {
        (self.multicast == MulticastStatus::Enabled)
            .then(|| Locator::udpv4(self.multicast_group, self.ports.spdp_multicast))
    }

    /// `group:user multicast port`, when multicast is enabled.
    pub fn default_multicast_locator(&self) -> Option<Locator> {
        (self.multicast == MulticastStatus::Enabled)
            .then(|| Locator::udpv4(self.multicast_group, self.ports.user_multicast))
    }

    /// Where SPDP announcements go: the multicast group when multicast is enabled, and each
    /// peer (a peer without a port stands for the metatraffic ports of participant indices
    /// 0 to `participants_per_peer - 1`). With multicast off and no peers, this host's own
    /// interface address stands in as the one peer, so participants on one host still find
    /// each other. Own announcements may come back; the receiver ignores its own GUID.
    pub fn spdp_destinations(&self) -> &[Locator] {
        &self.spdp_destinations
    }
}

impl Transport for UdpTransport {
    fn name(&self) -> &'static str {
        "udpv4"
    }

    fn locator_kinds(&self) -> &[i32] {
        &[Locator::KIND_UDPV4]
    }

    /// From the user unicast socket, discovery traffic too (as before the seam: a peer
    /// sees one source port for everything we send).
    fn send(&self, datagram: &[u8], destination: &Locator) -> io::Result<()> {
        let to = destination
            .to_udpv4()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        self.user_unicast.send_to(datagram, to).map(|_| ())
    }

    fn send_parts(&self, parts: &[&[u8]], destination: &Locator) -> io::Result<()> {
        let to = destination
            .to_udpv4()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        self.user_unicast.send_parts_to(parts, to).map(|_| ())
    }

    fn join_shared(&self, deliver: &Deliver) -> io::Result<Vec<Membership>> {
        let mut memberships = Vec::new();
        for m in [&self.spdp_multicast, &self.user_multicast] {
            if let Some(MulticastSocket::Shared(group)) = m {
                memberships.push(group.join(Arc::clone(deliver))?);
            }
        }
        Ok(memberships)
    }

    fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>> {
        let mut channels: Vec<Arc<dyn ReceiveChannel>> = Vec::new();
        fn own(m: &Option<MulticastSocket>) -> Option<&UdpSocket> {
            match m {
                Some(MulticastSocket::Own(s)) => Some(s),
                _ => None,
            }
        }
        let sockets = [
            (Some(&self.metatraffic_unicast), Traffic::Metatraffic),
            (own(&self.spdp_multicast), Traffic::Metatraffic),
            (Some(&self.user_unicast), Traffic::User),
            (own(&self.user_multicast), Traffic::User),
        ];
        for (socket, traffic) in sockets.into_iter().filter_map(|(s, t)| Some((s?, t))) {
            channels.push(Arc::new(UdpChannel::new(socket, traffic)?));
        }
        Ok(channels)
    }
}

/// How long a receive blocks before its thread looks at the shutdown flag by itself.
const RECEIVE_SAFETY_TIMEOUT: Duration = Duration::from_secs(5);

/// A receive channel on one of the participant's UDP sockets (its own handle, `dup(2)`).
#[derive(Debug)]
pub(crate) struct UdpChannel {
    socket: UdpSocket,
    traffic: Traffic,
}

impl UdpChannel {
    /// A channel on a handle of its own on `socket`.
    pub(crate) fn new(socket: &UdpSocket, traffic: Traffic) -> io::Result<UdpChannel> {
        let socket = socket.try_clone()?;
        // `stop_receiving` wakes a blocked receive; the timeout is only a safety net
        // should that ever fail, long enough not to count as an idle wake-up.
        socket.set_receive_timeout(Some(RECEIVE_SAFETY_TIMEOUT))?;
        Ok(UdpChannel { socket, traffic })
    }

    fn datagram(received: Option<Received>) -> Option<Datagram> {
        received.map(|r| Datagram {
            len: r.len,
            source: Locator::udpv4(*r.source.ip(), r.source.port()),
            truncated: r.truncated,
        })
    }
}

impl ReceiveChannel for UdpChannel {
    fn traffic(&self) -> Traffic {
        self.traffic
    }

    fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
        self.socket.receive(buffer).map(UdpChannel::datagram)
    }

    fn try_receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
        self.socket.try_receive(buffer).map(UdpChannel::datagram)
    }

    fn stop_receiving(&self) {
        self.socket.stop_receiving();
    }
}

/// Binds the metatraffic and user unicast sockets on `0.0.0.0`, on the fixed index or on
/// the first index from 0 whose two ports are both free.
fn bind_unicast_pair(
    domain_id: u32,
    index: ParticipantIndex,
    max_participant_index: u32,
    options: &SocketOptions,
) -> Result<(u32, UdpSocket, UdpSocket), TransportError> {
    let mapping = PortMapping::DEFAULT;
    let bind = |participant_id: u32| -> Result<(UdpSocket, UdpSocket), BindFailure> {
        let ports = mapping
            .ports(domain_id, participant_id)
            .map_err(BindFailure::Port)?;
        let any = |port| SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port);
        let metatraffic = UdpSocket::bind_unicast(any(ports.metatraffic_unicast), options)
            .map_err(BindFailure::Socket)?;
        let user = UdpSocket::bind_unicast(any(ports.user_unicast), options)
            .map_err(BindFailure::Socket)?;
        Ok((metatraffic, user))
    };
    match index {
        ParticipantIndex::Fixed(participant_index) => match bind(participant_index) {
            Ok((m, u)) => Ok((participant_index, m, u)),
            Err(BindFailure::Port(e)) => Err(e.into()),
            Err(BindFailure::Socket(e)) if e.is_address_in_use() => {
                Err(TransportError::ParticipantIndexInUse {
                    domain_id,
                    participant_index,
                    source: e,
                })
            }
            Err(BindFailure::Socket(e)) => Err(e.into()),
        },
        ParticipantIndex::Auto => {
            // Bounded by max_participant_index, which the configuration checked against the
            // domain's port range.
            for participant_id in 0..=max_participant_index {
                match bind(participant_id) {
                    Ok((m, u)) => return Ok((participant_id, m, u)),
                    Err(BindFailure::Socket(e)) if e.is_address_in_use() => continue,
                    Err(BindFailure::Port(e)) => return Err(e.into()),
                    Err(BindFailure::Socket(e)) => return Err(e.into()),
                }
            }
            Err(TransportError::NoFreeParticipantIndex {
                domain_id,
                max_participant_index,
            })
        }
    }
}

enum BindFailure {
    Port(PortError),
    Socket(SocketError),
}

fn spdp_destinations(
    config: &TransportConfig,
    interface: &NetworkInterface,
    multicast: MulticastStatus,
    ports: Ports,
) -> Result<Vec<Locator>, TransportError> {
    let mapping = PortMapping::DEFAULT;
    let domain_id = config.domain_id();
    let mut destinations = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |locator: Locator| {
        if seen.insert(locator) {
            destinations.push(locator);
        }
    };
    if multicast == MulticastStatus::Enabled {
        add(Locator::udpv4(
            config.multicast_group(),
            ports.spdp_multicast,
        ));
    }
    let mut peers: Vec<(Ipv4Addr, Option<u16>)> = Vec::new();
    for peer in config.peers() {
        let address = peer.resolve().map_err(|source| TransportError::Peer {
            peer: peer.to_string(),
            source,
        })?;
        peers.push((address, peer.port()));
    }
    if multicast != MulticastStatus::Enabled && peers.is_empty() {
        peers.push((interface.address, None));
    }
    for (address, port) in peers {
        match port {
            Some(port) => add(Locator::udpv4(address, port)),
            None => {
                for participant_id in 0..config.participants_per_peer() {
                    add(Locator::udpv4(
                        address,
                        mapping.metatraffic_unicast_port(domain_id, participant_id)?,
                    ));
                }
            }
        }
    }
    Ok(destinations)
}
