//! Raw pointers from C turned into references: the one module that trusts them, after
//! checking what can be checked — null, alignment, a length past `isize::MAX`, UTF-8. What
//! cannot be checked (that a non-null pointer points at live memory of the size given) is
//! the caller's promise, written in the header beside each argument.

use std::ffi::{c_char, CStr};

use crate::retcode::Fail;

/// The NUL-terminated UTF-8 string at `p` (argument `what`, for the error).
///
/// # Safety
/// `p` is null or points at a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Fail> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: not null, and the caller promises a NUL-terminated string living for 'a.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|e| {
        Fail::bad(format!(
            "{what} is not UTF-8 (invalid from byte {})",
            e.valid_up_to()
        ))
    })
}

/// The `len` bytes at `p`; a null `p` is allowed when `len` is 0.
///
/// # Safety
/// `p` is null or points at `len` readable bytes that outlive `'a`.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Fail::null(what));
    }
    if isize::try_from(len).is_err() {
        return Err(Fail::bad(format!("{what}: a length of {len} bytes")));
    }
    // SAFETY: not null, length within isize, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The `T` to write at `p`.
///
/// # Safety
/// `p` is null or points at a writable `T` that outlives `'a`.
pub(crate) unsafe fn out<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    if !p.is_aligned() {
        return Err(Fail::bad(format!("{what} is not aligned")));
    }
    // SAFETY: not null, aligned, and the caller promises a writable T living for 'a.
    Ok(unsafe { &mut *p })
}

/// Whether `len` values of `T` at `p` may make a slice: `Ok(false)` for none (`len` 0, where
/// `p` may be null), `Ok(true)` when `p` is not null, aligned, and the size fits `isize`.
fn slice_checks<T>(p: *const T, len: usize, what: &str) -> Result<bool, Fail> {
    if len == 0 {
        return Ok(false);
    }
    if p.is_null() {
        return Err(Fail::null(what));
    }
    if !p.is_aligned() {
        return Err(Fail::bad(format!("{what} is not aligned")));
    }
    if len
        .checked_mul(size_of::<T>())
        .and_then(|n| isize::try_from(n).ok())
        .is_none()
    {
        return Err(Fail::bad(format!("{what}: {len} elements")));
    }
    Ok(true)
}

/// The `len` values of `T` to write at `p`; a null `p` is allowed when `len` is 0.
///
/// # Safety
/// `p` is null or points at `len` writable `T`s that outlive `'a`.
pub(crate) unsafe fn out_slice<'a, T>(
    p: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [T], Fail> {
    if !slice_checks(p.cast_const(), len, what)? {
        return Ok(&mut []);
    }
    // SAFETY: checked above (not null, aligned, size within isize), and the caller
    // promises `len` writable Ts living for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// The `len` values of `T` at `p`; a null `p` is allowed when `len` is 0.
///
/// # Safety
/// `p` is null or points at `len` readable `T`s that outlive `'a`.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T], Fail> {
    if !slice_checks(p, len, what)? {
        return Ok(&[]);
    }
    // SAFETY: as `out_slice`, read only.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}
