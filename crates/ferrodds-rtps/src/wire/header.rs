//! The 20-byte RTPS message header (DDSI-RTPS 2.5 §8.3.3.1, §9.4.4).
//!
//! ```text
//! 0               8               16              24             31
//! +---------------+---------------+---------------+---------------+
//! |      'R'      |      'T'      |      'P'      |      'S'      |
//! +---------------+---------------+---------------+---------------+
//! | version major | version minor |          vendorId             |
//! +---------------+---------------+---------------+---------------+
//! |                         guidPrefix (12 octets)                |
//! +---------------+---------------+---------------+---------------+
//! ```
//!
//! The header has no byte order of its own: every field is an octet array.

use super::{EmitError, GuidPrefix, MessageError, ProtocolVersion, VendorId};

/// The RTPS message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Protocol version of the sender.
    pub version: ProtocolVersion,
    /// Vendor of the sender.
    pub vendor_id: VendorId,
    /// GUID prefix of the sending participant.
    pub guid_prefix: GuidPrefix,
}

impl Header {
    /// Length on the wire.
    pub const LEN: usize = 20;
    /// The protocol id.
    pub const MAGIC: [u8; 4] = *b"RTPS";

    /// Parses the header at the start of `buf` (which may hold more: the submessages).
    pub fn parse(buf: &[u8]) -> Result<Header, MessageError> {
        let Some(fixed) = buf.first_chunk::<{ Header::LEN }>() else {
            return Err(Header::short_reason(buf));
        };
        let [m0, m1, m2, m3, major, minor, v0, v1, prefix @ ..] = *fixed;
        if [m0, m1, m2, m3] != Header::MAGIC {
            return Err(MessageError::NotRtps {
                found: [m0, m1, m2, m3],
            });
        }
        if major != 2 {
            return Err(MessageError::UnsupportedVersion { major, minor });
        }
        Ok(Header {
            version: ProtocolVersion { major, minor },
            vendor_id: VendorId([v0, v1]),
            guid_prefix: GuidPrefix(prefix),
        })
    }

    /// The error for a datagram shorter than a header.
    fn short_reason(buf: &[u8]) -> MessageError {
        // RTI Connext sends "RTPS" + version + vendor + "NDDSPING" (16 bytes) to
        // locators it has just learnt, to open NAT paths; seen in
        // interop_rti_ping_fastdds_pong.pcap. It is neither RTPS nor malformed.
        if buf.len() == 16 && buf.starts_with(&Header::MAGIC) && buf.ends_with(b"NDDSPING") {
            return MessageError::ConnextPing;
        }
        match buf.first_chunk::<4>() {
            Some(m) if *m != Header::MAGIC => MessageError::NotRtps { found: *m },
            _ => MessageError::TooShort { len: buf.len() },
        }
    }

    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        Header::LEN
    }

    /// Writes the header into the first 20 bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), EmitError> {
        let available = buf.len();
        let out = buf
            .first_chunk_mut::<{ Header::LEN }>()
            .ok_or(EmitError::BufferTooSmall {
                needed: Header::LEN,
                available,
            })?;
        let [m0, m1, m2, m3] = Header::MAGIC;
        let [v0, v1] = self.vendor_id.0;
        let mut bytes = [0u8; Header::LEN];
        let (fixed, prefix) = bytes.split_at_mut(8);
        fixed.copy_from_slice(&[
            m0,
            m1,
            m2,
            m3,
            self.version.major,
            self.version.minor,
            v0,
            v1,
        ]);
        prefix.copy_from_slice(&self.guid_prefix.0);
        *out = bytes;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Cyclone DDS 0.10.2 (cyclone_pingpong.pcap, frame 1):
    //   Magic: RTPS, Protocol version: 2.1, vendorId: 01.16 (Eclipse Foundation - Cyclone
    //   DDS; Wireshark prints the octets in decimal), guidPrefix: 011010f3cbd3b52e7c100d9c
    static BYTES: [u8; 20] = [
        0x52, 0x54, 0x50, 0x53, 0x02, 0x01, 0x01, 0x10, 0x01, 0x10, 0x10, 0xf3, 0xcb, 0xd3, 0xb5,
        0x2e, 0x7c, 0x10, 0x0d, 0x9c,
    ];

    fn repr() -> Header {
        Header {
            version: ProtocolVersion::V2_1,
            vendor_id: VendorId::CYCLONE_DDS,
            guid_prefix: GuidPrefix([
                0x01, 0x10, 0x10, 0xf3, 0xcb, 0xd3, 0xb5, 0x2e, 0x7c, 0x10, 0x0d, 0x9c,
            ]),
        }
    }

    #[test]
    fn test_parse() {
        assert_eq!(Header::parse(&BYTES), Ok(repr()));
    }

    #[test]
    fn test_emit() {
        let mut buf = [0u8; 20];
        repr().emit(&mut buf).expect("fits");
        assert_eq!(buf, BYTES);
        assert_eq!(
            repr().emit(&mut [0u8; 19]),
            Err(EmitError::BufferTooSmall {
                needed: 20,
                available: 19
            })
        );
    }

    #[test]
    fn test_errors() {
        assert_eq!(
            Header::parse(&BYTES[..19]),
            Err(MessageError::TooShort { len: 19 })
        );
        assert_eq!(Header::parse(&[]), Err(MessageError::TooShort { len: 0 }));
        let mut bad = BYTES;
        bad[3] = b'X';
        assert_eq!(
            Header::parse(&bad),
            Err(MessageError::NotRtps { found: *b"RTPX" })
        );
        let mut v1 = BYTES;
        v1[4] = 1;
        assert_eq!(
            Header::parse(&v1),
            Err(MessageError::UnsupportedVersion { major: 1, minor: 1 })
        );
        // Cyclone DDS's 1-byte wake-up datagram (cyclone_pingpong.pcap, frame 161).
        assert_eq!(Header::parse(&[0]), Err(MessageError::TooShort { len: 1 }));
    }

    #[test]
    fn test_connext_ping() {
        // interop_rti_ping_fastdds_pong.pcap, frame 7: RTPS 2.1, vendor 01.01, "NDDSPING".
        let ping = *b"RTPS\x02\x01\x01\x01NDDSPING";
        assert_eq!(Header::parse(&ping), Err(MessageError::ConnextPing));
    }
}
