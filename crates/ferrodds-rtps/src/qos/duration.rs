//! `Duration_t`: the RTPS representation of a DDS duration (DDSI-RTPS 2.5 §9.3.2).

use core::fmt;

/// A non-negative duration as RTPS sends it: whole seconds and 2^-32 fractions of a
/// second (DDSI-RTPS 2.5 §9.3.2, `Duration_t`), or [`Duration::INFINITE`].
///
/// On the wire: `seconds` (i32) then `fraction` (u32), in the byte order of the
/// enclosing parameter list. A duration with negative seconds is invalid (DDS 1.4
/// §2.2.3 allows none) and cannot be constructed; the parsers reject it.
///
/// Ordering is the natural one and [`Duration::INFINITE`] is the largest value, so
/// "offered ≤ requested" comparisons in QoS matching are plain `<=`. The default is
/// [`Duration::ZERO`].
///
/// Conversions from and to [`std::time::Duration`] round to the nearest representable
/// value (a fraction unit is about 0.23 ns): 100 ms becomes `{0, 0x1999999a}` and comes
/// back as exactly 100 ms.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Duration {
    seconds: i32,
    fraction: u32,
}

const NANOS_PER_SEC: u64 = 1_000_000_000;

impl Duration {
    /// Length on the wire.
    pub const LEN: usize = 8;
    /// `DURATION_ZERO`.
    pub const ZERO: Duration = Duration {
        seconds: 0,
        fraction: 0,
    };
    /// `DURATION_INFINITE`: `{0x7fffffff, 0xffffffff}`.
    pub const INFINITE: Duration = Duration {
        seconds: 0x7fff_ffff,
        fraction: 0xffff_ffff,
    };

    /// The duration with these wire fields, or `None` if `seconds` is negative.
    pub const fn new(seconds: i32, fraction: u32) -> Option<Duration> {
        if seconds < 0 {
            None
        } else {
            Some(Duration { seconds, fraction })
        }
    }

    /// `secs` whole seconds; [`Duration::INFINITE`] if `secs` exceeds `i32::MAX`.
    pub const fn from_secs(secs: u32) -> Duration {
        if secs > i32::MAX as u32 {
            Duration::INFINITE
        } else {
            Duration {
                seconds: secs as i32,
                fraction: 0,
            }
        }
    }

    /// `millis` milliseconds, rounded to the nearest fraction; [`Duration::INFINITE`]
    /// if it does not fit.
    pub const fn from_millis(millis: u64) -> Duration {
        let secs = millis / 1000;
        let nanos = (millis % 1000) * 1_000_000;
        Duration::from_secs_nanos(secs, nanos)
    }

    /// Whole seconds plus `nanos` (< 10^9), rounded; [`Duration::INFINITE`] when the
    /// seconds do not fit in an i32 (or rounding would carry into them past it).
    const fn from_secs_nanos(secs: u64, nanos: u64) -> Duration {
        if secs > i32::MAX as u64 {
            return Duration::INFINITE;
        }
        // nanos < 10^9 < 2^30, so nanos << 32 < 2^62 and the sum cannot overflow; the
        // quotient is at most (10^9 - 1) * 2^32 / 10^9 + 1 < 2^32.
        let fraction = ((nanos << 32) + NANOS_PER_SEC / 2) / NANOS_PER_SEC;
        if fraction > u32::MAX as u64 {
            return Duration::INFINITE;
        }
        Duration {
            seconds: secs as i32,
            fraction: fraction as u32,
        }
    }

    /// The duration closest to `d`; [`Duration::INFINITE`] when `d` reaches 2^31 s.
    pub const fn from_std(d: std::time::Duration) -> Duration {
        Duration::from_secs_nanos(d.as_secs(), d.subsec_nanos() as u64)
    }

    /// The duration as a [`std::time::Duration`] rounded to the nearest nanosecond, or
    /// `None` for [`Duration::INFINITE`].
    pub fn to_std(self) -> Option<std::time::Duration> {
        if self.is_infinite() {
            return None;
        }
        let secs = u64::try_from(self.seconds).ok()?;
        // fraction < 2^32, so fraction * 10^9 < 2^62: no overflow. The result may be
        // exactly 10^9 after rounding; the addition below carries it into the seconds.
        let nanos = (u64::from(self.fraction) * NANOS_PER_SEC + (1 << 31)) >> 32;
        std::time::Duration::from_secs(secs).checked_add(std::time::Duration::from_nanos(nanos))
    }

    /// True for [`Duration::INFINITE`].
    pub const fn is_infinite(self) -> bool {
        self.seconds == Duration::INFINITE.seconds && self.fraction == Duration::INFINITE.fraction
    }

    /// The wire `seconds` field (never negative).
    pub const fn seconds(self) -> i32 {
        self.seconds
    }

    /// The wire `fraction` field, in 2^-32 s.
    pub const fn fraction(self) -> u32 {
        self.fraction
    }
}

impl From<std::time::Duration> for Duration {
    fn from(d: std::time::Duration) -> Duration {
        Duration::from_std(d)
    }
}

impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_std() {
            None => write!(f, "Duration(INFINITE)"),
            Some(d) => write!(f, "Duration({d:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration as Std;

    #[test]
    fn constants_and_order() {
        assert!(Duration::INFINITE.is_infinite());
        assert!(!Duration::ZERO.is_infinite());
        assert!(Duration::ZERO < Duration::from_millis(1));
        assert!(Duration::from_secs(1_000_000) < Duration::INFINITE);
        // Almost infinite is finite and smaller.
        let almost = Duration::new(0x7fff_ffff, 0xffff_fffe).expect("non-negative");
        assert!(almost < Duration::INFINITE);
        assert!(!almost.is_infinite());
        assert_eq!(Duration::new(-1, 0), None);
        assert_eq!(Duration::from_secs(u32::MAX), Duration::INFINITE);
    }

    #[test]
    fn std_round_trip() {
        // 100 ms: Fast DDS sends 0x1999999a, RTI Connext 0x19999999; both read as 100 ms.
        let d = Duration::from_millis(100);
        assert_eq!((d.seconds(), d.fraction()), (0, 0x1999_999a));
        assert_eq!(d.to_std(), Some(Std::from_millis(100)));
        let rti = Duration::new(0, 0x1999_9999).expect("valid");
        assert_eq!(rti.to_std(), Some(Std::from_millis(100)));
        for ns in [
            0u64,
            1,
            499_999_999,
            999_999_999,
            1_000_000_000,
            1_234_567_891,
        ] {
            let s = Std::from_nanos(ns);
            assert_eq!(Duration::from(s).to_std(), Some(s), "{ns}");
        }
        assert_eq!(
            Duration::from_std(Std::from_secs(1 << 31)),
            Duration::INFINITE
        );
        assert_eq!(Duration::INFINITE.to_std(), None);
        // A fraction that rounds up to a whole second carries.
        let top = Duration::new(1, u32::MAX).expect("valid");
        assert_eq!(top.to_std(), Some(Std::from_secs(2)));
        assert_eq!(
            format!("{:?}", Duration::from_millis(1500)),
            "Duration(1.5s)"
        );
        assert_eq!(format!("{:?}", Duration::INFINITE), "Duration(INFINITE)");
    }
}
