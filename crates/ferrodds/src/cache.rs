//! The reader's history cache at the DCPS level: instances, their states, and the
//! samples kept for the application until it takes them.
//!
//! Samples are kept serialized and decoded when the application takes them, in its own
//! thread and outside the participant's lock.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::SystemTime;

use ferrodds_rtps::wire::Guid;
use ferrodds_rtps::ChangeKind;

use crate::sample::{InstanceHandle, InstanceState, SampleInfo, SampleState, ViewState};

/// A sample as stored: its bytes and what the reader knows of it.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) payload: Vec<u8>,
    /// True when `payload` is a key-only sample (dispose, unregister).
    pub(crate) key_only: bool,
    pub(crate) valid_data: bool,
    pub(crate) read: bool,
    pub(crate) source_timestamp: Option<SystemTime>,
    pub(crate) writer: Guid,
    pub(crate) sequence_number: i64,
}

#[derive(Debug)]
struct Instance {
    state: InstanceState,
    /// The application has not yet seen a sample of this instance (since it was reborn).
    new: bool,
    writers: BTreeSet<Guid>,
    samples: VecDeque<Stored>,
}

/// The per-instance depth (KEEP_LAST) or none (KEEP_ALL, bounded by `max_samples`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheLimits {
    pub(crate) depth: Option<usize>,
    pub(crate) max_samples: usize,
}

/// A sample handed out, still serialized.
#[derive(Debug)]
pub(crate) struct Taken {
    pub(crate) stored: Stored,
    pub(crate) info: SampleInfo,
}

#[derive(Debug)]
pub(crate) struct ReaderCache {
    limits: CacheLimits,
    instances: BTreeMap<InstanceHandle, Instance>,
    /// Arrival order across instances: (instance, sequence of arrival).
    order: BTreeMap<u64, InstanceHandle>,
    arrivals: u64,
    len: usize,
    /// Samples dropped because the cache was full (KEEP_ALL) — the RTPS reader is reliable
    /// up to here; beyond it the DCPS SAMPLE_REJECTED status applies.
    pub(crate) rejected: u64,
}

impl ReaderCache {
    pub(crate) fn new(limits: CacheLimits) -> Self {
        Self {
            limits,
            instances: BTreeMap::new(),
            order: BTreeMap::new(),
            arrivals: 0,
            len: 0,
            rejected: 0,
        }
    }

    /// Samples waiting.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when a sample not yet read is waiting.
    pub(crate) fn has_unread(&self) -> bool {
        self.instances
            .values()
            .any(|i| i.samples.iter().any(|s| !s.read))
    }

    /// Adds a change from `writer` to instance `handle`.
    pub(crate) fn insert(&mut self, handle: InstanceHandle, kind: ChangeKind, stored: Stored) {
        let writer = stored.writer;
        let instance = self.instances.entry(handle).or_insert_with(|| Instance {
            state: InstanceState::Alive,
            new: true,
            writers: BTreeSet::new(),
            samples: VecDeque::new(),
        });
        match kind {
            ChangeKind::Alive => {
                if instance.state != InstanceState::Alive {
                    // Reborn: the application sees it as new again.
                    instance.new = true;
                }
                instance.state = InstanceState::Alive;
                instance.writers.insert(writer);
            }
            ChangeKind::Disposed | ChangeKind::DisposedUnregistered => {
                instance.state = InstanceState::NotAliveDisposed;
                if kind == ChangeKind::DisposedUnregistered {
                    instance.writers.remove(&writer);
                }
            }
            ChangeKind::Unregistered => {
                instance.writers.remove(&writer);
                if instance.writers.is_empty() && instance.state == InstanceState::Alive {
                    instance.state = InstanceState::NotAliveNoWriters;
                } else {
                    // Nothing for the application to see.
                    return;
                }
            }
        }
        if let Some(depth) = self.limits.depth {
            while instance.samples.len() >= depth.max(1) {
                instance.samples.pop_front();
                self.len -= 1;
            }
        } else if self.len >= self.limits.max_samples {
            self.rejected += 1;
            return;
        }
        instance.samples.push_back(stored);
        self.len += 1;
        self.arrivals += 1;
        self.order.insert(self.arrivals, handle);
    }

    /// A writer is gone: its instances without other writers become NOT_ALIVE_NO_WRITERS,
    /// which the application learns from an invalid-data sample.
    pub(crate) fn writer_lost(&mut self, writer: Guid) {
        let handles: Vec<InstanceHandle> = self
            .instances
            .iter()
            .filter(|(_, i)| i.writers.contains(&writer))
            .map(|(h, _)| *h)
            .collect();
        for handle in handles {
            let Some(instance) = self.instances.get_mut(&handle) else {
                continue;
            };
            instance.writers.remove(&writer);
            if instance.writers.is_empty() && instance.state == InstanceState::Alive {
                instance.state = InstanceState::NotAliveNoWriters;
                let key = instance
                    .samples
                    .back()
                    .map(|s| (s.payload.clone(), s.key_only));
                if let Some((payload, key_only)) = key {
                    let stored = Stored {
                        payload,
                        key_only,
                        valid_data: false,
                        read: false,
                        source_timestamp: None,
                        writer,
                        sequence_number: 0,
                    };
                    instance.samples.push_back(stored);
                    self.len += 1;
                    self.arrivals += 1;
                    self.order.insert(self.arrivals, handle);
                }
            }
        }
    }

    /// Hands out up to `max` samples in arrival order: removes them (`take`) or marks them
    /// read (`read`). With `unread_only`, samples already read are skipped.
    pub(crate) fn collect(&mut self, max: usize, take: bool, unread_only: bool) -> Vec<Taken> {
        let mut out = Vec::new();
        // Walk arrival order; each order entry points at the oldest sample of its instance
        // that has not been handed out by this walk.
        let mut cursor: BTreeMap<InstanceHandle, usize> = BTreeMap::new();
        let mut seen_instances: BTreeSet<InstanceHandle> = BTreeSet::new();
        let mut consumed_orders = Vec::new();
        for (&arrival, &handle) in &self.order {
            if out.len() >= max {
                break;
            }
            let Some(instance) = self.instances.get(&handle) else {
                continue;
            };
            let index = cursor.entry(handle).or_insert(0);
            let Some(stored) = instance.samples.get(*index) else {
                continue;
            };
            *index += 1;
            if unread_only && stored.read {
                continue;
            }
            let view_state = if instance.new && !seen_instances.contains(&handle) {
                ViewState::New
            } else {
                ViewState::NotNew
            };
            seen_instances.insert(handle);
            let info = SampleInfo {
                sample_state: if stored.read {
                    SampleState::Read
                } else {
                    SampleState::NotRead
                },
                view_state,
                instance_state: instance.state,
                valid_data: stored.valid_data,
                source_timestamp: stored.source_timestamp,
                instance_handle: handle,
                publication_handle: InstanceHandle::of_guid(stored.writer),
                sequence_number: stored.sequence_number,
            };
            out.push(Taken {
                stored: stored.clone(),
                info,
            });
            consumed_orders.push((arrival, handle));
        }
        for handle in &seen_instances {
            if let Some(i) = self.instances.get_mut(handle) {
                i.new = false;
            }
        }
        if take {
            for (arrival, handle) in consumed_orders {
                self.order.remove(&arrival);
                if let Some(i) = self.instances.get_mut(&handle) {
                    if i.samples.pop_front().is_some() {
                        self.len -= 1;
                    }
                }
            }
            // Instances that are not alive and hold nothing are forgotten.
            self.instances.retain(|_, i| {
                !(i.samples.is_empty() && i.state != InstanceState::Alive && i.writers.is_empty())
            });
        } else {
            for taken in &out {
                if let Some(i) = self.instances.get_mut(&taken.info.instance_handle) {
                    for s in i.samples.iter_mut().filter(|s| {
                        s.sequence_number == taken.stored.sequence_number
                            && s.writer == taken.stored.writer
                    }) {
                        s.read = true;
                    }
                }
            }
        }
        out
    }

    /// The state of an instance, if known.
    #[cfg(test)]
    pub(crate) fn instance_state(&self, handle: InstanceHandle) -> Option<InstanceState> {
        self.instances.get(&handle).map(|i| i.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodds_rtps::wire::{EntityId, GuidPrefix};

    fn stored(writer: Guid, seq: i64, valid: bool) -> Stored {
        Stored {
            payload: vec![seq as u8],
            key_only: !valid,
            valid_data: valid,
            read: false,
            source_timestamp: None,
            writer,
            sequence_number: seq,
        }
    }

    fn writer(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    #[test]
    fn keep_last_keeps_the_newest_per_instance_and_takes_in_arrival_order() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: Some(2),
            max_samples: 100,
        });
        let (a, b) = (InstanceHandle([1; 16]), InstanceHandle([2; 16]));
        for seq in 1..=3 {
            c.insert(a, ChangeKind::Alive, stored(writer(1), seq, true));
        }
        c.insert(b, ChangeKind::Alive, stored(writer(1), 4, true));
        let taken = c.collect(10, true, false);
        let seqs: Vec<i64> = taken.iter().map(|t| t.info.sequence_number).collect();
        assert_eq!(seqs, vec![2, 3, 4]);
        assert_eq!(taken[0].info.view_state, ViewState::New);
        assert_eq!(taken[1].info.view_state, ViewState::NotNew);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn dispose_and_lost_writers_change_the_instance_state() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: Some(5),
            max_samples: 100,
        });
        let a = InstanceHandle([1; 16]);
        c.insert(a, ChangeKind::Alive, stored(writer(1), 1, true));
        c.insert(a, ChangeKind::Disposed, stored(writer(1), 2, false));
        let taken = c.collect(10, false, false);
        assert_eq!(taken.len(), 2);
        assert!(taken
            .iter()
            .all(|t| t.info.instance_state == InstanceState::NotAliveDisposed));
        assert!(!taken[1].info.valid_data);
        // read marks them read; a second read sees them as read
        assert!(c.collect(10, false, true).is_empty());
        let b = InstanceHandle([2; 16]);
        c.insert(b, ChangeKind::Alive, stored(writer(2), 1, true));
        c.writer_lost(writer(2));
        assert_eq!(c.instance_state(b), Some(InstanceState::NotAliveNoWriters));
        let last = c.collect(10, true, true);
        assert_eq!(last.last().map(|t| t.info.valid_data), Some(false));
    }

    #[test]
    fn keep_all_rejects_beyond_max_samples() {
        let mut c = ReaderCache::new(CacheLimits {
            depth: None,
            max_samples: 2,
        });
        for seq in 1..=3 {
            c.insert(
                InstanceHandle::NIL,
                ChangeKind::Alive,
                stored(writer(1), seq, true),
            );
        }
        assert_eq!((c.len(), c.rejected), (2, 1));
    }
}
