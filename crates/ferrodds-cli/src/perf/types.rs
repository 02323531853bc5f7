//! ddsperf's types (`src/tools/ddsperf/ddsperf_types.idl` in Cyclone DDS 0.10), with the
//! IDL names as type names so that ddsperf matches them, and [`PerfSample`]: what the perf
//! modes need to know of a sample (its sequence number, key and size).
//!
//! All are `@final` and keyed by `keyval` where they have one; the Struct* types nest
//! 16-octet, 256-octet and 4 KiB blocks the way the IDL does, member by member, so that
//! their encoding is the same in XCDR1 and XCDR2.

use ferrodds_cdr::{Cdr, Octet};

/// What ddsperf fills unused bytes with.
const FILL: u8 = 0xee;

/// A ddsperf sample: sequence number, key value and the size ddsperf reports for it.
pub(crate) trait PerfSample: Cdr + Clone + Send + Sync + 'static {
    /// The suffix of the topic names (`DDSPerfRData<SUFFIX>`) and of `--topic`.
    const SUFFIX: &'static str;

    /// A sample with `seq` and `keyval`; `baggage` is the length of KeyedSeq's sequence
    /// (only KeyedSeq has one; the others ignore it).
    fn make(seq: u32, keyval: u32, baggage: usize) -> Self;

    /// The sequence number.
    fn seq(&self) -> u32;

    /// Sets the sequence number.
    fn set_seq(&mut self, seq: u32);

    /// The key value (0 for unkeyed types).
    fn keyval(&self) -> u32;

    /// Sets the key value (ignored for unkeyed types).
    fn set_keyval(&mut self, keyval: u32);

    /// The size ddsperf reports (`topic_payload_size`): the fixed part plus the baggage.
    fn size(&self) -> u32;
}

/// `struct KeyedSeq { unsigned long seq; @key unsigned long keyval; sequence<octet> baggage; }`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "KeyedSeq")]
pub(crate) struct KeyedSeq {
    seq: u32,
    #[cdr(key)]
    keyval: u32,
    baggage: Vec<Octet>,
}

impl PerfSample for KeyedSeq {
    const SUFFIX: &'static str = "KS";

    fn make(seq: u32, keyval: u32, baggage: usize) -> Self {
        KeyedSeq {
            seq,
            keyval,
            baggage: vec![Octet(FILL); baggage],
        }
    }

    fn seq(&self) -> u32 {
        self.seq
    }

    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    fn keyval(&self) -> u32 {
        self.keyval
    }

    fn set_keyval(&mut self, keyval: u32) {
        self.keyval = keyval;
    }

    fn size(&self) -> u32 {
        12u32.saturating_add(u32::try_from(self.baggage.len()).unwrap_or(u32::MAX))
    }
}

/// `struct OneULong { unsigned long seq; }`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "OneULong")]
pub(crate) struct OneULong {
    seq: u32,
}

impl PerfSample for OneULong {
    const SUFFIX: &'static str = "OU";

    fn make(seq: u32, _keyval: u32, _baggage: usize) -> Self {
        OneULong { seq }
    }

    fn seq(&self) -> u32 {
        self.seq
    }

    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    fn keyval(&self) -> u32 {
        0
    }

    fn set_keyval(&mut self, _keyval: u32) {}

    fn size(&self) -> u32 {
        4
    }
}

/// The types of one unsigned long `seq`, an optional `@key keyval` and an octet array.
macro_rules! seq_key_array {
    ($(#[$doc:meta])* $name:ident, $idl:literal, $suffix:literal, $len:literal, $size:literal, keyed) => {
        $(#[$doc])*
        #[derive(Cdr, Debug, Clone, PartialEq)]
        #[cdr(final, type_name = $idl)]
        pub(crate) struct $name {
            seq: u32,
            #[cdr(key)]
            keyval: u32,
            baggage: [Octet; $len],
        }

        impl PerfSample for $name {
            const SUFFIX: &'static str = $suffix;

            fn make(seq: u32, keyval: u32, _baggage: usize) -> Self {
                $name { seq, keyval, baggage: [Octet(FILL); $len] }
            }

            fn seq(&self) -> u32 {
                self.seq
            }

            fn set_seq(&mut self, seq: u32) {
                self.seq = seq;
            }

            fn keyval(&self) -> u32 {
                self.keyval
            }

            fn set_keyval(&mut self, keyval: u32) {
                self.keyval = keyval;
            }

            fn size(&self) -> u32 {
                $size
            }
        }
    };
    ($(#[$doc:meta])* $name:ident, $idl:literal, $suffix:literal, $len:literal, $size:literal, unkeyed) => {
        $(#[$doc])*
        #[derive(Cdr, Debug, Clone, PartialEq)]
        #[cdr(final, type_name = $idl)]
        pub(crate) struct $name {
            seq: u32,
            baggage: [Octet; $len],
        }

        impl PerfSample for $name {
            const SUFFIX: &'static str = $suffix;

            fn make(seq: u32, _keyval: u32, _baggage: usize) -> Self {
                $name { seq, baggage: [Octet(FILL); $len] }
            }

            fn seq(&self) -> u32 {
                self.seq
            }

            fn set_seq(&mut self, seq: u32) {
                self.seq = seq;
            }

            fn keyval(&self) -> u32 {
                0
            }

            fn set_keyval(&mut self, _keyval: u32) {}

            fn size(&self) -> u32 {
                $size
            }
        }
    };
}

seq_key_array!(
    /// `struct Keyed32 { unsigned long seq; @key unsigned long keyval; octet baggage[24]; }`
    Keyed32, "Keyed32", "K32", 24, 32, keyed
);
seq_key_array!(
    /// `struct Keyed256 { unsigned long seq; @key unsigned long keyval; octet baggage[248]; }`
    Keyed256, "Keyed256", "K256", 248, 256, keyed
);
seq_key_array!(
    /// `struct Unkeyed16 { unsigned long seq; octet baggage[12]; }`
    Unkeyed16, "Unkeyed16", "UK16", 12, 16, unkeyed
);
seq_key_array!(
    /// `struct Unkeyed1024 { unsigned long seq; octet baggage[1020]; }`
    Unkeyed1024, "Unkeyed1024", "UK1024", 1020, 1024, unkeyed
);

/// `@final struct Struct16 { octet struct0; … octet structf; long long junk;
/// unsigned long seq; @key unsigned long keyval; }`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "Struct16")]
pub(crate) struct Struct16 {
    struct0: Octet,
    struct1: Octet,
    struct2: Octet,
    struct3: Octet,
    struct4: Octet,
    struct5: Octet,
    struct6: Octet,
    struct7: Octet,
    struct8: Octet,
    struct9: Octet,
    structa: Octet,
    structb: Octet,
    structc: Octet,
    structd: Octet,
    structe: Octet,
    structf: Octet,
    junk: i64,
    seq: u32,
    #[cdr(key)]
    keyval: u32,
}

impl Struct16 {
    fn filled() -> Self {
        Struct16 {
            struct0: Octet(FILL),
            struct1: Octet(FILL),
            struct2: Octet(FILL),
            struct3: Octet(FILL),
            struct4: Octet(FILL),
            struct5: Octet(FILL),
            struct6: Octet(FILL),
            struct7: Octet(FILL),
            struct8: Octet(FILL),
            struct9: Octet(FILL),
            structa: Octet(FILL),
            structb: Octet(FILL),
            structc: Octet(FILL),
            structd: Octet(FILL),
            structe: Octet(FILL),
            structf: Octet(FILL),
            junk: i64::from_ne_bytes([FILL; 8]),
            seq: 0,
            keyval: 0,
        }
    }
}

/// A struct of 16 (or 8) nested blocks, then `long long junk; unsigned long seq;
/// @key unsigned long keyval;`: Struct256, Struct4k and Struct32k.
macro_rules! nested_blocks {
    ($(#[$doc:meta])* $name:ident, $idl:literal, $suffix:literal, $inner:ident, $size:expr,
     [$($field:ident),+]) => {
        $(#[$doc])*
        #[derive(Cdr, Debug, Clone, PartialEq)]
        #[cdr(final, type_name = $idl)]
        pub(crate) struct $name {
            $($field: $inner,)+
            junk: i64,
            seq: u32,
            #[cdr(key)]
            keyval: u32,
        }

        impl $name {
            fn filled() -> Self {
                $name {
                    $($field: $inner::filled(),)+
                    junk: i64::from_ne_bytes([FILL; 8]),
                    seq: 0,
                    keyval: 0,
                }
            }
        }

        impl PerfSample for $name {
            const SUFFIX: &'static str = $suffix;

            fn make(seq: u32, keyval: u32, _baggage: usize) -> Self {
                let mut s = $name::filled();
                s.seq = seq;
                s.keyval = keyval;
                s
            }

            fn seq(&self) -> u32 {
                self.seq
            }

            fn set_seq(&mut self, seq: u32) {
                self.seq = seq;
            }

            fn keyval(&self) -> u32 {
                self.keyval
            }

            fn set_keyval(&mut self, keyval: u32) {
                self.keyval = keyval;
            }

            fn size(&self) -> u32 {
                $size
            }
        }
    };
}

impl PerfSample for Struct16 {
    const SUFFIX: &'static str = "S16";

    fn make(seq: u32, keyval: u32, _baggage: usize) -> Self {
        let mut s = Struct16::filled();
        s.seq = seq;
        s.keyval = keyval;
        s
    }

    fn seq(&self) -> u32 {
        self.seq
    }

    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    fn keyval(&self) -> u32 {
        self.keyval
    }

    fn set_keyval(&mut self, keyval: u32) {
        self.keyval = keyval;
    }

    fn size(&self) -> u32 {
        // sizeof (Struct16) in C, which is what ddsperf reports.
        32
    }
}

// ddsperf reports the C `sizeof` of these: 16 blocks + junk + seq + keyval.
nested_blocks!(
    /// `@final struct Struct256 { Struct16 struct160; … struct16f; long long junk;
    /// unsigned long seq; @key unsigned long keyval; }`
    Struct256, "Struct256", "S256", Struct16, 16 * 32 + 16,
    [struct160, struct161, struct162, struct163, struct164, struct165, struct166, struct167,
     struct168, struct169, struct16a, struct16b, struct16c, struct16d, struct16e, struct16f]
);
nested_blocks!(
    /// `@final struct Struct4k { Struct256 struct2560; … struct256f; long long junk;
    /// unsigned long seq; @key unsigned long keyval; }`
    Struct4k, "Struct4k", "S4k", Struct256, 16 * (16 * 32 + 16) + 16,
    [struct2560, struct2561, struct2562, struct2563, struct2564, struct2565, struct2566,
     struct2567, struct2568, struct2569, struct256a, struct256b, struct256c, struct256d,
     struct256e, struct256f]
);
nested_blocks!(
    /// `@final struct Struct32k { Struct4k struct4k0; … struct4k7; long long junk;
    /// unsigned long seq; @key unsigned long keyval; }`
    Struct32k, "Struct32k", "S32k", Struct4k, 8 * (16 * (16 * 32 + 16) + 16) + 16,
    [struct4k0, struct4k1, struct4k2, struct4k3, struct4k4, struct4k5, struct4k6, struct4k7]
);

/// ddsperf's `-T`: which type (and so which topics) to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TopicKind {
    /// KeyedSeq: seq, key, sequence of octets (the size option sets its length).
    #[value(name = "KS")]
    Ks,
    /// Keyed32: seq, key, 24 octets.
    #[value(name = "K32")]
    K32,
    /// Keyed256: seq, key, 248 octets.
    #[value(name = "K256")]
    K256,
    /// OneULong: seq only.
    #[value(name = "OU")]
    Ou,
    /// Unkeyed16: seq, 12 octets.
    #[value(name = "UK16")]
    Uk16,
    /// Unkeyed1024: seq, 1020 octets.
    #[value(name = "UK1024")]
    Uk1024,
    /// Struct16: keyed, 16 octets, int64 junk, seq, key.
    #[value(name = "S16")]
    S16,
    /// Struct256: keyed, 16 × S16, int64 junk, seq, key.
    #[value(name = "S256")]
    S256,
    /// Struct4k: keyed, 16 × S256, int64 junk, seq, key.
    #[value(name = "S4k")]
    S4k,
    /// Struct32k: keyed, 8 × S4k, int64 junk, seq, key.
    #[value(name = "S32k")]
    S32k,
}

impl TopicKind {
    /// Whether the type has a key (more than one key value makes sense).
    pub(crate) fn is_keyed(self) -> bool {
        !matches!(self, TopicKind::Ou | TopicKind::Uk16 | TopicKind::Uk1024)
    }
}

/// Calls `$body` with the type alias `$t` bound to the sample type of `$kind`.
macro_rules! with_topic_type {
    ($kind:expr, $t:ident => $body:expr) => {{
        use $crate::perf::types::*;
        match $kind {
            TopicKind::Ks => {
                type $t = KeyedSeq;
                $body
            }
            TopicKind::K32 => {
                type $t = Keyed32;
                $body
            }
            TopicKind::K256 => {
                type $t = Keyed256;
                $body
            }
            TopicKind::Ou => {
                type $t = OneULong;
                $body
            }
            TopicKind::Uk16 => {
                type $t = Unkeyed16;
                $body
            }
            TopicKind::Uk1024 => {
                type $t = Unkeyed1024;
                $body
            }
            TopicKind::S16 => {
                type $t = Struct16;
                $body
            }
            TopicKind::S256 => {
                type $t = Struct256;
                $body
            }
            TopicKind::S4k => {
                type $t = Struct4k;
                $body
            }
            TopicKind::S32k => {
                type $t = Struct32k;
                $body
            }
        }
    }};
}
pub(crate) use with_topic_type;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use ferrodds_cdr::{serialize, Endianness, XcdrVersion};

    /// The CDR body (after the 4-byte encapsulation header) of `sample` in XCDR1 LE.
    fn body<T: Cdr>(sample: &T) -> Vec<u8> {
        serialize(sample, XcdrVersion::Xcdr1, Endianness::Little).unwrap()[4..].to_vec()
    }

    #[test]
    fn keyed_seq_is_laid_out_as_cyclone_sends_it() {
        // From cyclone_pingpong.pcap: a ddsperf ping with `size 64`: seq 1, keyval 0,
        // 52 octets of 0xee.
        let mut expected = vec![1, 0, 0, 0, 0, 0, 0, 0, 52, 0, 0, 0];
        expected.extend([0xee; 52]);
        let s = KeyedSeq::make(1, 0, 52);
        assert_eq!(body(&s), expected);
        assert_eq!(s.size(), 64);
        const { assert!(KeyedSeq::IS_KEYED) };
        assert_eq!(KeyedSeq::TYPE_NAME, "KeyedSeq");
    }

    #[test]
    fn fixed_types_have_the_c_sizes_ddsperf_reports() {
        assert_eq!(body(&OneULong::make(7, 0, 0)).len(), 4);
        assert_eq!(body(&Unkeyed16::make(7, 0, 0)).len(), 16);
        assert_eq!(body(&Keyed32::make(7, 1, 0)).len(), 32);
        assert_eq!(body(&Keyed256::make(7, 1, 0)).len(), 256);
        assert_eq!(body(&Unkeyed1024::make(7, 0, 0)).len(), 1024);
        assert_eq!(body(&Struct16::make(7, 1, 0)).len(), 32);
        assert_eq!(body(&Struct256::make(7, 1, 0)).len(), 528);
        assert_eq!(Struct256::make(7, 1, 0).size(), 528);
        assert_eq!(Struct4k::make(7, 1, 0).size(), 16 * 528 + 16);
        const { assert!(!OneULong::IS_KEYED && !Unkeyed16::IS_KEYED && Struct32k::IS_KEYED) };
    }

    #[test]
    fn seq_and_keyval_round_trip() {
        let mut s = Struct4k::make(1, 2, 0);
        s.set_seq(41);
        s.set_keyval(3);
        let bytes = serialize(&s, XcdrVersion::Xcdr1, Endianness::Little).unwrap();
        let back: Struct4k = ferrodds_cdr::deserialize(&bytes).unwrap();
        assert_eq!((back.seq(), back.keyval()), (41, 3));
    }
}
