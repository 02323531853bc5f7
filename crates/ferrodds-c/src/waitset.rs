//! Wait sets and read conditions: block until samples are waiting in one of several
//! readers of a participant.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferrodds::{Condition, DomainParticipant, WaitSet};

use std::ffi::c_char;

use crate::ptr;
use crate::registry::{ferrodds_entity_t, register, registry, wrong_kind, Entity};
use crate::retcode::{
    call, ferrodds_return_t, Fail, FERRODDS_RETCODE_OK, FERRODDS_RETCODE_PRECONDITION_NOT_MET,
};
use crate::sample::{selection, FERRODDS_NOT_READ_SAMPLE_STATE};

/// A wait set: its participant, and what is attached with the value its wait hands back.
pub(crate) struct WaitSetState {
    participant: (ferrodds_entity_t, DomainParticipant),
    attached: Mutex<Arc<Attachments>>,
}

/// What is attached, and the wait set of it: made again on each attach and detach, so
/// that a wait (a program's every round trip) takes a reference to it rather than
/// building a wait set of clones.
struct Attachments {
    attached: Vec<Attached>,
    set: WaitSet,
}

impl Attachments {
    fn new(participant: &DomainParticipant, attached: Vec<Attached>) -> Arc<Self> {
        let mut set = WaitSet::new(participant);
        for a in &attached {
            set.attach(a.condition.clone());
        }
        Arc::new(Attachments { attached, set })
    }
}

impl WaitSetState {
    fn attachments(&self) -> std::sync::MutexGuard<'_, Arc<Attachments>> {
        self.attached.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Clone)]
struct Attached {
    entity: ferrodds_entity_t,
    condition: Condition,
    arg: isize,
}

/// A read condition on `reader`: it holds while samples whose states `mask` selects
/// (`FERRODDS_*_STATE` or'ed, 0 for any) are waiting. Deleted with the reader.
#[no_mangle]
pub extern "C" fn ferrodds_create_readcondition(
    reader: ferrodds_entity_t,
    mask: u32,
) -> ferrodds_entity_t {
    call("ferrodds_create_readcondition", || {
        let selection = selection(mask)?;
        let r = match registry().get(reader)? {
            Entity::Reader(r) => r.clone(),
            e => return Err(wrong_kind(reader, e, "reader")),
        };
        register(Entity::ReadCondition(r, selection), reader)
    })
}

/// `n` C strings at `p` (filter parameters).
///
/// # Safety
/// `p` is null (with `n` 0) or points at `n` pointers, each null or a NUL-terminated string.
pub(crate) unsafe fn strings<'a>(
    p: *const *const c_char,
    n: usize,
    what: &str,
) -> Result<Vec<&'a str>, Fail> {
    // SAFETY: the caller's promise.
    let list = unsafe { ptr::slice(p, n, what) }?;
    let mut out = Vec::with_capacity(n);
    for (i, &s) in list.iter().enumerate() {
        // SAFETY: the caller's promise for each string.
        out.push(unsafe { ptr::c_str(s, &format!("{what}[{i}]")) }?);
    }
    Ok(out)
}

/// A query condition on `reader`: it holds while samples whose states `mask` selects and
/// that the filter expression `expression` keeps are waiting (DDS SQL over the type's
/// members; `%n` is `parameters[n]`, `nparameters` of them). Taking or reading through it
/// hands out only those. Deleted with the reader.
///
/// # Safety
/// `expression` is null or a NUL-terminated string; `parameters` is null (with
/// `nparameters` 0) or points at `nparameters` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_querycondition(
    reader: ferrodds_entity_t,
    mask: u32,
    expression: *const c_char,
    parameters: *const *const c_char,
    nparameters: usize,
) -> ferrodds_entity_t {
    call("ferrodds_create_querycondition", || {
        // SAFETY: the caller's promise.
        let expression = unsafe { ptr::c_str(expression, "expression") }?;
        // SAFETY: the caller's promise.
        let parameters = unsafe { strings(parameters, nparameters, "parameters") }?;
        let selection = selection(mask)?;
        let r = match registry().get(reader)? {
            Entity::Reader(r) => r.clone(),
            e => return Err(wrong_kind(reader, e, "reader")),
        };
        let query = r.query(expression, &parameters)?;
        register(
            Entity::QueryCondition(r, selection, Arc::new(query)),
            reader,
        )
    })
}

/// A status condition of `entity` (a writer or reader): it holds while one of the
/// statuses in `mask` (`FERRODDS_*_STATUS` or'ed) changed since the application last read
/// it (`ferrodds_get_*_status`; DATA_AVAILABLE: while unread samples wait). Deleted with
/// the entity.
#[no_mangle]
pub extern "C" fn ferrodds_create_statuscondition(
    entity: ferrodds_entity_t,
    mask: u32,
) -> ferrodds_entity_t {
    call("ferrodds_create_statuscondition", || {
        let mask = crate::status::status_mask(mask)?;
        let condition = match registry().get(entity)? {
            Entity::Writer(w) => w.status_condition(mask),
            Entity::Reader(r) => r.status_condition(mask),
            e => return Err(wrong_kind(entity, e, "writer or reader")),
        };
        register(Entity::StatusCondition(condition), entity)
    })
}

/// A wait set for the readers and read conditions of `participant`.
#[no_mangle]
pub extern "C" fn ferrodds_create_waitset(participant: ferrodds_entity_t) -> ferrodds_entity_t {
    call("ferrodds_create_waitset", || {
        let p = match registry().get(participant)? {
            Entity::Participant(p) => p.clone(),
            e => return Err(wrong_kind(participant, e, "participant")),
        };
        let state = WaitSetState {
            attached: Mutex::new(Attachments::new(&p, Vec::new())),
            participant: (participant, p),
        };
        register(Entity::WaitSet(Arc::new(state)), participant)
    })
}

fn waitset(handle: ferrodds_entity_t) -> Result<Arc<WaitSetState>, Fail> {
    match registry().get(handle)? {
        Entity::WaitSet(w) => Ok(Arc::clone(w)),
        e => Err(wrong_kind(handle, e, "wait set")),
    }
}

/// Attaches `entity` to `waitset`: a read condition, or a reader (which then triggers
/// when it holds samples not read yet: its DATA_AVAILABLE). `arg` is what
/// [`ferrodds_waitset_wait`] hands back for it. Both must be of the wait set's participant.
#[no_mangle]
pub extern "C" fn ferrodds_waitset_attach(
    waitset: ferrodds_entity_t,
    entity: ferrodds_entity_t,
    arg: isize,
) -> ferrodds_return_t {
    call("ferrodds_waitset_attach", || {
        let ws = self::waitset(waitset)?;
        let mut reg = registry();
        let condition = match reg.get(entity)? {
            Entity::ReadCondition(r, s) => Condition::read_selection(r, *s),
            Entity::QueryCondition(r, s, q) => r.query_condition(*s, (**q).clone()),
            Entity::StatusCondition(c) => c.clone(),
            Entity::Reader(r) => {
                Condition::read_selection(r, selection(FERRODDS_NOT_READ_SAMPLE_STATE)?)
            }
            e => return Err(wrong_kind(entity, e, "condition or reader")),
        };
        let (of_entity, _) = reg.participant_of(entity)?;
        drop(reg);
        if of_entity != ws.participant.0 {
            return Err(Fail::new(
                FERRODDS_RETCODE_PRECONDITION_NOT_MET,
                format!(
                    "entity {entity} belongs to participant {of_entity}, the wait set to {}",
                    ws.participant.0
                ),
            ));
        }
        let mut current = ws.attachments();
        if current.attached.iter().any(|a| a.entity == entity) {
            return Err(Fail::new(
                FERRODDS_RETCODE_PRECONDITION_NOT_MET,
                format!("entity {entity} is attached already"),
            ));
        }
        let mut attached = current.attached.clone();
        attached.push(Attached {
            entity,
            condition,
            arg,
        });
        *current = Attachments::new(&ws.participant.1, attached);
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Detaches `entity` from `waitset`.
#[no_mangle]
pub extern "C" fn ferrodds_waitset_detach(
    waitset: ferrodds_entity_t,
    entity: ferrodds_entity_t,
) -> ferrodds_return_t {
    call("ferrodds_waitset_detach", || {
        let ws = self::waitset(waitset)?;
        let mut current = ws.attachments();
        let mut attached = current.attached.clone();
        attached.retain(|a| a.entity != entity);
        if attached.len() == current.attached.len() {
            return Err(Fail::new(
                FERRODDS_RETCODE_PRECONDITION_NOT_MET,
                format!("entity {entity} is not attached"),
            ));
        }
        *current = Attachments::new(&ws.participant.1, attached);
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Waits up to `timeout_ns` (`FERRODDS_INFINITY`: without end) for an attached condition
/// to hold. Returns how many hold (0 on timeout) and writes the `arg` of the first
/// `nargs` of them into `args`. Conditions of entities deleted meanwhile never hold.
///
/// # Safety
/// `args` is null (with `nargs` 0) or points at `nargs` writable values.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_waitset_wait(
    waitset: ferrodds_entity_t,
    args: *mut isize,
    nargs: usize,
    timeout_ns: i64,
) -> ferrodds_return_t {
    call("ferrodds_waitset_wait", || {
        // SAFETY: the caller's promise.
        let args = unsafe { ptr::out_slice(args, nargs, "args") }?;
        let ws = self::waitset(waitset)?;
        // What is attached when the wait starts (an attach during it does not end it).
        let current = Arc::clone(&ws.attachments());
        if current.attached.is_empty() {
            return Err(Fail::new(
                FERRODDS_RETCODE_PRECONDITION_NOT_MET,
                "nothing is attached: the wait would never end",
            ));
        }
        let timeout = u64::try_from(timeout_ns)
            .ok()
            .filter(|&ns| ns != i64::MAX as u64)
            .map_or(
                Duration::from_secs(u64::from(u32::MAX)),
                Duration::from_nanos,
            );
        match current.set.wait(timeout) {
            Ok(triggered) => {
                for (slot, &i) in args.iter_mut().zip(&triggered) {
                    *slot = current.attached[i].arg;
                }
                Ok(i32::try_from(triggered.len()).unwrap_or(i32::MAX))
            }
            Err(ferrodds::Error::Timeout(..)) => Ok(0),
            Err(e) => Err(e.into()),
        }
    })
}

/// Waits up to `timeout_ns` until `entity` (a writer or reader) has matched at least
/// `count` readers or writers; `FERRODDS_RETCODE_TIMEOUT` when it has not.
#[no_mangle]
pub extern "C" fn ferrodds_wait_for_matched(
    entity: ferrodds_entity_t,
    count: u32,
    timeout_ns: i64,
) -> ferrodds_return_t {
    call("ferrodds_wait_for_matched", || {
        let timeout = Duration::from_nanos(u64::try_from(timeout_ns).unwrap_or(0));
        let e = match registry().get(entity)? {
            Entity::Writer(w) => Entity::Writer(w.clone()),
            Entity::Reader(r) => Entity::Reader(r.clone()),
            e => return Err(wrong_kind(entity, e, "writer or reader")),
        };
        match e {
            Entity::Writer(w) => w.wait_for_matched(count as usize, timeout)?,
            Entity::Reader(r) => r.wait_for_matched(count as usize, timeout)?,
            _ => {}
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Waits up to `timeout_ns` until every matched reliable reader acknowledged what
/// `writer` wrote; `FERRODDS_RETCODE_TIMEOUT` when not.
#[no_mangle]
pub extern "C" fn ferrodds_wait_for_acks(
    writer: ferrodds_entity_t,
    timeout_ns: i64,
) -> ferrodds_return_t {
    call("ferrodds_wait_for_acks", || {
        let timeout = Duration::from_nanos(u64::try_from(timeout_ns).unwrap_or(0));
        let w = match registry().get(writer)? {
            Entity::Writer(w) => w.clone(),
            e => return Err(wrong_kind(writer, e, "writer")),
        };
        w.wait_for_acknowledgments(timeout)?;
        Ok(FERRODDS_RETCODE_OK)
    })
}
