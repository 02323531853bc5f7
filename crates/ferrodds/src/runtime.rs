//! The runtime that drives the sans-IO protocol: one lock around the protocol state, a
//! receive thread per socket, the process's timer thread ([`timer`]), and sends from the
//! caller's thread.
//!
//! Everything that changes protocol state happens under `Shared::core`; sending happens
//! after the lock is released, so a slow `sendto` never holds up the receive threads.
//! Waiters (readers taking data, writers waiting for acknowledgments, wait sets) sleep on
//! `Shared::changed`, which is notified after every input that finds one waiting; the
//! timer thread is woken only when an input brought its next deadline forward. (A
//! notification is a system call even with nobody waiting, and a needless wake-up of the
//! timer thread is two context switches and a turn on the lock: at 100,000 samples per
//! second both showed at the top of a profile.)

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::Waker;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use ferrodds_rtps::dcps::{Preparation, Prepared};
use ferrodds_rtps::receiver::is_for;
use ferrodds_rtps::wire::{EntityId, Guid, Locator};
use ferrodds_rtps::{Event, LargeDatagrams, ParticipantCore, Timestamp, Transmit};
use ferrodds_transport::{
    Deliver, Hub, Membership, ReceiveChannel, SendError, Traffic, WakeDeferral,
};

mod timer;
mod ways;
use timer::ProcessTimer;
pub(crate) use ways::Ways;

/// A listener callback.
pub(crate) type Callback = Arc<dyn Fn() + Send + Sync>;

/// A status listener callback: told which status of its entity changed.
pub(crate) type StatusCallback = Arc<dyn Fn(StatusKind) + Send + Sync>;

/// A publisher's, subscriber's or participant's listener: told which entity's status
/// changed, for the statuses of its mask.
pub(crate) type ParentCallback = Arc<dyn Fn(Guid, StatusKind) + Send + Sync>;

pub use ferrodds_rtps::dcps::status_reads::{StatusKind, StatusMask};

/// What the driver keeps for a local reader besides its DCPS state (which is the core's):
/// who to wake when data arrives.
#[derive(Default)]
pub(crate) struct ReaderHooks {
    pub(crate) wakers: Vec<Waker>,
    pub(crate) on_data: Option<Callback>,
    /// Set when samples arrived since the listener last ran.
    pub(crate) data_pending: bool,
}

/// The protocol state, behind the lock.
pub(crate) struct Core {
    /// The protocol: endpoints, discovery, DCPS caches and statuses.
    pub(crate) node: ParticipantCore,
    pub(crate) readers: BTreeMap<EntityId, ReaderHooks>,
    /// The status listeners of readers and writers (entity ids are unique across both),
    /// with the statuses each hears of: the others go to the parent's listener.
    pub(crate) status_listeners: BTreeMap<EntityId, (StatusMask, StatusCallback)>,
    /// The publisher or subscriber each reader and writer was created in, their listeners,
    /// and the participant's: where a status goes that its entity has no listener for.
    pub(crate) parents: BTreeMap<EntityId, u32>,
    pub(crate) group_listeners: BTreeMap<u32, (StatusMask, ParentCallback)>,
    pub(crate) participant_listener: Option<(StatusMask, ParentCallback)>,
    /// The listeners of topics, by name.
    pub(crate) topic_listeners: BTreeMap<String, StatusCallback>,
    /// The TOPIC_DATA of topics that have one, by name: every writer and reader of the
    /// topic announces it (DCPS: a topic's QoS, which its endpoints carry in SEDP).
    pub(crate) topic_data: BTreeMap<String, Vec<u8>>,
    /// What the application last read of each status (`*_change`, status conditions).
    /// Status listener calls to make once the lock is released.
    status_calls: Vec<ListenerCall>,
    /// The readers with data pending, as `take_notifications` finds them (kept empty, to
    /// reuse: this runs after every datagram).
    data_pending: Vec<(EntityId, Option<Callback>)>,
    next_entity: u32,
    /// Transmits waiting for the lock to be released (or, for asynchronous writers, for the
    /// timer thread).
    pub(crate) pending: Vec<Transmit>,
    pub(crate) deferred: Vec<Transmit>,
    /// Received changes on their way through `Shared::prepare` (kept to reuse).
    preparing: Vec<Preparation>,
    prepared: Vec<Prepared>,
    pub(crate) closed: bool,
    /// Threads sleeping on `Shared::changed`, which wait for any change
    /// ([`Interest::Any`]).
    waiters: usize,
    /// The threads sleeping for data in readers ([`Interest::Readers`]), each on a
    /// condition variable of its own, once per reader it waits in.
    waited_readers: Vec<(EntityId, Arc<Condvar>)>,
    /// Those of them an input brought data for (see [`Core::after_input`]).
    to_wake: Vec<Arc<Condvar>>,
    /// Set when an input brought what any waiter may wait for (an event other than
    /// data); cleared by every `finish`.
    wake_all: bool,
    /// When the timer thread looks at this participant next by itself (`Timestamp(0)`
    /// until it first has): an input bringing a deadline before this kicks it.
    timer_wakes_at: Timestamp,
}

impl Core {
    pub(crate) fn new(mut node: ParticipantCore) -> Self {
        // Keys are decoded and content filters run by the thread that received the
        // change, outside the lock (see `prepare`).
        node.defer_preparation(true);
        Core {
            node,
            readers: BTreeMap::new(),
            status_listeners: BTreeMap::new(),
            parents: BTreeMap::new(),
            group_listeners: BTreeMap::new(),
            participant_listener: None,
            topic_listeners: BTreeMap::new(),
            topic_data: BTreeMap::new(),
            status_calls: Vec::new(),
            data_pending: Vec::new(),
            next_entity: 0,
            pending: Vec::new(),
            deferred: Vec::new(),
            preparing: Vec::new(),
            prepared: Vec::new(),
            closed: false,
            waiters: 0,
            waited_readers: Vec::new(),
            to_wake: Vec::new(),
            wake_all: false,
            timer_wakes_at: Timestamp(0),
        }
    }

    /// A fresh entity id of `kind` (0x02 keyed writer, 0x03 writer, 0x07 keyed reader, 0x04 reader).
    pub(crate) fn next_entity_id(&mut self, kind: u8) -> EntityId {
        self.next_entity += 1;
        let k = self.next_entity.to_be_bytes();
        EntityId([k[1], k[2], k[3], kind])
    }

    /// Folds in what the protocol produced after an input: the readers to wake, the
    /// datagrams to send. Data for a reader no sleeping waiter waits in leaves them
    /// asleep; any other event wakes them all.
    pub(crate) fn after_input(&mut self) {
        while let Some(event) = self.node.poll_event() {
            if let Event::DataAvailable { reader } = event {
                if let Some(hooks) = self.readers.get_mut(&reader) {
                    hooks.data_pending = true;
                }
                for (id, waiter) in &self.waited_readers {
                    if *id == reader && !self.to_wake.iter().any(|w| Arc::ptr_eq(w, waiter)) {
                        self.to_wake.push(Arc::clone(waiter));
                    }
                }
                continue;
            }
            self.wake_all = true;
            if let Event::InconsistentTopic { topic, .. } = &event {
                let kind = StatusKind::InconsistentTopic;
                if let Some(listener) = self.topic_listeners.get(topic) {
                    self.status_calls
                        .push(ListenerCall::Entity(listener.clone(), kind));
                } else if let Some((_, listener)) = self
                    .participant_listener
                    .as_ref()
                    .filter(|(mask, _)| mask.contains(kind))
                {
                    // A topic has no GUID: the participant's own stands for it.
                    let guid = Guid::new(self.node.rtps.prefix(), EntityId::PARTICIPANT);
                    self.status_calls
                        .push(ListenerCall::Parent(listener.clone(), guid, kind));
                }
            } else if let Some((entity, kind)) = StatusKind::of_event(&event) {
                if let Some(listener) = self.own_listener(entity, kind) {
                    self.status_calls.push(ListenerCall::Entity(listener, kind));
                } else if let Some(call) = self.parent_call(entity, kind) {
                    self.status_calls.push(call);
                }
            }
        }
        self.collect_transmits();
    }

    pub(crate) fn collect_transmits(&mut self) {
        while let Some(t) = self.node.poll_transmit() {
            self.pending.push(t);
        }
    }

    /// Queues what writer `id` wants sent, and nothing of any other endpoint's: to be sent
    /// when the lock is released, or, `asynchronous`, by the timer thread.
    pub(crate) fn hand_over(&mut self, id: EntityId, asynchronous: bool) {
        let Some(writer) = self.node.rtps.writer(id) else {
            return;
        };
        let queue = if asynchronous {
            &mut self.deferred
        } else {
            &mut self.pending
        };
        while let Some(t) = writer.poll_transmit() {
            queue.push(t);
        }
    }

    /// The earliest protocol deadline.
    fn next_timeout(&self) -> Option<Timestamp> {
        self.node.poll_timeout()
    }

    /// Entity `id`'s own listener, when its mask holds `kind`.
    fn own_listener(&self, id: EntityId, kind: StatusKind) -> Option<StatusCallback> {
        self.status_listeners
            .get(&id)
            .filter(|(mask, _)| mask.contains(kind))
            .map(|(_, listener)| listener.clone())
    }

    /// The call of the listener that hears of `kind` for entity `id` when the entity has
    /// none of its own: its publisher's or subscriber's if its mask holds `kind`, else the
    /// participant's if its mask does.
    fn parent_call(&self, id: EntityId, kind: StatusKind) -> Option<ListenerCall> {
        let group = self
            .parents
            .get(&id)
            .and_then(|g| self.group_listeners.get(g))
            .filter(|(mask, _)| mask.contains(kind));
        let (_, listener) = group.or(self
            .participant_listener
            .as_ref()
            .filter(|(mask, _)| mask.contains(kind)))?;
        let guid = Guid::new(self.node.rtps.prefix(), id);
        Some(ListenerCall::Parent(listener.clone(), guid, kind))
    }

    /// Adds to `out` (emptied lists, kept from one call to the next: this runs after every
    /// datagram, and allocated here at each one) the wakers and listeners to run now that
    /// input was processed.
    fn take_notifications(&mut self, out: &mut Notifications) {
        let Notifications {
            wakers,
            callbacks,
            status_calls,
        } = out;
        let mut on_readers: Vec<u32> = Vec::new();
        let mut pending = std::mem::take(&mut self.data_pending);
        for (id, r) in self.readers.iter_mut() {
            if r.data_pending {
                r.data_pending = false;
                wakers.append(&mut r.wakers);
                pending.push((*id, r.on_data.clone()));
            }
        }
        for (id, on_data) in pending.drain(..) {
            // DATA_ON_READERS of the reader's subscriber (or participant) comes first, once
            // per subscriber; then the reader's own listener; then a parent's DATA_AVAILABLE.
            let group = self.parents.get(&id).copied();
            let readers_call = self.parent_call(id, StatusKind::DataOnReaders);
            if let Some(ListenerCall::Parent(listener, _, kind)) = readers_call {
                let key = group.unwrap_or(0);
                if !on_readers.contains(&key) {
                    on_readers.push(key);
                    let guid = Guid::new(self.node.rtps.prefix(), id);
                    self.status_calls
                        .push(ListenerCall::Parent(listener, guid, kind));
                }
            } else if let Some(cb) = on_data {
                callbacks.push(cb);
            } else if let Some(listener) = self.own_listener(id, StatusKind::DataAvailable) {
                self.status_calls
                    .push(ListenerCall::Entity(listener, StatusKind::DataAvailable));
            } else if let Some(call) = self.parent_call(id, StatusKind::DataAvailable) {
                self.status_calls.push(call);
            }
        }
        self.data_pending = pending;
        status_calls.append(&mut self.status_calls);
    }
}

thread_local! {
    /// The waiters this thread woke, emptied, for its next `Shared::finish`.
    static WAKING: RefCell<Vec<Arc<Condvar>>> = const { RefCell::new(Vec::new()) };
    /// A queue of transmits this thread sent, emptied, for its next `Shared::finish`.
    static SENDING: RefCell<Vec<Transmit>> = const { RefCell::new(Vec::new()) };
    /// The lists of wakers and listeners this thread ran, emptied, for its next
    /// `Shared::finish`.
    static NOTIFYING: RefCell<Notifications> = const {
        RefCell::new(Notifications {
            wakers: Vec::new(),
            callbacks: Vec::new(),
            status_calls: Vec::new(),
        })
    };
}

/// A status listener call to make once the lock is released.
enum ListenerCall {
    /// The entity's own listener.
    Entity(StatusCallback, StatusKind),
    /// A publisher's, subscriber's or participant's, told whose status it is.
    Parent(ParentCallback, Guid, StatusKind),
}

/// What `Shared::finish` runs once the lock is released.
#[derive(Default)]
struct Notifications {
    wakers: Vec<Waker>,
    callbacks: Vec<Callback>,
    status_calls: Vec<ListenerCall>,
}

/// Set once a listener is installed anywhere in the process; from then on waiting threads
/// no longer receive for themselves ([`Shared::wait_until`]): a datagram handled on the
/// application's waiting thread would run listeners on it, inside its wait, where a lock
/// the application holds around the wait and takes in the listener would deadlock.
/// Listeners run on the receive threads, as they always did.
static LISTENERS_IN_PROCESS: AtomicBool = AtomicBool::new(false);

/// How many datagrams a thread that sent to a queue nobody polls hands over itself at
/// most, after its sends ([`WakeDeferral`]); what is left wakes the queue's thread.
const SETTLE_ROUNDS: usize = 16;

/// Whether a thread of this process that waits for data may receive it itself (from the
/// shared-memory inboxes it spins on): true until a listener is installed anywhere in the
/// process ([`LISTENERS_IN_PROCESS`]). For diagnosis: a binding that sets "no listener"
/// on every entity it creates must not install one.
pub fn waiting_threads_receive() -> bool {
    !LISTENERS_IN_PROCESS.load(Ordering::Relaxed)
}

/// Notes that a listener was installed ([`LISTENERS_IN_PROCESS`]).
pub(crate) fn listener_installed() {
    LISTENERS_IN_PROCESS.store(true, Ordering::Relaxed);
}

/// What a thread asleep on `Shared::changed` waits for: the inputs and writes that wake
/// it (every other change wakes every waiter).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Interest<'a> {
    /// Anything.
    Any,
    /// Data in one of these readers: an input whose events announce data for them
    /// ([`Core::after_input`]).
    Readers(&'a [EntityId]),
}

/// Which sleeping waiters a `finish` wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woken {
    All,
    /// Those [`Interest::Any`], and those [`Interest::Readers`] the input brought data
    /// for ([`Core::to_wake`]); all when it brought another event.
    Concerned,
}

/// A waiting thread's polling of its participant's shared inboxes, from its first spin
/// to its sleep or its end ([`Hub::set_waiter_polling`]).
struct Polling<'a>(Option<&'a Hub>);

impl<'a> Polling<'a> {
    fn start(&mut self, hub: &'a Hub) {
        if self.0.is_none() {
            hub.set_waiter_polling(true);
            self.0 = Some(hub);
        }
    }

    fn stop(&mut self) {
        if let Some(hub) = self.0.take() {
            hub.set_waiter_polling(false);
        }
    }
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What the threads share.
pub(crate) struct Shared {
    pub(crate) core: Mutex<Core>,
    pub(crate) changed: Condvar,
    /// The process's timer thread, which keeps this participant's deadlines.
    timer: Arc<ProcessTimer>,
    /// Its transports (some shared with the process's other participants).
    ways: Ways,
    /// How writers send to readers reached through this host's transports, if it has any.
    pub(crate) large_datagrams: Option<LargeDatagrams>,
    /// The ways in it serves itself, each with a thread of [`start`] (or polled), kept
    /// here so that [`Shared::shut_down`] can stop them: its UDP sockets, and in the
    /// busy-poll mode its in-process queue and shared-memory inbox too.
    channels: Vec<Arc<dyn ReceiveChannel>>,
    /// Its places in the ways in it shares with the process's other participants (the
    /// multicast groups, and the process's inboxes), served by their own threads;
    /// left at [`Shared::shut_down`].
    memberships: Mutex<Vec<Membership>>,
    /// Where this participant is: its index and discovery unicast address.
    pub(crate) local: LocalAddress,
    shutdown: AtomicBool,
    epoch: Instant,
    sent: AtomicU64,
    /// Datagrams sent through each transport (in the order of `ways.transports`).
    sent_by_transport: Vec<AtomicU64>,
    /// Datagrams a shared way in brought that were wholly for another participant.
    for_others: AtomicU64,
    send_failures: AtomicU64,
    unreachable: AtomicU64,
    /// Counts [`Shared::finish`] calls: what a spinning waiter watches for a change.
    generation: AtomicU64,
    /// How long a waiter spins before it sleeps on `changed`.
    wait_spin: Duration,
    /// In the busy-poll mode, the channels its polling thread spins on ([`start`]).
    busy: OnceLock<BusyPoll>,
}

/// The busy-poll mode's polling, which a waiting thread takes over from the polling
/// thread ([`Shared::wait_until`]).
struct BusyPoll {
    channels: Vec<Arc<dyn ReceiveChannel>>,
    /// Held for a round of polling: one thread polls at a time, so that the datagrams of
    /// a channel are handled in their order.
    rounds: Mutex<Rounds>,
    /// Set while a waiting thread polls: the polling thread naps meanwhile.
    taken_over: AtomicBool,
}

/// What polling keeps from one round to the next.
struct Rounds {
    buf: Vec<u8>,
    /// Per channel: rounds since it last delivered (saturating).
    quiet: Vec<u32>,
    /// Per channel: when a quiet one was last looked at.
    polled_at: Vec<Instant>,
    round: u32,
}

impl BusyPoll {
    fn new(channels: Vec<Arc<dyn ReceiveChannel>>) -> BusyPoll {
        BusyPoll {
            rounds: Mutex::new(Rounds {
                buf: vec![0u8; RECEIVE_BUFFER],
                quiet: vec![0; channels.len()],
                polled_at: vec![Instant::now(); channels.len()],
                round: 0,
            }),
            channels,
            taken_over: AtomicBool::new(false),
        }
    }

    /// Looks at each channel once, handing what came to the protocol; true when a datagram
    /// came. False at once when another thread is polling.
    fn round(&self, shared: &Shared) -> bool {
        let Ok(mut rounds) = self.rounds.try_lock() else {
            return false;
        };
        let Rounds {
            buf,
            quiet,
            polled_at,
            round,
        } = &mut *rounds;
        *round = round.wrapping_add(1);
        let mut got = false;
        for ((channel, quiet), polled_at) in self
            .channels
            .iter()
            .zip(quiet.iter_mut())
            .zip(polled_at.iter_mut())
        {
            if channel.polling_is_a_system_call() && *quiet >= QUIET_ROUNDS {
                // A quiet socket is looked at by the clock, not by the round: a round that
                // finds shared memory empty takes tens of nanoseconds, and a receive that
                // finds a socket empty a microsecond — every sixteenth round, as it was, kept
                // the thread in the kernel for a third of its time, so that a datagram
                // arriving over shared memory waited for it.
                if !round.is_multiple_of(QUIET_POLL_EVERY) {
                    continue;
                }
                let now = Instant::now();
                if now.saturating_duration_since(*polled_at) < QUIET_POLL_INTERVAL {
                    continue;
                }
                *polled_at = now;
            }
            match channel
                .try_receive_with(buf, &mut |bytes, received| handle(shared, bytes, received))
            {
                Ok(true) => {
                    got = true;
                    *quiet = 0;
                }
                Ok(false) => *quiet = quiet.saturating_add(1),
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        got
    }
}

/// A waiting thread's hold on the busy-poll mode's polling, released when it drops.
struct TakenOver<'a>(&'a BusyPoll);

impl<'a> TakenOver<'a> {
    /// The hold, unless another waiting thread has it.
    fn take(busy: &'a BusyPoll) -> Option<TakenOver<'a>> {
        busy.taken_over
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
            .then_some(TakenOver(busy))
    }
}

impl Drop for TakenOver<'_> {
    fn drop(&mut self) {
        self.0.taken_over.store(false, Ordering::Release);
    }
}

/// What the participant's transports chose for it when they opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LocalAddress {
    /// The participant index (it decides the unicast ports).
    pub(crate) participant_index: u32,
    /// The unicast locator discovery traffic reaches it at.
    pub(crate) metatraffic_unicast: ferrodds_transport::Locator,
}

/// What the participant sent, counted per destination.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendStats {
    /// Datagrams handed to the network.
    pub datagrams: u64,
    /// Sends the operating system refused (the datagram is lost; reliable writers repeat it).
    pub failed: u64,
    /// Destinations of a locator kind no transport of the participant sends to (kept by
    /// discovery only when one does, so this counts what slipped past it).
    pub unreachable: u64,
}

impl Shared {
    pub(crate) fn new(
        mut core: Core,
        ways: Ways,
        local: LocalAddress,
        wait_spin: Duration,
    ) -> std::io::Result<Arc<Shared>> {
        let channels = ways.own_channels();
        let kinds = ways.transports.kinds_carrying(LARGE_DATAGRAM);
        let large_datagrams = (!kinds.is_empty()).then_some(LargeDatagrams {
            kinds,
            max_message_size: LARGE_DATAGRAM,
            fragment_burst: LARGE_FRAGMENT_BURST,
            max_bytes: LARGE_HISTORY_BYTES,
        });
        let epoch = Instant::now();
        core.node.set_wall_clock(SystemTime::now());
        Ok(Arc::new(Shared {
            core: Mutex::new(core),
            changed: Condvar::new(),
            timer: ProcessTimer::get()?,
            for_others: AtomicU64::new(0),
            sent_by_transport: ways
                .transports
                .names()
                .iter()
                .map(|_| AtomicU64::new(0))
                .collect(),
            ways,
            large_datagrams,
            channels,
            memberships: Mutex::new(Vec::new()),
            local,
            generation: AtomicU64::new(0),
            wait_spin,
            busy: OnceLock::new(),
            shutdown: AtomicBool::new(false),
            epoch,
            sent: AtomicU64::new(0),
            send_failures: AtomicU64::new(0),
            unreachable: AtomicU64::new(0),
        }))
    }

    /// The protocol's notion of now.
    pub(crate) fn now(&self) -> Timestamp {
        Timestamp(u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// Locks the protocol state (a poisoned lock is still usable: the state is consistent
    /// between calls, and a panic elsewhere must not take the participant down).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends transmits (outside the lock), leaving `transmits` empty and giving their
    /// buffers back for this thread's next datagrams ([`Transmit::recycle`]).
    pub(crate) fn send(&self, transmits: &mut Vec<Transmit>) {
        // The parts of a datagram with sample bytes spliced in: on the stack up to
        // `STACK_PARTS` (a large datagram over shared memory has 17), beyond in a vector.
        const STACK_PARTS: usize = 32;
        let mut on_stack: [&[u8]; STACK_PARTS] = [&[]; STACK_PARTS];
        let mut spliced = Vec::new();
        for t in transmits.iter() {
            let whole = [&t.payload[..]];
            let parts: &[&[u8]] = if t.spliced.is_empty() {
                &whole
            } else if 2 * t.spliced.len() < STACK_PARTS {
                let mut n = 0;
                t.for_each_part(|p| {
                    on_stack[n] = p;
                    n += 1;
                });
                &on_stack[..n]
            } else {
                spliced.clear();
                t.for_each_part(|p| spliced.push(p));
                &spliced
            };
            for dest in &t.destinations {
                // A failed send is a lost datagram: reliability repairs it. Counted, so
                // that a peer announcing an address we cannot send to shows.
                let sent = self
                    .ways
                    .transports
                    .send_parts(parts, &transport_locator(dest));
                let counter = match sent {
                    Ok(i) => {
                        self.sent_by_transport[i].fetch_add(1, Ordering::Relaxed);
                        &self.sent
                    }
                    Err(SendError::Unreachable { .. }) => &self.unreachable,
                    Err(_) => &self.send_failures,
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
        drop((on_stack, spliced));
        for t in transmits.drain(..) {
            t.recycle();
        }
    }

    /// Each transport's name and the datagrams it sent.
    pub(crate) fn sent_by_transport(&self) -> Vec<(&'static str, u64)> {
        self.ways
            .transports
            .names()
            .into_iter()
            .zip(&self.sent_by_transport)
            .map(|(name, n)| (name, n.load(Ordering::Relaxed)))
            .collect()
    }

    /// What arrived and was dropped, counted (see [`ferrodds_rtps::ReceiveStats`]).
    pub(crate) fn receive_stats(&self) -> ferrodds_rtps::ReceiveStats {
        let mut stats = self.lock().node.rtps.stats();
        stats.not_for_us += self.for_others.load(Ordering::Relaxed);
        stats
    }

    /// Datagrams sent, and sends that failed.
    pub(crate) fn send_stats(&self) -> SendStats {
        SendStats {
            datagrams: self.sent.load(Ordering::Relaxed),
            failed: self.send_failures.load(Ordering::Relaxed),
            unreachable: self.unreachable.load(Ordering::Relaxed),
        }
    }

    /// Releases the lock after a change: sends, wakes waiters, runs listeners.
    pub(crate) fn finish(&self, core: MutexGuard<'_, Core>) {
        let next = core.next_timeout();
        self.finish_with(core, next, Woken::All);
    }

    /// [`Shared::finish`] after an input the core's events describe whole (a datagram, a
    /// take), folded in by [`Core::after_input`]: it wakes only the sleeping waiters that
    /// may wait for what came.
    pub(crate) fn finish_input(&self, core: MutexGuard<'_, Core>) {
        let next = core.next_timeout();
        self.finish_with(core, next, Woken::Concerned);
    }

    /// [`Shared::finish`] after writer `id` wrote: only its timers (and the DCPS
    /// deadlines) can have come forward, and only waiters for any change can be waiting
    /// for what it did (its samples reach this participant's readers as datagrams).
    pub(crate) fn finish_write(&self, core: MutexGuard<'_, Core>, id: EntityId) {
        let next = core.node.poll_timeout_after_write(id);
        self.finish_with(core, next, Woken::Concerned);
    }

    /// [`Shared::finish`] with the earliest deadline that may have come forward.
    fn finish_with(&self, mut core: MutexGuard<'_, Core>, next: Option<Timestamp>, woken: Woken) {
        // The queue is swapped for this thread's emptied one, so that neither allocates.
        let mut transmits = SENDING.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
        std::mem::swap(&mut transmits, &mut core.pending);
        // Taken and given back rather than borrowed: a listener may write, and so come
        // through here again, while these are being run.
        let mut notify = NOTIFYING.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
        core.take_notifications(&mut notify);
        // A waiter for data in one reader, woken by every datagram for another (a thread
        // per reader), costs the thread that handled it a futex wake and, where threads
        // outnumber cores, the core that the next datagram needs.
        let wake_waiters = core.waiters > 0;
        let wake_all = woken == Woken::All || std::mem::take(&mut core.wake_all);
        // Nobody asleep for a reader's data (the usual case): nothing to gather.
        let to_wake = if core.waited_readers.is_empty() {
            core.to_wake.clear();
            None
        } else {
            let mut to_wake = WAKING.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
            if wake_all {
                to_wake.extend(core.waited_readers.iter().map(|(_, w)| Arc::clone(w)));
                core.to_wake.clear();
            } else {
                to_wake.append(&mut core.to_wake);
            }
            Some(to_wake)
        };
        let wake_timer = timer::must_kick(&core, next);
        drop(core);
        // Before sending: a spinning waiter sees its sample while this thread sends the
        // acknowledgments.
        self.generation.fetch_add(1, Ordering::Release);
        // A datagram for a participant of this process whose queue nobody polls is handed
        // over by this thread once it has sent, not by the queue's thread woken for it (as
        // a waiting thread receives for itself, and only where one may).
        let hub = self
            .ways
            .hub()
            .filter(|h| h.is_pollable() && !LISTENERS_IN_PROCESS.load(Ordering::Relaxed));
        let deferral = hub.map(|_| WakeDeferral::begin());
        self.send(&mut transmits);
        SENDING.with(|spare| *spare.borrow_mut() = transmits);
        if wake_waiters {
            self.changed.notify_all();
        }
        if let Some(mut to_wake) = to_wake {
            for waiter in to_wake.drain(..) {
                waiter.notify_one();
            }
            WAKING.with(|spare| *spare.borrow_mut() = to_wake);
        }
        if wake_timer {
            self.timer.kick();
        }
        for w in notify.wakers.drain(..) {
            w.wake();
        }
        for cb in notify.callbacks.drain(..) {
            cb();
        }
        for call in notify.status_calls.drain(..) {
            match call {
                ListenerCall::Entity(listener, kind) => listener(kind),
                ListenerCall::Parent(listener, guid, kind) => listener(guid, kind),
            }
        }
        NOTIFYING.with(|spare| *spare.borrow_mut() = notify);
        if let (Some(hub), Some(deferral)) = (hub, deferral) {
            // Bounded: other threads may keep sending meanwhile.
            deferral.settle(|| hub.hand_over(SETTLE_ROUNDS));
        }
    }

    /// Gives local endpoints new QoS (`set_qos`, checked by the caller): each is announced
    /// again and matched again ([`ferrodds_rtps::ParticipantCore::update_local`]).
    pub(crate) fn update_endpoints(
        &self,
        mut core: MutexGuard<'_, Core>,
        updates: impl IntoIterator<Item = (Guid, ferrodds_rtps::qos::EndpointQos)>,
    ) {
        let now = self.now();
        for (guid, qos) in updates {
            core.node.update_local(now, guid, qos);
        }
        core.after_input();
        self.finish(core);
    }

    /// The TOPIC_DATA of topic `topic` (empty: none).
    pub(crate) fn topic_data(&self, topic: &str) -> Vec<u8> {
        self.lock()
            .topic_data
            .get(topic)
            .cloned()
            .unwrap_or_default()
    }

    /// Sets the TOPIC_DATA of topic `topic` (empty: none) and announces its endpoints
    /// again with it.
    pub(crate) fn set_topic_data(&self, topic: &str, data: Vec<u8>) {
        let mut core = self.lock();
        let endpoints = core.node.discovery.local_endpoints_of(topic);
        let updates: Vec<_> = endpoints
            .into_iter()
            .filter(|(_, qos)| qos.topic_data.value != data)
            .map(|(guid, mut qos)| {
                qos.topic_data.value = data.clone();
                (guid, qos)
            })
            .collect();
        if data.is_empty() {
            core.topic_data.remove(topic);
        } else {
            core.topic_data.insert(topic.to_owned(), data);
        }
        self.update_endpoints(core, updates);
    }

    /// Announces a local endpoint over SEDP and matches it (its RTPS endpoint and DCPS state
    /// were added under the same lock).
    pub(crate) fn announce(
        &self,
        mut core: MutexGuard<'_, Core>,
        mut endpoint: ferrodds_rtps::LocalEndpoint,
    ) {
        let now = self.now();
        if let Some(data) = core.topic_data.get(&endpoint.topic_name) {
            endpoint.qos.topic_data.value = data.clone();
        }
        core.node.add_local(now, endpoint);
        core.after_input();
        self.finish(core);
    }

    /// Withdraws a local endpoint: disposes its SEDP instance, ends its matches, and drops
    /// its RTPS endpoint and DCPS state.
    pub(crate) fn withdraw(&self, guid: Guid) {
        let now = self.now();
        let mut core = self.lock();
        core.node.remove_local(now, guid);
        core.node.rtps.remove_writer(guid.entity_id);
        core.node.rtps.remove_reader(guid.entity_id);
        core.readers.remove(&guid.entity_id);
        // Before the events of its withdrawal are looked at: a deleted entity's listener
        // hears nothing of its own deletion.
        core.status_listeners.remove(&guid.entity_id);
        core.parents.remove(&guid.entity_id);
        core.after_input();
        self.finish(core);
    }

    /// After a take or read from reader `id`: where that made room for changes a reliable
    /// KEEP_ALL reader held back, they come in and are acknowledged now (as after input).
    pub(crate) fn after_collect(
        &self,
        mut core: MutexGuard<'_, Core>,
        now: Timestamp,
        id: EntityId,
    ) {
        if !core.node.reader_collected(now, id) {
            return;
        }
        if core.node.rtps.poll_timeout().is_some_and(|t| t <= now) {
            core.node.rtps.handle_timeout(now);
        }
        let mut core = self.prepare(core, now);
        core.after_input();
        self.finish_input(core);
    }

    /// Prepares the received changes the core holds for it — decodes their keys, runs
    /// content filters — with the lock released, so that neither the other receive
    /// threads nor the application wait on that work; then hands them back.
    pub(crate) fn prepare<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
        now: Timestamp,
    ) -> MutexGuard<'a, Core> {
        // Bounded: each turn takes everything queued; a turn finds more only when another
        // thread's input queued some meanwhile, which that thread will also look for.
        for _ in 0..4 {
            let Some(first) = core.node.poll_preparation() else {
                break;
            };
            // The vectors are the core's, reused from one input to the next.
            let mut preparing = std::mem::take(&mut core.preparing);
            let mut prepared = std::mem::take(&mut core.prepared);
            preparing.push(first);
            preparing.extend(std::iter::from_fn(|| core.node.poll_preparation()));
            drop(core);
            prepared.extend(preparing.drain(..).map(|p| p.prepare()));
            core = self.lock();
            core.node.handle_prepared_all(now, prepared.drain(..));
            core.preparing = preparing;
            core.prepared = prepared;
        }
        core
    }

    /// Waits on `changed` until `done` holds or `timeout` passes; true when done.
    ///
    /// Before it sleeps the thread spins: for the participant's `wait_spin`, or, where its
    /// shared inboxes may be polled ([`Hub::waiter_spin`]), for as long as their receive
    /// thread would have spun, receiving from them itself meanwhile (that thread sleeps
    /// instead). A datagram that comes within the spin is then handled on the thread that
    /// waits for it: neither a spinning receive thread beside it competing for the core
    /// nor a wake-up through the scheduler (tens of microseconds on a small virtual
    /// machine) between the two.
    pub(crate) fn wait_until(
        &self,
        timeout: Duration,
        done: impl FnMut(&mut Core) -> bool,
    ) -> bool {
        self.wait_until_for(Interest::Any, timeout, done)
    }

    /// [`Shared::wait_until`] for a `done` that only the changes `interest` names can make
    /// true: asleep, the thread is woken for those only.
    pub(crate) fn wait_until_for(
        &self,
        interest: Interest<'_>,
        timeout: Duration,
        mut done: impl FnMut(&mut Core) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let mut spin_until: Option<Instant> = None;
        let hub = self
            .ways
            .hub()
            .filter(|h| h.is_pollable() && !LISTENERS_IN_PROCESS.load(Ordering::Relaxed));
        let mut polling = Polling(None);
        // In the busy-poll mode a waiting thread polls the channels itself for as long as
        // it waits, and the polling thread naps: on a small machine, two threads spinning
        // where one waits for the other to hand it a sample take turns on a core.
        let busy = self
            .busy
            .get()
            .filter(|_| !LISTENERS_IN_PROCESS.load(Ordering::Relaxed))
            .and_then(TakenOver::take);
        let mut core = self.lock();
        loop {
            if done(&mut core) {
                return true;
            }
            if core.closed {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            if let Some(TakenOver(busy)) = &busy {
                let seen = self.generation.load(Ordering::Acquire);
                drop(core);
                let mut idle_rounds = 0u32;
                while self.generation.load(Ordering::Acquire) == seen
                    && !self.is_shut_down()
                    && Instant::now() < deadline
                {
                    if !busy.round(self) {
                        idle_rounds = idle_rounds.wrapping_add(1);
                        spin_pause(idle_rounds);
                    }
                }
                core = self.lock();
                continue;
            }
            // First a spin, without the lock, until a `finish` has been (the change a
            // sleeping waiter would be woken for) or the spin is over; then sleep.
            let spin_end = *spin_until.get_or_insert_with(|| {
                let inboxes = hub.and_then(|h| h.waiter_spin()).unwrap_or_default();
                now + self.wait_spin.max(inboxes)
            });
            if now < spin_end {
                let seen = self.generation.load(Ordering::Acquire);
                drop(core);
                if let Some(hub) = hub {
                    polling.start(hub);
                }
                let end = spin_end.min(deadline);
                while self.generation.load(Ordering::Acquire) == seen && Instant::now() < end {
                    if !hub.is_some_and(|h| h.poll()) {
                        // Yields the core on every empty turn: where threads outnumber
                        // cores, the thread that would make the change may be waiting
                        // for it.
                        std::thread::yield_now();
                    }
                }
                core = self.lock();
                continue;
            }
            polling.stop();
            core = self.wait_changed_for(interest, core, deadline - now);
        }
    }

    /// Sleeps on `changed` for up to `timeout` (counted as a waiter, so that inputs notify).
    pub(crate) fn wait_changed<'a>(
        &self,
        core: MutexGuard<'a, Core>,
        timeout: Duration,
    ) -> MutexGuard<'a, Core> {
        self.wait_changed_for(Interest::Any, core, timeout)
    }

    /// [`Shared::wait_changed`] woken only by the changes `interest` names (and by every
    /// change that is not an input's or a write's).
    fn wait_changed_for<'a>(
        &self,
        interest: Interest<'_>,
        mut core: MutexGuard<'a, Core>,
        timeout: Duration,
    ) -> MutexGuard<'a, Core> {
        let ids = match interest {
            Interest::Readers(ids) if !ids.is_empty() => ids,
            _ => {
                core.waiters += 1;
                let mut core = match self.changed.wait_timeout(core, timeout) {
                    Ok((c, _)) => c,
                    Err(p) => p.into_inner().0,
                };
                core.waiters -= 1;
                return core;
            }
        };
        // A condition variable of its own, under the same lock as `changed` (made for the
        // sleep: a sleep costs far more, and a condition variable must not serve the
        // locks of two participants).
        let waiter = Arc::new(Condvar::new());
        core.waited_readers
            .extend(ids.iter().map(|id| (*id, Arc::clone(&waiter))));
        let mut core = match waiter.wait_timeout(core, timeout) {
            Ok((c, _)) => c,
            Err(p) => p.into_inner().0,
        };
        core.waited_readers
            .retain(|(_, w)| !Arc::ptr_eq(w, &waiter));
        core
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    pub(crate) fn shut_down(&self) {
        self.shutdown.store(true, Ordering::Release);
        let waiting: Vec<Arc<Condvar>> = {
            let mut core = self.lock();
            core.closed = true;
            core.waited_readers
                .iter()
                .map(|(_, w)| Arc::clone(w))
                .collect()
        };
        self.changed.notify_all();
        for waiter in waiting {
            waiter.notify_one();
        }
        // The receive threads block without a deadline (an idle participant must not wake
        // to look at a flag): wake them.
        for channel in &self.channels {
            channel.stop_receiving();
        }
        self.memberships
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// Starts the receive threads (one per receive channel, or, with `busy_poll`, one spinning
/// thread for the user traffic channels), and gives the participant to the process's timer
/// thread.
pub(crate) fn start(shared: &Arc<Shared>, busy_poll: bool) -> std::io::Result<Vec<JoinHandle<()>>> {
    let (user, mut blocking): (Vec<_>, Vec<_>) = shared
        .channels
        .iter()
        .cloned()
        .partition(|c| c.traffic() == Traffic::User);
    let mut threads = Vec::new();
    if busy_poll {
        // Discovery traffic keeps its blocking threads: it is rare, and a spinning thread
        // per channel would need a core each.
        let _ = shared.busy.set(BusyPoll::new(user));
        let shared = Arc::clone(shared);
        threads.push(
            std::thread::Builder::new()
                .name("ferrodds-poll".into())
                .spawn(move || {
                    if let Some(busy) = shared.busy.get() {
                        poll_loop(&shared, busy);
                    }
                })?,
        );
    } else {
        blocking.extend(user);
    }
    for (i, channel) in blocking.into_iter().enumerate() {
        let shared = Arc::clone(shared);
        threads.push(
            std::thread::Builder::new()
                .name(format!("ferrodds-recv-{i}"))
                .spawn(move || receive_loop(&shared, &*channel))?,
        );
    }
    // The shared ways in: their threads hand this participant its datagrams while it
    // lives, those addressed to another participant of the process left out.
    let weak = Arc::downgrade(shared);
    let prefix = shared.lock().node.rtps.prefix();
    let deliver: Deliver = Arc::new(move |bytes, received| {
        if let Some(shared) = weak.upgrade().filter(|s| !s.is_shut_down()) {
            if is_for(bytes, prefix) {
                handle(&shared, bytes, received);
            } else {
                shared.for_others.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    *shared
        .memberships
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = shared.ways.join(&deliver)?;
    shared.timer.add(Arc::downgrade(shared));
    Ok(threads)
}

/// The transport crate's locator as the protocol crate spells it (same three fields).
pub(crate) fn rtps_locator(l: ferrodds_transport::Locator) -> Locator {
    Locator {
        kind: l.kind,
        port: l.port,
        address: l.address,
    }
}

/// The protocol crate's locator as the transport crate spells it (same three fields).
fn transport_locator(l: &Locator) -> ferrodds_transport::Locator {
    ferrodds_transport::Locator {
        kind: l.kind,
        port: l.port,
        address: l.address,
    }
}

/// Tells the user something they must act on or know (a fallback): through `tracing` when
/// the application installed a subscriber, otherwise as one line on standard error.
pub(crate) fn warn_user(message: std::fmt::Arguments<'_>) {
    if tracing::dispatcher::has_been_set() {
        tracing::warn!("{message}");
    } else {
        eprintln!("{message}");
    }
}

/// The datagrams writers build for readers they reach through transports that carry them
/// (shared memory, in process): a large sample in a score of datagrams, not hundreds.
const LARGE_DATAGRAM: usize = 512 * 1024;

/// The most of a large sample sent to such readers before asking what arrived: half of
/// what their inboxes hold (shared memory: 128 datagrams, 64 MiB; in process, 64 MiB).
/// Pacing in bursts of 4 MiB held 11 MB samples to 460/s, a round trip per burst; without
/// it, 600/s (2-core VM).
const LARGE_FRAGMENT_BURST: usize = 32 << 20;

/// A KEEP_ALL writer's byte limit while all its readers are reached that way: two 11 MB
/// samples in flight (1 MiB samples: 18k/s, against 8k/s with UDP's 2 MiB, 2-core VM).
const LARGE_HISTORY_BYTES: usize = 24 << 20;

/// Datagrams up to the UDP maximum (transports within the host hand theirs over where
/// they lie, whatever their size).
const RECEIVE_BUFFER: usize = 65536;

/// The longest the timer thread sleeps without a timer due: it is woken when one comes
/// due sooner (`Shared::finish`), so this only bounds a change that did not say so.
const TIMER_IDLE_WAIT: Duration = Duration::from_secs(1);

fn receive_loop(shared: &Shared, channel: &dyn ReceiveChannel) {
    let mut buf = vec![0u8; RECEIVE_BUFFER];
    while !shared.is_shut_down() {
        match channel.receive_with(&mut buf, &mut |bytes, received| {
            handle(shared, bytes, received)
        }) {
            Ok(_) => continue,
            Err(_) => {
                // An error on receive (e.g. ICMP port unreachable reported late) is not
                // fatal; avoid spinning on a persistent one.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// The busy-poll receive loop: non-blocking receives on each channel in turn, never
/// sleeping while the participant lives. A channel whose every look is a system call (a
/// socket) is looked at on every round only while it carries traffic, and on every
/// [`QUIET_POLL_EVERY`]th round after [`QUIET_ROUNDS`] rounds without any: a shared-memory
/// round trip waited for each quiet UDP socket's `recvmsg` (64 B over shared memory in
/// busy-poll mode took 4.8 µs against 3.9 µs for its blocking threads spinning on the one
/// queue, 2-core VM).
fn poll_loop(shared: &Shared, busy: &BusyPoll) {
    let mut idle_rounds = 0u32;
    while !shared.is_shut_down() {
        if busy.taken_over.load(Ordering::Acquire) {
            // A waiting thread polls: nap rather than take the core it needs. Each nap is
            // a wake-up; the channels wait at most this long once it stops waiting.
            std::thread::sleep(TAKEN_OVER_NAP);
            continue;
        }
        if busy.round(shared) {
            idle_rounds = 0;
        } else {
            idle_rounds = idle_rounds.wrapping_add(1);
            spin_pause(idle_rounds);
        }
    }
}

/// An empty round of a busy-poll: now and then let another runnable thread have this
/// core (without sleeping): where threads outnumber cores, a spinner that never yields
/// delays the very thread that would send the next sample by a whole time slice.
fn spin_pause(idle_rounds: u32) {
    if idle_rounds.is_multiple_of(64) {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

/// How long the busy-poll mode's polling thread naps while a waiting thread polls.
const TAKEN_OVER_NAP: Duration = Duration::from_micros(200);

/// Rounds without a datagram after which the busy-poll loop looks at a socket less often.
const QUIET_ROUNDS: u32 = 4096;
/// How often (in rounds) the busy-poll loop reads the clock to see whether a quiet socket
/// is due a look.
const QUIET_POLL_EVERY: u32 = 16;
/// How often the busy-poll loop looks at a quiet socket: what a datagram that comes to it
/// after a quiet spell may wait at most beyond its round.
const QUIET_POLL_INTERVAL: Duration = Duration::from_micros(50);

/// Hands one received datagram to the protocol.
fn handle(shared: &Shared, buf: &[u8], received: ferrodds_transport::Datagram) {
    let datagram = buf.get(..received.len).filter(|_| !received.truncated);
    let now = shared.now();
    let mut core = shared.lock();
    let Some(datagram) = datagram else {
        core.node.rtps.count_truncated();
        return;
    };
    // The source address decides where discovery may send to (see the locator rule
    // in ferrodds_rtps::discovery_engine).
    let origin = rtps_locator(received.source);
    core.node.handle_datagram(now, origin, datagram);
    // What the datagram made due at once (an ACKNACK answering a HEARTBEAT) goes out
    // from here rather than a turn of the timer thread later.
    if core.node.rtps.poll_timeout().is_some_and(|t| t <= now) {
        core.node.rtps.handle_timeout(now);
    }
    let mut core = shared.prepare(core, now);
    core.after_input();
    shared.finish_input(core);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodds_rtps::discovery::ParticipantData;
    use ferrodds_rtps::wire::GuidPrefix;
    use ferrodds_rtps::{
        Change, ChangeKind, DiscoveryConfig, Participant, RemoteReader, Writer, WriterConfig,
    };

    /// A core with two writers, each holding one sample for one matched reader.
    fn core_with_two_writers() -> (Core, EntityId, EntityId) {
        let prefix = GuidPrefix([7; 12]);
        let now = Timestamp(1);
        let config = DiscoveryConfig {
            own: ParticipantData::new(prefix),
            spdp_destinations: Vec::new(),
            announce_period: Duration::from_secs(2),
            type_information: true,
            other_locators: Vec::new(),
            fast_dds_xcdr1: false,
            shared_endpoints: None,
            channel_host: None,
        };
        let mut node = ParticipantCore::new(now, Participant::new(prefix), config);
        let ids = [EntityId([0, 0, 1, 0x03]), EntityId([0, 0, 2, 0x03])];
        for id in ids {
            let mut w = Writer::new(Guid::new(prefix, id), WriterConfig::default());
            w.match_reader(
                now,
                RemoteReader {
                    guid: Guid::new(GuidPrefix([9; 12]), EntityId([0, 0, 1, 0x04])),
                    locators: vec![Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411)],
                    reliable: false,
                    transient_local: false,
                    dispose_key: ferrodds_rtps::writer::DisposeKey::KeyOnlySample,
                    reduced: false,
                    filter: None,
                    sample_channel: false,
                },
            );
            let change = Change {
                original: None,
                coherence: None,
                kind: ChangeKind::Alive,
                key_hash: None,
                timestamp: None,
                payload: vec![0u8, 1, 0, 0, 1, 2, 3, 4].into(),
                reduced_payload: None,
            };
            w.write(now, change).unwrap();
            node.rtps.add_writer(w);
        }
        (Core::new(node), ids[0], ids[1])
    }

    #[test]
    fn a_truncated_datagram_is_counted_and_dropped() {
        let p = crate::DomainParticipant::builder()
            .unwrap()
            .domain_id(37)
            .interface("lo")
            .unwrap()
            .allow_multicast(false)
            .build()
            .unwrap();
        let received = ferrodds_transport::Datagram {
            len: 20,
            source: ferrodds_transport::Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 9),
            truncated: true,
        };
        let before = p.receive_stats();
        handle(&p.inner.shared, &[0u8; 20], received);
        let after = p.receive_stats();
        assert_eq!(after.truncated, before.truncated + 1);
        assert_eq!(after.bad_datagrams, before.bad_datagrams);
    }

    #[test]
    fn a_write_hands_over_its_own_writers_datagrams_only() {
        let (mut core, a, b) = core_with_two_writers();
        core.hand_over(a, false);
        assert_eq!(core.pending.len(), 1, "writer a's sample");
        assert!(core.deferred.is_empty());
        // Writer b's datagram is still its own, for its own write (asynchronous here).
        core.hand_over(b, true);
        assert_eq!(core.pending.len(), 1);
        assert_eq!(
            core.deferred.len(),
            1,
            "writer b's sample, for the timer thread"
        );
        assert!(core.node.rtps.poll_transmit().is_none());
    }
}
