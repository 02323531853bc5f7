//! What a reader lets in, end to end over loopback: a content filter, exclusive ownership,
//! lifespan, the time-based filter, and the deadline statuses on both sides. Each test has
//! its own domain (70–74); a writer and a reader of one participant match each other.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ferrodds::{Cdr, DataReader, DomainParticipant, Qos};

#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "test::Tick")]
struct Tick {
    #[cdr(key)]
    id: i32,
    value: i32,
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

const T: Duration = Duration::from_secs(10);

/// Takes until `n` valid samples arrived or `timeout` passed.
fn take_values(reader: &DataReader<Tick>, n: usize, timeout: Duration) -> Vec<(i32, i32)> {
    let end = Instant::now() + timeout;
    let mut got = Vec::new();
    while got.len() < n && Instant::now() < end {
        reader.wait_for_data(Duration::from_millis(50));
        got.extend(
            reader
                .take()
                .unwrap()
                .into_iter()
                .filter(|s| s.info.valid_data)
                .map(|s| s.value().map(|d| (d.id, d.value)).unwrap()),
        );
    }
    got
}

#[test]
fn a_content_filter_lets_in_only_what_it_accepts() {
    let p = participant(70);
    let topic = p.create_topic::<Tick>("filtered").unwrap();
    let qos = Qos::reader().reliable().keep_all();
    let reader = p
        .create_subscriber(&[])
        .create_reader_with_filter(&topic, qos, |t: &Tick| t.value % 2 == 0)
        .unwrap();
    let writer = p
        .create_writer(&topic, Qos::writer().reliable().keep_all())
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    for value in 0..10 {
        writer.write(&Tick { id: 1, value }).unwrap();
    }
    // An instance the reader never accepted a sample of: its dispose is not delivered.
    writer.write(&Tick { id: 2, value: 1 }).unwrap();
    writer.dispose(&Tick { id: 2, value: 0 }).unwrap();
    writer.write(&Tick { id: 3, value: 100 }).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    let got = take_values(&reader, 6, T);
    assert_eq!(got, [(1, 0), (1, 2), (1, 4), (1, 6), (1, 8), (3, 100)]);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        reader.take().unwrap().is_empty(),
        "nothing about instance 2"
    );
}

#[test]
fn exclusive_ownership_takes_each_instance_from_its_strongest_writer() {
    let p = participant(71);
    let topic = p.create_topic::<Tick>("owned").unwrap();
    let reader = p
        .create_reader(
            &topic,
            Qos::reader().reliable().keep_all().exclusive_ownership(0),
        )
        .unwrap();
    let writer_qos = |s| Qos::writer().reliable().keep_all().exclusive_ownership(s);
    let weak = p.create_writer(&topic, writer_qos(1)).unwrap();
    let strong = p.create_writer(&topic, writer_qos(2)).unwrap();
    reader.wait_for_matched(2, T).unwrap();
    weak.wait_for_matched(1, T).unwrap();
    strong.wait_for_matched(1, T).unwrap();
    weak.write(&Tick { id: 1, value: 10 }).unwrap();
    weak.wait_for_acknowledgments(T).unwrap();
    strong.write(&Tick { id: 1, value: 20 }).unwrap();
    strong.wait_for_acknowledgments(T).unwrap();
    weak.write(&Tick { id: 1, value: 11 }).unwrap();
    weak.write(&Tick { id: 2, value: 12 }).unwrap();
    weak.wait_for_acknowledgments(T).unwrap();
    assert_eq!(take_values(&reader, 3, T), [(1, 10), (1, 20), (2, 12)]);
    // The owner gives the instance up: the weaker writer has it again.
    strong.unregister(&Tick { id: 1, value: 0 }).unwrap();
    strong.wait_for_acknowledgments(T).unwrap();
    weak.write(&Tick { id: 1, value: 13 }).unwrap();
    weak.wait_for_acknowledgments(T).unwrap();
    assert_eq!(take_values(&reader, 1, T), [(1, 13)]);
    // Shared ownership readers do not match exclusive writers.
    let shared = p
        .create_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    let end = Instant::now() + T;
    while shared.requested_incompatible_qos().total_count < 2 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(shared.requested_incompatible_qos().total_count, 2);
}

// Lifespan, deadline and the time-based filter are tested to the nanosecond in virtual
// time (crates/ferrodds-rtps/tests/dcps.rs); these tests show that the QoS set through this
// API reaches those rules and their statuses come back, without depending on timing.

#[test]
fn a_sample_stamped_before_its_lifespan_is_dropped() {
    let p = participant(72);
    let topic = p.create_topic::<Tick>("short-lived").unwrap();
    let reader = p
        .create_reader(&topic, Qos::reader().reliable().keep_all())
        .unwrap();
    let writer = p
        .create_writer(
            &topic,
            Qos::writer()
                .reliable()
                .keep_all()
                .lifespan(Duration::from_secs(60)),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    // Stamped two minutes ago: expired on arrival.
    writer
        .write_with_timestamp(
            &Tick { id: 1, value: 1 },
            std::time::SystemTime::now() - Duration::from_secs(120),
        )
        .unwrap();
    writer.write(&Tick { id: 1, value: 2 }).unwrap();
    writer.wait_for_acknowledgments(T).unwrap();
    assert_eq!(take_values(&reader, 1, T), [(1, 2)]);
    assert!(reader.take().unwrap().is_empty());
}

#[test]
fn the_time_based_filter_keeps_one_sample_per_separation() {
    let p = participant(73);
    let topic = p.create_topic::<Tick>("filtered-in-time").unwrap();
    let reader = p
        .create_reader(
            &topic,
            Qos::reader()
                .reliable()
                .keep_all()
                .time_based_filter(Duration::from_secs(5)),
        )
        .unwrap();
    let writer = p
        .create_writer(&topic, Qos::writer().reliable().keep_all())
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    for value in 0..5 {
        writer.write(&Tick { id: 1, value }).unwrap();
        writer.write(&Tick { id: 2, value }).unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut got = take_values(&reader, 2, T);
    got.sort();
    assert_eq!(got, [(1, 0), (2, 0)]);
    assert!(reader.take().unwrap().is_empty());
}

#[test]
fn missed_deadlines_are_counted_on_both_sides() {
    let p = participant(74);
    let topic = p.create_topic::<Tick>("on-time").unwrap();
    let period = Duration::from_millis(20);
    let reader = p
        .create_reader(&topic, Qos::reader().reliable().keep_all().deadline(period))
        .unwrap();
    let writer = p
        .create_writer(&topic, Qos::writer().reliable().deadline(period))
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    writer.write(&Tick { id: 1, value: 0 }).unwrap();
    assert_eq!(take_values(&reader, 1, T).len(), 1);
    // Then silence: both sides count misses (how many is the virtual-time test's business).
    let end = Instant::now() + T;
    while (writer.offered_deadline_missed().total_count < 2
        || reader.requested_deadline_missed().total_count < 2)
        && Instant::now() < end
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (offered, requested) = (
        writer.offered_deadline_missed(),
        reader.requested_deadline_missed(),
    );
    assert!(offered.total_count >= 2, "{offered:?}");
    assert!(requested.total_count >= 2, "{requested:?}");
    assert_eq!(offered.last_instance_handle, requested.last_instance_handle);
}
