//! Creating and deleting entities: participants, publishers, subscribers, types, topics,
//! writers and readers (wait sets and conditions are in `waitset.rs`).

use std::ffi::c_char;
use std::sync::Arc;

use ferrodds::dynamic::type_object::{
    dependencies, equivalence_hash, parse_complete, type_object, EquivalenceKind,
};
use ferrodds::{DomainParticipant, Qos};

use crate::ptr;
use crate::qos::{self, ferrodds_qos_t};
use crate::registry::{ferrodds_entity_t, register, registry, wrong_kind, Entity, RegisteredType};
use crate::retcode::{
    call, ferrodds_return_t, Fail, FERRODDS_RETCODE_BUFFER_TOO_SMALL, FERRODDS_RETCODE_OK,
    FERRODDS_RETCODE_PRECONDITION_NOT_MET, FERRODDS_RETCODE_UNSUPPORTED,
};

/// A participant in domain `domain_id`, configured by `FERRODDS_CONFIG` as every FerroDDS
/// participant is. Of `qos` (may be null) it takes USER_DATA (`ferrodds_qset_userdata`),
/// announced in SPDP; other policies are a writer's or reader's and ignored here.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_participant(
    domain_id: u32,
    qos: *const ferrodds_qos_t,
) -> ferrodds_entity_t {
    // SAFETY: the caller's promise.
    let user_data = unsafe { qos::optional(qos) }.and_then(ferrodds_qos_t::user_data);
    call("ferrodds_create_participant", || {
        if domain_id > 232 {
            return Err(Fail::bad(format!(
                "domain {domain_id}: RTPS's port mapping allows domains 0 to 232"
            )));
        }
        let mut builder = DomainParticipant::builder()?.domain_id(domain_id);
        if let Some(bytes) = user_data {
            builder = builder.user_data(bytes);
        }
        register(Entity::Participant(builder.build()?), 0)
    })
}

/// A publisher (`publisher`) or subscriber of `participant` with the partition and
/// PRESENTATION of `qos`.
fn create_group(
    participant: ferrodds_entity_t,
    qos: Option<&ferrodds_qos_t>,
    publisher: bool,
) -> Result<ferrodds_entity_t, Fail> {
    let qos = qos.cloned().unwrap_or_default();
    let p = participant_entity(participant)?;
    let names = qos.partition();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let group = if publisher {
        let mut g = p.create_publisher(&names);
        if let Some(presentation) = qos.presentation() {
            g = g.with_presentation(presentation);
        }
        Entity::Publisher(g)
    } else {
        let mut g = p.create_subscriber(&names);
        if let Some(presentation) = qos.presentation() {
            g = g.with_presentation(presentation);
        }
        Entity::Subscriber(g)
    };
    register(group, participant)
}

/// A publisher of `participant` with the partition and PRESENTATION of `qos` (null:
/// defaults).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_publisher(
    participant: ferrodds_entity_t,
    qos: *const ferrodds_qos_t,
) -> ferrodds_entity_t {
    // SAFETY: the caller's promise.
    let qos = unsafe { qos::optional(qos) };
    call("ferrodds_create_publisher", || {
        create_group(participant, qos, true)
    })
}

/// A subscriber of `participant` with the partition and PRESENTATION of `qos` (null:
/// defaults).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_subscriber(
    participant: ferrodds_entity_t,
    qos: *const ferrodds_qos_t,
) -> ferrodds_entity_t {
    // SAFETY: the caller's promise.
    let qos = unsafe { qos::optional(qos) };
    call("ferrodds_create_subscriber", || {
        create_group(participant, qos, false)
    })
}

/// The type `type_name` (`module::Name`) that the IDL text `idl` declares. Topics are
/// created with it; delete it with [`ferrodds_delete`] when no topic is to be made of it
/// any more (topics keep what they need).
///
/// # Safety
/// `idl` and `type_name` are null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_type_from_idl(
    idl: *const c_char,
    type_name: *const c_char,
) -> ferrodds_entity_t {
    call("ferrodds_create_type_from_idl", || {
        // SAFETY: the caller's promise.
        let text = unsafe { ptr::c_str(idl, "idl") }?;
        // SAFETY: the caller's promise.
        let name = unsafe { ptr::c_str(type_name, "type_name") }?;
        let spec =
            ferrodds_idl::parse_str("idl", text).map_err(|e| Fail::bad(format!("the IDL: {e}")))?;
        let ty = ferrodds_idl::dynamic::dynamic_type(&spec, name)
            .map_err(|e| Fail::bad(e.to_string()))?;
        let name = name.trim_start_matches("::").to_owned();
        register(Entity::Type(Arc::new(RegisteredType { name, ty })), 0)
    })
}

/// The type described by `n` serialized COMPLETE TypeObjects (XTypes 7.3.4): the type's
/// own first, then those of the types it refers to. Its name is `type_name`, or when null
/// the name in the TypeObject.
///
/// # Safety
/// `objects` and `sizes` are null (with `n` 0) or point at `n` values; each
/// `objects[i]` points at `sizes[i]` bytes; `type_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_type_from_type_objects(
    objects: *const *const u8,
    sizes: *const usize,
    n: usize,
    type_name: *const c_char,
) -> ferrodds_entity_t {
    call("ferrodds_create_type_from_type_objects", || {
        // SAFETY: the caller's promise.
        let pointers = unsafe { ptr::slice(objects, n, "objects") }?;
        // SAFETY: the caller's promise.
        let sizes = unsafe { ptr::slice(sizes, n, "sizes") }?;
        let mut library = Vec::with_capacity(n);
        for (i, (&p, &size)) in pointers.iter().zip(sizes).enumerate() {
            // SAFETY: the caller's promise for each object.
            let bytes = unsafe { ptr::bytes(p, size, &format!("objects[{i}]")) }?;
            let mut id = vec![0xf2];
            id.extend_from_slice(&equivalence_hash(bytes));
            library.push((id, bytes));
        }
        let Some(&(_, first)) = library.first() else {
            return Err(Fail::bad("no TypeObject given (n is 0)"));
        };
        let lookup = |id: &[u8]| library.iter().find(|(i, _)| i == id).map(|&(_, o)| o);
        let ty =
            parse_complete(first, &lookup).map_err(|e| Fail::bad(format!("objects[0]: {e}")))?;
        let name = if type_name.is_null() {
            ty.name().to_owned()
        } else {
            // SAFETY: not null, and the caller's promise.
            unsafe { ptr::c_str(type_name, "type_name") }?.to_owned()
        };
        register(Entity::Type(Arc::new(RegisteredType { name, ty })), 0)
    })
}

/// Writes TypeObject `index` of type `type` into `buffer` (`capacity` bytes) and its size
/// into `*size`: index 0 is the type's own COMPLETE TypeObject, the others those of the
/// types it refers to, as [`ferrodds_create_type_from_type_objects`] takes them. Returns
/// how many there are; `FERRODDS_RETCODE_BUFFER_TOO_SMALL` (with `*size` the size needed)
/// when `capacity` is too small, and nothing written.
///
/// # Safety
/// `buffer` is null (with `capacity` 0) or points at `capacity` writable bytes; `size` is
/// null or points at a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_get_type_object(
    type_: ferrodds_entity_t,
    index: u32,
    buffer: *mut u8,
    capacity: usize,
    size: *mut usize,
) -> ferrodds_return_t {
    call("ferrodds_get_type_object", || {
        // SAFETY: the caller's promise.
        let size = unsafe { ptr::out(size, "size") }?;
        let registered = match registry().get(type_)? {
            Entity::Type(t) => Arc::clone(t),
            e => return Err(wrong_kind(type_, e, "type")),
        };
        let mut types = vec![registered.ty.clone()];
        types.extend(dependencies(&registered.ty));
        let count = i32::try_from(types.len()).unwrap_or(i32::MAX);
        let ty = types
            .get(index as usize)
            .ok_or_else(|| Fail::bad(format!("index {index}: the type has {count} TypeObjects")))?;
        let object = type_object(ty, EquivalenceKind::Complete)
            .ok_or_else(|| Fail::bad(format!("{} has no TypeObject of its own", ty.name())))?;
        *size = object.len();
        if object.len() > capacity {
            return Err(Fail::new(
                FERRODDS_RETCODE_BUFFER_TOO_SMALL,
                format!(
                    "the TypeObject takes {} bytes, the buffer holds {capacity}",
                    object.len()
                ),
            ));
        }
        // SAFETY: the caller's promise: `capacity` writable bytes.
        let out = unsafe { ptr::out_slice(buffer, object.len(), "buffer") }?;
        out.copy_from_slice(&object);
        Ok(count)
    })
}

/// Topic `name` of type `type_` in `participant`.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_topic(
    participant: ferrodds_entity_t,
    name: *const c_char,
    type_: ferrodds_entity_t,
) -> ferrodds_entity_t {
    call("ferrodds_create_topic", || {
        // SAFETY: the caller's promise.
        let name = unsafe { ptr::c_str(name, "name") }?;
        let ty = match registry().get(type_)? {
            Entity::Type(t) => Arc::clone(t),
            e => return Err(wrong_kind(type_, e, "type")),
        };
        let p = participant_entity(participant)?;
        let topic = p.create_dynamic_topic(name, &ty.name, ty.ty.clone())?;
        register(Entity::Topic(topic), participant)
    })
}

/// The participant-side checks of a writer or reader: the parent (a participant or the
/// group kind `group`), the topic, both of one participant.
fn endpoint_parts(
    parent: ferrodds_entity_t,
    topic: ferrodds_entity_t,
    group: &str,
) -> Result<(Entity, ferrodds::DynamicTopic), Fail> {
    let mut reg = registry();
    let topic_entity = match reg.get(topic)? {
        Entity::Topic(t) => t.clone(),
        e => return Err(wrong_kind(topic, e, "topic")),
    };
    let parent_entity = match reg.get(parent)? {
        Entity::Participant(p) => Entity::Participant(p.clone()),
        Entity::Publisher(p) if group == "publisher" => Entity::Publisher(p.clone()),
        Entity::Subscriber(s) if group == "subscriber" => Entity::Subscriber(s.clone()),
        e => return Err(wrong_kind(parent, e, &format!("participant or {group}"))),
    };
    let (of_parent, _) = reg.participant_of(parent)?;
    let (of_topic, _) = reg.participant_of(topic)?;
    if of_parent != of_topic {
        return Err(Fail::new(
            FERRODDS_RETCODE_PRECONDITION_NOT_MET,
            format!("topic {topic} belongs to participant {of_topic}, entity {parent} to participant {of_parent}"),
        ));
    }
    Ok((parent_entity, topic_entity))
}

/// A writer of `topic` created from `parent` (a participant or a publisher), with `qos`
/// over a writer's defaults (reliable, keep last 1, volatile).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_writer(
    parent: ferrodds_entity_t,
    topic: ferrodds_entity_t,
    qos: *const ferrodds_qos_t,
) -> ferrodds_entity_t {
    // SAFETY: the caller's promise.
    let qos = unsafe { qos::optional(qos) }.cloned().unwrap_or_default();
    call("ferrodds_create_writer", || {
        let (group, topic) = endpoint_parts(parent, topic, "publisher")?;
        let qos = qos.apply(Qos::writer());
        let writer = match group {
            Entity::Publisher(p) => p.create_dynamic_writer(&topic, qos)?,
            Entity::Participant(p) => p.create_dynamic_writer(&topic, qos)?,
            _ => unreachable!("endpoint_parts gives a participant or publisher"),
        };
        register(Entity::Writer(writer), parent)
    })
}

/// A reader of `topic` created from `parent` (a participant or a subscriber), with `qos`
/// over a reader's defaults (best effort, keep last 1, volatile).
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_reader(
    parent: ferrodds_entity_t,
    topic: ferrodds_entity_t,
    qos: *const ferrodds_qos_t,
) -> ferrodds_entity_t {
    // SAFETY: the caller's promise.
    let qos = unsafe { qos::optional(qos) }.cloned().unwrap_or_default();
    call("ferrodds_create_reader", || {
        let (group, topic) = endpoint_parts(parent, topic, "subscriber")?;
        let qos = qos.apply(Qos::reader());
        let reader = match group {
            Entity::Subscriber(s) => s.create_dynamic_reader(&topic, qos)?,
            Entity::Participant(p) => p.create_dynamic_reader(&topic, qos)?,
            _ => unreachable!("endpoint_parts gives a participant or subscriber"),
        };
        register(Entity::Reader(reader), parent)
    })
}

/// Changes the QoS of `entity` (a writer or reader) to `qos` over a writer's or reader's
/// defaults, as at creation: only the policies DDS lets change may differ (deadline,
/// latency budget, partition, user/topic/group data, lifespan, ownership strength,
/// time-based filter, the data lifecycles). Matches follow: a writer moved into a
/// reader's partition matches it, one moved out unmatches. Of a publisher or subscriber,
/// the PARTITION of `qos` moves it and every writer or reader it made. Of a participant,
/// the USER_DATA of `qos` (none: empty) replaces its own and is announced at once. Returns
/// `FERRODDS_RETCODE_IMMUTABLE_POLICY` (naming the policy) when another policy would
/// change; nothing changed then. `FERRODDS_RETCODE_UNSUPPORTED` for other entities.
///
/// # Safety
/// `qos` is null or a live QoS.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_set_qos(
    entity: ferrodds_entity_t,
    qos: *const ferrodds_qos_t,
) -> ferrodds_return_t {
    // SAFETY: the caller's promise.
    let qos = unsafe { qos::optional(qos) }.cloned().unwrap_or_default();
    call("ferrodds_set_qos", || {
        // Out of the registry's lock: the change runs under the participant's.
        let target = match registry().get(entity)? {
            Entity::Writer(w) => Entity::Writer(w.clone()),
            Entity::Reader(r) => Entity::Reader(r.clone()),
            Entity::Publisher(p) => Entity::Publisher(p.clone()),
            Entity::Subscriber(s) => Entity::Subscriber(s.clone()),
            Entity::Participant(p) => Entity::Participant(p.clone()),
            other => {
                return Err(Fail::new(
                    FERRODDS_RETCODE_UNSUPPORTED,
                    format!(
                        "entity {entity} is a {}: set_qos takes participants, writers, \
                         readers, publishers and subscribers",
                        other.kind()
                    ),
                ))
            }
        };
        match target {
            Entity::Writer(w) => w.set_qos(qos.apply(Qos::writer()))?,
            Entity::Reader(r) => r.set_qos(qos.apply(Qos::reader()))?,
            Entity::Publisher(p) => p.set_qos(&qos.apply(Qos::writer()))?,
            Entity::Subscriber(s) => s.set_qos(&qos.apply(Qos::reader()))?,
            Entity::Participant(p) => p.set_user_data(qos.user_data().unwrap_or_default())?,
            _ => unreachable!("a participant, writer, reader, publisher or subscriber"),
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// A reader of `topic` created from `parent` (a participant or a subscriber) that takes
/// in only the samples the filter expression `expression` keeps (a content-filtered
/// topic's reader: DDS SQL over the type's members, `%n` is `parameters[n]`), with `qos`
/// over a reader's defaults.
///
/// # Safety
/// `qos` is null or a live QoS; `expression` is null or a NUL-terminated string;
/// `parameters` is null (with `nparameters` 0) or points at `nparameters` NUL-terminated
/// strings.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_create_filtered_reader(
    parent: ferrodds_entity_t,
    topic: ferrodds_entity_t,
    qos: *const ferrodds_qos_t,
    expression: *const c_char,
    parameters: *const *const c_char,
    nparameters: usize,
) -> ferrodds_entity_t {
    // SAFETY: the caller's promise.
    let qos = unsafe { qos::optional(qos) }.cloned().unwrap_or_default();
    call("ferrodds_create_filtered_reader", || {
        // SAFETY: the caller's promise.
        let expression = unsafe { ptr::c_str(expression, "expression") }?;
        // SAFETY: the caller's promise.
        let parameters = unsafe { crate::waitset::strings(parameters, nparameters, "parameters") }?;
        let (group, topic) = endpoint_parts(parent, topic, "subscriber")?;
        let qos = qos.apply(Qos::reader());
        let reader = match group {
            Entity::Subscriber(s) => {
                s.create_filtered_reader(&topic, qos, expression, &parameters)?
            }
            Entity::Participant(p) => {
                p.create_filtered_reader(&topic, qos, expression, &parameters)?
            }
            _ => unreachable!("endpoint_parts gives a participant or subscriber"),
        };
        register(Entity::Reader(reader), parent)
    })
}

/// Deletes `entity` and every entity created from it (a participant's publishers,
/// subscribers, topics, writers, readers, wait sets and conditions; a reader's
/// conditions and lent samples). Handles of deleted entities stay invalid.
#[no_mangle]
pub extern "C" fn ferrodds_delete(entity: ferrodds_entity_t) -> ferrodds_return_t {
    call("ferrodds_delete", || {
        let removed = registry().remove_tree(entity)?;
        // Dropped here, without the table's lock: an endpoint withdraws itself.
        drop(removed);
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// The entity `entity` was created from (0 for participants and types).
#[no_mangle]
pub extern "C" fn ferrodds_get_parent(entity: ferrodds_entity_t) -> ferrodds_entity_t {
    call("ferrodds_get_parent", || {
        Ok(registry().entry(entity)?.parent)
    })
}

/// The participant `entity` belongs to (itself for a participant).
#[no_mangle]
pub extern "C" fn ferrodds_get_participant(entity: ferrodds_entity_t) -> ferrodds_entity_t {
    call("ferrodds_get_participant", || {
        Ok(registry().participant_of(entity)?.0)
    })
}

/// Writes the 16 bytes of `entity`'s GUID (a writer's or reader's) into `guid`.
///
/// # Safety
/// `guid` is null or points at 16 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_get_guid(
    entity: ferrodds_entity_t,
    guid: *mut u8,
) -> ferrodds_return_t {
    call("ferrodds_get_guid", || {
        // SAFETY: the caller's promise.
        let out = unsafe { ptr::out_slice(guid, 16, "guid") }?;
        let g = match registry().get(entity)? {
            Entity::Writer(w) => w.guid(),
            Entity::Reader(r) => r.guid(),
            e => return Err(wrong_kind(entity, e, "writer or reader")),
        };
        out.copy_from_slice(&g.to_bytes());
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// The data representation `writer` writes, which is the one to serialize its samples in
/// (the first of its QoS's DATA_REPRESENTATION, else XCDR1 for a final type and XCDR2
/// otherwise): `FERRODDS_DATA_REPRESENTATION_XCDR1` (0) or `_XCDR2` (2).
#[no_mangle]
pub extern "C" fn ferrodds_get_data_representation(writer: ferrodds_entity_t) -> ferrodds_return_t {
    call("ferrodds_get_data_representation", || {
        let version = match registry().get(writer)? {
            Entity::Writer(w) => w.data_representation(),
            e => return Err(wrong_kind(writer, e, "writer")),
        };
        Ok(match version {
            ferrodds::ferrodds_cdr::XcdrVersion::Xcdr1 => {
                ferrodds_return_t::from(qos::FERRODDS_DATA_REPRESENTATION_XCDR1)
            }
            ferrodds::ferrodds_cdr::XcdrVersion::Xcdr2 => {
                ferrodds_return_t::from(qos::FERRODDS_DATA_REPRESENTATION_XCDR2)
            }
        })
    })
}

/// The participant `handle` names (a clone: the table's lock is let go before it is used).
fn participant_entity(handle: ferrodds_entity_t) -> Result<DomainParticipant, Fail> {
    match registry().get(handle)? {
        Entity::Participant(p) => Ok(p.clone()),
        e => Err(wrong_kind(handle, e, "participant")),
    }
}

/// The publisher or subscriber `handle` names (a clone).
fn group_entity(handle: ferrodds_entity_t) -> Result<Entity, Fail> {
    match registry().get(handle)? {
        Entity::Publisher(p) => Ok(Entity::Publisher(p.clone())),
        Entity::Subscriber(s) => Ok(Entity::Subscriber(s.clone())),
        e => Err(wrong_kind(handle, e, "publisher or subscriber")),
    }
}

/// DCPS `get_datareaders`: the readers of `subscriber` holding samples that `mask` selects
/// (`FERRODDS_*_STATE` bits, as a read condition's; 0 is any), one entry per sample, in the
/// order that taking one sample (`ferrodds_take` with that mask and room for one) from each
/// in turn reads them in: with ordered access of GROUP scope, one publisher's samples in
/// the order it wrote them, whichever of its writers wrote each. Call it between
/// `ferrodds_begin_coherent(subscriber)` and `ferrodds_end_coherent(subscriber)` so that no
/// sample arrives meanwhile. Writes up to `capacity` handles into `readers` and returns
/// how many entries there are (more than `capacity`: call again with more room).
///
/// # Safety
/// `readers` is null (with `capacity` 0) or points at `capacity` writable handles.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_get_datareaders(
    subscriber: ferrodds_entity_t,
    mask: u32,
    readers: *mut ferrodds_entity_t,
    capacity: usize,
) -> ferrodds_return_t {
    call("ferrodds_get_datareaders", || {
        // SAFETY: the caller's promise.
        let out = unsafe { ptr::out_slice(readers, capacity, "readers") }?;
        let selection = crate::sample::selection(mask)?;
        let s = match registry().get(subscriber)? {
            Entity::Subscriber(s) => s.clone(),
            e => return Err(wrong_kind(subscriber, e, "subscriber")),
        };
        // Out of the table's lock: the order is worked out under the participant's.
        let order = s.datareaders(selection);
        let handles = registry().readers_of(subscriber)?;
        let mut n = 0usize;
        for guid in order {
            // A reader deleted meanwhile is left out.
            let Some(&(_, handle)) = handles.iter().find(|(g, _)| *g == guid) else {
                continue;
            };
            if let Some(slot) = out.get_mut(n) {
                *slot = handle;
            }
            n += 1;
        }
        ferrodds_return_t::try_from(n).map_err(|_| Fail::bad(format!("{n} entries")))
    })
}

/// Starts a coherent set on `publisher` (PRESENTATION with coherent access), or an access
/// on `subscriber` (its readers hold back sets completed meanwhile until
/// [`ferrodds_end_coherent`]).
#[no_mangle]
pub extern "C" fn ferrodds_begin_coherent(publisher: ferrodds_entity_t) -> ferrodds_return_t {
    call("ferrodds_begin_coherent", || {
        match group_entity(publisher)? {
            Entity::Publisher(p) => p.begin_coherent_changes(),
            Entity::Subscriber(s) => s.begin_access(),
            _ => {}
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Ends the coherent set of `publisher`, or the access of `subscriber`
/// ([`ferrodds_begin_coherent`]).
#[no_mangle]
pub extern "C" fn ferrodds_end_coherent(entity: ferrodds_entity_t) -> ferrodds_return_t {
    call("ferrodds_end_coherent", || {
        match group_entity(entity)? {
            Entity::Publisher(p) => p.end_coherent_changes()?,
            Entity::Subscriber(s) => s.end_access(),
            _ => {}
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}
