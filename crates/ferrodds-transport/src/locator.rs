//! RTPS locators (DDSI-RTPS 2.5 §9.3.2, `Locator_t`) and their socket addresses.
//!
//! This crate depends on no other FerroDDS crate, so it keeps its own plain [`Locator`]
//! with the same three fields as the protocol crate's; the runtime converts between them
//! field by field.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};

/// A transport address: kind, port and a 16-byte address.
///
/// For UDPv4 the IPv4 address sits in the last four bytes and the first twelve are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Locator {
    /// `LOCATOR_KIND_*`.
    pub kind: i32,
    /// Port (the UDP port for the UDP kinds; a `u32` on the wire).
    pub port: u32,
    /// Address.
    pub address: [u8; 16],
}

/// Why a locator has no UDPv4 socket address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocatorError {
    /// The locator is not of kind UDPv4.
    #[error("locator kind {kind} is not UDPv4 (kind 1)")]
    NotUdpV4 {
        /// The kind found.
        kind: i32,
    },
    /// The port does not fit in 16 bits.
    #[error("locator port {port} does not fit a UDP port")]
    PortOutOfRange {
        /// The port found.
        port: u32,
    },
}

impl Locator {
    /// `LOCATOR_KIND_INVALID`.
    pub const KIND_INVALID: i32 = -1;
    /// `LOCATOR_KIND_RESERVED`.
    pub const KIND_RESERVED: i32 = 0;
    /// `LOCATOR_KIND_UDPv4`.
    pub const KIND_UDPV4: i32 = 1;
    /// `LOCATOR_KIND_UDPv6`.
    pub const KIND_UDPV6: i32 = 2;
    /// `LOCATOR_PORT_INVALID`.
    pub const PORT_INVALID: u32 = 0;
    /// `LOCATOR_INVALID`.
    pub const INVALID: Locator = Locator {
        kind: Locator::KIND_INVALID,
        port: Locator::PORT_INVALID,
        address: [0; 16],
    };

    /// A UDPv4 locator.
    pub const fn udpv4(address: Ipv4Addr, port: u16) -> Locator {
        let [a, b, c, d] = address.octets();
        Locator {
            kind: Locator::KIND_UDPV4,
            port: port as u32,
            address: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d],
        }
    }

    /// The socket address of a UDPv4 locator.
    ///
    /// The first twelve address bytes are not checked: the IPv4 address is the last four,
    /// whatever a peer put before them.
    pub fn to_udpv4(&self) -> Result<SocketAddrV4, LocatorError> {
        if self.kind != Locator::KIND_UDPV4 {
            return Err(LocatorError::NotUdpV4 { kind: self.kind });
        }
        let port = u16::try_from(self.port)
            .map_err(|_| LocatorError::PortOutOfRange { port: self.port })?;
        let [.., a, b, c, d] = self.address;
        Ok(SocketAddrV4::new(Ipv4Addr::new(a, b, c, d), port))
    }

    /// Whether this is a UDPv4 locator with a multicast address.
    pub fn is_multicast_udpv4(&self) -> bool {
        self.to_udpv4().is_ok_and(|a| a.ip().is_multicast())
    }
}

impl From<SocketAddrV4> for Locator {
    fn from(address: SocketAddrV4) -> Locator {
        Locator::udpv4(*address.ip(), address.port())
    }
}

impl TryFrom<Locator> for SocketAddrV4 {
    type Error = LocatorError;

    fn try_from(locator: Locator) -> Result<SocketAddrV4, LocatorError> {
        locator.to_udpv4()
    }
}

impl TryFrom<&Locator> for SocketAddrV4 {
    type Error = LocatorError;

    fn try_from(locator: &Locator) -> Result<SocketAddrV4, LocatorError> {
        locator.to_udpv4()
    }
}

impl fmt::Display for Locator {
    /// `udpv4:127.0.0.1:7410` for UDPv4, `kind 2:port 7410:<32 hex digits>` otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_udpv4() {
            Ok(address) => write!(f, "udpv4:{address}"),
            Err(_) => {
                write!(f, "kind {}:port {}:", self.kind, self.port)?;
                self.address.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_socket_address() {
        let l = Locator::from(SocketAddrV4::new(Ipv4Addr::new(192, 168, 1, 20), 7410));
        assert_eq!(l.kind, 1);
        assert_eq!(l.port, 7410);
        assert_eq!(
            l.address,
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 1, 20]
        );
        assert_eq!(l.to_string(), "udpv4:192.168.1.20:7410");
    }

    #[test]
    fn round_trip() {
        let a = SocketAddrV4::new(Ipv4Addr::new(239, 255, 0, 1), 7400);
        let l = Locator::from(a);
        assert_eq!(SocketAddrV4::try_from(l), Ok(a));
        assert_eq!(SocketAddrV4::try_from(&l), Ok(a));
        assert!(l.is_multicast_udpv4());
        assert!(!Locator::udpv4(Ipv4Addr::LOCALHOST, 1).is_multicast_udpv4());
    }

    #[test]
    fn rejects_other_kinds_and_large_ports() {
        let mut l = Locator::udpv4(Ipv4Addr::LOCALHOST, 7410);
        l.kind = Locator::KIND_UDPV6;
        assert_eq!(l.to_udpv4(), Err(LocatorError::NotUdpV4 { kind: 2 }));
        assert_eq!(
            Locator::INVALID.to_udpv4(),
            Err(LocatorError::NotUdpV4 { kind: -1 })
        );
        let mut l = Locator::udpv4(Ipv4Addr::LOCALHOST, 7410);
        l.port = 70000;
        assert_eq!(
            l.to_udpv4().unwrap_err().to_string(),
            "locator port 70000 does not fit a UDP port"
        );
    }

    #[test]
    fn display_of_other_kinds() {
        let l = Locator {
            kind: 2,
            port: 7410,
            address: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        };
        assert_eq!(
            l.to_string(),
            "kind 2:port 7410:fe800000000000000000000000000001"
        );
    }
}
