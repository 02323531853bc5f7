//! A participant's ways in and out — its transports. Its UDP sockets are its own; its
//! in-process queue and shared-memory inbox it shares with the process's other
//! participants of the same transport configuration: one of each per process, each read by
//! one thread for them all (a [`Hub`]), as Cyclone DDS's participants in one process share
//! their domain's ways in.
//!
//! The participants announce the same in-process and shared-memory locators, so that a
//! writer with readers in several of them sends each sample once (it groups readers by
//! locator), and the process hands it to each participant, whose protocol takes what is
//! addressed to it ([`ferrodds_rtps::receiver::is_for`] first skips what an INFO_DST gives
//! to another). Before, each participant had its own queue and inbox with a thread each:
//! in a process of 25 participants, 50 threads, and per inbox the descriptors of
//! iceoryx2's services and of the ways to it from every other participant of the host
//! (the hundred-participant benchmark, docs/benchmarks.md).
//!
//! UDP stays per participant. Sharing the unicast sockets too was tried (session 21): one
//! kernel buffer and one thread for 25 participants' discovery traffic overflowed, and
//! with a backlog in memory instead the repairs and heartbeats of late answers fed each
//! other until matching took 4–6 s, or more than 40 s, where it takes 2
//! (docs/benchmarks.md).
//!
//! A participant in the busy-poll mode keeps ways of its own: its thread spins on them.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use ferrodds_transport::shared_memory::Wake;
use ferrodds_transport::{
    Deliver, Hub, InProcessTransport, Locator, Membership, ReceiveChannel, SharedMemoryTransport,
    Transport, TransportConfig, TransportError, Transports, UdpTransport,
};

use super::warn_user;

/// The transports of one participant.
#[derive(Debug)]
pub(crate) struct Ways {
    pub(crate) transports: Transports,
    /// The ways in the participant serves itself: its UDP sockets, and in the busy-poll
    /// mode its inboxes too.
    own: Vec<Arc<dyn ReceiveChannel>>,
    inboxes: Arc<Inboxes>,
    /// The participant index the UDP unicast sockets are bound on.
    pub(crate) participant_index: u32,
    pub(crate) metatraffic_unicast: Locator,
    pub(crate) default_unicast: Locator,
    pub(crate) metatraffic_multicast: Option<Locator>,
    pub(crate) spdp_destinations: Vec<Locator>,
}

/// The in-process queue and shared-memory inbox of one or more participants.
#[derive(Debug)]
struct Inboxes {
    /// In order of preference: in-process, shared memory.
    transports: Vec<Arc<dyn Transport>>,
    locators: Vec<Locator>,
    /// Serves their ways in for every participant sharing them; `None` when not shared.
    hub: Option<Arc<Hub>>,
}

/// The shared inboxes of this process, by configuration, with the id of the process that
/// opened them: a child made by `fork` inherits them without their threads and opens its
/// own.
static INBOXES: Mutex<Option<(u32, Registry)>> = Mutex::new(None);

/// The inboxes of a process, each with the configuration they were opened with.
type Registry = Vec<(TransportConfig, Weak<Inboxes>)>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Ways {
    /// Opens a participant's UDP transport, and takes the inboxes of another participant
    /// of this process with the same configuration, or opens new ones.
    pub(crate) fn open(config: &TransportConfig) -> Result<Ways, TransportError> {
        let inboxes = Inboxes::get(config)?;
        let udp = UdpTransport::open_sharing_multicast(config)?;
        let mut own = udp.receive_channels().map_err(TransportError::Channel)?;
        let mut transports = Transports::new();
        for t in &inboxes.transports {
            if inboxes.hub.is_none() {
                own.extend(t.receive_channels().map_err(TransportError::Channel)?);
            }
            transports.push(Box::new(Arc::clone(t)));
        }
        let mut ways = Ways {
            participant_index: udp.participant_id(),
            metatraffic_unicast: udp.metatraffic_unicast_locator(),
            default_unicast: udp.default_unicast_locator(),
            metatraffic_multicast: udp.metatraffic_multicast_locator(),
            spdp_destinations: udp.spdp_destinations().to_vec(),
            own,
            inboxes,
            transports,
        };
        ways.transports.push(Box::new(udp));
        Ok(ways)
    }

    /// The locators of the transports other than UDP (in-process, shared memory), in the
    /// order discovery prefers them.
    pub(crate) fn other_locators(&self) -> &[Locator] {
        &self.inboxes.locators
    }

    /// The ways in the participant serves itself, each with a thread (or polled).
    pub(crate) fn own_channels(&self) -> Vec<Arc<dyn ReceiveChannel>> {
        self.own.clone()
    }

    /// The shared ways in (in-process queue, shared-memory inbox) a thread waiting for the
    /// participant may poll itself ([`Hub::poll`]).
    pub(crate) fn hub(&self) -> Option<&Arc<Hub>> {
        self.inboxes.hub.as_ref()
    }

    /// Joins the ways in the participant shares (the process's multicast sockets, and its
    /// inboxes), each datagram handed to `deliver`; it leaves when the memberships drop.
    pub(crate) fn join(&self, deliver: &Deliver) -> io::Result<Vec<Membership>> {
        let mut memberships = self.transports.join_shared(deliver)?;
        if let Some(hub) = &self.inboxes.hub {
            memberships.push(hub.join(Arc::clone(deliver))?);
        }
        Ok(memberships)
    }
}

impl Inboxes {
    /// Those of another participant of this process configured alike, or new ones (never
    /// shared in the busy-poll mode).
    fn get(config: &TransportConfig) -> Result<Arc<Inboxes>, TransportError> {
        if config.busy_poll() {
            return Ok(Arc::new(Inboxes::open(config, false)?));
        }
        let mut registry = lock(&INBOXES);
        let pid = std::process::id();
        if registry
            .as_ref()
            .is_some_and(|(made_by, _)| *made_by != pid)
        {
            *registry = None;
        }
        let (_, registry) = registry.get_or_insert_with(|| (pid, Vec::new()));
        registry.retain(|(_, w)| w.strong_count() > 0);
        if let Some(inboxes) = registry
            .iter()
            .filter(|(c, _)| c == config)
            .find_map(|(_, w)| w.upgrade())
        {
            return Ok(inboxes);
        }
        let inboxes = Arc::new(Inboxes::open(config, true)?);
        registry.push((config.clone(), Arc::downgrade(&inboxes)));
        Ok(inboxes)
    }

    fn open(config: &TransportConfig, shared: bool) -> Result<Inboxes, TransportError> {
        let mut transports: Vec<Arc<dyn Transport>> = Vec::new();
        let mut locators = Vec::new();
        if config.in_process() {
            // First: preferred to UDP for the participants of this process.
            let in_process = InProcessTransport::open_with(config.receive_spin());
            locators.push(in_process.locator());
            transports.push(Arc::new(in_process));
        }
        if config.shared_memory() {
            // Next: preferred to UDP for the participants of this host. In the busy-poll
            // mode its inbox is polled: senders skip the wake-up.
            let wake = if config.busy_poll() {
                Wake::Polled
            } else {
                Wake::Notified {
                    spin: config.receive_spin(),
                }
            };
            match SharedMemoryTransport::open_with(wake) {
                Ok(shm) => {
                    locators.push(shm.locator());
                    transports.push(Arc::new(shm));
                }
                Err(e) => warn_user(format_args!(
                    "FerroDDS: shared memory unavailable ({e}); this host's participants are reached over UDP"
                )),
            }
        }
        let mut hub = None;
        if shared && !transports.is_empty() {
            let mut named = Vec::new();
            for t in &transports {
                // `ferrodds-in-pr`, `ferrodds-shared` (Linux keeps 15 bytes of a name).
                let name: String = format!("ferrodds-{}", t.name()).chars().take(15).collect();
                for c in t.receive_channels().map_err(TransportError::Channel)? {
                    named.push((name.clone(), c));
                }
            }
            hub = Some(Hub::new(named));
        }
        Ok(Inboxes {
            transports,
            locators,
            hub,
        })
    }
}
