//! The RTPS writer (RTPS 2.5 §8.4.7–8.4.9): a history cache and, per matched reader, the
//! state of what it has been sent and has acknowledged.
//!
//! Push mode: `write` sends the change to every matched reader at once. A reliable writer
//! piggy-backs a HEARTBEAT on the data, sends HEARTBEATs every `heartbeat_period` while a
//! reliable reader has not acknowledged everything, answers an ACKNACK by resending what it
//! still has and sending GAP for what it no longer has, and answers NACK_FRAG by resending
//! fragments. Samples larger than `fragment_size` go out as DATA_FRAG.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::coherence::Coherence;
use crate::endpoint::{inline_qos, parse_inline_qos, ChangeKind, History, ANY_READER};
use crate::original_writer::OriginalWriterInfo;
use crate::outbox::Outbox;
use crate::payload::Payload;
use crate::payload_pool::{PayloadPool, MAX_KEPT_BYTES, WRITER_KEPT_MAX_BYTES};
use crate::seq_map::SeqMap;
use crate::time::{earliest, Timestamp};
use crate::transmit::Transmit;
use crate::wire::{
    AckNack, Data, DataFrag, DataPayload, FragmentNumberSet, Gap, Guid, GuidPrefix, Heartbeat,
    InfoTimestamp, Locator, NackFrag, SequenceNumber, SequenceNumberSet, Submessage, Time,
    MAX_SET_BITS,
};

/// The most bytes of one sample's fragments a writer sends to reliable readers before
/// asking what arrived (fragment pacing): a quarter of the 4 MiB socket receive buffer
/// FerroDDS asks for.
const MAX_FRAGMENT_BURST: usize = 1 << 20;

/// How a writer behaves.
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// RELIABLE (true) or BEST_EFFORT.
    pub reliable: bool,
    /// TRANSIENT_LOCAL: keep the history for readers that match later.
    pub transient_local: bool,
    /// The history kind.
    pub history: History,
    /// The most samples the history holds (RESOURCE_LIMITS max_samples); a KEEP_ALL writer
    /// refuses writes beyond it until readers acknowledge.
    pub max_samples: usize,
    /// The most payload bytes a KEEP_ALL history holds (one change is always admitted):
    /// flow control. Without it a writer of large samples fills the readers' socket buffers
    /// far faster than they drain, and what overflows must be repaired, again and again
    /// (Cyclone DDS bounds its writer history cache in bytes the same way).
    pub max_bytes: usize,
    /// Period of HEARTBEATs while readers have unacknowledged samples.
    pub heartbeat_period: Duration,
    /// Samples larger than this go out as DATA_FRAG fragments of this size.
    pub fragment_size: usize,
    /// The largest datagram to build.
    pub max_message_size: usize,
    /// A piggy-backed HEARTBEAT asks for an acknowledgment (final flag clear) once a reader
    /// has this many unacknowledged samples (sixteen times as many with writer batching).
    pub ack_request_threshold: usize,
    /// A change resent to a reader is not resent to it again on a request that comes
    /// sooner than this (RTPS 2.5 §8.4.7.1 nackSuppressionDuration): the first resend is
    /// probably still on its way, and a reader that lost it asks again after a later
    /// HEARTBEAT. Without it, a burst over a lossy link makes a reader list the same holes in
    /// one ACKNACK after another, and each would resend all of them.
    pub nack_suppression: Duration,
    /// Writer batching: new changes are packed into datagrams of up to `max_message_size`
    /// and a datagram goes out when it is full, on [`Writer::flush`], or this long after
    /// its first change was written. `None` (the default): each change goes out at once
    /// (repairs, GAPs and HEARTBEATs are packed either way, but never held back).
    pub batch_delay: Option<Duration>,
    /// Readers reached only through transports of large datagrams (shared memory, this
    /// process) get fewer, larger datagrams. `None`: the same as everyone.
    pub large_datagrams: Option<LargeDatagrams>,
    /// Keep the payload buffers the history lets go, for the application's next samples
    /// ([`Writer::recycle_payloads_into`]). Off for writers whose payloads are built once
    /// (discovery's), which would only hold them.
    pub recycle_payloads: bool,
    /// Makes a change's [`Change::reduced_payload`] when the change has none and a reader
    /// that takes it ([`RemoteReader::reduced`]) is matched: on each write then, and for
    /// the history when such a reader matches. `None`: changes carry their reduced form
    /// from the application, or have none.
    pub reduce: Option<Reducer>,
}

/// Makes the reduced form of a change's payload (the XCDR1 form of an XCDR2 sample, for
/// readers that read only XCDR1): given the change's kind and payload, the reduced payload,
/// or `None` when there is none to make (those readers then get the payload itself).
#[derive(Clone)]
pub struct Reducer(pub Arc<ReduceFn>);

/// What a [`Reducer`] calls.
pub type ReduceFn = dyn Fn(ChangeKind, &[u8]) -> Option<Vec<u8>> + Send + Sync;

impl std::fmt::Debug for Reducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reducer")
    }
}

/// The same function (not merely one that reduces alike).
impl PartialEq for Reducer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Reducer {}

impl Reducer {
    /// Gives `change` its reduced form, if it has none and one can be made.
    fn reduce(&self, change: &mut Change) {
        if change.reduced_payload.is_none() && !change.payload.is_empty() {
            change.reduced_payload = (self.0)(change.kind, &change.payload).map(Arc::new);
        }
    }
}

/// How a writer sends to readers whose every locator is of a kind that carries datagrams
/// far larger than UDP's: fragments of [`LARGE_FRAGMENT`] bytes (one per DATA_FRAG, whose
/// length must fit 16 bits), packed into datagrams of up to `max_message_size`, and paced
/// in bursts of `fragment_burst` bytes. An 11 MB sample then takes a score of datagrams
/// instead of some seven hundred fragments, and a NACK_FRAG round trip per 8 MiB instead of
/// per 1 MiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeDatagrams {
    /// The locator kinds of those transports.
    pub kinds: Vec<i32>,
    /// The largest datagram to build for such readers.
    pub max_message_size: usize,
    /// The most bytes of one sample's fragments sent before asking what arrived.
    pub fragment_burst: usize,
    /// A KEEP_ALL history's byte limit (in place of [`WriterConfig::max_bytes`]) while
    /// every matched reader is reached this way: their inboxes take far more than a UDP
    /// socket buffer, and with room for more than one large sample the next one goes out
    /// while the last is being acknowledged.
    pub max_bytes: usize,
}

/// How many times fewer acknowledgments a batching writer asks for (per sample).
const BATCHED_ACK_FACTOR: i64 = 16;

/// Payloads this large go out from the history's buffer (a vectored send) rather than
/// copied into the datagram; smaller ones cost less to copy than to send in parts.
const SPLICE_MIN: usize = 2048;

/// The fragment size for readers reached through large datagrams: as large as a DATA_FRAG
/// with its inline QoS can carry.
pub const LARGE_FRAGMENT: usize = 64 * 1024 - 1024;

impl Default for WriterConfig {
    fn default() -> Self {
        Self {
            reliable: true,
            transient_local: false,
            history: History::KeepLast(1),
            max_samples: 5000,
            max_bytes: 2 << 20,
            heartbeat_period: Duration::from_millis(100),
            fragment_size: 16 * 1024,
            max_message_size: 63 * 1024,
            ack_request_threshold: 16,
            nack_suppression: Duration::from_millis(5),
            batch_delay: None,
            large_datagrams: None,
            recycle_payloads: false,
            reduce: None,
        }
    }
}

/// A change to hand to [`Writer::write`].
#[derive(Debug, Clone)]
pub struct Change {
    /// What happened to the instance.
    pub kind: ChangeKind,
    /// The instance's key hash, on keyed topics.
    pub key_hash: Option<[u8; 16]>,
    /// The source timestamp.
    pub timestamp: Option<Time>,
    /// The serialized sample (or key, for dispose/unregister), encapsulation included.
    /// An `Arc` of the `Vec` it was serialized into, or a chunk of the writer's sample
    /// channel: handing it over copies nothing.
    pub payload: Payload,
    /// A reduced form of the payload for the readers that cannot take the full one
    /// ([`RemoteReader::reduced`]): discovery gives SEDP announcements without
    /// PID_TYPE_INFORMATION to Cyclone DDS 0.10 readers. `None`: everyone gets `payload`.
    pub reduced_payload: Option<Arc<Vec<u8>>>,
    /// Its place in a coherent set or its publisher's order (PRESENTATION); an end marker
    /// ([`Coherence::end`]) has an empty payload.
    /// (Boxed, as `original` is: both are rare, and a change is moved into the history and
    /// out of it again whole. Inline they made it 144 bytes (72 now, `payload::tests`), and
    /// those moves 8 % of a 64-byte publisher's time.)
    pub coherence: Option<Box<Coherence>>,
    /// The writer it was written by, when this writer relays it (a durability service).
    pub original: Option<Box<OriginalWriterInfo>>,
}

/// A matched remote reader, as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteReader {
    /// The reader's GUID.
    pub guid: Guid,
    /// Where to send to it.
    pub locators: Vec<Locator>,
    /// RELIABLE reader.
    pub reliable: bool,
    /// TRANSIENT_LOCAL (or stronger) reader: it wants the history a TRANSIENT_LOCAL writer
    /// kept.
    pub transient_local: bool,
    /// What its disposes and unregisters carry as their key.
    pub dispose_key: DisposeKey,
    /// It gets a change's [`Change::reduced_payload`] where there is one.
    pub reduced: bool,
    /// Its content filter, where the writer can evaluate it: samples it drops are not sent
    /// to this reader (a GAP says so instead).
    pub filter: Option<ReaderFilter>,
    /// It takes samples from this writer's sample channel (a FerroDDS reader of this
    /// host): a change whose payload lies there is sent it as a reference, not the bytes
    /// (when first sent; repairs carry the bytes).
    pub sample_channel: bool,
}

/// A remote reader's content filter as a writer evaluates it, and how the reader is told
/// of what it drops.
#[derive(Clone)]
pub struct ReaderFilter {
    /// True for a serialized sample (encapsulation included) the reader keeps. It should
    /// keep whatever it cannot judge: the reader filters again, but cannot get back what
    /// the writer did not send.
    pub keeps: crate::dcps::ContentFilter,
    /// The GAPs that tell the reader of dropped changes list every one (`gapStart` at the
    /// first, an empty range): FerroDDS readers count a GAP's range as lost (SAMPLE_LOST)
    /// and its list as merely irrelevant. Otherwise the first is the range, one long, and
    /// the rest listed after it: Fast DDS drops a GAP whose list starts at `gapStart`
    /// (it wants `gapList.base > gapStart`), which RTPS does not require.
    pub list_only: bool,
}

impl ReaderFilter {
    /// Whether the reader keeps `change`: disposes and unregisters always reach it (it
    /// decides whether it knows the instance).
    fn keeps(&self, change: &Change) -> bool {
        change.kind != ChangeKind::Alive || (self.keeps)(&change.payload)
    }
}

impl std::fmt::Debug for ReaderFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReaderFilter")
            .field("list_only", &self.list_only)
            .finish_non_exhaustive()
    }
}

/// The same filter (not merely one that decides alike).
impl PartialEq for ReaderFilter {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.keeps, &other.keeps) && self.list_only == other.list_only
    }
}

impl Eq for ReaderFilter {}

/// What a dispose or unregister (a DATA whose PID_STATUS_INFO says so) carries besides
/// PID_KEY_HASH, for one reader. Implementations read different forms; discovery chooses
/// per remote participant (see `docs/interop.md`, "Disposes and unregisters").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DisposeKey {
    /// The key-only sample the writer made (DATA with the K flag): what Cyclone DDS 11 and
    /// FerroDDS write and read, and what RTI Connext reads.
    #[default]
    KeyOnlySample,
    /// No payload: the key hash alone (what RTI Connext calls `serialize_key_with_dispose`
    /// off, and what Fast DDS writes). Fast DDS 2.x readers take a serialized key of at
    /// most 16 bytes, encapsulation header included, for the key hash itself and file the
    /// change under an instance that does not exist.
    KeyHashOnly,
    /// The key-only sample without the DHEADER that an appendable type's XCDR2 encoding
    /// (D_CDR2) puts before the members: Cyclone DDS 0.10 writes and reads the key members
    /// alone, and misreads the DHEADER as the first member. Other encodings go as they are.
    KeyMembers,
}

impl DisposeKey {
    /// The payload to send for a key-only sample `key`, or `None` for none.
    fn payload<'a>(self, key: &'a [u8]) -> Option<std::borrow::Cow<'a, [u8]>> {
        match self {
            DisposeKey::KeyOnlySample => Some(key.into()),
            DisposeKey::KeyHashOnly => None,
            DisposeKey::KeyMembers => match key {
                // D_CDR2_BE / D_CDR2_LE, options, DHEADER, members, padding.
                [0x00, 0x08 | 0x09, _, options, _, _, _, _, rest @ ..] => {
                    let members = rest.len().saturating_sub(usize::from(options & 3));
                    let mut out = key[..4].to_vec();
                    out.extend_from_slice(&rest[..members]);
                    let pad = out.len().wrapping_neg() & 3;
                    out.resize(out.len() + pad, 0);
                    out[3] = pad as u8;
                    Some(out.into())
                }
                _ => Some(key.into()),
            },
        }
    }
}

/// The form of a change's payload a reader gets.
#[derive(Debug, Clone, Copy)]
struct PayloadForm {
    dispose_key: DisposeKey,
    reduced: bool,
    /// A payload in the writer's sample channel goes as a reference to it.
    by_channel: bool,
}

impl PayloadForm {
    fn of(reader: &RemoteReader) -> Self {
        PayloadForm {
            dispose_key: reader.dispose_key,
            reduced: reader.reduced,
            by_channel: false,
        }
    }
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A KEEP_ALL history holds `max_samples` unacknowledged samples: wait for
    /// acknowledgments (the driver blocks up to max_blocking_time) and try again.
    #[error(
        "the history holds {0} unacknowledged samples, its limit: wait for readers to acknowledge"
    )]
    HistoryFull(usize),
    /// The sample is larger than fragmentation can carry (2^32 bytes).
    #[error("a sample of {0} bytes is larger than RTPS can carry")]
    TooLarge(usize),
    /// No local writer has the entity id written to (it was deleted).
    #[error("no such writer")]
    NoWriter,
}

#[derive(Debug)]
struct ReaderProxy {
    remote: RemoteReader,
    /// Every change up to this one is acknowledged (or was never meant for this reader).
    acked: i64,
    /// The first change not yet pushed to this reader.
    next_unsent: i64,
    /// The first change meant for this reader (later than the history for a VOLATILE
    /// reader that matched late): earlier ones are answered with GAP.
    first_relevant: i64,
    /// Changes the reader asked for again.
    requested: BTreeSet<i64>,
    /// The last change whose piggy-backed HEARTBEAT asked this reader for an ACKNACK.
    ack_requested_at: i64,
    /// When changes not yet acknowledged were last resent to this reader.
    resent_at: BTreeMap<i64, Timestamp>,
    last_acknack: Option<u32>,
    last_nack_frag: Option<u32>,
    /// Changes its filter dropped that it has not yet been told of (ascending): they go
    /// as one GAP before the next thing sent to it, not a GAP each.
    filtered: Vec<i64>,
}

impl ReaderProxy {
    /// Whether this reader keeps `change` (no filter: everything).
    fn keeps(&self, change: &Change) -> bool {
        self.remote.filter.as_ref().is_none_or(|f| f.keeps(change))
    }
}

/// Counters for what the writer saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Changes written.
    pub written: u64,
    /// Changes resent on request.
    pub resent: u64,
    /// Fragments resent on request.
    pub fragments_resent: u64,
    /// GAPs sent for changes no longer in the history.
    pub gaps: u64,
    /// HEARTBEATs sent.
    pub heartbeats: u64,
    /// Fragments of large samples left for the reader to ask for (fragment pacing).
    pub paced_fragments: u64,
    /// ACKNACKs and NACK_FRAGs from unknown readers or repeated, ignored.
    pub ignored_acknacks: u64,
    /// Changes not sent to a reader because its content filter drops them (one per reader
    /// and change).
    pub filtered: u64,
}

/// An RTPS writer without I/O.
#[derive(Debug)]
pub struct Writer {
    guid: Guid,
    config: WriterConfig,
    /// The HistoryCache: changes by sequence number.
    history: SeqMap<i64, Change>,
    /// Payload bytes in `history`.
    history_bytes: usize,
    /// KEEP_LAST: the sequence numbers in `history` of each instance (by key hash), oldest
    /// first, so that replacing an instance's oldest change does not scan the history.
    /// Hashed with foldhash, not SipHash: looked up at every write and every forgotten
    /// change (SipHash was 3 % of a 64-byte publisher). Its keys are our own writes' but
    /// for a durability service's relay; foldhash seeds each map at random, so colliding
    /// keys cannot be made in advance (it claims no more than that against HashDoS).
    by_instance: HashMap<Option<[u8; 16]>, VecDeque<i64>, foldhash::fast::RandomState>,
    /// Payload bytes written since a piggy-backed HEARTBEAT last asked for an ACKNACK.
    bytes_since_ack_request: usize,
    last_seq: i64,
    readers: Vec<ReaderProxy>,
    heartbeat_count: u32,
    next_heartbeat: Option<Timestamp>,
    /// Datagrams ready to send.
    outbox: Outbox,
    /// New changes held back while batching, and when they must go.
    batch: Outbox,
    batch_deadline: Option<Timestamp>,
    /// Set while `write` sends a new change, which joins the batch when batching.
    sending_new: Option<Timestamp>,
    /// Set while sending to readers that are all reliable: a large sample's fragments then
    /// go out [`MAX_FRAGMENT_BURST`] at a time, each part ending with a HEARTBEAT that asks
    /// for a NACK_FRAG of the rest (a reader's socket buffer cannot take an 11 MB burst).
    pace_fragments: bool,
    /// Every matched reader is reached through large datagrams (kept on match and unmatch,
    /// not worked out on every write): see [`Writer::max_bytes`].
    readers_all_local: bool,
    /// The readers `write` sends one datagram to (kept for its capacity).
    group: Vec<usize>,
    /// Payloads the history let go, for [`Writer::recycle_payloads_into`] (with
    /// [`WriterConfig::recycle_payloads`]).
    retired: PayloadPool,
    stats: WriterStats,
}

/// Whether a reader's dropped changes should be told now rather than with the next thing
/// sent to it: enough for a GAP of their own, or as many as one GAP can list (a KEEP_ALL
/// writer cannot let go of a change until the reader acknowledges it, and a reader whose
/// filter drops everything would otherwise hear only at the next periodic HEARTBEAT).
fn filtered_due(filtered: &[i64]) -> bool {
    filtered.len() >= FILTERED_BATCH
        || filtered
            .first()
            .zip(filtered.last())
            .is_some_and(|(a, b)| b - a >= i64::from(MAX_SET_BITS) - 1)
}

/// Changes a filtered reader is told of in one GAP at most, unless something else goes to
/// it first.
const FILTERED_BATCH: usize = 32;

/// An outbox packing datagrams as `config` says.
fn outbox_for(config: &WriterConfig) -> Outbox {
    let outbox = Outbox::new(config.max_message_size);
    match &config.large_datagrams {
        Some(large) => outbox.with_large(large.kinds.clone(), large.max_message_size),
        None => outbox,
    }
}

impl Writer {
    /// A writer with GUID `guid`.
    pub fn new(guid: Guid, config: WriterConfig) -> Self {
        Self {
            guid,
            history: SeqMap::new(),
            history_bytes: 0,
            by_instance: HashMap::default(),
            bytes_since_ack_request: 0,
            last_seq: 0,
            readers: Vec::new(),
            heartbeat_count: 0,
            next_heartbeat: None,
            outbox: outbox_for(&config),
            batch: outbox_for(&config).preallocated(),
            batch_deadline: None,
            sending_new: None,
            pace_fragments: false,
            readers_all_local: false,
            group: Vec::new(),
            retired: PayloadPool::new(),
            stats: WriterStats::default(),
            config,
        }
    }

    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        self.guid
    }

    /// What the writer counted.
    pub fn stats(&self) -> WriterStats {
        self.stats
    }

    /// The highest sequence number written.
    pub fn last_sequence_number(&self) -> SequenceNumber {
        SequenceNumber(self.last_seq)
    }

    /// The number of changes in the history.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// True when every reliable reader acknowledged every change up to `seq`.
    pub fn is_acknowledged(&self, seq: SequenceNumber) -> bool {
        self.readers
            .iter()
            .filter(|r| r.remote.reliable)
            .all(|r| r.acked >= seq.0)
    }

    /// True when every reliable reader has sent an ACKNACK since it was matched: it knows
    /// this writer. Until then a reader may not have matched the writer on its side yet, and
    /// a VOLATILE one takes only what is written after it does.
    pub fn reliable_readers_heard(&self) -> bool {
        self.readers
            .iter()
            .filter(|r| r.remote.reliable)
            .all(|r| r.last_acknack.is_some())
    }

    /// True when every reliable reader acknowledged everything written.
    pub fn all_acknowledged(&self) -> bool {
        self.is_acknowledged(SequenceNumber(self.last_seq))
    }

    /// The readers matched.
    pub fn matched_readers(&self) -> impl Iterator<Item = &RemoteReader> {
        self.readers.iter().map(|r| &r.remote)
    }

    /// Matches a remote reader. A TRANSIENT_LOCAL writer sends a TRANSIENT_LOCAL reader
    /// the history it keeps; other readers start with the next change.
    pub fn match_reader(&mut self, now: Timestamp, remote: RemoteReader) {
        self.unmatch_reader(remote.guid);
        if let (true, Some(reducer)) = (remote.reduced, &self.config.reduce) {
            for change in self.history.values_mut() {
                reducer.reduce(change);
            }
        }
        let first = self.history.first_key().unwrap_or(self.last_seq + 1);
        let next_unsent = if self.config.transient_local && remote.transient_local {
            first
        } else {
            self.last_seq + 1
        };
        let mut proxy = ReaderProxy {
            remote,
            acked: next_unsent - 1,
            next_unsent,
            first_relevant: next_unsent,
            requested: BTreeSet::new(),
            ack_requested_at: next_unsent - 1,
            resent_at: BTreeMap::new(),
            last_acknack: None,
            last_nack_frag: None,
            filtered: Vec::new(),
        };
        if proxy.next_unsent <= self.last_seq {
            self.send_unsent(&mut proxy);
        }
        if proxy.remote.reliable && self.config.reliable {
            // Tell the reader where the writer stands, so it can ask for what it misses.
            self.send_heartbeat(&proxy, false);
            self.schedule_heartbeat(now);
        }
        self.readers.push(proxy);
        self.readers_all_local = self.all_readers_local();
    }

    /// Forgets a remote reader (unmatched, or its participant is gone).
    pub fn unmatch_reader(&mut self, guid: Guid) {
        self.readers.retain(|r| r.remote.guid != guid);
        self.readers_all_local = self.all_readers_local();
        self.purge_acknowledged();
    }

    /// Whether there are readers and all are reached through large datagrams only.
    fn all_readers_local(&self) -> bool {
        self.config.large_datagrams.as_ref().is_some_and(|large| {
            !self.readers.is_empty()
                && self.readers.iter().all(|r| {
                    !r.remote.locators.is_empty()
                        && r.remote
                            .locators
                            .iter()
                            .all(|l| large.kinds.contains(&l.kind))
                })
        })
    }

    /// Adds a change to the history and pushes it to every matched reader.
    pub fn write(
        &mut self,
        now: Timestamp,
        mut change: Change,
    ) -> Result<SequenceNumber, WriteError> {
        if u32::try_from(change.payload.len()).is_err() {
            return Err(WriteError::TooLarge(change.payload.len()));
        }
        let size = change.payload.len();
        if self.config.history == History::KeepAll && self.is_full(size) {
            self.purge_acknowledged();
            if self.is_full(size) {
                return Err(WriteError::HistoryFull(self.history.len()));
            }
        }
        if let Some(reducer) = &self.config.reduce {
            if self.readers.iter().any(|r| r.remote.reduced) {
                reducer.reduce(&mut change);
            }
        }
        self.last_seq += 1;
        let seq = self.last_seq;
        self.history_bytes += size;
        self.bytes_since_ack_request += size;
        if matches!(self.config.history, History::KeepLast(_)) {
            self.by_instance
                .entry(change.key_hash)
                .or_default()
                .push_back(seq);
        }
        self.history.insert(seq, change);
        self.stats.written += 1;
        self.trim_history(seq);

        let ack_request_bytes = self.max_bytes() / 8;
        let mut readers = std::mem::take(&mut self.readers);
        // Readers whose content filter drops the change skip it; they hear of it with a
        // GAP before whatever goes to them next.
        if readers.iter().any(|r| r.remote.filter.is_some()) {
            if let Some(change) = self.history.get(&seq) {
                for r in readers
                    .iter_mut()
                    .filter(|r| r.next_unsent == seq && !r.keeps(change))
                {
                    r.filtered.push(seq);
                    r.next_unsent = seq + 1;
                    self.stats.filtered += 1;
                }
            }
            for r in readers.iter_mut().filter(|r| filtered_due(&r.filtered)) {
                self.send_filtered(r);
            }
        }
        // Readers at the same locators get one datagram addressed to any reader. A reader
        // sent to has `next_unsent` past `seq`, which keeps it out of later groups.
        let mut group = std::mem::take(&mut self.group);
        for i in 0..readers.len() {
            if readers[i].next_unsent != seq {
                continue;
            }
            group.clear();
            group.extend((i..readers.len()).filter(|&j| {
                readers[j].next_unsent == seq
                    && readers[j].remote.locators == readers[i].remote.locators
                    && readers[j].remote.dispose_key == readers[i].remote.dispose_key
                    && readers[j].remote.reduced == readers[i].remote.reduced
            }));
            let reader_id = if group.len() == 1 {
                readers[i].remote.guid.entity_id
            } else {
                ANY_READER
            };
            // Ask for an ACKNACK once `ack_request_threshold` changes are unacknowledged, and
            // then once per that many changes (asking on every change would draw an ACKNACK
            // per sample from a reader that is merely behind).
            // Large samples ask once an eighth of `max_bytes` went out, so that
            // acknowledgments keep up with flow control.
            // A batching writer asks BATCHED_ACK_FACTOR times less often: its datagrams hold
            // tens to hundreds of samples, and every answer is an ACKNACK its receive thread
            // handles under the lock the writing thread wants (1 KiB samples: 830 k → 935 k
            // samples/s, alternated runs, 2-core VM). Large samples still ask by bytes.
            let threshold = self.config.ack_request_threshold.max(1) as i64
                * if self.config.batch_delay.is_some() {
                    BATCHED_ACK_FACTOR
                } else {
                    1
                };
            let many_bytes = self.bytes_since_ack_request >= ack_request_bytes;
            let wants_ack = group.iter().any(|&j| {
                let r = &readers[j];
                r.remote.reliable
                    && r.acked < seq
                    && (many_bytes
                        || (seq - r.acked >= threshold && seq - r.ack_requested_at >= threshold))
            });
            if wants_ack {
                self.bytes_since_ack_request = 0;
                for &j in &group {
                    readers[j].ack_requested_at = seq;
                }
            }
            let reliable =
                self.config.reliable && group.iter().any(|&j| readers[j].remote.reliable);
            self.pace_fragments =
                self.config.reliable && group.iter().all(|&j| readers[j].remote.reliable);
            // A sample that needs fragments fills datagrams on its own: batching it would
            // only hold its last datagram back (and with it the HEARTBEAT that ends a burst).
            self.sending_new = (size <= self.config.fragment_size).then_some(now);
            // A batched sample carries a HEARTBEAT only when it asks for an acknowledgment:
            // a final one on every sample of a full datagram would be a third of its bytes,
            // and the batch's samples say what they are themselves.
            let batched = self.sending_new.is_some() && self.config.batch_delay.is_some();
            let heartbeat = reliable
                .then_some(!wants_ack)
                .filter(|&final_flag| !(batched && final_flag));
            for &j in &group {
                self.send_filtered(&mut readers[j]);
            }
            let form = PayloadForm {
                // Only when every reader the datagram goes to takes from the channel.
                by_channel: group.iter().all(|&j| readers[j].remote.sample_channel),
                ..PayloadForm::of(&readers[i].remote)
            };
            self.send_change(
                seq,
                reader_id,
                None,
                &readers[i].remote.locators,
                None,
                heartbeat,
                form,
            );
            self.sending_new = None;
            self.pace_fragments = false;
            for &j in &group {
                readers[j].next_unsent = seq + 1;
            }
        }
        self.group = group;
        // Readers still catching up on history get it in order.
        for proxy in readers.iter_mut().filter(|r| r.next_unsent <= seq) {
            self.send_unsent(proxy);
        }
        self.readers = readers;
        if self.config.reliable && self.readers.iter().any(|r| r.remote.reliable) {
            self.schedule_heartbeat(now);
        }
        if !self.config.transient_local {
            self.purge_acknowledged();
        }
        Ok(SequenceNumber(seq))
    }

    /// Handles an ACKNACK from reader `source` + `acknack.reader_id`.
    pub fn handle_acknack(&mut self, now: Timestamp, source: GuidPrefix, acknack: &AckNack) {
        let reader = Guid::new(source, acknack.reader_id);
        let Some(index) = self.readers.iter().position(|r| r.remote.guid == reader) else {
            self.stats.ignored_acknacks += 1;
            return;
        };
        let mut proxy = self.readers.swap_remove(index);
        if proxy.last_acknack.is_some_and(|c| acknack.count <= c) {
            self.stats.ignored_acknacks += 1;
            self.readers.push(proxy);
            return;
        }
        proxy.last_acknack = Some(acknack.count);
        let base = acknack.reader_sn_state.base().0;
        // base - 1 is acknowledged; a reader cannot acknowledge what was not written.
        proxy.acked = proxy.acked.max((base - 1).min(self.last_seq));
        proxy.resent_at = proxy.resent_at.split_off(&(proxy.acked + 1));
        for seq in acknack.reader_sn_state.iter() {
            if seq.0 >= 1 && seq.0 <= self.last_seq {
                proxy.requested.insert(seq.0);
            }
        }
        let (answered, retry_at) = self.send_requested(now, &mut proxy);
        // A reader that asked without knowing all we have learns it from a heartbeat. (Not
        // when every request was suppressed: that heartbeat would only draw the same
        // ACKNACK again, back and forth until the resends arrive.)
        // (Not when the first change it lacks is a fragmented one: a reader that has part of
        // it says what it lacks with a NACK_FRAG beside this ACKNACK, and the answer to that
        // ends with a HEARTBEAT when it leaves fragments out; another one here would only
        // draw the same NACK_FRAG again, and the same fragments twice.)
        let fragmented = self
            .history
            .get(&base)
            .is_some_and(|c| c.payload.len() > self.config.fragment_size);
        if answered
            || (acknack.reader_sn_state.is_empty()
                && base <= self.last_seq
                && !acknack.final_flag
                && !fragmented)
        {
            self.send_heartbeat(&proxy, true);
        }
        self.readers.push(proxy);
        self.purge_acknowledged();
        if !self.all_acknowledged() {
            self.schedule_heartbeat(now);
            // What was suppressed can be asked for again once the suppression ends: a
            // heartbeat then lets the reader say whether it still misses it.
            self.next_heartbeat = earliest(self.next_heartbeat, retry_at);
        }
    }

    /// Handles a NACK_FRAG: resends the fragments the reader lists.
    pub fn handle_nack_frag(&mut self, _now: Timestamp, source: GuidPrefix, nack: &NackFrag) {
        let reader = Guid::new(source, nack.reader_id);
        let Some(index) = self.readers.iter().position(|r| r.remote.guid == reader) else {
            self.stats.ignored_acknacks += 1;
            return;
        };
        if self.readers[index]
            .last_nack_frag
            .is_some_and(|c| nack.count <= c)
        {
            self.stats.ignored_acknacks += 1;
            return;
        }
        self.readers[index].last_nack_frag = Some(nack.count);
        let seq = nack.writer_sn.0;
        let locators = self.readers[index].remote.locators.clone();
        let reader_id = self.readers[index].remote.guid.entity_id;
        let form = PayloadForm::of(&self.readers[index].remote);
        if self.history.contains_key(&seq) {
            self.stats.fragments_resent += nack.fragment_number_state.iter().count() as u64;
            // Only reliable readers send NACK_FRAG. The last fragment resent carries a
            // HEARTBEAT asking for an acknowledgment, so that a reader that is now complete
            // says so at once (not at the next periodic HEARTBEAT, which held a KEEP_ALL
            // writer of large samples to one sample per heartbeat period).
            self.pace_fragments = true;
            self.send_change(
                seq,
                reader_id,
                Some(source),
                &locators,
                Some(&nack.fragment_number_state),
                Some(false),
                form,
            );
            self.pace_fragments = false;
        } else if seq >= 1 && seq <= self.last_seq {
            self.send_gap(reader_id, source, &locators, &[seq]);
        }
    }

    /// Runs what is due at `now`: a batch whose delay ran out, periodic HEARTBEATs.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.batch_deadline.is_some_and(|due| due <= now) {
            self.flush();
        }
        let Some(due) = self.next_heartbeat else {
            return;
        };
        if now < due {
            return;
        }
        self.next_heartbeat = None;
        let mut readers = std::mem::take(&mut self.readers);
        for proxy in &mut readers {
            self.send_filtered(proxy);
        }
        let mut unacked = false;
        let last = self.last_seq;
        for proxy in readers
            .iter()
            .filter(|r| r.remote.reliable && r.acked < last)
        {
            unacked = true;
            self.send_heartbeat(proxy, false);
        }
        self.readers = readers;
        if unacked {
            self.schedule_heartbeat(now);
        }
    }

    /// Asserts the writer's liveliness (a MANUAL_BY_TOPIC writer's `assert_liveliness`):
    /// a final HEARTBEAT with the liveliness flag to every matched reader, after what
    /// batching holds back.
    pub fn assert_liveliness(&mut self) {
        self.flush();
        let mut readers = std::mem::take(&mut self.readers);
        for proxy in &mut readers {
            self.send_filtered(proxy);
            let mut hb = self.heartbeat(proxy.remote.guid.entity_id, true, proxy.first_relevant);
            hb.liveliness_flag = true;
            self.queue(
                Some(proxy.remote.guid.prefix),
                &[hb.into()],
                &proxy.remote.locators,
            );
        }
        self.readers = readers;
    }

    /// When [`Writer::handle_timeout`] next has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        earliest(self.next_heartbeat, self.batch_deadline)
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.outbox.pop()
    }

    /// Sends what batching holds back now.
    pub fn flush(&mut self) {
        self.batch.move_all_to(&mut self.outbox);
        self.batch_deadline = None;
    }

    /// Queues a message for sending: into the batch when it carries a new change and the
    /// writer batches; otherwise after whatever the batch holds, so that nothing overtakes
    /// the changes it announces.
    fn queue(
        &mut self,
        destination: Option<GuidPrefix>,
        submessages: &[Submessage<'_>],
        locators: &[Locator],
    ) {
        self.queue_spliced(destination, submessages, locators, None);
    }

    /// Queues a message; `splice`, when given, holds the payload of its DATA or DATA_FRAG
    /// (a range of a history buffer), which then goes out from there, not copied into the
    /// datagram ([`crate::Spliced`]).
    fn queue_spliced(
        &mut self,
        destination: Option<GuidPrefix>,
        submessages: &[Submessage<'_>],
        locators: &[Locator],
        splice: Option<(&Payload, std::ops::Range<usize>)>,
    ) {
        // INVARIANT: the callers' size limits keep every message emittable, so an error
        // here cannot happen; the message would only be lost (and repaired) if it did.
        let prefix = self.guid.prefix;
        match (self.sending_new, self.config.batch_delay) {
            (Some(now), Some(delay)) => {
                let _ = self
                    .batch
                    .push_message(prefix, destination, submessages, locators, splice);
                self.batch.move_full_to(&mut self.outbox);
                if self.batch_deadline.is_none() {
                    self.batch_deadline = Some(now.after(delay));
                }
            }
            _ => {
                if !self.batch.is_empty() {
                    self.flush();
                }
                let _ =
                    self.outbox
                        .push_message(prefix, destination, submessages, locators, splice);
            }
        }
    }

    fn schedule_heartbeat(&mut self, now: Timestamp) {
        if self.config.reliable {
            self.next_heartbeat = earliest(
                self.next_heartbeat,
                Some(now.after(self.config.heartbeat_period)),
            );
        }
    }

    /// KEEP_LAST: drop the oldest change of the instance (or of the writer, when keyless)
    /// beyond the depth. KEEP_ALL keeps everything until acknowledged.
    fn trim_history(&mut self, newest: i64) {
        let History::KeepLast(depth) = self.config.history else {
            return;
        };
        let depth = depth.max(1);
        let key = self.history.get(&newest).and_then(|c| c.key_hash);
        while let Some(oldest) = self
            .by_instance
            .get(&key)
            .filter(|seqs| seqs.len() > depth)
            .and_then(|seqs| seqs.front().copied())
        {
            self.forget(oldest);
        }
        while self.history.len() > self.config.max_samples.max(1) {
            if let Some(first) = self.history.first_key() {
                self.forget(first);
            }
        }
    }

    /// Drops what every reliable reader acknowledged. A TRANSIENT_LOCAL writer keeps its
    /// history for late joiners instead (KEEP_LAST trims it; a KEEP_ALL one gives up
    /// acknowledged changes only when full). Best-effort readers need nothing kept.
    fn purge_acknowledged(&mut self) {
        if self.config.transient_local
            && (self.config.history != History::KeepAll || !self.is_full(0))
        {
            return;
        }
        let floor = self
            .readers
            .iter()
            .filter(|r| r.remote.reliable)
            .map(|r| r.acked.min(r.next_unsent - 1))
            .min()
            .unwrap_or(self.last_seq);
        while let Some(first) = self.history.first_key().filter(|&seq| seq <= floor) {
            self.forget(first);
        }
    }

    /// Moves the payload buffers the history let go since the last call (those nothing
    /// else held) into `pool`, for the next samples.
    pub fn recycle_payloads_into(&mut self, pool: &mut PayloadPool) {
        pool.set_limit(pool.limit().max(self.retired.limit()));
        pool.refill_from(&mut self.retired);
    }

    /// Whether the history let payload buffers go since the last
    /// [`Writer::recycle_payloads_into`] (most writes let none go: acknowledgments come
    /// in batches).
    pub fn has_recycled_payloads(&self) -> bool {
        !self.retired.is_empty()
    }

    /// Whether a KEEP_ALL history cannot take a change of `size` bytes more.
    fn is_full(&self, size: usize) -> bool {
        self.history.len() >= self.config.max_samples
            || (!self.history.is_empty()
                && self.history_bytes.saturating_add(size) > self.max_bytes())
    }

    /// The history's byte limit: larger while every matched reader is reached through
    /// large datagrams ([`LargeDatagrams::max_bytes`]).
    fn max_bytes(&self) -> usize {
        match &self.config.large_datagrams {
            Some(large) if self.readers_all_local => large.max_bytes.max(self.config.max_bytes),
            _ => self.config.max_bytes,
        }
    }

    /// Drops change `seq` from the history.
    fn forget(&mut self, seq: i64) {
        let Some(change) = self.history.remove(&seq) else {
            return;
        };
        self.history_bytes -= change.payload.len();
        if self.config.recycle_payloads {
            // Room for what the history holds at most: acknowledgments let a whole
            // history's buffers go at once (24 MiB of 1 MiB samples over shared memory),
            // and those not kept are allocated and faulted in again for the next samples
            // (5.8 allocations and 1.6 MB per 1 MiB write, measured, with 4 MiB kept).
            let room = self
                .max_bytes()
                .clamp(MAX_KEPT_BYTES, WRITER_KEPT_MAX_BYTES);
            if self.retired.limit() < room {
                self.retired.set_limit(room);
            }
            if let Payload::Heap(buffer) = change.payload {
                self.retired.keep(buffer);
            }
        }
        if let Some(seqs) = self.by_instance.get_mut(&change.key_hash) {
            // Changes mostly leave oldest first: the search ends at once.
            if let Some(at) = seqs.iter().position(|&s| s == seq) {
                seqs.remove(at);
            }
            if seqs.is_empty() {
                self.by_instance.remove(&change.key_hash);
            }
        }
    }

    fn send_unsent(&mut self, proxy: &mut ReaderProxy) {
        let form = PayloadForm::of(&proxy.remote);
        let destination = proxy.remote.guid.prefix;
        let locators = proxy.remote.locators.clone();
        let reader_id = proxy.remote.guid.entity_id;
        let mut missing = Vec::new();
        for seq in proxy.next_unsent..=self.last_seq {
            let keeps = self.history.get(&seq).map(|change| proxy.keeps(change));
            if keeps == Some(false) {
                proxy.filtered.push(seq);
                self.stats.filtered += 1;
            } else if keeps == Some(true) {
                if !missing.is_empty() {
                    self.send_gap(reader_id, destination, &locators, &missing);
                    missing.clear();
                }
                self.send_filtered(proxy);
                self.send_change(
                    seq,
                    reader_id,
                    Some(destination),
                    &locators,
                    None,
                    None,
                    form,
                );
            } else {
                missing.push(seq);
            }
        }
        if !missing.is_empty() {
            self.send_gap(reader_id, destination, &locators, &missing);
        }
        self.send_filtered(proxy);
        proxy.next_unsent = self.last_seq + 1;
    }

    /// Resends what `proxy` asked for (GAP for what is gone), except changes resent to it
    /// within `nack_suppression`. Whether anything was sent, and when the first suppressed
    /// request could be answered.
    fn send_requested(
        &mut self,
        now: Timestamp,
        proxy: &mut ReaderProxy,
    ) -> (bool, Option<Timestamp>) {
        let form = PayloadForm::of(&proxy.remote);
        let destination = proxy.remote.guid.prefix;
        let locators = proxy.remote.locators.clone();
        let reader_id = proxy.remote.guid.entity_id;
        let requested = std::mem::take(&mut proxy.requested);
        let mut missing = Vec::new();
        let mut sent = false;
        let mut retry_at = None;
        for seq in requested {
            let keeps = self.history.get(&seq).map(|change| proxy.keeps(change));
            if keeps == Some(false) {
                // Asked for before its GAP arrived.
                proxy.filtered.push(seq);
                continue;
            }
            if seq >= proxy.first_relevant && keeps.is_some() {
                if let Some(until) = proxy
                    .resent_at
                    .get(&seq)
                    .map(|t| t.after(self.config.nack_suppression))
                    .filter(|until| now < *until)
                {
                    retry_at = earliest(retry_at, Some(until));
                    continue;
                }
                proxy.resent_at.insert(seq, now);
                self.stats.resent += 1;
                sent = true;
                self.send_change(
                    seq,
                    reader_id,
                    Some(destination),
                    &locators,
                    None,
                    None,
                    form,
                );
            } else {
                missing.push(seq);
            }
        }
        if !missing.is_empty() {
            sent = true;
            self.send_gap(reader_id, destination, &locators, &missing);
        }
        sent |= self.send_filtered(proxy);
        (sent, retry_at)
    }

    /// Sends GAPs covering `seqs` (ascending), as few as the 256-bit list allows.
    fn send_gap(
        &mut self,
        reader_id: crate::wire::EntityId,
        destination: GuidPrefix,
        locators: &[Locator],
        seqs: &[i64],
    ) {
        let mut i = 0;
        while i < seqs.len() {
            let start = seqs[i];
            // A run start..run_end is covered by gap_start..list base.
            let mut run_end = start;
            while i + 1 < seqs.len() && seqs[i + 1] == run_end + 1 {
                i += 1;
                run_end = seqs[i];
            }
            let mut list = SequenceNumberSet::new(SequenceNumber(run_end + 1));
            let mut j = i + 1;
            while j < seqs.len() && seqs[j] - (run_end + 1) < i64::from(MAX_SET_BITS) {
                list.insert(SequenceNumber(seqs[j]));
                j += 1;
            }
            i = j;
            self.stats.gaps += 1;
            let gap = Gap {
                reader_id,
                writer_id: self.guid.entity_id,
                gap_start: SequenceNumber(start),
                gap_list: list,
            };
            self.queue(Some(destination), &[gap.into()], locators);
        }
    }

    /// Tells `proxy` of the changes its filter dropped: GAPs that list them one by one
    /// (`gap_start` at the first, an empty range; for readers that want a range, the first
    /// alone: [`ReaderFilter::list_only`]), unlike the changes gone from the history that
    /// [`Writer::send_gap`] covers with ranges. A FerroDDS reader counts a range it never
    /// received as lost (SAMPLE_LOST); a listed change is only irrelevant to it.
    /// Nothing when none wait; whether anything was sent.
    fn send_filtered(&mut self, proxy: &mut ReaderProxy) -> bool {
        if proxy.filtered.is_empty() {
            return false;
        }
        let mut seqs = std::mem::take(&mut proxy.filtered);
        seqs.sort_unstable();
        seqs.dedup();
        let list_only = proxy.remote.filter.as_ref().is_none_or(|f| f.list_only);
        let mut i = 0;
        while i < seqs.len() {
            let start = seqs[i];
            let base = if list_only {
                start
            } else {
                i += 1;
                start + 1
            };
            let mut list = SequenceNumberSet::new(SequenceNumber(base));
            while i < seqs.len() && seqs[i] - base < i64::from(MAX_SET_BITS) {
                list.insert(SequenceNumber(seqs[i]));
                i += 1;
            }
            self.stats.gaps += 1;
            let gap = Gap {
                reader_id: proxy.remote.guid.entity_id,
                writer_id: self.guid.entity_id,
                gap_start: SequenceNumber(start),
                gap_list: list,
            };
            self.queue(
                Some(proxy.remote.guid.prefix),
                &[gap.into()],
                &proxy.remote.locators,
            );
        }
        seqs.clear();
        proxy.filtered = seqs;
        true
    }

    fn heartbeat(
        &mut self,
        reader_id: crate::wire::EntityId,
        final_flag: bool,
        first_relevant: i64,
    ) -> Heartbeat {
        self.heartbeat_count = self.heartbeat_count.wrapping_add(1);
        self.stats.heartbeats += 1;
        let first = self
            .history
            .first_key()
            .unwrap_or(self.last_seq + 1)
            .max(first_relevant);
        Heartbeat {
            reader_id,
            writer_id: self.guid.entity_id,
            first_sn: SequenceNumber(first),
            last_sn: SequenceNumber(self.last_seq),
            count: self.heartbeat_count,
            final_flag,
            liveliness_flag: false,
        }
    }

    fn send_heartbeat(&mut self, proxy: &ReaderProxy, final_flag: bool) {
        let hb = self.heartbeat(
            proxy.remote.guid.entity_id,
            final_flag,
            proxy.first_relevant,
        );
        self.queue(
            Some(proxy.remote.guid.prefix),
            &[hb.into()],
            &proxy.remote.locators,
        );
    }

    /// Sends change `seq` (whole, or the fragments in `fragments`), with a piggy-backed
    /// HEARTBEAT of the given final flag when `heartbeat` is set.
    #[allow(clippy::too_many_arguments)]
    fn send_change(
        &mut self,
        seq: i64,
        reader_id: crate::wire::EntityId,
        destination: Option<GuidPrefix>,
        locators: &[Locator],
        fragments: Option<&FragmentNumberSet>,
        heartbeat: Option<bool>,
        form: PayloadForm,
    ) {
        let Some(change) = self.history.get(&seq).cloned() else {
            return;
        };
        let reduced;
        let full = match (&change.reduced_payload, form.reduced) {
            (Some(r), true) => {
                reduced = Payload::Heap(Arc::clone(r));
                &reduced
            }
            _ => &change.payload,
        };
        // A sample in the writer's sample channel, to a reader that takes it from there,
        // goes as where it lies (whole: the reference replaces the payload, not fragments).
        let channel = (form.by_channel && change.kind == ChangeKind::Alive && fragments.is_none())
            .then(|| full.channel_ref())
            .flatten();
        let payload = if channel.is_some() {
            None
        } else if change.kind == ChangeKind::Alive || full.is_empty() {
            Some(std::borrow::Cow::Borrowed(&full[..]))
        } else {
            form.dispose_key.payload(full)
        };
        let payload: &[u8] = payload.as_deref().unwrap_or_default();
        // A sample's bytes (not a key derived from them) go out from the history's buffer.
        let source = (change.kind == ChangeKind::Alive).then_some(full);
        let splice = |range: std::ops::Range<usize>| {
            source
                .filter(|_| range.len() >= SPLICE_MIN)
                .map(|buffer| (buffer, range))
        };
        let qos_bytes = inline_qos(
            change.key_hash,
            change.kind,
            change.coherence.as_deref(),
            change.original.as_deref(),
            channel,
        );
        let qos = parse_inline_qos(&qos_bytes);
        let ts = InfoTimestamp {
            timestamp: change.timestamp,
        };
        let hb = heartbeat.map(|final_flag| self.heartbeat(reader_id, final_flag, 1));
        let large = self.config.large_datagrams.as_ref().filter(|l| {
            !locators.is_empty() && locators.iter().all(|loc| l.kinds.contains(&loc.kind))
        });
        let fragment_size = match large {
            Some(_) => LARGE_FRAGMENT,
            None => self.config.fragment_size.clamp(64, usize::from(u16::MAX)),
        };
        // Over UDP, bursts are bounded by the receiver's socket buffer and by flow control
        // (half of `max_bytes`, so that acknowledgments keep up); a large-datagram
        // transport says what its receiver holds.
        let burst = large.map_or((self.config.max_bytes / 2).min(MAX_FRAGMENT_BURST), |l| {
            l.fragment_burst
        });
        if payload.len() <= fragment_size && fragments.is_none() {
            let data = Data {
                extra_flags: 0,
                reader_id,
                writer_id: self.guid.entity_id,
                writer_sn: SequenceNumber(seq),
                inline_qos: qos,
                payload: if payload.is_empty() {
                    DataPayload::None
                } else if change.kind == ChangeKind::Alive {
                    DataPayload::Data(payload)
                } else {
                    DataPayload::Key(payload)
                },
                non_standard_payload: false,
            };
            // On the stack: this is every write's path.
            let (with_hb, without_hb);
            let subs: &[Submessage<'_>] = match hb {
                Some(hb) => {
                    with_hb = [ts.into(), data.into(), hb.into()];
                    &with_hb
                }
                None => {
                    without_hb = [ts.into(), data.into()];
                    &without_hb
                }
            };
            self.queue_spliced(destination, subs, locators, splice(0..payload.len()));
            return;
        }
        let total = payload.len().div_ceil(fragment_size) as u32;
        let per_message =
            ((self.config.max_message_size.saturating_sub(128)) / fragment_size).max(1) as u32;
        let wanted = |n: u32| fragments.is_none_or(|set| set.contains(n));
        let budget = if self.pace_fragments {
            burst.max(fragment_size)
        } else {
            usize::MAX
        };
        let mut sent_bytes = 0usize;
        let mut n = 1u32;
        let mut sent_any = false;
        while n <= total {
            if !wanted(n) {
                n += 1;
                continue;
            }
            let mut count = 1u32;
            while count < per_message && n + count <= total && wanted(n + count) {
                count += 1;
            }
            let start = (n as usize - 1) * fragment_size;
            let end = ((n + count - 1) as usize * fragment_size).min(payload.len());
            let frag = DataFrag {
                extra_flags: 0,
                reader_id,
                writer_id: self.guid.entity_id,
                writer_sn: SequenceNumber(seq),
                fragment_starting_num: n,
                fragments_in_submessage: count as u16,
                fragment_size: fragment_size as u16,
                sample_size: payload.len() as u32,
                inline_qos: if sent_any { None } else { qos },
                key: change.kind != ChangeKind::Alive,
                non_standard_payload: false,
                fragments: &payload[start..end],
            };
            sent_any = true;
            sent_bytes += end - start;
            let last = n + count > total || (n + count..=total).all(|m| !wanted(m));
            let paced = !last && sent_bytes >= budget;
            let heartbeat = if last {
                hb.map(Submessage::from)
            } else if paced {
                // The rest waits for the reader's NACK_FRAG, which this HEARTBEAT asks for.
                Some(self.heartbeat(reader_id, false, 1).into())
            } else {
                None
            };
            // On the stack: a large sample is many of these messages.
            let (with_hb, without_hb);
            let subs: &[Submessage<'_>] = match heartbeat {
                Some(hb) => {
                    with_hb = [ts.into(), frag.into(), hb];
                    &with_hb
                }
                None => {
                    without_hb = [ts.into(), frag.into()];
                    &without_hb
                }
            };
            self.queue_spliced(destination, subs, locators, splice(start..end));
            if paced {
                self.stats.paced_fragments += u64::from(total - (n + count - 1));
                return;
            }
            n += count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{parameter_list::pid, EntityId, Message};

    fn writer_with_reader() -> Writer {
        writer_with_reader_configured(WriterConfig::default())
    }

    fn writer_with_reader_configured(config: WriterConfig) -> Writer {
        let prefix = GuidPrefix([1; 12]);
        let mut w = Writer::new(Guid::new(prefix, EntityId([0, 0, 1, 2])), config);
        let reader = RemoteReader {
            guid: Guid::new(GuidPrefix([2; 12]), EntityId([0, 0, 1, 7])),
            locators: vec![Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411)],
            reliable: true,
            transient_local: false,
            dispose_key: DisposeKey::KeyOnlySample,
            reduced: false,
            filter: None,
            sample_channel: false,
        };
        w.match_reader(Timestamp::ZERO, reader);
        while w.poll_transmit().is_some() {}
        w
    }

    /// The inline QoS of the first DATA the writer sends after writing `change`.
    fn inline_qos_of(change: Change) -> Option<Vec<(u16, Vec<u8>)>> {
        let mut w = writer_with_reader();
        w.write(Timestamp::ZERO, change).unwrap();
        let t = w.poll_transmit().unwrap();
        let (_, iter) = Message::parse(&t.payload).unwrap();
        for sm in iter {
            if let Ok(Submessage::Data(d)) = sm {
                return d
                    .inline_qos
                    .map(|q| q.iter().map(|p| (p.id, p.value.to_vec())).collect());
            }
        }
        panic!("no DATA in {:02x?}", t.payload);
    }

    #[test]
    fn payloads_the_history_lets_go_are_handed_back_unshared_for_reuse() {
        let change = |payload: Arc<Vec<u8>>| Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: None,
            timestamp: None,
            payload: payload.into(),
            reduced_payload: None,
        };
        let keep_last_1 = |recycle_payloads| WriterConfig {
            history: History::KeepLast(1),
            recycle_payloads,
            ..WriterConfig::default()
        };
        let mut pool = PayloadPool::new();
        let mut w = writer_with_reader_configured(keep_last_1(false));
        w.write(Timestamp::ZERO, change(Arc::new(vec![0, 1, 0, 0, 41])))
            .unwrap();
        w.write(Timestamp::ZERO, change(Arc::new(vec![0, 1, 0, 0, 42])))
            .unwrap();
        assert!(!w.has_recycled_payloads(), "kept only when configured");

        let mut w = writer_with_reader_configured(keep_last_1(true));
        w.write(Timestamp::ZERO, change(Arc::new(vec![0, 1, 0, 0, 42])))
            .unwrap();

        let first = Arc::new(vec![0, 1, 0, 0, 43]);
        let at = first.as_slice().as_ptr();
        w.write(Timestamp::ZERO, change(first)).unwrap();
        let held = Arc::new(vec![0, 1, 0, 0, 44]);
        w.write(Timestamp::ZERO, change(Arc::clone(&held))).unwrap();
        w.write(Timestamp::ZERO, change(Arc::new(vec![0, 1, 0, 0, 45])))
            .unwrap();
        assert!(w.has_recycled_payloads());
        w.recycle_payloads_into(&mut pool);
        assert!(!w.has_recycled_payloads());
        // 42 and 43 are kept; 44, which the test still holds, is not.
        assert_eq!(pool.len(), 2);
        let reused: Vec<_> = std::iter::from_fn(|| pool.take()).collect();
        assert!(reused.iter().all(|p| p.is_empty()), "emptied");
        assert!(
            reused.iter().any(|p| p.as_slice().as_ptr() == at),
            "43's own buffer"
        );
        assert_eq!(*held, [0, 1, 0, 0, 44]);
        while w.poll_transmit().is_some() {}
    }

    #[test]
    fn a_reliable_reader_is_heard_once_it_sent_an_acknack() {
        let mut w = writer_with_reader();
        assert!(!w.reliable_readers_heard(), "matched, not heard yet");
        let set = crate::wire::SequenceNumberSet::from_parts(SequenceNumber(1), 0, [0; 8])
            .expect("an empty set based at 1");
        let acknack = AckNack {
            reader_id: EntityId([0, 0, 1, 7]),
            writer_id: EntityId([0, 0, 1, 2]),
            reader_sn_state: set,
            count: 1,
            final_flag: false,
        };
        // From another participant than the reader's: not the reader.
        w.handle_acknack(Timestamp::ZERO, GuidPrefix([3; 12]), &acknack);
        assert!(!w.reliable_readers_heard());
        w.handle_acknack(Timestamp::ZERO, GuidPrefix([2; 12]), &acknack);
        assert!(w.reliable_readers_heard());
    }

    #[test]
    fn keyless_samples_carry_no_key_hash() {
        // dust_dds had to stop sending PID_KEY_HASH on keyless topics: peers get confused.
        let change = Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: None,
            timestamp: None,
            payload: Payload::from(vec![0, 1, 0, 0]),
            reduced_payload: None,
        };
        assert_eq!(inline_qos_of(change), None);
    }

    #[test]
    fn keyed_samples_and_disposes_say_their_instance() {
        let change = Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: Some([7; 16]),
            timestamp: None,
            payload: Payload::from(vec![0, 1, 0, 0]),
            reduced_payload: None,
        };
        assert_eq!(
            inline_qos_of(change),
            Some(vec![(pid::KEY_HASH, vec![7; 16])])
        );
        let dispose = Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Disposed,
            key_hash: Some([7; 16]),
            timestamp: None,
            payload: Payload::from(vec![0, 1, 0, 0]),
            reduced_payload: None,
        };
        assert_eq!(
            inline_qos_of(dispose),
            Some(vec![
                (pid::KEY_HASH, vec![7; 16]),
                (pid::STATUS_INFO, vec![0, 0, 0, 1])
            ])
        );
    }

    /// A reader on port 7413 (the first one of `writer_with_reader` is on 7411).
    fn second_reader(dispose_key: DisposeKey) -> RemoteReader {
        RemoteReader {
            guid: Guid::new(GuidPrefix([3; 12]), EntityId([0, 0, 1, 7])),
            locators: vec![Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7413)],
            reliable: true,
            transient_local: false,
            dispose_key,
            reduced: false,
            filter: None,
            sample_channel: false,
        }
    }

    /// The payloads of the DATA submessages the writer sends, by destination port.
    fn data_payloads_by_port(w: &mut Writer) -> Vec<(u32, Option<Vec<u8>>)> {
        let mut payloads = Vec::new();
        while let Some(t) = w.poll_transmit() {
            let (_, iter) = Message::parse(&t.payload).unwrap();
            for sm in iter.flatten() {
                if let Submessage::Data(d) = sm {
                    payloads.push((
                        t.destinations[0].port,
                        d.payload.bytes().map(<[u8]>::to_vec),
                    ));
                }
            }
        }
        payloads.sort();
        payloads
    }

    #[test]
    fn disposes_to_a_reader_that_wants_the_key_hash_alone_carry_no_payload() {
        let mut w = writer_with_reader();
        w.match_reader(Timestamp::ZERO, second_reader(DisposeKey::KeyHashOnly));
        while w.poll_transmit().is_some() {}
        let dispose = Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Disposed,
            key_hash: Some([7; 16]),
            timestamp: None,
            payload: Payload::from(vec![0, 1, 0, 0, 5, 0, 0, 0]),
            reduced_payload: None,
        };
        w.write(Timestamp::ZERO, dispose).unwrap();
        let payloads = data_payloads_by_port(&mut w);
        assert_eq!(
            payloads,
            [(7411, Some(vec![0, 1, 0, 0, 5, 0, 0, 0])), (7413, None),]
        );
    }

    #[test]
    fn a_reader_that_takes_the_reduced_form_gets_it_and_others_the_full_one() {
        let mut w = writer_with_reader();
        w.match_reader(
            Timestamp::ZERO,
            RemoteReader {
                reduced: true,
                filter: None,
                ..second_reader(DisposeKey::KeyOnlySample)
            },
        );
        while w.poll_transmit().is_some() {}
        let change = Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: None,
            timestamp: None,
            payload: Payload::from(vec![0, 1, 0, 0, 1, 2, 3, 4]),
            reduced_payload: Some(Arc::new(vec![0, 1, 0, 0])),
        };
        w.write(Timestamp::ZERO, change).unwrap();
        let payloads = data_payloads_by_port(&mut w);
        assert_eq!(
            payloads,
            [
                (7411, Some(vec![0, 1, 0, 0, 1, 2, 3, 4])),
                (7413, Some(vec![0, 1, 0, 0]))
            ]
        );
    }

    /// A reducer that keeps the encapsulation header and repeats the first body byte,
    /// inverted, four times; and counts its calls.
    fn counting_reducer() -> (Reducer, Arc<std::sync::atomic::AtomicUsize>) {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = calls.clone();
        let reducer = Reducer(Arc::new(move |_, payload: &[u8]| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let first = *payload.get(4)?;
            Some([&payload[..4], &[!first; 4]].concat())
        }));
        (reducer, calls)
    }

    #[test]
    fn a_reducer_serves_the_readers_of_the_reduced_form_and_only_while_there_are_some() {
        let (reducer, calls) = counting_reducer();
        let mut w = writer_with_reader_configured(WriterConfig {
            transient_local: true,
            history: History::KeepLast(10),
            reduce: Some(reducer),
            ..WriterConfig::default()
        });
        // No reader takes the reduced form: nothing is reduced.
        w.write(Timestamp::ZERO, small_change(1)).unwrap();
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 0);
        while w.poll_transmit().is_some() {}
        // A late-joining reader of the reduced form gets the history reduced...
        w.match_reader(
            Timestamp::ZERO,
            RemoteReader {
                reduced: true,
                transient_local: true,
                ..second_reader(DisposeKey::KeyOnlySample)
            },
        );
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(
            data_payloads_by_port(&mut w),
            [(7413, Some(vec![0, 1, 0, 0, 254, 254, 254, 254]))]
        );
        // ...and each new change, while the others get the full one.
        w.write(Timestamp::ZERO, small_change(5)).unwrap();
        assert_eq!(
            data_payloads_by_port(&mut w),
            [
                (7411, Some(vec![0, 1, 0, 0, 5, 5, 5, 5])),
                (7413, Some(vec![0, 1, 0, 0, 250, 250, 250, 250]))
            ]
        );
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
        // Once it is gone, writes cost no reduction.
        w.unmatch_reader(second_reader(DisposeKey::KeyOnlySample).guid);
        w.write(Timestamp::ZERO, small_change(9)).unwrap();
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
    }

    #[test]
    fn the_key_members_form_drops_the_dheader_of_an_appendable_key() {
        // FerroDDS's (and Cyclone DDS 11's) key-only ShapeType "BLUE", then Cyclone 0.10's.
        let with = [
            0x00, 0x09, 0x00, 0x03, 9, 0, 0, 0, 5, 0, 0, 0, b'B', b'L', b'U', b'E', 0, 0, 0, 0,
        ];
        let without = [
            0x00, 0x09, 0x00, 0x03, 5, 0, 0, 0, b'B', b'L', b'U', b'E', 0, 0, 0, 0,
        ];
        assert_eq!(
            DisposeKey::KeyMembers.payload(&with).as_deref(),
            Some(&without[..])
        );
        // XCDR1 (no DHEADER) and plain XCDR2 go as they are.
        let xcdr1 = [0x00, 0x01, 0x00, 0x00, 1, 0, 0, 0];
        assert_eq!(
            DisposeKey::KeyMembers.payload(&xcdr1).as_deref(),
            Some(&xcdr1[..])
        );
        assert_eq!(DisposeKey::KeyHashOnly.payload(&with), None);
        assert_eq!(
            DisposeKey::KeyOnlySample.payload(&with).as_deref(),
            Some(&with[..])
        );
    }

    fn small_change(i: u8) -> Change {
        Change {
            original: None,
            coherence: None,
            kind: ChangeKind::Alive,
            key_hash: None,
            timestamp: None,
            payload: Payload::from(vec![0, 1, 0, 0, i, i, i, i]),
            reduced_payload: None,
        }
    }

    /// The writer sequence numbers of the DATA submessages in each datagram sent.
    fn data_per_datagram(w: &mut Writer) -> Vec<Vec<i64>> {
        std::iter::from_fn(|| w.poll_transmit())
            .map(|t| {
                Message::parse(&t.payload)
                    .unwrap()
                    .1
                    .filter_map(|sm| match sm {
                        Ok(Submessage::Data(d)) => Some(d.writer_sn.0),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn without_batching_each_change_goes_out_at_once() {
        let mut w = writer_with_reader();
        for i in 0..3 {
            w.write(Timestamp::ZERO, small_change(i)).unwrap();
            assert_eq!(data_per_datagram(&mut w), [vec![i64::from(i) + 1]]);
        }
    }

    #[test]
    fn a_batching_writer_holds_changes_until_flushed_or_their_delay_ends() {
        let delay = Duration::from_micros(500);
        let mut w = writer_with_reader_configured(WriterConfig {
            batch_delay: Some(delay),
            history: History::KeepAll,
            ..WriterConfig::default()
        });
        for i in 0..10 {
            w.write(Timestamp::ZERO, small_change(i)).unwrap();
        }
        assert!(w.poll_transmit().is_none(), "held back");
        assert_eq!(w.poll_timeout(), Some(Timestamp::ZERO.after(delay)));
        w.flush();
        assert_eq!(data_per_datagram(&mut w), [(1..=10).collect::<Vec<_>>()]);

        w.write(Timestamp::ZERO, small_change(11)).unwrap();
        w.handle_timeout(Timestamp::ZERO.after(delay / 2));
        assert!(w.poll_transmit().is_none(), "not yet due");
        w.handle_timeout(Timestamp::ZERO.after(delay));
        assert_eq!(data_per_datagram(&mut w), [vec![11]]);
    }

    #[test]
    fn a_full_batch_goes_out_without_waiting() {
        let mut w = writer_with_reader_configured(WriterConfig {
            batch_delay: Some(Duration::from_secs(1)),
            history: History::KeepAll,
            max_message_size: 1000,
            ..WriterConfig::default()
        });
        for i in 0..40 {
            w.write(Timestamp::ZERO, small_change(i)).unwrap();
        }
        let sent = data_per_datagram(&mut w);
        assert!(!sent.is_empty(), "full datagrams are sent");
        // In order, each datagram within the limit, and the last one still held.
        let flat: Vec<i64> = sent.iter().flatten().copied().collect();
        assert_eq!(flat, (1..=flat.len() as i64).collect::<Vec<_>>());
        assert!(flat.len() < 40 && sent.iter().all(|d| d.len() > 1));
        w.flush();
        let rest: Vec<i64> = data_per_datagram(&mut w).concat();
        assert_eq!(rest.first(), Some(&(flat.len() as i64 + 1)));
        assert_eq!(rest.last(), Some(&40));
    }

    #[test]
    fn a_heartbeat_never_overtakes_the_batch_it_announces() {
        let mut w = writer_with_reader_configured(WriterConfig {
            batch_delay: Some(Duration::from_secs(1)),
            history: History::KeepAll,
            ..WriterConfig::default()
        });
        for i in 0..3 {
            w.write(Timestamp::ZERO, small_change(i)).unwrap();
        }
        // The periodic heartbeat is due: the batch goes first (batched samples carry no
        // final HEARTBEAT of their own; the periodic one comes after them).
        w.handle_timeout(Timestamp::ZERO.after(Duration::from_millis(100)));
        let mut kinds: Vec<&str> = Vec::new();
        while let Some(t) = w.poll_transmit() {
            kinds.extend(
                Message::parse(&t.payload)
                    .unwrap()
                    .1
                    .filter_map(|sm| match sm {
                        Ok(Submessage::Data(_)) => Some("data"),
                        Ok(Submessage::Heartbeat(_)) => Some("heartbeat"),
                        _ => None,
                    }),
            );
        }
        assert_eq!(kinds, ["data", "data", "data", "heartbeat"]);
    }

    #[test]
    fn keep_last_keeps_the_newest_changes_of_each_instance() {
        let mut w = Writer::new(
            Guid::new(GuidPrefix([1; 12]), EntityId([0, 0, 1, 2])),
            WriterConfig {
                history: History::KeepLast(2),
                transient_local: true,
                ..WriterConfig::default()
            },
        );
        // Instances 0, 1, 2 in turn, five changes each: seq = 3 * round + instance + 1.
        for round in 0..5u8 {
            for instance in 0..3u8 {
                let change = Change {
                    key_hash: Some([instance; 16]),
                    ..small_change(round)
                };
                w.write(Timestamp::ZERO, change).unwrap();
            }
        }
        assert_eq!(w.history_len(), 6);
        // A late joiner gets what is kept: the last two rounds, in order.
        w.match_reader(
            Timestamp::ZERO,
            RemoteReader {
                guid: Guid::new(GuidPrefix([2; 12]), EntityId([0, 0, 1, 7])),
                locators: vec![Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411)],
                reliable: true,
                transient_local: true,
                dispose_key: DisposeKey::KeyOnlySample,
                reduced: false,
                filter: None,
                sample_channel: false,
            },
        );
        assert_eq!(data_per_datagram(&mut w).concat(), [10, 11, 12, 13, 14, 15]);
    }

    /// (first fragment, fragments, heartbeat final flag if any) of each DATA_FRAG datagram.
    fn fragments_sent(w: &mut Writer) -> Vec<(u32, u16, Option<bool>)> {
        std::iter::from_fn(|| w.poll_transmit())
            .filter_map(|t| {
                let bytes = t.contiguous();
                let (_, subs) = Message::parse(&bytes).unwrap();
                let mut frag = None;
                let mut hb = None;
                for sm in subs.flatten() {
                    match sm {
                        Submessage::DataFrag(f) => {
                            frag = Some((f.fragment_starting_num, f.fragments_in_submessage))
                        }
                        Submessage::Heartbeat(h) => hb = Some(h.final_flag),
                        _ => {}
                    }
                }
                frag.map(|(n, c)| (n, c, hb))
            })
            .collect()
    }

    #[test]
    fn large_samples_go_to_reliable_readers_a_burst_at_a_time() {
        let mut w = writer_with_reader_configured(WriterConfig {
            history: History::KeepAll,
            ..WriterConfig::default()
        });
        let fragment = w.config.fragment_size;
        // 4 MiB: 256 fragments, of which the first burst sends MAX_FRAGMENT_BURST's worth.
        let change = Change {
            payload: Payload::from(vec![7u8; 256 * fragment]),
            ..small_change(0)
        };
        w.write(Timestamp::ZERO, change).unwrap();
        let sent = fragments_sent(&mut w);
        let count: u32 = sent.iter().map(|&(_, c, _)| u32::from(c)).sum();
        // Whole datagrams (three fragments each) until the burst is reached.
        let burst = (MAX_FRAGMENT_BURST / fragment) as u32;
        assert!((burst..burst + 3).contains(&count), "{count} fragments");
        // The burst ends with a HEARTBEAT asking what arrived.
        assert_eq!(sent.last().and_then(|s| s.2), Some(false));
        assert!(sent[..sent.len() - 1].iter().all(|s| s.2.is_none()));

        // The reader asks for the rest: the answer is the next burst, which asks again.
        let mut rest = FragmentNumberSet::new(count + 1);
        for n in count + 1..=256 {
            rest.insert(n);
        }
        let nack = NackFrag {
            reader_id: EntityId([0, 0, 1, 7]),
            writer_id: EntityId([0, 0, 1, 2]),
            writer_sn: SequenceNumber(1),
            fragment_number_state: rest,
            count: 1,
        };
        w.handle_nack_frag(Timestamp::ZERO, GuidPrefix([2; 12]), &nack);
        let sent = fragments_sent(&mut w);
        assert_eq!(sent.first().map(|s| s.0), Some(count + 1));
        let again: u32 = sent.iter().map(|&(_, c, _)| u32::from(c)).sum();
        assert!((burst..burst + 3).contains(&again), "{again} fragments");
        assert_eq!(sent.last().and_then(|s| s.2), Some(false));
    }

    #[test]
    fn a_batching_writer_sends_a_fragmented_sample_at_once() {
        let mut w = writer_with_reader_configured(WriterConfig {
            batch_delay: Some(Duration::from_secs(1)),
            history: History::KeepAll,
            ..WriterConfig::default()
        });
        let fragment = w.config.fragment_size;
        let change = Change {
            payload: Payload::from(vec![7u8; 4 * fragment]),
            ..small_change(0)
        };
        w.write(Timestamp::ZERO, change).unwrap();
        let sent: u32 = fragments_sent(&mut w)
            .iter()
            .map(|&(_, c, _)| u32::from(c))
            .sum();
        assert_eq!(
            sent, 4,
            "every fragment sent without waiting for the batch delay"
        );
    }

    /// A sample whose bytes count up, and the writer's datagrams for it put back together:
    /// (datagrams, bytes of them built by the writer, the sample reassembled, fragment
    /// sizes seen).
    fn send_and_reassemble(
        config: WriterConfig,
        locator: Locator,
        size: usize,
    ) -> (usize, usize, Vec<u8>, Vec<u16>) {
        let prefix = GuidPrefix([1; 12]);
        let mut w = Writer::new(Guid::new(prefix, EntityId([0, 0, 1, 2])), config);
        let reader = RemoteReader {
            guid: Guid::new(GuidPrefix([2; 12]), EntityId([0, 0, 1, 7])),
            locators: vec![locator],
            reliable: false,
            transient_local: false,
            dispose_key: DisposeKey::KeyOnlySample,
            reduced: false,
            filter: None,
            sample_channel: false,
        };
        w.match_reader(Timestamp::ZERO, reader);
        while w.poll_transmit().is_some() {}
        let sample: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
        let change = Change {
            payload: Payload::from(sample),
            ..small_change(0)
        };
        w.write(Timestamp::ZERO, change).unwrap();
        let mut out = vec![0u8; size];
        let (mut datagrams, mut built, mut sizes) = (0, 0, Vec::new());
        while let Some(t) = w.poll_transmit() {
            datagrams += 1;
            built += t.payload.len();
            let bytes = t.contiguous();
            assert_eq!(bytes.len(), t.len());
            for sm in Message::parse(&bytes).unwrap().1.flatten() {
                match sm {
                    Submessage::DataFrag(f) => {
                        let at = (f.fragment_starting_num as usize - 1) * f.fragment_size as usize;
                        out[at..at + f.fragments.len()].copy_from_slice(f.fragments);
                        sizes.push(f.fragment_size);
                    }
                    Submessage::Data(d) => out.copy_from_slice(d.payload.bytes().unwrap()),
                    _ => {}
                }
            }
        }
        (datagrams, built, out, sizes)
    }

    #[test]
    fn large_payloads_are_spliced_in_not_copied_into_the_datagram() {
        let udp = Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411);
        for size in [3000, 40_000, 300_000] {
            let (datagrams, built, out, _) =
                send_and_reassemble(WriterConfig::default(), udp, size);
            let expected: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
            assert!(out == expected, "{size} bytes come out as they went in");
            // Headers only: about a hundred bytes a datagram.
            assert!(built < datagrams * 200, "{built} bytes built for {size}");
        }
        // Below the threshold the payload is copied (and the whole is one buffer).
        let (_, built, _, _) = send_and_reassemble(WriterConfig::default(), udp, 100);
        assert!(built > 100);
    }

    #[test]
    fn readers_reached_through_large_datagrams_get_fewer_larger_ones() {
        const LOCAL: i32 = 0x4644_0002;
        let config = || WriterConfig {
            large_datagrams: Some(LargeDatagrams {
                kinds: vec![LOCAL],
                max_message_size: 512 * 1024,
                fragment_burst: 4 << 20,
                max_bytes: 24 << 20,
            }),
            ..WriterConfig::default()
        };
        let size = 3_000_000;
        let local = Locator {
            kind: LOCAL,
            port: 1,
            address: [9; 16],
        };
        let (datagrams, _, out, sizes) = send_and_reassemble(config(), local, size);
        let expected: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
        assert!(out == expected);
        assert!(sizes.iter().all(|&s| usize::from(s) == LARGE_FRAGMENT));
        // Eight fragments (and their headers) to a datagram.
        assert_eq!(datagrams, size.div_ceil(LARGE_FRAGMENT).div_ceil(8));
        // The same writer gives a UDP reader datagrams UDP can carry.
        let udp = Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7411);
        let (datagrams, _, out, sizes) = send_and_reassemble(config(), udp, size);
        assert!(out == expected);
        assert!(sizes.iter().all(|&s| usize::from(s) == 16 * 1024));
        assert!(datagrams > size / (64 * 1024), "{datagrams}");
    }
}
