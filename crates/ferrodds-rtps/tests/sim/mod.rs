//! A deterministic network of participants in one process: datagrams are dropped,
//! duplicated, reordered and delayed by a seeded generator, and time is simulated, so any
//! failing seed replays exactly. Each node is a `ParticipantCore`, driven through the same
//! `handle_*`/`poll_*` surface as the runtime drives it.

#![allow(dead_code, unreachable_pub, missing_docs)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, SystemTime};

use ferrodds_rtps::discovery::ParticipantData;
use ferrodds_rtps::wire::{GuidPrefix, Locator, Message, Submessage};
use ferrodds_rtps::{DiscoveryConfig, Participant, ParticipantCore, Timestamp};

/// SplitMix64: small, seedable, and good enough to pick which datagram to drop.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// How the network misbehaves.
#[derive(Clone, Copy, Debug)]
pub struct Faults {
    pub loss: f64,
    pub duplication: f64,
    /// Each datagram gets an extra delay uniform in 0..jitter, which reorders them.
    pub jitter: Duration,
    pub latency: Duration,
}

impl Faults {
    pub const NONE: Faults = Faults {
        loss: 0.0,
        duplication: 0.0,
        jitter: Duration::ZERO,
        latency: Duration::from_micros(50),
    };

    pub fn lossy(p: f64) -> Faults {
        Faults {
            loss: p,
            duplication: p,
            jitter: Duration::from_millis(5),
            latency: Duration::from_micros(200),
        }
    }
}

/// The simulated wall clock at `Timestamp(0)` (November 2023), the same for every node.
pub fn wall_at_zero() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
}

/// A datagram in flight: when it lands, a tie-breaking order, the node, the sender's
/// locator (the source address the receiver sees), the bytes.
type InFlight = Reverse<(Timestamp, u64, usize, Locator, Vec<u8>)>;

pub struct Network {
    /// The participants. A node made by [`Network::add_node`] announces itself nowhere
    /// (its endpoints are matched by hand); [`Network::run_discovery`] makes it discover.
    pub nodes: Vec<ParticipantCore>,
    locators: Vec<Locator>,
    in_flight: BinaryHeap<InFlight>,
    order: u64,
    pub now: Timestamp,
    pub rng: Rng,
    pub faults: Faults,
    pub datagrams_sent: u64,
    pub datagrams_dropped: u64,
    /// DATA submessages sent (user and builtin), once per datagram whatever its
    /// destinations.
    pub data_sent: u64,
}

impl Network {
    pub fn new(seed: u64, faults: Faults) -> Self {
        Network {
            nodes: Vec::new(),
            locators: Vec::new(),
            in_flight: BinaryHeap::new(),
            order: 0,
            now: Timestamp(1_000_000_000),
            rng: Rng::new(seed),
            faults,
            datagrams_sent: 0,
            datagrams_dropped: 0,
            data_sent: 0,
        }
    }

    /// Adds a participant; returns its index, GUID prefix and locator.
    pub fn add_node(&mut self) -> (usize, GuidPrefix, Locator) {
        let i = self.nodes.len();
        let mut prefix = [0u8; 12];
        prefix[0] = 0xfe;
        prefix[11] = i as u8 + 1;
        let prefix = GuidPrefix(prefix);
        let locator = Locator::udpv4(std::net::Ipv4Addr::new(127, 0, 0, 1), 7410 + 2 * i as u16);
        let silent = DiscoveryConfig {
            own: ParticipantData::new(prefix),
            spdp_destinations: Vec::new(),
            announce_period: Duration::from_secs(3600),
            type_information: true,
            other_locators: Vec::new(),
            fast_dds_xcdr1: false,
            shared_endpoints: None,
            channel_host: None,
        };
        let mut node = ParticipantCore::new(self.now, Participant::new(prefix), silent);
        node.set_wall_clock(wall_at_zero());
        self.nodes.push(node);
        self.locators.push(locator);
        (i, prefix, locator)
    }

    /// Two nodes running discovery, each announcing to both locators (as multicast would),
    /// every 500 ms, with 2 s leases; `as_` changes what node `i` announces of itself.
    pub fn discovering_pair(
        seed: u64,
        faults: Faults,
        as_: impl Fn(usize, &mut ParticipantData),
    ) -> Network {
        let mut net = Network::new(seed, faults);
        net.add_node();
        net.add_node();
        let destinations = vec![net.locator(0), net.locator(1)];
        for i in 0..2 {
            let mut own = ParticipantData::new(net.nodes[i].rtps.prefix());
            own.metatraffic_unicast_locators = vec![net.locator(i)];
            own.default_unicast_locators = vec![net.locator(i)];
            own.lease_duration = ferrodds_rtps::qos::Duration::from_secs(2);
            as_(i, &mut own);
            let config = DiscoveryConfig {
                own,
                spdp_destinations: destinations.clone(),
                announce_period: Duration::from_millis(500),
                type_information: true,
                other_locators: Vec::new(),
                fast_dds_xcdr1: false,
                shared_endpoints: None,
                channel_host: None,
            };
            net.run_discovery(i, config);
        }
        net
    }

    /// Node `i` starts over running discovery as `config` says (before endpoints are
    /// added to it).
    pub fn run_discovery(&mut self, i: usize, config: DiscoveryConfig) {
        let prefix = self.nodes[i].rtps.prefix();
        self.nodes[i] = ParticipantCore::new(self.now, Participant::new(prefix), config);
        self.nodes[i].set_wall_clock(wall_at_zero());
    }

    /// The locator of node `i`.
    pub fn locator(&self, i: usize) -> Locator {
        self.locators[i]
    }

    fn collect_transmits(&mut self) {
        for from in 0..self.nodes.len() {
            while let Some(t) = self.nodes[from].poll_transmit() {
                if let Ok((_, submessages)) = Message::parse(&t.payload) {
                    self.data_sent += submessages
                        .flatten()
                        .filter(|s| matches!(s, Submessage::Data(_)))
                        .count() as u64;
                }
                for dest in &t.destinations {
                    let Some(to) = self.locators.iter().position(|l| l == dest) else {
                        continue;
                    };
                    self.datagrams_sent += 1;
                    if self.rng.chance(self.faults.loss) {
                        self.datagrams_dropped += 1;
                        continue;
                    }
                    let copies = if self.rng.chance(self.faults.duplication) {
                        2
                    } else {
                        1
                    };
                    for _ in 0..copies {
                        let jitter = self.rng.below(self.faults.jitter.as_nanos() as u64);
                        let at = self
                            .now
                            .after(self.faults.latency + Duration::from_nanos(jitter));
                        self.order += 1;
                        let from = self.locators[from];
                        self.in_flight.push(Reverse((
                            at,
                            self.order,
                            to,
                            from,
                            t.contiguous().into_owned(),
                        )));
                    }
                }
            }
        }
    }

    /// Runs until `done` holds or `limit` of simulated time passes; true when done.
    pub fn run_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&mut Network) -> bool,
    ) -> bool {
        let end = self.now.after(limit);
        for _ in 0..10_000_000u64 {
            self.collect_transmits();
            if done(self) {
                return true;
            }
            let next_delivery = self.in_flight.peek().map(|Reverse((at, ..))| *at);
            let next_timer = self
                .nodes
                .iter()
                .filter_map(ParticipantCore::poll_timeout)
                .min();
            let Some(next) = [next_delivery, next_timer].into_iter().flatten().min() else {
                return done(self);
            };
            if next > end {
                return done(self);
            }
            self.now = self.now.max(next);
            while let Some(Reverse((at, ..))) = self.in_flight.peek() {
                if *at > self.now {
                    break;
                }
                let Some(Reverse((_, _, to, from, bytes))) = self.in_flight.pop() else {
                    break;
                };
                self.nodes[to].handle_datagram(self.now, from, &bytes);
            }
            for node in &mut self.nodes {
                if node.poll_timeout().is_some_and(|t| t <= self.now) {
                    node.handle_timeout(self.now);
                }
            }
        }
        panic!("the simulation did not settle within its step bound");
    }

    /// Advances simulated time by `d`, delivering and running timers meanwhile.
    pub fn advance(&mut self, d: Duration) {
        let end = self.now.after(d);
        self.run_until(d, |n| n.now >= end);
        self.now = self.now.max(end);
    }
}
