//! A map keyed by numbers that mostly come in increasing and leave from the front: a
//! writer's HistoryCache (RTPS 2.5 §8.2.2, by sequence number) and a reader cache's arrival
//! order.
//!
//! A `BTreeMap` made each insert and removal a tree operation, and taking the first entry
//! out of a leaf shifts the rest of it: on the 2-core VM that was a tenth of a 64 B
//! publisher's receive thread. Here entries lie in a `VecDeque` sorted by key: adding at
//! the end and letting go at the front cost O(1), finding one a binary search. An entry
//! that leaves from the middle (KEEP_LAST of one instance among many, a take by instance)
//! leaves a hole, squeezed out when holes outnumber entries, so that the memory held stays
//! proportional to what is kept.

use std::collections::VecDeque;

/// Holes beyond this many, and beyond the number of entries, are squeezed out.
const MAX_HOLES: usize = 32;

#[derive(Debug)]
pub(crate) struct SeqMap<K, V> {
    /// By key, increasing; `None` where an entry left from the middle. The first slot, if
    /// any, holds an entry.
    slots: VecDeque<(K, Option<V>)>,
    len: usize,
}

impl<K, V> Default for SeqMap<K, V> {
    fn default() -> Self {
        SeqMap {
            slots: VecDeque::new(),
            len: 0,
        }
    }
}

/// A key that counts: how far one is past another tells where an entry lies when nothing
/// left from the middle, which spares the binary search in the usual case.
pub(crate) trait SeqKey: Ord + Copy {
    /// `self - base` when that is a valid index.
    fn offset_from(self, base: Self) -> Option<usize>;
}

impl SeqKey for i64 {
    fn offset_from(self, base: Self) -> Option<usize> {
        usize::try_from(self.checked_sub(base)?).ok()
    }
}

impl SeqKey for u64 {
    fn offset_from(self, base: Self) -> Option<usize> {
        usize::try_from(self.checked_sub(base)?).ok()
    }
}

impl<K: SeqKey, V> SeqMap<K, V> {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// How many entries it holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn position(&self, key: K) -> Result<usize, usize> {
        // Keys without gaps (a writer's sequence numbers, a cache's arrival counter) sit at
        // their distance from the first one; a binary search over a deque of thousands of
        // changes was 5 % of a 64-byte publisher.
        if let Some(&(first, _)) = self.slots.front() {
            if let Some(i) = key.offset_from(first) {
                if self.slots.get(i).is_some_and(|e| e.0 == key) {
                    return Ok(i);
                }
            }
        }
        self.slots.binary_search_by_key(&key, |e| e.0)
    }

    /// Adds an entry: at the end when its key is the largest (the usual case), else in
    /// its place (replacing one of the same key).
    pub(crate) fn insert(&mut self, key: K, value: V) {
        match self.slots.back() {
            Some(&(last, _)) if last >= key => match self.position(key) {
                Ok(i) => {
                    if self.slots[i].1.replace(value).is_none() {
                        self.len += 1;
                    }
                }
                Err(i) => {
                    self.slots.insert(i, (key, Some(value)));
                    self.len += 1;
                }
            },
            _ => {
                self.slots.push_back((key, Some(value)));
                self.len += 1;
            }
        }
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        let i = self.position(*key).ok()?;
        self.slots[i].1.as_ref()
    }

    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    /// The lowest key held.
    pub(crate) fn first_key(&self) -> Option<K> {
        self.slots.front().map(|e| e.0)
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.position(*key).ok()?;
        let value = self.slots[i].1.take()?;
        self.len -= 1;
        while self.slots.front().is_some_and(|e| e.1.is_none()) {
            self.slots.pop_front();
        }
        if self.slots.len() - self.len > MAX_HOLES.max(self.len) {
            self.slots.retain(|e| e.1.is_some());
        }
        Some(value)
    }

    /// The values in key order, to change in place.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.slots.iter_mut().filter_map(|(_, v)| v.as_mut())
    }

    /// The entries in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (K, &V)> {
        self.slots
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| (*k, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::ChangeKind;
    use crate::writer::Change;

    fn change(n: u8) -> Change {
        Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: None,
            timestamp: None,
            payload: vec![n].into(),
            reduced_payload: None,
        }
    }

    #[test]
    fn entries_are_found_by_key_and_holes_do_not_pile_up() {
        let mut h = SeqMap::new();
        assert_eq!((h.len(), h.first_key()), (0, None));
        for seq in 1..=10 {
            h.insert(seq, change(seq as u8));
        }
        assert_eq!((h.len(), h.first_key()), (10, Some(1)));
        assert_eq!(h.get(&4).unwrap().payload[0], 4);
        assert!(h.remove(&11).is_none() && h.get(&0).is_none());

        // From the middle: a hole; from the front: the holes behind it go too.
        assert_eq!(h.remove(&2).unwrap().payload[0], 2);
        assert!(!h.contains_key(&2) && h.remove(&2).is_none());
        assert_eq!(h.first_key(), Some(1));
        h.remove(&1);
        assert_eq!((h.len(), h.first_key()), (8, Some(3)));
        assert_eq!(h.slots.len(), 8);

        // One change kept from long ago while thousands pass: memory stays bounded.
        for seq in 4..=9 {
            h.remove(&seq);
        }
        for seq in 11..5000 {
            h.insert(seq, change(0));
            h.remove(&(seq - 1));
        }
        assert_eq!(h.len(), 2, "3 and 4999");
        assert!(h.slots.len() <= 2 + MAX_HOLES + 1);
        assert_eq!(h.first_key(), Some(3));
        assert!(h.contains_key(&4999) && h.contains_key(&3));

        // An older number goes in its place.
        h.insert(7, change(7));
        assert_eq!(h.get(&7).unwrap().payload[0], 7);
        assert_eq!(h.len(), 3);
        h.insert(7, change(8));
        assert_eq!((h.len(), h.get(&7).unwrap().payload[0]), (3, 8));
        let keys: Vec<i64> = h.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [3, 7, 4999]);
    }
}
