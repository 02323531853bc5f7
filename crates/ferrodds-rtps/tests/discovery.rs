//! Discovery over the simulated network: participants find each other with SPDP, learn
//! each other's endpoints with SEDP (reliably, through loss), match them by topic, type,
//! partition and QoS, and report incompatible QoS and departed participants; types travel
//! over XTypes TypeLookup and decide matches by assignability.

#![allow(clippy::unwrap_used)]

mod sim;

use std::sync::Arc;
use std::time::Duration;

use ferrodds_rtps::discovery::ParticipantData;
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::qos::{
    DataRepresentation, DataRepresentationId, Durability, EndpointQos, QosPolicyId, Reliability,
};
use ferrodds_rtps::wire::{EntityId, Guid, VendorId};
use ferrodds_rtps::{
    Change, ChangeKind, DiscoveryEvent, Event, LocalEndpoint, Reader, ReaderConfig, Writer,
    WriterConfig,
};
use sim::{Faults, Network};

const W: EntityId = EntityId([0, 0, 1, 0x02]);
const R: EntityId = EntityId([0, 0, 1, 0x07]);

/// Two nodes running discovery, each announcing to both locators (as multicast would).
fn two_nodes(seed: u64, faults: Faults) -> Network {
    Network::discovering_pair(seed, faults, |_, _| {})
}

/// [`two_nodes`], with `as_` changing what node `i` announces of itself.
fn two_nodes_as(seed: u64, faults: Faults, as_: impl Fn(usize, &mut ParticipantData)) -> Network {
    Network::discovering_pair(seed, faults, as_)
}

fn endpoint(
    net: &Network,
    node: usize,
    kind: EndpointKind,
    topic: &str,
    qos: EndpointQos,
) -> LocalEndpoint {
    let id = if kind == EndpointKind::Writer { W } else { R };
    LocalEndpoint {
        guid: Guid::new(net.nodes[node].rtps.prefix(), id),
        kind,
        topic_name: topic.into(),
        type_name: "test::Type".into(),
        qos,
        keyed: false,
        ty: None,
        ignore_local: false,
        content_filter: None,
    }
}

fn add(net: &mut Network, node: usize, e: LocalEndpoint) {
    let now = net.now;
    match e.kind {
        EndpointKind::Writer => net.nodes[node]
            .rtps
            .add_writer(Writer::new(e.guid, WriterConfig::default())),
        EndpointKind::Reader => net.nodes[node]
            .rtps
            .add_reader(Reader::new(e.guid, ReaderConfig::default())),
    }
    net.nodes[node].add_local(now, e);
}

fn events(net: &mut Network, node: usize) -> Vec<DiscoveryEvent> {
    let core = &mut net.nodes[node];
    std::iter::from_fn(|| core.poll_event())
        .filter_map(|e| match e {
            Event::Discovery(d) => Some(d),
            _ => None,
        })
        .collect()
}

#[test]
fn endpoints_match_and_data_flows_through_loss() {
    for seed in 0..100 {
        let mut net = two_nodes(seed, Faults::lossy(0.2));
        let w = endpoint(
            &net,
            0,
            EndpointKind::Writer,
            "T",
            EndpointQos::writer_default(),
        );
        let mut rq = EndpointQos::reader_default();
        rq.reliability = Reliability::reliable();
        let r = endpoint(&net, 1, EndpointKind::Reader, "T", rq);
        let (wg, rg) = (w.guid, r.guid);
        add(&mut net, 0, w);
        add(&mut net, 1, r);
        let mut matched = (false, false);
        let ok = net.run_until(Duration::from_secs(30), |n| {
            for e in events(n, 0) {
                matched.0 |= e
                    == DiscoveryEvent::Matched {
                        local: wg,
                        remote: rg,
                    };
            }
            for e in events(n, 1) {
                matched.1 |= e
                    == DiscoveryEvent::Matched {
                        local: rg,
                        remote: wg,
                    };
            }
            matched.0 && matched.1
        });
        assert!(ok, "seed {seed}: matched {matched:?}");
        let now = net.now;
        // Serialized payloads are padded to 4 bytes (as CDR pads them), like submessages.
        let payload: Arc<Vec<u8>> = Arc::from(vec![0u8, 1, 0, 0, 42, 0, 0, 0]);
        net.nodes[0]
            .rtps
            .writer(W)
            .unwrap()
            .write(
                now,
                Change {
                    original: None,
                    coherence: None,
                    kind: ChangeKind::Alive,
                    key_hash: None,
                    timestamp: None,
                    payload: payload.clone().into(),
                    reduced_payload: None,
                },
            )
            .unwrap();
        let mut got = None;
        assert!(net.run_until(Duration::from_secs(30), |n| {
            got = got
                .take()
                .or_else(|| n.nodes[1].rtps.reader(R).unwrap().poll_change());
            got.is_some()
        }));
        assert_eq!(got.unwrap().payload, payload.to_vec(), "seed {seed}");
    }
}

#[test]
fn a_perfect_network_matches_within_milliseconds() {
    let mut net = two_nodes(1, Faults::NONE);
    let start = net.now;
    let w = endpoint(
        &net,
        0,
        EndpointKind::Writer,
        "T",
        EndpointQos::writer_default(),
    );
    let r = endpoint(
        &net,
        1,
        EndpointKind::Reader,
        "T",
        EndpointQos::reader_default(),
    );
    let (wg, rg) = (w.guid, r.guid);
    add(&mut net, 0, w);
    add(&mut net, 1, r);
    let mut seen = false;
    assert!(net.run_until(Duration::from_secs(5), |n| {
        seen |= events(n, 1).contains(&DiscoveryEvent::Matched {
            local: rg,
            remote: wg,
        });
        seen
    }));
    let took = net.now.since(start);
    assert!(
        took < Duration::from_millis(10),
        "simulated match time {took:?}"
    );
}

#[test]
fn incompatible_qos_is_reported_and_nothing_matches() {
    let mut net = two_nodes(3, Faults::NONE);
    // A best-effort writer cannot serve a reliable reader; a volatile one not a
    // transient-local reader.
    let mut wq = EndpointQos::writer_default();
    wq.reliability = Reliability::best_effort();
    let mut rq = EndpointQos::reader_default();
    rq.reliability = Reliability::reliable();
    rq.durability = Durability::TransientLocal;
    let w = endpoint(&net, 0, EndpointKind::Writer, "T", wq);
    let r = endpoint(&net, 1, EndpointKind::Reader, "T", rq);
    add(&mut net, 0, w);
    add(&mut net, 1, r);
    let mut reported = Vec::new();
    net.run_until(Duration::from_secs(2), |n| {
        for e in events(n, 0).into_iter().chain(events(n, 1)) {
            match e {
                DiscoveryEvent::IncompatibleQos { policies, .. } => reported.push(policies),
                DiscoveryEvent::Matched { local, .. }
                    if local.entity_id == W || local.entity_id == R =>
                {
                    panic!("incompatible endpoints matched")
                }
                _ => {}
            }
        }
        reported.len() == 2
    });
    assert_eq!(reported.len(), 2, "both sides report: {reported:?}");
    for policies in reported {
        assert!(
            policies.contains(&QosPolicyId::Reliability)
                && policies.contains(&QosPolicyId::Durability),
            "{policies:?}"
        );
    }
}

#[test]
fn different_topics_and_partitions_do_not_match() {
    let mut net = two_nodes(4, Faults::NONE);
    let w = endpoint(
        &net,
        0,
        EndpointKind::Writer,
        "A",
        EndpointQos::writer_default(),
    );
    let r = endpoint(
        &net,
        1,
        EndpointKind::Reader,
        "B",
        EndpointQos::reader_default(),
    );
    add(&mut net, 0, w);
    add(&mut net, 1, r);
    let mut wq = EndpointQos::writer_default();
    wq.partition.names = vec!["left".into()];
    let mut rq = EndpointQos::reader_default();
    rq.partition.names = vec!["right".into()];
    let mut w2 = endpoint(&net, 0, EndpointKind::Writer, "C", wq);
    w2.guid.entity_id = EntityId([0, 0, 2, 0x02]);
    let mut r2 = endpoint(&net, 1, EndpointKind::Reader, "C", rq);
    r2.guid.entity_id = EntityId([0, 0, 2, 0x07]);
    add(&mut net, 0, w2);
    add(&mut net, 1, r2);
    net.advance(Duration::from_secs(2));
    let all: Vec<DiscoveryEvent> = events(&mut net, 0)
        .into_iter()
        .chain(events(&mut net, 1))
        .collect();
    assert!(all
        .iter()
        .any(|e| matches!(e, DiscoveryEvent::ParticipantDiscovered { .. })));
    assert!(
        !all.iter().any(|e| matches!(
            e,
            DiscoveryEvent::Matched { .. } | DiscoveryEvent::IncompatibleQos { .. }
        )),
        "{all:?}"
    );
}

#[test]
fn a_silent_participant_is_dropped_when_its_lease_expires() {
    let mut net = two_nodes(5, Faults::NONE);
    let w = endpoint(
        &net,
        0,
        EndpointKind::Writer,
        "T",
        EndpointQos::writer_default(),
    );
    let r = endpoint(
        &net,
        1,
        EndpointKind::Reader,
        "T",
        EndpointQos::reader_default(),
    );
    let (wg, rg) = (w.guid, r.guid);
    add(&mut net, 0, w);
    add(&mut net, 1, r);
    net.advance(Duration::from_millis(500));
    assert!(events(&mut net, 1).contains(&DiscoveryEvent::Matched {
        local: rg,
        remote: wg
    }));
    // Node 0 goes silent: nothing it sends arrives any more.
    net.faults.loss = 1.0;
    let mut lost = Vec::new();
    net.run_until(Duration::from_secs(5), |n| {
        lost.extend(events(n, 1));
        lost.iter()
            .any(|e| matches!(e, DiscoveryEvent::ParticipantLost { .. }))
    });
    assert!(
        lost.contains(&DiscoveryEvent::ParticipantLost { prefix: wg.prefix }),
        "{lost:?}"
    );
    assert!(
        lost.contains(&DiscoveryEvent::Unmatched {
            local: rg,
            remote: wg
        }),
        "{lost:?}"
    );
    assert!(!net.nodes[1].rtps.reader(R).unwrap().is_matched(wg));
}

#[test]
fn a_goodbye_removes_the_participant_at_once() {
    let mut net = two_nodes(6, Faults::NONE);
    net.advance(Duration::from_millis(300));
    let prefix0 = net.nodes[0].rtps.prefix();
    assert!(
        events(&mut net, 1).contains(&DiscoveryEvent::ParticipantDiscovered {
            prefix: prefix0,
            vendor: Some(ferrodds_rtps::wire::VendorId::FERRODDS)
        })
    );
    let now = net.now;
    net.nodes[0].discovery.goodbye(now);
    let mut seen = Vec::new();
    net.run_until(Duration::from_millis(100), |n| {
        seen.extend(events(n, 1));
        seen.contains(&DiscoveryEvent::ParticipantLost { prefix: prefix0 })
    });
    assert!(
        seen.contains(&DiscoveryEvent::ParticipantLost { prefix: prefix0 }),
        "{seen:?}"
    );
}

// Types over XTypes: TypeInformation in SEDP, TypeLookup, assignability.

use ferrodds_cdr::dynamic::assignable::Mismatch;
use ferrodds_cdr::dynamic::{DynamicType, Member, StructType};
use ferrodds_cdr::Extensibility;

/// A shape type of the given members after `color` (key) and `x`.
fn shape(name: &str, ext: Extensibility, more: Vec<Member>) -> DynamicType {
    let mut members = vec![
        Member::new("color", 0, DynamicType::String { bound: Some(128) }).key(),
        Member::new("x", 1, DynamicType::Int32),
    ];
    members.extend(more);
    DynamicType::Struct(Arc::new(StructType {
        name: name.into(),
        extensibility: ext,
        base: None,
        members,
    }))
}

fn typed(mut e: LocalEndpoint, ty: DynamicType) -> LocalEndpoint {
    e.type_name = ty.name().to_owned();
    e.ty = Some(ty);
    e
}

/// Adds a writer of `wt` on node 0 and a reader of `rt` on node 1, both on topic "T"; their
/// GUIDs.
fn add_typed_pair(net: &mut Network, wt: DynamicType, rt: DynamicType) -> (Guid, Guid) {
    let w = typed(
        endpoint(
            net,
            0,
            EndpointKind::Writer,
            "T",
            EndpointQos::writer_default(),
        ),
        wt,
    );
    let r = typed(
        endpoint(
            net,
            1,
            EndpointKind::Reader,
            "T",
            EndpointQos::reader_default(),
        ),
        rt,
    );
    let guids = (w.guid, r.guid);
    add(net, 0, w);
    add(net, 1, r);
    guids
}

/// Runs `net` until node `node` reports `local` matched with `remote` (true), or for `limit`.
fn matched(net: &mut Network, node: usize, local: Guid, remote: Guid, limit: Duration) -> bool {
    let mut seen = false;
    net.run_until(limit, |n| {
        seen |= events(n, node).contains(&DiscoveryEvent::Matched { local, remote });
        seen
    });
    seen
}

#[test]
fn a_remote_type_is_obtained_over_type_lookup_through_loss() {
    for seed in 0..50 {
        let mut net = two_nodes(seed, Faults::lossy(0.2));
        let inner = shape("Inner", Extensibility::Appendable, vec![]);
        let ty = shape(
            "Outer",
            Extensibility::Mutable,
            vec![Member::new("inner", 2, inner)],
        );
        let w = typed(
            endpoint(
                &net,
                0,
                EndpointKind::Writer,
                "T",
                EndpointQos::writer_default(),
            ),
            ty.clone(),
        );
        add(&mut net, 0, w);
        let mut found = None;
        let ok = net.run_until(Duration::from_secs(60), |n| {
            let now = n.now;
            let core = &mut n.nodes[1];
            let Some((_, Some(info))) = core.discovery.topic_types("T").into_iter().next() else {
                return false;
            };
            match core.discovery.resolve_type(&info) {
                Some(r) => {
                    found = Some(r.unwrap());
                    true
                }
                None => {
                    core.discovery.request_type(now, &info, &mut core.rtps);
                    false
                }
            }
        });
        assert!(ok, "seed {seed}: type not obtained");
        assert_eq!(found.unwrap(), ty, "seed {seed}");
        let stats = net.nodes[0].discovery.type_lookup_stats();
        assert!(stats.requests_answered >= 1, "seed {seed}: {stats:?}");
    }
}

#[test]
fn versions_of_a_type_match_when_assignable_whatever_their_names() {
    let v1 = shape("v1::Shape", Extensibility::Appendable, vec![]);
    let v2 = shape(
        "v2::Shape",
        Extensibility::Appendable,
        vec![Member::new("y", 2, DynamicType::Int32)],
    );
    // Older reader, newer writer; then newer reader, older writer.
    for (seed, (wt, rt)) in [(v2.clone(), v1.clone()), (v1, v2)].into_iter().enumerate() {
        let mut net = two_nodes(10 + seed as u64, Faults::lossy(0.1));
        let (wg, rg) = add_typed_pair(&mut net, wt, rt);
        assert!(
            matched(&mut net, 1, rg, wg, Duration::from_secs(30)),
            "reader side"
        );
        assert!(
            matched(&mut net, 0, wg, rg, Duration::from_secs(30)),
            "writer side"
        );
    }
}

#[test]
fn types_that_are_not_assignable_are_reported_incompatible() {
    let mut net = two_nodes(20, Faults::NONE);
    let wt = shape("Shape", Extensibility::Appendable, vec![]);
    // `x` is a double here.
    let rt = DynamicType::Struct(Arc::new(StructType {
        name: "Shape".into(),
        extensibility: Extensibility::Appendable,
        base: None,
        members: vec![
            Member::new("color", 0, DynamicType::String { bound: Some(128) }).key(),
            Member::new("x", 1, DynamicType::Float64),
        ],
    }));
    add_typed_pair(&mut net, wt, rt);
    let mut reasons = Vec::new();
    net.run_until(Duration::from_secs(5), |n| {
        for node in 0..2 {
            for e in events(n, node) {
                match e {
                    DiscoveryEvent::IncompatibleType { reason, .. } => reasons.push(reason),
                    DiscoveryEvent::Matched { local, .. }
                        if local.entity_id == W || local.entity_id == R =>
                    {
                        panic!("types that are not assignable matched")
                    }
                    _ => {}
                }
            }
        }
        reasons.len() == 2
    });
    assert_eq!(reasons.len(), 2, "both sides report: {reasons:?}");
    for r in reasons {
        assert_eq!(r.mismatch, Mismatch::DifferentKinds);
        assert_eq!(r.path, ["Shape", "x"]);
    }
}

#[test]
fn endpoints_without_type_information_match_by_type_name() {
    let mut net = two_nodes(21, Faults::NONE);
    let ty = shape("Shape", Extensibility::Appendable, vec![]);
    let w = typed(
        endpoint(
            &net,
            0,
            EndpointKind::Writer,
            "T",
            EndpointQos::writer_default(),
        ),
        ty,
    );
    // No type: only the name speaks for it, and it is another name.
    let mut r = endpoint(
        &net,
        1,
        EndpointKind::Reader,
        "T",
        EndpointQos::reader_default(),
    );
    r.type_name = "Other".into();
    let (wg, rg) = (w.guid, r.guid);
    add(&mut net, 0, w);
    add(&mut net, 1, r);
    assert!(!matched(&mut net, 1, rg, wg, Duration::from_secs(3)));
    let mut r2 = endpoint(
        &net,
        1,
        EndpointKind::Reader,
        "T",
        EndpointQos::reader_default(),
    );
    r2.guid = Guid::new(net.nodes[1].rtps.prefix(), EntityId([0, 0, 2, 0x07]));
    r2.type_name = "Shape".into();
    let r2g = r2.guid;
    add(&mut net, 1, r2);
    assert!(matched(&mut net, 1, r2g, wg, Duration::from_secs(3)));
}

#[test]
fn cyclone_dds_0_10_learns_our_endpoints_without_their_types() {
    // Node 1 announces itself as Cyclone DDS 0.10 does (vendor 1.16, RTPS 2.1).
    let mut net = two_nodes_as(22, Faults::NONE, |i, own| {
        if i == 1 {
            own.vendor_id = Some(ferrodds_rtps::wire::VendorId::CYCLONE_DDS);
            own.protocol_version = Some(ferrodds_rtps::wire::ProtocolVersion::V2_1);
        }
    });
    let w = typed(
        endpoint(
            &net,
            0,
            EndpointKind::Writer,
            "T",
            EndpointQos::writer_default(),
        ),
        shape("Shape", Extensibility::Appendable, vec![]),
    );
    add(&mut net, 0, w);
    let mut seen = None;
    net.run_until(Duration::from_secs(5), |n| {
        seen = n.nodes[1].discovery.topic_types("T").into_iter().next();
        seen.is_some()
    });
    assert_eq!(seen, Some(("Shape".to_owned(), None)));
}

/// Node 1 announces itself as Fast DDS 2.x does (vendor 1.15) and its endpoints with no
/// DATA_REPRESENTATION (XCDR1); node 0's writer offers XCDR2 and its reader accepts only
/// XCDR2, with the compatibility mode `fast_dds_xcdr1` as given. Returns node 0's events,
/// and whether its writer serves the remote reader the reduced (XCDR1) form.
fn against_fast_dds_2(
    seed: u64,
    vendor: VendorId,
    fast_dds_xcdr1: bool,
) -> (Vec<DiscoveryEvent>, bool) {
    let mut net = two_nodes_as(seed, Faults::NONE, |i, own| {
        if i == 1 {
            own.vendor_id = Some(vendor);
        }
    });
    let config = net.nodes[0].discovery.config().clone();
    net.run_discovery(
        0,
        ferrodds_rtps::DiscoveryConfig {
            fast_dds_xcdr1,
            ..config
        },
    );
    let xcdr2 = DataRepresentation {
        ids: vec![DataRepresentationId::XCDR2],
    };
    let mut wq = EndpointQos::writer_default();
    wq.data_representation = xcdr2.clone();
    let mut rq = EndpointQos::reader_default();
    rq.data_representation = xcdr2;
    let w0 = endpoint(&net, 0, EndpointKind::Writer, "T", wq);
    let mut r0 = endpoint(&net, 0, EndpointKind::Reader, "U", rq);
    r0.guid.entity_id = EntityId([0, 0, 2, 0x07]);
    let r1 = endpoint(
        &net,
        1,
        EndpointKind::Reader,
        "T",
        EndpointQos::reader_default(),
    );
    let mut w1 = endpoint(
        &net,
        1,
        EndpointKind::Writer,
        "U",
        EndpointQos::writer_default(),
    );
    w1.guid.entity_id = EntityId([0, 0, 2, 0x02]);
    let w0_id = w0.guid.entity_id;
    for (node, e) in [(0, w0), (0, r0), (1, r1), (1, w1)] {
        add(&mut net, node, e);
    }
    let mut seen = Vec::new();
    net.run_until(Duration::from_secs(3), |n| {
        seen.extend(events(n, 0).into_iter().filter(|e| {
            matches!(
                e,
                DiscoveryEvent::Matched { .. } | DiscoveryEvent::IncompatibleQos { .. }
            )
        }));
        seen.len() >= 2
    });
    let reduced = net.nodes[0]
        .rtps
        .writer(w0_id)
        .is_some_and(|w| w.matched_readers().any(|r| r.reduced));
    (seen, reduced)
}

#[test]
fn fast_dds_2_endpoints_match_xcdr2_ones_in_the_compatibility_mode_only() {
    let fast_dds = VendorId::FAST_DDS;
    // By the spec: both pairs are incompatible on DATA_REPRESENTATION.
    let (seen, reduced) = against_fast_dds_2(40, fast_dds, false);
    assert_eq!(seen.len(), 2, "{seen:?}");
    for e in &seen {
        assert!(
            matches!(e, DiscoveryEvent::IncompatibleQos { policies, .. }
                if policies == &[QosPolicyId::DataRepresentation]),
            "{e:?}"
        );
    }
    assert!(!reduced);
    // The mode: both match, and the writer serves Fast DDS's reader XCDR1.
    let (seen, reduced) = against_fast_dds_2(41, fast_dds, true);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen.iter()
            .all(|e| matches!(e, DiscoveryEvent::Matched { .. })),
        "{seen:?}"
    );
    assert!(reduced);
    // Another vendor that announces nothing is left to the spec, mode or not.
    let (seen, reduced) = against_fast_dds_2(42, VendorId::CYCLONE_DDS, true);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen
        .iter()
        .all(|e| matches!(e, DiscoveryEvent::IncompatibleQos { .. })));
    assert!(!reduced);
}
