//! The decoder never reserves more memory than the hostile input could hold: 64-byte
//! payloads that claim huge counts at several depths cost at most a few hundred bytes of
//! heap before they fail.
//!
//! A test binary of its own: it counts every allocation of the process with a global
//! allocator (`stats_alloc`, since our own code may not `unsafe impl GlobalAlloc`), so no
//! other test may allocate while it measures.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::{deserialize, Cdr, DecodeErrorKind};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The most any of the hostile payloads below may make the decoder allocate, in total
/// (which bounds the peak).
const BUDGET: usize = 4096;

/// 1 KiB in memory, but 4 bytes on the wire at least (an appendable struct may leave
/// members out): the element type that made `Vec::with_capacity(count)` reserve 12 KiB for
/// 48 bytes of input before the reservation was capped by the element's size in memory.
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "m::Image")]
struct Image {
    width: u16,
    pixels: [u8; 1024],
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(type_name = "m::Hostile")]
struct Hostile {
    grid: Vec<Vec<Vec<Vec<u64>>>>,
    names: Vec<Vec<String>>,
    images: Vec<Image>,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(mutable, type_name = "m::Wrapper")]
struct Wrapper {
    inner: Hostile,
    more: Vec<Hostile>,
}

const CDR_LE: [u8; 4] = [0x00, 0x01, 0, 0];
const CDR2_LE: [u8; 4] = [0x00, 0x07, 0, 0];
const PL_CDR2_LE: [u8; 4] = [0x00, 0x0b, 0, 0];

/// A 64-byte payload: `header`, the 32-bit little-endian `words`, zeros after them.
fn hostile(header: [u8; 4], words: &[u32]) -> Vec<u8> {
    let mut bytes = header.to_vec();
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    assert!(bytes.len() <= 64);
    bytes.resize(64, 0);
    bytes
}

/// Decodes `bytes` as `T`, expecting `kind` at `offset` in member `path`; returns the bytes
/// allocated meanwhile (the error's own included).
fn allocated_by<T: Cdr + std::fmt::Debug>(
    bytes: &[u8],
    kind: &DecodeErrorKind,
    offset: usize,
    path: &str,
) -> usize {
    let region = Region::new(GLOBAL);
    let result = deserialize::<T>(bytes);
    let allocated = region.change().bytes_allocated;
    let err = result.expect_err("hostile input must not decode");
    assert_eq!(
        (&err.kind, err.offset, err.path.to_string().as_str()),
        (kind, offset, path),
        "{err}"
    );
    allocated
}

/// One test only, so that nothing else allocates while it measures.
#[test]
fn hostile_counts_at_every_depth_cost_less_than_4_kib() {
    // A control first: the counter sees a valid sample of 1000 octets.
    let region = Region::new(GLOBAL);
    let octets = [&CDR_LE[..], &1000u32.to_le_bytes(), &[7; 1000]].concat();
    assert_eq!(deserialize::<Vec<u8>>(&octets).unwrap().len(), 1000);
    assert!(region.change().bytes_allocated >= 1000);

    let max = u32::MAX;
    let exceeds = |what, claimed: u32, remaining| DecodeErrorKind::LengthExceedsInput {
        what,
        claimed: claimed.into(),
        remaining,
    };
    let cases: Vec<(&str, Vec<u8>, DecodeErrorKind, usize, &str)> = vec![
        // XCDR1: every count as large as the bytes after it allow, then 2^32-1.
        (
            "grid, 4 levels",
            hostile(CDR_LE, &[14, 13, 12, max]),
            exceeds("sequence length", max, 44),
            16,
            "m::Hostile.grid[0][0][0]",
        ),
        (
            "names, 2 levels and a string",
            hostile(CDR_LE, &[0, 13, 9, max]),
            exceeds("string length", max, 44),
            16,
            "m::Hostile.names[0][0]",
        ),
        (
            "images",
            hostile(CDR_LE, &[0, 0, 12]),
            DecodeErrorKind::UnexpectedEnd {
                what: "array",
                needed: 1024,
                remaining: 46,
            },
            18,
            "m::Hostile.images[0].pixels",
        ),
        // XCDR2: DHEADERs and counts as large as they may be, down to one that lies.
        (
            "grid, XCDR2",
            hostile(CDR2_LE, &[56, 13, 48, 11, 40, 9, max]),
            exceeds("sequence length", max, 32),
            28,
            "m::Hostile.grid[0][0][0]",
        ),
        (
            "images, XCDR2",
            hostile(CDR2_LE, &[4, 0, 4, 0, 40, 9, max]),
            exceeds("DHEADER", max, 32),
            28,
            "m::Hostile.images[0]",
        ),
        // A mutable wrapper: DHEADER, EMHEADER (length code 4) and NEXTINT, then grid.
        (
            "wrapper, XCDR2",
            hostile(PL_CDR2_LE, &[56, 4 << 28, 48, 44, 10, 36, 8, max]),
            exceeds("sequence DHEADER", max, 28),
            32,
            "m::Wrapper.inner.grid[0][0]",
        ),
    ];
    let mut report = Vec::new();
    for (name, bytes, kind, offset, path) in &cases {
        assert_eq!(bytes.len(), 64, "{name}");
        let allocated = if name.starts_with("wrapper") {
            allocated_by::<Wrapper>(bytes, kind, *offset, path)
        } else {
            allocated_by::<Hostile>(bytes, kind, *offset, path)
        };
        report.push(format!("{name}: {allocated} bytes"));
        assert!(
            allocated < BUDGET,
            "{name}: {allocated} bytes allocated for 64 bytes of input (budget {BUDGET})"
        );
    }
    println!("{}", report.join("\n"));
}
