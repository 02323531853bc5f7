//! Loans: sample buffers a writer lends to be filled in place, and received samples a
//! reader hands out as they lie, without a copy or a decode.
//!
//! A [`SampleLoan`] is the buffer a serialized sample lives in: its encapsulation header is
//! written by the writer, the application fills the rest, and
//! [`crate::DynamicWriter::write_loan`] moves the buffer into the writer's history, from
//! which it is sent (over UDP by a vectored send, into a peer's shared-memory inbox by its
//! one copy) and repaired. Nothing of the sample is copied on the way in.
//!
//! A *plain* type is one whose bytes in memory are its CDR encoding: a `#[repr(C)]` final
//! struct of numbers and arrays of numbers (`bytemuck::Pod`), aligned to at most 4 bytes,
//! so that neither XCDR1 nor XCDR2 pads it differently from the compiler. For such a type,
//! [`crate::DataWriter::loan`] gives a `&mut T` into the buffer (nothing is serialized:
//! the application's stores are the encoding) and [`crate::DataReader::take_loaned`] a
//! `&T` into the received sample (nothing is decoded). Whether a type is plain is checked
//! once per writer or reader, by encoding a value whose every byte differs and comparing
//! the encoding with the value's bytes.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use ferrodds_cdr::{serialize, Cdr, Endianness, Extensibility, XcdrVersion};
use ferrodds_cdr::{EncapsulationHeader, RepresentationId};

use crate::error::{Error, Result};
use ferrodds_rtps::payload::ReceivedPayload;
use ferrodds_transport::ChunkLoan;

/// A buffer for one serialized sample, lent by a writer ([`crate::DynamicWriter::loan`]):
/// the encapsulation header and `len` bytes of body to fill in place, then handed back
/// with [`crate::DynamicWriter::write_loan`]. Where shared memory is on, the buffer is a
/// chunk of the writer's sample channel, which FerroDDS readers of the host read where it
/// lies: its body holds whatever the chunk held before (an earlier sample of the writer)
/// and is to be written whole. Otherwise it is process memory, zeroed.
#[derive(Debug)]
pub struct SampleLoan {
    buffer: LoanBuffer,
    /// The body's length.
    len: usize,
}

#[derive(Debug)]
enum LoanBuffer {
    Heap(Vec<u8>),
    /// Header, body and padding to a multiple of 4, in the channel's chunk.
    Chunk(ChunkLoan),
}

/// A filled loan, as the writer hands it to its history.
#[derive(Debug)]
pub(crate) enum LoanPayload {
    Heap(Vec<u8>),
    Chunk(ChunkLoan),
}

impl LoanPayload {
    /// The serialized sample, encapsulation header included.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            LoanPayload::Heap(v) => v,
            LoanPayload::Chunk(c) => c,
        }
    }
}

fn header(version: XcdrVersion, extensibility: Extensibility, pad: usize) -> [u8; 4] {
    let id = RepresentationId::for_type(version, extensibility, Endianness::NATIVE);
    let mut h = EncapsulationHeader { id, options: 0 }.to_bytes();
    // The options count the padding (XTypes 7.6.3.1.2).
    h[3] = pad as u8;
    h
}

impl SampleLoan {
    /// A buffer with the header for `version`, `extensibility` and the native byte order,
    /// and `len` zero bytes of body.
    pub(crate) fn new(version: XcdrVersion, extensibility: Extensibility, len: usize) -> Self {
        let mut buffer = Vec::with_capacity(EncapsulationHeader::LEN + len + 3);
        buffer.extend_from_slice(&header(version, extensibility, 0));
        buffer.resize(EncapsulationHeader::LEN + len, 0);
        SampleLoan {
            buffer: LoanBuffer::Heap(buffer),
            len,
        }
    }

    /// The buffer in `chunk`, a chunk of the writer's sample channel of exactly
    /// [`SampleLoan::chunk_len`] bytes: the header and padding are written, the body is
    /// left as it is.
    pub(crate) fn in_chunk(
        mut chunk: ChunkLoan,
        version: XcdrVersion,
        extensibility: Extensibility,
        len: usize,
    ) -> Self {
        let pad = Self::chunk_len(len) - EncapsulationHeader::LEN - len;
        chunk[..EncapsulationHeader::LEN].copy_from_slice(&header(version, extensibility, pad));
        let end = chunk.len();
        chunk[end - pad..].fill(0);
        SampleLoan {
            buffer: LoanBuffer::Chunk(chunk),
            len,
        }
    }

    /// How long a chunk holding a body of `len` bytes is: header, body, padding to 4.
    pub(crate) fn chunk_len(len: usize) -> usize {
        (EncapsulationHeader::LEN + len).next_multiple_of(4)
    }

    /// The body's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the buffer lies in shared memory (the writer's sample channel), where
    /// FerroDDS readers of the host read it without a copy.
    pub fn is_shared(&self) -> bool {
        matches!(self.buffer, LoanBuffer::Chunk(_))
    }

    /// The byte order the body is to be written in (the machine's).
    pub fn endianness(&self) -> Endianness {
        Endianness::NATIVE
    }

    /// The finished payload: padded to a multiple of 4, as the header's options say.
    pub(crate) fn into_payload(self) -> LoanPayload {
        match self.buffer {
            LoanBuffer::Heap(mut buffer) => {
                let pad = buffer.len().wrapping_neg() & 3;
                buffer.resize(buffer.len() + pad, 0);
                buffer[3] = pad as u8;
                LoanPayload::Heap(buffer)
            }
            LoanBuffer::Chunk(chunk) => LoanPayload::Chunk(chunk),
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.buffer {
            LoanBuffer::Heap(v) => v,
            LoanBuffer::Chunk(c) => c,
        }
    }
}

impl Deref for SampleLoan {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes()[EncapsulationHeader::LEN..][..self.len]
    }
}

impl DerefMut for SampleLoan {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        let bytes: &mut [u8] = match &mut self.buffer {
            LoanBuffer::Heap(v) => v,
            LoanBuffer::Chunk(c) => c,
        };
        &mut bytes[EncapsulationHeader::LEN..][..len]
    }
}

/// A sample of a plain type `T` lent by a [`crate::DataWriter`]: a `T` in the buffer that
/// will be sent, written in place through `DerefMut`, then handed back with
/// [`crate::DataWriter::write_loan`]. Its bytes are those of [`SampleLoan`]: an earlier
/// sample's where shared memory is on (write the whole `T`), zeros otherwise.
#[derive(Debug)]
pub struct Loan<T> {
    pub(crate) sample: SampleLoan,
    _type: PhantomData<T>,
}

impl<T: Plain> Loan<T> {
    /// Whether the buffer lies in shared memory (the writer's sample channel), where
    /// FerroDDS readers of the host read it without a copy.
    pub fn in_shared_memory(&self) -> bool {
        self.sample.is_shared()
    }

    pub(crate) fn new(sample: SampleLoan) -> Result<Self> {
        // Checked here so that the views below cannot fail: the body starts 4 bytes into a
        // heap buffer, aligned for any type of alignment 4 or less.
        bytemuck::try_from_bytes::<T>(&sample[..std::mem::size_of::<T>()])
            .map_err(|_| not_plain::<T>("its buffer is not aligned for it"))?;
        Ok(Loan {
            sample,
            _type: PhantomData,
        })
    }
}

impl<T: Plain> Deref for Loan<T> {
    type Target = T;
    fn deref(&self) -> &T {
        bytemuck::from_bytes(&self.sample[..std::mem::size_of::<T>()])
    }
}

impl<T: Plain> DerefMut for Loan<T> {
    fn deref_mut(&mut self) -> &mut T {
        bytemuck::from_bytes_mut(&mut self.sample[..std::mem::size_of::<T>()])
    }
}

/// A received sample of a plain type, as it arrived: `Deref` gives the `T` in its buffer
/// (no copy, no decode).
#[derive(Debug, Clone)]
pub struct Loaned<T> {
    /// Where it arrived: the reader's buffer, or the writer's chunk in shared memory.
    payload: ReceivedPayload,
    _type: PhantomData<T>,
}

impl<T: Plain> Loaned<T> {
    /// The sample in `payload` (encapsulation header included), if it holds a `T` in the
    /// machine's byte order.
    pub(crate) fn new(payload: impl Into<ReceivedPayload>) -> Result<Self> {
        let payload = payload.into();
        let header = EncapsulationHeader::parse(&payload)
            .map_err(|e| Error::Decode(e.in_member(T::TYPE_NAME)))?;
        let body = &payload[EncapsulationHeader::LEN..];
        if header.id.endianness() != Endianness::NATIVE {
            return Err(not_plain::<T>(
                "the writer's byte order is not this machine's",
            ));
        }
        if body.len() < std::mem::size_of::<T>() {
            return Err(not_plain::<T>("the sample is shorter than the type"));
        }
        bytemuck::try_from_bytes::<T>(&body[..std::mem::size_of::<T>()])
            .map_err(|_| not_plain::<T>("its buffer is not aligned for it"))?;
        Ok(Loaned {
            payload,
            _type: PhantomData,
        })
    }

    /// The serialized sample, encapsulation header included.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// Whether it is read where the writer wrote it: in the writer's sample channel, in
    /// shared memory (else it was copied into the reader's own buffer on the way).
    pub fn in_shared_memory(&self) -> bool {
        self.payload.is_shared()
    }
}

impl<T: Plain> Deref for Loaned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        bytemuck::from_bytes(&self.payload[EncapsulationHeader::LEN..][..std::mem::size_of::<T>()])
    }
}

/// A type whose bytes in memory are its CDR encoding (see the module's documentation):
/// implemented for every `Cdr + bytemuck::Pod` type; [`check_plain`] says whether a given
/// one is.
pub trait Plain: Cdr + bytemuck::Pod {}

impl<T: Cdr + bytemuck::Pod> Plain for T {}

fn not_plain<T: Cdr>(reason: &'static str) -> Error {
    Error::NotPlain {
        type_name: T::TYPE_NAME,
        reason,
    }
}

/// Whether `T`'s bytes are its encoding in `version`: its alignment is at most 4, and a
/// value whose bytes all differ (within 251) encodes to exactly those bytes.
pub(crate) fn check_plain<T: Plain>(version: XcdrVersion) -> Result<()> {
    if std::mem::align_of::<T>() > 4 {
        return Err(not_plain::<T>(
            "its alignment is above 4 (CDR aligns 8-byte numbers differently)",
        ));
    }
    let mut value = T::zeroed();
    for (i, b) in bytemuck::bytes_of_mut(&mut value).iter_mut().enumerate() {
        *b = (i % 251) as u8 + 1;
    }
    let encoded = serialize(&value, version, Endianness::NATIVE)?;
    let body = &encoded[EncapsulationHeader::LEN..];
    let raw = bytemuck::bytes_of(&value);
    let padding = usize::from(encoded[3] & 3);
    if body.len() != raw.len() + padding || &body[..raw.len()] != raw {
        return Err(not_plain::<T>(
            "its encoding is not its bytes in memory (padding, headers or a member that is not a number)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodds_cdr::Cdr;

    #[derive(Cdr, Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    #[cdr(final)]
    #[repr(C)]
    struct Pixel {
        x: u16,
        y: u16,
        rgba: [u8; 4],
        depth: f32,
    }

    #[derive(Cdr, Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    #[cdr(final)]
    #[repr(C)]
    struct Wide {
        a: u32,
        _pad: u32,
        b: f64,
    }

    #[derive(Cdr, Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    #[cdr(appendable)]
    #[repr(C)]
    struct Headed {
        a: u32,
    }

    #[test]
    fn plain_types_are_told_apart() {
        for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
            check_plain::<Pixel>(version).unwrap();
            check_plain::<[f32; 16]>(version).unwrap();
            let err = check_plain::<Wide>(version).unwrap_err().to_string();
            assert!(err.contains("alignment is above 4"), "{err}");
        }
        // An appendable struct has a DHEADER in XCDR2 (none in XCDR1).
        check_plain::<Headed>(XcdrVersion::Xcdr1).unwrap();
        let err = check_plain::<Headed>(XcdrVersion::Xcdr2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not its bytes in memory"), "{err}");
    }

    #[test]
    fn a_loan_filled_in_place_is_the_serialized_sample() {
        let pixel = Pixel {
            x: 3,
            y: 4,
            rgba: [1, 2, 3, 255],
            depth: 1.5,
        };
        let sample = SampleLoan::new(XcdrVersion::Xcdr2, Extensibility::Final, 12);
        let mut loan = Loan::<Pixel>::new(sample).unwrap();
        *loan = pixel;
        let LoanPayload::Heap(payload) = loan.sample.into_payload() else {
            unreachable!("a heap loan")
        };
        assert_eq!(
            payload,
            serialize(&pixel, XcdrVersion::Xcdr2, Endianness::NATIVE).unwrap()
        );
        let received = Loaned::<Pixel>::new(payload).unwrap();
        assert_eq!(*received, pixel);
        // A body that does not fit the type is refused, not read past.
        let short = SampleLoan::new(XcdrVersion::Xcdr2, Extensibility::Final, 6).into_payload();
        assert!(Loaned::<Pixel>::new(short.bytes().to_vec()).is_err());
        // Odd lengths are padded as the header says.
        let odd = SampleLoan::new(XcdrVersion::Xcdr2, Extensibility::Final, 5).into_payload();
        assert_eq!((odd.bytes().len(), odd.bytes()[3]), (12, 3));
        assert_eq!(SampleLoan::chunk_len(5), 12);
        assert_eq!(SampleLoan::chunk_len(12), 16);
    }
}
