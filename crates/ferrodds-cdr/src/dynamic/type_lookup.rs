//! The samples of the XTypes TypeLookup service (DDS-XTypes 1.3 §7.6.3.3.4): the request a
//! participant sends on `ENTITYID_TL_SVC_REQ_WRITER` and the reply on
//! `ENTITYID_TL_SVC_REPLY_WRITER`, encoded as Cyclone DDS encodes them (`CDR2_LE`; the
//! request and reply final, the calls and results appendable unions, the `_In`/`_Out`
//! structs mutable with hashed member ids).
//!
//! Identifiers travel here only in their hashed form (`EK_MINIMAL`/`EK_COMPLETE` and 14
//! bytes): the service looks up types by hash; other identifiers in a request are read
//! and skipped, as Cyclone skips them. Everything decoded is bounded by the input.

use super::type_object::EquivalenceKind;
use crate::encapsulation::EncapsulationHeader;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::member::{begin_member, end_member, end_member_decode, hashed_member_id, next_member};
use crate::{Decoder, Encoder, Endianness, Extensibility, TypeKind, XcdrVersion};

/// `@hashid("getTypes")`.
pub const GET_TYPES: i32 = 0x0182_52d3;
/// `@hashid("getDependencies")`.
pub const GET_DEPENDENCIES: i32 = 0x05aa_fb31;
/// The `continuation_point` of a dependencies call holds at most this many bytes.
pub const MAX_CONTINUATION: usize = 32;
/// `DDS::RPC::InstanceName` is a `string<255>`.
const MAX_INSTANCE_NAME: usize = 255;

/// A hashed type identifier: `EK_MINIMAL` (0xf1) or `EK_COMPLETE` (0xf2), then the first 14
/// bytes of the MD5 of the serialized TypeObject — the bytes [`super::type_object::type_identifier`]
/// gives for a struct, union, enum or bitmask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeHash(pub [u8; 15]);

impl TypeHash {
    /// The hash of an identifier (as `type_identifier` gives it); `None` for a plain one.
    pub fn from_identifier(identifier: &[u8]) -> Option<TypeHash> {
        let bytes: [u8; 15] = identifier.try_into().ok()?;
        matches!(bytes[0], EK_MINIMAL | EK_COMPLETE).then_some(TypeHash(bytes))
    }

    /// Minimal or complete.
    pub fn kind(&self) -> EquivalenceKind {
        if self.0[0] == EK_MINIMAL {
            EquivalenceKind::Minimal
        } else {
            EquivalenceKind::Complete
        }
    }

    /// The identifier's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Display for TypeHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

const EK_MINIMAL: u8 = 0xf1;
const EK_COMPLETE: u8 = 0xf2;

/// DDS-RPC's `SampleIdentity`: the writer of a request and its sequence number, which the
/// reply repeats so the requester can tell its answers from others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleIdentity {
    /// GUID of the writer (prefix and entity id, as on the wire).
    pub writer_guid: [u8; 16],
    /// Sequence number (`high` and `low` halves on the wire).
    pub sequence_number: i64,
}

/// What a request asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeLookupCall {
    /// `getTypes`: the TypeObjects of these types.
    GetTypes {
        /// The types asked for (hashed identifiers; others are skipped on reading).
        type_ids: Vec<TypeHash>,
    },
    /// `getTypeDependencies`: the identifiers these types depend on, a page at a time.
    GetTypeDependencies {
        /// The types whose dependencies are asked for.
        type_ids: Vec<TypeHash>,
        /// Where the previous page ended (empty for the first).
        continuation_point: Vec<u8>,
    },
    /// An operation this implementation does not know (its discriminator).
    Unknown(i32),
}

/// `TypeLookup_Request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeLookupRequest {
    /// The request's identity (its writer and sequence number).
    pub request_id: SampleIdentity,
    /// `dds.builtin.TOS.` and the GUID of the participant asked (Cyclone writes zeros when
    /// it asks everyone).
    pub instance_name: String,
    /// The call.
    pub call: TypeLookupCall,
}

/// What a reply returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeLookupReturn {
    /// `getTypes` answered.
    Types {
        /// Identifier and serialized TypeObject (with its DHEADER, as it is hashed).
        types: Vec<(TypeHash, Vec<u8>)>,
        /// Complete identifiers and their minimal counterparts.
        complete_to_minimal: Vec<(TypeHash, TypeHash)>,
    },
    /// `getTypeDependencies` answered.
    Dependencies {
        /// Identifiers of the dependencies and their TypeObjects' sizes.
        dependent_typeids: Vec<(TypeHash, u32)>,
        /// Where to continue (empty: nothing more).
        continuation_point: Vec<u8>,
    },
    /// The operation failed with this return code.
    Failed {
        /// The operation (`GET_TYPES` or `GET_DEPENDENCIES`).
        operation: i32,
        /// Its DDS return code.
        retcode: i32,
    },
    /// An operation this implementation does not know (its discriminator).
    Unknown(i32),
}

/// `TypeLookup_Reply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeLookupReply {
    /// The identity of the request answered.
    pub related_request_id: SampleIdentity,
    /// `DDS::RPC::RemoteExceptionCode` (0: `REMOTE_EX_OK`).
    pub remote_ex: i32,
    /// The result.
    pub result: TypeLookupReturn,
}

/// Runs `f` inside a DHEADER.
fn delimited(e: &mut Encoder<'_>, f: impl FnOnce(&mut Encoder<'_>)) {
    let at = e.begin_length();
    f(e);
    // INVARIANT: the service's samples are far below 4 GiB (the caller bounds them).
    let _ = e.end_length(at);
}

/// One member of a mutable struct that is a sequence (EMHEADER length code 5 or 6).
fn member(e: &mut Encoder<'_>, name: &str, kind: TypeKind, f: impl FnOnce(&mut Encoder<'_>)) {
    let start = begin_member(e, hashed_member_id(name), false, kind);
    f(e);
    // INVARIANT: as above.
    let _ = end_member(e, start);
}

const NON_PRIMITIVE_SEQUENCE: TypeKind = TypeKind::Sequence {
    primitive_element_size: 0,
};
const OCTET_SEQUENCE: TypeKind = TypeKind::Sequence {
    primitive_element_size: 1,
};

fn write_identity(e: &mut Encoder<'_>, id: &SampleIdentity) {
    e.write_bytes(&id.writer_guid);
    e.write_i32((id.sequence_number >> 32) as i32);
    e.write_u32(id.sequence_number as u32);
}

fn read_identity(d: &mut Decoder<'_>) -> Result<SampleIdentity, DecodeError> {
    let mut writer_guid = [0; 16];
    writer_guid.copy_from_slice(d.bytes(16, "writer GUID")?);
    let high = d.read_i32()?;
    let low = d.read_u32()?;
    Ok(SampleIdentity {
        writer_guid,
        sequence_number: (i64::from(high) << 32) | i64::from(low),
    })
}

/// A sequence of hashed identifiers (its DHEADER is the member's NEXTINT).
fn write_ids(e: &mut Encoder<'_>, ids: &[TypeHash]) {
    delimited(e, |e| {
        e.write_u32(ids.len() as u32);
        for id in ids {
            e.write_bytes(&id.0);
        }
    });
}

fn write_octets(e: &mut Encoder<'_>, bytes: &[u8]) {
    e.write_u32(bytes.len() as u32);
    e.write_bytes(bytes);
}

impl TypeLookupRequest {
    /// The request with its encapsulation header (`CDR2_LE`).
    pub fn to_vec(&self) -> Vec<u8> {
        encapsulated(|e| {
            write_identity(e, &self.request_id);
            // A `string<255>` without NULs: cut at a character boundary.
            let name = self.instance_name.replace('\0', "");
            let mut end = name.len().min(MAX_INSTANCE_NAME);
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            // INVARIANT: no NUL left.
            let _ = e.write_str(&name[..end]);
            delimited(e, |e| match &self.call {
                TypeLookupCall::GetTypes { type_ids } => {
                    e.write_i32(GET_TYPES);
                    delimited(e, |e| {
                        member(e, "type_ids", NON_PRIMITIVE_SEQUENCE, |e| {
                            write_ids(e, type_ids)
                        })
                    });
                }
                TypeLookupCall::GetTypeDependencies {
                    type_ids,
                    continuation_point,
                } => {
                    e.write_i32(GET_DEPENDENCIES);
                    delimited(e, |e| {
                        member(e, "type_ids", NON_PRIMITIVE_SEQUENCE, |e| {
                            write_ids(e, type_ids)
                        });
                        let point =
                            &continuation_point[..continuation_point.len().min(MAX_CONTINUATION)];
                        member(e, "continuation_point", OCTET_SEQUENCE, |e| {
                            write_octets(e, point)
                        });
                    });
                }
                TypeLookupCall::Unknown(d) => e.write_i32(*d),
            });
        })
    }

    /// Reads a request (any XCDR2 encapsulation, either byte order).
    pub fn parse(payload: &[u8]) -> Result<TypeLookupRequest, DecodeError> {
        decapsulated(payload, |d| {
            let request_id = read_identity(d)?;
            let instance_name = d.read_str()?.to_owned();
            if instance_name.len() > MAX_INSTANCE_NAME {
                return Err(d.error(DecodeErrorKind::BoundExceeded {
                    bound: MAX_INSTANCE_NAME,
                    found: instance_name.len() as u64,
                }));
            }
            let outer = d.begin_delimited("TypeLookup_Call")?;
            let disc = d.read_i32()?;
            let call = match disc {
                GET_TYPES | GET_DEPENDENCIES => {
                    let body = d.begin_delimited("TypeLookup call arguments")?;
                    let mut type_ids = Vec::new();
                    let mut continuation_point = Vec::new();
                    while let Some(m) = next_member(d)? {
                        if m.id == hashed_member_id("type_ids") {
                            type_ids = read_ids(d)?;
                        } else if m.id == hashed_member_id("continuation_point") {
                            continuation_point = read_octets(d)?;
                        }
                        end_member_decode(d, m);
                    }
                    d.restore(body);
                    if disc == GET_TYPES {
                        TypeLookupCall::GetTypes { type_ids }
                    } else {
                        TypeLookupCall::GetTypeDependencies {
                            type_ids,
                            continuation_point,
                        }
                    }
                }
                other => TypeLookupCall::Unknown(other),
            };
            d.restore(outer);
            Ok(TypeLookupRequest {
                request_id,
                instance_name,
                call,
            })
        })
    }
}

impl TypeLookupReply {
    /// The reply with its encapsulation header (`CDR2_LE`).
    pub fn to_vec(&self) -> Vec<u8> {
        encapsulated(|e| {
            write_identity(e, &self.related_request_id);
            e.write_i32(self.remote_ex);
            delimited(e, |e| match &self.result {
                TypeLookupReturn::Types {
                    types,
                    complete_to_minimal,
                } => {
                    e.write_i32(GET_TYPES);
                    delimited(e, |e| {
                        e.write_i32(0);
                        delimited(e, |e| {
                            member(e, "types", NON_PRIMITIVE_SEQUENCE, |e| {
                                delimited(e, |e| {
                                    e.write_u32(types.len() as u32);
                                    for (id, object) in types {
                                        e.write_bytes(&id.0);
                                        e.align(4);
                                        e.write_bytes(object);
                                    }
                                })
                            });
                            member(e, "complete_to_minimal", NON_PRIMITIVE_SEQUENCE, |e| {
                                delimited(e, |e| {
                                    e.write_u32(complete_to_minimal.len() as u32);
                                    for (complete, minimal) in complete_to_minimal {
                                        e.write_bytes(&complete.0);
                                        e.write_bytes(&minimal.0);
                                    }
                                })
                            });
                        });
                    });
                }
                TypeLookupReturn::Dependencies {
                    dependent_typeids,
                    continuation_point,
                } => {
                    e.write_i32(GET_DEPENDENCIES);
                    delimited(e, |e| {
                        e.write_i32(0);
                        delimited(e, |e| {
                            member(e, "dependent_typeids", NON_PRIMITIVE_SEQUENCE, |e| {
                                delimited(e, |e| {
                                    e.write_u32(dependent_typeids.len() as u32);
                                    for (id, size) in dependent_typeids {
                                        delimited(e, |e| {
                                            e.write_bytes(&id.0);
                                            e.align(4);
                                            e.write_u32(*size);
                                        });
                                    }
                                })
                            });
                            let point = &continuation_point
                                [..continuation_point.len().min(MAX_CONTINUATION)];
                            member(e, "continuation_point", OCTET_SEQUENCE, |e| {
                                write_octets(e, point)
                            });
                        });
                    });
                }
                TypeLookupReturn::Failed { operation, retcode } => {
                    e.write_i32(*operation);
                    delimited(e, |e| e.write_i32(*retcode));
                }
                TypeLookupReturn::Unknown(d) => e.write_i32(*d),
            });
        })
    }

    /// Reads a reply (any XCDR2 encapsulation, either byte order). TypeObjects are kept as
    /// bytes, not parsed; pairs whose identifier is not a hash are skipped.
    pub fn parse(payload: &[u8]) -> Result<TypeLookupReply, DecodeError> {
        decapsulated(payload, |d| {
            let related_request_id = read_identity(d)?;
            let remote_ex = d.read_i32()?;
            let outer = d.begin_delimited("TypeLookup_Return")?;
            let operation = d.read_i32()?;
            let result = match operation {
                GET_TYPES | GET_DEPENDENCIES => {
                    let result = d.begin_delimited("TypeLookup result")?;
                    let retcode = d.read_i32()?;
                    let r = if retcode != 0 {
                        TypeLookupReturn::Failed { operation, retcode }
                    } else if operation == GET_TYPES {
                        read_types_out(d)?
                    } else {
                        read_dependencies_out(d)?
                    };
                    d.restore(result);
                    r
                }
                other => TypeLookupReturn::Unknown(other),
            };
            d.restore(outer);
            Ok(TypeLookupReply {
                related_request_id,
                remote_ex,
                result,
            })
        })
    }
}

fn read_types_out(d: &mut Decoder<'_>) -> Result<TypeLookupReturn, DecodeError> {
    let body = d.begin_delimited("TypeLookup_getTypes_Out")?;
    let mut types = Vec::new();
    let mut complete_to_minimal = Vec::new();
    while let Some(m) = next_member(d)? {
        if m.id == hashed_member_id("types") {
            let seq = d.begin_delimited("types")?;
            // An identifier and a TypeObject's DHEADER at least.
            let n = d.read_count("types", 5)?;
            types.reserve(n.min(64));
            for _ in 0..n {
                let id = read_id(d)?;
                d.align(4)?;
                // Kept as it is hashed: little-endian DHEADER and body (a big-endian
                // object will not match its hash, and the caller checks that).
                let len = d.read_u32()?;
                let body = d.bytes(len as usize, "TypeObject")?;
                if let Some(id) = id {
                    let mut object = Vec::with_capacity(4 + body.len());
                    object.extend_from_slice(&len.to_le_bytes());
                    object.extend_from_slice(body);
                    types.push((id, object));
                }
            }
            d.restore(seq);
        } else if m.id == hashed_member_id("complete_to_minimal") {
            let seq = d.begin_delimited("complete_to_minimal")?;
            let n = d.read_count("complete_to_minimal", 2)?;
            for _ in 0..n {
                let complete = read_id(d)?;
                let minimal = read_id(d)?;
                if let (Some(c), Some(m)) = (complete, minimal) {
                    complete_to_minimal.push((c, m));
                }
            }
            d.restore(seq);
        }
        end_member_decode(d, m);
    }
    d.restore(body);
    Ok(TypeLookupReturn::Types {
        types,
        complete_to_minimal,
    })
}

fn read_dependencies_out(d: &mut Decoder<'_>) -> Result<TypeLookupReturn, DecodeError> {
    let body = d.begin_delimited("TypeLookup_getTypeDependencies_Out")?;
    let mut dependent_typeids = Vec::new();
    let mut continuation_point = Vec::new();
    while let Some(m) = next_member(d)? {
        if m.id == hashed_member_id("dependent_typeids") {
            let seq = d.begin_delimited("dependent_typeids")?;
            let n = d.read_count("dependent_typeids", 4)?;
            for _ in 0..n {
                if let Some(dep) = read_with_size(d)? {
                    dependent_typeids.push(dep);
                }
            }
            d.restore(seq);
        } else if m.id == hashed_member_id("continuation_point") {
            continuation_point = read_octets(d)?;
        }
        end_member_decode(d, m);
    }
    d.restore(body);
    Ok(TypeLookupReturn::Dependencies {
        dependent_typeids,
        continuation_point,
    })
}

/// A type and what it depends on, as `TypeInformation` lists them for one equivalence kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypeWithDependencies {
    /// The type's identifier (`None` when it is not hashed) and its TypeObject's size.
    pub id: Option<(TypeHash, u32)>,
    /// How many types it depends on in all (`-1`: not said).
    pub dependent_count: i32,
    /// The hashed ones listed (perhaps fewer than `dependent_count`).
    pub dependents: Vec<(TypeHash, u32)>,
}

/// `TypeInformation` (XTypes 7.6.3.2.2), the value of `PID_TYPE_INFORMATION` in SEDP.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypeInformation {
    /// Member 0x1001.
    pub minimal: TypeWithDependencies,
    /// Member 0x1002.
    pub complete: TypeWithDependencies,
}

impl TypeInformation {
    /// Reads a `TypeInformation` (XCDR2 little-endian, no encapsulation header, as SEDP
    /// carries it). Members other than 0x1001 and 0x1002 are skipped.
    pub fn parse(bytes: &[u8]) -> Result<TypeInformation, DecodeError> {
        let d = &mut Decoder::new(bytes, XcdrVersion::Xcdr2, Endianness::Little);
        let outer = d.begin_delimited("TypeInformation")?;
        let mut info = TypeInformation::default();
        while let Some(m) = next_member(d)? {
            let slot = match m.id {
                0x1001 => Some(&mut info.minimal),
                0x1002 => Some(&mut info.complete),
                _ => None,
            };
            if let Some(slot) = slot {
                let with_deps = d.begin_delimited("TypeIdentifierWithDependencies")?;
                slot.id = read_with_size(d)?;
                slot.dependent_count = d.read_i32()?;
                let seq = d.begin_delimited("dependent_typeids")?;
                let n = d.read_count("dependent_typeids", 4)?;
                for _ in 0..n {
                    if let Some(dep) = read_with_size(d)? {
                        slot.dependents.push(dep);
                    }
                }
                d.restore(seq);
                d.restore(with_deps);
            }
            end_member_decode(d, m);
        }
        d.restore(outer);
        Ok(info)
    }
}

/// An appendable `TypeIdentifierWithSize`: the hash (if hashed) and the size.
fn read_with_size(d: &mut Decoder<'_>) -> Result<Option<(TypeHash, u32)>, DecodeError> {
    let element = d.begin_delimited("TypeIdentifierWithSize")?;
    let id = read_id(d)?;
    d.align(4)?;
    let size = d.read_u32()?;
    d.restore(element);
    Ok(id.map(|id| (id, size)))
}

fn read_ids(d: &mut Decoder<'_>) -> Result<Vec<TypeHash>, DecodeError> {
    let seq = d.begin_delimited("type_ids")?;
    let n = d.read_count("type_ids", 1)?;
    let mut ids = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        if let Some(id) = read_id(d)? {
            ids.push(id);
        }
    }
    d.restore(seq);
    Ok(ids)
}

fn read_octets(d: &mut Decoder<'_>) -> Result<Vec<u8>, DecodeError> {
    let n = d.read_count("continuation_point", 1)?;
    if n > MAX_CONTINUATION {
        return Err(d.error(DecodeErrorKind::BoundExceeded {
            bound: MAX_CONTINUATION,
            found: n as u64,
        }));
    }
    Ok(d.bytes(n, "continuation_point")?.to_vec())
}

/// Reads one TypeIdentifier (XTypes 7.3.4.2, a final union): the hash of a hashed one,
/// `None` for any other kind (read and skipped).
fn read_id(d: &mut Decoder<'_>) -> Result<Option<TypeHash>, DecodeError> {
    d.enter()?;
    let r = read_id_inner(d);
    d.leave();
    r
}

fn read_id_inner(d: &mut Decoder<'_>) -> Result<Option<TypeHash>, DecodeError> {
    let kind = d.read_u8()?;
    let header = |d: &mut Decoder<'_>| -> Result<(), DecodeError> {
        d.read_u8()?; // equivalence kind
        d.read_u16()?; // element flags
        Ok(())
    };
    match kind {
        EK_MINIMAL | EK_COMPLETE => {
            let mut id = [0; 15];
            id[0] = kind;
            id[1..].copy_from_slice(d.bytes(14, "equivalence hash")?);
            return Ok(Some(TypeHash(id)));
        }
        // TK_NONE and the primitives: nothing follows.
        0x00..=0x11 => {}
        // Strings: a bound (small or large).
        0x70 | 0x72 => {
            d.read_u8()?;
        }
        0x71 | 0x73 => {
            d.read_u32()?;
        }
        0x80 => {
            header(d)?;
            d.read_u8()?;
            read_id(d)?;
        }
        0x81 => {
            header(d)?;
            d.read_u32()?;
            read_id(d)?;
        }
        0x90 => {
            header(d)?;
            let n = d.read_count("array bounds", 1)?;
            d.skip(n, "array bounds")?;
            read_id(d)?;
        }
        0x91 => {
            header(d)?;
            let n = d.read_count("array bounds", 4)?;
            d.skip(4 * n, "array bounds")?;
            read_id(d)?;
        }
        // Maps: header, bound, element, key flags, key.
        0xa0 | 0xa1 => {
            header(d)?;
            if kind == 0xa0 {
                d.read_u8()?;
            } else {
                d.read_u32()?;
            }
            read_id(d)?;
            d.read_u16()?;
            read_id(d)?;
        }
        // A strongly connected component: its hash (kind and 14 bytes), length, index.
        0xb0 => {
            d.read_u8()?;
            d.skip(14, "component hash")?;
            d.read_i32()?;
            d.read_i32()?;
        }
        other => {
            return Err(d.error(DecodeErrorKind::UnknownDiscriminator {
                type_name: "TypeIdentifier".into(),
                value: other.to_string(),
            }))
        }
    }
    Ok(None)
}

/// A sample: the `CDR2_LE` encapsulation header, the body `f` writes, padded to 4 bytes
/// (the header's options say how much padding).
fn encapsulated(f: impl FnOnce(&mut Encoder<'_>)) -> Vec<u8> {
    let mut buf = Vec::with_capacity(128);
    // INVARIANT: writing into a Vec cannot fail, and `f` reports no errors.
    let _ = crate::sample::encapsulate(
        &mut buf,
        XcdrVersion::Xcdr2,
        Extensibility::Final,
        Endianness::Little,
        |e| {
            f(e);
            Ok(())
        },
    );
    buf
}

fn decapsulated<T>(
    payload: &[u8],
    f: impl FnOnce(&mut Decoder<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    let mut d = Decoder::new(body, XcdrVersion::Xcdr2, header.id.endianness());
    f(&mut d).map_err(|e| {
        let offset = e.offset + EncapsulationHeader::LEN;
        e.at_offset(offset)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // Captured on loopback: `cyclonedds typeof` (Cyclone DDS 11.0.1, PyPI) asking a
    // cyclonedds-python 11.0.1 publisher of `@appendable struct ShapeType { @key string color;
    // long x, y, shapesize; }` for its type, and the publisher's answer.
    const REQUEST: &str = "0007000101102cf9421e5599998e1206000300c300000000010000003100000064\
        64732e6275696c74696e2e544f532e303030303030303030303030303030303030303030303030303030303030\
        30300000000023000000d35282011b0000006560535c1300000001000000f208d118d9666aa2c88eb02a9a284000";
    const REPLY: &str = "0007000001102cf9421e5599998e1206000300c3000000000100000000000000bc00\
        0000d3528201b400000000000000ac000000d14a80529800000001000000f208d118d9666aa2c88eb02a9a2840\
        0080000000f251020012000000000000000a000000536861706554797065000000600000000400000014000000\
        000000002100700006000000636f6c6f72000000100000000100000001000400020000007800000010000000020\
        000000100040002000000790000001800000003000000010004000a000000736861706573697a6500000077658e\
        5b0400000000000000";

    #[test]
    fn cyclone_request_reads_and_writes_back_the_same_bytes() {
        let bytes = hex(REQUEST);
        let r = TypeLookupRequest::parse(&bytes).unwrap();
        assert_eq!(r.request_id.sequence_number, 1);
        assert_eq!(&r.request_id.writer_guid[12..], &[0, 3, 0, 0xc3]);
        assert_eq!(
            r.instance_name,
            format!("dds.builtin.TOS.{}", "0".repeat(32))
        );
        let TypeLookupCall::GetTypes { type_ids } = &r.call else {
            panic!("{r:?}")
        };
        assert_eq!(type_ids.len(), 1);
        assert_eq!(type_ids[0].to_string(), "f208d118d9666aa2c88eb02a9a2840");
        assert_eq!(r.to_vec(), bytes);
    }

    #[test]
    fn cyclone_reply_reads_and_writes_back_the_same_bytes() {
        let bytes = hex(REPLY);
        let r = TypeLookupReply::parse(&bytes).unwrap();
        let TypeLookupReturn::Types {
            types,
            complete_to_minimal,
        } = &r.result
        else {
            panic!("{r:?}")
        };
        assert_eq!(types.len(), 1);
        assert!(complete_to_minimal.is_empty());
        // The TypeObject hashes to the identifier it is paired with.
        assert_eq!(
            &super::super::type_object::equivalence_hash(&types[0].1)[..],
            &types[0].0 .0[1..]
        );
        assert_eq!(r.to_vec(), bytes);
    }

    #[test]
    fn type_information_lists_what_type_information_wrote() {
        use crate::dynamic::type_object::{type_identifier, type_information, type_object};
        use crate::dynamic::{DynamicType, Member, StructType};
        use std::sync::Arc;
        let inner = DynamicType::Struct(Arc::new(StructType {
            name: "M::Inner".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![Member::new("a", 0, DynamicType::Int32)],
        }));
        let outer = DynamicType::Struct(Arc::new(StructType {
            name: "M::Outer".into(),
            extensibility: Extensibility::Final,
            base: None,
            members: vec![
                Member::new("i", 0, inner.clone()),
                Member::new("s", 1, DynamicType::String { bound: None }),
            ],
        }));
        let info = TypeInformation::parse(&type_information(&outer)).unwrap();
        for (kind, got) in [
            (EquivalenceKind::Minimal, &info.minimal),
            (EquivalenceKind::Complete, &info.complete),
        ] {
            let id = TypeHash::from_identifier(&type_identifier(&outer, kind)).unwrap();
            let size = type_object(&outer, kind).unwrap().len() as u32;
            assert_eq!(got.id, Some((id, size)));
            assert_eq!(got.dependent_count, 1);
            let dep = TypeHash::from_identifier(&type_identifier(&inner, kind)).unwrap();
            let dep_size = type_object(&inner, kind).unwrap().len() as u32;
            assert_eq!(got.dependents, vec![(dep, dep_size)]);
        }
    }

    #[test]
    fn dependencies_round_trip() {
        let id = TypeHash([0xf1; 15]);
        let req = TypeLookupRequest {
            request_id: SampleIdentity {
                writer_guid: [7; 16],
                sequence_number: (3 << 32) | 9,
            },
            instance_name: "dds.builtin.TOS.x".into(),
            call: TypeLookupCall::GetTypeDependencies {
                type_ids: vec![id],
                continuation_point: vec![1, 2, 3],
            },
        };
        assert_eq!(TypeLookupRequest::parse(&req.to_vec()).unwrap(), req);
        let reply = TypeLookupReply {
            related_request_id: req.request_id,
            remote_ex: 0,
            result: TypeLookupReturn::Dependencies {
                dependent_typeids: vec![(id, 40), (TypeHash([0xf2; 15]), 7)],
                continuation_point: vec![],
            },
        };
        assert_eq!(TypeLookupReply::parse(&reply.to_vec()).unwrap(), reply);
        let failed = TypeLookupReply {
            result: TypeLookupReturn::Failed {
                operation: GET_TYPES,
                retcode: 3,
            },
            ..reply
        };
        assert_eq!(TypeLookupReply::parse(&failed.to_vec()).unwrap(), failed);
    }

    #[test]
    fn hostile_bytes_are_errors_never_panics() {
        for sample in [hex(REQUEST), hex(REPLY)] {
            for cut in 0..sample.len() {
                let _ = TypeLookupRequest::parse(&sample[..cut]);
                let _ = TypeLookupReply::parse(&sample[..cut]);
            }
            for i in 0..sample.len() * 8 {
                let mut s = sample.clone();
                s[i / 8] ^= 1 << (i % 8);
                let _ = TypeLookupRequest::parse(&s);
                let _ = TypeLookupReply::parse(&s);
            }
        }
        // A count of a billion identifiers in a short sample reserves nothing.
        let mut s = hex(REQUEST);
        s[104..108].copy_from_slice(&1_000_000_000u32.to_le_bytes());
        assert!(TypeLookupRequest::parse(&s).is_err());
    }
}
