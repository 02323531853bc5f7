//! Sample buffers kept for reuse by the endpoint that let them go.
//!
//! A writer's history holds each sample's serialized bytes in an `Arc<Vec<u8>>` (handed
//! over without a copy, spliced into datagrams while they are sent). When the history lets
//! a change go — acknowledged, or pushed out of a KEEP_LAST depth — and nothing else still
//! holds its buffer, the buffer and its `Arc` are kept here ([`PayloadPool`]) and the next
//! sample is serialized into them: a steady stream of writes allocates nothing for its
//! samples. A reader copies each received sample out of the datagram into a `Vec<u8>`
//! ([`ReceivePool`]): once the application has taken and decoded it, the `Vec` comes back
//! for the next one.
//!
//! Bounded per pool: at most [`MAX_KEPT`] buffers and [`MAX_KEPT_BYTES`] together (a
//! reader's: [`RECEIVE_KEPT_BYTES`]), except
//! that one buffer of any size is kept when there is none (a writer of 11 MB samples reuses
//! its last one instead of having fresh pages faulted in for each).

use std::sync::Arc;

/// The most buffers a pool keeps (a batching writer of small samples has thousands in
/// flight, and lets them go a few hundred at a time).
pub const MAX_KEPT: usize = 16_384;
/// The most bytes a pool keeps, all buffers together (each counted as its capacity and
/// [`OVERHEAD`]), beyond its first.
pub const MAX_KEPT_BYTES: usize = 4 << 20;
/// The most bytes a writer's pools keep: as much as its history holds at most
/// (`Writer`'s byte limit), from [`MAX_KEPT_BYTES`] up to this.
pub const WRITER_KEPT_MAX_BYTES: usize = 64 << 20;
/// What a kept buffer costs beside its capacity: its `Arc` and `Vec` headers, roughly.
pub const OVERHEAD: usize = 64;
/// The fewest bytes a reader's pools keep ([`Pool::with_limit`]); beyond, they keep what
/// the application takes at once ([`Pool::follow_demand`]), up to
/// [`RECEIVE_KEPT_MAX_BYTES`].
pub const RECEIVE_KEPT_BYTES: usize = 1 << 20;
/// The most bytes a reader's pools keep however much the application takes at once (a
/// system has many readers).
pub const RECEIVE_KEPT_MAX_BYTES: usize = 64 << 20;

/// A byte buffer a [`Pool`] can keep.
pub trait Reusable {
    /// Empties the buffer and says how many bytes it holds, if nothing else shares it;
    /// `None` (and the buffer unchanged) if something does.
    fn empty_if_unshared(&mut self) -> Option<usize>;
    /// The bytes it holds (its capacity).
    fn held(&self) -> usize;
}

impl Reusable for Vec<u8> {
    fn empty_if_unshared(&mut self) -> Option<usize> {
        self.clear();
        Some(self.capacity())
    }

    fn held(&self) -> usize {
        self.capacity()
    }
}

impl Reusable for Arc<Vec<u8>> {
    fn empty_if_unshared(&mut self) -> Option<usize> {
        Arc::get_mut(self).and_then(Vec::empty_if_unshared)
    }

    fn held(&self) -> usize {
        self.capacity()
    }
}

/// Emptied, unshared buffers for reuse.
#[derive(Debug)]
pub struct Pool<B> {
    kept: Vec<B>,
    /// What `kept` holds, together (capacities and overheads).
    bytes: usize,
    /// The most `bytes` may come to (beyond a first buffer).
    limit: usize,
}

/// A writer's serialized samples.
pub type PayloadPool = Pool<Arc<Vec<u8>>>;
/// A reader's received samples.
pub type ReceivePool = Pool<Vec<u8>>;

impl<B> Default for Pool<B> {
    fn default() -> Self {
        Pool::with_limit(MAX_KEPT_BYTES)
    }
}

impl<B> Pool<B> {
    /// An empty pool that keeps up to `limit` bytes (beyond a first buffer).
    pub const fn with_limit(limit: usize) -> Pool<B> {
        Pool {
            kept: Vec::new(),
            bytes: 0,
            limit,
        }
    }
}

impl<B: Reusable> Pool<B> {
    /// An empty pool that keeps up to [`MAX_KEPT_BYTES`].
    pub const fn new() -> Pool<B> {
        Pool::with_limit(MAX_KEPT_BYTES)
    }

    /// Keeps `buffer`, emptied, if nothing else holds it and the pool has room; else lets
    /// it go.
    pub fn keep(&mut self, mut buffer: B) {
        let held = buffer.held() + OVERHEAD;
        let room =
            self.kept.is_empty() || (self.kept.len() < MAX_KEPT && self.bytes + held <= self.limit);
        if room && buffer.empty_if_unshared().is_some() {
            self.bytes += held;
            self.kept.push(buffer);
        }
    }

    /// The buffer kept last (empty, unshared), if any.
    pub fn take(&mut self) -> Option<B> {
        let buffer = self.kept.pop()?;
        self.bytes -= buffer.held() + OVERHEAD;
        Some(buffer)
    }

    /// Sizes a reader's pool for what its application holds at once: `demand` bytes of
    /// samples came back together (one take's). The limit follows the largest demand
    /// lately, between [`RECEIVE_KEPT_BYTES`] and [`RECEIVE_KEPT_MAX_BYTES`], and sinks by
    /// an eighth at each smaller one, so that a burst long past is not held for ever.
    /// Why: a reader that takes 256 samples of 64 KiB and keeps only 1 MiB of their
    /// buffers has most of the next 256 allocated afresh, and once the allocator has
    /// given the freed ones back to the kernel, paid for page by page in faults (a third
    /// of a 64 KiB subscriber's time, measured).
    pub fn follow_demand(&mut self, demand: usize) {
        let sunk = self.limit - self.limit / 8;
        self.limit = demand
            .max(sunk)
            .clamp(RECEIVE_KEPT_BYTES, RECEIVE_KEPT_MAX_BYTES);
    }

    /// The most bytes it keeps (beyond a first buffer).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Keeps up to `limit` bytes from now on (what it holds beyond stays until taken).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// Moves what `other` keeps into this pool, as far as it has room.
    pub fn refill_from(&mut self, other: &mut Pool<B>) {
        while let Some(buffer) = other.take() {
            self.keep(buffer);
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
        let held = |p: &Arc<Vec<u8>>| p.held() + OVERHEAD;
        assert_eq!(other.bytes, other.kept.iter().map(held).sum::<usize>());
        assert!(other.bytes <= MAX_KEPT_BYTES);

        // Plain vectors are never shared: kept emptied, capacity and all.
        let mut received = ReceivePool::with_limit(1000);
        received.keep(vec![1, 2, 3]);
        let v = received.take().unwrap();
        assert!(v.is_empty() && v.capacity() >= 3);
        for _ in 0..100 {
            received.keep(Vec::with_capacity(100));
        }
        assert!(received.len() > 1 && received.bytes <= 1000);
    }

    #[test]
    fn a_readers_pool_keeps_what_its_application_takes_at_once_for_a_while() {
        let mut pool = ReceivePool::with_limit(RECEIVE_KEPT_BYTES);
        pool.follow_demand(100);
        assert_eq!(pool.limit(), RECEIVE_KEPT_BYTES, "never below the floor");
        pool.follow_demand(16 << 20);
        assert_eq!(pool.limit(), 16 << 20);
        for _ in 0..256 {
            pool.keep(Vec::with_capacity(64 << 10));
        }
        assert_eq!(
            pool.len(),
            255,
            "a take's worth of 64 KiB buffers, less the overheads"
        );
        pool.follow_demand(1 << 20);
        assert_eq!(
            pool.limit(),
            14 << 20,
            "a smaller take lowers it by an eighth"
        );
        for _ in 0..100 {
            pool.follow_demand(0);
        }
        assert_eq!(pool.limit(), RECEIVE_KEPT_BYTES);
        pool.follow_demand(usize::MAX);
        assert_eq!(
            pool.limit(),
            RECEIVE_KEPT_MAX_BYTES,
            "never above the ceiling"
        );
    }
}
