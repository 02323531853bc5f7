//! A workaround: announcing ddsperf's participant USER_DATA, which the `ferrodds` API
//! cannot set yet.
//!
//! ddsperf only answers pings from, and only counts pongs of, participants whose USER_DATA
//! reads `DDSPerf:<has data reader>:<pid>:<hostname>` (`async_participant_data_listener` in
//! `ddsperf.c`): for any other participant it has no pong writer. `ParticipantBuilder` has
//! no `user_data`, so this module sends, beside the participant's own SPDP announcements,
//! SPDP data of the same participant (same GUID prefix, locators, lease and builtin
//! endpoints) with the USER_DATA added, from a socket of its own to the SPDP multicast
//! group.
//!
//! It relies on how Cyclone DDS (0.10) treats SPDP data of a participant it knows: it takes
//! the USER_DATA of a sample with a higher sequence number than any seen before
//! (`ddsi_update_proxy_participant_plist_locked`) and publishes the change on its
//! DCPSParticipant builtin topic, which is what ddsperf reads. Our sequence numbers start
//! at 2^40, above the participant's own announcements, so the USER_DATA stays. FerroDDS
//! peers simply take the latest data of a known participant.
//!
//! Remove this module once `ParticipantBuilder::user_data` exists.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// Sends SPDP data of a participant with a USER_DATA.
pub(crate) struct UserDataAnnouncer {
    socket: UdpSocket,
    destination: SocketAddrV4,
    data: ParticipantData,
    sequence: i64,
}

impl UserDataAnnouncer {
    /// An announcer for `participant` (in `domain`) with `user_data`; `None` (after a
    /// warning on stderr) when the participant's locators cannot be told or no socket can be
    /// opened: the run goes on, and only ddsperf peers will not answer or count it.
    pub(crate) fn new(
        participant: &DomainParticipant,
        domain: u32,
        user_data: &[u8],
    ) -> Option<UserDataAnnouncer> {
        match Self::try_new(participant, domain, user_data) {
            Ok(a) => Some(a),
            Err(e) => {
                eprintln!(
                    "ferrodds perf: warning: cannot announce ddsperf's USER_DATA ({e}); \
                     ddsperf peers will not answer this participant's pings"
                );
                None
            }
        }
    }

    fn try_new(
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

        let socket = socket2::Socket::new(
            socket2::Domain::IPV4,
            socket2::Type::DGRAM,
            Some(socket2::Protocol::UDP),
        )
        .map_err(|e| e.to_string())?;
        let interface = if meta.ip().is_unspecified() {
            Ipv4Addr::LOCALHOST
        } else {
            *meta.ip()
        };
        socket
            .set_multicast_if_v4(&interface)
            .and_then(|()| socket.set_multicast_loop_v4(true))
            .and_then(|()| socket.set_multicast_ttl_v4(1))
            .and_then(|()| socket.bind(&SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)).into()))
            .map_err(|e| format!("multicast socket: {e}"))?;
        Ok(UserDataAnnouncer {
            socket: socket.into(),
            destination: SocketAddrV4::new(DEFAULT_MULTICAST_GROUP, spdp_port),
            data,
            sequence: FIRST_SEQUENCE,
        })
    }

    /// Sends one announcement (a lost one is repeated by the next call).
    pub(crate) fn announce(&mut self) {
        if let Some(datagram) = self.datagram() {
            // A failed send is like a lost datagram: the next call repeats it.
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
