//! The busy-poll mode's polling and the threads that wait: a thread waiting for data polls
//! the participant's channels itself while the polling thread naps, and gives them back
//! when it stops waiting. A binary of its own: a listener anywhere in the process turns
//! the taking over off (the listeners must run on the polling thread), and the tests
//! beside this one install listeners.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ferrodds::{DomainParticipant, Qos};
use ferrodds_cdr::Cdr;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Polled")]
struct Polled {
    #[cdr(key)]
    id: i32,
    text: String,
}

const T: Duration = Duration::from_secs(10);

fn participant(busy: bool) -> DomainParticipant {
    DomainParticipant::builder()
        .unwrap()
        .domain_id(221)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .busy_poll(busy)
        .build()
        .unwrap()
}

/// The user and system time of this process's threads named `name`, in clock ticks.
fn cpu_ticks(name: &str) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else {
            continue;
        };
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap();
        // After the name in parentheses: state is field 3, utime 14, stime 15.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        total += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    }
    total
}

#[test]
fn a_waiting_thread_polls_for_the_polling_thread_and_gives_it_back() {
    let (a, b) = (participant(false), participant(true));
    let writer = a
        .create_writer(
            &a.create_topic::<Polled>("polled").unwrap(),
            Qos::writer().reliable().keep_all(),
        )
        .unwrap();
    let reader = b
        .create_reader(
            &b.create_topic::<Polled>("polled").unwrap(),
            Qos::reader().reliable().keep_all(),
        )
        .unwrap();
    writer.wait_for_matched(1, T).unwrap();
    reader.wait_for_matched(1, T).unwrap();
    let sample = |id| Polled {
        id,
        text: "polled".into(),
    };

    // Nothing comes for 600 ms while the application thread waits: it polls, and the
    // polling thread naps (one wake-up per 200 µs, not a core).
    let before = cpu_ticks("ferrodds-poll");
    assert!(!reader.wait_for_data(Duration::from_millis(600)));
    let napping = cpu_ticks("ferrodds-poll") - before;
    assert!(
        napping <= 15,
        "the polling thread used {napping} ticks of 600 ms while a thread waited"
    );

    // A sample that comes during a wait is received by the waiting thread.
    let w = writer.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        w.write(&sample(1)).unwrap();
    });
    assert!(reader.wait_for_data(T));
    t.join().unwrap();
    assert_eq!(reader.take().unwrap().len(), 1);

    // Nobody waits: the polling thread polls again, and receives what comes.
    writer.write(&sample(2)).unwrap();
    let deadline = Instant::now() + T;
    let mut got = Vec::new();
    while got.is_empty() && Instant::now() < deadline {
        got = reader.take().unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(got.len(), 1, "received with nobody waiting");
    assert_eq!(got[0].value(), Some(&sample(2)));
}
