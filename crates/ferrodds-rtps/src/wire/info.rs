//! The interpreter submessages, which change the state of the message receiver rather than
//! carrying data (DDSI-RTPS 2.5 §8.3.7.8–§8.3.7.13, §9.4.5.9–§9.4.5.14): INFO_TS
//! (0x09), INFO_SRC (0x0c), INFO_DST (0x0e), INFO_REPLY (0x0f), INFO_REPLY_IP4 (0x0d);
//! and PAD (0x01).
//!
//! ```text
//! INFO_TS           INFO_SRC                INFO_DST            INFO_REPLY
//! | 0x09 |I|E| len  | 0x0c | E | len |      | 0x0e | E | len |  | 0x0f |M|E| len |
//! | seconds (if !I) | unused (u32)     |     | guidPrefix (12) |  | unicast count   |
//! | fraction        | version | vendor |                        ~ 24-byte locators~
//!                   | guidPrefix (12)  |                        | multicast (if M)~
//!
//! INFO_REPLY_IP4                          PAD
//! | 0x0d |M|E| len |                      | 0x01 | E | len |
//! | unicast address (u32) | port (u32) |  ~ ignored bytes  ~
//! | multicast address, port (if M)     |
//! ```

use std::net::Ipv4Addr;

use super::codec::{Reader, Writer};
use super::{
    EmitError, Endianness, GuidPrefix, Locator, MalformedError, ProtocolVersion, Time, VendorId,
};

/// INFO_TS flag I: the timestamp is invalidated (no timestamp follows).
const FLAG_INVALIDATE: u8 = 0x02;
/// INFO_REPLY / INFO_REPLY_IP4 flag M: a multicast part follows.
const FLAG_MULTICAST: u8 = 0x02;

/// INFO_TS: the source timestamp of the submessages that follow, or none (§8.3.7.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InfoTimestamp {
    /// The timestamp; `None` when the I flag invalidates it.
    pub timestamp: Option<Time>,
}

impl InfoTimestamp {
    pub(crate) fn parse(flags: u8, r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        if flags & FLAG_INVALIDATE != 0 {
            return Ok(InfoTimestamp { timestamp: None });
        }
        Ok(InfoTimestamp {
            timestamp: Some(Time::read(r)?),
        })
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        if self.timestamp.is_none() {
            FLAG_INVALIDATE
        } else {
            0
        }
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        if self.timestamp.is_some() {
            Time::LEN
        } else {
            0
        }
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        match self.timestamp {
            Some(t) => t.write(w),
            None => Ok(()),
        }
    }
}

/// INFO_SRC: the submessages that follow come from another participant (§8.3.7.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InfoSource {
    /// Protocol version of the source.
    pub version: ProtocolVersion,
    /// Vendor of the source.
    pub vendor_id: VendorId,
    /// GUID prefix of the source.
    pub guid_prefix: GuidPrefix,
}

impl InfoSource {
    /// Body length.
    pub const BODY_LEN: usize = 20;

    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        r.skip(4)?; // unused
        let [major, minor] = r.array::<2>()?;
        let vendor_id = VendorId(r.array()?);
        let guid_prefix = GuidPrefix(r.array()?);
        Ok(InfoSource {
            version: ProtocolVersion { major, minor },
            vendor_id,
            guid_prefix,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put_u32(0)?;
        w.put(&[self.version.major, self.version.minor])?;
        w.put(&self.vendor_id.0)?;
        w.put(&self.guid_prefix.0)
    }
}

/// INFO_DST: the submessages that follow are for this participant (§8.3.7.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InfoDestination {
    /// GUID prefix of the destination, or `GuidPrefix::UNKNOWN` for all.
    pub guid_prefix: GuidPrefix,
}

impl InfoDestination {
    /// Body length.
    pub const BODY_LEN: usize = 12;

    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        Ok(InfoDestination {
            guid_prefix: GuidPrefix(r.array()?),
        })
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.guid_prefix.0)
    }
}

/// A list of locators: either received bytes (validated) or a caller's slice.
#[derive(Debug, Clone, Copy)]
pub struct LocatorList<'a>(LocatorListRepr<'a>);

#[derive(Debug, Clone, Copy)]
enum LocatorListRepr<'a> {
    /// `bytes.len()` is a multiple of 24.
    Wire {
        bytes: &'a [u8],
        endianness: Endianness,
    },
    Slice(&'a [Locator]),
}

impl<'a> LocatorList<'a> {
    /// A list to emit.
    pub const fn from_slice(locators: &'a [Locator]) -> Self {
        LocatorList(LocatorListRepr::Slice(locators))
    }

    /// Number of locators.
    pub fn len(&self) -> usize {
        match self.0 {
            LocatorListRepr::Wire { bytes, .. } => bytes.len() / Locator::LEN,
            LocatorListRepr::Slice(s) => s.len(),
        }
    }

    /// True when the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The locators, in order.
    pub fn iter(&self) -> impl Iterator<Item = Locator> + 'a {
        let (wire, slice) = match self.0 {
            LocatorListRepr::Wire { bytes, endianness } => (Some((bytes, endianness)), None),
            LocatorListRepr::Slice(s) => (None, Some(s)),
        };
        let from_wire = wire.into_iter().flat_map(|(bytes, e)| {
            bytes
                .chunks_exact(Locator::LEN)
                .filter_map(move |c| <[u8; 24]>::try_from(c).ok())
                .map(move |b| Locator::from_bytes(b, e))
        });
        let from_slice = slice.into_iter().flat_map(|s| s.iter().copied());
        from_wire.chain(from_slice)
    }

    fn read(r: &mut Reader<'a>) -> Result<Self, MalformedError> {
        let offset = r.offset();
        let count = r.u32()?;
        let available = r.remaining();
        // Check the count against the bytes present before anything else.
        let len = usize::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(Locator::LEN))
            .filter(|&len| len <= available)
            .ok_or(MalformedError::LocatorListTooLong {
                offset,
                count,
                available,
            })?;
        let bytes = r.take(len)?;
        Ok(LocatorList(LocatorListRepr::Wire {
            bytes,
            endianness: r.endianness(),
        }))
    }

    fn buffer_len(&self) -> usize {
        self.len().saturating_mul(Locator::LEN).saturating_add(4)
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        let count = u32::try_from(self.len())
            .map_err(|_| EmitError::TooManyLocators { count: self.len() })?;
        w.put_u32(count)?;
        for loc in self.iter() {
            loc.write(w)?;
        }
        Ok(())
    }
}

impl PartialEq for LocatorList<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for LocatorList<'_> {}

/// INFO_REPLY: where to send replies to the submessages that follow (§8.3.7.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfoReply<'a> {
    /// Unicast reply locators.
    pub unicast: LocatorList<'a>,
    /// Multicast reply locators (M flag).
    pub multicast: Option<LocatorList<'a>>,
}

impl<'a> InfoReply<'a> {
    pub(crate) fn parse(flags: u8, r: &mut Reader<'a>) -> Result<Self, MalformedError> {
        let unicast = LocatorList::read(r)?;
        let multicast = if flags & FLAG_MULTICAST != 0 {
            Some(LocatorList::read(r)?)
        } else {
            None
        };
        Ok(InfoReply { unicast, multicast })
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        if self.multicast.is_some() {
            FLAG_MULTICAST
        } else {
            0
        }
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        self.unicast
            .buffer_len()
            .saturating_add(self.multicast.map_or(0, |m| m.buffer_len()))
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        self.unicast.write(w)?;
        if let Some(m) = &self.multicast {
            m.write(w)?;
        }
        Ok(())
    }
}

/// An IPv4 address and port as INFO_REPLY_IP4 carries them (§9.4.5.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocatorUdpV4 {
    /// IPv4 address (a u32 on the wire, in the submessage's byte order).
    pub address: Ipv4Addr,
    /// UDP port (a u32 on the wire).
    pub port: u32,
}

impl LocatorUdpV4 {
    fn read(r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let address = Ipv4Addr::from(r.u32()?);
        let port = r.u32()?;
        Ok(LocatorUdpV4 { address, port })
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put_u32(u32::from(self.address))?;
        w.put_u32(self.port)
    }
}

impl From<LocatorUdpV4> for Locator {
    fn from(l: LocatorUdpV4) -> Locator {
        let mut loc = Locator::udpv4(l.address, 0);
        loc.port = l.port;
        loc
    }
}

/// INFO_REPLY_IP4: INFO_REPLY for one IPv4 unicast and optionally one multicast address
/// (§8.3.7.12, §9.4.5.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InfoReplyIp4 {
    /// Unicast reply address.
    pub unicast: LocatorUdpV4,
    /// Multicast reply address (M flag).
    pub multicast: Option<LocatorUdpV4>,
}

impl InfoReplyIp4 {
    pub(crate) fn parse(flags: u8, r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let unicast = LocatorUdpV4::read(r)?;
        let multicast = if flags & FLAG_MULTICAST != 0 {
            Some(LocatorUdpV4::read(r)?)
        } else {
            None
        };
        Ok(InfoReplyIp4 { unicast, multicast })
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        if self.multicast.is_some() {
            FLAG_MULTICAST
        } else {
            0
        }
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        if self.multicast.is_some() {
            16
        } else {
            8
        }
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        self.unicast.write(w)?;
        if let Some(m) = &self.multicast {
            m.write(w)?;
        }
        Ok(())
    }
}

/// PAD: padding whose bytes carry nothing (§8.3.7.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pad {
    /// Number of body bytes (emitted as zeros, padded to 4).
    pub len: usize,
}

impl Pad {
    pub(crate) fn parse(r: &mut Reader<'_>) -> Pad {
        Pad {
            len: r.rest().len(),
        }
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        self.len
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        const ZEROS: [u8; 64] = [0; 64];
        let mut left = self.len;
        while left > 0 {
            let n = left.min(ZEROS.len());
            w.put(ZEROS.get(..n).unwrap_or(&[]))?;
            left -= n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::submessage::test_util::{check_truncations, emit, parse};
    use crate::wire::Submessage;

    // INFO_TS from Cyclone DDS 0.10.2 (cyclone_pingpong.pcap, frame 1):
    //   submessageId: INFO_TS (0x09), Flags: 0x01 (Endianness bit), octetsToNextHeader: 8
    //   Timestamp: Nov 21, 2026 15:31:52.267295836 UTC (seconds 0x6b01b968, fraction
    //   0x446d7ffa)
    static INFO_TS_LE: [u8; 12] = [
        0x09, 0x01, 0x08, 0x00, 0x68, 0xb9, 0x01, 0x6b, 0xfa, 0x7f, 0x6d, 0x44,
    ];
    static INFO_TS_BE: [u8; 12] = [
        0x09, 0x00, 0x00, 0x08, 0x6b, 0x01, 0xb9, 0x68, 0x44, 0x6d, 0x7f, 0xfa,
    ];

    fn ts() -> InfoTimestamp {
        InfoTimestamp {
            timestamp: Some(Time {
                seconds: 0x6b01_b968,
                fraction: 0x446d_7ffa,
            }),
        }
    }

    #[test]
    fn test_info_ts() {
        assert_eq!(parse(&INFO_TS_LE), Ok(Submessage::InfoTimestamp(ts())));
        assert_eq!(parse(&INFO_TS_BE), Ok(Submessage::InfoTimestamp(ts())));
        assert_eq!(emit(&ts().into(), Endianness::Little), INFO_TS_LE.to_vec());
        assert_eq!(emit(&ts().into(), Endianness::Big), INFO_TS_BE.to_vec());
    }

    #[test]
    fn info_ts_invalidate() {
        let b = [0x09, 0x03, 0x00, 0x00];
        let inv = InfoTimestamp { timestamp: None };
        assert_eq!(parse(&b), Ok(Submessage::InfoTimestamp(inv)));
        assert_eq!(emit(&inv.into(), Endianness::Little), b.to_vec());
        // Without I, 4 bytes of body are too few.
        let b = [0x09, 0x01, 0x04, 0x00, 0, 0, 0, 0];
        assert_eq!(
            parse(&b),
            Err(MalformedError::Truncated {
                offset: 8,
                submessage: 0x09,
                needed: 4,
                available: 0
            })
        );
        check_truncations(&INFO_TS_LE);
    }

    static INFO_SRC_LE: [u8; 24] = [
        0x0c, 0x01, 0x14, 0x00, // INFO_SRC, E, 20
        0x00, 0x00, 0x00, 0x00, // unused
        0x02, 0x03, 0x01, 0x0f, // version 2.3, vendor Fast DDS
        0x01, 0x0f, 0x78, 0xfd, 0x73, 0x3a, 0x60, 0x20, 0x00, 0x00, 0x00, 0x00,
    ];

    fn src() -> InfoSource {
        InfoSource {
            version: ProtocolVersion::V2_3,
            vendor_id: VendorId::FAST_DDS,
            guid_prefix: GuidPrefix([0x01, 0x0f, 0x78, 0xfd, 0x73, 0x3a, 0x60, 0x20, 0, 0, 0, 0]),
        }
    }

    #[test]
    fn test_info_src() {
        assert_eq!(parse(&INFO_SRC_LE), Ok(Submessage::InfoSource(src())));
        let mut be = INFO_SRC_LE;
        be[1] = 0;
        be[2] = 0;
        be[3] = 0x14;
        assert_eq!(parse(&be), Ok(Submessage::InfoSource(src())));
        assert_eq!(
            emit(&src().into(), Endianness::Little),
            INFO_SRC_LE.to_vec()
        );
        assert_eq!(emit(&src().into(), Endianness::Big), be.to_vec());
        check_truncations(&INFO_SRC_LE);
    }

    #[test]
    fn test_info_dst() {
        let le = [
            0x0e, 0x01, 0x0c, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        ];
        let be = [
            0x0e, 0x00, 0x00, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        ];
        let dst = InfoDestination {
            guid_prefix: GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        };
        assert_eq!(parse(&le), Ok(Submessage::InfoDestination(dst)));
        assert_eq!(parse(&be), Ok(Submessage::InfoDestination(dst)));
        assert_eq!(emit(&dst.into(), Endianness::Little), le.to_vec());
        assert_eq!(emit(&dst.into(), Endianness::Big), be.to_vec());
        check_truncations(&le);
    }

    // INFO_REPLY, M set: one unicast 127.0.0.1:7411, one multicast 239.255.0.1:7401.
    static INFO_REPLY_LE: [u8; 60] = [
        0x0f, 0x03, 0x38, 0x00, //
        0x01, 0x00, 0x00, 0x00, // 1 unicast locator
        0x01, 0x00, 0x00, 0x00, 0xf3, 0x1c, 0x00, 0x00, // UDPv4, 7411
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1, //
        0x01, 0x00, 0x00, 0x00, // 1 multicast locator
        0x01, 0x00, 0x00, 0x00, 0xe9, 0x1c, 0x00, 0x00, // UDPv4, 7401
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 239, 255, 0, 1,
    ];

    static INFO_REPLY_BE: [u8; 60] = [
        0x0f, 0x02, 0x00, 0x38, //
        0x00, 0x00, 0x00, 0x01, //
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x1c, 0xf3, //
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1, //
        0x00, 0x00, 0x00, 0x01, //
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x1c, 0xe9, //
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 239, 255, 0, 1,
    ];

    static UNICAST: [Locator; 1] = [Locator {
        kind: 1,
        port: 7411,
        address: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1],
    }];
    static MULTICAST: [Locator; 1] = [Locator {
        kind: 1,
        port: 7401,
        address: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 239, 255, 0, 1],
    }];

    fn reply() -> InfoReply<'static> {
        InfoReply {
            unicast: LocatorList::from_slice(&UNICAST),
            multicast: Some(LocatorList::from_slice(&MULTICAST)),
        }
    }

    #[test]
    fn test_info_reply() {
        let Ok(Submessage::InfoReply(r)) = parse(&INFO_REPLY_LE) else {
            panic!()
        };
        assert_eq!(r, reply());
        assert_eq!(r.unicast.len(), 1);
        assert_eq!(
            r.unicast.iter().next().and_then(|l| l.as_udpv4()),
            Some("127.0.0.1:7411".parse().expect("addr"))
        );
        assert_eq!(parse(&INFO_REPLY_BE), Ok(Submessage::InfoReply(reply())));
        assert_eq!(
            emit(&reply().into(), Endianness::Little),
            INFO_REPLY_LE.to_vec()
        );
        assert_eq!(
            emit(&reply().into(), Endianness::Big),
            INFO_REPLY_BE.to_vec()
        );
        check_truncations(&INFO_REPLY_LE);
    }

    #[test]
    fn info_reply_count_checked_before_use() {
        // A count of 0xffffffff locators in 4 bytes: malformed, nothing allocated.
        let b = [0x0f, 0x01, 0x08, 0x00, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        assert_eq!(
            parse(&b),
            Err(MalformedError::LocatorListTooLong {
                offset: 4,
                count: u32::MAX,
                available: 4
            })
        );
        // Multicast list announced by M but missing.
        let mut b = INFO_REPLY_LE[..32].to_vec();
        b[2] = 28;
        assert_eq!(
            parse(&b),
            Err(MalformedError::Truncated {
                offset: 32,
                submessage: 0x0f,
                needed: 4,
                available: 0
            })
        );
        // Without M the same bytes are fine.
        b[1] = 0x01;
        assert!(parse(&b).is_ok());
    }

    #[test]
    fn test_info_reply_ip4() {
        let le = [
            0x0d, 0x03, 0x10, 0x00, // M|E, 16
            0x01, 0x00, 0x00, 0x7f, 0xf3, 0x1c, 0x00, 0x00, // 127.0.0.1:7411
            0x01, 0x00, 0xff, 0xef, 0xe9, 0x1c, 0x00, 0x00, // 239.255.0.1:7401
        ];
        let be = [
            0x0d, 0x02, 0x00, 0x10, //
            0x7f, 0x00, 0x00, 0x01, 0x00, 0x00, 0x1c, 0xf3, //
            0xef, 0xff, 0x00, 0x01, 0x00, 0x00, 0x1c, 0xe9,
        ];
        let r = InfoReplyIp4 {
            unicast: LocatorUdpV4 {
                address: Ipv4Addr::LOCALHOST,
                port: 7411,
            },
            multicast: Some(LocatorUdpV4 {
                address: Ipv4Addr::new(239, 255, 0, 1),
                port: 7401,
            }),
        };
        assert_eq!(parse(&le), Ok(Submessage::InfoReplyIp4(r)));
        assert_eq!(parse(&be), Ok(Submessage::InfoReplyIp4(r)));
        assert_eq!(emit(&r.into(), Endianness::Little), le.to_vec());
        assert_eq!(emit(&r.into(), Endianness::Big), be.to_vec());
        assert_eq!(
            Locator::from(r.unicast).as_udpv4(),
            Some("127.0.0.1:7411".parse().expect("addr"))
        );
        check_truncations(&le);
    }

    #[test]
    fn test_pad() {
        let le = [0x01, 0x01, 0x08, 0x00, 0, 0, 0, 0, 0, 0, 0, 0];
        let be = [0x01, 0x00, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0, 0];
        let pad = Pad { len: 8 };
        assert_eq!(parse(&le), Ok(Submessage::Pad(pad)));
        assert_eq!(parse(&be), Ok(Submessage::Pad(pad)));
        assert_eq!(emit(&pad.into(), Endianness::Little), le.to_vec());
        assert_eq!(emit(&pad.into(), Endianness::Big), be.to_vec());
        let big = Pad { len: 200 };
        assert_eq!(emit(&big.into(), Endianness::Little).len(), 204);
    }
}
