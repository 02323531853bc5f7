//! Publish/subscribe between two participants over real UDP sockets on loopback.
//!
//! Each test uses its own domain id so tests running in parallel never discover each other,
//! and pins the loopback interface with unicast discovery (no multicast needed).

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use ferrodds::{DataReader, DomainParticipant, InstanceState, Qos, Sample};
use ferrodds_cdr::Cdr;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "test::Position")]
struct Position {
    x: f64,
    y: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Reading")]
struct Reading {
    #[cdr(key)]
    id: i32,
    name: String,
    pos: Position,
    values: Vec<f64>,
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

fn reading(i: i32) -> Reading {
    Reading {
        id: i % 3,
        name: format!("r{i}"),
        pos: Position {
            x: f64::from(i),
            y: -0.5,
        },
        values: vec![0.25; i as usize % 4],
    }
}

const T: Duration = Duration::from_secs(10);

/// Takes until `n` samples came or none comes for `T`.
fn take_up_to(reader: &DataReader<Reading>, n: usize) -> Vec<Sample<Reading>> {
    let mut got = Vec::new();
    while got.len() < n && reader.wait_for_data(T) {
        got.extend(reader.take().unwrap());
    }
    got
}

#[test]
fn reliable_samples_arrive_in_order_with_their_values() {
    let (a, b) = (participant(40), participant(40));
    let wt = a.create_topic::<Reading>("readings").unwrap();
    let rt = b.create_topic::<Reading>("readings").unwrap();
    let writer = a
        .create_writer(&wt, Qos::writer().reliable().keep_all())
        .unwrap();
    let reader = b
        .create_reader(&rt, Qos::reader().reliable().keep_all())
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    for i in 0..50 {
        writer.write(&reading(i)).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let got = take_up_to(&reader, 50);
    let values: Vec<Reading> = got.iter().map(|s| s.data.clone()).collect();
    assert_eq!(values, (0..50).map(reading).collect::<Vec<_>>());
    assert!(got
        .iter()
        .all(|s| s.info.valid_data && s.info.instance_state == InstanceState::Alive));
    assert!(got.iter().all(|s| s.info.source_timestamp.is_some()));
}

#[test]
fn dispose_reaches_the_reader_as_an_instance_state() {
    let (a, b) = (participant(41), participant(41));
    let writer = a
        .create_writer(
            &a.create_topic::<Reading>("d").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Reading>("d").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    writer.write(&reading(1)).unwrap();
    writer.dispose(&reading(1)).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    let mut got = Vec::new();
    while got.len() < 2 && reader.wait_for_data(T) {
        got.extend(reader.take().unwrap());
    }
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(!got[1].info.valid_data && got[1].data.id == 1);
    assert_eq!(got[1].info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(got[0].info.instance_handle, got[1].info.instance_handle);
}

#[test]
fn transient_local_late_joiner_gets_the_history() {
    let (a, b) = (participant(42), participant(42));
    let writer = a
        .create_writer(
            &a.create_topic::<Reading>("tl").unwrap(),
            Qos::writer().reliable().transient_local().keep_last(10),
        )
        .unwrap();
    for i in 0..5 {
        writer.write(&reading(i)).unwrap();
    }
    let reader = b
        .create_reader(
            &b.create_topic::<Reading>("tl").unwrap(),
            Qos::reader().reliable().transient_local().keep_all(),
        )
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 5 && reader.wait_for_data(T) {
        got.extend(reader.take().unwrap());
    }
    assert_eq!(
        got.iter().map(|s| s.data.clone()).collect::<Vec<_>>(),
        (0..5).map(reading).collect::<Vec<_>>()
    );
}

#[test]
fn a_large_sample_is_fragmented_and_reassembled() {
    #[derive(Cdr, Debug, Clone, PartialEq)]
    #[cdr(appendable, type_name = "test::Blob")]
    struct Blob {
        #[cdr(key)]
        id: i32,
        data: Vec<u8>,
    }
    let (a, b) = (participant(43), participant(43));
    let writer = a
        .create_writer(
            &a.create_topic::<Blob>("blob").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Blob>("blob").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    let blob = Blob {
        id: 7,
        data: (0..4 * 1024 * 1024u32)
            .map(|i| (i * 31 % 251) as u8)
            .collect(),
    };
    writer.write(&blob).unwrap();
    assert!(reader.wait_for_data(Duration::from_secs(30)));
    let got = reader.take().unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].data == blob, "4 MiB sample arrives intact");
}

#[test]
fn incompatible_qos_is_reported_to_both_sides() {
    let (a, b) = (participant(44), participant(44));
    let writer = a
        .create_writer(
            &a.create_topic::<Reading>("q").unwrap(),
            Qos::writer().best_effort(),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Reading>("q").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    let ok = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        writer.offered_incompatible_qos().total_count > 0
            && reader.requested_incompatible_qos().total_count > 0
    });
    assert!(
        ok,
        "writer {:?} reader {:?}",
        writer.offered_incompatible_qos(),
        reader.requested_incompatible_qos()
    );
    assert_eq!(
        reader.requested_incompatible_qos().last_policy,
        Some(ferrodds_rtps::qos::QosPolicyId::Reliability)
    );
    assert!(writer.matched_subscriptions().is_empty());
}

#[test]
fn a_writer_and_a_reader_of_one_participant_see_each_other() {
    let p = participant(48);
    let topic = p.create_topic::<Reading>("same").unwrap();
    let reader = p
        .create_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    let writer = p
        .create_writer(&topic, Qos::writer().reliable().keep_all())
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    for i in 0..10 {
        writer.write(&reading(i)).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let mut got = Vec::new();
    while got.len() < 10 && reader.wait_for_data(T) {
        got.extend(reader.take().unwrap().into_iter().map(|s| s.data));
    }
    assert_eq!(got, (0..10).map(reading).collect::<Vec<_>>());
    drop(writer);
    let deadline = std::time::Instant::now() + T;
    while !reader.matched_publications().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        reader.matched_publications().is_empty(),
        "a deleted local writer is unmatched"
    );
}

#[test]
fn data_for_two_readers_is_not_taken_for_participant_announcements() {
    // Two readers of one participant share its locators, so the writer sends each sample once,
    // addressed to ENTITYID_UNKNOWN. Only the readers matched with the writer may take it: the
    // SPDP reader once took every such DATA and counted it as a malformed announcement.
    let (a, b) = (participant(35), participant(35));
    let wt = a.create_topic::<Reading>("shared").unwrap();
    let rt = b.create_topic::<Reading>("shared").unwrap();
    let writer = a
        .create_writer(&wt, Qos::writer().reliable().keep_all())
        .unwrap();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            b.create_reader(&rt, Qos::reader().reliable().keep_all())
                .unwrap()
        })
        .collect();
    writer.wait_for_matched(2, T).unwrap();
    for r in &readers {
        r.wait_for_matched(1, T).unwrap();
    }
    for i in 0..20 {
        writer.write(&reading(i)).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    for r in &readers {
        let got: Vec<Reading> = take_up_to(r, 20).into_iter().map(|s| s.data).collect();
        assert_eq!(got, (0..20).map(reading).collect::<Vec<_>>());
    }
    assert_eq!(
        b.discovery_stats().malformed,
        0,
        "user data was parsed as SPDP: {:?}",
        b.discovery_stats()
    );
    assert_eq!(b.receive_stats().malformed, 0, "{:?}", b.receive_stats());
}

#[test]
fn batching_and_busy_polling_deliver_everything_in_fewer_datagrams() {
    // The writer's samples wait up to a second to share datagrams, so 500 samples written
    // at once travel in a handful; the reader's participant busy-polls its user sockets.
    let a = participant(49);
    let b = DomainParticipant::builder()
        .unwrap()
        .domain_id(49)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .busy_poll(true)
        .build()
        .unwrap();
    let wt = a.create_topic::<Reading>("batched").unwrap();
    let rt = b.create_topic::<Reading>("batched").unwrap();
    let writer = a
        .create_writer(
            &wt,
            Qos::writer()
                .reliable()
                .keep_all()
                .batching(Duration::from_secs(1)),
        )
        .unwrap();
    let reader = b
        .create_reader(&rt, Qos::reader().reliable().keep_all())
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    let before = b.receive_stats().datagrams;
    for i in 0..500 {
        writer.write(&reading(i)).unwrap();
    }
    writer.flush().unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    let values: Vec<Reading> = take_up_to(&reader, 500)
        .into_iter()
        .map(|s| s.data)
        .collect();
    assert_eq!(values, (0..500).map(reading).collect::<Vec<_>>());
    // Data, and the heartbeats that ask for acknowledgments, in far fewer datagrams than
    // samples (SPDP announcements may arrive meanwhile too).
    let datagrams = b.receive_stats().datagrams - before;
    assert!(datagrams < 100, "{datagrams} datagrams for 500 samples");
}
