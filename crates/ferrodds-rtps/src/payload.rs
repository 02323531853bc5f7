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

/// A change's serialized sample (encapsulation header included) in a writer's history.
#[derive(Debug, Clone)]
pub enum Payload {
    /// Serialized into the process's memory: the `Vec` it was written into, recycled for
    /// the writer's next samples once the history and the datagrams let go of it.
    Heap(Arc<Vec<u8>>),
    /// Lent by someone else: a chunk of the writer's sample channel (the application
    /// filled it in place). Readers that can reach the channel are sent a reference to it
    /// instead of the bytes (`Data::channel`); everyone else gets the bytes.
    Shared(Bytes),
}

impl Payload {
    /// Whether it lies in a buffer the core did not make (a sample channel's chunk).
    pub fn is_shared(&self) -> bool {
        matches!(self, Payload::Shared(_))
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
            Payload::Shared(b) => b,
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
