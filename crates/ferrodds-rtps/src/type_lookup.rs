//! The XTypes TypeLookup service (DDS-XTypes 1.3 §7.6.3.3), without I/O: what a participant
//! answers about its own types and what it holds of its peers'.
//!
//! The discovery engine owns one [`TypeLookup`], creates the four builtin endpoints
//! (request and reply, writer and reader) and hands it what they receive. Our types are
//! registered when an endpoint of them is created ([`TypeLookup::register`]): every type
//! they depend on, minimal and complete, by identifier. A request names identifiers; the
//! reply carries the TypeObjects of those we have (`getTypes`) or the identifiers they
//! depend on (`getTypeDependencies`, one page).
//!
//! A peer's types are asked for with [`TypeLookup::request`] (a type and its dependencies,
//! from the TypeInformation of its SEDP announcement). A reply is hostile input like any
//! other: only TypeObjects of identifiers we asked for and still want, whose MD5 is that
//! identifier, are kept, and no more than `Limits::max_remote_types` of them and
//! `Limits::max_remote_type_bytes` in all; the rest is dropped and counted
//! ([`TypeLookupStats`]). Parsing a held TypeObject into a runtime type is bounded by
//! `ferrodds_cdr::dynamic::type_object::MAX_TYPE_DEPTH`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use ferrodds_cdr::dynamic::type_lookup::{
    SampleIdentity, TypeHash, TypeInformation, TypeLookupCall, TypeLookupReply, TypeLookupRequest,
    TypeLookupReturn,
};
use ferrodds_cdr::dynamic::type_object::{
    dependencies, equivalence_hash, parse_complete, type_identifier, type_information, type_object,
    EquivalenceKind, TypeObjectError,
};
use ferrodds_cdr::dynamic::DynamicType;

use crate::limits::Limits;
use crate::time::Timestamp;
use crate::wire::{EntityId, Guid};

/// Identifiers a reply lists at most (a request asking for more gets the first ones), and
/// that one request of ours asks for (a type with more dependencies takes several).
const MAX_REPLY_TYPES: usize = 256;

/// How long to wait for a reply before asking again, and how many times to ask.
const RETRY_AFTER: Duration = Duration::from_secs(1);
const MAX_ATTEMPTS: u32 = 10;

/// What the service received, answered and refused, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeLookupStats {
    /// Requests answered.
    pub requests_answered: u64,
    /// Requests that named none of our types (not answered).
    pub requests_unknown: u64,
    /// Requests and replies that did not parse.
    pub malformed: u64,
    /// TypeObjects received and kept.
    pub types_received: u64,
    /// TypeObjects in replies that we did not ask for (or no longer want): dropped.
    pub types_unasked: u64,
    /// TypeObjects whose MD5 is not the identifier they came with: dropped.
    pub types_mismatched: u64,
    /// TypeObjects dropped because `max_remote_types` or `max_remote_type_bytes` were held.
    pub types_dropped: u64,
}

#[derive(Debug)]
struct Wanted {
    /// When to ask again.
    retry_at: Timestamp,
    attempts: u32,
}

/// The service's state: our types, what we obtained of our peers', what we wait for.
#[derive(Debug)]
pub struct TypeLookup {
    writer: Guid,
    local: HashMap<TypeHash, Arc<[u8]>>,
    /// The types each of our types depends on (for `getTypeDependencies`), with sizes.
    local_dependencies: HashMap<TypeHash, Vec<(TypeHash, u32)>>,
    remote: HashMap<TypeHash, Arc<[u8]>>,
    remote_bytes: usize,
    wanted: BTreeMap<TypeHash, Wanted>,
    /// Types asked for `MAX_ATTEMPTS` times without an answer (bounded like `remote`).
    given_up: BTreeSet<TypeHash>,
    sequence: i64,
    stats: TypeLookupStats,
    limits: Limits,
}

impl TypeLookup {
    /// The service of the participant whose request writer is `writer`.
    pub fn new(writer: Guid, limits: Limits) -> Self {
        debug_assert_eq!(writer.entity_id, EntityId::TYPE_LOOKUP_REQUEST_WRITER);
        TypeLookup {
            writer,
            local: HashMap::new(),
            local_dependencies: HashMap::new(),
            remote: HashMap::new(),
            remote_bytes: 0,
            wanted: BTreeMap::new(),
            given_up: BTreeSet::new(),
            sequence: 0,
            stats: TypeLookupStats::default(),
            limits,
        }
    }

    /// What the service counted.
    pub fn stats(&self) -> TypeLookupStats {
        self.stats
    }

    /// Makes `ty` and every type it depends on known to peers; returns its
    /// `TypeInformation` (for `PID_TYPE_INFORMATION`).
    pub fn register(&mut self, ty: &DynamicType) -> Vec<u8> {
        let deps = dependencies(ty);
        for kind in [EquivalenceKind::Minimal, EquivalenceKind::Complete] {
            let mut listed = Vec::new();
            for t in std::iter::once(ty).chain(&deps) {
                let (Some(id), Some(object)) = (
                    TypeHash::from_identifier(&type_identifier(t, kind)),
                    type_object(t, kind),
                ) else {
                    continue;
                };
                if !std::ptr::eq(t, ty) && !listed.iter().any(|(l, _)| *l == id) {
                    listed.push((id, object.len() as u32));
                }
                self.local.entry(id).or_insert_with(|| Arc::from(object));
            }
            if let Some(id) = TypeHash::from_identifier(&type_identifier(ty, kind)) {
                self.local_dependencies.entry(id).or_insert(listed);
            }
        }
        type_information(ty)
    }

    /// The answer to a request (a TypeLookup_Reply sample), or `None` when the request
    /// names none of our types or does not parse.
    pub fn handle_request(&mut self, payload: &[u8]) -> Option<Vec<u8>> {
        let Ok(request) = TypeLookupRequest::parse(payload) else {
            self.stats.malformed += 1;
            return None;
        };
        let result = match &request.call {
            TypeLookupCall::GetTypes { type_ids } => {
                let mut types = Vec::new();
                for id in type_ids {
                    if types.len() >= MAX_REPLY_TYPES {
                        break;
                    }
                    if let Some(object) = self.local.get(id) {
                        if !types.iter().any(|(t, _)| t == id) {
                            types.push((*id, object.to_vec()));
                        }
                    }
                }
                if types.is_empty() {
                    None
                } else {
                    Some(TypeLookupReturn::Types {
                        types,
                        complete_to_minimal: Vec::new(),
                    })
                }
            }
            TypeLookupCall::GetTypeDependencies { type_ids, .. } => {
                let mut dependent_typeids: Vec<(TypeHash, u32)> = Vec::new();
                let mut known = false;
                for id in type_ids {
                    if let Some(deps) = self.local_dependencies.get(id) {
                        known = true;
                        for dep in deps {
                            if dependent_typeids.len() < MAX_REPLY_TYPES
                                && !dependent_typeids.contains(dep)
                            {
                                dependent_typeids.push(*dep);
                            }
                        }
                    }
                }
                // Everything fits one page: no continuation point.
                known.then_some(TypeLookupReturn::Dependencies {
                    dependent_typeids,
                    continuation_point: Vec::new(),
                })
            }
            TypeLookupCall::Unknown(_) => None,
        };
        let Some(result) = result else {
            self.stats.requests_unknown += 1;
            return None;
        };
        self.stats.requests_answered += 1;
        Some(
            TypeLookupReply {
                related_request_id: request.request_id,
                remote_ex: 0,
                result,
            }
            .to_vec(),
        )
    }

    /// Asks for the complete type `info` describes and the complete types it depends on,
    /// those not held yet nor asked for: the request sample to write, or `None` when
    /// nothing is missing.
    pub fn request(&mut self, now: Timestamp, info: &TypeInformation) -> Option<Vec<u8>> {
        let complete = &info.complete;
        // A peer's TypeInformation may list thousands of dependencies: ask for a bounded
        // number at a time, and never want more types than we may hold.
        let room = self
            .limits
            .max_remote_types
            .saturating_sub(self.remote.len() + self.wanted.len())
            .min(MAX_REPLY_TYPES);
        let mut ids: BTreeSet<TypeHash> = BTreeSet::new();
        for (id, _) in complete.id.iter().chain(&complete.dependents) {
            if ids.len() >= room {
                break;
            }
            if self.known(id).is_none()
                && !self.wanted.contains_key(id)
                && !self.given_up.contains(id)
            {
                ids.insert(*id);
            }
        }
        let ids: Vec<TypeHash> = ids.into_iter().collect();
        if ids.is_empty() {
            return None;
        }
        for id in &ids {
            self.wanted.insert(
                *id,
                Wanted {
                    retry_at: now.after(RETRY_AFTER),
                    attempts: 1,
                },
            );
        }
        Some(self.request_sample(ids))
    }

    fn request_sample(&mut self, type_ids: Vec<TypeHash>) -> Vec<u8> {
        self.sequence += 1;
        TypeLookupRequest {
            request_id: SampleIdentity {
                writer_guid: self.writer.to_bytes(),
                sequence_number: self.sequence,
            },
            // Anyone who has it may answer (as Cyclone DDS asks).
            instance_name: format!("dds.builtin.TOS.{}", "0".repeat(32)),
            call: TypeLookupCall::GetTypes { type_ids },
        }
        .to_vec()
    }

    /// When a request is next due again.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.wanted.values().map(|w| w.retry_at).min()
    }

    /// A request asking again for what is still missing, if one is due; gives up on a
    /// type after `MAX_ATTEMPTS` requests.
    pub fn handle_timeout(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        let mut due = Vec::new();
        let given_up = &mut self.given_up;
        let max_given_up = self.limits.max_remote_types;
        self.wanted.retain(|id, w| {
            if w.retry_at > now || due.len() >= MAX_REPLY_TYPES {
                return true;
            }
            if w.attempts >= MAX_ATTEMPTS {
                if given_up.len() < max_given_up {
                    given_up.insert(*id);
                }
                return false;
            }
            w.attempts += 1;
            w.retry_at = now.after(RETRY_AFTER);
            due.push(*id);
            true
        });
        (!due.is_empty()).then(|| self.request_sample(due))
    }

    /// Takes in a reply: keeps the TypeObjects asked for that hash to their identifiers;
    /// returns how many were kept.
    pub fn handle_reply(&mut self, payload: &[u8]) -> usize {
        let reply = match TypeLookupReply::parse(payload) {
            Ok(r) => r,
            Err(_) => {
                self.stats.malformed += 1;
                return 0;
            }
        };
        let TypeLookupReturn::Types { types, .. } = reply.result else {
            return 0;
        };
        let mut kept = 0;
        for (id, object) in types {
            if !self.wanted.contains_key(&id) {
                self.stats.types_unasked += 1;
                continue;
            }
            if equivalence_hash(&object)[..] != id.0[1..] {
                self.stats.types_mismatched += 1;
                continue;
            }
            if self.remote.len() >= self.limits.max_remote_types
                || self.remote_bytes + object.len() > self.limits.max_remote_type_bytes
            {
                self.stats.types_dropped += 1;
                continue;
            }
            self.wanted.remove(&id);
            self.remote_bytes += object.len();
            self.remote.insert(id, Arc::from(object));
            self.stats.types_received += 1;
            kept += 1;
        }
        kept
    }

    /// How many types were given up on (no answer after `MAX_ATTEMPTS` requests).
    pub fn gave_up(&self) -> usize {
        self.given_up.len()
    }

    /// True when a type `info` needs was asked for and never came.
    pub fn cannot_obtain(&self, info: &TypeInformation) -> bool {
        let c = &info.complete;
        c.id.iter()
            .chain(&c.dependents)
            .any(|(id, _)| self.given_up.contains(id))
    }

    /// The TypeObject of `id`, ours or a peer's.
    pub fn known(&self, id: &TypeHash) -> Option<&Arc<[u8]>> {
        self.local.get(id).or_else(|| self.remote.get(id))
    }

    /// The runtime type of the complete type `info` describes, once its TypeObject and
    /// those of its dependencies are held; `None` while any is missing.
    pub fn resolve(&self, info: &TypeInformation) -> Option<Result<DynamicType, TypeObjectError>> {
        let (id, _) = info.complete.id?;
        let object = self.known(&id)?;
        let lookup = |identifier: &[u8]| -> Option<&[u8]> {
            TypeHash::from_identifier(identifier)
                .and_then(|h| self.known(&h))
                .map(|o| &o[..])
        };
        match parse_complete(object, &lookup) {
            Err(TypeObjectError::UnknownType(_)) => None,
            other => Some(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::GuidPrefix;
    use ferrodds_cdr::dynamic::{Member, StructType};
    use ferrodds_cdr::Extensibility;

    fn shape() -> DynamicType {
        let color = DynamicType::Struct(Arc::new(StructType {
            name: "Color".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![Member::new(
                "name",
                0,
                DynamicType::String { bound: Some(128) },
            )],
        }));
        DynamicType::Struct(Arc::new(StructType {
            name: "ShapeType".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![
                Member::new("color", 0, color).key(),
                Member::new("x", 1, DynamicType::Int32),
            ],
        }))
    }

    fn service(n: u8) -> TypeLookup {
        TypeLookup::new(
            Guid::new(GuidPrefix([n; 12]), EntityId::TYPE_LOOKUP_REQUEST_WRITER),
            Limits::default(),
        )
    }

    #[test]
    fn a_peer_obtains_our_type_and_its_dependencies() {
        let mut ours = service(1);
        let info = TypeInformation::parse(&ours.register(&shape())).unwrap();
        let mut peer = service(2);
        let request = peer.request(Timestamp(0), &info).unwrap();
        // Asked once: nothing more to ask until the reply or a retry.
        assert!(peer.request(Timestamp(0), &info).is_none());
        assert!(peer.resolve(&info).is_none());
        let reply = ours.handle_request(&request).unwrap();
        assert_eq!(peer.handle_reply(&reply), 2);
        assert_eq!(peer.resolve(&info).unwrap().unwrap(), shape());
        assert_eq!(peer.poll_timeout(), None);
    }

    #[test]
    fn dependencies_are_answered_in_one_page() {
        let mut ours = service(1);
        let info = TypeInformation::parse(&ours.register(&shape())).unwrap();
        let request = TypeLookupRequest {
            request_id: SampleIdentity::default(),
            instance_name: String::new(),
            call: TypeLookupCall::GetTypeDependencies {
                type_ids: vec![info.minimal.id.unwrap().0],
                continuation_point: vec![],
            },
        };
        let reply = TypeLookupReply::parse(&ours.handle_request(&request.to_vec()).unwrap());
        assert_eq!(
            reply.unwrap().result,
            TypeLookupReturn::Dependencies {
                dependent_typeids: info.minimal.dependents.clone(),
                continuation_point: vec![],
            }
        );
    }

    #[test]
    fn replies_are_hostile_input() {
        let mut ours = service(1);
        let info = TypeInformation::parse(&ours.register(&shape())).unwrap();
        let mut peer = service(2);
        // A reply nobody asked for is not stored.
        let unasked = service(3).request(Timestamp(0), &info).unwrap();
        let reply = ours.handle_request(&unasked).unwrap();
        assert_eq!(peer.handle_reply(&reply), 0);
        assert_eq!(peer.stats().types_unasked, 2);
        // A TypeObject that is not what its identifier says is not stored.
        let request = peer.request(Timestamp(0), &info).unwrap();
        let mut forged = TypeLookupReply::parse(&ours.handle_request(&request).unwrap()).unwrap();
        if let TypeLookupReturn::Types { types, .. } = &mut forged.result {
            for (_, object) in types.iter_mut() {
                let last = object.len() - 1;
                object[last] ^= 1;
            }
        }
        assert_eq!(peer.handle_reply(&forged.to_vec()), 0);
        assert_eq!(peer.stats().types_mismatched, 2);
        // Nothing beyond the limits: with room for one type, one is asked for and kept.
        let small = Limits {
            max_remote_types: 1,
            ..Limits::default()
        };
        let mut peer = TypeLookup::new(peer.writer, small);
        let request = peer.request(Timestamp(0), &info).unwrap();
        assert_eq!(
            peer.handle_reply(&ours.handle_request(&request).unwrap()),
            1
        );
        assert!(peer.request(Timestamp(0), &info).is_none());
        assert!(peer.resolve(&info).is_none());
        // With room for too few bytes, what is asked for is dropped on arrival.
        let tiny = Limits {
            max_remote_type_bytes: 8,
            ..Limits::default()
        };
        let mut peer = TypeLookup::new(peer.writer, tiny);
        let request = peer.request(Timestamp(0), &info).unwrap();
        assert_eq!(
            peer.handle_reply(&ours.handle_request(&request).unwrap()),
            0
        );
        assert_eq!(peer.stats().types_dropped, 2);
        assert!(peer.resolve(&info).is_none());
        // Garbage is counted.
        assert_eq!(peer.handle_reply(&[0, 7, 0, 0, 1]), 0);
        assert!(ours.handle_request(&[0, 7, 0, 0, 1]).is_none());
        assert_eq!(peer.stats().malformed + ours.stats().malformed, 2);
    }

    #[test]
    fn thousands_of_dependencies_are_asked_for_a_bounded_number_at_a_time() {
        let dependents: Vec<(TypeHash, u32)> = (0..5000u32)
            .map(|i| {
                let mut id = [0xf2; 15];
                id[1..5].copy_from_slice(&i.to_le_bytes());
                (TypeHash(id), 40)
            })
            .collect();
        let info = TypeInformation {
            complete: ferrodds_cdr::dynamic::type_lookup::TypeWithDependencies {
                id: Some((TypeHash([0xf2; 15]), 40)),
                dependent_count: 5000,
                dependents,
            },
            ..TypeInformation::default()
        };
        let limits = Limits {
            max_remote_types: 600,
            ..Limits::default()
        };
        let mut peer = TypeLookup::new(service(2).writer, limits);
        let count = |request: &[u8]| match TypeLookupRequest::parse(request).unwrap().call {
            TypeLookupCall::GetTypes { type_ids } => type_ids.len(),
            _ => 0,
        };
        let mut asked = Vec::new();
        for _ in 0..10 {
            if let Some(r) = peer.request(Timestamp(0), &info) {
                asked.push(count(&r));
            }
        }
        // 256, 256, then what room is left under max_remote_types; then nothing.
        assert_eq!(asked, [256, 256, 88]);
        assert_eq!(peer.wanted.len(), 600);
        // Retries go out a bounded number at a time too.
        let again = peer
            .handle_timeout(Timestamp(0).after(RETRY_AFTER))
            .unwrap();
        assert_eq!(count(&again), 256);
    }

    #[test]
    fn missing_types_are_asked_for_again_a_bounded_number_of_times() {
        let mut ours = service(1);
        let info = TypeInformation::parse(&ours.register(&shape())).unwrap();
        let mut peer = service(2);
        peer.request(Timestamp(0), &info).unwrap();
        let mut asked = 1;
        for _ in 0..100 {
            let Some(now) = peer.poll_timeout() else {
                break;
            };
            if let Some(again) = peer.handle_timeout(now) {
                asked += 1;
                let TypeLookupCall::GetTypes { type_ids } =
                    TypeLookupRequest::parse(&again).unwrap().call
                else {
                    panic!()
                };
                assert_eq!(type_ids.len(), 2);
            }
        }
        assert_eq!(asked, MAX_ATTEMPTS);
        assert_eq!(peer.poll_timeout(), None);
    }
}
