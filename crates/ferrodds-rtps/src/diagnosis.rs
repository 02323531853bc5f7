//! Why a writer and a reader of one topic do or do not exchange data ("discovery works but no
//! data — why?"): the rules discovery applies when it matches a writer with a reader
//! ([`crate::discovery_engine`]), evaluated for any pair of endpoints — remote ones included,
//! so that an observer can explain two other participants to each other — and reported as
//! every obstacle at once, each with both sides' values and the change that removes it.
//!
//! The order of the checks is discovery's: the type (by assignability when both endpoints
//! described theirs, by name otherwise), the partitions, then each requested/offered (RxO)
//! policy ([`crate::qos::check_compatibility`]). Unlike discovery, which stops at the first
//! failing step, the diagnosis goes on through every step, so that one run names every change
//! needed.

use core::fmt;

use ferrodds_cdr::dynamic::assignable::{
    is_assignable, AssignabilityRules, Mismatch, NotAssignable,
};
use ferrodds_cdr::dynamic::DynamicType;

use crate::discovery::{EndpointData, EndpointKind};
use crate::qos::{
    check_compatibility, partitions_match, DataRepresentation, DataRepresentationId, Durability,
    Duration, EndpointQos, LivelinessKind, Ownership, PresentationAccessScope, QosPolicyId,
    ReliabilityKind, TypeConsistencyEnforcement, TypeConsistencyKind,
};
use crate::wire::{Guid, Locator, VendorId};

/// One endpoint of a topic as the diagnosis sees it.
#[derive(Debug, Clone)]
pub struct TopicEndpoint {
    /// A writer or a reader.
    pub kind: EndpointKind,
    /// What it announced (or, for a local endpoint, would announce): GUID, names, QoS,
    /// locators.
    pub data: EndpointData,
    /// It belongs to the participant running the diagnosis.
    pub local: bool,
    /// Its participant's vendor, when announced.
    pub vendor: Option<VendorId>,
    /// Where its participant receives user data when the endpoint names no locators.
    pub participant_locators: Vec<Locator>,
    /// It described its type (XTypes TypeInformation, or a local endpoint's type).
    pub describes_type: bool,
    /// Its type, where known (a local endpoint's own; a remote one's once obtained over
    /// TypeLookup).
    pub ty: Option<DynamicType>,
    /// Types are compared by name with it whatever it described: a Cyclone DDS before 11,
    /// whose type identifiers are not comparable with ours (see `discovery_engine`).
    pub by_name_only: bool,
}

impl TopicEndpoint {
    /// The locators its data goes to: its own, else its participant's.
    pub fn locators(&self) -> &[Locator] {
        if self.data.unicast_locators.is_empty() {
            &self.participant_locators
        } else {
            &self.data.unicast_locators
        }
    }
}

/// What keeps a writer's data from a reader.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Obstacle {
    /// Different type names, and no type described by both to compare instead.
    TypeName {
        /// The writer's type name.
        writer: String,
        /// The reader's type name.
        reader: String,
    },
    /// Both described their types, and the reader's cannot take the writer's.
    TypeNotAssignable {
        /// The writer's type name.
        writer: String,
        /// The reader's type name.
        reader: String,
        /// What does not fit, and where.
        reason: NotAssignable,
    },
    /// No partition of one side matches one of the other's.
    Partition {
        /// The writer's partitions (empty: the default partition).
        writer: Vec<String>,
        /// The reader's partitions.
        reader: Vec<String>,
    },
    /// A requested/offered policy the writer does not offer as strongly as the reader
    /// requests it.
    Qos {
        /// The policy.
        policy: QosPolicyId,
        /// What the writer offers, as text.
        offered: String,
        /// What the reader requests, as text.
        requested: String,
    },
}

impl Obstacle {
    /// What to change so that this obstacle goes.
    pub fn fix(&self) -> String {
        match self {
            Obstacle::TypeName { writer, reader } => format!(
                "use one type name on both sides (the writer's {writer} or the reader's \
                 {reader}), or have both describe their types (XTypes type information) so \
                 that assignability decides"
            ),
            Obstacle::TypeNotAssignable { reason, .. } => format!(
                "make the reader's type able to take the writer's at {}, or relax the \
                 reader's TYPE_CONSISTENCY_ENFORCEMENT",
                reason.path.join(".")
            ),
            Obstacle::Partition { writer, reader } => format!(
                "put the writer's publisher in one of the reader's partitions ({}) or the \
                 reader's subscriber in one of the writer's ({})",
                partition_text(reader),
                partition_text(writer)
            ),
            Obstacle::Qos {
                policy: QosPolicyId::DataRepresentation,
                offered,
                requested,
            } => format!(
                "have the writer use {requested} (its first DATA_REPRESENTATION), or the \
                 reader accept {offered}"
            ),
            Obstacle::Qos {
                policy,
                offered,
                requested,
            } => format!(
                "set the writer's {} to {requested} (or stronger), or the reader's to \
                 {offered} (or weaker)",
                policy.name()
            ),
        }
    }
}

impl fmt::Display for Obstacle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Obstacle::TypeName { writer, reader } => {
                write!(f, "type names differ: writer {writer}, reader {reader}")
            }
            Obstacle::TypeNotAssignable {
                writer,
                reader,
                reason,
            } => write!(
                f,
                "type: the reader's {reader} cannot take the writer's {writer}: {reason}"
            ),
            Obstacle::Partition { writer, reader } => write!(
                f,
                "partition: writer in {}, reader in {}, no name in common",
                partition_text(writer),
                partition_text(reader)
            ),
            Obstacle::Qos {
                policy,
                offered,
                requested,
            } => write!(
                f,
                "{}: writer offers {offered}, reader requests {requested}",
                policy.name()
            ),
        }
    }
}

fn partition_text(names: &[String]) -> String {
    if names.is_empty() {
        "the default partition".into()
    } else {
        names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every obstacle between `writer` and `reader` (of one topic); empty when discovery matches
/// them.
pub fn obstacles(writer: &TopicEndpoint, reader: &TopicEndpoint) -> Vec<Obstacle> {
    let mut found = Vec::new();
    let (w, r) = (&writer.data, &reader.data);
    let by_name = writer.by_name_only
        || reader.by_name_only
        || !writer.describes_type
        || !reader.describes_type;
    match (&writer.ty, &reader.ty, by_name) {
        (Some(wt), Some(rt), false) => {
            if let Err(reason) = types_fit(rt, wt, &r.qos.type_consistency) {
                found.push(Obstacle::TypeNotAssignable {
                    writer: w.type_name.clone(),
                    reader: r.type_name.clone(),
                    reason,
                });
            }
        }
        // Types that are not both known are compared by name, as discovery does with a type
        // it cannot obtain.
        _ => {
            if w.type_name != r.type_name {
                found.push(Obstacle::TypeName {
                    writer: w.type_name.clone(),
                    reader: r.type_name.clone(),
                });
            }
        }
    }
    if !partitions_match(&w.qos.partition, &r.qos.partition) {
        found.push(Obstacle::Partition {
            writer: w.qos.partition.names.clone(),
            reader: r.qos.partition.names.clone(),
        });
    }
    if let Err(incompatible) = check_compatibility(&w.qos, &r.qos) {
        for policy in incompatible.policies() {
            let (offered, requested) = policy_values(policy, &w.qos, &r.qos);
            found.push(Obstacle::Qos {
                policy,
                offered,
                requested,
            });
        }
    }
    found
}

/// Whether a reader of `reader` takes a writer of `writer` under the reader's
/// TYPE_CONSISTENCY_ENFORCEMENT: the same type, or (unless coercion is disallowed) one it is
/// assignable from. Discovery decides with this very function.
pub fn types_fit(
    reader: &DynamicType,
    writer: &DynamicType,
    tce: &TypeConsistencyEnforcement,
) -> Result<(), NotAssignable> {
    if reader == writer {
        return Ok(());
    }
    if tce.kind == TypeConsistencyKind::DisallowTypeCoercion {
        return Err(NotAssignable {
            path: vec![reader.name().to_owned()],
            mismatch: Mismatch::NotIdentical,
        });
    }
    let rules = AssignabilityRules {
        ignore_sequence_bounds: tce.ignore_sequence_bounds,
        ignore_string_bounds: tce.ignore_string_bounds,
        ignore_member_names: tce.ignore_member_names,
        prevent_type_widening: tce.prevent_type_widening,
    };
    is_assignable(reader, writer, &rules)
}

/// Both sides' values of `policy`, as text.
fn policy_values(policy: QosPolicyId, w: &EndpointQos, r: &EndpointQos) -> (String, String) {
    let both = |f: &dyn Fn(&EndpointQos) -> String| (f(w), f(r));
    match policy {
        QosPolicyId::Reliability => both(&|q| {
            match q.reliability.kind {
                ReliabilityKind::BestEffort => "BEST_EFFORT",
                ReliabilityKind::Reliable => "RELIABLE",
            }
            .into()
        }),
        QosPolicyId::Durability => both(&|q| {
            match q.durability {
                Durability::Volatile => "VOLATILE",
                Durability::TransientLocal => "TRANSIENT_LOCAL",
                Durability::Transient => "TRANSIENT",
                Durability::Persistent => "PERSISTENT",
            }
            .into()
        }),
        QosPolicyId::Presentation => both(&|q| {
            let p = &q.presentation;
            let scope = match p.access_scope {
                PresentationAccessScope::Instance => "INSTANCE",
                PresentationAccessScope::Topic => "TOPIC",
                PresentationAccessScope::Group => "GROUP",
            };
            format!(
                "access scope {scope}{}{}",
                if p.coherent_access { ", coherent" } else { "" },
                if p.ordered_access { ", ordered" } else { "" }
            )
        }),
        QosPolicyId::Deadline => both(&|q| format!("period {}", duration_text(q.deadline.period))),
        QosPolicyId::LatencyBudget => both(&|q| duration_text(q.latency_budget.duration)),
        QosPolicyId::Ownership => both(&|q| {
            match q.ownership {
                Ownership::Shared => "SHARED",
                Ownership::Exclusive => "EXCLUSIVE",
            }
            .into()
        }),
        QosPolicyId::Liveliness => both(&|q| {
            let kind = match q.liveliness.kind {
                LivelinessKind::Automatic => "AUTOMATIC",
                LivelinessKind::ManualByParticipant => "MANUAL_BY_PARTICIPANT",
                LivelinessKind::ManualByTopic => "MANUAL_BY_TOPIC",
            };
            format!(
                "{kind}, lease {}",
                duration_text(q.liveliness.lease_duration)
            )
        }),
        QosPolicyId::DestinationOrder => both(&|q| format!("{:?}", q.destination_order)),
        QosPolicyId::DataRepresentation => (
            representation_name(w.data_representation.offered()).into(),
            representations(&r.data_representation),
        ),
        other => both(&|_| format!("{other:?}")),
    }
}

/// `2s`, `500ms`, or `INFINITE`.
fn duration_text(d: Duration) -> String {
    d.to_std()
        .map_or_else(|| "INFINITE".to_owned(), |d| format!("{d:?}"))
}

fn representation_name(id: DataRepresentationId) -> &'static str {
    match id {
        DataRepresentationId::XCDR => "XCDR1",
        DataRepresentationId::XCDR2 => "XCDR2",
        DataRepresentationId::XML => "XML",
        _ => "an unknown representation",
    }
}

fn representations(d: &DataRepresentation) -> String {
    if d.ids.is_empty() {
        return "XCDR1".into();
    }
    d.ids
        .iter()
        .map(|id| representation_name(*id))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// A writer/reader pair of the topic and what stands between them.
#[derive(Debug, Clone)]
pub struct PairDiagnosis {
    /// The writer.
    pub writer: Guid,
    /// The reader.
    pub reader: Guid,
    /// Empty: they match.
    pub obstacles: Vec<Obstacle>,
}

/// A topic's endpoints and what stands between each writer and each reader.
#[derive(Debug, Clone)]
pub struct TopicDiagnosis {
    /// The topic's endpoints, local and remote.
    pub endpoints: Vec<TopicEndpoint>,
    /// Every writer/reader pair, writers in order, then readers.
    pub pairs: Vec<PairDiagnosis>,
}

impl TopicDiagnosis {
    /// Judges every writer/reader pair among `endpoints` (of one topic). Endpoints of one
    /// participant are paired too (a participant's writer reaches its own readers unless
    /// one of them ignores local publications).
    pub fn new(endpoints: Vec<TopicEndpoint>) -> TopicDiagnosis {
        let mut pairs = Vec::new();
        for w in endpoints.iter().filter(|e| e.kind == EndpointKind::Writer) {
            for r in endpoints.iter().filter(|e| e.kind == EndpointKind::Reader) {
                pairs.push(PairDiagnosis {
                    writer: w.data.guid,
                    reader: r.data.guid,
                    obstacles: obstacles(w, r),
                });
            }
        }
        TopicDiagnosis { endpoints, pairs }
    }

    /// The endpoint with this GUID.
    pub fn endpoint(&self, guid: Guid) -> Option<&TopicEndpoint> {
        self.endpoints.iter().find(|e| e.data.guid == guid)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ferrodds_cdr::dynamic::{Member, StructType};
    use ferrodds_cdr::Extensibility;

    use super::*;
    use crate::qos::{Liveliness, Partition};
    use crate::wire::{EntityId, GuidPrefix};

    fn endpoint(kind: EndpointKind, n: u8, type_name: &str, qos: EndpointQos) -> TopicEndpoint {
        let guid = Guid {
            prefix: GuidPrefix([n; 12]),
            entity_id: EntityId([0, 0, 1, 2]),
        };
        TopicEndpoint {
            kind,
            data: EndpointData::new(guid, "topic", type_name, qos),
            local: false,
            vendor: None,
            participant_locators: Vec::new(),
            describes_type: false,
            ty: None,
            by_name_only: false,
        }
    }

    fn pair(w: EndpointQos, r: EndpointQos) -> Vec<Obstacle> {
        obstacles(
            &endpoint(EndpointKind::Writer, 1, "T", w),
            &endpoint(EndpointKind::Reader, 2, "T", r),
        )
    }

    #[test]
    fn defaults_match() {
        assert_eq!(
            pair(EndpointQos::writer_default(), EndpointQos::reader_default()),
            vec![]
        );
    }

    #[test]
    fn every_failing_policy_is_named_with_both_values() {
        let mut w = EndpointQos::writer_default();
        w.reliability.kind = ReliabilityKind::BestEffort;
        w.liveliness = Liveliness {
            kind: LivelinessKind::Automatic,
            lease_duration: Duration::from_secs(10),
        };
        let mut r = EndpointQos::reader_default();
        r.reliability.kind = ReliabilityKind::Reliable;
        r.durability = Durability::TransientLocal;
        r.liveliness.kind = LivelinessKind::ManualByTopic;
        r.liveliness.lease_duration = Duration::from_secs(1);
        let found = pair(w, r);
        let policies: Vec<QosPolicyId> = found
            .iter()
            .filter_map(|o| match o {
                Obstacle::Qos { policy, .. } => Some(*policy),
                _ => None,
            })
            .collect();
        assert_eq!(
            policies,
            [
                QosPolicyId::Durability,
                QosPolicyId::Liveliness,
                QosPolicyId::Reliability
            ]
        );
        let text: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(
            text.contains(
                &"RELIABILITY: writer offers BEST_EFFORT, reader requests RELIABLE".into()
            ),
            "{text:?}"
        );
        assert!(
            text.contains(
                &"DURABILITY: writer offers VOLATILE, reader requests TRANSIENT_LOCAL".into()
            ),
            "{text:?}"
        );
        assert!(
            found[0].fix().contains("TRANSIENT_LOCAL"),
            "{}",
            found[0].fix()
        );
    }

    #[test]
    fn partitions_and_type_names_are_obstacles_too() {
        let mut w = EndpointQos::writer_default();
        w.partition = Partition {
            names: vec!["a".into()],
        };
        let found = obstacles(
            &endpoint(EndpointKind::Writer, 1, "A", w),
            &endpoint(EndpointKind::Reader, 2, "B", EndpointQos::reader_default()),
        );
        assert_eq!(
            found,
            vec![
                Obstacle::TypeName {
                    writer: "A".into(),
                    reader: "B".into()
                },
                Obstacle::Partition {
                    writer: vec!["a".into()],
                    reader: vec![]
                },
            ]
        );
        assert_eq!(
            found[1].to_string(),
            "partition: writer in \"a\", reader in the default partition, no name in common"
        );
    }

    #[test]
    fn described_types_are_compared_by_assignability_and_the_member_is_named() {
        let ty = |name: &str, second: DynamicType| {
            DynamicType::Struct(Arc::new(StructType {
                name: name.into(),
                extensibility: Extensibility::Final,
                base: None,
                members: vec![
                    Member::new("id", 0, DynamicType::Int32).key(),
                    Member::new("value", 1, second),
                ],
            }))
        };
        let mut w = endpoint(EndpointKind::Writer, 1, "A", EndpointQos::writer_default());
        let mut r = endpoint(EndpointKind::Reader, 2, "B", EndpointQos::reader_default());
        for e in [&mut w, &mut r] {
            e.describes_type = true;
        }
        // Same shape under other names: assignable, so the names do not matter.
        w.ty = Some(ty("A", DynamicType::Int32));
        r.ty = Some(ty("B", DynamicType::Int32));
        assert_eq!(obstacles(&w, &r), vec![]);
        r.ty = Some(ty("B", DynamicType::String { bound: None }));
        let found = obstacles(&w, &r);
        let [Obstacle::TypeNotAssignable { reason, .. }] = found.as_slice() else {
            panic!("{found:?}");
        };
        assert!(reason.path.iter().any(|p| p == "value"), "{reason}");
        // Without type information on one side, names decide.
        r.describes_type = false;
        assert!(matches!(
            obstacles(&w, &r).as_slice(),
            [Obstacle::TypeName { .. }]
        ));
    }
}
