//! What the RTPS fuzz targets run (see the crate documentation for each target).

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use ferrodds_rtps::dcps::{ContentFilter, DcpsReader, DcpsWriter, InstanceKeys, Selection};
use ferrodds_rtps::discovery::{
    DiscoveredReaderData, DiscoveredWriterData, EndpointData, ParticipantData,
};
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::qos::{EndpointQos, Reliability, ReliabilityKind};
use ferrodds_rtps::wire::Endianness;
use ferrodds_rtps::wire::{
    message_to_vec, Data, DataFrag, DataPayload, EntityId, Gap, Guid, GuidPrefix, Header,
    Heartbeat, HeartbeatFrag, Locator, Message, ParameterList, ParameterListBuilder,
    ProtocolVersion, SequenceNumber, SequenceNumberSet, Submessage, SubmessageHeader, VendorId,
};
use ferrodds_rtps::{
    Change, ChangeKind, Discovery, DiscoveryConfig, Limits, LocalEndpoint, Participant,
    ParticipantCore, Reader, RemoteReader, RemoteWriter, Timestamp, Writer, WriterConfig,
};

const BOTH: [Endianness; 2] = [Endianness::Little, Endianness::Big];

/// Emits one submessage on its own into a fresh buffer; `None` when it cannot be emitted
/// (a body longer than `octetsToNextHeader` can say).
fn emit_one(sm: &Submessage<'_>, endianness: Endianness) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; sm.buffer_len()];
    let n = sm.emit(&mut buf, endianness).ok()?;
    assert_eq!(
        n,
        buf.len(),
        "{sm:?}: emit wrote {n} bytes, buffer_len said {}",
        buf.len()
    );
    Some(buf)
}

/// Parses one submessage emitted by [`emit_one`]; it must be accepted.
fn parse_one(bytes: &[u8]) -> Submessage<'_> {
    let (hdr, body) = bytes
        .split_first_chunk::<{ SubmessageHeader::LEN }>()
        .expect("an emitted submessage has a header");
    let header = SubmessageHeader::from_bytes(*hdr);
    match Submessage::parse(header, body, SubmessageHeader::LEN) {
        Ok(Some(sm)) => sm,
        other => panic!("emitted {bytes:02x?}, which parses as {other:?}"),
    }
}

/// A submessage that parsed emits, parses again to the same value (DATA and PAD aside:
/// emit pads their bodies, so their payload comes back padded), and emits again to the
/// same bytes.
fn submessage_round_trip(sm: &Submessage<'_>) {
    for e in BOTH {
        let Some(first) = emit_one(sm, e) else {
            continue;
        };
        let again = parse_one(&first);
        match (sm, &again) {
            (Submessage::Data(a), Submessage::Data(b)) => {
                assert_eq!(
                    (a.extra_flags, a.reader_id, a.writer_id, a.writer_sn),
                    (b.extra_flags, b.reader_id, b.writer_id, b.writer_sn)
                );
                assert_eq!(a.inline_qos, b.inline_qos);
                assert_eq!(a.non_standard_payload, b.non_standard_payload);
                let (pa, pb) = (a.payload.bytes(), b.payload.bytes());
                assert_eq!(pa.is_some(), pb.is_some());
                if let (Some(pa), Some(pb)) = (pa, pb) {
                    assert!(pb.starts_with(pa) && pb.len() - pa.len() < 4);
                }
            }
            (Submessage::Pad(_), Submessage::Pad(_)) => {}
            _ => assert_eq!(sm, &again, "emitted as {first:02x?}"),
        }
        let second = emit_one(&again, e).expect("what was emitted once emits again");
        assert_eq!(first, second, "{sm:?} emits differently after a round trip");
    }
}

/// The `rtps_message` target: a datagram parsed as an RTPS message, every submessage
/// iterated (at most one malformed, then the end), the message receiver's walk over it,
/// and, for what parsed, a round trip of each submessage and of the whole message.
pub fn rtps_message(data: &[u8]) {
    let _ = ferrodds_rtps::receiver::walk(data, |_, _| {});
    let Ok((header, mut iter)) = Message::parse(data) else {
        return;
    };
    let mut accepted = Vec::new();
    let mut malformed = 0;
    for item in iter.by_ref() {
        match item {
            Ok(sm) => accepted.push(sm),
            Err(e) => {
                malformed += 1;
                // Formatting the error reads its fields: it must not panic either.
                let _ = e.to_string();
            }
        }
    }
    assert!(
        malformed <= 1,
        "the walk goes on after a malformed submessage"
    );
    assert!(iter.next().is_none(), "the iterator is fused");
    for sm in &accepted {
        submessage_round_trip(sm);
    }
    for e in BOTH {
        let Ok(bytes) = message_to_vec(&header, &accepted, e) else {
            continue;
        };
        let (h, iter) = Message::parse(&bytes).expect("an emitted message parses");
        assert_eq!(h, header);
        let again: Vec<Submessage<'_>> = iter
            .collect::<Result<_, _>>()
            .unwrap_or_else(|err| panic!("emitted {bytes:02x?}, which is malformed: {err}"));
        assert_eq!(again.len(), accepted.len());
    }
}

/// A parameter list rebuilt parameter by parameter parses to the same parameters (each
/// value padded to 4 bytes, as the builder does).
fn parameter_list_round_trip(list: &ParameterList<'_>) {
    let mut out = Vec::new();
    let mut b = ParameterListBuilder::new(&mut out, list.endianness());
    for p in list.iter() {
        // Accessors read from validated bytes: they never panic.
        let _ = (p.as_u32(), p.as_guid(), p.as_locator(), p.as_str());
        if b.push(p.id, p.value).is_err() {
            return;
        }
    }
    b.finish();
    let (again, rest) =
        ParameterList::parse(&out, list.endianness()).expect("a built parameter list parses");
    assert!(rest.is_empty());
    let (a, b): (Vec<_>, Vec<_>) = (list.iter().collect(), again.iter().collect());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.id, y.id);
        assert!(y.value.starts_with(x.value) && y.value.len() - x.value.len() < 4);
    }
}

/// SEDP data that parsed emits, parses to the same value, and emits to the same bytes.
///
/// One normalization: `PID_TYPE_INFORMATION` is kept as the raw bytes received, and a
/// sender may give it a length that is not a multiple of 4 (§9.4.2.11 says it must be);
/// emitting pads it, so the value read back carries those zero bytes of padding. (Found by
/// this target from Cyclone DDS's seed; FerroDDS never sends a peer's type information on.)
fn endpoint_round_trip<E: std::fmt::Display>(
    first: &EndpointData,
    parse: impl Fn(&[u8]) -> Result<EndpointData, E>,
    emit: impl Fn(&EndpointData) -> Result<Vec<u8>, ferrodds_rtps::wire::EmitError>,
) {
    let bytes =
        emit(first).unwrap_or_else(|err| panic!("parsed {first:?}, which does not emit: {err}"));
    let again =
        parse(&bytes).unwrap_or_else(|err| panic!("{first:?} emitted as {bytes:02x?}: {err}"));
    let mut padded = first.clone();
    if let Some(t) = &mut padded.type_information {
        t.resize(t.len().div_ceil(4) * 4, 0);
    }
    assert_eq!(padded, again, "emitted as {bytes:02x?}");
    let twice = emit(&again).expect("what emitted once emits again");
    assert_eq!(
        bytes, twice,
        "{first:?} emits differently after a round trip"
    );
}

/// TypeLookup samples and TypeInformation (the XTypes part of discovery): what parses
/// writes back to what parses the same.
fn type_lookup_round_trip(data: &[u8]) {
    use ferrodds_cdr::dynamic::type_lookup::{TypeInformation, TypeLookupReply, TypeLookupRequest};
    if let Ok(r) = TypeLookupRequest::parse(data) {
        let bytes = r.to_vec();
        let again = TypeLookupRequest::parse(&bytes)
            .unwrap_or_else(|e| panic!("{r:?} written as {bytes:02x?}: {e}"));
        assert_eq!(r, again, "written as {bytes:02x?}");
    }
    if let Ok(r) = TypeLookupReply::parse(data) {
        let bytes = r.to_vec();
        let again = TypeLookupReply::parse(&bytes)
            .unwrap_or_else(|e| panic!("{r:?} written as {bytes:02x?}: {e}"));
        assert_eq!(r, again, "written as {bytes:02x?}");
    }
    let _ = TypeInformation::parse(data);
}

/// The `parameter_list` target: bytes parsed as a bare parameter list (both byte orders),
/// as an encapsulated one, and as SPDP and SEDP data. What parses is emitted again and must
/// parse to the same value (discovery data in both byte orders). The same bytes are read as TypeLookup samples
/// and TypeInformation.
pub fn parameter_list(data: &[u8]) {
    type_lookup_round_trip(data);
    for e in BOTH {
        if let Ok((list, _)) = ParameterList::parse(data, e) {
            parameter_list_round_trip(&list);
        }
    }
    if let Ok((list, _)) = ParameterList::parse_encapsulated(data) {
        parameter_list_round_trip(&list);
    }
    if let Ok(p) = ParticipantData::parse(data) {
        for e in BOTH {
            let bytes = p
                .to_vec(e)
                .unwrap_or_else(|err| panic!("parsed {p:?}, which does not emit: {err}"));
            let again = ParticipantData::parse(&bytes)
                .unwrap_or_else(|err| panic!("{p:?} emitted as {bytes:02x?}: {err}"));
            assert_eq!(p, again, "emitted as {bytes:02x?}");
        }
    }
    if let Ok(w) = DiscoveredWriterData::parse(data) {
        for e in BOTH {
            endpoint_round_trip(
                &w.endpoint,
                |b| DiscoveredWriterData::parse(b).map(|d| d.endpoint),
                |x| {
                    DiscoveredWriterData {
                        endpoint: x.clone(),
                    }
                    .to_vec(e)
                },
            );
        }
    }
    if let Ok(r) = DiscoveredReaderData::parse(data) {
        for e in BOTH {
            endpoint_round_trip(
                &r.endpoint,
                |b| DiscoveredReaderData::parse(b).map(|d| d.endpoint),
                |x| {
                    DiscoveredReaderData {
                        endpoint: x.clone(),
                    }
                    .to_vec(e)
                },
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// reassembly

const LOCAL: GuidPrefix = GuidPrefix([0x01; 12]);
const REMOTE: GuidPrefix = GuidPrefix([0x0f; 12]);
const READER_ID: EntityId = EntityId([0, 0, 1, 0x07]);
const WRITER_ID: EntityId = EntityId([0, 0, 2, 0x02]);
const LOCAL_WRITER_ID: EntityId = EntityId([0, 0, 3, 0x02]);
const REMOTE_READER_ID: EntityId = EntityId([0, 0, 4, 0x07]);

/// A sequence number: mostly a small one, so that operations meet the same samples.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Seq {
    Small(u8),
    Any(i64),
}

impl Seq {
    fn get(self) -> i64 {
        match self {
            Seq::Small(n) => i64::from(n % 32) + 1,
            Seq::Any(n) => n,
        }
    }
}

/// One submessage to the reader (or a change to its matches), as the fuzzer picks it.
#[derive(Debug, Arbitrary)]
enum Op {
    /// Fragments of a small sample; the bytes are made to fit what the fields announce,
    /// unless `exact` is false.
    Frag {
        seq: Seq,
        sample_size: u16,
        fragment_size: u8,
        start: u16,
        count: u8,
        exact: bool,
        key: bool,
        fill: u8,
    },
    /// A fragment of a sample of any size (4 GiB included).
    BigFrag {
        seq: Seq,
        sample_size: u32,
        fragment_size: u16,
        start: u32,
        len: u8,
    },
    Data {
        seq: Seq,
        len: u8,
    },
    Heartbeat {
        first: Seq,
        last: Seq,
        count: u32,
        final_flag: bool,
    },
    HeartbeatFrag {
        seq: Seq,
        last_fragment: u32,
        count: u32,
    },
    Gap {
        start: Seq,
        base: Seq,
        num_bits: u16,
        words: [u32; 8],
    },
    /// The same, but from a writer the reader is not matched with.
    Stranger(Box<Op>),
    /// Time passes (milliseconds) and timers run.
    Wait(u8),
    /// The writer is unmatched and matched again (everything it held is released).
    Rematch,
}

/// The reader's configuration, kept small so that the fuzzer reaches every bound.
#[derive(Debug, Arbitrary)]
struct ReassemblySetup {
    reliable: bool,
    max_sample_size: u16,
    max_reassembly_bytes: u16,
    max_reassembly_fragments: u8,
    max_out_of_order: u8,
    ops: Vec<Op>,
}

fn header(prefix: GuidPrefix) -> Header {
    Header {
        version: ProtocolVersion::V2_5,
        vendor_id: VendorId([1, 0x10]),
        guid_prefix: prefix,
    }
}

fn loopback(port: u16) -> Locator {
    Locator::udpv4(Ipv4Addr::LOCALHOST, port)
}

/// The submessage for `op`, built into `buf` (which owns the bytes it borrows).
fn submessage<'b>(op: &Op, writer_id: EntityId, buf: &'b mut Vec<u8>) -> Option<Submessage<'b>> {
    let sn = |s: Seq| SequenceNumber(s.get());
    Some(match *op {
        Op::Frag {
            seq,
            sample_size,
            fragment_size,
            start,
            count,
            exact,
            key,
            fill,
        } => {
            let fragment_size = u16::from(fragment_size.max(1));
            let sample_size = u32::from(sample_size.max(1));
            let total = sample_size.div_ceil(u32::from(fragment_size));
            let start = u32::from(start) % total.max(1) + 1;
            let count = u16::from(count.max(1));
            let announced = u32::from(count) * u32::from(fragment_size);
            let rest = sample_size.saturating_sub((start - 1) * u32::from(fragment_size));
            let len = if exact {
                announced.min(rest)
            } else {
                u32::from(fill)
            };
            *buf = vec![fill; len as usize];
            Submessage::DataFrag(DataFrag {
                extra_flags: 0,
                reader_id: EntityId::UNKNOWN,
                writer_id,
                writer_sn: sn(seq),
                fragment_starting_num: start,
                fragments_in_submessage: count,
                fragment_size,
                sample_size,
                inline_qos: None,
                key,
                non_standard_payload: false,
                fragments: buf,
            })
        }
        Op::BigFrag {
            seq,
            sample_size,
            fragment_size,
            start,
            len,
        } => {
            *buf = vec![0xab; usize::from(len)];
            Submessage::DataFrag(DataFrag {
                extra_flags: 0,
                reader_id: READER_ID,
                writer_id,
                writer_sn: sn(seq),
                fragment_starting_num: start,
                fragments_in_submessage: 1,
                fragment_size,
                sample_size,
                inline_qos: None,
                key: false,
                non_standard_payload: false,
                fragments: buf,
            })
        }
        Op::Data { seq, len } => {
            *buf = vec![0, 1, 0, 0];
            buf.resize(4 + usize::from(len), 7);
            Submessage::Data(Data {
                extra_flags: 0,
                reader_id: EntityId::UNKNOWN,
                writer_id,
                writer_sn: sn(seq),
                inline_qos: None,
                payload: DataPayload::Data(buf),
                non_standard_payload: false,
            })
        }
        Op::Heartbeat {
            first,
            last,
            count,
            final_flag,
        } => Submessage::Heartbeat(Heartbeat {
            reader_id: EntityId::UNKNOWN,
            writer_id,
            first_sn: sn(first),
            last_sn: sn(last),
            count,
            final_flag,
            liveliness_flag: false,
        }),
        Op::HeartbeatFrag {
            seq,
            last_fragment,
            count,
        } => Submessage::HeartbeatFrag(HeartbeatFrag {
            reader_id: READER_ID,
            writer_id,
            writer_sn: sn(seq),
            last_fragment_num: last_fragment,
            count,
        }),
        Op::Gap {
            start,
            base,
            num_bits,
            words,
        } => Submessage::Gap(Gap {
            reader_id: EntityId::UNKNOWN,
            writer_id,
            gap_start: sn(start),
            gap_list: SequenceNumberSet::from_parts(sn(base), u32::from(num_bits) % 257, words)
                .unwrap_or_else(|| SequenceNumberSet::new(sn(base))),
        }),
        Op::Stranger(_) | Op::Wait(_) | Op::Rematch => return None,
    })
}

/// The `reassembly` target: a reader of participant [`LOCAL`] matched with one writer of
/// [`REMOTE`], driven through [`Participant::handle_datagram`] by the operations decoded
/// from `data`. Checked after every operation: what the reader holds under reassembly is
/// within its limits; every change is delivered once, in order (a reliable reader) or
/// only if newer than the last (best effort) — so sequence numbers only grow; once the
/// writer is unmatched the reader holds nothing.
pub fn reassembly(data: &[u8]) {
    let Ok(setup) = ReassemblySetup::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut limits = Limits::default();
    limits.max_sample_size = usize::from(setup.max_sample_size);
    limits.max_reassembly_bytes = usize::from(setup.max_reassembly_bytes) * 4;
    limits.max_reassembly_fragments = usize::from(setup.max_reassembly_fragments);
    limits.max_out_of_order = usize::from(setup.max_out_of_order);
    let config = limits.reader_config(setup.reliable);
    let mut participant = Participant::with_limits(LOCAL, limits);
    participant.add_reader(Reader::new(Guid::new(LOCAL, READER_ID), config.clone()));
    let remote = RemoteWriter {
        guid: Guid::new(REMOTE, WRITER_ID),
        locators: vec![loopback(7411)],
        reliable: true,
    };
    let mut now = Timestamp(1_000_000_000);
    let origin = loopback(7412);
    fn reader(p: &mut Participant) -> &mut Reader {
        p.reader(READER_ID).expect("the reader is there")
    }
    reader(&mut participant).match_writer(now, remote.clone());
    let mut last_delivered = 0i64;
    for op in &setup.ops {
        let (op, writer_id) = match op {
            Op::Stranger(op) => (&**op, EntityId([0, 0, 9, 0x02])),
            op => (op, WRITER_ID),
        };
        match op {
            Op::Wait(ms) => {
                now = now.after(Duration::from_millis(u64::from(*ms)));
                participant.handle_timeout(now);
            }
            Op::Rematch => {
                reader(&mut participant).unmatch_writer(remote.guid);
                let r = reader(&mut participant);
                assert_eq!((r.reassembly_bytes(), r.reassembly_fragments()), (0, 0));
                r.match_writer(now, remote.clone());
                last_delivered = 0;
            }
            op => {
                let mut buf = Vec::new();
                let Some(sm) = submessage(op, writer_id, &mut buf) else {
                    continue;
                };
                let Ok(bytes) = message_to_vec(&header(REMOTE), &[sm], Endianness::Little) else {
                    continue;
                };
                participant.handle_datagram(now, origin, &bytes);
            }
        }
        while participant.poll_transmit().is_some() {}
        let r = reader(&mut participant);
        assert!(r.reassembly_bytes() <= config.max_reassembly_bytes);
        assert!(r.reassembly_fragments() <= config.max_reassembly_fragments);
        while let Some(change) = r.poll_change() {
            assert_eq!(change.writer, remote.guid);
            let seq = change.sequence_number.0;
            assert!(
                seq > last_delivered,
                "{seq} delivered after {last_delivered}"
            );
            last_delivered = seq;
        }
    }
    let r = reader(&mut participant);
    r.unmatch_writer(remote.guid);
    assert_eq!(
        (r.reassembly_bytes(), r.reassembly_fragments()),
        (0, 0),
        "the reader still counts what it held for a writer it forgot"
    );
}

// ---------------------------------------------------------------------------------------
// participant_datagram

/// Record flag: the datagram's RTPS header says it comes from [`REMOTE`] (whose user
/// writer and reader are matched with ours), so fuzzed submessages reach them.
const FROM_REMOTE: u8 = 0x01;
/// Record flag: the datagram comes from the second source address, not loopback.
const FROM_ELSEWHERE: u8 = 0x02;
/// Record flag: the local writer writes a sample (a fragmented one with `FROM_ELSEWHERE`).
const WRITE: u8 = 0x04;
/// Record flag bits 3..8: time passes, in units of 20 ms, and timers run.
const WAIT_SHIFT: u8 = 3;

/// The second address datagrams come from.
const ELSEWHERE: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 9);
/// Where SPDP announcements go.
const SPDP_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);

/// Encodes datagrams in the record format `participant_datagram` reads (no flags set):
/// each one as a little-endian u16 length, a flags byte, the bytes.
pub fn datagram_records(datagrams: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in datagrams {
        let len = u16::try_from(d.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.push(0);
        out.extend_from_slice(&d[..usize::from(len)]);
    }
    out
}

fn user_endpoint(prefix: GuidPrefix, id: EntityId, kind: EndpointKind) -> LocalEndpoint {
    let mut qos = match kind {
        EndpointKind::Writer => EndpointQos::writer_default(),
        EndpointKind::Reader => EndpointQos::reader_default(),
    };
    qos.reliability = Reliability {
        kind: ReliabilityKind::Reliable,
        ..qos.reliability
    };
    LocalEndpoint {
        guid: Guid::new(prefix, id),
        kind,
        topic_name: "fuzz".into(),
        type_name: "Fuzz".into(),
        qos,
        keyed: true,
        // A type with a nested struct, so that TypeLookup requests find something to answer.
        ty: Some(<crate::Telemetry as ferrodds_cdr::Cdr>::dynamic_type()),
        ignore_local: false,
        content_filter: None,
    }
}

/// The user reader's type in `participant_datagram`: keyed, so that received payloads are
/// decoded for their key.
#[derive(ferrodds_cdr::Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "fuzz::Keyed")]
struct FuzzKeyed {
    #[cdr(key)]
    id: i32,
    name: String,
}

/// The `participant_datagram` target: datagrams decoded from `data` (records of
/// [`datagram_records`], with flags) handed to a participant that runs discovery, with a
/// user writer and reader (announced over SEDP, and matched by hand with a reader and a
/// writer of [`REMOTE`]). Checked after every datagram: the tables stay within the
/// [`Limits`] (kept small, so that they are reached), and no datagram goes anywhere but
/// the SPDP group or an address a datagram came from (no amplification towards third
/// parties).
pub fn participant_datagram(data: &[u8]) {
    let mut limits = Limits::default();
    limits.max_remote_participants = 3;
    limits.max_remote_endpoints = 6;
    limits.max_endpoints_per_participant = 4;
    limits.max_locators = 2;
    limits.max_reassembly_bytes = 64 * 1024;
    limits.max_reassembly_fragments = 64;
    let mut now = Timestamp(1_000_000_000);
    let mut own = ParticipantData::new(LOCAL);
    own.metatraffic_unicast_locators = vec![loopback(7410)];
    own.default_unicast_locators = vec![loopback(7411)];
    let config = DiscoveryConfig {
        own,
        spdp_destinations: vec![Locator::udpv4(SPDP_GROUP, 7400)],
        announce_period: Duration::from_secs(2),
        type_information: true,
        other_locators: Vec::new(),
        fast_dds_xcdr1: false,
        shared_endpoints: None,
        channel_host: None,
    };
    let mut core =
        ParticipantCore::new(now, Participant::with_limits(LOCAL, limits.clone()), config);
    let writer_guid = Guid::new(LOCAL, LOCAL_WRITER_ID);
    let reader_guid = Guid::new(LOCAL, READER_ID);
    core.rtps.add_writer(Writer::new(
        writer_guid,
        WriterConfig {
            fragment_size: 1024,
            ..WriterConfig::default()
        },
    ));
    core.rtps
        .add_reader(Reader::new(reader_guid, limits.reader_config(true)));
    // DCPS state on both, with every QoS rule that keeps per-instance state switched on,
    // so that hostile data reaches the caches, deadlines and filters too.
    let mut qos = EndpointQos::reader_default();
    qos.deadline.period = ferrodds_rtps::qos::Duration::from_millis(50);
    qos.time_based_filter.minimum_separation = ferrodds_rtps::qos::Duration::from_millis(10);
    qos.ownership = ferrodds_rtps::qos::Ownership::Exclusive;
    let keys = InstanceKeys::Dynamic(<FuzzKeyed as ferrodds_cdr::Cdr>::dynamic_type());
    let filter: ContentFilter = Arc::new(|payload: &[u8]| !payload.len().is_multiple_of(3));
    // Purge delays and a writer lease, so that hostile input drives READER_DATA_LIFECYCLE
    // and LIVELINESS too.
    let purge = ferrodds_rtps::dcps::PurgeDelays {
        no_writers: Some(std::time::Duration::from_millis(100)),
        disposed: Some(std::time::Duration::from_millis(100)),
    };
    core.add_data_reader(
        READER_ID,
        DcpsReader::new(&qos, &limits, keys, Some(filter)).with_purge_delays(purge),
    );
    let mut writer_qos = qos.clone();
    writer_qos.liveliness.kind = ferrodds_rtps::qos::LivelinessKind::ManualByTopic;
    writer_qos.liveliness.lease_duration = ferrodds_rtps::qos::Duration::from_millis(100);
    core.add_data_writer(LOCAL_WRITER_ID, DcpsWriter::new(&writer_qos, now));
    for (id, kind) in [
        (LOCAL_WRITER_ID, EndpointKind::Writer),
        (READER_ID, EndpointKind::Reader),
    ] {
        core.add_local(now, user_endpoint(LOCAL, id, kind));
    }
    if let Some(w) = core.rtps.writer(LOCAL_WRITER_ID) {
        w.match_reader(
            now,
            RemoteReader {
                guid: Guid::new(REMOTE, REMOTE_READER_ID),
                locators: vec![loopback(7413)],
                reliable: true,
                transient_local: false,
                dispose_key: ferrodds_rtps::writer::DisposeKey::KeyOnlySample,
                reduced: false,
                filter: None,
                sample_channel: false,
            },
        );
    }
    if let Some(r) = core.rtps.reader(READER_ID) {
        r.match_writer(
            now,
            RemoteWriter {
                guid: Guid::new(REMOTE, WRITER_ID),
                locators: vec![loopback(7413)],
                reliable: true,
            },
        );
    }
    // Addresses datagrams came from (and our own): the only unicast destinations allowed.
    let mut heard = vec![Ipv4Addr::LOCALHOST];
    let mut rest = data;
    let mut scratch = Vec::new();
    while let Some((&[l0, l1, flags], after)) = rest.split_first_chunk::<3>() {
        let len = usize::from(u16::from_le_bytes([l0, l1])).min(after.len());
        let (datagram, next) = after.split_at(len);
        rest = next;
        let wait = u64::from(flags >> WAIT_SHIFT);
        if wait > 0 {
            now = now.after(Duration::from_millis(20 * wait));
            core.handle_timeout(now);
        }
        if flags & WRITE != 0 {
            let size = if flags & FROM_ELSEWHERE != 0 {
                5000
            } else {
                40
            };
            let mut payload = vec![0, 1, 0, 0];
            payload.resize(size, 0x5a);
            let change = Change {
                original: None,
                coherence: None,
                kind: ChangeKind::Alive,
                key_hash: Some([7; 16]),
                timestamp: None,
                payload: payload.into(),
                reduced_payload: None,
            };
            let _ = core.write(now, LOCAL_WRITER_ID, change);
        }
        let datagram = if flags & FROM_REMOTE != 0 && datagram.len() >= 20 {
            scratch.clear();
            scratch.extend_from_slice(datagram);
            scratch[8..20].copy_from_slice(&REMOTE.0);
            &scratch[..]
        } else {
            datagram
        };
        let source = if flags & FROM_ELSEWHERE != 0 {
            ELSEWHERE
        } else {
            Ipv4Addr::LOCALHOST
        };
        if !heard.contains(&source) {
            heard.push(source);
        }
        core.handle_datagram(now, Locator::udpv4(source, 7999), datagram);
        while core.poll_event().is_some() {}
        if let Some(r) = core.data_reader(READER_ID) {
            assert!(r.len() <= limits.max_samples_per_reader);
            // Read or take what arrived, as an application would, with state masks the
            // datagram's length picks (every mask, and none).
            let bits = datagram.len() as u32;
            let selection = Selection {
                sample_states: bits & 3,
                view_states: (bits >> 2) & 3,
                instance_states: (bits >> 4) & 7,
                instance: None,
            };
            let _ = r.collect(now, 8, datagram.len() % 2 == 0, selection);
            let _ = r.has_selected(now, selection);
        }
        check_bounds(&core.discovery, &limits);
        let transmits = std::iter::from_fn(|| core.poll_transmit()).collect::<Vec<_>>();
        for t in transmits {
            for d in &t.destinations {
                let Some(addr) = d.as_udpv4() else {
                    continue;
                };
                assert!(
                    *addr.ip() == SPDP_GROUP || heard.contains(addr.ip()),
                    "a datagram to {addr}, where nothing came from"
                );
            }
        }
        // Every reader's deliveries are drained, as the driver would.
        for id in [READER_ID, EntityId::SPDP_PARTICIPANT_READER] {
            if let Some(r) = core.rtps.reader(id) {
                while r.poll_change().is_some() {}
            }
        }
    }
    let _ = (
        core.rtps.reader_stats(),
        core.rtps.writer_stats(),
        core.discovery.stats(),
    );
}

fn check_bounds(discovery: &Discovery, limits: &Limits) {
    assert!(discovery.remote_participants().count() <= limits.max_remote_participants);
    assert!(discovery.remote_endpoint_count() <= limits.max_remote_endpoints);
    for p in discovery.remote_participants() {
        for list in [
            &p.metatraffic_unicast_locators,
            &p.default_unicast_locators,
            &p.metatraffic_multicast_locators,
            &p.default_multicast_locators,
        ] {
            assert!(list.len() <= limits.max_locators);
        }
    }
}
