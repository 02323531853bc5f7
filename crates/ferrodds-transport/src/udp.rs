//! UDPv4 sockets for RTPS: unicast and multicast receive, send to locators, large buffers.
//!
//! Sockets are made and configured with `socket2`; datagrams are received with
//! `nix::sys::socket::recvmsg`, which fills a caller's `&mut [u8]` and reports the source
//! address and truncation without `unsafe` (socket2's receive calls want
//! `&mut [MaybeUninit<u8>]`, which a `&mut [u8]` becomes only through `unsafe`).

use std::io::{self, IoSliceMut};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{recvmsg, MsgFlags, SockaddrIn};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::locator::Locator;

/// Receive buffer size asked for by default: 4 MiB.
pub const DEFAULT_RECEIVE_BUFFER_SIZE: usize = 4 << 20;
/// Send buffer size asked for by default: 1 MiB.
pub const DEFAULT_SEND_BUFFER_SIZE: usize = 1 << 20;
/// Multicast TTL by default: 1, the local link only.
pub const DEFAULT_MULTICAST_TTL: u32 = 1;
/// The largest buffer size passed to the kernel (`setsockopt` takes a C `int`).
pub const MAX_BUFFER_SIZE: usize = i32::MAX as usize;
/// When the kernel refuses a buffer size outright (BSDs and macOS do, with `ENOBUFS`, where
/// Linux silently caps), it is halved and tried again down to this size.
const SMALLEST_BUFFER_RETRY: usize = 64 << 10;

/// How a socket is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketOptions {
    /// `SO_RCVBUF` to ask for, in bytes; 0 leaves the kernel's default.
    pub receive_buffer_size: usize,
    /// `SO_SNDBUF` to ask for, in bytes; 0 leaves the kernel's default.
    pub send_buffer_size: usize,
    /// `IP_MULTICAST_IF`: the interface address multicast is sent from. `None` leaves the
    /// choice to the routing table.
    pub multicast_interface: Option<Ipv4Addr>,
    /// `IP_MULTICAST_TTL`.
    pub multicast_ttl: u32,
    /// `IP_MULTICAST_LOOP`: whether this host's own sockets receive what it sends to a group.
    /// Needed for participants on one host to see each other's multicast.
    pub multicast_loop: bool,
    /// `SO_RCVTIMEO`: how long [`UdpSocket::receive`] blocks; `None` blocks until a datagram
    /// comes.
    pub receive_timeout: Option<Duration>,
}

impl Default for SocketOptions {
    fn default() -> Self {
        SocketOptions {
            receive_buffer_size: DEFAULT_RECEIVE_BUFFER_SIZE,
            send_buffer_size: DEFAULT_SEND_BUFFER_SIZE,
            multicast_interface: None,
            multicast_ttl: DEFAULT_MULTICAST_TTL,
            multicast_loop: true,
            receive_timeout: None,
        }
    }
}

/// A socket buffer size: what was asked for and what the kernel reports it granted.
///
/// On Linux the kernel caps a request at `net.core.rmem_max` (`wmem_max` for sending), then
/// doubles it to leave room for its own bookkeeping (socket(7)), and `getsockopt` reports the
/// doubled value: asking for 4 MiB under a 4 MiB cap reports 8 MiB granted. This crate never
/// changes those sysctls; raise them (`sysctl -w net.core.rmem_max=…`) when
/// [`BufferSize::is_capped`] says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferSize {
    /// Bytes asked for (0: the kernel's default was left alone).
    pub requested: usize,
    /// Bytes the kernel reports (`getsockopt`).
    pub granted: usize,
}

impl BufferSize {
    /// Whether the kernel granted less than was asked for.
    pub fn is_capped(&self) -> bool {
        // Linux reports twice the usable size; other systems report what they set.
        let reported_per_byte = if cfg!(any(target_os = "linux", target_os = "android")) {
            2
        } else {
            1
        };
        self.requested != 0 && self.granted < self.requested.saturating_mul(reported_per_byte)
    }
}

/// Both buffer sizes of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferSizes {
    /// `SO_RCVBUF`.
    pub receive: BufferSize,
    /// `SO_SNDBUF`.
    pub send: BufferSize,
}

/// A datagram received into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Received {
    /// Bytes written at the start of the buffer.
    pub len: usize,
    /// Who sent it.
    pub source: SocketAddrV4,
    /// The datagram was longer than the buffer and its tail is lost (`MSG_TRUNC`).
    pub truncated: bool,
}

/// What [`UdpSocket::send_to_locators`] did.
#[derive(Debug, Default)]
#[must_use]
pub struct SendSummary {
    /// Locators the datagram was sent to.
    pub sent: usize,
    /// Locators skipped: not UDPv4, or a port above 65535.
    pub skipped: usize,
    /// Locators whose send failed.
    pub failed: usize,
    /// The first failure and its locator.
    pub first_error: Option<(Locator, io::Error)>,
}

/// Why a socket could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SocketError {
    /// `socket(2)` failed.
    #[error("cannot create a UDPv4 socket: {0}")]
    Create(#[source] io::Error),
    /// A socket option was refused.
    #[error("cannot set {option} on the socket for {address}: {source}")]
    Option {
        /// The option, as in `setsockopt` (`SO_REUSEADDR`, `IP_MULTICAST_IF`, …).
        option: &'static str,
        /// The address the socket is for.
        address: SocketAddrV4,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// `bind(2)` failed; [`SocketError::is_address_in_use`] tells a taken port apart.
    #[error("cannot bind a UDP socket to {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddrV4,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// `IP_ADD_MEMBERSHIP` failed.
    #[error("cannot join multicast group {group} on interface {interface}: {source}")]
    JoinMulticast {
        /// The group.
        group: Ipv4Addr,
        /// The interface address.
        interface: Ipv4Addr,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// The address given as a multicast group is not one.
    #[error("{group} is not a multicast address (224.0.0.0/4)")]
    NotMulticast {
        /// The address.
        group: Ipv4Addr,
    },
}

impl SocketError {
    /// Whether `bind` failed because another socket holds the port.
    pub fn is_address_in_use(&self) -> bool {
        matches!(self, SocketError::Bind { source, .. } if source.kind() == io::ErrorKind::AddrInUse)
    }
}

/// A bound UDPv4 socket: unicast ([`UdpSocket::bind_unicast`]) or a multicast group member
/// ([`UdpSocket::bind_multicast`]). Every socket can send, to unicast and multicast
/// destinations alike.
///
/// All methods take `&self`: one thread may block in [`UdpSocket::receive`] while others
/// send.
#[derive(Debug)]
pub struct UdpSocket {
    socket: Socket,
    local_address: SocketAddrV4,
    multicast_group: Option<Ipv4Addr>,
    buffer_sizes: BufferSizes,
    /// Set by [`UdpSocket::stop_receiving`], shared with the handles of
    /// [`UdpSocket::try_clone`]: how a receive tells the end of reading from an empty
    /// datagram (the source address `recvmsg` reports for the former is not to be read).
    stopped: Arc<AtomicBool>,
}

impl UdpSocket {
    /// A unicast socket bound to `address` (`0.0.0.0` for every interface; port 0 for one
    /// the system picks).
    ///
    /// `SO_REUSEADDR` is deliberately not set, so that binding a port another socket holds
    /// fails with [`SocketError::is_address_in_use`]: participant-id probing depends on it.
    pub fn bind_unicast(
        address: SocketAddrV4,
        options: &SocketOptions,
    ) -> Result<UdpSocket, SocketError> {
        let socket = new_socket()?;
        let buffer_sizes = configure(&socket, address, options)?;
        socket
            .bind(&SockAddr::from(address))
            .map_err(|source| SocketError::Bind { address, source })?;
        UdpSocket::finish(socket, address, None, buffer_sizes)
    }

    /// A socket that receives what is sent to `group:port`, joined on the interface that has
    /// the address `interface`.
    ///
    /// `SO_REUSEADDR` (and `SO_REUSEPORT` where the system has it) let every participant on
    /// the host bind the same port; each gets its own copy of every datagram. The socket is
    /// bound to the group address itself, so on Linux it receives only datagrams sent to that
    /// group, not unicast to the port nor other groups that another socket joined.
    pub fn bind_multicast(
        group: Ipv4Addr,
        port: u16,
        interface: Ipv4Addr,
        options: &SocketOptions,
    ) -> Result<UdpSocket, SocketError> {
        if !group.is_multicast() {
            return Err(SocketError::NotMulticast { group });
        }
        let address = SocketAddrV4::new(group, port);
        let socket = new_socket()?;
        let option_error = |option| {
            move |source| SocketError::Option {
                option,
                address,
                source,
            }
        };
        socket
            .set_reuse_address(true)
            .map_err(option_error("SO_REUSEADDR"))?;
        #[cfg(not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin")))]
        socket
            .set_reuse_port(true)
            .map_err(option_error("SO_REUSEPORT"))?;
        let buffer_sizes = configure(&socket, address, options)?;
        socket
            .bind(&SockAddr::from(address))
            .map_err(|source| SocketError::Bind { address, source })?;
        socket
            .join_multicast_v4(&group, &interface)
            .map_err(|source| SocketError::JoinMulticast {
                group,
                interface,
                source,
            })?;
        UdpSocket::finish(socket, address, Some(group), buffer_sizes)
    }

    fn finish(
        socket: Socket,
        requested: SocketAddrV4,
        multicast_group: Option<Ipv4Addr>,
        buffer_sizes: BufferSizes,
    ) -> Result<UdpSocket, SocketError> {
        let local_address = socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket_ipv4())
            .unwrap_or(requested);
        Ok(UdpSocket {
            socket,
            local_address,
            multicast_group,
            buffer_sizes,
            stopped: Arc::default(),
        })
    }

    /// The address the socket is bound to (the port the system chose, if 0 was asked for).
    pub fn local_address(&self) -> SocketAddrV4 {
        self.local_address
    }

    /// The group joined, for a multicast socket.
    pub fn multicast_group(&self) -> Option<Ipv4Addr> {
        self.multicast_group
    }

    /// The buffer sizes asked for and granted.
    pub fn buffer_sizes(&self) -> BufferSizes {
        self.buffer_sizes
    }

    /// Changes how long [`UdpSocket::receive`] blocks (`None`: until a datagram comes).
    ///
    /// A zero duration is refused with [`io::ErrorKind::InvalidInput`] (the kernel would
    /// read it as "forever"); use [`UdpSocket::try_receive`] not to block.
    pub fn set_receive_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        if timeout == Some(Duration::ZERO) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a zero receive timeout would block forever; use try_receive",
            ));
        }
        self.socket.set_read_timeout(timeout)
    }

    /// Sends one datagram to `destination` (unicast or multicast).
    pub fn send_to(&self, bytes: &[u8], destination: SocketAddrV4) -> io::Result<usize> {
        self.socket.send_to(bytes, &SockAddr::from(destination))
    }

    /// Sends one datagram made of `parts`, in order, to `destination` (a vectored send: the
    /// parts are not copied together first).
    pub fn send_parts_to(&self, parts: &[&[u8]], destination: SocketAddrV4) -> io::Result<usize> {
        // On the stack for the usual few parts (a datagram of three fragments has seven).
        const ON_STACK: usize = 16;
        let to = SockAddr::from(destination);
        if parts.len() <= ON_STACK {
            let mut slices = [io::IoSlice::new(&[]); ON_STACK];
            for (s, p) in slices.iter_mut().zip(parts) {
                *s = io::IoSlice::new(p);
            }
            return self.socket.send_to_vectored(&slices[..parts.len()], &to);
        }
        let slices: Vec<io::IoSlice<'_>> = parts.iter().map(|p| io::IoSlice::new(p)).collect();
        self.socket.send_to_vectored(&slices, &to)
    }

    /// Sends one datagram to each UDPv4 locator, skipping other kinds; a failure for one
    /// locator does not stop the others.
    pub fn send_to_locators(&self, bytes: &[u8], locators: &[Locator]) -> SendSummary {
        let mut summary = SendSummary::default();
        for locator in locators {
            let Ok(destination) = locator.to_udpv4() else {
                summary.skipped += 1;
                continue;
            };
            match self.send_to(bytes, destination) {
                Ok(_) => summary.sent += 1,
                Err(e) => {
                    summary.failed += 1;
                    summary.first_error.get_or_insert((*locator, e));
                }
            }
        }
        summary
    }

    /// Receives one datagram into `buffer`, blocking up to the receive timeout.
    ///
    /// `Ok(None)` when the timeout passed (or a signal interrupted the wait) with nothing
    /// received.
    pub fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<Received>> {
        self.receive_with(buffer, MsgFlags::empty())
    }

    /// Receives one datagram into `buffer` if one is waiting, without blocking
    /// (`MSG_DONTWAIT`): for busy-polling. `Ok(None)` when none is.
    pub fn try_receive(&self, buffer: &mut [u8]) -> io::Result<Option<Received>> {
        self.receive_with(buffer, MsgFlags::MSG_DONTWAIT)
    }

    fn receive_with(&self, buffer: &mut [u8], flags: MsgFlags) -> io::Result<Option<Received>> {
        let mut iov = [IoSliceMut::new(buffer)];
        let message = match recvmsg::<SockaddrIn>(self.socket.as_raw_fd(), &mut iov, None, flags) {
            Ok(message) => message,
            // EWOULDBLOCK is EAGAIN on every system nix supports.
            Err(Errno::EAGAIN | Errno::EINTR) => return Ok(None),
            Err(e) => return Err(io::Error::from(e)),
        };
        if message.bytes == 0 && self.stopped.load(Ordering::Acquire) {
            // A socket shut for reading ([`UdpSocket::stop_receiving`]) reads nothing, from
            // nowhere: nix hands back the address buffer even when the kernel wrote no
            // address into it, so the flag decides, not the address.
            return Ok(None);
        }
        let source = message
            .address
            .map(|a| SocketAddrV4::new(a.ip(), a.port()))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "datagram without an IPv4 source address",
                )
            })?;
        Ok(Some(Received {
            len: message.bytes,
            source,
            truncated: message.flags.contains(MsgFlags::MSG_TRUNC),
        }))
    }

    /// Wakes every thread blocked in [`UdpSocket::receive`] on this socket (through any
    /// handle of it), and makes later receives return at once with nothing: for closing
    /// without a receive timeout to wait out. Sending still works.
    pub fn stop_receiving(&self) {
        // On an unconnected UDP socket Linux answers ENOTCONN, yet marks the socket shut
        // for reading and wakes its sleepers (which then read nothing): all this needs.
        self.stopped.store(true, Ordering::Release);
        let _ = self.socket.shutdown(std::net::Shutdown::Read);
    }

    /// Whether [`UdpSocket::stop_receiving`] was called (on this handle or another of the
    /// socket's).
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// A second handle on the same socket (`dup(2)`), e.g. for a receive thread.
    pub fn try_clone(&self) -> io::Result<UdpSocket> {
        Ok(UdpSocket {
            socket: self.socket.try_clone()?,
            local_address: self.local_address,
            multicast_group: self.multicast_group,
            buffer_sizes: self.buffer_sizes,
            stopped: Arc::clone(&self.stopped),
        })
    }
}

impl AsFd for UdpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}

fn new_socket() -> Result<Socket, SocketError> {
    Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP)).map_err(SocketError::Create)
}

/// Sets buffers, the multicast send options and the receive timeout; returns the buffer
/// sizes granted.
fn configure(
    socket: &Socket,
    address: SocketAddrV4,
    options: &SocketOptions,
) -> Result<BufferSizes, SocketError> {
    let option_error = |option| {
        move |source| SocketError::Option {
            option,
            address,
            source,
        }
    };
    let receive = set_buffer_size(
        options.receive_buffer_size,
        |size| socket.set_recv_buffer_size(size),
        || socket.recv_buffer_size(),
    )
    .map_err(option_error("SO_RCVBUF"))?;
    let send = set_buffer_size(
        options.send_buffer_size,
        |size| socket.set_send_buffer_size(size),
        || socket.send_buffer_size(),
    )
    .map_err(option_error("SO_SNDBUF"))?;
    if let Some(interface) = options.multicast_interface {
        socket
            .set_multicast_if_v4(&interface)
            .map_err(option_error("IP_MULTICAST_IF"))?;
    }
    socket
        .set_multicast_ttl_v4(options.multicast_ttl)
        .map_err(option_error("IP_MULTICAST_TTL"))?;
    socket
        .set_multicast_loop_v4(options.multicast_loop)
        .map_err(option_error("IP_MULTICAST_LOOP"))?;
    if options.receive_timeout == Some(Duration::ZERO) {
        return Err(option_error("SO_RCVTIMEO")(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a zero receive timeout would block forever",
        )));
    }
    socket
        .set_read_timeout(options.receive_timeout)
        .map_err(option_error("SO_RCVTIMEO"))?;
    Ok(BufferSizes { receive, send })
}

/// Asks for `requested` bytes, halving on outright refusal down to
/// [`SMALLEST_BUFFER_RETRY`], and reads back what was granted.
fn set_buffer_size(
    requested: usize,
    set: impl Fn(usize) -> io::Result<()>,
    get: impl Fn() -> io::Result<usize>,
) -> io::Result<BufferSize> {
    let requested = requested.min(MAX_BUFFER_SIZE);
    if requested != 0 {
        let mut size = requested;
        // Bounded: at most 31 halvings of a size below 2^31.
        while let Err(e) = set(size) {
            if size <= SMALLEST_BUFFER_RETRY {
                return Err(e);
            }
            size /= 2;
        }
    }
    Ok(BufferSize {
        requested,
        granted: get()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_on_linux_means_less_than_twice() {
        let b = |requested, granted| BufferSize { requested, granted };
        if cfg!(target_os = "linux") {
            assert!(!b(4 << 20, 8 << 20).is_capped());
            assert!(b(16 << 20, 8 << 20).is_capped());
            assert!(b(6 << 20, 8 << 20).is_capped());
        }
        assert!(!b(0, 212_992).is_capped());
    }

    #[test]
    fn buffer_size_halves_on_refusal() {
        let granted = std::cell::Cell::new(0);
        let size = set_buffer_size(
            1 << 20,
            |s| {
                if s > 256 << 10 {
                    Err(io::Error::from_raw_os_error(nix::libc::ENOBUFS))
                } else {
                    granted.set(s);
                    Ok(())
                }
            },
            || Ok(granted.get()),
        )
        .unwrap();
        assert_eq!(
            size,
            BufferSize {
                requested: 1 << 20,
                granted: 256 << 10
            }
        );
        let refused = set_buffer_size(
            1 << 20,
            |_| Err(io::Error::from_raw_os_error(nix::libc::ENOBUFS)),
            || Ok(0),
        );
        assert!(refused.is_err());
    }

    #[test]
    fn not_a_multicast_group() {
        let err = UdpSocket::bind_multicast(
            Ipv4Addr::LOCALHOST,
            0,
            Ipv4Addr::LOCALHOST,
            &SocketOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "127.0.0.1 is not a multicast address (224.0.0.0/4)"
        );
    }

    #[test]
    fn zero_timeout_is_refused() {
        let options = SocketOptions {
            receive_timeout: Some(Duration::ZERO),
            ..SocketOptions::default()
        };
        let err = UdpSocket::bind_unicast(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), &options)
            .unwrap_err();
        assert!(
            err.to_string().starts_with("cannot set SO_RCVTIMEO"),
            "{err}"
        );
        let socket = UdpSocket::bind_unicast(
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
            &SocketOptions::default(),
        )
        .unwrap();
        assert_eq!(
            socket
                .set_receive_timeout(Some(Duration::ZERO))
                .unwrap_err()
                .kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn stop_receiving_wakes_a_receive_blocked_without_timeout() {
        let socket = UdpSocket::bind_unicast(
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
            &SocketOptions::default(),
        )
        .unwrap();
        socket.set_receive_timeout(None).unwrap();
        let receiving = socket.try_clone().unwrap();
        let (done, woke) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            let _ = done.send(receiving.receive(&mut buf).map(|r| r.is_none()).ok());
        });
        // Let the thread block (if it has not yet, the receive returns at once anyway).
        std::thread::sleep(Duration::from_millis(50));
        socket.stop_receiving();
        assert_eq!(woke.recv_timeout(Duration::from_secs(5)), Ok(Some(true)));
        t.join().unwrap();
        // Sending still works.
        let peer = UdpSocket::bind_unicast(
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
            &SocketOptions::default(),
        )
        .unwrap();
        assert_eq!(socket.send_to(b"x", peer.local_address()).unwrap(), 1);
    }
}
