//! The RTPS reader (RTPS 2.5 §8.4.10–8.4.12): per matched writer, what has arrived, what
//! is missing, and the fragments of samples under reassembly.
//!
//! A reliable reader delivers each change once and in order: it holds changes that arrive
//! early until the ones before them arrive or are declared irrelevant (GAP, or a HEARTBEAT
//! whose first number moved past them), and answers HEARTBEATs with ACKNACKs listing what
//! it misses (NACK_FRAG for samples it has in part). A best-effort reader delivers a
//! change only if it is newer than the last one delivered from that writer.
//!
//! Reassembly never reserves what a DATA_FRAG merely claims: fragments in order from the
//! first are appended to one buffer as they arrive (a buffer the process already keeps for
//! samples that large, or one that grows), those ahead of a missing one are kept apart
//! until it comes, and the buffer becomes the sample. What is held under reassembly per reader
//! is bounded by `max_reassembly_bytes` (fragment bytes plus a fixed charge per fragment
//! and per sample, so that tiny fragments cannot hide their bookkeeping) and by
//! `max_reassembly_fragments`. A fragment beyond either bound is dropped and counted; the
//! writer resends it when asked.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::coherence::Coherence;
use crate::endpoint::{build, ChangeKind};
use crate::original_writer::OriginalWriterInfo;
use crate::payload::{pid_in_channel, ChannelOpener, ChannelRef, ChunkSource, ReceivedPayload};
use crate::payload_pool::{ReceivePool, RECEIVE_KEPT_BYTES};
use crate::time::{earliest, Timestamp};
use crate::transmit::Transmit;
use crate::wire::{
    parameter_list::pid, AckNack, Data, DataFrag, DataPayload, EntityId, FragmentNumberSet, Gap,
    Guid, GuidPrefix, Heartbeat, HeartbeatFrag, Locator, NackFrag, SequenceNumber,
    SequenceNumberSet, Time, VendorId, MAX_SET_BITS,
};

/// How a reader behaves.
#[derive(Debug, Clone)]
pub struct ReaderConfig {
    /// RELIABLE (true) or BEST_EFFORT.
    pub reliable: bool,
    /// The largest sample accepted (fragmented samples claiming more are dropped).
    pub max_sample_size: usize,
    /// Bytes held in fragments of incomplete samples, per reader, at most (each fragment
    /// counts [`FRAGMENT_OVERHEAD`] bytes beside its own, each sample [`SAMPLE_OVERHEAD`]).
    pub max_reassembly_bytes: usize,
    /// Fragments held for incomplete samples, per reader, at most.
    pub max_reassembly_fragments: usize,
    /// Changes held ahead of a missing one, per writer, at most.
    pub max_out_of_order: usize,
    /// Delay before answering a HEARTBEAT (lets a burst of them collapse into one reply).
    pub heartbeat_response_delay: Duration,
    /// Delay before answering a final HEARTBEAT (one that asks for no answer) that shows
    /// changes missing: the HEARTBEATs that follow while the gap lasts draw one ACKNACK
    /// a delay, where each drew its own, which asked for the same changes again (a writer
    /// faster than its reader piggy-backs one on every sample; a subscriber in Python spent
    /// a sixth of its time on ACKNACKs). A HEARTBEAT that asks for an answer gets it after
    /// `heartbeat_response_delay`. Cyclone DDS waits 100 ms here (its `NackDelay`).
    pub nack_delay: Duration,
    /// A stateless best-effort reader (RTPS 8.4.11) takes DATA from any writer, matched or
    /// not, as the SPDP reader does.
    pub stateless: bool,
    /// A writer matched again goes on from the first change not yet delivered before it
    /// was unmatched ([`Reader`]'s resume points): for user readers, whose cache outlives
    /// the match. Not for discovery's, whose view of a lost participant is gone with it
    /// and must be told everything again.
    pub resume_rematched: bool,
    /// Opens the sample channels of writers that send references to them (a driver with
    /// shared memory); `None`: such DATAs are taken as lost (and repaired with the bytes).
    pub channels: Option<Arc<dyn ChannelOpener>>,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        Self {
            reliable: true,
            max_sample_size: 256 * 1024 * 1024,
            max_reassembly_bytes: 512 * 1024 * 1024,
            max_reassembly_fragments: 262_144,
            max_out_of_order: 10_000,
            heartbeat_response_delay: Duration::ZERO,
            nack_delay: Duration::from_millis(1),
            stateless: false,
            resume_rematched: false,
            channels: None,
        }
    }
}

/// A matched remote writer, as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteWriter {
    /// The writer's GUID.
    pub guid: Guid,
    /// Where to send ACKNACKs.
    pub locators: Vec<Locator>,
    /// RELIABLE writer.
    pub reliable: bool,
}

/// A change delivered in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedChange {
    /// The writer.
    pub writer: Guid,
    /// Its sequence number.
    pub sequence_number: SequenceNumber,
    /// What happened to the instance.
    pub kind: ChangeKind,
    /// The instance's key hash, when sent.
    pub key_hash: Option<[u8; 16]>,
    /// The source timestamp, when sent.
    pub timestamp: Option<Time>,
    /// The serialized sample or key, encapsulation included.
    pub payload: ReceivedPayload,
    /// Where the datagram that carried (or completed) the change came from, as the driver
    /// said ([`Locator::INVALID`] when it did not know).
    pub origin: Locator,
    /// Its coherent set or group order (PRESENTATION), when its inline QoS said so; an end
    /// marker carries no sample.
    pub coherence: Option<Box<Coherence>>,
    /// The writer that wrote it, when a durability service relays it.
    pub original: Option<OriginalWriterInfo>,
}

/// Counters for what the reader dropped or did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaderStats {
    /// Changes delivered.
    pub delivered: u64,
    /// Changes received again, dropped.
    pub duplicates: u64,
    /// Best-effort changes older than one already delivered, dropped.
    pub out_of_order: u64,
    /// Changes declared lost (GAP or heartbeat moved past them) without arriving.
    pub lost: u64,
    /// Submessages from writers not matched, dropped.
    pub unknown_writer: u64,
    /// Fragments dropped: inconsistent with earlier fragments of their sample.
    pub bad_fragments: u64,
    /// DATA_FRAGs dropped because they claim a sample larger than `max_sample_size`.
    pub oversized: u64,
    /// DATA_FRAGs whose fragments (some or all) were dropped because the reassembly
    /// limits (`max_reassembly_bytes`, `max_reassembly_fragments`) were reached.
    pub reassembly_full: u64,
    /// Changes dropped because `max_out_of_order` changes were already held ahead of a
    /// missing one (they are asked for again).
    pub out_of_order_dropped: u64,
    /// ACKNACKs sent.
    pub acknacks: u64,
    /// NACK_FRAGs sent.
    pub nack_frags: u64,
    /// DATAs whose sample was to be in the writer's sample channel and was not (the
    /// reader subscribed late, its queue was full, or it cannot open the channel): taken
    /// as lost, and repaired with the bytes.
    pub channel_missed: u64,
}

impl ReaderStats {
    /// Adds `other`'s counts to these (saturating).
    pub fn add(&mut self, other: &ReaderStats) {
        let add = |a: &mut u64, b: u64| *a = a.saturating_add(b);
        add(&mut self.delivered, other.delivered);
        add(&mut self.duplicates, other.duplicates);
        add(&mut self.out_of_order, other.out_of_order);
        add(&mut self.lost, other.lost);
        add(&mut self.unknown_writer, other.unknown_writer);
        add(&mut self.bad_fragments, other.bad_fragments);
        add(&mut self.oversized, other.oversized);
        add(&mut self.channel_missed, other.channel_missed);
        add(&mut self.reassembly_full, other.reassembly_full);
        add(&mut self.out_of_order_dropped, other.out_of_order_dropped);
        add(&mut self.acknacks, other.acknacks);
        add(&mut self.nack_frags, other.nack_frags);
    }
}

#[derive(Debug)]
enum Slot {
    Change(ReceivedChange),
    Irrelevant,
}

/// Bytes charged against `max_reassembly_bytes` for each fragment held, beside its own:
/// roughly what its buffer and its map entry cost.
pub const FRAGMENT_OVERHEAD: usize = 64;
/// Bytes charged against `max_reassembly_bytes` for each sample under reassembly.
pub const SAMPLE_OVERHEAD: usize = 256;

/// What a reader holds under reassembly, against its limits.
#[derive(Debug, Default)]
struct Held {
    bytes: usize,
    fragments: usize,
}

impl Held {
    fn release(&mut self, r: &Reassembly) {
        self.bytes = self.bytes.saturating_sub(r.bytes);
        self.fragments = self.fragments.saturating_sub(r.fragments.len());
    }
}

/// The fragments of one sample received so far: those in order from the first appended to
/// one buffer, which becomes the sample (one copy, one allocation in the usual in-order
/// case), and those ahead of a missing one kept apart until it comes.
#[derive(Debug, Default)]
struct Fragments {
    /// Fragments 1 to `next - 1`, in order.
    contiguous: Vec<u8>,
    /// The first fragment not in `contiguous` (1-based).
    next: u32,
    /// Fragments after a missing one.
    ahead: BTreeMap<u32, Vec<u8>>,
}

impl Fragments {
    /// No fragment yet. The buffer is one the process already keeps for samples this large
    /// when there is one ([`crate::buffer_pool::take_kept`]); otherwise it grows with what
    /// arrives: nothing is reserved for the size a DATA_FRAG merely claims.
    fn new(sample_size: usize) -> Fragments {
        Fragments {
            contiguous: crate::buffer_pool::take_kept(sample_size).unwrap_or_default(),
            next: 1,
            ahead: BTreeMap::new(),
        }
    }

    fn contains(&self, n: u32) -> bool {
        n < self.next || self.ahead.contains_key(&n)
    }

    fn len(&self) -> usize {
        (self.next - 1) as usize + self.ahead.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds fragment `n` (not held yet).
    fn insert(&mut self, n: u32, chunk: &[u8]) {
        if n != self.next {
            self.ahead.insert(n, chunk.to_vec());
            return;
        }
        self.contiguous.extend_from_slice(chunk);
        self.next += 1;
        while let Some(piece) = self.ahead.remove(&self.next) {
            self.contiguous.extend_from_slice(&piece);
            self.next += 1;
        }
    }
}

#[derive(Debug)]
struct Reassembly {
    sample_size: u32,
    fragment_size: u16,
    total: u32,
    fragments: Fragments,
    /// What the sample costs against `max_reassembly_bytes`, overheads included.
    bytes: usize,
    kind: ChangeKind,
    key_hash: Option<[u8; 16]>,
    timestamp: Option<Time>,
    coherence: Option<Box<Coherence>>,
    original: Option<OriginalWriterInfo>,
}

#[derive(Debug)]
struct WriterProxy {
    remote: RemoteWriter,
    /// Every change before this one was delivered or declared irrelevant.
    next_expected: i64,
    /// The highest change the writer announced.
    highest_announced: i64,
    /// Changes (or irrelevant markers) that arrived ahead of `next_expected`.
    ahead: BTreeMap<i64, Slot>,
    reassembly: BTreeMap<i64, Reassembly>,
    last_heartbeat: Option<u32>,
    last_heartbeat_frag: Option<u32>,
    ack_due: Option<Timestamp>,
    acknack_count: u32,
    nack_frag_count: u32,
    /// The last ACKNACK asked for changes, and they have not all come since: when they
    /// have, the reader says so at once rather than at the writer's next HEARTBEAT (see
    /// [`Reader::acknowledge_repair`]).
    repairing: bool,
    /// When anything last came from the writer, and when it last asserted its liveliness
    /// (data, or a HEARTBEAT with the liveliness flag): a store per submessage, read only
    /// when a lease may have run out (`dcps::liveliness`).
    heard: Timestamp,
    asserted: Timestamp,
    /// Matched again after an unmatch, `next_expected` taken from what the reader
    /// remembered ([`Reader::resume_points`]), and no HEARTBEAT seen since.
    resumed: bool,
    /// The writer's sample channel, once a DATA referred to it.
    channel: ChannelState,
}

/// A writer proxy's subscription to the writer's sample channel.
#[derive(Debug, Default)]
enum ChannelState {
    /// No DATA referred to it yet.
    #[default]
    Closed,
    Open(Box<dyn ChunkSource>),
    /// It could not be opened; tried again from this time on.
    Unavailable(Timestamp),
}

/// How long a reader waits before it tries again to open a sample channel it could not.
const CHANNEL_RETRY: Duration = Duration::from_secs(1);

/// How many unmatched writers a reader remembers where it stood with.
const RESUME_POINTS: usize = 256;

impl WriterProxy {
    /// Something came from the writer at `now`; `asserts`: something that asserts its
    /// liveliness.
    fn stamp(&mut self, now: Timestamp, asserts: bool) {
        self.heard = now;
        if asserts {
            self.asserted = now;
        }
    }
}

/// An RTPS reader without I/O.
#[derive(Debug)]
pub struct Reader {
    guid: Guid,
    config: ReaderConfig,
    /// Set when the participant routed a submessage here since it last listed the readers
    /// it routed to ([`crate::Participant::take_touched_readers`]).
    pub(crate) touched: bool,
    /// No writer proxy's `ack_due` is earlier than this (`None`: none has one): what
    /// [`Reader::poll_timeout`] answers and [`Reader::handle_timeout`] checks before it
    /// walks the proxies. Lowered wherever an `ack_due` is set, made exact by that walk; a
    /// proxy unmatched meanwhile costs one early wake-up. A walk per poll cost a builtin
    /// reader matched with every remote participant's writer a hundred steps per datagram
    /// (a tenth of a hundred-participant system's CPU).
    next_ack: Option<Timestamp>,
    writers: Vec<WriterProxy>,
    delivered: VecDeque<ReceivedChange>,
    transmits: VecDeque<Transmit>,
    held: Held,
    stats: ReaderStats,
    /// How many more changes from reliable writers may be delivered (`None`: no bound):
    /// the room left in the cache that takes them ([`Reader::set_room`]).
    room: Option<usize>,
    /// Buffers of samples the application took, for the next ones received.
    spare: ReceivePool,
    /// Writers unmatched lately (oldest first, at most [`RESUME_POINTS`]) and the first
    /// change not yet delivered from each. A writer that comes back — its host was cut
    /// off beyond the lease, a partition moved away and back — resends its
    /// TRANSIENT_LOCAL history from the start; the reader goes on from where it was, so
    /// that nothing is delivered twice (sequence numbers are the writer's own: the same
    /// GUID, the same numbering).
    resume_points: VecDeque<(Guid, i64)>,
}

impl Reader {
    /// Takes in the buffers of samples the application is done with (those of
    /// [`crate::buffer_pool::MIN_POOLED`] bytes or more belong to that pool instead), for
    /// the next samples received.
    pub fn recycle_payloads(&mut self, done: &mut ReceivePool) {
        // The application's pool knows how much it takes at once (`follow_demand`).
        self.spare.set_limit(done.limit());
        self.spare.refill_from(done);
    }

    /// A copy of a received sample's bytes, in a buffer taken back from the application
    /// when there is one.
    fn received_payload(&mut self, bytes: &[u8]) -> ReceivedPayload {
        ReceivedPayload::Owned(match self.spare.take() {
            Some(mut buffer) => {
                buffer.extend_from_slice(bytes);
                buffer
            }
            None => bytes.to_vec(),
        })
    }

    /// The sample of change `seq` of `writer` from the writer's sample channel, where it
    /// lies (`at`); `None` when it is not there (counted: the change stays missing, and the
    /// writer repairs it with the bytes), or the change is no news.
    fn take_from_channel(
        &mut self,
        now: Timestamp,
        writer: Guid,
        seq: i64,
        at: ChannelRef,
    ) -> Option<ReceivedPayload> {
        if self.config.stateless {
            // Takes from no channel (discovery's readers): no such DATA is meant for it.
            self.stats.channel_missed += 1;
            return None;
        }
        let i = self.writers.iter().position(|w| w.remote.guid == writer)?;
        if self.is_settled(i, seq) {
            // Nothing is taken from the channel for a duplicate (the accept that follows
            // counts it).
            return Some(ReceivedPayload::default());
        }
        let proxy = &mut self.writers[i];
        if let ChannelState::Closed = proxy.channel {
            proxy.channel = ChannelState::Unavailable(now);
        }
        if let ChannelState::Unavailable(since) = proxy.channel {
            if now >= since {
                let opener = self.config.channels.as_ref();
                proxy.channel = match opener.and_then(|o| o.open(writer)) {
                    Some(source) => ChannelState::Open(source),
                    None => ChannelState::Unavailable(now.after(CHANNEL_RETRY)),
                };
            }
        }
        let got = match &mut proxy.channel {
            ChannelState::Open(source) => source.take(at.chunk),
            _ => None,
        };
        // A chunk of another length is not the one announced: the DATA is not trusted.
        let got = got.filter(|b| b.len() as u64 == u64::from(at.len));
        if got.is_none() {
            self.stats.channel_missed += 1;
        }
        got
    }

    /// A reader with GUID `guid`.
    pub fn new(guid: Guid, config: ReaderConfig) -> Self {
        Self {
            guid,
            config,
            touched: false,
            next_ack: None,
            writers: Vec::new(),
            delivered: VecDeque::new(),
            transmits: VecDeque::new(),
            held: Held::default(),
            stats: ReaderStats::default(),
            room: None,
            spare: ReceivePool::with_limit(RECEIVE_KEPT_BYTES),
            resume_points: VecDeque::new(),
        }
    }

    /// Bounds the changes from reliable writers delivered from now on to `room` (`None`: no
    /// bound), the flow control of a reliable KEEP_ALL reader whose cache is full: a change
    /// without room stays held, unacknowledged, so its writer keeps it (and a KEEP_ALL
    /// writer blocks) until the application takes samples and the room grows. Then what was
    /// held is delivered and an ACKNACK is due at once. Best-effort changes are never held.
    pub fn set_room(&mut self, now: Timestamp, room: Option<usize>) {
        let grew = match (self.room, room) {
            (Some(old), Some(new)) => new > old,
            (Some(_), None) => true,
            (None, _) => false,
        };
        self.room = room;
        if grew {
            for i in 0..self.writers.len() {
                let before = self.writers[i].next_expected;
                self.deliver(i);
                if self.writers[i].next_expected != before {
                    self.ack_due_by(i, now);
                }
            }
        }
    }

    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.guid
    }

    /// What the reader counted.
    pub fn stats(&self) -> ReaderStats {
        self.stats
    }

    /// Bytes held under reassembly, overheads included (at most `max_reassembly_bytes`).
    pub fn reassembly_bytes(&self) -> usize {
        self.held.bytes
    }

    /// Fragments held under reassembly (at most `max_reassembly_fragments`).
    pub fn reassembly_fragments(&self) -> usize {
        self.held.fragments
    }

    /// The configuration.
    pub fn config(&self) -> &ReaderConfig {
        &self.config
    }

    /// True when this stateless reader takes DATA from `writer_id`: any participant's writer
    /// with this reader's entity key (its counterpart: the SPDP writer for the SPDP reader).
    /// Routing by writer id keeps user data sent to ENTITYID_UNKNOWN out of the SPDP reader.
    pub fn accepts_unmatched(&self, writer_id: EntityId) -> bool {
        self.config.stateless
            && writer_id.key() == self.guid.entity_id.key()
            && matches!(writer_id.kind(), 0x02 | 0x03 | 0xc2 | 0xc3)
    }

    /// True when `writer` is matched.
    pub fn is_matched(&self, writer: Guid) -> bool {
        self.writers.iter().any(|w| w.remote.guid == writer)
    }

    /// The writers matched.
    pub fn matched_writers(&self) -> impl Iterator<Item = &RemoteWriter> {
        self.writers.iter().map(|w| &w.remote)
    }

    /// Matches a remote writer. A reliable reader sends a pre-emptive ACKNACK so the writer
    /// tells it what it has.
    pub fn match_writer(&mut self, now: Timestamp, remote: RemoteWriter) {
        self.unmatch_writer(remote.guid);
        let reliable = self.config.reliable && remote.reliable;
        let resume_from = self
            .resume_points
            .iter()
            .position(|(guid, _)| *guid == remote.guid)
            .and_then(|k| self.resume_points.remove(k))
            .map(|(_, next)| next);
        self.writers.push(WriterProxy {
            remote,
            next_expected: resume_from.unwrap_or(1),
            resumed: resume_from.is_some(),
            highest_announced: 0,
            ahead: BTreeMap::new(),
            reassembly: BTreeMap::new(),
            last_heartbeat: None,
            last_heartbeat_frag: None,
            ack_due: None,
            acknack_count: 0,
            nack_frag_count: 0,
            repairing: false,
            heard: now,
            asserted: now,
            channel: ChannelState::Closed,
        });
        if reliable {
            let i = self.writers.len() - 1;
            self.ack_due_by(i, now);
            self.handle_timeout(now);
        }
    }

    /// When anything last came from matched writer `writer`, and when it last asserted
    /// its liveliness (data, or a HEARTBEAT with the liveliness flag); the match counts as
    /// both.
    pub fn writer_heard(&self, writer: Guid) -> Option<(Timestamp, Timestamp)> {
        self.writers
            .iter()
            .find(|w| w.remote.guid == writer)
            .map(|w| (w.heard, w.asserted))
    }

    /// Forgets a remote writer.
    pub fn unmatch_writer(&mut self, guid: Guid) {
        if let Some(i) = self.writers.iter().position(|w| w.remote.guid == guid) {
            let proxy = self.writers.swap_remove(i);
            for r in proxy.reassembly.values() {
                self.held.release(r);
            }
            if self.config.resume_rematched && proxy.next_expected > 1 {
                if self.resume_points.len() == RESUME_POINTS {
                    self.resume_points.pop_front();
                }
                self.resume_points.push_back((guid, proxy.next_expected));
            }
        }
    }

    fn proxy_index(&mut self, writer: Guid) -> Option<usize> {
        let found = self.writers.iter().position(|w| w.remote.guid == writer);
        if found.is_none() {
            self.stats.unknown_writer += 1;
        }
        found
    }

    fn reliable_with(&self, i: usize) -> bool {
        self.config.reliable && self.writers[i].remote.reliable
    }

    /// Handles a DATA from participant `source` (of vendor `vendor`), carried by a
    /// datagram from `origin`, with the INFO_TS timestamp in force.
    pub fn handle_data(
        &mut self,
        now: Timestamp,
        (source, vendor): (GuidPrefix, VendorId),
        origin: Locator,
        timestamp: Option<Time>,
        data: &Data<'_>,
    ) {
        let writer = Guid::new(source, data.writer_id);
        // A DATA of a FerroDDS writer of this host may say its sample lies in the writer's
        // sample channel instead of carrying it.
        let channel = (matches!(data.payload, DataPayload::None) && vendor == VendorId::FERRODDS)
            .then(|| channel_ref(data.inline_qos.as_ref()))
            .flatten();
        let (kind, key_hash, more) = read_inline_qos(
            data.inline_qos.as_ref(),
            channel.is_none() && !matches!(data.payload, DataPayload::Data(_)),
        );
        // The list is walked again only when it holds more than a key hash and a status
        // (a coherent set, a relayed change), or for a DATA without payload (an end marker).
        let no_payload = matches!(data.payload, DataPayload::None) && channel.is_none();
        let coherence = (more || no_payload)
            .then(|| Coherence::read(data.inline_qos.as_ref(), no_payload, vendor))
            .flatten();
        // An end marker is no dispose, whatever its missing payload made of it above.
        let kind = if coherence.as_ref().is_some_and(|c| c.end) {
            ChangeKind::Alive
        } else {
            kind
        };
        let change = ReceivedChange {
            writer,
            sequence_number: data.writer_sn,
            kind,
            key_hash,
            timestamp,
            payload: match channel {
                Some(at) => match self.take_from_channel(now, writer, data.writer_sn.0, at) {
                    Some(payload) => payload,
                    None => return,
                },
                None => self.received_payload(data.payload.bytes().unwrap_or_default()),
            },
            origin,
            coherence,
            original: more
                .then(|| OriginalWriterInfo::find(data.inline_qos.as_ref()))
                .flatten(),
        };
        if self.config.stateless {
            // A stateless reader keeps no per-writer state: every DATA is delivered.
            self.stats.delivered += 1;
            self.delivered.push_back(change);
            return;
        }
        let Some(i) = self.proxy_index(writer) else {
            return;
        };
        self.writers[i].stamp(now, true);
        self.accept(now, i, data.writer_sn.0, Slot::Change(change));
    }

    /// Handles a DATA_FRAG from participant `source`, carried by a datagram from `origin`.
    pub fn handle_data_frag(
        &mut self,
        now: Timestamp,
        source: GuidPrefix,
        origin: Locator,
        timestamp: Option<Time>,
        frag: &DataFrag<'_>,
        vendor: VendorId,
    ) {
        let writer = Guid::new(source, frag.writer_id);
        let Some(i) = self.proxy_index(writer) else {
            return;
        };
        self.writers[i].stamp(now, true);
        let seq = frag.writer_sn.0;
        if self.is_settled(i, seq) {
            self.stats.duplicates += 1;
            return;
        }
        if usize::try_from(frag.sample_size).map_or(true, |n| n > self.config.max_sample_size) {
            self.stats.oversized += 1;
            return;
        }
        if frag.fragment_size == 0 {
            // The wire layer rejects it; checked again because the division below needs it.
            self.stats.bad_fragments += 1;
            return;
        }
        let total = frag.sample_size.div_ceil(u32::from(frag.fragment_size));
        let max_bytes = self.config.max_reassembly_bytes;
        let max_fragments = self.config.max_reassembly_fragments;
        let proxy = &mut self.writers[i];
        let entry = match proxy.reassembly.entry(seq) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                // A new sample costs its bookkeeping before any fragment is stored.
                if self.held.bytes.saturating_add(SAMPLE_OVERHEAD) > max_bytes
                    || self.held.fragments >= max_fragments
                {
                    self.stats.reassembly_full += 1;
                    return;
                }
                self.held.bytes += SAMPLE_OVERHEAD;
                new.insert(Reassembly {
                    sample_size: frag.sample_size,
                    fragment_size: frag.fragment_size,
                    total,
                    fragments: Fragments::new(frag.sample_size as usize),
                    bytes: SAMPLE_OVERHEAD,
                    kind: ChangeKind::Alive,
                    key_hash: None,
                    timestamp,
                    coherence: None,
                    original: None,
                })
            }
        };
        if entry.sample_size != frag.sample_size || entry.fragment_size != frag.fragment_size {
            self.stats.bad_fragments += 1;
            return;
        }
        if frag.inline_qos.is_some() {
            let (kind, key_hash, more) = read_inline_qos(frag.inline_qos.as_ref(), frag.key);
            entry.kind = kind;
            entry.key_hash = key_hash;
            if more {
                entry.coherence = Coherence::read(frag.inline_qos.as_ref(), false, vendor);
                entry.original = OriginalWriterInfo::find(frag.inline_qos.as_ref());
            }
        }
        // The wire layer checked that the fragments fit the sample; split them up.
        let size = usize::from(frag.fragment_size);
        let mut full = false;
        for (k, chunk) in frag.fragments.chunks(size).enumerate() {
            let Some(n) = u32::try_from(k)
                .ok()
                .and_then(|k| frag.fragment_starting_num.checked_add(k))
            else {
                break;
            };
            let expected = if n == total {
                entry.sample_size as usize - (total as usize - 1) * size
            } else {
                size
            };
            if n > total || chunk.len() != expected || entry.fragments.contains(n) {
                continue;
            }
            let cost = chunk.len() + FRAGMENT_OVERHEAD;
            if self.held.bytes.saturating_add(cost) > max_bytes
                || self.held.fragments >= max_fragments
            {
                full = true;
                break;
            }
            self.held.bytes += cost;
            self.held.fragments += 1;
            entry.bytes += cost;
            entry.fragments.insert(n, chunk);
        }
        if full {
            self.stats.reassembly_full += 1;
        }
        if entry.fragments.is_empty() {
            // Nothing stored: keep no empty entry, or a writer could grow the table one
            // sequence number at a time once the limits are reached.
            if let Some(r) = proxy.reassembly.remove(&seq) {
                self.held.release(&r);
            }
            return;
        }
        if entry.fragments.len() as u32 == entry.total {
            let Some(done) = proxy.reassembly.remove(&seq) else {
                return;
            };
            self.held.release(&done);
            // Every fragment came, so all are in order in the one buffer.
            let payload = done.fragments.contiguous.into();
            let change = ReceivedChange {
                writer,
                sequence_number: frag.writer_sn,
                kind: done.kind,
                key_hash: done.key_hash,
                timestamp: done.timestamp,
                payload,
                origin,
                coherence: done.coherence,
                original: done.original,
            };
            self.accept(now, i, seq, Slot::Change(change));
        }
    }

    /// Handles a GAP: the listed changes will never come.
    pub fn handle_gap(&mut self, now: Timestamp, source: GuidPrefix, gap: &Gap) {
        let writer = Guid::new(source, gap.writer_id);
        let Some(i) = self.proxy_index(writer) else {
            return;
        };
        self.writers[i].stamp(now, false);
        let end = gap.gap_list.base().0;
        let next = self.writers[i].next_expected;
        if gap.gap_start.0 > next && self.reliable_with(i) {
            // A change before the range is still to come (its resend may arrive after this
            // GAP): the range cannot move next_expected past it, so its numbers wait in
            // `ahead` as irrelevant, as many as `ahead` has room for. Those that do not fit
            // are asked for again, and the writer answers with another GAP.
            let room = self
                .config
                .max_out_of_order
                .saturating_sub(self.writers[i].ahead.len());
            let stop = end.min(gap.gap_start.0.saturating_add(room as i64));
            let mut lost = 0u64;
            for seq in gap.gap_start.0..stop {
                if !self.is_settled(i, seq) {
                    lost += 1;
                }
                self.accept(now, i, seq, Slot::Irrelevant);
            }
            self.stats.lost = self.stats.lost.saturating_add(lost);
        } else {
            let from = gap.gap_start.0.max(next);
            // Bounded: a GAP may cover a huge range; what lies below next_expected needs
            // nothing, and a range start..end is applied by moving next_expected, not
            // element by element.
            if from < end {
                self.mark_irrelevant_range(i, from, end);
            }
        }
        for seq in gap.gap_list.iter() {
            self.accept(now, i, seq.0, Slot::Irrelevant);
        }
        self.deliver(i);
        self.acknowledge_repair(now, i);
    }

    /// Handles a HEARTBEAT: learns what the writer has, and schedules an ACKNACK when it
    /// must answer (final flag clear) or has something to ask for.
    pub fn handle_heartbeat(&mut self, now: Timestamp, source: GuidPrefix, hb: &Heartbeat) {
        let writer = Guid::new(source, hb.writer_id);
        let Some(i) = self.proxy_index(writer) else {
            return;
        };
        self.writers[i].stamp(now, hb.liveliness_flag);
        if !self.reliable_with(i) {
            return;
        }
        let proxy = &mut self.writers[i];
        if proxy.last_heartbeat.is_some_and(|c| hb.count <= c) {
            return;
        }
        proxy.last_heartbeat = Some(hb.count);
        if std::mem::take(&mut proxy.resumed) && hb.last_sn.0 < proxy.next_expected - 1 {
            // Numbers below those delivered before: not the writer the reader remembered
            // but one that started over under the same GUID (a vendor that keeps GUIDs
            // across restarts). Everything it has is new.
            proxy.next_expected = 1;
            proxy.ahead.clear();
            proxy.highest_announced = 0;
        }
        proxy.highest_announced = proxy.highest_announced.max(hb.last_sn.0);
        // The writer no longer has what precedes `first`.
        if hb.first_sn.0 > proxy.next_expected {
            let end = hb.first_sn.0;
            let from = proxy.next_expected;
            self.mark_irrelevant_range(i, from, end);
            self.deliver(i);
            self.acknowledge_repair(now, i);
        }
        let proxy = &mut self.writers[i];
        let missing = proxy.next_expected <= proxy.highest_announced;
        if !hb.final_flag {
            let due = now.after(self.config.heartbeat_response_delay);
            self.ack_due_by(i, due);
        } else if missing {
            let delay = self
                .config
                .nack_delay
                .max(self.config.heartbeat_response_delay);
            self.ack_due_by(i, now.after(delay));
        }
        // Not answered here: the driver handles what is due once the whole datagram is
        // processed, so that the HEARTBEATs of one datagram (a batching writer asks every
        // 16 samples, a score of times in a full datagram) draw one ACKNACK, not a score.
    }

    /// Handles a HEARTBEAT_FRAG: the writer has fragments up to `last_fragment_num`.
    pub fn handle_heartbeat_frag(
        &mut self,
        now: Timestamp,
        source: GuidPrefix,
        hb: &HeartbeatFrag,
    ) {
        let writer = Guid::new(source, hb.writer_id);
        let Some(i) = self.proxy_index(writer) else {
            return;
        };
        self.writers[i].stamp(now, false);
        let proxy = &mut self.writers[i];
        if proxy.last_heartbeat_frag.is_some_and(|c| hb.count <= c) {
            return;
        }
        proxy.last_heartbeat_frag = Some(hb.count);
        if proxy.reassembly.contains_key(&hb.writer_sn.0) {
            self.ack_due_by(i, now);
        }
        // Answered once the whole datagram is in, as a HEARTBEAT is.
    }

    /// Sends the ACKNACKs and NACK_FRAGs that are due.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.next_ack.is_none_or(|t| t > now) {
            return;
        }
        let mut next = None;
        for i in 0..self.writers.len() {
            match self.writers[i].ack_due {
                Some(due) if due <= now => {
                    self.writers[i].ack_due = None;
                    self.send_acknack(i);
                }
                later => next = earliest(next, later),
            }
        }
        self.next_ack = next;
    }

    /// When [`Reader::handle_timeout`] next has work (perhaps none, at that time: see
    /// `next_ack`).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.next_ack
    }

    /// Writer proxy `i` owes an ACKNACK by `at`.
    fn ack_due_by(&mut self, i: usize, at: Timestamp) {
        let proxy = &mut self.writers[i];
        proxy.ack_due = earliest(proxy.ack_due, Some(at));
        self.next_ack = earliest(self.next_ack, Some(at));
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next change, in order.
    pub fn poll_change(&mut self) -> Option<ReceivedChange> {
        self.delivered.pop_front()
    }

    /// True when a delivered change waits for [`Reader::poll_change`].
    pub fn has_changes(&self) -> bool {
        !self.delivered.is_empty()
    }

    fn is_settled(&self, i: usize, seq: i64) -> bool {
        let proxy = &self.writers[i];
        if self.reliable_with(i) {
            seq < proxy.next_expected || proxy.ahead.contains_key(&seq)
        } else {
            seq < proxy.next_expected
        }
    }

    fn accept(&mut self, now: Timestamp, i: usize, seq: i64, slot: Slot) {
        // Nothing can follow i64::MAX (the next expected number would overflow): no writer
        // gets there honestly, so a change claiming it is dropped.
        if seq < 1 || seq == i64::MAX {
            return;
        }
        if self.is_settled(i, seq) {
            if matches!(slot, Slot::Change(_)) {
                if self.reliable_with(i) {
                    self.stats.duplicates += 1;
                } else {
                    self.stats.out_of_order += 1;
                }
            }
            return;
        }
        let reliable = self.reliable_with(i);
        let proxy = &mut self.writers[i];
        // A change past where the reader stood: the writer it remembered goes on (only a
        // first HEARTBEAT with nothing new may say it started over).
        proxy.resumed = false;
        if let Some(r) = proxy.reassembly.remove(&seq) {
            self.held.release(&r);
        }
        if !reliable {
            // Best effort: deliver now, and everything older is history.
            proxy.next_expected = seq + 1;
            let stale: Vec<i64> = proxy.reassembly.range(..seq).map(|(&s, _)| s).collect();
            for s in stale {
                if let Some(r) = proxy.reassembly.remove(&s) {
                    self.held.release(&r);
                }
            }
            if let Slot::Change(change) = slot {
                self.stats.delivered += 1;
                self.delivered.push_back(change);
            }
            return;
        }
        if proxy.ahead.len() >= self.config.max_out_of_order && seq != proxy.next_expected {
            // Full: it will be asked for again.
            if matches!(slot, Slot::Change(_)) {
                self.stats.out_of_order_dropped += 1;
            }
            return;
        }
        proxy.highest_announced = proxy.highest_announced.max(seq);
        if seq == proxy.next_expected && self.room != Some(0) {
            // In order, the usual case: straight to the delivered queue. Going through
            // `ahead` (a B-tree insert and remove of the change) was a tenth of a 64-byte
            // sample's receive.
            proxy.next_expected += 1;
            if let Slot::Change(change) = slot {
                self.stats.delivered += 1;
                self.delivered.push_back(change);
                if let Some(room) = &mut self.room {
                    *room -= 1;
                }
            }
        } else {
            proxy.ahead.insert(seq, slot);
        }
        self.deliver(i);
        self.acknowledge_repair(now, i);
    }

    /// After changes came in: when they were the last of those the reader asked for (it now
    /// holds everything the writer announced), an ACKNACK says so without waiting for a
    /// HEARTBEAT. A writer blocked on its history until its readers acknowledge (Cyclone
    /// DDS's throttled writer, whose HEARTBEATs back off to seconds apart when it writes
    /// nothing) otherwise learns of the repair a HEARTBEAT period later, and under loss
    /// several periods later: at 30 % loss a Cyclone writer once stayed blocked for its
    /// whole 30 s `max_blocking_time`.
    fn acknowledge_repair(&mut self, now: Timestamp, i: usize) {
        let proxy = &mut self.writers[i];
        if proxy.repairing && proxy.next_expected > proxy.highest_announced {
            proxy.repairing = false;
            let due = now.after(self.config.heartbeat_response_delay);
            self.ack_due_by(i, due);
        }
    }

    /// Declares `from..end` irrelevant (they were never received and never will be).
    fn mark_irrelevant_range(&mut self, i: usize, from: i64, end: i64) {
        let from = from.max(self.writers[i].next_expected);
        if end <= from {
            return;
        }
        let proxy = &mut self.writers[i];
        // Whatever arrived in the range is still delivered, in order, before the jump.
        let kept: Vec<i64> = proxy.ahead.range(from..end).map(|(&s, _)| s).collect();
        let mut lost = (end - from) as u64;
        for seq in kept {
            let reliable = self.config.reliable && self.writers[i].remote.reliable;
            let proxy = &mut self.writers[i];
            if let Some(slot) = proxy.ahead.remove(&seq) {
                if let Slot::Change(change) = slot {
                    lost -= 1;
                    if reliable {
                        self.stats.delivered += 1;
                        self.delivered.push_back(change);
                    }
                } else {
                    lost -= 1;
                }
            }
        }
        let proxy = &mut self.writers[i];
        let stale: Vec<i64> = proxy.reassembly.range(from..end).map(|(&s, _)| s).collect();
        for s in stale {
            if let Some(r) = proxy.reassembly.remove(&s) {
                self.held.release(&r);
            }
        }
        // Saturating: a writer can declare up to 2^63 changes lost, again after each match.
        self.stats.lost = self.stats.lost.saturating_add(lost);
        self.writers[i].next_expected = end;
    }

    /// Delivers the run of changes starting at `next_expected`.
    fn deliver(&mut self, i: usize) {
        let proxy = &mut self.writers[i];
        loop {
            let next = proxy
                .ahead
                .first_key_value()
                .map(|(&seq, slot)| (seq, slot));
            match next {
                Some((seq, Slot::Change(_))) if seq == proxy.next_expected => {
                    if self.room == Some(0) {
                        // Held, unacknowledged, until the cache has room.
                        break;
                    }
                }
                Some((seq, Slot::Irrelevant)) if seq == proxy.next_expected => {}
                _ => break,
            }
            let Some(slot) = proxy.ahead.remove(&proxy.next_expected) else {
                break;
            };
            proxy.next_expected += 1;
            if let Slot::Change(change) = slot {
                self.stats.delivered += 1;
                self.delivered.push_back(change);
                if let Some(room) = &mut self.room {
                    *room -= 1;
                }
            }
        }
    }

    fn send_acknack(&mut self, i: usize) {
        let proxy = &mut self.writers[i];
        let base = proxy.next_expected;
        let mut set = SequenceNumberSet::new(SequenceNumber(base));
        let mut nack_frags = Vec::new();
        let last = proxy
            .highest_announced
            .min(base.saturating_add(i64::from(MAX_SET_BITS) - 1));
        // The changes held and the samples being reassembled in the range, walked beside it
        // (a lookup of each of up to 256 numbers in a map of thousands held ahead of a gap
        // was a sixth of a slow subscriber's time).
        // (`last` may be below `base`, where a map's range would panic.)
        let within = base..=last.max(base);
        let mut held = proxy
            .ahead
            .range(within.clone())
            .map(|(&s, _)| s)
            .peekable();
        let mut partial = proxy.reassembly.range(within).peekable();
        for seq in base..=last {
            // (A number both held and in reassembly, which should not be, is passed by.)
            while partial.next_if(|&(&s, _)| s < seq).is_some() {}
            if held.next_if_eq(&seq).is_some() {
                continue;
            }
            match partial.next_if(|&(&s, _)| s == seq).map(|(_, r)| r) {
                Some(r) => {
                    let first_missing = (1..=r.total)
                        .find(|&n| !r.fragments.contains(n))
                        .unwrap_or(1);
                    let mut frags = FragmentNumberSet::new(first_missing);
                    for n in
                        first_missing..r.total.saturating_add(1).min(first_missing + MAX_SET_BITS)
                    {
                        if !r.fragments.contains(n) {
                            frags.insert(n);
                        }
                    }
                    nack_frags.push((seq, frags));
                }
                None => {
                    set.insert(SequenceNumber(seq));
                }
            }
        }
        proxy.acknack_count = proxy.acknack_count.wrapping_add(1);
        // Before the writer's first HEARTBEAT (the preemptive ACKNACK sent on matching), ask
        // for an answer: a writer whose first HEARTBEAT reached us before we knew it (RTI
        // Connext's SEDP writers, whose next one comes 3 s later) then says at once what it
        // has, instead of taking "no response required" at its word.
        let nothing_to_ask = set.is_empty() && nack_frags.is_empty();
        proxy.repairing = !nothing_to_ask;
        let acknack = AckNack {
            reader_id: self.guid.entity_id,
            writer_id: proxy.remote.guid.entity_id,
            reader_sn_state: set,
            count: proxy.acknack_count,
            final_flag: nothing_to_ask && proxy.last_heartbeat.is_some(),
        };
        let mut subs = vec![acknack.into()];
        for (seq, frags) in nack_frags {
            proxy.nack_frag_count = proxy.nack_frag_count.wrapping_add(1);
            self.stats.nack_frags += 1;
            subs.push(
                NackFrag {
                    reader_id: self.guid.entity_id,
                    writer_id: proxy.remote.guid.entity_id,
                    writer_sn: SequenceNumber(seq),
                    fragment_number_state: frags,
                    count: proxy.nack_frag_count,
                }
                .into(),
            );
        }
        self.stats.acknacks += 1;
        let destination = proxy.remote.guid.prefix;
        if let Some(t) = build(
            self.guid.prefix,
            Some(destination),
            &subs,
            &proxy.remote.locators,
        ) {
            self.transmits.push_back(t);
        }
    }
}

/// The change kind and key hash inline QoS carry, and whether it carries anything else
/// (coherence, an original writer). Without PID_STATUS_INFO, a DATA with a key payload (K
/// flag) is a dispose (the pre-2.3 convention some peers still follow).
/// Where a DATA's inline QoS says its sample lies in the writer's sample channel.
fn channel_ref(qos: Option<&crate::wire::ParameterList<'_>>) -> Option<ChannelRef> {
    qos?.iter()
        .find(|p| p.id == pid_in_channel())
        .and_then(|p| ChannelRef::from_bytes(p.value))
}

fn read_inline_qos(
    qos: Option<&crate::wire::ParameterList<'_>>,
    key_only: bool,
) -> (ChangeKind, Option<[u8; 16]>, bool) {
    let mut more = false;
    let mut kind = if key_only {
        ChangeKind::Disposed
    } else {
        ChangeKind::Alive
    };
    let mut key_hash = None;
    if let Some(qos) = qos {
        for p in qos.iter() {
            match p.id {
                pid::KEY_HASH => key_hash = <[u8; 16]>::try_from(p.value).ok(),
                pid::STATUS_INFO => {
                    if let Ok(b) = <[u8; 4]>::try_from(p.value) {
                        kind = ChangeKind::from_status_info(u32::from_be_bytes(b));
                    }
                }
                _ => more = true,
            }
        }
    }
    (kind, key_hash, more)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Message, Submessage};

    /// The ACKNACKs in what the reader wants sent: final flag, base, missing.
    fn acknacks(r: &mut Reader) -> Vec<(bool, i64, Vec<SequenceNumber>)> {
        let mut out = Vec::new();
        while let Some(t) = r.poll_transmit() {
            let (_, iter) = Message::parse(&t.payload).unwrap();
            for sm in iter.flatten() {
                if let Submessage::AckNack(a) = sm {
                    let state = &a.reader_sn_state;
                    out.push((a.final_flag, state.base().0, state.iter().collect()));
                }
            }
        }
        out
    }

    /// A HEARTBEAT from `writer` to `r` that asks for an answer.
    fn heartbeat(r: &Reader, writer: Guid, first: i64, last: i64) -> Heartbeat {
        Heartbeat {
            reader_id: r.guid().entity_id,
            writer_id: writer.entity_id,
            first_sn: SequenceNumber(first),
            last_sn: SequenceNumber(last),
            count: 1,
            final_flag: false,
            liveliness_flag: false,
        }
    }

    #[test]
    fn the_preemptive_acknack_asks_for_an_answer_and_later_ones_need_none() {
        let (mut r, writer, _) = matched_reliable_reader();
        // Sent on matching, before any HEARTBEAT: the final flag is clear, so that the writer
        // answers with a HEARTBEAT at once (RTI Connext waits 3 s for its next one otherwise).
        assert_eq!(acknacks(&mut r), [(false, 1, vec![])]);
        // A HEARTBEAT that asks for an answer, with nothing to offer: the answer needs none.
        let hb = heartbeat(&r, writer, 1, 0);
        r.handle_heartbeat(Timestamp::ZERO, writer.prefix, &hb);
        r.handle_timeout(Timestamp(1_000_000_000));
        assert_eq!(acknacks(&mut r), [(true, 1, vec![])]);
    }

    /// A reliable reader matched with one reliable writer on loopback.
    fn matched_reliable_reader() -> (Reader, Guid, Locator) {
        let mut r = Reader::new(
            Guid::new(GuidPrefix([1; 12]), EntityId::SEDP_PUBLICATIONS_READER),
            ReaderConfig {
                reliable: true,
                resume_rematched: true,
                ..ReaderConfig::default()
            },
        );
        let writer = Guid::new(GuidPrefix([2; 12]), EntityId::SEDP_PUBLICATIONS_WRITER);
        let loopback = Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 7410);
        r.match_writer(
            Timestamp::ZERO,
            RemoteWriter {
                guid: writer,
                locators: vec![loopback],
                reliable: true,
            },
        );
        (r, writer, loopback)
    }

    /// A small sample numbered `sn` from `writer` to `r`.
    fn send_data(r: &mut Reader, writer: Guid, from: Locator, sn: i64) {
        let payload = [0u8, 1, 0, 0, 9, 9, 9, 9];
        let data = Data {
            extra_flags: 0,
            reader_id: r.guid().entity_id,
            writer_id: writer.entity_id,
            writer_sn: SequenceNumber(sn),
            inline_qos: None,
            payload: DataPayload::Data(&payload),
            non_standard_payload: false,
        };
        r.handle_data(
            Timestamp::ZERO,
            (writer.prefix, VendorId::FERRODDS),
            from,
            None,
            &data,
        );
    }

    /// A GAP for 5..7 that overtakes the resend of 4: 4 is still taken in and delivered,
    /// then 7 (a range used to move the reader past 4, which was then dropped as old).
    #[test]
    fn a_gap_past_a_missing_change_waits_for_it() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        for sn in 1..=3 {
            send_data(&mut r, writer, loopback, sn);
        }
        let gap = Gap {
            reader_id: r.guid().entity_id,
            writer_id: writer.entity_id,
            gap_start: SequenceNumber(5),
            gap_list: SequenceNumberSet::new(SequenceNumber(7)),
        };
        r.handle_gap(Timestamp::ZERO, writer.prefix, &gap);
        send_data(&mut r, writer, loopback, 7);
        send_data(&mut r, writer, loopback, 4);
        let delivered: Vec<i64> = std::iter::from_fn(|| r.poll_change())
            .map(|c| c.sequence_number.0)
            .collect();
        assert_eq!(delivered, [1, 2, 3, 4, 7]);
        assert_eq!(r.stats().lost, 2);
    }

    /// While a change is missing, the final HEARTBEATs piggy-backed on the samples that
    /// follow draw one ACKNACK a `nack_delay`; a HEARTBEAT that asks for an answer gets
    /// it at once.
    #[test]
    fn final_heartbeats_over_a_gap_draw_one_acknack_a_nack_delay() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        let _ = acknacks(&mut r);
        let us = |n: u64| Timestamp(n * 1_000);
        send_data(&mut r, writer, loopback, 1);
        for (count, sn) in (1..).zip(3..=12) {
            send_data(&mut r, writer, loopback, sn);
            let mut hb = heartbeat(&r, writer, 1, sn);
            (hb.count, hb.final_flag) = (count, true);
            let now = us(100 * count as u64);
            r.handle_heartbeat(now, writer.prefix, &hb);
            r.handle_timeout(now);
        }
        // Ten HEARTBEATs over 1 ms, the first at 0.1 ms: one ACKNACK, due at 1.1 ms.
        assert_eq!(acknacks(&mut r), []);
        r.handle_timeout(us(1_100));
        assert_eq!(acknacks(&mut r), [(false, 2, vec![SequenceNumber(2)])]);
        let mut hb = heartbeat(&r, writer, 1, 12);
        hb.count = 20;
        r.handle_heartbeat(us(1_200), writer.prefix, &hb);
        r.handle_timeout(us(1_200));
        assert_eq!(acknacks(&mut r), [(false, 2, vec![SequenceNumber(2)])]);
    }

    /// Once the changes an ACKNACK asked for have all come, the reader acknowledges them
    /// without waiting for the writer's next HEARTBEAT; changes that come in order, and a
    /// resend that leaves a change still missing, draw none.
    #[test]
    fn the_last_change_of_a_repair_draws_an_acknack() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        let _ = acknacks(&mut r);
        let later = Timestamp(1_000_000_000);
        for sn in [1, 2, 4, 6] {
            send_data(&mut r, writer, loopback, sn);
        }
        r.handle_timeout(later);
        assert_eq!(
            acknacks(&mut r),
            [],
            "nothing asked for yet, nothing to say"
        );
        let hb = heartbeat(&r, writer, 1, 6);
        r.handle_heartbeat(later, writer.prefix, &hb);
        r.handle_timeout(later);
        let missing = vec![SequenceNumber(3), SequenceNumber(5)];
        assert_eq!(acknacks(&mut r), [(false, 3, missing)]);
        send_data(&mut r, writer, loopback, 3);
        r.handle_timeout(later);
        assert_eq!(acknacks(&mut r), [], "5 is still missing");
        send_data(&mut r, writer, loopback, 5);
        r.handle_timeout(later);
        assert_eq!(acknacks(&mut r), [(true, 7, vec![])]);
        send_data(&mut r, writer, loopback, 7);
        r.handle_timeout(later);
        assert_eq!(acknacks(&mut r), [], "the repair was acknowledged once");
    }

    /// Changes held ahead of a gap and a sample half reassembled: the ACKNACK asks for the
    /// missing changes only, and a NACK_FRAG for the missing fragments.
    #[test]
    fn an_acknack_asks_for_what_is_neither_held_nor_being_reassembled() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        let _ = acknacks(&mut r);
        for sn in [1, 3, 4, 7, 9] {
            send_data(&mut r, writer, loopback, sn);
        }
        let fragments = [5u8; 100];
        let frag = DataFrag {
            extra_flags: 0,
            reader_id: r.guid().entity_id,
            writer_id: writer.entity_id,
            writer_sn: SequenceNumber(6),
            fragment_starting_num: 2,
            fragments_in_submessage: 1,
            fragment_size: 100,
            sample_size: 300,
            inline_qos: None,
            key: false,
            non_standard_payload: false,
            fragments: &fragments,
        };
        let vendor = VendorId::FERRODDS;
        r.handle_data_frag(
            Timestamp::ZERO,
            writer.prefix,
            loopback,
            None,
            &frag,
            vendor,
        );
        let hb = heartbeat(&r, writer, 1, 11);
        r.handle_heartbeat(Timestamp::ZERO, writer.prefix, &hb);
        r.handle_timeout(Timestamp(1_000_000_000));
        let mut nack_frags = Vec::new();
        let mut sets = Vec::new();
        while let Some(t) = r.poll_transmit() {
            let (_, iter) = Message::parse(&t.payload).unwrap();
            for sm in iter.flatten() {
                match sm {
                    Submessage::AckNack(a) => {
                        let state = &a.reader_sn_state;
                        sets.push((
                            state.base().0,
                            state.iter().map(|s| s.0).collect::<Vec<_>>(),
                        ));
                    }
                    Submessage::NackFrag(n) => nack_frags.push((
                        n.writer_sn.0,
                        n.fragment_number_state.iter().collect::<Vec<_>>(),
                    )),
                    _ => {}
                }
            }
        }
        assert_eq!(sets, [(2, vec![2, 5, 8, 10, 11])]);
        assert_eq!(nack_frags, [(6, vec![1, 3])]);
    }

    #[test]
    fn without_room_changes_wait_unacknowledged_and_come_in_when_room_grows() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        acknacks(&mut r);
        r.set_room(Timestamp::ZERO, Some(2));
        for sn in 1..=5 {
            send_data(&mut r, writer, loopback, sn);
        }
        let delivered = |r: &mut Reader| {
            std::iter::from_fn(|| r.poll_change())
                .map(|c| c.sequence_number.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(delivered(&mut r), [1, 2], "as many as there is room for");
        // The writer asks: the answer acknowledges only what was delivered, and asks for
        // nothing (the rest is held here, not lost).
        let hb = heartbeat(&r, writer, 1, 5);
        r.handle_heartbeat(Timestamp::ZERO, writer.prefix, &hb);
        r.handle_timeout(Timestamp(1_000_000_000));
        assert_eq!(acknacks(&mut r), [(true, 3, vec![])]);
        // Room for one more, then for the rest: each comes in, acknowledged at once.
        let later = Timestamp(2_000_000_000);
        r.set_room(later, Some(1));
        assert_eq!(delivered(&mut r), [3]);
        r.handle_timeout(later);
        assert_eq!(acknacks(&mut r), [(true, 4, vec![])]);
        r.set_room(later, None);
        assert_eq!(delivered(&mut r), [4, 5]);
        r.handle_timeout(later);
        assert_eq!(acknacks(&mut r), [(true, 6, vec![])]);
    }

    #[test]
    fn fragments_in_any_order_and_repeated_make_the_one_sample() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        // 10 fragments of 100 bytes and a last one of 37.
        let sample: Vec<u8> = (0..1037u32).map(|i| (i * 7 % 251) as u8).collect();
        let reader_id = r.guid().entity_id;
        let frag = |n: u32| DataFrag {
            extra_flags: 0,
            reader_id,
            writer_id: writer.entity_id,
            writer_sn: SequenceNumber(1),
            fragment_starting_num: n,
            fragments_in_submessage: 1,
            fragment_size: 100,
            sample_size: 1037,
            inline_qos: None,
            key: false,
            non_standard_payload: false,
            fragments: &sample[(n as usize - 1) * 100..(n as usize * 100).min(1037)],
        };
        // Ahead of a missing first one, then the first, then repeats, then the rest.
        for n in [3, 5, 4, 11, 1, 3, 2, 1, 10, 6, 8, 9, 7] {
            let f = frag(n);
            r.handle_data_frag(
                Timestamp::ZERO,
                writer.prefix,
                loopback,
                None,
                &f,
                VendorId::FERRODDS,
            );
        }
        let got: Vec<ReceivedChange> = std::iter::from_fn(|| r.poll_change()).collect();
        assert_eq!(got.len(), 1);
        assert!(got[0].payload == sample, "the sample, byte for byte");
        assert_eq!(r.reassembly_fragments(), 0, "nothing left held");
    }

    #[test]
    fn a_writer_matched_again_goes_on_where_it_was_and_one_that_started_over_starts_over() {
        let (mut r, writer, loopback) = matched_reliable_reader();
        let send = |r: &mut Reader, sns: std::ops::RangeInclusive<i64>| {
            for sn in sns {
                send_data(r, writer, loopback, sn);
            }
            std::iter::from_fn(|| r.poll_change())
                .map(|c| c.sequence_number.0)
                .collect::<Vec<_>>()
        };
        let remote = RemoteWriter {
            guid: writer,
            locators: vec![loopback],
            reliable: true,
        };
        assert_eq!(send(&mut r, 1..=3), [1, 2, 3]);

        // Lost (its lease ran out) and found again: a TRANSIENT_LOCAL writer resends its
        // history from 1; the reader asks from 4 and delivers only what is new.
        r.unmatch_writer(writer);
        acknacks(&mut r);
        r.match_writer(Timestamp::ZERO, remote.clone());
        assert_eq!(acknacks(&mut r), [(false, 4, vec![])]);
        assert_eq!(send(&mut r, 1..=5), [4, 5]);
        // Its changes came: a HEARTBEAT then claiming fewer (hostile, or reordered) cannot
        // make the reader start over and deliver 1..5 again (found by the fuzzer).
        let hb = heartbeat(&r, writer, 1, 2);
        r.handle_heartbeat(Timestamp::ZERO, writer.prefix, &hb);
        assert_eq!(r.writers[0].next_expected, 6, "the same writer, going on");

        // The same GUID numbering from 1 again (a restarted writer of a vendor that keeps
        // GUIDs): its first HEARTBEAT shows numbers below those delivered, so what it has
        // is new, asked for and delivered.
        r.unmatch_writer(writer);
        r.match_writer(Timestamp::ZERO, remote);
        acknacks(&mut r);
        assert_eq!(
            send(&mut r, 1..=2),
            Vec::<i64>::new(),
            "taken for repeats at first"
        );
        let hb = heartbeat(&r, writer, 1, 2);
        r.handle_heartbeat(Timestamp::ZERO, writer.prefix, &hb);
        r.handle_timeout(Timestamp(1_000_000_000));
        assert_eq!(
            acknacks(&mut r),
            [(false, 1, vec![SequenceNumber(1), SequenceNumber(2)])]
        );
        assert_eq!(send(&mut r, 1..=2), [1, 2]);
    }
}
