//! `ferrodds scale-node` (hidden): the FerroDDS side of `scripts/bench-scale`, the same
//! system as `benches/scale/cyclone_scale_node.c` builds with Cyclone DDS — N participants
//! in this process, each with five writers and five readers of ShapeType (topics `scale_0`
//! .. `scale_9`: participant i writes topics (i + j) % 10 and reads topics (i + j + 5) % 10,
//! j = 0..4), reliable and volatile; with 0 endpoints, participants alone.
//!
//! Prints `base_rss KB` and waits for a line on stdin before creating anything (the driver
//! measures the process meanwhile), then `created US` once everything exists and
//! `matched US` (microseconds since the Unix epoch) once every reader matched the TOTAL/2
//! writers of its topic and every writer the TOTAL/2 readers; then idles until stdin
//! closes (which ends it unmatched too). The driver measures memory, CPU and wake-ups from
//! /proc.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;
use ferrodds::{DataReader, DataWriter, DomainParticipant, Qos};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::shapes::shape::ShapeType;

/// `ferrodds scale-node`.
#[derive(Args, Clone, Debug)]
pub(crate) struct ScaleArgs {
    domain: u32,
    /// Index of this process's first participant in the whole system.
    first: usize,
    /// Participants in this process.
    count: usize,
    /// Participants in the whole system.
    total: usize,
    /// Endpoints per participant: 10 (five writers, five readers) or 0.
    endpoints: usize,
    /// Network interface.
    #[arg(long, short, default_value = "lo")]
    interface: String,
    /// Peers of this host over shared memory (FerroDDS's default) or UDP only.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    shared_memory: bool,
}

fn now_us() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

pub(crate) fn run(args: &ScaleArgs) -> Result<(), String> {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "base_rss {}", rss_kb());
    let _ = out.flush();
    // The driver measures this process before anything is created, then says go.
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    let qos_w = Qos::writer().reliable();
    let qos_r = Qos::reader().reliable();
    let mut participants = Vec::new();
    let mut writers: Vec<DataWriter<ShapeType>> = Vec::new();
    let mut readers: Vec<DataReader<ShapeType>> = Vec::new();
    for p in 0..args.count {
        let i = args.first + p;
        let dp = DomainParticipant::builder()
            .map_err(|e| e.to_string())?
            .domain_id(args.domain)
            .interface(&args.interface)
            .map_err(|e| e.to_string())?
            .shared_memory(args.shared_memory)
            .build()
            .map_err(|e| format!("participant {i}: {e}"))?;
        if args.endpoints > 0 {
            for j in 0..5 {
                let t = dp
                    .create_topic::<ShapeType>(&format!("scale_{}", (i + j) % 10))
                    .map_err(|e| e.to_string())?;
                writers.push(
                    dp.create_writer(&t, qos_w.clone())
                        .map_err(|e| e.to_string())?,
                );
                let t = dp
                    .create_topic::<ShapeType>(&format!("scale_{}", (i + j + 5) % 10))
                    .map_err(|e| e.to_string())?;
                readers.push(
                    dp.create_reader(&t, qos_r.clone())
                        .map_err(|e| e.to_string())?,
                );
            }
        }
        participants.push(dp);
    }
    let _ = writeln!(out, "created {}", now_us());
    let _ = out.flush();
    let expected = args.total / 2;
    // Standard input closing ends the node, matched or not: one that never matched must
    // not linger and load the machine for the next run. Looked at while waiting for the
    // matches (no thread of its own: the driver counts threads).
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 64];
    // Waits up to 5 ms for standard input; true once it is closed.
    let stdin_closed = |stdin: &mut std::io::Stdin, buf: &mut [u8]| {
        let ready = {
            let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(5u8))
        };
        matches!(ready, Ok(n) if n > 0) && matches!(stdin.read(buf), Ok(0) | Err(_))
    };
    let mut closed = false;
    while !closed {
        let done = writers
            .iter()
            .all(|w| w.publication_matched_status().current_count as usize >= expected)
            && readers
                .iter()
                .all(|r| r.subscription_matched_status().current_count as usize >= expected);
        if done {
            let _ = writeln!(out, "matched {}", now_us());
            let _ = out.flush();
            break;
        }
        closed = stdin_closed(&mut stdin, &mut buf);
    }
    // Idle, blocked on standard input (no wake-ups: the driver counts them meanwhile).
    while !closed && matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
    drop(readers);
    drop(writers);
    drop(participants);
    Ok(())
}
