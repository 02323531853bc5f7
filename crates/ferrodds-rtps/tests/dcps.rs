//! The DCPS rules of the participant core, in the simulator's virtual time: lifespan,
//! deadline and the time-based filter are exact to the nanosecond and every run is the
//! same; statuses come out as events; received changes are admitted in arrival order
//! whatever order the driver prepares them in.
//!
//! Two nodes discover each other (SPDP/SEDP over the simulated network); node 0 has a DCPS
//! writer, node 1 a DCPS reader, of a keyed type whose instances the reader finds with the
//! runtime codec.

#![allow(clippy::unwrap_used)]

mod sim;

use std::time::Duration;

use ferrodds_cdr::{Cdr, Endianness, XcdrVersion};
use ferrodds_rtps::dcps::instance_keys::decode_dynamic;
use ferrodds_rtps::dcps::sample::rtps_time;
use ferrodds_rtps::dcps::status::SampleRejectedReason;
use ferrodds_rtps::dcps::{
    ContentFilter, DcpsReader, DcpsWriter, FilterExpression, InstanceKeys, InstanceState,
    PurgeDelays, Selection, Taken,
};
use ferrodds_rtps::discovery::ContentFilterProperty;
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::qos::{self, EndpointQos, History, LivelinessKind, Reliability};
use ferrodds_rtps::wire::{EntityId, Guid};
use ferrodds_rtps::{
    Change, ChangeKind, Event, History as WriterHistory, LocalEndpoint, Reader, Writer,
    WriterConfig,
};
use sim::{Faults, Network};

#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "test::Tick")]
struct Tick {
    #[cdr(key)]
    id: i32,
    value: i32,
}

const W: EntityId = EntityId([0, 0, 1, 0x02]);
const R: EntityId = EntityId([0, 0, 1, 0x07]);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Reliable, KEEP_ALL.
fn reliable(mut q: EndpointQos) -> EndpointQos {
    q.reliability = Reliability::reliable();
    q.history = History::KeepAll;
    q
}

/// Two discovering nodes, a writer with `writer_qos` on node 0 and a reader with
/// `reader_qos` on node 1, matched.
fn pair(seed: u64, writer_qos: EndpointQos, reader_qos: EndpointQos) -> Network {
    pair_on(seed, Faults::NONE, writer_qos, reader_qos)
}

/// [`pair`] on a network with `faults`.
fn pair_on(seed: u64, faults: Faults, writer_qos: EndpointQos, reader_qos: EndpointQos) -> Network {
    pair_filtered(seed, faults, writer_qos, reader_qos, None)
}

/// [`pair`], the reader purging not-alive instances after `delays`.
fn pair_purging(seed: u64, delays: PurgeDelays) -> Network {
    pair_with(
        seed,
        Faults::NONE,
        reliable(EndpointQos::writer_default()),
        reliable(EndpointQos::reader_default()),
        None,
        delays,
    )
}

/// [`pair_on`], the reader with a content filter.
fn pair_filtered(
    seed: u64,
    faults: Faults,
    writer_qos: EndpointQos,
    reader_qos: EndpointQos,
    filter: Option<ContentFilter>,
) -> Network {
    pair_with(
        seed,
        faults,
        writer_qos,
        reader_qos,
        filter,
        PurgeDelays::default(),
    )
}

fn pair_with(
    seed: u64,
    faults: Faults,
    writer_qos: EndpointQos,
    reader_qos: EndpointQos,
    filter: Option<ContentFilter>,
    purge: PurgeDelays,
) -> Network {
    pair_announcing(seed, faults, writer_qos, reader_qos, filter, purge, None)
}

/// [`pair_with`], the reader announcing `announced` as its content filter.
fn pair_announcing(
    seed: u64,
    faults: Faults,
    writer_qos: EndpointQos,
    reader_qos: EndpointQos,
    filter: Option<ContentFilter>,
    purge: PurgeDelays,
    announced: Option<ContentFilterProperty>,
) -> Network {
    let mut net = Network::discovering_pair(seed, faults, |_, _| {});
    let now = net.now;
    let ty = Tick::dynamic_type();
    let w = Guid::new(net.nodes[0].rtps.prefix(), W);
    let config = WriterConfig {
        reliable: true,
        history: match writer_qos.history {
            History::KeepLast { depth } => WriterHistory::KeepLast(depth.max(1) as usize),
            History::KeepAll => WriterHistory::KeepAll,
        },
        ..WriterConfig::default()
    };
    net.nodes[0].rtps.add_writer(Writer::new(w, config));
    net.nodes[0].add_data_writer(W, DcpsWriter::new(&writer_qos, now));
    net.nodes[0].add_local(
        now,
        LocalEndpoint {
            guid: w,
            kind: EndpointKind::Writer,
            topic_name: "ticks".into(),
            type_name: "test::Tick".into(),
            qos: writer_qos,
            keyed: true,
            ty: Some(ty.clone()),
            ignore_local: false,
            content_filter: None,
        },
    );
    let r = Guid::new(net.nodes[1].rtps.prefix(), R);
    let limits = net.nodes[1].rtps.limits().clone();
    net.nodes[1]
        .rtps
        .add_reader(Reader::new(r, limits.reader_config(true)));
    net.nodes[1].add_data_reader(
        R,
        DcpsReader::new(
            &reader_qos,
            &limits,
            InstanceKeys::Dynamic(ty.clone()),
            filter,
        )
        .with_purge_delays(purge),
    );
    net.nodes[1].add_local(
        now,
        LocalEndpoint {
            guid: r,
            kind: EndpointKind::Reader,
            topic_name: "ticks".into(),
            type_name: "test::Tick".into(),
            qos: reader_qos,
            keyed: true,
            ty: Some(ty),
            ignore_local: false,
            content_filter: announced,
        },
    );
    let matched = net.run_until(Duration::from_secs(5), |n| {
        n.nodes[0]
            .data_writer_ref(W)
            .unwrap()
            .matches()
            .remotes()
            .len()
            == 1
            && n.nodes[1]
                .data_reader_ref(R)
                .unwrap()
                .matches()
                .remotes()
                .len()
                == 1
    });
    assert!(matched, "seed {seed}: no match");
    net
}

/// Writes `kind` of `tick` from node 0, stamped `age` before now.
fn write_aged(net: &mut Network, tick: &Tick, kind: ChangeKind, age: Duration) {
    let now = net.now;
    let payload = if kind == ChangeKind::Alive {
        ferrodds_cdr::serialize(tick, XcdrVersion::Xcdr2, Endianness::Little)
    } else {
        ferrodds_cdr::serialize_key_sample(tick, XcdrVersion::Xcdr2, Endianness::Little)
    }
    .unwrap();
    let key = ferrodds_cdr::key_hash(tick, XcdrVersion::Xcdr2).unwrap();
    let stamp = net.nodes[0].wall_time(now) - age;
    let change = Change {
        original: None,
        coherence: None,
        kind,
        key_hash: Some(key.0),
        timestamp: Some(rtps_time(stamp)),
        payload: payload.into(),
        reduced_payload: None,
    };
    net.nodes[0].write(now, W, change).unwrap();
}

fn write(net: &mut Network, id: i32, value: i32) {
    write_aged(net, &Tick { id, value }, ChangeKind::Alive, Duration::ZERO);
}

/// Lets everything written arrive and be acknowledged.
fn settle(net: &mut Network) {
    let acked = net.run_until(Duration::from_secs(5), |n| {
        n.nodes[0].rtps.writer(W).unwrap().all_acknowledged()
    });
    assert!(acked);
}

fn take(net: &mut Network) -> Vec<Taken> {
    let now = net.now;
    net.nodes[1]
        .data_reader(R)
        .unwrap()
        .collect(now, usize::MAX, true, Selection::ANY)
}

fn values(taken: &[Taken]) -> Vec<(i32, i32)> {
    taken
        .iter()
        .filter(|t| t.info.valid_data)
        .map(|t| {
            let tick: Tick = ferrodds_cdr::deserialize(&t.payload).unwrap();
            (tick.id, tick.value)
        })
        .collect()
}

/// Node 0's writer goes; runs until the reader no longer matches it.
fn remove_the_writer(net: &mut Network) {
    let now = net.now;
    let w = Guid::new(net.nodes[0].rtps.prefix(), W);
    net.nodes[0].remove_local(now, w);
    net.nodes[0].rtps.remove_writer(W);
    let unmatched = net.run_until(Duration::from_secs(5), |n| {
        n.nodes[1]
            .data_reader_ref(R)
            .unwrap()
            .matches()
            .remotes()
            .is_empty()
    });
    assert!(unmatched);
}

fn events(net: &mut Network, node: usize) -> Vec<Event> {
    std::iter::from_fn(|| net.nodes[node].poll_event()).collect()
}

#[test]
fn a_sample_expires_exactly_when_its_lifespan_ends() {
    let mut writer_qos = reliable(EndpointQos::writer_default());
    writer_qos.lifespan.duration = qos::Duration::from_secs(1);
    let mut net = pair(1, writer_qos, reliable(EndpointQos::reader_default()));
    let written = net.now;
    write(&mut net, 1, 1);
    settle(&mut net);
    // Still there a nanosecond before its lifespan ends (read, not taken), gone at it.
    net.advance(written.after(Duration::from_secs(1)).since(net.now) - Duration::from_nanos(1));
    let now = net.now;
    let reader = net.nodes[1].data_reader(R).unwrap();
    assert!(reader.has_unread(now));
    assert_eq!(
        values(&reader.collect(now, usize::MAX, false, Selection::ANY)),
        [(1, 1)]
    );
    net.advance(Duration::from_nanos(1));
    assert!(take(&mut net).is_empty(), "expired at one second");
    // Stamped 400 ms ago: 600 ms left. Stamped 2 s ago: expired on arrival.
    let written = net.now;
    let aged = |value, age| (Tick { id: 1, value }, ChangeKind::Alive, ms(age));
    for (tick, kind, age) in [aged(2, 400), aged(3, 2000)] {
        write_aged(&mut net, &tick, kind, age);
    }
    settle(&mut net);
    net.advance(written.after(ms(590)).since(net.now));
    assert_eq!(values(&take(&mut net)), [(1, 2)]);
    let written = net.now;
    let (tick, kind, age) = aged(4, 400);
    write_aged(&mut net, &tick, kind, age);
    settle(&mut net);
    net.advance(written.after(ms(610)).since(net.now));
    assert!(take(&mut net).is_empty());
}

/// A reliable pair whose writer offers and reader requests a deadline of `period_ms`.
fn deadline_pair(seed: u64, period_ms: u64) -> Network {
    let period = qos::Duration::from_millis(period_ms);
    let mut writer_qos = reliable(EndpointQos::writer_default());
    writer_qos.deadline.period = period;
    let mut reader_qos = reliable(EndpointQos::reader_default());
    reader_qos.deadline.period = period;
    pair(seed, writer_qos, reader_qos)
}

#[test]
fn missed_deadlines_are_counted_and_reported_as_events_on_both_sides() {
    let mut net = deadline_pair(2, 100);
    events(&mut net, 0);
    events(&mut net, 1);
    // Written every 30 ms: nothing missed.
    for value in 0..5 {
        write(&mut net, 1, value);
        net.advance(ms(30));
    }
    let deadline_events = |e: &[Event]| {
        e.iter()
            .filter_map(|e| match e {
                Event::OfferedDeadlineMissed { status, .. }
                | Event::RequestedDeadlineMissed { status, .. } => Some(status.total_count),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert!(deadline_events(&events(&mut net, 0)).is_empty());
    assert!(deadline_events(&events(&mut net, 1)).is_empty());
    assert_eq!(values(&take(&mut net)).len(), 5);
    // The last write was 30 ms ago: each 100 ms of silence from it is one miss, reported
    // when it happens.
    for missed in 1..=4u64 {
        net.advance(ms(100));
        assert_eq!(deadline_events(&events(&mut net, 0)), [missed], "writer");
        assert_eq!(deadline_events(&events(&mut net, 1)), [missed], "reader");
    }
    let now = net.now;
    let offered = net.nodes[0].data_writer(W).unwrap().deadline_missed(now);
    let requested = net.nodes[1].data_reader(R).unwrap().deadline_missed(now);
    assert_eq!((offered.total_count, requested.total_count), (4, 4));
    assert_eq!(offered.last_instance_handle, requested.last_instance_handle);
    // Disposed: its deadline no longer applies on either side.
    write_aged(
        &mut net,
        &Tick { id: 1, value: 0 },
        ChangeKind::Disposed,
        Duration::ZERO,
    );
    settle(&mut net);
    events(&mut net, 0);
    events(&mut net, 1);
    net.advance(ms(1000));
    assert!(deadline_events(&events(&mut net, 0)).is_empty());
    assert!(deadline_events(&events(&mut net, 1)).is_empty());
    assert_eq!(net.nodes[0].poll_timeout().map(|t| t > net.now), Some(true));
}

#[test]
fn status_conditions_hold_until_the_status_is_read() {
    use ferrodds_rtps::dcps::status_reads::{StatusKind, StatusMask};
    let mut net = deadline_pair(4, 100);
    let mask = |kinds: &[StatusKind]| StatusMask::of(kinds);
    let holds = |net: &mut Network, node: usize, id: EntityId, kinds: &[StatusKind]| {
        let now = net.now;
        net.nodes[node].status_changed(id, mask(kinds), now)
    };
    let read_matched = |net: &mut Network| {
        let status = net.nodes[1].data_reader_ref(R).unwrap().matches().status();
        net.nodes[1].read_status(R, StatusKind::SubscriptionMatched, status)
    };
    let (sub, publ) = (
        StatusKind::SubscriptionMatched,
        StatusKind::PublicationMatched,
    );
    // The match: each side's condition holds until the application reads the status, and a
    // condition on another status does not.
    assert!(holds(&mut net, 1, R, &[sub]) && holds(&mut net, 0, W, &[publ]));
    assert!(!holds(
        &mut net,
        1,
        R,
        &[StatusKind::SampleLost, StatusKind::DataAvailable]
    ));
    let read = read_matched(&mut net);
    assert_eq!((read.current_count, read.current_count_change), (1, 1));
    assert!(!holds(&mut net, 1, R, &[sub]), "read: no longer triggered");
    assert!(holds(&mut net, 0, W, &[publ]), "the writer's is its own");
    assert_eq!(read_matched(&mut net).current_count_change, 0);
    // DATA_AVAILABLE holds while samples are not read, whatever was read of other statuses.
    write(&mut net, 1, 1);
    settle(&mut net);
    assert!(holds(&mut net, 1, R, &[sub, StatusKind::DataAvailable]));
    take(&mut net);
    assert!(!holds(&mut net, 1, R, &[StatusKind::DataAvailable]));
    // A deadline missed in virtual time triggers the condition when it is missed (100 ms
    // after the sample came, not before), and reading it ends that until the next miss.
    let missed = [StatusKind::RequestedDeadlineMissed];
    let read_missed = |net: &mut Network| {
        let now = net.now;
        let status = net.nodes[1].data_reader(R).unwrap().deadline_missed(now);
        net.nodes[1].read_status(R, StatusKind::RequestedDeadlineMissed, status)
    };
    read_missed(&mut net);
    let written = net.now;
    write(&mut net, 1, 2);
    let mut first = None;
    for _ in 0..100 {
        net.advance(ms(2));
        if holds(&mut net, 1, R, &missed) {
            first = Some(net.now);
            break;
        }
    }
    let after = first.expect("no deadline missed within 200 ms").0 - written.0;
    assert!(
        (ms(100).as_nanos()..ms(130).as_nanos()).contains(&u128::from(after)),
        "missed {after} ns after the write"
    );
    let status = read_missed(&mut net);
    assert_eq!(status.total_count_change, 1);
    assert!(!holds(&mut net, 1, R, &missed));
    net.advance(ms(100));
    assert!(holds(&mut net, 1, R, &missed), "missed again");
    // The reader goes: the writer's match condition holds again.
    let now = net.now;
    let read = net.nodes[0].data_writer_ref(W).unwrap().matches().status();
    net.nodes[0].read_status(W, publ, read);
    assert!(!holds(&mut net, 0, W, &[publ]));
    let reader = Guid::new(net.nodes[1].rtps.prefix(), R);
    net.nodes[1].remove_local(now, reader);
    let unmatched = net.run_until(Duration::from_secs(5), |n| {
        let now = n.now;
        n.nodes[0].status_changed(W, StatusMask::of(&[publ]), now)
    });
    assert!(
        unmatched,
        "the writer's condition did not see the reader go"
    );
}

/// How many endpoints node 0's writer and node 1's reader match now.
fn match_counts(net: &Network) -> (usize, usize) {
    (
        net.nodes[0]
            .data_writer_ref(W)
            .unwrap()
            .matches()
            .remotes()
            .len(),
        net.nodes[1]
            .data_reader_ref(R)
            .unwrap()
            .matches()
            .remotes()
            .len(),
    )
}

#[test]
fn set_qos_moves_matches_with_partition_and_deadline_and_carries_the_lifespan() {
    let writer_qos = reliable(EndpointQos::writer_default());
    let reader_qos = reliable(EndpointQos::reader_default());
    let mut net = pair(31, writer_qos.clone(), reader_qos.clone());
    let w = Guid::new(net.nodes[0].rtps.prefix(), W);
    let r = Guid::new(net.nodes[1].rtps.prefix(), R);
    let limit = Duration::from_secs(5);

    // The writer moves to another partition: both sides unmatch, from SEDP alone.
    let mut moved = writer_qos.clone();
    moved.partition = qos::Partition::new(["elsewhere"]);
    let now = net.now;
    assert!(net.nodes[0].update_local(now, w, moved.clone()));
    assert!(
        net.run_until(limit, |n| match_counts(n) == (0, 0)),
        "still matched"
    );
    // The reader follows: matched again, and samples flow.
    let mut follows = reader_qos.clone();
    follows.partition = qos::Partition::new(["elsewhere"]);
    let now = net.now;
    assert!(net.nodes[1].update_local(now, r, follows.clone()));
    assert!(
        net.run_until(limit, |n| match_counts(n) == (1, 1)),
        "not matched again"
    );
    write(&mut net, 1, 7);
    settle(&mut net);
    assert_eq!(values(&take(&mut net)), [(1, 7)]);

    // A LIFESPAN given to the matched writer reaches the reader, which keeps the match:
    // a sample is gone once it is older than that.
    events(&mut net, 1);
    let mut short = moved.clone();
    short.lifespan.duration = qos::Duration::from_millis(100);
    let now = net.now;
    assert!(net.nodes[0].update_local(now, w, short.clone()));
    net.advance(ms(500));
    assert_eq!(match_counts(&net), (1, 1));
    assert!(
        !events(&mut net, 1)
            .iter()
            .any(|e| matches!(e, Event::SubscriptionMatched { .. })),
        "a change that still fits does not unmatch"
    );
    let written = net.now;
    write(&mut net, 1, 8);
    settle(&mut net);
    net.advance(written.after(ms(100)).since(net.now));
    assert!(
        take(&mut net).is_empty(),
        "expired by the lifespan set later"
    );

    // The reader now requests a DEADLINE the writer does not offer: incompatible, with
    // DEADLINE named on both sides; once the writer offers it, matched again.
    events(&mut net, 0);
    let mut strict = follows.clone();
    strict.deadline.period = qos::Duration::from_millis(100);
    let now = net.now;
    assert!(net.nodes[1].update_local(now, r, strict));
    assert!(
        net.run_until(limit, |n| match_counts(n) == (0, 0)),
        "an unfit deadline still matched"
    );
    let incompatible = |e: &[Event]| {
        e.iter()
            .filter_map(|e| match e {
                Event::OfferedIncompatibleQos { status, .. }
                | Event::RequestedIncompatibleQos { status, .. } => status.last_policy,
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        incompatible(&events(&mut net, 0)),
        [qos::QosPolicyId::Deadline]
    );
    assert_eq!(
        incompatible(&events(&mut net, 1)),
        [qos::QosPolicyId::Deadline]
    );
    let mut offers = short;
    offers.deadline.period = qos::Duration::from_millis(50);
    let now = net.now;
    assert!(net.nodes[0].update_local(now, w, offers));
    assert!(
        net.run_until(limit, |n| match_counts(n) == (1, 1)),
        "not matched after the offer"
    );
    // No endpoint to change.
    let now = net.now;
    let nobody = Guid::new(net.nodes[0].rtps.prefix(), EntityId([0, 0, 9, 0x02]));
    assert!(!net.nodes[0].update_local(now, nobody, writer_qos));
}

#[test]
fn the_time_based_filter_keeps_one_sample_per_separation_per_instance() {
    let mut reader_qos = reliable(EndpointQos::reader_default());
    reader_qos.time_based_filter.minimum_separation = qos::Duration::from_millis(100);
    let mut net = pair(3, reliable(EndpointQos::writer_default()), reader_qos);
    // Every 30 ms for 270 ms: the samples written at 0, 120 and 240 ms are 100 ms or more
    // after the last one let in; instance 2, written every 90 ms, at 0, 180.
    for step in 0..10 {
        write(&mut net, 1, step);
        if step % 3 == 0 {
            write(&mut net, 2, step);
        }
        net.advance(ms(30));
    }
    settle(&mut net);
    assert_eq!(
        values(&take(&mut net)),
        [(1, 0), (2, 0), (1, 4), (2, 6), (1, 8)]
    );
}

#[test]
fn statuses_come_out_as_events() {
    let mut reader_qos = reliable(EndpointQos::reader_default());
    reader_qos.resource_limits.max_instances = 2;
    let mut net = pair(4, reliable(EndpointQos::writer_default()), reader_qos);
    let e = events(&mut net, 1);
    assert!(e.iter().any(|e| matches!(e,
        Event::SubscriptionMatched { reader: R, status } if status.current_count == 1
    )));
    assert!(events(&mut net, 0).iter().any(|e| matches!(e,
        Event::PublicationMatched { writer: W, status } if status.total_count == 1
    )));
    for id in 0..3 {
        write(&mut net, id, 0);
    }
    settle(&mut net);
    let e = events(&mut net, 1);
    assert!(e
        .iter()
        .any(|e| matches!(e, Event::DataAvailable { reader: R })));
    let rejected: Vec<_> = e
        .iter()
        .filter_map(|e| match e {
            Event::SampleRejected { reader: R, status } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(rejected.len(), 1, "{e:?}");
    assert_eq!(rejected[0].total_count, 1);
    assert_eq!(
        rejected[0].last_reason,
        Some(SampleRejectedReason::InstancesLimit)
    );
    // Nothing new: no DATA_AVAILABLE.
    net.advance(ms(100));
    assert!(!events(&mut net, 1)
        .iter()
        .any(|e| matches!(e, Event::DataAvailable { .. })));
    // The writer goes: the reader's instances have no writers, which it hears as data.
    remove_the_writer(&mut net);
    let e = events(&mut net, 1);
    assert!(e.iter().any(|e| matches!(e,
        Event::SubscriptionMatched { reader: R, status } if status.current_count == 0 && status.total_count == 1
    )));
    assert!(e
        .iter()
        .any(|e| matches!(e, Event::DataAvailable { reader: R })));
    let taken = take(&mut net);
    assert!(taken
        .iter()
        .filter(|t| !t.info.valid_data)
        .all(|t| t.info.instance_state == InstanceState::NotAliveNoWriters));
    assert_eq!(taken.iter().filter(|t| !t.info.valid_data).count(), 2);
}

#[test]
fn changes_prepared_out_of_order_are_admitted_in_arrival_order() {
    let mut net = pair(
        5,
        reliable(EndpointQos::writer_default()),
        reliable(EndpointQos::reader_default()),
    );
    net.nodes[1].defer_preparation(true);
    for value in 0..20 {
        write(&mut net, value % 3, value);
    }
    settle(&mut net);
    // Nothing is admitted until the driver prepares it.
    assert!(take(&mut net).is_empty());
    let mut preparations: Vec<_> = std::iter::from_fn(|| net.nodes[1].poll_preparation()).collect();
    assert_eq!(preparations.len(), 20);
    assert!(preparations.iter().all(|p| p.reader() == R));
    // Prepared last to first: each waits for those before it.
    let now = net.now;
    let last = preparations.pop().unwrap().prepare();
    net.nodes[1].handle_prepared(now, last);
    assert!(take(&mut net).is_empty());
    for p in preparations.into_iter().rev() {
        net.nodes[1].handle_prepared(now, p.prepare());
    }
    let got = values(&take(&mut net));
    let expected: Vec<(i32, i32)> = (0..20).map(|v| (v % 3, v)).collect();
    assert_eq!(got, expected);
}

#[test]
fn samples_the_writer_gave_up_on_are_reported_lost() {
    let mut writer_qos = reliable(EndpointQos::writer_default());
    writer_qos.history = History::KeepLast { depth: 1 };
    for seed in 0..5 {
        let mut net = pair_on(
            10 + seed,
            Faults::lossy(0.3),
            writer_qos.clone(),
            reliable(EndpointQos::reader_default()),
        );
        events(&mut net, 1);
        // Faster than repairs can keep up through 30 % loss: the writer keeps only the last
        // sample, and tells the reader the others are gone.
        for value in 0..200 {
            write(&mut net, 1, value);
            net.advance(ms(1));
        }
        net.advance(Duration::from_secs(3));
        let taken = values(&take(&mut net)).len() as u64;
        let lost = net.nodes[1].data_reader_ref(R).unwrap().sample_lost();
        assert!(lost.total_count > 0, "seed {seed}");
        assert_eq!(
            taken + lost.total_count,
            200,
            "seed {seed}: every sample arrived or was lost"
        );
        let reported: Vec<u64> = events(&mut net, 1)
            .iter()
            .filter_map(|e| match e {
                Event::SampleLost { reader: R, status } => Some(status.total_count),
                _ => None,
            })
            .collect();
        assert_eq!(reported.last(), Some(&lost.total_count), "seed {seed}");
        assert!(
            reported.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: {reported:?}"
        );
    }
}

#[test]
fn a_content_filter_that_panics_drops_its_sample_and_nothing_else() {
    // The application's predicate, run on whatever arrives: it panics on value 3.
    let filter: ContentFilter = std::sync::Arc::new(|payload: &[u8]| {
        let tick: Tick = ferrodds_cdr::deserialize(payload).unwrap();
        assert!(tick.value != 3, "the filter gives up on 3");
        tick.value % 2 == 0
    });
    for defer in [false, true] {
        let mut net = pair_filtered(
            7,
            Faults::NONE,
            reliable(EndpointQos::writer_default()),
            reliable(EndpointQos::reader_default()),
            Some(filter.clone()),
        );
        net.nodes[1].defer_preparation(defer);
        for value in 0..8 {
            write(&mut net, 1, value);
        }
        settle(&mut net);
        let now = net.now;
        let prepared: Vec<_> = std::iter::from_fn(|| net.nodes[1].poll_preparation())
            .map(|p| p.prepare())
            .collect();
        assert_eq!(prepared.len(), if defer { 8 } else { 0 });
        net.nodes[1].handle_prepared_all(now, prepared);
        assert_eq!(
            values(&take(&mut net)),
            [(1, 0), (1, 2), (1, 4), (1, 6)],
            "defer {defer}"
        );
    }
}

/// Writer-side content filtering: the reader announces its filter expression in SEDP, and
/// the writer (which reads the same type) sends it only the samples that pass, and the
/// disposes. Through loss, the reader gets exactly those, counts nothing lost, and the
/// writer's history lets go of everything.
#[test]
fn a_writer_sends_a_filtered_reader_only_what_passes() {
    let ty = Tick::dynamic_type();
    let expression = FilterExpression::new(&ty, "value >= %0 AND id <> 2", &["5"]).unwrap();
    let announced = ContentFilterProperty::sql(
        "ticks_filtered",
        "ticks",
        expression.text(),
        expression.parameters(),
    );
    let reader_side = {
        let ty = ty.clone();
        let expression = expression.clone();
        let filter: ContentFilter = std::sync::Arc::new(move |payload: &[u8]| {
            decode_dynamic(&ty, payload, false).is_ok_and(|v| expression.matches(&v))
        });
        filter
    };
    for seed in 0..6 {
        let mut net = pair_announcing(
            seed,
            clean_then_lossy(seed),
            reliable(EndpointQos::writer_default()),
            reliable(EndpointQos::reader_default()),
            Some(reader_side.clone()),
            PurgeDelays::default(),
            Some(announced.clone()),
        );
        let mut want = Vec::new();
        for value in 0..10 {
            for id in 1..=3 {
                write(&mut net, id, value);
                if value >= 5 && id != 2 {
                    want.push((id, value));
                }
            }
            net.advance(ms(1));
        }
        write_aged(
            &mut net,
            &Tick { id: 1, value: 0 },
            ChangeKind::Disposed,
            Duration::ZERO,
        );
        let acked = net.run_until(Duration::from_secs(30), |n| {
            n.nodes[0].rtps.writer(W).unwrap().all_acknowledged()
        });
        assert!(acked, "seed {seed}: not all acknowledged");
        let taken = take(&mut net);
        let mut got = values(&taken);
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "seed {seed}");
        assert!(
            taken
                .iter()
                .any(|t| !t.info.valid_data
                    && t.info.instance_state == InstanceState::NotAliveDisposed),
            "seed {seed}: the dispose of an instance the reader has did not come"
        );
        let filtered = 30 - want.len() as u64;
        assert_eq!(
            net.nodes[0].rtps.writer(W).unwrap().stats().filtered,
            filtered,
            "seed {seed}"
        );
        let received = net.nodes[1].rtps.reader(R).unwrap().stats();
        // The passing samples and the dispose, nothing else.
        assert_eq!(received.delivered, want.len() as u64 + 1, "seed {seed}");
        assert_eq!(received.lost, 0, "seed {seed}");
    }
}

/// A peer's filter the writer cannot take (nested 20,000 deep: hostile, or just more than
/// a filter may hold) is not evaluated on the writer's side — the writer neither overflows
/// its stack parsing it nor filters: it sends the reader everything.
#[test]
fn a_writer_sends_everything_to_a_reader_whose_filter_it_refuses() {
    let deep = "(".repeat(20_000) + "value >= 5" + &")".repeat(20_000);
    let announced = ContentFilterProperty::sql("ticks_filtered", "ticks", &deep, &[]);
    let mut net = pair_announcing(
        3,
        Faults::NONE,
        reliable(EndpointQos::writer_default()),
        reliable(EndpointQos::reader_default()),
        None,
        PurgeDelays::default(),
        Some(announced),
    );
    for value in 0..10 {
        write(&mut net, 1, value);
    }
    settle(&mut net);
    assert_eq!(values(&take(&mut net)).len(), 10);
    assert_eq!(net.nodes[0].rtps.writer(W).unwrap().stats().filtered, 0);
}

/// A writer with LIVELINESS `kind` and a lease of `lease_ms`, and a reliable reader that
/// requests nothing of it (an infinite lease).
fn liveliness_pair(seed: u64, kind: LivelinessKind, lease_ms: u64) -> Network {
    let mut writer_qos = reliable(EndpointQos::writer_default());
    writer_qos.liveliness.kind = kind;
    writer_qos.liveliness.lease_duration = qos::Duration::from_millis(lease_ms);
    pair(seed, writer_qos, reliable(EndpointQos::reader_default()))
}

/// The reader's LIVELINESS_CHANGED counts: (alive, not alive).
fn alive(net: &Network) -> (u32, u32) {
    let s = net.nodes[1]
        .data_reader_ref(R)
        .unwrap()
        .liveliness_changed();
    (s.alive_count, s.not_alive_count)
}

fn liveliness_events(net: &mut Network) -> Vec<(u32, u32)> {
    events(net, 1)
        .into_iter()
        .filter_map(|e| match e {
            Event::LivelinessChanged { reader: R, status } => {
                Some((status.alive_count, status.not_alive_count))
            }
            _ => None,
        })
        .collect()
}

/// The writer's LIVELINESS_LOST count.
fn lost_count(net: &Network) -> u64 {
    let w = net.nodes[0].data_writer_ref(W).unwrap();
    w.liveliness_lost().total_count
}

/// Cuts the simulated network (every datagram lost) or restores it.
fn cut(net: &mut Network, off: bool) {
    net.faults.loss = if off { 1.0 } else { 0.0 };
}

#[test]
fn an_automatic_writer_stays_alive_by_participant_messages_and_is_lost_when_cut_off() {
    // 300 ms lease, the participants' own leases 2 s: nothing but the participant
    // messages (every 100 ms) keeps an idle writer alive between SPDP announcements.
    let mut net = liveliness_pair(11, LivelinessKind::Automatic, 300);
    assert_eq!(alive(&net), (1, 0));
    net.advance(Duration::from_secs(3));
    assert_eq!(alive(&net), (1, 0), "participant messages renew it");
    let _ = liveliness_events(&mut net);
    // Cut off for 1 s (less than the participants' lease: still matched).
    cut(&mut net, true);
    net.advance(ms(1000));
    assert_eq!(alive(&net), (0, 1));
    assert_eq!(liveliness_events(&mut net), [(0, 1)]);
    assert_eq!(
        net.nodes[1]
            .data_reader_ref(R)
            .unwrap()
            .matches()
            .status()
            .current_count,
        1
    );
    cut(&mut net, false);
    net.advance(ms(500));
    assert_eq!(
        alive(&net),
        (1, 0),
        "back with the next participant message"
    );
    assert_eq!(liveliness_events(&mut net), [(1, 0)]);
}

#[test]
fn a_manual_by_topic_writer_lives_by_its_writes_and_assertions_only() {
    let mut net = liveliness_pair(12, LivelinessKind::ManualByTopic, 200);
    let written = net.now;
    write(&mut net, 1, 1);
    settle(&mut net);
    // Within the 200 ms lease of the write.
    net.advance(written.after(ms(190)).since(net.now));
    assert_eq!(alive(&net), (1, 0));
    let _ = take(&mut net);
    let _ = liveliness_events(&mut net);
    // Heartbeats and participant messages go on; they do not count for this kind.
    net.advance(ms(300));
    assert_eq!(alive(&net), (0, 1));
    assert_eq!(liveliness_events(&mut net), [(0, 1)]);
    // The writer side knows: LIVELINESS_LOST, once.
    let lost = events(&mut net, 0)
        .into_iter()
        .filter(|e| matches!(e, Event::LivelinessLost { writer: W, .. }))
        .count();
    assert_eq!(lost, 1);
    assert_eq!(lost_count(&net), 1);
    // Its instance has no live writer.
    let taken = take(&mut net);
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert!(!taken[0].info.valid_data);
    assert_eq!(
        taken[0].info.instance_state,
        InstanceState::NotAliveNoWriters
    );
    // An assertion without data: alive again.
    let now = net.now;
    net.nodes[0].assert_writer_liveliness(now, W);
    net.advance(ms(50));
    assert_eq!(alive(&net), (1, 0));
    assert_eq!(liveliness_events(&mut net), [(1, 0)]);
    // Then a write keeps it so, and revives the instance.
    net.advance(ms(150));
    write(&mut net, 1, 2);
    settle(&mut net);
    assert_eq!(alive(&net), (1, 0));
    let taken = take(&mut net);
    assert_eq!(values(&taken), [(1, 2)]);
    assert_eq!(taken[0].info.instance_state, InstanceState::Alive);
}

#[test]
fn a_manual_by_participant_writer_lives_by_its_participants_assertions() {
    let mut net = liveliness_pair(13, LivelinessKind::ManualByParticipant, 200);
    // The participant asserts every 100 ms for a second: no write, still alive.
    for _ in 0..10 {
        let now = net.now;
        net.nodes[0].assert_liveliness(now);
        net.advance(ms(100));
        assert_eq!(alive(&net), (1, 0));
    }
    // It stops: lost on both sides.
    net.advance(ms(300));
    assert_eq!(alive(&net), (0, 1));
    assert_eq!(lost_count(&net), 1);
    let now = net.now;
    net.nodes[0].assert_liveliness(now);
    net.advance(ms(50));
    assert_eq!(alive(&net), (1, 0));
}

#[test]
fn a_writer_with_an_infinite_lease_is_alive_until_it_goes() {
    let mut net = pair(
        14,
        reliable(EndpointQos::writer_default()),
        reliable(EndpointQos::reader_default()),
    );
    cut(&mut net, true);
    net.advance(ms(1500));
    assert_eq!(alive(&net), (1, 0));
    // Its participant's lease runs out: unmatched, counted out.
    net.advance(ms(3000));
    assert_eq!(alive(&net), (0, 0));
}

#[test]
fn a_disposed_instance_is_purged_exactly_after_its_delay_and_others_are_kept() {
    let mut net = pair_purging(
        15,
        PurgeDelays {
            no_writers: None,
            disposed: Some(ms(300)),
        },
    );
    // Written and disposed now: the dispose arrives 50 µs later (the network's latency).
    let disposed_at = net.now;
    for id in 0..2 {
        write(&mut net, id, 1);
    }
    write_aged(
        &mut net,
        &Tick { id: 0, value: 0 },
        ChangeKind::Disposed,
        Duration::ZERO,
    );
    settle(&mut net);
    // 300 ms from the dispose's arrival, instance 0 and its samples (read or not) are
    // gone; instance 1 stays. Read, so that nothing is taken.
    let now = net.now;
    let reader = net.nodes[1].data_reader(R).unwrap();
    assert_eq!(
        reader.collect(now, usize::MAX, false, Selection::ANY).len(),
        3
    );
    net.advance(disposed_at.after(ms(250)).since(net.now));
    assert_eq!(net.nodes[1].data_reader(R).unwrap().len(), 3);
    net.advance(disposed_at.after(ms(350)).since(net.now));
    let now = net.now;
    let left = net.nodes[1]
        .data_reader(R)
        .unwrap()
        .collect(now, usize::MAX, true, Selection::ANY);
    assert_eq!(values(&left), [(1, 1)]);
    // A new sample of instance 0 is a new instance, kept.
    write(&mut net, 0, 2);
    settle(&mut net);
    net.advance(ms(1000));
    assert_eq!(values(&take(&mut net)), [(0, 2)]);
}

#[test]
fn an_instance_without_writers_is_purged_after_its_delay() {
    let mut net = pair_purging(
        16,
        PurgeDelays {
            no_writers: Some(ms(200)),
            disposed: None,
        },
    );
    write(&mut net, 7, 1);
    settle(&mut net);
    assert_eq!(net.nodes[1].data_reader(R).unwrap().len(), 1);
    // The writer goes: the instance has no writers (an invalid sample says so), then,
    // 200 ms later, nothing is left.
    remove_the_writer(&mut net);
    assert_eq!(net.nodes[1].data_reader(R).unwrap().len(), 2);
    net.advance(ms(250));
    assert_eq!(net.nodes[1].data_reader(R).unwrap().len(), 0);
    assert!(take(&mut net).is_empty());
}

// PRESENTATION: node 0's publisher (group 1) has writers W ("ticks") and W2 ("tocks"),
// node 1's subscriber (group 7) readers R and R2 of the same topics.

const W2: EntityId = EntityId([0, 0, 2, 0x02]);
const R2: EntityId = EntityId([0, 0, 2, 0x07]);
const PUBLISHER: u32 = 1;
const SUBSCRIBER: u32 = 7;

fn presentation(
    scope: qos::PresentationAccessScope,
    coherent: bool,
    ordered: bool,
) -> qos::Presentation {
    qos::Presentation {
        access_scope: scope,
        coherent_access: coherent,
        ordered_access: ordered,
    }
}

/// The network of seed `seed` of four: clean for the first two, 20 % loss for the others.
fn clean_then_lossy(seed: u64) -> Faults {
    if seed < 2 {
        Faults::NONE
    } else {
        Faults::lossy(0.2)
    }
}

/// Two topics between a publisher and a subscriber with `p`, over `faults`; best-effort
/// when `reliable` is false.
fn group_pair(seed: u64, faults: Faults, p: qos::Presentation, reliable_: bool) -> Network {
    let mut net = Network::discovering_pair(seed, faults, |_, _| {});
    let now = net.now;
    let ty = Tick::dynamic_type();
    let mut wq = reliable(EndpointQos::writer_default());
    let mut rq = reliable(EndpointQos::reader_default());
    if !reliable_ {
        wq.reliability = Reliability::best_effort();
        rq.reliability = Reliability::best_effort();
    }
    wq.presentation = p;
    rq.presentation = p;
    for (w, r, topic) in [(W, R, "ticks"), (W2, R2, "tocks")] {
        let wg = Guid::new(net.nodes[0].rtps.prefix(), w);
        let config = WriterConfig {
            reliable: reliable_,
            history: WriterHistory::KeepAll,
            ..WriterConfig::default()
        };
        net.nodes[0].rtps.add_writer(Writer::new(wg, config));
        net.nodes[0].add_data_writer(w, DcpsWriter::new(&wq, now).with_group(PUBLISHER));
        net.nodes[0].add_local(
            now,
            LocalEndpoint {
                guid: wg,
                kind: EndpointKind::Writer,
                topic_name: topic.into(),
                type_name: "test::Tick".into(),
                qos: wq.clone(),
                keyed: true,
                ty: Some(ty.clone()),
                ignore_local: false,
                content_filter: None,
            },
        );
        let rg = Guid::new(net.nodes[1].rtps.prefix(), r);
        let limits = net.nodes[1].rtps.limits().clone();
        net.nodes[1]
            .rtps
            .add_reader(Reader::new(rg, limits.reader_config(reliable_)));
        net.nodes[1].add_data_reader(
            r,
            DcpsReader::new(&rq, &limits, InstanceKeys::Dynamic(ty.clone()), None)
                .with_group(SUBSCRIBER),
        );
        net.nodes[1].add_local(
            now,
            LocalEndpoint {
                guid: rg,
                kind: EndpointKind::Reader,
                topic_name: topic.into(),
                type_name: "test::Tick".into(),
                qos: rq.clone(),
                keyed: true,
                ty: Some(ty.clone()),
                ignore_local: false,
                content_filter: None,
            },
        );
    }
    let matched = net.run_until(Duration::from_secs(5), |n| {
        [W, W2].iter().all(|w| {
            n.nodes[0]
                .data_writer_ref(*w)
                .unwrap()
                .matches()
                .remotes()
                .len()
                == 1
        }) && [R, R2].iter().all(|r| {
            n.nodes[1]
                .data_reader_ref(*r)
                .unwrap()
                .matches()
                .remotes()
                .len()
                == 1
        })
    });
    assert!(matched, "seed {seed}: no match");
    net
}

fn write_with(net: &mut Network, writer: EntityId, id: i32, value: i32) {
    let now = net.now;
    let tick = Tick { id, value };
    let payload = ferrodds_cdr::serialize(&tick, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    let key = ferrodds_cdr::key_hash(&tick, XcdrVersion::Xcdr2).unwrap();
    let change = Change {
        original: None,
        coherence: None,
        kind: ChangeKind::Alive,
        key_hash: Some(key.0),
        timestamp: None,
        payload: payload.into(),
        reduced_payload: None,
    };
    net.nodes[0].write(now, writer, change).unwrap();
}

/// Samples held by node 1's reader `r` (read, not taken).
fn held(net: &mut Network, r: EntityId) -> usize {
    let now = net.now;
    net.nodes[1]
        .data_reader(r)
        .unwrap()
        .peek(now, Selection::ANY)
        .len()
}

fn take_from(net: &mut Network, r: EntityId) -> Vec<(i32, i32)> {
    let now = net.now;
    let taken = net.nodes[1]
        .data_reader(r)
        .unwrap()
        .collect(now, usize::MAX, true, Selection::ANY);
    values(&taken)
}

#[test]
fn a_coherent_set_is_held_back_until_it_ends_and_then_comes_whole() {
    use qos::PresentationAccessScope::Topic;
    for seed in 0..4 {
        let faults = clean_then_lossy(seed);
        let mut net = group_pair(seed, faults, presentation(Topic, true, false), true);
        write_with(&mut net, W, 1, 0);
        net.nodes[0].begin_coherent_changes(PUBLISHER);
        for v in 1..=3 {
            write_with(&mut net, W, v, v);
        }
        // Long enough for every change to arrive, even after repairs: only the change
        // before the set is there.
        net.advance(ms(500));
        assert_eq!(take_from(&mut net, R), [(1, 0)], "seed {seed}");
        let now = net.now;
        net.nodes[0].end_coherent_changes(now, PUBLISHER).unwrap();
        let mut seen = Vec::new();
        let whole = net.run_until(Duration::from_secs(5), |n| {
            let c = held(n, R);
            seen.push(c);
            c == 3
        });
        assert!(whole, "seed {seed}");
        assert!(
            seen.iter().all(|&c| c == 0 || c == 3),
            "seed {seed}: a part of the set was visible: {seen:?}"
        );
        assert_eq!(take_from(&mut net, R), [(1, 1), (2, 2), (3, 3)]);
    }
}

#[test]
fn a_group_set_goes_into_every_reader_of_the_subscriber_at_once() {
    use qos::PresentationAccessScope::Group;
    for seed in 0..4 {
        let faults = clean_then_lossy(seed);
        let mut net = group_pair(seed, faults, presentation(Group, true, false), true);
        for round in 0..3 {
            net.nodes[0].begin_coherent_changes(PUBLISHER);
            for v in 0..4 {
                write_with(&mut net, W, v, round);
                write_with(&mut net, W2, v, round);
            }
            let now = net.now;
            let ended = net.nodes[0].end_coherent_changes(now, PUBLISHER).unwrap();
            assert_eq!(ended, [W, W2]);
            let mut split = None;
            let whole = net.run_until(Duration::from_secs(5), |n| {
                let (a, b) = (held(n, R), held(n, R2));
                if a != b {
                    split = Some((a, b));
                }
                a == 4 && b == 4
            });
            assert!(whole, "seed {seed} round {round}");
            assert_eq!(
                split, None,
                "seed {seed} round {round}: one reader had it first"
            );
            assert_eq!(take_from(&mut net, R).len(), 4);
            assert_eq!(take_from(&mut net, R2).len(), 4);
        }
    }
}

#[test]
fn sets_that_complete_during_an_access_wait_for_its_end() {
    use qos::PresentationAccessScope::Group;
    let mut net = group_pair(1, Faults::NONE, presentation(Group, true, true), true);
    net.nodes[1].begin_access(SUBSCRIBER);
    net.nodes[0].begin_coherent_changes(PUBLISHER);
    write_with(&mut net, W, 1, 1);
    write_with(&mut net, W2, 1, 1);
    let now = net.now;
    net.nodes[0].end_coherent_changes(now, PUBLISHER).unwrap();
    settle(&mut net);
    net.advance(ms(100));
    assert_eq!((held(&mut net, R), held(&mut net, R2)), (0, 0));
    let now = net.now;
    net.nodes[1].end_access(now, SUBSCRIBER);
    assert_eq!((held(&mut net, R), held(&mut net, R2)), (1, 1));
    let arrived: Vec<_> = events(&mut net, 1)
        .into_iter()
        .filter_map(|e| match e {
            Event::DataAvailable { reader } => Some(reader),
            _ => None,
        })
        .collect();
    assert!(arrived.contains(&R) && arrived.contains(&R2), "{arrived:?}");
}

#[test]
fn a_best_effort_reader_drops_the_sets_it_did_not_receive_whole() {
    use qos::PresentationAccessScope::Topic;
    let mut net = group_pair(
        3,
        Faults::lossy(0.3),
        presentation(Topic, true, false),
        false,
    );
    for set in 0..40 {
        net.nodes[0].begin_coherent_changes(PUBLISHER);
        // A datagram each: changes written at once would share one.
        for v in 0..3 {
            write_with(&mut net, W, v, set);
            net.advance(ms(2));
        }
        let now = net.now;
        net.nodes[0].end_coherent_changes(now, PUBLISHER).unwrap();
        net.advance(ms(20));
    }
    net.advance(ms(200));
    let got = take_from(&mut net, R);
    let mut per_set = std::collections::BTreeMap::new();
    for (_, set) in &got {
        *per_set.entry(*set).or_insert(0) += 1;
    }
    assert!(
        per_set.values().all(|&n| n == 3),
        "a partial set: {per_set:?}"
    );
    let dropped = net.nodes[1]
        .data_reader_ref(R)
        .unwrap()
        .coherent_sets_dropped();
    // 30 % loss: some sets came whole and some did not, and every set is one or the other.
    assert!(
        !per_set.is_empty() && dropped > 0,
        "{} whole, {dropped} dropped",
        per_set.len()
    );
}

#[test]
fn ordered_access_of_instance_scope_hands_out_each_instance_together() {
    use qos::PresentationAccessScope::{Instance, Topic};
    for (scope, grouped) in [(Instance, true), (Topic, false)] {
        let mut net = group_pair(1, Faults::NONE, presentation(scope, false, true), true);
        for round in 0..3 {
            for id in 0..3 {
                write_with(&mut net, W, id, round);
            }
        }
        settle(&mut net);
        let ids: Vec<i32> = take_from(&mut net, R).iter().map(|t| t.0).collect();
        if grouped {
            assert_eq!(ids, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        } else {
            assert_eq!(ids, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
        }
    }
}

#[test]
fn group_ordered_access_lists_the_readers_in_the_order_the_publisher_wrote() {
    use qos::PresentationAccessScope::Group;
    for seed in 0..4 {
        let faults = clean_then_lossy(seed);
        let mut net = group_pair(seed, faults, presentation(Group, false, true), true);
        // Interleaved across the two writers (their own order, and the publisher's).
        let writes = [
            (W, 0),
            (W2, 1),
            (W2, 2),
            (W, 3),
            (W2, 4),
            (W, 5),
            (W, 6),
            (W2, 7),
        ];
        for &(w, v) in &writes {
            write_with(&mut net, w, v, v);
        }
        let arrived = net.run_until(Duration::from_secs(5), |n| held(n, R) + held(n, R2) == 8);
        assert!(arrived, "seed {seed}");
        let now = net.now;
        net.nodes[1].begin_access(SUBSCRIBER);
        let order = net.nodes[1].readers_in_order(SUBSCRIBER, now, Selection::ANY);
        let expected: Vec<EntityId> = writes
            .iter()
            .map(|&(w, _)| if w == W { R } else { R2 })
            .collect();
        assert_eq!(order, expected, "seed {seed}");
        // Reading one sample from each in turn reads them as they were written.
        let mut read = Vec::new();
        for r in order {
            let now = net.now;
            let taken = net.nodes[1]
                .data_reader(r)
                .unwrap()
                .collect(now, 1, true, Selection::ANY);
            read.extend(values(&taken).into_iter().map(|(v, _)| v));
        }
        let now = net.now;
        net.nodes[1].end_access(now, SUBSCRIBER);
        assert_eq!(read, [0, 1, 2, 3, 4, 5, 6, 7], "seed {seed}");
        // Without group order (TOPIC scope) the readers come one after the other.
        let mut net = group_pair(
            seed,
            faults,
            presentation(qos::PresentationAccessScope::Topic, false, true),
            true,
        );
        for &(w, v) in &writes {
            write_with(&mut net, w, v, v);
        }
        let arrived = net.run_until(Duration::from_secs(5), |n| held(n, R) + held(n, R2) == 8);
        assert!(arrived, "seed {seed}");
        let now = net.now;
        let order = net.nodes[1].readers_in_order(SUBSCRIBER, now, Selection::ANY);
        assert_eq!(order, [R, R, R, R, R2, R2, R2, R2], "seed {seed}");
    }
}

#[test]
fn history_relayed_for_a_writer_is_taken_in_once() {
    // W is TRANSIENT; a second writer relays W's changes as a durability service does
    // (PID_ORIGINAL_WRITER_INFO). The TRANSIENT_LOCAL reader had them from W: it drops the
    // copies and takes in only what comes after.
    const RELAY: EntityId = EntityId([0, 0, 3, 0x02]);
    let mut wq = reliable(EndpointQos::writer_default());
    wq.durability = qos::Durability::Transient;
    let mut rq = reliable(EndpointQos::reader_default());
    rq.durability = qos::Durability::TransientLocal;
    let mut net = pair(5, wq.clone(), rq);
    for v in 1..=3 {
        write(&mut net, v, v);
    }
    settle(&mut net);
    assert_eq!(values(&take(&mut net)), [(1, 1), (2, 2), (3, 3)]);
    let now = net.now;
    let relay = Guid::new(net.nodes[0].rtps.prefix(), RELAY);
    let config = WriterConfig {
        reliable: true,
        history: WriterHistory::KeepAll,
        ..WriterConfig::default()
    };
    net.nodes[0].rtps.add_writer(Writer::new(relay, config));
    net.nodes[0].add_data_writer(RELAY, DcpsWriter::new(&wq, now));
    net.nodes[0].add_local(
        now,
        LocalEndpoint {
            guid: relay,
            kind: EndpointKind::Writer,
            topic_name: "ticks".into(),
            type_name: "test::Tick".into(),
            qos: wq,
            keyed: true,
            ty: Some(Tick::dynamic_type()),
            ignore_local: false,
            content_filter: None,
        },
    );
    let matched = net.run_until(Duration::from_secs(5), |n| {
        n.nodes[1]
            .data_reader_ref(R)
            .unwrap()
            .matches()
            .remotes()
            .len()
            == 2
    });
    assert!(matched);
    let original = Guid::new(net.nodes[0].rtps.prefix(), W);
    // W's changes 2 and 3 again, then a change 4 the reader never had.
    for (sn, value) in [(2, 2), (3, 3), (4, 4)] {
        let tick = Tick { id: value, value };
        let payload =
            ferrodds_cdr::serialize(&tick, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
        let key = ferrodds_cdr::key_hash(&tick, XcdrVersion::Xcdr2).unwrap();
        let change = Change {
            coherence: None,
            original: Some(Box::new(
                ferrodds_rtps::original_writer::OriginalWriterInfo {
                    writer: original,
                    sequence_number: ferrodds_rtps::wire::SequenceNumber(sn),
                },
            )),
            kind: ChangeKind::Alive,
            key_hash: Some(key.0),
            timestamp: None,
            payload: payload.into(),
            reduced_payload: None,
        };
        let now = net.now;
        net.nodes[0].write(now, RELAY, change).unwrap();
    }
    let acked = net.run_until(Duration::from_secs(5), |n| {
        n.nodes[0].rtps.writer(RELAY).unwrap().all_acknowledged()
    });
    assert!(acked);
    assert_eq!(values(&take(&mut net)), [(4, 4)]);
    assert_eq!(
        net.nodes[1]
            .data_reader_ref(R)
            .unwrap()
            .relayed_duplicates(),
        2
    );
}

/// A remote endpoint of a topic with another type (another name, no type information):
/// INCONSISTENT_TOPIC once per remote endpoint, an event and a count on both sides, and
/// no match.
#[test]
fn a_topic_of_another_type_is_inconsistent_on_both_sides() {
    let mut net = Network::discovering_pair(71, Faults::NONE, |_, _| {});
    let now = net.now;
    let endpoint = |guid, kind, type_name: &str| LocalEndpoint {
        guid,
        kind,
        topic_name: "ticks".into(),
        type_name: type_name.into(),
        qos: reliable(EndpointQos::writer_default()),
        keyed: true,
        ty: None,
        ignore_local: false,
        content_filter: None,
    };
    let w = Guid::new(net.nodes[0].rtps.prefix(), W);
    net.nodes[0]
        .rtps
        .add_writer(Writer::new(w, WriterConfig::default()));
    net.nodes[0].add_data_writer(W, DcpsWriter::new(&EndpointQos::writer_default(), now));
    net.nodes[0].add_local(now, endpoint(w, EndpointKind::Writer, "test::Tick"));
    let r = Guid::new(net.nodes[1].rtps.prefix(), R);
    let limits = net.nodes[1].rtps.limits().clone();
    net.nodes[1]
        .rtps
        .add_reader(Reader::new(r, limits.reader_config(true)));
    net.nodes[1].add_data_reader(
        R,
        DcpsReader::new(
            &EndpointQos::reader_default(),
            &limits,
            InstanceKeys::Dynamic(Tick::dynamic_type()),
            None,
        ),
    );
    net.nodes[1].add_local(now, endpoint(r, EndpointKind::Reader, "test::Tock"));
    let seen = net.run_until(Duration::from_secs(5), |n| {
        n.nodes[0].inconsistent_topic("ticks").total_count == 1
            && n.nodes[1].inconsistent_topic("ticks").total_count == 1
    });
    assert!(seen, "INCONSISTENT_TOPIC on both sides");
    net.advance(Duration::from_secs(2));
    for node in 0..2 {
        let inconsistent: Vec<u64> = events(&mut net, node)
            .into_iter()
            .filter_map(|e| match e {
                Event::InconsistentTopic { topic, total_count } if topic == "ticks" => {
                    Some(total_count)
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            inconsistent,
            vec![1],
            "node {node}: one event, for one remote endpoint"
        );
        assert_eq!(net.nodes[node].inconsistent_topic("ticks").total_count, 1);
        assert_eq!(net.nodes[node].inconsistent_topic("other").total_count, 0);
    }
    assert!(net.nodes[0]
        .data_writer_ref(W)
        .unwrap()
        .matches()
        .remotes()
        .is_empty());
}
