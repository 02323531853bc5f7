//! Several hosts: FerroDDS participants on three hosts of their own (network namespaces
//! cabled to one bridge, `robust_common::Lan`), each choosing its interface itself and
//! discovering the others by multicast across the bridge, as on a LAN.
//!
//! One host is cut off (its cable pulled at the switch) for longer than the lease, while a
//! reliable TRANSIENT_LOCAL writer on another host goes on writing; then it is plugged back.
//! The others notice it leave, it notices them leave, they find each other again, and its
//! reader ends with every sample exactly once, in order. Domain id 202.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod robust_common;

use std::time::{Duration, Instant};

use robust_common::{cannot_run, ferro_peer_on, report, Lan, Proc};
use serde_json::json;

/// Runs the FerroDDS peer when this binary was started as one.
/// Ignored: it is not a test but the peer process's entry point, which `ferro_peer` starts
/// with `--ignored`; run alone it would pass without testing anything.
#[test]
#[ignore = "the robust_peer entry point, started by the other tests"]
fn robust_peer_process() {
    robust_common::peer_entry();
}

const LEASE_MS: u64 = 3000;
/// Samples written, one every `PERIOD_MS`: long enough to outlast the cut.
const COUNT: u32 = 400;
const PERIOD_MS: u64 = 30;

fn peer(lan: &Lan, host: usize, role: &str, domain: &str) -> Proc {
    let lease = LEASE_MS.to_string();
    let count = COUNT.to_string();
    let period = (PERIOD_MS * 1000).to_string();
    let mut args = vec![
        role,
        "--domain",
        domain,
        "--interface",
        "auto",
        "--lease-ms",
        &lease,
        "--transient-local",
        "--watch",
        "--count",
        &count,
        "--progress-every",
        "20",
    ];
    if role == "pub" {
        args.extend_from_slice(&[
            "--readers",
            "2",
            "--period-us",
            &period,
            "--max-blocking-ms",
            "100",
            "--ack-timeout-s",
            "60",
            "--linger-ms",
            "500",
        ]);
    } else {
        args.extend_from_slice(&["--timeout-s", "60", "--linger-ms", "500"]);
    }
    ferro_peer_on(&format!("{role} on host {host}"), lan, host, &args)
}

/// Waits for `p`'s `event` line whose `field` equals `value`.
fn counted(p: &mut Proc, event: &str, field: &str, value: u64, timeout: Duration) -> Instant {
    p.expect(&format!("{event} {field} = {value}"), timeout, |v| {
        v["event"] == event && v[field] == value
    })
    .0
}

#[test]
fn a_host_cut_off_beyond_its_lease_comes_back_and_misses_nothing() {
    let lan = match Lan::create("hosts202", 202, 3) {
        Ok(lan) => lan,
        Err(e) => {
            cannot_run::skip(
                "a_host_cut_off_beyond_its_lease_comes_back_and_misses_nothing",
                &format!(
                    "cannot build three hosts of network namespaces ({e}); needs root and iproute2"
                ),
            );
            return;
        }
    };
    let domain = "202";
    let mut b = peer(&lan, 2, "sub", domain);
    let mut c = peer(&lan, 3, "sub", domain);
    let mut a = peer(&lan, 1, "pub", domain);
    let t = Duration::from_secs(20);

    // Everyone finds everyone across the bridge, each on the interface it chose (in
    // whatever order the lines came: a wait skips the lines before the one it waits for).
    let said = |p: &mut Proc, event: &str, field: &str, value: u64| {
        let is =
            |v: &serde_json::Value| v["event"] == event && (field.is_empty() || v[field] == value);
        if !p.seen.iter().any(is) {
            p.expect(&format!("{event} {field} = {value}"), t, is);
        }
    };
    said(&mut a, "matched", "", 0);
    for p in [&mut a, &mut b, &mut c] {
        said(p, "peers", "participants", 2);
    }
    let ahead = |p: &mut Proc, n: u64| {
        p.expect(&format!("{n} received"), t, |v| {
            v["event"] == "progress" && v["received"].as_u64().is_some_and(|r| r >= n)
        });
    };
    ahead(&mut c, 40);

    // Host 3's cable is pulled while the writer goes on writing.
    lan.cable(3, false);
    let cut = Instant::now();
    let lease = Duration::from_millis(LEASE_MS);
    let limit = lease * 3;
    let a_noticed = counted(&mut a, "endpoints", "matched", 1, limit);
    let b_noticed = counted(&mut b, "peers", "participants", 1, limit);
    let c_noticed = counted(&mut c, "peers", "participants", 0, limit);
    for (who, at) in [
        ("host 1", a_noticed),
        ("host 2", b_noticed),
        ("host 3", c_noticed),
    ] {
        let after = at.duration_since(cut);
        assert!(
            after >= lease / 2,
            "{who} noticed host 3's cut after {after:?}, sooner than the lease allows"
        );
    }
    // Samples written while host 3 is away.
    ahead(&mut b, 200);
    lan.cable(3, true);
    let plugged = Instant::now();

    // It finds the others again, and the writer's reader again.
    let c_back = counted(&mut c, "peers", "participants", 2, t);
    let a_back = counted(&mut a, "endpoints", "matched", 2, t);

    // Every sample exactly once and in order, on both readers, and all acknowledged.
    for p in [&mut b, &mut c] {
        let (_, done) = p.event("done", Duration::from_secs(60));
        assert_eq!(
            (
                done["received"].as_u64(),
                done["duplicates"].as_u64(),
                done["out_of_order"].as_u64()
            ),
            (Some(u64::from(COUNT)), Some(0), Some(0)),
            "{}: {done}",
            p.name
        );
        assert_eq!(p.wait(Duration::from_secs(10)), 0, "{}", p.name);
    }
    let (_, acked) = a.event("acked", Duration::from_secs(60));
    assert_eq!(
        acked["acked"], true,
        "the writer's samples were not all acknowledged: {acked}"
    );
    assert_eq!(a.wait(Duration::from_secs(10)), 0);

    report(json!({
        "figure": "host cut off beyond its lease (three namespaces, one bridge)",
        "lease_ms": LEASE_MS,
        "writer_noticed_ms": a_noticed.duration_since(cut).as_millis() as u64,
        "other_reader_noticed_ms": b_noticed.duration_since(cut).as_millis() as u64,
        "cut_host_noticed_ms": c_noticed.duration_since(cut).as_millis() as u64,
        "rediscovered_ms": c_back.duration_since(plugged).as_millis() as u64,
        "rematched_ms": a_back.duration_since(plugged).as_millis() as u64,
    }));
}
