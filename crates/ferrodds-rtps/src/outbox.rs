//! Datagrams an endpoint wants sent, packed: a message for the same locators and the same
//! destination participant as the last one queued joins it, without its header, while the
//! two fit in one datagram.
//!
//! Packing is what lets a writer answer an ACKNACK listing 200 changes with a handful of
//! datagrams instead of 200, and what writer batching is built on: a sendto on loopback
//! costs a few microseconds however small the datagram, and so does each receive.
//!
//! Joining two messages is safe when the receiver's state at the end of the first is what
//! the second starts from (RTPS 2.5 §8.3.4): both come from this participant (same source
//! prefix and version), both address the same participant (the INFO_DST each starts with,
//! or neither has one), and every message an endpoint builds that depends on a timestamp
//! starts with its own INFO_TS. Messages an endpoint builds never carry INFO_SRC or
//! INFO_REPLY, which would also carry over.

use crate::payload::Payload;
use std::collections::VecDeque;
use std::ops::Range;

use crate::transmit::{Spliced, Transmit};
use crate::wire::{
    align4, EmitError, Endianness, GuidPrefix, Header, InfoDestination, Locator, Submessage,
    SubmessageHeader,
};

#[derive(Debug)]
pub(crate) struct Outbox {
    queue: VecDeque<Transmit>,
    /// The destination participant of the last datagram queued (`Some(None)`: every one),
    /// or `None` when that datagram takes nothing more.
    back_destination: Option<Option<GuidPrefix>>,
    /// The largest datagram packing makes.
    limit: usize,
    /// Locator kinds that carry larger datagrams, and how large packing makes them for
    /// destinations all of those kinds (see [`crate::writer::LargeDatagrams`]).
    large: Option<(Vec<i32>, usize)>,
    /// Datagrams are made with room for this many bytes (a batch's fill up; others take
    /// what their first message needs).
    preallocate: usize,
}

/// The most a batch's datagram is made with room for: below glibc's 64 KiB threshold at
/// which freeing a chunk consolidates the fast bins (growing a batched datagram by doubling
/// ended at exactly 64 KiB, and freeing each after its send was a tenth of a 1 KiB
/// publisher's time in `malloc_consolidate` and `_int_free`).
const MAX_PREALLOCATE: usize = 63 * 1024;

impl Outbox {
    pub(crate) fn new(limit: usize) -> Self {
        Outbox {
            queue: VecDeque::new(),
            back_destination: None,
            limit,
            large: None,
            preallocate: 0,
        }
    }

    /// Makes each datagram with room for `limit` bytes (at most [`MAX_PREALLOCATE`]) rather
    /// than growing it message by message: for an outbox whose datagrams fill up.
    pub(crate) fn preallocated(mut self) -> Self {
        self.preallocate = self.limit.min(MAX_PREALLOCATE);
        self
    }

    /// Packs datagrams to `locators` all of one of `kinds` up to `limit` bytes.
    pub(crate) fn with_large(mut self, kinds: Vec<i32>, limit: usize) -> Self {
        self.large = Some((kinds, limit));
        self
    }

    /// The largest datagram to pack for `locators`.
    fn limit_for(&self, locators: &[Locator]) -> usize {
        match &self.large {
            Some((kinds, large))
                if !locators.is_empty() && locators.iter().all(|l| kinds.contains(&l.kind)) =>
            {
                (*large).max(self.limit)
            }
            _ => self.limit,
        }
    }

    /// Queues a message from `prefix` with `submessages`, addressed to the participant
    /// `destination` (with INFO_DST) or to every one, for `locators`: emitted straight into
    /// the last datagram when it can join it, else into a new one. (The writer's hot path:
    /// no intermediate message is built.) `splice`, when given, holds the bytes of the one
    /// DATA or DATA_FRAG payload among `submessages` (the same bytes, borrowed there): they
    /// are left out of the datagram's buffer and spliced in when it is sent.
    pub(crate) fn push_message(
        &mut self,
        prefix: GuidPrefix,
        destination: Option<GuidPrefix>,
        submessages: &[Submessage<'_>],
        locators: &[Locator],
        splice: Option<(&Payload, Range<usize>)>,
    ) -> Result<(), EmitError> {
        let info_dst = destination
            .map(|guid_prefix| Submessage::InfoDestination(InfoDestination { guid_prefix }));
        let all = || info_dst.iter().chain(submessages);
        let mut size = 0usize;
        for sm in all() {
            size = align4(sm.body_len())
                .and_then(|b| b.checked_add(SubmessageHeader::LEN + size))
                .ok_or(EmitError::SubmessageTooLong { len: sm.body_len() })?;
        }
        let spliced_len = splice.as_ref().map_or(0, |(_, r)| r.len());
        let joins = self.queue.back().is_some_and(|last| {
            self.back_destination == Some(destination)
                && last.destinations == locators
                && last.len() + size <= self.limit_for(locators)
        });
        if !joins {
            let mut t = Transmit::reuse(
                locators,
                (Header::LEN + size - spliced_len).max(self.preallocate),
            );
            t.payload.resize(Header::LEN, 0);
            crate::endpoint::header(prefix).emit(&mut t.payload)?;
            self.queue.push_back(t);
            self.back_destination = Some(destination);
        }
        let Some(last) = self.queue.back_mut() else {
            return Ok(());
        };
        let start = last.payload.len();
        let spliced_before = last.spliced.len();
        last.payload.resize(start + size - spliced_len, 0);
        let mut at = start;
        for sm in all() {
            let emitted = match &splice {
                Some((buffer, range)) if sm.is_data() => sm
                    .emit_spliced(&mut last.payload[at..], Endianness::Little)
                    .map(|(n, offset)| {
                        if let Some(offset) = offset {
                            last.spliced.push(Spliced {
                                at: at + offset,
                                buffer: Payload::clone(buffer),
                                range: range.clone(),
                            });
                        }
                        n
                    }),
                _ => sm.emit(&mut last.payload[at..], Endianness::Little),
            };
            match emitted {
                Ok(n) => at += n,
                Err(e) => {
                    // Leave the datagram as it was (sizes were computed first, so this
                    // does not happen).
                    last.payload.truncate(start);
                    last.spliced.truncate(spliced_before);
                    if start == Header::LEN {
                        self.queue.pop_back();
                        self.back_destination = None;
                    }
                    return Err(e);
                }
            }
        }
        last.payload.truncate(at);
        Ok(())
    }

    /// The next datagram to send.
    pub(crate) fn pop(&mut self) -> Option<Transmit> {
        self.queue.pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Datagrams queued.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Moves every datagram but the last (which may still grow) to the end of `to`.
    pub(crate) fn move_full_to(&mut self, to: &mut Outbox) {
        while self.queue.len() > 1 {
            if let Some(t) = self.queue.pop_front() {
                to.append(t, None);
            }
        }
    }

    /// Moves everything to the end of `to`.
    pub(crate) fn move_all_to(&mut self, to: &mut Outbox) {
        let back = self.back_destination;
        while let Some(t) = self.queue.pop_front() {
            let last = self.queue.is_empty();
            to.append(t, if last { back } else { None });
        }
    }

    /// Appends a datagram as it is (already packed); `back` says its destination when it
    /// may take more (the last of a batch).
    fn append(&mut self, t: Transmit, back: Option<Option<GuidPrefix>>) {
        self.queue.push_back(t);
        self.back_destination = back;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{EntityId, Heartbeat, Message, SequenceNumber};

    const PREFIX: GuidPrefix = GuidPrefix([1; 12]);

    /// Queues a HEARTBEAT numbered `count` for `destination` at 127.0.0.1:`port`, as an
    /// endpoint does.
    fn heartbeat(o: &mut Outbox, destination: Option<GuidPrefix>, count: u32, port: u16) {
        let hb = Submessage::Heartbeat(Heartbeat {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId([0, 0, 1, 2]),
            first_sn: SequenceNumber(1),
            last_sn: SequenceNumber(i64::from(count)),
            count,
            final_flag: false,
            liveliness_flag: false,
        });
        let to = [Locator::udpv4([127, 0, 0, 1].into(), port)];
        o.push_message(PREFIX, destination, &[hb], &to, None)
            .expect("emits");
    }

    /// The size of a datagram holding one HEARTBEAT without INFO_DST.
    fn one() -> usize {
        let mut o = Outbox::new(64 * 1024);
        heartbeat(&mut o, None, 1, 7400);
        o.pop().expect("queued").payload.len()
    }

    /// The HEARTBEAT counts in a datagram, each with the INFO_DST before it (if any).
    fn counts(t: &Transmit) -> Vec<(u32, Option<GuidPrefix>)> {
        let (header, subs) = Message::parse(&t.payload).expect("parses");
        assert_eq!(header.guid_prefix, PREFIX);
        let mut dst = None;
        subs.filter_map(|s| match s {
            Ok(Submessage::InfoDestination(d)) => {
                dst = Some(d.guid_prefix);
                None
            }
            Ok(Submessage::Heartbeat(h)) => Some((h.count, dst.take())),
            _ => None,
        })
        .collect()
    }

    fn all(o: &mut Outbox) -> Vec<Vec<u32>> {
        std::iter::from_fn(|| o.pop())
            .map(|t| counts(&t).into_iter().map(|(c, _)| c).collect())
            .collect()
    }

    #[test]
    fn messages_to_the_same_place_share_a_datagram_in_order() {
        let mut o = Outbox::new(64 * 1024);
        for count in 1..=3 {
            heartbeat(&mut o, None, count, 7400);
        }
        assert_eq!(o.len(), 1);
        assert_eq!(all(&mut o), [vec![1, 2, 3]]);
    }

    #[test]
    fn every_message_joined_keeps_its_info_destination() {
        let mut o = Outbox::new(64 * 1024);
        let p = Some(GuidPrefix([7; 12]));
        heartbeat(&mut o, p, 1, 7400);
        heartbeat(&mut o, p, 2, 7400);
        let t = o.pop().expect("one datagram");
        assert_eq!(counts(&t), [(1, p), (2, p)]);
    }

    #[test]
    fn another_destination_or_locator_starts_a_new_datagram() {
        let mut o = Outbox::new(64 * 1024);
        let p = Some(GuidPrefix([7; 12]));
        heartbeat(&mut o, None, 1, 7400);
        heartbeat(&mut o, p, 2, 7400);
        heartbeat(&mut o, p, 3, 7411);
        heartbeat(&mut o, p, 4, 7411);
        assert_eq!(all(&mut o), [vec![1], vec![2], vec![3, 4]]);
    }

    #[test]
    fn a_datagram_never_grows_past_the_limit() {
        let body = one() - Header::LEN;
        let mut o = Outbox::new(one() + 2 * body);
        for count in 1..=7 {
            heartbeat(&mut o, None, count, 7400);
        }
        assert_eq!(all(&mut o), [vec![1, 2, 3], vec![4, 5, 6], vec![7]]);
    }

    #[test]
    fn moved_datagrams_keep_their_order_and_full_ones_take_no_more() {
        let body = one() - Header::LEN;
        let mut batch = Outbox::new(one() + body);
        let mut out = Outbox::new(one() + body);
        for count in 1..=3 {
            heartbeat(&mut batch, None, count, 7400);
        }
        batch.move_full_to(&mut out);
        heartbeat(&mut out, None, 9, 7400);
        batch.move_all_to(&mut out);
        heartbeat(&mut out, None, 10, 7400);
        assert_eq!(all(&mut out), [vec![1, 2], vec![9], vec![3, 10]]);
    }
}
