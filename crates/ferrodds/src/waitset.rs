//! Wait sets: block until one of several conditions holds (DCPS WaitSet).

use std::time::Duration;

use ferrodds_cdr::Cdr;
use ferrodds_rtps::dcps::{FilterExpression, Selection};
use ferrodds_rtps::wire::EntityId;
use ferrodds_rtps::Timestamp;

use crate::error::{Error, Result};
use crate::participant::DomainParticipant;
use crate::reader::{DataReader, DynamicReader};
use crate::runtime::{Core, Interest, StatusMask};

/// A condition a wait set can wait for.
#[derive(Debug, Clone)]
pub enum Condition {
    /// A reader has samples not read yet (a ReadCondition on NOT_READ samples).
    Read(EntityId),
    /// A reader's matched writers changed since the condition was made (a StatusCondition
    /// on SUBSCRIPTION_MATCHED).
    SubscriptionMatched(EntityId, u64),
    /// A reader has samples its sample, view and instance state masks select (a
    /// ReadCondition with those masks).
    ReadSelection(EntityId, Selection),
    /// A status of a writer or reader in the mask changed since the application last read
    /// it (a StatusCondition with its enabled statuses): see
    /// [`crate::DynamicWriter::status_condition`], [`crate::DynamicReader::status_condition`].
    Status(EntityId, StatusMask),
    /// A reader has samples its state masks select that a filter expression keeps (a
    /// QueryCondition): see [`DynamicReader::query_condition`].
    Query(
        EntityId,
        Selection,
        std::sync::Arc<(ferrodds_cdr::dynamic::DynamicType, FilterExpression)>,
    ),
}

impl Condition {
    /// Data is waiting in `reader`.
    pub fn read<T: Cdr>(reader: &DataReader<T>) -> Condition {
        Condition::Read(reader.entity_id())
    }

    /// Samples that `selection` selects are waiting in `reader` (a runtime-typed reader).
    pub fn read_selection(reader: &DynamicReader, selection: Selection) -> Condition {
        Condition::ReadSelection(reader.entity_id(), selection)
    }

    /// `reader` gained or lost a matched writer.
    pub fn subscription_matched<T: Cdr>(reader: &DataReader<T>) -> Condition {
        let core = reader.participant().inner.shared.lock();
        let seen = core
            .node
            .data_reader_ref(reader.entity_id())
            .map(|r| r.matches().changes())
            .unwrap_or(0);
        Condition::SubscriptionMatched(reader.entity_id(), seen)
    }

    fn holds(&self, core: &mut Core, now: Timestamp) -> bool {
        match self {
            Condition::Status(id, mask) => core.node.status_changed(*id, *mask, now),
            Condition::Query(id, selection, query) => {
                let (ty, filter) = &**query;
                core.node.data_reader_ref(*id).is_some_and(|r| {
                    r.peek(now, *selection).iter().any(|(_, t)| {
                        crate::type_support::decode_dynamic(ty, &t.payload, t.key_only)
                            .is_ok_and(|v| filter.matches(&v))
                    })
                })
            }
            Condition::Read(id) => core
                .node
                .data_reader_ref(*id)
                .is_some_and(|r| r.has_unread(now)),
            Condition::ReadSelection(id, selection) => core
                .node
                .data_reader_ref(*id)
                .is_some_and(|r| r.has_selected(now, *selection)),
            Condition::SubscriptionMatched(id, seen) => core
                .node
                .data_reader_ref(*id)
                .is_some_and(|r| r.matches().changes() != *seen),
        }
    }
}

/// Waits for any of its conditions, all of one participant.
pub struct WaitSet {
    participant: DomainParticipant,
    conditions: Vec<Condition>,
}

impl WaitSet {
    /// An empty wait set on `participant`'s entities.
    pub fn new(participant: &DomainParticipant) -> Self {
        WaitSet {
            participant: participant.clone(),
            conditions: Vec::new(),
        }
    }

    /// Adds a condition; returns its index.
    pub fn attach(&mut self, condition: Condition) -> usize {
        self.conditions.push(condition);
        self.conditions.len() - 1
    }

    /// Waits until at least one condition holds; returns the indices of those that do.
    pub fn wait(&self, timeout: Duration) -> Result<Vec<usize>> {
        if self.conditions.is_empty() {
            return Err(Error::BadParameter(
                "a wait set with no conditions would wait forever".into(),
            ));
        }
        let mut triggered = Vec::new();
        let shared = &self.participant.inner.shared;
        // Read and query conditions hold only once data came for their readers; any other
        // condition may be made true by any change.
        let readers: Option<Vec<EntityId>> = self
            .conditions
            .iter()
            .map(|c| match c {
                Condition::Read(id)
                | Condition::ReadSelection(id, _)
                | Condition::Query(id, _, _) => Some(*id),
                Condition::SubscriptionMatched(..) | Condition::Status(..) => None,
            })
            .collect();
        let interest = readers.as_deref().map_or(Interest::Any, Interest::Readers);
        let done = shared.wait_until_for(interest, timeout, |core| {
            let now = shared.now();
            triggered = self
                .conditions
                .iter()
                .enumerate()
                .filter(|(_, c)| c.holds(core, now))
                .map(|(i, _)| i)
                .collect();
            !triggered.is_empty()
        });
        if done {
            Ok(triggered)
        } else {
            Err(Error::Timeout(timeout, "no condition of the wait set held"))
        }
    }
}
