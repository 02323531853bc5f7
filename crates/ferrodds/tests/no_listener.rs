//! "No listener" installs none. A test binary of its own: whether a listener was installed
//! is the process's, and every other test binary sets some.
//!
//! A listener installed anywhere in a process keeps its waiting threads from receiving for
//! themselves (they hand every datagram to the receive threads, which run listeners).
//! The C# binding, as DCPS's PSM does, creates every entity with a null listener and an
//! empty mask: when that counted as a listener, a C# program's waits all slept and were
//! woken through the scheduler (80,000 context switches a second in the round-trip
//! benchmark's pong, against 600 for the same program in C).

#![allow(clippy::unwrap_used)]

use ferrodds::{DomainParticipant, Qos, StatusMask};
use ferrodds_cdr::Cdr;

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "test::Quiet")]
struct Quiet {
    #[cdr(key)]
    id: i32,
}

#[test]
fn empty_masks_and_removed_listeners_leave_waiting_threads_receiving() {
    let p = DomainParticipant::builder()
        .unwrap()
        .domain_id(222)
        .interface("lo")
        .unwrap()
        .allow_multicast(false)
        .build()
        .unwrap();
    let topic = p.create_topic::<Quiet>("quiet").unwrap();
    let publisher = p.create_publisher(&[]);
    let subscriber = p.create_subscriber(&[]);
    let writer = publisher.create_writer(&topic, Qos::writer()).unwrap();
    let reader = subscriber.create_reader(&topic, Qos::reader()).unwrap();
    assert!(ferrodds::waiting_threads_receive(), "nothing set yet");

    // What a binding does for "no listener" on each kind of entity.
    p.set_listener(StatusMask::NONE, |_, _| {});
    publisher.set_listener(StatusMask::NONE, |_, _| {});
    subscriber.set_listener(StatusMask::NONE, |_, _| {});
    writer.set_listener(StatusMask::NONE, |_| {});
    reader.set_listener(StatusMask::NONE, |_| {});
    topic.remove_listener();
    assert!(
        ferrodds::waiting_threads_receive(),
        "an empty mask or a removal is no listener"
    );

    // A listener with a status in its mask is one.
    subscriber.set_listener(StatusMask::ALL, |_, _| {});
    assert!(!ferrodds::waiting_threads_receive());
}
