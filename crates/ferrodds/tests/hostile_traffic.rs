//! Hostile traffic over loopback: crafted datagrams sent to a running participant from a
//! socket that plays an attacker — sometimes a stranger, sometimes a participant it has
//! announced itself as (so that its traffic reaches the protocol layers behind discovery:
//! a matched writer's fragments, a matched reader's ACKNACKs).
//!
//! After each case: the participant is alive, the process's resident memory grew by less
//! than [`RSS_BOUND_KIB`], legitimate traffic between two participants still flows, and a
//! counter says what was dropped. `docs/robustness.md` ("Hostile traffic") lists every
//! case with what FerroDDS does and the counter's name.
//!
//! Each test has its own domain (20–29). They run one at a time (they measure the
//! process's memory, which parallel tests would disturb).

#![allow(clippy::unwrap_used)]

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ferrodds::{
    DataReader, DataWriter, DomainParticipant, Limits, ParticipantBuilder, Qos,
    SampleRejectedReason,
};
use ferrodds_cdr::Cdr;

mod spdp_flood;
use ferrodds_rtps::discovery::{
    DiscoveredReaderData, DiscoveredWriterData, EndpointData, ParticipantData,
};
use ferrodds_rtps::qos::EndpointQos;
use ferrodds_rtps::wire::parameter_list::pid;
use ferrodds_rtps::wire::{
    message_to_vec, AckNack, Data, DataFrag, DataPayload, Endianness, EntityId, FragmentNumberSet,
    Guid, GuidPrefix, Header, Heartbeat, InfoDestination, Locator, Message, NackFrag,
    ParameterList, ParameterListBuilder, ProtocolVersion, SequenceNumber, SequenceNumberSet,
    Submessage, VendorId,
};

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::HostileTraffic")]
struct Msg {
    #[cdr(key)]
    id: i32,
    text: String,
    values: Vec<u32>,
}

const TOPIC: &str = "hostile_traffic";
const TYPE: &str = "test::HostileTraffic";

/// How much the process's resident memory (VmRSS) may grow while a test sends its hostile
/// traffic: 64 MiB. The largest holder is reassembly at the default limits (262,144
/// fragments of 1 byte, some 23 MiB). Before the fragment limit and the per-fragment charge,
/// the 1.2 million fragments of `fragments_from_a_matched_writer_stay_bounded` would all
/// have been kept (over 100 MiB), and the 512 MiB budget admitted 512 million of them.
const RSS_BOUND_KIB: u64 = 64 * 1024;

/// The tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// VmRSS of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Resident memory before the hostile traffic, to compare with after it.
struct Rss(u64);

impl Rss {
    fn now() -> Rss {
        Rss(rss_kib())
    }

    fn check(&self, case: &str) {
        let after = rss_kib();
        let grown = after.saturating_sub(self.0);
        println!("{case}: VmRSS {} -> {after} KiB (+{grown} KiB)", self.0);
        assert!(
            grown < RSS_BOUND_KIB,
            "{case}: VmRSS grew by {grown} KiB, over the bound of {RSS_BOUND_KIB} KiB"
        );
    }
}

fn builder(domain: u32) -> ParticipantBuilder {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
}

fn participant(domain: u32) -> DomainParticipant {
    builder(domain).build().unwrap()
}

/// A legitimate writer on `b` and reader on `a`, matched.
fn legit_pair(a: &DomainParticipant, b: &DomainParticipant) -> (DataWriter<Msg>, DataReader<Msg>) {
    let reader = a
        .create_reader(
            &a.create_topic_with_type_name::<Msg>(TOPIC, TYPE).unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    let writer = b
        .create_writer(
            &b.create_topic_with_type_name::<Msg>(TOPIC, TYPE).unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, Duration::from_secs(10)).unwrap();
    reader.wait_for_matched(1, Duration::from_secs(10)).unwrap();
    (writer, reader)
}

/// Legitimate traffic still flows: sample `id` from `writer` reaches `reader`.
fn still_flows(writer: &DataWriter<Msg>, reader: &DataReader<Msg>, id: i32) {
    let sample = Msg {
        id,
        text: "legitimate".into(),
        values: vec![1, 2, 3],
    };
    writer.write(&sample).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if reader.wait_for_data(Duration::from_millis(200))
            && reader
                .take()
                .unwrap()
                .iter()
                .any(|s| s.data.as_ref() == Some(&sample))
        {
            return;
        }
    }
    panic!("legitimate sample {id} did not arrive");
}

fn prefix(tag: u8, n: u32) -> GuidPrefix {
    let mut p = [0xa7, tag, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    p[8..].copy_from_slice(&n.to_be_bytes());
    GuidPrefix(p)
}

fn message(from: GuidPrefix, subs: &[Submessage<'_>]) -> Vec<u8> {
    let header = Header {
        version: ProtocolVersion::V2_5,
        vendor_id: VendorId([1, 0x10]),
        guid_prefix: from,
    };
    message_to_vec(&header, subs, Endianness::Little).unwrap()
}

/// A bare RTPS header from `from`, for hand-made submessages.
fn header_bytes(from: GuidPrefix) -> Vec<u8> {
    let mut h = b"RTPS\x02\x05\x01\x10".to_vec();
    h.extend_from_slice(&from.0);
    h
}

fn data<'a>(
    reader_id: EntityId,
    writer_id: EntityId,
    seq: i64,
    inline_qos: Option<ParameterList<'a>>,
    payload: &'a [u8],
) -> Submessage<'a> {
    Data {
        extra_flags: 0,
        reader_id,
        writer_id,
        writer_sn: SequenceNumber(seq),
        inline_qos,
        payload: DataPayload::Data(payload),
        non_standard_payload: false,
    }
    .into()
}

/// Waits until `done` holds (polling), or panics after 10 s.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A socket that plays a remote participant with GUID prefix `prefix`, talking to the
/// participant at `target`.
struct Attacker {
    socket: UdpSocket,
    prefix: GuidPrefix,
    target: SocketAddrV4,
    spdp_seq: i64,
    publications_seq: i64,
    subscriptions_seq: i64,
}

impl Attacker {
    fn new(target: &DomainParticipant, prefix: GuidPrefix) -> Attacker {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        Attacker {
            socket,
            prefix,
            target: target.metatraffic_address().unwrap(),
            spdp_seq: 0,
            publications_seq: 0,
            subscriptions_seq: 0,
        }
    }

    fn locator(&self) -> Locator {
        let std::net::SocketAddr::V4(a) = self.socket.local_addr().unwrap() else {
            panic!("IPv4 only");
        };
        Locator::udpv4(*a.ip(), a.port())
    }

    fn send(&self, datagram: &[u8]) {
        // A datagram the kernel refuses (buffer full) is a datagram lost: fine here.
        let _ = self.socket.send_to(datagram, self.target);
    }

    fn send_subs(&self, subs: &[Submessage<'_>]) {
        self.send(&message(self.prefix, subs));
    }

    /// Everything that arrived at the attacker's socket within `wait`.
    fn received(&self, wait: Duration) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + wait;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 65536];
        while Instant::now() < deadline {
            if let Ok(n) = self.socket.recv(&mut buf) {
                out.push(buf[..n].to_vec());
            }
        }
        out
    }

    /// SPDP: announces `data` (by default, itself at its own socket).
    fn announce_as(&mut self, header_prefix: GuidPrefix, data: &ParticipantData) {
        self.spdp_seq += 1;
        let payload = data.to_vec(Endianness::Little).unwrap();
        self.send(&message(
            header_prefix,
            &[data_sub_spdp(self.spdp_seq, &payload)],
        ));
    }

    fn own_data(&self) -> ParticipantData {
        let mut d = ParticipantData::new(self.prefix);
        d.metatraffic_unicast_locators = vec![self.locator()];
        d.default_unicast_locators = vec![self.locator()];
        d.lease_duration = ferrodds_rtps::qos::Duration::from_secs(60);
        d
    }

    fn announce(&mut self) {
        let d = self.own_data();
        self.announce_as(self.prefix, &d);
    }

    /// SEDP: announces a writer of the test topic.
    fn announce_writer(&mut self, guid: Guid) {
        self.publications_seq += 1;
        let endpoint = EndpointData::new(guid, TOPIC, TYPE, EndpointQos::writer_default());
        let payload = DiscoveredWriterData { endpoint }
            .to_vec(Endianness::Little)
            .unwrap();
        self.send_subs(&[data(
            EntityId::SEDP_PUBLICATIONS_READER,
            EntityId::SEDP_PUBLICATIONS_WRITER,
            self.publications_seq,
            None,
            &payload,
        )]);
    }

    /// SEDP: announces a reliable reader of the test topic at `locators`.
    fn announce_reader(&mut self, guid: Guid, locators: Vec<Locator>) {
        self.subscriptions_seq += 1;
        let mut qos = EndpointQos::reader_default();
        qos.reliability = ferrodds_rtps::qos::Reliability::reliable();
        qos.data_representation.ids = vec![
            ferrodds_rtps::qos::DataRepresentationId::XCDR,
            ferrodds_rtps::qos::DataRepresentationId::XCDR2,
        ];
        let mut endpoint = EndpointData::new(guid, TOPIC, TYPE, qos);
        endpoint.unicast_locators = locators;
        let payload = DiscoveredReaderData { endpoint }
            .to_vec(Endianness::Little)
            .unwrap();
        self.send_subs(&[data(
            EntityId::SEDP_SUBSCRIPTIONS_READER,
            EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            self.subscriptions_seq,
            None,
            &payload,
        )]);
    }

    /// Announces itself and a writer `writer_id`, and waits until `reader` matched it.
    fn become_matched_writer(&mut self, writer_id: EntityId, reader: &DataReader<Msg>) -> Guid {
        let guid = Guid::new(self.prefix, writer_id);
        self.announce();
        self.announce_writer(guid);
        eventually("the attacker's writer to match", || {
            reader.matched_publications().contains(&guid)
        });
        guid
    }

    /// Announces itself and a reader `reader_id`, and waits until `writer` matched it.
    fn become_matched_reader(&mut self, reader_id: EntityId, writer: &DataWriter<Msg>) -> Guid {
        let guid = Guid::new(self.prefix, reader_id);
        self.announce();
        let locators = vec![self.locator()];
        self.announce_reader(guid, locators);
        eventually("the attacker's reader to match", || {
            writer.matched_subscriptions().contains(&guid)
        });
        guid
    }
}

fn data_sub_spdp(seq: i64, payload: &[u8]) -> Submessage<'_> {
    data(
        EntityId::SPDP_PARTICIPANT_READER,
        EntityId::SPDP_PARTICIPANT_WRITER,
        seq,
        None,
        payload,
    )
}

const ATTACK_WRITER: EntityId = EntityId([0, 0, 0x0a, 0x02]);
const ATTACK_READER: EntityId = EntityId([0, 0, 0x0b, 0x07]);

/// Serialized `Msg` (XCDR2, as FerroDDS writes appendable types).
fn payload(m: &Msg) -> Vec<u8> {
    ferrodds_cdr::serialize(
        m,
        ferrodds_cdr::XcdrVersion::Xcdr2,
        ferrodds_cdr::Endianness::Little,
    )
    .unwrap()
}

/// Inline QoS holding a key hash.
fn key_hash_qos(hash: [u8; 16]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut b = ParameterListBuilder::new(&mut out, Endianness::Little);
    b.push(pid::KEY_HASH, &hash).unwrap();
    b.finish();
    out
}

// ------------------------------------------------------------------------------------------

/// Truncated headers and submessages, lengths past the end, fragment numbers beyond the
/// total, zero fragment sizes, a HEARTBEAT whose first is past last + 1, a GAP whose range
/// runs backwards, parameter lengths that overflow inline QoS, ACKNACK and NACK_FRAG
/// bitmaps of more than 256 bits, INFO_DST for other participants, and every submessage id
/// FerroDDS does not know: dropped at the wire layer and counted in `receive_stats()`.
#[test]
fn malformed_datagrams_are_dropped_and_counted() {
    let _serial = serial();
    let (a, b) = (participant(20), participant(20));
    let (writer, reader) = legit_pair(&a, &b);
    let attacker = Attacker::new(&a, prefix(20, 1));
    let rss = Rss::now();
    let before = a.receive_stats();
    let h = || header_bytes(prefix(20, 1));

    // Truncated headers: every length up to a whole header, and a wrong protocol id.
    let full = h();
    for len in 0..full.len() {
        attacker.send(&full[..len]);
    }
    let mut wrong = full.clone();
    wrong[3] = b'X';
    attacker.send(&wrong);
    let bad_datagrams = full.len() as u64 + 1;

    let mut malformed = 0u64;
    let mut send_malformed = |tail: &[u8]| {
        let mut m = h();
        m.extend_from_slice(tail);
        attacker.send(&m);
        malformed += 1;
    };
    // A truncated submessage header (3 of 4 bytes).
    send_malformed(&[0x15, 0x01, 0x10]);
    // Submessage lengths past the end: 0xffff, and one byte more than there is.
    send_malformed(&[0x15, 0x01, 0xff, 0xff, 0, 0, 0, 0]);
    send_malformed(&[0x07, 0x01, 29, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
    // A truncated HEARTBEAT (its length says 8 bytes: not enough for its fields).
    send_malformed(&[0x07, 0x01, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
    // HEARTBEAT first 100 > last 1 + 1.
    send_malformed(&[
        0x07, 0x01, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
        0, 1, 0, 0, 0,
    ]);
    // GAP whose list base (5) lies before its start (9).
    send_malformed(&[
        0x08, 0x01, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0,
        0, 0, 0, 0,
    ]);
    // DATA_FRAG: fragment 5 of a 4-fragment sample; fragment size 0.
    let frag_fixed = |start: u32, size: u16, sample: u32| {
        let mut v = vec![0x16, 0x01, 36, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2];
        v.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
        v.extend_from_slice(&start.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&size.to_le_bytes());
        v.extend_from_slice(&sample.to_le_bytes());
        v.extend_from_slice(&[0xaa; 4]);
        v
    };
    send_malformed(&frag_fixed(5, 4, 16));
    send_malformed(&frag_fixed(1, 0, 16));
    // DATA with inline QoS whose parameter length runs past the submessage.
    send_malformed(&[
        0x15, 0x03, 28, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0x70, 0,
        0xf0, 0xff, 1, 2, 3, 4,
    ]);
    // ACKNACK and NACK_FRAG whose bitmaps claim 0xffffffff bits.
    send_malformed(&[
        0x06, 0x01, 24, 0, 0, 0, 1, 7, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
        1, 0, 0, 0,
    ]);
    send_malformed(&[
        0x12, 0x01, 32, 0, 0, 0, 1, 7, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff,
        0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0,
    ]);

    // INFO_DST for another participant, then a HEARTBEAT it addresses.
    let hb = Heartbeat {
        reader_id: EntityId::UNKNOWN,
        writer_id: ATTACK_WRITER,
        first_sn: SequenceNumber(1),
        last_sn: SequenceNumber(1),
        count: 1,
        final_flag: false,
        liveliness_flag: false,
    };
    let other = InfoDestination {
        guid_prefix: prefix(20, 99),
    };
    attacker.send_subs(&[other.into(), hb.into()]);

    // Every submessage id FerroDDS does not know, each with a 4-byte body.
    let known = [
        0x01u8, 0x06, 0x07, 0x08, 0x09, 0x0c, 0x0d, 0x0e, 0x0f, 0x12, 0x13, 0x15, 0x16,
    ];
    let unknown: Vec<u8> = (0..=255u8).filter(|id| !known.contains(id)).collect();
    for chunk in unknown.chunks(32) {
        let mut m = h();
        for id in chunk {
            m.extend_from_slice(&[*id, 0x01, 4, 0, 1, 2, 3, 4]);
        }
        attacker.send(&m);
    }

    eventually("every datagram to be counted", || {
        let s = a.receive_stats();
        s.bad_datagrams - before.bad_datagrams >= bad_datagrams
            && s.malformed - before.malformed >= malformed
            && s.not_understood - before.not_understood >= unknown.len() as u64
    });
    still_flows(&writer, &reader, 1);
    let after = a.receive_stats();
    rss.check("malformed datagrams");
    assert_eq!(
        after.bad_datagrams - before.bad_datagrams,
        bad_datagrams,
        "{after:?}"
    );
    assert_eq!(after.malformed - before.malformed, malformed, "{after:?}");
    assert_eq!(
        after.not_understood - before.not_understood,
        unknown.len() as u64,
        "{after:?}"
    );
    assert!(after.not_for_us > before.not_for_us, "{after:?}");
}

/// SPDP and SEDP data whose strings and sequences claim 2^32-1 elements, and whose
/// parameter lengths overflow: the discovery data is dropped (`discovery_stats().malformed`)
/// and nothing is reserved for what it claims.
#[test]
fn hostile_discovery_data_is_dropped() {
    let _serial = serial();
    let (a, b) = (participant(21), participant(21));
    let (writer, reader) = legit_pair(&a, &b);
    let mut attacker = Attacker::new(&a, prefix(21, 1));
    let rss = Rss::now();
    let before = a.discovery_stats().malformed;

    let guid = Guid::new(attacker.prefix, EntityId::PARTICIPANT);
    let spdp_with = |extra: &dyn Fn(&mut ParameterListBuilder<'_>)| {
        let mut out = Vec::new();
        let mut pl = ParameterListBuilder::encapsulated(&mut out, Endianness::Little);
        pl.push_guid(pid::PARTICIPANT_GUID, guid).unwrap();
        extra(&mut pl);
        pl.finish();
        out
    };
    let huge = u32::MAX.to_le_bytes();
    let mut payloads = vec![
        // ENTITY_NAME: a string of 2^32-1 characters.
        spdp_with(&|pl| {
            pl.push(pid::ENTITY_NAME, &[&huge[..], b"abc\0"].concat())
                .unwrap();
        }),
        // USER_DATA: a sequence of 2^32-1 octets.
        spdp_with(&|pl| {
            pl.push(pid::USER_DATA, &[&huge[..], &[1, 2, 3, 4]].concat())
                .unwrap();
        }),
        // PARTICIPANT_LEASE_DURATION: 2 bytes where 8 are due.
        spdp_with(&|pl| {
            pl.push(pid::PARTICIPANT_LEASE_DURATION, &[1, 2]).unwrap();
        }),
    ];
    // A parameter whose length (0xfff0) runs past the end of the payload.
    let mut overflow = spdp_with(&|_| {});
    let sentinel = overflow.len() - 4;
    overflow.truncate(sentinel);
    overflow.extend_from_slice(&[0x62, 0, 0xf0, 0xff, 1, 2, 3, 4]);
    payloads.push(overflow);
    for p in &payloads {
        attacker.spdp_seq += 1;
        let seq = attacker.spdp_seq;
        attacker.send_subs(&[data_sub_spdp(seq, p)]);
    }
    // SEDP from a participant we know: a topic name of 2^32-1 characters, and a partition
    // list of 2^32-1 names.
    attacker.announce();
    eventually("the attacker to be discovered", || {
        a.discovered_participants().contains(&attacker.prefix)
    });
    let writer_guid = Guid::new(attacker.prefix, ATTACK_WRITER);
    for (id, value) in [
        (pid::TOPIC_NAME, [&huge[..], b"t\0\0\0"].concat()),
        (pid::PARTITION, [&huge[..], &[1, 0, 0, 0]].concat()),
    ] {
        let mut out = Vec::new();
        let mut pl = ParameterListBuilder::encapsulated(&mut out, Endianness::Little);
        pl.push_guid(pid::ENDPOINT_GUID, writer_guid).unwrap();
        pl.push_str(pid::TYPE_NAME, TYPE).unwrap();
        if id != pid::TOPIC_NAME {
            pl.push_str(pid::TOPIC_NAME, TOPIC).unwrap();
        }
        pl.push(id, &value).unwrap();
        pl.finish();
        attacker.publications_seq += 1;
        let seq = attacker.publications_seq;
        attacker.send_subs(&[data(
            EntityId::SEDP_PUBLICATIONS_READER,
            EntityId::SEDP_PUBLICATIONS_WRITER,
            seq,
            None,
            &out,
        )]);
    }
    let expected = payloads.len() as u64 + 2;
    eventually("the discovery data to be counted as malformed", || {
        a.discovery_stats().malformed - before >= expected
    });
    still_flows(&writer, &reader, 1);
    rss.check("hostile discovery data");
    assert!(!reader.matched_publications().contains(&writer_guid));
}

/// A matched writer sends samples whose string and sequence lengths are 2^32-1: they are
/// dropped as the reader takes them (or, with no key hash, as they arrive, their key being
/// unreadable) and counted in `sample_rejected_status()`; the good samples taken with them
/// still come out.
#[test]
fn undecodable_samples_from_a_matched_writer_are_dropped() {
    let _serial = serial();
    let (a, b) = (participant(22), participant(22));
    let (writer, reader) = legit_pair(&a, &b);
    let mut attacker = Attacker::new(&a, prefix(22, 1));
    attacker.become_matched_writer(ATTACK_WRITER, &reader);
    let rss = Rss::now();

    let good = Msg {
        id: 7,
        text: "fine".into(),
        values: vec![9],
    };
    let valid = payload(&good);
    // XCDR2 appendable: encapsulation, DHEADER, id, then the string length.
    let mut long_string = valid[..12].to_vec();
    long_string.extend_from_slice(&u32::MAX.to_le_bytes());
    long_string.extend_from_slice(b"abc\0");
    // The string is fine; the sequence claims 2^32-1 elements.
    let mut long_sequence = payload(&Msg {
        id: 7,
        text: "x".into(),
        values: vec![],
    });
    let n = long_sequence.len();
    long_sequence[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
    // The DHEADER claims 2^32-1 bytes.
    let mut long_dheader = valid.clone();
    long_dheader[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let hash_qos = key_hash_qos([7; 16]);
    let (hash, _) = ParameterList::parse(&hash_qos, Endianness::Little).unwrap();
    // In one datagram (so that one take meets them all): each bad payload with a key hash
    // (its instance is known; it fails when taken) and without (its key cannot be read: it
    // is rejected as it arrives), then a good sample.
    let mut subs = Vec::new();
    for bad in [&long_string, &long_sequence, &long_dheader] {
        let seq = subs.len() as i64 + 1;
        subs.push(data(EntityId::UNKNOWN, ATTACK_WRITER, seq, Some(hash), bad));
        subs.push(data(EntityId::UNKNOWN, ATTACK_WRITER, seq + 1, None, bad));
    }
    let hostile = subs.len() as u64;
    subs.push(data(
        EntityId::UNKNOWN,
        ATTACK_WRITER,
        hostile as i64 + 1,
        None,
        &valid,
    ));
    let mut taken = Vec::new();
    // The one datagram goes again every half second until it did its work: loopback can
    // lose a datagram on a loaded machine (a CI run did), and a copy must change nothing —
    // the reader has every sequence number of it already, rejected or not (checked below).
    let mut next_send = Instant::now();
    eventually(
        "the good sample to come out and the bad ones to be counted",
        || {
            if Instant::now() >= next_send {
                attacker.send_subs(&subs);
                next_send = Instant::now() + Duration::from_millis(500);
            }
            // read, then take: the undecodable samples are dropped by the read already.
            taken.extend(reader.read().unwrap());
            let _ = reader.take().unwrap();
            taken.iter().any(|s| s.data.as_ref() == Some(&good))
                && reader.sample_rejected_status().total_count >= hostile
        },
    );
    // A copy now is a copy of sequence numbers the reader has: nothing comes out, nothing
    // more is counted.
    attacker.send_subs(&subs);
    std::thread::sleep(Duration::from_millis(300));
    let again = reader.take().unwrap();
    assert!(again.iter().all(|s| s.data.as_ref() != Some(&good)));
    still_flows(&writer, &reader, 1);
    let status = reader.sample_rejected_status();
    rss.check("undecodable samples");
    assert_eq!(status.total_count, hostile, "{status:?}");
    assert_eq!(status.last_reason, Some(SampleRejectedReason::Undecodable));
}

/// A matched writer sends DATA_FRAGs claiming a 4 GiB sample, fragments of sizes that
/// contradict earlier ones, and a flood of 1-byte fragments of a 200 MB sample: nothing is
/// reserved for the claim (`reader_stats().oversized`), the contradictions are dropped
/// (`bad_fragments`), and the flood stops at the reassembly limits (`reassembly_full`).
#[test]
fn fragments_from_a_matched_writer_stay_bounded() {
    let _serial = serial();
    let (a, b) = (participant(23), participant(23));
    let (writer, reader) = legit_pair(&a, &b);
    let mut attacker = Attacker::new(&a, prefix(23, 1));
    attacker.become_matched_writer(ATTACK_WRITER, &reader);
    let rss = Rss::now();
    let before = a.reader_stats();
    let frag = |seq: i64, sample_size: u32, fragment_size: u16, start: u32, bytes: &[u8]| {
        let count = bytes.len().div_ceil(usize::from(fragment_size)) as u16;
        message(
            attacker.prefix,
            &[DataFrag {
                extra_flags: 0,
                reader_id: EntityId::UNKNOWN,
                writer_id: ATTACK_WRITER,
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
            .into()],
        )
    };
    // A sample of 4 GiB - 1.
    attacker.send(&frag(1, u32::MAX, 1024, 1, &[0xaa; 1024]));
    // Sample 2 in 1000-byte fragments, then in 500-byte ones.
    attacker.send(&frag(2, 100_000, 1000, 1, &[1; 1000]));
    attacker.send(&frag(2, 100_000, 500, 3, &[1; 500]));
    // 1-byte fragments of a 200 MB sample, 60,000 per datagram.
    let tiny = vec![0x5a; 60_000];
    for k in 0..20u32 {
        attacker.send(&frag(3, 200_000_000, 1, k * 60_000 + 1, &tiny));
        std::thread::sleep(Duration::from_millis(5));
    }
    eventually("the fragment flood to reach the limits", || {
        a.reader_stats().reassembly_full > before.reassembly_full
    });
    still_flows(&writer, &reader, 1);
    let after = a.reader_stats();
    rss.check("fragments");
    assert!(after.oversized > before.oversized, "{after:?}");
    assert!(after.bad_fragments > before.bad_fragments, "{after:?}");
    assert!(after.reassembly_full > before.reassembly_full, "{after:?}");
}

/// A matched writer sends a HEARTBEAT announcing 2^62 changes and a GAP over as many; a
/// matched reader sends ACKNACKs and NACK_FRAGs for sequence numbers and fragments that
/// never existed, and the same ACKNACK twice: the work stays bounded by the 256-bit sets and
/// by what the writer holds, repeated counts are ignored (`writer_stats().ignored_acknacks`),
/// and what goes back to the attacker is bounded.
#[test]
fn absurd_ranges_from_matched_endpoints_stay_bounded() {
    let _serial = serial();
    let (a, b) = (participant(24), participant(24));
    let (writer, reader) = legit_pair(&a, &b);
    let a_writer = a
        .create_writer(
            &a.create_topic_with_type_name::<Msg>(TOPIC, TYPE).unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let mut attacker = Attacker::new(&a, prefix(24, 1));
    attacker.become_matched_writer(ATTACK_WRITER, &reader);
    attacker.become_matched_reader(ATTACK_READER, &a_writer);
    for id in 0..3 {
        a_writer
            .write(&Msg {
                id,
                text: "history".into(),
                values: vec![],
            })
            .unwrap();
    }
    attacker.received(Duration::from_millis(300));
    let rss = Rss::now();
    let before = (a.receive_stats(), a.reader_stats(), a.writer_stats());
    let huge = 1i64 << 62;
    let hb = Heartbeat {
        reader_id: EntityId::UNKNOWN,
        writer_id: ATTACK_WRITER,
        first_sn: SequenceNumber(1),
        last_sn: SequenceNumber(huge),
        count: 1,
        final_flag: false,
        liveliness_flag: false,
    };
    let mut all = SequenceNumberSet::new(SequenceNumber(huge));
    for i in 0..256 {
        all.insert(SequenceNumber(huge + i));
    }
    let gap = ferrodds_rtps::wire::Gap {
        reader_id: EntityId::UNKNOWN,
        writer_id: ATTACK_WRITER,
        gap_start: SequenceNumber(1),
        gap_list: all,
    };
    attacker.send_subs(&[hb.into(), gap.into()]);
    let writer_id = a_writer.guid().entity_id;
    let acknack = |base: i64, count: u32| {
        let mut set = SequenceNumberSet::new(SequenceNumber(base));
        for i in 0..256 {
            set.insert(SequenceNumber(base + i));
        }
        AckNack {
            reader_id: ATTACK_READER,
            writer_id,
            reader_sn_state: set,
            count,
            final_flag: false,
        }
    };
    let mut frags = FragmentNumberSet::new(u32::MAX - 300);
    for i in 0..256 {
        frags.insert(u32::MAX - 300 + i);
    }
    let nack_frag = |seq: i64, count: u32| NackFrag {
        reader_id: ATTACK_READER,
        writer_id,
        writer_sn: SequenceNumber(seq),
        fragment_number_state: frags,
        count,
    };
    let mut requests = 0;
    // Everything from 1 (resends what is held: 3 samples, GAP for the rest), then beyond
    // anything written, then the same count again (ignored), then fragments of a sample
    // that is not fragmented and of one that does not exist.
    for sub in [
        Submessage::from(acknack(1, 10)),
        acknack(huge, 11).into(),
        acknack(1, 11).into(),
        nack_frag(1, 1).into(),
        nack_frag(huge, 2).into(),
        nack_frag(2, 2).into(),
    ] {
        attacker.send_subs(&[sub]);
        requests += 1;
    }
    // From a reader the writer does not know.
    let mut stranger = acknack(1, 1);
    stranger.reader_id = EntityId([0, 0, 0x0c, 0x07]);
    attacker.send_subs(&[stranger.into()]);
    requests += 1;
    let replies = attacker.received(Duration::from_millis(500));
    still_flows(&writer, &reader, 1);
    let after = (a.receive_stats(), a.reader_stats(), a.writer_stats());
    rss.check("absurd ranges");
    assert_eq!(
        after.0.malformed, before.0.malformed,
        "all of it was well-formed"
    );
    assert!(
        after.2.ignored_acknacks >= before.2.ignored_acknacks + 3,
        "{:?}",
        after.2
    );
    let reply_bytes: usize = replies.iter().map(Vec::len).sum();
    println!(
        "{requests} requests drew {} datagrams, {reply_bytes} bytes",
        replies.len()
    );
    assert!(
        replies.len() <= 40,
        "{} replies to {requests} requests",
        replies.len()
    );
    // The GAP made the 2^62 changes the writer announced irrelevant: counted as lost,
    // without a table of that size.
    assert!(
        after.1.lost >= before.1.lost + (huge as u64) - 1,
        "{:?}",
        after.1
    );
}

/// An SPDP announcement from 127.0.0.1 whose locators are on 127.0.0.2 (a third party),
/// and an SEDP reader asking for data at 127.0.0.2: nothing is ever sent to 127.0.0.2. The
/// participant's locators are rewritten to the sender's address
/// (`discovery_stats().locators_rewritten`), the reader's dropped (`locators_dropped`), so
/// the user data goes to the announced port on the sender's own address.
#[test]
fn locators_on_other_addresses_draw_no_traffic() {
    let _serial = serial();
    let (a, b) = (participant(25), participant(25));
    let (writer, reader) = legit_pair(&a, &b);
    let a_writer = a
        .create_writer(
            &a.create_topic_with_type_name::<Msg>(TOPIC, TYPE).unwrap(),
            Qos::writer().reliable(),
        )
        .unwrap();
    let victim = UdpSocket::bind("127.0.0.2:0").unwrap();
    victim
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let victim_port = victim.local_addr().unwrap().port();
    // Where the rewritten locators point: the victim's port on the attacker's address.
    let rewritten = UdpSocket::bind(("127.0.0.1", victim_port)).unwrap();
    rewritten
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let victim_locator = Locator::udpv4(Ipv4Addr::new(127, 0, 0, 2), victim_port);
    let mut attacker = Attacker::new(&a, prefix(25, 1));
    let rss = Rss::now();
    let before = a.discovery_stats();
    let mut announced = attacker.own_data();
    announced.metatraffic_unicast_locators = vec![victim_locator];
    announced.default_unicast_locators = vec![victim_locator];
    attacker.announce_as(attacker.prefix, &announced);
    let reader_guid = Guid::new(attacker.prefix, ATTACK_READER);
    attacker.announce_reader(reader_guid, vec![victim_locator]);
    eventually("the attacker's reader to match", || {
        a_writer.matched_subscriptions().contains(&reader_guid)
    });
    for id in 0..20 {
        a_writer
            .write(&Msg {
                id,
                text: "for the reader".into(),
                values: vec![],
            })
            .unwrap();
    }
    let mut buf = [0u8; 65536];
    let mut to_victim = 0;
    let mut to_rewritten = 0;
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        if victim.recv(&mut buf).is_ok() {
            to_victim += 1;
        }
        if rewritten.recv(&mut buf).is_ok() {
            to_rewritten += 1;
        }
    }
    still_flows(&writer, &reader, 1);
    let after = a.discovery_stats();
    rss.check("third-party locators");
    assert_eq!(to_victim, 0, "datagrams sent to the third party");
    assert!(to_rewritten > 0, "the data went to the sender's address");
    assert!(
        after.locators_rewritten >= before.locators_rewritten + 2,
        "{after:?}"
    );
    assert!(
        after.locators_dropped > before.locators_dropped,
        "{after:?}"
    );
}

/// 2,000 SPDP announcements of new participants, against a limit of 32 remote
/// participants: at most 32 are kept (`discovery_stats().participants_evicted` counts the
/// rest), and the legitimate peer, discovered before the flood, keeps working.
#[test]
fn a_flood_of_participant_guids_is_bounded() {
    let _serial = serial();
    let mut limits = Limits::default();
    limits.max_remote_participants = 32;
    let a = builder(26).limits(limits).build().unwrap();
    let b = participant(26);
    let (writer, reader) = legit_pair(&a, &b);
    let mut attacker = Attacker::new(&a, prefix(26, 0));
    let rss = Rss::now();
    for n in 1..=2000 {
        attacker.prefix = prefix(26, n);
        attacker.announce();
        if n % 50 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // The table is full: each newcomer pushes out the oldest that never ran SEDP with us,
    // never the peer that did.
    eventually("the flood to be counted", || {
        a.discovery_stats().participants_evicted > 1000
    });
    still_flows(&writer, &reader, 1);
    rss.check("participant flood");
    let known = a.discovered_participants().len();
    assert!(known <= 32, "{known} remote participants");
    assert!(a.discovered_participants().contains(&b.guid_prefix()));
    assert_eq!(a.discovery_stats().participants_rejected, 0);
}

/// A real peer started after a flood matches at once, and exchanges data.
fn a_peer_after_the_flood_matches(a: &DomainParticipant, case: &str, rss: &Rss) {
    let started = Instant::now();
    let b = participant(38);
    let (writer, reader) = legit_pair(a, &b);
    let matched = started.elapsed();
    still_flows(&writer, &reader, 1);
    println!("{case}: a new peer matched {matched:?} after the flood");
    assert!(
        matched < Duration::from_secs(5),
        "{case}: matching took {matched:?}"
    );
    rss.check(case);
    let known = a.discovered_participants().len();
    assert!(
        known <= Limits::default().max_remote_participants,
        "{known}"
    );
}

/// 2,200 made-up participants with infinite leases, announced from one address, once locked
/// every later peer out (the table of 1,024 filled with them, for ever). Now one address
/// holds at most `max_unverified_per_source` unverified participants, and their leases are
/// capped, so a peer started after the flood matches within milliseconds.
#[test]
fn a_participant_flood_keeps_no_real_peer_out() {
    let _serial = serial();
    let a = participant(38);
    let rss = Rss::now();
    spdp_flood::forged_participants(a.metatraffic_address().unwrap(), 38, 2200);
    eventually("the flood to be handled", || {
        a.discovery_stats().participants_evicted >= 1000
    });
    let held = a.discovered_participants().len();
    assert!(
        held <= Limits::default().max_unverified_per_source,
        "{held} forged participants held"
    );
    a_peer_after_the_flood_matches(&a, "participant flood, then a new peer", &rss);
}

/// The same with 4,000 malformed or mutated announcements (some still parse: those are
/// made-up participants too).
#[test]
fn a_malformed_spdp_flood_keeps_no_real_peer_out() {
    let _serial = serial();
    let a = participant(38);
    let rss = Rss::now();
    spdp_flood::malformed_announcements(a.metatraffic_address().unwrap(), 39, 4000, 38);
    eventually("the flood to be handled", || {
        let s = a.receive_stats();
        s.datagrams >= 3000
    });
    println!(
        "malformed SPDP flood: {:?}, {:?}",
        a.receive_stats(),
        a.discovery_stats()
    );
    a_peer_after_the_flood_matches(&a, "malformed SPDP flood, then a new peer", &rss);
}

/// A peer announcing a locator we cannot send to (port 0): the failed sends are counted.
#[test]
fn failed_sends_are_counted() {
    let _serial = serial();
    let a = participant(39);
    let mut attacker = Attacker::new(&a, prefix(29, 99));
    let mut data = attacker.own_data();
    let unreachable = Locator::udpv4(Ipv4Addr::LOCALHOST, 0);
    data.metatraffic_unicast_locators = vec![unreachable];
    data.default_unicast_locators = vec![unreachable];
    attacker.announce_as(attacker.prefix, &data);
    // The answer to a newcomer goes to its unicast locator, and fails.
    eventually("a failed send to be counted", || a.send_stats().failed > 0);
    assert!(a.send_stats().datagrams > 0);
}

/// Somebody announces the legitimate peer's GUID from elsewhere, our own GUID, a GUID that
/// is not the one in its message header, and an endpoint GUID of another participant:
/// the peer is not moved (`locator_changes_ignored`), our own is ignored, the others are
/// dropped (`mismatched_participants`, `foreign_endpoints`); the data meant for the peer
/// never reaches the impostor.
#[test]
fn duplicate_guids_hijack_nothing() {
    let _serial = serial();
    let (a, b) = (participant(27), participant(27));
    // This time A writes and B reads, so that a hijack would send A's data elsewhere.
    let (writer, reader) = legit_pair(&b, &a);
    let mut attacker = Attacker::new(&a, prefix(27, 1));
    attacker.announce();
    eventually("the attacker to be discovered", || {
        a.discovered_participants().contains(&attacker.prefix)
    });
    let rss = Rss::now();
    let before = a.discovery_stats();
    // The peer's GUID, at the attacker's socket.
    let mut impostor = attacker.own_data();
    impostor.guid = Guid::new(b.guid_prefix(), EntityId::PARTICIPANT);
    attacker.announce_as(b.guid_prefix(), &impostor);
    // Our own GUID.
    impostor.guid = Guid::new(a.guid_prefix(), EntityId::PARTICIPANT);
    attacker.announce_as(a.guid_prefix(), &impostor);
    // A GUID that is not its sender's.
    impostor.guid = Guid::new(prefix(27, 2), EntityId::PARTICIPANT);
    attacker.announce_as(attacker.prefix, &impostor);
    // An endpoint of the peer, announced by the attacker.
    attacker.announce_reader(
        Guid::new(b.guid_prefix(), ATTACK_READER),
        vec![attacker.locator()],
    );
    eventually("the impostors to be counted", || {
        let s = a.discovery_stats();
        s.locator_changes_ignored > before.locator_changes_ignored
            && s.mismatched_participants > before.mismatched_participants
            && s.foreign_endpoints > before.foreign_endpoints
    });
    still_flows(&writer, &reader, 1);
    rss.check("duplicate GUIDs");
    let writer_id = writer.guid().entity_id;
    for datagram in attacker.received(Duration::from_millis(300)) {
        let Ok((_, iter)) = Message::parse(&datagram) else {
            continue;
        };
        for sm in iter.flatten() {
            if let Submessage::Data(d) = sm {
                assert_ne!(d.writer_id, writer_id, "user data reached the impostor");
            }
        }
    }
    assert_eq!(writer.matched_subscriptions(), vec![reader.guid()]);
}

/// A matched writer sends samples of 100 instances to a reader limited to 16 instances of
/// at most 4 samples each (reliable KEEP_ALL): samples of instances beyond 16 are rejected
/// (`sample_rejected_status()`, reason `InstancesLimit`); samples beyond 4 in one instance
/// wait, unacknowledged, until the application takes (a reliable KEEP_ALL reader loses
/// nothing its writers would repeat); an instance the legitimate writer already uses keeps
/// working.
#[test]
fn instances_and_samples_per_instance_are_bounded() {
    let _serial = serial();
    let mut limits = Limits::default();
    limits.max_instances_per_reader = 16;
    limits.max_samples_per_instance = 4;
    let a = builder(28).limits(limits).build().unwrap();
    let b = participant(28);
    let (writer, reader) = legit_pair(&a, &b);
    still_flows(&writer, &reader, 0);
    let mut attacker = Attacker::new(&a, prefix(28, 1));
    attacker.become_matched_writer(ATTACK_WRITER, &reader);
    let rss = Rss::now();
    let mut seq = 0;
    for id in (1..=100).chain(std::iter::repeat_n(1, 10)) {
        seq += 1;
        let p = payload(&Msg {
            id,
            text: "flood".into(),
            values: vec![],
        });
        attacker.send_subs(&[data(EntityId::UNKNOWN, ATTACK_WRITER, seq, None, &p)]);
        if seq % 20 == 0 {
            // The reader is reliable and the attacker never resends: lose nothing.
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // Instance 0 exists: ids 1..=15 make 16, ids 16..=100 are refused (85); instance 1
    // takes 3 more samples, and the other 7 wait.
    let rejected = 85;
    eventually("the samples to be rejected", || {
        reader.sample_rejected_status().total_count >= rejected
    });
    let of_instance_1 = |samples: &[ferrodds::Sample<Msg>]| {
        samples
            .iter()
            .filter(|s| s.value().is_some_and(|d| d.id == 1))
            .count()
    };
    eventually("instance 1 to be full", || {
        of_instance_1(&reader.read().unwrap()) == 4
    });
    let status = reader.sample_rejected_status();
    assert_eq!(status.total_count, rejected, "{status:?}");
    assert_eq!(
        status.last_reason,
        Some(SampleRejectedReason::InstancesLimit),
        "{status:?}"
    );
    // Instance 0 (the legitimate writer's) is among the 16 and has room again once taken;
    // that take makes room in instance 1 for the 7 that waited.
    still_flows(&writer, &reader, 0);
    let mut waited = 0;
    eventually("the samples that waited", || {
        waited += of_instance_1(&reader.take().unwrap());
        waited >= 7
    });
    assert_eq!(waited, 7);
    rss.check("instances");
    assert_eq!(reader.sample_rejected_status().total_count, rejected);
}

/// A participant announces 300 readers against a limit of 64 remote endpoints (32 per
/// participant): the rest are dropped (`discovery_stats().endpoints_rejected`).
#[test]
fn a_flood_of_endpoints_is_bounded() {
    let _serial = serial();
    let mut limits = Limits::default();
    limits.max_remote_endpoints = 64;
    limits.max_endpoints_per_participant = 32;
    let a = builder(29).limits(limits).build().unwrap();
    let b = participant(29);
    let (writer, reader) = legit_pair(&a, &b);
    let mut attacker = Attacker::new(&a, prefix(29, 1));
    attacker.announce();
    eventually("the attacker to be discovered", || {
        a.discovered_participants().contains(&attacker.prefix)
    });
    let rss = Rss::now();
    let locators = vec![attacker.locator()];
    for n in 0..300u32 {
        let [_, _, x, y] = n.to_be_bytes();
        attacker.announce_reader(
            Guid::new(attacker.prefix, EntityId([0, x, y, 0x07])),
            locators.clone(),
        );
        if n % 20 == 0 {
            // SEDP is reliable and the attacker never resends: lose nothing.
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    eventually("the endpoints to be rejected", || {
        a.discovery_stats().endpoints_rejected >= 300 - 32
    });
    still_flows(&writer, &reader, 1);
    rss.check("endpoint flood");
}
