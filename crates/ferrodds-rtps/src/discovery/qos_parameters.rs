//! The parameter-list encoding of the QoS policies (DDSI-RTPS 2.5 §9.6.2.2 and Table
//! 9.12; DDS-XTypes 1.3 §7.6.3 for data representation and type consistency).
//!
//! | PID | value |
//! |---|---|
//! | `DURABILITY` 0x1d | kind u32 |
//! | `DURABILITY_SERVICE` 0x1e | cleanup delay Duration_t, history kind u32, depth i32, 3 × i32 limits |
//! | `DEADLINE` 0x23, `LATENCY_BUDGET` 0x27, `LIFESPAN` 0x2b, `TIME_BASED_FILTER` 0x04 | Duration_t |
//! | `LIVELINESS` 0x1b | kind u32, lease Duration_t |
//! | `RELIABILITY` 0x1a | kind u32 (1 best effort, 2 reliable), max blocking time Duration_t |
//! | `DESTINATION_ORDER` 0x25, `OWNERSHIP` 0x1f | kind u32 |
//! | `OWNERSHIP_STRENGTH` 0x06 | i32 |
//! | `HISTORY` 0x40 | kind u32, depth i32 |
//! | `RESOURCE_LIMITS` 0x41 | 3 × i32 |
//! | `PRESENTATION` 0x21 | access scope u32, coherent bool, ordered bool |
//! | `PARTITION` 0x29 | `sequence<string>` |
//! | `USER_DATA` 0x2c, `TOPIC_DATA` 0x2e, `GROUP_DATA` 0x2d | `sequence<octet>` |
//! | `DATA_REPRESENTATION` 0x73 | `sequence<i16>` |
//! | `TYPE_CONSISTENCY_ENFORCEMENT` 0x74 | kind u16, then 5 booleans |
//!
//! Tolerated on parse, each seen from a peer or another implementation's parser:
//! - RELIABILITY with only its 4-byte kind: the max blocking time keeps its default.
//! - DATA_REPRESENTATION followed by more bytes: RTI Connext 6 appends a 4-byte
//!   compression-id mask after the sequence; it is ignored. An empty sequence means the
//!   default, `[XCDR]` (as Cyclone DDS reads it).
//! - TYPE_CONSISTENCY_ENFORCEMENT with only its kind: the five options take the
//!   defaults of DDS-XTypes 1.3 §7.6.3.4.1 for that kind (as Cyclone DDS reads it).

use super::value::{ValueReader, ValueWriter};
use super::ValueError;
use crate::qos::{
    DataRepresentation, DataRepresentationId, DestinationOrder, Durability, DurabilityService,
    EndpointQos, History, LivelinessKind, Ownership, PresentationAccessScope, Reliability,
    ReliabilityKind, ResourceLimits, TypeConsistencyEnforcement, TypeConsistencyKind,
};
use crate::wire::parameter_list::pid;
use crate::wire::{EmitError, Parameter, ParameterListBuilder};

/// True for the ids [`apply`] interprets.
pub(crate) fn is_qos_pid(id: u16) -> bool {
    matches!(
        id,
        pid::DURABILITY
            | pid::DURABILITY_SERVICE
            | pid::DEADLINE
            | pid::LATENCY_BUDGET
            | pid::LIVELINESS
            | pid::RELIABILITY
            | pid::DESTINATION_ORDER
            | pid::HISTORY
            | pid::RESOURCE_LIMITS
            | pid::LIFESPAN
            | pid::OWNERSHIP
            | pid::OWNERSHIP_STRENGTH
            | pid::TIME_BASED_FILTER
            | pid::PRESENTATION
            | pid::PARTITION
            | pid::USER_DATA
            | pid::TOPIC_DATA
            | pid::GROUP_DATA
            | pid::DATA_REPRESENTATION
            | pid::TYPE_CONSISTENCY_ENFORCEMENT
    )
}

fn kind<T>(r: &mut ValueReader<'_>, from_wire: fn(u32) -> Option<T>) -> Result<T, ValueError> {
    let value = r.u32()?;
    from_wire(value).ok_or(ValueError::UnknownKind { value })
}

fn history(r: &mut ValueReader<'_>) -> Result<History, ValueError> {
    let value = r.u32()?;
    let depth = r.i32()?;
    match value {
        0 => Ok(History::KeepLast { depth }),
        1 => Ok(History::KeepAll),
        value => Err(ValueError::UnknownKind { value }),
    }
}

fn resource_limits(r: &mut ValueReader<'_>) -> Result<ResourceLimits, ValueError> {
    Ok(ResourceLimits {
        max_samples: r.i32()?,
        max_instances: r.i32()?,
        max_samples_per_instance: r.i32()?,
    })
}

/// Reads QoS parameter `p` into `qos`. Returns `Ok(false)` if `p` is not a QoS parameter
/// (and leaves `qos` alone), `Err` if its value is invalid.
pub(crate) fn apply(qos: &mut EndpointQos, p: &Parameter<'_>) -> Result<bool, ValueError> {
    let mut r = ValueReader::new(p);
    match p.id {
        pid::DURABILITY => qos.durability = kind(&mut r, Durability::from_wire)?,
        pid::DURABILITY_SERVICE => {
            qos.durability_service = DurabilityService {
                service_cleanup_delay: r.duration()?,
                history: history(&mut r)?,
                resource_limits: resource_limits(&mut r)?,
            }
        }
        pid::DEADLINE => qos.deadline.period = r.duration()?,
        pid::LATENCY_BUDGET => qos.latency_budget.duration = r.duration()?,
        pid::LIVELINESS => {
            qos.liveliness.kind = kind(&mut r, LivelinessKind::from_wire)?;
            qos.liveliness.lease_duration = r.duration()?;
        }
        pid::RELIABILITY => {
            let kind = kind(&mut r, ReliabilityKind::from_wire)?;
            let max_blocking_time = if p.value.len() > 4 {
                r.duration()?
            } else {
                Reliability::DEFAULT_MAX_BLOCKING_TIME
            };
            qos.reliability = Reliability {
                kind,
                max_blocking_time,
            };
        }
        pid::DESTINATION_ORDER => {
            qos.destination_order = kind(&mut r, DestinationOrder::from_wire)?;
        }
        pid::HISTORY => qos.history = history(&mut r)?,
        pid::RESOURCE_LIMITS => qos.resource_limits = resource_limits(&mut r)?,
        pid::LIFESPAN => qos.lifespan.duration = r.duration()?,
        pid::OWNERSHIP => qos.ownership = kind(&mut r, Ownership::from_wire)?,
        pid::OWNERSHIP_STRENGTH => qos.ownership_strength.value = r.i32()?,
        pid::TIME_BASED_FILTER => qos.time_based_filter.minimum_separation = r.duration()?,
        pid::PRESENTATION => {
            qos.presentation.access_scope = kind(&mut r, PresentationAccessScope::from_wire)?;
            qos.presentation.coherent_access = r.bool()?;
            qos.presentation.ordered_access = r.bool()?;
        }
        pid::PARTITION => {
            // Each name takes at least its 4-byte length.
            let count = r.count(4)?;
            let mut names = Vec::new();
            for _ in 0..count {
                names.push(r.string()?);
            }
            qos.partition.names = names;
        }
        pid::USER_DATA => qos.user_data.value = r.octets()?,
        pid::TOPIC_DATA => qos.topic_data.value = r.octets()?,
        pid::GROUP_DATA => qos.group_data.value = r.octets()?,
        pid::DATA_REPRESENTATION => {
            let count = r.count(2)?;
            let mut ids = Vec::new();
            for _ in 0..count {
                ids.push(DataRepresentationId(r.i16()?));
            }
            // Trailing bytes (Connext's compression mask) are ignored.
            qos.data_representation = if ids.is_empty() {
                DataRepresentation::default()
            } else {
                DataRepresentation { ids }
            };
        }
        pid::TYPE_CONSISTENCY_ENFORCEMENT => qos.type_consistency = type_consistency(&mut r)?,
        _ => return Ok(false),
    }
    Ok(true)
}

fn type_consistency(r: &mut ValueReader<'_>) -> Result<TypeConsistencyEnforcement, ValueError> {
    let kind = match r.u16()? {
        0 => TypeConsistencyKind::DisallowTypeCoercion,
        1 => TypeConsistencyKind::AllowTypeCoercion,
        value => {
            return Err(ValueError::UnknownKind {
                value: u32::from(value),
            })
        }
    };
    let allow = kind == TypeConsistencyKind::AllowTypeCoercion;
    // Only the kind: the defaults of DDS-XTypes 1.3 §7.6.3.4.1 for that kind.
    let mut tce = TypeConsistencyEnforcement {
        kind,
        ignore_sequence_bounds: allow,
        ignore_string_bounds: allow,
        ignore_member_names: false,
        prevent_type_widening: !allow,
        force_type_validation: false,
    };
    if r.remaining() >= 5 {
        tce.ignore_sequence_bounds = r.bool()?;
        tce.ignore_string_bounds = r.bool()?;
        tce.ignore_member_names = r.bool()?;
        tce.prevent_type_widening = r.bool()?;
        tce.force_type_validation = r.bool()?;
    }
    Ok(tce)
}

/// Appends the QoS parameters of `qos`: the RxO policies always, so that no peer has to
/// guess our defaults (their defaults differ between writers and readers, and between
/// implementations), and every other policy that differs from the spec's default.
pub(crate) fn emit(qos: &EndpointQos, b: &mut ParameterListBuilder<'_>) -> Result<(), EmitError> {
    let defaults = EndpointQos::writer_default();
    let e = b.endianness();
    let value = || ValueWriter::new(e);

    b.push(pid::RELIABILITY, &{
        let mut w = value();
        w.u32(qos.reliability.kind.to_wire())
            .duration(qos.reliability.max_blocking_time);
        w.into_bytes()
    })?;
    b.push_u32(pid::DURABILITY, qos.durability.to_wire())?;
    if qos.durability_service != defaults.durability_service {
        let s = &qos.durability_service;
        let mut w = value();
        w.duration(s.service_cleanup_delay);
        write_history(&mut w, s.history);
        write_resource_limits(&mut w, &s.resource_limits);
        b.push(pid::DURABILITY_SERVICE, &w.into_bytes())?;
    }
    b.push(pid::DEADLINE, &duration(e, qos.deadline.period))?;
    b.push(
        pid::LATENCY_BUDGET,
        &duration(e, qos.latency_budget.duration),
    )?;
    b.push(pid::LIVELINESS, &{
        let mut w = value();
        w.u32(qos.liveliness.kind.to_wire())
            .duration(qos.liveliness.lease_duration);
        w.into_bytes()
    })?;
    b.push_u32(pid::OWNERSHIP, qos.ownership.to_wire())?;
    if qos.ownership_strength != defaults.ownership_strength {
        b.push_u32(pid::OWNERSHIP_STRENGTH, qos.ownership_strength.value as u32)?;
    }
    b.push_u32(pid::DESTINATION_ORDER, qos.destination_order.to_wire())?;
    b.push(pid::PRESENTATION, &{
        let mut w = value();
        w.u32(qos.presentation.access_scope.to_wire())
            .bool(qos.presentation.coherent_access)
            .bool(qos.presentation.ordered_access);
        w.into_bytes()
    })?;
    if !qos.partition.names.is_empty() {
        let mut w = value();
        w.u32(u32::try_from(qos.partition.names.len()).unwrap_or(u32::MAX));
        for name in &qos.partition.names {
            w.string(name);
        }
        b.push(pid::PARTITION, &w.into_bytes())?;
    }
    for (id, bytes) in [
        (pid::USER_DATA, &qos.user_data.value),
        (pid::TOPIC_DATA, &qos.topic_data.value),
        (pid::GROUP_DATA, &qos.group_data.value),
    ] {
        if !bytes.is_empty() {
            let mut w = value();
            w.octets(bytes);
            b.push(id, &w.into_bytes())?;
        }
    }
    if qos.lifespan != defaults.lifespan {
        b.push(pid::LIFESPAN, &duration(e, qos.lifespan.duration))?;
    }
    if qos.history != defaults.history {
        let mut w = value();
        write_history(&mut w, qos.history);
        b.push(pid::HISTORY, &w.into_bytes())?;
    }
    if qos.resource_limits != defaults.resource_limits {
        let mut w = value();
        write_resource_limits(&mut w, &qos.resource_limits);
        b.push(pid::RESOURCE_LIMITS, &w.into_bytes())?;
    }
    if qos.time_based_filter != defaults.time_based_filter {
        let d = qos.time_based_filter.minimum_separation;
        b.push(pid::TIME_BASED_FILTER, &duration(e, d))?;
    }
    b.push(pid::DATA_REPRESENTATION, &{
        let ids = &qos.data_representation.ids;
        let mut w = value();
        if ids.is_empty() {
            w.u32(1).i16(DataRepresentationId::XCDR.0);
        } else {
            w.u32(u32::try_from(ids.len()).unwrap_or(u32::MAX));
            for id in ids {
                w.i16(id.0);
            }
        }
        w.into_bytes()
    })?;
    if qos.type_consistency != defaults.type_consistency {
        let t = &qos.type_consistency;
        let mut w = value();
        w.u16(match t.kind {
            TypeConsistencyKind::DisallowTypeCoercion => 0,
            TypeConsistencyKind::AllowTypeCoercion => 1,
        })
        .bool(t.ignore_sequence_bounds)
        .bool(t.ignore_string_bounds)
        .bool(t.ignore_member_names)
        .bool(t.prevent_type_widening)
        .bool(t.force_type_validation);
        b.push(pid::TYPE_CONSISTENCY_ENFORCEMENT, &w.into_bytes())?;
    }
    Ok(())
}

fn duration(e: crate::wire::Endianness, d: crate::qos::Duration) -> Vec<u8> {
    let mut w = ValueWriter::new(e);
    w.duration(d);
    w.into_bytes()
}

fn write_history(w: &mut ValueWriter, h: History) {
    match h {
        History::KeepLast { depth } => w.u32(0).i32(depth),
        // The depth is ignored for KEEP_ALL; 1 is what Cyclone DDS sends.
        History::KeepAll => w.u32(1).i32(1),
    };
}

fn write_resource_limits(w: &mut ValueWriter, l: &ResourceLimits) {
    w.i32(l.max_samples)
        .i32(l.max_instances)
        .i32(l.max_samples_per_instance);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{Duration, Partition};
    use crate::wire::{Endianness, ParameterList};

    fn one(id: u16, value: &[u8]) -> Parameter<'_> {
        Parameter {
            id,
            value,
            endianness: Endianness::Little,
        }
    }

    fn applied(id: u16, value: &[u8]) -> Result<EndpointQos, ValueError> {
        let mut qos = EndpointQos::reader_default();
        assert!(apply(&mut qos, &one(id, value))?);
        Ok(qos)
    }

    #[test]
    fn captured_values() {
        // Cyclone DDS 0.10.2 (ddsperf): RELIABLE, max blocking time 10 s.
        let q = applied(pid::RELIABILITY, &[2, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0]).expect("valid");
        assert_eq!(q.reliability.kind, ReliabilityKind::Reliable);
        assert_eq!(q.reliability.max_blocking_time, Duration::from_secs(10));
        // Cyclone DDS: KEEP_ALL (depth 1), resource limits 10000/-1/-1.
        let q = applied(pid::HISTORY, &[1, 0, 0, 0, 1, 0, 0, 0]).expect("valid");
        assert_eq!(q.history, History::KeepAll);
        let q = applied(
            pid::RESOURCE_LIMITS,
            &[
                0x10, 0x27, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
        )
        .expect("valid");
        assert_eq!(q.resource_limits.max_samples, 10000);
        assert_eq!(q.resource_limits.max_instances, -1);
        // Cyclone DDS: [XCDR, XCDR2].
        let q = applied(pid::DATA_REPRESENTATION, &[2, 0, 0, 0, 0, 0, 2, 0]).expect("valid");
        assert_eq!(
            q.data_representation.ids,
            [DataRepresentationId::XCDR, DataRepresentationId::XCDR2]
        );
        // RTI Connext 6.1.2: [XCDR] then a compression-id mask.
        let q = applied(
            pid::DATA_REPRESENTATION,
            &[1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0],
        )
        .expect("valid");
        assert_eq!(q.data_representation.ids, [DataRepresentationId::XCDR]);
        // Fast DDS 2.9.1 and Connext: type consistency, u16 kind and five booleans.
        let q =
            applied(pid::TYPE_CONSISTENCY_ENFORCEMENT, &[1, 0, 1, 1, 0, 0, 0, 0]).expect("valid");
        assert_eq!(q.type_consistency, TypeConsistencyEnforcement::default());
        // Fast DDS: durability service all defaults, liveliness infinite.
        let q = applied(
            pid::DURABILITY_SERVICE,
            &[
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
        )
        .expect("valid");
        assert_eq!(q.durability_service, DurabilityService::default());
        let q = applied(
            pid::LIVELINESS,
            &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff],
        )
        .expect("valid");
        assert!(q.liveliness.lease_duration.is_infinite());
        // Fast DDS: an empty partition list.
        let q = applied(pid::PARTITION, &[0, 0, 0, 0]).expect("valid");
        assert!(q.partition.names.is_empty());
    }

    #[test]
    fn tolerated_short_forms() {
        let q = applied(pid::RELIABILITY, &[1, 0, 0, 0]).expect("kind only");
        assert_eq!(q.reliability, Reliability::best_effort());
        let q = applied(pid::TYPE_CONSISTENCY_ENFORCEMENT, &[0, 0, 0, 0]).expect("kind only");
        assert_eq!(
            q.type_consistency.kind,
            TypeConsistencyKind::DisallowTypeCoercion
        );
        assert!(q.type_consistency.prevent_type_widening);
        assert!(!q.type_consistency.ignore_sequence_bounds);
        let q = applied(pid::DATA_REPRESENTATION, &[0, 0, 0, 0]).expect("empty");
        assert_eq!(q.data_representation, DataRepresentation::default());
    }

    #[test]
    fn invalid_values() {
        let err = |id, value: &[u8]| applied(id, value).expect_err("invalid");
        assert_eq!(
            err(pid::RELIABILITY, &[0, 0, 0, 0]),
            ValueError::UnknownKind { value: 0 }
        );
        assert_eq!(
            err(
                pid::RELIABILITY,
                &[2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]
            ),
            ValueError::NegativeDuration { seconds: -1 }
        );
        assert_eq!(
            err(pid::RELIABILITY, &[2, 0, 0, 0, 1, 0]),
            ValueError::Truncated {
                needed: 8,
                length: 6
            }
        );
        assert_eq!(
            err(pid::DURABILITY, &[4, 0, 0, 0]),
            ValueError::UnknownKind { value: 4 }
        );
        assert_eq!(
            err(pid::DURABILITY, &[]),
            ValueError::Truncated {
                needed: 4,
                length: 0
            }
        );
        assert_eq!(
            err(pid::HISTORY, &[2, 0, 0, 0, 1, 0, 0, 0]),
            ValueError::UnknownKind { value: 2 }
        );
        assert_eq!(
            err(pid::PRESENTATION, &[0, 0, 0, 0, 2, 0, 0, 0]),
            ValueError::InvalidBoolean { value: 2 }
        );
        assert_eq!(
            err(pid::PARTITION, &[0xff, 0xff, 0xff, 0xff]),
            ValueError::CountTooLarge {
                count: u32::MAX,
                available: 0
            }
        );
        assert_eq!(
            err(pid::PARTITION, &[2, 0, 0, 0, 2, 0, 0, 0, b'a', 0, 0, 0]),
            ValueError::Truncated {
                needed: 16,
                length: 12
            }
        );
        assert_eq!(
            err(pid::USER_DATA, &[5, 0, 0, 0, 1, 2]),
            ValueError::CountTooLarge {
                count: 5,
                available: 2
            }
        );
        assert_eq!(
            err(pid::TYPE_CONSISTENCY_ENFORCEMENT, &[2, 0]),
            ValueError::UnknownKind { value: 2 }
        );
        assert_eq!(
            err(pid::LIVELINESS, &[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ValueError::UnknownKind { value: 3 }
        );
        // Not a QoS parameter: untouched.
        let mut qos = EndpointQos::reader_default();
        assert_eq!(apply(&mut qos, &one(pid::TOPIC_NAME, &[])), Ok(false));
        assert_eq!(qos, EndpointQos::reader_default());
    }

    fn round_trip(qos: &EndpointQos, e: Endianness, start: EndpointQos) -> EndpointQos {
        let mut out = Vec::new();
        let mut b = ParameterListBuilder::encapsulated(&mut out, e);
        emit(qos, &mut b).expect("emit");
        b.finish();
        let (list, _) = ParameterList::parse_encapsulated(&out).expect("valid list");
        let mut parsed = start;
        for p in list.iter() {
            assert!(is_qos_pid(p.id));
            assert!(apply(&mut parsed, &p).expect("valid value"));
        }
        parsed
    }

    #[test]
    fn emit_then_parse() {
        for e in [Endianness::Little, Endianness::Big] {
            // Defaults round-trip whatever the receiver assumes for absent policies.
            let w = EndpointQos::writer_default();
            assert_eq!(round_trip(&w, e, EndpointQos::reader_default()), w);
            let r = EndpointQos::reader_default();
            assert_eq!(round_trip(&r, e, EndpointQos::writer_default()), r);

            let mut q = EndpointQos::writer_default();
            q.durability = Durability::TransientLocal;
            q.durability_service.history = History::KeepLast { depth: 5 };
            q.deadline.period = Duration::from_millis(250);
            q.latency_budget.duration = Duration::from_millis(3);
            q.liveliness.kind = LivelinessKind::ManualByTopic;
            q.liveliness.lease_duration = Duration::from_secs(2);
            q.destination_order = DestinationOrder::BySourceTimestamp;
            q.history = History::KeepAll;
            q.resource_limits.max_samples = 99;
            q.lifespan.duration = Duration::from_secs(60);
            q.ownership = Ownership::Exclusive;
            q.ownership_strength.value = -3;
            q.time_based_filter.minimum_separation = Duration::from_millis(10);
            q.presentation.access_scope = PresentationAccessScope::Group;
            q.presentation.ordered_access = true;
            q.partition = Partition::new(["a", "", "b*"]);
            q.user_data.value = vec![1, 2, 3];
            q.topic_data.value = vec![4];
            q.group_data.value = vec![5, 6, 7, 8, 9];
            q.data_representation.ids = vec![DataRepresentationId::XCDR2, DataRepresentationId(7)];
            q.type_consistency.force_type_validation = true;
            assert_eq!(round_trip(&q, e, EndpointQos::reader_default()), q);
        }
    }

    #[test]
    fn emit_bytes_of_reliability_first() {
        let mut out = Vec::new();
        let mut b = ParameterListBuilder::new(&mut out, Endianness::Big);
        emit(&EndpointQos::writer_default(), &mut b).expect("emit");
        // PID_RELIABILITY, length 12, RELIABLE, 0 s, 0x1999999a (100 ms).
        assert_eq!(
            out.get(..16),
            Some(&[0, 0x1a, 0, 12, 0, 0, 0, 2, 0, 0, 0, 0, 0x19, 0x99, 0x99, 0x9a][..])
        );
    }
}
