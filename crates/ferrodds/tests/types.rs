//! Types between FerroDDS participants over loopback: versions of a type match when XTypes
//! says they are assignable, whatever their names, and exchange the members they share;
//! types that are not assignable are reported incompatible (TYPE_CONSISTENCY_ENFORCEMENT and
//! what differs); untyped writers and readers exchange samples with typed ones; a topic's
//! type is found over TypeLookup. Domains 37 and 45 (topics apart within each).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ferrodds::dynamic::assignable::Mismatch;
use ferrodds::dynamic::{DynamicType, DynamicValue};
use ferrodds::qos::QosPolicyId;
use ferrodds::{Cdr, DomainParticipant, Qos};

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

/// The valid samples `take` gives within `WAIT`, at least one.
fn first_valid<T>(mut take: impl FnMut() -> Vec<ferrodds::Sample<T>>) -> T {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Some(s) = take().into_iter().find(|s| s.info.valid_data) {
            return s.data;
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
