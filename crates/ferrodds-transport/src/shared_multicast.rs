//! One multicast socket and one receive thread per group, port and interface for all the
//! participants of a process.
//!
//! Every participant listens to its domain's SPDP group, where each peer announces itself
//! every few seconds. With a socket per participant, the kernel copies every announcement
//! to each of them and wakes a thread for each: a process of 25 participants among 100
//! woke 25 times for each of the 50 announcements a second (the hundred-participant
//! benchmark's idle wake-ups, docs/benchmarks.md). Here the participants of a process share
//! one socket, read by one thread that hands each datagram to every member in turn.
//!
//! A [`MulticastGroup`] binds the socket ([`MulticastGroup::bind`]: the one already bound
//! in this process for the same group, port and interface, or a new one); a participant
//! [`MulticastGroup::join`]s it with the function its datagrams go to, and leaves when the
//! [`Membership`] drops. The thread starts with the first member and stops when the last
//! handle on the group goes.

use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::hub::{Deliver, Hub, Membership};
use crate::transport::{ReceiveChannel, Traffic};
use crate::udp::{SocketError, SocketOptions, UdpSocket};
use crate::udp_transport::UdpChannel;

/// Which socket: the group, the port and the interface address it was joined on.
type Key = (Ipv4Addr, u16, Ipv4Addr);

/// The groups bound in this process, with the id of the process that bound them: a child
/// made by `fork` (Python's `multiprocessing` does that) inherits the parent's groups
/// without their threads, and must bind its own.
static GROUPS: Mutex<Option<(u32, Groups)>> = Mutex::new(None);

/// The groups of a process, by socket.
type Groups = HashMap<Key, Weak<MulticastGroup>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A multicast socket shared by the participants of this process, read by one thread (a
/// [`Hub`] of one channel).
#[derive(Debug)]
pub struct MulticastGroup {
    socket: UdpSocket,
    hub: Arc<Hub>,
}

impl MulticastGroup {
    /// The socket of this process on `group:port`, joined on `interface`: the one bound
    /// already, or a new one bound with `options` (the first participant's options are
    /// the group's).
    pub fn bind(
        group: Ipv4Addr,
        port: u16,
        interface: Ipv4Addr,
        options: &SocketOptions,
    ) -> Result<Arc<MulticastGroup>, SocketError> {
        let key = (group, port, interface);
        let mut groups = lock(&GROUPS);
        let pid = std::process::id();
        if groups.as_ref().is_some_and(|(made_by, _)| *made_by != pid) {
            *groups = None;
        }
        let (_, groups) = groups.get_or_insert_with(|| (pid, HashMap::new()));
        if let Some(existing) = groups.get(&key).and_then(Weak::upgrade) {
            return Ok(existing);
        }
        let socket = UdpSocket::bind_multicast(group, port, interface, options)?;
        let channel = UdpChannel::new(&socket, Traffic::Metatraffic).map_err(|source| {
            SocketError::Option {
                option: "SO_RCVTIMEO (on a handle of its own for the receive thread)",
                address: socket.local_address(),
                source,
            }
        })?;
        let hub = Hub::new(vec![(
            format!("ferrodds-m{port}"),
            Arc::new(channel) as Arc<dyn ReceiveChannel>,
        )]);
        let bound = Arc::new(MulticastGroup { socket, hub });
        groups.retain(|_, g| g.strong_count() > 0);
        groups.insert(key, Arc::downgrade(&bound));
        Ok(bound)
    }

    /// The socket (to send from, or to look at; its datagrams are the receive thread's).
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    /// Adds a member whose datagrams go to `deliver`, starting the receive thread with the
    /// first.
    pub fn join(&self, deliver: Deliver) -> io::Result<Membership> {
        self.hub.join(deliver)
    }
}
