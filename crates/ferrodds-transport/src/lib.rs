//! The UDPv4 transport of FerroDDS.
//!
//! What this crate does:
//! - [`ports`]: the RTPS well-known port mapping (DDSI-RTPS 2.5 §9.6.1.1), checked so that no
//!   domain or participant id yields a port above 65535.
//! - [`udp`]: UDPv4 sockets built with `socket2` — unicast, multicast group members that
//!   share a port with the host's other participants (`SO_REUSEADDR`/`SO_REUSEPORT`), the
//!   multicast send options (`IP_MULTICAST_IF`, `_TTL`, `_LOOP`), raised `SO_RCVBUF` and
//!   `SO_SNDBUF` with the sizes the kernel granted reported, sending to lists of locators,
//!   and receiving into a caller's buffer with the source address, blocking with a timeout
//!   or not at all (for busy-polling).
//! - [`interface`]: listing the host's IPv4 interfaces and choosing one by name, address or
//!   automatically.
//! - [`transport`]: the seam the runtime drives — the [`Transport`] trait (send to the
//!   locator kinds it names, hand out [`ReceiveChannel`]s) and [`Transports`], a
//!   participant's list of them, which picks one per destination by locator kind.
//! - [`hub`]: [`Hub`], ways in the participants of a process share: one receive thread
//!   per way for them all, each datagram handed to every member ([`shared_multicast`]:
//!   the multicast sockets, shared by participants whatever their configuration).
//! - [`in_process`]: [`InProcessTransport`], participants of one process handing each
//!   other datagrams through a queue (a vendor locator kind with the process's address).
//! - [`shared_memory`]: [`SharedMemoryTransport`], the participants of one host handing
//!   each other datagrams through iceoryx2 (an inbox service per participant, or per
//!   process for the participants that share one; a vendor
//!   locator kind with the host's address).
//! - [`receive_spin`]: how long a shared-memory receive thread spins for its next
//!   datagram before it sleeps, following the gaps of the traffic it receives.
//! - [`udp_transport`]: [`UdpTransport`], the UDPv4 transport: the sockets of one
//!   participant, bound on the first free participant index (as Cyclone DDS and Fast DDS
//!   do), with the SPDP destinations: the multicast group and a list of unicast peers for
//!   networks without multicast.
//! - [`config`]: [`TransportConfig`], from code (a builder) or from the TOML file named by
//!   `FERRODDS_CONFIG` (see `docs/configuration.md`).
//! - [`locator`]: RTPS locators and their socket addresses.
//!
//! What it does not do: it never parses or builds RTPS messages (that is `ferrodds-rtps`,
//! which this crate does not depend on), runs no threads and keeps no clock — the runtime
//! in `ferrodds` drives the sockets. It does not change system settings: when the kernel
//! caps a buffer size (Linux's `net.core.rmem_max`) it reports it and goes on. IPv6,
//! TCP and batching of sends (`sendmmsg`, GSO) are not here yet. It is
//! written for Unix and tested on Linux.
//!
//! It holds `unsafe` in one place: `socket2` sets the socket options, `nix` lists
//! interfaces and receives into `&mut [u8]`, and iceoryx2 maps the shared segments, all
//! behind safe interfaces; but iceoryx2 hands out an uninitialized slice of a segment as
//! initialized only through `assume_init`, and a datagram in several parts is copied into
//! one that way (the safe alternative, a zeroed slice, costs a `memset` of every datagram: 11 MB
//! samples went a quarter slower). Large datagrams are copied there with SSE2's streaming
//! stores (an 11 MB sample's datagrams: about 7% more samples a second, alternated), which
//! only `core::arch` offers. The lint denies `unsafe` everywhere else.

#![deny(unsafe_code)]

pub mod config;
pub mod hub;
pub mod in_process;
pub mod interface;
pub mod locator;
pub mod ports;
pub mod receive_spin;
pub mod sample_channel;
pub mod shared_memory;
pub mod shared_multicast;
mod stillborn;
pub mod transport;
pub mod udp;
pub mod udp_transport;

pub use config::{
    ConfigError, ConfigOrigin, ConfigProblem, ParticipantIndex, Peer, PeerError, TransportConfig,
    TransportConfigBuilder, CONFIG_ENV_VAR, MAX_WAIT_SPIN,
};
pub use hub::{Deliver, Hub, Membership};
pub use in_process::{InProcessTransport, WakeDeferral, KIND_IN_PROCESS};
pub use interface::{list_interfaces, InterfaceError, InterfaceSelector, NetworkInterface};
pub use locator::{Locator, LocatorError};
pub use ports::{PortError, PortMapping, Ports, DEFAULT_MULTICAST_GROUP};
pub use sample_channel::{ChannelReader, ChunkLoan, SampleChannel, Taken};
pub use shared_memory::{SharedMemoryError, SharedMemoryTransport, KIND_SHARED_MEMORY};
pub use shared_multicast::MulticastGroup;
pub use transport::{Datagram, ReceiveChannel, SendError, Traffic, Transport, Transports};
pub use udp::{
    BufferSize, BufferSizes, Received, SendSummary, SocketError, SocketOptions, UdpSocket,
};
pub use udp_transport::{MulticastStatus, TransportError, UdpTransport};
