//! The handle table: C names every entity by a positive `int32_t` handle (as Cyclone DDS's
//! `dds_entity_t`), never by a pointer, so that a deleted or made-up handle is an error
//! rather than a dangling pointer. Handles are not reused.
//!
//! The table's lock is never held while FerroDDS works (which takes the participant's
//! lock and may call listeners): a call clones what it needs out of its entry and lets go.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use ferrodds::dynamic::DynamicType;
use ferrodds::{
    Condition, DomainParticipant, DynamicReader, DynamicTopic, DynamicWriter, FilterExpression,
    Publisher, Selection, SerializedBuffer, Subscriber,
};

use crate::retcode::{Fail, FERRODDS_RETCODE_ALREADY_DELETED};
use crate::waitset::WaitSetState;

/// An entity's handle (positive), or a negative return code where a call returns one.
#[allow(non_camel_case_types)]
pub type ferrodds_entity_t = i32;

/// A type registered from IDL or a TypeObject: what topics are created with.
#[derive(Debug)]
pub(crate) struct RegisteredType {
    pub(crate) name: String,
    pub(crate) ty: DynamicType,
}

/// What a handle names.
pub(crate) enum Entity {
    Participant(DomainParticipant),
    Publisher(Publisher),
    Subscriber(Subscriber),
    Topic(DynamicTopic),
    Writer(DynamicWriter),
    Reader(DynamicReader),
    ReadCondition(DynamicReader, Selection),
    QueryCondition(DynamicReader, Selection, Arc<FilterExpression>),
    StatusCondition(Condition),
    WaitSet(Arc<WaitSetState>),
    Type(Arc<RegisteredType>),
}

impl Entity {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Entity::Participant(_) => "participant",
            Entity::Publisher(_) => "publisher",
            Entity::Subscriber(_) => "subscriber",
            Entity::Topic(_) => "topic",
            Entity::Writer(_) => "writer",
            Entity::Reader(_) => "reader",
            Entity::ReadCondition(..) => "read condition",
            Entity::QueryCondition(..) => "query condition",
            Entity::StatusCondition(..) => "status condition",
            Entity::WaitSet(_) => "wait set",
            Entity::Type(_) => "type",
        }
    }
}

pub(crate) struct Entry {
    pub(crate) entity: Entity,
    /// The entity it was created from (0: none — participants and types).
    pub(crate) parent: ferrodds_entity_t,
    pub(crate) children: Vec<ferrodds_entity_t>,
    /// A reader's samples lent to C, by the address of their bytes (see `sample.rs`): the
    /// buffers as received, spare capacity and all (a boxed slice would have reallocated,
    /// and copied, each one whose capacity is larger than its sample).
    pub(crate) loans: HashMap<usize, Vec<u8>>,
    /// A writer's buffers lent to C to serialize samples into (see `sample.rs`), by their
    /// address, with the size asked for.
    pub(crate) buffers: HashMap<usize, (SerializedBuffer, usize)>,
}

#[derive(Default)]
pub(crate) struct Registry {
    last: ferrodds_entity_t,
    entries: HashMap<ferrodds_entity_t, Entry>,
}

pub(crate) fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Adds `entity` under `parent` (0: none) to the table; its new handle. When that fails
/// (its parent was deleted meanwhile) the entity is dropped, after the table's lock is let
/// go: dropping an endpoint withdraws it, which may run listeners that call back in.
pub(crate) fn register(
    entity: Entity,
    parent: ferrodds_entity_t,
) -> Result<ferrodds_entity_t, Fail> {
    let result = registry().insert(entity, parent);
    result.map_err(|(fail, entity)| {
        drop(entity);
        fail
    })
}

impl Registry {
    /// Adds `entity` under `parent` (0: none); its new handle. On failure the entity comes
    /// back, to be dropped without the table's lock.
    fn insert(
        &mut self,
        entity: Entity,
        parent: ferrodds_entity_t,
    ) -> Result<ferrodds_entity_t, (Fail, Box<Entity>)> {
        let Some(handle) = self.last.checked_add(1) else {
            let fail = Fail::new(
                crate::retcode::FERRODDS_RETCODE_OUT_OF_RESOURCES,
                "no handles left",
            );
            return Err((fail, Box::new(entity)));
        };
        if parent != 0 {
            // The parent may have been deleted while the entity was being made (the
            // table's lock is not held meanwhile): then the new one goes too.
            match self.entry(parent) {
                Ok(p) => p.children.push(handle),
                Err(fail) => return Err((fail, Box::new(entity))),
            }
        }
        self.last = handle;
        self.entries.insert(
            handle,
            Entry {
                entity,
                parent,
                children: Vec::new(),
                loans: HashMap::new(),
                buffers: HashMap::new(),
            },
        );
        Ok(handle)
    }

    /// The entry of `handle`, or why there is none.
    pub(crate) fn entry(&mut self, handle: ferrodds_entity_t) -> Result<&mut Entry, Fail> {
        let last = self.last;
        self.entries.get_mut(&handle).ok_or_else(|| {
            if handle > 0 && handle <= last {
                Fail::new(
                    FERRODDS_RETCODE_ALREADY_DELETED,
                    format!("entity {handle} was deleted"),
                )
            } else {
                Fail::bad(format!("{handle} is not an entity handle"))
            }
        })
    }

    /// The entity of `handle`.
    pub(crate) fn get(&mut self, handle: ferrodds_entity_t) -> Result<&Entity, Fail> {
        Ok(&self.entry(handle)?.entity)
    }

    /// The readers made from `parent`, with their GUIDs.
    pub(crate) fn readers_of(
        &mut self,
        parent: ferrodds_entity_t,
    ) -> Result<Vec<(ferrodds::Guid, ferrodds_entity_t)>, Fail> {
        let children = self.entry(parent)?.children.clone();
        Ok(children
            .into_iter()
            .filter_map(|h| match self.entries.get(&h).map(|e| &e.entity) {
                Some(Entity::Reader(r)) => Some((r.guid(), h)),
                _ => None,
            })
            .collect())
    }

    /// The participant `handle` belongs to (itself for a participant), and its handle.
    pub(crate) fn participant_of(
        &mut self,
        handle: ferrodds_entity_t,
    ) -> Result<(ferrodds_entity_t, DomainParticipant), Fail> {
        let mut at = handle;
        // Bounded by the tree's depth (participant, group, endpoint, condition).
        for _ in 0..8 {
            let entry = self.entry(at)?;
            if let Entity::Participant(p) = &entry.entity {
                return Ok((at, p.clone()));
            }
            if entry.parent == 0 {
                break;
            }
            at = entry.parent;
        }
        Err(Fail::bad(format!(
            "entity {handle} ({}) belongs to no participant",
            self.get(handle)?.kind()
        )))
    }

    /// Removes `handle` and everything created from it; their entries, to be dropped by the
    /// caller once this table's lock is let go (dropping an endpoint takes the
    /// participant's lock).
    pub(crate) fn remove_tree(&mut self, handle: ferrodds_entity_t) -> Result<Vec<Entry>, Fail> {
        let parent = self.entry(handle)?.parent;
        if let Some(p) = self.entries.get_mut(&parent) {
            p.children.retain(|&c| c != handle);
        }
        let mut removed = Vec::new();
        let mut stack = vec![handle];
        while let Some(h) = stack.pop() {
            if let Some(entry) = self.entries.remove(&h) {
                stack.extend(entry.children.iter().copied());
                removed.push(entry);
            }
        }
        // Children first: endpoints go before their participant.
        removed.reverse();
        Ok(removed)
    }
}

/// Wrong kind of entity for an argument.
pub(crate) fn wrong_kind(handle: ferrodds_entity_t, entity: &Entity, wanted: &str) -> Fail {
    Fail::bad(format!(
        "entity {handle} is a {}, not a {wanted}",
        entity.kind()
    ))
}

impl Registry {
    /// The handle of the first entity `matches` holds for (0: none).
    pub(crate) fn find(&self, matches: impl Fn(&Entity) -> bool) -> ferrodds_entity_t {
        self.entries
            .iter()
            .find(|(_, e)| matches(&e.entity))
            .map_or(0, |(&h, _)| h)
    }
}
