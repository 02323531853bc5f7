//! What writers and readers share: configuration of history and reliability, the kinds of
//! change, and building the messages they send.

use crate::coherence::Coherence;
use crate::original_writer::OriginalWriterInfo;
use crate::payload::{pid_in_channel, ChannelRef};
use crate::transmit::Transmit;
use crate::wire::Endianness as WireEndianness;
use crate::wire::{
    message_into,
    parameter_list::{pid, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED},
    EntityId, GuidPrefix, Header, InfoDestination, Locator, ParameterList, ProtocolVersion,
    Submessage, VendorId,
};

/// How many samples a history keeps (DDS HISTORY QoS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// The newest `depth` samples of each instance.
    KeepLast(usize),
    /// Every sample until it is acknowledged (and, for a writer, up to its resource limit).
    KeepAll,
}

/// The kind of a change to an instance (RTPS `ChangeKind_t`, carried by PID_STATUS_INFO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// A new value.
    Alive,
    /// The instance was disposed.
    Disposed,
    /// The writer unregistered the instance.
    Unregistered,
    /// Both.
    DisposedUnregistered,
}

impl ChangeKind {
    /// The PID_STATUS_INFO flags of the kind.
    pub const fn status_info(self) -> u32 {
        match self {
            ChangeKind::Alive => 0,
            ChangeKind::Disposed => STATUS_INFO_DISPOSED,
            ChangeKind::Unregistered => STATUS_INFO_UNREGISTERED,
            ChangeKind::DisposedUnregistered => STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED,
        }
    }

    /// The kind PID_STATUS_INFO flags say.
    pub const fn from_status_info(flags: u32) -> Self {
        match (
            flags & STATUS_INFO_DISPOSED != 0,
            flags & STATUS_INFO_UNREGISTERED != 0,
        ) {
            (false, false) => ChangeKind::Alive,
            (true, false) => ChangeKind::Disposed,
            (false, true) => ChangeKind::Unregistered,
            (true, true) => ChangeKind::DisposedUnregistered,
        }
    }
}

/// The header of every message a participant sends.
pub(crate) fn header(prefix: GuidPrefix) -> Header {
    Header {
        version: ProtocolVersion::V2_5,
        vendor_id: VendorId::FERRODDS,
        guid_prefix: prefix,
    }
}

/// The inline QoS of a change, kept on the stack: it is built for every DATA sent, and
/// holds at most a key hash (20 bytes), a status info (8), a coherent set's parameters
/// (12 each, and a group set's end marker its writers), a relayed change's original writer
/// (32) and the sentinel (4).
pub(crate) struct InlineQos {
    bytes: [u8; 192],
    len: usize,
}

impl InlineQos {
    /// Appends one little-endian parameter (`value` is a multiple of 4 bytes long).
    fn put(&mut self, id: u16, value: &[u8]) {
        let end = self.len + 4 + value.len();
        if let Some(out) = self.bytes.get_mut(self.len..end) {
            out[..2].copy_from_slice(&id.to_le_bytes());
            out[2..4].copy_from_slice(&(value.len() as u16).to_le_bytes());
            out[4..].copy_from_slice(value);
            self.len = end;
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Inline QoS for a change: the key hash (keyed topics only — peers get confused by one on
/// keyless topics), the status info (when not alive), its coherence (PRESENTATION), the
/// writer it relays, and where in the writer's sample channel its sample lies (sent to
/// FerroDDS readers of the host only).
pub(crate) fn inline_qos(
    key_hash: Option<[u8; 16]>,
    kind: ChangeKind,
    coherence: Option<&Coherence>,
    original: Option<&OriginalWriterInfo>,
    channel: Option<ChannelRef>,
) -> Option<InlineQos> {
    if key_hash.is_none()
        && kind == ChangeKind::Alive
        && coherence.is_none()
        && original.is_none()
        && channel.is_none()
    {
        return None;
    }
    let mut q = InlineQos {
        bytes: [0; 192],
        len: 0,
    };
    if let Some(hash) = key_hash {
        q.put(pid::KEY_HASH, &hash);
    }
    if kind != ChangeKind::Alive {
        // PID_STATUS_INFO is four octets with the flags in the last one (big-endian).
        q.put(pid::STATUS_INFO, &kind.status_info().to_be_bytes());
    }
    if let Some(c) = coherence {
        c.write(&mut |id, value| q.put(id, value));
    }
    if let Some(o) = original {
        q.put(pid::ORIGINAL_WRITER_INFO, &o.value());
    }
    if let Some(c) = channel {
        q.put(pid_in_channel(), &c.to_bytes());
    }
    q.put(pid::SENTINEL, &[]);
    Some(q)
}

/// Parses inline QoS bytes built by [`inline_qos`].
pub(crate) fn parse_inline_qos(q: &Option<InlineQos>) -> Option<ParameterList<'_>> {
    q.as_ref()
        .and_then(|q| ParameterList::parse(q.as_slice(), WireEndianness::Little).ok())
        .map(|(list, _)| list)
}

/// Builds a message from `prefix` to `destinations`, optionally addressed to one
/// participant with INFO_DST. Returns `None` when the submessages cannot be emitted (which
/// the callers' size limits rule out).
pub(crate) fn build(
    prefix: GuidPrefix,
    destination: Option<GuidPrefix>,
    submessages: &[Submessage<'_>],
    destinations: &[Locator],
) -> Option<Transmit> {
    let info_dst =
        destination.map(|guid_prefix| Submessage::InfoDestination(InfoDestination { guid_prefix }));
    let mut t = Transmit::reuse(destinations, 0);
    message_into(
        &header(prefix),
        info_dst.iter().chain(submessages),
        WireEndianness::Little,
        &mut t.payload,
    )
    .ok()?;
    Some(t)
}

/// An entity id with the unknown value, for submessages addressed to every reader.
pub(crate) const ANY_READER: EntityId = EntityId::UNKNOWN;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ParameterListBuilder;

    #[test]
    fn inline_qos_is_the_parameter_list_the_builder_makes() {
        for key in [None, Some([9u8; 16])] {
            for kind in [
                ChangeKind::Alive,
                ChangeKind::Disposed,
                ChangeKind::Unregistered,
                ChangeKind::DisposedUnregistered,
            ] {
                let ours = inline_qos(key, kind, None, None, None);
                if key.is_none() && kind == ChangeKind::Alive {
                    assert!(ours.is_none());
                    continue;
                }
                let mut want = Vec::new();
                let mut b = ParameterListBuilder::new(&mut want, WireEndianness::Little);
                if let Some(hash) = key {
                    b.push(pid::KEY_HASH, &hash).unwrap();
                }
                if kind != ChangeKind::Alive {
                    b.push(pid::STATUS_INFO, &kind.status_info().to_be_bytes())
                        .unwrap();
                }
                b.finish();
                assert_eq!(ours.unwrap().as_slice(), want, "{key:?} {kind:?}");
            }
        }
    }
}
