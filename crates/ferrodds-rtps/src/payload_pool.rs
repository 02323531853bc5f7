//! Serialized-sample buffers kept for a writer's next samples.
//!
//! A writer's history holds each sample's serialized bytes in an `Arc<Vec<u8>>` (handed
//! over without a copy, spliced into datagrams while they are sent). When the history lets
//! a change go — acknowledged, or pushed out of a KEEP_LAST depth — and nothing else still
//! holds its buffer, the buffer and its `Arc` are kept here and the next sample is
//! serialized into them: a steady stream of writes allocates nothing for its samples.
//!
//! Bounded per pool: at most [`MAX_KEPT`] buffers and [`MAX_KEPT_BYTES`] together, except
//! that one buffer of any size is kept when there is none (a writer of 11 MB samples reuses
//! its last one instead of having fresh pages faulted in for each).

use std::sync::Arc;

/// The most buffers a pool keeps (a batching writer of small samples has thousands in
/// flight, and lets them go a few hundred at a time).
pub const MAX_KEPT: usize = 16_384;
/// The most bytes a pool keeps, all buffers together (each counted as its capacity and
/// [`OVERHEAD`]), beyond its first.
pub const MAX_KEPT_BYTES: usize = 4 << 20;
/// What a kept buffer costs beside its capacity: its `Arc` and `Vec` headers, roughly.
pub const OVERHEAD: usize = 64;

/// Emptied sample buffers, each unshared, for reuse.
#[derive(Debug, Default)]
pub struct PayloadPool {
    kept: Vec<Arc<Vec<u8>>>,
    /// The capacity of `kept`, together.
    bytes: usize,
}

impl PayloadPool {
    /// An empty pool.
    pub const fn new() -> PayloadPool {
        PayloadPool {
            kept: Vec::new(),
            bytes: 0,
        }
    }

    /// Keeps `payload`, emptied, if nothing else holds it and the pool has room; else
    /// lets it go.
    pub fn keep(&mut self, mut payload: Arc<Vec<u8>>) {
        let Some(bytes) = Arc::get_mut(&mut payload) else {
            return;
        };
        let cap = bytes.capacity() + OVERHEAD;
        let room = self.kept.is_empty()
            || (self.kept.len() < MAX_KEPT && self.bytes + cap <= MAX_KEPT_BYTES);
        if room {
            bytes.clear();
            self.bytes += cap;
            self.kept.push(payload);
        }
    }

    /// The buffer kept last (empty, unshared), if any.
    pub fn take(&mut self) -> Option<Arc<Vec<u8>>> {
        let payload = self.kept.pop()?;
        self.bytes -= payload.capacity() + OVERHEAD;
        Some(payload)
    }

    /// Moves what `other` keeps into this pool, as far as it has room.
    pub fn refill_from(&mut self, other: &mut PayloadPool) {
        while let Some(payload) = other.take() {
            self.keep(payload);
        }
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// How many buffers are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unshared_buffers_are_kept_emptied_and_the_pool_is_bounded() {
        let mut pool = PayloadPool::new();
        let shared = Arc::new(vec![1u8; 10]);
        pool.keep(Arc::clone(&shared));
        assert!(pool.is_empty(), "a buffer someone else holds is not reused");
        drop(shared);

        let mine = Arc::new(vec![1u8; 10]);
        let at = mine.as_ptr();
        pool.keep(mine);
        let again = pool.take().unwrap();
        assert!(again.is_empty() && again.as_ptr() == at && again.capacity() >= 10);
        assert!(pool.take().is_none());

        // One buffer of any size is kept; beyond it, the byte bound holds.
        pool.keep(Arc::new(Vec::with_capacity(2 * MAX_KEPT_BYTES)));
        assert_eq!(pool.len(), 1);
        pool.keep(Arc::new(Vec::with_capacity(16)));
        assert_eq!(pool.len(), 1, "no room beyond the first, large one");
        pool.take();
        for _ in 0..2 * MAX_KEPT {
            pool.keep(Arc::new(Vec::with_capacity(16)));
        }
        assert_eq!(pool.len(), MAX_KEPT);
        let mut other = PayloadPool::new();
        other.refill_from(&mut pool);
        assert_eq!((other.len(), pool.len()), (MAX_KEPT, 0));
        let held = |p: &Arc<Vec<u8>>| p.capacity() + OVERHEAD;
        assert_eq!(other.bytes, other.kept.iter().map(held).sum::<usize>());
        assert!(other.bytes <= MAX_KEPT_BYTES);
    }
}
