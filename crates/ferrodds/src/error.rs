//! Errors of the DCPS API.

use ferrodds_cdr::{DecodeError, EncodeError};
use ferrodds_transport::{ConfigError, TransportError};

/// What went wrong in a DCPS call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport could not be opened (ports, interfaces, sockets).
    #[error("cannot open the transport: {0}")]
    Transport(#[from] TransportError),
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A sample could not be serialized.
    #[error("cannot serialize the sample: {0}")]
    Encode(#[from] EncodeError),
    /// A received sample could not be deserialized.
    #[error("cannot deserialize a received sample: {0}")]
    Decode(#[from] DecodeError),
    /// The operation did not complete within its time limit (DDS RETCODE_TIMEOUT).
    #[error("timed out after {0:?}: {1}")]
    Timeout(std::time::Duration, &'static str),
    /// The sample is larger than RTPS can carry.
    #[error("a sample of {0} bytes is larger than RTPS can carry")]
    TooLarge(usize),
    /// The participant was closed.
    #[error("the participant is closed")]
    Closed,
    /// A type obtained from a peer cannot be used (its TypeObject describes something this
    /// implementation does not support, or is malformed).
    #[error("cannot use the type a peer described: {0}")]
    Type(#[from] ferrodds_cdr::dynamic::type_object::TypeObjectError),
    /// A loan of a type whose bytes are not its encoding (see [`crate::Plain`]).
    #[error("{type_name} cannot be lent as a plain type: {reason}")]
    NotPlain {
        /// The type.
        type_name: &'static str,
        /// What stands in the way.
        reason: &'static str,
    },
    /// A sample serialized elsewhere ([`crate::DynamicWriter::write_serialized`]) does not
    /// start with an encapsulation the writer may send (XTypes 7.6.3.1.2): fewer than four
    /// bytes, not XCDR, another XCDR version than the writer's data representation, or the
    /// form of another extensibility kind. Nothing was written.
    #[error(
        "the serialized sample's encapsulation is {}, where this writer sends {expected:?} \
         (in either byte order)",
        encapsulation_text(.found)
    )]
    Encapsulation {
        /// The representation identifier found (`None`: fewer than four bytes).
        found: Option<u16>,
        /// What the writer sends, in this machine's byte order (the other order is
        /// accepted too).
        expected: ferrodds_cdr::RepresentationId,
    },
    /// An instance handle names no instance this writer has registered (DDS
    /// RETCODE_BAD_PARAMETER for `unregister_instance`/`dispose_instance` by handle).
    #[error("instance {0:?} is not registered with this writer")]
    UnknownInstance(ferrodds_rtps::dcps::InstanceHandle),
    /// A filter expression (a content-filtered topic's, a query's) that does not parse or
    /// does not fit the type (DDS RETCODE_BAD_PARAMETER).
    #[error("the filter expression {expression:?}: {error}")]
    Filter {
        /// The expression.
        expression: String,
        /// What is wrong with it, and where.
        error: ferrodds_rtps::dcps::FilterError,
    },
    /// `set_qos` would change a policy that may not change once the entity exists (DDS
    /// RETCODE_IMMUTABLE_POLICY; DDS 1.4 §2.2.3's "Changeable" column): nothing changed.
    #[error("the {0} policy cannot change once the entity exists; nothing was changed")]
    ImmutablePolicy(&'static str),
    /// A loan in shared memory could not be published (iceoryx2 refused it).
    #[error("cannot hand the lent sample to its readers through shared memory: {0}")]
    SharedMemory(#[source] std::io::Error),
    /// An argument is invalid (DDS RETCODE_BAD_PARAMETER).
    #[error("bad parameter: {0}")]
    BadParameter(String),
}

fn encapsulation_text(found: &Option<u16>) -> String {
    found.map_or_else(|| "missing".to_owned(), |id| format!("0x{id:04x}"))
}

/// The result of DCPS calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;
