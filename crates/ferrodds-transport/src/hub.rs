//! Ways in that the participants of a process share: one receive thread per way for them
//! all, which hands each datagram to every member in turn.
//!
//! A [`Hub`] serves a list of [`ReceiveChannel`]s with one thread each (named with the
//! channel); a participant [`Hub::join`]s it with the function its datagrams go to, and
//! leaves when its [`Membership`] drops. The threads start with the first member and stop
//! when the last handle on the hub goes. What the participants of a process share this
//! way: the multicast sockets ([`crate::shared_multicast`]), and the in-process queue and
//! shared-memory inbox of the participants with one configuration (the `ferrodds`
//! runtime's `ways`).
//!
//! Every member gets every datagram: which are for it is the protocol's business (RTPS
//! messages name their destination participant), not this crate's.

use std::cell::Cell;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::transport::{Datagram, ReceiveChannel};

thread_local! {
    /// This thread is handing a datagram to the members ([`Inner::deliver`]).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// Where a member's datagrams go: the bytes and where they came from. Called on the hub's
/// receive threads, one member after the other.
pub type Deliver = Arc<dyn Fn(&[u8], Datagram) + Send + Sync>;

/// The receive buffer of a hub's thread: a UDP datagram's most (transports within the
/// host hand theirs over where they lie, whatever their size).
const RECEIVE_BUFFER: usize = 65536;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Receive channels served for several members.
pub struct Hub {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Inner {
    /// Each with the name of the thread that serves it.
    channels: Vec<(String, Arc<dyn ReceiveChannel>)>,
    /// Those a waiting thread may poll ([`ReceiveChannel::waiter_spin`]).
    pollable: Vec<Arc<dyn ReceiveChannel>>,
    /// Those of them a sending thread may hand its datagrams over from
    /// ([`ReceiveChannel::takes_hand_over`]).
    handed_over: Vec<Arc<dyn ReceiveChannel>>,
    /// The members, replaced whole on a join or a leave, so that a receive thread takes
    /// them with one reference count rather than a copy per datagram.
    members: Mutex<Arc<Vec<(u64, Deliver)>>>,
    next: AtomicU64,
    stopped: AtomicBool,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("channels", &self.inner.channels)
            .field("members", &lock(&self.inner.members).len())
            .finish()
    }
}

/// A member's place in a [`Hub`]: it leaves when this drops.
#[derive(Debug)]
pub struct Membership {
    hub: Arc<Hub>,
    id: u64,
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut members = lock(&self.hub.inner.members);
        let left: Vec<(u64, Deliver)> = members
            .iter()
            .filter(|(id, _)| *id != self.id)
            .cloned()
            .collect();
        *members = Arc::new(left);
    }
}

impl Hub {
    /// A hub over `channels`, each given with the name of the thread that is to serve it
    /// (at most 15 bytes show); none runs before the first [`Hub::join`].
    pub fn new(channels: Vec<(String, Arc<dyn ReceiveChannel>)>) -> Arc<Hub> {
        Arc::new(Hub {
            inner: Arc::new(Inner {
                pollable: channels
                    .iter()
                    .filter(|(_, c)| c.waiter_spin().is_some())
                    .map(|(_, c)| Arc::clone(c))
                    .collect(),
                handed_over: channels
                    .iter()
                    .filter(|(_, c)| c.waiter_spin().is_some() && c.takes_hand_over())
                    .map(|(_, c)| Arc::clone(c))
                    .collect(),
                channels,
                members: Mutex::new(Arc::new(Vec::new())),
                next: AtomicU64::new(0),
                stopped: AtomicBool::new(false),
            }),
            threads: Mutex::new(Vec::new()),
        })
    }

    /// Adds a member whose datagrams go to `deliver`, starting the receive threads with
    /// the first.
    pub fn join(self: &Arc<Self>, deliver: Deliver) -> io::Result<Membership> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        {
            let mut members = lock(&self.inner.members);
            let mut more = Vec::clone(&members);
            more.push((id, deliver));
            *members = Arc::new(more);
        }
        let membership = Membership {
            hub: Arc::clone(self),
            id,
        };
        let mut threads = lock(&self.threads);
        if threads.is_empty() {
            for (i, (name, _)) in self.inner.channels.iter().enumerate() {
                let inner = Arc::clone(&self.inner);
                threads.push(
                    std::thread::Builder::new()
                        .name(name.clone())
                        .spawn(move || serve(&inner, i))?,
                );
            }
        }
        Ok(membership)
    }

    /// How many members it has.
    pub fn members(&self) -> usize {
        lock(&self.inner.members).len()
    }

    /// Whether a waiting thread may poll any of its channels ([`Hub::poll`]).
    pub fn is_pollable(&self) -> bool {
        !self.inner.pollable.is_empty()
    }

    /// How long a thread waiting for what the hub brings may look for it itself
    /// ([`Hub::poll`]) before it sleeps: the longest of its channels'
    /// [`ReceiveChannel::waiter_spin`]s; `None` when none may be polled.
    pub fn waiter_spin(&self) -> Option<Duration> {
        self.inner
            .pollable
            .iter()
            .filter_map(|c| c.waiter_spin())
            .max()
    }

    /// A waiting thread starts (`true`) or stops polling the hub's channels: their threads
    /// sleep meanwhile instead of spinning ([`ReceiveChannel::set_waiter_polling`]).
    pub fn set_waiter_polling(&self, polling: bool) {
        for c in &self.inner.pollable {
            c.set_waiter_polling(polling);
        }
    }

    /// For a thread that has just sent to the process's own queue, whose receive thread it
    /// left asleep ([`crate::WakeDeferral`]): hands over what waits on the channels that take
    /// it ([`ReceiveChannel::takes_hand_over`]), up to `rounds` datagrams of each; nothing
    /// when the thread is itself handing a datagram over (the sends of a member handling
    /// one), whose receiver is busy anyway.
    pub fn hand_over(&self, rounds: usize) {
        if DELIVERING.with(Cell::get) {
            return;
        }
        for _ in 0..rounds {
            if !self.inner.poll(&self.inner.handed_over) {
                break;
            }
        }
    }

    /// For a waiting thread: receives what waits on the channels a waiter may poll,
    /// handing each datagram to every member as the hub's threads do; true when one came.
    pub fn poll(&self) -> bool {
        self.inner.poll(&self.inner.pollable)
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.inner.stopped.store(true, Ordering::Release);
        for (_, channel) in &self.inner.channels {
            channel.stop_receiving();
        }
        for t in lock(&self.threads).drain(..) {
            // The last handle may go on a receive thread itself (a member's participant
            // ended while it handled a datagram): that thread ends once it returns.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

impl Inner {
    /// Receives what waits on `channels` (pollable ones), handing each datagram to every
    /// member; true when one came.
    fn poll(&self, channels: &[Arc<dyn ReceiveChannel>]) -> bool {
        let mut got = false;
        for c in channels {
            // Those channels hand their datagrams over where they lie: no buffer needed.
            let received = c.try_receive_with(&mut [], &mut |bytes, d| self.deliver(bytes, d));
            got |= matches!(received, Ok(true));
        }
        got
    }

    /// Hands a datagram to every member.
    fn deliver(&self, bytes: &[u8], datagram: Datagram) {
        let members = Arc::clone(&lock(&self.members));
        let outer = DELIVERING.with(|d| d.replace(true));
        for (_, deliver) in members.iter() {
            deliver(bytes, datagram);
        }
        DELIVERING.with(|d| d.set(outer));
    }
}

fn serve(inner: &Inner, channel: usize) {
    let channel = &inner.channels[channel].1;
    let mut buffer = vec![0u8; RECEIVE_BUFFER];
    while !inner.stopped.load(Ordering::Acquire) {
        let received = channel.receive_with(&mut buffer, &mut |bytes, d| inner.deliver(bytes, d));
        // An error on receive (an ICMP port unreachable reported late) is not fatal; do
        // not spin on a persistent one. `Ok(false)`: woken with nothing (stopped, or a
        // safety timeout), which the loop's condition sorts out.
        if received.is_err() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locator::Locator;
    use std::collections::VecDeque;
    use std::sync::Condvar;
    use std::time::Duration;

    /// A channel fed by the test.
    #[derive(Debug, Default)]
    struct Feed {
        queue: Mutex<(VecDeque<Vec<u8>>, bool)>,
        ready: Condvar,
    }

    impl Feed {
        fn push(&self, bytes: &[u8]) {
            lock(&self.queue).0.push_back(bytes.to_vec());
            self.ready.notify_all();
        }
    }

    impl ReceiveChannel for Feed {
        fn traffic(&self) -> crate::Traffic {
            crate::Traffic::User
        }
        fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
            let mut q = lock(&self.queue);
            if q.0.is_empty() && !q.1 {
                q = self
                    .ready
                    .wait_timeout(q, Duration::from_secs(1))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            Ok(q.0.pop_front().map(|d| {
                buffer[..d.len()].copy_from_slice(&d);
                Datagram {
                    len: d.len(),
                    source: Locator {
                        kind: Locator::KIND_INVALID,
                        port: 0,
                        address: [0; 16],
                    },
                    truncated: false,
                }
            }))
        }
        fn try_receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
            self.receive(buffer)
        }
        fn stop_receiving(&self) {
            lock(&self.queue).1 = true;
            self.ready.notify_all();
        }
    }

    fn collector() -> (Deliver, std::sync::mpsc::Receiver<Vec<u8>>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = Mutex::new(tx);
        let deliver: Deliver = Arc::new(move |bytes: &[u8], _| {
            let _ = lock(&tx).send(bytes.to_vec());
        });
        (deliver, rx)
    }

    #[test]
    fn every_member_gets_every_datagram_until_it_leaves_and_the_threads_end_with_the_hub() {
        let feed = Arc::new(Feed::default());
        let hub = Hub::new(vec![(
            "ferrodds-t0".to_string(),
            Arc::clone(&feed) as Arc<dyn ReceiveChannel>,
        )]);
        let (a, from_a) = collector();
        let (b, from_b) = collector();
        let in_a = hub.join(a).unwrap();
        let in_b = hub.join(b).unwrap();
        assert_eq!(hub.members(), 2);
        feed.push(b"one");
        let t = Duration::from_secs(5);
        assert_eq!(from_a.recv_timeout(t).unwrap(), b"one");
        assert_eq!(from_b.recv_timeout(t).unwrap(), b"one");
        drop(in_a);
        feed.push(b"two");
        assert_eq!(from_b.recv_timeout(t).unwrap(), b"two");
        assert!(from_a.recv_timeout(Duration::from_millis(100)).is_err());
        let thread = lock(&hub.threads)[0].thread().clone();
        assert_eq!(thread.name(), Some("ferrodds-t0"));
        // The membership holds the hub; when it goes, the thread is stopped and joined.
        drop(hub);
        drop(in_b);
        assert!(lock(&feed.queue).1, "stopped");
    }

    #[test]
    fn a_waiting_thread_takes_the_inbox_over_from_its_thread_and_gives_it_back() {
        use crate::shared_memory::SharedMemoryTransport;
        use crate::transport::Transport;
        let sender = SharedMemoryTransport::open().unwrap();
        let inbox = SharedMemoryTransport::open().unwrap();
        let feed = Arc::new(Feed::default());
        let hub = Hub::new(vec![
            (
                "ferrodds-t1".into(),
                inbox.receive_channels().unwrap().remove(0),
            ),
            (
                "ferrodds-t2".into(),
                Arc::clone(&feed) as Arc<dyn ReceiveChannel>,
            ),
        ]);
        assert!(
            hub.is_pollable() && hub.waiter_spin().is_some(),
            "the inbox may be polled"
        );
        let (member, got) = collector();
        let _in = hub.join(member).unwrap();
        hub.set_waiter_polling(true);
        // The inbox's thread stops spinning and sleeps; senders see that nobody needs a
        // wake-up, and the waiting thread's polls bring the datagram.
        std::thread::sleep(Duration::from_millis(50));
        sender.send(b"polled", &inbox.locator()).unwrap();
        let mut polls = 0;
        while !hub.poll() && polls < 1_000_000 {
            polls += 1;
        }
        let t = Duration::from_secs(2);
        assert_eq!(got.recv_timeout(t).unwrap(), b"polled");
        // The channel that costs a system call to look at is its thread's alone.
        feed.push(b"fed");
        assert_eq!(got.recv_timeout(t).unwrap(), b"fed");
        // Sent while the waiting thread polls but before it looked: no wake-up for the
        // sleeping thread, which gets it when the last poller leaves (before its safety
        // timeout of 5 s).
        sender.send(b"unannounced", &inbox.locator()).unwrap();
        assert!(got.recv_timeout(Duration::from_millis(100)).is_err());
        hub.set_waiter_polling(false);
        assert_eq!(got.recv_timeout(t).unwrap(), b"unannounced");
        // Nobody polls: senders wake the thread again.
        sender.send(b"woken", &inbox.locator()).unwrap();
        assert_eq!(got.recv_timeout(t).unwrap(), b"woken");
    }

    /// A pollable channel that counts the looks at it and never has anything: a stand-in
    /// for the shared-memory inbox, whose look may wait out its receive thread's sleep.
    #[derive(Debug, Default)]
    struct Watched(std::sync::atomic::AtomicUsize);

    impl ReceiveChannel for Watched {
        fn traffic(&self) -> crate::Traffic {
            crate::Traffic::User
        }
        fn receive(&self, _: &mut [u8]) -> io::Result<Option<Datagram>> {
            std::thread::sleep(Duration::from_millis(5));
            Ok(None)
        }
        fn try_receive(&self, _: &mut [u8]) -> io::Result<Option<Datagram>> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        }
        fn waiter_spin(&self) -> Option<Duration> {
            Some(Duration::from_micros(50))
        }
        fn stop_receiving(&self) {}
    }

    #[test]
    fn a_sending_thread_hands_over_from_the_in_process_queue_only() {
        use crate::in_process::{InProcessTransport, WakeDeferral};
        use crate::transport::Transport;
        let (sender, inbox) = (InProcessTransport::open(), InProcessTransport::open());
        let watched = Arc::new(Watched::default());
        let queue = inbox.receive_channels().unwrap().remove(0);
        let hub = Hub::new(vec![
            ("in-process".into(), queue),
            (
                "watched".into(),
                Arc::clone(&watched) as Arc<dyn ReceiveChannel>,
            ),
        ]);
        let (deliver, got) = collector();
        let _member = hub.join(deliver).unwrap();
        // Sent with the wake deferred, the queue's thread asleep or not: handed over here,
        // or by that thread.
        let deferral = WakeDeferral::begin();
        sender.send(b"handed", &inbox.locator()).unwrap();
        hub.hand_over(4);
        drop(deferral);
        assert_eq!(got.recv_timeout(Duration::from_secs(5)).unwrap(), b"handed");
        assert_eq!(
            watched.0.load(Ordering::Relaxed),
            0,
            "the other channel untouched"
        );
        // A waiting thread's poll looks at both.
        hub.poll();
        assert!(watched.0.load(Ordering::Relaxed) > 0);
    }
}
