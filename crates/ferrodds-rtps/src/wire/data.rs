//! DATA (0x15) and DATA_FRAG (0x16) (DDSI-RTPS 2.5 §8.3.7.2, §8.3.7.3, §9.4.5.3,
//! §9.4.5.4).
//!
//! ```text
//! DATA                                          DATA_FRAG
//! +-------+-------+---------------+            +-------+-------+---------------+
//! | 0x15  |N|K|D|Q|E| octetsToNext |            | 0x16  |N|K|Q|E| octetsToNext  |
//! +-------+-------+---------------+            +-------+-------+---------------+
//! |  extraFlags   | octetsToInlineQos |        |  extraFlags   | octetsToInlineQos |
//! |            readerId           |            |            readerId           |
//! |            writerId           |            |            writerId           |
//! |       writerSN (8 bytes)      |            |       writerSN (8 bytes)      |
//! ~  inlineQos (if Q)             ~            | fragmentStartingNum (u32)     |
//! ~  serializedPayload (if D or K)~            | fragmentsInSubmessage | fragmentSize |
//!                                              | sampleSize (u32)              |
//!                                              ~  inlineQos (if Q)             ~
//!                                              ~  fragments                    ~
//! ```
//!
//! `octetsToInlineQos` counts from the byte after it; bytes between the fixed part and
//! the inline QoS (a future extension) are skipped. On emit it is always the minimum (16
//! for DATA, 28 for DATA_FRAG).

use super::codec::{Reader, Writer};
use super::submessage::submessage_id;
use super::{EmitError, EntityId, MalformedError, ParameterList, SequenceNumber};

/// DATA flag Q: inline QoS present.
const FLAG_INLINE_QOS: u8 = 0x02;
/// DATA flag D: serialized data present.
const FLAG_DATA: u8 = 0x04;
/// DATA flag K: serialized key present.
const FLAG_KEY: u8 = 0x08;
/// DATA flag N: the payload is not CDR (non-standard payload).
const FLAG_NON_STANDARD: u8 = 0x10;
/// DATA_FRAG flag K: the fragments are of a serialized key.
const FRAG_FLAG_KEY: u8 = 0x04;
/// DATA_FRAG flag N: non-standard payload.
const FRAG_FLAG_NON_STANDARD: u8 = 0x08;

/// Bytes of the DATA fixed part after `octetsToInlineQos` (readerId, writerId, writerSN).
const DATA_MIN_OCTETS_TO_INLINE_QOS: u16 = 16;
/// Bytes of the DATA_FRAG fixed part after `octetsToInlineQos`.
const DATA_FRAG_MIN_OCTETS_TO_INLINE_QOS: u16 = 28;

/// What a DATA carries after its inline QoS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataPayload<'a> {
    /// Neither D nor K: no payload (e.g. a pure dispose carried in inline QoS).
    #[default]
    None,
    /// D flag: the serialized data, encapsulation header included.
    Data(&'a [u8]),
    /// K flag: the serialized key, encapsulation header included.
    Key(&'a [u8]),
}

impl<'a> DataPayload<'a> {
    /// The payload bytes, if any.
    pub const fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            DataPayload::None => None,
            DataPayload::Data(b) | DataPayload::Key(b) => Some(b),
        }
    }

    fn len(&self) -> usize {
        self.bytes().map_or(0, <[u8]>::len)
    }
}

/// The shared front of DATA and DATA_FRAG.
struct Front {
    extra_flags: u16,
    octets_to_inline_qos: u16,
    octets_offset: usize,
    available_after_octets: usize,
    reader_id: EntityId,
    writer_id: EntityId,
    writer_sn: SequenceNumber,
    writer_sn_offset: usize,
}

impl Front {
    fn read(r: &mut Reader<'_>) -> Result<Front, MalformedError> {
        let extra_flags = r.u16()?;
        let octets_offset = r.offset();
        let octets_to_inline_qos = r.u16()?;
        let available_after_octets = r.remaining();
        let reader_id = EntityId(r.array()?);
        let writer_id = EntityId(r.array()?);
        let writer_sn_offset = r.offset();
        let writer_sn = SequenceNumber::read(r)?;
        Ok(Front {
            extra_flags,
            octets_to_inline_qos,
            octets_offset,
            available_after_octets,
            reader_id,
            writer_id,
            writer_sn,
            writer_sn_offset,
        })
    }

    /// writerSN must be strictly positive or SEQUENCENUMBER_UNKNOWN (§8.3.7.2.3).
    fn check_sn(&self, submessage: u8) -> Result<(), MalformedError> {
        if self.writer_sn.0 < 1 && self.writer_sn != SequenceNumber::UNKNOWN {
            return Err(MalformedError::InvalidSequenceNumber {
                offset: self.writer_sn_offset,
                submessage,
                value: self.writer_sn.0,
            });
        }
        Ok(())
    }

    /// Skips to the inline QoS: `consumed` bytes after octetsToInlineQos were read.
    fn skip_to_inline_qos(
        &self,
        r: &mut Reader<'_>,
        minimum: u16,
        consumed: u16,
    ) -> Result<(), MalformedError> {
        let value = self.octets_to_inline_qos;
        if value < minimum {
            return Err(MalformedError::InlineQosOffsetTooSmall {
                offset: self.octets_offset,
                submessage: r.submessage(),
                value,
                minimum,
            });
        }
        if usize::from(value) > self.available_after_octets {
            return Err(MalformedError::InlineQosOffsetPastEnd {
                offset: self.octets_offset,
                submessage: r.submessage(),
                value,
                available: self.available_after_octets,
            });
        }
        r.skip(usize::from(value - consumed))
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put_u16(self.extra_flags)?;
        w.put_u16(self.octets_to_inline_qos)?;
        w.put(&self.reader_id.0)?;
        w.put(&self.writer_id.0)?;
        self.writer_sn.write(w)
    }
}

/// Reads the inline QoS (if `present`) at the reader's position; returns it and leaves
/// the reader after its sentinel.
fn read_inline_qos<'a>(
    r: &mut Reader<'a>,
    present: bool,
) -> Result<Option<ParameterList<'a>>, MalformedError> {
    if !present {
        return Ok(None);
    }
    let offset = r.offset();
    let endianness = r.endianness();
    let submessage = r.submessage();
    let mut probe = r.clone();
    let bytes = probe.rest();
    let (list, after) = ParameterList::parse_at(bytes, endianness, offset)
        .map_err(|error| MalformedError::InlineQos { submessage, error })?;
    r.skip(bytes.len().saturating_sub(after.len()))?;
    Ok(Some(list))
}

/// DATA: a sample, a key, or inline QoS only (§8.3.7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Data<'a> {
    /// extraFlags (reserved; 0 when emitted by this crate).
    pub extra_flags: u16,
    /// The reader addressed, or `EntityId::UNKNOWN` for all.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// The sample's sequence number.
    pub writer_sn: SequenceNumber,
    /// Inline QoS (Q flag).
    pub inline_qos: Option<ParameterList<'a>>,
    /// Serialized data (D) or key (K).
    pub payload: DataPayload<'a>,
    /// N flag: the payload is not CDR-encapsulated.
    pub non_standard_payload: bool,
}

impl<'a> Data<'a> {
    pub(crate) fn parse(
        flags: u8,
        r: &mut Reader<'a>,
        header_offset: usize,
    ) -> Result<Self, MalformedError> {
        let front = Front::read(r)?;
        // §9.4.5.3.1: D=1 and K=1 is an invalid combination.
        if flags & (FLAG_DATA | FLAG_KEY) == FLAG_DATA | FLAG_KEY {
            return Err(MalformedError::DataAndKeyFlags {
                offset: header_offset,
            });
        }
        front.check_sn(submessage_id::DATA)?;
        let mut data = Data {
            extra_flags: front.extra_flags,
            reader_id: front.reader_id,
            writer_id: front.writer_id,
            writer_sn: front.writer_sn,
            inline_qos: None,
            payload: DataPayload::None,
            non_standard_payload: flags & FLAG_NON_STANDARD != 0,
        };
        if flags & (FLAG_INLINE_QOS | FLAG_DATA | FLAG_KEY) == 0 {
            // Nothing follows the fixed part, so octetsToInlineQos is never used.
            return Ok(data);
        }
        front.skip_to_inline_qos(
            r,
            DATA_MIN_OCTETS_TO_INLINE_QOS,
            DATA_MIN_OCTETS_TO_INLINE_QOS,
        )?;
        data.inline_qos = read_inline_qos(r, flags & FLAG_INLINE_QOS != 0)?;
        if flags & (FLAG_DATA | FLAG_KEY) != 0 {
            let offset = r.offset();
            let bytes = r.rest();
            if !data.non_standard_payload && bytes.len() < 4 {
                return Err(MalformedError::PayloadTooShort {
                    offset,
                    submessage: submessage_id::DATA,
                    len: bytes.len(),
                });
            }
            data.payload = if flags & FLAG_DATA != 0 {
                DataPayload::Data(bytes)
            } else {
                DataPayload::Key(bytes)
            };
        }
        Ok(data)
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        let mut flags = 0;
        if self.inline_qos.is_some() {
            flags |= FLAG_INLINE_QOS;
        }
        match self.payload {
            DataPayload::None => {}
            DataPayload::Data(_) => flags |= FLAG_DATA,
            DataPayload::Key(_) => flags |= FLAG_KEY,
        }
        if self.non_standard_payload {
            flags |= FLAG_NON_STANDARD;
        }
        flags
    }

    /// Body length as emitted, before padding.
    pub fn body_len(&self) -> usize {
        let qos = self.inline_qos.map_or(0, |q| q.buffer_len());
        (4 + usize::from(DATA_MIN_OCTETS_TO_INLINE_QOS))
            .saturating_add(qos)
            .saturating_add(self.payload.len())
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        Front {
            extra_flags: self.extra_flags,
            octets_to_inline_qos: DATA_MIN_OCTETS_TO_INLINE_QOS,
            octets_offset: 0,
            available_after_octets: 0,
            reader_id: self.reader_id,
            writer_id: self.writer_id,
            writer_sn: self.writer_sn,
            writer_sn_offset: 0,
        }
        .write(w)?;
        if let Some(q) = &self.inline_qos {
            q.write(w)?;
        }
        if let Some(p) = self.payload.bytes() {
            w.put_payload(p)?;
        }
        Ok(())
    }
}

/// DATA_FRAG: some consecutive fragments of a sample (§8.3.7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFrag<'a> {
    /// extraFlags (reserved; 0 when emitted by this crate).
    pub extra_flags: u16,
    /// The reader addressed, or `EntityId::UNKNOWN` for all.
    pub reader_id: EntityId,
    /// The writer.
    pub writer_id: EntityId,
    /// The sample's sequence number.
    pub writer_sn: SequenceNumber,
    /// Number of the first fragment in this submessage (1-based).
    pub fragment_starting_num: u32,
    /// Number of fragments in this submessage.
    pub fragments_in_submessage: u16,
    /// Size of every fragment but possibly the sample's last.
    pub fragment_size: u16,
    /// Size of the whole serialized sample.
    pub sample_size: u32,
    /// Inline QoS (Q flag).
    pub inline_qos: Option<ParameterList<'a>>,
    /// K flag: the fragments are of a serialized key.
    pub key: bool,
    /// N flag: the payload is not CDR-encapsulated.
    pub non_standard_payload: bool,
    /// The fragment bytes: exactly what the fragment fields announce (any padding after
    /// them is not included).
    pub fragments: &'a [u8],
}

impl<'a> DataFrag<'a> {
    pub(crate) fn parse(flags: u8, r: &mut Reader<'a>) -> Result<Self, MalformedError> {
        let front = Front::read(r)?;
        let start_offset = r.offset();
        let fragment_starting_num = r.u32()?;
        let count_offset = r.offset();
        let fragments_in_submessage = r.u16()?;
        let size_offset = r.offset();
        let fragment_size = r.u16()?;
        let sample_size = r.u32()?;
        front.check_sn(submessage_id::DATA_FRAG)?;
        if fragment_size == 0 {
            return Err(MalformedError::FragmentSizeZero {
                offset: size_offset,
            });
        }
        if fragment_starting_num == 0 {
            return Err(MalformedError::FragmentStartingNumZero {
                offset: start_offset,
            });
        }
        if fragments_in_submessage == 0 {
            return Err(MalformedError::FragmentsInSubmessageZero {
                offset: count_offset,
            });
        }
        let frag = u64::from(fragment_size);
        let total = u64::from(sample_size).div_ceil(frag);
        let first = u64::from(fragment_starting_num);
        // first >= 1 and count >= 1, so neither subtraction can underflow.
        let last = first + u64::from(fragments_in_submessage) - 1;
        if last > total {
            return Err(MalformedError::FragmentsPastSample {
                offset: start_offset,
                first: fragment_starting_num,
                count: fragments_in_submessage,
                total,
            });
        }
        front.skip_to_inline_qos(
            r,
            DATA_FRAG_MIN_OCTETS_TO_INLINE_QOS,
            DATA_FRAG_MIN_OCTETS_TO_INLINE_QOS,
        )?;
        let inline_qos = read_inline_qos(r, flags & FLAG_INLINE_QOS != 0)?;
        // The fragments announced: all of them, unless they end the sample, whose last
        // fragment may be short. first <= total, so (first - 1) * frag < sample_size.
        let announced = u64::from(fragments_in_submessage) * frag;
        let rest_of_sample = u64::from(sample_size).saturating_sub((first - 1) * frag);
        let expected = announced.min(rest_of_sample);
        let offset = r.offset();
        let available = r.rest();
        let fragments = usize::try_from(expected)
            .ok()
            .and_then(|n| available.get(..n))
            .ok_or(MalformedError::FragmentDataShort {
                offset,
                expected,
                actual: available.len(),
            })?;
        Ok(DataFrag {
            extra_flags: front.extra_flags,
            reader_id: front.reader_id,
            writer_id: front.writer_id,
            writer_sn: front.writer_sn,
            fragment_starting_num,
            fragments_in_submessage,
            fragment_size,
            sample_size,
            inline_qos,
            key: flags & FRAG_FLAG_KEY != 0,
            non_standard_payload: flags & FRAG_FLAG_NON_STANDARD != 0,
            fragments,
        })
    }

    /// Flags as emitted (E excluded).
    pub fn flags(&self) -> u8 {
        let mut flags = 0;
        if self.inline_qos.is_some() {
            flags |= FLAG_INLINE_QOS;
        }
        if self.key {
            flags |= FRAG_FLAG_KEY;
        }
        if self.non_standard_payload {
            flags |= FRAG_FLAG_NON_STANDARD;
        }
        flags
    }

    /// Body length as emitted, before padding.
    pub fn body_len(&self) -> usize {
        let qos = self.inline_qos.map_or(0, |q| q.buffer_len());
        (4 + usize::from(DATA_FRAG_MIN_OCTETS_TO_INLINE_QOS))
            .saturating_add(qos)
            .saturating_add(self.fragments.len())
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        Front {
            extra_flags: self.extra_flags,
            octets_to_inline_qos: DATA_FRAG_MIN_OCTETS_TO_INLINE_QOS,
            octets_offset: 0,
            available_after_octets: 0,
            reader_id: self.reader_id,
            writer_id: self.writer_id,
            writer_sn: self.writer_sn,
            writer_sn_offset: 0,
        }
        .write(w)?;
        w.put_u32(self.fragment_starting_num)?;
        w.put_u16(self.fragments_in_submessage)?;
        w.put_u16(self.fragment_size)?;
        w.put_u32(self.sample_size)?;
        if let Some(q) = &self.inline_qos {
            q.write(w)?;
        }
        w.put_payload(self.fragments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::submessage::test_util::{check_truncations, emit, parse};
    use crate::wire::{parameter_list::pid, Endianness, ParameterListError, Submessage};

    // DATA, little endian, flags Q|D|E: reader 0x000004c7, writer 0x000004c2, SN 2,
    // inline QoS { PID_KEY_HASH 16 bytes }, payload CDR_LE 01 02 03 04.
    static DATA_LE: [u8; 56] = [
        0x15, 0x07, 0x34, 0x00, // DATA, flags Q|D|E, octetsToNextHeader 52
        0x00, 0x00, 0x10, 0x00, // extraFlags 0, octetsToInlineQos 16
        0x00, 0x00, 0x04, 0xc7, // readerId
        0x00, 0x00, 0x04, 0xc2, // writerId
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, // writerSN 2
        0x70, 0x00, 0x10, 0x00, // PID_KEY_HASH, 16
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
        0x10, //
        0x01, 0x00, 0x00, 0x00, // PID_SENTINEL
        0x00, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, // CDR_LE payload
    ];

    // The same DATA in big endian.
    static DATA_BE: [u8; 56] = [
        0x15, 0x06, 0x00, 0x34, //
        0x00, 0x00, 0x00, 0x10, //
        0x00, 0x00, 0x04, 0xc7, //
        0x00, 0x00, 0x04, 0xc2, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, //
        0x00, 0x70, 0x00, 0x10, //
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
        0x10, //
        0x00, 0x01, 0x00, 0x00, //
        0x00, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
    ];

    fn check_data(d: &Data<'_>, e: Endianness) {
        assert_eq!(d.extra_flags, 0);
        assert_eq!(d.reader_id, EntityId::SEDP_SUBSCRIPTIONS_READER);
        assert_eq!(d.writer_id, EntityId::SEDP_SUBSCRIPTIONS_WRITER);
        assert_eq!(d.writer_sn, SequenceNumber(2));
        let q = d.inline_qos.expect("Q");
        assert_eq!(q.endianness(), e);
        let kh = q.find(pid::KEY_HASH).expect("key hash");
        assert_eq!(kh.value, (1..=16).collect::<Vec<u8>>());
        assert_eq!(d.payload, DataPayload::Data(&[0, 1, 0, 0, 1, 2, 3, 4]));
        assert!(!d.non_standard_payload);
    }

    #[test]
    fn test_data_parse_le() {
        let Submessage::Data(d) = parse(&DATA_LE).expect("valid") else {
            panic!("not DATA")
        };
        check_data(&d, Endianness::Little);
    }

    #[test]
    fn test_data_parse_be() {
        let Submessage::Data(d) = parse(&DATA_BE).expect("valid") else {
            panic!("not DATA")
        };
        check_data(&d, Endianness::Big);
    }

    #[test]
    fn test_data_construct_and_emit() {
        // Construct from parts (inline QoS built with the builder) and emit both orders.
        for (e, bytes) in [(Endianness::Little, &DATA_LE), (Endianness::Big, &DATA_BE)] {
            let mut qos = Vec::new();
            let mut b = crate::wire::ParameterListBuilder::new(&mut qos, e);
            let kh: Vec<u8> = (1..=16).collect();
            b.push(pid::KEY_HASH, &kh).expect("short");
            b.finish();
            let (list, _) = ParameterList::parse(&qos, e).expect("valid");
            let d = Data {
                extra_flags: 0,
                reader_id: EntityId::SEDP_SUBSCRIPTIONS_READER,
                writer_id: EntityId::SEDP_SUBSCRIPTIONS_WRITER,
                writer_sn: SequenceNumber(2),
                inline_qos: Some(list),
                payload: DataPayload::Data(&[0, 1, 0, 0, 1, 2, 3, 4]),
                non_standard_payload: false,
            };
            // The requested byte order is overridden by the inline QoS's.
            let other = match e {
                Endianness::Little => Endianness::Big,
                Endianness::Big => Endianness::Little,
            };
            assert_eq!(emit(&d.into(), other), bytes.to_vec());
        }
    }

    #[test]
    fn test_data_emit_round_trip() {
        let d = parse(&DATA_LE).expect("valid");
        assert_eq!(emit(&d, Endianness::Little), DATA_LE.to_vec());
        let d = parse(&DATA_BE).expect("valid");
        assert_eq!(emit(&d, Endianness::Big), DATA_BE.to_vec());
    }

    #[test]
    fn data_without_qos_or_payload() {
        // HEARTBEAT-like DATA with no flags: octetsToInlineQos is not used.
        let bytes = [
            0x15, 0x01, 0x14, 0x00, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 1, 0xc2, 0, 0, 0, 0,
            1, 0, 0, 0,
        ];
        let Submessage::Data(d) = parse(&bytes).expect("valid") else {
            panic!()
        };
        assert_eq!(d.inline_qos, None);
        assert_eq!(d.payload, DataPayload::None);
    }

    #[test]
    fn data_skips_unknown_bytes_before_inline_qos() {
        // octetsToInlineQos 20: 4 unknown bytes between writerSN and the payload.
        let bytes = [
            0x15, 0x05, 0x20, 0x00, // DATA D|E, 32
            0x00, 0x00, 0x14, 0x00, // octetsToInlineQos 20
            0, 0, 0, 0, 0, 0, 1, 0xc2, // reader, writer
            0, 0, 0, 0, 7, 0, 0, 0, // SN 7
            0xde, 0xad, 0xbe, 0xef, // unknown extension
            0x00, 0x01, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd,
        ];
        let Submessage::Data(d) = parse(&bytes).expect("valid") else {
            panic!()
        };
        assert_eq!(
            d.payload,
            DataPayload::Data(&[0x00, 0x01, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd])
        );
    }

    #[test]
    fn data_malformed() {
        let mut dk = DATA_LE;
        dk[1] = 0x0d; // Q|D|K|E
        assert_eq!(
            parse(&dk),
            Err(MalformedError::DataAndKeyFlags { offset: 0 })
        );
        let mut sn0 = DATA_LE;
        sn0[20] = 0;
        assert_eq!(
            parse(&sn0),
            Err(MalformedError::InvalidSequenceNumber {
                offset: 16,
                submessage: 0x15,
                value: 0
            })
        );
        let mut otiq = DATA_LE;
        otiq[6] = 12;
        assert_eq!(
            parse(&otiq),
            Err(MalformedError::InlineQosOffsetTooSmall {
                offset: 6,
                submessage: 0x15,
                value: 12,
                minimum: 16
            })
        );
        otiq[6] = 0xff;
        assert_eq!(
            parse(&otiq),
            Err(MalformedError::InlineQosOffsetPastEnd {
                offset: 6,
                submessage: 0x15,
                value: 255,
                available: 48
            })
        );
        // Inline QoS whose parameter length runs past the end.
        let mut qos = DATA_LE;
        qos[26] = 0xf0;
        assert_eq!(
            parse(&qos),
            Err(MalformedError::InlineQos {
                submessage: 0x15,
                error: ParameterListError::ValuePastEnd {
                    offset: 24,
                    pid: 0x70,
                    length: 0xf0,
                    remaining: 28
                }
            })
        );
        // D flag with only 2 payload bytes.
        let short = [
            0x15, 0x05, 0x16, 0x00, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 1, 0xc2, 0, 0, 0, 0, 1, 0, 0,
            0, 0, 1,
        ];
        assert_eq!(
            parse(&short),
            Err(MalformedError::PayloadTooShort {
                offset: 24,
                submessage: 0x15,
                len: 2
            })
        );
        check_truncations(&DATA_LE);
        check_truncations(&DATA_BE);
    }

    #[test]
    fn data_inline_qos_sentinel_with_length() {
        // PID_SENTINEL with length 4 (as RTI Connext 7 may send): the payload starts right
        // after the sentinel's 4-byte header, its length is ignored.
        let mut b = DATA_LE;
        b[46] = 4;
        let Submessage::Data(d) = parse(&b).expect("valid") else {
            panic!("not DATA")
        };
        check_data(&d, Endianness::Little);
    }

    #[test]
    fn data_unknown_sn_is_accepted() {
        let mut b = DATA_LE;
        b[16..24].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let Submessage::Data(d) = parse(&b).expect("valid") else {
            panic!()
        };
        assert_eq!(d.writer_sn, SequenceNumber::UNKNOWN);
    }

    // DATA_FRAG, little endian, K clear, no inline QoS: SN 3, fragments 2..3 of a
    // 10-byte sample in 4-byte fragments (so fragment 3 is the short last one: 2 bytes),
    // followed by 2 bytes of padding that are not part of the fragments.
    static DATA_FRAG_LE: [u8; 48] = [
        0x16, 0x01, 0x2c, 0x00, // DATA_FRAG, E, 44
        0x00, 0x00, 0x1c, 0x00, // extraFlags, octetsToInlineQos 28
        0x00, 0x00, 0x00, 0x00, // readerId UNKNOWN
        0x00, 0x00, 0x01, 0x02, // writerId
        0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, // writerSN 3
        0x02, 0x00, 0x00, 0x00, // fragmentStartingNum 2
        0x02, 0x00, 0x04, 0x00, // fragmentsInSubmessage 2, fragmentSize 4
        0x0a, 0x00, 0x00, 0x00, // sampleSize 10
        0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0x00, 0x00, // fragments 2, 3 + padding
        0x00, 0x00, 0x00, 0x00, // more padding (a sender's choice)
    ];

    static DATA_FRAG_BE: [u8; 48] = [
        0x16, 0x00, 0x00, 0x2c, //
        0x00, 0x00, 0x00, 0x1c, //
        0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x01, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, //
        0x00, 0x00, 0x00, 0x02, //
        0x00, 0x02, 0x00, 0x04, //
        0x00, 0x00, 0x00, 0x0a, //
        0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00,
    ];

    fn frag_repr() -> DataFrag<'static> {
        DataFrag {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::from_u32(0x0000_0102),
            writer_sn: SequenceNumber(3),
            fragment_starting_num: 2,
            fragments_in_submessage: 2,
            fragment_size: 4,
            sample_size: 10,
            inline_qos: None,
            key: false,
            non_standard_payload: false,
            fragments: &[0x55, 0x66, 0x77, 0x88, 0x99, 0xaa],
        }
    }

    #[test]
    fn test_data_frag_parse_le_be() {
        assert_eq!(parse(&DATA_FRAG_LE), Ok(frag_repr().into()));
        assert_eq!(parse(&DATA_FRAG_BE), Ok(frag_repr().into()));
    }

    #[test]
    fn test_data_frag_emit() {
        // Emitted without the sender's extra padding: 44 - 4 bytes of body.
        let le = emit(&frag_repr().into(), Endianness::Little);
        let mut expected = DATA_FRAG_LE[..44].to_vec();
        expected[2] = 40;
        assert_eq!(le, expected);
        let be = emit(&frag_repr().into(), Endianness::Big);
        let mut expected = DATA_FRAG_BE[..44].to_vec();
        expected[3] = 40;
        assert_eq!(be, expected);
        assert_eq!(parse(&le), Ok(frag_repr().into()));
    }

    #[test]
    fn data_frag_malformed() {
        let with = |i: usize, v: u8| {
            let mut b = DATA_FRAG_LE;
            b[i] = v;
            parse(&b).map(|_| ())
        };
        assert_eq!(
            with(30, 0),
            Err(MalformedError::FragmentSizeZero { offset: 30 })
        );
        assert_eq!(
            with(24, 0),
            Err(MalformedError::FragmentStartingNumZero { offset: 24 })
        );
        assert_eq!(
            with(28, 0),
            Err(MalformedError::FragmentsInSubmessageZero { offset: 28 })
        );
        // Fragments 2..4 of a 3-fragment sample.
        assert_eq!(
            with(28, 3),
            Err(MalformedError::FragmentsPastSample {
                offset: 24,
                first: 2,
                count: 3,
                total: 3
            })
        );
        // sampleSize 0: no fragment exists.
        assert_eq!(
            with(32, 0),
            Err(MalformedError::FragmentsPastSample {
                offset: 24,
                first: 2,
                count: 2,
                total: 0
            })
        );
        // sampleSize 40: fragments 2 and 3 are both full (8 bytes), only 12 present...
        assert!(with(32, 40).is_ok());
        // ...but with fragmentSize 8 they need 16.
        let mut b = DATA_FRAG_LE;
        b[30] = 8;
        b[32] = 40;
        assert_eq!(
            parse(&b),
            Err(MalformedError::FragmentDataShort {
                offset: 36,
                expected: 16,
                actual: 12
            })
        );
        // Huge fields never overflow.
        let mut b = DATA_FRAG_LE;
        b[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        b[28..30].copy_from_slice(&u16::MAX.to_le_bytes());
        b[30..32].copy_from_slice(&1u16.to_le_bytes());
        b[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            parse(&b),
            Err(MalformedError::FragmentsPastSample { .. })
        ));
        check_truncations(&DATA_FRAG_LE);
        check_truncations(&DATA_FRAG_BE);
    }
}
