//! RTPS well-known ports (DDSI-RTPS 2.5 §9.6.1.1).
//!
//! A domain's participants find each other on ports computed from the domain id and, for
//! unicast, a participant id that is unique per host and domain:
//!
//! | port | formula |
//! |---|---|
//! | SPDP (metatraffic) multicast | `PB + DG·domain + d0` |
//! | metatraffic unicast | `PB + DG·domain + d1 + PG·participant` |
//! | user (default) multicast | `PB + DG·domain + d2` |
//! | user (default) unicast | `PB + DG·domain + d3 + PG·participant` |
//!
//! with the spec's defaults PB 7400, DG 250, PG 2, d0 0, d1 10, d2 1, d3 11. Every
//! computation is checked: a domain or participant id whose port would not fit in 16 bits is
//! an error, never a wrapped port.

use std::net::Ipv4Addr;

/// The default multicast group for SPDP and user multicast (§9.6.1.4.1).
pub const DEFAULT_MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);

/// The parameters of the port formulas (§9.6.1.1, Table 9.8).
///
/// [`PortMapping::DEFAULT`] holds the spec's values, which every DDS implementation uses
/// unless told otherwise; the others exist for deployments that move the port base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortMapping {
    /// `PB`, the port base.
    pub port_base: u16,
    /// `DG`, ports per domain.
    pub domain_id_gain: u16,
    /// `PG`, ports per participant.
    pub participant_id_gain: u16,
    /// `d0`, offset of the SPDP multicast port.
    pub offset_d0: u16,
    /// `d1`, offset of the metatraffic unicast port.
    pub offset_d1: u16,
    /// `d2`, offset of the user multicast port.
    pub offset_d2: u16,
    /// `d3`, offset of the user unicast port.
    pub offset_d3: u16,
}

/// Why a domain id or participant id has no ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PortError {
    /// The domain's multicast or unicast ports would exceed 65535.
    #[error(
        "domain id {domain_id} is out of range: with port base {port_base} the largest domain \
         id whose ports fit in 16 bits is {max}"
    )]
    DomainIdOutOfRange {
        /// The domain id asked for.
        domain_id: u32,
        /// The largest valid domain id.
        max: u32,
        /// The port base in use.
        port_base: u16,
    },
    /// The participant's unicast ports would exceed 65535.
    #[error(
        "participant id {participant_id} is out of range for domain {domain_id}: the largest \
         participant id whose ports fit in 16 bits is {max}"
    )]
    ParticipantIdOutOfRange {
        /// The domain id.
        domain_id: u32,
        /// The participant id asked for.
        participant_id: u32,
        /// The largest valid participant id in this domain.
        max: u32,
    },
}

/// The four ports of one participant in one domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ports {
    /// SPDP multicast port: where participants announce themselves.
    pub spdp_multicast: u16,
    /// Metatraffic unicast port: discovery traffic addressed to this participant.
    pub metatraffic_unicast: u16,
    /// User (default) multicast port: user data sent to multicast locators.
    pub user_multicast: u16,
    /// User (default) unicast port: user data addressed to this participant.
    pub user_unicast: u16,
}

impl Default for PortMapping {
    fn default() -> Self {
        PortMapping::DEFAULT
    }
}

impl PortMapping {
    /// The spec's values: PB 7400, DG 250, PG 2, d0 0, d1 10, d2 1, d3 11.
    pub const DEFAULT: PortMapping = PortMapping {
        port_base: 7400,
        domain_id_gain: 250,
        participant_id_gain: 2,
        offset_d0: 0,
        offset_d1: 10,
        offset_d2: 1,
        offset_d3: 11,
    };

    /// The largest domain id whose four ports (for participant id 0) fit in 16 bits: 232
    /// with the default mapping.
    pub fn max_domain_id(&self) -> u32 {
        let largest_offset = self
            .offset_d0
            .max(self.offset_d1)
            .max(self.offset_d2)
            .max(self.offset_d3);
        let room = u32::from(u16::MAX)
            .saturating_sub(u32::from(self.port_base) + u32::from(largest_offset));
        // A zero gain puts every domain on the same ports.
        room.checked_div(u32::from(self.domain_id_gain))
            .unwrap_or(u32::MAX)
    }

    /// The largest participant id whose unicast ports fit in 16 bits in `domain_id`.
    pub fn max_participant_id(&self, domain_id: u32) -> Result<u32, PortError> {
        let domain_base = self.domain_base(domain_id)?;
        let largest_offset = u32::from(self.offset_d1.max(self.offset_d3));
        let room = u32::from(u16::MAX).saturating_sub(domain_base + largest_offset);
        // A zero gain puts every participant on the same ports.
        Ok(room
            .checked_div(u32::from(self.participant_id_gain))
            .unwrap_or(u32::MAX))
    }

    /// `PB + DG·domain`, checked so that the domain's largest port fits in 16 bits.
    fn domain_base(&self, domain_id: u32) -> Result<u32, PortError> {
        let largest_offset = self
            .offset_d0
            .max(self.offset_d1)
            .max(self.offset_d2)
            .max(self.offset_d3);
        let base =
            u64::from(self.port_base) + u64::from(self.domain_id_gain) * u64::from(domain_id);
        match u32::try_from(base) {
            Ok(base) if u64::from(base) + u64::from(largest_offset) <= u64::from(u16::MAX) => {
                Ok(base)
            }
            _ => Err(PortError::DomainIdOutOfRange {
                domain_id,
                max: self.max_domain_id(),
                port_base: self.port_base,
            }),
        }
    }

    /// A port that the range checks of `domain_base` and `participant_base` have proven to fit
    /// in 16 bits.
    fn port(sum: u32) -> u16 {
        // INVARIANT: callers check the sum against 65535 first; saturate rather than panic
        // should that ever break.
        u16::try_from(sum).unwrap_or(u16::MAX)
    }

    /// The SPDP multicast port of a domain (`PB + DG·domain + d0`).
    pub fn spdp_multicast_port(&self, domain_id: u32) -> Result<u16, PortError> {
        Ok(Self::port(
            self.domain_base(domain_id)? + u32::from(self.offset_d0),
        ))
    }

    /// The user multicast port of a domain (`PB + DG·domain + d2`).
    pub fn user_multicast_port(&self, domain_id: u32) -> Result<u16, PortError> {
        Ok(Self::port(
            self.domain_base(domain_id)? + u32::from(self.offset_d2),
        ))
    }

    /// The metatraffic unicast port of a participant (`PB + DG·domain + d1 + PG·participant`).
    pub fn metatraffic_unicast_port(
        &self,
        domain_id: u32,
        participant_id: u32,
    ) -> Result<u16, PortError> {
        let base = self.participant_base(domain_id, participant_id)?;
        Ok(Self::port(base + u32::from(self.offset_d1)))
    }

    /// The user unicast port of a participant (`PB + DG·domain + d3 + PG·participant`).
    pub fn user_unicast_port(&self, domain_id: u32, participant_id: u32) -> Result<u16, PortError> {
        let base = self.participant_base(domain_id, participant_id)?;
        Ok(Self::port(base + u32::from(self.offset_d3)))
    }

    /// `PB + DG·domain + PG·participant`, both ids checked.
    fn participant_base(&self, domain_id: u32, participant_id: u32) -> Result<u32, PortError> {
        let domain_base = self.domain_base(domain_id)?;
        let largest_offset = self.offset_d1.max(self.offset_d3);
        let base = u64::from(domain_base)
            + u64::from(self.participant_id_gain) * u64::from(participant_id);
        match u32::try_from(base) {
            Ok(base) if u64::from(base) + u64::from(largest_offset) <= u64::from(u16::MAX) => {
                Ok(base)
            }
            _ => Err(PortError::ParticipantIdOutOfRange {
                domain_id,
                participant_id,
                max: self.max_participant_id(domain_id)?,
            }),
        }
    }

    /// All four ports of a participant.
    pub fn ports(&self, domain_id: u32, participant_id: u32) -> Result<Ports, PortError> {
        Ok(Ports {
            spdp_multicast: self.spdp_multicast_port(domain_id)?,
            metatraffic_unicast: self.metatraffic_unicast_port(domain_id, participant_id)?,
            user_multicast: self.user_multicast_port(domain_id)?,
            user_unicast: self.user_unicast_port(domain_id, participant_id)?,
        })
    }
}

impl Ports {
    /// The ports of a participant under the default mapping.
    pub fn new(domain_id: u32, participant_id: u32) -> Result<Ports, PortError> {
        PortMapping::DEFAULT.ports(domain_id, participant_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_0_participant_0() {
        let p = Ports::new(0, 0).unwrap();
        assert_eq!(
            p,
            Ports {
                spdp_multicast: 7400,
                metatraffic_unicast: 7410,
                user_multicast: 7401,
                user_unicast: 7411,
            }
        );
    }

    #[test]
    fn domain_1_participant_2() {
        let p = Ports::new(1, 2).unwrap();
        assert_eq!(
            p,
            Ports {
                spdp_multicast: 7650,
                metatraffic_unicast: 7664,
                user_multicast: 7651,
                user_unicast: 7665,
            }
        );
    }

    #[test]
    fn participant_ids_step_by_two() {
        let m = PortMapping::DEFAULT;
        assert_eq!(m.metatraffic_unicast_port(0, 1).unwrap(), 7412);
        assert_eq!(m.user_unicast_port(0, 1).unwrap(), 7413);
        assert_eq!(
            m.metatraffic_unicast_port(7, 3).unwrap(),
            7400 + 1750 + 10 + 6
        );
    }

    #[test]
    fn largest_domain_is_232() {
        let m = PortMapping::DEFAULT;
        assert_eq!(m.max_domain_id(), 232);
        let p = Ports::new(232, 0).unwrap();
        assert_eq!(p.spdp_multicast, 65400);
        assert_eq!(p.user_unicast, 65411);
        let err = Ports::new(233, 0).unwrap_err();
        assert_eq!(
            err,
            PortError::DomainIdOutOfRange {
                domain_id: 233,
                max: 232,
                port_base: 7400
            }
        );
        assert_eq!(
            err.to_string(),
            "domain id 233 is out of range: with port base 7400 the largest domain id whose \
             ports fit in 16 bits is 232"
        );
        assert!(Ports::new(u32::MAX, 0).is_err());
    }

    #[test]
    fn largest_participant_id_depends_on_domain() {
        let m = PortMapping::DEFAULT;
        // Domain 232: 65535 - 58400 - 11 = 7124 → 62 participants fit (62·2 = 124 ≤ 124).
        assert_eq!(m.max_participant_id(232).unwrap(), 62);
        assert_eq!(m.user_unicast_port(232, 62).unwrap(), 65535);
        let err = m.user_unicast_port(232, 63).unwrap_err();
        assert_eq!(
            err.to_string(),
            "participant id 63 is out of range for domain 232: the largest participant id \
             whose ports fit in 16 bits is 62"
        );
        assert_eq!(m.max_participant_id(0).unwrap(), (65535 - 7411) / 2);
        assert!(m.metatraffic_unicast_port(0, u32::MAX).is_err());
    }

    #[test]
    fn custom_port_base() {
        let m = PortMapping {
            port_base: 17400,
            ..PortMapping::DEFAULT
        };
        assert_eq!(m.spdp_multicast_port(0).unwrap(), 17400);
        assert_eq!(m.max_domain_id(), (65535 - 17411) / 250);
        let zero_gain = PortMapping {
            domain_id_gain: 0,
            participant_id_gain: 0,
            ..PortMapping::DEFAULT
        };
        assert_eq!(zero_gain.spdp_multicast_port(u32::MAX).unwrap(), 7400);
        assert_eq!(zero_gain.user_unicast_port(5, 1000).unwrap(), 7411);
    }

    #[test]
    fn a_port_base_with_no_room_has_no_domain() {
        let m = PortMapping {
            port_base: 65530,
            ..PortMapping::DEFAULT
        };
        assert_eq!(m.max_domain_id(), 0);
        assert!(m.spdp_multicast_port(0).is_err());
        assert!(m.ports(0, 0).is_err());
    }

    #[test]
    fn default_group() {
        assert_eq!(DEFAULT_MULTICAST_GROUP.to_string(), "239.255.0.1");
        assert!(DEFAULT_MULTICAST_GROUP.is_multicast());
    }
}
