//! The shared-memory transport: the participants of one host hand each other datagrams
//! through iceoryx2 instead of the loopback interface (a copy into a shared segment and a
//! wake-up, no trip through the kernel's network stack).
//!
//! Each participant has an inbox: an iceoryx2 publish-subscribe service of byte slices,
//! named for a port number chosen at random among those free on the host, with an event
//! service of the same name that wakes its receive thread. Its locator is of kind
//! [`KIND_SHARED_MEMORY`], with that port and the host's address ([`host_address`]: the
//! kernel's boot id and the device of `/dev/shm`, so two containers that share a kernel but
//! not a `/dev/shm` are told apart). Discovery keeps such a locator only when its address
//! is this host's ([`SharedMemoryTransport::reaches`]) and then prefers it to UDP; other
//! vendors skip a locator kind they do not know, and keep reaching us over UDP.
//!
//! A process opens a publisher to a peer's inbox on the first datagram one of its
//! participants sends there, and keeps it for all of them: the ways are the process's
//! ([`Host`]), so a system of many participants per process opens one per process and
//! inbox, not one per pair of participants (each way is a segment, a connection and
//! about a dozen file descriptors: 25 participants per process ran out of 20,000). The
//! user header of each slice carries the sending participant's own inbox port (the source
//! locator).
//! Whatever a slice holds is another process's bytes: it is copied out into the runtime's
//! buffer before anything reads it, and parsed like any datagram.
//!
//! iceoryx2 cleans up after processes that died holding segments: the first transport of a
//! process removes what dead nodes left behind, after removing the segments of processes
//! killed while they made them, on which iceoryx2 would wait forever ([`crate::stillborn`]).

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::reader::EntryHandle;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::writer::{EntryHandleMut, Writer};
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::{blackboard, event, publish_subscribe};

use crate::locator::Locator;
use crate::receive_spin::ReceiveSpin;
use crate::stillborn::{remove_stillborn_segments, remove_stillborn_segments_now};
use crate::transport::{take_turn, Datagram, ReceiveChannel, Traffic, Transport};

/// The locator kind of the shared-memory transport (vendor-specific: "FD" and 2).
pub const KIND_SHARED_MEMORY: i32 = 0x4644_0002;

/// iceoryx2's inter-process services whose ports may be shared between threads.
pub(crate) type Ipc = ipc_threadsafe::Service;

/// How many participants of the host may send to one inbox at once.
const MAX_SENDERS: usize = 128;

/// Datagrams an inbox holds before a sender's next one is discarded (a lost datagram,
/// which reliable writers repeat, as a full socket buffer would lose it). A sender's
/// segment for one peer has room for this many of its largest datagrams: 8 MiB while it
/// sends 64 KiB, 64 MiB of address space (of which /dev/shm holds what was touched) once a
/// large sample made it grow to [`MAX_DATAGRAM`].
const INBOX_DATAGRAMS: usize = 128;

/// The longest datagram (the writers of large samples fill them with fragments): an
/// 11 MB sample takes 22 datagrams instead of about 180, each a wake-up and a turn of the
/// protocol fewer.
pub const MAX_DATAGRAM: usize = 512 * 1024;

/// Loans a way lends at once (each for one copy into it): threads of the process sending
/// to one inbox at the same moment.
const MAX_LOANS: usize = 8;

/// The slice size a sender's segment is first made for; larger datagrams grow it.
const INITIAL_SLICE: usize = 64 * 1024;

/// A way to a peer's inbox unused this long is closed (with the sender's segment for it):
/// a participant that left, or one no longer written to.
const PEER_IDLE: Duration = Duration::from_secs(30);

/// How often sends look for ways to close and for what dead processes left behind.
const SWEEP_PERIOD: Duration = Duration::from_secs(5);

/// How long a receive waits before its thread looks at the shutdown flag by itself.
const RECEIVE_SAFETY_TIMEOUT: Duration = Duration::from_secs(5);

/// Why shared memory cannot be used: the participant goes on with UDP alone.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SharedMemoryError {
    /// The host's identity could not be read (`/proc/sys/kernel/random/boot_id`,
    /// `/dev/shm`).
    #[error("cannot tell which host this is ({what}): {source}")]
    Host {
        /// What was read.
        what: &'static str,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// iceoryx2 refused (no space or no permission in `/dev/shm` or its directory in
    /// `/tmp`, too many services).
    #[error("iceoryx2 could not {step}: {source}")]
    Iceoryx {
        /// What it was asked to do.
        step: &'static str,
        /// Its error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

pub(crate) fn iceoryx<E: std::error::Error + Send + Sync + 'static>(
    step: &'static str,
) -> impl FnOnce(E) -> SharedMemoryError {
    move |e| SharedMemoryError::Iceoryx {
        step,
        source: Box::new(e),
    }
}

/// This host's address in shared-memory locators: `FDSM`, the first 8 bytes of the
/// kernel's boot id, and the low 4 bytes of the device number of `/dev/shm`.
pub fn host_address() -> Result<[u8; 16], SharedMemoryError> {
    use std::os::unix::fs::MetadataExt;
    let host = |what| move |source| SharedMemoryError::Host { what, source };
    let boot =
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map_err(host("the boot id"))?;
    let hex: Vec<u8> = boot
        .bytes()
        .filter(u8::is_ascii_hexdigit)
        .map(|c| (c as char).to_digit(16).unwrap_or(0) as u8)
        .collect();
    if hex.len() < 16 {
        return Err(SharedMemoryError::Host {
            what: "the boot id",
            source: io::Error::new(io::ErrorKind::InvalidData, "not a UUID"),
        });
    }
    let dev = std::fs::metadata("/dev/shm")
        .map_err(host("/dev/shm"))?
        .dev();
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(b"FDSM");
    for (i, pair) in hex[..16].chunks_exact(2).enumerate() {
        a[4 + i] = pair[0] << 4 | pair[1];
    }
    a[12..].copy_from_slice(&(dev as u32).to_be_bytes());
    Ok(a)
}

/// What the participants of a process share: its iceoryx2 node and its ways to the inboxes
/// of the host.
#[derive(Debug)]
pub(crate) struct Host {
    /// By the inbox's port.
    ways: Mutex<HashMap<u32, Arc<Peer>>>,
    opened: Instant,
    /// When sends last swept the ways, in ms since `opened`.
    last_sweep: AtomicU64,
    /// Last: dropped after the ways made from it.
    pub(crate) node: Node<Ipc>,
}

impl Drop for Host {
    fn drop(&mut self) {
        // The node, dropped next, cleans up after dead nodes too.
        remove_stillborn_segments();
    }
}

impl Host {
    fn ways(&self) -> MutexGuard<'_, HashMap<u32, Arc<Peer>>> {
        self.ways.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }
}

/// The process's [`Host`] while one of its transports lives (dropped with the last, which
/// closes the ways and removes the node's files), made again in a child made by `fork`.
pub(crate) fn host() -> Result<Arc<Host>, SharedMemoryError> {
    static HOST: Mutex<Option<(u32, Weak<Host>)>> = Mutex::new(None);
    let mut guard = HOST.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if let Some(host) = guard
        .as_ref()
        .filter(|(owner, _)| *owner == pid)
        .and_then(|(_, host)| host.upgrade())
    {
        return Ok(host);
    }
    // Before the node, which cleans up after dead ones: what could make it wait forever.
    remove_stillborn_segments();
    let node = NodeBuilder::new()
        // The application owns its signals (Python's KeyboardInterrupt among them).
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<Ipc>()
        .map_err(iceoryx("create a node"))?;
    // What processes killed before they could clean up left behind.
    let _ = node.try_cleanup_dead_nodes();
    let host = Arc::new(Host {
        ways: Mutex::default(),
        opened: Instant::now(),
        last_sweep: AtomicU64::new(0),
        node,
    });
    *guard = Some((pid, Arc::downgrade(&host)));
    Ok(host)
}

fn service_name(port: u32) -> Result<ServiceName, SharedMemoryError> {
    ServiceName::new(&format!("ferrodds/inbox/{port:08x}")).map_err(iceoryx("name a service"))
}

/// A random port number (from the standard library's per-process random seed).
fn random_port() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u32(COUNTER.fetch_add(1, Ordering::Relaxed));
    (h.finish() as u32).max(1)
}

/// The way to one peer's inbox, shared by the participants of the process.
#[derive(Debug)]
struct Peer {
    service: publish_subscribe::PortFactory<Ipc, [u8], u32>,
    publisher: Publisher<Ipc, [u8], u32>,
    /// `None` for a polled inbox.
    notifier: Option<Notifier<Ipc>>,
    _event: Option<event::PortFactory<Ipc>>,
    /// The inbox's [`WakeFlag`]: `None` where it has none (a polled inbox, or one of an
    /// older FerroDDS), which is then notified of every datagram.
    must_notify: Option<FlagReader>,
    _board: Option<blackboard::PortFactory<Ipc, u64>>,
    /// When it last carried a datagram, in ms since the [`Host`] opened.
    last_used: AtomicU64,
}

/// One participant's end of the shared-memory transport.
#[derive(Debug)]
pub struct SharedMemoryTransport {
    port: u32,
    address: [u8; 16],
    inbox: Arc<InboxChannel>,
    _service: publish_subscribe::PortFactory<Ipc, [u8], u32>,
    _event: Option<event::PortFactory<Ipc>>,
    _board: Option<blackboard::PortFactory<Ipc, u64>>,
    /// Last: outlives the ports above.
    host: Arc<Host>,
}

/// How an inbox's receiver learns that datagrams came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Each sender notifies it (iceoryx2's event service): its thread sleeps meanwhile,
    /// after spinning up to `spin` for the next datagram (a reply that comes within it
    /// costs no wake-up: 64-byte round trips of 4–6 µs instead of about 60 on the 2-core
    /// VM, where each wake-up through the scheduler costs tens of microseconds).
    Notified {
        /// The longest spin before sleeping ([`crate::receive_spin`] says how long within
        /// it).
        spin: Duration,
    },
    /// It polls (the busy-poll mode): senders do not notify.
    Polled,
}

impl SharedMemoryTransport {
    /// Creates this participant's inbox, with a receive thread that sleeps until a sender
    /// wakes it.
    pub fn open() -> Result<SharedMemoryTransport, SharedMemoryError> {
        Self::open_with(Wake::Notified {
            spin: crate::config::DEFAULT_RECEIVE_SPIN,
        })
    }

    /// Creates this participant's inbox; `wake` says how its receiver learns of datagrams.
    pub fn open_with(wake: Wake) -> Result<SharedMemoryTransport, SharedMemoryError> {
        let address = host_address()?;
        let host = host()?;
        let node = &host.node;
        let mut attempts = 0;
        let (port, service) = loop {
            let port = random_port();
            let created = node
                .service_builder(&service_name(port)?)
                .publish_subscribe::<[u8]>()
                .user_header::<u32>()
                .max_publishers(MAX_SENDERS)
                .max_subscribers(1)
                .max_nodes(MAX_SENDERS + 1)
                .subscriber_max_buffer_size(INBOX_DATAGRAMS)
                .history_size(0)
                .enable_safe_overflow(false)
                .create();
            match created {
                Ok(s) => break (port, s),
                // Another participant of the host has this port: draw again.
                Err(_) if attempts < 8 => attempts += 1,
                Err(e) => return Err(iceoryx("create an inbox")(e)),
            }
        };
        // A polled inbox has no event service: senders that find none do not notify (a
        // system call per datagram that nobody would wait for).
        let event = match wake {
            Wake::Notified { .. } => Some(
                node.service_builder(&service_name(port)?)
                    .event()
                    .max_notifiers(MAX_SENDERS + 1)
                    .max_listeners(1)
                    .max_nodes(MAX_SENDERS + 1)
                    .open_or_create()
                    .map_err(iceoryx("create an inbox's event"))?,
            ),
            Wake::Polled => None,
        };
        // Where senders notify, whether they must (see `WakeFlag`): at first, yes.
        let board = match wake {
            Wake::Notified { .. } => Some(
                node.service_builder(&service_name(port)?)
                    .blackboard_creator::<u64>()
                    .max_readers(MAX_SENDERS)
                    .max_nodes(MAX_SENDERS + 1)
                    .add::<u32>(WAKE_FLAG_KEY, 1)
                    .create()
                    .map_err(iceoryx("create an inbox's wake flag"))?,
            ),
            Wake::Polled => None,
        };
        let wake_flag = match &board {
            Some(board) => {
                let writer = board
                    .writer_builder()
                    .create()
                    .map_err(iceoryx("write an inbox's wake flag"))?;
                let entry = writer
                    .entry::<u32>(&WAKE_FLAG_KEY)
                    .map_err(iceoryx("write an inbox's wake flag"))?;
                Some(WakeFlag {
                    entry,
                    _writer: writer,
                    state: Mutex::new(WakeState {
                        asleep: true,
                        pollers: 0,
                    }),
                })
            }
            None => None,
        };
        let subscriber = service
            .subscriber_builder()
            .buffer_size(INBOX_DATAGRAMS)
            .create()
            .map_err(iceoryx("subscribe to an inbox"))?;
        let (listener, waker) = match &event {
            Some(event) => (
                Some(
                    event
                        .listener_builder()
                        .create()
                        .map_err(iceoryx("listen to an inbox"))?,
                ),
                Some(
                    event
                        .notifier_builder()
                        .create()
                        .map_err(iceoryx("make an inbox's waker"))?,
                ),
            ),
            None => (None, None),
        };
        let inbox = Arc::new(InboxChannel {
            subscriber,
            listener,
            waker,
            stopped: AtomicBool::new(false),
            address,
            empty_polls: AtomicU32::new(0),
            turn: Mutex::new(()),
            pollers: AtomicU32::new(0),
            wake_flag,
            spin: Mutex::new(ReceiveSpin::new(match wake {
                Wake::Notified { spin } => spin,
                Wake::Polled => Duration::ZERO,
            })),
        });
        tracing::debug!(port, "shared-memory inbox open");
        Ok(SharedMemoryTransport {
            port,
            address,
            inbox,
            _service: service,
            _event: event,
            _board: board,
            host,
        })
    }

    /// Where the other participants of this host reach this one.
    pub fn locator(&self) -> Locator {
        Locator {
            kind: KIND_SHARED_MEMORY,
            port: self.port,
            address: self.address,
        }
    }

    fn open_peer(&self, port: u32) -> io::Result<Arc<Peer>> {
        fn gone<E>(_: E) -> io::Error {
            io::Error::new(io::ErrorKind::NotConnected, "no such shared-memory inbox")
        }
        let name = service_name(port).map_err(io::Error::other)?;
        // Opening a service cleans up after its dead nodes.
        remove_stillborn_segments();
        let node = &self.host.node;
        let service = node
            .service_builder(&name)
            .publish_subscribe::<[u8]>()
            .user_header::<u32>()
            .open()
            .map_err(gone)?;
        // A polled inbox has none.
        let event = node.service_builder(&name).event().open().ok();
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(INITIAL_SLICE)
            .allocation_strategy(AllocationStrategy::PowerOfTwo)
            .backpressure_strategy(BackpressureStrategy::DiscardData)
            // A loan lasts one copy, but the way is shared by every thread of every
            // participant of the process that sends there.
            .max_loaned_samples(MAX_LOANS)
            .create()
            .map_err(io::Error::other)?;
        let notifier = match &event {
            Some(e) => Some(e.notifier_builder().create().map_err(io::Error::other)?),
            None => None,
        };
        let board = node
            .service_builder(&name)
            .blackboard_opener::<u64>()
            .open()
            .ok();
        let must_notify = board.as_ref().and_then(|b| {
            let reader = b.reader_builder().create().ok()?;
            reader.entry::<u32>(&WAKE_FLAG_KEY).ok().map(FlagReader)
        });
        Ok(Arc::new(Peer {
            service,
            publisher,
            notifier,
            _event: event,
            must_notify,
            _board: board,
            last_used: AtomicU64::new(0),
        }))
    }

    /// Closes the ways to peers that are gone or unused for [`PEER_IDLE`], and removes what
    /// dead processes left: at most once per [`SWEEP_PERIOD`] in the process, from a send.
    fn sweep(&self, now: u64) {
        let host = &self.host;
        let last = host.last_sweep.load(Ordering::Relaxed);
        if now.saturating_sub(last) < SWEEP_PERIOD.as_millis() as u64
            || host
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // A sending thread does not wait on a segment too young to tell: the cleanup,
        // which might wait on it forever, waits for the next sweep instead.
        if remove_stillborn_segments_now() {
            let _ = host.node.try_cleanup_dead_nodes();
        }
        let idle = PEER_IDLE.as_millis() as u64;
        host.ways().retain(|_, p| {
            now.saturating_sub(p.last_used.load(Ordering::Relaxed)) < idle
                && p.service.dynamic_config().number_of_subscribers() > 0
        });
    }
}

impl Transport for SharedMemoryTransport {
    fn name(&self) -> &'static str {
        "shared-memory"
    }

    fn locator_kinds(&self) -> &[i32] {
        &[KIND_SHARED_MEMORY]
    }

    /// Only this host's locators: another host announces the same kind.
    fn reaches(&self, locator: &Locator) -> bool {
        locator.kind == KIND_SHARED_MEMORY && locator.address == self.address
    }

    fn send(&self, datagram: &[u8], destination: &Locator) -> io::Result<()> {
        self.send_parts(&[datagram], destination)
    }

    /// The parts are copied straight into the peer's segment (the one copy of a large
    /// sample's bytes on their way out).
    fn send_parts(&self, parts: &[&[u8]], destination: &Locator) -> io::Result<()> {
        if !self.reaches(destination) {
            return Err(io::Error::new(
                io::ErrorKind::AddrNotAvailable,
                "a shared-memory locator of another host",
            ));
        }
        let port = destination.port;
        let existing = self.host.ways().get(&port).cloned();
        let peer = match existing {
            Some(p) => p,
            None => {
                let p = self.open_peer(port)?;
                // Another participant of the process may have opened one meanwhile: the
                // first stays, this one closes.
                Arc::clone(self.host.ways().entry(port).or_insert(p))
            }
        };
        let len = parts.iter().map(|p| p.len()).sum();
        let mut sample = peer
            .publisher
            .loan_slice_uninit(len)
            .map_err(io::Error::other)?;
        *sample.user_header_mut() = self.port;
        let mut at = 0;
        let streamed = len >= STREAM_AT;
        for part in parts {
            copy_part(
                part,
                &mut sample.payload_mut()[at..at + part.len()],
                streamed,
            );
            at += part.len();
        }
        if streamed {
            // Streaming stores are not ordered with the release store that publishes the
            // slice to the subscriber: a fence first, or it could read bytes not yet there.
            store_fence();
        }
        // SAFETY: the slice is `len` bytes, the sum of the parts' lengths, and the parts
        // were copied end to end from its start: every byte is written.
        #[allow(unsafe_code)]
        let sample = unsafe { sample.assume_init() };
        let delivered = sample.send().map_err(io::Error::other)?;
        if delivered == 0 {
            // A full inbox, or one whose owner is gone (then the way to it is dropped, with
            // its segment, and a later send finds out whether it came back).
            if peer.service.dynamic_config().number_of_subscribers() == 0 {
                self.host.ways().remove(&port);
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "the shared-memory inbox's owner is gone",
                ));
            }
            return Err(io::Error::new(io::ErrorKind::WouldBlock, "inbox full"));
        }
        if let Some(n) = &peer.notifier {
            // After the datagram is in the queue (the fence: see `WakeFlag`).
            let asleep = peer.must_notify.as_ref().is_none_or(|flag| {
                fence(Ordering::SeqCst);
                *flag.0.get() != 0
            });
            if asleep {
                n.notify().map_err(io::Error::other)?;
            }
        }
        let now = self.host.now_ms();
        peer.last_used.store(now, Ordering::Relaxed);
        self.sweep(now);
        Ok(())
    }

    fn max_datagram(&self) -> usize {
        MAX_DATAGRAM
    }

    fn receive_channels(&self) -> io::Result<Vec<Arc<dyn ReceiveChannel>>> {
        Ok(vec![Arc::clone(&self.inbox) as Arc<dyn ReceiveChannel>])
    }
}

impl Drop for SharedMemoryTransport {
    fn drop(&mut self) {
        self.inbox.stop_receiving();
    }
}

#[derive(Debug)]
struct InboxChannel {
    subscriber: Subscriber<Ipc, [u8], u32>,
    /// `None` for a polled inbox.
    listener: Option<Listener<Ipc>>,
    /// Wakes the receive thread when the channel stops.
    waker: Option<Notifier<Ipc>>,
    stopped: AtomicBool,
    /// The host's address, for the source locators.
    address: [u8; 16],
    /// Non-blocking receives that found nothing, to drain the wake-ups now and then.
    empty_polls: AtomicU32,
    /// How long a blocking receive spins before it sleeps.
    spin: Mutex<ReceiveSpin>,
    /// Held from a receive to the end of its hand-over, so that datagrams are handed over
    /// in the order they were sent while a waiting thread polls beside the receive thread.
    turn: Mutex<()>,
    /// Waiting threads polling the inbox ([`ReceiveChannel::set_waiter_polling`]).
    pollers: AtomicU32,
    /// `None` for a polled inbox.
    wake_flag: Option<WakeFlag>,
}

/// The key of the one entry of an inbox's blackboard: its [`WakeFlag`].
const WAKE_FLAG_KEY: u64 = 0;

/// Tells an inbox's senders whether to notify it: only while its receive thread sleeps
/// and no waiting thread polls it (1), not while either looks at the queue (0). A
/// notification is a system call for the sender and, where it wakes nobody, wasted; where
/// a waiting thread polls, the receive thread it wakes would only compete with it for the
/// datagram and the core.
///
/// Never a datagram without a wake-up: a sender puts its datagram in the queue, then (a
/// sequentially consistent fence between) reads the flag; whoever sets the flag to 1
/// sets it, then (a fence between) looks at the queue, and takes or has taken what is
/// there. Of two such pairs one sees the other's first step.
struct WakeFlag {
    entry: EntryHandleMut<Ipc, u64, u32>,
    _writer: Writer<Ipc, u64>,
    state: Mutex<WakeState>,
}

impl std::fmt::Debug for WakeFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WakeFlag")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// A sender's view of an inbox's [`WakeFlag`].
struct FlagReader(EntryHandle<Ipc, u64, u32>);

impl std::fmt::Debug for FlagReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlagReader")
    }
}

#[derive(Debug)]
struct WakeState {
    /// The receive thread sleeps (or is about to).
    asleep: bool,
    pollers: u32,
}

impl WakeFlag {
    /// Updates the state and the flag; true when the flag is now 1 (the queue is then to
    /// be looked at once more: a datagram may have come while it was 0).
    fn update(&self, change: impl FnOnce(&mut WakeState)) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut state);
        let notify = state.asleep && state.pollers == 0;
        self.entry.update_with_copy(u32::from(notify));
        if notify {
            fence(Ordering::SeqCst);
        }
        notify
    }
}

impl InboxChannel {
    fn spin_lock(&self) -> MutexGuard<'_, ReceiveSpin> {
        // Nothing panics while holding it; a poisoned lock still holds a valid estimate.
        self.spin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A blocking receive found a datagram: the spin follows the traffic's rhythm.
    fn arrived(&self) {
        self.spin_lock().arrived(Instant::now());
    }

    /// Hands the next datagram, if one is waiting, to `deliver` where it lies in the
    /// segment. Another process's bytes, parsed in place: the parser reads every field
    /// once and checks it against the slice's length, which the sender cannot change, so a
    /// sender that scribbles on a datagram it sent (iceoryx2 maps it read-only here, but
    /// the sender keeps its own mapping) can make it malformed, which is counted and
    /// dropped, and nothing worse. What is kept (sample payloads) is copied out.
    /// `wait_turn`: wait while another thread hands a datagram over, else find nothing.
    fn next(&self, deliver: &mut dyn FnMut(&[u8], Datagram), wait_turn: bool) -> io::Result<bool> {
        let Some(_turn) = take_turn(&self.turn, wait_turn) else {
            return Ok(false);
        };
        let Some(sample) = self.subscriber.receive().map_err(io::Error::other)? else {
            return Ok(false);
        };
        let payload = sample.payload();
        let source = Locator {
            kind: KIND_SHARED_MEMORY,
            port: *sample.user_header(),
            address: self.address,
        };
        deliver(
            payload,
            Datagram {
                len: payload.len(),
                source,
                truncated: false,
            },
        );
        Ok(true)
    }
}

/// Copies a datagram into `buffer` (the receives that hand out a copy).
fn copy_into<'a>(
    buffer: &'a mut [u8],
    out: &'a mut Option<Datagram>,
) -> impl FnMut(&[u8], Datagram) + 'a {
    move |bytes, d| {
        let len = bytes.len().min(buffer.len());
        buffer[..len].copy_from_slice(&bytes[..len]);
        *out = Some(Datagram {
            len,
            truncated: len < bytes.len(),
            ..d
        });
    }
}

impl ReceiveChannel for InboxChannel {
    fn polling_is_a_system_call(&self) -> bool {
        false
    }

    fn traffic(&self) -> Traffic {
        Traffic::User
    }

    fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
        let mut out = None;
        self.receive_with(&mut [], &mut copy_into(buffer, &mut out))?;
        Ok(out)
    }

    fn try_receive(&self, buffer: &mut [u8]) -> io::Result<Option<Datagram>> {
        let mut out = None;
        self.try_receive_with(&mut [], &mut copy_into(buffer, &mut out))?;
        Ok(out)
    }

    fn receive_with(
        &self,
        _buffer: &mut [u8],
        deliver: &mut dyn FnMut(&[u8], Datagram),
    ) -> io::Result<bool> {
        // A datagram sent before its wake-up was collected is found here first; one sent
        // after the check leaves a wake-up that the wait returns on at once.
        for _ in 0..2 {
            if self.stopped.load(Ordering::Acquire) {
                return Ok(false);
            }
            if self.next(deliver, true)? {
                self.arrived();
                return Ok(true);
            }
            let Some(listener) = &self.listener else {
                // A polled inbox received without polling (not how the runtime uses it):
                // a short nap instead of a wake-up.
                std::thread::sleep(Duration::from_micros(100));
                continue;
            };
            // While a waiting thread polls, it spins for the datagram and this thread
            // sleeps (woken by the sender as when nobody spins).
            let polled = || self.pollers.load(Ordering::Relaxed) > 0;
            let spin = if polled() {
                Duration::ZERO
            } else {
                self.spin_lock().spin()
            };
            if !spin.is_zero() {
                let end = Instant::now() + spin;
                while Instant::now() < end && !self.stopped.load(Ordering::Relaxed) && !polled() {
                    if self.subscriber.has_samples().unwrap_or(true) {
                        break;
                    }
                    // Where threads outnumber cores, the thread this one waits for (the
                    // application answering, the peer's receive thread) may want this core:
                    // it gets it, and the spin goes on when it is done or sleeps.
                    std::thread::yield_now();
                }
                if self.next(deliver, true)? {
                    self.arrived();
                    return Ok(true);
                }
            }
            if let Some(flag) = &self.wake_flag {
                if flag.update(|s| s.asleep = true) && self.subscriber.has_samples().unwrap_or(true)
                {
                    flag.update(|s| s.asleep = false);
                    continue;
                }
            }
            let woken = listener.timed_wait(|_| {}, RECEIVE_SAFETY_TIMEOUT);
            if let Some(flag) = &self.wake_flag {
                flag.update(|s| s.asleep = false);
            }
            if woken.map_err(io::Error::other)? == 0 {
                return Ok(false);
            }
        }
        Ok(false)
    }

    fn try_receive_with(
        &self,
        _buffer: &mut [u8],
        deliver: &mut dyn FnMut(&[u8], Datagram),
    ) -> io::Result<bool> {
        // A look at the queue first: far cheaper than a receive that finds nothing (which
        // also looks for new senders), and a waiting thread looks all the time.
        let got = self.subscriber.has_samples().unwrap_or(true) && self.next(deliver, false)?;
        if let Some(listener) = &self.listener {
            if got {
                // A waiting thread's find: the rhythm its spin follows.
                self.arrived();
            } else if self.pollers.load(Ordering::Relaxed) == 0
                && self
                    .empty_polls
                    .fetch_add(1, Ordering::Relaxed)
                    .is_multiple_of(1024)
            {
                // Nobody sleeps on the wake-ups in this mode: drop them before they pile up.
                let _ = listener.try_wait(|_| {});
            }
        }
        Ok(got)
    }

    fn waiter_spin(&self) -> Option<Duration> {
        // A polled inbox (busy-poll mode) has a spinning thread of its own already.
        self.listener.as_ref().map(|_| self.spin_lock().spin())
    }

    fn set_waiter_polling(&self, polling: bool) {
        if polling {
            self.pollers.fetch_add(1, Ordering::Relaxed);
        } else {
            self.pollers.fetch_sub(1, Ordering::Relaxed);
        }
        let Some(flag) = &self.wake_flag else {
            return;
        };
        let notify = flag.update(|s| {
            if polling {
                s.pollers += 1;
            } else {
                s.pollers = s.pollers.saturating_sub(1);
            }
        });
        if notify && self.subscriber.has_samples().unwrap_or(true) {
            // Came while the last poller was leaving, unannounced: the sleeping receive
            // thread is woken for it.
            if let Some(w) = &self.waker {
                let _ = w.notify();
            }
        }
    }

    fn stop_receiving(&self) {
        self.stopped.store(true, Ordering::Release);
        if let Some(w) = &self.waker {
            let _ = w.notify();
        }
    }
}

/// Datagrams at least this long are copied with streaming (non-temporal) stores: an 11 MB
/// sample's datagrams go to segment slots that cycle through up to 64 MiB, which the
/// subscriber, on another core, reads once. Ordinary stores first read every line of the
/// slot into this core's cache (and take it back from the core that read it last) only to
/// overwrite it; streaming stores write the memory without reading it. Shorter datagrams
/// stay in the cache, where a reader of small samples finds them.
const STREAM_AT: usize = 256 * 1024;

/// Copies `part` into `place` (the same length), with streaming stores when `stream` (then
/// [`store_fence`] before the bytes are published) and the processor has them.
fn copy_part(part: &[u8], place: &mut [std::mem::MaybeUninit<u8>], stream: bool) {
    debug_assert_eq!(part.len(), place.len());
    #[cfg(target_arch = "x86_64")]
    if stream && part.len() >= 64 {
        stream_copy(part, place);
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = stream;
    // SAFETY: both are `part.len()` bytes, and a `&mut` and a `&` slice alive at once do
    // not overlap. (`write_copy_of_slice` does this without `unsafe` from Rust 1.93, above
    // the MSRV; a loop over the bytes does not become a `memcpy`, and took 18% of a
    // publisher of 11 MB samples.)
    #[allow(unsafe_code)]
    unsafe {
        std::ptr::copy_nonoverlapping(part.as_ptr(), place.as_mut_ptr().cast::<u8>(), part.len());
    }
}

/// A copy with SSE2's streaming stores (every x86-64 processor has them), 64 bytes at a
/// time to 16-byte-aligned places; the unaligned head and tail are copied as usual.
#[cfg(target_arch = "x86_64")]
fn stream_copy(part: &[u8], place: &mut [std::mem::MaybeUninit<u8>]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    let len = part.len().min(place.len());
    let src = part.as_ptr();
    let dst = place.as_mut_ptr().cast::<u8>();
    let head = dst.align_offset(16).min(len);
    let body = (len - head) / 64 * 64;
    // SAFETY: every offset read and written is below `len`, which both slices hold, and a
    // `&mut` and a `&` slice alive at once do not overlap; the streaming stores go to
    // `dst + head + i`, 16-byte aligned by the choice of `head`; loads may be unaligned.
    #[allow(unsafe_code)]
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let (src_body, dst_body) = (src.add(head), dst.add(head));
        let mut i = 0;
        while i < body {
            let s = src_body.add(i).cast::<__m128i>();
            let d = dst_body.add(i).cast::<__m128i>();
            let (a, b) = (_mm_loadu_si128(s), _mm_loadu_si128(s.add(1)));
            let (c, e) = (_mm_loadu_si128(s.add(2)), _mm_loadu_si128(s.add(3)));
            _mm_stream_si128(d, a);
            _mm_stream_si128(d.add(1), b);
            _mm_stream_si128(d.add(2), c);
            _mm_stream_si128(d.add(3), e);
            i += 64;
        }
        let done = head + body;
        std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
    }
}

/// Orders the streaming stores before the stores that follow (the slice's publication).
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no operands and only orders stores; SSE2 is part of x86-64.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_copy_is_the_bytes_whatever_the_alignment_and_length() {
        let source: Vec<u8> = (0..4096u32).map(|i| (i * 7 + i / 255) as u8).collect();
        for offset in [0, 1, 5, 15, 16, 17, 63] {
            for len in [0, 1, 15, 63, 64, 65, 127, 1000, 4000] {
                let part = &source[offset..offset + len];
                for stream in [false, true] {
                    let mut place = vec![std::mem::MaybeUninit::new(0xA5u8); len + 96];
                    copy_part(part, &mut place[offset + 3..offset + 3 + len], stream);
                    store_fence();
                    // SAFETY: every element was made with `MaybeUninit::new` and only ever
                    // overwritten with bytes.
                    #[allow(unsafe_code)]
                    let got: Vec<u8> = place.iter().map(|b| unsafe { b.assume_init() }).collect();
                    assert_eq!(&got[offset + 3..offset + 3 + len], part, "{offset} {len}");
                    assert!(got[..offset + 3].iter().all(|&b| b == 0xA5));
                    assert!(got[offset + 3 + len..].iter().all(|&b| b == 0xA5));
                }
            }
        }
    }

    #[test]
    fn participants_of_one_host_reach_each_other_and_no_one_else() {
        let a = SharedMemoryTransport::open().unwrap();
        let b = SharedMemoryTransport::open().unwrap();
        assert_ne!(a.locator().port, b.locator().port);
        assert_eq!(a.locator().address, b.locator().address);
        let b_in = b.receive_channels().unwrap().remove(0);
        a.send(b"hello", &b.locator()).unwrap();
        let mut buf = [0u8; 3];
        let got = b_in.receive(&mut buf).unwrap().unwrap();
        assert_eq!((got.len, got.truncated, &buf), (3, true, b"hel"));
        assert_eq!(got.source, a.locator());
        assert!(b_in.try_receive(&mut buf).unwrap().is_none());
        // A large datagram grows the sender's segment.
        let big: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        a.send(&big, &b.locator()).unwrap();
        let mut buf = vec![0u8; 256 * 1024];
        let got = b_in.receive(&mut buf).unwrap().unwrap();
        assert_eq!(&buf[..got.len], &big[..]);
        // A datagram in parts arrives whole, handed over where it lies (larger than any
        // receive buffer).
        let (head, body, tail) = (&big[..10], &big[10..199_990], &big[199_990..]);
        let mut whole = big.clone();
        whole.extend_from_slice(&big);
        a.send_parts(&[head, body, tail, &big], &b.locator())
            .unwrap();
        let mut seen = None;
        let got = b_in
            .receive_with(&mut [], &mut |bytes, d| seen = Some((bytes.to_vec(), d)))
            .unwrap();
        let (bytes, d) = seen.expect("delivered");
        assert!(got && bytes == whole && d.len == whole.len() && !d.truncated);
        assert_eq!(d.source, a.locator());
        assert_eq!(a.max_datagram(), MAX_DATAGRAM);
        // Another host's locator of the same kind, and a participant that is gone.
        let mut elsewhere = b.locator();
        elsewhere.address[5] ^= 1;
        assert!(!a.reaches(&elsewhere) && a.reaches(&b.locator()));
        assert!(a.send(b"x", &elsewhere).is_err());
        let gone = b.locator();
        drop(b_in);
        drop(b);
        assert_eq!(
            a.send(b"x", &gone).unwrap_err().kind(),
            io::ErrorKind::NotConnected
        );
        assert_eq!(
            a.send(b"x", &gone).unwrap_err().kind(),
            io::ErrorKind::NotConnected,
            "and stays gone"
        );
    }

    #[test]
    fn a_full_inbox_discards_and_a_stopped_one_wakes_its_reader() {
        let (a, b) = (
            SharedMemoryTransport::open().unwrap(),
            SharedMemoryTransport::open().unwrap(),
        );
        for i in 0..INBOX_DATAGRAMS {
            a.send(&[i as u8; 100], &b.locator()).unwrap();
        }
        assert_eq!(
            a.send(b"one too many", &b.locator()).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        let b_in = b.receive_channels().unwrap().remove(0);
        let mut buf = [0u8; 100];
        for i in 0..INBOX_DATAGRAMS {
            let got = b_in.receive(&mut buf).unwrap().unwrap();
            assert_eq!((got.len, buf[0]), (100, i as u8), "in order");
        }
        // Empty: a receive blocks until the channel is stopped.
        let waiter = {
            let c = Arc::clone(&b_in);
            std::thread::spawn(move || c.receive(&mut [0u8; 8]).unwrap())
        };
        std::thread::sleep(Duration::from_millis(50));
        b_in.stop_receiving();
        assert!(waiter.join().unwrap().is_none());
    }

    #[test]
    fn a_polled_inbox_is_sent_to_without_wake_ups() {
        let a = SharedMemoryTransport::open().unwrap();
        let b = SharedMemoryTransport::open_with(Wake::Polled).unwrap();
        let b_in = b.receive_channels().unwrap().remove(0);
        a.send(b"polled", &b.locator()).unwrap();
        let peer = a.host.ways().get(&b.locator().port).cloned().unwrap();
        assert!(peer.notifier.is_none(), "no event service to notify");
        let mut buf = [0u8; 16];
        let got = b_in.try_receive(&mut buf).unwrap().unwrap();
        assert_eq!(&buf[..got.len], b"polled");
        // And the other way: a notified inbox is woken.
        let a_in = a.receive_channels().unwrap().remove(0);
        b.send(b"back", &a.locator()).unwrap();
        let got = a_in.receive(&mut buf).unwrap().unwrap();
        assert_eq!(&buf[..got.len], b"back");
        b_in.stop_receiving();
        assert!(b_in.receive(&mut buf).unwrap().is_none(), "stopped");
    }

    #[test]
    fn the_participants_of_a_process_share_one_way_to_an_inbox() {
        let (a, b, c) = (
            SharedMemoryTransport::open().unwrap(),
            SharedMemoryTransport::open().unwrap(),
            SharedMemoryTransport::open().unwrap(),
        );
        assert!(Arc::ptr_eq(&a.host, &b.host), "one per process");
        let c_in = c.receive_channels().unwrap().remove(0);
        a.send(b"from a", &c.locator()).unwrap();
        b.send(b"from b", &c.locator()).unwrap();
        // One way to c, whoever of the process sends (the tests of this binary share the
        // process's ways, so it is counted at c's inbox).
        let way = a.host.ways().get(&c.locator().port).cloned().unwrap();
        assert_eq!(way.service.dynamic_config().number_of_publishers(), 1);
        // Each datagram still says which participant sent it.
        let mut buf = [0u8; 16];
        for (text, from) in [(&b"from a"[..], a.locator()), (b"from b", b.locator())] {
            let got = c_in.receive(&mut buf).unwrap().unwrap();
            assert_eq!((&buf[..got.len], got.source), (text, from));
        }
    }
}
