//! Errors of the wire layer: one enum per layer, one variant per reason.
//!
//! Offsets in [`MessageError`] and [`MalformedError`] count from the first byte of the
//! RTPS message (the `R` of `RTPS`), so they point straight into a capture. Offsets in
//! [`ParameterListError`] count from the first byte given to the parameter-list parser,
//! except inside [`MalformedError::InlineQos`], where they too are message offsets.

/// Why a datagram is not an RTPS message this crate can read (DDSI-RTPS 2.5 §8.3.6.3).
///
/// The whole datagram is ignored in each case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// Fewer than the 20 bytes of an RTPS header.
    #[error("datagram of {len} bytes is shorter than the 20-byte RTPS header")]
    TooShort {
        /// Length of the datagram.
        len: usize,
    },
    /// The first four bytes are not `RTPS`.
    #[error("protocol id at offset 0 is {found:02x?}, not \"RTPS\"")]
    NotRtps {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// A major protocol version other than 2 (§8.3.6.3: a message of a newer major
    /// version is ignored; version 1 is a different wire format).
    #[error("protocol version {major}.{minor} at offset 4 is not 2.x")]
    UnsupportedVersion {
        /// Major version found.
        major: u8,
        /// Minor version found.
        minor: u8,
    },
    /// RTI Connext's 16-byte `RTPS` + version + vendor + `NDDSPING` datagram, which it
    /// sends to newly discovered locators. It is not an RTPS message and carries nothing
    /// for us; a receiver should drop it without counting it as malformed.
    #[error("RTI Connext NDDSPING datagram (not an RTPS message)")]
    ConnextPing,
}

/// Why a submessage is malformed. The submessage and everything after it in the message
/// are dropped (DDSI-RTPS 2.5 §8.3.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MalformedError {
    /// Fewer than the 4 bytes of a submessage header remain.
    #[error("{remaining} bytes at offset {offset} cannot hold a 4-byte submessage header")]
    TruncatedSubmessageHeader {
        /// Offset of the partial header.
        offset: usize,
        /// Bytes that remained.
        remaining: usize,
    },
    /// `octetsToNextHeader` points past the end of the message.
    #[error(
        "submessage 0x{submessage:02x} at offset {offset}: octetsToNextHeader {length} \
         exceeds the {remaining} bytes that remain"
    )]
    LengthPastEnd {
        /// Offset of the submessage header.
        offset: usize,
        /// Submessage id.
        submessage: u8,
        /// The `octetsToNextHeader` value.
        length: u16,
        /// Bytes after the submessage header.
        remaining: usize,
    },
    /// A field does not fit in the submessage.
    #[error(
        "submessage 0x{submessage:02x}: field at offset {offset} needs {needed} bytes, \
         {available} remain"
    )]
    Truncated {
        /// Offset of the field.
        offset: usize,
        /// Submessage id.
        submessage: u8,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that remained in the submessage.
        available: usize,
    },
    /// A writer sequence number that is not strictly positive (nor, for DATA and
    /// DATA_FRAG, `SEQUENCENUMBER_UNKNOWN`) (§8.3.7.2.3, §8.3.7.3.3, §8.3.7.6.3,
    /// §8.3.7.7.3).
    #[error(
        "submessage 0x{submessage:02x}: sequence number {value} at offset {offset} is not positive"
    )]
    InvalidSequenceNumber {
        /// Offset of the sequence number.
        offset: usize,
        /// Submessage id.
        submessage: u8,
        /// The value found.
        value: i64,
    },
    /// A SequenceNumberSet whose bitmapBase is not strictly positive (§9.4.2.6).
    #[error("SequenceNumberSet at offset {offset}: bitmapBase {base} is not positive")]
    SequenceNumberSetBase {
        /// Offset of the set.
        offset: usize,
        /// The base found.
        base: i64,
    },
    /// A SequenceNumberSet or FragmentNumberSet with numBits above 256 (§9.4.2.6,
    /// §9.4.2.8).
    #[error("number set at offset {offset}: numBits {num_bits} exceeds 256")]
    TooManyBits {
        /// Offset of the set.
        offset: usize,
        /// The numBits found.
        num_bits: u32,
    },
    /// A SequenceNumberSet whose base + numBits overflows.
    #[error("SequenceNumberSet at offset {offset}: base {base} + numBits {num_bits} overflows")]
    SequenceNumberSetOverflow {
        /// Offset of the set.
        offset: usize,
        /// The base found.
        base: i64,
        /// The numBits found.
        num_bits: u32,
    },
    /// A FragmentNumberSet whose bitmapBase is 0 (fragment numbers start at 1).
    #[error("FragmentNumberSet at offset {offset}: bitmapBase is 0")]
    FragmentNumberSetBase {
        /// Offset of the set.
        offset: usize,
    },
    /// A FragmentNumberSet whose base + numBits overflows.
    #[error("FragmentNumberSet at offset {offset}: base {base} + numBits {num_bits} overflows")]
    FragmentNumberSetOverflow {
        /// Offset of the set.
        offset: usize,
        /// The base found.
        base: u32,
        /// The numBits found.
        num_bits: u32,
    },
    /// A HEARTBEAT whose lastSN is below firstSN - 1 (§8.3.7.5.3).
    #[error("HEARTBEAT at offset {offset}: firstSN {first} > lastSN {last} + 1")]
    HeartbeatRange {
        /// Offset of firstSN.
        offset: usize,
        /// firstSN.
        first: i64,
        /// lastSN.
        last: i64,
    },
    /// A GAP whose gapList starts before gapStart (a reversed range).
    #[error("GAP at offset {offset}: gapList.bitmapBase {list_base} < gapStart {gap_start}")]
    GapRange {
        /// Offset of gapStart.
        offset: usize,
        /// gapStart.
        gap_start: i64,
        /// gapList.bitmapBase.
        list_base: i64,
    },
    /// A DATA with both the D and the K flag (§9.4.5.3.1: an invalid combination).
    #[error("DATA at offset {offset} has both the D and K flags")]
    DataAndKeyFlags {
        /// Offset of the submessage header.
        offset: usize,
    },
    /// `octetsToInlineQos` points inside the fixed part of a DATA or DATA_FRAG.
    #[error(
        "submessage 0x{submessage:02x} at offset {offset}: octetsToInlineQos {value} is \
         below the fixed part ({minimum})"
    )]
    InlineQosOffsetTooSmall {
        /// Offset of octetsToInlineQos.
        offset: usize,
        /// Submessage id.
        submessage: u8,
        /// The value found.
        value: u16,
        /// The smallest valid value.
        minimum: u16,
    },
    /// `octetsToInlineQos` points past the end of the submessage.
    #[error(
        "submessage 0x{submessage:02x} at offset {offset}: octetsToInlineQos {value} \
         exceeds the {available} bytes that follow it"
    )]
    InlineQosOffsetPastEnd {
        /// Offset of octetsToInlineQos.
        offset: usize,
        /// Submessage id.
        submessage: u8,
        /// The value found.
        value: u16,
        /// Bytes after the field.
        available: usize,
    },
    /// The inline QoS parameter list is malformed.
    #[error("submessage 0x{submessage:02x}: inline QoS: {error}")]
    InlineQos {
        /// Submessage id.
        submessage: u8,
        /// What is wrong with the list (offsets are message offsets).
        #[source]
        error: ParameterListError,
    },
    /// The D or K flag is set but fewer than the 4 bytes of an encapsulation header
    /// remain for the serialized payload.
    #[error(
        "submessage 0x{submessage:02x}: serialized payload at offset {offset} has {len} \
         bytes, less than its 4-byte encapsulation header"
    )]
    PayloadTooShort {
        /// Offset of the payload.
        offset: usize,
        /// Submessage id.
        submessage: u8,
        /// Bytes available for the payload.
        len: usize,
    },
    /// DATA_FRAG with fragmentSize 0.
    #[error("DATA_FRAG at offset {offset}: fragmentSize is 0")]
    FragmentSizeZero {
        /// Offset of fragmentSize.
        offset: usize,
    },
    /// DATA_FRAG with fragmentStartingNum 0 (fragment numbers start at 1).
    #[error("DATA_FRAG at offset {offset}: fragmentStartingNum is 0")]
    FragmentStartingNumZero {
        /// Offset of fragmentStartingNum.
        offset: usize,
    },
    /// DATA_FRAG with fragmentsInSubmessage 0.
    #[error("DATA_FRAG at offset {offset}: fragmentsInSubmessage is 0")]
    FragmentsInSubmessageZero {
        /// Offset of fragmentsInSubmessage.
        offset: usize,
    },
    /// DATA_FRAG whose fragments extend past the last fragment of the sample.
    #[error(
        "DATA_FRAG at offset {offset}: fragments {first}..{first}+{count} exceed the \
         {total} fragments of the sample"
    )]
    FragmentsPastSample {
        /// Offset of fragmentStartingNum.
        offset: usize,
        /// fragmentStartingNum.
        first: u32,
        /// fragmentsInSubmessage.
        count: u16,
        /// ceil(sampleSize / fragmentSize).
        total: u64,
    },
    /// DATA_FRAG carrying fewer bytes than its fragments announce.
    #[error(
        "DATA_FRAG: fragment data at offset {offset} has {actual} bytes, the fragments \
         announce {expected}"
    )]
    FragmentDataShort {
        /// Offset of the fragment data.
        offset: usize,
        /// Bytes announced by the fragment fields.
        expected: u64,
        /// Bytes present.
        actual: usize,
    },
    /// HEARTBEAT_FRAG with lastFragmentNum 0.
    #[error("HEARTBEAT_FRAG at offset {offset}: lastFragmentNum is 0")]
    FragmentNumberZero {
        /// Offset of lastFragmentNum.
        offset: usize,
    },
    /// A locator list whose count needs more bytes than remain.
    #[error("locator list at offset {offset}: {count} locators do not fit in {available} bytes")]
    LocatorListTooLong {
        /// Offset of the count.
        offset: usize,
        /// The count found.
        count: u32,
        /// Bytes after the count.
        available: usize,
    },
}

/// Why a parameter list (DDSI-RTPS 2.5 §9.4.2.11) is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParameterListError {
    /// The bytes end before a PID_SENTINEL.
    #[error("parameter list ends at offset {offset} without PID_SENTINEL")]
    MissingSentinel {
        /// Offset where the next parameter header was expected.
        offset: usize,
    },
    /// Fewer than the 4 bytes of a parameter header remain.
    #[error("{remaining} bytes at offset {offset} cannot hold a 4-byte parameter header")]
    TruncatedParameterHeader {
        /// Offset of the partial header.
        offset: usize,
        /// Bytes that remained.
        remaining: usize,
    },
    /// A parameter's length runs past the end of the list.
    #[error(
        "parameter 0x{pid:04x} at offset {offset}: length {length} exceeds the {remaining} \
         bytes that remain"
    )]
    ValuePastEnd {
        /// Offset of the parameter header.
        offset: usize,
        /// Parameter id.
        pid: u16,
        /// Length found.
        length: u16,
        /// Bytes after the parameter header.
        remaining: usize,
    },
    /// Fewer than the 4 bytes of an encapsulation header.
    #[error("serialized payload of {len} bytes has no 4-byte encapsulation header")]
    TruncatedEncapsulation {
        /// Length of the payload.
        len: usize,
    },
    /// An encapsulation other than PL_CDR_BE (0x0002) or PL_CDR_LE (0x0003).
    #[error("encapsulation 0x{id:04x} at offset 0 is not PL_CDR_BE or PL_CDR_LE")]
    NotParameterList {
        /// Encapsulation id found.
        id: u16,
    },
}

/// Why a value could not be emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EmitError {
    /// The output buffer is shorter than `buffer_len()`.
    #[error("emit needs {needed} bytes, the buffer has {available}")]
    BufferTooSmall {
        /// Bytes needed (up to and including the field that did not fit).
        needed: usize,
        /// Bytes in the buffer.
        available: usize,
    },
    /// A submessage body longer than 65535 bytes cannot be described by
    /// `octetsToNextHeader` (fragment it with DATA_FRAG).
    #[error("submessage body of {len} bytes exceeds 65535")]
    SubmessageTooLong {
        /// Body length.
        len: usize,
    },
    /// A parameter value longer than a parameter length can describe.
    #[error("parameter 0x{pid:04x} value of {len} bytes exceeds 65532")]
    ParameterTooLong {
        /// Parameter id.
        pid: u16,
        /// Value length.
        len: usize,
    },
    /// A locator list with more locators than a u32 count can describe.
    #[error("locator list of {count} locators is too long")]
    TooManyLocators {
        /// Number of locators.
        count: usize,
    },
}
