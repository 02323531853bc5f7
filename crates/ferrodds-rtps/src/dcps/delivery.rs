//! What a reader lets into its cache, by its QoS and its content filter: the DCPS policies
//! applied to each change as it arrives, before the history (KEEP_LAST / KEEP_ALL) sees it.
//!
//! - **Content filter**: a predicate on the sample (`Subscriber::create_reader_with_filter`),
//!   evaluated in the reader (DDS 1.4 §2.2.2.3.3 lets either side filter; the writer still
//!   sends everything). Key-only changes (dispose, unregister) of instances the reader never
//!   accepted a sample of are dropped too.
//! - **Exclusive ownership** (§2.2.3.9.2): each instance is owned by one writer, the
//!   strongest that wrote it (equal strengths: the lower GUID); samples of other writers are
//!   dropped. Ownership passes on when the owner unregisters the instance, is lost or is
//!   not alive (LIVELINESS), when a stronger writer writes, and when the owner let a
//!   DEADLINE period of the instance pass without writing it: then the next writer of the
//!   instance takes it over, whatever its strength.
//! - **Lifespan** (§2.2.3.16): a sample expires at its source timestamp (or its arrival,
//!   without one) plus its writer's lifespan; it is dropped on arrival if already expired,
//!   and the cache drops it when it expires before being taken. Only the reader applies it:
//!   a writer's history keeps expired samples for late joiners, whose readers drop them.
//! - **Time-based filter** (§2.2.3.12): after a sample of an instance is accepted, the next
//!   ones of that instance arriving within the minimum separation are dropped.
//! - **Deadline**: accepted samples restart their instance's deadline (see `deadline.rs`).
//! - **Destination order** (§2.2.3.17): BY_SOURCE_TIMESTAMP drops a change stamped earlier
//!   than the last one its instance took, so that every reader ends with the same last
//!   value whatever order two writers' changes arrive in.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::deadline::DeadlineTracker;
use super::sample::InstanceHandle;
use crate::endpoint::ChangeKind;
use crate::qos::{DestinationOrder, EndpointQos, Ownership};
use crate::time::Timestamp;
use crate::wire::Guid;

/// A content filter over a serialized sample (encapsulation included): true lets it in.
pub type ContentFilter = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// What a matched writer announced that delivery needs.
#[derive(Debug, Clone, Copy)]
struct WriterInfo {
    strength: i32,
    lifespan: Option<Duration>,
}

/// The verdict on an arriving change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Dropped.
    Drop,
    /// Of a new instance, and the cache holds as many instances as it may: rejected
    /// (`SampleRejectedReason::InstancesLimit`) before any per-instance state is made for it.
    NoRoom,
    /// Goes into the cache; expires then (lifespan), if ever.
    Deliver {
        /// When the sample expires.
        expires: Option<Timestamp>,
    },
}

/// An arriving change, as delivery sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) handle: InstanceHandle,
    pub(crate) kind: ChangeKind,
    pub(crate) writer: Guid,
    /// What the content filter said of the payload (true without a filter).
    pub(crate) passes_filter: bool,
    pub(crate) source_timestamp: Option<SystemTime>,
    /// True when the cache holds the instance already.
    pub(crate) known_instance: bool,
    /// True when the cache has room for one more instance.
    pub(crate) instance_room: bool,
}

/// The delivery state of one reader.
pub(crate) struct Delivery {
    filter: Option<ContentFilter>,
    min_separation: Option<Duration>,
    last_accepted: BTreeMap<InstanceHandle, Timestamp>,
    exclusive: bool,
    writers: BTreeMap<Guid, WriterInfo>,
    /// Owner of each instance (exclusive ownership), with its strength and when it last
    /// wrote the instance.
    owners: BTreeMap<InstanceHandle, (Guid, i32, Timestamp)>,
    /// The reader's DEADLINE period: an owner silent for longer loses its instance.
    deadline_period: Option<Duration>,
    /// DESTINATION_ORDER BY_SOURCE_TIMESTAMP: the latest source timestamp each instance
    /// took; a change stamped earlier (another writer's, overtaken) is dropped.
    by_source: Option<BTreeMap<InstanceHandle, SystemTime>>,
    /// REQUESTED_DEADLINE_MISSED.
    pub(crate) deadline: DeadlineTracker,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("filter", &self.filter.is_some())
            .field("min_separation", &self.min_separation)
            .field("exclusive", &self.exclusive)
            .field("owners", &self.owners)
            .finish_non_exhaustive()
    }
}

fn positive(d: crate::qos::Duration) -> Option<Duration> {
    d.to_std().filter(|d| !d.is_zero())
}

impl Delivery {
    /// The delivery of a reader with `qos` and, optionally, a content filter.
    pub(crate) fn new(p: &EndpointQos, filter: Option<ContentFilter>) -> Self {
        Delivery {
            filter,
            min_separation: positive(p.time_based_filter.minimum_separation),
            last_accepted: BTreeMap::new(),
            exclusive: p.ownership == Ownership::Exclusive,
            writers: BTreeMap::new(),
            owners: BTreeMap::new(),
            deadline_period: p.deadline.period.to_std().filter(|d| !d.is_zero()),
            by_source: (p.destination_order == DestinationOrder::BySourceTimestamp)
                .then(BTreeMap::new),
            deadline: DeadlineTracker::new(p.deadline.period.to_std()),
        }
    }

    /// A writer matched; `qos` is what it announced (if discovery still knows it).
    pub(crate) fn writer_matched(&mut self, writer: Guid, qos: Option<&EndpointQos>) {
        let info = WriterInfo {
            strength: qos.map_or(0, |q| q.ownership_strength.value),
            lifespan: qos.and_then(|q| positive(q.lifespan.duration)),
        };
        self.writers.insert(writer, info);
    }

    /// A writer is gone: it owns nothing any more.
    pub(crate) fn writer_lost(&mut self, writer: Guid) {
        self.writers.remove(&writer);
        self.owners.retain(|_, (owner, ..)| *owner != writer);
    }

    /// A writer is not alive: it owns nothing until it writes again, so that the next
    /// strongest writer takes its instances over (DDS 1.4 §2.2.3.9.2).
    pub(crate) fn writer_not_alive(&mut self, writer: Guid) {
        self.owners.retain(|_, (owner, ..)| *owner != writer);
    }

    /// True when a content filter applies.
    pub(crate) fn filtered(&self) -> bool {
        self.filter.is_some()
    }

    /// The content filter.
    pub(crate) fn filter(&self) -> Option<&ContentFilter> {
        self.filter.as_ref()
    }

    /// DESTINATION_ORDER BY_SOURCE_TIMESTAMP (§2.2.3.17): true when `a` is stamped no
    /// earlier than the last change its instance took (and then it is the last). Changes
    /// without a timestamp, and readers ordering by reception, always pass.
    fn in_source_order(&mut self, a: &Candidate) -> bool {
        let (Some(last), Some(stamp)) = (self.by_source.as_mut(), a.source_timestamp) else {
            return true;
        };
        match last.get(&a.handle) {
            Some(previous) if stamp < *previous => false,
            _ => {
                last.insert(a.handle, stamp);
                true
            }
        }
    }

    /// Whether `a` goes into the cache (`now`/`wall`: its arrival, on the core's clock and
    /// as wall-clock time). The content filter ran already (`a.passes_filter`), outside
    /// the core: see `arrival.rs`.
    pub(crate) fn admit(&mut self, a: &Candidate, now: Timestamp, wall: SystemTime) -> Admit {
        let info = self.writers.get(&a.writer).copied().unwrap_or(WriterInfo {
            strength: 0,
            lifespan: None,
        });
        if a.kind != ChangeKind::Alive {
            if self.filter.is_some() && !a.known_instance {
                return Admit::Drop;
            }
            if !a.known_instance && !a.instance_room {
                return Admit::NoRoom;
            }
            if !self.in_source_order(a) {
                return Admit::Drop;
            }
            if self.exclusive {
                let owner = self.owners.get(&a.handle).map(|(g, ..)| *g);
                match a.kind {
                    // Only the owner disposes an exclusively owned instance.
                    ChangeKind::Disposed if owner.is_some_and(|g| g != a.writer) => {
                        return Admit::Drop;
                    }
                    ChangeKind::Unregistered | ChangeKind::DisposedUnregistered
                        if owner == Some(a.writer) =>
                    {
                        self.owners.remove(&a.handle);
                    }
                    _ => {}
                }
            }
            self.last_accepted.remove(&a.handle);
            return Admit::Deliver { expires: None };
        }
        if !a.passes_filter {
            return Admit::Drop;
        }
        // Past here, per-instance state is made (owner, last accepted, deadline): only for
        // instances the cache can take, so that these maps are bounded as the cache is.
        if !a.known_instance && !a.instance_room {
            return Admit::NoRoom;
        }
        if !self.in_source_order(a) {
            return Admit::Drop;
        }
        if self.exclusive {
            let takes_over = match self.owners.get(&a.handle) {
                None => true,
                Some(&(owner, ..)) if owner == a.writer => true,
                Some(&(owner, strength, wrote)) => {
                    info.strength > strength
                        || (info.strength == strength && a.writer < owner)
                        || self
                            .deadline_period
                            .is_some_and(|period| now.since(wrote) > period)
                }
            };
            if !takes_over {
                return Admit::Drop;
            }
            self.owners.insert(a.handle, (a.writer, info.strength, now));
        }
        // The lifespan runs from the source timestamp (wall clock); what is left of it at
        // arrival runs on the core's clock.
        let mut expires = None;
        if let Some(lifespan) = info.lifespan {
            let age = a
                .source_timestamp
                .and_then(|t| wall.duration_since(t).ok())
                .unwrap_or(Duration::ZERO);
            match lifespan.checked_sub(age).filter(|left| !left.is_zero()) {
                Some(left) => expires = Some(now.after(left)),
                None => return Admit::Drop,
            }
        }
        if let Some(separation) = self.min_separation {
            if let Some(last) = self.last_accepted.get(&a.handle) {
                if now.since(*last) < separation {
                    return Admit::Drop;
                }
            }
            self.last_accepted.insert(a.handle, now);
        }
        self.deadline.updated(a.handle, now);
        Admit::Deliver { expires }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::OwnershipStrength;
    use crate::wire::{EntityId, GuidPrefix};

    fn writer(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 2]))
    }

    fn alive(handle: u8, w: Guid) -> Candidate {
        Candidate {
            handle: InstanceHandle([handle; 16]),
            kind: ChangeKind::Alive,
            writer: w,
            passes_filter: true,
            source_timestamp: None,
            known_instance: true,
            instance_room: true,
        }
    }

    fn delivered(a: Admit) -> bool {
        matches!(a, Admit::Deliver { .. })
    }

    fn strength(s: i32) -> EndpointQos {
        let mut q = EndpointQos::writer_default();
        q.ownership = Ownership::Exclusive;
        q.ownership_strength = OwnershipStrength { value: s };
        q
    }

    fn reader_qos() -> EndpointQos {
        EndpointQos::reader_default()
    }

    const T0: Timestamp = Timestamp(5_000_000_000);

    fn wall() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn content_filter_and_unknown_instances() {
        let filter: ContentFilter = Arc::new(|p: &[u8]| p.first() == Some(&1));
        let mut d = Delivery::new(&reader_qos(), Some(filter));
        assert!(delivered(d.admit(&alive(1, writer(1)), T0, wall())));
        let mut rejected = alive(1, writer(1));
        rejected.passes_filter = false;
        assert!(!delivered(d.admit(&rejected, T0, wall())));
        let mut dispose = alive(2, writer(1));
        dispose.kind = ChangeKind::Disposed;
        dispose.known_instance = false;
        assert!(!delivered(d.admit(&dispose, T0, wall())));
        dispose.known_instance = true;
        assert!(delivered(d.admit(&dispose, T0, wall())));
    }

    /// An exclusive reader with `qos` and two writers matched: (reader, weak, strong).
    fn weak_and_strong(mut qos: EndpointQos) -> (Delivery, Guid, Guid) {
        qos.ownership = Ownership::Exclusive;
        let mut d = Delivery::new(&qos, None);
        let (weak, strong) = (writer(1), writer(2));
        d.writer_matched(weak, Some(&strength(3)));
        d.writer_matched(strong, Some(&strength(4)));
        (d, weak, strong)
    }

    #[test]
    fn the_strongest_writer_owns_an_instance() {
        let (mut d, weak, strong) = weak_and_strong(reader_qos());
        let (now, wall) = (T0, wall());
        assert!(delivered(d.admit(&alive(1, weak), now, wall)));
        assert!(delivered(d.admit(&alive(1, strong), now, wall)));
        assert!(!delivered(d.admit(&alive(1, weak), now, wall)));
        // Another instance is the weak writer's own.
        assert!(delivered(d.admit(&alive(2, weak), now, wall)));
        // The owner unregisters: the weak writer takes over.
        let mut unregister = alive(1, strong);
        unregister.kind = ChangeKind::Unregistered;
        assert!(delivered(d.admit(&unregister, now, wall)));
        assert!(delivered(d.admit(&alive(1, weak), now, wall)));
        assert!(delivered(d.admit(&alive(1, strong), now, wall)));
        d.writer_lost(strong);
        assert!(delivered(d.admit(&alive(1, weak), now, wall)));
    }

    #[test]
    fn an_owner_that_misses_its_deadline_loses_the_instance_to_the_next_writer() {
        let mut qos = reader_qos();
        qos.deadline.period = crate::qos::Duration::from_millis(100);
        let (mut d, weak, strong) = weak_and_strong(qos);
        let wall = wall();
        let at = |ms: u64| T0.after(Duration::from_millis(ms));
        assert!(delivered(d.admit(&alive(1, strong), at(0), wall)));
        assert!(
            !delivered(d.admit(&alive(1, weak), at(100), wall)),
            "within the period"
        );
        assert!(
            delivered(d.admit(&alive(1, weak), at(101), wall)),
            "the owner missed it"
        );
        // The stronger writer takes it back when it writes again.
        assert!(delivered(d.admit(&alive(1, strong), at(150), wall)));
        assert!(!delivered(d.admit(&alive(1, weak), at(160), wall)));
    }

    #[test]
    fn a_writer_that_is_not_alive_owns_nothing_until_it_writes() {
        let (mut d, weak, strong) = weak_and_strong(reader_qos());
        let (now, wall) = (T0, wall());
        assert!(delivered(d.admit(&alive(1, strong), now, wall)));
        assert!(!delivered(d.admit(&alive(1, weak), now, wall)));
        d.writer_not_alive(strong);
        assert!(delivered(d.admit(&alive(1, weak), now, wall)));
        // Still matched, with its strength: it takes over again when it writes.
        assert!(delivered(d.admit(&alive(1, strong), now, wall)));
        assert!(!delivered(d.admit(&alive(1, weak), now, wall)));
    }

    #[test]
    fn by_source_timestamp_a_change_older_than_the_last_one_of_its_instance_is_dropped() {
        let mut qos = reader_qos();
        qos.destination_order = DestinationOrder::BySourceTimestamp;
        let mut d = Delivery::new(&qos, None);
        let stamped = |instance, w, ms: u64| {
            let mut c = alive(instance, writer(w));
            c.source_timestamp = Some(wall() + Duration::from_millis(ms));
            c
        };
        assert!(delivered(d.admit(&stamped(1, 1, 100), T0, wall())));
        // Another writer's change, stamped before: overtaken, dropped.
        assert!(!delivered(d.admit(&stamped(1, 2, 90), T0, wall())));
        assert!(
            delivered(d.admit(&stamped(1, 2, 100), T0, wall())),
            "equal passes"
        );
        // Each instance on its own; a dispose stamped earlier is dropped too.
        assert!(delivered(d.admit(&stamped(2, 2, 50), T0, wall())));
        let mut dispose = stamped(1, 1, 95);
        dispose.kind = ChangeKind::Disposed;
        assert!(!delivered(d.admit(&dispose, T0, wall())));
        // By reception (the default): order of arrival.
        let mut r = Delivery::new(&reader_qos(), None);
        assert!(delivered(r.admit(&stamped(1, 1, 100), T0, wall())));
        assert!(delivered(r.admit(&stamped(1, 2, 90), T0, wall())));
    }

    #[test]
    fn shared_ownership_takes_everyone() {
        let mut d = Delivery::new(&reader_qos(), None);
        for w in [writer(1), writer(2), writer(1)] {
            assert!(delivered(d.admit(&alive(1, w), T0, wall())));
        }
    }

    #[test]
    fn time_based_filter_per_instance() {
        let mut qos = reader_qos();
        qos.time_based_filter.minimum_separation =
            crate::qos::Duration::from_std(Duration::from_millis(100));
        let mut d = Delivery::new(&qos, None);
        let ms = Duration::from_millis;
        assert!(delivered(d.admit(&alive(1, writer(1)), T0, wall())));
        assert!(delivered(d.admit(
            &alive(2, writer(1)),
            T0.after(ms(10)),
            wall()
        )));
        assert!(!delivered(d.admit(
            &alive(1, writer(1)),
            T0.after(ms(99)),
            wall()
        )));
        assert!(delivered(d.admit(
            &alive(1, writer(1)),
            T0.after(ms(100)),
            wall()
        )));
    }

    #[test]
    fn lifespan_from_the_source_timestamp() {
        let mut d = Delivery::new(&reader_qos(), None);
        let mut q = EndpointQos::writer_default();
        q.lifespan.duration = crate::qos::Duration::from_millis(250);
        d.writer_matched(writer(1), Some(&q));
        let mut a = alive(1, writer(1));
        a.source_timestamp = Some(wall() - Duration::from_millis(100));
        assert_eq!(
            d.admit(&a, T0, wall()),
            Admit::Deliver {
                expires: Some(T0.after(Duration::from_millis(150)))
            }
        );
        // Without a source timestamp, the whole lifespan from arrival.
        a.source_timestamp = None;
        assert_eq!(
            d.admit(&a, T0, wall()),
            Admit::Deliver {
                expires: Some(T0.after(Duration::from_millis(250)))
            }
        );
        a.source_timestamp = Some(wall() - Duration::from_millis(300));
        assert_eq!(d.admit(&a, T0, wall()), Admit::Drop);
    }

    #[test]
    fn no_per_instance_state_for_an_instance_the_cache_has_no_room_for() {
        let mut qos = reader_qos();
        qos.ownership = Ownership::Exclusive;
        qos.time_based_filter.minimum_separation =
            crate::qos::Duration::from_std(Duration::from_millis(100));
        qos.deadline.period = crate::qos::Duration::from_std(Duration::from_secs(1));
        let mut d = Delivery::new(&qos, None);
        for handle in 0..200u8 {
            let mut a = alive(handle, writer(1));
            a.known_instance = false;
            a.instance_room = false;
            assert_eq!(d.admit(&a, T0, wall()), Admit::NoRoom);
            a.kind = ChangeKind::Disposed;
            assert_eq!(d.admit(&a, T0, wall()), Admit::NoRoom);
        }
        assert!(d.owners.is_empty());
        assert!(d.last_accepted.is_empty());
        assert_eq!(d.deadline.tracked(), 0);
        // A known instance still passes.
        assert!(delivered(d.admit(&alive(1, writer(1)), T0, wall())));
        assert_eq!(d.owners.len(), 1);
    }
}
