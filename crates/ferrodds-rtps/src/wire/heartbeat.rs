//! HEARTBEAT (0x07) and HEARTBEAT_FRAG (0x13) (DDSI-RTPS 2.5 §8.3.7.5, §8.3.7.6,
//! §9.4.5.6, §9.4.5.7).
//!
//! ```text
//! HEARTBEAT                                  HEARTBEAT_FRAG
//! +-------+-----------+---------------+      +-------+-------+---------------+
//! | 0x07  |G|L|F|E    | octetsToNext  |      | 0x13  |     E | octetsToNext  |
//! |            readerId               |      |            readerId           |
//! |            writerId               |      |            writerId           |
//! |        firstSN (8 bytes)          |      |       writerSN (8 bytes)      |
//! |        lastSN (8 bytes)           |      |    lastFragmentNum (u32)      |
//! |        count (u32)                |      |        count (u32)            |
//! ```
//!
//! The group-information extension of HEARTBEAT (G flag, DDSI-RTPS 2.4+: currentGSN,
//! firstGSN, lastGSN, writer sets) is not decoded; its bytes follow the fields above and
//! are ignored like any trailing bytes of a submessage (§8.3.4.1).

use super::codec::{Reader, Writer};
use super::submessage::submessage_id;
use super::{EmitError, EntityId, MalformedError, SequenceNumber};

/// HEARTBEAT flag F: the reader need not answer.
const FLAG_FINAL: u8 = 0x02;
/// HEARTBEAT flag L: the heartbeat also asserts the writer's liveliness.
const FLAG_LIVELINESS: u8 = 0x04;

/// HEARTBEAT: the range of sequence numbers a writer has available (§8.3.7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Heartbeat {
    /// The reader addressed, or `EntityId::UNKNOWN` for all.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// First available sequence number (≥ 1).
    pub first_sn: SequenceNumber,
    /// Last available sequence number (≥ first_sn - 1; equal means "none available").
    pub last_sn: SequenceNumber,
    /// Increments with every heartbeat, to detect duplicates.
    pub count: u32,
    /// F flag: no response required.
    pub final_flag: bool,
    /// L flag: liveliness assertion.
    pub liveliness_flag: bool,
}

impl Heartbeat {
    /// Body length.
    pub const BODY_LEN: usize = 28;

    pub(crate) fn parse(flags: u8, r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let reader_id = EntityId(r.array()?);
        let writer_id = EntityId(r.array()?);
        let first_offset = r.offset();
        let first_sn = SequenceNumber::read(r)?;
        let last_sn = SequenceNumber::read(r)?;
        let count = r.u32()?;
        // §8.3.7.5.3: firstSN.value <= 0, lastSN.value < 0 or lastSN.value <
        // firstSN.value - 1 make the submessage invalid.
        let first_ok = first_sn.0 >= 1;
        let last_ok = first_sn
            .0
            .checked_sub(1)
            .is_some_and(|min_last| last_sn.0 >= min_last);
        if !first_ok {
            return Err(MalformedError::InvalidSequenceNumber {
                offset: first_offset,
                submessage: submessage_id::HEARTBEAT,
                value: first_sn.0,
            });
        }
        if !last_ok {
            return Err(MalformedError::HeartbeatRange {
                offset: first_offset,
                first: first_sn.0,
                last: last_sn.0,
            });
        }
        Ok(Heartbeat {
            reader_id,
            writer_id,
            first_sn,
            last_sn,
            count,
            final_flag: flags & FLAG_FINAL != 0,
            liveliness_flag: flags & FLAG_LIVELINESS != 0,
        })
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        let mut flags = 0;
        if self.final_flag {
            flags |= FLAG_FINAL;
        }
        if self.liveliness_flag {
            flags |= FLAG_LIVELINESS;
        }
        flags
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.reader_id.0)?;
        w.put(&self.writer_id.0)?;
        self.first_sn.write(w)?;
        self.last_sn.write(w)?;
        w.put_u32(self.count)
    }
}

/// HEARTBEAT_FRAG: the fragments of one sample a writer has available (§8.3.7.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HeartbeatFrag {
    /// The reader addressed, or `EntityId::UNKNOWN` for all.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// The sample.
    pub writer_sn: SequenceNumber,
    /// All fragments up to and including this one are available (≥ 1).
    pub last_fragment_num: u32,
    /// Increments with every HEARTBEAT_FRAG, to detect duplicates.
    pub count: u32,
}

impl HeartbeatFrag {
    /// Body length.
    pub const BODY_LEN: usize = 24;

    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let reader_id = EntityId(r.array()?);
        let writer_id = EntityId(r.array()?);
        let sn_offset = r.offset();
        let writer_sn = SequenceNumber::read(r)?;
        let frag_offset = r.offset();
        let last_fragment_num = r.u32()?;
        let count = r.u32()?;
        // §8.3.7.6.3: writerSN.value <= 0 or lastFragmentNum.value <= 0 are invalid.
        if writer_sn.0 < 1 {
            return Err(MalformedError::InvalidSequenceNumber {
                offset: sn_offset,
                submessage: submessage_id::HEARTBEAT_FRAG,
                value: writer_sn.0,
            });
        }
        if last_fragment_num == 0 {
            return Err(MalformedError::FragmentNumberZero {
                offset: frag_offset,
            });
        }
        Ok(HeartbeatFrag {
            reader_id,
            writer_id,
            writer_sn,
            last_fragment_num,
            count,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.reader_id.0)?;
        w.put(&self.writer_id.0)?;
        self.writer_sn.write(w)?;
        w.put_u32(self.last_fragment_num)?;
        w.put_u32(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::submessage::test_util::{check_truncations, emit, parse};
    use crate::wire::{Endianness, Submessage};

    // HEARTBEAT from Cyclone DDS 0.10.2 (cyclone_pingpong.pcap, frame 6):
    //   submessageId: HEARTBEAT (0x07), Flags: 0x01 (Endianness bit), octetsToNextHeader: 28
    //   readerEntityId: ENTITYID_UNKNOWN (0x00000000)
    //   writerEntityId: ENTITYID_BUILTIN_PUBLICATIONS_WRITER (0x000003c2)
    //   firstAvailableSeqNumber: 1, lastSeqNumber: 4, count: 1
    static HB_LE: [u8; 32] = [
        0x07, 0x01, 0x1c, 0x00, //
        0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x03, 0xc2, //
        0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, //
        0x01, 0x00, 0x00, 0x00,
    ];

    // The same HEARTBEAT in big endian.
    static HB_BE: [u8; 32] = [
        0x07, 0x00, 0x00, 0x1c, //
        0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x03, 0xc2, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, //
        0x00, 0x00, 0x00, 0x01,
    ];

    fn hb() -> Heartbeat {
        Heartbeat {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::SEDP_PUBLICATIONS_WRITER,
            first_sn: SequenceNumber(1),
            last_sn: SequenceNumber(4),
            count: 1,
            final_flag: false,
            liveliness_flag: false,
        }
    }

    #[test]
    fn test_heartbeat_parse() {
        assert_eq!(parse(&HB_LE), Ok(Submessage::Heartbeat(hb())));
        assert_eq!(parse(&HB_BE), Ok(Submessage::Heartbeat(hb())));
    }

    #[test]
    fn test_heartbeat_emit() {
        assert_eq!(emit(&hb().into(), Endianness::Little), HB_LE.to_vec());
        assert_eq!(emit(&hb().into(), Endianness::Big), HB_BE.to_vec());
    }

    #[test]
    fn heartbeat_flags() {
        let mut b = HB_LE;
        b[1] = 0x07; // L|F|E
        let Ok(Submessage::Heartbeat(h)) = parse(&b) else {
            panic!()
        };
        assert!(h.liveliness_flag && h.final_flag);
        assert_eq!(emit(&h.into(), Endianness::Little), b.to_vec());
    }

    #[test]
    fn heartbeat_first_after_last_plus_one_is_malformed() {
        // firstSN 1, lastSN 0 is "nothing available" and valid.
        let mut b = HB_LE;
        b[24] = 0;
        assert!(parse(&b).is_ok());
        // firstSN 3, lastSN 1.
        b[16] = 3;
        b[24] = 1;
        assert_eq!(
            parse(&b),
            Err(MalformedError::HeartbeatRange {
                offset: 12,
                first: 3,
                last: 1
            })
        );
        // firstSN 0.
        let mut b = HB_LE;
        b[16] = 0;
        assert_eq!(
            parse(&b),
            Err(MalformedError::InvalidSequenceNumber {
                offset: 12,
                submessage: 0x07,
                value: 0
            })
        );
        // lastSN negative.
        let mut b = HB_LE;
        b[20..28].copy_from_slice(&[0xff; 8]);
        assert!(matches!(
            parse(&b),
            Err(MalformedError::HeartbeatRange { .. })
        ));
        check_truncations(&HB_LE);
        check_truncations(&HB_BE);
        // 27 bytes of body.
        let mut short = HB_LE[..31].to_vec();
        short[2] = 27;
        assert_eq!(
            parse(&short),
            Err(MalformedError::Truncated {
                offset: 28,
                submessage: 0x07,
                needed: 4,
                available: 3
            })
        );
    }

    #[test]
    fn heartbeat_trailing_bytes_ignored() {
        // A group-info extension (G flag, 0x08) is skipped.
        let mut b = HB_LE.to_vec();
        b[1] |= 0x08;
        b[2] = 28 + 8;
        b.extend_from_slice(&[0xaa; 8]);
        assert_eq!(parse(&b), Ok(Submessage::Heartbeat(hb())));
    }

    static HBF_LE: [u8; 28] = [
        0x13, 0x01, 0x18, 0x00, //
        0x00, 0x00, 0x01, 0x07, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, // writerSN 5
        0x09, 0x00, 0x00, 0x00, // lastFragmentNum 9
        0x02, 0x00, 0x00, 0x00, // count 2
    ];

    static HBF_BE: [u8; 28] = [
        0x13, 0x00, 0x00, 0x18, //
        0x00, 0x00, 0x01, 0x07, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, //
        0x00, 0x00, 0x00, 0x09, //
        0x00, 0x00, 0x00, 0x02,
    ];

    fn hbf() -> HeartbeatFrag {
        HeartbeatFrag {
            reader_id: EntityId::from_u32(0x107),
            writer_id: EntityId::from_u32(0x102),
            writer_sn: SequenceNumber(5),
            last_fragment_num: 9,
            count: 2,
        }
    }

    #[test]
    fn test_heartbeat_frag() {
        assert_eq!(parse(&HBF_LE), Ok(Submessage::HeartbeatFrag(hbf())));
        assert_eq!(parse(&HBF_BE), Ok(Submessage::HeartbeatFrag(hbf())));
        assert_eq!(emit(&hbf().into(), Endianness::Little), HBF_LE.to_vec());
        assert_eq!(emit(&hbf().into(), Endianness::Big), HBF_BE.to_vec());
        let mut b = HBF_LE;
        b[20] = 0;
        assert_eq!(
            parse(&b),
            Err(MalformedError::FragmentNumberZero { offset: 20 })
        );
        let mut b = HBF_LE;
        b[16] = 0;
        assert!(matches!(
            parse(&b),
            Err(MalformedError::InvalidSequenceNumber { offset: 12, .. })
        ));
        check_truncations(&HBF_LE);
    }
}
