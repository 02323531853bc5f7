//! Statuses (DCPS communication statuses) read by C, and listeners called on their change.

use std::ffi::c_void;

use ferrodds::{Guid, StatusKind, StatusMask};

use crate::ptr;
use crate::registry::{ferrodds_entity_t, registry, wrong_kind, Entity};
use crate::retcode::{call, ferrodds_return_t, Fail, FERRODDS_RETCODE_OK};

/// INCONSISTENT_TOPIC, of a topic.
pub const FERRODDS_INCONSISTENT_TOPIC_STATUS: u32 = 1;
/// OFFERED_DEADLINE_MISSED, of a writer.
pub const FERRODDS_OFFERED_DEADLINE_MISSED_STATUS: u32 = 2;
/// REQUESTED_DEADLINE_MISSED, of a reader.
pub const FERRODDS_REQUESTED_DEADLINE_MISSED_STATUS: u32 = 4;
/// OFFERED_INCOMPATIBLE_QOS, of a writer.
pub const FERRODDS_OFFERED_INCOMPATIBLE_QOS_STATUS: u32 = 32;
/// REQUESTED_INCOMPATIBLE_QOS, of a reader.
pub const FERRODDS_REQUESTED_INCOMPATIBLE_QOS_STATUS: u32 = 64;
/// SAMPLE_LOST, of a reader.
pub const FERRODDS_SAMPLE_LOST_STATUS: u32 = 128;
/// SAMPLE_REJECTED, of a reader.
pub const FERRODDS_SAMPLE_REJECTED_STATUS: u32 = 256;
/// DATA_ON_READERS, of a subscriber.
pub const FERRODDS_DATA_ON_READERS_STATUS: u32 = 512;
/// DATA_AVAILABLE, of a reader.
pub const FERRODDS_DATA_AVAILABLE_STATUS: u32 = 1024;
/// LIVELINESS_LOST, of a writer.
pub const FERRODDS_LIVELINESS_LOST_STATUS: u32 = 2048;
/// LIVELINESS_CHANGED, of a reader.
pub const FERRODDS_LIVELINESS_CHANGED_STATUS: u32 = 4096;
/// PUBLICATION_MATCHED, of a writer.
pub const FERRODDS_PUBLICATION_MATCHED_STATUS: u32 = 8192;
/// SUBSCRIPTION_MATCHED, of a reader.
pub const FERRODDS_SUBSCRIPTION_MATCHED_STATUS: u32 = 16384;

/// The DCPS bit of `kind`.
pub(crate) fn bit(kind: StatusKind) -> u32 {
    match kind {
        StatusKind::SubscriptionMatched => FERRODDS_SUBSCRIPTION_MATCHED_STATUS,
        StatusKind::PublicationMatched => FERRODDS_PUBLICATION_MATCHED_STATUS,
        StatusKind::RequestedIncompatibleQos => FERRODDS_REQUESTED_INCOMPATIBLE_QOS_STATUS,
        StatusKind::OfferedIncompatibleQos => FERRODDS_OFFERED_INCOMPATIBLE_QOS_STATUS,
        StatusKind::RequestedDeadlineMissed => FERRODDS_REQUESTED_DEADLINE_MISSED_STATUS,
        StatusKind::OfferedDeadlineMissed => FERRODDS_OFFERED_DEADLINE_MISSED_STATUS,
        StatusKind::SampleLost => FERRODDS_SAMPLE_LOST_STATUS,
        StatusKind::SampleRejected => FERRODDS_SAMPLE_REJECTED_STATUS,
        StatusKind::LivelinessChanged => FERRODDS_LIVELINESS_CHANGED_STATUS,
        StatusKind::LivelinessLost => FERRODDS_LIVELINESS_LOST_STATUS,
        StatusKind::DataAvailable => FERRODDS_DATA_AVAILABLE_STATUS,
        StatusKind::DataOnReaders => FERRODDS_DATA_ON_READERS_STATUS,
        StatusKind::InconsistentTopic => FERRODDS_INCONSISTENT_TOPIC_STATUS,
        _ => 0,
    }
}

const KINDS: [StatusKind; 13] = StatusKind::ALL;

/// The statuses a mask of `FERRODDS_*_STATUS` bits names.
pub(crate) fn status_mask(mask: u32) -> Result<StatusMask, Fail> {
    let known = KINDS.iter().fold(0, |m, &k| m | bit(k));
    if mask & !known != 0 {
        return Err(Fail::bad(format!(
            "status mask 0x{mask:x} has bits no status has (0x{:x})",
            mask & !known
        )));
    }
    let kinds: Vec<StatusKind> = KINDS.into_iter().filter(|&k| mask & bit(k) != 0).collect();
    Ok(StatusMask::of(&kinds))
}

/// PUBLICATION_MATCHED of a writer, or SUBSCRIPTION_MATCHED of a reader.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ferrodds_matched_status_t {
    /// Readers (writers) matched ever.
    pub total_count: u64,
    /// Change of `total_count` since this status was last read (a read resets it).
    pub total_count_change: i64,
    /// Readers (writers) matched now.
    pub current_count: u64,
    /// Change of `current_count` since this status was last read.
    pub current_count_change: i64,
    /// The GUID of the last one that matched or left (zeros: none yet).
    pub last_handle: [u8; 16],
}

/// LIVELINESS_CHANGED of a reader.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ferrodds_liveliness_changed_status_t {
    /// Matched writers alive now.
    pub alive_count: u32,
    /// Matched writers not alive now.
    pub not_alive_count: u32,
    /// Change of `alive_count` since this status was last read (a read resets it).
    pub alive_count_change: i32,
    /// Change of `not_alive_count` since this status was last read.
    pub not_alive_count_change: i32,
    /// The GUID of the last writer whose liveliness changed (zeros: none yet).
    pub last_publication_handle: [u8; 16],
}

/// The total-count statuses: LIVELINESS_LOST, OFFERED/REQUESTED_DEADLINE_MISSED,
/// OFFERED/REQUESTED_INCOMPATIBLE_QOS, SAMPLE_LOST, SAMPLE_REJECTED.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ferrodds_count_status_t {
    /// Times it happened.
    pub total_count: u64,
    /// Change of `total_count` since this status was last read (a read resets it).
    pub total_count_change: i64,
    /// Deadlines: the instance last missed; other statuses: zeros.
    pub last_instance_handle: [u8; 16],
    /// Incompatible QoS: the id of the policy last found incompatible (DDS
    /// `QosPolicyId_t`); sample rejected: the last reason (1 instances, 2 samples, 3
    /// samples per instance limit, 4 undecodable); 0 otherwise.
    pub last_reason: i32,
}

enum Endpoint {
    Writer(ferrodds::DynamicWriter),
    Reader(ferrodds::DynamicReader),
}

fn endpoint(handle: ferrodds_entity_t) -> Result<Endpoint, Fail> {
    match registry().get(handle)? {
        Entity::Writer(w) => Ok(Endpoint::Writer(w.clone())),
        Entity::Reader(r) => Ok(Endpoint::Reader(r.clone())),
        e => Err(wrong_kind(handle, e, "writer or reader")),
    }
}

fn guid_bytes(g: Option<Guid>) -> [u8; 16] {
    g.map_or([0; 16], |g| g.to_bytes())
}

/// Writes `entity`'s PUBLICATION_MATCHED (a writer) or SUBSCRIPTION_MATCHED (a reader)
/// into `status`.
///
/// # Safety
/// `status` is null or points at a writable `ferrodds_matched_status_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_get_matched_status(
    entity: ferrodds_entity_t,
    status: *mut ferrodds_matched_status_t,
) -> ferrodds_return_t {
    call("ferrodds_get_matched_status", || {
        // SAFETY: the caller's promise.
        let out = unsafe { ptr::out(status, "status") }?;
        let s = match endpoint(entity)? {
            Endpoint::Writer(w) => w.publication_matched_status(),
            Endpoint::Reader(r) => r.subscription_matched_status(),
        };
        *out = ferrodds_matched_status_t {
            total_count: s.total_count,
            total_count_change: s.total_count_change,
            current_count: s.current_count,
            current_count_change: s.current_count_change,
            last_handle: guid_bytes(s.last_remote),
        };
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Writes `reader`'s LIVELINESS_CHANGED into `status`.
///
/// # Safety
/// `status` is null or points at a writable `ferrodds_liveliness_changed_status_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_get_liveliness_changed_status(
    reader: ferrodds_entity_t,
    status: *mut ferrodds_liveliness_changed_status_t,
) -> ferrodds_return_t {
    call("ferrodds_get_liveliness_changed_status", || {
        // SAFETY: the caller's promise.
        let out = unsafe { ptr::out(status, "status") }?;
        let Endpoint::Reader(r) = endpoint(reader)? else {
            return Err(Fail::bad(format!(
                "entity {reader} is a writer, not a reader"
            )));
        };
        let s = r.liveliness_changed_status();
        *out = ferrodds_liveliness_changed_status_t {
            alive_count: s.alive_count,
            not_alive_count: s.not_alive_count,
            alive_count_change: i32::try_from(s.alive_count_change).unwrap_or(i32::MAX),
            not_alive_count_change: i32::try_from(s.not_alive_count_change).unwrap_or(i32::MAX),
            last_publication_handle: guid_bytes(s.last_publication),
        };
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Writes the count status `kind` (one `FERRODDS_*_STATUS` bit: LIVELINESS_LOST,
/// OFFERED/REQUESTED_DEADLINE_MISSED, OFFERED/REQUESTED_INCOMPATIBLE_QOS, SAMPLE_LOST,
/// SAMPLE_REJECTED of a writer or reader; INCONSISTENT_TOPIC of a topic) of `entity` into
/// `status`; a status the entity does not have is `FERRODDS_RETCODE_BAD_PARAMETER`.
///
/// # Safety
/// `status` is null or points at a writable `ferrodds_count_status_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_get_count_status(
    entity: ferrodds_entity_t,
    kind: u32,
    status: *mut ferrodds_count_status_t,
) -> ferrodds_return_t {
    call("ferrodds_get_count_status", || {
        // SAFETY: the caller's promise.
        let out = unsafe { ptr::out(status, "status") }?;
        let topic = match registry().get(entity)? {
            Entity::Topic(t) => Some(t.clone()),
            _ => None,
        };
        if let Some(t) = topic {
            if kind != FERRODDS_INCONSISTENT_TOPIC_STATUS {
                return Err(Fail::bad(format!(
                    "status 0x{kind:x} is not a status of a topic"
                )));
            }
            let s = t.inconsistent_topic_status();
            *out = ferrodds_count_status_t {
                total_count: s.total_count,
                total_count_change: s.total_count_change,
                ..Default::default()
            };
            return Ok(FERRODDS_RETCODE_OK);
        }
        let e = endpoint(entity)?;
        let incompatible = |s: ferrodds::IncompatibleStatus| ferrodds_count_status_t {
            total_count: s.total_count,
            total_count_change: s.total_count_change,
            last_reason: s.last_policy.map_or(0, |p| p as i32),
            ..Default::default()
        };
        // A status that is a count and its change, nothing more.
        let count = |total_count, total_count_change| ferrodds_count_status_t {
            total_count,
            total_count_change,
            ..Default::default()
        };
        let deadline = |s: ferrodds::DeadlineMissedStatus| ferrodds_count_status_t {
            total_count: s.total_count,
            total_count_change: s.total_count_change,
            last_instance_handle: s.last_instance_handle.0,
            ..Default::default()
        };
        *out = match (kind, e) {
            (FERRODDS_LIVELINESS_LOST_STATUS, Endpoint::Writer(w)) => {
                let s = w.liveliness_lost_status();
                count(s.total_count, s.total_count_change)
            }
            (FERRODDS_OFFERED_DEADLINE_MISSED_STATUS, Endpoint::Writer(w)) => {
                deadline(w.offered_deadline_missed())
            }
            (FERRODDS_REQUESTED_DEADLINE_MISSED_STATUS, Endpoint::Reader(r)) => {
                deadline(r.requested_deadline_missed())
            }
            (FERRODDS_OFFERED_INCOMPATIBLE_QOS_STATUS, Endpoint::Writer(w)) => {
                incompatible(w.offered_incompatible_qos())
            }
            (FERRODDS_REQUESTED_INCOMPATIBLE_QOS_STATUS, Endpoint::Reader(r)) => {
                incompatible(r.requested_incompatible_qos())
            }
            (FERRODDS_SAMPLE_LOST_STATUS, Endpoint::Reader(r)) => {
                let s = r.sample_lost_status();
                count(s.total_count, s.total_count_change)
            }
            (FERRODDS_SAMPLE_REJECTED_STATUS, Endpoint::Reader(r)) => {
                let s = r.sample_rejected_status();
                ferrodds_count_status_t {
                    total_count: s.total_count,
                    total_count_change: s.total_count_change,
                    last_reason: s.last_reason.map_or(0, |r| match r {
                        ferrodds::SampleRejectedReason::InstancesLimit => 1,
                        ferrodds::SampleRejectedReason::SamplesLimit => 2,
                        ferrodds::SampleRejectedReason::SamplesPerInstanceLimit => 3,
                        _ => 4,
                    }),
                    ..Default::default()
                }
            }
            (k, Endpoint::Writer(_)) => {
                return Err(Fail::bad(format!(
                    "status 0x{k:x} is not a count status of a writer"
                )))
            }
            (k, Endpoint::Reader(_)) => {
                return Err(Fail::bad(format!(
                    "status 0x{k:x} is not a count status of a reader"
                )))
            }
        };
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// A listener: called with the entity whose status changed (for a publisher's,
/// subscriber's or participant's listener, the writer or reader, or 0 when it is not one
/// made through this API), the status's `FERRODDS_*_STATUS` bit, and the `arg` given with
/// it. It runs on a FerroDDS thread (or the thread of the call that caused the change),
/// with no lock held: it may call this API, and should return soon.
#[allow(non_camel_case_types)]
pub type ferrodds_listener_fn =
    Option<extern "C" fn(entity: ferrodds_entity_t, status: u32, arg: *mut c_void)>;

/// The C side of a listener, handed to FerroDDS's threads.
#[derive(Clone, Copy)]
struct Callback {
    f: extern "C" fn(ferrodds_entity_t, u32, *mut c_void),
    arg: *mut c_void,
}

// SAFETY: the header says the callback runs on other threads with `arg`; passing them
// there is what the caller asked for.
unsafe impl Send for Callback {}
// SAFETY: as above; the callback only receives `arg`, FerroDDS never reads through it.
unsafe impl Sync for Callback {}

impl Callback {
    fn call(&self, entity: ferrodds_entity_t, status: u32) {
        (self.f)(entity, status, self.arg);
    }
}

/// The handle of the writer or reader `guid` names (0: none made through this API).
fn handle_of(guid: Guid) -> ferrodds_entity_t {
    registry().find(|e| match e {
        Entity::Writer(w) => w.guid() == guid,
        Entity::Reader(r) => r.guid() == guid,
        _ => false,
    })
}

/// Sets the listener of `entity` for the statuses in `mask` (`FERRODDS_*_STATUS` or'ed):
/// `listener` is called with `arg` when one of them changes. A writer's or reader's
/// listener hears of its own statuses (a topic's: INCONSISTENT_TOPIC); a publisher's,
/// subscriber's or participant's of
/// those of its writers and readers that have no listener for it (DATA_ON_READERS before
/// DATA_AVAILABLE). A null `listener` or a 0 `mask` removes it.
#[no_mangle]
pub extern "C" fn ferrodds_set_listener(
    entity: ferrodds_entity_t,
    mask: u32,
    listener: ferrodds_listener_fn,
    arg: *mut c_void,
) -> ferrodds_return_t {
    call("ferrodds_set_listener", || {
        let callback = listener.filter(|_| mask != 0).map(|f| Callback { f, arg });
        let kinds: Vec<StatusKind> = KINDS.into_iter().filter(|&k| mask & bit(k) != 0).collect();
        let target = match registry().get(entity)? {
            Entity::Writer(w) => Entity::Writer(w.clone()),
            Entity::Reader(r) => Entity::Reader(r.clone()),
            Entity::Publisher(p) => Entity::Publisher(p.clone()),
            Entity::Subscriber(s) => Entity::Subscriber(s.clone()),
            Entity::Participant(p) => Entity::Participant(p.clone()),
            Entity::Topic(t) => Entity::Topic(t.clone()),
            e => {
                return Err(wrong_kind(
                    entity,
                    e,
                    "writer, reader, topic, publisher, subscriber or participant",
                ))
            }
        };
        let on_status = move |kind: StatusKind| {
            if let Some(c) = callback {
                if mask & bit(kind) != 0 {
                    c.call(entity, bit(kind));
                }
            }
        };
        let group_mask = if callback.is_some() {
            StatusMask::of(&kinds)
        } else {
            StatusMask::NONE
        };
        let on_parent = move |guid: Guid, kind: StatusKind| {
            if let Some(c) = callback {
                c.call(handle_of(guid), bit(kind));
            }
        };
        match target {
            // The entity's own listener hears the statuses in its mask (DATA_AVAILABLE
            // included), the rest go to its parents; an empty mask removes it.
            Entity::Writer(w) => w.set_listener(group_mask, on_status),
            Entity::Reader(r) => r.set_listener(group_mask, on_status),
            Entity::Publisher(p) => p.set_listener(group_mask, on_parent),
            Entity::Subscriber(s) => s.set_listener(group_mask, on_parent),
            Entity::Participant(p) => p.set_listener(group_mask, on_parent),
            // No callback is no listener: none is installed (one installed anywhere in the
            // process keeps waiting threads from receiving for themselves).
            Entity::Topic(t) if callback.is_none() => t.remove_listener(),
            Entity::Topic(t) => t.set_listener(on_status),
            _ => {}
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Asserts the liveliness of `entity`: a MANUAL_BY_TOPIC writer's, or a participant's
/// (its MANUAL_BY_PARTICIPANT writers).
#[no_mangle]
pub extern "C" fn ferrodds_assert_liveliness(entity: ferrodds_entity_t) -> ferrodds_return_t {
    call("ferrodds_assert_liveliness", || {
        let target = match registry().get(entity)? {
            Entity::Writer(w) => Entity::Writer(w.clone()),
            Entity::Participant(p) => Entity::Participant(p.clone()),
            e => return Err(wrong_kind(entity, e, "writer or participant")),
        };
        match target {
            Entity::Writer(w) => w.assert_liveliness()?,
            Entity::Participant(p) => p.assert_liveliness()?,
            _ => {}
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}
