//! A workaround: announcing ddsperf's participant USER_DATA, which the `ferrodds` API
//! cannot set yet.
//!
//! ddsperf only answers pings from, and only counts pongs of, participants whose USER_DATA
//! reads `DDSPerf:<has data reader>:<pid>:<hostname>` (`async_participant_data_listener` in
//! `ddsperf.c`): for any other participant it has no pong writer. `ParticipantBuilder` has
//! no `user_data`, so this module sends, beside the participant's own SPDP announcements,
//! SPDP data of the same participant (same GUID prefix, locators, lease and builtin
//! endpoints) with the USER_DATA added, from a socket of its own to the SPDP multicast
//! group: once right after the participant is created (before its endpoints, so that
//! peers already running learn the USER_DATA before they match them), at once whenever an
//! SPDP datagram from a participant not seen before arrives on the group (so that peers
//! starting later learn it about as soon as they learn of the participant), and every
//! second.
//!
//! It relies on how Cyclone DDS (0.10) treats SPDP data of a participant it knows: it takes
//! the USER_DATA of a sample with a higher sequence number than any seen before
//! (`ddsi_update_proxy_participant_plist_locked`) and publishes the change on its
//! DCPSParticipant builtin topic, which is what ddsperf reads. Our sequence numbers start
//! at 2^40, above the participant's own announcements, so the USER_DATA stays. FerroDDS
//! peers simply take the latest data of a known participant.
//!
//! Remove this module once `ParticipantBuilder::user_data` exists.

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferrodds::DomainParticipant;
use ferrodds_rtps::discovery::ParticipantData;
use ferrodds_rtps::wire::parameter_list::pid;
use ferrodds_rtps::wire::{
    message_to_vec, Data, DataPayload, Endianness, EntityId, Header, InfoTimestamp, Locator,
    ParameterList, ParameterListBuilder, ProtocolVersion, SequenceNumber, Submessage, Time,
    VendorId,
};
use ferrodds_transport::{PortMapping, DEFAULT_MULTICAST_GROUP};

/// The participant lease `ParticipantBuilder` uses by default (it has no getter).
const LEASE: Duration = Duration::from_secs(20);

/// The first sequence number: above anything the participant's own SPDP writer reaches.
const FIRST_SEQUENCE: i64 = 1 << 40;

/// How often the USER_DATA is announced when nothing new happens.
const PERIOD: Duration = Duration::from_secs(1);

/// Sends SPDP data of a participant with a USER_DATA.
pub(crate) struct UserDataAnnouncer {
    socket: UdpSocket,
    destination: SocketAddrV4,
    data: ParticipantData,
    sequence: i64,
    /// Receives the SPDP multicast traffic, to notice newcomers.
    listener: Option<UdpSocket>,
}

impl UserDataAnnouncer {
    /// Announces `user_data` for `participant` (in `domain`) now, then from a thread of its
    /// own. On failure it warns on stderr and the run goes on: only ddsperf peers will not
    /// answer or count this participant.
    pub(crate) fn start(participant: &DomainParticipant, domain: u32, user_data: &[u8]) {
        let mut announcer = match Self::new(participant, domain, user_data) {
            Ok(a) => a,
            Err(e) => {
                eprintln!(
                    "ferrodds perf: warning: cannot announce ddsperf's USER_DATA ({e}); \
                     ddsperf peers will not answer this participant's pings"
                );
                return;
            }
        };
        announcer.announce();
        let spawned = std::thread::Builder::new()
            .name("perf-announce".into())
            .spawn(move || announcer.run());
        if let Err(e) = spawned {
            eprintln!("ferrodds perf: warning: cannot start the USER_DATA announcer: {e}");
        }
    }

    fn new(
        participant: &DomainParticipant,
        domain: u32,
        user_data: &[u8],
    ) -> Result<UserDataAnnouncer, String> {
        let mapping = PortMapping::DEFAULT;
        let index = participant.participant_index();
        let meta = participant
            .metatraffic_address()
            .ok_or("the participant has no IPv4 metatraffic address")?;
        let meta_port = mapping
            .metatraffic_unicast_port(domain, index)
            .map_err(|e| e.to_string())?;
        if meta_port != meta.port() {
            return Err("the participant does not use the default port mapping".into());
        }
        let user_port = mapping
            .user_unicast_port(domain, index)
            .map_err(|e| e.to_string())?;
        let spdp_port = mapping
            .spdp_multicast_port(domain)
            .map_err(|e| e.to_string())?;

        let mut data = ParticipantData::new(participant.guid_prefix());
        data.metatraffic_unicast_locators = vec![Locator::udpv4(*meta.ip(), meta.port())];
        data.default_unicast_locators = vec![Locator::udpv4(*meta.ip(), user_port)];
        data.metatraffic_multicast_locators =
            vec![Locator::udpv4(DEFAULT_MULTICAST_GROUP, spdp_port)];
        data.domain_id = Some(domain);
        data.lease_duration = ferrodds_rtps::qos::Duration::from_std(LEASE);
        data.user_data.value = user_data.to_vec();

        let interface = if meta.ip().is_unspecified() {
            Ipv4Addr::LOCALHOST
        } else {
            *meta.ip()
        };
        let udp = || {
            socket2::Socket::new(
                socket2::Domain::IPV4,
                socket2::Type::DGRAM,
                Some(socket2::Protocol::UDP),
            )
        };
        let socket = udp().map_err(|e| e.to_string())?;
        socket
            .set_multicast_if_v4(&interface)
            .and_then(|()| socket.set_multicast_loop_v4(true))
            .and_then(|()| socket.set_multicast_ttl_v4(1))
            .and_then(|()| socket.bind(&SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)).into()))
            .map_err(|e| format!("multicast socket: {e}"))?;
        // Without it, newcomers learn the USER_DATA at the next period only.
        let listener = udp().ok().and_then(|l| {
            l.set_reuse_address(true)
                .and_then(|()| l.set_reuse_port(true))
                .and_then(|()| l.bind(&SocketAddr::from((Ipv4Addr::UNSPECIFIED, spdp_port)).into()))
                .and_then(|()| l.join_multicast_v4(&DEFAULT_MULTICAST_GROUP, &interface))
                .and_then(|()| l.set_read_timeout(Some(PERIOD)))
                .ok()
                .map(|()| UdpSocket::from(l))
        });
        Ok(UserDataAnnouncer {
            socket: socket.into(),
            destination: SocketAddrV4::new(DEFAULT_MULTICAST_GROUP, spdp_port),
            data,
            sequence: FIRST_SEQUENCE,
            listener,
        })
    }

    /// Announces every [`PERIOD`], and at once when a participant not seen before sends
    /// SPDP data to the group.
    fn run(mut self) {
        let mut seen: HashSet<[u8; 12]> = HashSet::new();
        let mut buf = vec![0u8; 65536];
        let mut last = Instant::now();
        loop {
            let newcomer = match &self.listener {
                Some(l) => match l.recv_from(&mut buf) {
                    // An RTPS header: "RTPS", version, vendor, then the GUID prefix.
                    Ok((n, _)) if n >= 20 && buf.starts_with(b"RTPS") => {
                        let mut prefix = [0u8; 12];
                        prefix.copy_from_slice(&buf[8..20]);
                        prefix != self.data.guid.prefix.0 && seen.insert(prefix)
                    }
                    Ok(_) => false,
                    Err(_) => false,
                },
                None => {
                    std::thread::sleep(PERIOD);
                    false
                }
            };
            if newcomer || last.elapsed() >= PERIOD {
                self.announce();
                last = Instant::now();
            }
        }
    }

    /// Sends one announcement (a lost one is repeated by the next).
    fn announce(&mut self) {
        if let Some(datagram) = self.datagram() {
            // A failed send is like a lost datagram: the next one repeats it.
            let _ = self.socket.send_to(&datagram, self.destination);
        }
    }

    /// The RTPS message: INFO_TS, then DATA from the SPDP writer with PID_KEY_HASH inline.
    fn datagram(&mut self) -> Option<Vec<u8>> {
        let payload = self.data.to_vec(Endianness::Little).ok()?;
        let mut inline = Vec::with_capacity(24);
        let mut b = ParameterListBuilder::new(&mut inline, Endianness::Little);
        b.push(pid::KEY_HASH, &self.data.guid.to_bytes()).ok()?;
        b.finish();
        let (inline_qos, _) = ParameterList::parse(&inline, Endianness::Little).ok()?;
        self.sequence += 1;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        let data = Data {
            extra_flags: 0,
            reader_id: EntityId::SPDP_PARTICIPANT_READER,
            writer_id: EntityId::SPDP_PARTICIPANT_WRITER,
            writer_sn: SequenceNumber(self.sequence),
            inline_qos: Some(inline_qos),
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        };
        let header = Header {
            version: ProtocolVersion::V2_5,
            vendor_id: VendorId::FERRODDS,
            guid_prefix: self.data.guid.prefix,
        };
        let ts = InfoTimestamp {
            timestamp: Some(Time::from_nanos(now)),
        };
        let submessages: [Submessage<'_>; 2] = [ts.into(), data.into()];
        message_to_vec(&header, &submessages, Endianness::Little).ok()
    }
}

/// ddsperf's USER_DATA: `DDSPerf:<1 if it has a data reader, else 0>:<pid>:<hostname>`.
pub(crate) fn ddsperf_user_data(has_data_reader: bool) -> Vec<u8> {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "?".into());
    format!(
        "DDSPerf:{}:{}:{host}",
        u8::from(has_data_reader),
        std::process::id()
    )
    .into_bytes()
}
