//! PID_ORIGINAL_WRITER_INFO (DDSI-RTPS 2.5 §9.6.3.8, inline QoS): a change relayed by a
//! durability service names the writer that wrote it and the sequence number it had there,
//! so that a reader that got the change from that writer too takes it in once.

use crate::wire::parameter_list::pid;
use crate::wire::{Endianness, Guid, Parameter, ParameterList, SequenceNumber};

/// The writer a relayed change comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OriginalWriterInfo {
    /// The writer that wrote it.
    pub writer: Guid,
    /// Its sequence number at that writer.
    pub sequence_number: SequenceNumber,
}

impl OriginalWriterInfo {
    /// Length of the value as sent: the GUID, the sequence number and an empty parameter
    /// list (the original writer's inline QoS, which FerroDDS does not relay).
    pub(crate) const LEN: usize = 16 + 8 + 4;

    /// The parameter's value (little-endian), for a change's inline QoS.
    pub(crate) fn value(&self) -> [u8; Self::LEN] {
        let mut v = [0u8; Self::LEN];
        v[..16].copy_from_slice(&self.writer.to_bytes());
        v[16..20].copy_from_slice(&self.sequence_number.high().to_le_bytes());
        v[20..24].copy_from_slice(&self.sequence_number.low().to_le_bytes());
        // PID_SENTINEL, length 0.
        v[24..26].copy_from_slice(&pid::SENTINEL.to_le_bytes());
        v
    }

    /// The info in a change's inline QoS, if there is (a well-formed) one.
    pub fn find(qos: Option<&ParameterList<'_>>) -> Option<OriginalWriterInfo> {
        qos?.iter()
            .find(|p| p.id == pid::ORIGINAL_WRITER_INFO)
            .and_then(|p| Self::parse(&p))
    }

    fn parse(p: &Parameter<'_>) -> Option<OriginalWriterInfo> {
        let v = p.value.get(..24)?;
        let writer = Guid::from_bytes(v[..16].try_into().ok()?);
        let word = |b: &[u8]| -> Option<u32> {
            let b: [u8; 4] = b.try_into().ok()?;
            Some(match p.endianness {
                Endianness::Little => u32::from_le_bytes(b),
                Endianness::Big => u32::from_be_bytes(b),
            })
        };
        let sequence_number =
            SequenceNumber::from_parts(word(&v[16..20])? as i32, word(&v[20..24])?);
        (sequence_number.0 >= 1).then_some(OriginalWriterInfo {
            writer,
            sequence_number,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{EntityId, GuidPrefix};

    #[test]
    fn the_info_reads_back_as_written_and_a_bad_one_is_ignored() {
        let info = OriginalWriterInfo {
            writer: Guid::new(GuidPrefix([7; 12]), EntityId([0, 0, 1, 2])),
            sequence_number: SequenceNumber((5 << 32) | 9),
        };
        let list = |value: &[u8]| {
            let mut bytes = Vec::new();
            bytes.extend_from_slice(&pid::ORIGINAL_WRITER_INFO.to_le_bytes());
            bytes.extend_from_slice(&(value.len() as u16).to_le_bytes());
            bytes.extend_from_slice(value);
            bytes.extend_from_slice(&[1, 0, 0, 0]);
            bytes
        };
        let bytes = list(&info.value());
        let (parsed, _) = ParameterList::parse(&bytes, Endianness::Little).unwrap();
        assert_eq!(OriginalWriterInfo::find(Some(&parsed)), Some(info));
        // Too short, or sequence number 0: not an original writer.
        let short = list(&info.value()[..20]);
        let (parsed, _) = ParameterList::parse(&short, Endianness::Little).unwrap();
        assert_eq!(OriginalWriterInfo::find(Some(&parsed)), None);
        let mut zero = info.value();
        zero[16..24].fill(0);
        let zero = list(&zero);
        let (parsed, _) = ParameterList::parse(&zero, Endianness::Little).unwrap();
        assert_eq!(OriginalWriterInfo::find(Some(&parsed)), None);
    }
}
