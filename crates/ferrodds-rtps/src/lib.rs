//! The participant core of FerroDDS — RTPS, discovery and DCPS — without I/O: it takes
//! timestamps and received bytes and hands out datagrams to send and events, and never
//! touches a socket, a clock or a thread.
//!
//! - [`wire`]: the RTPS 2.5 wire representation — parsing (zero-copy, both byte orders,
//!   never panicking on hostile input) and emitting of the message header, every submessage
//!   of DDSI-RTPS 2.5 §9.4.5, parameter lists, and the basic types.
//! - [`writer`] and [`reader`]: reliable and best-effort RTPS endpoints with their history
//!   caches, HEARTBEAT/ACKNACK/GAP, fragmentation and reassembly (DATA_FRAG, NACK_FRAG).
//! - [`participant`]: a participant's endpoints and the routing of received submessages
//!   (with [`receiver`], the INFO_* state of a message).
//! - [`discovery`] (SPDP/SEDP data), [`qos`] (policies and matching) and
//!   [`discovery_engine`] (announcing, leases, matching local with remote endpoints).
//! - [`limits`]: how much remote peers can make a participant hold.
//! - [`liveliness`]: the writer liveliness protocol's participant messages.
//! - [`coherence`]: coherent sets and group order as changes carry them (PRESENTATION);
//!   [`original_writer`]: the writer a change relayed by a durability service came from.
//! - [`dcps`]: DCPS readers' caches and QoS rules, writers' and readers' statuses.
//! - [`participant_core`]: the endpoints, discovery and DCPS behind one `handle_*`/`poll_*`
//!   surface, which every driver uses.
//!
//! It does not interpret serialized payloads (CDR lives in `ferrodds-cdr`), only the
//! parameter-list framing that discovery data and inline QoS share. RTPS security
//! submessages (SEC_*, SRTPS_*) and the DDSI-RTPS 2.4/2.5 group-information extensions of
//! HEARTBEAT and GAP are not decoded: the former are skipped as not understood, the
//! latter ignored as trailing bytes.

#![forbid(unsafe_code)]

pub mod wire;

pub mod dcps;
pub mod diagnosis;

pub mod discovery;
pub mod qos;

mod admission;
pub mod buffer_pool;
pub mod coherence;
pub mod discovery_engine;
mod endpoint;
pub mod limits;
pub mod liveliness;
pub mod original_writer;
mod outbox;
pub mod participant;
pub mod participant_core;
pub mod payload;
pub mod payload_pool;
pub mod reader;
pub mod receiver;
mod seq_map;
mod time;
mod transmit;
pub mod type_lookup;
pub mod writer;

pub use dcps::Event;
pub use discovery_engine::{
    Discovery, DiscoveryConfig, DiscoveryEvent, DiscoveryStats, LocalEndpoint,
};
pub use endpoint::{ChangeKind, History};
pub use limits::Limits;
pub use participant::{Participant, ReceiveStats};
pub use participant_core::ParticipantCore;
pub use reader::{Reader, ReaderConfig, ReaderStats, ReceivedChange, RemoteWriter};
pub use time::Timestamp;
pub use transmit::{Spliced, Transmit};
pub use writer::{
    Change, DisposeKey, LargeDatagrams, ReaderFilter, Reducer, RemoteReader, WriteError, Writer,
    WriterConfig, WriterStats, LARGE_FRAGMENT,
};
