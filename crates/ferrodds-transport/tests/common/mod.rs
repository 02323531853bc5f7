//! Helpers shared by the socket tests: loopback only, every wait bounded.

#![allow(dead_code, unreachable_pub)]

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ferrodds_transport::{list_interfaces, Received, UdpSocket};

#[path = "../../../../tests/support/cannot_run.rs"]
pub mod cannot_run;

/// How long a test waits for a datagram that should come.
pub const PATIENCE: Duration = Duration::from_secs(2);
/// The receive timeout of test sockets: one wait of [`receive_within`].
pub const RECEIVE_TIMEOUT: Duration = Duration::from_millis(50);

/// Ok when multicast on the loopback interface can be tested; Err with the reason to print
/// when skipping.
///
/// Linux leaves `IFF_MULTICAST` off on `lo`. Once per test process, if it is off, this runs
/// `ip link set lo multicast on`, which works as root (as here and in CI) and fails harmlessly
/// otherwise.
pub fn loopback_multicast() -> Result<(), String> {
    static STATE: OnceLock<Result<(), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let (name, multicast) = loopback()?;
            if multicast {
                return Ok(());
            }
            let turned_on = Command::new("ip")
                .args(["link", "set", &name, "multicast", "on"])
                .output();
            let (_, multicast) = loopback()?;
            if multicast {
                return Ok(());
            }
            let why = match turned_on {
                Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_owned(),
                Err(e) => e.to_string(),
            };
            Err(format!(
                "`ip link show {name}` lacks MULTICAST and `ip link set {name} multicast on` \
                 failed ({why}); run it as root to enable the multicast tests"
            ))
        })
        .clone()
}

/// The name of the interface holding 127.0.0.1, and whether it has `IFF_MULTICAST`.
fn loopback() -> Result<(String, bool), String> {
    let interfaces = list_interfaces().map_err(|e| e.to_string())?;
    interfaces
        .into_iter()
        .find(|i| i.address == Ipv4Addr::LOCALHOST)
        .map(|i| (i.name, i.multicast))
        .ok_or_else(|| "no interface holds 127.0.0.1".to_owned())
}

/// Skips the calling test (returns from it) with a clear message when loopback multicast
/// cannot be tested.
#[macro_export]
macro_rules! require_loopback_multicast {
    () => {
        if let Err(why) = common::loopback_multicast() {
            let test = std::thread::current().name().unwrap_or("?").to_owned();
            common::cannot_run::skip(&test, &why);
            return;
        }
    };
}

/// Receives one datagram within [`PATIENCE`]: at most `PATIENCE / RECEIVE_TIMEOUT` waits of
/// the socket's receive timeout (which the caller set).
pub fn receive_within(socket: &UdpSocket, buffer: &mut [u8]) -> Option<Received> {
    let start = Instant::now();
    let attempts = PATIENCE.as_millis() / RECEIVE_TIMEOUT.as_millis() + 1;
    for _ in 0..attempts {
        if let Some(received) = socket.receive(buffer).expect("receive") {
            return Some(received);
        }
        if start.elapsed() > PATIENCE {
            break;
        }
    }
    None
}

/// Everything waiting on the socket now, without blocking (at most 1000 datagrams).
pub fn drain(socket: &UdpSocket) -> Vec<Vec<u8>> {
    let mut buffer = [0u8; 2048];
    let mut all = Vec::new();
    for _ in 0..1000 {
        match socket.try_receive(&mut buffer).expect("try_receive") {
            Some(r) => all.push(buffer[..r.len].to_vec()),
            None => break,
        }
    }
    all
}
