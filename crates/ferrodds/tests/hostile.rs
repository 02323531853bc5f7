//! Bad input from the network is dropped and counted, never a panic: garbage and crafted
//! datagrams sent to a running participant over loopback leave it alive and working.

#![allow(clippy::unwrap_used)]

use std::net::UdpSocket;
use std::time::Duration;

use ferrodds::{DomainParticipant, Qos};
use ferrodds_cdr::Cdr;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Hostile")]
struct Msg {
    #[cdr(key)]
    id: i32,
    text: String,
}

fn participant(domain: u32) -> DomainParticipant {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .build()
        .unwrap()
}

/// An RTPS header from a made-up participant.
fn header() -> Vec<u8> {
    let mut h = b"RTPS\x02\x05\x01\xff".to_vec();
    h.extend_from_slice(&[0xee; 12]);
    h
}

fn crafted() -> Vec<Vec<u8>> {
    let mut out = vec![
        vec![],
        b"RTPS".to_vec(),
        b"RTPX\x02\x05\x01\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec(),
        (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect(),
    ];
    // A submessage whose length runs past the end.
    let mut m = header();
    m.extend_from_slice(&[0x15, 0x01, 0xff, 0xff, 0, 0, 0, 0]);
    out.push(m);
    // DATA_FRAG claiming a 4 GiB sample in fragments of 1 byte.
    let mut m = header();
    m.extend_from_slice(&[0x16, 0x01, 36, 0]);
    m.extend_from_slice(&[0, 0, 28, 0]); // extraFlags, octetsToInlineQos
    m.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 2]); // reader unknown, writer id
    m.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]); // sn 1
    m.extend_from_slice(&[1, 0, 0, 0, 1, 0, 1, 0]); // frag 1, count 1, size 1
    m.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xaa, 0, 0, 0]); // sample size 4 GiB - 1
    out.push(m);
    // HEARTBEAT with first > last + 1.
    let mut m = header();
    m.extend_from_slice(&[0x07, 0x01, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
    m.extend_from_slice(&[0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    out.push(m);
    // Every unknown submessage id.
    for id in [
        0x00u8, 0x02, 0x03, 0x04, 0x05, 0x0a, 0x0b, 0x10, 0x11, 0x14, 0x17, 0x30, 0x80, 0xff,
    ] {
        let mut m = header();
        m.extend_from_slice(&[id, 0x01, 4, 0, 1, 2, 3, 4]);
        out.push(m);
    }
    out
}

#[test]
fn garbage_is_counted_and_the_participant_keeps_working() {
    let a = participant(47);
    let b = participant(47);
    let target = a.metatraffic_address().unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let datagrams = crafted();
    for d in &datagrams {
        socket.send_to(d, target).unwrap();
    }
    // Legitimate traffic still flows.
    let writer = b
        .create_writer(
            &b.create_topic::<Msg>("h").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let reader = a
        .create_reader(
            &a.create_topic::<Msg>("h").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, Duration::from_secs(10)).unwrap();
    writer
        .write(&Msg {
            id: 1,
            text: "still here".into(),
        })
        .unwrap();
    assert!(reader.wait_for_data(Duration::from_secs(10)));
    assert_eq!(
        reader.take().unwrap()[0].data.as_ref().unwrap().text,
        "still here"
    );
    let stats = a.receive_stats();
    assert!(stats.bad_datagrams >= 4, "not RTPS, counted: {stats:?}");
    // The length past the end and the backwards HEARTBEAT are malformed; the 4 GiB
    // DATA_FRAG is well-formed on the wire (one 1-byte fragment) and is dropped by the
    // reader layer (unknown writer, sample larger than allowed) without reserving anything.
    assert!(
        stats.malformed >= 2,
        "malformed submessages, counted: {stats:?}"
    );
    assert!(
        stats.not_understood >= 10,
        "unknown submessage ids, counted: {stats:?}"
    );
}
