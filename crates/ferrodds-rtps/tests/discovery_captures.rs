//! The discovery data of real peers (Cyclone DDS 0.10.2, Fast DDS 2.9.1, RTI Connext
//! 6.1.2; see tests/vectors/README.md) parses into `ParticipantData`,
//! `DiscoveredWriterData` and `DiscoveredReaderData`, says what the peers' dissection
//! (`tshark -O rtps`) says, emits and parses back to the same value in both byte orders,
//! and cannot make the parsers panic when corrupted.

mod pcap;

use std::collections::BTreeSet;
use std::time::Duration as StdDuration;

use ferrodds_rtps::discovery::{
    instance_guid, match_endpoints, BuiltinEndpointSet, DiscoveredReaderData, DiscoveredWriterData,
    EndpointMismatch, ParticipantData,
};
use ferrodds_rtps::qos::{
    DataRepresentationId, Durability, History, ReliabilityKind, TypeConsistencyEnforcement,
};
use ferrodds_rtps::wire::{
    Data, DataPayload, Endianness, EntityId, Header, Locator, Message, Submessage, VendorId,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");
const FILES: [&str; 3] = [
    "cyclone_pingpong.pcap",
    "fastdds_pingpong.pcap",
    "interop_rti_ping_fastdds_pong.pcap",
];

/// One DATA from a builtin discovery writer, with its message header.
struct Sample {
    frame: usize,
    header: Header,
    writer: EntityId,
    /// Flags D/K and the payload, inline QoS: kept as owned bytes via the datagram.
    data: OwnedData,
}

struct OwnedData {
    datagram: Vec<u8>,
    /// Index of the DATA among the message's submessages.
    index: usize,
}

impl OwnedData {
    fn with<R>(&self, f: impl FnOnce(&Data<'_>) -> R) -> R {
        let (_, iter) = Message::parse(&self.datagram).expect("parsed before");
        let sm = iter
            .filter_map(Result::ok)
            .nth(self.index)
            .expect("submessage exists");
        let Submessage::Data(d) = sm else {
            panic!("not a DATA")
        };
        f(&d)
    }
}

/// Every DATA from the SPDP and SEDP writers in `file`.
fn discovery_samples(file: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for d in pcap::udp_datagrams(&format!("{DIR}/{file}")) {
        let Ok((header, iter)) = Message::parse(&d.payload) else {
            continue;
        };
        for (index, sm) in iter.filter_map(Result::ok).enumerate() {
            let Submessage::Data(data) = sm else { continue };
            if [
                EntityId::SPDP_PARTICIPANT_WRITER,
                EntityId::SEDP_PUBLICATIONS_WRITER,
                EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            ]
            .contains(&data.writer_id)
            {
                out.push(Sample {
                    frame: d.frame,
                    header,
                    writer: data.writer_id,
                    data: OwnedData {
                        datagram: d.payload.clone(),
                        index,
                    },
                });
            }
        }
    }
    out
}

/// What one capture's discovery traffic parsed into.
#[derive(Default)]
struct Parsed {
    participants: Vec<(usize, ParticipantData)>,
    writers: Vec<(usize, DiscoveredWriterData)>,
    readers: Vec<(usize, DiscoveredReaderData)>,
    disposals: usize,
}

fn parse_capture(file: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for s in discovery_samples(file) {
        let prefix = s.header.guid_prefix;
        s.data.with(|data| {
            let full = match data.payload {
                DataPayload::Data(p) => Some(p),
                DataPayload::Key(_) | DataPayload::None => None,
            };
            let Some(payload) = full else {
                // A disposal or unregistration: the key is the announcing entity's GUID.
                let guid =
                    instance_guid(data).unwrap_or_else(|e| panic!("{file} frame {}: {e}", s.frame));
                assert_eq!(guid.prefix, prefix, "{file} frame {}", s.frame);
                parsed.disposals += 1;
                return;
            };
            let context = format!("{file} frame {}", s.frame);
            match s.writer {
                EntityId::SPDP_PARTICIPANT_WRITER => {
                    let p = ParticipantData::parse(payload)
                        .unwrap_or_else(|e| panic!("{context}: {e}"));
                    assert_eq!(p.guid.prefix, prefix, "{context}");
                    assert_eq!(p.guid.entity_id, EntityId::PARTICIPANT, "{context}");
                    assert_eq!(p.vendor_id, Some(s.header.vendor_id), "{context}");
                    assert_eq!(instance_guid(data), Ok(p.guid), "{context}");
                    parsed.participants.push((s.frame, p));
                }
                EntityId::SEDP_PUBLICATIONS_WRITER => {
                    let w = DiscoveredWriterData::parse(payload)
                        .unwrap_or_else(|e| panic!("{context}: {e}"));
                    assert_eq!(w.endpoint.guid.prefix, prefix, "{context}");
                    assert_eq!(w.endpoint.participant_guid.prefix, prefix, "{context}");
                    assert_eq!(w.endpoint.vendor_id, Some(s.header.vendor_id), "{context}");
                    assert_eq!(instance_guid(data), Ok(w.endpoint.guid), "{context}");
                    parsed.writers.push((s.frame, w));
                }
                _ => {
                    let r = DiscoveredReaderData::parse(payload)
                        .unwrap_or_else(|e| panic!("{context}: {e}"));
                    assert_eq!(r.endpoint.guid.prefix, prefix, "{context}");
                    assert_eq!(r.endpoint.participant_guid.prefix, prefix, "{context}");
                    assert_eq!(r.endpoint.vendor_id, Some(s.header.vendor_id), "{context}");
                    assert_eq!(instance_guid(data), Ok(r.endpoint.guid), "{context}");
                    parsed.readers.push((s.frame, r));
                }
            }
        });
    }
    parsed
}

/// (vendor, 'W' or 'R', topic, type) of every endpoint announced.
fn endpoints(p: &Parsed) -> BTreeSet<(u16, char, String, String)> {
    let w = p.writers.iter().map(|(_, w)| {
        let e = &w.endpoint;
        let v = e.vendor_id.map_or(0, VendorId::to_u16);
        (v, 'W', e.topic_name.clone(), e.type_name.clone())
    });
    let r = p.readers.iter().map(|(_, r)| {
        let e = &r.endpoint;
        let v = e.vendor_id.map_or(0, VendorId::to_u16);
        (v, 'R', e.topic_name.clone(), e.type_name.clone())
    });
    w.chain(r).collect()
}

fn set(items: &[(u16, char, &str, &str)]) -> BTreeSet<(u16, char, String, String)> {
    items
        .iter()
        .map(|&(v, k, t, n)| (v, k, t.to_owned(), n.to_owned()))
        .collect()
}

#[test]
fn cyclone_discovery_data() {
    let p = parse_capture("cyclone_pingpong.pcap");
    // Frames from tshark: 9 SPDP announcements, 10 publications, 4 subscriptions, and 8
    // disposals (DATA with K flag and a key-only payload).
    assert_eq!(p.participants.len(), 9);
    assert_eq!(p.writers.len(), 10);
    assert_eq!(p.readers.len(), 4);
    assert_eq!(p.disposals, 8);
    assert_eq!(
        endpoints(&p),
        set(&[
            (0x0110, 'R', "DDSPerfRPingKS", "KeyedSeq"),
            (0x0110, 'R', "DDSPerfRPongKS", "KeyedSeq"),
            (0x0110, 'W', "DDSPerfCPUStats", "CPUStats"),
            (0x0110, 'W', "DDSPerfRDataKS", "KeyedSeq"),
            (0x0110, 'W', "DDSPerfRPingKS", "KeyedSeq"),
            (0x0110, 'W', "DDSPerfRPongKS", "KeyedSeq"),
        ])
    );

    // Frame 1, dissected:
    //   PID_USER_DATA "DDSPerf:0:14938:vm", PID_PROPERTY_LIST (3), PID_PROTOCOL_VERSION 2.1,
    //   PID_VENDOR_ID 01.16, PID_PARTICIPANT_LEASE_DURATION 10 s, PID_PARTICIPANT_GUID
    //   011010f3 cbd3b52e 7c100d9c 000001c1, PID_BUILTIN_ENDPOINT_SET 0x0000fc3f,
    //   PID_DOMAIN_ID 0, PID_DEFAULT_UNICAST_LOCATOR and PID_METATRAFFIC_UNICAST_LOCATOR
    //   127.0.0.1:55369, 0x8007 (48 bytes), 0x8019 (4 bytes)
    let (frame, spdp) = &p.participants[0];
    assert_eq!(*frame, 1);
    assert_eq!(spdp.user_data.value, b"DDSPerf:0:14938:vm");
    assert_eq!(
        spdp.lease_duration.to_std(),
        Some(StdDuration::from_secs(10))
    );
    assert_eq!(
        spdp.guid.prefix.0,
        [0x01, 0x10, 0x10, 0xf3, 0xcb, 0xd3, 0xb5, 0x2e, 0x7c, 0x10, 0x0d, 0x9c]
    );
    assert_eq!(spdp.available_builtin_endpoints, BuiltinEndpointSet(0xfc3f));
    assert_eq!(spdp.domain_id, Some(0));
    let loc = "127.0.0.1:55369".parse().expect("address");
    assert_eq!(spdp.default_unicast_locators[0].as_udpv4(), Some(loc));
    assert_eq!(spdp.metatraffic_unicast_locators[0].as_udpv4(), Some(loc));
    assert!(spdp.metatraffic_multicast_locators.is_empty());
    assert_eq!(spdp.entity_name, None);

    // Frame 5: publication of DDSPerfRPongKS / KeyedSeq, RELIABLE (10 s), one partition,
    // [XCDR, XCDR2], PID_TYPE_INFORMATION of 100 bytes, no PID_PARTICIPANT_GUID.
    let (frame, w) = &p.writers[0];
    assert_eq!(*frame, 5);
    let e = &w.endpoint;
    assert_eq!(e.topic_name, "DDSPerfRPongKS");
    assert_eq!(e.guid.entity_id, EntityId::from_u32(0x0000_0d02));
    assert_eq!(e.participant_guid.entity_id, EntityId::PARTICIPANT);
    assert_eq!(e.qos.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(
        e.qos.reliability.max_blocking_time.to_std(),
        Some(StdDuration::from_secs(10))
    );
    assert_eq!(
        e.qos.partition.names,
        ["0110be73_1463bca5_56fa4261_000001c1"]
    );
    assert_eq!(
        e.qos.data_representation.ids,
        [DataRepresentationId::XCDR, DataRepresentationId::XCDR2]
    );
    assert_eq!(e.type_information.as_ref().map(Vec::len), Some(100));
    assert!(e.unicast_locators.is_empty());
    // Everything Cyclone left out is at the writer defaults.
    assert_eq!(e.qos.durability, Durability::Volatile);
    assert!(e.qos.deadline.period.is_infinite());

    // The throughput writer (frame 12) keeps all samples, up to 10000: PID_HISTORY
    // KEEP_ALL and PID_RESOURCE_LIMITS, which Cyclone sends though SEDP need not carry
    // them. The CPU stats writer keeps the defaults.
    let writer = |topic: &str| {
        p.writers
            .iter()
            .map(|(_, w)| &w.endpoint)
            .find(|e| e.topic_name == topic)
            .expect("announced")
    };
    let data = writer("DDSPerfRDataKS");
    assert_eq!(data.qos.history, History::KeepAll);
    assert_eq!(data.qos.resource_limits.max_samples, 10000);
    assert_eq!(data.qos.resource_limits.max_instances, -1);
    assert_eq!(
        writer("DDSPerfCPUStats").qos.history,
        History::KeepLast { depth: 1 }
    );

    // ddsperf routes pongs with partitions: a pong reader sits in the partition named
    // after its own participant ("0110be73_1463bca5_56fa4261_000001c1"), and each pong
    // writer in the partition of the participant it answers. So a pong writer matches
    // the other participant's pong reader only; ping writers (no partition) match every
    // ping reader, their own participant's included.
    let mut pong_matches = 0;
    for (_, w) in &p.writers {
        for (_, r) in &p.readers {
            let (we, re) = (&w.endpoint, &r.endpoint);
            let result = match_endpoints(w, r);
            if we.topic_name != re.topic_name {
                assert_eq!(result, Err(EndpointMismatch::TopicName));
            } else if we.topic_name == "DDSPerfRPongKS" {
                if we.guid.prefix != re.guid.prefix {
                    assert_eq!(result, Ok(()));
                    pong_matches += 1;
                } else {
                    assert_eq!(result, Err(EndpointMismatch::Partition));
                }
            } else {
                assert_eq!(result, Ok(()), "{}", we.topic_name);
            }
        }
    }
    assert!(pong_matches >= 2);
}

#[test]
fn fastdds_discovery_data() {
    let p = parse_capture("fastdds_pingpong.pcap");
    assert_eq!(p.participants.len(), 21);
    assert_eq!(p.writers.len(), 2);
    assert_eq!(p.readers.len(), 2);
    // Disposals with an inline key hash only: 2 SPDP, 1 publication, 1 subscription.
    assert_eq!(p.disposals, 4);
    assert_eq!(
        endpoints(&p),
        set(&[
            (0x010f, 'R', "BenchPing", "Bench::Msg"),
            (0x010f, 'R', "BenchPong", "Bench::Msg"),
            (0x010f, 'W', "BenchPing", "Bench::Msg"),
            (0x010f, 'W', "BenchPong", "Bench::Msg"),
        ])
    );
    for (_, spdp) in &p.participants {
        assert_eq!(spdp.entity_name.as_deref(), Some("fastperf"));
        assert_eq!(spdp.domain_id, None);
        assert_eq!(
            spdp.lease_duration.to_std(),
            Some(StdDuration::from_secs(20))
        );
        assert_eq!(
            spdp.available_builtin_endpoints,
            BuiltinEndpointSet(0x0c3f_0c3f)
        );
    }
    // Frame 19: publication of BenchPing, with every QoS spelled out, PID_KEY_HASH (the
    // endpoint GUID) in the payload, unicast locator 127.0.0.1:7413, max size 116.
    let w = p
        .writers
        .iter()
        .map(|(_, w)| &w.endpoint)
        .find(|e| e.topic_name == "BenchPing")
        .expect("announced");
    assert_eq!(w.guid.entity_id, EntityId::from_u32(0x0000_0102));
    assert_eq!(w.type_max_size_serialized, Some(116));
    assert_eq!(
        w.unicast_locators,
        [Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7413)]
    );
    assert_eq!(w.qos.reliability.kind, ReliabilityKind::Reliable);
    assert_eq!(w.qos.data_representation.ids, [DataRepresentationId::XCDR]);
    // Readers: RELIABLE 100 ms, type consistency at its defaults, no inline QoS.
    for (_, r) in &p.readers {
        let r = &r.endpoint;
        assert_eq!(r.qos.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(
            r.qos.reliability.max_blocking_time.to_std(),
            Some(StdDuration::from_millis(100))
        );
        assert_eq!(
            r.qos.type_consistency,
            TypeConsistencyEnforcement::default()
        );
        assert!(!r.expects_inline_qos);
    }
    // The ping writer of one process matches the ping reader of the other.
    let reader = p
        .readers
        .iter()
        .map(|(_, r)| r)
        .find(|r| r.endpoint.topic_name == "BenchPing")
        .expect("announced");
    let writer = p
        .writers
        .iter()
        .map(|(_, w)| w)
        .find(|w| w.endpoint.topic_name == "BenchPing")
        .expect("announced");
    assert_ne!(writer.endpoint.guid.prefix, reader.endpoint.guid.prefix);
    assert_eq!(match_endpoints(writer, reader), Ok(()));
}

#[test]
fn rti_discovery_data() {
    let p = parse_capture("interop_rti_ping_fastdds_pong.pcap");
    let rti = |v: &Option<VendorId>| *v == Some(VendorId::RTI_CONNEXT);
    assert_eq!(
        p.participants
            .iter()
            .filter(|(_, s)| rti(&s.vendor_id))
            .count(),
        12
    );
    assert_eq!(p.participants.len(), 22);
    assert_eq!(p.writers.len(), 2);
    assert_eq!(p.readers.len(), 2);
    assert_eq!(p.disposals, 8);
    assert_eq!(
        endpoints(&p),
        set(&[
            (0x0101, 'R', "BenchPong", "Bench::Msg"),
            (0x0101, 'W', "BenchPing", "Bench::Msg"),
            (0x010f, 'R', "BenchPing", "Bench::Msg"),
            (0x010f, 'W', "BenchPong", "Bench::Msg"),
        ])
    );
    // Connext's SPDP: entity name "Ping", lease 100 s, PID_BUILTIN_ENDPOINT_QOS 1, a
    // metatraffic multicast locator; its vendor parameters (product version 6.1.2.21,
    // its own domain id, role name, ...) are skipped.
    let (_, spdp) = p
        .participants
        .iter()
        .find(|(_, s)| rti(&s.vendor_id))
        .expect("announced");
    assert_eq!(spdp.entity_name.as_deref(), Some("Ping"));
    assert_eq!(
        spdp.lease_duration.to_std(),
        Some(StdDuration::from_secs(100))
    );
    assert_eq!(spdp.builtin_endpoint_qos.0, 1);
    assert_eq!(spdp.domain_id, Some(0));
    assert_eq!(
        spdp.metatraffic_multicast_locators[0].as_udpv4(),
        Some("239.255.0.1:7400".parse().expect("address"))
    );
    // Connext's subscription (frame 41): no participant GUID and no locators, data
    // representation [XCDR] followed by a compression mask, group entity id 0x80000009,
    // the reader name "R".
    let (frame, r) = p
        .readers
        .iter()
        .find(|(_, r)| rti(&r.endpoint.vendor_id))
        .expect("announced");
    assert_eq!(*frame, 41);
    let r = &r.endpoint;
    assert_eq!(r.guid.entity_id, EntityId::from_u32(0x8000_0007));
    assert_eq!(r.participant_guid.prefix, r.guid.prefix);
    assert!(r.unicast_locators.is_empty() && r.multicast_locators.is_empty());
    assert_eq!(r.qos.data_representation.ids, [DataRepresentationId::XCDR]);
    assert_eq!(r.group_entity_id, Some(EntityId::from_u32(0x8000_0009)));
    assert_eq!(r.entity_name.as_deref(), Some("R"));
    assert_eq!(r.qos.reliability.kind, ReliabilityKind::Reliable);

    // Connext's BenchPing writer matches Fast DDS's BenchPing reader, and Fast DDS's
    // BenchPong writer matches Connext's BenchPong reader.
    for topic in ["BenchPing", "BenchPong"] {
        let w = p
            .writers
            .iter()
            .map(|(_, w)| w)
            .find(|w| w.endpoint.topic_name == topic)
            .expect("announced");
        let r = p
            .readers
            .iter()
            .map(|(_, r)| r)
            .find(|r| r.endpoint.topic_name == topic)
            .expect("announced");
        assert_eq!(match_endpoints(w, r), Ok(()), "{topic}");
    }
    let w = &p.writers[0].1;
    let r = p
        .readers
        .iter()
        .map(|(_, r)| r)
        .find(|r| r.endpoint.topic_name != w.endpoint.topic_name)
        .expect("announced");
    assert_eq!(match_endpoints(w, r), Err(EndpointMismatch::TopicName));
}

/// Emitting what we parsed and parsing it again gives the same value, in both byte
/// orders (the peers all sent little endian).
#[test]
fn captured_discovery_data_round_trips() {
    let mut checked = 0;
    for file in FILES {
        let p = parse_capture(file);
        for e in [Endianness::Little, Endianness::Big] {
            for (frame, spdp) in &p.participants {
                let bytes = spdp.to_vec(e).expect("emit");
                assert_eq!(
                    ParticipantData::parse(&bytes).as_ref(),
                    Ok(spdp),
                    "{file} frame {frame}"
                );
                checked += 1;
            }
            for (frame, w) in &p.writers {
                let bytes = w.to_vec(e).expect("emit");
                assert_eq!(
                    DiscoveredWriterData::parse(&bytes).as_ref(),
                    Ok(w),
                    "{file} frame {frame}"
                );
                checked += 1;
            }
            for (frame, r) in &p.readers {
                let bytes = r.to_vec(e).expect("emit");
                assert_eq!(
                    DiscoveredReaderData::parse(&bytes).as_ref(),
                    Ok(r),
                    "{file} frame {frame}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 2 * (9 + 14 + 21 + 4 + 22 + 4));
}

/// Random corruption and truncation of every captured discovery payload: the parsers
/// return errors or values, never panic, and whatever they accept emits and parses back.
#[test]
fn corrupted_discovery_data_never_panics() {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut accepted = 0usize;
    let mut rejected = 0usize;
    for file in FILES {
        for s in discovery_samples(file) {
            let Some(payload) = s.data.with(|d| d.payload.bytes().map(<[u8]>::to_vec)) else {
                continue;
            };
            for round in 0..64 {
                let mut m = payload.clone();
                for _ in 0..(1 + next() % 6) {
                    let at = (next() % m.len() as u64) as usize;
                    m[at] = next() as u8;
                }
                if round % 4 == 0 {
                    m.truncate((next() % m.len() as u64) as usize);
                }
                let ok = check_any(&m);
                if ok {
                    accepted += 1;
                } else {
                    rejected += 1;
                }
            }
        }
    }
    // Both outcomes happen: corruption often lands in skipped parameters or values.
    assert!(accepted > 100 && rejected > 100, "{accepted} {rejected}");
}

/// Parses `m` as each kind of discovery data; whatever parses must round-trip.
fn check_any(m: &[u8]) -> bool {
    let mut ok = false;
    if let Ok(p) = ParticipantData::parse(m) {
        let again = ParticipantData::parse(&p.to_vec(Endianness::Little).expect("emit"));
        assert_eq!(again, Ok(p));
        ok = true;
    }
    if let Ok(w) = DiscoveredWriterData::parse(m) {
        if let Ok(bytes) = w.to_vec(Endianness::Big) {
            assert_eq!(DiscoveredWriterData::parse(&bytes), Ok(w));
        }
        ok = true;
    }
    if let Ok(r) = DiscoveredReaderData::parse(m) {
        if let Ok(bytes) = r.to_vec(Endianness::Little) {
            assert_eq!(DiscoveredReaderData::parse(&bytes), Ok(r));
        }
        ok = true;
    }
    ok
}
