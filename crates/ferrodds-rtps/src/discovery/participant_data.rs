//! SPDP participant data: `SPDPdiscoveredParticipantData` (DDSI-RTPS 2.5 §8.5.3.2 and
//! §9.6.2.2), i.e. the DCPS `ParticipantBuiltinTopicData` plus the RTPS participant
//! proxy, as the serialized payload of a DATA from `ENTITYID_SPDP_BUILTIN_PARTICIPANT_WRITER`.
//!
//! | PID | field | absent means |
//! |---|---|---|
//! | `PARTICIPANT_GUID` 0x50 | [`ParticipantData::guid`] | required (`KEY_HASH` accepted instead) |
//! | `PROTOCOL_VERSION` 0x15 | [`ParticipantData::protocol_version`] | `None` |
//! | `VENDORID` 0x16 | [`ParticipantData::vendor_id`] | `None` |
//! | `EXPECTS_INLINE_QOS` 0x43 | [`ParticipantData::expects_inline_qos`] | false |
//! | `METATRAFFIC_UNICAST_LOCATOR` 0x32 (repeats) | [`ParticipantData::metatraffic_unicast_locators`] | empty |
//! | `METATRAFFIC_MULTICAST_LOCATOR` 0x33 (repeats) | [`ParticipantData::metatraffic_multicast_locators`] | empty |
//! | `DEFAULT_UNICAST_LOCATOR` 0x31 (repeats) | [`ParticipantData::default_unicast_locators`] | empty |
//! | `DEFAULT_MULTICAST_LOCATOR` 0x48 (repeats) | [`ParticipantData::default_multicast_locators`] | empty |
//! | `BUILTIN_ENDPOINT_SET` 0x58 (or the deprecated `PARTICIPANT_BUILTIN_ENDPOINTS` 0x44) | [`ParticipantData::available_builtin_endpoints`] | none |
//! | `BUILTIN_ENDPOINT_QOS` 0x77 | [`ParticipantData::builtin_endpoint_qos`] | 0 |
//! | `PARTICIPANT_LEASE_DURATION` 0x02 | [`ParticipantData::lease_duration`] | 100 s |
//! | `PARTICIPANT_MANUAL_LIVELINESS_COUNT` 0x34 | [`ParticipantData::manual_liveliness_count`] | 0 |
//! | `USER_DATA` 0x2c | [`ParticipantData::user_data`] | empty |
//! | `ENTITY_NAME` 0x62 | [`ParticipantData::entity_name`] | `None` |
//! | `DOMAIN_ID` 0x0f | [`ParticipantData::domain_id`] | `None`: the domain it was received on |
//! | `DOMAIN_TAG` 0x4014 (must understand) | [`ParticipantData::domain_tag`] | `""` |
//!
//! Everything else is skipped: the property list (process name, host name), the
//! deprecated IP address and port parameters, PID_LIVELINESS (which Cyclone DDS also
//! ignores in participant data) and every vendor-specific parameter (see
//! [`crate::discovery`]).

use super::scan::{self, FoundGuid, Handled};
use super::value::{ValueReader, ValueWriter};
use super::DiscoveryError;
use crate::qos::{Duration, UserData};
use crate::wire::parameter_list::pid;
use crate::wire::{
    EmitError, Endianness, EntityId, Guid, GuidPrefix, Locator, ParameterListBuilder,
    ProtocolVersion, VendorId,
};

/// `BuiltinEndpointSet_t` (DDSI-RTPS 2.5 §9.3.2, Table 9.4; DDS-XTypes 1.3 §7.6.3.3.4 for
/// the type lookup bits; DDS-Security 1.1 §7.4.1.4 for the secure ones): which builtin
/// endpoints a participant has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BuiltinEndpointSet(pub u32);

impl BuiltinEndpointSet {
    /// `DISC_BUILTIN_ENDPOINT_PARTICIPANT_ANNOUNCER` (SPDP writer).
    pub const PARTICIPANT_ANNOUNCER: u32 = 1 << 0;
    /// `DISC_BUILTIN_ENDPOINT_PARTICIPANT_DETECTOR` (SPDP reader).
    pub const PARTICIPANT_DETECTOR: u32 = 1 << 1;
    /// `DISC_BUILTIN_ENDPOINT_PUBLICATIONS_ANNOUNCER` (SEDP publications writer).
    pub const PUBLICATIONS_ANNOUNCER: u32 = 1 << 2;
    /// `DISC_BUILTIN_ENDPOINT_PUBLICATIONS_DETECTOR` (SEDP publications reader).
    pub const PUBLICATIONS_DETECTOR: u32 = 1 << 3;
    /// `DISC_BUILTIN_ENDPOINT_SUBSCRIPTIONS_ANNOUNCER` (SEDP subscriptions writer).
    pub const SUBSCRIPTIONS_ANNOUNCER: u32 = 1 << 4;
    /// `DISC_BUILTIN_ENDPOINT_SUBSCRIPTIONS_DETECTOR` (SEDP subscriptions reader).
    pub const SUBSCRIPTIONS_DETECTOR: u32 = 1 << 5;
    /// `DISC_BUILTIN_ENDPOINT_PARTICIPANT_PROXY_ANNOUNCER` (unused by current peers).
    pub const PARTICIPANT_PROXY_ANNOUNCER: u32 = 1 << 6;
    /// `DISC_BUILTIN_ENDPOINT_PARTICIPANT_PROXY_DETECTOR`.
    pub const PARTICIPANT_PROXY_DETECTOR: u32 = 1 << 7;
    /// `DISC_BUILTIN_ENDPOINT_PARTICIPANT_STATE_ANNOUNCER`.
    pub const PARTICIPANT_STATE_ANNOUNCER: u32 = 1 << 8;
    /// `DISC_BUILTIN_ENDPOINT_PARTICIPANT_STATE_DETECTOR`.
    pub const PARTICIPANT_STATE_DETECTOR: u32 = 1 << 9;
    /// `BUILTIN_ENDPOINT_PARTICIPANT_MESSAGE_DATA_WRITER` (writer liveliness).
    pub const PARTICIPANT_MESSAGE_DATA_WRITER: u32 = 1 << 10;
    /// `BUILTIN_ENDPOINT_PARTICIPANT_MESSAGE_DATA_READER`.
    pub const PARTICIPANT_MESSAGE_DATA_READER: u32 = 1 << 11;
    /// `BUILTIN_ENDPOINT_TYPELOOKUP_SERVICE_REQUEST_DATA_WRITER` (DDS-XTypes).
    pub const TYPE_LOOKUP_REQUEST_DATA_WRITER: u32 = 1 << 12;
    /// `BUILTIN_ENDPOINT_TYPELOOKUP_SERVICE_REQUEST_DATA_READER` (DDS-XTypes).
    pub const TYPE_LOOKUP_REQUEST_DATA_READER: u32 = 1 << 13;
    /// `BUILTIN_ENDPOINT_TYPELOOKUP_SERVICE_REPLY_DATA_WRITER` (DDS-XTypes).
    pub const TYPE_LOOKUP_REPLY_DATA_WRITER: u32 = 1 << 14;
    /// `BUILTIN_ENDPOINT_TYPELOOKUP_SERVICE_REPLY_DATA_READER` (DDS-XTypes).
    pub const TYPE_LOOKUP_REPLY_DATA_READER: u32 = 1 << 15;
    /// Bits 16 to 27: the DDS-Security secure builtin endpoints (secure SEDP, participant
    /// message, stateless and volatile message, secure SPDP).
    pub const SECURE_MASK: u32 = 0x0fff_0000;
    /// `DISC_BUILTIN_ENDPOINT_TOPICS_ANNOUNCER` (DDSI-RTPS 2.4+).
    pub const TOPICS_ANNOUNCER: u32 = 1 << 28;
    /// `DISC_BUILTIN_ENDPOINT_TOPICS_DETECTOR` (DDSI-RTPS 2.4+).
    pub const TOPICS_DETECTOR: u32 = 1 << 29;

    /// What FerroDDS's participants have: SPDP, SEDP publications and subscriptions, and
    /// the participant message endpoints.
    pub const FERRODDS: BuiltinEndpointSet = BuiltinEndpointSet(
        BuiltinEndpointSet::PARTICIPANT_ANNOUNCER
            | BuiltinEndpointSet::PARTICIPANT_DETECTOR
            | BuiltinEndpointSet::PUBLICATIONS_ANNOUNCER
            | BuiltinEndpointSet::PUBLICATIONS_DETECTOR
            | BuiltinEndpointSet::SUBSCRIPTIONS_ANNOUNCER
            | BuiltinEndpointSet::SUBSCRIPTIONS_DETECTOR
            | BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_WRITER
            | BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_READER,
    );

    /// True if every bit of `bits` is set.
    pub const fn contains(self, bits: u32) -> bool {
        self.0 & bits == bits
    }
}

/// `BuiltinEndpointQos_t` (DDSI-RTPS 2.5 §9.3.2, sent by RTI Connext).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BuiltinEndpointQos(pub u32);

impl BuiltinEndpointQos {
    /// `BEST_EFFORT_PARTICIPANT_MESSAGE_DATA_READER`: the participant message reader is
    /// best effort.
    pub const BEST_EFFORT_PARTICIPANT_MESSAGE_DATA_READER: u32 = 1 << 0;
}

/// A participant as SPDP announces it. See the module documentation for the parameter of
/// each field and its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParticipantData {
    /// The participant's RTPS protocol version.
    pub protocol_version: Option<ProtocolVersion>,
    /// The participant's vendor.
    pub vendor_id: Option<VendorId>,
    /// The participant GUID (its entity id is always `ENTITYID_PARTICIPANT`).
    pub guid: Guid,
    /// The participant's readers want inline QoS by default.
    pub expects_inline_qos: bool,
    /// Where to send SEDP and other builtin traffic (unicast).
    pub metatraffic_unicast_locators: Vec<Locator>,
    /// Where to send builtin traffic (multicast).
    pub metatraffic_multicast_locators: Vec<Locator>,
    /// Where to send user traffic to endpoints that announce no locators (unicast).
    pub default_unicast_locators: Vec<Locator>,
    /// Where to send user traffic to endpoints that announce no locators (multicast).
    pub default_multicast_locators: Vec<Locator>,
    /// The builtin endpoints the participant has.
    pub available_builtin_endpoints: BuiltinEndpointSet,
    /// QoS of the builtin endpoints.
    pub builtin_endpoint_qos: BuiltinEndpointQos,
    /// How long the participant counts as alive without a new announcement.
    pub lease_duration: Duration,
    /// `Count_t` of manual liveliness assertions.
    pub manual_liveliness_count: i32,
    /// The participant's USER_DATA QoS.
    pub user_data: UserData,
    /// The participant's name (ENTITY_NAME QoS).
    pub entity_name: Option<String>,
    /// The domain id, if sent.
    pub domain_id: Option<u32>,
    /// The domain tag (DDSI-RTPS 2.4+); participants with different tags do not talk.
    pub domain_tag: String,
}

impl ParticipantData {
    /// The default lease duration (DDSI-RTPS 2.5 §9.6.2.2: 100 s).
    pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(100);

    /// A FerroDDS participant with prefix `prefix`: protocol 2.5, vendor FerroDDS, the
    /// builtin endpoints of [`BuiltinEndpointSet::FERRODDS`], the default lease, no
    /// locators.
    pub fn new(prefix: GuidPrefix) -> ParticipantData {
        ParticipantData {
            protocol_version: Some(ProtocolVersion::V2_5),
            vendor_id: Some(VendorId::FERRODDS),
            guid: Guid::new(prefix, EntityId::PARTICIPANT),
            expects_inline_qos: false,
            metatraffic_unicast_locators: Vec::new(),
            metatraffic_multicast_locators: Vec::new(),
            default_unicast_locators: Vec::new(),
            default_multicast_locators: Vec::new(),
            available_builtin_endpoints: BuiltinEndpointSet::FERRODDS,
            builtin_endpoint_qos: BuiltinEndpointQos::default(),
            lease_duration: ParticipantData::DEFAULT_LEASE_DURATION,
            manual_liveliness_count: 0,
            user_data: UserData::default(),
            entity_name: None,
            domain_id: None,
            domain_tag: String::new(),
        }
    }

    /// Parses the serialized payload of an SPDP DATA (encapsulation header included,
    /// either byte order).
    pub fn parse(payload: &[u8]) -> Result<ParticipantData, DiscoveryError> {
        let mut data = ParticipantData::new(GuidPrefix::UNKNOWN);
        data.protocol_version = None;
        data.vendor_id = None;
        data.available_builtin_endpoints = BuiltinEndpointSet::default();
        let mut guid: Option<FoundGuid> = None;
        let mut key_hash: Option<FoundGuid> = None;
        let mut builtin_endpoint_set: Option<u32> = None;
        let mut participant_builtin_endpoints: Option<u32> = None;

        scan::scan(payload, |offset, p| {
            let e = p.endianness;
            match p.id {
                pid::PARTICIPANT_GUID => guid = Some(FoundGuid::read(offset, p)?),
                pid::KEY_HASH => key_hash = Some(FoundGuid::read(offset, p)?),
                pid::PROTOCOL_VERSION => {
                    data.protocol_version = Some(scan::read(offset, p, scan::protocol_version)?);
                }
                pid::VENDORID => data.vendor_id = Some(scan::read(offset, p, scan::vendor_id)?),
                pid::EXPECTS_INLINE_QOS => {
                    data.expects_inline_qos = scan::read(offset, p, ValueReader::bool)?;
                }
                pid::METATRAFFIC_UNICAST_LOCATOR
                | pid::METATRAFFIC_MULTICAST_LOCATOR
                | pid::DEFAULT_UNICAST_LOCATOR
                | pid::DEFAULT_MULTICAST_LOCATOR => {
                    let locator = scan::read(offset, p, |r| scan::locator(r, e))?;
                    let list = match p.id {
                        pid::METATRAFFIC_UNICAST_LOCATOR => &mut data.metatraffic_unicast_locators,
                        pid::METATRAFFIC_MULTICAST_LOCATOR => {
                            &mut data.metatraffic_multicast_locators
                        }
                        pid::DEFAULT_UNICAST_LOCATOR => &mut data.default_unicast_locators,
                        _ => &mut data.default_multicast_locators,
                    };
                    list.push(locator);
                    return Ok(Handled::Repeatable);
                }
                pid::BUILTIN_ENDPOINT_SET => {
                    builtin_endpoint_set = Some(scan::read(offset, p, ValueReader::u32)?);
                }
                pid::PARTICIPANT_BUILTIN_ENDPOINTS => {
                    participant_builtin_endpoints = Some(scan::read(offset, p, ValueReader::u32)?);
                }
                pid::BUILTIN_ENDPOINT_QOS => {
                    data.builtin_endpoint_qos =
                        BuiltinEndpointQos(scan::read(offset, p, ValueReader::u32)?);
                }
                pid::PARTICIPANT_LEASE_DURATION => {
                    data.lease_duration = scan::read(offset, p, ValueReader::duration)?;
                }
                pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT => {
                    data.manual_liveliness_count = scan::read(offset, p, ValueReader::i32)?;
                }
                pid::USER_DATA => {
                    data.user_data.value = scan::read(offset, p, ValueReader::octets)?
                }
                pid::ENTITY_NAME => {
                    data.entity_name = Some(scan::read(offset, p, ValueReader::string)?);
                }
                pid::DOMAIN_ID => data.domain_id = Some(scan::read(offset, p, ValueReader::u32)?),
                pid::DOMAIN_TAG => data.domain_tag = scan::read(offset, p, ValueReader::string)?,
                _ => return Ok(Handled::Skipped),
            }
            Ok(Handled::Once)
        })?;

        let found = scan::key_guid(guid, key_hash, pid::PARTICIPANT_GUID)?;
        if found.guid.entity_id != EntityId::PARTICIPANT {
            return Err(found.unexpected());
        }
        data.guid = found.guid;
        data.available_builtin_endpoints = BuiltinEndpointSet(
            builtin_endpoint_set
                .or(participant_builtin_endpoints)
                .unwrap_or(0),
        );
        Ok(data)
    }

    /// Appends the serialized payload (encapsulation header and parameter list) to
    /// `out`. Fields at their defaults are left out, except the lease duration; on error
    /// `out` is left as it was.
    pub fn emit(&self, out: &mut Vec<u8>, endianness: Endianness) -> Result<(), EmitError> {
        let start = out.len();
        let result = self.emit_inner(out, endianness);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    /// The serialized payload as a new vector.
    pub fn to_vec(&self, endianness: Endianness) -> Result<Vec<u8>, EmitError> {
        let mut out = Vec::new();
        self.emit(&mut out, endianness)?;
        Ok(out)
    }

    fn emit_inner(&self, out: &mut Vec<u8>, e: Endianness) -> Result<(), EmitError> {
        let mut b = ParameterListBuilder::encapsulated(out, e);
        if let Some(v) = self.protocol_version {
            b.push(pid::PROTOCOL_VERSION, &[v.major, v.minor])?;
        }
        if let Some(v) = self.vendor_id {
            b.push(pid::VENDORID, &v.0)?;
        }
        b.push_guid(pid::PARTICIPANT_GUID, self.guid)?;
        b.push_u32(
            pid::BUILTIN_ENDPOINT_SET,
            self.available_builtin_endpoints.0,
        )?;
        if self.builtin_endpoint_qos.0 != 0 {
            b.push_u32(pid::BUILTIN_ENDPOINT_QOS, self.builtin_endpoint_qos.0)?;
        }
        if let Some(id) = self.domain_id {
            b.push_u32(pid::DOMAIN_ID, id)?;
        }
        // Must-understand: peers without domain tags drop the whole announcement, as
        // they should when our tag is not the empty default.
        if !self.domain_tag.is_empty() {
            b.push_str(pid::DOMAIN_TAG, &self.domain_tag)?;
        }
        for (id, list) in [
            (pid::DEFAULT_UNICAST_LOCATOR, &self.default_unicast_locators),
            (
                pid::DEFAULT_MULTICAST_LOCATOR,
                &self.default_multicast_locators,
            ),
            (
                pid::METATRAFFIC_UNICAST_LOCATOR,
                &self.metatraffic_unicast_locators,
            ),
            (
                pid::METATRAFFIC_MULTICAST_LOCATOR,
                &self.metatraffic_multicast_locators,
            ),
        ] {
            for locator in list {
                b.push_locator(id, locator)?;
            }
        }
        let mut w = ValueWriter::new(e);
        w.duration(self.lease_duration);
        b.push(pid::PARTICIPANT_LEASE_DURATION, &w.into_bytes())?;
        if self.manual_liveliness_count != 0 {
            b.push_u32(
                pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT,
                self.manual_liveliness_count as u32,
            )?;
        }
        if self.expects_inline_qos {
            b.push(pid::EXPECTS_INLINE_QOS, &[1])?;
        }
        if !self.user_data.value.is_empty() {
            let mut w = ValueWriter::new(e);
            w.octets(&self.user_data.value);
            b.push(pid::USER_DATA, &w.into_bytes())?;
        }
        if let Some(name) = &self.entity_name {
            b.push_str(pid::ENTITY_NAME, name)?;
        }
        b.finish();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::ValueError;
    use std::net::Ipv4Addr;

    // A minimal participant, little endian, as `emit` writes it:
    //
    //   PL_CDR_LE
    //   PID_PROTOCOL_VERSION 2.5, PID_VENDORID 01.ff (FerroDDS)
    //   PID_PARTICIPANT_GUID 01020304 05060708 090a0b0c 000001c1
    //   PID_BUILTIN_ENDPOINT_SET 0x00000c3f
    //   PID_METATRAFFIC_UNICAST_LOCATOR UDPv4 127.0.0.1:7410
    //   PID_PARTICIPANT_LEASE_DURATION 20 s
    //   PID_SENTINEL
    static MINIMAL_LE: [u8; 92] = [
        0x00, 0x03, 0x00, 0x00, // PL_CDR_LE, options 0
        0x15, 0x00, 0x04, 0x00, 0x02, 0x05, 0x00, 0x00, // PID_PROTOCOL_VERSION
        0x16, 0x00, 0x04, 0x00, 0x01, 0xff, 0x00, 0x00, // PID_VENDORID
        0x50, 0x00, 0x10, 0x00, // PID_PARTICIPANT_GUID, 16 bytes
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x00, 0x00, 0x01,
        0xc1, //
        0x58, 0x00, 0x04, 0x00, 0x3f, 0x0c, 0x00, 0x00, // PID_BUILTIN_ENDPOINT_SET
        0x32, 0x00, 0x18, 0x00, // PID_METATRAFFIC_UNICAST_LOCATOR, 24 bytes
        0x01, 0x00, 0x00, 0x00, 0xf2, 0x1c, 0x00, 0x00, // UDPv4, port 7410
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00,
        0x01, // 127.0.0.1
        0x02, 0x00, 0x08, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // lease 20 s
        0x01, 0x00, 0x00, 0x00, // PID_SENTINEL
    ];

    // The same participant in big endian.
    static MINIMAL_BE: [u8; 92] = [
        0x00, 0x02, 0x00, 0x00, // PL_CDR_BE
        0x00, 0x15, 0x00, 0x04, 0x02, 0x05, 0x00, 0x00, //
        0x00, 0x16, 0x00, 0x04, 0x01, 0xff, 0x00, 0x00, //
        0x00, 0x50, 0x00, 0x10, //
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x00, 0x00, 0x01,
        0xc1, //
        0x00, 0x58, 0x00, 0x04, 0x00, 0x00, 0x0c, 0x3f, //
        0x00, 0x32, 0x00, 0x18, //
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x1c, 0xf2, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00,
        0x01, //
        0x00, 0x02, 0x00, 0x08, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x01, 0x00, 0x00,
    ];

    fn minimal() -> ParticipantData {
        let mut p = ParticipantData::new(GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
        p.metatraffic_unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7410)];
        p.lease_duration = Duration::from_secs(20);
        p
    }

    #[test]
    fn test_deconstruct() {
        for bytes in [&MINIMAL_LE[..], &MINIMAL_BE[..]] {
            let p = ParticipantData::parse(bytes).expect("valid");
            assert_eq!(p.protocol_version, Some(ProtocolVersion::V2_5));
            assert_eq!(p.vendor_id, Some(VendorId::FERRODDS));
            assert_eq!(p.guid.prefix.0, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
            assert_eq!(p.guid.entity_id, EntityId::PARTICIPANT);
            assert!(p
                .available_builtin_endpoints
                .contains(BuiltinEndpointSet::PUBLICATIONS_DETECTOR));
            assert_eq!(
                p.metatraffic_unicast_locators[0].as_udpv4(),
                Some(std::net::SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7410))
            );
            assert_eq!(p.lease_duration, Duration::from_secs(20));
            // Defaults for what is absent.
            assert!(!p.expects_inline_qos);
            assert_eq!(p.domain_id, None);
            assert_eq!(p.domain_tag, "");
            assert_eq!(p.entity_name, None);
            assert_eq!(p.manual_liveliness_count, 0);
        }
    }

    #[test]
    fn test_construct() {
        assert_eq!(
            minimal().to_vec(Endianness::Little).expect("emit"),
            MINIMAL_LE
        );
        assert_eq!(minimal().to_vec(Endianness::Big).expect("emit"), MINIMAL_BE);
    }

    #[test]
    fn test_parse() {
        assert_eq!(ParticipantData::parse(&MINIMAL_LE), Ok(minimal()));
        assert_eq!(ParticipantData::parse(&MINIMAL_BE), Ok(minimal()));
    }

    #[test]
    fn test_emit_and_parse_every_field() {
        let mut p = minimal();
        p.expects_inline_qos = true;
        p.metatraffic_unicast_locators
            .push(Locator::udpv4(Ipv4Addr::new(192, 0, 2, 7), 7412));
        p.metatraffic_multicast_locators =
            vec![Locator::udpv4(Ipv4Addr::new(239, 255, 0, 1), 7400)];
        p.default_unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7411)];
        p.default_multicast_locators = vec![Locator::udpv4(Ipv4Addr::new(239, 255, 0, 1), 7401)];
        p.builtin_endpoint_qos =
            BuiltinEndpointQos(BuiltinEndpointQos::BEST_EFFORT_PARTICIPANT_MESSAGE_DATA_READER);
        p.manual_liveliness_count = 3;
        p.user_data.value = b"ferro".to_vec();
        p.entity_name = Some("pinger".to_owned());
        p.domain_id = Some(42);
        p.domain_tag = "lab".to_owned();
        p.lease_duration = Duration::INFINITE;
        for e in [Endianness::Little, Endianness::Big] {
            let bytes = p.to_vec(e).expect("emit");
            assert_eq!(ParticipantData::parse(&bytes), Ok(p.clone()));
        }
    }

    /// Builds a payload from parameters (id, value), padding each value.
    fn payload(params: &[(u16, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = ParameterListBuilder::encapsulated(&mut out, Endianness::Little);
        for (id, value) in params {
            b.push(*id, value).expect("short");
        }
        b.finish();
        out
    }

    const GUID: [u8; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 1, 0xc1];

    #[test]
    fn vendor_specific_parameters_are_not_read() {
        // 0x8005 and 0x802c have the low bits of PID_TOPIC_NAME / PID_USER_DATA, and
        // 0x8007 is Cyclone DDS's participant version info; none is read, whatever the
        // vendor id in the data says.
        for vendor in [[0x01, 0x10], [0x01, 0x0f], [0x01, 0x01]] {
            let bytes = payload(&[
                (pid::VENDORID, &vendor),
                (pid::PARTICIPANT_GUID, &GUID),
                (0x8007, &[0, 0, 0, 0, 0x2c, 0, 0, 0]),
                // Connext's PID_PRODUCT_VERSION (6.1.2.21).
                (0x8000, &[6, 1, 2, 21]),
                (0x802c, &[1, 0, 0, 0, b'x']),
                (0x8062, &[2, 0, 0, 0, b'x', 0]),
                // Not even a vendor-specific id colliding with DOMAIN_ID counts.
                (0x800f, &[7, 0, 0, 0]),
            ]);
            let p = ParticipantData::parse(&bytes).expect("vendor parameters are skipped");
            assert!(p.user_data.value.is_empty());
            assert_eq!(p.entity_name, None);
            assert_eq!(p.domain_id, None);
        }
    }

    #[test]
    fn unknown_must_understand_parameter_rejects_the_sample() {
        // An unknown standard id with the must-understand bit.
        let bytes = payload(&[(pid::PARTICIPANT_GUID, &GUID), (0x4077, &[0; 4])]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::NotUnderstood {
                offset: 24,
                pid: 0x4077
            })
        );
        // A vendor-specific one with the must-understand bit, from any vendor.
        let bytes = payload(&[(pid::PARTICIPANT_GUID, &GUID), (0xc007, &[])]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::NotUnderstood {
                offset: 24,
                pid: 0xc007
            })
        );
        // PID_DOMAIN_TAG has the bit, and we understand it.
        let bytes = payload(&[
            (pid::PARTICIPANT_GUID, &GUID),
            (pid::DOMAIN_TAG, &[4, 0, 0, 0, b'l', b'a', b'b', 0]),
        ]);
        let p = ParticipantData::parse(&bytes).expect("understood");
        assert_eq!(p.domain_tag, "lab");
        // Unknown ids without the bit are skipped.
        let bytes = payload(&[(pid::PARTICIPANT_GUID, &GUID), (0x0077 + 0x100, &[0; 4])]);
        assert!(ParticipantData::parse(&bytes).is_ok());
    }

    #[test]
    fn malformed_samples() {
        // No GUID at all.
        let bytes = payload(&[(pid::DOMAIN_ID, &[0; 4])]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::MissingParameter {
                pid: pid::PARTICIPANT_GUID
            })
        );
        // A key hash stands in for a missing PID_PARTICIPANT_GUID.
        let bytes = payload(&[(pid::KEY_HASH, &GUID)]);
        assert_eq!(
            ParticipantData::parse(&bytes).map(|p| p.guid),
            Ok(Guid::from_bytes(GUID))
        );
        // A participant GUID whose entity id is a writer's.
        let mut writer = GUID;
        writer[15] = 0x02;
        let bytes = payload(&[(pid::PARTICIPANT_GUID, &writer)]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::UnexpectedEntityId {
                offset: 4,
                pid: pid::PARTICIPANT_GUID,
                entity_id: EntityId::from_u32(0x0000_0102)
            })
        );
        // A GUID too short.
        let bytes = payload(&[(pid::PARTICIPANT_GUID, &GUID[..12])]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::InvalidParameter {
                offset: 4,
                pid: pid::PARTICIPANT_GUID,
                reason: ValueError::Truncated {
                    needed: 16,
                    length: 12
                }
            })
        );
        // A negative lease.
        let bytes = payload(&[
            (pid::PARTICIPANT_GUID, &GUID),
            (
                pid::PARTICIPANT_LEASE_DURATION,
                &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
            ),
        ]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::InvalidParameter {
                offset: 24,
                pid: pid::PARTICIPANT_LEASE_DURATION,
                reason: ValueError::NegativeDuration { seconds: -1 }
            })
        );
        // The same GUID twice.
        let bytes = payload(&[
            (pid::PARTICIPANT_GUID, &GUID),
            (pid::PARTICIPANT_GUID, &GUID),
        ]);
        assert_eq!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::DuplicateParameter {
                offset: 24,
                pid: pid::PARTICIPANT_GUID
            })
        );
        // A user data sequence longer than its parameter.
        let bytes = payload(&[
            (pid::PARTICIPANT_GUID, &GUID),
            (pid::USER_DATA, &[0xff, 0xff, 0xff, 0x0f, 1, 2, 3, 4]),
        ]);
        assert!(matches!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::InvalidParameter {
                pid: pid::USER_DATA,
                reason: ValueError::CountTooLarge { .. },
                ..
            })
        ));
        // Not a parameter list.
        assert!(matches!(
            ParticipantData::parse(&[0, 1, 0, 0]),
            Err(DiscoveryError::ParameterList(_))
        ));
        assert!(matches!(
            ParticipantData::parse(&MINIMAL_LE[..40]),
            Err(DiscoveryError::ParameterList(_))
        ));
    }

    #[test]
    fn locators_repeat_and_the_deprecated_endpoint_set_is_read() {
        let loc = Locator::udpv4(Ipv4Addr::LOCALHOST, 7411).to_bytes(Endianness::Little);
        let loc2 = Locator::udpv4(Ipv4Addr::LOCALHOST, 7413).to_bytes(Endianness::Little);
        let bytes = payload(&[
            (pid::PARTICIPANT_GUID, &GUID),
            (pid::DEFAULT_UNICAST_LOCATOR, &loc),
            (pid::DEFAULT_UNICAST_LOCATOR, &loc2),
            (pid::PARTICIPANT_BUILTIN_ENDPOINTS, &[0x3f, 0, 0, 0]),
            (pid::EXPECTS_INLINE_QOS, &[1, 0, 0, 0]),
        ]);
        let p = ParticipantData::parse(&bytes).expect("valid");
        assert_eq!(p.default_unicast_locators.len(), 2);
        assert_eq!(p.available_builtin_endpoints, BuiltinEndpointSet(0x3f));
        assert!(p.expects_inline_qos);
        // A truncated locator.
        let bytes = payload(&[
            (pid::PARTICIPANT_GUID, &GUID),
            (pid::DEFAULT_UNICAST_LOCATOR, &loc[..20]),
        ]);
        assert!(matches!(
            ParticipantData::parse(&bytes),
            Err(DiscoveryError::InvalidParameter {
                offset: 24,
                pid: pid::DEFAULT_UNICAST_LOCATOR,
                ..
            })
        ));
    }
}
