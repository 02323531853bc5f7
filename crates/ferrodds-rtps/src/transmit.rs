//! What the protocol asks the driver to send.

use crate::payload::Payload;
use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use crate::wire::Locator;

/// One datagram and where it goes. `#[must_use]`: dropping it loses traffic.
///
/// The message is `payload` with the [`Spliced`] sample bytes put in at their offsets: a
/// large sample's fragments go out from the history's buffer (a vectored send, or one copy
/// into a shared-memory segment) instead of being copied into the datagram first.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Transmit {
    /// Destinations (the same bytes go to each).
    pub destinations: Vec<Locator>,
    /// The RTPS message built for this datagram: all of it but the spliced bytes.
    pub payload: Vec<u8>,
    /// Sample bytes that belong in the message but were not copied into `payload`, in
    /// order of their offsets.
    pub spliced: Vec<Spliced>,
}

/// Serialized sample bytes spliced into a [`Transmit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced {
    /// Where in [`Transmit::payload`] they go (before the byte now at that offset).
    pub at: usize,
    /// The buffer they lie in (a writer history's serialized sample).
    pub buffer: Payload,
    /// Which of its bytes.
    pub range: Range<usize>,
}

impl Spliced {
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        self.buffer.get(self.range.clone()).unwrap_or_default()
    }
}

impl Transmit {
    /// A datagram of `payload` alone.
    pub fn new(destinations: Vec<Locator>, payload: Vec<u8>) -> Self {
        Transmit {
            destinations,
            payload,
            spliced: Vec::new(),
        }
    }

    /// The message's length.
    pub fn len(&self) -> usize {
        self.payload.len() + self.spliced.iter().map(|s| s.range.len()).sum::<usize>()
    }

    /// Whether the message is empty (it never is once queued).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `part` with the message's pieces in order (one when nothing is spliced; none
    /// empty).
    pub fn for_each_part<'a>(&'a self, mut part: impl FnMut(&'a [u8])) {
        let mut from = 0;
        let mut non_empty = |p: &'a [u8]| {
            if !p.is_empty() {
                part(p);
            }
        };
        for s in &self.spliced {
            let at = s.at.clamp(from, self.payload.len());
            non_empty(&self.payload[from..at]);
            non_empty(s.bytes());
            from = at;
        }
        non_empty(&self.payload[from..]);
    }

    /// A datagram to `destinations` with an empty payload that has room for `capacity`
    /// bytes, made from one this thread [recycled](Transmit::recycle) when it has one:
    /// the driver sends a datagram on the thread that had it built (the writing thread,
    /// or the receive or timer thread that answered), so a thread's sends feed its next
    /// datagrams and a steady stream of writes allocates none.
    pub fn reuse(destinations: &[Locator], capacity: usize) -> Transmit {
        let kept = SPARE.with(|spare| spare.borrow_mut().take());
        let mut t = kept.unwrap_or_else(|| Transmit::new(Vec::new(), Vec::new()));
        t.destinations.extend_from_slice(destinations);
        t.payload.reserve(capacity);
        t
    }

    /// Gives the datagram's buffers back once it is sent, for the calling thread's next
    /// [`Transmit::reuse`] (bounded: at most 64 datagrams of at most 1 MiB
    /// together; the spliced samples are let go at once).
    pub fn recycle(mut self) {
        self.destinations.clear();
        self.payload.clear();
        self.spliced.clear();
        SPARE.with(|spare| spare.borrow_mut().keep(self));
    }

    /// The whole message in one buffer: borrowed when nothing is spliced, else a copy.
    pub fn contiguous(&self) -> Cow<'_, [u8]> {
        if self.spliced.is_empty() {
            return Cow::Borrowed(&self.payload);
        }
        let mut all = Vec::with_capacity(self.len());
        self.for_each_part(|p| all.extend_from_slice(p));
        Cow::Owned(all)
    }
}

/// The most datagrams a thread keeps for reuse.
pub(crate) const SPARE_DATAGRAMS: usize = 64;
/// The most payload bytes (capacity) a thread keeps for reuse, all datagrams together.
pub(crate) const SPARE_BYTES: usize = 1 << 20;

thread_local! {
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { kept: Vec::new(), bytes: 0 }) };
}

/// A thread's sent datagrams, emptied, for reuse.
#[derive(Debug)]
struct Spare {
    kept: Vec<Transmit>,
    /// The payload capacity of `kept`, together.
    bytes: usize,
}

impl Spare {
    fn take(&mut self) -> Option<Transmit> {
        let t = self.kept.pop()?;
        self.bytes -= t.payload.capacity();
        Some(t)
    }

    fn keep(&mut self, t: Transmit) {
        let cap = t.payload.capacity();
        if self.kept.len() < SPARE_DATAGRAMS && self.bytes + cap <= SPARE_BYTES {
            self.bytes += cap;
            self.kept.push(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn spliced_bytes_go_in_at_their_offsets() {
        let sample = Payload::from(b"0123456789".to_vec());
        let t = Transmit {
            destinations: Vec::new(),
            payload: b"HEADtailEND".to_vec(),
            spliced: vec![
                Spliced {
                    at: 4,
                    buffer: sample.clone(),
                    range: 0..3,
                },
                Spliced {
                    at: 8,
                    buffer: sample,
                    range: 7..10,
                },
            ],
        };
        assert_eq!(t.len(), 17);
        assert_eq!(&*t.contiguous(), b"HEAD012tail789END");
        let mut parts = Vec::new();
        t.for_each_part(|p| parts.push(p.to_vec()));
        assert_eq!(parts, [&b"HEAD"[..], b"012", b"tail", b"789", b"END"]);
        let plain = Transmit::new(Vec::new(), b"abc".to_vec());
        assert!(matches!(plain.contiguous(), Cow::Borrowed(b"abc")));
    }

    #[test]
    fn a_sent_datagram_is_reused_emptied_by_its_thread_and_the_spare_stays_bounded() {
        let to = [Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7400)];
        let mut t = Transmit::reuse(&to, 100);
        t.payload.extend_from_slice(b"message");
        t.spliced.push(Spliced {
            at: 0,
            buffer: Payload::Heap(Arc::new(vec![1, 2, 3])),
            range: 0..3,
        });
        let Payload::Heap(buffer) = &t.spliced[0].buffer else {
            unreachable!()
        };
        let (payload, buffer) = (t.payload.as_ptr(), Arc::clone(buffer));
        t.recycle();
        assert_eq!(Arc::strong_count(&buffer), 1, "the spliced sample let go");
        let again = Transmit::reuse(&to[..0], 10);
        assert_eq!(again.payload.as_ptr(), payload, "the same buffer");
        assert!(again.payload.is_empty() && again.spliced.is_empty());
        assert!(again.destinations.is_empty() && again.payload.capacity() >= 100);
        // Another thread has its own.
        std::thread::spawn(|| assert!(SPARE.with(|s| s.borrow().kept.is_empty())))
            .join()
            .unwrap();
        // Bounded in count and in bytes.
        for _ in 0..2 * SPARE_DATAGRAMS {
            Transmit::reuse(&to, 16).recycle();
            Transmit::new(Vec::new(), Vec::with_capacity(16)).recycle();
        }
        for _ in 0..4 {
            Transmit::new(Vec::new(), Vec::with_capacity(SPARE_BYTES / 2)).recycle();
        }
        SPARE.with(|s| {
            let s = s.borrow();
            assert!(s.kept.len() <= SPARE_DATAGRAMS && s.bytes <= SPARE_BYTES);
            assert_eq!(
                s.bytes,
                s.kept.iter().map(|t| t.payload.capacity()).sum::<usize>()
            );
        });
    }
}
