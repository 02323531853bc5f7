//! CDR inside one parameter value: a bounds-checked reader and a small writer.
//!
//! A parameter value starts 4-aligned in the payload and none of the discovery types
//! holds anything wider than 4 bytes, so alignment is counted from the start of the value
//! (as CDR would count it from the start of the payload).

use super::ValueError;
use crate::qos::Duration;
use crate::wire::{Endianness, EntityId, Guid, Parameter};

/// Reads the CDR fields of one parameter value, in the list's byte order.
#[derive(Debug, Clone)]
pub(crate) struct ValueReader<'a> {
    value: &'a [u8],
    pos: usize,
    endianness: Endianness,
}

impl<'a> ValueReader<'a> {
    pub(crate) fn new(p: &Parameter<'a>) -> Self {
        ValueReader {
            value: p.value,
            pos: 0,
            endianness: p.endianness,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.value.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes, or `Truncated` if fewer remain.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ValueError> {
        let truncated = ValueError::Truncated {
            needed: self.pos.saturating_add(n),
            length: self.value.len(),
        };
        let end = self.pos.checked_add(n).ok_or(truncated)?;
        let bytes = self.value.get(self.pos..end).ok_or(truncated)?;
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ValueError> {
        let b = self.take(N)?;
        // `take` returned exactly N bytes.
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// Skips to the next multiple of `n` from the start of the value (at most to its end;
    /// a following read then reports the truncation).
    pub(crate) fn align(&mut self, n: usize) {
        let misalignment = self.pos % n;
        if misalignment != 0 {
            let aligned = self.pos.saturating_add(n - misalignment);
            self.pos = aligned.min(self.value.len());
        }
    }

    pub(crate) fn u8(&mut self) -> Result<u8, ValueError> {
        let [b] = self.array::<1>()?;
        Ok(b)
    }

    /// A CDR boolean: one octet, 0 or 1.
    pub(crate) fn bool(&mut self) -> Result<bool, ValueError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(ValueError::InvalidBoolean { value }),
        }
    }

    pub(crate) fn u16(&mut self) -> Result<u16, ValueError> {
        self.align(2);
        Ok(self.endianness.u16_from(self.array()?))
    }

    pub(crate) fn i16(&mut self) -> Result<i16, ValueError> {
        Ok(self.u16()? as i16)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, ValueError> {
        self.align(4);
        Ok(self.endianness.u32_from(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, ValueError> {
        Ok(self.u32()? as i32)
    }

    /// A `Duration_t`: i32 seconds (not negative), u32 fraction.
    pub(crate) fn duration(&mut self) -> Result<Duration, ValueError> {
        let seconds = self.i32()?;
        let fraction = self.u32()?;
        Duration::new(seconds, fraction).ok_or(ValueError::NegativeDuration { seconds })
    }

    /// A GUID: 16 octets, never byte-swapped.
    pub(crate) fn guid(&mut self) -> Result<Guid, ValueError> {
        Ok(Guid::from_bytes(self.array()?))
    }

    /// An entity id: 4 octets, never byte-swapped.
    pub(crate) fn entity_id(&mut self) -> Result<EntityId, ValueError> {
        Ok(EntityId(self.array()?))
    }

    /// A CDR string: u32 length counting the NUL, the bytes, the NUL. A length of 0 is
    /// read as the empty string (some implementations send it for ""). The string must
    /// be UTF-8 without interior NULs. Nothing is allocated before the length is checked
    /// against the value.
    pub(crate) fn string(&mut self) -> Result<String, ValueError> {
        let len = self.u32()?;
        if len == 0 {
            return Ok(String::new());
        }
        let len = usize::try_from(len).map_err(|_| ValueError::Truncated {
            needed: usize::MAX,
            length: self.value.len(),
        })?;
        let bytes = self.take(len)?;
        let Some((&0, text)) = bytes.split_last() else {
            return Err(ValueError::StringNotTerminated);
        };
        if text.contains(&0) {
            return Err(ValueError::StringInteriorNul);
        }
        let text = core::str::from_utf8(text).map_err(|_| ValueError::StringNotUtf8)?;
        Ok(text.to_owned())
    }

    /// A `sequence<octet>`: u32 count, then the bytes.
    pub(crate) fn octets(&mut self) -> Result<Vec<u8>, ValueError> {
        let count = self.u32()?;
        let available = self.remaining();
        let n = usize::try_from(count)
            .ok()
            .filter(|&n| n <= available)
            .ok_or(ValueError::CountTooLarge { count, available })?;
        Ok(self.take(n)?.to_vec())
    }

    /// A sequence count, checked against the remaining bytes given the smallest size of
    /// one element, so that a caller may loop `count` times without a hostile count
    /// making it spin.
    pub(crate) fn count(&mut self, min_element_size: usize) -> Result<u32, ValueError> {
        let count = self.u32()?;
        let available = self.remaining();
        let fits = usize::try_from(count)
            .ok()
            .and_then(|n| n.checked_mul(min_element_size))
            .is_some_and(|bytes| bytes <= available);
        if fits {
            Ok(count)
        } else {
            Err(ValueError::CountTooLarge { count, available })
        }
    }
}

/// Builds one parameter value in CDR, aligned from its start.
#[derive(Debug)]
pub(crate) struct ValueWriter {
    out: Vec<u8>,
    endianness: Endianness,
}

impl ValueWriter {
    pub(crate) fn new(endianness: Endianness) -> Self {
        ValueWriter {
            out: Vec::new(),
            endianness,
        }
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.out
    }

    fn align(&mut self, n: usize) {
        while !self.out.len().is_multiple_of(n) {
            self.out.push(0);
        }
    }

    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.out.push(v);
        self
    }

    pub(crate) fn bool(&mut self, v: bool) -> &mut Self {
        self.u8(u8::from(v))
    }

    pub(crate) fn u16(&mut self, v: u16) -> &mut Self {
        self.align(2);
        self.out.extend_from_slice(&self.endianness.u16_to(v));
        self
    }

    pub(crate) fn i16(&mut self, v: i16) -> &mut Self {
        self.u16(v as u16)
    }

    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.align(4);
        self.out.extend_from_slice(&self.endianness.u32_to(v));
        self
    }

    pub(crate) fn i32(&mut self, v: i32) -> &mut Self {
        self.u32(v as u32)
    }

    pub(crate) fn duration(&mut self, d: Duration) -> &mut Self {
        self.i32(d.seconds()).u32(d.fraction())
    }

    /// A CDR string. Strings longer than a u32 can count cannot occur in a parameter (the
    /// builder refuses values above 65532 bytes), so the length saturates harmlessly.
    pub(crate) fn string(&mut self, s: &str) -> &mut Self {
        let len = u32::try_from(s.len().saturating_add(1)).unwrap_or(u32::MAX);
        self.u32(len);
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(0);
        self
    }

    /// A `sequence<octet>`.
    pub(crate) fn octets(&mut self, v: &[u8]) -> &mut Self {
        let len = u32::try_from(v.len()).unwrap_or(u32::MAX);
        self.u32(len);
        self.out.extend_from_slice(v);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(value: &[u8], endianness: Endianness) -> Parameter<'_> {
        Parameter {
            id: 0x0005,
            value,
            endianness,
        }
    }

    #[test]
    fn reads_both_byte_orders() {
        let le = [1, 0, 0xaa, 0xaa, 2, 0, 0, 0];
        let be = [0, 1, 0xaa, 0xaa, 0, 0, 0, 2];
        for (bytes, e) in [(le, Endianness::Little), (be, Endianness::Big)] {
            let p = param(&bytes, e);
            let mut r = ValueReader::new(&p);
            assert_eq!(r.u16(), Ok(1));
            assert_eq!(r.u32(), Ok(2)); // aligned past the two 0xaa
            assert_eq!(
                r.u8(),
                Err(ValueError::Truncated {
                    needed: 9,
                    length: 8
                })
            );
        }
    }

    #[test]
    fn strings() {
        let read = |bytes: &[u8]| {
            let p = param(bytes, Endianness::Little);
            ValueReader::new(&p).string()
        };
        assert_eq!(read(&[3, 0, 0, 0, b'a', b'b', 0]), Ok("ab".to_owned()));
        assert_eq!(read(&[0, 0, 0, 0]), Ok(String::new()));
        assert_eq!(read(&[1, 0, 0, 0, 0]), Ok(String::new()));
        assert_eq!(
            read(&[3, 0, 0, 0, b'a', b'b', b'c']),
            Err(ValueError::StringNotTerminated)
        );
        assert_eq!(
            read(&[3, 0, 0, 0, b'a', 0, 0]),
            Err(ValueError::StringInteriorNul)
        );
        assert_eq!(read(&[2, 0, 0, 0, 0xff, 0]), Err(ValueError::StringNotUtf8));
        assert_eq!(
            read(&[0xff, 0xff, 0xff, 0xff, b'a', 0]),
            Err(ValueError::Truncated {
                needed: 4 + 0xffff_ffff,
                length: 6
            })
        );
    }

    #[test]
    fn sequences_check_counts_first() {
        let p = param(&[0xff, 0xff, 0xff, 0x7f, 1, 2], Endianness::Little);
        assert_eq!(
            ValueReader::new(&p).octets(),
            Err(ValueError::CountTooLarge {
                count: 0x7fff_ffff,
                available: 2
            })
        );
        assert_eq!(
            ValueReader::new(&p).count(1),
            Err(ValueError::CountTooLarge {
                count: 0x7fff_ffff,
                available: 2
            })
        );
        let p = param(&[2, 0, 0, 0, 1, 2], Endianness::Little);
        assert_eq!(ValueReader::new(&p).octets(), Ok(vec![1, 2]));
        assert_eq!(ValueReader::new(&p).count(1), Ok(2));
        assert!(ValueReader::new(&p).count(2).is_err());
    }

    #[test]
    fn writer_aligns_from_value_start() {
        let mut w = ValueWriter::new(Endianness::Big);
        w.u8(1).u32(2).i16(-1).string("x").bool(true);
        assert_eq!(
            w.into_bytes(),
            [1, 0, 0, 0, 0, 0, 0, 2, 0xff, 0xff, 0, 0, 0, 0, 0, 2, b'x', 0, 1]
        );
    }
}
