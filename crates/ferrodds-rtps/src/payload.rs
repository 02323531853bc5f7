//! Where a serialized sample's bytes live: in the process's memory, or in a buffer the
//! core did not make and only reads (a chunk of a writer's sample channel in shared
//! memory, which FerroDDS readers of the host read where it lies).
//!
//! The core never needs more of a payload than its bytes, so both histories hold a type
//! that dereferences to them: [`Payload`] in a writer's history (shared with the datagrams
//! that splice it), [`ReceivedPayload`] in a reader's (owned, and given back to the
//! reader's pool once taken, when it is the reader's own).

use std::ops::Deref;
use std::sync::Arc;

use bytes::Bytes;

use crate::wire::parameter_list::PID_VENDOR_SPECIFIC_FLAG;
use crate::wire::Guid;

/// The vendor-specific inline QoS parameter (read only from FerroDDS) of a DATA whose
/// sample lies in the writer's sample channel instead of in the DATA: the chunk's number
/// in the channel (8 octets) and the sample's length (4 octets), little-endian.
pub const fn pid_in_channel() -> u16 {
    PID_VENDOR_SPECIFIC_FLAG | 0x0102
}

/// The vendor-specific SEDP parameter (read only from FerroDDS) of a reader that takes
/// samples from the sample channels of writers on its host: the host's address (16
/// octets, the shared-memory transport's), so that a writer on another host sends it
/// the bytes.
pub const fn pid_reads_channels() -> u16 {
    PID_VENDOR_SPECIFIC_FLAG | 0x0103
}

/// Where a DATA says its sample lies: chunk `chunk` of the writer's sample channel, `len`
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelRef {
    /// The chunk's number in the channel.
    pub chunk: u64,
    /// The sample's length.
    pub len: u32,
}

impl ChannelRef {
    /// The parameter's value.
    pub fn to_bytes(self) -> [u8; 12] {
        let mut b = [0u8; 12];
        b[..8].copy_from_slice(&self.chunk.to_le_bytes());
        b[8..].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Reads the parameter's value; `None` when it is not 12 octets.
    pub fn from_bytes(value: &[u8]) -> Option<ChannelRef> {
        let b: &[u8; 12] = value.try_into().ok()?;
        let (chunk, len) = b.split_at(8);
        Some(ChannelRef {
            chunk: u64::from_le_bytes(chunk.try_into().ok()?),
            len: u32::from_le_bytes(len.try_into().ok()?),
        })
    }
}

/// Opens writers' sample channels for a reader (the driver's, over shared memory).
pub trait ChannelOpener: Send + Sync + std::fmt::Debug {
    /// A subscription to the channel of writer `writer`; `None` when it has none here.
    fn open(&self, writer: Guid) -> Option<Box<dyn ChunkSource>>;
}

/// A reader's subscription to one writer's sample channel.
pub trait ChunkSource: Send + std::fmt::Debug {
    /// The chunk numbered `chunk`, if it came (earlier ones are let go on the way):
    /// [`ReceivedPayload::Shared`] where it lies, or a copy when the reader holds too many.
    fn take(&mut self, chunk: u64) -> Option<ReceivedPayload>;
}

/// A change's serialized sample (encapsulation header included) in a writer's history.
#[derive(Debug, Clone)]
pub enum Payload {
    /// Serialized into the process's memory: the `Vec` it was written into, recycled for
    /// the writer's next samples once the history and the datagrams let go of it.
    Heap(Arc<Vec<u8>>),
    /// A chunk of the writer's sample channel (the application filled it in place).
    /// Readers that take from the channel are sent a reference to it ([`pid_in_channel`])
    /// instead of the bytes; everyone else gets the bytes. Boxed: a history entry is moved
    /// in and out whole, and this keeps `Payload` two words.
    Shared(Box<Chunk>),
}

/// A chunk of a writer's sample channel, as its history holds it.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// The chunk's bytes, held for as long as the history holds the change.
    pub bytes: Bytes,
    /// Its number in the channel.
    pub number: u64,
}

impl Payload {
    /// Where it lies in the writer's sample channel, if it does.
    pub fn channel_ref(&self) -> Option<ChannelRef> {
        match self {
            Payload::Heap(_) => None,
            Payload::Shared(c) => Some(ChannelRef {
                chunk: c.number,
                len: u32::try_from(c.bytes.len()).ok()?,
            }),
        }
    }
}

/// Equal when the bytes are.
impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Payload {}

impl Default for Payload {
    fn default() -> Self {
        Payload::Heap(Arc::default())
    }
}

impl Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Payload::Heap(v) => v,
            Payload::Shared(c) => &c.bytes,
        }
    }
}

impl From<Arc<Vec<u8>>> for Payload {
    fn from(v: Arc<Vec<u8>>) -> Self {
        Payload::Heap(v)
    }
}

impl From<Vec<u8>> for Payload {
    fn from(v: Vec<u8>) -> Self {
        Payload::Heap(Arc::new(v))
    }
}

/// A received change's serialized sample (encapsulation header included) in a reader's
/// cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceivedPayload {
    /// Copied out of the datagrams into the reader's own buffer (from its pool, and back
    /// to it once the application is done with it).
    Owned(Vec<u8>),
    /// Where the writer put it: a chunk of its sample channel, held (and so kept from
    /// being reused) as long as this lives.
    Shared(Bytes),
}

impl ReceivedPayload {
    /// The bytes as a `Vec` of the reader's own: the buffer itself when owned, else a
    /// copy.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            ReceivedPayload::Owned(v) => v,
            ReceivedPayload::Shared(b) => b.to_vec(),
        }
    }

    /// Whether it lies in a writer's sample channel.
    pub fn is_shared(&self) -> bool {
        matches!(self, ReceivedPayload::Shared(_))
    }

    /// A copy that holds no chunk of a sample channel (what a cache keeps for longer than
    /// the sample: an instance's first key).
    pub fn to_owned_copy(&self) -> ReceivedPayload {
        ReceivedPayload::Owned(self.to_vec())
    }
}

impl Default for ReceivedPayload {
    fn default() -> Self {
        ReceivedPayload::Owned(Vec::new())
    }
}

impl Deref for ReceivedPayload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ReceivedPayload::Owned(v) => v,
            ReceivedPayload::Shared(b) => b,
        }
    }
}

impl From<Vec<u8>> for ReceivedPayload {
    fn from(v: Vec<u8>) -> Self {
        ReceivedPayload::Owned(v)
    }
}

impl PartialEq<[u8]> for ReceivedPayload {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<Vec<u8>> for ReceivedPayload {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_entry_stays_small() {
        // Moved into the history at each write and out at each acknowledgment: 144 bytes
        // cost 8 % of a 64-byte publisher (session 33).
        assert_eq!(std::mem::size_of::<Payload>(), 16);
        assert!(
            std::mem::size_of::<crate::writer::Change>() <= 72,
            "{}",
            std::mem::size_of::<crate::writer::Change>()
        );
    }
}
