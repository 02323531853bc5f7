//! Forged SPDP traffic, as one host on the LAN can send it: announcements of made-up
//! participants with infinite leases, and malformed or mutated announcements. Used by the
//! tests that check a flood cannot keep a real peer out (`hostile_traffic.rs`,
//! `interop_cyclone.rs`).

#![allow(dead_code)]

use std::net::{SocketAddrV4, UdpSocket};
use std::time::Duration;

use ferrodds_rtps::discovery::ParticipantData;
use ferrodds_rtps::wire::{
    message_to_vec, Data, DataPayload, Endianness, EntityId, GuidPrefix, Header, Locator,
    ProtocolVersion, SequenceNumber, Submessage, VendorId,
};

/// A made-up GUID prefix: `tag` tells floods apart, `n` the participants of one flood.
pub(crate) fn forged_prefix(tag: u8, n: u32) -> GuidPrefix {
    let mut p = [0xf1, tag, 0x0d, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    p[8..].copy_from_slice(&n.to_be_bytes());
    GuidPrefix(p)
}

/// An SPDP DATA message from `from` carrying `payload`.
fn spdp_message(from: GuidPrefix, seq: i64, payload: &[u8]) -> Vec<u8> {
    let header = Header {
        version: ProtocolVersion::V2_5,
        vendor_id: VendorId([1, 0x10]),
        guid_prefix: from,
    };
    let data: Submessage<'_> = Data {
        extra_flags: 0,
        reader_id: EntityId::SPDP_PARTICIPANT_READER,
        writer_id: EntityId::SPDP_PARTICIPANT_WRITER,
        writer_sn: SequenceNumber(seq),
        inline_qos: None,
        payload: DataPayload::Data(payload),
        non_standard_payload: false,
    }
    .into();
    message_to_vec(&header, &[data], Endianness::Little).expect("an SPDP message fits")
}

/// The announcement of a made-up participant: infinite lease, locators on `socket`'s address.
fn forged_announcement(prefix: GuidPrefix, at: Locator) -> Vec<u8> {
    let mut d = ParticipantData::new(prefix);
    d.metatraffic_unicast_locators = vec![at];
    d.default_unicast_locators = vec![at];
    d.lease_duration = ferrodds_rtps::qos::Duration::INFINITE;
    let payload = d
        .to_vec(Endianness::Little)
        .expect("participant data encodes");
    spdp_message(prefix, 1, &payload)
}

fn socket() -> (UdpSocket, Locator) {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a loopback socket");
    let std::net::SocketAddr::V4(a) = socket.local_addr().expect("its address") else {
        panic!("IPv4 only");
    };
    (socket, Locator::udpv4(*a.ip(), a.port()))
}

/// Sends `count` announcements of distinct made-up participants (infinite leases) to
/// `target` from one socket, pausing briefly every 50 so that the kernel drops few of them.
pub(crate) fn forged_participants(target: SocketAddrV4, tag: u8, count: u32) {
    let (socket, at) = socket();
    for n in 0..count {
        let _ = socket.send_to(&forged_announcement(forged_prefix(tag, n), at), target);
        if n % 50 == 49 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// A small deterministic generator (xorshift64), so that a failing run can be repeated.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Sends `count` mutated announcements to `target`: valid ones of made-up participants with
/// a few bytes flipped, truncated, or with bytes appended, from one socket.
pub(crate) fn malformed_announcements(target: SocketAddrV4, tag: u8, count: u32, seed: u64) {
    let (socket, at) = socket();
    let mut rng = Rng::new(seed);
    for n in 0..count {
        let mut datagram = forged_announcement(forged_prefix(tag, n), at);
        match rng.below(4) {
            0 => {
                let keep = rng.below(datagram.len());
                datagram.truncate(keep);
            }
            1 => {
                for _ in 0..1 + rng.below(3) {
                    datagram.push(rng.next() as u8);
                }
            }
            _ => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(datagram.len());
                    datagram[i] ^= 1 << rng.below(8);
                }
            }
        }
        let _ = socket.send_to(&datagram, target);
        if n % 50 == 49 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
