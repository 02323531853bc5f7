//! Large byte buffers kept for reuse: reassembled samples.
//!
//! A reassembled sample of megabytes is a fresh allocation that the allocator may hand back
//! to the kernel when it is freed (glibc does, in a thread's arena, once its free top
//! passes the trim threshold), and a fresh allocation is paid for page by page in faults:
//! on the 2-core VM, 11 MB samples over shared memory moved at 65/s with 2.4 million minor
//! faults in 6 s in the reader, against 238/s with glibc told to keep its memory. The
//! reader's reassembly takes its buffer here, and whoever consumed a sample's bytes gives
//! the buffer back with [`recycle`].
//!
//! Process-wide and small: at most [`MAX_KEPT`] buffers and [`MAX_KEPT_BYTES`] in all, only
//! of at least [`MIN_POOLED`] bytes (smaller ones cost the allocator little). A sample
//! under reassembly takes a buffer only if one is already kept ([`take_kept`]); it never
//! allocates for what a message merely claims.

use std::sync::Mutex;

/// Buffers smaller than this are left to the allocator.
pub const MIN_POOLED: usize = 256 * 1024;
/// The most buffers kept.
pub const MAX_KEPT: usize = 4;
/// The most bytes kept, all buffers together.
pub const MAX_KEPT_BYTES: usize = 64 << 20;

/// A bounded set of kept buffers; [`take_kept`] and [`recycle`] use the process's.
#[derive(Debug, Default)]
pub struct BufferPool {
    kept: Mutex<Vec<Vec<u8>>>,
}

static PROCESS: BufferPool = BufferPool::new();

/// [`BufferPool::take_kept`] from the process's pool.
pub fn take_kept(len: usize) -> Option<Vec<u8>> {
    PROCESS.take_kept(len)
}

/// [`BufferPool::recycle`] into the process's pool.
pub fn recycle(buffer: Vec<u8>) {
    PROCESS.recycle(buffer);
}

impl BufferPool {
    /// An empty pool.
    pub const fn new() -> BufferPool {
        BufferPool {
            kept: Mutex::new(Vec::new()),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kept buffer with room for `len` bytes and at most twice that (so that a small
    /// sample does not hold a huge buffer), or `None`: never a new allocation (what a
    /// sample under reassembly starts with, so that the size its first fragment claims
    /// reserves nothing).
    pub fn take_kept(&self, len: usize) -> Option<Vec<u8>> {
        if len < MIN_POOLED {
            return None;
        }
        let mut kept = self.kept();
        let i = kept
            .iter()
            .position(|b| b.capacity() >= len && b.capacity() / 2 <= len)?;
        Some(kept.swap_remove(i))
    }

    /// Gives `buffer` back for a later [`BufferPool::take_kept`] (or drops it, when it is small
    /// or the pool is full).
    pub fn recycle(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() < MIN_POOLED {
            return;
        }
        buffer.clear();
        let mut kept = self.kept();
        let bytes: usize = kept.iter().map(Vec::capacity).sum();
        if kept.len() < MAX_KEPT && bytes + buffer.capacity() <= MAX_KEPT_BYTES {
            kept.push(buffer);
        } else if let Some(smallest) = kept
            .iter_mut()
            .filter(|b| b.capacity() < buffer.capacity())
            .min_by_key(|b| b.capacity())
        {
            // Full: keep the larger (the sizes in use now replace older, smaller ones).
            if bytes - smallest.capacity() + buffer.capacity() <= MAX_KEPT_BYTES {
                *smallest = buffer;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recycled_buffer_is_taken_again_and_the_pool_stays_bounded() {
        let pool = BufferPool::new();
        assert!(pool.take_kept(MIN_POOLED).is_none(), "nothing kept yet");
        let mut b = Vec::with_capacity(MIN_POOLED);
        let p = b.as_ptr();
        b.extend_from_slice(&[7; 10]);
        pool.recycle(b);
        let again = pool.take_kept(MIN_POOLED).unwrap();
        assert!(again.is_empty() && again.as_ptr() == p, "reused, emptied");
        // A buffer more than twice a sample's size is not handed out for it.
        pool.recycle(Vec::with_capacity(4 * MIN_POOLED));
        assert!(pool.take_kept(MIN_POOLED).is_none());
        assert_eq!(
            pool.take_kept(2 * MIN_POOLED).unwrap().capacity(),
            4 * MIN_POOLED
        );
        // Small buffers are not kept; never more than MAX_KEPT, MAX_KEPT_BYTES.
        pool.recycle(Vec::with_capacity(16));
        assert!(pool.kept().is_empty());
        for _ in 0..10 {
            pool.recycle(Vec::with_capacity(MIN_POOLED));
        }
        assert_eq!(pool.kept().len(), MAX_KEPT);
        // Full: a larger one replaces a smaller, within the byte bound only.
        pool.recycle(Vec::with_capacity(4 * MIN_POOLED));
        pool.recycle(Vec::with_capacity(MAX_KEPT_BYTES));
        let k = pool.kept();
        let mut sizes: Vec<usize> = k.iter().map(Vec::capacity).collect();
        sizes.sort();
        assert_eq!(sizes, [MIN_POOLED, MIN_POOLED, MIN_POOLED, 4 * MIN_POOLED]);
    }
}
