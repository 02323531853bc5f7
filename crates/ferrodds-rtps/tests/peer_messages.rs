//! Messages captured from real peers, as bytes with their Wireshark dissection above them
//! (abridged: `tshark -r tests/vectors/FILE -Y frame.number==N -V`). Each is parsed, checked
//! field by field, and emitted again to compare with what the peer sent.

mod pcap;

use ferrodds_rtps::wire::parameter_list::pid;
use ferrodds_rtps::wire::{
    message_to_vec, DataPayload, Endianness, EntityId, Guid, GuidPrefix, Header, Locator, Message,
    ParameterList, ProtocolVersion, SequenceNumber, Submessage, Time, VendorId,
};

fn bytes(hex_lines: &[&str]) -> Vec<u8> {
    hex::decode(hex_lines.concat()).expect("hex")
}

/// Parses a whole message, failing on any malformed submessage.
fn parse(msg: &[u8]) -> (Header, Vec<Submessage<'_>>, usize) {
    let (header, mut iter) = Message::parse(msg).expect("RTPS header");
    let subs: Vec<_> = iter
        .by_ref()
        .collect::<Result<_, _>>()
        .expect("no malformed submessage");
    (header, subs, iter.not_understood())
}

/// Emits the parsed message again in little endian.
fn reemit(header: &Header, subs: &[Submessage<'_>]) -> Vec<u8> {
    message_to_vec(header, subs, Endianness::Little).expect("emit")
}

// Cyclone DDS 0.10.2, SPDP participant announcement (cyclone_pingpong.pcap, frame 1;
// 127.0.0.1 -> 239.255.0.1:7400).
//
// Real-Time Publish-Subscribe Wire Protocol
//     Magic: RTPS
//     Protocol version: 2.1
//     vendorId: 01.16 (Eclipse Foundation - Cyclone DDS)
//     guidPrefix: 011010f3cbd3b52e7c100d9c
//     submessageId: INFO_TS (0x09)
//         Flags: 0x01, Endianness bit
//         octetsToNextHeader: 8
//         Timestamp: Nov 21, 2026 15:31:52.267295836 UTC
//     submessageId: DATA (0x15)
//         Flags: 0x05, Data present, Endianness bit
//         octetsToNextHeader: 328
//         Octets to inline QoS: 16
//         readerEntityId: ENTITYID_UNKNOWN (0x00000000)
//         writerEntityId: ENTITYID_BUILTIN_PARTICIPANT_WRITER (0x000100c2)
//         writerSeqNumber: 1
//         serializedData
//             encapsulation kind: PL_CDR_LE (0x0003)
//             encapsulation options: 0x0000
//             serializedData:
//                 PID_USER_DATA: 18 octets "DDSPerf:0:14938:vm"
//                 PID_PROPERTY_LIST (3 properties): __ProcessName = ddsperf,
//                     __Pid = 14938, __Hostname = vm
//                 PID_PROTOCOL_VERSION: 2.1
//                 PID_VENDOR_ID: 01.16 (Eclipse Foundation - Cyclone DDS)
//                 PID_PARTICIPANT_LEASE_DURATION: 10.000000 sec
//                 PID_PARTICIPANT_GUID: 011010f3 cbd3b52e 7c100d9c 000001c1
//                 PID_BUILTIN_ENDPOINT_SET: 0x0000fc3f
//                 PID_DOMAIN_ID: 0
//                 PID_DEFAULT_UNICAST_LOCATOR (LOCATOR_KIND_UDPV4, 127.0.0.1:55369)
//                 PID_METATRAFFIC_UNICAST_LOCATOR (LOCATOR_KIND_UDPV4, 127.0.0.1:55369)
//                 Unknown (0x8007): ADLINK participant version info "vm/0.10.2/Linux/Linux"
//                 Unknown (0x8019): 00002000 (Cyclone's receive buffer size)
//                 PID_SENTINEL
const CYCLONE_SPDP: &[&str] = &[
    "5254505302010110011010f3cbd3b52e7c100d9c0901080068b9016bfa7f6d44150548010000100000000000000100c2",
    "0000000001000000000300002c00180012000000444453506572663a303a31343933383a766d00005900580003000000",
    "0e0000005f5f50726f636573734e616d65000000080000006464737065726600060000005f5f50696400000006000000",
    "31343933380000000b0000005f5f486f73746e616d65000003000000766d000000000000150004000201000016000400",
    "01100000020008000a0000000000000050001000011010f3cbd3b52e7c100d9c000001c1580004003ffc00000f000400",
    "00000000310018000100000049d800000000000000000000000000007f000001320018000100000049d8000000000000",
    "00000000000000007f00000107803000000000002c00000000000000000000000000000016000000766d2f302e31302e",
    "322f4c696e75782f4c696e7578000000198004000000200001000000",
];

#[test]
fn cyclone_spdp_data() {
    let msg = bytes(CYCLONE_SPDP);
    let (header, subs, not_understood) = parse(&msg);
    let prefix = GuidPrefix(*b"\x01\x10\x10\xf3\xcb\xd3\xb5\x2e\x7c\x10\x0d\x9c");
    assert_eq!(
        header,
        Header {
            version: ProtocolVersion::V2_1,
            vendor_id: VendorId::CYCLONE_DDS,
            guid_prefix: prefix,
        }
    );
    assert_eq!(not_understood, 0);
    let [Submessage::InfoTimestamp(ts), Submessage::Data(data)] = subs[..] else {
        panic!("{subs:?}")
    };
    assert_eq!(
        ts.timestamp,
        Some(Time {
            seconds: 0x6b01_b968,
            fraction: 0x446d_7ffa
        })
    );
    assert_eq!(data.reader_id, EntityId::UNKNOWN);
    assert_eq!(data.writer_id, EntityId::SPDP_PARTICIPANT_WRITER);
    assert_eq!(data.writer_sn, SequenceNumber(1));
    assert_eq!(data.inline_qos, None);
    let DataPayload::Data(payload) = data.payload else {
        panic!()
    };
    let (list, rest) = ParameterList::parse_encapsulated(payload).expect("PL_CDR_LE");
    assert!(rest.is_empty());
    assert_eq!(list.endianness(), Endianness::Little);
    let ids: Vec<u16> = list.iter().map(|p| p.id).collect();
    assert_eq!(
        ids,
        [
            pid::USER_DATA,
            pid::PROPERTY_LIST,
            pid::PROTOCOL_VERSION,
            pid::VENDORID,
            pid::PARTICIPANT_LEASE_DURATION,
            pid::PARTICIPANT_GUID,
            pid::BUILTIN_ENDPOINT_SET,
            pid::DOMAIN_ID,
            pid::DEFAULT_UNICAST_LOCATOR,
            pid::METATRAFFIC_UNICAST_LOCATOR,
            0x8007,
            0x8019,
        ]
    );
    let find = |id| list.find(id).expect("present");
    assert_eq!(
        find(pid::PARTICIPANT_GUID).as_guid(),
        Some(Guid::new(prefix, EntityId::PARTICIPANT))
    );
    assert_eq!(find(pid::BUILTIN_ENDPOINT_SET).as_u32(), Some(0xfc3f));
    assert_eq!(find(pid::PARTICIPANT_LEASE_DURATION).as_u32(), Some(10));
    assert_eq!(find(pid::DOMAIN_ID).as_u32(), Some(0));
    assert_eq!(find(pid::PROTOCOL_VERSION).value, [2, 1, 0, 0]);
    assert_eq!(find(pid::VENDORID).value, [1, 0x10, 0, 0]);
    assert_eq!(
        find(pid::METATRAFFIC_UNICAST_LOCATOR).as_locator(),
        Some(Locator::udpv4([127, 0, 0, 1].into(), 55369))
    );
    assert!(find(0x8007).is_vendor_specific());
    // Emitting the parsed message gives back the bytes Cyclone sent.
    assert_eq!(reemit(&header, &subs), msg);
}

// Fast DDS 2.9.1, SEDP publication (DATA(w)) of the BenchPing writer
// (fastdds_pingpong.pcap, frame 19; 127.0.0.1 -> 127.0.0.1:7412).
//
// Real-Time Publish-Subscribe Wire Protocol
//     Magic: RTPS
//     Protocol version: 2.3
//     vendorId: 01.15 (eProsima - Fast-RTPS)
//     guidPrefix: 010f78fd7c3ab99600000000
//     submessageId: INFO_DST (0x0e)
//         Flags: 0x01, Endianness bit
//         octetsToNextHeader: 12
//         guidPrefix: 010f78fd733a602000000000
//     submessageId: INFO_TS (0x09)
//         Flags: 0x01, Endianness bit
//         octetsToNextHeader: 8
//         Timestamp: Nov 21, 2026 15:31:58.029109823 UTC
//     submessageId: DATA (0x15)
//         Flags: 0x05, Data present, Endianness bit
//         octetsToNextHeader: 360
//         Octets to inline QoS: 16
//         readerEntityId: ENTITYID_BUILTIN_PUBLICATIONS_READER (0x000003c7)
//         writerEntityId: ENTITYID_BUILTIN_PUBLICATIONS_WRITER (0x000003c2)
//         writerSeqNumber: 1
//         serializedData
//             encapsulation kind: PL_CDR_LE (0x0003)
//             serializedData:
//                 PID_UNICAST_LOCATOR (LOCATOR_KIND_UDPV4, 127.0.0.1:7413)
//                 PID_PARTICIPANT_GUID: 010f78fd 7c3ab996 00000000 000001c1
//                 PID_TOPIC_NAME: BenchPing
//                 PID_TYPE_NAME: Bench::Msg
//                 PID_KEY_HASH: 010f78fd:7c3ab996:00000000:00000102
//                 PID_ENDPOINT_GUID: 010f78fd 7c3ab996 00000000 00000102
//                 PID_TYPE_MAX_SIZE_SERIALIZED: 116
//                 PID_PROTOCOL_VERSION: 2.3
//                 PID_VENDOR_ID: 01.15 (eProsima - Fast-RTPS)
//                 PID_DURABILITY: VOLATILE_DURABILITY_QOS
//                 PID_DURABILITY_SERVICE, PID_DEADLINE (INFINITE), PID_LATENCY_BUDGET (0),
//                 PID_LIVELINESS (INFINITE), PID_RELIABILITY, PID_LIFESPAN (INFINITE),
//                 PID_USER_DATA (0 octets), PID_TIME_BASED_FILTER (0), PID_OWNERSHIP,
//                 PID_DESTINATION_ORDER, PID_PRESENTATION, PID_PARTITION (0 names),
//                 PID_TOPIC_DATA (0 octets), PID_GROUP_DATA (0 octets)
//                 PID_SENTINEL
//     submessageId: Vendor-specific (0x80)
//         (Fast DDS statistics: destination locator 127.0.0.1:7410, a timestamp and a
//         sequence number; 56 bytes)
const FASTDDS_SEDP: &[&str] = &[
    "525450530203010f010f78fd7c3ab996000000000e010c00010f78fd733a602000000000090108006eb9016bcabd7307",
    "1505680100001000000003c7000003c20000000001000000000300002f00180001000000f51c00000000000000000000",
    "000000007f00000150001000010f78fd7c3ab99600000000000001c1050010000a00000042656e636850696e67000000",
    "070010000b00000042656e63683a3a4d7367000070001000010f78fd7c3ab99600000000000001025a001000010f78fd",
    "7c3ab99600000000000001026000040074000000150004000203000016000400010f00001d000400000000001e001c00",
    "00000000000000000000000001000000ffffffffffffffffffffffff23000800ffffff7fffffffff2700080000000000",
    "000000001b000c0000000000ffffff7fffffffff1a000c000200000001000000000000002b000800ffffff7fffffffff",
    "2c000400000000000400080000000000000000001f000400000000002500040000000000210008000000000000000000",
    "29000400000000002e000400000000002d00040000000000010000008001380001000000f21c00000000000000000000",
    "000000007f0000016eb9016bebb2e00707000000000000001c060000000000000000000000000000",
];

#[test]
fn fastdds_sedp_publication() {
    let msg = bytes(FASTDDS_SEDP);
    let (header, subs, not_understood) = parse(&msg);
    assert_eq!(header.vendor_id, VendorId::FAST_DDS);
    assert_eq!(header.version, ProtocolVersion::V2_3);
    // The statistics submessage is skipped and counted.
    assert_eq!(not_understood, 1);
    let [Submessage::InfoDestination(dst), Submessage::InfoTimestamp(_), Submessage::Data(data)] =
        subs[..]
    else {
        panic!("{subs:?}")
    };
    assert_eq!(
        dst.guid_prefix,
        GuidPrefix(*b"\x01\x0f\x78\xfd\x73\x3a\x60\x20\0\0\0\0")
    );
    assert_eq!(data.reader_id, EntityId::SEDP_PUBLICATIONS_READER);
    assert_eq!(data.writer_id, EntityId::SEDP_PUBLICATIONS_WRITER);
    let payload = data.payload.bytes().expect("payload");
    let (list, _) = ParameterList::parse_encapsulated(payload).expect("PL_CDR_LE");
    let find = |id| list.find(id).expect("present");
    assert_eq!(find(pid::TOPIC_NAME).as_str(), Some("BenchPing"));
    assert_eq!(find(pid::TYPE_NAME).as_str(), Some("Bench::Msg"));
    let endpoint = find(pid::ENDPOINT_GUID).as_guid().expect("guid");
    assert_eq!(endpoint.entity_id, EntityId::from_u32(0x0000_0102));
    // Fast DDS puts the endpoint GUID in PID_KEY_HASH too.
    assert_eq!(find(pid::KEY_HASH).value, endpoint.to_bytes());
    assert_eq!(find(pid::RELIABILITY).as_u32(), Some(2)); // RELIABLE
    assert_eq!(list.iter().count(), 24);
    // Emitting gives back the bytes Fast DDS sent, minus the 60-byte vendor submessage we
    // do not understand.
    assert_eq!(reemit(&header, &subs), msg[..msg.len() - 60]);
}

// Fast DDS 2.9.1, ACKNACK on the SEDP subscriptions writer (fastdds_pingpong.pcap,
// frame 14).
//
// Real-Time Publish-Subscribe Wire Protocol
//     Protocol version: 2.3
//     vendorId: 01.15 (eProsima - Fast-RTPS)
//     guidPrefix: 010f78fd733a602000000000
//     submessageId: INFO_DST (0x0e)
//         Flags: 0x01, Endianness bit
//         guidPrefix: 010f78fd7c3ab99600000000
//     submessageId: ACKNACK (0x06)
//         Flags: 0x01, Endianness bit
//         octetsToNextHeader: 28
//         readerEntityId: ENTITYID_BUILTIN_SUBSCRIPTIONS_READER (0x000004c7)
//         writerEntityId: ENTITYID_BUILTIN_SUBSCRIPTIONS_WRITER (0x000004c2)
//         readerSNState
//             bitmapBase: 1
//             numBits: 1
//             bitmap: 1
//         Count: 1
//     submessageId: Vendor-specific (0x80)
const FASTDDS_ACKNACK: &[&str] = &[
    "525450530203010f010f78fd733a6020000000000e010c00010f78fd7c3ab9960000000006011c00000004c7000004c2",
    "00000000010000000100000000000080010000008001380001000000f41c00000000000000000000000000007f000001",
    "6eb9016b1f8f96070500000000000000c4030000000000000000000000000000",
];

#[test]
fn fastdds_acknack() {
    let msg = bytes(FASTDDS_ACKNACK);
    let (header, subs, not_understood) = parse(&msg);
    assert_eq!(not_understood, 1);
    let [Submessage::InfoDestination(_), Submessage::AckNack(ack)] = subs[..] else {
        panic!("{subs:?}")
    };
    assert_eq!(ack.reader_id, EntityId::SEDP_SUBSCRIPTIONS_READER);
    assert_eq!(ack.writer_id, EntityId::SEDP_SUBSCRIPTIONS_WRITER);
    assert!(!ack.final_flag);
    assert_eq!(ack.count, 1);
    let missing: Vec<_> = ack.reader_sn_state.iter().collect();
    assert_eq!(missing, [SequenceNumber(1)]);
    assert_eq!(reemit(&header, &subs), msg[..msg.len() - 60]);
}

// RTI Connext 6.1.2, pre-emptive ACKNACK to a Fast DDS participant
// (interop_rti_ping_fastdds_pong.pcap, frame 31).
//
// Real-Time Publish-Subscribe Wire Protocol
//     Protocol version: 2.3
//     vendorId: 01.01 (Real-Time Innovations, Inc. - Connext DDS)
//     guidPrefix: 0101cbfcb7af9ed5cacb208c
//     submessageId: INFO_DST (0x0e)
//         Flags: 0x01, Endianness bit
//         octetsToNextHeader: 12
//         guidPrefix: 010f78fd893a53f100000000
//     submessageId: ACKNACK (0x06)
//         Flags: 0x01, Endianness bit
//         octetsToNextHeader: 24
//         readerEntityId: ENTITYID_BUILTIN_PUBLICATIONS_READER (0x000003c7)
//         writerEntityId: ENTITYID_BUILTIN_PUBLICATIONS_WRITER (0x000003c2)
//         readerSNState
//             bitmapBase: 0
//             numBits: 0
//             [Acknack Analysis: Preemptive ACKNACK]
//         Count: 1
//
// bitmapBase 0 violates §9.4.2.6 (base ≥ 1); Cyclone DDS tolerates it from RTI and
// eProsima, and so do we.
const RTI_PREEMPTIVE_ACKNACK: &[&str] = &[
    "52545053020301010101cbfcb7af9ed5cacb208c0e010c00010f78fd893a53f10000000006011800000003c7000003c2",
    "00000000000000000000000001000000",
];

#[test]
fn rti_preemptive_acknack() {
    let msg = bytes(RTI_PREEMPTIVE_ACKNACK);
    let (header, subs, _) = parse(&msg);
    assert_eq!(header.vendor_id, VendorId::RTI_CONNEXT);
    let [Submessage::InfoDestination(_), Submessage::AckNack(ack)] = subs[..] else {
        panic!("{subs:?}")
    };
    assert_eq!(ack.reader_sn_state.base(), SequenceNumber(0));
    assert_eq!(ack.reader_sn_state.num_bits(), 0);
    assert_eq!(ack.count, 1);
    assert_eq!(reemit(&header, &subs), msg);
}

// RTI Connext 6.1.2, HEARTBEAT of its participant-message writer announcing that
// nothing is available yet (interop_rti_ping_fastdds_pong.pcap, frame 23).
//
// Real-Time Publish-Subscribe Wire Protocol
//     Protocol version: 2.3
//     vendorId: 01.01 (Real-Time Innovations, Inc. - Connext DDS)
//     guidPrefix: 0101cbfcb7af9ed5cacb208c
//     submessageId: INFO_DST (0x0e)
//         guidPrefix: 010f78fd893a53f100000000
//     submessageId: HEARTBEAT (0x07)
//         Flags: 0x03, Final flag, Endianness bit
//         octetsToNextHeader: 28
//         readerEntityId: ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_READER (0x000200c7)
//         writerEntityId: ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_WRITER (0x000200c2)
//         firstAvailableSeqNumber: 1
//         lastSeqNumber: 0
//         count: 1
const RTI_HEARTBEAT: &[&str] = &[
    "52545053020301010101cbfcb7af9ed5cacb208c0e010c00010f78fd893a53f10000000007031c00000200c7000200c2",
    "0000000001000000000000000000000001000000",
];

#[test]
fn rti_heartbeat_empty_range() {
    let msg = bytes(RTI_HEARTBEAT);
    let (header, subs, _) = parse(&msg);
    let [Submessage::InfoDestination(_), Submessage::Heartbeat(hb)] = subs[..] else {
        panic!("{subs:?}")
    };
    assert_eq!(hb.reader_id, EntityId::PARTICIPANT_MESSAGE_READER);
    assert_eq!(hb.writer_id, EntityId::PARTICIPANT_MESSAGE_WRITER);
    assert_eq!(
        (hb.first_sn, hb.last_sn),
        (SequenceNumber(1), SequenceNumber(0))
    );
    assert!(hb.final_flag && !hb.liveliness_flag);
    assert_eq!(reemit(&header, &subs), msg);
}

// RTI Connext 6.1.2, user DATA on BenchPing with inline QoS (1 KiB sample, so read from
// the capture rather than copied here: interop_rti_ping_fastdds_pong.pcap, frame 57).
//
//     submessageId: INFO_TS (0x09)
//     submessageId: DATA (0x15)
//         Flags: 0x07, Data present, Inline QoS, Endianness bit
//         octetsToNextHeader: 1072
//         Octets to inline QoS: 16
//         readerEntityId: ENTITYID_UNKNOWN (0x00000000)
//         writerEntityId: 0x80000002 (Application-defined writer (with key))
//         writerSeqNumber: 1
//         inlineQos:
//             PID_KEY_HASH: 00000001:00000000:00000000:00000000
//             PID_SENTINEL
//         serializedData
//             encapsulation kind: CDR_LE (0x0001)
//             serializedData: 00000000 01000000 f4030000 5a5a5a5a...
#[test]
fn rti_user_data_with_inline_key_hash() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/interop_rti_ping_fastdds_pong.pcap"
    );
    let frame = pcap::udp_datagrams(path)
        .into_iter()
        .find(|d| d.frame == 57)
        .expect("frame 57");
    let msg = frame.payload;
    let (header, subs, _) = parse(&msg);
    assert_eq!(header.vendor_id, VendorId::RTI_CONNEXT);
    let [Submessage::InfoTimestamp(_), Submessage::Data(data)] = subs[..] else {
        panic!("{subs:?}")
    };
    assert_eq!(data.writer_id, EntityId::from_u32(0x8000_0002));
    let qos = data.inline_qos.expect("inline QoS");
    let params: Vec<_> = qos.iter().collect();
    assert_eq!(params.len(), 1);
    assert_eq!(params[0].id, pid::KEY_HASH);
    assert_eq!(
        params[0].value,
        [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    let DataPayload::Data(payload) = data.payload else {
        panic!()
    };
    assert_eq!(payload[..4], [0x00, 0x01, 0x00, 0x00]); // CDR_LE
    assert_eq!(payload.len(), 1072 - 20 - 24);
    assert_eq!(reemit(&header, &subs), msg);
}
