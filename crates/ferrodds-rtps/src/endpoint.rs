//! What writers and readers share: configuration of history and reliability, the kinds of
//! change, and building the messages they send.

use crate::transmit::Transmit;
use crate::wire::Endianness as WireEndianness;
use crate::wire::{
    message_to_vec,
    parameter_list::{pid, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED},
    EntityId, GuidPrefix, Header, InfoDestination, Locator, ParameterList, ParameterListBuilder,
    ProtocolVersion, Submessage, VendorId,
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

/// Inline QoS for a change: the key hash (keyed topics only — peers get confused by one on
/// keyless topics) and the status info (when not alive).
pub(crate) fn inline_qos(key_hash: Option<[u8; 16]>, kind: ChangeKind) -> Option<Vec<u8>> {
    if key_hash.is_none() && kind == ChangeKind::Alive {
        return None;
    }
    let mut out = Vec::with_capacity(32);
    let mut b = ParameterListBuilder::new(&mut out, WireEndianness::Little);
    // INVARIANT: both values are far below the 65535-byte parameter limit.
    if let Some(hash) = key_hash {
        b.push(pid::KEY_HASH, &hash).ok()?;
    }
    if kind != ChangeKind::Alive {
        // PID_STATUS_INFO is four octets with the flags in the last one (big-endian).
        b.push(pid::STATUS_INFO, &kind.status_info().to_be_bytes())
            .ok()?;
    }
    b.finish();
    Some(out)
}

/// Parses inline QoS bytes built by [`inline_qos`].
pub(crate) fn parse_inline_qos(bytes: &Option<Vec<u8>>) -> Option<ParameterList<'_>> {
    bytes
        .as_deref()
        .and_then(|b| ParameterList::parse(b, WireEndianness::Little).ok())
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
    let mut all = Vec::with_capacity(submessages.len() + 1);
    if let Some(guid_prefix) = destination {
        all.push(Submessage::InfoDestination(InfoDestination { guid_prefix }));
    }
    all.extend_from_slice(submessages);
    let payload = message_to_vec(&header(prefix), &all, WireEndianness::Little).ok()?;
    Some(Transmit {
        destinations: destinations.to_vec(),
        payload,
    })
}

/// An entity id with the unknown value, for submessages addressed to every reader.
pub(crate) const ANY_READER: EntityId = EntityId::UNKNOWN;
