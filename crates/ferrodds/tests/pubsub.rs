//! Publish/subscribe between two participants over real UDP sockets on loopback.
//!
//! Each test uses its own domain id so tests running in parallel never discover each other,
//! and pins the loopback interface with unicast discovery (no multicast needed).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ferrodds::dynamic::assignable::Mismatch;
use ferrodds::dynamic::{DynamicType, DynamicValue};
use ferrodds::qos::QosPolicyId;
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
    on_loopback(domain).build().unwrap()
}

/// A participant of `domain` on loopback with unicast discovery, to be built.
fn on_loopback(domain: u32) -> ferrodds::ParticipantBuilder {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
}

/// A participant whose peers of this process are reached over shared memory (the
/// in-process queues off).
fn shm_participant(domain: u32) -> DomainParticipant {
    on_loopback(domain)
        .in_process(false)
        .shared_memory(true)
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
    let values: Vec<Reading> = got.iter().filter_map(|s| s.data.clone()).collect();
    assert_eq!(values, (0..50).map(reading).collect::<Vec<_>>());
    assert!(got
        .iter()
        .all(|s| s.info.valid_data && s.info.instance_state == InstanceState::Alive));
    assert!(got.iter().all(|s| s.info.source_timestamp.is_some()));
}

#[test]
fn take_into_decodes_into_the_slots_it_is_given_and_reuses_their_memory() {
    let (a, b) = (participant(217), participant(217));
    let writer = a
        .create_writer(
            &a.create_topic::<Reading>("into").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Reading>("into").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    let sample = |i: i32| Reading {
        values: vec![f64::from(i); 8],
        ..reading(i)
    };
    // Takes at most 2 at a time until `n` came, into `slots`: what came, in order.
    let take = |slots: &mut Vec<Sample<Reading>>, n: usize| {
        let (mut got, deadline) = (Vec::new(), Instant::now() + T);
        while got.len() < n && Instant::now() < deadline {
            reader.wait_for_data(Duration::from_millis(200));
            let k = reader.take_into(slots, 2);
            assert!(k <= 2 && slots.len() >= k);
            got.extend(slots[..k].iter().cloned());
        }
        got
    };
    let mut slots = Vec::new();
    for i in 0..5 {
        writer.write(&sample(i)).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let got = take(&mut slots, 5);
    let values: Vec<Reading> = got.iter().filter_map(|s| s.data.clone()).collect();
    assert_eq!(values, (0..5).map(sample).collect::<Vec<_>>());
    assert_eq!(
        slots.len(),
        2,
        "grown to the most taken at once, never beyond"
    );

    // The next samples are read into the same buffers.
    let held: Vec<*const f64> = slots
        .iter()
        .map(|s| s.data.as_ref().unwrap().values.as_ptr())
        .collect();
    writer.write(&sample(5)).unwrap();
    writer.write(&sample(6)).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    let got = take(&mut slots, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(
        got.iter()
            .map(|s| s.data.clone().unwrap())
            .collect::<Vec<_>>(),
        vec![sample(5), sample(6)]
    );
    let again: Vec<*const f64> = slots
        .iter()
        .map(|s| s.data.as_ref().unwrap().values.as_ptr())
        .collect();
    assert_eq!(
        again, held,
        "each slot's sequence was refilled, not allocated anew"
    );

    // A sample without data holds the key, in the slot's value; the slots past it are left.
    writer.dispose(&sample(7)).unwrap();
    let got = take(&mut slots, 1);
    assert_eq!(got.len(), 1);
    assert!(got[0].data.is_none() && got[0].key.as_ref().unwrap().id == 7 % 3);
    assert_eq!(got[0].info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(
        slots[1].data.as_ref(),
        Some(&sample(6)),
        "past n: untouched"
    );
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
    assert!(got[1].data.is_none() && got[1].key.as_ref().unwrap().id == 1);
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
        got.iter()
            .filter_map(|s| s.data.clone())
            .collect::<Vec<_>>(),
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
    assert!(
        got[0].data.as_ref() == Some(&blob),
        "4 MiB sample arrives intact"
    );
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
        got.extend(reader.take().unwrap().into_iter().filter_map(|s| s.data));
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
        let got: Vec<Reading> = take_up_to(r, 20)
            .into_iter()
            .filter_map(|s| s.data)
            .collect();
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
        .filter_map(|s| s.data)
        .collect();
    assert_eq!(values, (0..500).map(reading).collect::<Vec<_>>());
    // Data, and the heartbeats that ask for acknowledgments, in far fewer datagrams than
    // samples (SPDP announcements may arrive meanwhile too).
    let datagrams = b.receive_stats().datagrams - before;
    assert!(datagrams < 100, "{datagrams} datagrams for 500 samples");
}

// Types between participants: versions of a type match when XTypes says they are
// assignable, whatever their names, and exchange the members they share; types that are not
// assignable are reported incompatible (TYPE_CONSISTENCY_ENFORCEMENT and what differs);
// untyped writers and readers exchange samples with typed ones; a topic's type is found over
// TypeLookup. Domains 37 and 45 (topics apart within each).

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "v1::Shape")]
struct ShapeV1 {
    #[cdr(key)]
    color: String,
    x: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "v2::Shape")]
struct ShapeV2 {
    #[cdr(key)]
    color: String,
    x: i32,
    y: i32,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "bad::Shape")]
struct ShapeBad {
    #[cdr(key)]
    color: String,
    x: f64,
}

const WAIT: Duration = Duration::from_secs(10);

/// The first valid sample `take` gives within `WAIT`.
fn first_valid<T>(mut take: impl FnMut() -> Vec<ferrodds::Sample<T>>) -> T {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Some(data) = take().into_iter().find_map(|s| s.data) {
            return data;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no sample within {WAIT:?}");
}

#[test]
fn older_and_newer_versions_of_a_type_exchange_the_members_they_share() {
    let (a, b) = (participant(37), participant(37));
    // A newer writer, an older reader: the reader takes what it knows.
    let w = a
        .create_writer(
            &a.create_topic::<ShapeV2>("versions_new_to_old").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let r = b
        .create_reader(
            &b.create_topic::<ShapeV1>("versions_new_to_old").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    w.wait_for_matched(1, WAIT).unwrap();
    r.wait_for_matched(1, WAIT).unwrap();
    w.write(&ShapeV2 {
        color: "BLUE".into(),
        x: 5,
        y: 7,
    })
    .unwrap();
    let got = first_valid(|| r.take().unwrap());
    assert_eq!(
        got,
        ShapeV1 {
            color: "BLUE".into(),
            x: 5
        }
    );
    // An older writer, a newer reader: the member it lacks takes its default.
    let w = a
        .create_writer(
            &a.create_topic::<ShapeV1>("versions_old_to_new").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let r = b
        .create_reader(
            &b.create_topic::<ShapeV2>("versions_old_to_new").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    w.wait_for_matched(1, WAIT).unwrap();
    w.write(&ShapeV1 {
        color: "RED".into(),
        x: 3,
    })
    .unwrap();
    let got = first_valid(|| r.take().unwrap());
    assert_eq!(
        got,
        ShapeV2 {
            color: "RED".into(),
            x: 3,
            y: 0
        }
    );
}

#[test]
fn a_reader_of_a_type_that_is_not_assignable_reports_it_and_matches_nothing() {
    let (a, b) = (participant(45), participant(45));
    let w = a
        .create_writer(
            &a.create_topic::<ShapeV1>("not_assignable").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let r = b
        .create_reader(
            &b.create_topic::<ShapeBad>("not_assignable").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    let deadline = Instant::now() + WAIT;
    while (r.requested_incompatible_qos().total_count == 0
        || w.offered_incompatible_qos().total_count == 0)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    for status in [r.requested_incompatible_qos(), w.offered_incompatible_qos()] {
        assert_eq!(status.total_count, 1, "{status:?}");
        assert_eq!(
            status.last_policy,
            Some(QosPolicyId::TypeConsistencyEnforcement)
        );
        let reason = status.last_type_mismatch.unwrap();
        assert_eq!(reason.mismatch, Mismatch::DifferentKinds);
        assert_eq!(reason.path, ["bad::Shape", "x"]);
    }
    assert!(r.matched_publications().is_empty());
    assert!(w.matched_subscriptions().is_empty());
}

#[test]
fn untyped_and_typed_endpoints_exchange_samples_and_find_each_others_types() {
    let (a, b) = (participant(45), participant(45));
    // A typed writer; the other participant finds the topic's type over TypeLookup.
    let w = a
        .create_writer(
            &a.create_topic::<ShapeV2>("untyped").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let topic = b.find_topic("untyped", WAIT).unwrap();
    assert_eq!(topic.type_name(), "v2::Shape");
    assert_eq!(topic.dynamic_type(), &ShapeV2::dynamic_type());
    let r = b
        .create_dynamic_reader(&topic, Qos::reader().reliable())
        .unwrap();
    w.wait_for_matched(1, WAIT).unwrap();
    w.write(&ShapeV2 {
        color: "GREEN".into(),
        x: 1,
        y: 2,
    })
    .unwrap();
    let value = first_valid(|| r.take().unwrap());
    assert_eq!(
        value.to_json(topic.dynamic_type()),
        serde_json::json!({"color": "GREEN", "x": 1, "y": 2})
    );
    // An untyped writer of a type built at run time; a typed reader of an older version.
    let ty: &DynamicType = topic.dynamic_type();
    let topic_a = a
        .create_dynamic_topic("untyped_back", "v2::Shape", ty.clone())
        .unwrap();
    let dw = a.create_dynamic_writer(&topic_a, Qos::writer()).unwrap();
    let tr = b
        .create_reader(
            &b.create_topic::<ShapeV1>("untyped_back").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    dw.wait_for_matched(1, WAIT).unwrap();
    let sample =
        DynamicValue::from_json(ty, &serde_json::json!({"color": "CYAN", "x": 9, "y": 4})).unwrap();
    dw.write(&sample).unwrap();
    let got = first_valid(|| tr.take().unwrap());
    assert_eq!(
        got,
        ShapeV1 {
            color: "CYAN".into(),
            x: 9
        }
    );
}

#[test]
fn participants_exchange_user_data_in_process_then_over_shared_memory_then_over_udp() {
    // The transport each setting leaves for user data between two participants of one
    // process (and so of one host).
    for (in_process, shared_memory, expected) in [
        (true, true, "in-process"),
        (false, true, "shared-memory"),
        (false, false, "udpv4"),
    ] {
        let make = || {
            DomainParticipant::builder()
                .unwrap()
                .domain_id(35)
                .interface("lo")
                .unwrap()
                .allow_multicast(false)
                .in_process(in_process)
                .shared_memory(shared_memory)
                .build()
                .unwrap()
        };
        let (a, b) = (make(), make());
        let topic = format!("transport-{expected}");
        let writer = a
            .create_writer(
                &a.create_topic::<Reading>(&topic).unwrap(),
                Qos::writer().reliable().keep_all(),
            )
            .unwrap();
        let reader = b
            .create_reader(
                &b.create_topic::<Reading>(&topic).unwrap(),
                Qos::reader().reliable().keep_all(),
            )
            .unwrap();
        writer.wait_for_matched(1, T).unwrap();
        reader.wait_for_matched(1, T).unwrap();
        let udp_before = sent(&a, "udpv4").unwrap();
        for i in 0..100 {
            writer.write(&reading(i)).unwrap();
        }
        writer.wait_for_acknowledgments(T).unwrap();
        let got: Vec<Reading> = take_up_to(&reader, 100)
            .into_iter()
            .filter_map(|s| s.data)
            .collect();
        assert_eq!(got, (0..100).map(reading).collect::<Vec<_>>(), "{expected}");
        let counts = a.datagrams_by_transport();
        // Not one datagram a sample: under load a full inbox refuses some, and the repairs
        // that follow pack several samples into a datagram (38 for 100 samples, seen in CI).
        assert!(sent(&a, expected).unwrap() > 0, "{expected}: {counts:?}");
        assert!(sent(&b, expected).unwrap() > 0, "the acknowledgments");
        for other in ["in-process", "shared-memory"] {
            if other != expected {
                assert!(sent(&a, other).unwrap_or(0) == 0, "{expected}: {counts:?}");
            }
        }
        if expected != "udpv4" {
            // Discovery only (SPDP and SEDP repeats fall in the window).
            assert!(
                sent(&a, "udpv4").unwrap() - udp_before < 50,
                "{expected}: {counts:?}"
            );
        }
        assert_eq!(sent(&a, "in-process").is_some(), in_process);
        assert_eq!(sent(&a, "shared-memory").is_some(), shared_memory);
    }

    fn sent(p: &DomainParticipant, name: &str) -> Option<u64> {
        p.datagrams_by_transport()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c)
    }
}

#[test]
fn over_shared_memory_a_reader_that_falls_behind_gets_everything_once_in_order_or_the_newest() {
    #[derive(Cdr, Debug, Clone, PartialEq)]
    #[cdr(appendable, type_name = "test::Frame")]
    struct Frame {
        #[cdr(key)]
        camera: i32,
        seq: u32,
        pixels: Vec<ferrodds_cdr::Octet>,
    }
    let frame = |seq: u32| Frame {
        camera: 1,
        seq,
        // Bytes that differ along the frame: a piece copied to the wrong place shows.
        pixels: (0..256 * 1024u32)
            .map(|i| ferrodds_cdr::Octet((i.wrapping_mul(31) ^ (i >> 8) ^ seq) as u8))
            .collect(),
    };
    let (a, b) = (shm_participant(36), shm_participant(36));
    const N: u32 = 40;
    const PACE: Duration = Duration::from_millis(20);
    for (history, name) in [
        (None, "keep-all"),
        (None, "keep-all-per-instance"),
        (Some(4), "keep-last"),
    ] {
        let topic = format!("frames-{name}");
        // KEEP_ALL with room for 4 samples on both sides (in all, or for the one instance
        // while the cache has room for more): a reader that takes one sample every PACE
        // holds the writer back. KEEP_LAST 4: the writer never waits.
        let with = |q: Qos| match history {
            None if name == "keep-all" => {
                q.reliable().keep_all().max_samples(4).max_blocking_time(T)
            }
            None => {
                let mut q = q.reliable().keep_all().max_blocking_time(T);
                q.policies_mut().resource_limits.max_samples_per_instance = 4;
                q
            }
            Some(depth) => q.reliable().keep_last(depth),
        };
        let writer = a
            .create_writer(
                &a.create_topic::<Frame>(&topic).unwrap(),
                with(Qos::writer()),
            )
            .unwrap();
        let reader = b
            .create_reader(
                &b.create_topic::<Frame>(&topic).unwrap(),
                with(Qos::reader()),
            )
            .unwrap();
        writer.wait_for_matched(1, T).unwrap();
        reader.wait_for_matched(1, T).unwrap();
        let slow_reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline && got.last() != Some(&(N - 1)) {
                if reader.wait_for_data(Duration::from_millis(500)) {
                    for s in reader.take_max(1).unwrap() {
                        let data = s.data.as_ref().unwrap();
                        assert!(*data == frame(data.seq), "frame {} intact", data.seq);
                        got.push(data.seq);
                    }
                    std::thread::sleep(PACE);
                }
            }
            got
        });
        // 40 frames of 256 KiB, as fast as the writer takes them.
        let start = Instant::now();
        for seq in 0..N {
            writer.write(&frame(seq)).unwrap();
        }
        let writing = start.elapsed();
        let got = slow_reader.join().unwrap();
        match history {
            None => {
                // Everything, once, in order; and the writer went at the reader's pace.
                assert_eq!(got, (0..N).collect::<Vec<_>>(), "{name}");
                // The writer's history, bounded by bytes here, need not wait for the reader
                // bounded per instance.
                if name == "keep-all" {
                    assert!(writing >= PACE * (N - 10), "{name}: wrote in {writing:?}");
                }
            }
            Some(_) => {
                // In order, never twice, ending with the newest; older ones may be dropped.
                assert!(got.windows(2).all(|w| w[0] < w[1]), "{name}: {got:?}");
                assert_eq!(got.last(), Some(&(N - 1)), "{name}: {got:?}");
            }
        }
        let counts = a.datagrams_by_transport();
        let shm = counts
            .iter()
            .find(|(n, _)| *n == "shared-memory")
            .unwrap()
            .1;
        // At least a datagram per frame (one 512 KiB datagram carries a whole frame).
        assert!(shm >= u64::from(N), "{name}: {counts:?}");
    }
}

#[test]
fn loaned_samples_go_out_of_the_buffer_they_were_filled_in_and_come_back_as_they_lie() {
    /// A plain type: its bytes are its encoding.
    #[derive(Cdr, Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    #[cdr(final, type_name = "test::Pose")]
    #[repr(C)]
    struct Pose {
        #[cdr(key)]
        id: u32,
        xyz: [f32; 3],
        cloud: [[f32; 4]; 4096],
    }
    /// Not plain (a sequence): lent as serialized bytes.
    #[derive(Cdr, Debug, Clone, PartialEq)]
    #[cdr(final, type_name = "test::Blob")]
    struct Blob {
        seq: u32,
        #[cdr(key)]
        owner: u32,
        bytes: Vec<u8>,
    }
    let (a, b) = (shm_participant(81), shm_participant(81));
    let qos = |q: Qos| q.reliable().keep_all();
    let poses = a.create_topic::<Pose>("poses").unwrap();
    let writer = a.create_writer(&poses, qos(Qos::writer())).unwrap();
    let poses_b = b.create_topic::<Pose>("poses").unwrap();
    let reader = b.create_reader(&poses_b, qos(Qos::reader())).unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    let pose = |i: u32| {
        let mut p = Pose {
            id: i % 2,
            xyz: [i as f32, 0.5, -1.0],
            cloud: [[0.0; 4]; 4096],
        };
        p.cloud[i as usize] = [1.0, 2.0, 3.0, i as f32];
        p
    };
    const N: u32 = 12;
    // One sample first: the reader subscribes to the writer's sample channel when the
    // first DATA that refers to it comes (that sample, sent before, is repaired with
    // its bytes).
    let mut first = writer.loan().unwrap();
    *first = pose(100);
    writer.write_loan(first).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    assert_eq!(take_until(&reader, 1).len(), 1);
    let mut lent_shared = 0;
    for i in 0..N {
        let mut loan = writer.loan().unwrap();
        // A chunk of the writer's sample channel (what an earlier sample left there) while
        // the history holds fewer than 8 of them, then process memory.
        lent_shared += usize::from(loan.in_shared_memory());
        loan.id = i % 2;
        loan.xyz = [i as f32, 0.5, -1.0];
        loan.cloud = [[0.0; 4]; 4096];
        loan.cloud[i as usize] = [1.0, 2.0, 3.0, i as f32];
        writer.write_loan(loan).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let mut got = Vec::new();
    let deadline = Instant::now() + T;
    while got.len() < N as usize && Instant::now() < deadline {
        reader.wait_for_data(Duration::from_millis(200));
        got.extend(reader.take_loaned(100).unwrap());
    }
    assert_eq!(got.len(), N as usize);
    for (i, s) in (0..N).zip(&got) {
        let loaned = s.data.as_ref().expect("valid data");
        assert!(**loaned == pose(i), "pose {i} as written");
        // Found the instance the writer's key hash names (the typed key, not a decode).
        let handle = writer.instance_handle(&pose(i)).unwrap();
        assert_eq!(s.info.instance_handle, handle);
    }
    // Read where the writer wrote them (all that were lent there), but past the 7 a reader
    // holds at once (copied out).
    let shared = got
        .iter()
        .filter(|s| s.data.as_ref().is_some_and(|d| d.in_shared_memory()))
        .count();
    assert!(
        lent_shared >= 8,
        "{lent_shared} of {N} lent in shared memory"
    );
    assert_eq!(shared, lent_shared.min(7), "read in shared memory");
    assert!(
        a.datagrams_by_transport()
            .iter()
            .any(|(n, c)| *n == "shared-memory" && *c >= u64::from(N)),
        "{:?}",
        a.datagrams_by_transport()
    );

    // A type that is not plain cannot be lent as a `T`; its serialized form can.
    let blobs = a.create_topic::<Blob>("blobs").unwrap();
    let blob_writer = a.create_writer(&blobs, qos(Qos::writer())).unwrap();
    let blob_reader = b
        .create_reader(
            &b.create_topic::<Blob>("blobs").unwrap(),
            qos(Qos::reader()),
        )
        .unwrap();
    blob_writer.wait_for_matched(1, T).unwrap();
    blob_reader.wait_for_matched(1, T).unwrap();
    let blob = Blob {
        seq: 7,
        owner: 3,
        bytes: (0..100_000u32).map(|i| i as u8).collect(),
    };
    let untyped = blob_writer.untyped();
    let mut loan = untyped.loan(12 + blob.bytes.len());
    let ne = |v: u32| match loan.endianness() {
        ferrodds_cdr::Endianness::Little => v.to_le_bytes(),
        ferrodds_cdr::Endianness::Big => v.to_be_bytes(),
    };
    let (seq, owner, len) = (ne(7), ne(3), ne(blob.bytes.len() as u32));
    loan[..4].copy_from_slice(&seq);
    loan[4..8].copy_from_slice(&owner);
    loan[8..12].copy_from_slice(&len);
    loan[12..].copy_from_slice(&blob.bytes);
    untyped.write_loan(loan).unwrap();
    // A buffer whose key does not decode is refused.
    let bad = untyped.loan(6);
    assert!(untyped.write_loan(bad).is_err());
    let got = take_until(&blob_reader, 1);
    assert_eq!(got.len(), 1);
    assert!(got[0].data.as_ref() == Some(&blob));
    assert_eq!(
        got[0].info.instance_handle,
        blob_writer.instance_handle(&blob).unwrap(),
        "the key read from the lent buffer"
    );
}

/// Takes until `n` samples came or `T` passed.
fn take_until<D: Cdr>(reader: &DataReader<D>, n: usize) -> Vec<Sample<D>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + T;
    while got.len() < n && Instant::now() < deadline {
        reader.wait_for_data(Duration::from_millis(200));
        got.extend(reader.take().unwrap());
    }
    got
}

/// WRITER_DATA_LIFECYCLE, between two participants: what a reader of three instances sees
/// of each when the writer (with `autodispose`) unregisters one and is then deleted.
fn instance_states_after_the_writer_goes(domain: u32, autodispose: bool) -> Vec<InstanceState> {
    let (a, b) = (participant(domain), participant(domain));
    let writer = a
        .create_writer(
            &a.create_topic::<Reading>("lifecycle").unwrap(),
            Qos::writer()
                .reliable()
                .keep_all()
                .autodispose_unregistered_instances(autodispose),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Reading>("lifecycle").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    for i in 0..3 {
        writer.write(&reading(i)).unwrap();
    }
    writer.unregister(&reading(0)).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    // Dropped: instances 1 and 2 are still registered. Its deletion tells the reader (and
    // waits for the acknowledgment) before the writer is withdrawn.
    drop(writer);
    let got = take_up_to(&reader, 6);
    let valid: Vec<i32> = got
        .iter()
        .filter(|s| s.info.valid_data)
        .map(|s| s.data.as_ref().unwrap().id)
        .collect();
    assert_eq!(valid, [0, 1, 2]);
    let mut last = [None; 3];
    for s in got.iter().filter(|s| !s.info.valid_data) {
        last[s.key.as_ref().unwrap().id as usize] = Some(s.info.instance_state);
    }
    last.iter()
        .map(|s| s.expect("every instance changed state"))
        .collect()
}

#[test]
fn a_deleted_writer_disposes_its_instances_and_an_unregister_disposes_by_default() {
    assert_eq!(
        instance_states_after_the_writer_goes(176, true),
        [InstanceState::NotAliveDisposed; 3]
    );
}

#[test]
fn without_autodispose_a_deleted_writer_only_unregisters() {
    assert_eq!(
        instance_states_after_the_writer_goes(177, false),
        [InstanceState::NotAliveNoWriters; 3]
    );
}

#[test]
fn instances_are_registered_looked_up_walked_and_disposed_by_handle() {
    let (a, b) = (participant(178), participant(178));
    let writer = a
        .create_writer(
            &a.create_topic::<Reading>("instances").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Reading>("instances").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    // Registered before any write, found by its key; another key is not.
    let one = writer.register_instance(&reading(1)).unwrap();
    assert_eq!(writer.lookup_instance(&reading(4)).unwrap(), Some(one));
    assert_eq!(writer.lookup_instance(&reading(2)).unwrap(), None);
    assert!(matches!(
        writer.unregister_instance(ferrodds::InstanceHandle([9; 16])),
        Err(ferrodds::Error::UnknownInstance(_))
    ));
    for i in 0..9 {
        writer.write(&reading(i)).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    assert!(reader.wait_for_data(T));
    // Walk the instances one at a time, in handle order: three of three samples each.
    let mut previous = None;
    let mut walked = Vec::new();
    for _ in 0..10 {
        let samples = reader.read_next_instance(previous).unwrap();
        let Some(first) = samples.first() else { break };
        let handle = first.info.instance_handle;
        assert!(samples.iter().all(|s| s.info.instance_handle == handle));
        assert_eq!(samples.len(), 3);
        assert_eq!(
            reader.lookup_instance(first.value().unwrap()).unwrap(),
            Some(handle)
        );
        walked.push(handle);
        previous = Some(handle);
    }
    assert_eq!(walked.len(), 3);
    assert!(walked.windows(2).all(|w| w[0] < w[1]), "handle order");
    // Instances are found by key: reading(10) is instance 1's key (10 % 3).
    assert_eq!(
        reader.lookup_instance(&reading(10)).unwrap(),
        reader.lookup_instance(&reading(1)).unwrap()
    );
    // Dispose instance 1 by its handle: the reader sees it on that instance.
    let theirs = reader.lookup_instance(&reading(1)).unwrap().unwrap();
    writer.dispose_instance(one).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    let mut got = Vec::new();
    for _ in 0..50 {
        got = reader.take_instance(theirs).unwrap();
        if got.iter().any(|s| !s.info.valid_data) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let last = got.last().unwrap();
    assert!(!last.info.valid_data);
    assert_eq!(last.info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(last.key.as_ref().unwrap().id, 1);
    // The other instances are still there, untouched by the take.
    assert_eq!(reader.take().unwrap().len(), 6);
}

/// Listeners on publishers, subscribers and participants: a status goes to the entity's own
/// listener, else to its publisher's or subscriber's if its mask holds the status, else to
/// its participant's; a subscriber's DATA_ON_READERS comes instead of its readers'
/// data-available listeners.
#[test]
fn statuses_fall_back_to_the_publisher_subscriber_and_participant() {
    use ferrodds::{StatusKind, StatusMask};
    use std::sync::{Arc, Mutex};
    const DOMAIN: u32 = 181;
    type Heard = Arc<Mutex<Vec<(&'static str, ferrodds::Guid, StatusKind)>>>;
    let heard: Heard = Arc::default();
    let listener = |who: &'static str| {
        let heard = heard.clone();
        move |guid, kind| heard.lock().unwrap().push((who, guid, kind))
    };
    let a = participant(DOMAIN);
    let b = participant(DOMAIN);
    a.set_listener(StatusMask::ALL, listener("participant a"));
    b.set_listener(
        StatusMask::of(&[StatusKind::SubscriptionMatched, StatusKind::DataAvailable]),
        listener("participant b"),
    );
    let publisher = a.create_publisher(&[]);
    publisher.set_listener(
        StatusMask::of(&[StatusKind::PublicationMatched]),
        listener("publisher"),
    );
    let subscriber = b.create_subscriber(&[]);
    subscriber.set_listener(
        StatusMask::of(&[StatusKind::DataOnReaders]),
        listener("subscriber"),
    );
    let ta = a.create_topic::<Reading>("fallback").unwrap();
    let tb = b.create_topic::<Reading>("fallback").unwrap();
    let writer = publisher
        .create_writer(&ta, Qos::writer().reliable().keep_all())
        .unwrap();
    // A reader of participant b alone, and one of its subscriber with a data listener of
    // its own, which DATA_ON_READERS overrides.
    let plain = b
        .create_reader(&tb, Qos::reader().reliable().keep_all())
        .unwrap();
    let grouped = subscriber
        .create_reader(&tb, Qos::reader().reliable().keep_all())
        .unwrap();
    let own_calls = Arc::new(Mutex::new(0));
    let own = own_calls.clone();
    grouped.set_data_available_listener(move || *own.lock().unwrap() += 1);
    writer.wait_for_matched(2, Duration::from_secs(10)).unwrap();
    writer.write(&reading(1)).unwrap();
    writer
        .wait_for_acknowledgments(Duration::from_secs(10))
        .unwrap();
    let want = [
        ("publisher", writer.guid(), StatusKind::PublicationMatched),
        (
            "participant b",
            plain.guid(),
            StatusKind::SubscriptionMatched,
        ),
        ("participant b", plain.guid(), StatusKind::DataAvailable),
        ("subscriber", grouped.guid(), StatusKind::DataOnReaders),
    ];
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let got = heard.lock().unwrap().clone();
        if want.iter().all(|w| got.contains(w)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let got = heard.lock().unwrap().clone();
    for w in &want {
        assert!(got.contains(w), "{w:?} not in {got:?}");
    }
    // The publisher's listener took the writer's match: the participant's did not.
    assert!(!got
        .iter()
        .any(|(who, guid, _)| *who == "participant a" && *guid == writer.guid()));
    // The grouped reader's match is not in its subscriber's mask: it went to participant b.
    assert!(got.contains(&(
        "participant b",
        grouped.guid(),
        StatusKind::SubscriptionMatched
    )));
    assert_eq!(*own_calls.lock().unwrap(), 0, "DATA_ON_READERS comes first");
    assert_eq!(take_up_to(&grouped, 1).len(), 1);
}

/// A reader's and a writer's listener hear only the statuses in their masks; the others go
/// to the participant's listener.
#[test]
fn an_entity_listener_hears_its_mask_and_the_parent_the_rest() {
    use ferrodds::{StatusKind, StatusMask};
    use std::sync::{Arc, Mutex};
    const DOMAIN: u32 = 198;
    type Heard = Arc<Mutex<Vec<(&'static str, StatusKind)>>>;
    let heard: Heard = Arc::default();
    let p = participant(DOMAIN);
    let h = heard.clone();
    // Not DATA_ON_READERS: the participant's would come before the reader's own.
    p.set_listener(
        StatusMask::of(&[
            StatusKind::PublicationMatched,
            StatusKind::SubscriptionMatched,
            StatusKind::DataAvailable,
        ]),
        move |_, kind| h.lock().unwrap().push(("participant", kind)),
    );
    let topic = p.create_topic::<Reading>("masks").unwrap();
    let writer = p
        .create_writer(&topic, Qos::writer().reliable().keep_all())
        .unwrap();
    let h = heard.clone();
    writer.set_listener(
        StatusMask::of(&[StatusKind::PublicationMatched]),
        move |kind| h.lock().unwrap().push(("writer", kind)),
    );
    let reader = p
        .create_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    let h = heard.clone();
    reader.set_listener(StatusMask::of(&[StatusKind::DataAvailable]), move |kind| {
        h.lock().unwrap().push(("reader", kind))
    });
    writer.wait_for_matched(1, Duration::from_secs(10)).unwrap();
    writer.write(&reading(1)).unwrap();
    let want = [
        ("writer", StatusKind::PublicationMatched),
        ("participant", StatusKind::SubscriptionMatched),
        ("reader", StatusKind::DataAvailable),
    ];
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let got = heard.lock().unwrap().clone();
        if want.iter().all(|w| got.contains(w)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let got = heard.lock().unwrap().clone();
    for w in &want {
        assert!(got.contains(w), "{w:?} not in {got:?}");
    }
    for not in [
        ("participant", StatusKind::DataAvailable),
        ("participant", StatusKind::PublicationMatched),
        ("reader", StatusKind::SubscriptionMatched),
    ] {
        assert!(!got.contains(&not), "{not:?} in {got:?}");
    }
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Frame")]
struct Frame {
    #[cdr(key)]
    id: i32,
    data: Vec<u8>,
}

#[test]
fn collect_shared_decodes_octets_as_views_into_the_payloads_it_hands_out() {
    let (a, b) = (participant(218), participant(218));
    let writer = a
        .create_writer(
            &a.create_topic::<Frame>("shared").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let topic = b
        .create_dynamic_topic("shared", "test::Frame", Frame::dynamic_type())
        .unwrap();
    let reader = b
        .create_dynamic_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    let frame = |id: i32| Frame {
        id,
        data: (0..3000)
            .map(|i| (i as u8).wrapping_add(id as u8))
            .collect(),
    };
    for id in 0..3 {
        writer.write(&frame(id)).unwrap();
    }
    writer.dispose(&frame(1)).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();

    let (mut got, deadline) = (Vec::new(), Instant::now() + T);
    while got.len() < 4 && Instant::now() < deadline {
        reader.wait_for_data(Duration::from_millis(200));
        got.extend(reader.collect_shared(10, true, ferrodds::Selection::ANY));
    }
    assert_eq!(got.len(), 4, "three frames and a dispose");
    let mut payloads = Vec::new();
    for (id, (sample, payload)) in got.iter().take(3).enumerate() {
        let Some(DynamicValue::Struct(members)) = &sample.data else {
            panic!("a struct: {sample:?}");
        };
        let Some(DynamicValue::Bytes(data)) = &members[1] else {
            panic!("octets as they are: {members:?}");
        };
        assert_eq!(&data[..], &frame(id as i32).data[..]);
        let payload = payload
            .clone()
            .expect("a valid sample comes with its payload");
        let inside = payload.as_ptr_range();
        assert!(
            inside.contains(&data.as_ptr()),
            "the octets are a view into the payload, not a copy"
        );
        payloads.push(payload);
    }
    let (dispose, none) = &got[3];
    assert!(dispose.data.is_none() && none.is_none(), "a key is copied");
    assert_eq!(dispose.info.instance_state, InstanceState::NotAliveDisposed);
    drop(got);
    reader.return_shared(payloads);
}
