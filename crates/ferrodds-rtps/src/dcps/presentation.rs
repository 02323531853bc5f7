//! PRESENTATION (DDS 1.4 §2.2.3.6) in the core: the coherent sets a publisher's writers
//! mark, and the subscriber's side, which holds a set's changes back until the whole set is
//! there and then lets them all into the readers' caches at once.
//!
//! - A publisher ([`PublisherGroup`]) opens a set with `begin_coherent_changes`; each of its
//!   writers marks its changes with its own first sequence number in the set, and, with
//!   GROUP scope, every change with the publisher's group sequence number
//!   ([`crate::coherence`]). `end_coherent_changes` sends each writer's end marker.
//! - A reader with coherent access ([`CoherentReader`]) holds a writer's set until it ends,
//!   and drops a set it did not see whole: one that began before the reader matched, or
//!   that lost a change on the way (a best-effort reader, a KEEP_LAST writer that replaced
//!   a change before it was sent).
//! - With GROUP scope, a finished part waits for the parts of the publisher's other writers
//!   that readers of the same subscriber are matched with; the subscriber
//!   ([`crate::dcps::Dcps`]) lets the set in when they are all there.
//! - While the application reads a subscriber between `begin_access` and `end_access`,
//!   sets that complete wait until the access ends, so that the readers it reads one after
//!   the other show it the same sets.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::arrival::Found;
use crate::coherence::{Coherence, GroupCoherence};
use crate::qos::{Presentation, PresentationAccessScope};
use crate::reader::ReceivedChange;
use crate::wire::{EntityId, Guid, GuidPrefix, SequenceNumber};

/// A received change with its instance found, waiting for its set to be complete.
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) change: ReceivedChange,
    pub(crate) found: Found,
    pub(crate) passes: bool,
}

/// What a reader's coherent-set bookkeeping made of a change.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Admit these, in this order (a change outside any set, or a writer's complete set).
    Admit(Vec<Held>),
    /// Writer `writer`'s part of group set `set` is complete and waits in the reader;
    /// `writers`: the publisher's writers that took part, when the end marker listed them.
    GroupPart {
        writer: Guid,
        set: i64,
        writers: Option<Arc<[EntityId]>>,
    },
}

/// A writer's set as a reader receives it.
#[derive(Debug)]
struct Pending {
    /// PID_COHERENT_SET: the writer's first sequence number in the set.
    set: i64,
    /// The sequence number the next change of the set must have.
    next: i64,
    /// A change of the set is missing: the set is dropped when it ends.
    broken: bool,
    /// GROUP scope: the group set it belongs to.
    group: Option<i64>,
    changes: Vec<Held>,
}

/// A reader's coherent sets in progress.
#[derive(Debug, Default)]
pub(crate) struct CoherentReader {
    pending: BTreeMap<Guid, Pending>,
    /// Writers' complete parts of group sets, waiting for the rest of the group.
    finished: Vec<(Guid, i64, Vec<Held>)>,
    /// Changes held (pending and finished), bounded by `limit`.
    held: usize,
    /// Sets dropped because they were not seen whole.
    pub(crate) dropped: u64,
}

impl CoherentReader {
    /// Takes in one change: `group_scope` when the reader's subscriber has GROUP
    /// coherent access; at most `limit` changes are held (a writer's set that grows
    /// beyond is dropped, whatever the writer claims).
    pub(crate) fn offer(
        &mut self,
        held: Held,
        group_scope: bool,
        limit: usize,
        out: &mut Vec<Outcome>,
    ) {
        let writer = held.change.writer;
        let sn = held.change.sequence_number.0;
        let coherence = held.change.coherence.as_deref();
        let set = coherence.and_then(|c| c.set).map(|s| s.0);
        let end = coherence.is_some_and(|c| c.end);
        let listed = coherence
            .and_then(|c| c.group.as_ref())
            .and_then(|g| g.writers.clone());
        if let Some(p) = self.pending.get_mut(&writer) {
            if set == Some(p.set) {
                p.broken |= sn != p.next;
                p.next = sn + 1;
                if self.held >= limit {
                    p.broken = true;
                    self.held -= p.changes.len();
                    p.changes.clear();
                } else {
                    self.held += 1;
                    p.changes.push(held);
                }
                return;
            }
            // Any other change ends the set: complete if nothing came between.
            if let Some(mut p) = self.pending.remove(&writer) {
                p.broken |= sn != p.next;
                self.close(writer, p, group_scope, listed, out);
            }
        }
        match set {
            Some(first) => {
                let group = coherence.and_then(|c| c.group.as_ref()).and_then(|g| g.set);
                self.held += 1;
                self.pending.insert(
                    writer,
                    Pending {
                        set: first,
                        next: sn + 1,
                        // A set whose first change did not come began before this reader
                        // matched, or lost its start.
                        broken: sn != first,
                        group,
                        changes: vec![held],
                    },
                );
            }
            None if end => {}
            None => out.push(Outcome::Admit(vec![held])),
        }
    }

    fn close(
        &mut self,
        writer: Guid,
        p: Pending,
        group_scope: bool,
        listed: Option<Arc<[EntityId]>>,
        out: &mut Vec<Outcome>,
    ) {
        self.held -= p.changes.len();
        if p.broken {
            self.dropped += 1;
            return;
        }
        match p.group.filter(|_| group_scope) {
            Some(set) => {
                self.held += p.changes.len();
                self.finished.push((writer, set, p.changes));
                out.push(Outcome::GroupPart {
                    writer,
                    set,
                    writers: listed,
                });
            }
            None => out.push(Outcome::Admit(p.changes)),
        }
    }

    /// The finished parts of group set `set` of the publisher in participant `prefix`
    /// (all of them, or `writer`'s alone), taken out to be admitted.
    pub(crate) fn take_group(
        &mut self,
        prefix: GuidPrefix,
        set: i64,
        writer: Option<Guid>,
    ) -> Vec<Held> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.finished.len() {
            let (w, s, _) = &self.finished[i];
            if w.prefix == prefix && *s == set && writer.is_none_or(|x| x == *w) {
                let (_, _, changes) = self.finished.remove(i);
                self.held -= changes.len();
                out.extend(changes);
            } else {
                i += 1;
            }
        }
        out
    }

    /// Forgets what writer `writer` sent of sets not yet complete (it was unmatched).
    pub(crate) fn forget_writer(&mut self, writer: Guid) {
        if let Some(p) = self.pending.remove(&writer) {
            self.held -= p.changes.len();
        }
        let before: usize = self.finished.iter().map(|f| f.2.len()).sum();
        self.finished.retain(|f| f.0 != writer);
        let after: usize = self.finished.iter().map(|f| f.2.len()).sum();
        self.held -= before - after;
    }
}

/// A group set a subscriber is collecting from one remote publisher.
#[derive(Debug, Default)]
pub(crate) struct GroupSet {
    /// The writers whose part is complete.
    pub(crate) done: BTreeSet<EntityId>,
    /// The writers that took part, as an end marker listed them.
    pub(crate) writers: Option<Arc<[EntityId]>>,
}

/// A local publisher's coherent set and group order.
#[derive(Debug, Default)]
pub(crate) struct PublisherGroup {
    /// The last group sequence number given to a change.
    last_gsn: i64,
    /// `begin_coherent_changes` calls not yet ended (they nest).
    depth: u32,
    open: Option<OpenSet>,
}

/// The set a publisher has open.
#[derive(Debug, Default)]
struct OpenSet {
    /// The group sequence number of its first change (GROUP scope).
    first_gsn: Option<i64>,
    /// The writers that wrote in it, each with its first sequence number in it.
    writers: BTreeMap<EntityId, i64>,
}

/// The end markers `end_coherent_changes` has the writers send.
pub(crate) type EndMarkers = Vec<(EntityId, Coherence)>;

impl PublisherGroup {
    /// Opens a set (or nests in the open one).
    pub(crate) fn begin(&mut self) {
        self.depth += 1;
        if self.depth == 1 {
            self.open = Some(OpenSet::default());
        }
    }

    /// Ends the outermost set: each writer that wrote in it sends an end marker.
    pub(crate) fn end(&mut self, scope_of: impl Fn(EntityId) -> bool) -> EndMarkers {
        if self.depth == 0 {
            return Vec::new();
        }
        self.depth -= 1;
        if self.depth > 0 {
            return Vec::new();
        }
        let Some(open) = self.open.take() else {
            return Vec::new();
        };
        let writers: Arc<[EntityId]> = open.writers.keys().copied().collect();
        open.writers
            .keys()
            .map(|&id| {
                let group = (scope_of(id) && open.first_gsn.is_some()).then(|| GroupCoherence {
                    set: open.first_gsn,
                    seq: 0,
                    writers: Some(writers.clone()),
                });
                (id, Coherence::end_marker(group))
            })
            .collect()
    }

    /// The coherence of the next change of writer `id` (whose PRESENTATION is
    /// `presentation`), which gets sequence number `next`.
    pub(crate) fn mark(
        &mut self,
        id: EntityId,
        presentation: &Presentation,
        next: SequenceNumber,
    ) -> Option<Coherence> {
        let group = presentation.access_scope == PresentationAccessScope::Group
            && (presentation.coherent_access || presentation.ordered_access);
        let gsn = group.then(|| {
            self.last_gsn += 1;
            self.last_gsn
        });
        let open = self.open.as_mut().filter(|_| presentation.coherent_access);
        let (set, group_set) = match open {
            Some(open) => {
                let first = *open.writers.entry(id).or_insert(next.0);
                let group_set = gsn.map(|g| *open.first_gsn.get_or_insert(g));
                (Some(SequenceNumber(first)), group_set)
            }
            None => (None, None),
        };
        if set.is_none() && gsn.is_none() {
            return None;
        }
        Some(Coherence {
            set,
            end: false,
            group: gsn.map(|seq| GroupCoherence {
                set: group_set,
                seq,
                writers: None,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::ChangeKind;
    use crate::wire::Locator;

    fn writer(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    fn change(w: Guid, sn: i64, coherence: Option<Coherence>) -> Held {
        Held {
            change: ReceivedChange {
                original: None,
                writer: w,
                sequence_number: SequenceNumber(sn),
                kind: ChangeKind::Alive,
                key_hash: None,
                timestamp: None,
                payload: vec![sn as u8].into(),
                origin: Locator::INVALID,
                coherence: coherence.map(Box::new),
            },
            found: Found::Instance(super::super::InstanceHandle::NIL),
            passes: true,
        }
    }

    fn member(first: i64) -> Option<Coherence> {
        Some(Coherence {
            set: Some(SequenceNumber(first)),
            ..Coherence::default()
        })
    }

    fn admitted(out: &[Outcome]) -> Vec<i64> {
        out.iter()
            .flat_map(|o| match o {
                Outcome::Admit(v) => v.iter().map(|h| h.change.sequence_number.0).collect(),
                Outcome::GroupPart { .. } => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_set_is_held_until_its_end_marker_then_let_in_whole() {
        let mut r = CoherentReader::default();
        let w = writer(1);
        let mut out = Vec::new();
        r.offer(change(w, 1, None), false, 100, &mut out);
        assert_eq!(
            admitted(&out),
            [1],
            "a change outside a set goes in at once"
        );
        out.clear();
        for sn in 2..=4 {
            r.offer(change(w, sn, member(2)), false, 100, &mut out);
        }
        assert!(out.is_empty(), "held");
        r.offer(
            change(w, 5, Some(Coherence::end_marker(None))),
            false,
            100,
            &mut out,
        );
        assert_eq!(admitted(&out), [2, 3, 4]);
        assert_eq!(r.held, 0);
    }

    #[test]
    fn a_set_ends_at_the_next_set_or_plain_change_and_is_dropped_when_not_whole() {
        let mut r = CoherentReader::default();
        let w = writer(1);
        let mut out = Vec::new();
        r.offer(change(w, 1, member(1)), false, 100, &mut out);
        r.offer(change(w, 2, member(1)), false, 100, &mut out);
        // The next set begins: the first is complete.
        r.offer(change(w, 3, member(3)), false, 100, &mut out);
        assert_eq!(admitted(&out), [1, 2]);
        out.clear();
        // Change 4 never came: the set 3.. is not whole when a plain change ends it.
        r.offer(change(w, 5, member(3)), false, 100, &mut out);
        r.offer(change(w, 6, None), false, 100, &mut out);
        assert_eq!(admitted(&out), [6]);
        assert_eq!(r.dropped, 1);
        // A set whose start was missed (joined late) is dropped too.
        out.clear();
        r.offer(change(w, 8, member(7)), false, 100, &mut out);
        r.offer(
            change(w, 9, Some(Coherence::end_marker(None))),
            false,
            100,
            &mut out,
        );
        assert!(out.is_empty());
        assert_eq!(r.dropped, 2);
    }

    #[test]
    fn a_set_larger_than_the_limit_is_dropped_not_held() {
        let mut r = CoherentReader::default();
        let w = writer(1);
        let mut out = Vec::new();
        for sn in 1..=10 {
            r.offer(change(w, sn, member(1)), false, 4, &mut out);
        }
        assert!(r.held <= 4);
        r.offer(
            change(w, 11, Some(Coherence::end_marker(None))),
            false,
            4,
            &mut out,
        );
        assert!(out.is_empty());
        assert_eq!((r.held, r.dropped), (0, 1));
    }

    #[test]
    fn a_publisher_marks_each_writer_from_its_first_change_and_ends_them_all() {
        let mut p = PublisherGroup::default();
        let (a, b) = (EntityId([0, 0, 1, 2]), EntityId([0, 0, 2, 2]));
        let group = Presentation {
            access_scope: PresentationAccessScope::Group,
            coherent_access: true,
            ordered_access: false,
        };
        assert_eq!(
            p.mark(a, &group, SequenceNumber(1)).unwrap().set,
            None,
            "outside a set: group order only"
        );
        p.begin();
        p.begin();
        let first = p.mark(a, &group, SequenceNumber(2)).unwrap();
        let second = p.mark(b, &group, SequenceNumber(1)).unwrap();
        let third = p.mark(a, &group, SequenceNumber(3)).unwrap();
        assert_eq!(first.set, Some(SequenceNumber(2)));
        assert_eq!(third.set, Some(SequenceNumber(2)));
        assert_eq!(second.set, Some(SequenceNumber(1)));
        let g = |c: &Coherence| c.group.clone().unwrap();
        assert_eq!((g(&first).set, g(&first).seq), (Some(2), 2));
        assert_eq!((g(&third).set, g(&third).seq), (Some(2), 4));
        assert!(
            p.end(|_| true).is_empty(),
            "nested: the outer set is still open"
        );
        let ends = p.end(|_| true);
        assert_eq!(ends.len(), 2);
        assert!(ends.iter().all(
            |(_, c)| c.end && c.group.as_ref().unwrap().writers.as_deref() == Some(&[a, b][..])
        ));
    }
}
