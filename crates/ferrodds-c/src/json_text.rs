//! For bindings that write and read FerroDDS's JSON view in their own language: a sequence
//! of octets is base64 text there, and a managed language's loop over every byte of it
//! costs more than the rest of the sample (the C# binding on Mono: 49 µs to encode 64 KiB,
//! and 82 µs to find the end of its text and decode it; SIMD here does either in a few).

use base64_simd::{Out, STANDARD};

use crate::ptr;
use crate::retcode::{call, ferrodds_return_t, Fail};

/// A length as the value of a return code (which is never negative on success).
fn length(n: usize, what: &str) -> Result<i32, Fail> {
    i32::try_from(n).map_err(|_| {
        Fail::bad(format!(
            "{what}: {n} bytes, more than a return code can count"
        ))
    })
}

/// Writes the base64 text of the `size` bytes at `bytes` (no quotes, no terminating NUL) to
/// `text`, which has room for `capacity` bytes; returns the text's length, 4 × ⌈size / 3⌉.
///
/// # Safety
/// `bytes` is null or points at `size` readable bytes; `text` is null or points at
/// `capacity` writable bytes, apart from `bytes`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_base64_encode(
    bytes: *const u8,
    size: usize,
    text: *mut u8,
    capacity: usize,
) -> ferrodds_return_t {
    call("ferrodds_base64_encode", || {
        // SAFETY: forwarded promises.
        let (bytes, text) = unsafe {
            (
                ptr::bytes(bytes, size, "bytes")?,
                ptr::out_slice(text, capacity, "text")?,
            )
        };
        // `ptr::bytes` took at most `isize::MAX` bytes, as `encoded_length` wants.
        let needed = STANDARD.encoded_length(size);
        if needed > text.len() {
            return Err(Fail::bad(format!(
                "text: room for {} bytes, the base64 of {size} bytes takes {needed}",
                text.len()
            )));
        }
        let written = STANDARD.encode(bytes, Out::from_slice(&mut text[..needed]));
        length(written.len(), "text")
    })
}

/// Decodes the `size` bytes of base64 text at `text` (RFC 4648, padded: groups of four
/// digits; no quotes, no whitespace) into `bytes`, which has room for `capacity` bytes;
/// returns the number of bytes decoded. `FERRODDS_RETCODE_BAD_PARAMETER` when the text is
/// not such base64 or `capacity` is short (nothing is then promised of `bytes`).
///
/// # Safety
/// `text` is null or points at `size` readable bytes; `bytes` is null or points at
/// `capacity` writable bytes, apart from `text`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_base64_decode(
    text: *const u8,
    size: usize,
    bytes: *mut u8,
    capacity: usize,
) -> ferrodds_return_t {
    call("ferrodds_base64_decode", || {
        // SAFETY: forwarded promises.
        let (text, bytes) = unsafe {
            (
                ptr::bytes(text, size, "text")?,
                ptr::out_slice(bytes, capacity, "bytes")?,
            )
        };
        let needed = STANDARD
            .decoded_length(text)
            .map_err(|_| Fail::bad("text is not base64 (RFC 4648, padded)"))?;
        if needed > bytes.len() {
            return Err(Fail::bad(format!(
                "bytes: room for {} bytes, the text decodes to {needed}",
                bytes.len()
            )));
        }
        let decoded = STANDARD
            .decode(text, Out::from_slice(&mut bytes[..needed]))
            .map_err(|_| Fail::bad("text is not base64 (RFC 4648, padded)"))?;
        length(decoded.len(), "bytes")
    })
}

/// Where the JSON string whose content starts at `text` ends: the offset of the first `"`
/// or `\\` (an escape) in the `size` bytes at `text`, or `size` when there is neither.
///
/// # Safety
/// `text` is null or points at `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_json_string_end(
    text: *const u8,
    size: usize,
) -> ferrodds_return_t {
    call("ferrodds_json_string_end", || {
        // SAFETY: forwarded promise.
        let text = unsafe { ptr::bytes(text, size, "text")? };
        length(memchr::memchr2(b'"', b'\\', text).unwrap_or(size), "text")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retcode::FERRODDS_RETCODE_BAD_PARAMETER;

    fn encode(bytes: &[u8], capacity: usize) -> (i32, Vec<u8>) {
        let mut text = vec![0u8; capacity];
        // SAFETY: both slices live and hold what their lengths say.
        let n = unsafe {
            ferrodds_base64_encode(bytes.as_ptr(), bytes.len(), text.as_mut_ptr(), text.len())
        };
        (n, text)
    }

    fn decode(text: &[u8], capacity: usize) -> (i32, Vec<u8>) {
        let mut bytes = vec![0u8; capacity];
        // SAFETY: as in `encode`.
        let n = unsafe {
            ferrodds_base64_decode(text.as_ptr(), text.len(), bytes.as_mut_ptr(), bytes.len())
        };
        (n, bytes)
    }

    #[test]
    fn text_and_bytes_go_both_ways_at_every_padding() {
        for len in [0usize, 1, 2, 3, 4, 5, 100, 65536] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let (n, text) = encode(&bytes, len.div_ceil(3) * 4);
            assert_eq!(n as usize, len.div_ceil(3) * 4, "{len} bytes");
            assert_eq!(
                &text[..n as usize],
                STANDARD.encode_to_string(&bytes).as_bytes()
            );
            let (m, back) = decode(&text[..n as usize], len);
            assert_eq!(m as usize, len);
            assert_eq!(back, bytes);
        }
    }

    #[test]
    fn a_string_ends_at_its_quote_or_its_first_escape() {
        // SAFETY: the slice lives and holds what its length says.
        let end = |t: &[u8]| unsafe { ferrodds_json_string_end(t.as_ptr(), t.len()) };
        assert_eq!(end(b"YWJj\",\"x\":1}"), 4);
        assert_eq!(end(b"ab\\\"cd\""), 2);
        assert_eq!(end(b"no end"), 6);
        assert_eq!(end(b""), 0);
    }

    #[test]
    fn short_room_and_bad_text_are_refused() {
        assert_eq!(encode(b"abcd", 7).0, FERRODDS_RETCODE_BAD_PARAMETER);
        assert_eq!(decode(b"YWJjZA==", 3).0, FERRODDS_RETCODE_BAD_PARAMETER);
        for bad in [&b"YWJjZA="[..], b"YW*jZA==", b"\"YWJj\"", b"YWJj ZA=="] {
            assert_eq!(decode(bad, 16).0, FERRODDS_RETCODE_BAD_PARAMETER, "{bad:?}");
        }
        // SAFETY: a null pointer with a length, which the function refuses.
        let n = unsafe { ferrodds_base64_decode(std::ptr::null(), 4, std::ptr::null_mut(), 0) };
        assert_eq!(n, FERRODDS_RETCODE_BAD_PARAMETER);
    }
}
