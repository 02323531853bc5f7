//! The in-process transport: participants of one process hand each other datagrams
//! through a queue instead of a socket (no system call to send, one copy).
//!
//! A thread waiting for data (`wait_for_data`, a wait set) takes the datagrams it waits for
//! out of the inbox itself while it spins ([`ReceiveChannel::waiter_spin`]), and the
//! inbox's receive thread is then left asleep: a datagram from one thread of the process to
//! another costs no wake-up through the scheduler, which on a small virtual machine is tens
//! of microseconds each (two of them made an in-process write-to-take about 50 µs).
//!
//! Each participant has an inbox, registered under a port number unique in the process; its
//! locator is of kind [`KIND_IN_PROCESS`] with the process's address (the process id and a
//! random tag, so that another process's locator, which it announces over SPDP like any
//! other, is never mistaken for one of ours). Other vendors ignore a locator kind they do
//! not know. Discovery keeps such a locator only when its address is this process's
//! ([`InProcessTransport::reaches`]), and then prefers it to the UDP ones.

use std::cell::RefCell;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use crate::locator::Locator;
use crate::receive_spin::ReceiveSpin;
use crate::transport::{take_turn, Datagram, ReceiveChannel, Traffic, Transport};

/// The locator kind of the in-process transport (vendor-specific: "FD" and 1).
pub const KIND_IN_PROCESS: i32 = 0x4644_0001;

/// The most bytes an inbox holds before a send is refused (a lost datagram, which reliable
/// writers repeat, as a full socket buffer would lose it).
const INBOX_BYTES: usize = 64 << 20;

/// The longest datagram, as over shared memory
/// ([`crate::shared_memory::MAX_DATAGRAM`]): received where it lies, not in a buffer of
/// UDP's size.
pub const MAX_DATAGRAM: usize = 512 * 1024;

/// The inboxes of this process's participants, by port.
fn registry() -> MutexGuard<'static, HashMap<u32, Weak<Inbox>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u32, Weak<Inbox>>>> = OnceLock::new();
    REGISTRY
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

thread_local! {
    /// The inboxes whose sleeping receive thread a send of this thread left asleep, while a
    /// [`WakeDeferral`] lives on it (`None` otherwise).
    static DEFERRED: RefCell<Option<Vec<Arc<Inbox>>>> = const { RefCell::new(None) };
}

/// While one lives on a thread, the in-process sends of that thread leave a sleeping
/// receive thread asleep: the thread that sent is to hand the datagrams over itself once
/// it is done sending ([`WakeDeferral::settle`]), where waking the receive thread would
/// cost a wake-up through the scheduler (on a virtual machine, the other core's wake from
/// idle: 20 µs of a Python write measured so). What it leaves behind wakes the receive
/// thread as a send would have. Deferrals nest: the outermost settles.
#[derive(Debug)]
pub struct WakeDeferral {
    outermost: bool,
}

impl WakeDeferral {
    /// Starts deferring this thread's wakes (or joins the deferral already started).
    pub fn begin() -> WakeDeferral {
        let outermost = DEFERRED.with(|d| {
            let mut d = d.borrow_mut();
            let outermost = d.is_none();
            if outermost {
                *d = Some(Vec::new());
            }
            outermost
        });
        WakeDeferral { outermost }
    }

    /// Whether a send of this thread left a receive thread asleep since the deferral began.
    pub fn owes(&self) -> bool {
        DEFERRED.with(|d| d.borrow().as_ref().is_some_and(|owed| !owed.is_empty()))
    }

    /// The outermost deferral: `deliver` hands over what waits, on this thread, if a wake
    /// was left owed; then every receive thread still owed one, with datagrams nobody
    /// polls for, is woken. An inner one leaves this to the outermost.
    pub fn settle(self, deliver: impl FnOnce()) {
        if self.outermost && self.owes() {
            deliver();
        }
    }
}

impl Drop for WakeDeferral {
    fn drop(&mut self) {
        if !self.outermost {
            return;
        }
        let owed = DEFERRED.with(|d| d.borrow_mut().take()).unwrap_or_default();
        for inbox in owed {
            let wake = inbox.lock().wake_due();
            if wake {
                inbox.ready.notify_one();
            }
        }
    }
}

/// This process's address in in-process locators: `FDIP`, the process id, and 8 random
/// bytes (a process id alone is reused across containers and restarts). The process id is
/// read at each call, not kept: a child made by `fork` (Python's `multiprocessing` does
/// that) inherits the random bytes and the registry, and must not take its parent's
/// participants for its own.
pub fn process_address() -> [u8; 16] {
    static TAG: OnceLock<u64> = OnceLock::new();
    // `RandomState` is seeded from the system's randomness once per process.
    let tag = *TAG.get_or_init(|| RandomState::new().hash_one(std::time::SystemTime::now()));
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(b"FDIP");
    a[4..8].copy_from_slice(&std::process::id().to_be_bytes());
    a[8..].copy_from_slice(&tag.to_be_bytes());
    a
}

#[derive(Debug)]
struct Queue {
    /// Datagrams with the port of the inbox they came from.
    datagrams: VecDeque<(u32, Vec<u8>)>,
    bytes: usize,
    stopped: bool,
    /// The receive thread sleeps on [`Inbox::ready`]: a sender wakes it, unless a waiting
    /// thread polls (it takes the datagram itself). Cleared by the sender that wakes it,
    /// so that a burst makes one wake-up.
    asleep: bool,
    /// Waiting threads polling the inbox ([`ReceiveChannel::set_waiter_polling`]).
    pollers: u32,
    /// How long a waiting thread spins on the inbox, from the rhythm of its datagrams
    /// (kept here, under the lock a datagram is taken out with anyway).
    spin: ReceiveSpin,
    /// Buffers of datagrams delivered, for the next ones sent here (so that a steady
    /// stream allocates none): at most [`SPARE_BUFFERS`] of them, of at most
    /// [`SPARE_BYTES`] together.
    spare: Vec<Vec<u8>>,
    /// The capacity of the `spare` buffers, together.
    spare_bytes: usize,
}

/// The most delivered datagram buffers an inbox keeps for reuse.
const SPARE_BUFFERS: usize = 64;
/// The most bytes of delivered datagram buffers an inbox keeps for reuse: room for a
/// stream of its largest datagrams (a 64 KiB sample's did not fit a limit of 64 KiB per
/// buffer, and each was allocated anew: round trips of 64 KiB between two threads took
/// 69–78 µs instead of 42–47), while a burst cannot leave more than this behind.
const SPARE_BYTES: usize = 4 << 20;

impl Queue {
    fn new(spin: Duration) -> Queue {
        Queue {
            datagrams: VecDeque::new(),
            bytes: 0,
            stopped: false,
            asleep: false,
            pollers: 0,
            spin: ReceiveSpin::new(spin),
            spare: Vec::new(),
            spare_bytes: 0,
        }
    }

    /// Whether the sleeping receive thread is to be woken now: it sleeps, nobody polls,
    /// and a datagram waits. Then it counts as awake (one wake-up for a burst).
    fn wake_due(&mut self) -> bool {
        let due = self.asleep && self.pollers == 0 && !self.datagrams.is_empty();
        if due {
            self.asleep = false;
        }
        due
    }

    /// A datagram of `parts`, in a spare buffer when there is one.
    fn push(&mut self, from: u32, parts: &[&[u8]], len: usize) {
        let mut buffer = self.spare.pop().unwrap_or_default();
        self.spare_bytes -= buffer.capacity();
        buffer.reserve(len);
        for part in parts {
            buffer.extend_from_slice(part);
        }
        self.bytes += len;
        self.datagrams.push_back((from, buffer));
    }

    /// Keeps a delivered datagram's buffer for a later one.
    fn give_back(&mut self, mut buffer: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS && self.spare_bytes + buffer.capacity() <= SPARE_BYTES {
            buffer.clear();
            self.spare_bytes += buffer.capacity();
            self.spare.push(buffer);
        }
    }
}

#[derive(Debug)]
struct Inbox {
    queue: Mutex<Queue>,
    ready: Condvar,
    /// Held from taking a datagram out to the end of its hand-over: of the receive thread
    /// and a polling waiter, one hands a datagram over at a time, in the queue's order.
    turn: Mutex<()>,
    /// The datagrams queued, as of the last change under the lock: a polling waiter looks
    /// here first, without a lock (it looks all the time, and mostly finds nothing). A
    /// look that misses a datagram just queued finds it at the next turn; one that is
    /// never made again (the waiter left) is the last poller's to hand to the receive
    /// thread, under the lock.
    queued: AtomicUsize,
}

impl Inbox {
    fn new(spin: Duration) -> Inbox {
        Inbox {
            queue: Mutex::new(Queue::new(spin)),
            ready: Condvar::new(),
            turn: Mutex::new(()),
            queued: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One participant's end of the in-process transport.
#[derive(Debug)]
pub struct InProcessTransport {
    port: u32,
    inbox: Arc<Inbox>,
    /// [`process_address`] when it opened (sends compare with this, no system call).
    address: [u8; 16],
}

/// How long a thread waiting for an inbox's datagrams spins at most, where
/// [`InProcessTransport::open`] is not told (the configuration's `receive_spin_us`).
const DEFAULT_WAITER_SPIN: Duration = Duration::from_micros(250);

impl InProcessTransport {
    /// Registers a new inbox for a participant.
    pub fn open() -> InProcessTransport {
        InProcessTransport::open_with(DEFAULT_WAITER_SPIN)
    }

    /// Registers a new inbox whose waiting threads spin for at most `waiter_spin` (as long
    /// as the traffic's recent gaps: [`ReceiveSpin`]) before they sleep.
    pub fn open_with(waiter_spin: Duration) -> InProcessTransport {
        static NEXT_PORT: AtomicU32 = AtomicU32::new(1);
        let port = NEXT_PORT.fetch_add(1, Ordering::Relaxed);
        let inbox = Arc::new(Inbox::new(waiter_spin));
        registry().insert(port, Arc::downgrade(&inbox));
        InProcessTransport {
            port,
            inbox,
            address: process_address(),
        }
    }

    /// Where the other participants of this process reach this one.
    pub fn locator(&self) -> Locator {
        Locator {
            kind: KIND_IN_PROCESS,
            port: self.port,
            address: self.address,
        }
    }
}

impl Drop for InProcessTransport {
    fn drop(&mut self) {
        registry().remove(&self.port);
        self.inbox.lock().stopped = true;
        self.inbox.ready.notify_all();
    }
}

impl Transport for InProcessTransport {
    fn name(&self) -> &'static str {
        "in-process"
    }

    fn locator_kinds(&self) -> &[i32] {
        &[KIND_IN_PROCESS]
    }

    /// Only this process's locators: another process announces the same kind.
    fn reaches(&self, locator: &Locator) -> bool {
        locator.kind == KIND_IN_PROCESS && locator.address == self.address
    }

    fn send(&self, datagram: &[u8], destination: &Locator) -> io::Result<()> {
        self.send_parts(&[datagram], destination)
    }

    /// The parts are put together in the destination's queue (one copy, into a buffer it
    /// delivered before when it has one).
    fn send_parts(&self, parts: &[&[u8]], destination: &Locator) -> io::Result<()> {
        if !self.reaches(destination) {
            return Err(io::Error::new(
                io::ErrorKind::AddrNotAvailable,
                "an in-process locator of another process",
            ));
        }
        let inbox = registry()
            .get(&destination.port)
            .and_then(Weak::upgrade)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "no such participant"))?;
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        let mut q = inbox.lock();
        if q.stopped || q.bytes + len > INBOX_BYTES {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, "inbox full"));
        }
        q.push(self.port, parts, len);
        inbox.queued.store(q.datagrams.len(), Ordering::Relaxed);
        // A thread that polls takes it; a receive thread that is awake finds it; a sending
        // thread that defers the wake hands it over itself.
        let wake = q.asleep && q.pollers == 0 && !defer_wake(&inbox) && q.wake_due();
        drop(q);
        if wake {
            inbox.ready.notify_one();
        }
        Ok(())
    }

    fn max_datagram(&self) -> usize {
        MAX_DATAGRAM
    }

    fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>> {
        Ok(vec![Arc::new(InboxChannel {
            inbox: Arc::clone(&self.inbox),
            address: self.address,
        })])
    }
}

/// Notes `inbox` as owed a wake by this thread's [`WakeDeferral`], if one lives: true when
/// the wake is deferred.
fn defer_wake(inbox: &Arc<Inbox>) -> bool {
    DEFERRED.with(|d| match d.borrow_mut().as_mut() {
        Some(owed) => {
            if !owed.iter().any(|i| Arc::ptr_eq(i, inbox)) {
                owed.push(Arc::clone(inbox));
            }
            true
        }
        None => false,
    })
}

/// How long a receive waits before its thread looks at the shutdown flag by itself.
const RECEIVE_SAFETY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
struct InboxChannel {
    inbox: Arc<Inbox>,
    /// The process's address, for the source locators.
    address: [u8; 16],
}

impl InboxChannel {
    /// The next datagram and the locator it came from.
    fn pop(&self, q: &mut Queue) -> Option<(Vec<u8>, Locator)> {
        let (from, bytes) = q.datagrams.pop_front()?;
        q.bytes -= bytes.len();
        let source = Locator {
            kind: KIND_IN_PROCESS,
            port: from,
            address: self.address,
        };
        Some((bytes, source))
    }

    /// Sleeps until a datagram waits (or the inbox stops, or for the safety timeout).
    fn sleep_until_queued(&self) {
        let mut q = self.inbox.lock();
        if q.datagrams.is_empty() && !q.stopped {
            q.asleep = true;
            q = self
                .inbox
                .ready
                .wait_timeout(q, RECEIVE_SAFETY_TIMEOUT)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            q.asleep = false;
        }
    }

    /// The next datagram, taken in turn: waiting for the turn (the receive thread), or
    /// `None` when the other receiver has it (a polling waiter, which looks again).
    fn take_in_turn(&self, wait_turn: bool) -> Option<(MutexGuard<'_, ()>, Vec<u8>, Locator)> {
        let turn = take_turn(&self.inbox.turn, wait_turn)?;
        // What is queued is handed out even once stopped: the runtime stops asking.
        let (bytes, source) = {
            let mut q = self.inbox.lock();
            let popped = self.pop(&mut q)?;
            self.inbox
                .queued
                .store(q.datagrams.len(), Ordering::Relaxed);
            q.spin.arrived(Instant::now());
            popped
        };
        Some((turn, bytes, source))
    }
}

/// Hands a datagram taken in turn to `deliver` as it is (the queue's lock released, the
/// turn held until it is handed over), and its buffer back to the inbox.
fn deliver_popped(
    inbox: &Inbox,
    popped: Option<(MutexGuard<'_, ()>, Vec<u8>, Locator)>,
    deliver: &mut dyn FnMut(&[u8], Datagram),
) -> bool {
    let Some((_turn, bytes, source)) = popped else {
        return false;
    };
    let d = Datagram {
        len: bytes.len(),
        source,
        truncated: false,
    };
    deliver(&bytes, d);
    inbox.lock().give_back(bytes);
    true
}

/// Copies a datagram taken in turn into `buffer`.
fn copy_popped(
    popped: Option<(MutexGuard<'_, ()>, Vec<u8>, Locator)>,
    buffer: &mut [u8],
) -> Option<Datagram> {
    let (_turn, bytes, source) = popped?;
    let len = bytes.len().min(buffer.len());
    buffer[..len].copy_from_slice(&bytes[..len]);
    Some(Datagram {
        len,
        source,
        truncated: len < bytes.len(),
    })
}

impl ReceiveChannel for InboxChannel {
    fn polling_is_a_system_call(&self) -> bool {
        false
    }

    fn traffic(&self) -> Traffic {
        Traffic::User
    }

    fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
        self.sleep_until_queued();
        Ok(copy_popped(self.take_in_turn(true), buffer))
    }

    fn try_receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
        if self.inbox.queued.load(Ordering::Relaxed) == 0 {
            return Ok(None);
        }
        Ok(copy_popped(self.take_in_turn(false), buffer))
    }

    fn receive_with(
        &self,
        _buffer: &mut [u8],
        deliver: &mut dyn FnMut(&[u8], Datagram),
    ) -> io::Result<bool> {
        self.sleep_until_queued();
        Ok(deliver_popped(
            &self.inbox,
            self.take_in_turn(true),
            deliver,
        ))
    }

    fn try_receive_with(
        &self,
        _buffer: &mut [u8],
        deliver: &mut dyn FnMut(&[u8], Datagram),
    ) -> io::Result<bool> {
        if self.inbox.queued.load(Ordering::Relaxed) == 0 {
            return Ok(false);
        }
        Ok(deliver_popped(
            &self.inbox,
            self.take_in_turn(false),
            deliver,
        ))
    }

    fn waiter_spin(&self) -> Option<Duration> {
        Some(self.inbox.lock().spin.spin())
    }

    fn takes_hand_over(&self) -> bool {
        true
    }

    fn set_waiter_polling(&self, polling: bool) {
        let mut q = self.inbox.lock();
        if polling {
            q.pollers += 1;
            return;
        }
        q.pollers = q.pollers.saturating_sub(1);
        // Sent while the last poller was leaving, with nobody woken for it: the sleeping
        // receive thread is.
        let wake = q.wake_due();
        drop(q);
        if wake {
            self.inbox.ready.notify_one();
        }
    }

    fn stop_receiving(&self) {
        self.inbox.lock().stopped = true;
        self.inbox.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivered_datagrams_lend_their_buffers_to_the_next_ones() {
        let (a, b) = (InProcessTransport::open(), InProcessTransport::open());
        let b_in = b.receive_channels().unwrap().remove(0);
        let mut seen = Vec::new();
        for round in 0..3u8 {
            a.send_parts(&[b"head", &[round; 100]], &b.locator())
                .unwrap();
            let got = b_in
                .try_receive_with(&mut [], &mut |bytes, d| {
                    assert_eq!((d.len, &bytes[..4], bytes[4]), (104, &b"head"[..], round));
                    seen.push(bytes.as_ptr());
                })
                .unwrap();
            assert!(got);
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "one buffer, reused");
        // Bounded: a burst leaves at most SPARE_BUFFERS behind.
        for _ in 0..2 * SPARE_BUFFERS {
            a.send(b"x", &b.locator()).unwrap();
        }
        while b_in.try_receive_with(&mut [], &mut |_, _| {}).unwrap() {}
        let inbox = registry()
            .get(&b.locator().port)
            .and_then(Weak::upgrade)
            .unwrap();
        assert_eq!(inbox.lock().spare.len(), SPARE_BUFFERS);
        // And at most SPARE_BYTES of them: a burst of the largest datagrams.
        let big = vec![7u8; MAX_DATAGRAM];
        for _ in 0..2 * (SPARE_BYTES / MAX_DATAGRAM) {
            a.send(&big, &b.locator()).unwrap();
        }
        while b_in.try_receive_with(&mut [], &mut |_, _| {}).unwrap() {}
        let q = inbox.lock();
        let kept: usize = q.spare.iter().map(Vec::capacity).sum();
        assert_eq!(kept, q.spare_bytes);
        assert!(
            (SPARE_BYTES / 2..=SPARE_BYTES).contains(&kept),
            "{kept} bytes kept"
        );
    }

    #[test]
    fn a_polling_waiter_takes_what_comes_and_the_sleeping_thread_is_woken_when_it_leaves() {
        let (a, b) = (InProcessTransport::open(), InProcessTransport::open());
        let b_in = b.receive_channels().unwrap().remove(0);
        assert!(b_in.waiter_spin().is_some(), "a waiting thread may poll it");
        let inbox = Arc::clone(&b.inbox);
        // The receive thread, asleep on the empty inbox.
        let (tx, rx) = std::sync::mpsc::channel();
        let receiver = {
            let c = Arc::clone(&b_in);
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut sent = 0;
                while sent < 2 && Instant::now() < deadline {
                    // Ok(false): woken with nothing (the safety timeout).
                    let _ = c.receive_with(&mut [], &mut |bytes, _| {
                        sent += 1;
                        tx.send(bytes.to_vec()).unwrap();
                    });
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !inbox.lock().asleep {
            assert!(Instant::now() < deadline, "the receive thread never slept");
            std::thread::yield_now();
        }
        // While a waiter polls, a datagram sent wakes nobody: the waiter takes it.
        b_in.set_waiter_polling(true);
        a.send(b"polled", &b.locator()).unwrap();
        assert!(inbox.lock().asleep, "not woken");
        let mut got = Vec::new();
        assert!(b_in
            .try_receive_with(&mut [], &mut |bytes, _| got = bytes.to_vec())
            .unwrap());
        assert_eq!(got, b"polled");
        // One sent as the waiter leaves without it: the receive thread is woken for it.
        a.send(b"left", &b.locator()).unwrap();
        b_in.set_waiter_polling(false);
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), b"left");
        // Nobody polls: a sender wakes the sleeping thread itself.
        a.send(b"woken", &b.locator()).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), b"woken");
        receiver.join().unwrap();
    }

    #[test]
    fn participants_of_one_process_reach_each_other_and_no_one_else() {
        let (a, b) = (InProcessTransport::open(), InProcessTransport::open());
        let b_in = b.receive_channels().unwrap().remove(0);
        a.send(b"hello", &b.locator()).unwrap();
        let mut buf = [0u8; 3];
        let got = b_in.try_receive(&mut buf).unwrap().unwrap();
        assert_eq!((got.len, got.truncated, &buf), (3, true, b"hel"));
        assert_eq!(got.source, a.locator());
        assert!(b_in.try_receive(&mut buf).unwrap().is_none());
        // Another process's locator of the same kind, and a participant that is gone.
        let mut elsewhere = b.locator();
        elsewhere.address[15] ^= 1;
        assert!(!a.reaches(&elsewhere) && a.reaches(&b.locator()));
        assert!(a.send(b"x", &elsewhere).is_err());
        let gone = b.locator();
        drop(b);
        assert_eq!(
            a.send(b"x", &gone).unwrap_err().kind(),
            io::ErrorKind::NotConnected
        );
    }

    #[test]
    fn a_full_inbox_refuses_and_a_stopped_one_wakes_its_reader() {
        let (a, b) = (InProcessTransport::open(), InProcessTransport::open());
        let big = vec![0u8; 1 << 20];
        for _ in 0..INBOX_BYTES >> 20 {
            a.send(&big, &b.locator()).unwrap();
        }
        assert_eq!(
            a.send(&big, &b.locator()).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        let b_in = b.receive_channels().unwrap().remove(0);
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..INBOX_BYTES >> 20 {
            assert!(b_in.receive(&mut buf).unwrap().is_some());
        }
        // Empty: a receive blocks until the channel is stopped.
        let waiter = {
            let c = Arc::clone(&b_in);
            std::thread::spawn(move || c.receive(&mut [0u8; 8]).unwrap())
        };
        b_in.stop_receiving();
        assert!(waiter.join().unwrap().is_none());
        assert!(
            a.send(b"x", &b.locator()).is_err(),
            "a stopped inbox takes nothing"
        );
    }
}
