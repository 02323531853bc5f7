//! The writer liveliness protocol (DDSI-RTPS 2.5 §8.4.13, §9.6.2.1): the
//! `ParticipantMessageData` a participant writes on its builtin participant-message writer
//! to assert the liveliness of its writers, and when it writes them.
//!
//! - An AUTOMATIC message says "the participant (its process) is alive": it renews every
//!   AUTOMATIC writer of the participant. A participant that has AUTOMATIC writers with a
//!   finite lease writes one periodically, a few times per shortest lease.
//! - A MANUAL message says "the application asserted": it renews the
//!   MANUAL_BY_PARTICIPANT writers (and the AUTOMATIC ones). It is written when the
//!   application calls `assert_liveliness` on the participant, and when a
//!   MANUAL_BY_PARTICIPANT writer writes — then at most a few times per shortest lease, not
//!   once per sample.
//!
//! MANUAL_BY_TOPIC writers assert by writing and by HEARTBEATs with the liveliness flag,
//! which do not go through this topic.
//!
//! The topic is keyed by the participant's GUID prefix and the kind, so the writer
//! (reliable, TRANSIENT_LOCAL, KEEP_LAST 1) holds one message per kind.

use std::time::Duration;

use crate::qos::LivelinessKind;
use crate::time::Timestamp;
use crate::wire::GuidPrefix;

/// `PARTICIPANT_MESSAGE_DATA_KIND_AUTOMATIC_LIVELINESS_UPDATE`.
pub const KIND_AUTOMATIC: [u8; 4] = [0, 0, 0, 1];
/// `PARTICIPANT_MESSAGE_DATA_KIND_MANUAL_LIVELINESS_UPDATE`.
pub const KIND_MANUAL: [u8; 4] = [0, 0, 0, 2];

/// Encapsulation identifiers a message may carry (plain CDR, either byte order).
const CDR_BE: [u8; 2] = [0, 0];
const CDR_LE: [u8; 2] = [0, 1];

/// One `ParticipantMessageData`: whose writers it renews and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParticipantMessage {
    /// The participant whose writers it concerns.
    pub prefix: GuidPrefix,
    /// [`KIND_AUTOMATIC`], [`KIND_MANUAL`], or a vendor's own kind (ignored).
    pub kind: [u8; 4],
}

/// Why a received `ParticipantMessageData` was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// Shorter than the encapsulation, prefix, kind and data length.
    #[error("participant message of {0} bytes, shorter than its fixed part (24)")]
    Short(usize),
    /// Not plain CDR.
    #[error("participant message with encapsulation {0:#06x}, not CDR")]
    Encapsulation(u16),
    /// The data sequence claims more bytes than the message has.
    #[error("participant message data of {claimed} bytes claimed, {available} present")]
    DataLength {
        /// What the length field says.
        claimed: u32,
        /// What follows it.
        available: usize,
    },
}

impl ParticipantMessage {
    /// The message as the writer sends it: little-endian CDR, no data.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24);
        out.extend_from_slice(&CDR_LE);
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.prefix.0);
        out.extend_from_slice(&self.kind);
        out.extend_from_slice(&0u32.to_le_bytes());
        out
    }

    /// Reads a received message. The data sequence (vendors' own use) is checked against
    /// the message's length and skipped.
    pub fn parse(bytes: &[u8]) -> Result<ParticipantMessage, MessageError> {
        if bytes.len() < 24 {
            return Err(MessageError::Short(bytes.len()));
        }
        let little = match [bytes[0], bytes[1]] {
            CDR_LE => true,
            CDR_BE => false,
            other => return Err(MessageError::Encapsulation(u16::from_be_bytes(other))),
        };
        let mut prefix = [0; 12];
        prefix.copy_from_slice(&bytes[4..16]);
        let mut kind = [0; 4];
        kind.copy_from_slice(&bytes[16..20]);
        let len = [bytes[20], bytes[21], bytes[22], bytes[23]];
        let claimed = if little {
            u32::from_le_bytes(len)
        } else {
            u32::from_be_bytes(len)
        };
        let available = bytes.len() - 24;
        if claimed as usize > available {
            return Err(MessageError::DataLength { claimed, available });
        }
        Ok(ParticipantMessage {
            prefix: GuidPrefix(prefix),
            kind,
        })
    }

    /// The key hash of its instance: the key (prefix and kind) is 16 bytes, so the hash is
    /// the key itself (RTPS §9.6.4.8).
    pub fn key_hash(&self) -> [u8; 16] {
        let mut k = [0; 16];
        k[..12].copy_from_slice(&self.prefix.0);
        k[12..].copy_from_slice(&self.kind);
        k
    }
}

/// When a participant last told others its writers are alive, and when it must next.
#[derive(Debug, Clone, Default)]
pub struct LivelinessSchedule {
    /// The shortest finite lease of the local AUTOMATIC writers.
    automatic_lease: Option<Duration>,
    /// The shortest finite lease of the local MANUAL_BY_PARTICIPANT writers.
    manual_lease: Option<Duration>,
    next_automatic: Option<Timestamp>,
    last_manual: Option<Timestamp>,
}

/// How many messages per lease: one lost message (repaired by reliability within a
/// heartbeat period) does not let a lease run out.
const MESSAGES_PER_LEASE: u32 = 3;

/// The shortest period between periodic messages, however short a lease.
const MIN_PERIOD: Duration = Duration::from_millis(1);

impl LivelinessSchedule {
    /// The local writers' liveliness QoS changed: `writers` are all of them now.
    pub fn set_writers(
        &mut self,
        now: Timestamp,
        writers: impl IntoIterator<Item = (LivelinessKind, Option<Duration>)>,
    ) {
        let (mut automatic, mut manual) = (None::<Duration>, None::<Duration>);
        for (kind, lease) in writers {
            let Some(lease) = lease else { continue };
            let slot = match kind {
                LivelinessKind::Automatic => &mut automatic,
                LivelinessKind::ManualByParticipant => &mut manual,
                LivelinessKind::ManualByTopic => continue,
            };
            *slot = Some(slot.map_or(lease, |s| s.min(lease)));
        }
        if automatic != self.automatic_lease {
            // A shorter lease is served from now on; none stops the messages.
            self.next_automatic = automatic.map(|_| now);
        }
        self.automatic_lease = automatic;
        self.manual_lease = manual;
    }

    fn period(lease: Duration) -> Duration {
        (lease / MESSAGES_PER_LEASE).max(MIN_PERIOD)
    }

    /// When the next AUTOMATIC message is due.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.next_automatic
    }

    /// True when an AUTOMATIC message is due at `now` (and schedules the next one).
    pub fn automatic_due(&mut self, now: Timestamp) -> bool {
        match (self.next_automatic, self.automatic_lease) {
            (Some(due), Some(lease)) if due <= now => {
                self.next_automatic = Some(now.after(Self::period(lease)));
                true
            }
            _ => false,
        }
    }

    /// The application asserted (`explicit`: by calling `assert_liveliness`; otherwise by
    /// a MANUAL_BY_PARTICIPANT writer's write): true when a MANUAL message goes out now.
    /// Writes send one at most a few times per lease; explicit calls always do.
    pub fn manual_asserted(&mut self, now: Timestamp, explicit: bool) -> bool {
        let send = explicit
            || match (self.last_manual, self.manual_lease) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(last), Some(lease)) => now.since(last) >= Self::period(lease),
            };
        if send {
            self.last_manual = Some(now);
        }
        send
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefix() -> GuidPrefix {
        GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    }

    #[test]
    fn messages_read_back_and_their_key_is_prefix_and_kind() {
        let m = ParticipantMessage {
            prefix: prefix(),
            kind: KIND_MANUAL,
        };
        let bytes = m.to_vec();
        assert_eq!(bytes.len(), 24);
        assert_eq!(ParticipantMessage::parse(&bytes), Ok(m));
        assert_eq!(&m.key_hash()[..12], &prefix().0);
        assert_eq!(&m.key_hash()[12..], &KIND_MANUAL);
    }

    #[test]
    fn big_endian_messages_with_data_are_read_and_bad_ones_refused() {
        let mut bytes = vec![0, 0, 0, 0];
        bytes.extend_from_slice(&prefix().0);
        bytes.extend_from_slice(&KIND_AUTOMATIC);
        bytes.extend_from_slice(&3u32.to_be_bytes());
        bytes.extend_from_slice(&[7, 7, 7]);
        let m = ParticipantMessage::parse(&bytes).unwrap();
        assert_eq!(m.kind, KIND_AUTOMATIC);
        // A length that claims more than there is: refused, nothing reserved.
        bytes[20..24].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            ParticipantMessage::parse(&bytes),
            Err(MessageError::DataLength {
                claimed: u32::MAX,
                available: 3
            })
        );
        assert_eq!(
            ParticipantMessage::parse(&bytes[..10]),
            Err(MessageError::Short(10))
        );
        bytes[1] = 2;
        assert_eq!(
            ParticipantMessage::parse(&bytes),
            Err(MessageError::Encapsulation(2))
        );
    }

    #[test]
    fn automatic_messages_come_three_times_per_shortest_lease() {
        let mut s = LivelinessSchedule::default();
        let t0 = Timestamp(1_000);
        s.set_writers(t0, [(LivelinessKind::Automatic, None)]);
        assert_eq!(
            s.poll_timeout(),
            None,
            "an infinite lease needs no messages"
        );
        s.set_writers(
            t0,
            [
                (LivelinessKind::Automatic, Some(Duration::from_secs(3))),
                (LivelinessKind::Automatic, Some(Duration::from_millis(900))),
                (
                    LivelinessKind::ManualByTopic,
                    Some(Duration::from_millis(1)),
                ),
            ],
        );
        assert!(s.automatic_due(t0));
        assert_eq!(s.poll_timeout(), Some(t0.after(Duration::from_millis(300))));
        assert!(!s.automatic_due(t0.after(Duration::from_millis(299))));
        assert!(s.automatic_due(t0.after(Duration::from_millis(300))));
        s.set_writers(t0, []);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn writes_send_manual_messages_a_few_times_per_lease_explicit_asserts_always() {
        let mut s = LivelinessSchedule::default();
        let t0 = Timestamp(0);
        assert!(
            !s.manual_asserted(t0, false),
            "no manual writer, no message"
        );
        s.set_writers(
            t0,
            [(
                LivelinessKind::ManualByParticipant,
                Some(Duration::from_millis(600)),
            )],
        );
        assert!(s.manual_asserted(t0, false));
        assert!(!s.manual_asserted(t0.after(Duration::from_millis(100)), false));
        assert!(s.manual_asserted(t0.after(Duration::from_millis(100)), true));
        assert!(s.manual_asserted(t0.after(Duration::from_millis(300)), false));
    }
}
