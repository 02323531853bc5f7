//! FerroDDS's C ABI: `include/ferrodds.h` (generated from this crate by cbindgen; a test
//! keeps it current). C, C++ and languages with a foreign-function interface (C#'s
//! P/Invoke, Python's ctypes) use FerroDDS through it: participants, publishers,
//! subscribers, topics of types registered from IDL text or XTypes TypeObjects, writers
//! and readers of serialized samples or of JSON text, wait sets and read conditions,
//! listeners and statuses.
//!
//! The rules of the boundary, which every function keeps:
//! - Entities are named by handles (`ferrodds_entity_t`, positive), never by pointers: a
//!   deleted or made-up handle is an error, not a crash.
//! - Every function returns a negative `FERRODDS_RETCODE_*` on failure, and
//!   [`retcode::ferrodds_last_error`] then says what was wrong and in which call.
//! - No panic crosses into C: one would be caught and returned as
//!   `FERRODDS_RETCODE_ERROR`.
//! - Pointer arguments are checked for null and alignment; who owns each buffer is written
//!   beside the function (samples taken are lent by the reader until given back).
//!
//! docs/c.md is the user's guide.

pub mod entity;
pub mod json_text;
mod ptr;
pub mod qos;
pub mod registry;
pub mod retcode;
pub mod sample;
pub mod status;
pub mod waitset;
