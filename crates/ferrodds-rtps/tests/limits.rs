//! Resource limits and the locator rule, with crafted datagrams handed straight to a
//! participant: each limit holds and counts what it drops, announced locators are bound to
//! the address an announcement came from, and identities must belong to their sender.
//! (Over real sockets: `crates/ferrodds/tests/hostile_traffic.rs`.)

#![allow(clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::time::Duration;

use ferrodds_rtps::discovery::{DiscoveredReaderData, EndpointData, ParticipantData};
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::qos::{EndpointQos, ReliabilityKind};
use ferrodds_rtps::wire::parameter_list::{pid, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED};
use ferrodds_rtps::wire::{
    message_to_vec, Data, DataFrag, DataPayload, Endianness, EntityId, Gap, Guid, GuidPrefix,
    Header, Heartbeat, Locator, Message, ParameterList, ParameterListBuilder, ProtocolVersion,
    SequenceNumber, SequenceNumberSet, Submessage, VendorId,
};
use ferrodds_rtps::{
    Discovery, DiscoveryConfig, Limits, LocalEndpoint, Participant, ParticipantCore, Reader,
    RemoteWriter, Timestamp, Writer, WriterConfig,
};

const LOCAL: GuidPrefix = GuidPrefix([0x01; 12]);
const USER_READER: EntityId = EntityId([0, 0, 1, 0x07]);
const USER_WRITER: EntityId = EntityId([0, 0, 2, 0x02]);
const SPDP_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);
const NOW: Timestamp = Timestamp(1_000_000_000);

fn v4(a: u8, b: u8, c: u8, d: u8, port: u16) -> Locator {
    Locator::udpv4(Ipv4Addr::new(a, b, c, d), port)
}

fn prefix(n: u32) -> GuidPrefix {
    let mut p = [0x0f; 12];
    p[8..].copy_from_slice(&n.to_be_bytes());
    GuidPrefix(p)
}

/// A participant running discovery, with a user writer on topic "t".
fn local(limits: Limits) -> ParticipantCore {
    local_reaching(limits, Vec::new())
}

/// [`local`], with transports that also reach `other_locators`.
fn local_reaching(limits: Limits, other_locators: Vec<Locator>) -> ParticipantCore {
    let mut own = ParticipantData::new(LOCAL);
    own.metatraffic_unicast_locators = vec![v4(127, 0, 0, 1, 7410)];
    own.default_unicast_locators = vec![v4(127, 0, 0, 1, 7411)];
    let config = DiscoveryConfig {
        own,
        spdp_destinations: vec![Locator::udpv4(SPDP_GROUP, 7400)],
        announce_period: Duration::from_secs(2),
        type_information: true,
        other_locators,
        fast_dds_xcdr1: false,
        shared_endpoints: None,
        channel_host: None,
    };
    let mut c = ParticipantCore::new(NOW, Participant::with_limits(LOCAL, limits), config);
    c.rtps.add_writer(Writer::new(
        Guid::new(LOCAL, USER_WRITER),
        WriterConfig::default(),
    ));
    let mut qos = EndpointQos::writer_default();
    qos.reliability.kind = ReliabilityKind::BestEffort;
    c.add_local(
        NOW,
        LocalEndpoint {
            guid: Guid::new(LOCAL, USER_WRITER),
            kind: EndpointKind::Writer,
            topic_name: "t".into(),
            type_name: "T".into(),
            qos,
            keyed: false,
            ty: None,
            ignore_local: false,
            content_filter: None,
        },
    );
    drain(&mut c);
    c
}

/// Every destination of what the participant and discovery want to send.
fn drain(c: &mut ParticipantCore) -> Vec<Locator> {
    let mut out = Vec::new();
    while let Some(t) = c.poll_transmit() {
        out.extend(t.destinations);
    }
    while c.poll_event().is_some() {}
    out
}

fn message(from: GuidPrefix, subs: &[Submessage<'_>]) -> Vec<u8> {
    let header = Header {
        version: ProtocolVersion::V2_5,
        vendor_id: VendorId([1, 0x10]),
        guid_prefix: from,
    };
    message_to_vec(&header, subs, Endianness::Little).unwrap()
}

/// An SPDP DATA from `from` announcing `data`.
fn spdp(from: GuidPrefix, seq: i64, data: &ParticipantData) -> Vec<u8> {
    let payload = data.to_vec(Endianness::Little).unwrap();
    message(
        from,
        &[Data {
            extra_flags: 0,
            reader_id: EntityId::SPDP_PARTICIPANT_READER,
            writer_id: EntityId::SPDP_PARTICIPANT_WRITER,
            writer_sn: SequenceNumber(seq),
            inline_qos: None,
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        }
        .into()],
    )
}

/// An SPDP goodbye from `from` naming `guid`.
fn spdp_goodbye(from: GuidPrefix, seq: i64, guid: Guid) -> Vec<u8> {
    let mut qos = Vec::new();
    let mut b = ParameterListBuilder::new(&mut qos, Endianness::Little);
    b.push(pid::KEY_HASH, &guid.to_bytes()).unwrap();
    // Four octets, the flags in the last one.
    let flags = (STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED).to_be_bytes();
    b.push(pid::STATUS_INFO, &flags).unwrap();
    b.finish();
    let (list, _) = ParameterList::parse(&qos, Endianness::Little).unwrap();
    message(
        from,
        &[Data {
            extra_flags: 0,
            reader_id: EntityId::SPDP_PARTICIPANT_READER,
            writer_id: EntityId::SPDP_PARTICIPANT_WRITER,
            writer_sn: SequenceNumber(seq),
            inline_qos: Some(list),
            payload: DataPayload::None,
            non_standard_payload: false,
        }
        .into()],
    )
}

/// A remote participant `n` whose locators are on 127.0.0.1.
fn remote(n: u32) -> ParticipantData {
    let mut data = ParticipantData::new(prefix(n));
    data.metatraffic_unicast_locators = vec![v4(127, 0, 0, 1, 9000)];
    data.default_unicast_locators = vec![v4(127, 0, 0, 1, 9001)];
    data
}

/// An SEDP DATA from `from`'s subscriptions writer announcing a best-effort reader of topic
/// "t" with GUID `guid` and `locators`.
fn sedp_reader(from: GuidPrefix, seq: i64, guid: Guid, locators: Vec<Locator>) -> Vec<u8> {
    let mut qos = EndpointQos::reader_default();
    qos.reliability.kind = ReliabilityKind::BestEffort;
    let mut endpoint = EndpointData::new(guid, "t", "T", qos);
    endpoint.unicast_locators = locators;
    let payload = DiscoveredReaderData { endpoint }
        .to_vec(Endianness::Little)
        .unwrap();
    message(
        from,
        &[Data {
            extra_flags: 0,
            reader_id: EntityId::SEDP_SUBSCRIPTIONS_READER,
            writer_id: EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            writer_sn: SequenceNumber(seq),
            inline_qos: None,
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        }
        .into()],
    )
}

fn feed(c: &mut ParticipantCore, origin: Locator, datagram: &[u8]) -> Vec<Locator> {
    c.handle_datagram(NOW, origin, datagram);
    drain(c)
}

fn from_loopback() -> Locator {
    v4(127, 0, 0, 1, 50_000)
}

/// A HEARTBEAT from `from`'s SEDP publications writer to our SEDP publications reader: what
/// a peer running SEDP with us sends (and what makes it verified).
fn sedp_heartbeat(from: GuidPrefix, count: u32) -> Vec<u8> {
    message(
        from,
        &[Heartbeat {
            reader_id: EntityId::SEDP_PUBLICATIONS_READER,
            writer_id: EntityId::SEDP_PUBLICATIONS_WRITER,
            first_sn: SequenceNumber(1),
            last_sn: SequenceNumber(0),
            count,
            final_flag: false,
            liveliness_flag: false,
        }
        .into()],
    )
}

fn known(d: &Discovery, n: u32) -> bool {
    d.remote_participants().any(|r| r.guid.prefix == prefix(n))
}

#[test]
fn unverified_participants_give_way_to_newcomers() {
    let mut limits = Limits::default();
    limits.max_remote_participants = 5;
    let mut c = local(limits);
    for n in 0..20 {
        feed(&mut c, from_loopback(), &spdp(prefix(n), 1, &remote(n)));
    }
    // Nobody ran SEDP with us: the newest five are held, the oldest pushed out.
    assert_eq!(c.discovery.remote_participants().count(), 5);
    assert!((15..20).all(|n| known(&c.discovery, n)));
    assert_eq!(c.discovery.stats().participants_evicted, 15);
    assert_eq!(c.discovery.stats().participants_rejected, 0);
    // 15..20 run SEDP with us: verified, never pushed out; newcomers are refused.
    for n in 15..20 {
        feed(&mut c, from_loopback(), &sedp_heartbeat(prefix(n), 1));
    }
    assert_eq!(c.discovery.stats().participants_verified, 5);
    feed(&mut c, from_loopback(), &spdp(prefix(100), 1, &remote(100)));
    assert!(!known(&c.discovery, 100));
    assert_eq!(c.discovery.stats().participants_rejected, 1);
    // A HEARTBEAT from a participant we do not hold proves nothing.
    feed(&mut c, from_loopback(), &sedp_heartbeat(prefix(101), 1));
    assert_eq!(c.discovery.stats().participants_verified, 5);
    // One leaving makes room for a newcomer.
    feed(
        &mut c,
        from_loopback(),
        &spdp_goodbye(prefix(15), 3, Guid::new(prefix(15), EntityId::PARTICIPANT)),
    );
    feed(&mut c, from_loopback(), &spdp(prefix(100), 2, &remote(100)));
    assert!(known(&c.discovery, 100));
    assert_eq!(c.discovery.remote_participants().count(), 5);
}

#[test]
fn one_address_holds_a_bounded_share_of_unverified_participants() {
    let mut limits = Limits::default();
    limits.max_unverified_per_source = 3;
    let mut c = local(limits);
    for n in 0..10 {
        feed(&mut c, from_loopback(), &spdp(prefix(n), 1, &remote(n)));
    }
    assert_eq!(c.discovery.remote_participants().count(), 3);
    assert!((7..10).all(|n| known(&c.discovery, n)));
    // Another address has its own share.
    let mut elsewhere = remote(50);
    elsewhere.metatraffic_unicast_locators = vec![v4(127, 0, 0, 2, 9000)];
    elsewhere.default_unicast_locators = vec![v4(127, 0, 0, 2, 9001)];
    feed(
        &mut c,
        v4(127, 0, 0, 2, 50_000),
        &spdp(prefix(50), 1, &elsewhere),
    );
    assert!(known(&c.discovery, 50));
    // A verified one no longer counts against its address's share.
    feed(&mut c, from_loopback(), &sedp_heartbeat(prefix(9), 1));
    for n in 10..13 {
        feed(&mut c, from_loopback(), &spdp(prefix(n), 1, &remote(n)));
    }
    assert!(known(&c.discovery, 9), "verified, so never pushed out");
    assert!((10..13).all(|n| known(&c.discovery, n)));
    assert_eq!(c.discovery.remote_participants().count(), 5);
}

#[test]
fn an_unverified_participant_s_infinite_lease_is_capped() {
    let limits = Limits::default();
    let cap = limits.unverified_lease;
    let mut c = local(limits);
    for n in [1, 2] {
        let mut data = remote(n);
        data.lease_duration = ferrodds_rtps::qos::Duration::INFINITE;
        feed(&mut c, from_loopback(), &spdp(prefix(n), 1, &data));
    }
    feed(&mut c, from_loopback(), &sedp_heartbeat(prefix(2), 1));
    let later = NOW.after(cap + Duration::from_secs(1));
    c.handle_timeout(later);
    assert!(
        !known(&c.discovery, 1),
        "unverified: held no longer than {cap:?}"
    );
    assert!(known(&c.discovery, 2), "verified: its infinite lease holds");
}

#[test]
fn announced_locators_are_bound_to_the_sender_address() {
    let mut c = local(Limits::default());
    let mut data = remote(1);
    // A third party's address, the sender's address, and a kind we cannot send to.
    data.metatraffic_unicast_locators = vec![
        v4(10, 1, 2, 3, 7410),
        v4(127, 0, 0, 1, 7412),
        Locator {
            kind: Locator::KIND_UDPV6,
            port: 7410,
            address: [0xfe; 16],
        },
    ];
    data.default_unicast_locators = vec![v4(192, 0, 2, 7, 7411)];
    let sent = feed(&mut c, from_loopback(), &spdp(prefix(1), 1, &data));
    let known = c.discovery.remote_participants().next().unwrap();
    assert_eq!(
        known.metatraffic_unicast_locators,
        [v4(127, 0, 0, 1, 7410), v4(127, 0, 0, 1, 7412)]
    );
    assert_eq!(known.default_unicast_locators, [v4(127, 0, 0, 1, 7411)]);
    assert_eq!(c.discovery.stats().locators_rewritten, 2);
    // The answer to the newcomer and the SEDP traffic go to the sender's address only.
    assert!(!sent.is_empty());
    for l in sent {
        let ip = *l.as_udpv4().unwrap().ip();
        assert!(
            ip == Ipv4Addr::LOCALHOST || ip == SPDP_GROUP,
            "sent to {l:?}"
        );
    }
}

#[test]
fn locators_a_transport_reaches_are_kept_as_announced_and_preferred() {
    // Vendor kinds standing for this process's participants and this host's; UDPv6, which
    // no transport here sends to; the same vendor kinds with other addresses.
    const IN_PROCESS: i32 = 0x4644_0001;
    const SHARED_MEMORY: i32 = 0x4644_0002;
    let other = |kind, address, port| Locator {
        kind,
        port,
        address: [address; 16],
    };
    let mut c = local_reaching(
        Limits::default(),
        vec![other(IN_PROCESS, 0xfe, 1), other(SHARED_MEMORY, 0x5d, 2)],
    );
    let mut data = remote(1);
    data.default_unicast_locators = vec![
        other(IN_PROCESS, 0xfe, 7),
        other(SHARED_MEMORY, 0x5d, 8),
        other(Locator::KIND_UDPV6, 0xfe, 7),
        v4(127, 0, 0, 1, 7412),
    ];
    feed(&mut c, from_loopback(), &spdp(prefix(1), 1, &data));
    let mut elsewhere = remote(2);
    elsewhere.default_unicast_locators = vec![
        other(IN_PROCESS, 0xab, 7),
        other(SHARED_MEMORY, 0xab, 8),
        v4(127, 0, 0, 1, 7414),
    ];
    feed(&mut c, from_loopback(), &spdp(prefix(2), 1, &elsewhere));
    let mut same_host = remote(3);
    same_host.default_unicast_locators = vec![
        other(IN_PROCESS, 0xab, 7),
        other(SHARED_MEMORY, 0x5d, 9),
        v4(127, 0, 0, 1, 7416),
    ];
    feed(&mut c, from_loopback(), &spdp(prefix(3), 1, &same_host));
    let known = |n| {
        c.discovery
            .remote_participants()
            .find(|p| p.guid.prefix == prefix(n))
            .unwrap()
            .default_unicast_locators
            .clone()
    };
    // Reached in process: that locator only (UDP or shared memory would carry
    // everything again).
    assert_eq!(known(1), [other(IN_PROCESS, 0xfe, 7)]);
    // Another host's: by UDP.
    assert_eq!(known(2), [v4(127, 0, 0, 1, 7414)]);
    // Another process of this host: by shared memory.
    assert_eq!(known(3), [other(SHARED_MEMORY, 0x5d, 9)]);
}

#[test]
fn locator_lists_are_bounded() {
    let mut limits = Limits::default();
    limits.max_locators = 2;
    let mut c = local(limits);
    let mut data = remote(1);
    data.metatraffic_unicast_locators = (0..10).map(|i| v4(127, 0, 0, 1, 7000 + i)).collect();
    data.metatraffic_multicast_locators = (0..10).map(|i| v4(239, 0, 0, 1, 7000 + i)).collect();
    feed(&mut c, from_loopback(), &spdp(prefix(1), 1, &data));
    let known = c.discovery.remote_participants().next().unwrap();
    assert_eq!(known.metatraffic_unicast_locators.len(), 2);
    assert_eq!(known.metatraffic_multicast_locators.len(), 2);
    assert_eq!(c.discovery.stats().locators_dropped, 16);
}

#[test]
fn a_known_participant_cannot_be_moved_elsewhere() {
    let mut c = local(Limits::default());
    feed(&mut c, from_loopback(), &spdp(prefix(1), 1, &remote(1)));
    // The same GUID, announced from another address (or with other locators).
    let mut moved = remote(1);
    moved.metatraffic_unicast_locators = vec![v4(10, 9, 9, 9, 7410)];
    let sent = feed(&mut c, v4(10, 9, 9, 9, 7410), &spdp(prefix(1), 2, &moved));
    let known = c.discovery.remote_participants().next().unwrap();
    assert_eq!(known.metatraffic_unicast_locators, [v4(127, 0, 0, 1, 9000)]);
    assert_eq!(c.discovery.stats().locator_changes_ignored, 1);
    assert!(sent
        .iter()
        .all(|l| l.as_udpv4().unwrap().ip() != &Ipv4Addr::new(10, 9, 9, 9)));
}

#[test]
fn identities_must_belong_to_their_sender() {
    let mut c = local(Limits::default());
    // SPDP for participant 2 inside a message from participant 1.
    feed(&mut c, from_loopback(), &spdp(prefix(1), 1, &remote(2)));
    assert_eq!(c.discovery.remote_participants().count(), 0);
    assert_eq!(c.discovery.stats().mismatched_participants, 1);
    feed(&mut c, from_loopback(), &spdp(prefix(2), 1, &remote(2)));
    // A goodbye for participant 2 sent by participant 1 is ignored.
    feed(
        &mut c,
        from_loopback(),
        &spdp_goodbye(prefix(1), 2, Guid::new(prefix(2), EntityId::PARTICIPANT)),
    );
    assert_eq!(c.discovery.remote_participants().count(), 1);
    assert_eq!(c.discovery.stats().mismatched_participants, 2);
    // Participant 2 announces a reader that belongs to participant 3: dropped.
    let foreign = Guid::new(prefix(3), EntityId([0, 0, 9, 0x07]));
    feed(
        &mut c,
        from_loopback(),
        &sedp_reader(prefix(2), 1, foreign, vec![]),
    );
    assert_eq!(c.discovery.remote_endpoint_count(), 0);
    assert_eq!(c.discovery.stats().foreign_endpoints, 1);
}

#[test]
fn endpoint_locators_must_be_on_their_participant_address() {
    let mut c = local(Limits::default());
    feed(&mut c, from_loopback(), &spdp(prefix(1), 1, &remote(1)));
    let reader = Guid::new(prefix(1), EntityId([0, 0, 9, 0x07]));
    // The reader asks for our user data at a third party's address, and at its own.
    let locators = vec![v4(192, 0, 2, 1, 7411), v4(127, 0, 0, 1, 7777)];
    feed(
        &mut c,
        from_loopback(),
        &sedp_reader(prefix(1), 1, reader, locators),
    );
    assert_eq!(c.discovery.stats().locators_dropped, 1);
    assert_eq!(
        c.discovery
            .matched_with(Guid::new(LOCAL, USER_WRITER))
            .count(),
        1
    );
    let w = c.rtps.writer(USER_WRITER).unwrap();
    let matched: Vec<_> = w
        .matched_readers()
        .flat_map(|r| r.locators.clone())
        .collect();
    assert_eq!(matched, [v4(127, 0, 0, 1, 7777)]);
}

#[test]
fn remote_endpoints_are_bounded_in_all_and_per_participant() {
    let mut limits = Limits::default();
    limits.max_remote_endpoints = 5;
    limits.max_endpoints_per_participant = 3;
    let mut c = local(limits);
    for n in 1..=3 {
        feed(&mut c, from_loopback(), &spdp(prefix(n), 1, &remote(n)));
        for e in 1..=4u8 {
            let guid = Guid::new(prefix(n), EntityId([0, 0, e, 0x07]));
            let sedp = sedp_reader(prefix(n), i64::from(e), guid, vec![]);
            feed(&mut c, from_loopback(), &sedp);
        }
    }
    // Participant 1: 3 of 4 (per participant); participant 2: 2 of 4 (in all); 3: none.
    assert_eq!(c.discovery.remote_endpoint_count(), 5);
    assert_eq!(c.discovery.stats().endpoints_rejected, 7);
}

fn frag<'a>(
    seq: i64,
    sample_size: u32,
    fragment_size: u16,
    start: u32,
    bytes: &'a [u8],
) -> DataFrag<'a> {
    let count = bytes.len().div_ceil(usize::from(fragment_size)) as u16;
    DataFrag {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: USER_WRITER,
        writer_sn: SequenceNumber(seq),
        fragment_starting_num: start,
        fragments_in_submessage: count,
        fragment_size,
        sample_size,
        inline_qos: None,
        key: false,
        non_standard_payload: false,
        fragments: bytes,
    }
}

/// A participant with one reliable user reader matched with `USER_WRITER` of participant 1.
fn reader_with(limits: Limits) -> Participant {
    let config = limits.reader_config(true);
    let mut p = Participant::with_limits(LOCAL, limits);
    p.add_reader(Reader::new(Guid::new(LOCAL, USER_READER), config));
    p.reader(USER_READER).unwrap().match_writer(
        NOW,
        RemoteWriter {
            guid: Guid::new(prefix(1), USER_WRITER),
            locators: vec![v4(127, 0, 0, 1, 9001)],
            reliable: true,
        },
    );
    while p.poll_transmit().is_some() {}
    p
}

fn send_frag(p: &mut Participant, f: DataFrag<'_>) {
    let bytes = message(prefix(1), &[f.into()]);
    p.handle_datagram(NOW, from_loopback(), &bytes);
}

#[test]
fn a_4_gib_sample_from_a_matched_writer_reserves_nothing() {
    let mut p = reader_with(Limits::default());
    send_frag(&mut p, frag(1, u32::MAX, 1, 1, &[0xaa]));
    let r = p.reader(USER_READER).unwrap();
    assert_eq!((r.reassembly_bytes(), r.reassembly_fragments()), (0, 0));
    assert_eq!(p.reader_stats().oversized, 1);
}

#[test]
fn tiny_fragments_pay_for_their_bookkeeping() {
    // 1-byte fragments used to count as 1 byte each against max_reassembly_bytes while a
    // map entry and an allocation each cost some 60 bytes more: 512 MiB of budget could
    // hold ~30 GiB. Now each is charged FRAGMENT_OVERHEAD beside its byte.
    let mut limits = Limits::default();
    limits.max_reassembly_bytes = 64 * 1024;
    let mut p = reader_with(limits.clone());
    let data = vec![7u8; 60_000];
    send_frag(&mut p, frag(1, 1_000_000, 1, 1, &data));
    let r = p.reader(USER_READER).unwrap();
    assert!(r.reassembly_bytes() <= limits.max_reassembly_bytes);
    // (64 KiB - 256) / 65 of them, where 64 KiB of 1-byte fragments were taken before.
    assert!(
        r.reassembly_fragments() < 1100,
        "{}",
        r.reassembly_fragments()
    );
    assert_eq!(p.reader_stats().reassembly_full, 1);
}

#[test]
fn fragments_under_reassembly_are_bounded() {
    let mut limits = Limits::default();
    limits.max_reassembly_fragments = 10;
    let mut p = reader_with(limits);
    for seq in 1..=20 {
        send_frag(&mut p, frag(seq, 100, 10, 1, &[1; 10]));
    }
    let r = p.reader(USER_READER).unwrap();
    assert_eq!(r.reassembly_fragments(), 10);
    assert_eq!(p.reader_stats().reassembly_full, 10);
}

#[test]
fn a_full_reassembly_keeps_no_empty_entries() {
    // Regression: once the reassembly limits were reached, every DATA_FRAG of a new
    // sequence number still left an empty entry behind, so a matched writer could grow the
    // reader's table without bound, one sequence number at a time. Completing the samples
    // held releases exactly what they held.
    let mut limits = Limits::default();
    // Room for one sample (256) with its two 500-byte fragments (2 x 564), and while it
    // has one, for the bookkeeping of a second sample but not for its fragment.
    limits.max_reassembly_bytes = 1500;
    let mut p = reader_with(limits);
    send_frag(&mut p, frag(1, 1000, 500, 1, &[1; 500]));
    let held = p.reader(USER_READER).unwrap().reassembly_bytes();
    for seq in 2..5000 {
        send_frag(&mut p, frag(seq, 1000, 500, 1, &[2; 500]));
    }
    assert_eq!(p.reader(USER_READER).unwrap().reassembly_bytes(), held);
    // Asked what it misses, the reader says: fragment 2 of sample 1 (NACK_FRAG), and
    // samples 2 onwards whole (ACKNACK) — it holds nothing of them.
    let heartbeat = Heartbeat {
        reader_id: EntityId::UNKNOWN,
        writer_id: USER_WRITER,
        first_sn: SequenceNumber(1),
        last_sn: SequenceNumber(300),
        count: 1,
        final_flag: false,
        liveliness_flag: false,
    };
    p.handle_datagram(
        NOW,
        from_loopback(),
        &message(prefix(1), &[heartbeat.into()]),
    );
    let reply = p.poll_transmit().unwrap();
    let (_, iter) = Message::parse(&reply.payload).unwrap();
    let nack_frags: Vec<i64> = iter
        .filter_map(|sm| match sm {
            Ok(Submessage::NackFrag(n)) => Some(n.writer_sn.0),
            _ => None,
        })
        .collect();
    assert_eq!(nack_frags, [1]);
    send_frag(&mut p, frag(1, 1000, 500, 2, &[3; 500]));
    let r = p.reader(USER_READER).unwrap();
    assert_eq!((r.reassembly_bytes(), r.reassembly_fragments()), (0, 0));
    let change = r.poll_change().unwrap();
    assert_eq!(change.payload.len(), 1000);
    assert_eq!(change.origin, from_loopback());
}

#[test]
fn the_heartbeats_of_one_datagram_draw_one_acknack() {
    // A batching writer's full datagram asks for an acknowledgment every few samples: the
    // reader answers once, after the datagram, with what it knows then.
    let mut p = reader_with(Limits::default());
    let heartbeats: Vec<Submessage<'_>> = (1..=20)
        .map(|i| {
            Heartbeat {
                reader_id: EntityId::UNKNOWN,
                writer_id: USER_WRITER,
                first_sn: SequenceNumber(1),
                last_sn: SequenceNumber(i * 16),
                count: i as u32,
                final_flag: false,
                liveliness_flag: false,
            }
            .into()
        })
        .collect();
    p.handle_datagram(NOW, from_loopback(), &message(prefix(1), &heartbeats));
    let mut acknacks = Vec::new();
    while let Some(t) = p.poll_transmit() {
        let (_, iter) = Message::parse(&t.payload).unwrap();
        acknacks.extend(iter.filter_map(|sm| match sm {
            Ok(Submessage::AckNack(a)) => Some(a.reader_sn_state.iter().count()),
            _ => None,
        }));
    }
    // One, listing everything up to the last HEARTBEAT's 320 as missing (at most 256 fit).
    assert_eq!(acknacks, [256]);
}

#[test]
fn changes_held_out_of_order_are_bounded() {
    let mut limits = Limits::default();
    limits.max_out_of_order = 8;
    let mut p = reader_with(limits);
    let payload = [0u8, 1, 0, 0, 9, 9, 9, 9];
    for seq in 2..=20 {
        let bytes = message(
            prefix(1),
            &[Data {
                extra_flags: 0,
                reader_id: EntityId::UNKNOWN,
                writer_id: USER_WRITER,
                writer_sn: SequenceNumber(seq),
                inline_qos: None,
                payload: DataPayload::Data(&payload),
                non_standard_payload: false,
            }
            .into()],
        );
        p.handle_datagram(NOW, from_loopback(), &bytes);
    }
    assert_eq!(p.reader_stats().out_of_order_dropped, 11);
}

#[test]
fn absurd_gaps_do_not_overflow_the_lost_counter() {
    // Found by the `reassembly` fuzz target: a writer can declare nearly 2^63 changes lost
    // with one GAP, and so can the next writer, and `lost` overflowed (a panic in debug
    // builds, a wrapped counter in release ones). It saturates now. (The fuzzer's writer
    // did it again after each rematch; a writer matched again now goes on where it was,
    // so three writers do it here.)
    let mut p = reader_with(Limits::default());
    let gap = |from: u32, count: i64| {
        let mut list = SequenceNumberSet::new(SequenceNumber(i64::MAX - 300));
        list.insert(SequenceNumber(i64::MAX - 300 + count));
        message(
            prefix(from),
            &[Gap {
                reader_id: EntityId::UNKNOWN,
                writer_id: USER_WRITER,
                gap_start: SequenceNumber(1),
                gap_list: list,
            }
            .into()],
        )
    };
    for round in 0..3u32 {
        if round > 0 {
            p.reader(USER_READER).unwrap().match_writer(
                NOW,
                RemoteWriter {
                    guid: Guid::new(prefix(1 + round), USER_WRITER),
                    locators: vec![v4(127, 0, 0, 1, 9001)],
                    reliable: true,
                },
            );
        }
        p.handle_datagram(NOW, from_loopback(), &gap(1 + round, i64::from(round)));
    }
    assert_eq!(p.reader_stats().lost, u64::MAX);
}

#[test]
fn sequence_numbers_at_the_end_of_the_range_do_not_overflow() {
    // Found by the `reassembly` fuzz target: after a GAP up to near i64::MAX, the ACKNACK
    // that answers a HEARTBEAT computed its last sequence number as base + 255, which
    // overflowed (a panic in debug builds, in the receive thread). A change numbered i64::MAX
    // had the same problem (the next one expected is one more); it is dropped.
    for reliable in [true, false] {
        let mut p = reader_with(Limits::default());
        p.reader(USER_READER)
            .unwrap()
            .unmatch_writer(Guid::new(prefix(1), USER_WRITER));
        p.reader(USER_READER).unwrap().match_writer(
            NOW,
            RemoteWriter {
                guid: Guid::new(prefix(1), USER_WRITER),
                locators: vec![v4(127, 0, 0, 1, 9001)],
                reliable,
            },
        );
        while p.poll_transmit().is_some() {}
        let end = i64::MAX - 10;
        let gap = Gap {
            reader_id: EntityId::UNKNOWN,
            writer_id: USER_WRITER,
            gap_start: SequenceNumber(1),
            gap_list: SequenceNumberSet::new(SequenceNumber(end)),
        };
        let heartbeat = Heartbeat {
            reader_id: EntityId::UNKNOWN,
            writer_id: USER_WRITER,
            first_sn: SequenceNumber(end),
            last_sn: SequenceNumber(i64::MAX),
            count: 1,
            final_flag: false,
            liveliness_flag: false,
        };
        let payload = [0u8, 1, 0, 0, 1, 2, 3, 4];
        let last = Data {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: USER_WRITER,
            writer_sn: SequenceNumber(i64::MAX),
            inline_qos: None,
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        };
        let datagram = message(prefix(1), &[gap.into(), heartbeat.into(), last.into()]);
        p.handle_datagram(NOW, from_loopback(), &datagram);
        p.handle_timeout(NOW);
        if reliable {
            assert!(
                p.poll_transmit().is_some(),
                "an ACKNACK answers the HEARTBEAT"
            );
        }
        assert!(p.reader(USER_READER).unwrap().poll_change().is_none());
    }
}
