//! SEDP endpoint data: `DiscoveredWriterData` and `DiscoveredReaderData` (DDSI-RTPS 2.5
//! §8.5.4.2 and §9.6.2.2), i.e. the DCPS `PublicationBuiltinTopicData` and
//! `SubscriptionBuiltinTopicData` plus the RTPS endpoint proxy, as the serialized payload
//! of a DATA from `ENTITYID_SEDP_BUILTIN_PUBLICATIONS_WRITER` (0x000003c2) or
//! `ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_WRITER` (0x000004c2).
//!
//! | PID | field | absent means |
//! |---|---|---|
//! | `ENDPOINT_GUID` 0x5a | [`EndpointData::guid`] | required (`KEY_HASH` accepted instead) |
//! | `PARTICIPANT_GUID` 0x50 | [`EndpointData::participant_guid`] | the endpoint GUID's prefix with `ENTITYID_PARTICIPANT` |
//! | `TOPIC_NAME` 0x05 | [`EndpointData::topic_name`] | required |
//! | `TYPE_NAME` 0x07 | [`EndpointData::type_name`] | required |
//! | the QoS ids (see [`crate::discovery`]) | [`EndpointData::qos`] | the spec's default for a writer or a reader |
//! | `UNICAST_LOCATOR` 0x2f (repeats) | [`EndpointData::unicast_locators`] | empty: use the participant's default locators |
//! | `MULTICAST_LOCATOR` 0x30 (repeats) | [`EndpointData::multicast_locators`] | empty |
//! | `EXPECTS_INLINE_QOS` 0x43 | [`EndpointData::expects_inline_qos`] | false |
//! | `PROTOCOL_VERSION` 0x15, `VENDORID` 0x16 | [`EndpointData::protocol_version`], [`EndpointData::vendor_id`] | `None` |
//! | `ENTITY_NAME` 0x62 | [`EndpointData::entity_name`] | `None` |
//! | `GROUP_ENTITYID` 0x53 | [`EndpointData::group_entity_id`] | `None` |
//! | `TYPE_MAX_SIZE_SERIALIZED` 0x60 | [`EndpointData::type_max_size_serialized`] | `None` |
//! | `TYPE_INFORMATION` 0x75 | [`EndpointData::type_information`], raw bytes, never parsed | `None` |
//!
//! `KEY_HASH` (0x70) inside the payload — Fast DDS puts the endpoint GUID there — only
//! stands in for a missing `ENDPOINT_GUID`. Everything else is skipped: the property list,
//! the content filter, the deprecated queue sizes Connext still sends (0x0013, 0x0018),
//! and every vendor-specific parameter.

use super::content_filter::ContentFilterProperty;
use super::qos_parameters;
use super::scan::{self, FoundGuid, Handled};
use super::value::ValueReader;
use super::DiscoveryError;
use crate::payload::pid_reads_channels;
use crate::qos::EndpointQos;
use crate::wire::parameter_list::pid;
use crate::wire::{
    EmitError, Endianness, EntityId, Guid, Locator, ParameterListBuilder, ProtocolVersion, VendorId,
};

/// Which side of a topic an endpoint is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndpointKind {
    /// A DataWriter (announced by the SEDP publications writer).
    Writer,
    /// A DataReader (announced by the SEDP subscriptions writer).
    Reader,
}

impl EndpointKind {
    /// True if `entity_id` has a kind of this side: writer kinds 0x02 (with key) and 0x03
    /// (no key), reader kinds 0x07 (with key) and 0x04 (no key), for user, builtin and
    /// vendor-specific entities alike (DDSI-RTPS 2.5 §9.3.1.2, Table 9.1).
    pub const fn matches(self, entity_id: EntityId) -> bool {
        let kind = entity_id.kind() & 0x3f;
        match self {
            EndpointKind::Writer => kind == 0x02 || kind == 0x03,
            EndpointKind::Reader => kind == 0x04 || kind == 0x07,
        }
    }
}

/// What SEDP says about one endpoint: the fields shared by writers and readers. See the
/// module documentation for the parameter of each field and its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointData {
    /// The endpoint's GUID.
    pub guid: Guid,
    /// Its participant's GUID.
    pub participant_guid: Guid,
    /// The topic name.
    pub topic_name: String,
    /// The registered type name.
    pub type_name: String,
    /// The endpoint's QoS (including its publisher's or subscriber's presentation,
    /// partition and group data).
    pub qos: EndpointQos,
    /// Unicast locators of the endpoint; empty means the participant's defaults.
    pub unicast_locators: Vec<Locator>,
    /// Multicast locators of the endpoint.
    pub multicast_locators: Vec<Locator>,
    /// The reader wants inline QoS with every DATA (readers only).
    pub expects_inline_qos: bool,
    /// Protocol version of the announcing participant.
    pub protocol_version: Option<ProtocolVersion>,
    /// Vendor of the announcing participant.
    pub vendor_id: Option<VendorId>,
    /// The endpoint's name (ENTITY_NAME QoS).
    pub entity_name: Option<String>,
    /// The entity id of its publisher or subscriber (sent by RTI Connext).
    pub group_entity_id: Option<EntityId>,
    /// The largest serialized sample (sent by Fast DDS and RTI Connext for writers).
    pub type_max_size_serialized: Option<u32>,
    /// `PID_TYPE_INFORMATION` (DDS-XTypes 1.3 §7.6.3.2.2; Cyclone DDS ≥ 0.10 sends it),
    /// exactly as received: it is kept for a later type lookup and never parsed here.
    pub type_information: Option<Vec<u8>>,
    /// The reader's content filter (`PID_CONTENT_FILTER_PROPERTY`, readers of a
    /// content-filtered topic only).
    pub content_filter: Option<ContentFilterProperty>,
    /// A FerroDDS reader that takes samples from the sample channels of writers on its
    /// host: the host's address ([`crate::payload::pid_reads_channels`], read only when the
    /// announcement is FerroDDS's).
    pub reads_channels: Option<[u8; 16]>,
}

impl EndpointData {
    /// Endpoint `guid` on `topic_name` of `type_name`, with `qos`, no locators (the
    /// participant's defaults apply), protocol 2.5 and vendor FerroDDS.
    pub fn new(guid: Guid, topic_name: &str, type_name: &str, qos: EndpointQos) -> EndpointData {
        EndpointData {
            guid,
            participant_guid: Guid::new(guid.prefix, EntityId::PARTICIPANT),
            topic_name: topic_name.to_owned(),
            type_name: type_name.to_owned(),
            qos,
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            expects_inline_qos: false,
            protocol_version: Some(ProtocolVersion::V2_5),
            vendor_id: Some(VendorId::FERRODDS),
            entity_name: None,
            group_entity_id: None,
            type_max_size_serialized: None,
            type_information: None,
            content_filter: None,
            reads_channels: None,
        }
    }

    fn parse(payload: &[u8], kind: EndpointKind) -> Result<EndpointData, DiscoveryError> {
        let qos = match kind {
            EndpointKind::Writer => EndpointQos::writer_default(),
            EndpointKind::Reader => EndpointQos::reader_default(),
        };
        let mut data = EndpointData::new(Guid::UNKNOWN, "", "", qos);
        data.protocol_version = None;
        data.vendor_id = None;
        let mut guid: Option<FoundGuid> = None;
        let mut key_hash: Option<FoundGuid> = None;
        let mut participant_guid: Option<FoundGuid> = None;
        let mut topic_name: Option<String> = None;
        let mut type_name: Option<String> = None;
        let mut reads_channels = None;

        scan::scan(payload, |offset, p| {
            let e = p.endianness;
            match p.id {
                pid::ENDPOINT_GUID => guid = Some(FoundGuid::read(offset, p)?),
                pid::KEY_HASH => key_hash = Some(FoundGuid::read(offset, p)?),
                pid::PARTICIPANT_GUID => participant_guid = Some(FoundGuid::read(offset, p)?),
                pid::TOPIC_NAME => topic_name = Some(scan::read(offset, p, ValueReader::string)?),
                pid::TYPE_NAME => type_name = Some(scan::read(offset, p, ValueReader::string)?),
                pid::UNICAST_LOCATOR | pid::MULTICAST_LOCATOR => {
                    let locator = scan::read(offset, p, |r| scan::locator(r, e))?;
                    if p.id == pid::UNICAST_LOCATOR {
                        data.unicast_locators.push(locator);
                    } else {
                        data.multicast_locators.push(locator);
                    }
                    return Ok(Handled::Repeatable);
                }
                pid::EXPECTS_INLINE_QOS => {
                    data.expects_inline_qos = scan::read(offset, p, ValueReader::bool)?;
                }
                pid::PROTOCOL_VERSION => {
                    data.protocol_version = Some(scan::read(offset, p, scan::protocol_version)?);
                }
                pid::VENDORID => data.vendor_id = Some(scan::read(offset, p, scan::vendor_id)?),
                pid::ENTITY_NAME => {
                    data.entity_name = Some(scan::read(offset, p, ValueReader::string)?);
                }
                pid::GROUP_ENTITYID => {
                    data.group_entity_id = Some(scan::read(offset, p, ValueReader::entity_id)?);
                }
                pid::TYPE_MAX_SIZE_SERIALIZED => {
                    data.type_max_size_serialized = Some(scan::read(offset, p, ValueReader::u32)?);
                }
                // Kept as bytes and never a reason to reject the sample: not even a
                // repeated one (the first is kept).
                pid::TYPE_INFORMATION => {
                    if data.type_information.is_none() {
                        data.type_information = Some(p.value.to_vec());
                    }
                    return Ok(Handled::Repeatable);
                }
                pid::CONTENT_FILTER_PROPERTY if kind == EndpointKind::Reader => {
                    data.content_filter = Some(scan::read(offset, p, ContentFilterProperty::read)?);
                }
                // Participant-level; understood (it has the must-understand bit), not used.
                pid::DOMAIN_TAG => return Ok(Handled::Ignored),
                // Vendor-specific: what it means is known once the vendor is (below).
                id if id == pid_reads_channels() && kind == EndpointKind::Reader => {
                    reads_channels = <[u8; 16]>::try_from(p.value).ok();
                    return Ok(Handled::Ignored);
                }
                id if qos_parameters::is_qos_pid(id) => {
                    qos_parameters::apply(&mut data.qos, p)
                        .map_err(|reason| scan::invalid(offset, id, reason))?;
                }
                _ => return Ok(Handled::Skipped),
            }
            Ok(Handled::Once)
        })?;

        let found = scan::key_guid(guid, key_hash, pid::ENDPOINT_GUID)?;
        if !kind.matches(found.guid.entity_id) {
            return Err(found.unexpected());
        }
        data.guid = found.guid;
        data.reads_channels = reads_channels.filter(|_| data.vendor_id == Some(VendorId::FERRODDS));
        data.participant_guid = match participant_guid {
            Some(p) if p.guid.entity_id != EntityId::PARTICIPANT => return Err(p.unexpected()),
            Some(p) => p.guid,
            None => Guid::new(found.guid.prefix, EntityId::PARTICIPANT),
        };
        data.topic_name = topic_name.ok_or(DiscoveryError::MissingParameter {
            pid: pid::TOPIC_NAME,
        })?;
        data.type_name = type_name.ok_or(DiscoveryError::MissingParameter {
            pid: pid::TYPE_NAME,
        })?;
        Ok(data)
    }

    fn emit(&self, out: &mut Vec<u8>, e: Endianness) -> Result<(), EmitError> {
        let start = out.len();
        let result = self.emit_inner(out, e);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn emit_inner(&self, out: &mut Vec<u8>, e: Endianness) -> Result<(), EmitError> {
        let mut b = ParameterListBuilder::encapsulated(out, e);
        b.push_guid(pid::ENDPOINT_GUID, self.guid)?;
        b.push_guid(pid::PARTICIPANT_GUID, self.participant_guid)?;
        b.push_str(pid::TOPIC_NAME, &self.topic_name)?;
        b.push_str(pid::TYPE_NAME, &self.type_name)?;
        if let Some(v) = self.protocol_version {
            b.push(pid::PROTOCOL_VERSION, &[v.major, v.minor])?;
        }
        if let Some(v) = self.vendor_id {
            b.push(pid::VENDORID, &v.0)?;
        }
        for locator in &self.unicast_locators {
            b.push_locator(pid::UNICAST_LOCATOR, locator)?;
        }
        for locator in &self.multicast_locators {
            b.push_locator(pid::MULTICAST_LOCATOR, locator)?;
        }
        if self.expects_inline_qos {
            b.push(pid::EXPECTS_INLINE_QOS, &[1])?;
        }
        qos_parameters::emit(&self.qos, &mut b)?;
        if let Some(name) = &self.entity_name {
            b.push_str(pid::ENTITY_NAME, name)?;
        }
        if let Some(id) = self.group_entity_id {
            b.push(pid::GROUP_ENTITYID, &id.0)?;
        }
        if let Some(size) = self.type_max_size_serialized {
            b.push_u32(pid::TYPE_MAX_SIZE_SERIALIZED, size)?;
        }
        if let Some(info) = &self.type_information {
            b.push(pid::TYPE_INFORMATION, info)?;
        }
        if let Some(filter) = &self.content_filter {
            b.push(pid::CONTENT_FILTER_PROPERTY, &filter.to_value(e))?;
        }
        if let Some(host) = &self.reads_channels {
            b.push(pid_reads_channels(), host)?;
        }
        b.finish();
        Ok(())
    }
}

/// A writer as SEDP announces it (`DiscoveredWriterData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredWriterData {
    /// The announced fields.
    pub endpoint: EndpointData,
}

/// A reader as SEDP announces it (`DiscoveredReaderData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredReaderData {
    /// The announced fields.
    pub endpoint: EndpointData,
}

macro_rules! endpoint_data_impl {
    ($ty:ident, $kind:expr, $what:literal) => {
        impl $ty {
            #[doc = concat!("Parses the serialized payload of an SEDP DATA announcing a ", $what, " (encapsulation header included, either byte order). Absent QoS take the ", $what, " defaults.")]
            pub fn parse(payload: &[u8]) -> Result<$ty, DiscoveryError> {
                EndpointData::parse(payload, $kind).map(|endpoint| $ty { endpoint })
            }

            /// Appends the serialized payload (encapsulation header and parameter list)
            /// to `out`. The RxO QoS are always written, other fields only when they
            /// differ from their defaults; on error `out` is left as it was.
            pub fn emit(&self, out: &mut Vec<u8>, endianness: Endianness) -> Result<(), EmitError> {
                self.endpoint.emit(out, endianness)
            }

            /// The serialized payload as a new vector.
            pub fn to_vec(&self, endianness: Endianness) -> Result<Vec<u8>, EmitError> {
                let mut out = Vec::new();
                self.emit(&mut out, endianness)?;
                Ok(out)
            }
        }
    };
}

endpoint_data_impl!(DiscoveredWriterData, EndpointKind::Writer, "writer");
endpoint_data_impl!(DiscoveredReaderData, EndpointKind::Reader, "reader");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::ValueError;
    use crate::qos::{DataRepresentationId, Durability, Partition, Reliability, ReliabilityKind};
    use crate::wire::GuidPrefix;
    use std::net::Ipv4Addr;

    const PREFIX: GuidPrefix = GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);

    // A minimal writer, little endian, as `emit` writes it:
    //
    //   PL_CDR_LE
    //   PID_ENDPOINT_GUID     01020304 05060708 090a0b0c 00000102
    //   PID_PARTICIPANT_GUID  01020304 05060708 090a0b0c 000001c1
    //   PID_TOPIC_NAME "T", PID_TYPE_NAME "M"
    //   PID_RELIABILITY RELIABLE 100 ms, PID_DURABILITY VOLATILE, PID_DEADLINE infinite,
    //   PID_LATENCY_BUDGET 0, PID_LIVELINESS AUTOMATIC infinite, PID_OWNERSHIP SHARED,
    //   PID_DESTINATION_ORDER BY_RECEPTION_TIMESTAMP, PID_PRESENTATION INSTANCE,
    //   PID_DATA_REPRESENTATION [XCDR]
    //   PID_SENTINEL
    static MINIMAL_WRITER_LE: [u8; 176] = [
        0x00, 0x03, 0x00, 0x00, // PL_CDR_LE
        0x5a, 0x00, 0x10, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x00, 0x00, 0x01, 0x02,
        0x50, 0x00, 0x10, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x00, 0x00, 0x01, 0xc1,
        0x05, 0x00, 0x08, 0x00, 0x02, 0x00, 0x00, 0x00, b'T', 0x00, 0x00, 0x00, // "T"
        0x07, 0x00, 0x08, 0x00, 0x02, 0x00, 0x00, 0x00, b'M', 0x00, 0x00, 0x00, // "M"
        0x1a, 0x00, 0x0c, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9a, 0x99, 0x99,
        0x19, // RELIABLE, 100 ms
        0x1d, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, // VOLATILE
        0x23, 0x00, 0x08, 0x00, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, // deadline
        0x27, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // latency
        0x1b, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff,
        0xff, // AUTOMATIC, infinite
        0x1f, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, // SHARED
        0x25, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, // BY_RECEPTION_TIMESTAMP
        0x21, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // INSTANCE
        0x73, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // [XCDR]
        0x01, 0x00, 0x00, 0x00, // PID_SENTINEL
    ];

    fn writer_guid() -> Guid {
        Guid::new(PREFIX, EntityId::from_u32(0x0000_0102))
    }

    fn reader_guid() -> Guid {
        Guid::new(PREFIX, EntityId::from_u32(0x0000_0207))
    }

    fn minimal_writer() -> DiscoveredWriterData {
        let mut endpoint =
            EndpointData::new(writer_guid(), "T", "M", EndpointQos::writer_default());
        endpoint.protocol_version = None;
        endpoint.vendor_id = None;
        DiscoveredWriterData { endpoint }
    }

    #[test]
    fn test_deconstruct() {
        let w = DiscoveredWriterData::parse(&MINIMAL_WRITER_LE).expect("valid");
        let e = &w.endpoint;
        assert_eq!(e.guid, writer_guid());
        assert_eq!(e.participant_guid, Guid::new(PREFIX, EntityId::PARTICIPANT));
        assert_eq!(e.topic_name, "T");
        assert_eq!(e.type_name, "M");
        assert_eq!(e.qos.reliability, Reliability::reliable());
        assert!(e.unicast_locators.is_empty());
        assert_eq!(e.type_information, None);
    }

    #[test]
    fn test_construct() {
        assert_eq!(
            minimal_writer().to_vec(Endianness::Little).expect("emit"),
            MINIMAL_WRITER_LE
        );
    }

    #[test]
    fn test_parse() {
        assert_eq!(
            DiscoveredWriterData::parse(&MINIMAL_WRITER_LE),
            Ok(minimal_writer())
        );
        // The same bytes in big endian.
        let be = minimal_writer().to_vec(Endianness::Big).expect("emit");
        assert_eq!(be.get(..2), Some(&[0x00, 0x02][..]));
        assert_eq!(be.len(), MINIMAL_WRITER_LE.len());
        assert_eq!(DiscoveredWriterData::parse(&be), Ok(minimal_writer()));
    }

    #[test]
    fn test_emit_and_parse_every_field() {
        let mut qos = EndpointQos::reader_default();
        qos.reliability = Reliability::reliable();
        qos.durability = Durability::TransientLocal;
        qos.partition = Partition::new(["p1", "p*"]);
        qos.data_representation.ids = vec![DataRepresentationId::XCDR2];
        qos.user_data.value = vec![9; 13];
        let mut endpoint = EndpointData::new(reader_guid(), "Square", "ShapeType", qos);
        endpoint.participant_guid = Guid::new(GuidPrefix([7; 12]), EntityId::PARTICIPANT);
        endpoint.unicast_locators = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7411)];
        endpoint.multicast_locators = vec![Locator::udpv4(Ipv4Addr::new(239, 255, 0, 1), 7401)];
        endpoint.expects_inline_qos = true;
        endpoint.entity_name = Some("reader 1".to_owned());
        endpoint.group_entity_id = Some(EntityId::from_u32(0x8000_0009));
        endpoint.type_max_size_serialized = Some(1024);
        endpoint.type_information = Some(vec![0x60, 0, 0, 0, 1, 2, 3, 4]);
        let r = DiscoveredReaderData { endpoint };
        for e in [Endianness::Little, Endianness::Big] {
            let bytes = r.to_vec(e).expect("emit");
            assert_eq!(DiscoveredReaderData::parse(&bytes), Ok(r.clone()));
        }
    }

    fn payload(params: &[(u16, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = ParameterListBuilder::encapsulated(&mut out, Endianness::Little);
        for (id, value) in params {
            b.push(*id, value).expect("short");
        }
        b.finish();
        out
    }

    const NAME_T: &[u8] = &[2, 0, 0, 0, b'T', 0];

    #[test]
    fn role_defaults_and_kind_checks() {
        let wg = writer_guid().to_bytes();
        let rg = reader_guid().to_bytes();
        // Cyclone DDS leaves out QoS at their defaults: an absent reliability means
        // RELIABLE for a writer and BEST_EFFORT for a reader.
        let w = DiscoveredWriterData::parse(&payload(&[
            (pid::ENDPOINT_GUID, &wg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
        ]))
        .expect("valid");
        assert_eq!(w.endpoint.qos.reliability.kind, ReliabilityKind::Reliable);
        let r = DiscoveredReaderData::parse(&payload(&[
            (pid::ENDPOINT_GUID, &rg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
        ]))
        .expect("valid");
        assert_eq!(r.endpoint.qos.reliability.kind, ReliabilityKind::BestEffort);
        // A reader's GUID in a publication.
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &rg),
                (pid::TOPIC_NAME, NAME_T),
                (pid::TYPE_NAME, NAME_T),
            ])),
            Err(DiscoveryError::UnexpectedEntityId {
                offset: 4,
                pid: pid::ENDPOINT_GUID,
                entity_id: reader_guid().entity_id
            })
        );
        // A participant GUID that is not a participant's.
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &wg),
                (pid::PARTICIPANT_GUID, &wg),
                (pid::TOPIC_NAME, NAME_T),
                (pid::TYPE_NAME, NAME_T),
            ])),
            Err(DiscoveryError::UnexpectedEntityId {
                offset: 24,
                pid: pid::PARTICIPANT_GUID,
                entity_id: writer_guid().entity_id
            })
        );
        // Fast DDS's PID_KEY_HASH stands in for a missing endpoint GUID.
        let w = DiscoveredWriterData::parse(&payload(&[
            (pid::KEY_HASH, &wg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
        ]))
        .expect("valid");
        assert_eq!(w.endpoint.guid, writer_guid());
        // ... but the endpoint GUID wins when both are there.
        let mut other = wg;
        other[0] = 0xee;
        let w = DiscoveredWriterData::parse(&payload(&[
            (pid::KEY_HASH, &other),
            (pid::ENDPOINT_GUID, &wg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
        ]))
        .expect("valid");
        assert_eq!(w.endpoint.guid, writer_guid());
    }

    #[test]
    fn required_and_invalid() {
        let wg = writer_guid().to_bytes();
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::TOPIC_NAME, NAME_T),
                (pid::TYPE_NAME, NAME_T)
            ])),
            Err(DiscoveryError::MissingParameter {
                pid: pid::ENDPOINT_GUID
            })
        );
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &wg),
                (pid::TYPE_NAME, NAME_T)
            ])),
            Err(DiscoveryError::MissingParameter {
                pid: pid::TOPIC_NAME
            })
        );
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &wg),
                (pid::TOPIC_NAME, NAME_T)
            ])),
            Err(DiscoveryError::MissingParameter {
                pid: pid::TYPE_NAME
            })
        );
        // An invalid QoS value rejects the sample, with the parameter's offset.
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &wg),
                (pid::TOPIC_NAME, NAME_T),
                (pid::TYPE_NAME, NAME_T),
                (pid::DURABILITY, &[9, 0, 0, 0]),
            ])),
            Err(DiscoveryError::InvalidParameter {
                offset: 48,
                pid: pid::DURABILITY,
                reason: ValueError::UnknownKind { value: 9 }
            })
        );
        // A topic name that is not terminated.
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &wg),
                (pid::TOPIC_NAME, &[2, 0, 0, 0, b'T', b'U']),
            ])),
            Err(DiscoveryError::InvalidParameter {
                offset: 24,
                pid: pid::TOPIC_NAME,
                reason: ValueError::StringNotTerminated
            })
        );
        // A QoS given twice.
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&[
                (pid::ENDPOINT_GUID, &wg),
                (pid::TOPIC_NAME, NAME_T),
                (pid::TYPE_NAME, NAME_T),
                (pid::DURABILITY, &[0; 4]),
                (pid::DURABILITY, &[1, 0, 0, 0]),
            ])),
            Err(DiscoveryError::DuplicateParameter {
                offset: 56,
                pid: pid::DURABILITY
            })
        );
    }

    #[test]
    fn type_information_and_unknown_parameters() {
        let wg = writer_guid().to_bytes();
        // PID_TYPE_INFORMATION is kept as bytes whatever it holds; unknown ids and
        // vendor ids are skipped.
        let w = DiscoveredWriterData::parse(&payload(&[
            (pid::ENDPOINT_GUID, &wg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
            (
                pid::TYPE_INFORMATION,
                &[0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff],
            ),
            (0x0018, &[0xff; 4]),
            (0x1234, &[]),
            (0x8021, &[1, 2, 3]),
            (pid::PROPERTY_LIST, &[0, 0, 0, 0]),
        ]))
        .expect("valid");
        assert_eq!(
            w.endpoint.type_information.as_deref(),
            Some(&[0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff][..])
        );
        // PID_DOMAIN_TAG (must understand) is understood, and unused, in SEDP; another
        // must-understand id rejects the sample.
        let base = [
            (pid::ENDPOINT_GUID, &wg[..]),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
        ];
        let mut with_tag = base.to_vec();
        with_tag.push((pid::DOMAIN_TAG, &[1, 0, 0, 0, 0]));
        assert!(DiscoveredWriterData::parse(&payload(&with_tag)).is_ok());
        let mut with_unknown = base.to_vec();
        with_unknown.push((0x4075, &[]));
        assert_eq!(
            DiscoveredWriterData::parse(&payload(&with_unknown)),
            Err(DiscoveryError::NotUnderstood {
                offset: 48,
                pid: 0x4075
            })
        );
        // A repeated one: the first is kept.
        let w = DiscoveredWriterData::parse(&payload(&[
            (pid::ENDPOINT_GUID, &wg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
            (pid::TYPE_INFORMATION, &[1, 1, 1, 1]),
            (pid::TYPE_INFORMATION, &[2, 2, 2, 2]),
        ]))
        .expect("valid");
        assert_eq!(w.endpoint.type_information, Some(vec![1, 1, 1, 1]));
        // Even an empty one.
        let w = DiscoveredWriterData::parse(&payload(&[
            (pid::ENDPOINT_GUID, &wg),
            (pid::TOPIC_NAME, NAME_T),
            (pid::TYPE_NAME, NAME_T),
            (pid::TYPE_INFORMATION, &[]),
        ]))
        .expect("valid");
        assert_eq!(w.endpoint.type_information, Some(vec![]));
    }

    #[test]
    fn emit_error_leaves_output_alone() {
        let mut w = minimal_writer();
        w.endpoint.topic_name = "x".repeat(70_000);
        let mut out = vec![1, 2, 3];
        assert!(matches!(
            w.emit(&mut out, Endianness::Little),
            Err(EmitError::ParameterTooLong {
                pid: pid::TOPIC_NAME,
                ..
            })
        ));
        assert_eq!(out, [1, 2, 3]);
    }
}
