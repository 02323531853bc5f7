//! Requested/offered compatibility of QoS policies (DDS 1.4 §2.2.3, the "RxO" column of
//! the QoS table) and partition matching (§2.2.3.13).
//!
//! A writer *offers* and a reader *requests*; they match when every RxO policy offered
//! is at least as strong as the one requested:
//!
//! | policy | rule (offered vs requested) |
//! |---|---|
//! | RELIABILITY | kind: `BEST_EFFORT < RELIABLE`, offered ≥ requested |
//! | DURABILITY | `VOLATILE < TRANSIENT_LOCAL < TRANSIENT < PERSISTENT`, offered ≥ requested |
//! | PRESENTATION | access scope `INSTANCE < TOPIC < GROUP` offered ≥ requested; coherent and ordered access requested ⇒ offered |
//! | DEADLINE | period offered ≤ requested |
//! | LATENCY_BUDGET | duration offered ≤ requested |
//! | OWNERSHIP | kinds equal |
//! | LIVELINESS | kind `AUTOMATIC < MANUAL_BY_PARTICIPANT < MANUAL_BY_TOPIC` offered ≥ requested, and lease offered ≤ requested |
//! | DESTINATION_ORDER | `BY_RECEPTION_TIMESTAMP < BY_SOURCE_TIMESTAMP`, offered ≥ requested |
//! | DATA_REPRESENTATION | the writer's first representation is in the reader's list (DDS-XTypes 1.3 §7.6.3.1.1) |
//!
//! [`check_compatibility`] evaluates all of them and reports every failing policy, so
//! that the DCPS layer can keep the per-policy counts of `OfferedIncompatibleQosStatus` /
//! `RequestedIncompatibleQosStatus` and pick its `last_policy_id`.
//!
//! PARTITION is not RxO: endpoints in disjoint partitions simply do not match and no
//! incompatibility is reported. [`match_qos`] therefore checks partitions first, as Cyclone
//! DDS does, and only then the RxO policies.
//!
//! # Partition names
//!
//! Each name may be a POSIX `fnmatch` pattern (DDS 1.4 §2.2.3.13): `*` (any string), `?`
//! (any one character), `[...]` (a bracket expression: ranges `a-z`, negation with a
//! leading `!` or `^`, `]` first is literal) and `\` escaping the next character. Two
//! names match when both are plain and equal, or when one is a pattern and the other a
//! plain name it matches. Two patterns never match each other, not even when identical
//! ("no two names that both contain wildcards will ever be considered to match",
//! §2.2.3.13; Cyclone DDS does the same; Fast DDS differs and matches identical
//! patterns). An empty partition list behaves as the single name `""`, so it matches a
//! list holding `""` or a pattern that matches the empty string, such as `*`. Character
//! classes (`[:alpha:]`) are not supported: inside brackets they are read as plain
//! characters.

use core::fmt;

use super::{
    DataRepresentation, Durability, EndpointQos, LivelinessKind, Ownership, Partition, QosPolicyId,
    ReliabilityKind,
};

/// The RxO policies a reader requested that the writer does not offer. Never empty.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IncompatibleQos {
    /// Bit `id` set for each incompatible `QosPolicyId` (all ids are below 32).
    mask: u32,
}

impl IncompatibleQos {
    fn from_mask(mask: u32) -> Option<IncompatibleQos> {
        (mask != 0).then_some(IncompatibleQos { mask })
    }

    /// The set holding `policy` only.
    pub(crate) fn single(policy: QosPolicyId) -> IncompatibleQos {
        IncompatibleQos {
            mask: policy_bit(policy),
        }
    }

    /// The policies of both sets.
    pub(crate) fn union(self, other: IncompatibleQos) -> IncompatibleQos {
        IncompatibleQos {
            mask: self.mask | other.mask,
        }
    }

    /// The incompatible policies in increasing id order.
    pub fn policies(&self) -> impl Iterator<Item = QosPolicyId> + '_ {
        QosPolicyId::ALL
            .into_iter()
            .filter(move |p| self.contains(*p))
    }

    /// True if `policy` is among the incompatible ones.
    pub fn contains(&self, policy: QosPolicyId) -> bool {
        self.mask & policy_bit(policy) != 0
    }

    /// How many policies are incompatible (at least 1).
    pub fn len(&self) -> usize {
        self.mask.count_ones() as usize
    }

    /// Always false: an `IncompatibleQos` names at least one policy.
    pub fn is_empty(&self) -> bool {
        self.mask == 0
    }
}

/// The mask bit of `policy`.
fn policy_bit(policy: QosPolicyId) -> u32 {
    // INVARIANT: policy ids run from 1 to 24, so the shift is in range; `checked_shl`
    // keeps even a future id above 31 from panicking.
    1u32.checked_shl(policy.id()).unwrap_or(0)
}

impl fmt::Debug for IncompatibleQos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.policies()).finish()
    }
}

impl fmt::Display for IncompatibleQos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "incompatible QoS:")?;
        for p in self.policies() {
            write!(f, " {}", p.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for IncompatibleQos {}

/// Why a writer's and a reader's QoS do not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QosMismatch {
    /// No partition name of one side matches one of the other (not an incompatibility:
    /// nothing is reported to the application).
    #[error("no common partition")]
    Partition,
    /// Some RxO policies are incompatible (reported through the
    /// offered/requested-incompatible-QoS statuses).
    #[error(transparent)]
    Incompatible(IncompatibleQos),
}

/// Checks partitions, then the RxO policies, of a writer's `offered` QoS against a
/// reader's `requested` QoS.
pub fn match_qos(offered: &EndpointQos, requested: &EndpointQos) -> Result<(), QosMismatch> {
    if !partitions_match(&offered.partition, &requested.partition) {
        return Err(QosMismatch::Partition);
    }
    check_compatibility(offered, requested).map_err(QosMismatch::Incompatible)
}

/// Checks every RxO policy of a writer's `offered` QoS against a reader's `requested`
/// QoS (see the module documentation for the rules).
pub fn check_compatibility(
    offered: &EndpointQos,
    requested: &EndpointQos,
) -> Result<(), IncompatibleQos> {
    let mut mask = 0u32;
    let mut fail = |policy: QosPolicyId, incompatible: bool| {
        if incompatible {
            mask |= policy_bit(policy);
        }
    };
    fail(
        QosPolicyId::Reliability,
        !reliability_compatible(offered.reliability.kind, requested.reliability.kind),
    );
    fail(
        QosPolicyId::Durability,
        !durability_compatible(offered.durability, requested.durability),
    );
    let (op, rp) = (&offered.presentation, &requested.presentation);
    fail(
        QosPolicyId::Presentation,
        op.access_scope < rp.access_scope
            || (rp.coherent_access && !op.coherent_access)
            || (rp.ordered_access && !op.ordered_access),
    );
    fail(
        QosPolicyId::Deadline,
        offered.deadline.period > requested.deadline.period,
    );
    fail(
        QosPolicyId::LatencyBudget,
        offered.latency_budget.duration > requested.latency_budget.duration,
    );
    fail(
        QosPolicyId::Ownership,
        !ownership_compatible(offered.ownership, requested.ownership),
    );
    fail(
        QosPolicyId::Liveliness,
        !liveliness_kind_compatible(offered.liveliness.kind, requested.liveliness.kind)
            || offered.liveliness.lease_duration > requested.liveliness.lease_duration,
    );
    fail(
        QosPolicyId::DestinationOrder,
        offered.destination_order < requested.destination_order,
    );
    fail(
        QosPolicyId::DataRepresentation,
        !data_representation_compatible(
            &offered.data_representation,
            &requested.data_representation,
        ),
    );
    match IncompatibleQos::from_mask(mask) {
        None => Ok(()),
        Some(incompatible) => Err(incompatible),
    }
}

/// RELIABILITY: offered kind ≥ requested kind.
pub fn reliability_compatible(offered: ReliabilityKind, requested: ReliabilityKind) -> bool {
    offered >= requested
}

/// DURABILITY: offered kind ≥ requested kind.
pub fn durability_compatible(offered: Durability, requested: Durability) -> bool {
    offered >= requested
}

/// OWNERSHIP: the kinds are equal.
pub fn ownership_compatible(offered: Ownership, requested: Ownership) -> bool {
    offered == requested
}

/// LIVELINESS kind: offered ≥ requested (the lease is compared separately).
pub fn liveliness_kind_compatible(offered: LivelinessKind, requested: LivelinessKind) -> bool {
    offered >= requested
}

/// DATA_REPRESENTATION: the writer's first representation is one the reader accepts
/// (DDS-XTypes 1.3 §7.6.3.1.1: the writer uses only its first one).
pub fn data_representation_compatible(
    offered: &DataRepresentation,
    requested: &DataRepresentation,
) -> bool {
    requested.accepts(offered.offered())
}

/// True if some name of `a` matches some name of `b` (an empty list is `[""]`); see the
/// module documentation for the rules.
pub fn partitions_match(a: &Partition, b: &Partition) -> bool {
    let names = |p: &Partition| -> Vec<Pattern> {
        if p.names.is_empty() {
            vec![Pattern::parse("")]
        } else {
            p.names.iter().map(|n| Pattern::parse(n)).collect()
        }
    };
    let (a, b) = (names(a), names(b));
    a.iter().any(|x| b.iter().any(|y| x.matches_name(y)))
}

/// True if partition names `a` and `b` match: equal plain names, or a pattern and a plain
/// name it matches; two patterns never match.
pub fn partition_names_match(a: &str, b: &str) -> bool {
    Pattern::parse(a).matches_name(&Pattern::parse(b))
}

/// POSIX `fnmatch(pattern, name, 0)`: `*`, `?`, bracket expressions and `\` escapes, no
/// special treatment of `/` or leading dots.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    Pattern::parse(pattern).matches(&name)
}

/// One element of a parsed pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A character to match literally (including escaped and stray specials).
    Literal(char),
    /// `?`.
    AnyOne,
    /// `*`.
    AnyString,
    /// `[...]`: inclusive ranges (a single character is a range of one), negated or not.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// A partition name, parsed as an `fnmatch` pattern.
#[derive(Debug, Clone)]
struct Pattern {
    tokens: Vec<Token>,
    /// The name as given, for the plain-vs-plain comparison.
    text: String,
}

impl Pattern {
    fn parse(text: &str) -> Pattern {
        let chars: Vec<char> = text.chars().collect();
        let mut tokens = Vec::with_capacity(chars.len());
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            match c {
                '*' => tokens.push(Token::AnyString),
                '?' => tokens.push(Token::AnyOne),
                '\\' => match chars.get(i) {
                    Some(&next) => {
                        tokens.push(Token::Literal(next));
                        i += 1;
                    }
                    // A trailing backslash matches itself.
                    None => tokens.push(Token::Literal('\\')),
                },
                '[' => match parse_class(&chars, i) {
                    Some((token, next)) => {
                        tokens.push(token);
                        i = next;
                    }
                    // An unterminated bracket is an ordinary character.
                    None => tokens.push(Token::Literal('[')),
                },
                c => tokens.push(Token::Literal(c)),
            }
        }
        Pattern {
            tokens,
            text: text.to_owned(),
        }
    }

    /// True if the name contains `*`, `?` or a bracket expression.
    fn is_pattern(&self) -> bool {
        self.tokens.iter().any(|t| !matches!(t, Token::Literal(_)))
    }

    /// The partition-name rule: equal plain names, or pattern vs plain name.
    fn matches_name(&self, other: &Pattern) -> bool {
        match (self.is_pattern(), other.is_pattern()) {
            (false, false) => self.text == other.text,
            (true, false) => self.matches(&other.text.chars().collect::<Vec<_>>()),
            (false, true) => other.matches(&self.text.chars().collect::<Vec<_>>()),
            (true, true) => false,
        }
    }

    /// fnmatch with one backtracking point per `*` (the classic greedy algorithm): at
    /// most O(pattern × name) steps, no recursion.
    fn matches(&self, name: &[char]) -> bool {
        let (mut t, mut n) = (0usize, 0usize);
        // After the last `*`: the token after it, and the name position it was tried at.
        let mut backtrack: Option<(usize, usize)> = None;
        loop {
            match (self.tokens.get(t), name.get(n)) {
                (Some(Token::AnyString), _) => {
                    backtrack = Some((t + 1, n));
                    t += 1;
                    continue;
                }
                (Some(token), Some(&c)) if token_matches(token, c) => {
                    t += 1;
                    n += 1;
                    continue;
                }
                (None, None) => return true,
                _ => {}
            }
            // Mismatch (or one side ended): let the last `*` swallow one more character.
            match backtrack {
                Some((bt, bn)) if bn < name.len() => {
                    backtrack = Some((bt, bn + 1));
                    t = bt;
                    n = bn + 1;
                }
                _ => return false,
            }
        }
    }
}

fn token_matches(token: &Token, c: char) -> bool {
    match token {
        Token::Literal(l) => *l == c,
        Token::AnyOne => true,
        Token::AnyString => true,
        Token::Class { negated, ranges } => {
            let inside = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
            inside != *negated
        }
    }
}

/// Parses a bracket expression whose `[` was just before `start`. Returns the token and
/// the index after the closing `]`, or `None` if there is no closing `]`.
fn parse_class(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        i += 1;
        let lo = match c {
            ']' if !first => return Some((Token::Class { negated, ranges }, i)),
            '\\' => {
                let escaped = *chars.get(i)?;
                i += 1;
                escaped
            }
            c => c,
        };
        first = false;
        // A range `lo-hi`, unless the `-` is last before `]`.
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&h| h != ']') {
            let mut hi = *chars.get(i + 1)?;
            i += 2;
            if hi == '\\' {
                hi = *chars.get(i)?;
                i += 1;
            }
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{
        DataRepresentationId, DestinationOrder, Duration, PresentationAccessScope, Reliability,
    };

    fn writer() -> EndpointQos {
        EndpointQos::writer_default()
    }

    fn reader() -> EndpointQos {
        EndpointQos::reader_default()
    }

    fn incompatible(w: &EndpointQos, r: &EndpointQos) -> Vec<QosPolicyId> {
        match check_compatibility(w, r) {
            Ok(()) => vec![],
            Err(e) => e.policies().collect(),
        }
    }

    #[test]
    fn defaults_match() {
        assert_eq!(check_compatibility(&writer(), &reader()), Ok(()));
        assert_eq!(match_qos(&writer(), &reader()), Ok(()));
        // A default reader requests BEST_EFFORT, which a RELIABLE writer satisfies; a
        // default writer read by a reader that asks for RELIABLE also matches.
        let mut r = reader();
        r.reliability = Reliability::reliable();
        assert_eq!(check_compatibility(&writer(), &r), Ok(()));
    }

    #[test]
    fn reliability() {
        let mut w = writer();
        let mut r = reader();
        w.reliability = Reliability::best_effort();
        r.reliability = Reliability::reliable();
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Reliability]);
        r.reliability = Reliability::best_effort();
        assert!(incompatible(&w, &r).is_empty());
        // max_blocking_time does not take part.
        r.reliability.max_blocking_time = Duration::ZERO;
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn durability() {
        let order = [
            Durability::Volatile,
            Durability::TransientLocal,
            Durability::Transient,
            Durability::Persistent,
        ];
        for (i, &offered) in order.iter().enumerate() {
            for (j, &requested) in order.iter().enumerate() {
                let mut w = writer();
                let mut r = reader();
                w.durability = offered;
                r.durability = requested;
                let expected: &[QosPolicyId] = if i >= j {
                    &[]
                } else {
                    &[QosPolicyId::Durability]
                };
                assert_eq!(
                    incompatible(&w, &r),
                    expected,
                    "{offered:?} vs {requested:?}"
                );
            }
        }
    }

    #[test]
    fn deadline() {
        let mut w = writer();
        let mut r = reader();
        w.deadline.period = Duration::from_millis(100);
        r.deadline.period = Duration::from_millis(200);
        assert!(incompatible(&w, &r).is_empty());
        r.deadline.period = Duration::from_millis(100);
        assert!(incompatible(&w, &r).is_empty());
        r.deadline.period = Duration::from_millis(50);
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Deadline]);
        // An infinite offer satisfies only an infinite request.
        w.deadline.period = Duration::INFINITE;
        r.deadline.period = Duration::from_secs(3600);
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Deadline]);
        r.deadline.period = Duration::INFINITE;
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn latency_budget() {
        let mut w = writer();
        let mut r = reader();
        w.latency_budget.duration = Duration::from_millis(10);
        assert_eq!(incompatible(&w, &r), [QosPolicyId::LatencyBudget]);
        r.latency_budget.duration = Duration::from_millis(10);
        assert!(incompatible(&w, &r).is_empty());
        r.latency_budget.duration = Duration::INFINITE;
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn liveliness() {
        let kinds = [
            LivelinessKind::Automatic,
            LivelinessKind::ManualByParticipant,
            LivelinessKind::ManualByTopic,
        ];
        for (i, &offered) in kinds.iter().enumerate() {
            for (j, &requested) in kinds.iter().enumerate() {
                let mut w = writer();
                let mut r = reader();
                w.liveliness.kind = offered;
                r.liveliness.kind = requested;
                assert_eq!(incompatible(&w, &r).is_empty(), i >= j);
            }
        }
        let mut w = writer();
        let mut r = reader();
        w.liveliness.lease_duration = Duration::from_secs(10);
        r.liveliness.lease_duration = Duration::from_secs(5);
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Liveliness]);
        r.liveliness.lease_duration = Duration::from_secs(10);
        assert!(incompatible(&w, &r).is_empty());
        // Default (infinite) request accepts any finite lease.
        r.liveliness.lease_duration = Duration::INFINITE;
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn ownership() {
        let mut w = writer();
        let mut r = reader();
        w.ownership = Ownership::Exclusive;
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Ownership]);
        r.ownership = Ownership::Exclusive;
        assert!(incompatible(&w, &r).is_empty());
        w.ownership = Ownership::Shared;
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Ownership]);
        // Strength is not RxO.
        r.ownership = Ownership::Shared;
        w.ownership_strength.value = 7;
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn destination_order() {
        let mut w = writer();
        let mut r = reader();
        r.destination_order = DestinationOrder::BySourceTimestamp;
        assert_eq!(incompatible(&w, &r), [QosPolicyId::DestinationOrder]);
        w.destination_order = DestinationOrder::BySourceTimestamp;
        assert!(incompatible(&w, &r).is_empty());
        r.destination_order = DestinationOrder::ByReceptionTimestamp;
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn presentation() {
        let mut w = writer();
        let mut r = reader();
        r.presentation.access_scope = PresentationAccessScope::Topic;
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Presentation]);
        w.presentation.access_scope = PresentationAccessScope::Group;
        assert!(incompatible(&w, &r).is_empty());
        r.presentation.coherent_access = true;
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Presentation]);
        w.presentation.coherent_access = true;
        assert!(incompatible(&w, &r).is_empty());
        r.presentation.ordered_access = true;
        assert_eq!(incompatible(&w, &r), [QosPolicyId::Presentation]);
        w.presentation.ordered_access = true;
        assert!(incompatible(&w, &r).is_empty());
        // Offering more than requested is fine.
        r.presentation = Default::default();
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn data_representation() {
        let ids = |v: &[i16]| DataRepresentation {
            ids: v.iter().map(|&i| DataRepresentationId(i)).collect(),
        };
        let mut w = writer();
        let mut r = reader();
        // Cyclone DDS offers [XCDR, XCDR2]: XCDR is used, an XCDR2-only reader refuses.
        w.data_representation = ids(&[0, 2]);
        r.data_representation = ids(&[2]);
        assert_eq!(incompatible(&w, &r), [QosPolicyId::DataRepresentation]);
        r.data_representation = ids(&[2, 0]);
        assert!(incompatible(&w, &r).is_empty());
        // Only the writer's first entry counts.
        w.data_representation = ids(&[2, 0]);
        r.data_representation = ids(&[0]);
        assert_eq!(incompatible(&w, &r), [QosPolicyId::DataRepresentation]);
        // Defaults ([XCDR]) on both sides.
        assert!(incompatible(&writer(), &reader()).is_empty());
        // An empty list is [XCDR].
        w.data_representation = ids(&[]);
        r.data_representation = ids(&[0]);
        assert!(incompatible(&w, &r).is_empty());
    }

    #[test]
    fn every_failure_is_reported() {
        let mut w = writer();
        let mut r = reader();
        w.reliability = Reliability::best_effort();
        r.reliability = Reliability::reliable();
        r.durability = Durability::TransientLocal;
        r.deadline.period = Duration::from_secs(1);
        r.ownership = Ownership::Exclusive;
        let err = check_compatibility(&w, &r).expect_err("incompatible");
        assert_eq!(
            err.policies().collect::<Vec<_>>(),
            [
                QosPolicyId::Durability,
                QosPolicyId::Deadline,
                QosPolicyId::Ownership,
                QosPolicyId::Reliability
            ]
        );
        assert_eq!(err.len(), 4);
        assert!(!err.is_empty());
        assert!(err.contains(QosPolicyId::Deadline));
        assert!(!err.contains(QosPolicyId::Liveliness));
        assert_eq!(
            err.to_string(),
            "incompatible QoS: DURABILITY DEADLINE OWNERSHIP RELIABILITY"
        );
        assert_eq!(
            match_qos(&w, &r),
            Err(QosMismatch::Incompatible(err)),
            "partitions match, so RxO is reported"
        );
    }

    #[test]
    fn partition_mismatch_hides_rxo() {
        let mut w = writer();
        let mut r = reader();
        w.partition = Partition::new(["a"]);
        r.partition = Partition::new(["b"]);
        r.durability = Durability::Persistent;
        assert_eq!(match_qos(&w, &r), Err(QosMismatch::Partition));
        r.partition = Partition::new(["b", "a"]);
        assert!(matches!(
            match_qos(&w, &r),
            Err(QosMismatch::Incompatible(e)) if e.contains(QosPolicyId::Durability)
        ));
    }

    #[test]
    fn partitions() {
        let p = |names: &[&str]| Partition::new(names.iter().copied());
        // Empty == [""].
        assert!(partitions_match(&p(&[]), &p(&[])));
        assert!(partitions_match(&p(&[]), &p(&[""])));
        assert!(!partitions_match(&p(&[]), &p(&["a"])));
        assert!(partitions_match(&p(&[]), &p(&["*"])));
        assert!(!partitions_match(&p(&[]), &p(&["?"])));
        // Plain names.
        assert!(partitions_match(&p(&["a", "b"]), &p(&["c", "b"])));
        assert!(!partitions_match(&p(&["a", "b"]), &p(&["c", "d"])));
        assert!(!partitions_match(&p(&["A"]), &p(&["a"])));
        // Wildcards on either side.
        assert!(partitions_match(&p(&["sensor/*"]), &p(&["sensor/lidar"])));
        assert!(partitions_match(&p(&["sensor/lidar"]), &p(&["sensor/*"])));
        assert!(partitions_match(&p(&["x", "robot?"]), &p(&["robot1"])));
        assert!(!partitions_match(&p(&["robot?"]), &p(&["robot12"])));
        assert!(partitions_match(&p(&["cam[0-3]"]), &p(&["cam2"])));
        assert!(!partitions_match(&p(&["cam[0-3]"]), &p(&["cam4"])));
        // Two patterns never match, even identical ones.
        assert!(!partitions_match(&p(&["a*"]), &p(&["a*"])));
        assert!(!partitions_match(&p(&["*"]), &p(&["a?"])));
        // An escaped wildcard is a plain name.
        assert!(partitions_match(&p(&["a\\*"]), &p(&["a*"])));
        assert!(partition_names_match("a\\*", "a\\*"));
        assert!(!partition_names_match("a\\*", "ab"));
    }

    #[test]
    fn fnmatch_rules() {
        let cases: &[(&str, &str, bool)] = &[
            ("", "", true),
            ("", "a", false),
            ("*", "", true),
            ("*", "anything", true),
            ("a*", "a", true),
            ("a*b", "ab", true),
            ("a*b", "axxb", true),
            ("a*b", "axxbc", false),
            ("*b*", "abc", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("?", "é", true),
            ("??", "é", false),
            ("a?c", "abc", true),
            ("[abc]", "b", true),
            ("[abc]", "d", false),
            ("[!abc]", "d", true),
            ("[^abc]", "a", false),
            ("[a-c]x", "bx", true),
            ("[]]", "]", true),
            ("[!]]", "]", false),
            ("[a-]", "-", true),
            ("[a-]", "b", false),
            ("[\\]]", "]", true),
            ("[", "[", true),
            ("[ab", "[ab", true),
            ("\\*", "*", true),
            ("\\*", "a", false),
            ("a\\", "a\\", true),
            ("*.*", "a.b", true),
            ("/*", "/x/y", true),
        ];
        for &(pattern, name, expected) in cases {
            assert_eq!(
                fnmatch(pattern, name),
                expected,
                "fnmatch({pattern:?}, {name:?})"
            );
        }
    }

    #[test]
    fn fnmatch_is_not_exponential() {
        // The classic pathological case for naive recursive matchers.
        let pattern = "a*".repeat(40) + "b";
        let name = "a".repeat(200);
        assert!(!fnmatch(&pattern, &name));
    }
}
