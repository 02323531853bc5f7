//! How long a receive thread spins for its next datagram before it sleeps.
//!
//! A thread woken through the scheduler costs tens of microseconds on a small virtual
//! machine, most of a loopback round trip; a thread that spins sees the datagram at once
//! but burns its core meanwhile. A fixed spin is right for one kind of traffic only: 30 µs
//! covers a round trip between two native processes but not one where each side is a
//! Python program (40–70 µs between its take and its answer), and a long fixed spin
//! burns a core after every datagram of traffic that comes every millisecond. So the spin
//! follows the traffic: as long as the longest recent gap between datagrams, with half of
//! it again to spare, when that gap is short enough to be worth spinning for; never less
//! than a floor (a reply that comes at once) and never more than the configured maximum.
//! Gaps longer than the maximum are the traffic pausing, not a rhythm to wait for: they
//! only let the estimate decay.

use std::time::{Duration, Instant};

/// The shortest spin (or the configured maximum, when that is shorter): what a native
/// round trip between two processes of one host needs.
pub const FLOOR: Duration = Duration::from_micros(30);

/// A receive thread's spin, from the gaps between the datagrams it received.
#[derive(Debug, Clone)]
pub struct ReceiveSpin {
    max: Duration,
    floor: Duration,
    last: Option<Instant>,
    /// The longest recent gap no longer than `max`, decaying by an eighth per datagram.
    expected: Duration,
}

impl ReceiveSpin {
    /// A spin of at most `max` (zero: the thread never spins).
    pub fn new(max: Duration) -> ReceiveSpin {
        ReceiveSpin {
            max,
            floor: FLOOR.min(max),
            last: None,
            expected: Duration::ZERO,
        }
    }

    /// A datagram arrived at `now`.
    pub fn arrived(&mut self, now: Instant) {
        let decayed = self.expected - self.expected / 8;
        self.expected = match self.last {
            Some(last) => {
                let gap = now.saturating_duration_since(last);
                if gap <= self.max {
                    gap.max(decayed)
                } else {
                    decayed
                }
            }
            None => decayed,
        };
        self.last = Some(now);
    }

    /// How long to spin for the next datagram now.
    pub fn spin(&self) -> Duration {
        (self.expected + self.expected / 2).clamp(self.floor, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Feeds arrivals `gaps` apart; the spin after them.
    fn after(spin: &mut ReceiveSpin, start: &mut Instant, gaps: &[u64]) -> Duration {
        for &g in gaps {
            *start += us(g);
            spin.arrived(*start);
        }
        spin.spin()
    }

    #[test]
    fn a_rhythm_within_the_maximum_is_covered_with_room() {
        let mut s = ReceiveSpin::new(us(250));
        let mut t = Instant::now();
        assert_eq!(s.spin(), FLOOR, "nothing seen yet: the floor");
        // A Python round trip: the peer's acknowledgment soon, its answer 60 µs later.
        let spin = after(&mut s, &mut t, &[5, 60, 5, 60, 5, 60, 5, 60]);
        assert!(spin >= us(60) && spin <= us(90), "{spin:?}");
    }

    #[test]
    fn never_beyond_the_maximum_nor_below_the_floor() {
        let mut s = ReceiveSpin::new(us(250));
        let mut t = Instant::now();
        assert_eq!(after(&mut s, &mut t, &[240, 240]), us(250));
        // A burst of back-to-back datagrams: the estimate decays, to the floor at most.
        assert_eq!(after(&mut s, &mut t, &[1; 100]), FLOOR);
        // A configured maximum below the floor is the spin.
        let mut short = ReceiveSpin::new(us(10));
        assert_eq!(after(&mut short, &mut t, &[8, 8]), us(10));
        let mut none = ReceiveSpin::new(Duration::ZERO);
        assert_eq!(after(&mut none, &mut t, &[8, 8]), Duration::ZERO);
    }

    #[test]
    fn pauses_longer_than_the_maximum_do_not_make_the_thread_spin_for_them() {
        let mut s = ReceiveSpin::new(us(250));
        let mut t = Instant::now();
        // Traffic every millisecond: nothing to spin for beyond the floor.
        assert_eq!(after(&mut s, &mut t, &[1000; 20]), FLOOR);
        // A rhythm that slows down past the maximum is let go of.
        after(&mut s, &mut t, &[100; 10]);
        assert!(s.spin() >= us(150));
        assert_eq!(after(&mut s, &mut t, &[1000; 20]), FLOOR);
    }
}
