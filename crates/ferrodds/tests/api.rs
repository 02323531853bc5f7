//! The waiting and notification parts of the API, over loopback: wait sets (read and
//! status conditions), the data-available listener, `take_async` under a hand-made
//! executor, the asynchronous publish mode, and read versus take.

#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use ferrodds::{
    Condition, DataReader, DataWriter, DomainParticipant, Guid, PublishMode, Qos, SampleState,
    StatusKind, StatusMask, ViewState, WaitSet,
};
use ferrodds_cdr::Cdr;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Note")]
struct Note {
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

const T: Duration = Duration::from_secs(10);

#[test]
fn a_wait_set_wakes_on_matches_and_on_data() {
    let (a, b) = (participant(30), participant(30));
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("w").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    let mut ws = WaitSet::new(&b);
    let matched = ws.attach(Condition::subscription_matched(&reader));
    let data = ws.attach(Condition::read(&reader));
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("w").unwrap(),
            Qos::writer().reliable(),
        )
        .unwrap();
    assert_eq!(ws.wait(T).unwrap(), vec![matched]);
    writer.wait_for_matched(1, T).unwrap();
    writer
        .write(&Note {
            id: 1,
            text: "hi".into(),
        })
        .unwrap();
    let deadline = Instant::now() + T;
    loop {
        let fired = ws.wait(T).unwrap();
        if fired.contains(&data) {
            break;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(reader.take().unwrap()[0].data.as_ref().unwrap().text, "hi");
    let mut empty = WaitSet::new(&b);
    assert!(
        empty.wait(Duration::from_millis(10)).is_err(),
        "no conditions: an error, not a hang"
    );
    empty.attach(Condition::read(&reader));
    assert!(
        empty.wait(Duration::from_millis(50)).is_err(),
        "times out when nothing holds"
    );
}

#[test]
fn status_conditions_hold_until_the_status_is_read_and_statuses_count_changes_since() {
    let (a, b) = (participant(196), participant(196));
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("sc").unwrap(),
            Qos::writer().reliable(),
        )
        .unwrap();
    let mut ws = WaitSet::new(&a);
    let matched =
        ws.attach(writer.status_condition(StatusMask::of(&[StatusKind::PublicationMatched])));
    let short = Duration::from_millis(100);
    assert!(ws.wait(short).is_err(), "nothing matched yet");

    let reader = b
        .create_reader(
            &b.create_topic::<Note>("sc").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    assert_eq!(ws.wait(T).unwrap(), vec![matched]);
    let s = writer.publication_matched_status();
    assert_eq!((s.total_count, s.current_count), (1, 1));
    assert_eq!((s.total_count_change, s.current_count_change), (1, 1));
    assert!(ws.wait(short).is_err(), "read: no change since");
    let s = writer.publication_matched_status();
    assert_eq!((s.total_count_change, s.current_count_change), (0, 0));

    // A condition on another status does not wake for this one.
    let mut other = WaitSet::new(&a);
    other.attach(writer.status_condition(StatusMask::of(&[StatusKind::LivelinessLost])));
    assert!(other.wait(short).is_err());

    let reader_data = reader.status_condition(StatusMask::of(&[StatusKind::DataAvailable]));
    let mut data = WaitSet::new(&b);
    data.attach(reader_data);
    writer
        .write(&Note {
            id: 1,
            text: "hi".into(),
        })
        .unwrap();
    assert_eq!(data.wait(T).unwrap(), vec![0]);
    assert_eq!(reader.take().unwrap().len(), 1);
    assert!(data.wait(short).is_err(), "taken: no data available");

    drop(reader);
    assert_eq!(ws.wait(T).unwrap(), vec![matched], "the reader left");
    let s = writer.publication_matched_status();
    assert_eq!((s.total_count, s.current_count), (1, 0));
    assert_eq!((s.total_count_change, s.current_count_change), (0, -1));
}

#[test]
fn content_filtered_readers_and_query_conditions_keep_what_their_sql_selects() {
    let p = participant(197);
    let topic = p.create_topic::<Note>("q").unwrap();
    let dynamic = p
        .create_dynamic_topic("q", "test::Note", Note::dynamic_type())
        .unwrap();
    let qos = || Qos::reader().reliable().keep_all();
    let filtered = p
        .create_filtered_reader(&dynamic, qos(), "id >= %0 AND text LIKE 'k%'", &["2"])
        .unwrap();
    let all = p.create_dynamic_reader(&dynamic, qos()).unwrap();
    let writer = p.create_writer(&topic, Qos::writer().reliable()).unwrap();
    writer.wait_for_matched(2, T).unwrap();
    for (id, text) in [(1, "keep"), (2, "keep"), (3, "drop"), (4, "kite")] {
        writer
            .write(&Note {
                id,
                text: text.into(),
            })
            .unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let ids = |samples: Vec<ferrodds::Sample<ferrodds::dynamic::DynamicValue>>| -> Vec<i64> {
        samples
            .iter()
            .map(|s| match s.data.as_ref().unwrap() {
                ferrodds::dynamic::DynamicValue::Struct(m) => match m[0] {
                    Some(ferrodds::dynamic::DynamicValue::Int(i)) => i,
                    ref other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(ids(filtered.take().unwrap()), vec![2, 4]);

    // A query condition wakes only while samples it keeps are waiting; a query take
    // takes exactly those.
    let odd = all.query("id = 1 OR id = %0", &["3"]).unwrap();
    let mut ws = WaitSet::new(&p);
    ws.attach(all.query_condition(ferrodds::Selection::ANY, odd.clone()));
    assert_eq!(ws.wait(T).unwrap(), vec![0]);
    assert_eq!(
        ids(all.take_query(10, ferrodds::Selection::ANY, &odd).unwrap()),
        vec![1, 3]
    );
    assert!(
        ws.wait(Duration::from_millis(100)).is_err(),
        "none left that it keeps"
    );
    assert_eq!(ids(all.take().unwrap()), vec![2, 4]);

    let err = all.query("id = 'one'", &[]).unwrap_err();
    assert!(
        err.to_string().contains("cannot be compared with id"),
        "{err}"
    );
    match p.create_filtered_reader(&dynamic, qos(), "weight > 2", &[]) {
        Err(e) => assert!(e.to_string().contains("weight: no such member"), "{e}"),
        Ok(_) => panic!("a filter on a member the type does not have"),
    }
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Other")]
struct Other {
    x: f64,
}

#[test]
fn a_topic_of_another_type_is_an_inconsistent_topic_at_both_ends() {
    let (a, b) = (participant(199), participant(199));
    let heard = Arc::new(AtomicUsize::new(0));
    let h = heard.clone();
    let fallback = Arc::new(AtomicUsize::new(0));
    let f = fallback.clone();
    b.set_listener(
        StatusMask::of(&[StatusKind::InconsistentTopic]),
        move |_, kind| {
            assert_eq!(kind, StatusKind::InconsistentTopic);
            f.fetch_add(1, Ordering::SeqCst);
        },
    );
    let ta = a.create_topic::<Note>("clash").unwrap();
    ta.set_listener(move |kind| {
        assert_eq!(kind, StatusKind::InconsistentTopic);
        h.fetch_add(1, Ordering::SeqCst);
    });
    let tb = b.create_topic::<Other>("clash").unwrap();
    let _writer = a.create_writer(&ta, Qos::writer()).unwrap();
    let reader = b.create_reader(&tb, Qos::reader()).unwrap();
    let deadline = Instant::now() + T;
    while (heard.load(Ordering::SeqCst) == 0 || fallback.load(Ordering::SeqCst) == 0)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        heard.load(Ordering::SeqCst),
        1,
        "the topic's listener, once"
    );
    assert_eq!(
        fallback.load(Ordering::SeqCst),
        1,
        "b's topic has none: b's participant"
    );
    let s = ta.inconsistent_topic_status();
    assert_eq!((s.total_count, s.total_count_change), (1, 1));
    let s = ta.inconsistent_topic_status();
    assert_eq!((s.total_count, s.total_count_change), (1, 0));
    assert_eq!(tb.inconsistent_topic_status().total_count, 1);
    assert_eq!(reader.subscription_matched_status().current_count, 0);
    // The same type: consistent, and matched.
    let same = a.create_topic::<Note>("fine").unwrap();
    let w = a.create_writer(&same, Qos::writer()).unwrap();
    let _r = b
        .create_reader(&b.create_topic::<Note>("fine").unwrap(), Qos::reader())
        .unwrap();
    w.wait_for_matched(1, T).unwrap();
    assert_eq!(same.inconsistent_topic_status().total_count, 0);
}

#[test]
fn the_data_available_listener_runs_for_new_samples() {
    let (a, b) = (participant(31), participant(31));
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("l").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    reader.set_data_available_listener(move || {
        c.fetch_add(1, Ordering::SeqCst);
    });
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("l").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    for i in 0..5 {
        writer
            .write(&Note {
                id: i,
                text: format!("n{i}"),
            })
            .unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let deadline = Instant::now() + T;
    while calls.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let n = calls.load(Ordering::SeqCst);
    assert!((1..=5).contains(&n), "called once per arrival batch: {n}");
}

#[test]
fn status_listeners_hear_matches_incompatibility_and_missed_deadlines() {
    // Domain 31 is shared with the data-available test: a partition of its own keeps this
    // one apart.
    let (a, b) = (participant(31), participant(31));
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let hear = |who: &'static str| {
        let heard = Arc::clone(&heard);
        move |kind: StatusKind| heard.lock().unwrap().push((who, kind))
    };
    let part = ["status-listeners"];
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("s").unwrap(),
            Qos::reader()
                .reliable()
                .partition(part)
                .deadline(Duration::from_millis(50)),
        )
        .unwrap();
    reader.set_status_listener(hear("reader"));
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("s").unwrap(),
            Qos::writer()
                .reliable()
                .partition(part)
                .deadline(Duration::from_millis(50)),
        )
        .unwrap();
    writer.set_status_listener(hear("writer"));
    // A best-effort writer a reliable reader cannot match.
    let weak = a
        .create_writer(
            &a.create_topic::<Note>("s").unwrap(),
            Qos::writer().best_effort().partition(part),
        )
        .unwrap();
    weak.set_status_listener(hear("weak"));
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    writer
        .write(&Note {
            id: 1,
            text: "once".into(),
        })
        .unwrap();
    let wanted = [
        ("writer", StatusKind::PublicationMatched),
        ("reader", StatusKind::SubscriptionMatched),
        ("reader", StatusKind::RequestedIncompatibleQos),
        ("weak", StatusKind::OfferedIncompatibleQos),
        // One sample, then nothing for longer than the 50 ms deadline.
        ("writer", StatusKind::OfferedDeadlineMissed),
        ("reader", StatusKind::RequestedDeadlineMissed),
    ];
    let deadline = Instant::now() + T;
    let all_heard = || wanted.iter().all(|w| heard.lock().unwrap().contains(w));
    while !all_heard() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let got = heard.lock().unwrap().clone();
    for w in &wanted {
        assert!(got.contains(w), "{w:?} not heard; heard {got:?}");
    }
    assert_eq!(weak.publication_matched_status().current_count, 0);
}

/// A minimal executor: polls on the current thread, parks until woken.
fn block_on<F: Future>(f: F, timeout: Duration) -> Option<F::Output> {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let deadline = Instant::now() + timeout;
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return Some(v);
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        std::thread::park_timeout(left);
    }
}

#[test]
fn take_async_resolves_under_any_executor() {
    let (a, b) = (participant(32), participant(32));
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("a").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("a").unwrap(),
            Qos::writer().reliable(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    let w = writer.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        w.write(&Note {
            id: 9,
            text: "async".into(),
        })
        .unwrap();
    });
    let got = block_on(reader.take_async(), T)
        .expect("woken by the participant")
        .unwrap();
    t.join().unwrap();
    assert_eq!(
        got[0].data.clone().unwrap(),
        Note {
            id: 9,
            text: "async".into()
        }
    );
}

#[test]
fn asynchronous_publication_still_delivers() {
    let (a, b) = (participant(33), participant(33));
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("p").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("p").unwrap(),
            Qos::writer()
                .reliable()
                .keep_all()
                .publish_mode(PublishMode::Asynchronous),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    for i in 0..20 {
        writer
            .write(&Note {
                id: i % 4,
                text: format!("{i}"),
            })
            .unwrap();
    }
    writer.wait_for_acknowledgments(T).unwrap();
    let mut got = Vec::new();
    while got.len() < 20 && reader.wait_for_data(T) {
        got.extend(
            reader
                .take()
                .unwrap()
                .into_iter()
                .filter_map(|s| s.data)
                .map(|d| d.text),
        );
    }
    assert_eq!(got, (0..20).map(|i| i.to_string()).collect::<Vec<_>>());
}

#[test]
fn read_keeps_samples_and_marks_them_read() {
    let (a, b) = (participant(34), participant(34));
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("r").unwrap(),
            Qos::reader().reliable().keep_last(5),
        )
        .unwrap();
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("r").unwrap(),
            Qos::writer().reliable(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    writer
        .write(&Note {
            id: 1,
            text: "x".into(),
        })
        .unwrap();
    assert!(reader.wait_for_data(T));
    let first = reader.read().unwrap();
    assert_eq!(
        (first[0].info.sample_state, first[0].info.view_state),
        (SampleState::NotRead, ViewState::New)
    );
    let second = reader.read().unwrap();
    assert_eq!(
        (second[0].info.sample_state, second[0].info.view_state),
        (SampleState::Read, ViewState::NotNew)
    );
    assert!(reader.read_unread().unwrap().is_empty());
    assert_eq!(reader.take().unwrap().len(), 1);
    assert!(reader.take().unwrap().is_empty());
}

/// A waker whose clones can be counted (`Arc::strong_count`).
struct Counted;

impl Wake for Counted {
    fn wake(self: Arc<Self>) {}
}

#[test]
fn a_pending_take_async_holds_one_waker_however_often_it_is_polled() {
    let p = participant(36);
    let reader = p
        .create_reader(
            &p.create_topic::<Note>("idle").unwrap(),
            Qos::reader().reliable(),
        )
        .unwrap();
    let counted = Arc::new(Counted);
    let waker = Waker::from(Arc::clone(&counted));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(reader.take_async());
    for _ in 0..100 {
        assert!(future.as_mut().poll(&mut cx).is_pending());
    }
    // Ours, the `waker` above, and the one the reader keeps.
    assert_eq!(Arc::strong_count(&counted), 3);
}

#[test]
fn publishers_and_subscribers_refuse_a_topic_of_another_participant() {
    let (a, b) = (participant(36), participant(36));
    let topic = a.create_topic::<Note>("theirs").unwrap();
    let publisher = b.create_publisher(&["p"]);
    let subscriber = b.create_subscriber(&[]);
    let err = publisher
        .create_writer(&topic, Qos::writer())
        .err()
        .expect("a writer of another participant's topic");
    assert!(err.to_string().contains("another participant"), "{err}");
    assert!(subscriber.create_reader(&topic, Qos::reader()).is_err());
    assert!(subscriber
        .create_reader_with_filter(&topic, Qos::reader(), |_| true)
        .is_err());
    // Their own participant's topic is fine.
    let own = b.create_topic::<Note>("theirs").unwrap();
    assert!(publisher.create_writer(&own, Qos::writer()).is_ok());
}

#[test]
fn a_spinning_wait_sees_data_during_and_after_its_spin_and_times_out_without() {
    let spin = Duration::from_millis(5);
    let a = participant(33);
    let b = DomainParticipant::builder()
        .unwrap()
        .domain_id(33)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .wait_spin(spin)
        .build()
        .unwrap();
    let qos = || Qos::reader().reliable().keep_all();
    let reader = b
        .create_reader(&b.create_topic::<Note>("spin").unwrap(), qos())
        .unwrap();
    let writer = Arc::new(
        a.create_writer(
            &a.create_topic::<Note>("spin").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap(),
    );
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    // Nothing written: false, whether the timeout is shorter or longer than the spin.
    assert!(!reader.wait_for_data(Duration::from_millis(2)));
    assert!(!reader.wait_for_data(Duration::from_millis(30)));
    // Written at once (during the spin) and after it (found by the sleeping wait).
    for (id, delay) in [(1, Duration::ZERO), (2, spin * 10)] {
        let w = Arc::clone(&writer);
        let t = std::thread::spawn(move || {
            std::thread::sleep(delay);
            w.write(&Note {
                id,
                text: "spun".into(),
            })
            .unwrap();
        });
        assert!(reader.wait_for_data(T), "sample {id} not seen");
        let got = reader.take().unwrap();
        assert_eq!(
            got.iter()
                .map(|s| s.value().unwrap().id)
                .collect::<Vec<_>>(),
            [id]
        );
        t.join().unwrap();
    }
}

/// A waiting thread receives from the shared-memory inbox itself while it spins — but not
/// once the process has listeners: a listener would then run inside the application's
/// wait (where a lock held around the wait and taken in the listener deadlocks).
#[test]
fn listeners_run_on_the_participants_threads_never_inside_a_wait() {
    // Shared memory between two participants of the process (the in-process queue off);
    // the waiting one spins long enough for the sample to come within its spin.
    let over_shm = |spin| {
        DomainParticipant::builder()
            .unwrap()
            .domain_id(219)
            .interface("lo")
            .unwrap()
            .allow_multicast(false)
            .in_process(false)
            .wait_spin(spin)
            .build()
            .unwrap()
    };
    let (a, b) = (
        over_shm(Duration::ZERO),
        over_shm(Duration::from_millis(10)),
    );
    let qos = || Qos::reader().reliable().keep_all();
    let reader = b
        .create_reader(&b.create_topic::<Note>("inside").unwrap(), qos())
        .unwrap();
    let ran_on = Arc::new(std::sync::Mutex::new(Vec::new()));
    let r = Arc::clone(&ran_on);
    reader.set_data_available_listener(move || {
        r.lock().unwrap().push(std::thread::current().id());
    });
    let writer = Arc::new(
        a.create_writer(
            &a.create_topic::<Note>("inside").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap(),
    );
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    let w = Arc::clone(&writer);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1));
        w.write(&Note {
            id: 1,
            text: "during the spin".into(),
        })
        .unwrap();
    });
    assert!(reader.wait_for_data(T));
    t.join().unwrap();
    assert_eq!(reader.take().unwrap().len(), 1);
    let deadline = Instant::now() + T;
    while ran_on.lock().unwrap().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let ran_on = ran_on.lock().unwrap();
    assert!(!ran_on.is_empty(), "the listener ran");
    assert!(
        !ran_on.contains(&std::thread::current().id()),
        "not on the waiting thread"
    );
    // The writer's side: the sample went out before it came in (the reader's
    // acknowledgment may still be on its way).
    assert!(
        a.datagrams_by_transport()
            .iter()
            .any(|(name, n)| *name == "shared-memory" && *n > 0),
        "over shared memory: {:?}",
        a.datagrams_by_transport()
    );
}

#[test]
fn set_qos_moves_a_writer_between_partitions_and_refuses_immutable_policies() {
    let (a, b) = (participant(200), participant(200));
    let reader = b
        .create_reader(
            &b.create_topic::<Note>("moving").unwrap(),
            Qos::reader().reliable().keep_all().partition(["there"]),
        )
        .unwrap();
    let writer = a
        .create_writer(
            &a.create_topic::<Note>("moving").unwrap(),
            Qos::writer().reliable().keep_all().partition(["here"]),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(writer.publication_matched_status().current_count, 0);
    // Into the reader's partition: they match, and samples flow.
    writer
        .set_qos(Qos::writer().reliable().keep_all().partition(["there"]))
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    let note = Note {
        id: 1,
        text: "moved".into(),
    };
    writer.write(&note).unwrap();
    assert!(reader.wait_for_data(T));
    let taken: Vec<Note> = reader
        .take()
        .unwrap()
        .into_iter()
        .filter_map(|s| s.data)
        .collect();
    assert_eq!(taken, [note]);
    // A policy that may not change: an error naming it, and nothing changed.
    let refused = writer.set_qos(Qos::writer().reliable().keep_last(3).partition(["there"]));
    assert!(
        matches!(refused, Err(ferrodds::Error::ImmutablePolicy("HISTORY"))),
        "{refused:?}"
    );
    let refused = reader.set_qos(Qos::reader().best_effort().keep_all().partition(["there"]));
    assert!(
        matches!(
            refused,
            Err(ferrodds::Error::ImmutablePolicy("RELIABILITY"))
        ),
        "{refused:?}"
    );
    assert_eq!(writer.publication_matched_status().current_count, 1);
    // The reader leaves for another partition: both ends see the match end.
    reader
        .set_qos(Qos::reader().reliable().keep_all().partition(["gone"]))
        .unwrap();
    let end = Instant::now() + T;
    while writer.publication_matched_status().current_count != 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(writer.publication_matched_status().current_count, 0);
    assert_eq!(reader.subscription_matched_status().current_count, 0);
}

#[test]
fn a_publishers_new_partition_moves_the_writers_it_made() {
    let (a, b) = (participant(201), participant(201));
    let subscriber = b.create_subscriber(&["there"]);
    let reader = subscriber
        .create_reader(
            &b.create_topic::<Note>("regrouped").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    let publisher = a.create_publisher(&["here"]);
    let writer = publisher
        .create_writer(
            &a.create_topic::<Note>("regrouped").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(writer.publication_matched_status().current_count, 0);
    // The publisher moves: its writer with it (and the writers it makes later).
    publisher.set_partition(["there"]);
    assert_eq!(publisher.partition(), ["there"]);
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    let later = publisher
        .create_writer(
            &a.create_topic::<Note>("regrouped").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    later.wait_for_matched(1, T).unwrap();
    // The subscriber moves away: both writers lose the reader.
    subscriber.set_partition(["elsewhere"]);
    let end = Instant::now() + T;
    while (writer.publication_matched_status().current_count != 0
        || later.publication_matched_status().current_count != 0)
        && Instant::now() < end
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(writer.publication_matched_status().current_count, 0);
    assert_eq!(later.publication_matched_status().current_count, 0);
    assert_eq!(reader.subscription_matched_status().current_count, 0);
}

/// A participant's USER_DATA changes (`set_user_data`, DCPS `set_qos`) and its peer shows
/// the new bytes from the next announcement, which goes out at once.
#[test]
fn a_participants_user_data_changes_and_its_peers_see_it() {
    let a = DomainParticipant::builder()
        .unwrap()
        .domain_id(203)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .user_data(b"first".to_vec())
        .build()
        .unwrap();
    let built = Instant::now();
    let b = participant(203);
    let seen_by_b = |b: &DomainParticipant| {
        b.discovered_participant_data()
            .into_iter()
            .find(|p| p.guid.prefix == a.guid_prefix())
            .map(|p| p.user_data.value)
    };
    let deadline = Instant::now() + T;
    while seen_by_b(&b).as_deref() != Some(&b"first"[..]) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(seen_by_b(&b).as_deref(), Some(&b"first"[..]));
    assert_eq!(a.user_data(), b"first");

    // Past the start-up announcements (20, 100 and 500 ms apart): the next periodic one is
    // 2 s after the last of them, so a change seen within half a second went out at once.
    std::thread::sleep(Duration::from_millis(800).saturating_sub(built.elapsed()));
    a.set_user_data(b"second".to_vec()).unwrap();
    assert_eq!(a.user_data(), b"second");
    let deadline = Instant::now() + Duration::from_millis(500);
    while seen_by_b(&b).as_deref() != Some(&b"second"[..]) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        seen_by_b(&b).as_deref(),
        Some(&b"second"[..]),
        "not announced at once"
    );
}

/// A topic's TOPIC_DATA (`set_topic_data`, DCPS `set_qos` of a topic) goes out with its
/// writer and reader at once, and with an endpoint made later; a peer sees each change.
#[test]
fn a_topics_data_goes_out_with_its_endpoints_and_changes() {
    let a = participant(204);
    let b = participant(204);
    let topic = a.create_topic::<Note>("topic_data").unwrap();
    let writer = a.create_writer(&topic, Qos::writer().reliable()).unwrap();
    let seen = |guid: Guid| {
        b.discovered_endpoints()
            .into_iter()
            .find(|e| e.data.guid == guid)
            .map(|e| e.data.qos.topic_data.value)
    };
    let wait_for = |guid: Guid, want: &[u8]| {
        let deadline = Instant::now() + T;
        while seen(guid).as_deref() != Some(want) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(seen(guid).as_deref(), Some(want), "{guid:?}");
    };
    wait_for(writer.guid(), b"");
    topic.set_topic_data(b"first".to_vec());
    assert_eq!(topic.topic_data(), b"first");
    wait_for(writer.guid(), b"first");
    // A reader made afterwards, from another topic object of the same name, announces it.
    let again = a.create_topic::<Note>("topic_data").unwrap();
    let reader = a.create_reader(&again, Qos::reader().reliable()).unwrap();
    wait_for(reader.guid(), b"first");
    again.set_topic_data(b"second".to_vec());
    wait_for(writer.guid(), b"second");
    wait_for(reader.guid(), b"second");
    // The writer still matches its reader: TOPIC_DATA changes nothing of a match.
    writer.wait_for_matched(1, T).unwrap();
}

/// The threads of this process named `name` (`/proc/self/task/*/comm`), once at most
/// `most` of them or 2 s have passed (a thread of a timer that just ended may linger).
fn threads_named(name: &str, most: usize) -> usize {
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
        if n <= most || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A writer of `topic` in the first of `participants` and a reader in each other one,
/// the writer matched by every reader.
fn writer_and_readers(
    participants: &[DomainParticipant],
    topic: &str,
    writer_qos: Qos,
    reader_qos: Qos,
) -> (DataWriter<Note>, Vec<DataReader<Note>>) {
    let topics: Vec<_> = participants
        .iter()
        .map(|p| p.create_topic::<Note>(topic).unwrap())
        .collect();
    let writer = participants[0]
        .create_writer(&topics[0], writer_qos)
        .unwrap();
    let readers: Vec<_> = participants[1..]
        .iter()
        .zip(&topics[1..])
        .map(|(p, t)| p.create_reader(t, reader_qos.clone()).unwrap())
        .collect();
    writer
        .wait_for_matched(readers.len(), T)
        .expect("matched by every reader");
    (writer, readers)
}

/// The participants of a process share one timer thread, which keeps each one's deadlines:
/// three participants match each other's endpoints and keep their leases alive through it.
#[test]
fn the_participants_of_a_process_share_one_timer_thread() {
    // A lease of 3 s, which only the announcements the timer thread sends keep alive.
    let participants: Vec<DomainParticipant> = (0..3)
        .map(|_| {
            DomainParticipant::builder()
                .unwrap()
                .domain_id(214)
                .interface("lo")
                .unwrap()
                .allow_multicast(false)
                .lease_duration(Duration::from_secs(3))
                .build()
                .unwrap()
        })
        .collect();
    assert_eq!(threads_named("ferrodds-timer", 1), 1);
    let (_writer, readers) = writer_and_readers(
        &participants,
        "shared_timer",
        Qos::writer().reliable(),
        Qos::reader().reliable(),
    );
    // After more than two leases every participant still sees the two others.
    std::thread::sleep(Duration::from_secs(7));
    for p in &participants {
        assert_eq!(p.discovered_participants().len(), 2);
    }
    drop(readers);
}

/// The participants of a process with one configuration share their in-process queue and
/// shared-memory inbox (one each, with one thread): a writer whose readers are in two of
/// them sends each sample once, which each of the two takes.
#[test]
fn the_participants_of_a_process_share_their_ways_in() {
    let build = || {
        DomainParticipant::builder()
            .unwrap()
            .domain_id(215)
            .interface("lo")
            .unwrap()
            .build()
            .unwrap()
    };
    let participants: Vec<DomainParticipant> = (0..3).map(|_| build()).collect();
    let (writer, readers) = writer_and_readers(
        &participants,
        "shared_ways",
        Qos::writer().best_effort(),
        Qos::reader().best_effort(),
    );
    for r in &readers {
        r.wait_for_matched(1, T).unwrap();
    }
    let in_process = |p: &DomainParticipant| {
        p.datagrams_by_transport()
            .into_iter()
            .find(|(n, _)| *n == "in-process")
            .map(|(_, c)| c)
            .expect("an in-process transport")
    };
    let before = in_process(&participants[0]);
    const N: i32 = 20;
    for id in 0..N {
        writer
            .write(&Note {
                id,
                text: "both".into(),
            })
            .unwrap();
    }
    for r in &readers {
        let mut got = Vec::new();
        let deadline = Instant::now() + T;
        while got.len() < N as usize && Instant::now() < deadline {
            r.wait_for_data(Duration::from_millis(100));
            got.extend(
                r.take()
                    .unwrap()
                    .into_iter()
                    .filter_map(|s| s.data.map(|d| d.id)),
            );
        }
        assert_eq!(got, (0..N).collect::<Vec<_>>());
    }
    // One datagram a sample for the two readers (their participants share a locator;
    // with a queue each, it was two).
    let sent = in_process(&participants[0]) - before;
    assert!(sent <= N as u64, "{sent} datagrams for {N} samples");
}

/// The voluntary context switches of thread `tid` of this process (Linux).
fn voluntary_switches(tid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_thread_waiting_for_one_readers_data_sleeps_through_another_readers() {
    let (a, b) = (participant(220), participant(220));
    let qos = || Qos::reader().reliable().keep_last(1000);
    let quiet = b
        .create_reader(&b.create_topic::<Note>("quiet").unwrap(), qos())
        .unwrap();
    let busy = b
        .create_reader(&b.create_topic::<Note>("busy").unwrap(), qos())
        .unwrap();
    let wq = Qos::writer().reliable().keep_last(1000);
    let to_quiet = a
        .create_writer(&a.create_topic::<Note>("quiet").unwrap(), wq.clone())
        .unwrap();
    let to_busy = a
        .create_writer(&a.create_topic::<Note>("busy").unwrap(), wq)
        .unwrap();
    for w in [&to_quiet, &to_busy] {
        w.wait_for_matched(1, T).unwrap();
    }
    quiet.wait_for_matched(1, T).unwrap();
    busy.wait_for_matched(1, T).unwrap();

    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let me = std::fs::read_link("/proc/thread-self").unwrap();
        tid_tx
            .send(me.file_name().unwrap().to_string_lossy().into_owned())
            .unwrap();
        quiet.wait_for_data(T)
    });
    let tid = tid_rx.recv_timeout(T).unwrap();
    // Past its spin, asleep.
    std::thread::sleep(Duration::from_millis(100));
    let before = voluntary_switches(&tid);
    const SAMPLES: usize = 200;
    let mut got = 0;
    for id in 0..SAMPLES as i32 {
        to_busy
            .write(&Note {
                id,
                text: "for the other reader".into(),
            })
            .unwrap();
        // One at a time, so that each comes in a datagram of its own.
        let deadline = Instant::now() + T;
        while got <= id as usize && Instant::now() < deadline {
            if busy.wait_for_data(T) {
                got += busy.take().unwrap().len();
            }
        }
    }
    assert_eq!(got, SAMPLES);
    let woken = voluntary_switches(&tid) - before;
    // Before, every datagram woke it (at least one switch per sample: 224 seen); now only
    // what is not an input's data may (a discovery announcement, a timer's turn: 1-4
    // seen, alone and beside the other tests).
    assert!(
        woken < SAMPLES as u64 / 10,
        "the waiter was woken {woken} times by {SAMPLES} samples for another reader"
    );
    to_quiet
        .write(&Note {
            id: 1,
            text: "for it".into(),
        })
        .unwrap();
    assert!(waiter.join().unwrap(), "its own data wakes it");
}
