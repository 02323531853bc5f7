//! Sockets on loopback: unicast, participant-index probing, multicast, peers, buffers.
//!
//! Each test uses its own domain id (100..130, and 213) so that tests running in parallel never
//! share a port; every wait is bounded (see `common`). Nothing is sent anywhere but
//! 127.0.0.1 and 239.255.0.1 through `lo`.

mod common;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use ferrodds_transport::{
    Deliver, InterfaceSelector, Locator, MulticastStatus, ParticipantIndex, Ports, SocketOptions,
    Transport, TransportConfig, TransportError, UdpSocket, UdpTransport, DEFAULT_MULTICAST_GROUP,
};

use common::{drain, receive_within, RECEIVE_TIMEOUT};

fn options() -> SocketOptions {
    SocketOptions {
        multicast_interface: Some(Ipv4Addr::LOCALHOST),
        receive_timeout: Some(RECEIVE_TIMEOUT),
        ..SocketOptions::default()
    }
}

fn loopback_socket() -> UdpSocket {
    UdpSocket::bind_unicast(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), &options())
        .expect("a socket on 127.0.0.1")
}

/// A configuration pinned to `lo`.
fn on_loopback(domain_id: u32) -> ferrodds_transport::TransportConfigBuilder {
    TransportConfig::builder()
        .domain_id(domain_id)
        .interface(InterfaceSelector::Name(loopback_name()))
}

fn loopback_name() -> String {
    ferrodds_transport::list_interfaces()
        .expect("the interfaces")
        .into_iter()
        .find(|i| i.address == Ipv4Addr::LOCALHOST)
        .expect("an interface holds 127.0.0.1")
        .name
}

fn open(config: TransportConfig) -> UdpTransport {
    let transport = UdpTransport::open(&config).expect("the transport opens");
    for socket in [transport.metatraffic_unicast(), transport.user_unicast()]
        .into_iter()
        .chain(transport.spdp_multicast())
        .chain(transport.user_multicast())
    {
        socket
            .set_receive_timeout(Some(RECEIVE_TIMEOUT))
            .expect("SO_RCVTIMEO");
    }
    transport
}

/// Holds a port on every address, as another participant would.
fn hold(port: u16) -> std::net::UdpSocket {
    std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, port))
        .unwrap_or_else(|e| panic!("the test cannot hold port {port}: {e}"))
}

#[test]
fn unicast_send_and_receive() {
    let a = loopback_socket();
    let b = loopback_socket();
    assert_eq!(*a.local_address().ip(), Ipv4Addr::LOCALHOST);
    assert_ne!(a.local_address().port(), 0);
    let mut buffer = [0u8; 1500];
    for i in 0..5u8 {
        let datagram = [b'R', b'T', b'P', b'S', i];
        assert_eq!(a.send_to(&datagram, b.local_address()).unwrap(), 5);
        let received = receive_within(&b, &mut buffer).expect("datagram on loopback");
        assert_eq!(&buffer[..received.len], &datagram);
        assert_eq!(received.source, a.local_address());
        assert!(!received.truncated);
    }
    // A datagram sent in parts (a vectored send) arrives as one.
    let parts: [&[u8]; 3] = [b"RTPS", b"-spliced-", b"tail"];
    assert_eq!(a.send_parts_to(&parts, b.local_address()).unwrap(), 17);
    let received = receive_within(&b, &mut buffer).expect("datagram on loopback");
    assert_eq!(&buffer[..received.len], b"RTPS-spliced-tail");
    // And back.
    b.send_to(b"pong", a.local_address()).unwrap();
    let received = receive_within(&a, &mut buffer).unwrap();
    assert_eq!(&buffer[..received.len], b"pong");
    assert_eq!(received.source, b.local_address());
}

#[test]
fn try_receive_does_not_block() {
    let a = loopback_socket();
    let b = loopback_socket();
    let mut buffer = [0u8; 64];
    let start = Instant::now();
    assert_eq!(b.try_receive(&mut buffer).unwrap(), None);
    assert!(start.elapsed() < Duration::from_millis(20));
    a.send_to(b"busy-poll", b.local_address()).unwrap();
    // Loopback delivers within the send call, but allow the scheduler a few tries.
    let mut got = None;
    for _ in 0..1000 {
        got = b.try_receive(&mut buffer).unwrap();
        if got.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let got = got.expect("busy-poll receives within 1000 tries");
    assert_eq!(&buffer[..got.len], b"busy-poll");
}

#[test]
fn receive_times_out() {
    let a = loopback_socket();
    a.set_receive_timeout(Some(Duration::from_millis(30)))
        .unwrap();
    let start = Instant::now();
    assert_eq!(a.receive(&mut [0u8; 16]).unwrap(), None);
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(25), "{waited:?}");
    assert!(waited < Duration::from_secs(1), "{waited:?}");
}

#[test]
fn truncation_is_reported() {
    let a = loopback_socket();
    let b = loopback_socket();
    a.send_to(&[7u8; 100], b.local_address()).unwrap();
    let mut small = [0u8; 10];
    let received = receive_within(&b, &mut small).unwrap();
    assert_eq!(received.len, 10);
    assert!(received.truncated);
    assert_eq!(small, [7u8; 10]);
}

#[test]
fn send_to_locators_counts() {
    let a = loopback_socket();
    let b = loopback_socket();
    let c = loopback_socket();
    let mut not_udp = Locator::from(b.local_address());
    not_udp.kind = Locator::KIND_UDPV6;
    let locators = [
        Locator::from(b.local_address()),
        not_udp,
        Locator::from(c.local_address()),
    ];
    let summary = a.send_to_locators(b"to all", &locators);
    assert_eq!((summary.sent, summary.skipped, summary.failed), (2, 1, 0));
    assert!(summary.first_error.is_none());
    let mut buffer = [0u8; 64];
    for socket in [&b, &c] {
        let r = receive_within(socket, &mut buffer).unwrap();
        assert_eq!(&buffer[..r.len], b"to all");
    }
}

#[test]
fn buffer_sizes_are_reported() {
    let socket = loopback_socket();
    let sizes = socket.buffer_sizes();
    eprintln!(
        "asked {} B receive, {} B send; kernel reports {} B receive, {} B send",
        sizes.receive.requested, sizes.send.requested, sizes.receive.granted, sizes.send.granted
    );
    assert_eq!(sizes.receive.requested, 4 << 20);
    assert_eq!(sizes.send.requested, 1 << 20);
    assert!(sizes.receive.granted > 0 && sizes.send.granted > 0);
    if cfg!(target_os = "linux") {
        // socket(7): the kernel caps at rmem_max / wmem_max and reports twice that.
        let sysctl = |name: &str| -> Option<usize> {
            std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        if let (Some(rmem_max), Some(wmem_max)) = (sysctl("rmem_max"), sysctl("wmem_max")) {
            eprintln!("net.core.rmem_max = {rmem_max}, net.core.wmem_max = {wmem_max}");
            assert_eq!(sizes.receive.granted, 2 * rmem_max.min(4 << 20));
            assert_eq!(sizes.send.granted, 2 * wmem_max.min(1 << 20));
            assert_eq!(sizes.receive.is_capped(), rmem_max < 4 << 20);
            // Far above any sane rmem_max: capped, and reported so.
            let huge = UdpSocket::bind_unicast(
                SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
                &SocketOptions {
                    receive_buffer_size: 1 << 30,
                    ..options()
                },
            )
            .unwrap();
            let huge = huge.buffer_sizes().receive;
            assert_eq!(huge.granted, 2 * rmem_max.min(1 << 30));
            assert_eq!(huge.is_capped(), rmem_max < 1 << 30);
        }
    }
    // 0 leaves the kernel's default alone.
    let untouched = UdpSocket::bind_unicast(
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        &SocketOptions {
            receive_buffer_size: 0,
            send_buffer_size: 0,
            ..options()
        },
    )
    .unwrap();
    assert_eq!(untouched.buffer_sizes().receive.requested, 0);
    assert!(!untouched.buffer_sizes().receive.is_capped());
}

#[test]
fn probing_takes_the_next_index_when_the_first_is_held() {
    let domain = 101;
    let _held = hold(Ports::new(domain, 0).unwrap().metatraffic_unicast);
    let transport = open(on_loopback(domain).allow_multicast(false).build().unwrap());
    assert_eq!(transport.participant_id(), 1);
    assert_eq!(transport.ports(), Ports::new(domain, 1).unwrap());
    assert_eq!(
        transport.metatraffic_unicast().local_address(),
        SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 7400 + 250 * domain as u16 + 10 + 2)
    );
    assert_eq!(
        transport.metatraffic_unicast_locator(),
        Locator::udpv4(Ipv4Addr::LOCALHOST, 7400 + 250 * domain as u16 + 12)
    );
    assert_eq!(
        transport.default_unicast_locator(),
        Locator::udpv4(Ipv4Addr::LOCALHOST, 7400 + 250 * domain as u16 + 13)
    );
}

#[test]
fn probing_needs_both_ports_free() {
    let domain = 102;
    // Index 0 has only its user port taken, index 1 only its metatraffic port.
    let _user_0 = hold(Ports::new(domain, 0).unwrap().user_unicast);
    let _meta_1 = hold(Ports::new(domain, 1).unwrap().metatraffic_unicast);
    let transport = open(on_loopback(domain).allow_multicast(false).build().unwrap());
    assert_eq!(transport.participant_id(), 2);
}

#[test]
fn participants_on_one_host_get_successive_indices() {
    let domain = 105;
    let config = on_loopback(domain).allow_multicast(false).build().unwrap();
    let first = open(config.clone());
    let second = open(config.clone());
    let third = open(config);
    assert_eq!(
        [
            first.participant_id(),
            second.participant_id(),
            third.participant_id()
        ],
        [0, 1, 2]
    );
    // Unicast between two of them.
    first
        .metatraffic_unicast()
        .send_to(
            b"hello 2",
            third.metatraffic_unicast_locator().to_udpv4().unwrap(),
        )
        .unwrap();
    let mut buffer = [0u8; 64];
    let r = receive_within(third.metatraffic_unicast(), &mut buffer).unwrap();
    assert_eq!(&buffer[..r.len], b"hello 2");
    assert_eq!(r.source.port(), first.ports().metatraffic_unicast);
}

#[test]
fn fixed_index_that_is_taken_is_an_error() {
    let domain = 103;
    let _held = hold(Ports::new(domain, 4).unwrap().user_unicast);
    let config = on_loopback(domain)
        .allow_multicast(false)
        .participant_index(ParticipantIndex::Fixed(4))
        .build()
        .unwrap();
    let err = UdpTransport::open(&config).unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::ParticipantIndexInUse {
                domain_id: 103,
                participant_index: 4,
                ..
            }
        ),
        "{err}"
    );
    let port = Ports::new(domain, 4).unwrap().metatraffic_unicast;
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "participant index 4 in domain 103 is taken: cannot bind a UDP socket to 0.0.0.0:{}: ",
            port + 1
        )),
        "{message}"
    );
    // A free fixed index is taken as asked.
    let config = config
        .to_builder()
        .participant_index(ParticipantIndex::Fixed(5))
        .build()
        .unwrap();
    assert_eq!(open(config).participant_id(), 5);
}

#[test]
fn no_free_index_within_the_maximum() {
    let domain = 104;
    let _held_0 = hold(Ports::new(domain, 0).unwrap().metatraffic_unicast);
    let _held_1 = hold(Ports::new(domain, 1).unwrap().user_unicast);
    let config = on_loopback(domain)
        .allow_multicast(false)
        .max_participant_index(1)
        .build()
        .unwrap();
    let err = UdpTransport::open(&config).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no free participant index in domain 104: the unicast ports of indices 0 to 1 are all \
         taken (raise max_participant_index)"
    );
}

#[test]
fn two_multicast_receivers_share_a_port() {
    require_loopback_multicast!();
    let domain = 110;
    let port = Ports::new(domain, 0).unwrap().spdp_multicast;
    let group = DEFAULT_MULTICAST_GROUP;
    let first = UdpSocket::bind_multicast(group, port, Ipv4Addr::LOCALHOST, &options()).unwrap();
    let second = UdpSocket::bind_multicast(group, port, Ipv4Addr::LOCALHOST, &options()).unwrap();
    assert_eq!(first.multicast_group(), Some(group));
    assert_eq!(first.local_address(), SocketAddrV4::new(group, port));
    let sender = loopback_socket();
    sender
        .send_to(b"SPDP on lo", SocketAddrV4::new(group, port))
        .unwrap();
    let mut buffer = [0u8; 64];
    for receiver in [&first, &second] {
        let r = receive_within(receiver, &mut buffer).expect("both receivers get it");
        assert_eq!(&buffer[..r.len], b"SPDP on lo");
        assert_eq!(r.source, sender.local_address());
    }
    // Exactly once each: no second copy from IP_MULTICAST_LOOP on top of lo's own delivery.
    std::thread::sleep(Duration::from_millis(50));
    assert!(drain(&first).is_empty());
    assert!(drain(&second).is_empty());
    // Unicast to the port does not reach sockets bound to the group.
    sender
        .send_to(b"unicast", SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(drain(&first).is_empty());
}

#[test]
fn transports_find_each_other_by_multicast() {
    require_loopback_multicast!();
    let domain = 111;
    let config = on_loopback(domain).build().unwrap();
    let a = open(config.clone());
    let b = open(config);
    assert_eq!(a.multicast(), MulticastStatus::Enabled);
    let group = DEFAULT_MULTICAST_GROUP;
    let spdp_port = 7400 + 250 * domain as u16;
    assert_eq!(a.spdp_destinations(), [Locator::udpv4(group, spdp_port)]);
    assert_eq!(
        a.metatraffic_multicast_locator(),
        Some(Locator::udpv4(group, spdp_port))
    );
    assert_eq!(
        a.default_multicast_locator(),
        Some(Locator::udpv4(group, spdp_port + 1))
    );
    let summary = a
        .metatraffic_unicast()
        .send_to_locators(b"announce a", a.spdp_destinations());
    assert_eq!(summary.sent, 1);
    let mut buffer = [0u8; 64];
    for t in [&a, &b] {
        let socket = t.spdp_multicast().unwrap();
        let r = receive_within(socket, &mut buffer).unwrap();
        assert_eq!(&buffer[..r.len], b"announce a");
        assert_eq!(r.source.port(), a.ports().metatraffic_unicast);
    }
    // User multicast goes to the user multicast sockets only.
    let user_group = a.default_multicast_locator().unwrap();
    let _ = a
        .user_unicast()
        .send_to_locators(b"user data", &[user_group]);
    let r = receive_within(b.user_multicast().unwrap(), &mut buffer).unwrap();
    assert_eq!(&buffer[..r.len], b"user data");
    std::thread::sleep(Duration::from_millis(50));
    assert!(drain(b.spdp_multicast().unwrap()).is_empty());
}

#[test]
fn without_multicast_spdp_goes_to_the_peers() {
    let domain = 112;
    let config = on_loopback(domain)
        .allow_multicast(false)
        .peers([
            "127.0.0.1".parse().unwrap(),
            "localhost:9999".parse().unwrap(),
        ])
        .participants_per_peer(3)
        .build()
        .unwrap();
    let a = open(config.clone());
    let b = open(config);
    assert_eq!(a.multicast(), MulticastStatus::DisabledByConfig);
    assert!(a.spdp_multicast().is_none() && a.user_multicast().is_none());
    assert_eq!(a.metatraffic_multicast_locator(), None);
    let base = 7400 + 250 * domain as u16 + 10;
    assert_eq!(
        a.spdp_destinations(),
        [
            Locator::udpv4(Ipv4Addr::LOCALHOST, base),
            Locator::udpv4(Ipv4Addr::LOCALHOST, base + 2),
            Locator::udpv4(Ipv4Addr::LOCALHOST, base + 4),
            Locator::udpv4(Ipv4Addr::LOCALHOST, 9999),
        ]
    );
    let _ = a
        .metatraffic_unicast()
        .send_to_locators(b"announce a", a.spdp_destinations());
    let mut buffer = [0u8; 64];
    let r = receive_within(b.metatraffic_unicast(), &mut buffer).unwrap();
    assert_eq!(&buffer[..r.len], b"announce a");
}

#[test]
fn without_multicast_or_peers_this_host_is_the_peer() {
    let domain = 113;
    let config = on_loopback(domain)
        .allow_multicast(false)
        .participants_per_peer(2)
        .build()
        .unwrap();
    let a = open(config);
    let base = 7400 + 250 * domain as u16 + 10;
    assert_eq!(
        a.spdp_destinations(),
        [
            Locator::udpv4(Ipv4Addr::LOCALHOST, base),
            Locator::udpv4(Ipv4Addr::LOCALHOST, base + 2),
        ]
    );
}

#[test]
fn transport_reports_its_buffers() {
    let domain = 114;
    let config = on_loopback(domain)
        .allow_multicast(false)
        .receive_buffer_size(256 << 10)
        .send_buffer_size(128 << 10)
        .build()
        .unwrap();
    let t = open(config);
    let sizes = t.metatraffic_unicast().buffer_sizes();
    assert_eq!(sizes.receive.requested, 256 << 10);
    assert_eq!(sizes.send.requested, 128 << 10);
    assert!(!sizes.receive.is_capped(), "{sizes:?}");
    assert!(!sizes.send.is_capped(), "{sizes:?}");
}

#[test]
fn unknown_interface_is_an_error() {
    let config = TransportConfig::builder()
        .domain_id(115)
        .interface(InterfaceSelector::Name("no-such-if0".into()))
        .build()
        .unwrap();
    let err = UdpTransport::open(&config).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "no network interface named `no-such-if0` with an IPv4 address; interfaces: "
        ),
        "{err}"
    );
}

/// The threads of this process named `name` (`/proc/self/task/*/comm`), once there are
/// `expected` of them or 2 s have passed (a new thread names itself as it starts).
fn threads_named(name: &str, expected: usize) -> usize {
    let count = || {
        std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim_end() == name)
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let n = count();
        if n == expected || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_participants_of_a_process_share_one_multicast_socket_and_thread() {
    require_loopback_multicast!();
    let domain = 213;
    let config = on_loopback(domain).build().unwrap();
    let a = UdpTransport::open_sharing_multicast(&config).expect("a opens");
    let b = UdpTransport::open_sharing_multicast(&config).expect("b opens");
    assert_eq!(a.multicast(), MulticastStatus::Enabled);
    // One socket of each group for the process; the transports' own ways in are their
    // unicast sockets.
    assert!(std::ptr::eq(
        a.spdp_multicast().unwrap(),
        b.spdp_multicast().unwrap()
    ));
    assert!(std::ptr::eq(
        a.user_multicast().unwrap(),
        b.user_multicast().unwrap()
    ));
    assert_eq!(a.receive_channels().unwrap().len(), 2);
    let (tx, rx) = mpsc::channel();
    let deliver = |member: u8| -> Deliver {
        let tx = Mutex::new(tx.clone());
        Arc::new(move |bytes: &[u8], _| {
            let _ = tx.lock().unwrap().send((member, bytes.to_vec()));
        })
    };
    let spdp_thread = format!("ferrodds-m{}", a.ports().spdp_multicast);
    let user_thread = format!("ferrodds-m{}", a.ports().user_multicast);
    assert_eq!(
        threads_named(&spdp_thread, 0),
        0,
        "no thread before a member"
    );
    let joined_a = a.join_shared(&deliver(1)).expect("a joins");
    let joined_b = b.join_shared(&deliver(2)).expect("b joins");
    assert_eq!((joined_a.len(), joined_b.len()), (2, 2));
    assert_eq!(threads_named(&spdp_thread, 1), 1, "one thread for both");
    assert_eq!(threads_named(&user_thread, 1), 1, "one thread for both");

    // Each member gets every datagram, once: SPDP and user multicast alike.
    let receive = |n: usize| -> Vec<(u8, Vec<u8>)> {
        let mut got: Vec<_> = (0..n)
            .filter_map(|_| rx.recv_timeout(Duration::from_secs(5)).ok())
            .collect();
        got.sort();
        got
    };
    let sent = a
        .metatraffic_unicast()
        .send_to_locators(b"announce", a.spdp_destinations());
    assert_eq!(sent.sent, 1);
    assert_eq!(
        receive(2),
        [(1, b"announce".to_vec()), (2, b"announce".to_vec())]
    );
    let user_group = [a.default_multicast_locator().unwrap()];
    let _ = b.user_unicast().send_to_locators(b"data", &user_group);
    assert_eq!(receive(2), [(1, b"data".to_vec()), (2, b"data".to_vec())]);
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());

    // A member that left gets nothing more; the other still does.
    drop(joined_a);
    let _ = a
        .metatraffic_unicast()
        .send_to_locators(b"again", a.spdp_destinations());
    assert_eq!(receive(1), [(2, b"again".to_vec())]);
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());

    // With every handle gone, the socket and its thread go.
    drop(joined_b);
    drop(a);
    assert_eq!(threads_named(&spdp_thread, 1), 1, "b still holds the group");
    drop(b);
    assert_eq!(threads_named(&spdp_thread, 0), 0);
    assert_eq!(threads_named(&user_thread, 0), 0);
}
