//! The RTPS wire representation (DDSI-RTPS 2.5, clause 9.4): the message header, every
//! submessage, parameter lists and the basic types they are built from.
//!
//! # The contract
//!
//! Stated once here, and held by every type in this module:
//!
//! - **Parsing never panics and never over-reads.** Every length read from the wire is
//!   checked against the bytes that remain before anything is read or allocated; all
//!   arithmetic on lengths, sequence numbers and fragment numbers is checked. Nothing in
//!   this module allocates (parsed values borrow from the datagram), so hostile input can
//!   never make it reserve memory.
//! - **After `parse` succeeds, no accessor panics.** A parsed value (a [`Submessage`], a
//!   [`ParameterList`], a [`SequenceNumberSet`], a [`LocatorList`]) has been validated as a
//!   whole; iterating over it afterwards cannot fail.
//! - **`emit` never panics.** Each emittable value has a `buffer_len()`; `emit` into a
//!   buffer of at least that many bytes succeeds (unless the value itself cannot be
//!   represented, e.g. a parameter longer than 65535 bytes, which `emit` reports as an
//!   [`EmitError`]); into a shorter buffer it returns [`EmitError::BufferTooSmall`].
//!
//! # Three outcomes per submessage
//!
//! As in Cyclone DDS's receive path and DDSI-RTPS 2.5 §8.3.4.1, each submessage is one of:
//!
//! - **accepted**: [`SubmessageIter`] yields `Ok(Submessage)`;
//! - **not understood** (an unknown id, including the vendor-specific range 0x80–0xff):
//!   skipped by the iterator and counted ([`SubmessageIter::not_understood`]); the rest of
//!   the message is still processed;
//! - **malformed** (a known id whose content is invalid, or a length that runs past the
//!   end): the iterator yields `Err(MalformedError)` once and then ends — the rest of the
//!   message is dropped, as the spec requires.
//!
//! # Byte order
//!
//! Parsing honours the E flag of each submessage (and the encapsulation of a parameter
//! list). Emitting takes an [`Endianness`]; the crate's own traffic uses little endian,
//! big endian exists so that tests can produce both.
//!
//! # Shape
//!
//! smoltcp separates a zero-copy `Packet` view from a `Repr`. RTPS submessages are small
//! and their fixed fields cheap to decode, so here the two are one: each submessage type
//! is a small `Copy` repr whose variable parts (payloads, inline QoS, locator lists)
//! borrow the received bytes. Decoding therefore costs no allocation and no copy of the
//! payload.

mod acknack;
mod codec;
mod data;
mod error;
mod gap;
mod header;
mod heartbeat;
mod info;
mod message;
pub mod parameter_list;
mod submessage;
mod types;

pub use acknack::{AckNack, NackFrag};
pub use data::{Data, DataFrag, DataPayload};
pub use error::{EmitError, MalformedError, MessageError, ParameterListError};
pub use gap::Gap;
pub use header::Header;
pub use heartbeat::{Heartbeat, HeartbeatFrag};
pub use info::{
    InfoDestination, InfoReply, InfoReplyIp4, InfoSource, InfoTimestamp, LocatorList, LocatorUdpV4,
    Pad,
};
pub use message::{message_into, message_to_vec, Message, MessageBuilder, SubmessageIter};
pub use parameter_list::{Parameter, ParameterList, ParameterListBuilder};
pub use submessage::{submessage_id, Submessage, SubmessageHeader};
pub use types::{
    EntityId, FragmentNumberSet, Guid, GuidPrefix, Locator, ProtocolVersion, SequenceNumber,
    SequenceNumberSet, Time, VendorId, MAX_SET_BITS,
};

/// Byte order of a submessage (its E flag) or of an encapsulated parameter list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endianness {
    /// Most significant byte first (E flag clear; `PL_CDR_BE`).
    Big,
    /// Least significant byte first (E flag set; `PL_CDR_LE`).
    Little,
}

impl Endianness {
    /// The byte order selected by the E flag (bit 0) of a submessage's flags
    /// (DDSI-RTPS 2.5 §9.4.5.1.2).
    pub const fn from_flags(flags: u8) -> Self {
        if flags & submessage::FLAG_ENDIANNESS != 0 {
            Endianness::Little
        } else {
            Endianness::Big
        }
    }

    /// The E flag bit for this byte order.
    pub const fn flag(self) -> u8 {
        match self {
            Endianness::Big => 0,
            Endianness::Little => submessage::FLAG_ENDIANNESS,
        }
    }

    pub(crate) fn u16_from(self, b: [u8; 2]) -> u16 {
        match self {
            Endianness::Big => u16::from_be_bytes(b),
            Endianness::Little => u16::from_le_bytes(b),
        }
    }

    pub(crate) fn u32_from(self, b: [u8; 4]) -> u32 {
        match self {
            Endianness::Big => u32::from_be_bytes(b),
            Endianness::Little => u32::from_le_bytes(b),
        }
    }

    pub(crate) fn u16_to(self, v: u16) -> [u8; 2] {
        match self {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }

    pub(crate) fn u32_to(self, v: u32) -> [u8; 4] {
        match self {
            Endianness::Big => v.to_be_bytes(),
            Endianness::Little => v.to_le_bytes(),
        }
    }
}

/// Rounds `len` up to the next multiple of 4, or `None` on overflow.
pub(crate) const fn align4(len: usize) -> Option<usize> {
    match len.checked_add(3) {
        Some(v) => Some(v & !3),
        None => None,
    }
}
