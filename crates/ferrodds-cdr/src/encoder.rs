//! The encoder: appends XCDR1 or XCDR2 to a caller's buffer.
//!
//! Alignment is relative to the origin of the CDR stream, which is the first byte after
//! the encapsulation header; the encoder takes the origin as the buffer's length when it
//! is made, so a caller can put RTPS headers before the payload and serialize straight
//! into the send buffer.

use crate::error::{EncodeError, EncodeErrorKind};
use crate::{Endianness, XcdrVersion};

/// Writes CDR into a `Vec<u8>`.
pub struct Encoder<'a> {
    buf: &'a mut Vec<u8>,
    origin: usize,
    max_align: usize,
    big_endian: bool,
    version: XcdrVersion,
}

macro_rules! put_primitive {
    ($(#[$doc:meta] $name:ident: $ty:ty;)*) => {$(
        #[$doc]
        #[inline]
        pub fn $name(&mut self, value: $ty) {
            self.align(std::mem::size_of::<$ty>());
            let bytes = if self.big_endian { value.to_be_bytes() } else { value.to_le_bytes() };
            self.buf.extend_from_slice(&bytes);
        }
    )*};
}

impl<'a> Encoder<'a> {
    /// An encoder appending to `buf`; the CDR stream (and its alignment origin) starts at
    /// the buffer's current end.
    pub fn new(buf: &'a mut Vec<u8>, version: XcdrVersion, endianness: Endianness) -> Self {
        let origin = buf.len();
        Self {
            buf,
            origin,
            max_align: version.max_align(),
            big_endian: endianness == Endianness::Big,
            version,
        }
    }

    /// The XCDR version being written.
    #[inline]
    pub fn version(&self) -> XcdrVersion {
        self.version
    }

    /// True when writing XCDR2.
    #[inline]
    pub fn is_xcdr2(&self) -> bool {
        self.version == XcdrVersion::Xcdr2
    }

    /// The byte order being written.
    #[inline]
    pub fn endianness(&self) -> Endianness {
        if self.big_endian {
            Endianness::Big
        } else {
            Endianness::Little
        }
    }

    /// Bytes written since the origin.
    #[inline]
    pub fn position(&self) -> usize {
        self.buf.len() - self.origin
    }

    /// Pads with zeros to a multiple of `size` (capped at the version's maximum alignment).
    #[inline]
    pub fn align(&mut self, size: usize) {
        let align = size.min(self.max_align);
        let pad = self.position().wrapping_neg() & (align - 1);
        if pad != 0 {
            self.buf.resize(self.buf.len() + pad, 0);
        }
    }

    put_primitive! {
        /// Writes a 16-bit unsigned integer.
        write_u16: u16;
        /// Writes a 32-bit unsigned integer.
        write_u32: u32;
        /// Writes a 64-bit unsigned integer.
        write_u64: u64;
        /// Writes a 16-bit signed integer.
        write_i16: i16;
        /// Writes a 32-bit signed integer.
        write_i32: i32;
        /// Writes a 64-bit signed integer.
        write_i64: i64;
        /// Writes a 32-bit float.
        write_f32: f32;
        /// Writes a 64-bit float.
        write_f64: f64;
    }

    /// Writes one octet.
    #[inline]
    pub fn write_u8(&mut self, value: u8) {
        self.buf.push(value);
    }

    /// Writes raw bytes, unaligned.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes a length as a 32-bit unsigned integer, refusing lengths that do not fit.
    #[inline]
    pub fn write_length(&mut self, len: usize) -> Result<(), EncodeError> {
        let len32 = u32::try_from(len)
            .map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))?;
        self.write_u32(len32);
        Ok(())
    }

    /// Writes a string: length including the NUL, the UTF-8 bytes, the NUL.
    #[inline]
    pub fn write_str(&mut self, s: &str) -> Result<(), EncodeError> {
        if let Some(nul) = s.bytes().position(|b| b == 0) {
            return Err(EncodeError::new(EncodeErrorKind::NulInString(nul)));
        }
        self.write_length(s.len() + 1)?;
        self.buf.reserve(s.len() + 1);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        Ok(())
    }

    /// Reserves a 32-bit length (a DHEADER or NEXTINT) to be filled by
    /// [`Encoder::end_length`] with the number of bytes written after it.
    #[inline]
    pub fn begin_length(&mut self) -> usize {
        self.align(4);
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        at
    }

    /// Fills a length reserved by [`Encoder::begin_length`].
    #[inline]
    pub fn end_length(&mut self, at: usize) -> Result<(), EncodeError> {
        let len = self.buf.len() - at - 4;
        let len32 = u32::try_from(len)
            .map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))?;
        let bytes = if self.big_endian {
            len32.to_be_bytes()
        } else {
            len32.to_le_bytes()
        };
        // INVARIANT: `at` came from begin_length on this buffer, which only grows.
        self.buf[at..at + 4].copy_from_slice(&bytes);
        Ok(())
    }

    /// The absolute index in the buffer where the next byte goes.
    #[inline]
    pub(crate) fn buffer_index(&self) -> usize {
        self.buf.len()
    }

    /// Moves the alignment origin to absolute index `at` (XCDR1 parameters align their value
    /// from its own start); returns the previous origin, to restore.
    #[inline]
    pub(crate) fn set_origin(&mut self, at: usize) -> usize {
        std::mem::replace(&mut self.origin, at)
    }

    /// True when the host's byte order is the one being written.
    #[inline]
    pub(crate) fn is_native_order(&self) -> bool {
        self.big_endian == cfg!(target_endian = "big")
    }

    /// Reserves room for `additional` more bytes.
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve(additional);
    }

    /// Drops what was written from absolute index `at` on (`at` from `buffer_index`): the
    /// undoing of a run written before it was known to be valid.
    #[inline]
    pub(crate) fn truncate(&mut self, at: usize) {
        self.buf.truncate(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_is_capped_by_version() {
        for (version, expected) in [
            (
                XcdrVersion::Xcdr1,
                vec![1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0],
            ),
            (XcdrVersion::Xcdr2, vec![1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]),
        ] {
            let mut buf = Vec::new();
            let mut e = Encoder::new(&mut buf, version, Endianness::Little);
            e.write_u8(1);
            e.write_u64(2);
            assert_eq!(buf, expected, "{version:?}");
        }
    }

    #[test]
    fn alignment_is_relative_to_the_origin() {
        let mut buf = vec![0xaa; 3];
        let mut e = Encoder::new(&mut buf, XcdrVersion::Xcdr1, Endianness::Big);
        e.write_u8(1);
        e.write_u16(0x0203);
        assert_eq!(buf, [0xaa, 0xaa, 0xaa, 1, 0, 2, 3]);
    }

    #[test]
    fn lengths_are_patched_in_place() {
        let mut buf = Vec::new();
        let mut e = Encoder::new(&mut buf, XcdrVersion::Xcdr2, Endianness::Big);
        let at = e.begin_length();
        e.write_str("ab").unwrap();
        e.end_length(at).unwrap();
        assert_eq!(buf, [0, 0, 0, 7, 0, 0, 0, 3, b'a', b'b', 0]);
    }

    #[test]
    fn nul_inside_a_string_is_refused() {
        let mut buf = Vec::new();
        let mut e = Encoder::new(&mut buf, XcdrVersion::Xcdr2, Endianness::Little);
        let err = e.write_str("a\0b").unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::NulInString(1));
    }
}
