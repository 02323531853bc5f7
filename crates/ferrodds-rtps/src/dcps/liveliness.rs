//! LIVELINESS as DCPS endpoints see it (DDS 1.4 §2.2.3.11): a reader's matched writers,
//! alive or not (LIVELINESS_CHANGED), and a local writer that failed to assert its own
//! liveliness in time (LIVELINESS_LOST).
//!
//! Nothing here runs per sample: the RTPS reader stamps the time it last heard from each
//! writer, and the trackers look at those stamps only when a lease may have run out (a
//! timer) or when a writer that is not alive may have come back (an input for a reader that
//! has such writers).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::qos::{EndpointQos, LivelinessKind};
use crate::time::Timestamp;
use crate::wire::Guid;

/// LIVELINESS_CHANGED, as the core keeps it (the `*_change` fields are the API's: the
/// difference from what the application last saw).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LivelinessChangedStatus {
    /// Matched writers that are alive.
    pub alive_count: u32,
    /// Matched writers that are not alive.
    pub not_alive_count: u32,
    /// Change of `alive_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub alive_count_change: i64,
    /// Change of `not_alive_count` since the application last read this status.
    pub not_alive_count_change: i64,
    /// The writer whose liveliness changed last.
    pub last_publication: Option<Guid>,
}

/// LIVELINESS_LOST.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LivelinessLostStatus {
    /// Times the writer failed to assert its liveliness within its lease.
    pub total_count: u64,
    /// Change of `total_count` since the application last read this status (the API fills
    /// it in; the core reports 0).
    pub total_count_change: i64,
}

/// When a writer last asserted itself in each of the ways that count for a kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heard {
    /// Anything from the writer (data, heartbeats, gaps).
    pub anything: Option<Timestamp>,
    /// Data or a HEARTBEAT with the liveliness flag: what asserts a MANUAL_BY_TOPIC writer.
    pub asserted: Option<Timestamp>,
    /// Its participant: an SPDP announcement or an AUTOMATIC participant message.
    pub participant: Option<Timestamp>,
    /// A MANUAL participant message of its participant.
    pub participant_manual: Option<Timestamp>,
}

impl Heard {
    /// The last time something that renews a writer of `kind` came.
    fn last(&self, kind: LivelinessKind) -> Option<Timestamp> {
        let max = |a: Option<Timestamp>, b: Option<Timestamp>| a.max(b);
        match kind {
            LivelinessKind::Automatic => max(
                max(self.anything, self.asserted),
                max(self.participant, self.participant_manual),
            ),
            LivelinessKind::ManualByParticipant => max(self.asserted, self.participant_manual),
            LivelinessKind::ManualByTopic => self.asserted,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Watched {
    kind: LivelinessKind,
    /// `None`: an infinite lease, always alive while matched.
    lease: Option<Duration>,
    alive: bool,
    /// Matched at; counts as an assertion.
    since: Timestamp,
}

/// A reader's matched writers and their liveliness.
#[derive(Debug, Clone, Default)]
pub struct WriterLiveliness {
    writers: BTreeMap<Guid, Watched>,
    status: LivelinessChangedStatus,
    not_alive: usize,
    /// When the first lease of an alive writer may run out.
    next: Option<Timestamp>,
}

/// A writer's liveliness changed: alive again (`true`) or not any more.
pub type Transition = (Guid, bool);

impl WriterLiveliness {
    /// LIVELINESS_CHANGED.
    pub fn status(&self) -> LivelinessChangedStatus {
        self.status
    }

    /// True when some matched writer is not alive (inputs may bring it back).
    pub fn has_not_alive(&self) -> bool {
        self.not_alive > 0
    }

    /// When a lease may run out next.
    pub fn next_due(&self) -> Option<Timestamp> {
        self.next
    }

    /// A writer matched at `now`: alive, for its lease.
    pub(crate) fn matched(&mut self, writer: Guid, qos: Option<&EndpointQos>, now: Timestamp) {
        let liveliness = qos.map(|q| q.liveliness).unwrap_or_default();
        let lease = liveliness.lease_duration.to_std();
        let watched = Watched {
            kind: liveliness.kind,
            lease,
            alive: true,
            since: now,
        };
        if let Some(old) = self.writers.insert(writer, watched) {
            self.count_out(old);
        }
        self.status.alive_count += 1;
        self.status.last_publication = Some(writer);
        if let Some(lease) = lease {
            let due = now.after(lease);
            self.next = Some(self.next.map_or(due, |n| n.min(due)));
        }
    }

    /// A writer no longer matches: true when it was counted.
    pub(crate) fn unmatched(&mut self, writer: Guid) -> bool {
        let Some(old) = self.writers.remove(&writer) else {
            return false;
        };
        self.count_out(old);
        self.status.last_publication = Some(writer);
        true
    }

    fn count_out(&mut self, old: Watched) {
        if old.alive {
            self.status.alive_count = self.status.alive_count.saturating_sub(1);
        } else {
            self.status.not_alive_count = self.status.not_alive_count.saturating_sub(1);
            self.not_alive -= 1;
        }
    }

    /// Looks at every writer with a lease: those whose lease ran out by `now` are not alive,
    /// those not alive that asserted since are alive again. `heard` says when each writer
    /// was last heard from. Returns the transitions, in writer order.
    pub(crate) fn check(
        &mut self,
        now: Timestamp,
        heard: &mut dyn FnMut(Guid) -> Heard,
    ) -> Vec<Transition> {
        let mut transitions = Vec::new();
        let mut next: Option<Timestamp> = None;
        for (guid, w) in self.writers.iter_mut() {
            let Some(lease) = w.lease else { continue };
            let last = heard(*guid).last(w.kind).max(Some(w.since));
            let until = last.map_or(now, |t| t.after(lease));
            let alive = until > now;
            if alive {
                next = Some(next.map_or(until, |n| n.min(until)));
            }
            if alive != w.alive {
                w.alive = alive;
                transitions.push((*guid, alive));
            }
        }
        for &(guid, alive) in &transitions {
            if alive {
                self.status.alive_count += 1;
                self.status.not_alive_count = self.status.not_alive_count.saturating_sub(1);
                self.not_alive -= 1;
            } else {
                self.status.not_alive_count += 1;
                self.status.alive_count = self.status.alive_count.saturating_sub(1);
                self.not_alive += 1;
            }
            self.status.last_publication = Some(guid);
        }
        self.next = next;
        transitions
    }
}

/// A local writer's own liveliness: for MANUAL kinds with a finite lease, whether the
/// application asserted it in time.
#[derive(Debug, Clone, Default)]
pub struct OwnLiveliness {
    /// `None`: AUTOMATIC (the process asserts it) or an infinite lease.
    lease: Option<Duration>,
    kind: LivelinessKind,
    last_asserted: Timestamp,
    lost: bool,
    status: LivelinessLostStatus,
}

impl OwnLiveliness {
    /// The liveliness of a writer with `qos`, created at `now`.
    pub fn new(qos: &EndpointQos, now: Timestamp) -> Self {
        let manual = qos.liveliness.kind != LivelinessKind::Automatic;
        OwnLiveliness {
            lease: qos.liveliness.lease_duration.to_std().filter(|_| manual),
            kind: qos.liveliness.kind,
            last_asserted: now,
            lost: false,
            status: LivelinessLostStatus::default(),
        }
    }

    /// Its LIVELINESS kind.
    pub fn kind(&self) -> LivelinessKind {
        self.kind
    }

    /// LIVELINESS_LOST.
    pub fn status(&self) -> LivelinessLostStatus {
        self.status
    }

    /// The writer asserted (wrote, or the application called `assert_liveliness`): true
    /// when its liveliness had been lost (its lease timer is to be set again).
    pub(crate) fn asserted(&mut self, now: Timestamp) -> bool {
        self.last_asserted = now;
        std::mem::take(&mut self.lost)
    }

    /// When its lease runs out if nothing asserts it.
    pub fn next_due(&self) -> Option<Timestamp> {
        match (self.lease, self.lost) {
            (Some(lease), false) => Some(self.last_asserted.after(lease)),
            _ => None,
        }
    }

    /// True when the lease ran out by `now` (counted once until the next assertion).
    pub(crate) fn check(&mut self, now: Timestamp) -> bool {
        if self.next_due().is_some_and(|due| due <= now) {
            self.lost = true;
            self.status.total_count += 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{Duration as QosDuration, Liveliness};
    use crate::wire::{EntityId, GuidPrefix};

    fn ms(n: u64) -> Timestamp {
        Timestamp(n * 1_000_000)
    }

    fn qos(kind: LivelinessKind, lease_ms: Option<u64>) -> EndpointQos {
        let mut q = EndpointQos::writer_default();
        q.liveliness = Liveliness {
            kind,
            lease_duration: lease_ms.map_or(QosDuration::INFINITE, |l| {
                QosDuration::from(Duration::from_millis(l))
            }),
        };
        q
    }

    fn guid(n: u8) -> Guid {
        Guid::new(GuidPrefix([n; 12]), EntityId::from_u32(0x102))
    }

    #[test]
    fn a_writer_is_alive_while_it_asserts_within_its_lease_and_comes_back() {
        let mut l = WriterLiveliness::default();
        let w = guid(1);
        l.matched(
            w,
            Some(&qos(LivelinessKind::ManualByTopic, Some(100))),
            ms(0),
        );
        assert_eq!(l.status().alive_count, 1);
        assert_eq!(l.next_due(), Some(ms(100)));
        let mut heard = Heard {
            asserted: Some(ms(60)),
            ..Heard::default()
        };
        // Renewed at 60: alive at 100, due at 160.
        assert!(l.check(ms(100), &mut |_| heard).is_empty());
        assert_eq!(l.next_due(), Some(ms(160)));
        // Heartbeats and the participant do not renew a MANUAL_BY_TOPIC writer.
        heard.anything = Some(ms(150));
        heard.participant = Some(ms(150));
        heard.participant_manual = Some(ms(150));
        assert_eq!(l.check(ms(160), &mut |_| heard), vec![(w, false)]);
        let s = l.status();
        assert_eq!((s.alive_count, s.not_alive_count), (0, 1));
        assert!(l.has_not_alive());
        assert_eq!(l.next_due(), None);
        heard.asserted = Some(ms(200));
        assert_eq!(l.check(ms(201), &mut |_| heard), vec![(w, true)]);
        assert_eq!(l.status().alive_count, 1);
        assert!(l.unmatched(w));
        assert_eq!(
            l.status(),
            LivelinessChangedStatus {
                alive_count: 0,
                not_alive_count: 0,
                last_publication: Some(w),
                ..Default::default()
            }
        );
    }

    #[test]
    fn each_kind_is_renewed_by_what_the_spec_says() {
        let lease = Some(100);
        let heard = |h: Heard, kind| {
            let mut l = WriterLiveliness::default();
            l.matched(guid(2), Some(&qos(kind, lease)), ms(0));
            l.check(ms(150), &mut |_| h).is_empty()
        };
        let at = Some(ms(120));
        let participant = Heard {
            participant: at,
            ..Heard::default()
        };
        let manual = Heard {
            participant_manual: at,
            ..Heard::default()
        };
        let heartbeat = Heard {
            anything: at,
            ..Heard::default()
        };
        use LivelinessKind::*;
        assert!(heard(participant, Automatic));
        assert!(heard(heartbeat, Automatic));
        assert!(heard(manual, Automatic));
        assert!(!heard(participant, ManualByParticipant));
        assert!(!heard(heartbeat, ManualByParticipant));
        assert!(heard(manual, ManualByParticipant));
        assert!(!heard(manual, ManualByTopic));
        // An infinite lease never runs out.
        let mut l = WriterLiveliness::default();
        l.matched(guid(3), Some(&qos(ManualByTopic, None)), ms(0));
        assert!(l.check(ms(1_000_000), &mut |_| Heard::default()).is_empty());
        assert_eq!(l.next_due(), None);
    }

    #[test]
    fn a_manual_writer_that_does_not_assert_loses_its_liveliness_once() {
        let mut own =
            OwnLiveliness::new(&qos(LivelinessKind::ManualByParticipant, Some(50)), ms(0));
        assert_eq!(own.next_due(), Some(ms(50)));
        own.asserted(ms(40));
        assert!(!own.check(ms(50)));
        assert!(own.check(ms(90)));
        assert!(!own.check(ms(200)), "counted once until asserted again");
        assert_eq!(own.status().total_count, 1);
        own.asserted(ms(300));
        assert!(own.check(ms(350)));
        assert_eq!(own.status().total_count, 2);
        let automatic = OwnLiveliness::new(&qos(LivelinessKind::Automatic, Some(50)), ms(0));
        assert_eq!(automatic.next_due(), None);
    }
}
