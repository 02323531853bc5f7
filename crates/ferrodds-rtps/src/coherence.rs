//! Coherent sets and group order as a change carries them on the wire (DDSI-RTPS 2.5
//! §8.7.5, §8.7.6, §9.6.4.2): the inline QoS of a writer whose publisher has PRESENTATION
//! with coherent or ordered access.
//!
//! - Every change of a coherent set carries PID_COHERENT_SET, the sequence number of its
//!   writer's first change in the set.
//! - A set ends at the writer's next change that carries another value, or none. When the
//!   writer has nothing more to write, it sends a DATA without payload whose
//!   PID_COHERENT_SET is SEQUENCENUMBER_UNKNOWN (the spec's "example 2"; a DATA with
//!   neither payload nor inline QoS, "example 3", means the same and is understood too).
//! - With GROUP scope, every change also carries PID_GROUP_SEQ_NUM, its place in the
//!   publisher's order, and a change of a group coherent set PID_GROUP_COHERENT_SET, the
//!   group sequence number of the set's first change.
//!
//! A subscriber must know when it holds all of a group set, across the publisher's
//! writers. The standard's PID_WRITER_GROUP_INFO carries only a digest of the writers, so
//! a FerroDDS writer's end marker lists them in a vendor-specific parameter
//! ([`pid_writers`]), read only from FerroDDS peers; from others a group set is taken writer
//! by writer, as with TOPIC scope.

use std::sync::Arc;

use crate::wire::parameter_list::{pid, PID_VENDOR_SPECIFIC_FLAG};
use crate::wire::{EntityId, ParameterList, SequenceNumber, VendorId};

/// The vendor-specific parameter (FerroDDS's vendor id) of a group set's end marker: the
/// entity ids of the publisher's writers that wrote in the set, 4 octets each.
pub const fn pid_writers() -> u16 {
    PID_VENDOR_SPECIFIC_FLAG | 0x0101
}

/// At most this many writers are listed in an end marker (they must fit the inline QoS a
/// change is sent with); a larger group set is taken writer by writer.
pub const MAX_LISTED_WRITERS: usize = 16;

/// The coherence of one change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coherence {
    /// PID_COHERENT_SET: the sequence number of the writer's first change in the set;
    /// `None` outside a set (a group-ordered change) and on an end marker.
    pub set: Option<SequenceNumber>,
    /// The change carries no sample: it only ends the writer's set.
    pub end: bool,
    /// GROUP scope.
    pub group: Option<GroupCoherence>,
}

/// A change's place in its publisher's group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupCoherence {
    /// PID_GROUP_COHERENT_SET: the group sequence number of the set's first change.
    pub set: Option<i64>,
    /// PID_GROUP_SEQ_NUM: the change's group sequence number (0 when not sent).
    pub seq: i64,
    /// On an end marker: the writers that wrote in the set.
    pub writers: Option<Arc<[EntityId]>>,
}

impl Coherence {
    /// The end marker of a writer's set (with `group`, of a group set).
    pub fn end_marker(group: Option<GroupCoherence>) -> Self {
        Coherence {
            set: None,
            end: true,
            group,
        }
    }

    /// The parameters of the coherence, for a change's inline QoS: `put(id, value)`.
    pub(crate) fn write(&self, put: &mut dyn FnMut(u16, &[u8])) {
        if self.set.is_some() || self.end {
            let sn = self.set.unwrap_or(SequenceNumber::UNKNOWN);
            put(pid::COHERENT_SET, &sequence_number(sn));
        }
        if let Some(g) = &self.group {
            if let Some(set) = g.set {
                put(
                    pid::GROUP_COHERENT_SET,
                    &sequence_number(SequenceNumber(set)),
                );
            }
            if g.seq > 0 {
                put(pid::GROUP_SEQ_NUM, &sequence_number(SequenceNumber(g.seq)));
            }
            if let Some(writers) = g.writers.as_ref().filter(|w| w.len() <= MAX_LISTED_WRITERS) {
                let mut bytes = [0u8; 4 * MAX_LISTED_WRITERS];
                for (chunk, w) in bytes.chunks_exact_mut(4).zip(writers.iter()) {
                    chunk.copy_from_slice(&w.0);
                }
                put(pid_writers(), &bytes[..4 * writers.len()]);
            }
        }
    }

    /// The coherence a received change's inline QoS gives it, if any. `no_payload`: the
    /// DATA carried neither data nor key; `vendor`: the sender's, which says whether the
    /// vendor-specific writer list may be read.
    pub fn read(
        qos: Option<&ParameterList<'_>>,
        no_payload: bool,
        vendor: VendorId,
    ) -> Option<Box<Coherence>> {
        let mut c = Coherence::default();
        let mut any = false;
        let mut status = false;
        let mut group = GroupCoherence::default();
        let mut grouped = false;
        for p in qos.iter().flat_map(|q| q.iter()) {
            match p.id {
                pid::COHERENT_SET => {
                    any = true;
                    // SEQUENCENUMBER_UNKNOWN (and any value below 1) is "no set": it ends one.
                    c.set = read_sn(&p).filter(|sn| sn.0 >= 1);
                }
                pid::GROUP_COHERENT_SET => {
                    grouped = true;
                    group.set = read_sn(&p).map(|sn| sn.0).filter(|&v| v >= 1);
                }
                pid::GROUP_SEQ_NUM => {
                    grouped = true;
                    group.seq = read_sn(&p).map_or(0, |sn| sn.0.max(0));
                }
                pid::STATUS_INFO => status = true,
                id if id == pid_writers()
                    && vendor == VendorId::FERRODDS
                    && p.value.len() % 4 == 0
                    && p.value.len() <= 4 * MAX_LISTED_WRITERS =>
                {
                    group.writers = Some(
                        p.value
                            .chunks_exact(4)
                            .map(|c| EntityId([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    );
                }
                _ => {}
            }
        }
        // A DATA with neither payload nor status info carries no sample: it ends a set.
        c.end = no_payload && !status;
        if grouped {
            c.group = Some(group);
        }
        (any || grouped || c.end).then(|| Box::new(c))
    }
}

fn sequence_number(sn: SequenceNumber) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&sn.high().to_le_bytes());
    b[4..].copy_from_slice(&sn.low().to_le_bytes());
    b
}

fn read_sn(p: &crate::wire::Parameter<'_>) -> Option<SequenceNumber> {
    let v = p.value.first_chunk::<8>()?;
    let high = p.endianness.u32_from([v[0], v[1], v[2], v[3]]) as i32;
    let low = p.endianness.u32_from([v[4], v[5], v[6], v[7]]);
    Some(SequenceNumber::from_parts(high, low))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Endianness;

    fn roundtrip(c: &Coherence, no_payload: bool, vendor: VendorId) -> Option<Box<Coherence>> {
        let mut bytes = Vec::new();
        c.write(&mut |id, value| {
            bytes.extend_from_slice(&id.to_le_bytes());
            bytes.extend_from_slice(&(value.len() as u16).to_le_bytes());
            bytes.extend_from_slice(value);
        });
        bytes.extend_from_slice(&[1, 0, 0, 0]);
        let (list, _) = ParameterList::parse(&bytes, Endianness::Little).unwrap();
        Coherence::read(Some(&list), no_payload, vendor)
    }

    #[test]
    fn a_set_member_and_an_end_marker_read_back_as_written() {
        let member = Coherence {
            set: Some(SequenceNumber(7)),
            end: false,
            group: Some(GroupCoherence {
                set: Some(3),
                seq: 5,
                writers: None,
            }),
        };
        assert_eq!(
            *roundtrip(&member, false, VendorId::FERRODDS).unwrap(),
            member
        );
        let writers: Arc<[EntityId]> = vec![EntityId([0, 0, 1, 2]), EntityId([0, 0, 2, 2])].into();
        let end = Coherence::end_marker(Some(GroupCoherence {
            set: Some(3),
            seq: 0,
            writers: Some(writers),
        }));
        assert_eq!(*roundtrip(&end, true, VendorId::FERRODDS).unwrap(), end);
        // Another vendor's parameter of the same id means something else: not read.
        let other = roundtrip(&end, true, VendorId([1, 1])).unwrap();
        assert_eq!(other.group.as_ref().unwrap().writers, None);
    }

    #[test]
    fn a_bare_data_ends_a_set_and_a_plain_sample_has_no_coherence() {
        let end = Coherence::read(None, true, VendorId([1, 1])).unwrap();
        assert!(end.end && end.set.is_none());
        assert!(Coherence::read(None, false, VendorId::FERRODDS).is_none());
    }
}
