//! FerroDDS: the DDS publish/subscribe API (DCPS) over RTPS.
//!
//! ```no_run
//! use ferrodds::{Cdr, DomainParticipant, Qos};
//! use std::time::Duration;
//!
//! #[derive(Cdr, Debug, Clone, PartialEq)]
//! #[cdr(appendable, type_name = "demo::Reading")]
//! struct Reading {
//!     #[cdr(key)]
//!     sensor: i32,
//!     value: f64,
//! }
//!
//! let participant = DomainParticipant::new(0)?;
//! let topic = participant.create_topic::<Reading>("readings")?;
//! let writer = participant.create_writer(&topic, Qos::writer())?;
//! let reader = participant.create_reader(&topic, Qos::reader().reliable())?;
//! writer.write(&Reading { sensor: 1, value: 21.5 })?;
//! if reader.wait_for_data(Duration::from_secs(1)) {
//!     for sample in reader.take()? {
//!         println!("{:?} {:?}", sample.data, sample.info.instance_state);
//!     }
//! }
//! # Ok::<(), ferrodds::Error>(())
//! ```
//!
//! The participant runs a receive thread per socket and a timer thread; writes go out in
//! the caller's thread (or, with [`PublishMode::Asynchronous`], from the timer thread);
//! readers decode samples in the caller's thread when they take them.

#![forbid(unsafe_code)]

mod channel;
mod error;
mod loan;
mod participant;
pub mod qos;
mod reader;
mod runtime;
mod status;
mod type_support;
mod waitset;
mod writer;

pub use error::{Error, Result};
pub use ferrodds_cdr::dynamic;
pub use ferrodds_cdr::{Cdr, JsonView};
pub use ferrodds_rtps::dcps::status::{
    DeadlineMissedStatus, IncompatibleStatus, InconsistentTopicStatus, LivelinessChangedStatus,
    LivelinessLostStatus, MatchedStatus, SampleLostStatus, SampleRejectedReason,
    SampleRejectedStatus,
};
pub use ferrodds_rtps::dcps::{
    FilterError, FilterExpression, InstanceHandle, InstanceState, SampleInfo, SampleState,
    Selection, ViewState,
};
pub use ferrodds_rtps::diagnosis::{Obstacle, PairDiagnosis, TopicDiagnosis, TopicEndpoint};
pub use ferrodds_rtps::discovery::{EndpointData, EndpointKind, ParticipantData};
pub use ferrodds_rtps::payload::ReceivedPayload;
pub use ferrodds_rtps::wire::{Guid, Locator, VendorId};
pub use ferrodds_rtps::{ChangeKind, Limits};
pub use loan::{Loan, Loaned, Plain, SampleLoan};
pub use participant::{
    DiscoveredEndpoint, DomainParticipant, DynamicTopic, ParticipantBuilder, Publisher, Subscriber,
    Topic,
};
pub use qos::{PublishMode, Qos};
pub use reader::{DataReader, DynamicReader, Sample, TakeFuture};
pub use runtime::{waiting_threads_receive, SendStats, StatusKind, StatusMask};
pub use waitset::{Condition, WaitSet};
pub use writer::{DataWriter, DynamicWriter, SerializedBuffer};

// The derive macro's generated code names `::ferrodds_cdr`; users of this crate get it
// through this re-export.
#[doc(hidden)]
pub use ferrodds_cdr;
