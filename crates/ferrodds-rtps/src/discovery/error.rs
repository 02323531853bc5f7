//! Errors of the discovery data parsers: one enum for the message, one for a value.
//!
//! Offsets count from the first byte of the serialized payload (the encapsulation
//! header), as [`crate::wire::ParameterList::parse_encapsulated`] reports them, and point
//! at the parameter's 4-byte header.

use crate::wire::{EntityId, ParameterListError};

/// Why a discovery payload (SPDP or SEDP data) was ignored.
///
/// Every variant means the whole sample is dropped: the spec gives no way to accept half
/// of a participant or endpoint announcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// The payload is not a well-formed `PL_CDR_BE`/`PL_CDR_LE` parameter list.
    #[error("discovery payload: {0}")]
    ParameterList(#[from] ParameterListError),
    /// A parameter we interpret has a value we cannot accept.
    #[error("parameter 0x{pid:04x} at offset {offset}: {reason}")]
    InvalidParameter {
        /// Offset of the parameter header.
        offset: usize,
        /// Parameter id.
        pid: u16,
        /// What is wrong with the value.
        reason: ValueError,
    },
    /// A parameter that may appear once appears again (Cyclone DDS rejects these lists
    /// too). Locators may repeat, and a repeated `PID_TYPE_INFORMATION` is tolerated.
    #[error("parameter 0x{pid:04x} at offset {offset} repeats an earlier one")]
    DuplicateParameter {
        /// Offset of the repeated parameter's header.
        offset: usize,
        /// Parameter id.
        pid: u16,
    },
    /// A parameter with the must-understand bit (0x4000) that we do not understand: the
    /// whole list is to be ignored (DDSI-RTPS 2.5 §9.6.2.2.1). This includes
    /// vendor-specific ids with that bit.
    #[error(
        "must-understand parameter 0x{pid:04x} at offset {offset} is not understood; \
         the sample is ignored (DDSI-RTPS 2.5 §9.6.2.2.1)"
    )]
    NotUnderstood {
        /// Offset of the parameter header.
        offset: usize,
        /// Parameter id.
        pid: u16,
    },
    /// A parameter without which the data means nothing (a GUID, a topic or type name).
    #[error("required parameter 0x{pid:04x} is missing")]
    MissingParameter {
        /// The id of the missing parameter.
        pid: u16,
    },
    /// A GUID whose entity kind does not fit the data: a participant GUID whose entity id
    /// is not `ENTITYID_PARTICIPANT`, a writer announced with a reader's GUID, or the
    /// reverse (DDSI-RTPS 2.5 §9.3.1.2).
    #[error("parameter 0x{pid:04x} at offset {offset}: unexpected entity id {entity_id:?}")]
    UnexpectedEntityId {
        /// Offset of the parameter header.
        offset: usize,
        /// Parameter id.
        pid: u16,
        /// The entity id found.
        entity_id: EntityId,
    },
}

/// Why a parameter value was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// The value is shorter than its content needs.
    #[error("value of {length} bytes is too short: {needed} needed")]
    Truncated {
        /// Bytes needed up to the field that did not fit.
        needed: usize,
        /// Length of the value.
        length: usize,
    },
    /// An enumerated value (a QoS kind) outside its range.
    #[error("unknown kind {value}")]
    UnknownKind {
        /// The value found.
        value: u32,
    },
    /// A `Duration_t` with negative seconds.
    #[error("negative duration ({seconds} s)")]
    NegativeDuration {
        /// The seconds found.
        seconds: i32,
    },
    /// A boolean octet other than 0 or 1.
    #[error("boolean octet {value} is neither 0 nor 1")]
    InvalidBoolean {
        /// The octet found.
        value: u8,
    },
    /// A string whose last counted byte is not NUL.
    #[error("string is not NUL-terminated")]
    StringNotTerminated,
    /// A string with a NUL before its end.
    #[error("string contains a NUL before its end")]
    StringInteriorNul,
    /// A string that is not UTF-8.
    #[error("string is not UTF-8")]
    StringNotUtf8,
    /// A sequence count larger than the remaining bytes could hold.
    #[error("sequence of {count} elements does not fit in {available} bytes")]
    CountTooLarge {
        /// The count found.
        count: u32,
        /// Bytes left for the elements.
        available: usize,
    },
}
