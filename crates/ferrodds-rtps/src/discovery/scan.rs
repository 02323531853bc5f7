//! The walk over a discovery payload shared by the SPDP and SEDP parsers: offsets, the
//! vendor-specific rule, the must-understand rule and the one-occurrence rule.

use super::value::ValueReader;
use super::{DiscoveryError, ValueError};
use crate::wire::{Endianness, Guid, Locator, Parameter, ParameterList, ProtocolVersion, VendorId};

/// What a parser made of one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handled {
    /// Interpreted; may appear only once.
    Once,
    /// Interpreted; may repeat (locators).
    Repeatable,
    /// Understood but of no use here (counts as understood for the must-understand rule).
    Ignored,
    /// Not interpreted (unknown, or known and of no use to us).
    Skipped,
}

/// Validates `payload` (encapsulation header and parameter list) and hands each
/// parameter, with the offset of its header, to `visit`.
///
/// Vendor-specific parameters (id bit 0x8000) reach `visit` like the others, which must
/// read only FerroDDS's own, and only once the sender's vendor is known to be FerroDDS
/// (their meaning depends on the vendor): none of those the captured peers of other
/// vendors send is needed to talk to them (each duplicates a standard parameter or is
/// informative). What `visit` skips is skipped like an unknown parameter — unless it
/// carries the must-understand bit, which makes the whole sample unusable
/// (DDSI-RTPS 2.5 §9.6.2.2.1).
pub(crate) fn scan<'a>(
    payload: &'a [u8],
    mut visit: impl FnMut(usize, &Parameter<'a>) -> Result<Handled, DiscoveryError>,
) -> Result<Endianness, DiscoveryError> {
    let (list, _after_sentinel) = ParameterList::parse_encapsulated(payload)?;
    // Parameter ids interpreted so far (a few dozen at most).
    let mut seen: Vec<u16> = Vec::new();
    for p in list.iter() {
        let offset = header_offset(payload, &p);
        let handled = visit(offset, &p)?;
        match handled {
            Handled::Skipped if p.must_understand() => {
                return Err(DiscoveryError::NotUnderstood { offset, pid: p.id })
            }
            Handled::Skipped | Handled::Repeatable | Handled::Ignored => {}
            Handled::Once if seen.contains(&p.id) => {
                return Err(DiscoveryError::DuplicateParameter { offset, pid: p.id })
            }
            Handled::Once => seen.push(p.id),
        }
    }
    Ok(list.endianness())
}

/// Offset of `p`'s header from the start of `payload`. The value is a subslice of the
/// payload (the list was parsed from it), 4 bytes after its header.
fn header_offset(payload: &[u8], p: &Parameter<'_>) -> usize {
    (p.value.as_ptr() as usize)
        .saturating_sub(payload.as_ptr() as usize)
        .saturating_sub(4)
}

/// Runs a value reader over `p`, turning its error into an `InvalidParameter` at `offset`.
pub(crate) fn read<'a, T>(
    offset: usize,
    p: &Parameter<'a>,
    f: impl FnOnce(&mut ValueReader<'a>) -> Result<T, ValueError>,
) -> Result<T, DiscoveryError> {
    let mut r = ValueReader::new(p);
    f(&mut r).map_err(|reason| invalid(offset, p.id, reason))
}

pub(crate) fn invalid(offset: usize, pid: u16, reason: ValueError) -> DiscoveryError {
    DiscoveryError::InvalidParameter {
        offset,
        pid,
        reason,
    }
}

/// `PID_PROTOCOL_VERSION`: two octets (then padding).
pub(crate) fn protocol_version(r: &mut ValueReader<'_>) -> Result<ProtocolVersion, ValueError> {
    let major = r.u8()?;
    let minor = r.u8()?;
    Ok(ProtocolVersion { major, minor })
}

/// `PID_VENDORID`: two octets (then padding).
pub(crate) fn vendor_id(r: &mut ValueReader<'_>) -> Result<VendorId, ValueError> {
    Ok(VendorId([r.u8()?, r.u8()?]))
}

/// A `Locator_t` value (24 bytes).
pub(crate) fn locator(r: &mut ValueReader<'_>, e: Endianness) -> Result<Locator, ValueError> {
    let b = r.take(Locator::LEN)?;
    let mut bytes = [0u8; Locator::LEN];
    bytes.copy_from_slice(b);
    Ok(Locator::from_bytes(bytes, e))
}

/// A GUID parameter and where it was, for the entity-kind checks made after the scan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoundGuid {
    pub(crate) guid: Guid,
    pub(crate) offset: usize,
    pub(crate) pid: u16,
}

impl FoundGuid {
    pub(crate) fn read(offset: usize, p: &Parameter<'_>) -> Result<FoundGuid, DiscoveryError> {
        let guid = read(offset, p, ValueReader::guid)?;
        Ok(FoundGuid {
            guid,
            offset,
            pid: p.id,
        })
    }

    pub(crate) fn unexpected(&self) -> DiscoveryError {
        DiscoveryError::UnexpectedEntityId {
            offset: self.offset,
            pid: self.pid,
            entity_id: self.guid.entity_id,
        }
    }
}

/// The GUID that keys the sample: `primary` (PID_PARTICIPANT_GUID or PID_ENDPOINT_GUID)
/// if present, else the GUID in PID_KEY_HASH (Fast DDS puts one in its SEDP payloads;
/// older implementations sent only the key hash).
pub(crate) fn key_guid(
    primary: Option<FoundGuid>,
    key_hash: Option<FoundGuid>,
    primary_pid: u16,
) -> Result<FoundGuid, DiscoveryError> {
    primary
        .or(key_hash)
        .ok_or(DiscoveryError::MissingParameter { pid: primary_pid })
}
