//! QoS from C: a `ferrodds_qos_t` the caller creates, sets policies on (`ferrodds_qset_*`,
//! Cyclone DDS's names) and deletes. The policies set are applied, in the order set, over
//! the DCPS defaults of the entity created with it (a writer's or a reader's).
//!
//! Durations are nanoseconds; [`FERRODDS_INFINITY`] (and any negative value) is infinite.

use std::ffi::c_char;
use std::time::Duration;

use ferrodds::qos::{
    DataRepresentationId, DestinationOrder, Durability, LivelinessKind, Ownership, Presentation,
    PresentationAccessScope,
};
use ferrodds::Qos;

use crate::ptr;
use crate::retcode::{call, ferrodds_return_t, Fail, FERRODDS_RETCODE_OK};

/// An infinite duration.
pub const FERRODDS_INFINITY: i64 = 9_223_372_036_854_775_807;
/// No limit (resource limits, history depth).
pub const FERRODDS_LENGTH_UNLIMITED: i32 = -1;

/// RELIABILITY kind: best effort.
pub const FERRODDS_RELIABILITY_BEST_EFFORT: i32 = 0;
/// RELIABILITY kind: reliable.
pub const FERRODDS_RELIABILITY_RELIABLE: i32 = 1;
/// DURABILITY kind: volatile.
pub const FERRODDS_DURABILITY_VOLATILE: i32 = 0;
/// DURABILITY kind: transient local.
pub const FERRODDS_DURABILITY_TRANSIENT_LOCAL: i32 = 1;
/// DURABILITY kind: transient.
pub const FERRODDS_DURABILITY_TRANSIENT: i32 = 2;
/// DURABILITY kind: persistent.
pub const FERRODDS_DURABILITY_PERSISTENT: i32 = 3;
/// HISTORY kind: keep last `depth`.
pub const FERRODDS_HISTORY_KEEP_LAST: i32 = 0;
/// HISTORY kind: keep all.
pub const FERRODDS_HISTORY_KEEP_ALL: i32 = 1;
/// OWNERSHIP kind: shared.
pub const FERRODDS_OWNERSHIP_SHARED: i32 = 0;
/// OWNERSHIP kind: exclusive.
pub const FERRODDS_OWNERSHIP_EXCLUSIVE: i32 = 1;
/// LIVELINESS kind: automatic.
pub const FERRODDS_LIVELINESS_AUTOMATIC: i32 = 0;
/// LIVELINESS kind: manual by participant.
pub const FERRODDS_LIVELINESS_MANUAL_BY_PARTICIPANT: i32 = 1;
/// LIVELINESS kind: manual by topic.
pub const FERRODDS_LIVELINESS_MANUAL_BY_TOPIC: i32 = 2;
/// DESTINATION_ORDER kind: by reception timestamp.
pub const FERRODDS_DESTINATIONORDER_BY_RECEPTION_TIMESTAMP: i32 = 0;
/// DESTINATION_ORDER kind: by source timestamp.
pub const FERRODDS_DESTINATIONORDER_BY_SOURCE_TIMESTAMP: i32 = 1;
/// PRESENTATION access scope: instance.
pub const FERRODDS_PRESENTATION_INSTANCE: i32 = 0;
/// PRESENTATION access scope: topic.
pub const FERRODDS_PRESENTATION_TOPIC: i32 = 1;
/// PRESENTATION access scope: group.
pub const FERRODDS_PRESENTATION_GROUP: i32 = 2;
/// DATA_REPRESENTATION: XCDR version 1.
pub const FERRODDS_DATA_REPRESENTATION_XCDR1: i16 = 0;
/// DATA_REPRESENTATION: XCDR version 2.
pub const FERRODDS_DATA_REPRESENTATION_XCDR2: i16 = 2;

/// One policy as set.
#[derive(Debug, Clone)]
enum Policy {
    Reliability(bool, Duration),
    Durability(Durability),
    History(Option<u32>),
    ResourceLimits(i32, i32, i32),
    Deadline(Duration),
    Lifespan(Duration),
    Liveliness(LivelinessKind, Option<Duration>),
    Ownership(bool),
    OwnershipStrength(i32),
    Partition(Vec<String>),
    DestinationOrder(DestinationOrder),
    TimeBasedFilter(Duration),
    DataRepresentation(Vec<i16>),
    Presentation(Presentation),
    WriterDataLifecycle(bool),
    UserData(Vec<u8>),
    TopicData(Vec<u8>),
    GroupData(Vec<u8>),
}

/// QoS policies to create an entity with (opaque: made by [`ferrodds_create_qos`]).
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Default)]
pub struct ferrodds_qos_t {
    policies: Vec<Policy>,
}

impl ferrodds_qos_t {
    /// `base` with these policies applied.
    pub(crate) fn apply(&self, mut qos: Qos) -> Qos {
        for policy in &self.policies {
            qos = match policy.clone() {
                Policy::Reliability(true, blocking) => qos.reliable().max_blocking_time(blocking),
                Policy::Reliability(false, _) => qos.best_effort(),
                Policy::Durability(kind) => qos.durability(kind),
                Policy::History(Some(depth)) => qos.keep_last(depth),
                Policy::History(None) => qos.keep_all(),
                Policy::ResourceLimits(samples, instances, per_instance) => {
                    let limits = &mut qos.policies_mut().resource_limits;
                    limits.max_samples = samples;
                    limits.max_instances = instances;
                    limits.max_samples_per_instance = per_instance;
                    qos
                }
                Policy::Deadline(d) => qos.deadline(d),
                Policy::Lifespan(d) => qos.lifespan(d),
                Policy::Liveliness(kind, lease) => qos.liveliness(kind, lease),
                Policy::Ownership(exclusive) => {
                    qos.policies_mut().ownership = if exclusive {
                        Ownership::Exclusive
                    } else {
                        Ownership::Shared
                    };
                    qos
                }
                Policy::OwnershipStrength(s) => {
                    qos.policies_mut().ownership_strength.value = s;
                    qos
                }
                Policy::Partition(names) => qos.partition(names),
                Policy::DestinationOrder(order) => qos.destination_order(order),
                Policy::TimeBasedFilter(d) => qos.time_based_filter(d),
                Policy::DataRepresentation(ids) => {
                    qos.data_representation(ids.into_iter().map(DataRepresentationId))
                }
                Policy::Presentation(p) => qos.presentation(p),
                Policy::WriterDataLifecycle(on) => qos.autodispose_unregistered_instances(on),
                Policy::UserData(bytes) => qos.user_data(bytes),
                Policy::TopicData(bytes) => qos.topic_data(bytes),
                Policy::GroupData(bytes) => qos.group_data(bytes),
            };
        }
        qos
    }

    /// The partition set last, if any (a publisher's or subscriber's).
    pub(crate) fn partition(&self) -> Vec<String> {
        self.policies
            .iter()
            .rev()
            .find_map(|p| match p {
                Policy::Partition(names) => Some(names.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The USER_DATA set last, if any (a participant's).
    pub(crate) fn user_data(&self) -> Option<Vec<u8>> {
        self.policies.iter().rev().find_map(|p| match p {
            Policy::UserData(bytes) => Some(bytes.clone()),
            _ => None,
        })
    }

    /// The presentation set last, if any (a publisher's or subscriber's).
    pub(crate) fn presentation(&self) -> Option<Presentation> {
        self.policies.iter().rev().find_map(|p| match p {
            Policy::Presentation(p) => Some(*p),
            _ => None,
        })
    }
}

/// The QoS at `qos`, or none for a null pointer (defaults).
///
/// # Safety
/// `qos` is null or was made by [`ferrodds_create_qos`] and not deleted.
pub(crate) unsafe fn optional<'a>(qos: *const ferrodds_qos_t) -> Option<&'a ferrodds_qos_t> {
    // SAFETY: the caller's promise; `as_ref` checks null.
    unsafe { qos.as_ref() }
}

fn duration(ns: i64) -> Option<Duration> {
    (ns >= 0 && ns != FERRODDS_INFINITY).then(|| Duration::from_nanos(ns as u64))
}

/// Finite or "infinite" (a very long time) for policies that take a plain duration.
fn duration_or_long(ns: i64) -> Duration {
    duration(ns).unwrap_or(Duration::from_secs(u64::from(u32::MAX)))
}

/// A new, empty QoS (every policy at its default); delete it with [`ferrodds_delete_qos`].
#[no_mangle]
pub extern "C" fn ferrodds_create_qos() -> *mut ferrodds_qos_t {
    Box::into_raw(Box::default())
}

/// Deletes a QoS made by [`ferrodds_create_qos`]; null is ignored.
///
/// # Safety
/// `qos` is null or was made by [`ferrodds_create_qos`] and not deleted before.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_delete_qos(qos: *mut ferrodds_qos_t) {
    if !qos.is_null() {
        // SAFETY: made by Box::into_raw in ferrodds_create_qos, deleted once (the caller's
        // promise).
        drop(unsafe { Box::from_raw(qos) });
    }
}

/// Adds `policy` to the QoS at `qos`.
unsafe fn set(
    function: &str,
    qos: *mut ferrodds_qos_t,
    policy: impl FnOnce() -> Result<Policy, Fail>,
) -> ferrodds_return_t {
    call(function, || {
        // SAFETY: null or a live QoS, the callers' promise.
        let qos = unsafe { ptr::out(qos, "qos") }?;
        qos.policies.push(policy()?);
        Ok(FERRODDS_RETCODE_OK)
    })
}

fn kind_error(policy: &str, kind: i32) -> Fail {
    Fail::bad(format!("{kind} is not a {policy} kind"))
}

/// RELIABILITY: `kind` (`FERRODDS_RELIABILITY_*`) and how long a reliable writer may block.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_reliability(
    qos: *mut ferrodds_qos_t,
    kind: i32,
    max_blocking_time_ns: i64,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_reliability", qos, || match kind {
            FERRODDS_RELIABILITY_BEST_EFFORT => Ok(Policy::Reliability(false, Duration::ZERO)),
            FERRODDS_RELIABILITY_RELIABLE => Ok(Policy::Reliability(
                true,
                duration_or_long(max_blocking_time_ns),
            )),
            k => Err(kind_error("reliability", k)),
        })
    }
}

/// DURABILITY: `kind` (`FERRODDS_DURABILITY_*`).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_durability(
    qos: *mut ferrodds_qos_t,
    kind: i32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_durability", qos, || match kind {
            FERRODDS_DURABILITY_VOLATILE => Ok(Policy::Durability(Durability::Volatile)),
            FERRODDS_DURABILITY_TRANSIENT_LOCAL => {
                Ok(Policy::Durability(Durability::TransientLocal))
            }
            FERRODDS_DURABILITY_TRANSIENT => Ok(Policy::Durability(Durability::Transient)),
            FERRODDS_DURABILITY_PERSISTENT => Ok(Policy::Durability(Durability::Persistent)),
            k => Err(kind_error("durability", k)),
        })
    }
}

/// HISTORY: `kind` (`FERRODDS_HISTORY_*`) and, for keep last, `depth` (at least 1).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_history(
    qos: *mut ferrodds_qos_t,
    kind: i32,
    depth: i32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_history", qos, || match kind {
            FERRODDS_HISTORY_KEEP_LAST if depth >= 1 => Ok(Policy::History(Some(depth as u32))),
            FERRODDS_HISTORY_KEEP_LAST => Err(Fail::bad(format!(
                "keep last {depth}: the depth must be at least 1"
            ))),
            FERRODDS_HISTORY_KEEP_ALL => Ok(Policy::History(None)),
            k => Err(kind_error("history", k)),
        })
    }
}

/// RESOURCE_LIMITS; [`FERRODDS_LENGTH_UNLIMITED`] for no limit.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_resource_limits(
    qos: *mut ferrodds_qos_t,
    max_samples: i32,
    max_instances: i32,
    max_samples_per_instance: i32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_resource_limits", qos, || {
            for (name, v) in [
                ("max_samples", max_samples),
                ("max_instances", max_instances),
                ("max_samples_per_instance", max_samples_per_instance),
            ] {
                if v == 0 || v < FERRODDS_LENGTH_UNLIMITED {
                    return Err(Fail::bad(format!(
                        "{name} {v}: positive or FERRODDS_LENGTH_UNLIMITED"
                    )));
                }
            }
            Ok(Policy::ResourceLimits(
                max_samples,
                max_instances,
                max_samples_per_instance,
            ))
        })
    }
}

/// DEADLINE: the period.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_deadline(
    qos: *mut ferrodds_qos_t,
    period_ns: i64,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_deadline", qos, || {
            Ok(Policy::Deadline(duration_or_long(period_ns)))
        })
    }
}

/// LIFESPAN: how long a sample stays valid.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_lifespan(
    qos: *mut ferrodds_qos_t,
    duration_ns: i64,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_lifespan", qos, || {
            Ok(Policy::Lifespan(duration_or_long(duration_ns)))
        })
    }
}

/// LIVELINESS: `kind` (`FERRODDS_LIVELINESS_*`) and the lease.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_liveliness(
    qos: *mut ferrodds_qos_t,
    kind: i32,
    lease_duration_ns: i64,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_liveliness", qos, || {
            let kind = match kind {
                FERRODDS_LIVELINESS_AUTOMATIC => LivelinessKind::Automatic,
                FERRODDS_LIVELINESS_MANUAL_BY_PARTICIPANT => LivelinessKind::ManualByParticipant,
                FERRODDS_LIVELINESS_MANUAL_BY_TOPIC => LivelinessKind::ManualByTopic,
                k => return Err(kind_error("liveliness", k)),
            };
            Ok(Policy::Liveliness(kind, duration(lease_duration_ns)))
        })
    }
}

/// OWNERSHIP: `kind` (`FERRODDS_OWNERSHIP_*`).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_ownership(
    qos: *mut ferrodds_qos_t,
    kind: i32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_ownership", qos, || match kind {
            FERRODDS_OWNERSHIP_SHARED => Ok(Policy::Ownership(false)),
            FERRODDS_OWNERSHIP_EXCLUSIVE => Ok(Policy::Ownership(true)),
            k => Err(kind_error("ownership", k)),
        })
    }
}

/// OWNERSHIP_STRENGTH of a writer.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_ownership_strength(
    qos: *mut ferrodds_qos_t,
    strength: i32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_ownership_strength", qos, || {
            Ok(Policy::OwnershipStrength(strength))
        })
    }
}

/// PARTITION: `n` names (a publisher's or subscriber's; a writer's or reader's own).
///
/// # Safety
/// `qos` is null or a live QoS; `names` is null (with `n` 0) or points at `n` pointers, each
/// null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_partition(
    qos: *mut ferrodds_qos_t,
    n: u32,
    names: *const *const c_char,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_partition", qos, || {
            // Within the block above: `n` pointers at `names`, the caller's promise.
            let list = ptr::slice(names, n as usize, "names")?;
            let mut out = Vec::with_capacity(list.len());
            for (i, &name) in list.iter().enumerate() {
                // Each null or a NUL-terminated string, the caller's promise.
                out.push(ptr::c_str(name, &format!("names[{i}]"))?.to_owned());
            }
            Ok(Policy::Partition(out))
        })
    }
}

/// Sets `make(bytes)` from `sz` bytes at `value`.
///
/// # Safety
/// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
unsafe fn set_bytes(
    name: &'static str,
    qos: *mut ferrodds_qos_t,
    value: *const std::ffi::c_void,
    sz: usize,
    make: fn(Vec<u8>) -> Policy,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set(name, qos, || {
            // `sz` bytes at `value`, the caller's promise.
            let bytes = ptr::bytes(value.cast(), sz, "value")?;
            Ok(make(bytes.to_vec()))
        })
    }
}

/// USER_DATA: `sz` bytes at `value` (a participant's, announced in SPDP; a writer's or
/// reader's, in SEDP). Cyclone DDS's `dds_qset_userdata`.
///
/// # Safety
/// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_userdata(
    qos: *mut ferrodds_qos_t,
    value: *const std::ffi::c_void,
    sz: usize,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { set_bytes("ferrodds_qset_userdata", qos, value, sz, Policy::UserData) }
}

/// TOPIC_DATA: `sz` bytes at `value` (announced with each writer and reader).
///
/// # Safety
/// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_topicdata(
    qos: *mut ferrodds_qos_t,
    value: *const std::ffi::c_void,
    sz: usize,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { set_bytes("ferrodds_qset_topicdata", qos, value, sz, Policy::TopicData) }
}

/// GROUP_DATA: `sz` bytes at `value` (announced with each writer and reader).
///
/// # Safety
/// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_groupdata(
    qos: *mut ferrodds_qos_t,
    value: *const std::ffi::c_void,
    sz: usize,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { set_bytes("ferrodds_qset_groupdata", qos, value, sz, Policy::GroupData) }
}

/// DESTINATION_ORDER: `kind` (`FERRODDS_DESTINATIONORDER_*`).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_destination_order(
    qos: *mut ferrodds_qos_t,
    kind: i32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_destination_order", qos, || match kind {
            FERRODDS_DESTINATIONORDER_BY_RECEPTION_TIMESTAMP => Ok(Policy::DestinationOrder(
                DestinationOrder::ByReceptionTimestamp,
            )),
            FERRODDS_DESTINATIONORDER_BY_SOURCE_TIMESTAMP => Ok(Policy::DestinationOrder(
                DestinationOrder::BySourceTimestamp,
            )),
            k => Err(kind_error("destination order", k)),
        })
    }
}

/// TIME_BASED_FILTER of a reader: the minimum separation.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_time_based_filter(
    qos: *mut ferrodds_qos_t,
    minimum_separation_ns: i64,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_time_based_filter", qos, || {
            Ok(Policy::TimeBasedFilter(
                duration(minimum_separation_ns).unwrap_or(Duration::ZERO),
            ))
        })
    }
}

/// DATA_REPRESENTATION: `n` representations (`FERRODDS_DATA_REPRESENTATION_*`); a writer
/// uses the first.
///
/// # Safety
/// `qos` is null or a live QoS; `values` is null (with `n` 0) or points at `n` values.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_data_representation(
    qos: *mut ferrodds_qos_t,
    n: u32,
    values: *const i16,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_data_representation", qos, || {
            // Within the block above: `n` values at `values`, the caller's promise.
            let ids = ptr::slice(values, n as usize, "values")?;
            if let Some(bad) = ids.iter().find(|&&v| {
                v != FERRODDS_DATA_REPRESENTATION_XCDR1 && v != FERRODDS_DATA_REPRESENTATION_XCDR2
            }) {
                return Err(Fail::bad(format!("{bad} is not XCDR1 (0) or XCDR2 (2)")));
            }
            Ok(Policy::DataRepresentation(ids.to_vec()))
        })
    }
}

/// PRESENTATION of a publisher or subscriber: `access_scope` (`FERRODDS_PRESENTATION_*`).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_presentation(
    qos: *mut ferrodds_qos_t,
    access_scope: i32,
    coherent_access: bool,
    ordered_access: bool,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_presentation", qos, || {
            let access_scope = match access_scope {
                FERRODDS_PRESENTATION_INSTANCE => PresentationAccessScope::Instance,
                FERRODDS_PRESENTATION_TOPIC => PresentationAccessScope::Topic,
                FERRODDS_PRESENTATION_GROUP => PresentationAccessScope::Group,
                k => return Err(kind_error("presentation access scope", k)),
            };
            Ok(Policy::Presentation(Presentation {
                access_scope,
                coherent_access,
                ordered_access,
            }))
        })
    }
}

/// WRITER_DATA_LIFECYCLE: whether unregistering an instance disposes it.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_qset_writer_data_lifecycle(
    qos: *mut ferrodds_qos_t,
    autodispose: bool,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        set("ferrodds_qset_writer_data_lifecycle", qos, || {
            Ok(Policy::WriterDataLifecycle(autodispose))
        })
    }
}
