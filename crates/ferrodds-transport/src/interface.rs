//! Network interfaces: listing the host's IPv4 interfaces and choosing the one to use.
//!
//! Interfaces are listed with `getifaddrs(3)` through `nix::ifaddrs`. We use `nix` rather
//! than `if-addrs` because `nix` reports the interface flags (`IFF_UP`, `IFF_LOOPBACK`,
//! `IFF_MULTICAST`), which automatic selection and the multicast decision need, and
//! `if-addrs` does not; `nix` is also the most used and best kept safe wrapper of these
//! calls, and the receive path uses it too (`recvmsg` into a caller's `&mut [u8]` without
//! `unsafe`). Nothing here is hand-rolled `libc`.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use nix::net::if_::InterfaceFlags;

/// One IPv4 address of a network interface (an interface with two addresses is listed
/// twice).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NetworkInterface {
    /// Interface name, as `ip link` shows it (`lo`, `eth0`).
    pub name: String,
    /// Its IPv4 address.
    pub address: Ipv4Addr,
    /// Its netmask, when the system reports one.
    pub netmask: Option<Ipv4Addr>,
    /// `IFF_UP`: administratively up.
    pub up: bool,
    /// `IFF_LOOPBACK`.
    pub loopback: bool,
    /// `IFF_MULTICAST`: the interface says it supports multicast. Linux leaves it off for
    /// `lo` until `ip link set lo multicast on`.
    pub multicast: bool,
}

/// Which interface a participant uses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum InterfaceSelector {
    /// The first interface that is up, not loopback and multicast-capable, in the order the
    /// system lists them; failing that the first loopback interface that is up.
    #[default]
    Auto,
    /// The interface with this name (its first IPv4 address).
    Name(String),
    /// The interface that holds this address.
    Address(Ipv4Addr),
}

/// Why no interface could be chosen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InterfaceError {
    /// `getifaddrs` failed.
    #[error("cannot list the network interfaces: {0}")]
    List(#[source] std::io::Error),
    /// No interface has this name (or it has no IPv4 address).
    #[error("no network interface named `{name}` with an IPv4 address; interfaces: {}", list(.available))]
    NoSuchName {
        /// The name asked for.
        name: String,
        /// The interfaces there are.
        available: Vec<NetworkInterface>,
    },
    /// No interface holds this address.
    #[error("no network interface has the address {address}; interfaces: {}", list(.available))]
    NoSuchAddress {
        /// The address asked for.
        address: Ipv4Addr,
        /// The interfaces there are.
        available: Vec<NetworkInterface>,
    },
    /// Automatic selection found no interface that is up.
    #[error("no network interface is up with an IPv4 address; interfaces: {}", list(.available))]
    NoneUsable {
        /// The interfaces there are.
        available: Vec<NetworkInterface>,
    },
}

fn list(interfaces: &[NetworkInterface]) -> String {
    if interfaces.is_empty() {
        return "none".to_owned();
    }
    interfaces
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for NetworkInterface {
    /// `eth0 (192.0.2.2, up, multicast)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.name, self.address)?;
        for (set, word) in [
            (self.up, "up"),
            (!self.up, "down"),
            (self.loopback, "loopback"),
            (self.multicast, "multicast"),
        ] {
            if set {
                write!(f, ", {word}")?;
            }
        }
        f.write_str(")")
    }
}

/// The host's IPv4 interface addresses, in the order `getifaddrs` gives them.
pub fn list_interfaces() -> Result<Vec<NetworkInterface>, InterfaceError> {
    let addresses =
        nix::ifaddrs::getifaddrs().map_err(|e| InterfaceError::List(std::io::Error::from(e)))?;
    Ok(addresses
        .filter_map(|a| {
            let address = a.address.as_ref()?.as_sockaddr_in()?.ip();
            let netmask = a
                .netmask
                .as_ref()
                .and_then(|m| m.as_sockaddr_in())
                .map(|m| m.ip());
            Some(NetworkInterface {
                name: a.interface_name,
                address,
                netmask,
                up: a.flags.contains(InterfaceFlags::IFF_UP),
                loopback: a.flags.contains(InterfaceFlags::IFF_LOOPBACK),
                multicast: a.flags.contains(InterfaceFlags::IFF_MULTICAST),
            })
        })
        .collect())
}

impl InterfaceSelector {
    /// The interface this selector picks on this host now.
    pub fn resolve(&self) -> Result<NetworkInterface, InterfaceError> {
        self.select_from(list_interfaces()?)
    }

    /// The interface this selector picks from `interfaces` (as [`list_interfaces`] gives
    /// them).
    pub fn select_from(
        &self,
        interfaces: Vec<NetworkInterface>,
    ) -> Result<NetworkInterface, InterfaceError> {
        let found = match self {
            InterfaceSelector::Auto => interfaces
                .iter()
                .find(|i| i.up && !i.loopback && i.multicast)
                .or_else(|| interfaces.iter().find(|i| i.up && i.loopback)),
            InterfaceSelector::Name(name) => interfaces.iter().find(|i| i.name == *name),
            InterfaceSelector::Address(address) => {
                interfaces.iter().find(|i| i.address == *address)
            }
        };
        if let Some(found) = found {
            return Ok(found.clone());
        }
        Err(match self {
            InterfaceSelector::Auto => InterfaceError::NoneUsable {
                available: interfaces,
            },
            InterfaceSelector::Name(name) => InterfaceError::NoSuchName {
                name: name.clone(),
                available: interfaces,
            },
            InterfaceSelector::Address(address) => InterfaceError::NoSuchAddress {
                address: *address,
                available: interfaces,
            },
        })
    }
}

impl FromStr for InterfaceSelector {
    type Err = std::convert::Infallible;

    /// `auto` (or an empty string), an IPv4 address, or else an interface name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Ok(if s.is_empty() || s.eq_ignore_ascii_case("auto") {
            InterfaceSelector::Auto
        } else if let Ok(address) = s.parse::<Ipv4Addr>() {
            InterfaceSelector::Address(address)
        } else {
            InterfaceSelector::Name(s.to_owned())
        })
    }
}

impl fmt::Display for InterfaceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterfaceSelector::Auto => f.write_str("auto"),
            InterfaceSelector::Name(name) => f.write_str(name),
            InterfaceSelector::Address(address) => write!(f, "{address}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(
        name: &str,
        address: [u8; 4],
        loopback: bool,
        multicast: bool,
    ) -> NetworkInterface {
        NetworkInterface {
            name: name.to_owned(),
            address: Ipv4Addr::from(address),
            netmask: None,
            up: true,
            loopback,
            multicast,
        }
    }

    fn host() -> Vec<NetworkInterface> {
        vec![
            interface("lo", [127, 0, 0, 1], true, false),
            NetworkInterface {
                up: false,
                ..interface("eth1", [10, 0, 0, 1], false, true)
            },
            interface("tun0", [10, 8, 0, 1], false, false),
            interface("eth0", [192, 0, 2, 2], false, true),
            interface("eth0", [192, 0, 2, 3], false, true),
        ]
    }

    #[test]
    fn auto_prefers_an_up_multicast_non_loopback_interface() {
        let chosen = InterfaceSelector::Auto.select_from(host()).unwrap();
        assert_eq!(chosen.name, "eth0");
        assert_eq!(chosen.address, Ipv4Addr::new(192, 0, 2, 2));
    }

    #[test]
    fn auto_falls_back_to_loopback() {
        let only_lo = vec![
            interface("tun0", [10, 8, 0, 1], false, false),
            interface("lo", [127, 0, 0, 1], true, false),
        ];
        assert_eq!(
            InterfaceSelector::Auto.select_from(only_lo).unwrap().name,
            "lo"
        );
        let err = InterfaceSelector::Auto
            .select_from(vec![NetworkInterface {
                up: false,
                ..interface("lo", [127, 0, 0, 1], true, false)
            }])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no network interface is up with an IPv4 address; interfaces: lo (127.0.0.1, down, \
             loopback)"
        );
    }

    #[test]
    fn by_name_and_by_address() {
        let by_name = InterfaceSelector::Name("eth0".into())
            .select_from(host())
            .unwrap();
        assert_eq!(by_name.address, Ipv4Addr::new(192, 0, 2, 2));
        let by_address = InterfaceSelector::Address(Ipv4Addr::new(192, 0, 2, 3))
            .select_from(host())
            .unwrap();
        assert_eq!(by_address.name, "eth0");
        let err = InterfaceSelector::Name("wlan0".into())
            .select_from(host())
            .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "no network interface named `wlan0` with an IPv4 address; interfaces: lo \
                 (127.0.0.1, up, loopback), eth1 (10.0.0.1, down, multicast)"
            ),
            "{err}"
        );
        let err = InterfaceSelector::Address(Ipv4Addr::new(1, 2, 3, 4))
            .select_from(vec![])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no network interface has the address 1.2.3.4; interfaces: none"
        );
    }

    #[test]
    fn parse_selector() {
        let parse = |s: &str| s.parse::<InterfaceSelector>().unwrap();
        assert_eq!(parse("auto"), InterfaceSelector::Auto);
        assert_eq!(parse(""), InterfaceSelector::Auto);
        assert_eq!(parse("lo"), InterfaceSelector::Name("lo".into()));
        assert_eq!(
            parse("127.0.0.1"),
            InterfaceSelector::Address(Ipv4Addr::LOCALHOST)
        );
        assert_eq!(parse(" eth0 ").to_string(), "eth0");
    }

    #[test]
    fn this_host_has_loopback() {
        let all = list_interfaces().unwrap();
        let lo = all
            .iter()
            .find(|i| i.address == Ipv4Addr::LOCALHOST)
            .expect("127.0.0.1 is on some interface");
        assert!(lo.loopback, "{lo}");
        let chosen = InterfaceSelector::Name(lo.name.clone()).resolve().unwrap();
        assert_eq!(chosen.address, Ipv4Addr::LOCALHOST);
        assert_eq!(chosen.netmask, Some(Ipv4Addr::new(255, 0, 0, 0)));
    }
}
