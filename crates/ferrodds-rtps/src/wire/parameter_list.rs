//! Parameter lists (DDSI-RTPS 2.5 §9.4.2.11): the encoding of inline QoS and of the
//! SPDP/SEDP discovery data.
//!
//! ```text
//! 0...2...........7...............15.............23...............31
//! |      parameterId (u16)        |     length (u16, bytes)        |
//! +---------------+---------------+---------------+---------------+
//! ~                   value (length bytes, padded to 4)           ~
//! +---------------+---------------+---------------+---------------+
//! ~                       ... more parameters ...                 ~
//! +---------------+---------------+---------------+---------------+
//! |      PID_SENTINEL (0x0001)    |     length (ignored)          |
//! +---------------+---------------+---------------+---------------+
//! ```
//!
//! The byte order is the E flag of the enclosing submessage (inline QoS) or the
//! encapsulation of the serialized payload (`PL_CDR_BE` / `PL_CDR_LE`, discovery data).
//!
//! Tolerated on parse, each seen in the wild:
//! - PID_SENTINEL with a non-zero length: its length is ignored and the list ends right
//!   after its 4-byte header (§9.4.2.11 gives the sentinel no value; RTI Connext 7 sends a
//!   length, and Fast DDS ≥ 1.10 and Connext Micro 4 ignore it the same way).
//! - A length that is not a multiple of 4: the value is exactly `length` bytes and the
//!   next parameter starts at the next multiple of 4 (old Fast RTPS sent unpadded lengths
//!   followed by padding). The builder always emits padded lengths.
//!
//! PID_PAD parameters are skipped by the iterator. The must-understand (0x4000) and
//! vendor-specific (0x8000) bits are reported by [`Parameter`]; what a vendor-specific id
//! means depends on the sender's vendor id, which is for the caller to check.

use super::{align4, EmitError, Endianness, Guid, Locator, ParameterListError};

/// Parameter ids (DDSI-RTPS 2.5 Table 9.13 and Table 9.15 for inline QoS; DDS-XTypes
/// 1.3 §7.6.3 for the type ids; the spec names are `PID_` + the constant's name).
pub mod pid {
    /// `PID_PAD`: padding, no meaning.
    pub const PAD: u16 = 0x0000;
    /// `PID_SENTINEL`: end of the list.
    pub const SENTINEL: u16 = 0x0001;
    /// `PID_PARTICIPANT_LEASE_DURATION`: Duration_t.
    pub const PARTICIPANT_LEASE_DURATION: u16 = 0x0002;
    /// `PID_TIME_BASED_FILTER`.
    pub const TIME_BASED_FILTER: u16 = 0x0004;
    /// `PID_TOPIC_NAME`: string.
    pub const TOPIC_NAME: u16 = 0x0005;
    /// `PID_OWNERSHIP_STRENGTH`.
    pub const OWNERSHIP_STRENGTH: u16 = 0x0006;
    /// `PID_TYPE_NAME`: string.
    pub const TYPE_NAME: u16 = 0x0007;
    /// `PID_METATRAFFIC_MULTICAST_IPADDRESS` (deprecated).
    pub const METATRAFFIC_MULTICAST_IPADDRESS: u16 = 0x000b;
    /// `PID_DEFAULT_UNICAST_IPADDRESS` (deprecated).
    pub const DEFAULT_UNICAST_IPADDRESS: u16 = 0x000c;
    /// `PID_METATRAFFIC_UNICAST_PORT` (deprecated).
    pub const METATRAFFIC_UNICAST_PORT: u16 = 0x000d;
    /// `PID_DEFAULT_UNICAST_PORT` (deprecated).
    pub const DEFAULT_UNICAST_PORT: u16 = 0x000e;
    /// `PID_DOMAIN_ID`: u32.
    pub const DOMAIN_ID: u16 = 0x000f;
    /// `PID_MULTICAST_IPADDRESS` (deprecated).
    pub const MULTICAST_IPADDRESS: u16 = 0x0011;
    /// `PID_PROTOCOL_VERSION`: ProtocolVersion_t (padded to 4).
    pub const PROTOCOL_VERSION: u16 = 0x0015;
    /// `PID_VENDORID`: VendorId_t (padded to 4).
    pub const VENDORID: u16 = 0x0016;
    /// `PID_RELIABILITY`.
    pub const RELIABILITY: u16 = 0x001a;
    /// `PID_LIVELINESS`.
    pub const LIVELINESS: u16 = 0x001b;
    /// `PID_DURABILITY`.
    pub const DURABILITY: u16 = 0x001d;
    /// `PID_DURABILITY_SERVICE`.
    pub const DURABILITY_SERVICE: u16 = 0x001e;
    /// `PID_OWNERSHIP`.
    pub const OWNERSHIP: u16 = 0x001f;
    /// `PID_PRESENTATION`.
    pub const PRESENTATION: u16 = 0x0021;
    /// `PID_DEADLINE`.
    pub const DEADLINE: u16 = 0x0023;
    /// `PID_DESTINATION_ORDER`.
    pub const DESTINATION_ORDER: u16 = 0x0025;
    /// `PID_LATENCY_BUDGET`.
    pub const LATENCY_BUDGET: u16 = 0x0027;
    /// `PID_PARTITION`.
    pub const PARTITION: u16 = 0x0029;
    /// `PID_LIFESPAN`.
    pub const LIFESPAN: u16 = 0x002b;
    /// `PID_USER_DATA`.
    pub const USER_DATA: u16 = 0x002c;
    /// `PID_GROUP_DATA`.
    pub const GROUP_DATA: u16 = 0x002d;
    /// `PID_TOPIC_DATA`.
    pub const TOPIC_DATA: u16 = 0x002e;
    /// `PID_UNICAST_LOCATOR`: Locator_t.
    pub const UNICAST_LOCATOR: u16 = 0x002f;
    /// `PID_MULTICAST_LOCATOR`: Locator_t.
    pub const MULTICAST_LOCATOR: u16 = 0x0030;
    /// `PID_DEFAULT_UNICAST_LOCATOR`: Locator_t.
    pub const DEFAULT_UNICAST_LOCATOR: u16 = 0x0031;
    /// `PID_METATRAFFIC_UNICAST_LOCATOR`: Locator_t.
    pub const METATRAFFIC_UNICAST_LOCATOR: u16 = 0x0032;
    /// `PID_METATRAFFIC_MULTICAST_LOCATOR`: Locator_t.
    pub const METATRAFFIC_MULTICAST_LOCATOR: u16 = 0x0033;
    /// `PID_PARTICIPANT_MANUAL_LIVELINESS_COUNT`.
    pub const PARTICIPANT_MANUAL_LIVELINESS_COUNT: u16 = 0x0034;
    /// `PID_CONTENT_FILTER_PROPERTY`.
    pub const CONTENT_FILTER_PROPERTY: u16 = 0x0035;
    /// `PID_HISTORY`.
    pub const HISTORY: u16 = 0x0040;
    /// `PID_RESOURCE_LIMITS`.
    pub const RESOURCE_LIMITS: u16 = 0x0041;
    /// `PID_EXPECTS_INLINE_QOS`: boolean.
    pub const EXPECTS_INLINE_QOS: u16 = 0x0043;
    /// `PID_PARTICIPANT_BUILTIN_ENDPOINTS` (deprecated alias of BUILTIN_ENDPOINT_SET).
    pub const PARTICIPANT_BUILTIN_ENDPOINTS: u16 = 0x0044;
    /// `PID_METATRAFFIC_UNICAST_IPADDRESS` (deprecated).
    pub const METATRAFFIC_UNICAST_IPADDRESS: u16 = 0x0045;
    /// `PID_METATRAFFIC_MULTICAST_PORT` (deprecated).
    pub const METATRAFFIC_MULTICAST_PORT: u16 = 0x0046;
    /// `PID_DEFAULT_MULTICAST_LOCATOR`: Locator_t.
    pub const DEFAULT_MULTICAST_LOCATOR: u16 = 0x0048;
    /// `PID_TRANSPORT_PRIORITY`.
    pub const TRANSPORT_PRIORITY: u16 = 0x0049;
    /// `PID_PARTICIPANT_GUID`: GUID_t.
    pub const PARTICIPANT_GUID: u16 = 0x0050;
    /// `PID_PARTICIPANT_ENTITYID`.
    pub const PARTICIPANT_ENTITYID: u16 = 0x0051;
    /// `PID_GROUP_GUID`: GUID_t.
    pub const GROUP_GUID: u16 = 0x0052;
    /// `PID_GROUP_ENTITYID`.
    pub const GROUP_ENTITYID: u16 = 0x0053;
    /// `PID_CONTENT_FILTER_INFO` (inline QoS).
    pub const CONTENT_FILTER_INFO: u16 = 0x0055;
    /// `PID_COHERENT_SET` (inline QoS).
    pub const COHERENT_SET: u16 = 0x0056;
    /// `PID_DIRECTED_WRITE` (inline QoS).
    pub const DIRECTED_WRITE: u16 = 0x0057;
    /// `PID_BUILTIN_ENDPOINT_SET`: u32 bit set.
    pub const BUILTIN_ENDPOINT_SET: u16 = 0x0058;
    /// `PID_PROPERTY_LIST`.
    pub const PROPERTY_LIST: u16 = 0x0059;
    /// `PID_ENDPOINT_GUID`: GUID_t.
    pub const ENDPOINT_GUID: u16 = 0x005a;
    /// `PID_TYPE_MAX_SIZE_SERIALIZED`.
    pub const TYPE_MAX_SIZE_SERIALIZED: u16 = 0x0060;
    /// `PID_ORIGINAL_WRITER_INFO` (inline QoS).
    pub const ORIGINAL_WRITER_INFO: u16 = 0x0061;
    /// `PID_ENTITY_NAME`: string.
    pub const ENTITY_NAME: u16 = 0x0062;
    /// `PID_GROUP_COHERENT_SET` (inline QoS).
    pub const GROUP_COHERENT_SET: u16 = 0x0063;
    /// `PID_GROUP_SEQ_NUM` (inline QoS).
    pub const GROUP_SEQ_NUM: u16 = 0x0064;
    /// `PID_WRITER_GROUP_INFO` (inline QoS).
    pub const WRITER_GROUP_INFO: u16 = 0x0065;
    /// `PID_SECURE_WRITER_GROUP_INFO` (inline QoS).
    pub const SECURE_WRITER_GROUP_INFO: u16 = 0x0066;
    /// `PID_KEY_HASH` (inline QoS): 16 bytes.
    pub const KEY_HASH: u16 = 0x0070;
    /// `PID_STATUS_INFO` (inline QoS): 4 bytes, flags in the last byte.
    pub const STATUS_INFO: u16 = 0x0071;
    /// `PID_DATA_REPRESENTATION` (DDS-XTypes).
    pub const DATA_REPRESENTATION: u16 = 0x0073;
    /// `PID_TYPE_CONSISTENCY_ENFORCEMENT` (DDS-XTypes).
    pub const TYPE_CONSISTENCY_ENFORCEMENT: u16 = 0x0074;
    /// `PID_TYPE_INFORMATION` (DDS-XTypes; sent by Cyclone DDS ≥ 0.10 in SEDP).
    pub const TYPE_INFORMATION: u16 = 0x0075;
    /// `PID_BUILTIN_ENDPOINT_QOS`.
    pub const BUILTIN_ENDPOINT_QOS: u16 = 0x0077;
    /// `PID_DOMAIN_TAG`: string (must-understand bit set).
    pub const DOMAIN_TAG: u16 = 0x4014;
}

/// Encapsulation id of a big-endian parameter list payload.
pub const PL_CDR_BE: u16 = 0x0002;
/// Encapsulation id of a little-endian parameter list payload.
pub const PL_CDR_LE: u16 = 0x0003;
/// The vendor-specific bit of a parameter id.
pub const PID_VENDOR_SPECIFIC_FLAG: u16 = 0x8000;
/// The must-understand bit of a parameter id ("incompatible if not recognised").
pub const PID_MUST_UNDERSTAND_FLAG: u16 = 0x4000;

/// `PID_STATUS_INFO` flag: the instance was disposed.
pub const STATUS_INFO_DISPOSED: u32 = 0x1;
/// `PID_STATUS_INFO` flag: the instance was unregistered.
pub const STATUS_INFO_UNREGISTERED: u32 = 0x2;
/// `PID_STATUS_INFO` flag: the sample was filtered.
pub const STATUS_INFO_FILTERED: u32 = 0x4;

/// A validated parameter list: the parameters before the sentinel, and their byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParameterList<'a> {
    /// Parameters up to (excluding) PID_SENTINEL; validated by `parse`.
    bytes: &'a [u8],
    endianness: Endianness,
}

impl<'a> ParameterList<'a> {
    /// Validates the list at the start of `buf` up to its PID_SENTINEL and returns it with
    /// the bytes that follow the sentinel (the serialized payload, for inline QoS).
    pub fn parse(
        buf: &'a [u8],
        endianness: Endianness,
    ) -> Result<(ParameterList<'a>, &'a [u8]), ParameterListError> {
        ParameterList::parse_at(buf, endianness, 0)
    }

    /// As [`ParameterList::parse`], reporting offsets relative to `base`.
    pub(crate) fn parse_at(
        buf: &'a [u8],
        endianness: Endianness,
        base: usize,
    ) -> Result<(ParameterList<'a>, &'a [u8]), ParameterListError> {
        let mut pos = 0usize;
        loop {
            let offset = base.saturating_add(pos);
            let remaining = buf.len().saturating_sub(pos);
            let Some(header) = buf.get(pos..).and_then(|b| b.first_chunk::<4>()) else {
                return Err(if remaining == 0 {
                    ParameterListError::MissingSentinel { offset }
                } else {
                    ParameterListError::TruncatedParameterHeader { offset, remaining }
                });
            };
            let [p0, p1, l0, l1] = *header;
            let pid = endianness.u16_from([p0, p1]);
            let length = endianness.u16_from([l0, l1]);
            if pid == pid::SENTINEL {
                // The sentinel's length is ignored (see the module doc).
                let list = buf.get(..pos).unwrap_or(&[]);
                let rest = buf.get(pos.saturating_add(4)..).unwrap_or(&[]);
                return Ok((
                    ParameterList {
                        bytes: list,
                        endianness,
                    },
                    rest,
                ));
            }
            let value_end = pos.saturating_add(4).saturating_add(usize::from(length));
            if value_end > buf.len() {
                return Err(ParameterListError::ValuePastEnd {
                    offset,
                    pid,
                    length,
                    remaining: remaining.saturating_sub(4),
                });
            }
            // Next header at the next multiple of 4 (equal to value_end when the length
            // is padded, as the spec requires). If the padding is missing the next
            // iteration reports the truncation.
            pos = align4(value_end).unwrap_or(usize::MAX);
        }
    }

    /// Validates a serialized payload holding a parameter list: the 4-byte encapsulation
    /// header (`PL_CDR_BE` or `PL_CDR_LE`, options ignored), then the list. Returns the
    /// list and the bytes after its sentinel.
    pub fn parse_encapsulated(
        payload: &'a [u8],
    ) -> Result<(ParameterList<'a>, &'a [u8]), ParameterListError> {
        let Some(&[e0, e1, _, _]) = payload.first_chunk::<4>() else {
            return Err(ParameterListError::TruncatedEncapsulation { len: payload.len() });
        };
        let endianness = match u16::from_be_bytes([e0, e1]) {
            PL_CDR_BE => Endianness::Big,
            PL_CDR_LE => Endianness::Little,
            id => return Err(ParameterListError::NotParameterList { id }),
        };
        ParameterList::parse_at(payload.get(4..).unwrap_or(&[]), endianness, 4)
    }

    /// Byte order of the values.
    pub const fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// The parameters as sent, without the sentinel.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The parameters in order, PID_PAD skipped.
    pub fn iter(&self) -> ParameterIter<'a> {
        ParameterIter {
            bytes: self.bytes,
            pos: 0,
            endianness: self.endianness,
        }
    }

    /// The first parameter with id `pid`.
    pub fn find(&self, pid: u16) -> Option<Parameter<'a>> {
        self.iter().find(|p| p.id == pid)
    }

    /// Bytes on the wire: the parameters and a 4-byte sentinel.
    pub fn buffer_len(&self) -> usize {
        self.bytes.len().saturating_add(4)
    }

    /// Writes the list and a sentinel (with length 0) in the list's own byte order.
    pub(crate) fn write(&self, w: &mut super::codec::Writer<'_>) -> Result<(), EmitError> {
        w.put(self.bytes)?;
        let e = self.endianness;
        let [s0, s1] = e.u16_to(pid::SENTINEL);
        w.put(&[s0, s1, 0, 0])
    }
}

impl<'a> IntoIterator for &ParameterList<'a> {
    type Item = Parameter<'a>;
    type IntoIter = ParameterIter<'a>;
    fn into_iter(self) -> ParameterIter<'a> {
        self.iter()
    }
}

/// Iterator over a validated [`ParameterList`].
#[derive(Debug, Clone)]
pub struct ParameterIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    endianness: Endianness,
}

impl<'a> Iterator for ParameterIter<'a> {
    type Item = Parameter<'a>;

    fn next(&mut self) -> Option<Parameter<'a>> {
        loop {
            // The list was validated by `parse`; every `None` below is unreachable and
            // simply ends the iteration.
            let [p0, p1, l0, l1] = *self.bytes.get(self.pos..)?.first_chunk::<4>()?;
            let id = self.endianness.u16_from([p0, p1]);
            let length = usize::from(self.endianness.u16_from([l0, l1]));
            let start = self.pos.checked_add(4)?;
            let end = start.checked_add(length)?;
            let value = self.bytes.get(start..end)?;
            self.pos = align4(end)?;
            if id == pid::PAD {
                continue;
            }
            return Some(Parameter {
                id,
                value,
                endianness: self.endianness,
            });
        }
    }
}

/// One parameter: its id and its value bytes (without padding, unless the sender counted
/// padding in the length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parameter<'a> {
    /// The parameter id, flags included.
    pub id: u16,
    /// The value bytes.
    pub value: &'a [u8],
    /// Byte order of the value.
    pub endianness: Endianness,
}

impl<'a> Parameter<'a> {
    /// True if the vendor-specific bit (0x8000) is set: the meaning depends on the
    /// sender's vendor id.
    pub const fn is_vendor_specific(&self) -> bool {
        self.id & PID_VENDOR_SPECIFIC_FLAG != 0
    }

    /// True if the must-understand bit (0x4000) is set: a receiver that does not know the
    /// id must treat the whole list as incompatible (§9.6.2.2.1).
    pub const fn must_understand(&self) -> bool {
        self.id & PID_MUST_UNDERSTAND_FLAG != 0
    }

    /// The value's first four bytes as a u32 in the list's byte order.
    pub fn as_u32(&self) -> Option<u32> {
        Some(self.endianness.u32_from(*self.value.first_chunk::<4>()?))
    }

    /// The value as a GUID (16 octets).
    pub fn as_guid(&self) -> Option<Guid> {
        Some(Guid::from_bytes(*self.value.first_chunk::<16>()?))
    }

    /// The value as a Locator_t.
    pub fn as_locator(&self) -> Option<Locator> {
        Some(Locator::from_bytes(
            *self.value.first_chunk::<24>()?,
            self.endianness,
        ))
    }

    /// The value as a CDR string: a u32 length counting the terminating NUL, the bytes,
    /// the NUL. `None` if lengths disagree or the bytes are not UTF-8.
    pub fn as_str(&self) -> Option<&'a str> {
        let len = usize::try_from(self.as_u32()?).ok()?;
        let with_nul = self.value.get(4..4usize.checked_add(len)?)?;
        let (nul, text) = with_nul.split_last()?;
        if *nul != 0 {
            return None;
        }
        core::str::from_utf8(text).ok()
    }
}

/// Builds a parameter list at the end of a `Vec<u8>`, padding every value to 4 bytes and
/// closing the list with a sentinel.
#[derive(Debug)]
pub struct ParameterListBuilder<'v> {
    out: &'v mut Vec<u8>,
    endianness: Endianness,
}

impl<'v> ParameterListBuilder<'v> {
    /// Starts a bare list (for inline QoS) at the end of `out`.
    pub fn new(out: &'v mut Vec<u8>, endianness: Endianness) -> Self {
        ParameterListBuilder { out, endianness }
    }

    /// Starts a serialized payload: the `PL_CDR_BE`/`PL_CDR_LE` encapsulation header
    /// (options 0), then the list.
    pub fn encapsulated(out: &'v mut Vec<u8>, endianness: Endianness) -> Self {
        let id = match endianness {
            Endianness::Big => PL_CDR_BE,
            Endianness::Little => PL_CDR_LE,
        };
        let [i0, i1] = id.to_be_bytes();
        out.extend_from_slice(&[i0, i1, 0, 0]);
        ParameterListBuilder { out, endianness }
    }

    /// Byte order of the list being built.
    pub const fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Appends a parameter whose value is `value`, zero-padded to a multiple of 4.
    pub fn push(&mut self, pid: u16, value: &[u8]) -> Result<&mut Self, EmitError> {
        let padded = align4(value.len())
            .and_then(|l| u16::try_from(l).ok())
            .ok_or(EmitError::ParameterTooLong {
                pid,
                len: value.len(),
            })?;
        let pad = usize::from(padded) - value.len();
        self.out.extend_from_slice(&self.endianness.u16_to(pid));
        self.out.extend_from_slice(&self.endianness.u16_to(padded));
        self.out.extend_from_slice(value);
        // pad < 4 because `padded` is `value.len()` rounded up to a multiple of 4.
        self.out
            .extend_from_slice([0u8; 3].get(..pad).unwrap_or(&[]));
        Ok(self)
    }

    /// Appends a u32 parameter.
    pub fn push_u32(&mut self, pid: u16, v: u32) -> Result<&mut Self, EmitError> {
        let b = self.endianness.u32_to(v);
        self.push(pid, &b)
    }

    /// Appends a GUID parameter.
    pub fn push_guid(&mut self, pid: u16, guid: Guid) -> Result<&mut Self, EmitError> {
        self.push(pid, &guid.to_bytes())
    }

    /// Appends a Locator_t parameter.
    pub fn push_locator(&mut self, pid: u16, locator: &Locator) -> Result<&mut Self, EmitError> {
        let b = locator.to_bytes(self.endianness);
        self.push(pid, &b)
    }

    /// Appends a CDR string parameter (u32 length including the NUL, bytes, NUL).
    pub fn push_str(&mut self, pid: u16, s: &str) -> Result<&mut Self, EmitError> {
        let too_long = EmitError::ParameterTooLong {
            pid,
            len: s.len().saturating_add(5),
        };
        let len = s
            .len()
            .checked_add(1)
            .and_then(|l| u32::try_from(l).ok())
            .ok_or(too_long)?;
        let mut v = Vec::with_capacity(s.len() + 5);
        v.extend_from_slice(&self.endianness.u32_to(len));
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.push(pid, &v)
    }

    /// Appends the sentinel and returns the byte order used.
    pub fn finish(self) -> Endianness {
        self.out
            .extend_from_slice(&self.endianness.u16_to(pid::SENTINEL));
        self.out.extend_from_slice(&[0, 0]);
        self.endianness
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{EntityId, GuidPrefix};
    use std::net::Ipv4Addr;

    // A little-endian list: PID_TOPIC_NAME "ab", PID_RELIABILITY (12 bytes),
    // PID_PAD (4 bytes), vendor-specific 0x8007 (0 bytes), sentinel.
    static LE_LIST: [u8; 44] = [
        0x05, 0x00, 0x08, 0x00, // PID_TOPIC_NAME, length 8
        0x03, 0x00, 0x00, 0x00, b'a', b'b', 0x00, 0x00, // "ab\0" + pad
        0x1a, 0x00, 0x0c, 0x00, // PID_RELIABILITY, length 12
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,
        0x00, 0xee, 0xee, 0xee, 0xee, // PID_PAD, length 4
        0x07, 0x80, 0x00, 0x00, // 0x8007, length 0
        0x01, 0x00, 0x00, 0x00, // PID_SENTINEL
    ];

    // The same list in big endian.
    static BE_LIST: [u8; 44] = [
        0x00, 0x05, 0x00, 0x08, //
        0x00, 0x00, 0x00, 0x03, b'a', b'b', 0x00, 0x00, //
        0x00, 0x1a, 0x00, 0x0c, //
        0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x04, 0xee, 0xee, 0xee, 0xee, //
        0x80, 0x07, 0x00, 0x00, //
        0x00, 0x01, 0x00, 0x00,
    ];

    fn check(list: &ParameterList<'_>) {
        let params: Vec<_> = list.iter().collect();
        assert_eq!(params.len(), 3);
        assert_eq!(params[0].id, pid::TOPIC_NAME);
        assert_eq!(params[0].as_str(), Some("ab"));
        assert_eq!(params[1].id, pid::RELIABILITY);
        assert_eq!(params[1].as_u32(), Some(2));
        assert_eq!(params[1].value.len(), 12);
        assert!(!params[1].is_vendor_specific());
        assert_eq!(params[2].id, 0x8007);
        assert!(params[2].is_vendor_specific());
        assert!(!params[2].must_understand());
        assert!(params[2].value.is_empty());
    }

    #[test]
    fn test_parse_both_endiannesses() {
        let (le, rest) = ParameterList::parse(&LE_LIST, Endianness::Little).expect("valid");
        assert!(rest.is_empty());
        check(&le);
        let (be, rest) = ParameterList::parse(&BE_LIST, Endianness::Big).expect("valid");
        assert!(rest.is_empty());
        check(&be);
        assert_eq!(le.find(pid::RELIABILITY).and_then(|p| p.as_u32()), Some(2));
        assert_eq!(le.find(pid::DURABILITY), None);
    }

    #[test]
    fn test_emit() {
        let mut out = Vec::new();
        let mut b = ParameterListBuilder::new(&mut out, Endianness::Little);
        b.push_str(pid::TOPIC_NAME, "ab").expect("short");
        b.push(pid::RELIABILITY, &[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .expect("short");
        b.push(pid::PAD, &[0xee; 4]).expect("short");
        b.push(0x8007, &[]).expect("short");
        b.finish();
        assert_eq!(out, LE_LIST);

        let (list, _) = ParameterList::parse(&BE_LIST, Endianness::Big).expect("valid");
        let mut buf = vec![0u8; list.buffer_len()];
        let mut w = crate::wire::codec::Writer::new(&mut buf, Endianness::Big);
        list.write(&mut w).expect("fits");
        assert_eq!(buf, BE_LIST);
    }

    #[test]
    fn test_builder_pads_and_round_trips() {
        let guid = Guid::new(GuidPrefix([7; 12]), EntityId::PARTICIPANT);
        let loc = Locator::udpv4(Ipv4Addr::new(192, 0, 2, 1), 7410);
        for e in [Endianness::Little, Endianness::Big] {
            let mut out = Vec::new();
            let mut b = ParameterListBuilder::encapsulated(&mut out, e);
            b.push_guid(pid::PARTICIPANT_GUID, guid).expect("short");
            b.push_locator(pid::METATRAFFIC_UNICAST_LOCATOR, &loc)
                .expect("short");
            b.push_str(pid::ENTITY_NAME, "hello").expect("short");
            b.push(pid::KEY_HASH, &[1, 2, 3]).expect("short");
            b.finish();
            assert_eq!(out.len() % 4, 0);
            let (list, rest) = ParameterList::parse_encapsulated(&out).expect("valid");
            assert!(rest.is_empty());
            assert_eq!(list.endianness(), e);
            let p: Vec<_> = list.iter().collect();
            assert_eq!(p[0].as_guid(), Some(guid));
            assert_eq!(p[1].as_locator(), Some(loc));
            assert_eq!(p[2].as_str(), Some("hello"));
            assert_eq!(p[3].value, [1, 2, 3, 0]);
        }
        let mut out = Vec::new();
        let mut b = ParameterListBuilder::new(&mut out, Endianness::Little);
        assert_eq!(
            b.push(0x8000, &[0; 65533]).err(),
            Some(EmitError::ParameterTooLong {
                pid: 0x8000,
                len: 65533
            })
        );
        assert!(b.push(0x8000, &[0; 65532]).is_ok());
    }

    #[test]
    fn sentinel_with_nonzero_length_is_tolerated() {
        // RTI Connext 7 may send PID_SENTINEL with a length; the length is ignored and
        // whatever follows the 4-byte sentinel is the rest (here: a payload).
        let bytes = [
            0x70, 0x00, 0x04, 0x00, 1, 2, 3, 4, // PID_KEY_HASH (short, for the test)
            0x01, 0x00, 0x04, 0x00, // PID_SENTINEL, length 4
            0x00, 0x01, 0x00, 0x00, // what follows: a CDR_LE encapsulation header
        ];
        let (list, rest) = ParameterList::parse(&bytes, Endianness::Little).expect("valid");
        assert_eq!(list.iter().count(), 1);
        assert_eq!(rest, [0x00, 0x01, 0x00, 0x00]);
        // Even a sentinel whose length runs past the end.
        let bytes = [0x01, 0x00, 0xff, 0xff];
        let (list, rest) = ParameterList::parse(&bytes, Endianness::Little).expect("valid");
        assert_eq!(list.iter().count(), 0);
        assert!(rest.is_empty());
    }

    #[test]
    fn unpadded_length_is_tolerated() {
        let bytes = [
            0x70, 0x00, 0x03, 0x00, 1, 2, 3, 0, // length 3, one byte of padding
            0x71, 0x00, 0x04, 0x00, 0, 0, 0, 1, // PID_STATUS_INFO
            0x01, 0x00, 0x00, 0x00,
        ];
        let (list, _) = ParameterList::parse(&bytes, Endianness::Little).expect("valid");
        let p: Vec<_> = list.iter().collect();
        assert_eq!(p[0].value, [1, 2, 3]);
        assert_eq!(p[1].id, pid::STATUS_INFO);
    }

    #[test]
    fn malformed_lists() {
        assert_eq!(
            ParameterList::parse(&[], Endianness::Little),
            Err(ParameterListError::MissingSentinel { offset: 0 })
        );
        assert_eq!(
            ParameterList::parse(&LE_LIST[..40], Endianness::Little),
            Err(ParameterListError::MissingSentinel { offset: 40 })
        );
        assert_eq!(
            ParameterList::parse(&LE_LIST[..42], Endianness::Little),
            Err(ParameterListError::TruncatedParameterHeader {
                offset: 40,
                remaining: 2
            })
        );
        assert_eq!(
            ParameterList::parse(&LE_LIST[..20], Endianness::Little),
            Err(ParameterListError::ValuePastEnd {
                offset: 12,
                pid: pid::RELIABILITY,
                length: 12,
                remaining: 4
            })
        );
        // A length of 0xffff with a short buffer.
        assert_eq!(
            ParameterList::parse(&[0x05, 0x00, 0xff, 0xff, 0, 0], Endianness::Little),
            Err(ParameterListError::ValuePastEnd {
                offset: 0,
                pid: pid::TOPIC_NAME,
                length: 0xffff,
                remaining: 2
            })
        );
        assert_eq!(
            ParameterList::parse_encapsulated(&[0, 3]),
            Err(ParameterListError::TruncatedEncapsulation { len: 2 })
        );
        assert_eq!(
            ParameterList::parse_encapsulated(&[0, 1, 0, 0, 1, 0, 0, 0]),
            Err(ParameterListError::NotParameterList { id: 1 })
        );
        // Errors inside an encapsulated list count the encapsulation header.
        assert_eq!(
            ParameterList::parse_encapsulated(&[0, 3, 0, 0, 0x05, 0x00]),
            Err(ParameterListError::TruncatedParameterHeader {
                offset: 4,
                remaining: 2
            })
        );
    }

    #[test]
    fn bad_strings_are_none() {
        let p = |value: &'static [u8]| Parameter {
            id: pid::TOPIC_NAME,
            value,
            endianness: Endianness::Little,
        };
        assert_eq!(p(&[3, 0, 0, 0, b'a', b'b', 1, 0]).as_str(), None); // no NUL
        assert_eq!(p(&[9, 0, 0, 0, b'a', 0, 0, 0]).as_str(), None); // length too long
        assert_eq!(p(&[0, 0, 0, 0]).as_str(), None); // length 0, no NUL
        assert_eq!(p(&[0xff, 0xff, 0xff, 0xff]).as_str(), None);
        assert_eq!(p(&[1, 0, 0, 0, 0, 0, 0, 0]).as_str(), Some(""));
    }
}
