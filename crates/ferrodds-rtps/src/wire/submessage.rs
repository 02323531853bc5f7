//! The submessage header and the [`Submessage`] sum type (DDSI-RTPS 2.5 §8.3.3.2,
//! §9.4.5.1).
//!
//! ```text
//! 0...2...........7...............15.............23...............31
//! | submessageId  | flags       |E|     octetsToNextHeader        |
//! +---------------+---------------+---------------+---------------+
//! ~                     submessage body                           ~
//! ```
//!
//! `octetsToNextHeader` counts the body only. In the byte order of the E flag. A value of
//! 0 means "up to the end of the message" for every submessage except PAD and INFO_TS,
//! for which it means an empty body (§9.4.5.1.3).

use super::codec::{Reader, Writer};
use super::{
    align4, AckNack, Data, DataFrag, EmitError, Endianness, Gap, Heartbeat, HeartbeatFrag,
    InfoDestination, InfoReply, InfoReplyIp4, InfoSource, InfoTimestamp, MalformedError, NackFrag,
    Pad,
};

/// Submessage ids (DDSI-RTPS 2.5 §9.4.5.1.1). Ids 0x80–0xff are vendor-specific.
pub mod submessage_id {
    /// PAD.
    pub const PAD: u8 = 0x01;
    /// ACKNACK.
    pub const ACKNACK: u8 = 0x06;
    /// HEARTBEAT.
    pub const HEARTBEAT: u8 = 0x07;
    /// GAP.
    pub const GAP: u8 = 0x08;
    /// INFO_TS.
    pub const INFO_TS: u8 = 0x09;
    /// INFO_SRC.
    pub const INFO_SRC: u8 = 0x0c;
    /// INFO_REPLY_IP4.
    pub const INFO_REPLY_IP4: u8 = 0x0d;
    /// INFO_DST.
    pub const INFO_DST: u8 = 0x0e;
    /// INFO_REPLY.
    pub const INFO_REPLY: u8 = 0x0f;
    /// NACK_FRAG.
    pub const NACK_FRAG: u8 = 0x12;
    /// HEARTBEAT_FRAG.
    pub const HEARTBEAT_FRAG: u8 = 0x13;
    /// DATA.
    pub const DATA: u8 = 0x15;
    /// DATA_FRAG.
    pub const DATA_FRAG: u8 = 0x16;
    /// First vendor-specific id.
    pub const VENDOR_SPECIFIC_FIRST: u8 = 0x80;
}

/// The E (endianness) flag, bit 0 of every submessage's flags.
pub(crate) const FLAG_ENDIANNESS: u8 = 0x01;

/// A submessage header as found on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubmessageHeader {
    /// Submessage id.
    pub id: u8,
    /// Flags, E flag included.
    pub flags: u8,
    /// Length of the body, or 0 (see the module doc).
    pub octets_to_next_header: u16,
}

impl SubmessageHeader {
    /// Length on the wire.
    pub const LEN: usize = 4;

    /// Byte order of the submessage.
    pub const fn endianness(&self) -> Endianness {
        Endianness::from_flags(self.flags)
    }

    /// Parses the 4 header bytes.
    pub fn from_bytes(b: [u8; 4]) -> Self {
        let [id, flags, l0, l1] = b;
        SubmessageHeader {
            id,
            flags,
            octets_to_next_header: Endianness::from_flags(flags).u16_from([l0, l1]),
        }
    }
}

/// One accepted submessage. Variable parts borrow the message bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Submessage<'a> {
    /// DATA (0x15).
    Data(Data<'a>),
    /// DATA_FRAG (0x16).
    DataFrag(DataFrag<'a>),
    /// HEARTBEAT (0x07).
    Heartbeat(Heartbeat),
    /// HEARTBEAT_FRAG (0x13).
    HeartbeatFrag(HeartbeatFrag),
    /// ACKNACK (0x06).
    AckNack(AckNack),
    /// NACK_FRAG (0x12).
    NackFrag(NackFrag),
    /// GAP (0x08).
    Gap(Gap),
    /// INFO_TS (0x09).
    InfoTimestamp(InfoTimestamp),
    /// INFO_SRC (0x0c).
    InfoSource(InfoSource),
    /// INFO_DST (0x0e).
    InfoDestination(InfoDestination),
    /// INFO_REPLY (0x0f).
    InfoReply(InfoReply<'a>),
    /// INFO_REPLY_IP4 (0x0d).
    InfoReplyIp4(InfoReplyIp4),
    /// PAD (0x01).
    Pad(Pad),
}

impl<'a> Submessage<'a> {
    /// Parses the body of a submessage whose header is `header`. `body_offset` is the
    /// message offset of the body, for error reports. Returns `Ok(None)` for an id this
    /// crate does not understand.
    pub fn parse(
        header: SubmessageHeader,
        body: &'a [u8],
        body_offset: usize,
    ) -> Result<Option<Submessage<'a>>, MalformedError> {
        use submessage_id as id;
        let mut r = Reader::new(body, body_offset, header.endianness(), header.id);
        let flags = header.flags;
        let header_offset = body_offset.saturating_sub(SubmessageHeader::LEN);
        let sm = match header.id {
            id::DATA => Submessage::Data(Data::parse(flags, &mut r, header_offset)?),
            id::DATA_FRAG => Submessage::DataFrag(DataFrag::parse(flags, &mut r)?),
            id::HEARTBEAT => Submessage::Heartbeat(Heartbeat::parse(flags, &mut r)?),
            id::HEARTBEAT_FRAG => Submessage::HeartbeatFrag(HeartbeatFrag::parse(&mut r)?),
            id::ACKNACK => Submessage::AckNack(AckNack::parse(flags, &mut r)?),
            id::NACK_FRAG => Submessage::NackFrag(NackFrag::parse(&mut r)?),
            id::GAP => Submessage::Gap(Gap::parse(&mut r)?),
            id::INFO_TS => Submessage::InfoTimestamp(InfoTimestamp::parse(flags, &mut r)?),
            id::INFO_SRC => Submessage::InfoSource(InfoSource::parse(&mut r)?),
            id::INFO_DST => Submessage::InfoDestination(InfoDestination::parse(&mut r)?),
            id::INFO_REPLY => Submessage::InfoReply(InfoReply::parse(flags, &mut r)?),
            id::INFO_REPLY_IP4 => Submessage::InfoReplyIp4(InfoReplyIp4::parse(flags, &mut r)?),
            id::PAD => Submessage::Pad(Pad::parse(&mut r)),
            _ => return Ok(None),
        };
        Ok(Some(sm))
    }

    /// The submessage id.
    pub const fn id(&self) -> u8 {
        use submessage_id as id;
        match self {
            Submessage::Data(_) => id::DATA,
            Submessage::DataFrag(_) => id::DATA_FRAG,
            Submessage::Heartbeat(_) => id::HEARTBEAT,
            Submessage::HeartbeatFrag(_) => id::HEARTBEAT_FRAG,
            Submessage::AckNack(_) => id::ACKNACK,
            Submessage::NackFrag(_) => id::NACK_FRAG,
            Submessage::Gap(_) => id::GAP,
            Submessage::InfoTimestamp(_) => id::INFO_TS,
            Submessage::InfoSource(_) => id::INFO_SRC,
            Submessage::InfoDestination(_) => id::INFO_DST,
            Submessage::InfoReply(_) => id::INFO_REPLY,
            Submessage::InfoReplyIp4(_) => id::INFO_REPLY_IP4,
            Submessage::Pad(_) => id::PAD,
        }
    }

    /// The flags this submessage is emitted with, E flag excluded.
    pub fn flags(&self) -> u8 {
        match self {
            Submessage::Data(s) => s.flags(),
            Submessage::DataFrag(s) => s.flags(),
            Submessage::Heartbeat(s) => s.flags(),
            Submessage::HeartbeatFrag(_) => 0,
            Submessage::AckNack(s) => s.flags(),
            Submessage::NackFrag(_) => 0,
            Submessage::Gap(_) => 0,
            Submessage::InfoTimestamp(s) => s.flags(),
            Submessage::InfoSource(_) => 0,
            Submessage::InfoDestination(_) => 0,
            Submessage::InfoReply(s) => s.flags(),
            Submessage::InfoReplyIp4(s) => s.flags(),
            Submessage::Pad(_) => 0,
        }
    }

    /// Length of the body as emitted, before padding to 4.
    pub fn body_len(&self) -> usize {
        match self {
            Submessage::Data(s) => s.body_len(),
            Submessage::DataFrag(s) => s.body_len(),
            Submessage::Heartbeat(_) => Heartbeat::BODY_LEN,
            Submessage::HeartbeatFrag(_) => HeartbeatFrag::BODY_LEN,
            Submessage::AckNack(s) => s.body_len(),
            Submessage::NackFrag(s) => s.body_len(),
            Submessage::Gap(s) => s.body_len(),
            Submessage::InfoTimestamp(s) => s.body_len(),
            Submessage::InfoSource(_) => InfoSource::BODY_LEN,
            Submessage::InfoDestination(_) => InfoDestination::BODY_LEN,
            Submessage::InfoReply(s) => s.body_len(),
            Submessage::InfoReplyIp4(s) => s.body_len(),
            Submessage::Pad(s) => s.body_len(),
        }
    }

    /// Whether it is a DATA or DATA_FRAG (the submessages that carry serialized samples).
    pub fn is_data(&self) -> bool {
        matches!(self, Submessage::Data(_) | Submessage::DataFrag(_))
    }

    /// Bytes on the wire: the 4-byte header and the body padded to a multiple of 4.
    pub fn buffer_len(&self) -> usize {
        align4(self.body_len())
            .and_then(|b| b.checked_add(SubmessageHeader::LEN))
            .unwrap_or(usize::MAX)
    }

    /// The byte order `emit` uses when asked for `requested`: a DATA or DATA_FRAG with
    /// inline QoS keeps the byte order of its parameter list, which the E flag describes.
    pub fn emit_endianness(&self, requested: Endianness) -> Endianness {
        match self {
            Submessage::Data(s) => s.inline_qos.map_or(requested, |q| q.endianness()),
            Submessage::DataFrag(s) => s.inline_qos.map_or(requested, |q| q.endianness()),
            _ => requested,
        }
    }

    /// Writes header, body and zero padding into the start of `buf`; returns the number
    /// of bytes written (`buffer_len()`).
    pub fn emit(&self, buf: &mut [u8], endianness: Endianness) -> Result<usize, EmitError> {
        self.emit_with(Writer::new(buf, endianness)).map(|(n, _)| n)
    }

    /// [`Submessage::emit`] without the serialized payload of a DATA or DATA_FRAG: returns
    /// the bytes written (`buffer_len()` less the payload's length) and where in them the
    /// payload goes, for a sender that sends the message in parts and the payload from
    /// where it lies. Lengths and padding are those of the whole submessage.
    pub fn emit_spliced(
        &self,
        buf: &mut [u8],
        endianness: Endianness,
    ) -> Result<(usize, Option<usize>), EmitError> {
        self.emit_with(Writer::splicing(buf, endianness))
    }

    fn emit_with(&self, mut w: Writer<'_>) -> Result<(usize, Option<usize>), EmitError> {
        let endianness = self.emit_endianness(w.endianness());
        w.set_endianness(endianness);
        let body_len = self.body_len();
        let padded = align4(body_len).ok_or(EmitError::SubmessageTooLong { len: body_len })?;
        let octets =
            u16::try_from(padded).map_err(|_| EmitError::SubmessageTooLong { len: padded })?;
        w.put_u8(self.id())?;
        w.put_u8(self.flags() | endianness.flag())?;
        w.put_u16(octets)?;
        match self {
            Submessage::Data(s) => s.write(&mut w)?,
            Submessage::DataFrag(s) => s.write(&mut w)?,
            Submessage::Heartbeat(s) => s.write(&mut w)?,
            Submessage::HeartbeatFrag(s) => s.write(&mut w)?,
            Submessage::AckNack(s) => s.write(&mut w)?,
            Submessage::NackFrag(s) => s.write(&mut w)?,
            Submessage::Gap(s) => s.write(&mut w)?,
            Submessage::InfoTimestamp(s) => s.write(&mut w)?,
            Submessage::InfoSource(s) => s.write(&mut w)?,
            Submessage::InfoDestination(s) => s.write(&mut w)?,
            Submessage::InfoReply(s) => s.write(&mut w)?,
            Submessage::InfoReplyIp4(s) => s.write(&mut w)?,
            Submessage::Pad(s) => s.write(&mut w)?,
        }
        w.pad4()?;
        Ok((w.position(), w.spliced_at()))
    }
}

macro_rules! impl_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(impl<'a> From<$ty> for Submessage<'a> {
            fn from(s: $ty) -> Self {
                Submessage::$variant(s)
            }
        })*
    };
}

impl_from!(
    Data(Data<'a>),
    DataFrag(DataFrag<'a>),
    Heartbeat(Heartbeat),
    HeartbeatFrag(HeartbeatFrag),
    AckNack(AckNack),
    NackFrag(NackFrag),
    Gap(Gap),
    InfoTimestamp(InfoTimestamp),
    InfoSource(InfoSource),
    InfoDestination(InfoDestination),
    InfoReply(InfoReply<'a>),
    InfoReplyIp4(InfoReplyIp4),
    Pad(Pad),
);

/// Test helpers shared by the submessage files.
#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// Parses one submessage (header + body) that starts at message offset 0.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Submessage<'_>, MalformedError> {
        let (hdr, body) = bytes.split_first_chunk::<4>().expect("header");
        let header = SubmessageHeader::from_bytes(*hdr);
        let len = usize::from(header.octets_to_next_header);
        let body = if len == 0 { body } else { &body[..len] };
        Ok(Submessage::parse(header, body, 4)?.expect("understood"))
    }

    /// Emits `sm` in `endianness` into a buffer of exactly `buffer_len()` bytes.
    pub(crate) fn emit(sm: &Submessage<'_>, endianness: Endianness) -> Vec<u8> {
        let mut buf = vec![0u8; sm.buffer_len()];
        let n = sm.emit(&mut buf, endianness).expect("fits");
        assert_eq!(n, buf.len());
        // One byte short never panics.
        if !buf.is_empty() {
            let mut short = vec![0u8; buf.len() - 1];
            assert!(matches!(
                sm.emit(&mut short, endianness),
                Err(EmitError::BufferTooSmall { .. })
            ));
        }
        buf
    }

    /// Every strict prefix of a valid submessage whose header still claims the full
    /// length is malformed, never a panic; so is every truncation with a fixed header.
    pub(crate) fn check_truncations(bytes: &[u8]) {
        for cut in 4..bytes.len() {
            let mut b = bytes[..cut].to_vec();
            let hdr = SubmessageHeader::from_bytes([b[0], b[1], b[2], b[3]]);
            let len = (cut - 4) as u16;
            let e = hdr.endianness().u16_to(len);
            b[2] = e[0];
            b[3] = e[1];
            // Either malformed or (for elements past the mandatory part) accepted: the
            // point is that it returns.
            let _ = parse(&b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_from_bytes() {
        let le = SubmessageHeader::from_bytes([0x07, 0x03, 0x1c, 0x00]);
        assert_eq!(le.octets_to_next_header, 28);
        assert_eq!(le.endianness(), Endianness::Little);
        let be = SubmessageHeader::from_bytes([0x07, 0x02, 0x00, 0x1c]);
        assert_eq!(be.octets_to_next_header, 28);
        assert_eq!(be.endianness(), Endianness::Big);
    }

    #[test]
    fn unknown_ids_are_not_understood() {
        for id in [0x00u8, 0x02, 0x0a, 0x11, 0x14, 0x30, 0x7f, 0x80, 0xff] {
            let header = SubmessageHeader {
                id,
                flags: 1,
                octets_to_next_header: 0,
            };
            assert_eq!(Submessage::parse(header, &[], 4), Ok(None), "id {id:#x}");
        }
    }
}
