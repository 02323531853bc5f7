//! The message receiver (RTPS 2.5 §8.3.4): walks a datagram's submessages and tracks the
//! state that INFO_SRC, INFO_DST and INFO_TS change for the submessages after them.

use crate::wire::{
    GuidPrefix, Header, Message, MessageError, Submessage, SubmessageIter, Time, VendorId,
};

/// The receiver state in force for one submessage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// The participant that sent the submessage.
    pub source: GuidPrefix,
    /// The participant it is for; `GuidPrefix::UNKNOWN` means every participant.
    pub destination: GuidPrefix,
    /// The source timestamp (INFO_TS), if any.
    pub timestamp: Option<Time>,
    /// The source's vendor (what vendor-specific parameters mean).
    pub vendor: VendorId,
}

/// How the walk of a datagram ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Walk {
    /// Submessages handed on.
    pub accepted: usize,
    /// Submessages skipped as not understood.
    pub not_understood: usize,
    /// True when a malformed submessage ended the walk (the rest was dropped).
    pub malformed: bool,
}

/// Walks `datagram`, calling `each` with the context and every accepted submessage other
/// than the INFO_* ones, which update the context. Fails when the header is unusable.
pub fn walk<'a>(
    datagram: &'a [u8],
    mut each: impl FnMut(&Context, Submessage<'a>),
) -> Result<(Header, Walk), MessageError> {
    let (header, iter): (Header, SubmessageIter<'a>) = Message::parse(datagram)?;
    let mut context = Context {
        source: header.guid_prefix,
        destination: GuidPrefix::UNKNOWN,
        timestamp: None,
        vendor: header.vendor_id,
    };
    let mut walk = Walk::default();
    let mut iter = iter;
    for item in iter.by_ref() {
        let Ok(submessage) = item else {
            walk.malformed = true;
            break;
        };
        walk.accepted += 1;
        match submessage {
            Submessage::InfoSource(s) => {
                context.source = s.guid_prefix;
                context.vendor = s.vendor_id;
                context.destination = GuidPrefix::UNKNOWN;
                context.timestamp = None;
            }
            Submessage::InfoDestination(d) => context.destination = d.guid_prefix,
            Submessage::InfoTimestamp(t) => context.timestamp = t.timestamp,
            Submessage::InfoReply(_) | Submessage::InfoReplyIp4(_) | Submessage::Pad(_) => {}
            other => each(&context, other),
        }
    }
    walk.not_understood = iter.not_understood();
    Ok((header, walk))
}
