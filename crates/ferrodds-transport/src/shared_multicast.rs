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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;

use crate::locator::Locator;
use crate::transport::{Datagram, MAX_UDP_DATAGRAM};
use crate::udp::{SocketError, SocketOptions, UdpSocket};

/// Where a member's datagrams go: the bytes and where they came from. Called on the
/// group's receive thread, one member after the other.
pub type Deliver = Arc<dyn Fn(&[u8], Datagram) + Send + Sync>;

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

/// A multicast socket shared by the participants of this process.
#[derive(Debug)]
pub struct MulticastGroup {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

struct Inner {
    socket: UdpSocket,
    /// The members, replaced whole on a join or a leave, so that the receive thread takes
    /// them with one reference count rather than a copy per datagram.
    members: Mutex<Arc<Vec<(u64, Deliver)>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("socket", &self.socket)
            .field("members", &lock(&self.members).len())
            .finish()
    }
}

/// A participant's place in a [`MulticastGroup`]: it leaves when this drops.
#[derive(Debug)]
pub struct Membership {
    group: Arc<MulticastGroup>,
    id: u64,
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut members = lock(&self.group.inner.members);
        let left: Vec<(u64, Deliver)> = members
            .iter()
            .filter(|(id, _)| *id != self.id)
            .cloned()
            .collect();
        *members = Arc::new(left);
    }
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
        let bound = Arc::new(MulticastGroup {
            inner: Arc::new(Inner {
                socket,
                members: Mutex::new(Arc::new(Vec::new())),
                next: AtomicU64::new(0),
            }),
            thread: Mutex::new(None),
        });
        groups.retain(|_, g| g.strong_count() > 0);
        groups.insert(key, Arc::downgrade(&bound));
        Ok(bound)
    }

    /// The socket (to send from, or to look at; its datagrams are the receive thread's).
    pub fn socket(&self) -> &UdpSocket {
        &self.inner.socket
    }

    /// Adds a member whose datagrams go to `deliver`, starting the receive thread with the
    /// first.
    pub fn join(self: &Arc<Self>, deliver: Deliver) -> io::Result<Membership> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        {
            let mut members = lock(&self.inner.members);
            let mut more = Vec::clone(&members);
            more.push((id, deliver));
            *members = Arc::new(more);
        }
        let mut thread = lock(&self.thread);
        if thread.is_none() {
            let inner = Arc::clone(&self.inner);
            let address = self.inner.socket.local_address();
            *thread = Some(
                std::thread::Builder::new()
                    .name(format!("ferrodds-m{}", address.port()))
                    .spawn(move || receive_loop(&inner))?,
            );
        }
        Ok(Membership {
            group: Arc::clone(self),
            id,
        })
    }
}

impl Drop for MulticastGroup {
    fn drop(&mut self) {
        self.inner.socket.stop_receiving();
        if let Some(t) = lock(&self.thread).take() {
            // The last handle may go on the receive thread itself (a member's participant
            // ended while it handled a datagram): that thread ends once it returns.
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

fn receive_loop(inner: &Inner) {
    let mut buffer = vec![0u8; MAX_UDP_DATAGRAM];
    loop {
        match inner.socket.receive(&mut buffer) {
            Ok(Some(received)) => {
                let datagram = Datagram {
                    len: received.len,
                    source: Locator::udpv4(*received.source.ip(), received.source.port()),
                    truncated: received.truncated,
                };
                let members = Arc::clone(&lock(&inner.members));
                for (_, deliver) in members.iter() {
                    deliver(&buffer[..received.len], datagram);
                }
            }
            // Woken with nothing: stopped, or the safety timeout.
            Ok(None) if inner.socket.is_stopped() => return,
            Ok(None) => {}
            // An error on receive is not fatal; do not spin on a persistent one.
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}
