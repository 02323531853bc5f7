//! The message receiver (RTPS 2.5 §8.3.4): walks a datagram's submessages and tracks the
//! state that INFO_SRC, INFO_DST and INFO_TS change for the submessages after them.

use crate::wire::submessage_id as id;
use crate::wire::{
    GuidPrefix, Header, Message, MessageError, Submessage, SubmessageHeader, SubmessageIter, Time,
    VendorId,
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

/// Whether `datagram` holds a submessage for the participant `prefix`: one that no INFO_DST
/// addresses, or that one addressing `prefix` or every participant does. What each of the
/// participants of a process sharing one way in (a socket for them all) asks before handing
/// a datagram to its protocol: a message addressed to one of them costs the others this
/// look at its submessage headers, not a turn under their locks. A datagram that is not
/// RTPS, or whose headers do not add up, is for everyone: their receivers count it.
pub fn is_for(datagram: &[u8], prefix: GuidPrefix) -> bool {
    if datagram.len() < Header::LEN || !datagram.starts_with(b"RTPS") {
        return true;
    }
    let mut destination = GuidPrefix::UNKNOWN;
    let mut at = Header::LEN;
    while at < datagram.len() {
        let Some(head) = datagram.get(at..at + SubmessageHeader::LEN) else {
            return true;
        };
        let header = SubmessageHeader::from_bytes([head[0], head[1], head[2], head[3]]);
        let body = at + SubmessageHeader::LEN;
        let to_end =
            header.octets_to_next_header == 0 && header.id != id::PAD && header.id != id::INFO_TS;
        let end = if to_end {
            datagram.len()
        } else {
            body + usize::from(header.octets_to_next_header)
        };
        let Some(bytes) = datagram.get(body..end) else {
            return true;
        };
        match header.id {
            id::INFO_DST => match bytes.get(..12).and_then(|b| <[u8; 12]>::try_from(b).ok()) {
                Some(p) => destination = GuidPrefix(p),
                None => return true,
            },
            id::INFO_SRC => destination = GuidPrefix::UNKNOWN,
            id::INFO_TS | id::INFO_REPLY | id::INFO_REPLY_IP4 | id::PAD => {}
            _ if destination == GuidPrefix::UNKNOWN || destination == prefix => return true,
            _ => {}
        }
        if to_end {
            break;
        }
        at = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(parts: &[&[u8]]) -> Vec<u8> {
        let mut m = b"RTPS\x02\x05\x01\x0f".to_vec();
        m.extend_from_slice(&[9; 12]);
        for p in parts {
            m.extend_from_slice(p);
        }
        m
    }

    fn info_dst(p: u8) -> Vec<u8> {
        let mut s = vec![id::INFO_DST, 0x01, 12, 0];
        s.extend_from_slice(&[p; 12]);
        s
    }

    const HEARTBEAT: &[u8] = &[id::HEARTBEAT, 0x01, 4, 0, 0, 0, 0, 0];
    const INFO_TS: &[u8] = &[id::INFO_TS, 0x01, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8];

    #[test]
    fn a_datagram_is_for_the_participants_its_submessages_address() {
        let me = GuidPrefix([1; 12]);
        // Addressed to no one in particular.
        assert!(is_for(&message(&[INFO_TS, HEARTBEAT]), me));
        // To me, to another, to every participant.
        assert!(is_for(&message(&[&info_dst(1), HEARTBEAT]), me));
        assert!(!is_for(&message(&[&info_dst(2), INFO_TS, HEARTBEAT]), me));
        assert!(is_for(&message(&[&info_dst(0), HEARTBEAT]), me));
        // To another, then to me; to another, then INFO_SRC resets the destination.
        assert!(is_for(
            &message(&[&info_dst(2), HEARTBEAT, &info_dst(1), HEARTBEAT]),
            me
        ));
        let info_src = [&[id::INFO_SRC, 0x01, 20, 0][..], &[0; 20]].concat();
        assert!(is_for(
            &message(&[&info_dst(2), HEARTBEAT, &info_src, HEARTBEAT]),
            me
        ));
        // Big-endian lengths; a last submessage whose length 0 means "to the end".
        let big = [id::INFO_DST, 0x00, 0, 12];
        assert!(!is_for(&message(&[&big, &[2; 12], HEARTBEAT]), me));
        assert!(!is_for(
            &message(&[&info_dst(2), &[id::DATA, 0x01, 0, 0, 1, 2]]),
            me
        ));
        // Only INFO submessages: nothing for anyone.
        assert!(!is_for(&message(&[INFO_TS]), me));
    }

    #[test]
    fn what_does_not_add_up_is_for_everyone() {
        let me = GuidPrefix([1; 12]);
        assert!(is_for(b"not rtps at all, but long enough", me));
        assert!(is_for(b"RTPS", me));
        // A length past the end; an INFO_DST too short for a prefix.
        assert!(is_for(
            &message(&[&info_dst(2), &[id::DATA, 0x01, 64, 0]]),
            me
        ));
        assert!(is_for(
            &message(&[&[id::INFO_DST, 0x01, 4, 0, 2, 2, 2, 2]]),
            me
        ));
        // A submessage header cut short.
        assert!(is_for(&message(&[&info_dst(2), &[id::DATA, 0x01, 0]]), me));
    }
}
