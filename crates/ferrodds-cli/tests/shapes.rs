//! FerroDDS's `shape_main` against itself, case by case as the OMG interoperability suite
//! (omg-dds/dds-rtps, `test_suite.py`) runs them: the same options, the same lines looked
//! for, the same return codes expected. Each family has its own domain (0–6, 11–19, 21–24) so
//! that families run in parallel. Iteration counts and samples read are smaller than the
//! suite's (see `shapes_common`).

mod shapes_common;

use std::time::Duration;

use shapes_common::Code::*;
use shapes_common::*;

const F: Vendor = Vendor::Ferro;

/// A publisher and a subscriber, both FerroDDS.
fn pair<'a>(name: &'a str, publisher: &'a str, subscriber: &'a str, codes: [Code; 2]) -> Case<'a> {
    Case::new(name, &[(F, publisher), (F, subscriber)], &codes)
}

#[test]
fn domain() {
    pair(
        "Test_Domain_0",
        "-P -t Square -d 0",
        "-S -t Square -d 0 -b",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Domain_1",
        "-P -t Square -d 0",
        "-S -t Square -d 1",
        [ReaderNotMatched, DataNotReceived],
    )
    .run();
    pair(
        "Test_Domain_2",
        "-P -t Square -d 1",
        "-S -t Square -d 1 -b",
        [Ok, Ok],
    )
    .run();
}

#[test]
fn data_representation() {
    pair(
        "Test_DataRepresentation_0",
        "-P -t Square -x 1 -d 2",
        "-S -t Square -x 1 -d 2",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_DataRepresentation_1",
        "-P -t Square -x 1 -d 2",
        "-S -t Square -x 2 -d 2",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_DataRepresentation_2",
        "-P -t Square -x 2 -d 2",
        "-S -t Square -x 1 -d 2",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_DataRepresentation_3",
        "-P -t Square -x 2 -d 2",
        "-S -t Square -x 2 -b -d 2",
        [Ok, Ok],
    )
    .run();
}

#[test]
fn reliability() {
    pair(
        "Test_Reliability_0",
        "-P -t Square -b -z 0 -d 3",
        "-S -t Square -b -d 3",
        [Ok, Ok],
    )
    .check(order_w_instances)
    .run();
    pair(
        "Test_Reliability_1",
        "-P -t Square -b -d 3",
        "-S -t Square -r -d 3",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Reliability_2",
        "-P -t Square -r -d 3",
        "-S -t Square -b -d 3",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Reliability_4",
        "-P -t Square -r -k 0 -z 0 -d 3",
        "-S -t Square -r -k 0 -d 3",
        [Ok, Ok],
    )
    .check(reliability_no_losses_w_instances)
    .run();
    pair(
        "Test_Reliability_5",
        "-P -t Square -r -k 0 -z 0 --num-instances 4 -d 3",
        "-S -t Square -r -k 0 -d 3",
        [Ok, Ok],
    )
    .check(reliability_no_losses_w_instances)
    .run();
}

#[test]
fn history() {
    pair(
        "Test_History_0",
        "-P -t Square -r -k 5 -z 0 --write-period 50 -d 4",
        "-S -t Square -r -k 5 --read-period 200 -d 4",
        [Ok, Ok],
    )
    .check(reliability_no_losses_w_instances)
    .run();
    pair(
        "Test_History_1",
        "-P -t Square -r -k 5 -z 0 --write-period 50 --num-instances 4 -d 4",
        "-S -t Square -r -k 5 --read-period 200 -d 4",
        [Ok, Ok],
    )
    .check(reliability_no_losses_w_instances)
    .run();
}

#[test]
fn topic() {
    pair(
        "Test_Topic_0",
        "-P -t Circle -d 5",
        "-S -t Circle -d 5",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Topic_1",
        "-P -t Square -d 5",
        "-S -t Circle -d 5",
        [ReaderNotMatched, DataNotReceived],
    )
    .run();
}

#[test]
fn partition() {
    pair(
        "Test_Partition_0",
        "-P -t Square -p \"p1\" -d 6",
        "-S -t Square -p \"p1\" -d 6",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Partition_1",
        "-P -t Square -p \"p1\" -d 6",
        "-S -t Square -p \"p2\" -d 6",
        [ReaderNotMatched, DataNotReceived],
    )
    .run();
    Case::new(
        "Test_Partition_2",
        &[
            (F, "-P -t Square -p \"p1\" -c BLUE -d 6"),
            (F, "-P -t Square -p \"x1\" -c RED -d 6"),
            (F, "-S -t Square -p \"p*\" -d 6"),
        ],
        &[Ok, ReaderNotMatched, ReceivingFromOne],
    )
    .check(color_receivers)
    .run();
}

#[test]
fn durability() {
    pair(
        "Test_Durability_0",
        "-P -t Square -D v -d 11",
        "-S -t Square -D v -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_1",
        "-P -t Square -D v -d 11",
        "-S -t Square -D l -d 11",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Durability_4",
        "-P -t Square -D l -d 11",
        "-S -t Square -D v -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_5",
        "-P -t Square -D l -d 11",
        "-S -t Square -D l -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_16",
        "-P -t Square -z 0 -r -k 0 -D v -w -d 11",
        "-S -t Square -r -k 0 -D v -d 11",
        [Ok, Ok],
    )
    .check(durability_volatile)
    .delay(Duration::from_secs(1))
    .run();
    pair(
        "Test_Durability_17",
        "-P -t Square -z 0 -r -k 0 -D l -w -d 11",
        "-S -t Square -r -k 0 -D l -d 11",
        [Ok, Ok],
    )
    .check(durability_transient_local)
    .delay(Duration::from_secs(1))
    .run();
    // TRANSIENT and PERSISTENT: what matches, and data flowing while the writer lives.
    pair(
        "Test_Durability_2",
        "-P -t Square -D v -d 11",
        "-S -t Square -D t -d 11",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Durability_3",
        "-P -t Square -D v -d 11",
        "-S -t Square -D p -d 11",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Durability_6",
        "-P -t Square -D l -d 11",
        "-S -t Square -D t -d 11",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Durability_7",
        "-P -t Square -D l -d 11",
        "-S -t Square -D p -d 11",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Durability_8",
        "-P -t Square -D t -d 11",
        "-S -t Square -D v -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_9",
        "-P -t Square -D t -d 11",
        "-S -t Square -D l -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_10",
        "-P -t Square -D t -d 11",
        "-S -t Square -D t -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_11",
        "-P -t Square -D t -d 11",
        "-S -t Square -D p -d 11",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Durability_12",
        "-P -t Square -D p -d 11",
        "-S -t Square -D v -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_13",
        "-P -t Square -D p -d 11",
        "-S -t Square -D l -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_14",
        "-P -t Square -D p -d 11",
        "-S -t Square -D t -d 11",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Durability_15",
        "-P -t Square -D p -d 11",
        "-S -t Square -D p -d 11",
        [Ok, Ok],
    )
    .run();
}

#[test]
fn final_instance_state() {
    // The suite writes 200 iterations; 40 say the same in a fifth of the time.
    pair(
        "Test_FinalInstanceState_0",
        "-P -t Square --num-iterations 40 --num-instances 4 --final-instance-state u -d 12",
        "-S -t Square -d 12",
        [Ok, Ok],
    )
    .check(unregistering_w_instances)
    .run();
    pair(
        "Test_FinalInstanceState_1",
        "-P -t Square --num-iterations 40 --num-instances 4 --final-instance-state d -d 12",
        "-S -t Square -d 12",
        [Ok, Ok],
    )
    .check(disposing_w_instances)
    .run();
    pair(
        "Test_FinalInstanceState_2",
        "-P -t Square --num-iterations 40 --num-instances 4 -d 12",
        "-S -t Square -d 12",
        [Ok, Ok],
    )
    .check(unregistering_w_instances)
    .run();
}

#[test]
fn large_data() {
    pair(
        "Test_LargeData_0",
        "-P -t Square -r -k 0 --additional-payload-size 100000 -d 13",
        "-S -t Square -r -k 0 -d 13",
        [Ok, Ok],
    )
    .check(large_payload)
    .run();
}

#[test]
fn deadline() {
    pair(
        "Test_Deadline_0",
        "-P -t Square -f 3000 -d 14",
        "-S -t Square -f 5000 -d 14",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Deadline_2",
        "-P -t Square -f 7000 -d 14",
        "-S -t Square -f 5000 -d 14",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Deadline_3",
        "-P -t Square -f 2000 -w --write-period 3000 -d 14",
        "-S -t Square -f 2000 -d 14",
        [DeadlineMissed, DeadlineMissed],
    )
    .check(deadline_missed)
    .run();
}

#[test]
fn ownership() {
    pair(
        "Test_Ownership_0",
        "-P -t Square -s -1 -d 15",
        "-S -t Square -s -1 -d 15",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_Ownership_1",
        "-P -t Square -s -1 -d 15",
        "-S -t Square -s 1 -d 15",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_Ownership_2",
        "-P -t Square -s 3 -d 15",
        "-S -t Square -s -1 -d 15",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    Case::new(
        "Test_Ownership_3",
        &[
            (F, "-P -t Square -s 3 -r -k 0 -c BLUE -z 20 -d 15"),
            (F, "-P -t Square -s 4 -r -k 0 -c BLUE -z 30 -d 15"),
            (F, "-S -t Square -s 1 -r -k 0 -d 15"),
        ],
        &[Ok, Ok, ReceivingFromOne],
    )
    .check(size_receivers)
    .run();
    Case::new(
        "Test_Ownership_4",
        &[
            (F, "-P -t Square -s 3 -r -k 0 -c BLUE -z 20 -d 15"),
            (F, "-P -t Square -s 4 -r -k 0 -c RED -z 30 -d 15"),
            (F, "-S -t Square -s 1 -r -k 0 -d 15"),
        ],
        &[Ok, Ok, ReceivingFromBoth],
    )
    .check(size_receivers)
    .run();
    Case::new(
        "Test_Ownership_5",
        &[
            (F, "-P -t Square -s -1 -r -k 0 -c BLUE -z 20 -d 15"),
            (F, "-P -t Square -s -1 -r -k 0 -c BLUE -z 30 -d 15"),
            (F, "-S -t Square -s -1 -r -k 0 -d 15"),
        ],
        &[Ok, Ok, ReceivingFromBoth],
    )
    .check(size_receivers)
    .run();
}

#[test]
fn content_filter() {
    Case::new(
        "Test_Cft_0",
        &[
            (F, "-P -t Square -r -k 0 -c BLUE -d 16"),
            (F, "-P -t Square -r -k 0 -c RED -d 16"),
            (F, "-S -t Square -r -k 0 -c RED -d 16"),
        ],
        &[Ok, Ok, ReceivingFromOne],
    )
    .check(color_receivers)
    .run();
    pair(
        "Test_Cft_1",
        "-P -t Square -r -k 0 -z 0 --size-modulo 50 -d 16",
        "-S -t Square -r -k 0 --cft \"shapesize <= 20\" -d 16",
        [Ok, Ok],
    )
    .check(size_less_than_20)
    .run();
    // An expression the filter grammar refuses.
    pair(
        "cft_refused",
        "-P -t Square -d 16",
        "-S -t Square --cft \"colour = 'RED'\" -d 16",
        [ReaderNotMatched, FilterNotCreated],
    )
    .run();
}

#[test]
fn time_based_filter_and_lifespan() {
    pair(
        "Test_TimeBasedFilter_1",
        "-P -t Square -r -k 0 -z 0 --write-period 100 --num-instances 4 -d 17",
        "-S -t Square -r -k 0 --time-filter 1000 -d 17",
        [Ok, Ok],
    )
    .check(one_sample_every_10)
    .run();
    pair(
        "Test_Lifespan_1",
        "-P -t Square -r -k 0 -z 0 --write-period 100 --lifespan 250 --num-instances 4 -d 17",
        "-S -t Square -r -k 0 --read-period 500 -d 17",
        [Ok, Ok],
    )
    .check(lifespan_2_3_consecutive)
    .run();
}

#[test]
fn not_supported() {
    // FerroDDS chooses its fragment size itself.
    pair(
        "datafrag_size",
        "-P -t Square --datafrag-size 1024 -d 18",
        "-S -t Square -d 18",
        [PubUnsupportedFeature, DataNotReceived],
    )
    .run();
}

/// `--num-topics` and `--num-instances`: every topic carries every instance.
#[test]
fn topics_and_instances() {
    fn all_topics_and_colors(app: &mut App, first: SampleLine) -> Code {
        let mut seen = std::collections::BTreeSet::new();
        seen.insert((first.topic, first.color));
        for _ in 0..SAMPLES * 3 {
            match app.next_sample(TIMEOUT) {
                Result::Ok(s) => {
                    seen.insert((s.topic, s.color));
                }
                Err(_) => return DataNotReceived,
            }
            if seen.len() == 6 {
                return Ok;
            }
        }
        DataNotCorrect
    }
    pair(
        "topics_and_instances",
        "-P -t Square --num-topics 3 --num-instances 2 -c RED -d 19",
        "-S -t Square --num-topics 3 -d 19",
        [Ok, Ok],
    )
    .check(all_topics_and_colors)
    .run();
}

/// The OrderedAccess family: which scopes match, and the order a take hands out.
#[test]
fn ordered_access() {
    pair(
        "Test_OrderedAccess_0",
        "-P -t Square -r -k 0 --ordered --access-scope i -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope i -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_1",
        "-P -t Square -r -k 0 --ordered --access-scope i -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope t -d 21",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_OrderedAccess_2",
        "-P -t Square -r -k 0 --ordered --access-scope i -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope g -d 21",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_OrderedAccess_3",
        "-P -t Square -r -k 0 --ordered --access-scope t -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope i -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_4",
        "-P -t Square -r -k 0 --ordered --access-scope t -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope t -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_5",
        "-P -t Square -r -k 0 --ordered --access-scope t -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope g -d 21",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_OrderedAccess_6",
        "-P -t Square -r -k 0 --ordered --access-scope g -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope i -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_7",
        "-P -t Square -r -k 0 --ordered --access-scope g -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope t -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_8",
        "-P -t Square -r -k 0 --ordered --access-scope g -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope g -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_9",
        "-P -t Square -r -k 0 --access-scope t -d 21",
        "-S -t Square -r -k 0 --ordered --access-scope t -d 21",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_OrderedAccess_11",
        "-P -t Square -r -k 0 -D l --ordered --access-scope i -d 21",
        "-S -t Square -r -k 0 -D l --ordered --access-scope i -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_12",
        "-P -t Square -r -k 0 -D l --ordered --access-scope t -d 21",
        "-S -t Square -r -k 0 -D l --ordered --access-scope i -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_13",
        "-P -t Square -r -k 0 -D l --ordered --access-scope t -d 21",
        "-S -t Square -r -k 0 -D l --ordered --access-scope t -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_14",
        "-P -t Square -r -k 0 -D l --ordered --access-scope g -d 21",
        "-S -t Square -r -k 0 -D l --ordered --access-scope i -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_15",
        "-P -t Square -r -k 0 -D l --ordered --access-scope g -d 21",
        "-S -t Square -r -k 0 -D l --ordered --access-scope t -d 21",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_OrderedAccess_16",
        "-P -t Square -r -k 0 -D l --ordered --access-scope g -d 21",
        "-S -t Square -r -k 0 -D l --ordered --access-scope g -d 21",
        [Ok, Ok],
    )
    .run();
}

/// The OrderedAccess cases that check the order samples are read in.
#[test]
fn ordered_access_order() {
    Case::new(
        "Test_OrderedAccess_10",
        &[
            (F, "-P -t Square -r -k 0 --ordered --access-scope t -z 0 --num-instances 4 --write-period 100 -d 22"),
            (F, "-S -t Square -r -k 0 --ordered --access-scope i --take-read --read-period 400 -d 22"),
            (F, "-S -t Square -r -k 0 --ordered --access-scope t --take-read --read-period 400 -d 22"),
        ],
        &[Ok, OrderedAccessInstance, OrderedAccessTopic],
    )
    .check(ordered_access_w_instances)
    .run();
    Case::new(
        "Test_OrderedAccess_17",
        &[
            (F, "-P -t Square -r -k 0 -D l --ordered --access-scope t -z 0 --num-instances 4 --write-period 100 -d 22"),
            (F, "-S -t Square -r -k 0 -D l --ordered --access-scope i --take-read --read-period 400 -d 22"),
            (F, "-S -t Square -r -k 0 -D l --ordered --access-scope t --take-read --read-period 400 -d 22"),
        ],
        &[Ok, OrderedAccessInstance, OrderedAccessTopic],
    )
    .check(ordered_access_w_instances)
    .run();
}

/// The CoherentSets family: which scopes match.
#[test]
fn coherent_sets() {
    pair(
        "Test_CoherentSets_0",
        "-P -t Square -r -k 0 --coherent --access-scope i -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope i -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_1",
        "-P -t Square -r -k 0 --coherent --access-scope i -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope t -d 23",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_CoherentSets_2",
        "-P -t Square -r -k 0 --coherent --access-scope i -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope g -d 23",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_CoherentSets_3",
        "-P -t Square -r -k 0 --coherent --access-scope t -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope i -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_4",
        "-P -t Square -r -k 0 --coherent --access-scope t -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope t -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_5",
        "-P -t Square -r -k 0 --coherent --access-scope t -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope g -d 23",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_CoherentSets_6",
        "-P -t Square -r -k 0 --coherent --access-scope g -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope i -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_7",
        "-P -t Square -r -k 0 --coherent --access-scope g -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope t -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_8",
        "-P -t Square -r -k 0 --coherent --access-scope g -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope g -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_9",
        "-P -t Square -r -k 0 --access-scope t -d 23",
        "-S -t Square -r -k 0 --coherent --access-scope t -d 23",
        [IncompatibleQos, IncompatibleQos],
    )
    .run();
    pair(
        "Test_CoherentSets_13",
        "-P -t Square -r -k 0 -D l --coherent --access-scope i -d 23",
        "-S -t Square -r -k 0 -D l --coherent --access-scope i -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_14",
        "-P -t Square -r -k 0 -D l --coherent --access-scope t -d 23",
        "-S -t Square -r -k 0 -D l --coherent --access-scope i -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_15",
        "-P -t Square -r -k 0 -D l --coherent --access-scope t -d 23",
        "-S -t Square -r -k 0 -D l --coherent --access-scope t -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_16",
        "-P -t Square -r -k 0 -D l --coherent --access-scope g -d 23",
        "-S -t Square -r -k 0 -D l --coherent --access-scope i -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_17",
        "-P -t Square -r -k 0 -D l --coherent --access-scope g -d 23",
        "-S -t Square -r -k 0 -D l --coherent --access-scope t -d 23",
        [Ok, Ok],
    )
    .run();
    pair(
        "Test_CoherentSets_18",
        "-P -t Square -r -k 0 -D l --coherent --access-scope g -d 23",
        "-S -t Square -r -k 0 -D l --coherent --access-scope g -d 23",
        [Ok, Ok],
    )
    .run();
}

/// The CoherentSets cases that check every read holds whole sets.
#[test]
fn coherent_sets_whole() {
    Case::new(
        "Test_CoherentSets_10",
        &[
            (F, "-P -t Square -r -k 0 --coherent --access-scope i --num-topics 3 --num-instances 4 --coherent-sample-count 3 --write-period 100 -z 0 -d 24"),
            (F, "-S -t Square -r -k 0 --coherent --access-scope i --num-topics 3 --take-read --read-period 100 -d 24"),
        ],
        &[Ok, Ok],
    )
    .check(coherent_sets_w_instances_per_topic)
    .run();
    Case::new(
        "Test_CoherentSets_11",
        &[
            (F, "-P -t Square -r -k 0 --coherent --access-scope t --num-topics 3 --num-instances 4 --coherent-sample-count 3 --write-period 100 -z 0 -d 24"),
            (F, "-S -t Square -r -k 0 --coherent --access-scope t --num-topics 3 --take-read --read-period 100 -d 24"),
        ],
        &[Ok, Ok],
    )
    .check(coherent_sets_w_instances_per_topic)
    .run();
    Case::new(
        "Test_CoherentSets_12",
        &[
            (F, "-P -t Square -r -k 0 --coherent --access-scope g --num-topics 3 --num-instances 4 --coherent-sample-count 3 --write-period 100 -z 0 -d 24"),
            (F, "-S -t Square -r -k 0 --coherent --access-scope g --num-topics 3 --take-read --read-period 100 -d 24"),
        ],
        &[Ok, Ok],
    )
    .check(coherent_sets_w_instances)
    .run();
    Case::new(
        "Test_CoherentSets_19",
        &[
            (F, "-P -t Square -r -k 0 -D l --coherent --access-scope i --num-topics 3 --num-instances 4 --coherent-sample-count 3 --write-period 100 -z 0 -d 24"),
            (F, "-S -t Square -r -k 0 -D l --coherent --access-scope i --num-topics 3 --take-read --read-period 100 -d 24"),
        ],
        &[Ok, Ok],
    )
    .check(coherent_sets_w_instances_per_topic)
    .run();
    Case::new(
        "Test_CoherentSets_20",
        &[
            (F, "-P -t Square -r -k 0 -D l --coherent --access-scope t --num-topics 3 --num-instances 4 --coherent-sample-count 3 --write-period 100 -z 0 -d 24"),
            (F, "-S -t Square -r -k 0 -D l --coherent --access-scope t --num-topics 3 --take-read --read-period 100 -d 24"),
        ],
        &[Ok, Ok],
    )
    .check(coherent_sets_w_instances_per_topic)
    .run();
    Case::new(
        "Test_CoherentSets_21",
        &[
            (F, "-P -t Square -r -k 0 -D l --coherent --access-scope g --num-topics 3 --num-instances 4 --coherent-sample-count 3 --write-period 100 -z 0 -d 24"),
            (F, "-S -t Square -r -k 0 -D l --coherent --access-scope g --num-topics 3 --take-read --read-period 100 -d 24"),
        ],
        &[Ok, Ok],
    )
    .check(coherent_sets_w_instances)
    .run();
}
