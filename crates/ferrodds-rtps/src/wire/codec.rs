//! A bounds-checked reader over a submessage body and a bounds-checked writer for emit.
//!
//! Every read goes through [`Reader::take`], which checks the length against what remains
//! before touching the bytes; every write goes through [`Writer::put`]. Nothing else in
//! the wire module indexes a buffer.

use super::{EmitError, Endianness, MalformedError};

/// Reads the body of one submessage in the byte order of its E flag.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Message offset of `buf[0]`, for error reports.
    base: usize,
    endianness: Endianness,
    /// Submessage id, for error reports.
    submessage: u8,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], base: usize, endianness: Endianness, submessage: u8) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            endianness,
            submessage,
        }
    }

    /// Message offset of the next byte to read.
    pub(crate) fn offset(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn endianness(&self) -> Endianness {
        self.endianness
    }

    pub(crate) fn submessage(&self) -> u8 {
        self.submessage
    }

    fn truncated(&self, needed: usize) -> MalformedError {
        MalformedError::Truncated {
            offset: self.offset(),
            submessage: self.submessage,
            needed,
            available: self.remaining(),
        }
    }

    /// The next `n` bytes, or a [`MalformedError::Truncated`] if fewer remain.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], MalformedError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated(n))?;
        let bytes = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.truncated(n))?;
        self.pos = end;
        Ok(bytes)
    }

    /// Skips `n` bytes.
    pub(crate) fn skip(&mut self, n: usize) -> Result<(), MalformedError> {
        self.take(n).map(|_| ())
    }

    /// All bytes that remain.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        self.pos = self.buf.len();
        rest
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], MalformedError> {
        let bytes = self.take(N)?;
        // `take(N)` returned exactly N bytes, so the conversion cannot fail; map the
        // impossible case to the same error rather than panicking.
        <[u8; N]>::try_from(bytes).map_err(|_| self.truncated(N))
    }

    pub(crate) fn u16(&mut self) -> Result<u16, MalformedError> {
        let b = self.array::<2>()?;
        Ok(self.endianness.u16_from(b))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, MalformedError> {
        let b = self.array::<4>()?;
        Ok(self.endianness.u32_from(b))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, MalformedError> {
        Ok(self.u32()? as i32)
    }
}

/// Writes into a caller's buffer, refusing (never panicking) when it is full.
#[derive(Debug)]
pub(crate) struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
    endianness: Endianness,
    /// Set when the sample bytes are left out (to be spliced in by the sender): where they
    /// go, once [`Writer::put_payload`] was called.
    splice: Option<Option<usize>>,
    /// Bytes left out so far (they still count for alignment).
    skipped: usize,
}

impl<'b> Writer<'b> {
    pub(crate) fn new(buf: &'b mut [u8], endianness: Endianness) -> Self {
        Writer {
            buf,
            pos: 0,
            endianness,
            splice: None,
            skipped: 0,
        }
    }

    /// A writer that leaves the serialized payload out of `buf` (see
    /// [`Writer::put_payload`]).
    pub(crate) fn splicing(buf: &'b mut [u8], endianness: Endianness) -> Self {
        Writer {
            splice: Some(None),
            ..Writer::new(buf, endianness)
        }
    }

    /// Where the payload left out goes in what was written, if one was.
    pub(crate) fn spliced_at(&self) -> Option<usize> {
        self.splice.flatten()
    }

    /// Writes a DATA or DATA_FRAG's serialized payload; a splicing writer only notes where
    /// it goes (the message is sent in parts, the payload from where it already lies).
    pub(crate) fn put_payload(&mut self, bytes: &[u8]) -> Result<(), EmitError> {
        match &mut self.splice {
            Some(at) if at.is_none() => {
                *at = Some(self.pos);
                self.skipped += bytes.len();
                Ok(())
            }
            _ => self.put(bytes),
        }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn endianness(&self) -> Endianness {
        self.endianness
    }

    pub(crate) fn set_endianness(&mut self, endianness: Endianness) {
        self.endianness = endianness;
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), EmitError> {
        let available = self.buf.len();
        let end = self
            .pos
            .checked_add(bytes.len())
            .ok_or(EmitError::BufferTooSmall {
                needed: usize::MAX,
                available,
            })?;
        let dst = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(EmitError::BufferTooSmall {
                needed: end,
                available,
            })?;
        // Same length by construction of the range.
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    pub(crate) fn put_u8(&mut self, v: u8) -> Result<(), EmitError> {
        self.put(&[v])
    }

    pub(crate) fn put_u16(&mut self, v: u16) -> Result<(), EmitError> {
        self.put(&self.endianness.u16_to(v))
    }

    pub(crate) fn put_u32(&mut self, v: u32) -> Result<(), EmitError> {
        self.put(&self.endianness.u32_to(v))
    }

    pub(crate) fn put_i32(&mut self, v: i32) -> Result<(), EmitError> {
        self.put_u32(v as u32)
    }

    /// Writes zeros up to the next multiple of 4 from the writer's start.
    pub(crate) fn pad4(&mut self) -> Result<(), EmitError> {
        const ZEROS: [u8; 3] = [0; 3];
        let pad = (4 - (self.pos + self.skipped) % 4) % 4;
        self.put(ZEROS.get(..pad).unwrap_or(&[]))
    }
}
