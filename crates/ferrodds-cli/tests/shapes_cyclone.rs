//! FerroDDS's `shape_main` against Cyclone DDS (PyPI `cyclonedds` 11.0.1, through
//! `tests/interop/shapes_cyclone.py`), case by case as the OMG interoperability suite runs
//! them, in both directions: FerroDDS publishing to Cyclone, and Cyclone publishing to
//! FerroDDS. Each family has its own domain (0–6, 11–17).
//!
//! Needs python3 with cyclonedds and multicast on `lo` (root turns it on here).

mod shapes_common;

use std::time::Duration;

use shapes_common::Code::*;
use shapes_common::*;

const F: Vendor = Vendor::Ferro;
const C: Vendor = Vendor::Cyclone;

/// The case with FerroDDS publishing to Cyclone, then with Cyclone publishing to FerroDDS.
fn both(
    name: &str,
    publisher: &str,
    subscriber: &str,
    codes: [Code; 2],
    check: Check,
    delay: Duration,
) {
    directions(name, publisher, subscriber, [codes, codes], check, delay);
}

/// As [`both`], with the codes expected when FerroDDS publishes and when Cyclone does.
fn directions(
    name: &str,
    publisher: &str,
    subscriber: &str,
    codes: [[Code; 2]; 2],
    check: Check,
    delay: Duration,
) {
    for ((p, s), codes) in [(F, C), (C, F)].into_iter().zip(codes) {
        let name = format!("{name} ({p:?} -> {s:?})");
        Case::new(&name, &[(p, publisher), (s, subscriber)], &codes)
            .check(check)
            .delay(delay)
            .run();
    }
}

const DELAY: Duration = Duration::from_millis(300);

#[test]
fn domain() {
    both(
        "Test_Domain_0",
        "-P -t Square -d 0",
        "-S -t Square -d 0 -b",
        [Ok, Ok],
        basic,
        DELAY,
    );
    both(
        "Test_Domain_1",
        "-P -t Square -d 0",
        "-S -t Square -d 1",
        [ReaderNotMatched, DataNotReceived],
        basic,
        DELAY,
    );
}

#[test]
fn data_representation() {
    both(
        "Test_DataRepresentation_0",
        "-P -t Square -x 1 -d 2",
        "-S -t Square -x 1 -d 2",
        [Ok, Ok],
        basic,
        DELAY,
    );
    both(
        "Test_DataRepresentation_1",
        "-P -t Square -x 1 -d 2",
        "-S -t Square -x 2 -d 2",
        [IncompatibleQos, IncompatibleQos],
        basic,
        DELAY,
    );
    both(
        "Test_DataRepresentation_2",
        "-P -t Square -x 2 -d 2",
        "-S -t Square -x 1 -d 2",
        [IncompatibleQos, IncompatibleQos],
        basic,
        DELAY,
    );
    both(
        "Test_DataRepresentation_3",
        "-P -t Square -x 2 -d 2",
        "-S -t Square -x 2 -b -d 2",
        [Ok, Ok],
        basic,
        DELAY,
    );
}

#[test]
fn reliability() {
    both(
        "Test_Reliability_0",
        "-P -t Square -b -z 0 -d 3",
        "-S -t Square -b -d 3",
        [Ok, Ok],
        order_w_instances,
        DELAY,
    );
    both(
        "Test_Reliability_1",
        "-P -t Square -b -d 3",
        "-S -t Square -r -d 3",
        [IncompatibleQos, IncompatibleQos],
        basic,
        DELAY,
    );
    both(
        "Test_Reliability_4",
        "-P -t Square -r -k 0 -z 0 -d 3",
        "-S -t Square -r -k 0 -d 3",
        [Ok, Ok],
        reliability_no_losses_w_instances,
        DELAY,
    );
    both(
        "Test_Reliability_5",
        "-P -t Square -r -k 0 -z 0 --num-instances 4 -d 3",
        "-S -t Square -r -k 0 -d 3",
        [Ok, Ok],
        reliability_no_losses_w_instances,
        DELAY,
    );
}

#[test]
fn history() {
    both(
        "Test_History_1",
        "-P -t Square -r -k 5 -z 0 --write-period 50 --num-instances 4 -d 4",
        "-S -t Square -r -k 5 --read-period 200 -d 4",
        [Ok, Ok],
        reliability_no_losses_w_instances,
        DELAY,
    );
}

#[test]
fn topic() {
    both(
        "Test_Topic_0",
        "-P -t Circle -d 5",
        "-S -t Circle -d 5",
        [Ok, Ok],
        basic,
        DELAY,
    );
    both(
        "Test_Topic_1",
        "-P -t Square -d 5",
        "-S -t Circle -d 5",
        [ReaderNotMatched, DataNotReceived],
        basic,
        DELAY,
    );
}

#[test]
fn partition() {
    both(
        "Test_Partition_0",
        "-P -t Square -p \"p1\" -d 6",
        "-S -t Square -p \"p1\" -d 6",
        [Ok, Ok],
        basic,
        DELAY,
    );
    both(
        "Test_Partition_1",
        "-P -t Square -p \"p1\" -d 6",
        "-S -t Square -p \"p2\" -d 6",
        [ReaderNotMatched, DataNotReceived],
        basic,
        DELAY,
    );
    // Two publishers of one vendor, the subscriber of the other.
    for (p, s) in [(F, C), (C, F)] {
        Case::new(
            &format!("Test_Partition_2 ({p:?} -> {s:?})"),
            &[
                (p, "-P -t Square -p \"p1\" -c BLUE -d 6"),
                (p, "-P -t Square -p \"x1\" -c RED -d 6"),
                (s, "-S -t Square -p \"p*\" -d 6"),
            ],
            &[Ok, ReaderNotMatched, ReceivingFromOne],
        )
        .check(color_receivers)
        .run();
    }
}

#[test]
fn durability() {
    both(
        "Test_Durability_1",
        "-P -t Square -D v -d 11",
        "-S -t Square -D l -d 11",
        [IncompatibleQos, IncompatibleQos],
        basic,
        DELAY,
    );
    both(
        "Test_Durability_4",
        "-P -t Square -D l -d 11",
        "-S -t Square -D v -d 11",
        [Ok, Ok],
        basic,
        DELAY,
    );
    both(
        "Test_Durability_16",
        "-P -t Square -z 0 -r -k 0 -D v -w -d 11",
        "-S -t Square -r -k 0 -D v -d 11",
        [Ok, Ok],
        durability_volatile,
        Duration::from_secs(1),
    );
    // TRANSIENT and PERSISTENT, both ways: what matches, and data flowing while the
    // writer lives (Cyclone's application passes the kinds to Cyclone as they are).
    for (name, publisher, subscriber, codes) in [
        (
            "Test_Durability_2",
            "v",
            "t",
            [IncompatibleQos, IncompatibleQos],
        ),
        (
            "Test_Durability_6",
            "l",
            "t",
            [IncompatibleQos, IncompatibleQos],
        ),
        ("Test_Durability_8", "t", "v", [Ok, Ok]),
        ("Test_Durability_9", "t", "l", [Ok, Ok]),
        ("Test_Durability_10", "t", "t", [Ok, Ok]),
        (
            "Test_Durability_11",
            "t",
            "p",
            [IncompatibleQos, IncompatibleQos],
        ),
        ("Test_Durability_14", "p", "t", [Ok, Ok]),
        ("Test_Durability_15", "p", "p", [Ok, Ok]),
    ] {
        both(
            name,
            &format!("-P -t Square -D {publisher} -d 11"),
            &format!("-S -t Square -D {subscriber} -d 11"),
            codes,
            basic,
            DELAY,
        );
    }
    // A Cyclone writer keeps for late joiners what its DURABILITY_SERVICE history says,
    // KEEP_LAST 1 by default (the suite's Cyclone application does not change it), whatever
    // its own history: the FerroDDS reader gets the latest sample, not the first. Cyclone's
    // own reader gets the same.
    directions(
        "Test_Durability_17",
        "-P -t Square -z 0 -r -k 0 -D l -w -d 11",
        "-S -t Square -r -k 0 -D l -d 11",
        [[Ok, Ok], [Ok, DataNotCorrect]],
        durability_transient_local,
        Duration::from_secs(1),
    );
}

#[test]
fn final_instance_state() {
    // The suite writes 200 iterations; 40 say the same in a fifth of the time.
    both(
        "Test_FinalInstanceState_0",
        "-P -t Square --num-iterations 40 --num-instances 4 --final-instance-state u -d 12",
        "-S -t Square -d 12",
        [Ok, Ok],
        unregistering_w_instances,
        DELAY,
    );
    both(
        "Test_FinalInstanceState_1",
        "-P -t Square --num-iterations 40 --num-instances 4 --final-instance-state d -d 12",
        "-S -t Square -d 12",
        [Ok, Ok],
        disposing_w_instances,
        DELAY,
    );
    // No final state: the writer is deleted. A Cyclone writer deleted with
    // autodispose_unregistered_instances (the default) sends no dispose; only Cyclone's own
    // readers infer one. A FerroDDS reader sees the writer go: NOT_ALIVE_NO_WRITERS, as the
    // suite expects.
    both(
        "Test_FinalInstanceState_2",
        "-P -t Square --num-iterations 40 --num-instances 4 -d 12",
        "-S -t Square -d 12",
        [Ok, Ok],
        unregistering_w_instances,
        DELAY,
    );
}

#[test]
fn large_data() {
    both(
        "Test_LargeData_0",
        "-P -t Square -r -k 0 --additional-payload-size 100000 -d 13",
        "-S -t Square -r -k 0 -d 13",
        [Ok, Ok],
        large_payload,
        DELAY,
    );
}

#[test]
fn deadline() {
    both(
        "Test_Deadline_2",
        "-P -t Square -f 7000 -d 14",
        "-S -t Square -f 5000 -d 14",
        [IncompatibleQos, IncompatibleQos],
        basic,
        DELAY,
    );
    both(
        "Test_Deadline_3",
        "-P -t Square -f 2000 -w --write-period 3000 -d 14",
        "-S -t Square -f 2000 -d 14",
        [DeadlineMissed, DeadlineMissed],
        deadline_missed,
        DELAY,
    );
}

#[test]
fn ownership() {
    both(
        "Test_Ownership_1",
        "-P -t Square -s -1 -d 15",
        "-S -t Square -s 1 -d 15",
        [IncompatibleQos, IncompatibleQos],
        basic,
        DELAY,
    );
    for (p, s) in [(F, C), (C, F)] {
        Case::new(
            &format!("Test_Ownership_3 ({p:?} -> {s:?})"),
            &[
                (p, "-P -t Square -s 3 -r -k 0 -c BLUE -z 20 -d 15"),
                (p, "-P -t Square -s 4 -r -k 0 -c BLUE -z 30 -d 15"),
                (s, "-S -t Square -s 1 -r -k 0 -d 15"),
            ],
            &[Ok, Ok, ReceivingFromOne],
        )
        .check(size_receivers)
        .run();
    }
}

#[test]
fn content_filter() {
    for (p, s) in [(F, C), (C, F)] {
        Case::new(
            &format!("Test_Cft_0 ({p:?} -> {s:?})"),
            &[
                (p, "-P -t Square -r -k 0 -c BLUE -d 16"),
                (p, "-P -t Square -r -k 0 -c RED -d 16"),
                (s, "-S -t Square -r -k 0 -c RED -d 16"),
            ],
            &[Ok, Ok, ReceivingFromOne],
        )
        .check(color_receivers)
        .run();
    }
}

#[test]
fn time_based_filter_and_lifespan() {
    both(
        "Test_TimeBasedFilter_1",
        "-P -t Square -r -k 0 -z 0 --write-period 100 --num-instances 4 -d 17",
        "-S -t Square -r -k 0 --time-filter 1000 -d 17",
        [Ok, Ok],
        one_sample_every_10,
        DELAY,
    );
    both(
        "Test_Lifespan_1",
        "-P -t Square -r -k 0 -z 0 --write-period 100 --lifespan 250 --num-instances 4 -d 17",
        "-S -t Square -r -k 0 --read-period 500 -d 17",
        [Ok, Ok],
        lifespan_2_3_consecutive,
        DELAY,
    );
}
