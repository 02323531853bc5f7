//! Participant and transport configuration: from code (a builder with defaults) or from a
//! TOML file named by the `FERRODDS_CONFIG` environment variable.
//!
//! The file format is documented in `docs/configuration.md`. Every error names where the
//! setting came from (the file, or code), the key (`domain.id`, `transport.peers[2]`), the
//! line when it came from a file, and what was wrong with it.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::interface::InterfaceSelector;
use crate::ports::{PortError, PortMapping, DEFAULT_MULTICAST_GROUP};
use crate::udp::{
    SocketOptions, DEFAULT_MULTICAST_TTL, DEFAULT_RECEIVE_BUFFER_SIZE, DEFAULT_SEND_BUFFER_SIZE,
    MAX_BUFFER_SIZE,
};

/// The environment variable that names the configuration file.
pub const CONFIG_ENV_VAR: &str = "FERRODDS_CONFIG";
/// The highest participant index tried by automatic selection, by default: 119 (120
/// participants per host and domain).
pub const DEFAULT_MAX_PARTICIPANT_INDEX: u32 = 119;
/// How many participant indices SPDP is sent to for a peer given without a port, by
/// default: 10 (indices 0 to 9, as Cyclone DDS does).
pub const DEFAULT_PARTICIPANTS_PER_PEER: u32 = 10;

/// How the participant index (the `participant id` of the port formulas) is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ParticipantIndex {
    /// The lowest index from 0 up to `max_participant_index` whose two unicast ports are
    /// free on this host.
    #[default]
    Auto,
    /// This index; opening fails if its ports are taken.
    Fixed(u32),
}

/// A host to send SPDP announcements to by unicast, for networks without multicast.
///
/// Written `host` or `host:port`: an IPv4 address or a name resolved when the transport
/// opens. Without a port, SPDP goes to the metatraffic unicast ports of participant indices
/// 0 to `participants_per_peer - 1` in the domain.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Peer {
    host: String,
    port: Option<u16>,
}

/// Why a peer could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// Empty, or characters no host name has.
    #[error("`{text}` is not an IPv4 address or host name, optionally followed by `:port`")]
    Syntax {
        /// The text.
        text: String,
    },
    /// The port is not a number in 1..=65535.
    #[error("the port in `{text}` must be a number from 1 to 65535; found `{port}`")]
    Port {
        /// The text.
        text: String,
        /// The port part.
        port: String,
    },
}

impl Peer {
    /// A peer at an IPv4 address.
    pub fn new(address: Ipv4Addr, port: Option<u16>) -> Peer {
        Peer {
            host: address.to_string(),
            port,
        }
    }

    /// The host: an IPv4 address or a name.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, if one was given.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The peer's IPv4 address; a name is resolved (which may block on DNS).
    pub fn resolve(&self) -> io::Result<Ipv4Addr> {
        if let Ok(address) = self.host.parse::<Ipv4Addr>() {
            return Ok(address);
        }
        (self.host.as_str(), 0)
            .to_socket_addrs()?
            .find_map(|a| match a {
                std::net::SocketAddr::V4(a) => Some(*a.ip()),
                std::net::SocketAddr::V6(_) => None,
            })
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("`{}` has no IPv4 address", self.host),
                )
            })
    }
}

impl FromStr for Peer {
    type Err = PeerError;

    fn from_str(text: &str) -> Result<Peer, PeerError> {
        let trimmed = text.trim();
        let (host, port) = match trimmed.rsplit_once(':') {
            Some((host, port)) => {
                let number = port
                    .parse::<u16>()
                    .ok()
                    .filter(|&p| p != 0)
                    .ok_or_else(|| PeerError::Port {
                        text: text.to_owned(),
                        port: port.to_owned(),
                    })?;
                (host, Some(number))
            }
            None => (trimmed, None),
        };
        let valid_host = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_');
        if !valid_host {
            return Err(PeerError::Syntax {
                text: text.to_owned(),
            });
        }
        Ok(Peer {
            host: host.to_owned(),
            port,
        })
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

impl From<SocketAddrV4> for Peer {
    fn from(address: SocketAddrV4) -> Peer {
        Peer::new(*address.ip(), Some(address.port()))
    }
}

/// Where a configuration came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigOrigin {
    /// Built in code with [`TransportConfigBuilder`].
    Code,
    /// A file given to [`TransportConfig::from_file`].
    File(PathBuf),
    /// The file named by `FERRODDS_CONFIG`.
    EnvFile(PathBuf),
}

impl fmt::Display for ConfigOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigOrigin::Code => f.write_str("configuration set in code"),
            ConfigOrigin::File(path) => write!(f, "configuration file `{}`", path.display()),
            ConfigOrigin::EnvFile(path) => write!(
                f,
                "configuration file `{}` (named by {CONFIG_ENV_VAR})",
                path.display()
            ),
        }
    }
}

/// What was wrong with a configuration value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigProblem {
    /// Wrong type, unknown key, malformed value, as the TOML reader found it.
    #[error("{0}")]
    Format(String),
    /// The domain or participant index has no ports.
    #[error(transparent)]
    Port(#[from] PortError),
    /// A peer could not be parsed.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// `multicast_group` is not an IPv4 address.
    #[error("`{text}` is not an IPv4 address")]
    NotAnAddress {
        /// The text.
        text: String,
    },
    /// `multicast_group` is not in 224.0.0.0/4.
    #[error("{address} is not a multicast address (224.0.0.0/4)")]
    NotMulticast {
        /// The address.
        address: Ipv4Addr,
    },
    /// `multicast_ttl` is above 255.
    #[error("a multicast TTL is at most 255; found {ttl}")]
    TtlOutOfRange {
        /// The TTL.
        ttl: u32,
    },
    /// `participants_per_peer` is 0 or more than the domain has.
    #[error(
        "participants per peer must be 1 to {max} (the participant indices domain {domain_id} \
         has); found {found}"
    )]
    ParticipantsPerPeerOutOfRange {
        /// The value.
        found: u32,
        /// The domain.
        domain_id: u32,
        /// The largest valid value.
        max: u32,
    },
    /// A buffer size does not fit `setsockopt`'s `int`.
    #[error("{size} bytes is more than the largest socket buffer size, {MAX_BUFFER_SIZE} bytes")]
    BufferTooLarge {
        /// The size.
        size: u64,
    },
    /// A wait's spin is longer than [`MAX_WAIT_SPIN`].
    #[error(
        "a spin of {micros} µs is longer than the longest allowed, {} µs",
        MAX_WAIT_SPIN.as_micros()
    )]
    SpinTooLong {
        /// The spin asked for, in microseconds (saturated).
        micros: u64,
    },
}

/// The longest a shared-memory receive thread spins, by default, for the next datagram
/// before it sleeps ([`TransportConfig::receive_spin`]; how long it spins within it follows
/// the traffic: [`crate::receive_spin`]).
pub const DEFAULT_RECEIVE_SPIN: Duration = Duration::from_micros(250);

/// The longest [`TransportConfig::wait_spin`] and [`TransportConfig::receive_spin`]: a spin is meant to bridge the wake-up of a
/// sleeping thread (tens of microseconds), not to replace sleeping.
pub const MAX_WAIT_SPIN: Duration = Duration::from_millis(10);

/// Why a configuration could not be read or is not valid.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {origin}: {source}")]
    Read {
        /// The file.
        origin: ConfigOrigin,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// The file is not valid TOML.
    #[error("{origin}, line {line}, column {column}: not valid TOML: {message}")]
    Syntax {
        /// The file.
        origin: ConfigOrigin,
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// The TOML reader's message.
        message: String,
    },
    /// A key is unknown or its value wrong.
    #[error("{origin}{}: key `{key}`: {problem}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Invalid {
        /// Where the value came from.
        origin: ConfigOrigin,
        /// Line of the value, from 1, when it came from a file.
        line: Option<usize>,
        /// The key, dotted: `domain.id`, `transport.peers[1]`.
        key: String,
        /// What was wrong.
        problem: ConfigProblem,
    },
}

/// The configuration of a participant's transport. Always valid: made by
/// [`TransportConfigBuilder::build`] or read from a file, both of which check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportConfig {
    domain_id: u32,
    participant_index: ParticipantIndex,
    /// `None`: [`DEFAULT_MAX_PARTICIPANT_INDEX`], lowered to what the domain has.
    max_participant_index: Option<u32>,
    interface: InterfaceSelector,
    allow_multicast: bool,
    multicast_group: Ipv4Addr,
    multicast_ttl: u32,
    peers: Vec<Peer>,
    participants_per_peer: u32,
    receive_buffer_size: usize,
    send_buffer_size: usize,
    busy_poll: bool,
    wait_spin: Duration,
    in_process: bool,
    shared_memory: bool,
    receive_spin: Duration,
    fast_dds_xcdr1: bool,
}

/// Builds a [`TransportConfig`]; every setting starts at its default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TransportConfigBuilder {
    config: TransportConfig,
}

impl Default for TransportConfig {
    /// Domain 0, automatic participant index up to 119, automatic interface, multicast on
    /// 239.255.0.1 with TTL 1, no peers, 4 MiB receive and 1 MiB send buffers, receive
    /// threads that block.
    fn default() -> Self {
        TransportConfig {
            domain_id: 0,
            participant_index: ParticipantIndex::Auto,
            max_participant_index: None,
            interface: InterfaceSelector::Auto,
            allow_multicast: true,
            multicast_group: DEFAULT_MULTICAST_GROUP,
            multicast_ttl: DEFAULT_MULTICAST_TTL,
            peers: Vec::new(),
            participants_per_peer: DEFAULT_PARTICIPANTS_PER_PEER,
            receive_buffer_size: DEFAULT_RECEIVE_BUFFER_SIZE,
            send_buffer_size: DEFAULT_SEND_BUFFER_SIZE,
            busy_poll: false,
            wait_spin: Duration::ZERO,
            in_process: true,
            shared_memory: true,
            receive_spin: DEFAULT_RECEIVE_SPIN,
            fast_dds_xcdr1: false,
        }
    }
}

impl TransportConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> TransportConfigBuilder {
        TransportConfigBuilder::default()
    }

    /// A builder starting from this configuration, e.g. to override in code what a file
    /// said.
    pub fn to_builder(&self) -> TransportConfigBuilder {
        TransportConfigBuilder {
            config: self.clone(),
        }
    }

    /// The configuration in the file named by `FERRODDS_CONFIG`, or the defaults when the
    /// variable is unset or empty.
    pub fn from_env() -> Result<TransportConfig, ConfigError> {
        match std::env::var_os(CONFIG_ENV_VAR) {
            Some(path) if !path.is_empty() => {
                let path = PathBuf::from(path);
                let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                    origin: ConfigOrigin::EnvFile(path.clone()),
                    source,
                })?;
                TransportConfig::parse(&text, ConfigOrigin::EnvFile(path))
            }
            _ => Ok(TransportConfig::default()),
        }
    }

    /// The configuration in a TOML file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<TransportConfig, ConfigError> {
        let path = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            origin: ConfigOrigin::File(path.clone()),
            source,
        })?;
        TransportConfig::parse(&text, ConfigOrigin::File(path))
    }

    /// The configuration in TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: ConfigOrigin) -> Result<TransportConfig, ConfigError> {
        TransportConfig::parse(text, origin)
    }

    /// The domain id.
    pub fn domain_id(&self) -> u32 {
        self.domain_id
    }

    /// How the participant index is chosen.
    pub fn participant_index(&self) -> ParticipantIndex {
        self.participant_index
    }

    /// The highest index [`ParticipantIndex::Auto`] tries: as set, or by default 119 (or
    /// the domain's largest participant id, if lower: 62 for domain 232).
    pub fn max_participant_index(&self) -> u32 {
        self.max_participant_index.unwrap_or_else(|| {
            PortMapping::DEFAULT
                .max_participant_id(self.domain_id)
                .map_or(0, |max| max.min(DEFAULT_MAX_PARTICIPANT_INDEX))
        })
    }

    /// Which network interface to use.
    pub fn interface(&self) -> &InterfaceSelector {
        &self.interface
    }

    /// Whether multicast may be used. When false, SPDP goes only to the peers.
    pub fn allow_multicast(&self) -> bool {
        self.allow_multicast
    }

    /// The multicast group for SPDP and user multicast.
    pub fn multicast_group(&self) -> Ipv4Addr {
        self.multicast_group
    }

    /// `IP_MULTICAST_TTL` for what is sent.
    pub fn multicast_ttl(&self) -> u32 {
        self.multicast_ttl
    }

    /// Hosts SPDP is also sent to by unicast.
    pub fn peers(&self) -> &[Peer] {
        &self.peers
    }

    /// How many participant indices a peer without a port stands for.
    pub fn participants_per_peer(&self) -> u32 {
        self.participants_per_peer
    }

    /// `SO_RCVBUF` to ask for (0: the kernel's default).
    pub fn receive_buffer_size(&self) -> usize {
        self.receive_buffer_size
    }

    /// `SO_SNDBUF` to ask for (0: the kernel's default).
    pub fn send_buffer_size(&self) -> usize {
        self.send_buffer_size
    }

    /// Whether user traffic is received by a thread that spins on non-blocking receives
    /// instead of sleeping in the kernel (the latency mode).
    pub fn busy_poll(&self) -> bool {
        self.busy_poll
    }

    /// How long a thread waiting for the participant (for data, matches, acknowledgments)
    /// spins before it sleeps (zero: it sleeps at once).
    pub fn wait_spin(&self) -> Duration {
        self.wait_spin
    }

    /// The longest a shared-memory receive thread spins for the next datagram before it
    /// sleeps (default [`DEFAULT_RECEIVE_SPIN`]).
    pub fn receive_spin(&self) -> Duration {
        self.receive_spin
    }

    /// The compatibility mode for Fast DDS 2.x: its endpoints that announce no data
    /// representation match XCDR2 ones, and its readers get XCDR1 (the participant
    /// builder's `fast_dds_xcdr1` says how).
    pub fn fast_dds_xcdr1(&self) -> bool {
        self.fast_dds_xcdr1
    }

    /// Whether participants of this process exchange user traffic through the in-process
    /// transport rather than UDP (default true).
    pub fn in_process(&self) -> bool {
        self.in_process
    }

    /// Whether participants of this host exchange user traffic through shared memory
    /// rather than UDP (default true).
    pub fn shared_memory(&self) -> bool {
        self.shared_memory
    }

    /// The socket options this configuration asks for, sending multicast from `interface`.
    pub fn socket_options(&self, interface: Ipv4Addr) -> SocketOptions {
        SocketOptions {
            receive_buffer_size: self.receive_buffer_size,
            send_buffer_size: self.send_buffer_size,
            multicast_interface: Some(interface),
            multicast_ttl: self.multicast_ttl,
            multicast_loop: true,
            receive_timeout: None,
        }
    }

    /// Checks every rule; the error names the key.
    fn check(&self) -> Result<(), (String, ConfigProblem)> {
        let mapping = PortMapping::DEFAULT;
        let key = |k: &str| k.to_owned();
        let max_participant = mapping
            .max_participant_id(self.domain_id)
            .map_err(|e| (key("domain.id"), e.into()))?;
        if let ParticipantIndex::Fixed(index) = self.participant_index {
            mapping
                .metatraffic_unicast_port(self.domain_id, index)
                .map_err(|e| (key("domain.participant_index"), e.into()))?;
        }
        if let Some(max) = self.max_participant_index {
            mapping
                .metatraffic_unicast_port(self.domain_id, max)
                .map_err(|e| (key("domain.max_participant_index"), e.into()))?;
        }
        if !self.multicast_group.is_multicast() {
            return Err((
                key("transport.multicast_group"),
                ConfigProblem::NotMulticast {
                    address: self.multicast_group,
                },
            ));
        }
        if self.multicast_ttl > 255 {
            return Err((
                key("transport.multicast_ttl"),
                ConfigProblem::TtlOutOfRange {
                    ttl: self.multicast_ttl,
                },
            ));
        }
        let max_per_peer = max_participant.saturating_add(1);
        if self.participants_per_peer == 0 || self.participants_per_peer > max_per_peer {
            return Err((
                key("transport.participants_per_peer"),
                ConfigProblem::ParticipantsPerPeerOutOfRange {
                    found: self.participants_per_peer,
                    domain_id: self.domain_id,
                    max: max_per_peer,
                },
            ));
        }
        for (spin, name) in [
            (self.wait_spin, "transport.wait_spin_us"),
            (self.receive_spin, "transport.receive_spin_us"),
        ] {
            if spin > MAX_WAIT_SPIN {
                return Err((
                    key(name),
                    ConfigProblem::SpinTooLong {
                        micros: u64::try_from(spin.as_micros()).unwrap_or(u64::MAX),
                    },
                ));
            }
        }
        for (size, name) in [
            (self.receive_buffer_size, "transport.receive_buffer_size"),
            (self.send_buffer_size, "transport.send_buffer_size"),
        ] {
            if size > MAX_BUFFER_SIZE {
                return Err((
                    key(name),
                    ConfigProblem::BufferTooLarge { size: size as u64 },
                ));
            }
        }
        Ok(())
    }

    fn parse(text: &str, origin: ConfigOrigin) -> Result<TransportConfig, ConfigError> {
        let lines = LineIndex::new(text);
        let deserializer = toml::Deserializer::parse(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|s| lines.line_column(s.start))
                .unwrap_or((1, 1));
            ConfigError::Syntax {
                origin: origin.clone(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })?;
        let file: FileConfig = serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let key = dotted_key(e.path());
            let inner = e.into_inner();
            ConfigError::Invalid {
                origin: origin.clone(),
                line: inner.span().map(|s| lines.line_column(s.start).0),
                key,
                problem: ConfigProblem::Format(inner.message().trim().to_owned()),
            }
        })?;
        let mut spans = HashMap::new();
        let invalid =
            |key: String, line: Option<usize>, problem: ConfigProblem| ConfigError::Invalid {
                origin: origin.clone(),
                line,
                key,
                problem,
            };
        let mut config = TransportConfig::default();
        let d = file.domain;
        if let Some(v) = d.id {
            spans.insert("domain.id".to_owned(), v.span());
            config.domain_id = v.into_inner();
        }
        if let Some(v) = d.participant_index {
            spans.insert("domain.participant_index".to_owned(), v.span());
            config.participant_index = v.into_inner().0;
        }
        if let Some(v) = d.max_participant_index {
            spans.insert("domain.max_participant_index".to_owned(), v.span());
            config.max_participant_index = Some(v.into_inner());
        }
        let t = file.transport;
        if let Some(v) = t.interface {
            // Infallible: anything that is not `auto` or an address is a name.
            config.interface = v.get_ref().parse().unwrap_or_default();
        }
        if let Some(v) = t.busy_poll {
            config.busy_poll = v;
        }
        if let Some(v) = file.compatibility.fast_dds_xcdr1 {
            config.fast_dds_xcdr1 = v;
        }
        if let Some(v) = t.in_process {
            config.in_process = v;
        }
        if let Some(v) = t.shared_memory {
            config.shared_memory = v;
        }
        if let Some(v) = t.wait_spin_us {
            spans.insert("transport.wait_spin_us".to_owned(), v.span());
            config.wait_spin = Duration::from_micros(v.into_inner());
        }
        if let Some(v) = t.receive_spin_us {
            spans.insert("transport.receive_spin_us".to_owned(), v.span());
            config.receive_spin = Duration::from_micros(v.into_inner());
        }
        if let Some(v) = t.allow_multicast {
            config.allow_multicast = v;
        }
        if let Some(v) = t.multicast_group {
            let line = Some(lines.line_column(v.span().start).0);
            config.multicast_group = v.get_ref().trim().parse().map_err(|_| {
                invalid(
                    "transport.multicast_group".to_owned(),
                    line,
                    ConfigProblem::NotAnAddress {
                        text: v.get_ref().clone(),
                    },
                )
            })?;
            spans.insert("transport.multicast_group".to_owned(), v.span());
        }
        if let Some(v) = t.multicast_ttl {
            spans.insert("transport.multicast_ttl".to_owned(), v.span());
            config.multicast_ttl = v.into_inner();
        }
        if let Some(peers) = t.peers {
            config.peers = peers
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.get_ref().parse::<Peer>().map_err(|e| {
                        invalid(
                            format!("transport.peers[{i}]"),
                            Some(lines.line_column(v.span().start).0),
                            e.into(),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        if let Some(v) = t.participants_per_peer {
            spans.insert("transport.participants_per_peer".to_owned(), v.span());
            config.participants_per_peer = v.into_inner();
        }
        for (value, name, field) in [
            (
                t.receive_buffer_size,
                "transport.receive_buffer_size",
                &mut config.receive_buffer_size,
            ),
            (
                t.send_buffer_size,
                "transport.send_buffer_size",
                &mut config.send_buffer_size,
            ),
        ] {
            if let Some(v) = value {
                let span = v.span();
                let bytes = v.into_inner().0;
                *field = usize::try_from(bytes)
                    .ok()
                    .filter(|&b| b <= MAX_BUFFER_SIZE)
                    .ok_or_else(|| {
                        invalid(
                            name.to_owned(),
                            Some(lines.line_column(span.start).0),
                            ConfigProblem::BufferTooLarge { size: bytes },
                        )
                    })?;
            }
        }
        config.check().map_err(|(key, problem)| {
            let line = spans.get(&key).map(|s| lines.line_column(s.start).0);
            invalid(key, line, problem)
        })?;
        Ok(config)
    }
}

impl TransportConfigBuilder {
    /// The domain id (default 0; at most 232).
    pub fn domain_id(mut self, domain_id: u32) -> Self {
        self.config.domain_id = domain_id;
        self
    }

    /// How the participant index is chosen (default [`ParticipantIndex::Auto`]).
    pub fn participant_index(mut self, index: ParticipantIndex) -> Self {
        self.config.participant_index = index;
        self
    }

    /// The highest index [`ParticipantIndex::Auto`] tries (default 119, or less when the
    /// domain has fewer).
    pub fn max_participant_index(mut self, max: u32) -> Self {
        self.config.max_participant_index = Some(max);
        self
    }

    /// The network interface (default [`InterfaceSelector::Auto`]).
    pub fn interface(mut self, interface: InterfaceSelector) -> Self {
        self.config.interface = interface;
        self
    }

    /// Whether multicast may be used (default true).
    pub fn allow_multicast(mut self, allow: bool) -> Self {
        self.config.allow_multicast = allow;
        self
    }

    /// The multicast group (default 239.255.0.1).
    pub fn multicast_group(mut self, group: Ipv4Addr) -> Self {
        self.config.multicast_group = group;
        self
    }

    /// `IP_MULTICAST_TTL` (default 1; at most 255).
    pub fn multicast_ttl(mut self, ttl: u32) -> Self {
        self.config.multicast_ttl = ttl;
        self
    }

    /// Adds a peer.
    pub fn peer(mut self, peer: Peer) -> Self {
        self.config.peers.push(peer);
        self
    }

    /// Replaces the peers.
    pub fn peers(mut self, peers: impl IntoIterator<Item = Peer>) -> Self {
        self.config.peers = peers.into_iter().collect();
        self
    }

    /// How many participant indices a peer without a port stands for (default 10).
    pub fn participants_per_peer(mut self, count: u32) -> Self {
        self.config.participants_per_peer = count;
        self
    }

    /// `SO_RCVBUF` to ask for (default 4 MiB; 0 leaves the kernel's default).
    pub fn receive_buffer_size(mut self, bytes: usize) -> Self {
        self.config.receive_buffer_size = bytes;
        self
    }

    /// `SO_SNDBUF` to ask for (default 1 MiB; 0 leaves the kernel's default).
    pub fn send_buffer_size(mut self, bytes: usize) -> Self {
        self.config.send_buffer_size = bytes;
        self
    }

    /// The latency mode (default off): user traffic is received by a thread that spins on
    /// non-blocking receives, which saves the wake-up of a sleeping thread (several
    /// microseconds on loopback) at the price of a core kept busy.
    pub fn busy_poll(mut self, on: bool) -> Self {
        self.config.busy_poll = on;
        self
    }

    /// How long a thread waiting for the participant spins, watching for a change, before
    /// it sleeps (default zero; at most [`MAX_WAIT_SPIN`]). A wake-up that finds the thread
    /// still spinning costs no trip through the scheduler — tens of microseconds on a
    /// virtual machine — at the price of the spin's CPU time on every wait.
    pub fn wait_spin(mut self, spin: Duration) -> Self {
        self.config.wait_spin = spin;
        self
    }

    /// Whether participants of this process exchange user traffic through a queue instead
    /// of UDP (default true; discovery stays on UDP either way).
    pub fn in_process(mut self, on: bool) -> Self {
        self.config.in_process = on;
        self
    }

    /// Whether participants of this host exchange user traffic through shared memory
    /// instead of UDP (default true; discovery stays on UDP either way).
    pub fn shared_memory(mut self, on: bool) -> Self {
        self.config.shared_memory = on;
        self
    }

    /// The longest a shared-memory receive thread spins for the next datagram before it
    /// sleeps (default [`DEFAULT_RECEIVE_SPIN`]; zero: it sleeps at once; at most
    /// [`MAX_WAIT_SPIN`]). Within it the spin follows the traffic ([`crate::receive_spin`]):
    /// as long as the recent gaps between datagrams, with room, at least 30 µs (or the maximum when lower). While
    /// traffic flows (a reply within a few hundred microseconds, a stream) the thread never
    /// goes through the scheduler; traffic further apart than this costs a spin of 30 µs
    /// per datagram, and an idle participant spins once after its last datagram. The
    /// spinning thread yields its core to any other thread that wants it.
    pub fn receive_spin(mut self, spin: Duration) -> Self {
        self.config.receive_spin = spin;
        self
    }

    /// The compatibility mode for Fast DDS 2.x (default off): its endpoints that announce
    /// no data representation match XCDR2 ones, and its readers get XCDR1.
    pub fn fast_dds_xcdr1(mut self, on: bool) -> Self {
        self.config.fast_dds_xcdr1 = on;
        self
    }

    /// The configuration, once checked.
    pub fn build(self) -> Result<TransportConfig, ConfigError> {
        self.config
            .check()
            .map_err(|(key, problem)| ConfigError::Invalid {
                origin: ConfigOrigin::Code,
                line: None,
                key,
                problem,
            })?;
        Ok(self.config)
    }
}

/// `domain.id`, `transport.peers[1]`: the path of a value, without the private fields
/// through which `toml::Spanned` carries spans.
fn dotted_key(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut key = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: name } if name.starts_with("$__") => {}
            Segment::Map { key: name } => {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(name);
            }
            Segment::Enum { variant } => key.push_str(&format!("::{variant}")),
            Segment::Unknown => key.push_str(".?"),
        }
    }
    if key.is_empty() {
        key.push_str("(top level)");
    }
    key
}

/// Byte offsets to lines and columns, for error messages.
struct LineIndex<'a> {
    text: &'a str,
    /// Offset of the start of each line.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// Line and column (in characters), both from 1.
    fn line_column(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let column = self
            .text
            .get(start..offset.min(self.text.len()))
            .map_or(0, |s| s.chars().count());
        (line, column + 1)
    }
}

// The file's shape. Every field is optional; an absent one keeps its default. Unknown keys
// are errors, so that a misspelt key is not silently ignored.

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    domain: FileDomain,
    #[serde(default)]
    transport: FileTransport,
    #[serde(default)]
    compatibility: FileCompatibility,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileCompatibility {
    fast_dds_xcdr1: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileDomain {
    id: Option<Spanned<u32>>,
    participant_index: Option<Spanned<FileParticipantIndex>>,
    max_participant_index: Option<Spanned<u32>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileTransport {
    interface: Option<Spanned<String>>,
    allow_multicast: Option<bool>,
    multicast_group: Option<Spanned<String>>,
    multicast_ttl: Option<Spanned<u32>>,
    peers: Option<Vec<Spanned<String>>>,
    participants_per_peer: Option<Spanned<u32>>,
    receive_buffer_size: Option<Spanned<ByteSize>>,
    send_buffer_size: Option<Spanned<ByteSize>>,
    busy_poll: Option<bool>,
    wait_spin_us: Option<Spanned<u64>>,
    in_process: Option<bool>,
    shared_memory: Option<bool>,
    receive_spin_us: Option<Spanned<u64>>,
}

/// `"auto"` or an integer.
struct FileParticipantIndex(ParticipantIndex);

impl<'de> Deserialize<'de> for FileParticipantIndex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IndexVisitor;
        impl Visitor<'_> for IndexVisitor {
            type Value = FileParticipantIndex;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"auto\" or a participant index from 0")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                u32::try_from(v)
                    .map(|v| FileParticipantIndex(ParticipantIndex::Fixed(v)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                u32::try_from(v)
                    .map(|v| FileParticipantIndex(ParticipantIndex::Fixed(v)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                if v.trim().eq_ignore_ascii_case("auto") {
                    Ok(FileParticipantIndex(ParticipantIndex::Auto))
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
        }
        deserializer.deserialize_any(IndexVisitor)
    }
}

/// A byte count: an integer, or a string with a binary unit (`"4 MiB"`).
struct ByteSize(u64);

impl ByteSize {
    fn parse(text: &str) -> Option<u64> {
        let text = text.trim();
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: u64 = number.parse().ok()?;
        let scale: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            _ => return None,
        };
        number.checked_mul(scale)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SizeVisitor;
        impl Visitor<'_> for SizeVisitor {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of bytes, or a string with B, KiB, MiB or GiB (\"4 MiB\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(ByteSize(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                ByteSize::parse(v)
                    .map(ByteSize)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(SizeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TransportConfig, ConfigError> {
        TransportConfig::from_toml(text, ConfigOrigin::File(PathBuf::from("test.toml")))
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn empty_file_is_the_defaults() {
        assert_eq!(parse("").unwrap(), TransportConfig::default());
        assert_eq!(
            TransportConfig::builder().build().unwrap(),
            TransportConfig::default()
        );
    }

    #[test]
    fn every_key() {
        let config = parse(
            r#"
            [domain]
            id = 7
            participant_index = 3
            max_participant_index = 20

            [transport]
            interface = "lo"
            allow_multicast = false
            multicast_group = "239.255.0.2"
            multicast_ttl = 4
            peers = ["127.0.0.1", "10.1.2.3:7410", "robot-1.local"]
            participants_per_peer = 5
            receive_buffer_size = "8 MiB"
            send_buffer_size = 65536
            busy_poll = true
            wait_spin_us = 200
            in_process = false
            shared_memory = false
            receive_spin_us = 0

            [compatibility]
            fast_dds_xcdr1 = true
            "#,
        )
        .unwrap();
        assert!(config.fast_dds_xcdr1());
        assert!(!TransportConfig::default().fast_dds_xcdr1());
        assert_eq!(config.domain_id(), 7);
        assert_eq!(config.participant_index(), ParticipantIndex::Fixed(3));
        assert_eq!(config.max_participant_index(), 20);
        assert_eq!(config.interface(), &InterfaceSelector::Name("lo".into()));
        assert!(!config.allow_multicast());
        assert_eq!(config.multicast_group(), Ipv4Addr::new(239, 255, 0, 2));
        assert_eq!(config.multicast_ttl(), 4);
        assert_eq!(
            config.peers(),
            [
                Peer::new(Ipv4Addr::LOCALHOST, None),
                Peer::new(Ipv4Addr::new(10, 1, 2, 3), Some(7410)),
                "robot-1.local".parse().unwrap(),
            ]
        );
        assert_eq!(config.participants_per_peer(), 5);
        assert_eq!(config.receive_buffer_size(), 8 << 20);
        assert_eq!(config.send_buffer_size(), 65536);
        assert!(config.busy_poll());
        assert!(!TransportConfig::default().busy_poll());
        assert_eq!(config.wait_spin(), Duration::from_micros(200));
        assert_eq!(TransportConfig::default().wait_spin(), Duration::ZERO);
        assert!(!config.in_process() && TransportConfig::default().in_process());
        assert!(!config.shared_memory() && TransportConfig::default().shared_memory());
        assert_eq!(config.receive_spin(), Duration::ZERO);
        assert_eq!(
            TransportConfig::default().receive_spin(),
            DEFAULT_RECEIVE_SPIN
        );
    }

    #[test]
    fn auto_index_and_interface_address() {
        let config = parse(
            "[domain]\nparticipant_index = \"auto\"\n[transport]\ninterface = \"127.0.0.1\"\n",
        )
        .unwrap();
        assert_eq!(config.participant_index(), ParticipantIndex::Auto);
        assert_eq!(
            config.interface(),
            &InterfaceSelector::Address(Ipv4Addr::LOCALHOST)
        );
    }

    #[test]
    fn syntax_error_names_file_line_and_column() {
        assert_eq!(
            error("[domain]\nid = = 3\n"),
            "configuration file `test.toml`, line 2, column 6: not valid TOML: \
             extra `=`, expected nothing"
        );
    }

    #[test]
    fn a_spin_longer_than_the_limit_is_refused() {
        assert_eq!(
            error("[transport]\nwait_spin_us = 20000\n"),
            "configuration file `test.toml`, line 2: key `transport.wait_spin_us`: a spin of \
             20000 µs is longer than the longest allowed, 10000 µs"
        );
        let err = TransportConfig::builder()
            .wait_spin(Duration::from_secs(1))
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("transport.wait_spin_us"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        assert_eq!(
            error("[domain]\nid = \"seven\"\n"),
            "configuration file `test.toml`, line 2: key `domain.id`: invalid type: string \
             \"seven\", expected u32"
        );
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert_eq!(
            error("[transport]\ninterfce = \"lo\"\n"),
            "configuration file `test.toml`, line 2: key `transport.interfce`: unknown field \
             `interfce`, expected one of `interface`, `allow_multicast`, `multicast_group`, \
             `multicast_ttl`, `peers`, `participants_per_peer`, `receive_buffer_size`, \
             `send_buffer_size`, `busy_poll`, `wait_spin_us`, `in_process`, `shared_memory`, \
             `receive_spin_us`"
        );
        assert_eq!(
            error("[transprot]\n"),
            "configuration file `test.toml`, line 1: key `transprot`: unknown field \
             `transprot`, expected one of `domain`, `transport`, `compatibility`"
        );
    }

    #[test]
    fn out_of_range_domain() {
        assert_eq!(
            error("[domain]\nid = 300\n"),
            "configuration file `test.toml`, line 2: key `domain.id`: domain id 300 is out of \
             range: with port base 7400 the largest domain id whose ports fit in 16 bits is 232"
        );
        assert_eq!(
            error("[domain]\nid = 232\nparticipant_index = 63\n"),
            "configuration file `test.toml`, line 3: key `domain.participant_index`: \
             participant id 63 is out of range for domain 232: the largest participant id \
             whose ports fit in 16 bits is 62"
        );
        assert_eq!(
            error("[domain]\nid = 232\nmax_participant_index = 63\n"),
            "configuration file `test.toml`, line 3: key `domain.max_participant_index`: \
             participant id 63 is out of range for domain 232: the largest participant id \
             whose ports fit in 16 bits is 62"
        );
        // The default maximum, 119, is lowered to what domain 232 has.
        assert_eq!(
            parse("[domain]\nid = 232\n")
                .unwrap()
                .max_participant_index(),
            62
        );
        assert_eq!(
            parse("[domain]\nid = 0\n").unwrap().max_participant_index(),
            119
        );
        assert_eq!(
            error("[domain]\nid = -1\n"),
            "configuration file `test.toml`, line 2: key `domain.id`: invalid value: integer \
             `-1`, expected u32"
        );
    }

    #[test]
    fn bad_participant_index() {
        assert_eq!(
            error("[domain]\nparticipant_index = \"any\"\n"),
            "configuration file `test.toml`, line 2: key `domain.participant_index`: invalid \
             value: string \"any\", expected \"auto\" or a participant index from 0"
        );
    }

    #[test]
    fn bad_peers() {
        assert_eq!(
            error("[transport]\npeers = [\n  \"10.0.0.1\",\n  \"10.0.0.2:http\",\n]\n"),
            "configuration file `test.toml`, line 4: key `transport.peers[1]`: the port in \
             `10.0.0.2:http` must be a number from 1 to 65535; found `http`"
        );
        assert_eq!(
            error("[transport]\npeers = [\"a b\"]\n"),
            "configuration file `test.toml`, line 2: key `transport.peers[0]`: `a b` is not an \
             IPv4 address or host name, optionally followed by `:port`"
        );
        assert_eq!(
            error("[transport]\npeers = \"10.0.0.1\"\n"),
            "configuration file `test.toml`, line 2: key `transport.peers`: invalid type: \
             string \"10.0.0.1\", expected a sequence"
        );
    }

    #[test]
    fn bad_multicast_settings() {
        assert_eq!(
            error("[transport]\nmulticast_group = \"10.0.0.1\"\n"),
            "configuration file `test.toml`, line 2: key `transport.multicast_group`: 10.0.0.1 \
             is not a multicast address (224.0.0.0/4)"
        );
        assert_eq!(
            error("[transport]\nmulticast_group = \"239.255.0\"\n"),
            "configuration file `test.toml`, line 2: key `transport.multicast_group`: \
             `239.255.0` is not an IPv4 address"
        );
        assert_eq!(
            error("[transport]\nmulticast_ttl = 256\n"),
            "configuration file `test.toml`, line 2: key `transport.multicast_ttl`: a \
             multicast TTL is at most 255; found 256"
        );
        assert_eq!(
            error("[transport]\nallow_multicast = \"no\"\n"),
            "configuration file `test.toml`, line 2: key `transport.allow_multicast`: invalid \
             type: string \"no\", expected a boolean"
        );
    }

    #[test]
    fn buffer_sizes() {
        let config =
            parse("[transport]\nreceive_buffer_size = \"512 KiB\"\nsend_buffer_size = \"2MiB\"\n")
                .unwrap();
        assert_eq!(config.receive_buffer_size(), 512 << 10);
        assert_eq!(config.send_buffer_size(), 2 << 20);
        assert_eq!(
            error("[transport]\nreceive_buffer_size = \"4 MB\"\n"),
            "configuration file `test.toml`, line 2: key `transport.receive_buffer_size`: \
             invalid value: string \"4 MB\", expected a number of bytes, or a string with B, \
             KiB, MiB or GiB (\"4 MiB\")"
        );
        assert_eq!(
            error("[transport]\nsend_buffer_size = \"4 GiB\"\n"),
            "configuration file `test.toml`, line 2: key `transport.send_buffer_size`: \
             4294967296 bytes is more than the largest socket buffer size, 2147483647 bytes"
        );
    }

    #[test]
    fn participants_per_peer_range() {
        assert_eq!(
            error("[transport]\nparticipants_per_peer = 0\n"),
            "configuration file `test.toml`, line 2: key `transport.participants_per_peer`: \
             participants per peer must be 1 to 29063 (the participant indices domain 0 has); \
             found 0"
        );
    }

    #[test]
    fn builder_errors_name_code_and_key() {
        let err = TransportConfig::builder()
            .domain_id(233)
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "configuration set in code: key `domain.id`: domain id 233 is out of range: with \
             port base 7400 the largest domain id whose ports fit in 16 bits is 232"
        );
        let err = TransportConfig::builder()
            .multicast_group(Ipv4Addr::new(192, 0, 2, 1))
            .build()
            .unwrap_err();
        assert!(matches!(
            err,
            ConfigError::Invalid {
                origin: ConfigOrigin::Code,
                line: None,
                problem: ConfigProblem::NotMulticast { .. },
                ..
            }
        ));
    }

    #[test]
    fn builder_overrides_a_file() {
        let from_file = parse("[domain]\nid = 3\n").unwrap();
        let config = from_file
            .to_builder()
            .interface(InterfaceSelector::Name("lo".into()))
            .peer("127.0.0.1:7410".parse().unwrap())
            .build()
            .unwrap();
        assert_eq!(config.domain_id(), 3);
        assert_eq!(config.peers().len(), 1);
        assert_eq!(config.peers()[0].to_string(), "127.0.0.1:7410");
    }

    #[test]
    fn peer_syntax() {
        let p: Peer = "10.0.0.1:7410".parse().unwrap();
        assert_eq!((p.host(), p.port()), ("10.0.0.1", Some(7410)));
        let p: Peer = " localhost ".parse().unwrap();
        assert_eq!((p.host(), p.port()), ("localhost", None));
        assert_eq!(p.resolve().unwrap(), Ipv4Addr::LOCALHOST);
        assert!("10.0.0.1:0".parse::<Peer>().is_err());
        assert!("10.0.0.1:70000".parse::<Peer>().is_err());
        assert!(":7410".parse::<Peer>().is_err());
        assert!("".parse::<Peer>().is_err());
        assert_eq!(
            Peer::from(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7)).to_string(),
            "127.0.0.1:7"
        );
    }

    #[test]
    fn missing_file() {
        let err = TransportConfig::from_file("/nonexistent/ferrodds.toml").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "cannot read configuration file `/nonexistent/ferrodds.toml`: No such file"
            ),
            "{err}"
        );
    }

    #[test]
    fn line_index() {
        let l = LineIndex::new("ab\ncd\n\nef");
        assert_eq!(l.line_column(0), (1, 1));
        assert_eq!(l.line_column(2), (1, 3));
        assert_eq!(l.line_column(3), (2, 1));
        assert_eq!(l.line_column(7), (4, 1));
        assert_eq!(l.line_column(100), (4, 3));
        assert_eq!(LineIndex::new("é=1").line_column(2), (1, 2));
    }
}
