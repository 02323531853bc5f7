//! A whole RTPS message: header, then submessages (DDSI-RTPS 2.5 §8.3.3, §8.3.4.1).

use super::submessage::submessage_id;
use super::{
    align4, EmitError, Endianness, Header, MalformedError, MessageError, Submessage,
    SubmessageHeader,
};

/// Namespace for reading an RTPS message; see [`Message::parse`].
#[derive(Debug)]
pub enum Message {}

impl Message {
    /// Splits a datagram into its header and an iterator over its submessages.
    ///
    /// The iterator yields each accepted submessage, skips (and counts) the ones it does
    /// not understand, and yields at most one [`MalformedError`], after which it ends:
    /// the rest of the message is dropped (§8.3.4.1).
    pub fn parse(datagram: &[u8]) -> Result<(Header, SubmessageIter<'_>), MessageError> {
        let header = Header::parse(datagram)?;
        let body = datagram.get(Header::LEN..).unwrap_or(&[]);
        Ok((
            header,
            SubmessageIter {
                message: datagram,
                pos: Header::LEN.min(datagram.len()),
                done: body.is_empty(),
                not_understood: 0,
            },
        ))
    }
}

/// Iterator over the submessages of one message; see [`Message::parse`].
#[derive(Debug, Clone)]
pub struct SubmessageIter<'a> {
    message: &'a [u8],
    pos: usize,
    done: bool,
    not_understood: usize,
}

impl<'a> SubmessageIter<'a> {
    /// Number of submessages skipped so far because their id is unknown (including the
    /// vendor-specific ids 0x80–0xff). Read it after the iteration to count them.
    pub const fn not_understood(&self) -> usize {
        self.not_understood
    }

    /// Message offset of the next submessage header.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    fn fail(&mut self, e: MalformedError) -> Option<Result<Submessage<'a>, MalformedError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<'a> Iterator for SubmessageIter<'a> {
    type Item = Result<Submessage<'a>, MalformedError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            let offset = self.pos;
            let rest = self.message.get(offset..).unwrap_or(&[]);
            if rest.is_empty() {
                self.done = true;
                return None;
            }
            let Some((hdr, after)) = rest.split_first_chunk::<{ SubmessageHeader::LEN }>() else {
                return self.fail(MalformedError::TruncatedSubmessageHeader {
                    offset,
                    remaining: rest.len(),
                });
            };
            let header = SubmessageHeader::from_bytes(*hdr);
            let length = header.octets_to_next_header;
            // §9.4.5.1.3: 0 means "to the end of the message", except for PAD and
            // INFO_TS, whose body may legitimately be empty.
            let body_len = if length == 0 {
                match header.id {
                    submessage_id::PAD | submessage_id::INFO_TS => 0,
                    _ => after.len(),
                }
            } else {
                usize::from(length)
            };
            let Some(body) = after.get(..body_len) else {
                return self.fail(MalformedError::LengthPastEnd {
                    offset,
                    submessage: header.id,
                    length,
                    remaining: after.len(),
                });
            };
            let body_offset = offset + SubmessageHeader::LEN;
            self.pos = body_offset + body_len;
            match Submessage::parse(header, body, body_offset) {
                Ok(Some(sm)) => return Some(Ok(sm)),
                Ok(None) => self.not_understood += 1,
                Err(e) => return self.fail(e),
            }
        }
    }
}

impl core::iter::FusedIterator for SubmessageIter<'_> {}

/// Writes a message into a caller's buffer: the header, then each pushed submessage with
/// its `octetsToNextHeader` computed and its body padded to 4 bytes.
///
/// ```
/// # use ferrodds_rtps::wire::*;
/// let header = Header {
///     version: ProtocolVersion::V2_5,
///     vendor_id: VendorId::FERRODDS,
///     guid_prefix: GuidPrefix([1; 12]),
/// };
/// let mut buf = [0u8; 1500];
/// let mut b = MessageBuilder::new(&mut buf, &header, Endianness::Little)?;
/// b.push(&InfoTimestamp { timestamp: Some(Time::ZERO) }.into())?;
/// let len = b.finish();
/// let (_, mut iter) = Message::parse(&buf[..len]).expect("valid");
/// assert!(matches!(iter.next(), Some(Ok(Submessage::InfoTimestamp(_)))));
/// # Ok::<(), EmitError>(())
/// ```
#[derive(Debug)]
pub struct MessageBuilder<'b> {
    buf: &'b mut [u8],
    len: usize,
    endianness: Endianness,
}

impl<'b> MessageBuilder<'b> {
    /// Starts a message with `header`; submessages are emitted in `endianness`.
    pub fn new(
        buf: &'b mut [u8],
        header: &Header,
        endianness: Endianness,
    ) -> Result<Self, EmitError> {
        header.emit(buf)?;
        Ok(MessageBuilder {
            buf,
            len: Header::LEN,
            endianness,
        })
    }

    /// Bytes written so far.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// True if only the header has been written.
    pub const fn is_empty(&self) -> bool {
        self.len == Header::LEN
    }

    /// Bytes still free in the buffer.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.len)
    }

    /// Appends a submessage. On error nothing is appended and the builder stays usable
    /// (e.g. to send what it holds and start a new message).
    pub fn push(&mut self, sm: &Submessage<'_>) -> Result<(), EmitError> {
        let available = self.buf.len();
        let out = self
            .buf
            .get_mut(self.len..)
            .ok_or(EmitError::BufferTooSmall {
                needed: self.len,
                available,
            })?;
        let n = sm.emit(out, self.endianness)?;
        self.len = self.len.saturating_add(n);
        Ok(())
    }

    /// Ends the message and returns its length.
    pub fn finish(self) -> usize {
        self.len
    }
}

/// Emits a whole message into a new `Vec`, sized exactly.
pub fn message_to_vec(
    header: &Header,
    submessages: &[Submessage<'_>],
    endianness: Endianness,
) -> Result<Vec<u8>, EmitError> {
    let mut buf = Vec::new();
    message_into(header, submessages, endianness, &mut buf)?;
    Ok(buf)
}

/// Emits a whole message at the end of `buf` (which keeps its capacity for reuse); on an
/// error `buf` is left as it was.
pub fn message_into<'s, 'a: 's>(
    header: &Header,
    submessages: impl IntoIterator<Item = &'s Submessage<'a>> + Clone,
    endianness: Endianness,
    buf: &mut Vec<u8>,
) -> Result<(), EmitError> {
    let mut total = Header::LEN;
    for sm in submessages.clone() {
        let n = align4(sm.body_len())
            .and_then(|b| b.checked_add(SubmessageHeader::LEN))
            .ok_or(EmitError::SubmessageTooLong { len: sm.body_len() })?;
        total = total
            .checked_add(n)
            .ok_or(EmitError::SubmessageTooLong { len: n })?;
    }
    let start = buf.len();
    buf.resize(start + total, 0);
    let emitted = (|| {
        let mut b = MessageBuilder::new(&mut buf[start..], header, endianness)?;
        for sm in submessages {
            b.push(sm)?;
        }
        Ok(b.finish())
    })();
    match emitted {
        Ok(len) => {
            buf.truncate(start + len);
            Ok(())
        }
        Err(e) => {
            buf.truncate(start);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{
        Data, DataPayload, EntityId, GuidPrefix, Heartbeat, InfoDestination, InfoTimestamp,
        ProtocolVersion, SequenceNumber, Time, VendorId,
    };

    fn header() -> Header {
        Header {
            version: ProtocolVersion::V2_5,
            vendor_id: VendorId::FERRODDS,
            guid_prefix: GuidPrefix([0xab; 12]),
        }
    }

    fn hb(count: u32) -> Heartbeat {
        Heartbeat {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::from_u32(0x102),
            first_sn: SequenceNumber(1),
            last_sn: SequenceNumber(3),
            count,
            final_flag: false,
            liveliness_flag: false,
        }
    }

    #[test]
    fn build_and_parse() {
        let payload = [0, 1, 0, 0, 9, 9, 9];
        let data = Data {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::from_u32(0x102),
            writer_sn: SequenceNumber(3),
            inline_qos: None,
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        };
        let subs: Vec<Submessage<'_>> = vec![
            InfoDestination {
                guid_prefix: GuidPrefix([7; 12]),
            }
            .into(),
            InfoTimestamp {
                timestamp: Some(Time::from_nanos(5)),
            }
            .into(),
            data.into(),
            hb(1).into(),
        ];
        for e in [Endianness::Little, Endianness::Big] {
            let bytes = message_to_vec(&header(), &subs, e).expect("fits");
            assert_eq!(bytes.len() % 4, 0);
            let (h, iter) = Message::parse(&bytes).expect("valid");
            assert_eq!(h, header());
            let parsed: Vec<_> = iter.collect::<Result<_, _>>().expect("valid");
            assert_eq!(parsed.len(), 4);
            assert_eq!(parsed[0], subs[0]);
            assert_eq!(parsed[1], subs[1]);
            assert_eq!(parsed[3], subs[3]);
            // The payload comes back with the one byte of padding emit added.
            let Submessage::Data(d) = parsed[2] else {
                panic!()
            };
            assert_eq!(d.payload, DataPayload::Data(&[0, 1, 0, 0, 9, 9, 9, 0]));
        }
    }

    #[test]
    fn builder_refuses_without_panicking() {
        let mut buf = [0u8; 40];
        let mut b = MessageBuilder::new(&mut buf, &header(), Endianness::Little).expect("fits");
        assert!(b.is_empty());
        assert_eq!(b.remaining(), 20);
        assert!(matches!(
            b.push(&hb(1).into()),
            Err(EmitError::BufferTooSmall { .. })
        ));
        b.push(&InfoTimestamp { timestamp: None }.into())
            .expect("4 bytes fit");
        assert_eq!(b.finish(), 24);
        assert!(matches!(
            MessageBuilder::new(&mut [0u8; 10], &header(), Endianness::Little),
            Err(EmitError::BufferTooSmall { .. })
        ));
    }

    fn message(subs: &[&[u8]]) -> Vec<u8> {
        let mut m = Vec::new();
        let mut h = [0u8; 20];
        header().emit(&mut h).expect("fits");
        m.extend_from_slice(&h);
        for s in subs {
            m.extend_from_slice(s);
        }
        m
    }

    fn hb_bytes(count: u8) -> Vec<u8> {
        let mut v = vec![0u8; 32];
        Submessage::from(hb(u32::from(count)))
            .emit(&mut v, Endianness::Little)
            .expect("fits");
        v
    }

    #[test]
    fn empty_message_has_no_submessages() {
        let m = message(&[]);
        let (_, mut iter) = Message::parse(&m).expect("valid");
        assert_eq!(iter.next(), None);
    }

    #[test]
    fn last_submessage_with_zero_length_runs_to_end() {
        // A HEARTBEAT whose octetsToNextHeader is 0: it extends to the end of the message.
        let mut last = hb_bytes(2);
        last[2] = 0;
        last[3] = 0;
        let m = message(&[&hb_bytes(1), &last]);
        let (_, iter) = Message::parse(&m).expect("valid");
        let v: Vec<_> = iter.collect();
        assert_eq!(v, vec![Ok(hb(1).into()), Ok(hb(2).into())]);
    }

    #[test]
    fn pad_and_info_ts_with_zero_length_are_empty() {
        let pad = [0x01, 0x01, 0x00, 0x00];
        let ts = [0x09, 0x03, 0x00, 0x00]; // INFO_TS with I: no timestamp
        let m = message(&[&pad, &ts, &hb_bytes(1)]);
        let (_, iter) = Message::parse(&m).expect("valid");
        let v: Vec<_> = iter.collect();
        assert_eq!(
            v,
            vec![
                Ok(Submessage::Pad(crate::wire::Pad { len: 0 })),
                Ok(InfoTimestamp { timestamp: None }.into()),
                Ok(hb(1).into())
            ]
        );
        // INFO_TS with length 0 but without I is malformed (no room for the time).
        let ts = [0x09, 0x01, 0x00, 0x00];
        let m = message(&[&ts, &hb_bytes(1)]);
        let (_, iter) = Message::parse(&m).expect("valid");
        let v: Vec<_> = iter.collect();
        assert_eq!(
            v,
            vec![Err(MalformedError::Truncated {
                offset: 24,
                submessage: 0x09,
                needed: 4,
                available: 0
            })]
        );
    }

    #[test]
    fn unknown_and_vendor_specific_are_skipped_and_counted() {
        let unknown = [0x55, 0x01, 0x04, 0x00, 1, 2, 3, 4];
        let vendor = [0x80, 0x01, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8];
        let m = message(&[&unknown, &hb_bytes(1), &vendor, &hb_bytes(2)]);
        let (_, mut iter) = Message::parse(&m).expect("valid");
        assert_eq!(iter.next(), Some(Ok(hb(1).into())));
        assert_eq!(iter.not_understood(), 1);
        assert_eq!(iter.next(), Some(Ok(hb(2).into())));
        assert_eq!(iter.next(), None);
        assert_eq!(iter.not_understood(), 2);
    }

    #[test]
    fn malformed_drops_the_rest() {
        let mut bad = hb_bytes(1);
        bad[16] = 0; // firstSN 0
        let m = message(&[&hb_bytes(1), &bad, &hb_bytes(2)]);
        let (_, iter) = Message::parse(&m).expect("valid");
        let v: Vec<_> = iter.collect();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0], Ok(hb(1).into()));
        assert!(matches!(
            v[1],
            Err(MalformedError::InvalidSequenceNumber { offset: 64, .. })
        ));
    }

    #[test]
    fn truncated_headers_and_lengths_past_end() {
        let hb1 = hb_bytes(1);
        // 3 bytes where a submessage header should be.
        let m = message(&[&hb1, &[0x07, 0x01, 0x1c]]);
        let (_, iter) = Message::parse(&m).expect("valid");
        let v: Vec<_> = iter.collect();
        assert_eq!(
            v[1],
            Err(MalformedError::TruncatedSubmessageHeader {
                offset: 52,
                remaining: 3
            })
        );
        // octetsToNextHeader 28, but only 27 bytes follow.
        let m = message(&[&hb1[..31]]);
        let (_, iter) = Message::parse(&m).expect("valid");
        let v: Vec<_> = iter.collect();
        assert_eq!(
            v,
            vec![Err(MalformedError::LengthPastEnd {
                offset: 20,
                submessage: 0x07,
                length: 28,
                remaining: 27
            })]
        );
        // octetsToNextHeader 0xffff on an unknown id is still malformed: the length is
        // what finds the next submessage.
        let m = message(&[&[0x55, 0x01, 0xff, 0xff, 0, 0, 0, 0]]);
        let (_, iter) = Message::parse(&m).expect("valid");
        assert!(matches!(
            iter.collect::<Vec<_>>()[..],
            [Err(MalformedError::LengthPastEnd { .. })]
        ));
        // Every truncation of a valid message returns without panicking.
        let full = message(&[&hb1, &hb_bytes(2)]);
        for cut in 0..full.len() {
            if let Ok((_, iter)) = Message::parse(&full[..cut]) {
                for _ in iter {}
            }
        }
    }
}
