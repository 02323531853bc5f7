//! The seam between the runtime and the ways it reaches other participants: a
//! [`Transport`] sends datagrams to the locator kinds it knows, and hands the runtime its
//! [`ReceiveChannel`]s, each of which the runtime serves with a thread (or, in the
//! busy-poll mode, polls). The runtime holds a list of transports and picks one per
//! destination by the locator's kind, so UDPv4 ([`crate::UdpTransport`]) is one
//! implementation among those to come (shared memory, UDPv6) rather than the only path.
//!
//! A transport moves opaque datagrams: it never parses RTPS. Where DDS Security will later
//! transform submessages and payloads is above this seam, in the protocol crate, so every
//! transport carries what it is given.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use crate::hub::{Deliver, Membership};
use crate::locator::Locator;

/// What a receive channel carries; the busy-poll mode spins only on user traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Traffic {
    /// Discovery (SPDP and SEDP): rare, always received by a sleeping thread.
    Metatraffic,
    /// User data and its reliability messages.
    User,
}

/// The longest UDP datagram (IPv4: 65535 less the IP and UDP headers).
pub const MAX_UDP_DATAGRAM: usize = 65_507;

/// A datagram received into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Datagram {
    /// Bytes written at the start of the buffer.
    pub len: usize,
    /// Where it came from (for UDP, the sender's address and port: discovery binds a
    /// participant's unicast locators to it).
    pub source: Locator,
    /// The datagram was longer than the buffer and its tail is lost.
    pub truncated: bool,
}

/// One way in: a socket, later a shared-memory subscriber.
pub trait ReceiveChannel: Send + Sync + fmt::Debug {
    /// What it carries.
    fn traffic(&self) -> Traffic;

    /// Whether looking for a datagram ([`ReceiveChannel::try_receive`]) costs a system
    /// call (a socket's does; a shared-memory or in-process queue's is a read of memory):
    /// the busy-poll loop looks at such channels less often while they are quiet.
    fn polling_is_a_system_call(&self) -> bool {
        true
    }

    /// Waits for one datagram and writes it into `buffer`. `Ok(None)` when woken with
    /// nothing (a timeout, a signal, or [`ReceiveChannel::stop_receiving`]).
    fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>>;

    /// One datagram if one is waiting, without blocking (the busy-poll mode).
    fn try_receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>>;

    /// Waits for one datagram and hands its bytes to `deliver`: from `buffer`, or where
    /// they already are (a shared-memory segment, another participant's queue), which
    /// saves a copy and is not bound by `buffer`'s size. `Ok(false)` when woken with
    /// nothing, as [`ReceiveChannel::receive`] returns `None`.
    fn receive_with(
        &self,
        buffer: &mut [u8],
        deliver: &mut dyn FnMut(&[u8], Datagram),
    ) -> io::Result<bool> {
        let got = self.receive(buffer)?;
        Ok(got.map(|d| deliver(&buffer[..d.len], d)).is_some())
    }

    /// [`ReceiveChannel::try_receive`], handing the bytes over as
    /// [`ReceiveChannel::receive_with`] does.
    fn try_receive_with(
        &self,
        buffer: &mut [u8],
        deliver: &mut dyn FnMut(&[u8], Datagram),
    ) -> io::Result<bool> {
        let got = self.try_receive(buffer)?;
        Ok(got.map(|d| deliver(&buffer[..d.len], d)).is_some())
    }

    /// How long a thread waiting for what this channel brings may look for it itself
    /// ([`ReceiveChannel::try_receive_with`]) before it sleeps; `None` when it should not
    /// (a look is a system call). Such a look keeps the channel's order: of two threads
    /// receiving at once, one hands over its datagram while the other finds nothing.
    fn waiter_spin(&self) -> Option<Duration> {
        None
    }

    /// Whether a thread that sent to this channel, leaving its receive thread asleep,
    /// may hand the datagram over itself ([`crate::WakeDeferral`], [`crate::Hub::hand_over`]):
    /// only where a look never waits for the receive thread. The in-process queue's does
    /// not; a shared-memory inbox's may wait out its receive thread's sleep in iceoryx2
    /// (seconds: a sending thread stalled so, and every datagram behind it).
    fn takes_hand_over(&self) -> bool {
        false
    }

    /// A waiting thread starts (`true`) or stops looking at the channel itself. While one
    /// does, the thread in [`ReceiveChannel::receive_with`] sleeps instead of spinning:
    /// one thread spins for the datagram, the one that wants it, and nobody has to be
    /// woken for it.
    fn set_waiter_polling(&self, _polling: bool) {}

    /// Wakes every thread blocked in [`ReceiveChannel::receive`], and makes later receives
    /// return at once with nothing: how the runtime stops its receive threads without
    /// timeouts to wait out.
    fn stop_receiving(&self);
}

/// The turn to take a datagram out of a channel that two threads receive from (its
/// receive thread and a waiter that polls it), held until the datagram is handed over, so
/// that datagrams are handed over in the channel's order: waited for (`wait`), or `None`
/// while the other thread has it.
pub(crate) fn take_turn(turn: &Mutex<()>, wait: bool) -> Option<MutexGuard<'_, ()>> {
    if wait {
        return Some(turn.lock().unwrap_or_else(PoisonError::into_inner));
    }
    match turn.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// A way to reach other participants, for the locator kinds it names.
pub trait Transport: Send + Sync + fmt::Debug {
    /// A short name for logs ("udpv4").
    fn name(&self) -> &'static str;

    /// The `LOCATOR_KIND_*` values it sends to.
    fn locator_kinds(&self) -> &[i32];

    /// Whether it sends to `locator` (by default: to every locator of its kinds; a
    /// transport that reaches only some, such as this process's participants, says which).
    fn reaches(&self, locator: &Locator) -> bool {
        self.locator_kinds().contains(&locator.kind)
    }

    /// Sends one datagram to `destination`, a locator of one of its kinds.
    fn send(&self, datagram: &[u8], destination: &Locator) -> io::Result<()>;

    /// Sends one datagram made of `parts`, in order: a large sample's bytes go out from
    /// where they lie instead of being copied into the datagram first. By default the
    /// parts are put together and sent as one.
    fn send_parts(&self, parts: &[&[u8]], destination: &Locator) -> io::Result<()> {
        self.send(&parts.concat(), destination)
    }

    /// The longest datagram it carries. Transports within one host carry far more than
    /// UDP's 64 KiB, so that a large sample to a peer they reach takes fewer, larger
    /// datagrams (each one a wake-up and a turn of the protocol on the receiving side).
    fn max_datagram(&self) -> usize {
        MAX_UDP_DATAGRAM
    }

    /// Its ways in, each to be served by the runtime until it stops them.
    fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>>;

    /// Joins the ways in it shares with the other participants of the process (one socket
    /// and one thread for them all: [`crate::shared_multicast`], [`crate::hub`]), each datagram handed to
    /// `deliver` on that thread; the participant leaves when the memberships drop. None
    /// by default.
    fn join_shared(&self, deliver: &Deliver) -> io::Result<Vec<Membership>> {
        let _ = deliver;
        Ok(Vec::new())
    }
}

/// A transport several participants hold (their process's in-process queue or
/// shared-memory inbox), each through its own [`Transports`]. Its ways in are whoever
/// holds it decides: the `ferrodds` runtime serves a shared one with a [`crate::Hub`]
/// its holders join, not with threads of each.
impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn locator_kinds(&self) -> &[i32] {
        (**self).locator_kinds()
    }

    fn reaches(&self, locator: &Locator) -> bool {
        (**self).reaches(locator)
    }

    fn send(&self, datagram: &[u8], destination: &Locator) -> io::Result<()> {
        (**self).send(datagram, destination)
    }

    fn send_parts(&self, parts: &[&[u8]], destination: &Locator) -> io::Result<()> {
        (**self).send_parts(parts, destination)
    }

    fn max_datagram(&self) -> usize {
        (**self).max_datagram()
    }

    fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>> {
        (**self).receive_channels()
    }

    fn join_shared(&self, deliver: &Deliver) -> io::Result<Vec<Membership>> {
        (**self).join_shared(deliver)
    }
}

/// The transports of a participant, in order of preference: a destination goes to the
/// first that reaches it.
#[derive(Debug, Default)]
pub struct Transports {
    transports: Vec<Box<dyn Transport>>,
}

/// Why a datagram did not go out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// No transport of the participant sends to the destination's kind.
    #[error("no transport sends to locator kind {kind}")]
    Unreachable {
        /// The destination's kind.
        kind: i32,
    },
    /// The transport tried and failed.
    #[error("{transport}: {source}")]
    Failed {
        /// Its name.
        transport: &'static str,
        /// The system's error.
        #[source]
        source: io::Error,
    },
}

impl Transports {
    /// No transport yet.
    pub fn new() -> Self {
        Transports::default()
    }

    /// Adds `transport`, after (less preferred than) those already held.
    pub fn push(&mut self, transport: Box<dyn Transport>) {
        self.transports.push(transport);
    }

    /// Each transport's name, in order (the index [`Transports::send`] returns).
    pub fn names(&self) -> Vec<&'static str> {
        self.transports.iter().map(|t| t.name()).collect()
    }

    /// The transport that sends to `locator`, if any: the first that reaches it.
    pub fn for_locator(&self, locator: &Locator) -> Option<&dyn Transport> {
        self.index_for(locator).map(|i| &*self.transports[i])
    }

    fn index_for(&self, locator: &Locator) -> Option<usize> {
        self.transports.iter().position(|t| t.reaches(locator))
    }

    /// Whether some transport sends to `locator`.
    pub fn reaches(&self, locator: &Locator) -> bool {
        self.for_locator(locator).is_some()
    }

    /// Sends `datagram` to `destination` through the first transport that reaches it, and
    /// says which (its index in the list).
    pub fn send(&self, datagram: &[u8], destination: &Locator) -> Result<usize, SendError> {
        let i = self.index_for(destination).ok_or(SendError::Unreachable {
            kind: destination.kind,
        })?;
        let transport = &self.transports[i];
        transport
            .send(datagram, destination)
            .map_err(|source| SendError::Failed {
                transport: transport.name(),
                source,
            })?;
        Ok(i)
    }

    /// The locator kinds whose transports carry datagrams of at least `size` bytes.
    pub fn kinds_carrying(&self, size: usize) -> Vec<i32> {
        self.transports
            .iter()
            .filter(|t| t.max_datagram() >= size)
            .flat_map(|t| t.locator_kinds().iter().copied())
            .collect()
    }

    /// Sends the datagram made of `parts` to `destination` as [`Transports::send`] does.
    pub fn send_parts(&self, parts: &[&[u8]], destination: &Locator) -> Result<usize, SendError> {
        let i = self.index_for(destination).ok_or(SendError::Unreachable {
            kind: destination.kind,
        })?;
        let transport = &self.transports[i];
        let sent = match parts {
            [one] => transport.send(one, destination),
            _ => transport.send_parts(parts, destination),
        };
        sent.map_err(|source| SendError::Failed {
            transport: transport.name(),
            source,
        })?;
        Ok(i)
    }

    /// Every transport's receive channels.
    pub fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>> {
        let mut all = Vec::new();
        for t in &self.transports {
            all.extend(t.receive_channels()?);
        }
        Ok(all)
    }

    /// [`Transport::join_shared`] of every transport.
    pub fn join_shared(&self, deliver: &Deliver) -> io::Result<Vec<Membership>> {
        let mut all = Vec::new();
        for t in &self.transports {
            all.extend(t.join_shared(deliver)?);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A transport that records what it was asked to send.
    #[derive(Debug, Default)]
    struct Recorder {
        kinds: Vec<i32>,
        sent: Mutex<Vec<(Vec<u8>, Locator)>>,
        fail: bool,
    }

    impl Transport for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn locator_kinds(&self) -> &[i32] {
            &self.kinds
        }
        fn send(&self, datagram: &[u8], destination: &Locator) -> io::Result<()> {
            if self.fail {
                return Err(io::Error::other("refused"));
            }
            self.sent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((datagram.to_vec(), *destination));
            Ok(())
        }
        fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>> {
            Ok(Vec::new())
        }
    }

    fn locator(kind: i32) -> Locator {
        Locator {
            kind,
            port: 7,
            address: [1; 16],
        }
    }

    #[test]
    fn each_destination_goes_to_the_first_transport_of_its_kind() {
        const SHM: i32 = 0x0100_0000;
        let shm = Arc::new(Recorder {
            kinds: vec![SHM],
            ..Recorder::default()
        });
        let udp = Arc::new(Recorder {
            kinds: vec![Locator::KIND_UDPV4, SHM],
            ..Recorder::default()
        });
        let mut ts = Transports::new();
        ts.push(Box::new(Arc::clone(&shm)));
        ts.push(Box::new(Arc::clone(&udp)));
        assert_eq!(ts.send(b"a", &locator(SHM)).unwrap(), 0);
        assert_eq!(ts.send(b"b", &locator(Locator::KIND_UDPV4)).unwrap(), 1);
        let err = ts.send(b"c", &locator(Locator::KIND_UDPV6)).unwrap_err();
        assert!(matches!(err, SendError::Unreachable { kind: 2 }), "{err}");
        assert_eq!(err.to_string(), "no transport sends to locator kind 2");
        let sent = |r: &Recorder| r.sent.lock().unwrap().clone();
        assert_eq!(sent(&shm), [(b"a".to_vec(), locator(SHM))]);
        assert_eq!(sent(&udp), [(b"b".to_vec(), locator(Locator::KIND_UDPV4))]);
        assert!(ts.reaches(&locator(SHM)) && !ts.reaches(&locator(Locator::KIND_UDPV6)));
        assert_eq!(ts.names(), ["recorder", "recorder"]);
    }

    #[test]
    fn a_failed_send_names_the_transport() {
        let mut ts = Transports::new();
        ts.push(Box::new(Arc::new(Recorder {
            kinds: vec![Locator::KIND_UDPV4],
            fail: true,
            ..Recorder::default()
        })));
        let err = ts.send(b"x", &locator(Locator::KIND_UDPV4)).unwrap_err();
        assert_eq!(err.to_string(), "recorder: refused");
    }
}
