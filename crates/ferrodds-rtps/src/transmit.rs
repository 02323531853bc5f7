//! What the protocol asks the driver to send.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

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
    pub buffer: Arc<Vec<u8>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_bytes_go_in_at_their_offsets() {
        let sample = Arc::new(b"0123456789".to_vec());
        let t = Transmit {
            destinations: Vec::new(),
            payload: b"HEADtailEND".to_vec(),
            spliced: vec![
                Spliced {
                    at: 4,
                    buffer: Arc::clone(&sample),
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
}
