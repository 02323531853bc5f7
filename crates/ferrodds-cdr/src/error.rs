//! Errors of encoding, decoding and the JSON view. Each says what was expected, where, and
//! what was found, so that a user can act on it without a hex dump.

use std::borrow::Cow;
use std::fmt;

/// The name of a type or member in an error: a literal for derived types, owned for types
/// built at run time (`crate::dynamic`).
pub type Name = Cow<'static, str>;

/// One step of the path from the top-level sample to the value an error concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// A member of a struct or union, by name.
    Member(Name),
    /// An element of a sequence or array, by index.
    Index(usize),
}

/// A path such as `Mutable.app.pts[2].x`, built while an error unwinds (so it costs
/// nothing on the successful path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(Vec<PathSegment>);

impl Path {
    pub(crate) fn push_front(&mut self, segment: PathSegment) {
        self.0.insert(0, segment);
    }

    /// True when the error happened at the top level.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                PathSegment::Member(name) if i == 0 => write!(f, "{name}")?,
                PathSegment::Member(name) => write!(f, ".{name}")?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Why decoding failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended inside a value.
    #[error("expected {needed} byte(s) of {what}, found only {remaining}")]
    UnexpectedEnd {
        /// What was being read.
        what: &'static str,
        /// How many bytes it needed.
        needed: usize,
        /// How many bytes were left.
        remaining: usize,
    },
    /// A length (of a sequence, string, DHEADER or member) claims more than the input holds:
    /// more bytes than remain, or more elements than the remaining bytes could encode.
    #[error("expected {what} to fit the {remaining} byte(s) left, found {claimed}")]
    LengthExceedsInput {
        /// What carried the length.
        what: &'static str,
        /// The length claimed: a count of elements for sequence and string lengths, of
        /// bytes for DHEADERs, NEXTINTs and parameter lengths.
        claimed: u64,
        /// The bytes that remain.
        remaining: usize,
    },
    /// A boolean octet other than 0 or 1.
    #[error("expected a boolean (0 or 1), found {0}")]
    InvalidBool(u8),
    /// A string without its terminating NUL.
    #[error("expected a string terminated by NUL, found byte {0:#04x} in its last place")]
    StringNotTerminated(u8),
    /// A string of length 0 (XCDR strings always count their NUL).
    #[error("expected a string length of at least 1 (the NUL), found 0")]
    StringLengthZero,
    /// String bytes that are not UTF-8.
    #[error("expected UTF-8 text, found invalid bytes at offset {valid_up_to} of the string")]
    InvalidUtf8 {
        /// How many leading bytes were valid.
        valid_up_to: usize,
    },
    /// A wide string whose UTF-16 is not valid.
    #[error("expected UTF-16 text in a wide string, found an unpaired surrogate")]
    InvalidUtf16,
    /// A bounded string or sequence longer than its bound.
    #[error("expected at most {bound} element(s), found {found}")]
    BoundExceeded {
        /// The bound of the type.
        bound: usize,
        /// The length found.
        found: u64,
    },
    /// An enum value that names no enumerator.
    #[error("expected an enumerator of {type_name}, found value {value}")]
    UnknownEnumerator {
        /// The enum.
        type_name: Name,
        /// The value found.
        value: i64,
    },
    /// A union discriminator that selects no branch, in a union without a default branch.
    #[error("expected a discriminator selecting a branch of {type_name}, found {value}")]
    UnknownDiscriminator {
        /// The union.
        type_name: Name,
        /// The discriminator found, as JSON.
        value: String,
    },
    /// A member of a mutable type that the sender marked must-understand, and that this
    /// type does not have.
    #[error("found member id {id:#x} marked must-understand, which {type_name} does not have")]
    UnknownMustUnderstand {
        /// The type being decoded.
        type_name: Name,
        /// The member id found.
        id: u32,
    },
    /// A member that must be present is absent (a key, or a member without a default).
    #[error("expected member {member} of {type_name}, found it absent")]
    MissingMember {
        /// The type being decoded.
        type_name: Name,
        /// The member's name.
        member: Name,
    },
    /// A member id appears twice in a mutable encoding.
    #[error("found member id {id:#x} of {type_name} twice")]
    DuplicateMember {
        /// The type being decoded.
        type_name: Name,
        /// The member id.
        id: u32,
    },
    /// An EMHEADER length code whose implied length disagrees with the member.
    #[error(
        "member header length code {code} says {claimed} byte(s), but the member needs {needed}"
    )]
    LengthCodeMismatch {
        /// The length code.
        code: u8,
        /// The length the code implies.
        claimed: u64,
        /// The size the member needs.
        needed: usize,
    },
    /// An encapsulation header this crate cannot decode.
    #[error(
        "expected an encapsulation id of CDR, PL_CDR, CDR2, D_CDR2 or PL_CDR2, found {0:#06x}"
    )]
    UnsupportedEncapsulation(u16),
    /// An encapsulation that does not fit the type (for example PL_CDR for a final type).
    #[error("expected {expected} for this type, found encapsulation {found:#06x}")]
    EncapsulationMismatch {
        /// What the type needs.
        expected: &'static str,
        /// The encapsulation id found.
        found: u16,
    },
    /// A character code above what the type can hold.
    #[error("expected a character, found code {0:#x}")]
    InvalidChar(u32),
    /// Input left after the value, where none is allowed.
    #[error("expected the end of input, found {0} more byte(s)")]
    TrailingBytes(usize),
    /// A NUL byte inside a string, before its terminator (CDR strings cannot hold NUL, and
    /// a C peer would read the string as ending there).
    #[error(
        "expected a string without NUL before its terminator, found NUL at byte {0} of the string"
    )]
    NulInString(usize),
    /// Structs and unions nested deeper than the decoder allows (only recursive types, such
    /// as a tree holding a sequence of itself, can nest without bound).
    #[error("expected structs and unions nested at most {limit} deep, found deeper nesting")]
    NestingTooDeep {
        /// The deepest nesting the decoder accepts.
        limit: usize,
    },
    /// An XCDR1 PID_EXTENDED parameter header whose length is not 8.
    #[error("expected the length of a PID_EXTENDED parameter header to be 8, found {0}")]
    ExtendedHeaderLength(u16),
    /// An XCDR2 wstring length that is not a whole number of UTF-16 code units.
    #[error("expected a wstring length in bytes that is even (2 per UTF-16 code unit), found {0}")]
    OddWideStringLength(u64),
}

/// A decoding failure: what, at which byte offset of the payload, and in which member.
///
/// The details sit behind a box (read them through `Deref`, e.g. `err.kind`) so that a
/// `Result<T, DecodeError>` stays one word wider than `T` on the hot path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(Box<DecodeErrorDetail>);

/// What a [`DecodeError`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeErrorDetail {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Byte offset of the problem: from the start of the payload for [`crate::deserialize`]
    /// (which counts the encapsulation header), from the decoder's origin otherwise.
    pub offset: usize,
    /// Where in the sample it went wrong.
    pub path: Path,
}

impl DecodeError {
    /// A new error at `offset`.
    #[cold]
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        Self(Box::new(DecodeErrorDetail {
            kind,
            offset,
            path: Path::default(),
        }))
    }

    /// Adds the member the error happened in (called while unwinding).
    #[cold]
    pub fn in_member(mut self, name: impl Into<Name>) -> Self {
        self.0.path.push_front(PathSegment::Member(name.into()));
        self
    }

    /// Adds the element index the error happened in (called while unwinding).
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path.push_front(PathSegment::Index(index));
        self
    }

    /// Moves the error's offset (for example past a header the decoder did not see).
    #[cold]
    pub fn at_offset(mut self, offset: usize) -> Self {
        self.0.offset = offset;
        self
    }
}

impl std::ops::Deref for DecodeError {
    type Target = DecodeErrorDetail;

    fn deref(&self) -> &DecodeErrorDetail {
        &self.0
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at byte {}: {}", self.offset, self.kind)
        } else {
            write!(f, "at byte {} ({}): {}", self.offset, self.path, self.kind)
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why encoding failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A string or sequence longer than its bound.
    #[error("expected at most {bound} element(s), found {found}")]
    BoundExceeded {
        /// The bound.
        bound: usize,
        /// The length of the value.
        found: usize,
    },
    /// A length that does not fit the 32 bits CDR gives it.
    #[error("expected a length below 2^32, found {0}")]
    LengthOverflow(usize),
    /// A `char` outside ISO-8859-1, which IDL `char` cannot hold.
    #[error("expected a character in ISO-8859-1 (IDL char is 8 bits), found {0:?}")]
    CharOutOfRange(char),
    /// A `char` outside the basic multilingual plane, which IDL `wchar` cannot hold.
    #[error(
        "expected a character in the basic multilingual plane (IDL wchar is 16 bits), found {0:?}"
    )]
    WideCharOutOfRange(char),
    /// A string holding NUL, which CDR strings cannot carry.
    #[error("expected a string without NUL characters, found one at byte {0}")]
    NulInString(usize),
    /// A dynamic value that is not a value of its type (`crate::dynamic`): another kind,
    /// an integer out of range, a struct with another number of members.
    #[error("expected a value of {type_name}, found another kind of value")]
    ValueMismatch {
        /// The type the value should have had.
        type_name: Name,
    },
}

/// An encoding failure and the member it happened in.
///
/// Boxed as [`DecodeError`] is (read the details through `Deref`, e.g. `err.kind`): every
/// write returns a `Result<(), EncodeError>`, which is then one word, returned in a
/// register, instead of a 48-byte value returned through memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(Box<EncodeErrorDetail>);

/// What an [`EncodeError`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeErrorDetail {
    /// What went wrong.
    pub kind: EncodeErrorKind,
    /// Where in the sample.
    pub path: Path,
}

impl EncodeError {
    /// A new error at the top level.
    #[cold]
    pub fn new(kind: EncodeErrorKind) -> Self {
        Self(Box::new(EncodeErrorDetail {
            kind,
            path: Path::default(),
        }))
    }

    /// Adds the member the error happened in (called while unwinding).
    #[cold]
    pub fn in_member(mut self, name: impl Into<Name>) -> Self {
        self.0.path.push_front(PathSegment::Member(name.into()));
        self
    }

    /// Adds the element index the error happened in (called while unwinding).
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path.push_front(PathSegment::Index(index));
        self
    }
}

impl std::ops::Deref for EncodeError {
    type Target = EncodeErrorDetail;

    fn deref(&self) -> &EncodeErrorDetail {
        &self.0
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

impl std::error::Error for EncodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_like_member_access() {
        let e = DecodeError::new(DecodeErrorKind::InvalidBool(7), 12)
            .in_member("x")
            .at_index(2)
            .in_member("pts")
            .in_member("Shape");
        assert_eq!(
            e.to_string(),
            "at byte 12 (Shape.pts[2].x): expected a boolean (0 or 1), found 7"
        );
    }
}
