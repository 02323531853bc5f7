//! Discovery data: what SPDP says about a participant ([`ParticipantData`]) and what SEDP
//! says about a writer or a reader ([`DiscoveredWriterData`], [`DiscoveredReaderData`]),
//! parsed from and emitted as the parameter-list payloads (`PL_CDR_LE`/`PL_CDR_BE`) of
//! the builtin writers' DATA (DDSI-RTPS 2.5 §8.5 and §9.6.2.2); and the matching of a
//! discovered writer with a reader ([`match_endpoints`]).
//!
//! What it does not do: run the SPDP/SEDP protocol (announcing, leases, the builtin
//! endpoints' reliability), check that an SPDP GUID prefix equals the RTPS header's, or
//! filter by domain id and tag — those belong to the discovery state machine built on
//! the RTPS writers and readers. It never parses `PID_TYPE_INFORMATION` and does not
//! evaluate type assignability: endpoints match on type names.
//!
//! # Robustness
//!
//! As in [`crate::wire`], parsing never panics and allocates only for what the payload
//! holds: every string and sequence length is checked against the bytes of its parameter
//! before anything is reserved, and every sequence count against the smallest room its
//! elements could take. A sample is either accepted whole or rejected with a
//! [`DiscoveryError`] naming the parameter id and the offset of its header in the payload.
//!
//! Rules applied to every payload:
//! - **Vendor-specific parameters** (id bit 0x8000) mean what the sender's vendor defined,
//!   so they may only be read after checking the vendor. FerroDDS reads **none**: every
//!   one the captured peers send either duplicates a standard parameter (Connext's
//!   0x800f domain id, 0x800a role name) or is informative or about features we lack
//!   (Cyclone's 0x8007 version info, 0x8019 receive buffer size, 0x800c entity factory;
//!   Connext's 0x8000 product version, 0x8002 virtual GUID, 0x8021 compressed type
//!   object, …). All are skipped, whatever the vendor; a vendor id whose low bits equal a
//!   standard id (0x8005 and PID_TOPIC_NAME) is never taken for it.
//! - **Must-understand** (id bit 0x4000): a parameter with this bit that we do not
//!   understand makes the whole sample ignored (DDSI-RTPS 2.5 §9.6.2.2.1). The only one
//!   we understand is `PID_DOMAIN_TAG` (0x4014); vendor-specific ids with the bit are
//!   never understood.
//! - A parameter we interpret may appear once (as Cyclone DDS requires); locators repeat,
//!   and of repeated `PID_TYPE_INFORMATION`s the first is kept.
//! - Unknown parameters without the must-understand bit are skipped.
//!
//! # What the captured peers send (`tests/vectors/`)
//!
//! Cyclone DDS 0.10.2 (vendor 0x0110, `ddsperf`):
//! - SPDP: user data, a property list (process name, pid, host name), locators, lease
//!   10 s, `PID_DOMAIN_ID`, builtin endpoint set 0xfc3f (including the four type lookup
//!   bits 12–15), vendor ids 0x8007 and 0x8019.
//! - SEDP: **no `PID_PARTICIPANT_GUID`** (derived from the endpoint GUID's prefix) and
//!   **only the QoS that differ from its defaults** — so an absent reliability means
//!   RELIABLE for a writer and BEST_EFFORT for a reader: the defaults depend on the role.
//!   `PID_DATA_REPRESENTATION` `[XCDR, XCDR2]` (the writer uses XCDR), `PID_PARTITION`,
//!   `PID_HISTORY`/`PID_RESOURCE_LIMITS` (not in the DCPS builtin topic data, but sent),
//!   `PID_TYPE_INFORMATION` (100 bytes), vendor id 0x800c.
//! - Disposal of a participant or endpoint: DATA with the K flag, inline
//!   `PID_STATUS_INFO`, and a key-only payload holding just the GUID parameter.
//!
//! Fast DDS 2.9.1 (vendor 0x010f):
//! - SPDP: no `PID_DOMAIN_ID`; `PID_ENTITY_NAME`; builtin endpoint set 0x0c3f0c3f, i.e.
//!   with bits 16–21 and 26–27 (the DDS-Security secure builtin endpoints) set although
//!   the captures hold no secure traffic — do not read security into those bits.
//! - SEDP: **every QoS explicitly**, including `PID_DURABILITY_SERVICE` and zero-length
//!   partition, user, topic and group data; `PID_KEY_HASH` *inside the payload* holding the
//!   endpoint GUID; `PID_TYPE_MAX_SIZE_SERIALIZED` on writers;
//!   `PID_TYPE_CONSISTENCY_ENFORCEMENT` (8 bytes, 16-bit kind) and a 4-byte
//!   `PID_EXPECTS_INLINE_QOS` on readers; no `PID_DATA_REPRESENTATION` (so `[XCDR]`).
//!   Reliability max blocking time 100 ms is sent as fraction 0x1999999a.
//! - Disposal: DATA with inline QoS only (key hash, status info; for SPDP also its vendor
//!   id 0x800f), no payload.
//!
//! RTI Connext 6.1.2 (vendor 0x0101):
//! - SPDP: `PID_DOMAIN_ID` and its own 0x800f copy, `PID_BUILTIN_ENDPOINT_QOS`, metatraffic
//!   multicast locator, lease 100 s, `PID_ENTITY_NAME`, a property list, vendor ids
//!   0x8000, 0x800a, 0x8010, 0x8016, 0x8017.
//! - SEDP: **no `PID_PARTICIPANT_GUID` and no locators** (the participant's default
//!   locators apply); `PID_GROUP_ENTITYID`; the deprecated 0x0013/0x0018 queue sizes;
//!   `PID_DATA_REPRESENTATION` of 12 bytes — the sequence, then a 4-byte compression-id
//!   mask, which is ignored; reliability 100 ms sent as fraction 0x19999999 (both
//!   roundings read back as 100 ms).
//! - Disposal: DATA with inline key hash and status info, no payload.
//!
//! [`instance_guid`] finds the GUID of a disposal in each of these shapes.

mod content_filter;
mod endpoint_data;
mod error;
mod participant_data;
mod qos_parameters;
mod scan;
mod value;

pub use content_filter::{ContentFilterProperty, DDSSQL};
pub use endpoint_data::{DiscoveredReaderData, DiscoveredWriterData, EndpointData, EndpointKind};
pub use error::{DiscoveryError, ValueError};
pub use participant_data::{BuiltinEndpointQos, BuiltinEndpointSet, ParticipantData};

use crate::qos::{self, IncompatibleQos, QosMismatch, QosPolicyId};
use crate::wire::parameter_list::pid;
use crate::wire::{Data, Guid, ParameterList};

/// The GUID that keys an SPDP or SEDP sample (the participant's or the endpoint's), from
/// wherever the sender put it: the inline `PID_KEY_HASH` (Fast DDS and Connext
/// disposals), else the payload's `PID_ENDPOINT_GUID`, `PID_PARTICIPANT_GUID` or
/// `PID_KEY_HASH` (a full sample, or Cyclone DDS's key-only payload of a disposal).
///
/// The key of these builtin topics is a 16-byte GUID, so the key hash is the GUID itself.
pub fn instance_guid(data: &Data<'_>) -> Result<Guid, DiscoveryError> {
    if let Some(guid) = data
        .inline_qos
        .and_then(|q| q.find(pid::KEY_HASH))
        .and_then(|p| p.as_guid())
    {
        return Ok(guid);
    }
    let missing = DiscoveryError::MissingParameter { pid: pid::KEY_HASH };
    let payload = data.payload.bytes().ok_or(missing)?;
    let (list, _) = ParameterList::parse_encapsulated(payload)?;
    [pid::ENDPOINT_GUID, pid::PARTICIPANT_GUID, pid::KEY_HASH]
        .into_iter()
        .find_map(|id| list.find(id).and_then(|p| p.as_guid()))
        .ok_or(missing)
}

/// Why a discovered writer and reader do not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointMismatch {
    /// Different topics: the endpoints have nothing to do with each other.
    #[error("different topic names")]
    TopicName,
    /// Same topic, different type names. Without type information (which we do not
    /// evaluate) the types cannot be shown assignable, so the endpoints do not match;
    /// like Cyclone DDS without its type library, nothing is reported as incompatible QoS.
    #[error("different type names")]
    TypeName,
    /// No common partition (not reported to the application).
    #[error("no common partition")]
    Partition,
    /// Incompatible RxO policies, to be reported through the offered/requested
    /// incompatible QoS statuses.
    #[error(transparent)]
    Incompatible(IncompatibleQos),
}

/// Decides whether `writer` and `reader` match: same topic name, same type name, a common
/// partition, then compatible RxO QoS ([`qos::check_compatibility`]).
///
/// A reader whose TYPE_CONSISTENCY_ENFORCEMENT sets `force_type_validation` is also
/// reported incompatible for that policy, since we never validate types (Cyclone DDS does
/// the same when type information is missing).
pub fn match_endpoints(
    writer: &DiscoveredWriterData,
    reader: &DiscoveredReaderData,
) -> Result<(), EndpointMismatch> {
    let (w, r) = (&writer.endpoint, &reader.endpoint);
    if w.topic_name != r.topic_name {
        return Err(EndpointMismatch::TopicName);
    }
    if w.type_name != r.type_name {
        return Err(EndpointMismatch::TypeName);
    }
    let rxo = match qos::match_qos(&w.qos, &r.qos) {
        Ok(()) => None,
        Err(QosMismatch::Partition) => return Err(EndpointMismatch::Partition),
        Err(QosMismatch::Incompatible(incompatible)) => Some(incompatible),
    };
    let type_validation = r
        .qos
        .type_consistency
        .force_type_validation
        .then(|| IncompatibleQos::single(QosPolicyId::TypeConsistencyEnforcement));
    match (rxo, type_validation) {
        (None, None) => Ok(()),
        (Some(a), Some(b)) => Err(EndpointMismatch::Incompatible(a.union(b))),
        (Some(a), None) | (None, Some(a)) => Err(EndpointMismatch::Incompatible(a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{Durability, EndpointQos, Partition};
    use crate::wire::{
        DataPayload, Endianness, EntityId, GuidPrefix, ParameterListBuilder, SequenceNumber,
    };

    fn pair() -> (DiscoveredWriterData, DiscoveredReaderData) {
        let prefix = GuidPrefix([3; 12]);
        let w = EndpointData::new(
            Guid::new(prefix, EntityId::from_u32(0x0000_0102)),
            "BenchPing",
            "Bench::Msg",
            EndpointQos::writer_default(),
        );
        let r = EndpointData::new(
            Guid::new(prefix, EntityId::from_u32(0x0000_0207)),
            "BenchPing",
            "Bench::Msg",
            EndpointQos::reader_default(),
        );
        (
            DiscoveredWriterData { endpoint: w },
            DiscoveredReaderData { endpoint: r },
        )
    }

    #[test]
    fn endpoints_match() {
        let (w, r) = pair();
        assert_eq!(match_endpoints(&w, &r), Ok(()));

        let (w, mut r) = pair();
        r.endpoint.topic_name = "BenchPong".into();
        assert_eq!(match_endpoints(&w, &r), Err(EndpointMismatch::TopicName));

        let (w, mut r) = pair();
        r.endpoint.type_name = "Other".into();
        assert_eq!(match_endpoints(&w, &r), Err(EndpointMismatch::TypeName));

        let (w, mut r) = pair();
        r.endpoint.qos.partition = Partition::new(["x"]);
        r.endpoint.qos.durability = Durability::Persistent;
        assert_eq!(match_endpoints(&w, &r), Err(EndpointMismatch::Partition));

        let (w, mut r) = pair();
        r.endpoint.qos.durability = Durability::TransientLocal;
        r.endpoint.qos.type_consistency.force_type_validation = true;
        let Err(EndpointMismatch::Incompatible(e)) = match_endpoints(&w, &r) else {
            panic!("expected an incompatibility");
        };
        assert_eq!(
            e.policies().collect::<Vec<_>>(),
            [
                QosPolicyId::Durability,
                QosPolicyId::TypeConsistencyEnforcement
            ]
        );
    }

    fn data<'a>(inline_qos: Option<ParameterList<'a>>, payload: DataPayload<'a>) -> Data<'a> {
        Data {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::SEDP_PUBLICATIONS_WRITER,
            writer_sn: SequenceNumber(2),
            inline_qos,
            payload,
            non_standard_payload: false,
        }
    }

    #[test]
    fn instance_guid_of_each_shape() {
        let guid = Guid::new(GuidPrefix([9; 12]), EntityId::from_u32(0x8000_0002));
        // Fast DDS / Connext: inline key hash, no payload.
        let mut q = Vec::new();
        let mut b = ParameterListBuilder::new(&mut q, Endianness::Little);
        b.push_guid(pid::KEY_HASH, guid).expect("short");
        b.push_u32(pid::STATUS_INFO, 3).expect("short");
        b.finish();
        let (list, _) = ParameterList::parse(&q, Endianness::Little).expect("valid");
        assert_eq!(
            instance_guid(&data(Some(list), DataPayload::None)),
            Ok(guid)
        );
        // Cyclone DDS: key-only payload with PID_ENDPOINT_GUID.
        let mut k = Vec::new();
        let mut b = ParameterListBuilder::encapsulated(&mut k, Endianness::Big);
        b.push_guid(pid::ENDPOINT_GUID, guid).expect("short");
        b.finish();
        assert_eq!(instance_guid(&data(None, DataPayload::Key(&k))), Ok(guid));
        // Nothing to go by.
        assert_eq!(
            instance_guid(&data(None, DataPayload::None)),
            Err(DiscoveryError::MissingParameter { pid: pid::KEY_HASH })
        );
        assert!(matches!(
            instance_guid(&data(None, DataPayload::Data(&[0, 3, 0]))),
            Err(DiscoveryError::ParameterList(_))
        ));
    }
}
