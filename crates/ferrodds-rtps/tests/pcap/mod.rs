//! A minimal pcap reader for the capture tests: the classic pcap format (not pcapng),
//! either byte order, micro- or nanosecond timestamps; link types Ethernet (1),
//! BSD loopback (0), Linux cooked SLL (113) and SLL2 (276); IPv4 and IPv6; UDP only.
//! Shared by several test crates, each of which uses only part of it.
#![allow(dead_code)]

/// One UDP datagram from a capture.
#[derive(Debug)]
pub(crate) struct Datagram {
    /// 1-based frame number, as Wireshark counts.
    pub(crate) frame: usize,
    pub(crate) dst_port: u16,
    pub(crate) payload: Vec<u8>,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// All UDP datagrams of the capture at `path`, in order. Panics on anything it cannot
/// read: these are test fixtures.
pub(crate) fn udp_datagrams(path: &str) -> Vec<Datagram> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(data.len() >= 24, "{path}: no pcap global header");
    let magic = [data[0], data[1], data[2], data[3]];
    let le = match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => panic!("{path}: not a classic pcap file (magic {magic:02x?})"),
    };
    let u32_at = |at: usize| {
        let b = [data[at], data[at + 1], data[at + 2], data[at + 3]];
        if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let linktype = u32_at(20);
    let mut out = Vec::new();
    let mut pos = 24;
    let mut frame = 0;
    while pos + 16 <= data.len() {
        frame += 1;
        let incl = u32_at(pos + 8) as usize;
        let orig = u32_at(pos + 12) as usize;
        let start = pos + 16;
        let end = start + incl;
        assert!(end <= data.len(), "{path}: frame {frame} truncated");
        assert_eq!(
            incl, orig,
            "{path}: frame {frame} was cut by the snap length"
        );
        if let Some(d) = udp_in_frame(&data[start..end], linktype, frame) {
            out.push(d);
        }
        pos = end;
    }
    assert_eq!(pos, data.len(), "{path}: trailing bytes");
    out
}

fn udp_in_frame(frame_bytes: &[u8], linktype: u32, frame: usize) -> Option<Datagram> {
    let (ethertype, l3) = match linktype {
        // Ethernet: 2 MACs, ethertype (skipping 802.1Q tags).
        1 => {
            let mut off = 12;
            let mut et = be16(frame_bytes, off);
            while et == 0x8100 {
                off += 4;
                et = be16(frame_bytes, off);
            }
            (et, &frame_bytes[off + 2..])
        }
        // BSD loopback: 4-byte address family in host order.
        0 => {
            let af = u32::from_ne_bytes(frame_bytes[..4].try_into().ok()?);
            let et = if af == 2 { 0x0800 } else { 0x86dd };
            (et, &frame_bytes[4..])
        }
        // Linux cooked capture v1: protocol at 14.
        113 => (be16(frame_bytes, 14), &frame_bytes[16..]),
        // Linux cooked capture v2: protocol at 0.
        276 => (be16(frame_bytes, 0), &frame_bytes[20..]),
        other => panic!("unsupported link type {other}"),
    };
    let (proto, l4) = match ethertype {
        0x0800 => {
            let ihl = usize::from(l3[0] & 0x0f) * 4;
            let total = usize::from(be16(l3, 2));
            let frag = be16(l3, 6);
            assert_eq!(
                frag & 0x3fff,
                0,
                "frame {frame}: IP fragments are not reassembled by this reader"
            );
            (l3[9], &l3[ihl..total])
        }
        0x86dd => {
            let len = usize::from(be16(l3, 4));
            (l3[6], &l3[40..40 + len])
        }
        _ => return None,
    };
    if proto != 17 {
        return None;
    }
    let udp_len = usize::from(be16(l4, 4));
    Some(Datagram {
        frame,
        dst_port: be16(l4, 2),
        payload: l4[8..udp_len].to_vec(),
    })
}
