//! Every datagram captured from real peers (Cyclone DDS 0.10.2, Fast DDS 2.9.1, RTI
//! Connext 6.1.2; see tests/vectors/README.md) parses without a malformed submessage, and
//! every parameter list in their discovery data iterates to its sentinel.

mod pcap;

use std::collections::BTreeMap;

use ferrodds_rtps::wire::parameter_list::{PL_CDR_BE, PL_CDR_LE};
use ferrodds_rtps::wire::{
    message_to_vec, Data, DataPayload, Endianness, Message, MessageError, ParameterList,
    Submessage, VendorId,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors");

/// What one capture held, for the assertions and the printed summary.
#[derive(Debug, Default)]
struct Summary {
    datagrams: usize,
    messages: usize,
    /// Datagrams that are not RTPS messages: frame, destination port, reason.
    not_rtps: Vec<(usize, u16, MessageError)>,
    /// Accepted submessages by id.
    submessages: BTreeMap<u8, usize>,
    not_understood: usize,
    vendors: BTreeMap<u16, usize>,
    parameter_lists: usize,
    /// Parameter ids seen in discovery data, with the vendors that sent them.
    pids: BTreeMap<u16, Vec<u16>>,
    inline_qos_pids: BTreeMap<u16, usize>,
}

fn payload_is_parameter_list(payload: &[u8]) -> bool {
    matches!(payload.first_chunk::<2>(), Some(id) if [PL_CDR_BE, PL_CDR_LE].contains(&u16::from_be_bytes(*id)))
}

fn check_data(data: &Data<'_>, vendor: VendorId, s: &mut Summary, frame: usize) {
    if let Some(q) = data.inline_qos {
        for p in q.iter() {
            *s.inline_qos_pids.entry(p.id).or_default() += 1;
        }
    }
    let payload = match data.payload {
        DataPayload::Data(p) | DataPayload::Key(p) => p,
        DataPayload::None => return,
    };
    if !payload_is_parameter_list(payload) {
        return;
    }
    let (list, _rest) = ParameterList::parse_encapsulated(payload)
        .unwrap_or_else(|e| panic!("frame {frame}: parameter list: {e}"));
    s.parameter_lists += 1;
    for p in list.iter() {
        let vendors = s.pids.entry(p.id).or_default();
        if !vendors.contains(&vendor.to_u16()) {
            vendors.push(vendor.to_u16());
        }
    }
}

fn summarize(file: &str) -> Summary {
    let mut s = Summary::default();
    for d in pcap::udp_datagrams(&format!("{DIR}/{file}")) {
        s.datagrams += 1;
        let (header, mut iter) = match Message::parse(&d.payload) {
            Ok(x) => x,
            Err(e) => {
                s.not_rtps.push((d.frame, d.dst_port, e));
                continue;
            }
        };
        s.messages += 1;
        *s.vendors.entry(header.vendor_id.to_u16()).or_default() += 1;
        for sm in iter.by_ref() {
            let sm = sm.unwrap_or_else(|e| panic!("{file} frame {}: malformed: {e}", d.frame));
            *s.submessages.entry(sm.id()).or_default() += 1;
            match sm {
                Submessage::Data(data) => check_data(&data, header.vendor_id, &mut s, d.frame),
                Submessage::DataFrag(f) => {
                    assert!(f.fragment_starting_num >= 1);
                }
                _ => {}
            }
        }
        s.not_understood += iter.not_understood();
    }
    println!("{file}: {s:#x?}");
    s
}

#[test]
fn cyclone_pingpong_parses() {
    let s = summarize("cyclone_pingpong.pcap");
    assert!(s.messages > 150);
    assert_eq!(s.vendors.keys().copied().collect::<Vec<_>>(), [0x0110]);
    // Cyclone wakes its own receive thread with a 1-byte datagram to its own port
    // (frame 161): not RTPS, and not to be counted as malformed RTPS either.
    assert_eq!(
        s.not_rtps,
        [(161, 32946, MessageError::TooShort { len: 1 })]
    );
    assert_eq!(s.not_understood, 0);
    // SPDP, SEDP (publications, subscriptions), participant messages, user data.
    assert!(s.parameter_lists >= 15, "{}", s.parameter_lists);
    assert!(
        s.pids.contains_key(&0x0075),
        "Cyclone sends PID_TYPE_INFORMATION"
    );
    for id in [0x06u8, 0x07, 0x09, 0x0e, 0x15] {
        assert!(s.submessages.contains_key(&id), "no submessage {id:#x}");
    }
}

#[test]
fn fastdds_pingpong_parses() {
    let s = summarize("fastdds_pingpong.pcap");
    assert!(s.messages > 700);
    assert_eq!(s.vendors.keys().copied().collect::<Vec<_>>(), [0x010f]);
    assert!(s.not_rtps.is_empty(), "{:?}", s.not_rtps);
    // Fast DDS (built with its statistics module, as Debian's is) appends a
    // vendor-specific submessage 0x80 to every message it sends.
    assert_eq!(s.not_understood, s.messages);
    assert!(s.parameter_lists >= 20, "{}", s.parameter_lists);
}

#[test]
fn rti_fastdds_interop_parses() {
    let s = summarize("interop_rti_ping_fastdds_pong.pcap");
    assert_eq!(
        s.vendors.keys().copied().collect::<Vec<_>>(),
        [0x0101, 0x010f]
    );
    // Connext's NDDSPING datagrams are recognised, not counted as malformed (6 of them),
    // and Connext sends its first multicast SPDP announcement twice, once with the
    // protocol id "RTPX" (frame 24) and once, byte for byte the same otherwise, with
    // "RTPS" (frame 25). We drop the RTPX copy as not RTPS.
    let pings = s
        .not_rtps
        .iter()
        .filter(|(_, _, e)| *e == MessageError::ConnextPing)
        .count();
    assert_eq!(pings, 6);
    let others: Vec<_> = s
        .not_rtps
        .iter()
        .filter(|(_, _, e)| *e != MessageError::ConnextPing)
        .collect();
    assert_eq!(
        others,
        [&(24, 7400, MessageError::NotRtps { found: *b"RTPX" })]
    );
    assert!(s.parameter_lists >= 20, "{}", s.parameter_lists);
    // Connext sends user DATA with inline QoS (flags Q|D).
    assert!(!s.inline_qos_pids.is_empty());
}

/// Walks a message the way a receiver would: every submessage, every inline QoS and
/// every parameter-list payload. Returns nothing; the point is that it cannot panic.
fn walk(datagram: &[u8]) {
    let Ok((_, iter)) = Message::parse(datagram) else {
        return;
    };
    for sm in iter {
        let Ok(sm) = sm else { break };
        if let Submessage::Data(d) = sm {
            for p in d.inline_qos.iter().flat_map(|q| q.iter()) {
                let _ = (p.as_str(), p.as_guid(), p.as_locator(), p.as_u32());
            }
            if let Some(payload) = d.payload.bytes() {
                if let Ok((list, _)) = ParameterList::parse_encapsulated(payload) {
                    for p in list.iter() {
                        let _ = (p.as_str(), p.as_guid(), p.as_locator(), p.as_u32());
                    }
                }
            }
        }
        if let Submessage::AckNack(a) = sm {
            let _ = a.reader_sn_state.iter().count();
        }
        if let Submessage::Gap(g) = sm {
            let _ = g.gap_list.iter().count();
        }
    }
}

/// Corrupts every captured message (random bytes at random places, truncations) and
/// walks the result: malformed input is reported, never a panic.
#[test]
fn corrupted_captures_never_panic() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // xorshift64
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for file in [
        "cyclone_pingpong.pcap",
        "fastdds_pingpong.pcap",
        "interop_rti_ping_fastdds_pong.pcap",
    ] {
        for d in pcap::udp_datagrams(&format!("{DIR}/{file}")) {
            let msg = d.payload;
            walk(&msg);
            if msg.is_empty() {
                continue;
            }
            for _ in 0..16 {
                let mut m = msg.clone();
                for _ in 0..(1 + next() % 4) {
                    let at = (next() % m.len() as u64) as usize;
                    m[at] = next() as u8;
                }
                walk(&m);
                let cut = (next() % m.len() as u64) as usize;
                walk(&m[..cut]);
            }
        }
    }
}

/// Emitting what we parsed gives back the peer's bytes, for every captured message that
/// holds only submessages we understand (all three peers send little endian) — except
/// where the peer set bitmap bits past numBits, which §9.4.2.6 says carry nothing and
/// which we clear: RTI Connext's ACKNACKs carry numBits 1 with the bitmap word
/// 0xffffffff. Those must still mean the same thing after the round trip.
#[test]
fn captured_messages_round_trip() {
    let mut checked = 0;
    let mut canonicalised = BTreeMap::<&str, usize>::new();
    for file in [
        "cyclone_pingpong.pcap",
        "fastdds_pingpong.pcap",
        "interop_rti_ping_fastdds_pong.pcap",
    ] {
        for d in pcap::udp_datagrams(&format!("{DIR}/{file}")) {
            let Ok((header, mut iter)) = Message::parse(&d.payload) else {
                continue;
            };
            let subs: Vec<_> = iter.by_ref().map(|s| s.expect("valid")).collect();
            if iter.not_understood() > 0 {
                continue;
            }
            let out = message_to_vec(&header, &subs, Endianness::Little).expect("emit");
            if out != d.payload {
                let (_, again) = Message::parse(&out).expect("valid");
                let again: Vec<_> = again.map(|s| s.expect("valid")).collect();
                assert_eq!(again, subs, "{file} frame {}", d.frame);
                assert_eq!(out.len(), d.payload.len());
                assert!(subs.iter().any(|s| matches!(s, Submessage::AckNack(_))));
                *canonicalised.entry(file).or_default() += 1;
            }
            checked += 1;
        }
    }
    assert!(checked > 500, "{checked}");
    // Only Connext sets bits past numBits.
    assert_eq!(
        canonicalised.keys().copied().collect::<Vec<_>>(),
        ["interop_rti_ping_fastdds_pong.pcap"]
    );
    println!("round trip: {checked} messages, canonicalised: {canonicalised:?}");
}
