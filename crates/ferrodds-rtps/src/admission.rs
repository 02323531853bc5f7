//! Which remote participants discovery keeps when more announce themselves than it may hold.
//!
//! An SPDP announcement costs its sender one datagram and proves nothing: anyone on the LAN
//! can announce a thousand made-up participants with infinite leases. So a participant is
//! *unverified* until it runs SEDP with us (a matched builtin endpoint of its own reaches one
//! of ours, see `Participant::take_contacts`), and the unverified are the ones that give way:
//!
//! - an unverified participant's lease is capped (`Limits::unverified_lease`), whatever it
//!   announced;
//! - one source address holds at most `Limits::max_unverified_per_source` unverified
//!   participants; a newcomer from it pushes out that source's oldest unverified one;
//! - when the table is full, a newcomer pushes out the oldest unverified participant of any
//!   source, and is refused only when every participant held is verified.
//!
//! A verified participant is never pushed out by a newcomer. This module keeps the
//! unverified ones in arrival order, overall and per source, so that each decision costs a
//! logarithm, not a scan of the table.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use crate::time::Timestamp;
use crate::wire::GuidPrefix;

/// Where an unverified participant's first announcement came from (`None`: the driver did
/// not say).
pub(crate) type Source = Option<Ipv4Addr>;

/// The unverified participants, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Unverified {
    by_age: BTreeSet<(Timestamp, GuidPrefix)>,
    by_source: BTreeMap<Source, BTreeSet<(Timestamp, GuidPrefix)>>,
}

impl Unverified {
    /// Adds a participant first heard at `since` from `source`.
    pub(crate) fn insert(&mut self, prefix: GuidPrefix, since: Timestamp, source: Source) {
        self.by_age.insert((since, prefix));
        self.by_source
            .entry(source)
            .or_default()
            .insert((since, prefix));
    }

    /// Removes a participant (verified, gone or pushed out).
    pub(crate) fn remove(&mut self, prefix: GuidPrefix, since: Timestamp, source: Source) {
        self.by_age.remove(&(since, prefix));
        if let Some(set) = self.by_source.get_mut(&source) {
            set.remove(&(since, prefix));
            if set.is_empty() {
                self.by_source.remove(&source);
            }
        }
    }

    /// How many `source` holds.
    pub(crate) fn count_from(&self, source: Source) -> usize {
        self.by_source.get(&source).map_or(0, BTreeSet::len)
    }

    /// The oldest one from `source`.
    pub(crate) fn oldest_from(&self, source: Source) -> Option<GuidPrefix> {
        self.by_source
            .get(&source)
            .and_then(|s| s.first())
            .map(|(_, p)| *p)
    }

    /// The oldest one of all.
    pub(crate) fn oldest(&self) -> Option<GuidPrefix> {
        self.by_age.first().map(|(_, p)| *p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u8) -> GuidPrefix {
        GuidPrefix([n; 12])
    }

    #[test]
    fn oldest_overall_and_per_source() {
        let (a, b) = (
            Some(Ipv4Addr::new(10, 0, 0, 1)),
            Some(Ipv4Addr::new(10, 0, 0, 2)),
        );
        let mut u = Unverified::default();
        u.insert(p(1), Timestamp(10), a);
        u.insert(p(2), Timestamp(20), b);
        u.insert(p(3), Timestamp(30), a);
        assert_eq!(
            (u.by_age.len(), u.count_from(a), u.count_from(b)),
            (3, 2, 1)
        );
        assert_eq!(u.oldest(), Some(p(1)));
        assert_eq!(u.oldest_from(b), Some(p(2)));
        u.remove(p(1), Timestamp(10), a);
        assert_eq!(u.oldest(), Some(p(2)));
        assert_eq!(u.oldest_from(a), Some(p(3)));
        u.remove(p(2), Timestamp(20), b);
        assert_eq!((u.count_from(b), u.oldest_from(b)), (0, None));
        assert!(!u.by_source.contains_key(&b), "empty sources are dropped");
    }
}
