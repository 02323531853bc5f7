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

use std::collections::VecDeque;

use crate::transmit::Transmit;
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
}

impl Outbox {
    pub(crate) fn new(limit: usize) -> Self {
        Outbox {
            queue: VecDeque::new(),
            back_destination: None,
            limit,
        }
    }

    /// Queues a message from `prefix` with `submessages`, addressed to the participant
    /// `destination` (with INFO_DST) or to every one, for `locators`: emitted straight into
    /// the last datagram when it can join it, else into a new one. (The writer's hot path:
    /// no intermediate message is built.)
    pub(crate) fn push_message(
        &mut self,
        prefix: GuidPrefix,
        destination: Option<GuidPrefix>,
        submessages: &[Submessage<'_>],
        locators: &[Locator],
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
        let joins = self.queue.back().is_some_and(|last| {
            self.back_destination == Some(destination)
                && last.destinations == locators
                && last.payload.len() + size <= self.limit
        });
        if !joins {
            let mut payload = vec![0u8; Header::LEN];
            crate::endpoint::header(prefix).emit(&mut payload)?;
            payload.reserve(size);
            self.queue.push_back(Transmit {
                destinations: locators.to_vec(),
                payload,
            });
            self.back_destination = Some(destination);
        }
        let Some(last) = self.queue.back_mut() else {
            return Ok(());
        };
        let start = last.payload.len();
        last.payload.resize(start + size, 0);
        let mut at = start;
        for sm in all() {
            match sm.emit(&mut last.payload[at..], Endianness::Little) {
                Ok(n) => at += n,
                Err(e) => {
                    // Leave the datagram as it was (sizes were computed first, so this
                    // does not happen).
                    last.payload.truncate(start);
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

    /// Queues a complete message for `destination`, joining it to the last datagram when
    /// it can.
    #[cfg(test)]
    pub(crate) fn push(&mut self, destination: Option<GuidPrefix>, t: Transmit) {
        if let Some(last) = self.queue.back_mut() {
            let body = t.payload.get(Header::LEN..).unwrap_or_default();
            if self.back_destination == Some(destination)
                && last.destinations == t.destinations
                && last.payload.len() + body.len() <= self.limit
            {
                last.payload.extend_from_slice(body);
                return;
            }
        }
        self.back_destination = Some(destination);
        self.queue.push_back(t);
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
    use crate::wire::{
        EntityId, Heartbeat, InfoDestination, Locator, Message, SequenceNumber, Submessage,
    };

    fn heartbeat_message(destination: Option<GuidPrefix>, count: u32) -> Transmit {
        let mut subs = Vec::new();
        if let Some(guid_prefix) = destination {
            subs.push(Submessage::InfoDestination(InfoDestination { guid_prefix }));
        }
        subs.push(Submessage::Heartbeat(Heartbeat {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId([0, 0, 1, 2]),
            first_sn: SequenceNumber(1),
            last_sn: SequenceNumber(i64::from(count)),
            count,
            final_flag: false,
            liveliness_flag: false,
        }));
        let header = crate::endpoint::header(GuidPrefix([1; 12]));
        Transmit {
            destinations: vec![Locator::udpv4([127, 0, 0, 1].into(), 7400)],
            payload: crate::wire::message_to_vec(&header, &subs, crate::wire::Endianness::Little)
                .expect("emits"),
        }
    }

    fn counts(t: &Transmit) -> Vec<u32> {
        Message::parse(&t.payload)
            .expect("parses")
            .1
            .filter_map(|s| match s {
                Ok(Submessage::Heartbeat(h)) => Some(h.count),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn messages_to_the_same_place_share_a_datagram_in_order() {
        let mut o = Outbox::new(64 * 1024);
        for count in 1..=3 {
            o.push(None, heartbeat_message(None, count));
        }
        assert_eq!(o.len(), 1);
        let t = o.pop().expect("one datagram");
        assert_eq!(counts(&t), [1, 2, 3]);
    }

    #[test]
    fn another_destination_or_locator_starts_a_new_datagram() {
        let mut o = Outbox::new(64 * 1024);
        let p = Some(GuidPrefix([7; 12]));
        o.push(None, heartbeat_message(None, 1));
        o.push(p, heartbeat_message(p, 2));
        let mut elsewhere = heartbeat_message(p, 3);
        elsewhere.destinations = vec![Locator::udpv4([127, 0, 0, 1].into(), 7411)];
        let mut there_too = heartbeat_message(p, 4);
        there_too.destinations.clone_from(&elsewhere.destinations);
        o.push(p, elsewhere);
        o.push(p, there_too);
        let sizes: Vec<Vec<u32>> = std::iter::from_fn(|| o.pop()).map(|t| counts(&t)).collect();
        assert_eq!(sizes, [vec![1], vec![2], vec![3, 4]]);
    }

    #[test]
    fn a_datagram_never_grows_past_the_limit() {
        let one = heartbeat_message(None, 1).payload.len();
        let body = one - Header::LEN;
        let mut o = Outbox::new(one + 2 * body);
        for count in 1..=7 {
            o.push(None, heartbeat_message(None, count));
        }
        let batches: Vec<Vec<u32>> = std::iter::from_fn(|| o.pop()).map(|t| counts(&t)).collect();
        assert_eq!(batches, [vec![1, 2, 3], vec![4, 5, 6], vec![7]]);
    }

    #[test]
    fn moved_datagrams_keep_their_order_and_full_ones_take_no_more() {
        let one = heartbeat_message(None, 1).payload.len();
        let body = one - Header::LEN;
        let mut batch = Outbox::new(one + body);
        let mut out = Outbox::new(one + body);
        for count in 1..=3 {
            batch.push(None, heartbeat_message(None, count));
        }
        batch.move_full_to(&mut out);
        out.push(None, heartbeat_message(None, 9));
        batch.move_all_to(&mut out);
        out.push(None, heartbeat_message(None, 10));
        let batches: Vec<Vec<u32>> = std::iter::from_fn(|| out.pop())
            .map(|t| counts(&t))
            .collect();
        assert_eq!(batches, [vec![1, 2], vec![9], vec![3, 10]]);
    }
}
