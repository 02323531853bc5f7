//! The UTF-8 bytes of a Python `str`, borrowed rather than copied.
//!
//! pyo3 built for the stable ABI of Python 3.8 turns a `str` into Rust text by asking
//! Python for a new `bytes` object and copying that into a `String`: two allocations and
//! two copies of a JSON text, which for a 64 KiB payload (87,000 characters of base64) was
//! a fifth of `write_json`'s time, most of it the kernel handing the allocator fresh pages.
//! CPython keeps a `str`'s UTF-8 form inside the object (an ASCII `str` *is* its UTF-8
//! form) and hands it out through `PyUnicode_AsUTF8AndSize`: public since Python 3.3 and in
//! the stable ABI since 3.10, so exported by every CPython this module loads into, though
//! pyo3 declares it only for stable-ABI builds of 3.10 and newer. This module declares it
//! and holds the crate's only `unsafe`.

use std::os::raw::c_char;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
}

/// The text of `text`, valid as long as the borrow of it (Python frees the UTF-8 form
/// only with the object). A `str` holding lone surrogates, which no UTF-8 encodes, is
/// Python's `UnicodeEncodeError`.
#[allow(unsafe_code)]
pub(crate) fn utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live `str` (the borrow holds a reference to it) and the GIL is
    // held (a `Bound` is proof of it); the function writes `len` and returns either the
    // object's UTF-8 bytes or NULL with an exception set.
    let data = unsafe { PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut len) };
    if data.is_null() {
        return Err(PyErr::fetch(text.py()));
    }
    let len = usize::try_from(len)
        .map_err(|_| pyo3::exceptions::PySystemError::new_err("a str of negative length"))?;
    // SAFETY: `data` points to `len` bytes that the object owns and keeps unchanged until
    // it is freed (a `str` is immutable), and the text returned lives no longer than `'a`,
    // the borrow of the object; CPython wrote them as UTF-8 (its encoder fails rather
    // than write anything else).
    Ok(unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast(), len)) })
}
