//! GAP (0x08) (DDSI-RTPS 2.5 §8.3.7.4, §9.4.5.5).
//!
//! ```text
//! +-------+---------+---------------+
//! | 0x08  |       E | octetsToNext  |
//! |            readerId             |
//! |            writerId             |
//! |       gapStart (8 bytes)        |
//! ~        gapList (SN set)         ~
//! ```
//!
//! The irrelevant sequence numbers are [gapStart, gapList.bitmapBase - 1] and the members
//! of gapList. The group-information and filtered-count extensions of DDSI-RTPS 2.4/2.5
//! (G and F flags) follow these fields and are ignored like any trailing bytes.
//!
//! Validation beyond §8.3.7.4.3 (gapStart ≥ 1, gapList valid): a gapList whose base lies
//! below gapStart — a reversed range — is malformed. The spec does not spell this rule
//! out, and Cyclone DDS does not check it, but such a GAP has no consistent meaning; the
//! captures of Cyclone, Fast DDS and Connext hold no GAP at all, so this is a decision to
//! revisit if a peer turns out to send one. gapList.bitmapBase == gapStart (an empty first
//! range) is valid: RTI Connext Micro's release notes record fixing its handling of GAPs
//! of exactly that shape, so peers send them.

use super::codec::{Reader, Writer};
use super::submessage::submessage_id;
use super::{EmitError, EntityId, MalformedError, SequenceNumber, SequenceNumberSet};

/// GAP: sequence numbers the reader will never receive (§8.3.7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gap {
    /// The reader addressed, or `EntityId::UNKNOWN` for all.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// First sequence number of the irrelevant range.
    pub gap_start: SequenceNumber,
    /// The range ends at gapList.bitmapBase - 1; the set's members are also irrelevant.
    pub gap_list: SequenceNumberSet,
}

impl Gap {
    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let reader_id = EntityId(r.array()?);
        let writer_id = EntityId(r.array()?);
        let start_offset = r.offset();
        let gap_start = SequenceNumber::read(r)?;
        let gap_list = SequenceNumberSet::read(r, false)?;
        if gap_start.0 < 1 {
            return Err(MalformedError::InvalidSequenceNumber {
                offset: start_offset,
                submessage: submessage_id::GAP,
                value: gap_start.0,
            });
        }
        if gap_list.base() < gap_start {
            return Err(MalformedError::GapRange {
                offset: start_offset,
                gap_start: gap_start.0,
                list_base: gap_list.base().0,
            });
        }
        Ok(Gap {
            reader_id,
            writer_id,
            gap_start,
            gap_list,
        })
    }

    /// True if `sn` is declared irrelevant by this GAP.
    pub fn contains(&self, sn: SequenceNumber) -> bool {
        (sn >= self.gap_start && sn < self.gap_list.base()) || self.gap_list.contains(sn)
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        8 + SequenceNumber::LEN + self.gap_list.buffer_len()
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.reader_id.0)?;
        w.put(&self.writer_id.0)?;
        self.gap_start.write(w)?;
        self.gap_list.write(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::submessage::test_util::{check_truncations, emit, parse};
    use crate::wire::{Endianness, Submessage};

    // GAP: 3..=5 irrelevant (gapStart 3, base 6), plus 8 (numBits 3, bit 2).
    static GAP_LE: [u8; 36] = [
        0x08, 0x01, 0x20, 0x00, //
        0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, // gapStart 3
        0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, // bitmapBase 6
        0x03, 0x00, 0x00, 0x00, // numBits 3
        0x00, 0x00, 0x00, 0x20, // bitmap: bit 2
    ];

    static GAP_BE: [u8; 36] = [
        0x08, 0x00, 0x00, 0x20, //
        0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, //
        0x00, 0x00, 0x00, 0x03, //
        0x20, 0x00, 0x00, 0x00,
    ];

    fn gap() -> Gap {
        let mut list = SequenceNumberSet::new(SequenceNumber(6));
        list.insert(SequenceNumber(8));
        Gap {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::from_u32(0x102),
            gap_start: SequenceNumber(3),
            gap_list: list,
        }
    }

    #[test]
    fn test_gap_parse() {
        assert_eq!(parse(&GAP_LE), Ok(Submessage::Gap(gap())));
        assert_eq!(parse(&GAP_BE), Ok(Submessage::Gap(gap())));
        let g = gap();
        let irrelevant: Vec<i64> = (1..10).filter(|&i| g.contains(SequenceNumber(i))).collect();
        assert_eq!(irrelevant, [3, 4, 5, 8]);
    }

    #[test]
    fn test_gap_emit() {
        assert_eq!(emit(&gap().into(), Endianness::Little), GAP_LE.to_vec());
        assert_eq!(emit(&gap().into(), Endianness::Big), GAP_BE.to_vec());
    }

    #[test]
    fn gap_reversed_range_is_malformed() {
        // gapStart 7 > bitmapBase 6.
        let mut b = GAP_LE;
        b[16] = 7;
        assert_eq!(
            parse(&b),
            Err(MalformedError::GapRange {
                offset: 12,
                gap_start: 7,
                list_base: 6
            })
        );
        // gapStart == bitmapBase is fine (an empty first range).
        b[16] = 6;
        assert!(parse(&b).is_ok());
        // gapStart 0.
        let mut b = GAP_LE;
        b[16] = 0;
        assert!(matches!(
            parse(&b),
            Err(MalformedError::InvalidSequenceNumber { offset: 12, .. })
        ));
        // gapList base 0 (no pre-emptive exception here).
        let mut b = GAP_LE;
        b[24] = 0;
        assert_eq!(
            parse(&b),
            Err(MalformedError::SequenceNumberSetBase {
                offset: 20,
                base: 0
            })
        );
        check_truncations(&GAP_LE);
        check_truncations(&GAP_BE);
    }
}
