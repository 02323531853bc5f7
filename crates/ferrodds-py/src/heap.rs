//! Keeping the C allocator from giving back, after every take, the memory the next take
//! will need again.
//!
//! Python makes a `bytes` of every sequence of octets taken, with `malloc`. A program that
//! takes 256 samples of 64 KiB at a time allocates 16 MiB, drops it, and allocates it
//! again at the next take; glibc's `free` gives the top of its heap back to the kernel once
//! more than its trim threshold (128 KiB, as it starts) is free there, so every take paid
//! for all its pages again in faults (measured: a third of a 64 KiB subscriber's time).
//! glibc raises that threshold by itself, to twice the size of a block it had to map on
//! its own (mallopt(3), "M_MMAP_THRESHOLD": the dynamic threshold) when that block is
//! freed: so once a take hands out more than it has before, a block that size is made and
//! freed, untouched, and the heap keeps what the takes need. A program that set the
//! thresholds itself keeps them (glibc then adjusts nothing); other allocators ignore it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Below this, glibc's own thresholds (128 KiB to start) already keep it.
const MIN: usize = 256 * 1024;
/// glibc's dynamic threshold goes no higher than 32 MiB (64-bit).
const MAX: usize = 32 * 1024 * 1024;

/// The largest churn announced so far.
static ANNOUNCED: AtomicUsize = AtomicUsize::new(0);

/// Says that about `bytes` will be allocated and freed again and again (a take's `bytes`
/// objects): the first time it is more than before, a block of that size is mapped and
/// freed without being touched (no page of it is ever faulted in).
pub(crate) fn expect_churn(bytes: usize) {
    let bytes = bytes.min(MAX);
    if bytes < MIN || ANNOUNCED.fetch_max(bytes, Ordering::Relaxed) >= bytes {
        return;
    }
    // `black_box`: an allocation freed unused could otherwise be left out altogether.
    drop(std::hint::black_box(Vec::<u8>::with_capacity(bytes)));
}
