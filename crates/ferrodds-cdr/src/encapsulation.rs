//! The 4-byte encapsulation header in front of every serialized payload (XTypes 7.6.3.1.2,
//! RTPS 10.2): a big-endian representation identifier and 16 bits of options, whose low two
//! bits count the padding bytes at the end of the payload.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::{Endianness, Extensibility, XcdrVersion};

/// A representation identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum RepresentationId {
    /// Plain XCDR1, big-endian.
    CdrBe = 0x0000,
    /// Plain XCDR1, little-endian.
    CdrLe = 0x0001,
    /// XCDR1 parameter list, big-endian.
    PlCdrBe = 0x0002,
    /// XCDR1 parameter list, little-endian.
    PlCdrLe = 0x0003,
    /// PLAIN_CDR2, big-endian.
    Cdr2Be = 0x0006,
    /// PLAIN_CDR2, little-endian.
    Cdr2Le = 0x0007,
    /// DELIMITED_CDR2, big-endian.
    DCdr2Be = 0x0008,
    /// DELIMITED_CDR2, little-endian.
    DCdr2Le = 0x0009,
    /// PL_CDR2, big-endian.
    PlCdr2Be = 0x000a,
    /// PL_CDR2, little-endian.
    PlCdr2Le = 0x000b,
}

impl RepresentationId {
    /// The identifier for a type of extensibility `ext` written as `version` in `endianness`.
    pub const fn for_type(
        version: XcdrVersion,
        ext: Extensibility,
        endianness: Endianness,
    ) -> Self {
        use RepresentationId::*;
        let le = matches!(endianness, Endianness::Little);
        match (version, ext, le) {
            (XcdrVersion::Xcdr1, Extensibility::Mutable, false) => PlCdrBe,
            (XcdrVersion::Xcdr1, Extensibility::Mutable, true) => PlCdrLe,
            (XcdrVersion::Xcdr1, _, false) => CdrBe,
            (XcdrVersion::Xcdr1, _, true) => CdrLe,
            (XcdrVersion::Xcdr2, Extensibility::Final, false) => Cdr2Be,
            (XcdrVersion::Xcdr2, Extensibility::Final, true) => Cdr2Le,
            (XcdrVersion::Xcdr2, Extensibility::Appendable, false) => DCdr2Be,
            (XcdrVersion::Xcdr2, Extensibility::Appendable, true) => DCdr2Le,
            (XcdrVersion::Xcdr2, Extensibility::Mutable, false) => PlCdr2Be,
            (XcdrVersion::Xcdr2, Extensibility::Mutable, true) => PlCdr2Le,
        }
    }

    /// Parses an identifier; `None` for ones this crate does not decode (XML, JSON, …).
    pub const fn from_u16(id: u16) -> Option<Self> {
        use RepresentationId::*;
        Some(match id {
            0x0000 => CdrBe,
            0x0001 => CdrLe,
            0x0002 => PlCdrBe,
            0x0003 => PlCdrLe,
            0x0006 => Cdr2Be,
            0x0007 => Cdr2Le,
            0x0008 => DCdr2Be,
            0x0009 => DCdr2Le,
            0x000a => PlCdr2Be,
            0x000b => PlCdr2Le,
            _ => return None,
        })
    }

    /// The XCDR version.
    pub const fn version(self) -> XcdrVersion {
        if (self as u16) < 0x0006 {
            XcdrVersion::Xcdr1
        } else {
            XcdrVersion::Xcdr2
        }
    }

    /// The byte order (odd identifiers are little-endian).
    pub const fn endianness(self) -> Endianness {
        if self as u16 & 1 == 1 {
            Endianness::Little
        } else {
            Endianness::Big
        }
    }
}

/// A parsed encapsulation header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncapsulationHeader {
    /// The representation.
    pub id: RepresentationId,
    /// The options field; its low two bits count trailing padding bytes.
    pub options: u16,
}

impl EncapsulationHeader {
    /// Size of the header on the wire.
    pub const LEN: usize = 4;

    /// Parses the first four bytes of a payload.
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let Some(&[a, b, c, d]) = bytes.get(..4) else {
            return Err(DecodeError::new(
                DecodeErrorKind::UnexpectedEnd {
                    what: "encapsulation header",
                    needed: 4,
                    remaining: bytes.len(),
                },
                0,
            ));
        };
        let raw = u16::from_be_bytes([a, b]);
        let id = RepresentationId::from_u16(raw)
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnsupportedEncapsulation(raw), 0))?;
        Ok(Self {
            id,
            options: u16::from_be_bytes([c, d]),
        })
    }

    /// The header's four bytes.
    pub const fn to_bytes(self) -> [u8; 4] {
        let id = (self.id as u16).to_be_bytes();
        let options = self.options.to_be_bytes();
        [id[0], id[1], options[0], options[1]]
    }

    /// Trailing padding bytes the options announce.
    pub const fn padding(self) -> usize {
        (self.options & 0x3) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_round_trip_and_say_version_and_order() {
        for raw in [0u16, 1, 2, 3, 6, 7, 8, 9, 10, 11] {
            let id = RepresentationId::from_u16(raw).unwrap();
            assert_eq!(id as u16, raw);
            assert_eq!(id.version() == XcdrVersion::Xcdr2, raw >= 6);
            assert_eq!(id.endianness() == Endianness::Little, raw % 2 == 1);
        }
        assert_eq!(RepresentationId::from_u16(4), None);
    }

    #[test]
    fn header_parses_and_emits() {
        let h = EncapsulationHeader::parse(&[0x00, 0x09, 0x00, 0x02, 0xff]).unwrap();
        assert_eq!(
            h,
            EncapsulationHeader {
                id: RepresentationId::DCdr2Le,
                options: 2
            }
        );
        assert_eq!(h.padding(), 2);
        assert_eq!(h.to_bytes(), [0x00, 0x09, 0x00, 0x02]);
        assert_eq!(
            EncapsulationHeader::parse(&[0x00, 0x04, 0, 0])
                .unwrap_err()
                .kind,
            DecodeErrorKind::UnsupportedEncapsulation(4)
        );
        assert!(EncapsulationHeader::parse(&[0x00]).is_err());
    }
}
