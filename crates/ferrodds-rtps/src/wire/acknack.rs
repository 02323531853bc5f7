//! ACKNACK (0x06) and NACK_FRAG (0x12) (DDSI-RTPS 2.5 §8.3.7.1, §8.3.7.7, §9.4.5.2,
//! §9.4.5.8).
//!
//! ```text
//! ACKNACK                                    NACK_FRAG
//! +-------+---------+---------------+        +-------+-------+---------------+
//! | 0x06  |     F|E | octetsToNext  |        | 0x12  |     E | octetsToNext  |
//! |           readerId              |        |            readerId           |
//! |           writerId              |        |            writerId           |
//! ~   readerSNState (SN set)        ~        |       writerSN (8 bytes)      |
//! |           count (u32)           |        ~ fragmentNumberState (FN set)  ~
//!                                            |           count (u32)         |
//! ```

use super::codec::{Reader, Writer};
use super::submessage::submessage_id;
use super::{
    EmitError, EntityId, FragmentNumberSet, MalformedError, SequenceNumber, SequenceNumberSet,
};

/// ACKNACK flag F: the writer need not answer with a HEARTBEAT.
const FLAG_FINAL: u8 = 0x02;

/// ACKNACK: what a reader has received (everything below the set's base) and what it
/// is missing (the set's members) (§8.3.7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckNack {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer addressed.
    pub writer_id: EntityId,
    /// readerSNState: base = first sequence number not yet received; members = missing.
    ///
    /// Quirk: Fast DDS and RTI Connext send "pre-emptive" ACKNACKs with base 0 and
    /// numBits 0 before they have seen a HEARTBEAT, which §9.4.2.6 forbids. Cyclone DDS
    /// accepts them in its default mode; so do we (an empty set based at 0 is the only
    /// exception to the base ≥ 1 rule).
    pub reader_sn_state: SequenceNumberSet,
    /// Increments with every ACKNACK, to detect duplicates.
    pub count: u32,
    /// F flag.
    pub final_flag: bool,
}

impl AckNack {
    pub(crate) fn parse(flags: u8, r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let reader_id = EntityId(r.array()?);
        let writer_id = EntityId(r.array()?);
        let reader_sn_state = SequenceNumberSet::read(r, true)?;
        let count = r.u32()?;
        Ok(AckNack {
            reader_id,
            writer_id,
            reader_sn_state,
            count,
            final_flag: flags & FLAG_FINAL != 0,
        })
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        if self.final_flag {
            FLAG_FINAL
        } else {
            0
        }
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        8 + self.reader_sn_state.buffer_len() + 4
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.reader_id.0)?;
        w.put(&self.writer_id.0)?;
        self.reader_sn_state.write(w)?;
        w.put_u32(self.count)
    }
}

/// NACK_FRAG: the fragments of one sample a reader is missing (§8.3.7.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NackFrag {
    /// The reader.
    pub reader_id: EntityId,
    /// The writer addressed.
    pub writer_id: EntityId,
    /// The sample.
    pub writer_sn: SequenceNumber,
    /// The missing fragments.
    pub fragment_number_state: FragmentNumberSet,
    /// Increments with every NACK_FRAG, to detect duplicates.
    pub count: u32,
}

impl NackFrag {
    pub(crate) fn parse(r: &mut Reader<'_>) -> Result<Self, MalformedError> {
        let reader_id = EntityId(r.array()?);
        let writer_id = EntityId(r.array()?);
        let sn_offset = r.offset();
        let writer_sn = SequenceNumber::read(r)?;
        let fragment_number_state = FragmentNumberSet::read(r)?;
        let count = r.u32()?;
        // §8.3.7.7.3: writerSN.value <= 0 is invalid.
        if writer_sn.0 < 1 {
            return Err(MalformedError::InvalidSequenceNumber {
                offset: sn_offset,
                submessage: submessage_id::NACK_FRAG,
                value: writer_sn.0,
            });
        }
        Ok(NackFrag {
            reader_id,
            writer_id,
            writer_sn,
            fragment_number_state,
            count,
        })
    }

    /// Body length.
    pub fn body_len(&self) -> usize {
        8 + SequenceNumber::LEN + self.fragment_number_state.buffer_len() + 4
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.reader_id.0)?;
        w.put(&self.writer_id.0)?;
        self.writer_sn.write(w)?;
        self.fragment_number_state.write(w)?;
        w.put_u32(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::submessage::test_util::{check_truncations, emit, parse};
    use crate::wire::{Endianness, Submessage};

    // ACKNACK: reader 0x000003c7 acknowledges everything below 5 and is missing 5 and 7
    // (numBits 3, bitmap 0b101 << 29), count 4, F clear.
    static ACKNACK_LE: [u8; 32] = [
        0x06, 0x01, 0x1c, 0x00, //
        0x00, 0x00, 0x03, 0xc7, //
        0x00, 0x00, 0x03, 0xc2, //
        0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, // bitmapBase 5
        0x03, 0x00, 0x00, 0x00, // numBits 3
        0x00, 0x00, 0x00, 0xa0, // bitmap 0xa0000000
        0x04, 0x00, 0x00, 0x00, // count 4
    ];

    static ACKNACK_BE: [u8; 32] = [
        0x06, 0x00, 0x00, 0x1c, //
        0x00, 0x00, 0x03, 0xc7, //
        0x00, 0x00, 0x03, 0xc2, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, //
        0x00, 0x00, 0x00, 0x03, //
        0xa0, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x04,
    ];

    fn acknack() -> AckNack {
        let mut set = SequenceNumberSet::new(SequenceNumber(5));
        set.insert(SequenceNumber(5));
        set.insert(SequenceNumber(7));
        AckNack {
            reader_id: EntityId::SEDP_PUBLICATIONS_READER,
            writer_id: EntityId::SEDP_PUBLICATIONS_WRITER,
            reader_sn_state: set,
            count: 4,
            final_flag: false,
        }
    }

    #[test]
    fn test_acknack_parse() {
        let Ok(Submessage::AckNack(a)) = parse(&ACKNACK_LE) else {
            panic!()
        };
        assert_eq!(a, acknack());
        let missing: Vec<i64> = a.reader_sn_state.iter().map(|s| s.0).collect();
        assert_eq!(missing, [5, 7]);
        assert_eq!(parse(&ACKNACK_BE), Ok(Submessage::AckNack(acknack())));
    }

    #[test]
    fn test_acknack_emit() {
        assert_eq!(
            emit(&acknack().into(), Endianness::Little),
            ACKNACK_LE.to_vec()
        );
        assert_eq!(
            emit(&acknack().into(), Endianness::Big),
            ACKNACK_BE.to_vec()
        );
    }

    #[test]
    fn acknack_preemptive_zero_base_accepted() {
        // Fast DDS / RTI pre-emptive ACKNACK: base 0, numBits 0.
        let b = [
            0x06, 0x03, 0x18, 0x00, 0, 0, 3, 0xc7, 0, 0, 3, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 1, 0, 0, 0,
        ];
        let Ok(Submessage::AckNack(a)) = parse(&b) else {
            panic!()
        };
        assert_eq!(a.reader_sn_state.base(), SequenceNumber(0));
        assert!(a.final_flag);
        // Base 0 with bits is still malformed.
        let mut b2 = b.to_vec();
        b2[2] = 0x1c;
        b2[20] = 1;
        b2.splice(24..24, [0, 0, 0, 0x80]);
        assert_eq!(
            parse(&b2),
            Err(MalformedError::SequenceNumberSetBase {
                offset: 12,
                base: 0
            })
        );
    }

    #[test]
    fn acknack_num_bits_over_256_is_malformed() {
        let mut b = ACKNACK_LE;
        b[20..24].copy_from_slice(&257u32.to_le_bytes());
        assert_eq!(
            parse(&b),
            Err(MalformedError::TooManyBits {
                offset: 12,
                num_bits: 257
            })
        );
        b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            parse(&b),
            Err(MalformedError::TooManyBits {
                offset: 12,
                num_bits: u32::MAX
            })
        );
        // numBits 256 needs 8 words that are not there.
        b[20..24].copy_from_slice(&256u32.to_le_bytes());
        assert!(matches!(
            parse(&b),
            Err(MalformedError::Truncated { offset: 32, .. })
        ));
        // Base near the top of the sequence number space.
        let mut b = ACKNACK_LE;
        b[12..20].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            parse(&b),
            Err(MalformedError::SequenceNumberSetOverflow { .. })
        ));
        check_truncations(&ACKNACK_LE);
        check_truncations(&ACKNACK_BE);
    }

    static NACK_FRAG_LE: [u8; 36] = [
        0x12, 0x01, 0x20, 0x00, //
        0x00, 0x00, 0x01, 0x07, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, // writerSN 9
        0x02, 0x00, 0x00, 0x00, // bitmapBase 2
        0x01, 0x00, 0x00, 0x00, // numBits 1
        0x00, 0x00, 0x00, 0x80, // bitmap
        0x03, 0x00, 0x00, 0x00, // count 3
    ];

    static NACK_FRAG_BE: [u8; 36] = [
        0x12, 0x00, 0x00, 0x20, //
        0x00, 0x00, 0x01, 0x07, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, //
        0x00, 0x00, 0x00, 0x02, //
        0x00, 0x00, 0x00, 0x01, //
        0x80, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x03,
    ];

    fn nack_frag() -> NackFrag {
        let mut set = FragmentNumberSet::new(2);
        set.insert(2);
        NackFrag {
            reader_id: EntityId::from_u32(0x107),
            writer_id: EntityId::from_u32(0x102),
            writer_sn: SequenceNumber(9),
            fragment_number_state: set,
            count: 3,
        }
    }

    #[test]
    fn test_nack_frag() {
        assert_eq!(parse(&NACK_FRAG_LE), Ok(Submessage::NackFrag(nack_frag())));
        assert_eq!(parse(&NACK_FRAG_BE), Ok(Submessage::NackFrag(nack_frag())));
        assert_eq!(
            emit(&nack_frag().into(), Endianness::Little),
            NACK_FRAG_LE.to_vec()
        );
        assert_eq!(
            emit(&nack_frag().into(), Endianness::Big),
            NACK_FRAG_BE.to_vec()
        );
    }

    #[test]
    fn nack_frag_malformed() {
        let mut b = NACK_FRAG_LE;
        b[20] = 0;
        assert_eq!(
            parse(&b),
            Err(MalformedError::FragmentNumberSetBase { offset: 20 })
        );
        let mut b = NACK_FRAG_LE;
        b[24..28].copy_from_slice(&300u32.to_le_bytes());
        assert_eq!(
            parse(&b),
            Err(MalformedError::TooManyBits {
                offset: 20,
                num_bits: 300
            })
        );
        let mut b = NACK_FRAG_LE;
        b[16] = 0;
        assert!(matches!(
            parse(&b),
            Err(MalformedError::InvalidSequenceNumber { offset: 12, .. })
        ));
        let mut b = NACK_FRAG_LE;
        b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            parse(&b),
            Err(MalformedError::FragmentNumberSetOverflow { .. })
        ));
        check_truncations(&NACK_FRAG_LE);
        check_truncations(&NACK_FRAG_BE);
    }
}
