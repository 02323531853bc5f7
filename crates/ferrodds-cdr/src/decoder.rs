//! The decoder: reads XCDR1 or XCDR2 from borrowed bytes.
//!
//! Every read checks what remains first; lengths read from the input are compared with the
//! bytes that remain before anything is reserved, so hostile input costs at most its own
//! size in memory. Nested lengths (DHEADERs, member lengths) narrow the readable window with
//! [`Decoder::limit`], so a member can never read past the bytes its header gave it.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::{Endianness, XcdrVersion};
use bytes::Bytes;

/// Whether `slice` lies inside `source`'s memory.
fn contains(source: &[u8], slice: &[u8]) -> bool {
    let (start, end) = (
        source.as_ptr() as usize,
        source.as_ptr() as usize + source.len(),
    );
    let at = slice.as_ptr() as usize;
    start <= at && at + slice.len() <= end
}

/// Reads CDR from a byte slice.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    /// Where alignment counts from (moved inside XCDR1 parameters).
    origin: usize,
    max_align: usize,
    big_endian: bool,
    version: XcdrVersion,
    /// How many structs and unions enclose the position (see [`Decoder::MAX_DEPTH`]).
    depth: usize,
    /// The buffer `data` lies in, when it is shared: [`Decoder::octets`] hands out views
    /// into it instead of copies.
    shared: Option<&'a Bytes>,
}

macro_rules! get_primitive {
    ($(#[$doc:meta] $name:ident: $ty:ty, $what:literal;)*) => {$(
        #[$doc]
        #[inline]
        pub fn $name(&mut self) -> Result<$ty, DecodeError> {
            const N: usize = std::mem::size_of::<$ty>();
            self.align(N)?;
            let bytes: [u8; N] = self.array($what)?;
            Ok(if self.big_endian { <$ty>::from_be_bytes(bytes) } else { <$ty>::from_le_bytes(bytes) })
        }
    )*};
}

impl<'a> Decoder<'a> {
    /// A decoder over a CDR stream whose first byte is the alignment origin (the first byte
    /// after the encapsulation header).
    pub fn new(data: &'a [u8], version: XcdrVersion, endianness: Endianness) -> Self {
        Self {
            data,
            pos: 0,
            end: data.len(),
            origin: 0,
            max_align: version.max_align(),
            big_endian: endianness == Endianness::Big,
            version,
            depth: 0,
            shared: None,
        }
    }

    /// This decoder, reading from a slice of `source`: [`Decoder::octets`] then gives views
    /// into `source` (each keeps it alive) rather than copies. When the slice is not inside
    /// `source`, octets are copied as without it.
    pub fn sharing(mut self, source: &'a Bytes) -> Self {
        self.shared = Some(source);
        self
    }

    /// How deep structs and unions may nest. Only recursive types (a struct holding a
    /// sequence of itself) can nest without bound, and each level costs stack: without a
    /// limit, a few kilobytes of hostile input would overflow the stack. serde_json's
    /// parser stops at the same depth.
    pub const MAX_DEPTH: usize = 128;

    /// Enters a struct or union, refusing to nest deeper than [`Decoder::MAX_DEPTH`]; pair
    /// with [`Decoder::leave`].
    #[inline]
    pub fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= Self::MAX_DEPTH {
            return Err(self.error(DecodeErrorKind::NestingTooDeep {
                limit: Self::MAX_DEPTH,
            }));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a struct or union entered with [`Decoder::enter`].
    #[inline]
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The XCDR version being read.
    #[inline]
    pub fn version(&self) -> XcdrVersion {
        self.version
    }

    /// True when reading XCDR2.
    #[inline]
    pub fn is_xcdr2(&self) -> bool {
        self.version == XcdrVersion::Xcdr2
    }

    /// The byte order being read.
    #[inline]
    pub fn endianness(&self) -> Endianness {
        if self.big_endian {
            Endianness::Big
        } else {
            Endianness::Little
        }
    }

    /// Offset of the next byte from the origin.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left in the current window.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// True when the current window is used up.
    #[inline]
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// An error of `kind` at the current position.
    #[cold]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.pos)
    }

    #[cold]
    fn unexpected_end(&self, what: &'static str, needed: usize) -> DecodeError {
        self.error(DecodeErrorKind::UnexpectedEnd {
            what,
            needed,
            remaining: self.remaining(),
        })
    }

    /// Skips padding to a multiple of `size` (capped at the version's maximum alignment).
    #[inline]
    pub fn align(&mut self, size: usize) -> Result<(), DecodeError> {
        let align = size.min(self.max_align);
        let pad = self.pos.wrapping_sub(self.origin).wrapping_neg() & (align - 1);
        if pad > self.remaining() {
            return Err(self.unexpected_end("alignment padding", pad));
        }
        self.pos += pad;
        Ok(())
    }

    /// Takes the next `n` bytes, unaligned, as a [`Bytes`]: a view into the shared source
    /// (see [`Decoder::sharing`]), or else a copy.
    pub fn octets(&mut self, n: usize, what: &'static str) -> Result<Bytes, DecodeError> {
        let slice = self.bytes(n, what)?;
        Ok(match self.shared {
            // `slice_ref` asserts that the slice is inside the source; an address check
            // first keeps a decoder given another source from panicking.
            Some(source) if contains(source, slice) => source.slice_ref(slice),
            _ => Bytes::copy_from_slice(slice),
        })
    }

    /// Takes the next `n` bytes, unaligned.
    #[inline]
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.unexpected_end(what, n));
        }
        let start = self.pos;
        self.pos += n;
        // INVARIANT: start + n <= end <= data.len(), checked above.
        Ok(&self.data[start..start + n])
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let bytes = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<(), DecodeError> {
        self.bytes(n, what).map(|_| ())
    }

    /// Reads one octet.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        match self.data.get(self.pos) {
            Some(&b) if self.pos < self.end => {
                self.pos += 1;
                Ok(b)
            }
            _ => Err(self.unexpected_end("octet", 1)),
        }
    }

    get_primitive! {
        /// Reads a 16-bit unsigned integer.
        read_u16: u16, "uint16";
        /// Reads a 32-bit unsigned integer.
        read_u32: u32, "uint32";
        /// Reads a 64-bit unsigned integer.
        read_u64: u64, "uint64";
        /// Reads a 16-bit signed integer.
        read_i16: i16, "int16";
        /// Reads a 32-bit signed integer.
        read_i32: i32, "int32";
        /// Reads a 64-bit signed integer.
        read_i64: i64, "int64";
        /// Reads a 32-bit float.
        read_f32: f32, "float32";
        /// Reads a 64-bit float.
        read_f64: f64, "float64";
    }

    /// Reads a boolean, refusing octets other than 0 and 1.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => {
                self.pos -= 1;
                Err(self.error(DecodeErrorKind::InvalidBool(other)))
            }
        }
    }

    /// Reads an element count and checks it against what remains, given that each element
    /// takes at least `min_element_size` bytes (elements of size 0 count as 1, so that a
    /// count can never exceed the bytes left).
    #[inline]
    pub fn read_count(
        &mut self,
        what: &'static str,
        min_element_size: usize,
    ) -> Result<usize, DecodeError> {
        let count = self.read_u32()?;
        let min = min_element_size.max(1) as u64;
        if u64::from(count).saturating_mul(min) > self.remaining() as u64 {
            self.pos -= 4;
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what,
                claimed: u64::from(count),
                remaining: self.remaining() - 4,
            }));
        }
        Ok(count as usize)
    }

    /// Reads a string: length including the NUL, UTF-8 bytes, NUL.
    #[inline]
    pub fn read_str(&mut self) -> Result<&'a str, DecodeError> {
        let len = self.read_count("string length", 1)?;
        if len == 0 {
            return Err(DecodeError::new(
                DecodeErrorKind::StringLengthZero,
                self.pos - 4,
            ));
        }
        let start = self.pos;
        let bytes = self.bytes(len, "string")?;
        let (text, nul) = bytes.split_at(len - 1);
        if nul != [0] {
            self.pos -= 1;
            return Err(self.error(DecodeErrorKind::StringNotTerminated(nul[0])));
        }
        if let Some(at) = text.iter().position(|&b| b == 0) {
            return Err(DecodeError::new(
                DecodeErrorKind::NulInString(at),
                start + at,
            ));
        }
        std::str::from_utf8(text).map_err(|e| {
            DecodeError::new(
                DecodeErrorKind::InvalidUtf8 {
                    valid_up_to: e.valid_up_to(),
                },
                start + e.valid_up_to(),
            )
        })
    }

    /// Reads a 32-bit length (DHEADER, NEXTINT, parameter length) and narrows the window to
    /// that many bytes; returns the outer window's end, to give back to [`Decoder::restore`].
    #[inline]
    pub fn limit(&mut self, len: usize, what: &'static str) -> Result<usize, DecodeError> {
        if len > self.remaining() {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                what,
                claimed: len as u64,
                remaining: self.remaining(),
            }));
        }
        let outer = self.end;
        self.end = self.pos + len;
        Ok(outer)
    }

    /// Moves to the end of the current window (skipping what the reader did not understand)
    /// and widens the window back to `outer_end`.
    #[inline]
    pub fn restore(&mut self, outer_end: usize) {
        self.pos = self.end;
        self.end = outer_end;
    }

    /// Reads a DHEADER and narrows the window to the object it delimits.
    #[inline]
    pub fn begin_delimited(&mut self, what: &'static str) -> Result<usize, DecodeError> {
        let len = self.read_u32()? as usize;
        match self.limit(len, what) {
            Ok(outer) => Ok(outer),
            Err(e) => {
                self.pos -= 4;
                Err(e.at_offset(self.pos))
            }
        }
    }

    /// Moves the alignment origin to the current position; returns the previous one.
    #[inline]
    pub(crate) fn set_origin_here(&mut self) -> usize {
        std::mem::replace(&mut self.origin, self.pos)
    }

    /// Restores an origin returned by [`Decoder::set_origin_here`].
    #[inline]
    pub(crate) fn restore_origin(&mut self, origin: usize) {
        self.origin = origin;
    }

    /// The absolute position, for rewinding with [`Decoder::rewind`].
    #[inline]
    pub(crate) fn mark(&self) -> usize {
        self.pos
    }

    /// Rewinds to a position from [`Decoder::mark`] (never beyond the window).
    #[inline]
    pub(crate) fn rewind(&mut self, mark: usize) {
        self.pos = mark.min(self.end);
    }

    /// True when the host's byte order is the one being read.
    #[inline]
    pub(crate) fn is_native_order(&self) -> bool {
        self.big_endian == cfg!(target_endian = "big")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_byte_orders() {
        let data = [0, 0, 0, 1, 1, 0, 0, 0];
        let mut be = Decoder::new(&data, XcdrVersion::Xcdr2, Endianness::Big);
        assert_eq!(be.read_u32().unwrap(), 1);
        let mut le = Decoder::new(&data[4..], XcdrVersion::Xcdr2, Endianness::Little);
        assert_eq!(le.read_u32().unwrap(), 1);
    }

    #[test]
    fn octets_are_views_into_a_shared_source_and_copies_otherwise() {
        let source = Bytes::from((0..32u8).collect::<Vec<u8>>());
        let mut d =
            Decoder::new(&source[4..], XcdrVersion::Xcdr2, Endianness::Little).sharing(&source);
        d.read_u32().unwrap();
        let view = d.octets(8, "octets").unwrap();
        assert_eq!(&view[..], &source[8..16]);
        assert_eq!(view.as_ptr(), source[8..].as_ptr(), "not copied");
        assert!(
            d.octets(64, "octets").is_err(),
            "bounded by the input all the same"
        );

        // A decoder given a source its input is not in copies rather than panics.
        let other = Bytes::from(vec![9u8; 4]);
        let mut d =
            Decoder::new(&source[..], XcdrVersion::Xcdr2, Endianness::Little).sharing(&other);
        let copy = d.octets(4, "octets").unwrap();
        assert_eq!(&copy[..], &source[..4]);
        assert_ne!(copy.as_ptr(), source.as_ptr());
        assert_ne!(copy.as_ptr(), other.as_ptr());
    }

    #[test]
    fn a_huge_count_in_a_short_buffer_fails_at_once() {
        let mut data = vec![0xff, 0xff, 0xff, 0xff];
        data.extend_from_slice(&[0; 16]);
        let mut d = Decoder::new(&data, XcdrVersion::Xcdr2, Endianness::Little);
        let err = d.read_count("sequence length", 1).unwrap_err();
        assert_eq!(err.offset, 0);
        assert_eq!(
            err.kind,
            DecodeErrorKind::LengthExceedsInput {
                what: "sequence length",
                claimed: u32::MAX as u64,
                remaining: 16
            }
        );
    }

    #[test]
    fn windows_stop_reads_at_their_end() {
        let data = [4, 0, 0, 0, 1, 2, 3, 4, 9, 9, 9, 9];
        let mut d = Decoder::new(&data, XcdrVersion::Xcdr2, Endianness::Little);
        let outer = d.begin_delimited("struct").unwrap();
        assert_eq!(d.read_u16().unwrap(), 0x0201);
        assert!(d.read_u32().is_err());
        d.restore(outer);
        assert_eq!(d.position(), 8);
        assert_eq!(d.read_u32().unwrap(), 0x0909_0909);
    }

    #[test]
    fn strings_must_be_terminated_and_utf8() {
        let mut d = Decoder::new(
            &[3, 0, 0, 0, b'a', b'b', b'c'],
            XcdrVersion::Xcdr1,
            Endianness::Little,
        );
        assert_eq!(
            d.read_str().unwrap_err().kind,
            DecodeErrorKind::StringNotTerminated(b'c')
        );
        let mut d = Decoder::new(
            &[3, 0, 0, 0, 0xff, 0xfe, 0],
            XcdrVersion::Xcdr1,
            Endianness::Little,
        );
        assert_eq!(
            d.read_str().unwrap_err().kind,
            DecodeErrorKind::InvalidUtf8 { valid_up_to: 0 }
        );
        let mut d = Decoder::new(&[0, 0, 0, 0], XcdrVersion::Xcdr1, Endianness::Little);
        assert_eq!(
            d.read_str().unwrap_err().kind,
            DecodeErrorKind::StringLengthZero
        );
    }

    #[test]
    fn booleans_are_zero_or_one() {
        let mut d = Decoder::new(&[2], XcdrVersion::Xcdr1, Endianness::Little);
        assert_eq!(
            d.read_bool().unwrap_err().kind,
            DecodeErrorKind::InvalidBool(2)
        );
    }
}
