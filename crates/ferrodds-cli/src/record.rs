//! `ferrodds record` and `ferrodds replay`: a domain's samples to an MCAP file and back,
//! byte for byte, whatever their types.
//!
//! **What a recording holds** (MCAP, the format of ROS 2 bags, which the `mcap` CLI, its
//! Python reader and Foxglove open; `docs/tools.md` says how to use it):
//!
//! - one *schema* per type: its name is the type's registered name (`KeyedSeq`,
//!   `ShapeType`), its encoding `omgidl`, its data the type written out as IDL
//!   ([`ferrodds::dynamic::to_idl`]: keys, extensibility and all), which Foxglove decodes
//!   `cdr` messages with;
//! - one *channel* per topic: the topic's name, `message_encoding` `cdr` (as ROS 2 bags do),
//!   and metadata (all strings):
//!   - `reliability` (`reliable` or `best-effort`), `durability` (`volatile` or
//!     `transient-local`), `partition` (a JSON array of names; `[]` the default partition)
//!     and `data_representation` (`XCDR1` or `XCDR2`): what the topic's writers offered,
//!     which the recorder read with and replay writes with;
//!   - `ferrodds.type_objects`: the type's XTypes COMPLETE TypeObjects, hex, separated by
//!     commas, the topic's type first and then every type it depends on — each as
//!     TypeLookup carries it (XCDR2, little-endian, no encapsulation header). Replay
//!     rebuilds the exact type from them (`type_object::parse_complete`), whatever the IDL
//!     text says; a channel without them cannot be replayed.
//! - one *message* per sample: the serialized bytes exactly as they arrived, encapsulation
//!   header included; `log_time` the time the recorder took the sample (nanoseconds since
//!   the Unix epoch), `publish_time` its source timestamp (the reception time when the writer
//!   gave none), `sequence` a count per channel.
//!
//! Disposes and unregisters are recorded too, on a second and a third channel of the same
//! topic whose metadata adds `ferrodds.change` = `dispose` or `unregister`: their messages
//! are the key-only samples readers receive (encapsulation header included). Tools that do
//! not know the key will find them undecodable with the full type, which is why they are not
//! on the data channel. One whose writer sent only a key hash (no key-only sample) is not
//! recorded: it could not be replayed.
//!
//! **The recorder** is a participant of its own with a reliable KEEP_ALL reader per topic
//! (best-effort, or volatile, when one of the topic's writers offers no more: a reader asking
//! for more than a writer offers would not match it), in the writers' partitions. Topics are
//! found by polling discovery, also those that appear later; their types come over XTypes
//! TypeLookup (`DomainParticipant::find_topic`). One thread finds topics; the recording thread
//! sleeps until a reader has data and writes what it takes through a buffered file; Ctrl-C
//! (SIGINT) or SIGTERM ends the run and finishes the file (summary and indexes).
//!
//! **Replay** reads the summary first (a file the recorder did not finish is an error, named
//! with the file), creates a writer per topic with the recorded type and QoS, waits briefly
//! for readers, and writes each message's bytes unchanged
//! ([`ferrodds::DynamicWriter::write_serialized_slice`]: copied into a buffer the writer's
//! history let go, so that a replay allocates nothing per sample) at the recorded pace
//! (`log_time`), scaled by `--rate`.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use ferrodds::dynamic::type_object::{
    dependencies, equivalence_hash, parse_complete, type_object, EquivalenceKind,
};
use ferrodds::dynamic::{to_idl, DynamicType};
use ferrodds::qos::{DataRepresentationId, Durability, ReliabilityKind};
use ferrodds::{
    DiscoveredEndpoint, DomainParticipant, DynamicReader, DynamicTopic, DynamicWriter,
    EndpointKind, InstanceState, Qos,
};
use ferrodds_cdr::{EncapsulationHeader, XcdrVersion};
use mcap::records::{op, MessageHeader};
use mcap::sans_io::{
    LinearReadEvent, LinearReader, LinearReaderOptions, SummaryReadEvent, SummaryReader,
};
use serde_json::json;

use crate::tools::Join;

/// Channel metadata: the type's COMPLETE TypeObjects (see the module documentation).
pub(crate) const TYPE_OBJECTS_KEY: &str = "ferrodds.type_objects";
/// Channel metadata: `dispose` or `unregister` on the channels of those changes.
pub(crate) const CHANGE_KEY: &str = "ferrodds.change";

/// Samples taken from a reader per call.
const TAKE_BATCH: usize = 1024;

/// `ferrodds record`.
#[derive(Args, Clone, Debug)]
pub(crate) struct RecordArgs {
    /// The MCAP file to write (replaced if it exists).
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Topics to record [default: every topic with a writer, also those that appear later].
    topics: Vec<String>,
    #[command(flatten)]
    join: Join,
    /// Stop after this many seconds (0: until Ctrl-C).
    #[arg(long, default_value_t = 0.0)]
    duration: f64,
    /// Stop after this many samples, disposes and unregisters included (0: no limit).
    #[arg(long, short = 'n', default_value_t = 0)]
    count: u64,
    /// How long to wait for a topic's type (XTypes TypeLookup) before trying it again later,
    /// in seconds.
    #[arg(long, default_value_t = 5.0)]
    type_timeout: f64,
    /// A summary as one JSON object on stdout at the end.
    #[arg(long)]
    json: bool,
}

/// `ferrodds replay`.
#[derive(Args, Clone, Debug)]
pub(crate) struct ReplayArgs {
    /// The MCAP file `ferrodds record` wrote.
    file: PathBuf,
    #[command(flatten)]
    join: Join,
    /// Speed factor: 2 plays twice as fast as recorded, 0.5 half as fast, 0 as fast as the
    /// writers go.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// Play the file again and again, until Ctrl-C.
    #[arg(long = "loop")]
    repeat: bool,
    /// Publish topic OLD as NEW (repeatable).
    #[arg(long, value_name = "OLD=NEW", value_parser = parse_remap)]
    remap: Vec<(String, String)>,
    /// Before playing, wait until each topic has this many readers (or --wait passed).
    #[arg(long, default_value_t = 1)]
    wait_for_readers: usize,
    /// The longest wait for readers, in seconds.
    #[arg(long, default_value_t = 3.0)]
    wait: f64,
    /// Stamp samples with their recorded source timestamps [default: the time they are
    /// replayed, as a live writer would].
    #[arg(long)]
    original_timestamps: bool,
    /// Read the file and count its messages without sending anything (with --rate 0: the
    /// read rate).
    #[arg(long)]
    dry_run: bool,
    /// A summary as one JSON object on stdout at the end.
    #[arg(long)]
    json: bool,
}

fn parse_remap(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((old, new)) if !old.is_empty() && !new.is_empty() => Ok((old.into(), new.into())),
        _ => Err(format!("{s:?} is not OLD=NEW")),
    }
}

fn seconds(s: f64, what: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s).map_err(|_| format!("{what}: {s} is not a number of seconds"))
}

fn nanos_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Wakes the recording thread when a reader has data, a topic is found, or the run is to
/// end. A notification takes the mutex (uncontended, no system call) and signals the
/// condvar only when the thread sleeps: readers call it for every arrival.
#[derive(Default)]
pub(crate) struct Wakeup {
    state: Mutex<WakeState>,
    condvar: Condvar,
}

#[derive(Default)]
struct WakeState {
    pending: bool,
    sleeping: bool,
}

impl Wakeup {
    pub(crate) fn notify(&self) {
        let mut s = lock(&self.state);
        s.pending = true;
        if s.sleeping {
            self.condvar.notify_one();
        }
    }

    /// Waits up to `timeout` for a notification (returns at once if one came since the
    /// last wait).
    pub(crate) fn wait(&self, timeout: Duration) {
        let mut s = lock(&self.state);
        if !s.pending {
            s.sleeping = true;
            s = self
                .condvar
                .wait_timeout(s, timeout)
                .map_or_else(|p| p.into_inner().0, |(g, _)| g);
            s.sleeping = false;
        }
        s.pending = false;
    }
}

/// Ctrl-C (SIGINT) and SIGTERM set `stop` and wake the recording thread.
pub(crate) fn on_signal(stop: &Arc<AtomicBool>, wake: &Arc<Wakeup>) -> Result<(), String> {
    let (stop, wake) = (Arc::clone(stop), Arc::clone(wake));
    ctrlc::set_handler(move || {
        stop.store(true, Ordering::SeqCst);
        wake.notify();
    })
    .map_err(|e| format!("cannot handle Ctrl-C: {e}"))
}

// ---------------------------------------------------------------------------------------
// The type and QoS of a channel.

/// The type's COMPLETE TypeObjects as channel metadata: hex, comma-separated, the type's
/// own first. `None` for a type without a TypeObject of its own (not a struct or union).
pub(crate) fn type_objects_text(ty: &DynamicType) -> Option<String> {
    let mut parts = vec![hex::encode(type_object(ty, EquivalenceKind::Complete)?)];
    for d in dependencies(ty) {
        if let Some(object) = type_object(&d, EquivalenceKind::Complete) {
            parts.push(hex::encode(object));
        }
    }
    Some(parts.join(","))
}

/// The type [`type_objects_text`] described.
pub(crate) fn type_from_objects(text: &str) -> Result<DynamicType, String> {
    let objects = text
        .split(',')
        .map(|h| hex::decode(h.trim()))
        .collect::<Result<Vec<Vec<u8>>, _>>()
        .map_err(|e| format!("{TYPE_OBJECTS_KEY} is not hex: {e}"))?;
    let Some(first) = objects.first() else {
        return Err(format!("{TYPE_OBJECTS_KEY} is empty"));
    };
    // A type refers to another by its identifier: EK_COMPLETE, then the first 14 bytes of
    // the MD5 of its TypeObject (XTypes 7.3.4.8).
    let library: Vec<(Vec<u8>, &[u8])> = objects
        .iter()
        .map(|o| {
            let mut id = vec![0xf2];
            id.extend_from_slice(&equivalence_hash(o));
            (id, o.as_slice())
        })
        .collect();
    let lookup = |id: &[u8]| {
        library
            .iter()
            .find(|(i, _)| i.as_slice() == id)
            .map(|(_, o)| *o)
    };
    parse_complete(first, &lookup).map_err(|e| format!("{TYPE_OBJECTS_KEY}: {e}"))
}

/// What the recorder reads a topic with, and writes in its channel's metadata.
#[derive(Debug, Clone, PartialEq)]
struct ChannelQos {
    reliable: bool,
    transient_local: bool,
    partitions: Vec<String>,
    representation: XcdrVersion,
}

impl ChannelQos {
    /// The most a reader may ask of every writer in `writers` and still match them all.
    fn of_writers(writers: &[&DiscoveredEndpoint]) -> ChannelQos {
        let all = |f: &dyn Fn(&DiscoveredEndpoint) -> bool| writers.iter().all(|w| f(w));
        let mut partitions: Vec<String> = writers
            .iter()
            .flat_map(|w| w.data.qos.partition.names.iter().cloned())
            .collect();
        // A writer in the default partition next to writers in named ones: "" names it.
        if !partitions.is_empty()
            && writers
                .iter()
                .any(|w| w.data.qos.partition.names.is_empty())
        {
            partitions.push(String::new());
        }
        partitions.sort();
        partitions.dedup();
        ChannelQos {
            reliable: all(&|w| w.data.qos.reliability.kind == ReliabilityKind::Reliable),
            transient_local: all(&|w| w.data.qos.durability >= Durability::TransientLocal),
            partitions,
            representation: writers.first().map_or(XcdrVersion::Xcdr1, |w| {
                version_of(w.data.qos.data_representation.offered())
            }),
        }
    }

    /// Whether a reader with this QoS matches `w` (what is checked here is what
    /// [`ChannelQos::of_writers`] chose from).
    fn matches(&self, w: &DiscoveredEndpoint) -> bool {
        let q = &w.data.qos;
        let in_partition = if q.partition.names.is_empty() {
            self.partitions.is_empty() || self.partitions.iter().any(String::is_empty)
        } else {
            q.partition
                .names
                .iter()
                .any(|n| self.partitions.contains(n))
        };
        (!self.reliable || q.reliability.kind == ReliabilityKind::Reliable)
            && (!self.transient_local || q.durability >= Durability::TransientLocal)
            && in_partition
    }

    fn reader_qos(&self) -> Qos {
        let mut qos = Qos::reader().keep_all();
        qos = if self.reliable {
            qos.reliable()
        } else {
            qos.best_effort()
        };
        if self.transient_local {
            qos = qos.transient_local();
        }
        qos
    }

    fn writer_qos(&self, representation: XcdrVersion) -> Qos {
        // KEEP_ALL: a replay loses nothing to a reader that keeps up; a write waits for room
        // rather than failing at once (a slow reader slows the replay down).
        // Unregisters replay as unregisters, and the end of a replay disposes nothing the
        // recording did not: no autodispose.
        let mut qos = Qos::writer()
            .keep_all()
            .autodispose_unregistered_instances(false)
            .max_blocking_time(Duration::from_secs(30))
            .data_representation([match representation {
                XcdrVersion::Xcdr1 => DataRepresentationId::XCDR,
                XcdrVersion::Xcdr2 => DataRepresentationId::XCDR2,
            }]);
        qos = if self.reliable {
            qos.reliable()
        } else {
            qos.best_effort()
        };
        if self.transient_local {
            qos = qos.transient_local();
        }
        qos
    }

    fn metadata(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (
                "reliability".to_owned(),
                if self.reliable {
                    "reliable"
                } else {
                    "best-effort"
                }
                .to_owned(),
            ),
            (
                "durability".to_owned(),
                if self.transient_local {
                    "transient-local"
                } else {
                    "volatile"
                }
                .to_owned(),
            ),
            ("partition".to_owned(), json!(self.partitions).to_string()),
            (
                "data_representation".to_owned(),
                match self.representation {
                    XcdrVersion::Xcdr1 => "XCDR1",
                    XcdrVersion::Xcdr2 => "XCDR2",
                }
                .to_owned(),
            ),
        ])
    }

    /// Read back from channel metadata; what is missing takes a live writer's defaults.
    fn from_metadata(m: &BTreeMap<String, String>) -> Result<ChannelQos, String> {
        let partitions = match m.get("partition") {
            Some(text) => serde_json::from_str::<Vec<String>>(text)
                .map_err(|e| format!("partition metadata {text:?} is not a JSON array: {e}"))?,
            None => Vec::new(),
        };
        Ok(ChannelQos {
            reliable: m.get("reliability").is_none_or(|r| r != "best-effort"),
            transient_local: m.get("durability").is_some_and(|d| d == "transient-local"),
            partitions,
            representation: match m.get("data_representation").map(String::as_str) {
                Some("XCDR2") => XcdrVersion::Xcdr2,
                _ => XcdrVersion::Xcdr1,
            },
        })
    }
}

fn version_of(id: DataRepresentationId) -> XcdrVersion {
    if id == DataRepresentationId::XCDR2 {
        XcdrVersion::Xcdr2
    } else {
        XcdrVersion::Xcdr1
    }
}

// ---------------------------------------------------------------------------------------
// record

/// A topic the discovery thread found, with its reader, for the recording thread.
struct Found {
    topic: DynamicTopic,
    reader: DynamicReader,
    qos: ChannelQos,
    type_objects: String,
}

/// A topic being recorded.
struct Recorded {
    name: String,
    reader: DynamicReader,
    schema: u16,
    metadata: BTreeMap<String, String>,
    /// Channels of samples, disposes and unregisters (the last two added when first
    /// needed), with the sequence number of their next message.
    data: (u16, u32),
    dispose: Option<(u16, u32)>,
    unregister: Option<(u16, u32)>,
    samples: u64,
}

/// Finds the topics to record and creates their readers, until `stop`.
struct Discovery {
    participant: DomainParticipant,
    wanted: Vec<String>,
    type_timeout: Duration,
    found: Sender<Found>,
    wake: Arc<Wakeup>,
    stop: Arc<AtomicBool>,
}

impl Discovery {
    fn run(self) {
        // Recorded topics with the QoS they are read with, and the writers checked.
        let mut recorded: HashMap<String, (ChannelQos, Vec<[u8; 16]>)> = HashMap::new();
        let mut retry_at: HashMap<String, Instant> = HashMap::new();
        while !self.stop.load(Ordering::SeqCst) {
            let endpoints = self.participant.discovered_endpoints();
            let mut writers: BTreeMap<&str, Vec<&DiscoveredEndpoint>> = BTreeMap::new();
            for e in endpoints.iter().filter(|e| e.kind == EndpointKind::Writer) {
                writers.entry(&e.data.topic_name).or_default().push(e);
            }
            for (name, ws) in writers {
                if !self.wanted.is_empty() && !self.wanted.iter().any(|w| w == name) {
                    continue;
                }
                if let Some((qos, checked)) = recorded.get_mut(name) {
                    for w in ws {
                        let guid = guid_bytes(w);
                        if !checked.contains(&guid) {
                            checked.push(guid);
                            if !qos.matches(w) {
                                eprintln!(
                                    "record: topic {name}: a writer that appeared later ({}) offers less than the recorder reads with ({:?}); its samples are not recorded",
                                    hex::encode(guid),
                                    qos.metadata()
                                );
                            }
                        }
                    }
                    continue;
                }
                if retry_at.get(name).is_some_and(|t| Instant::now() < *t) {
                    continue;
                }
                match self.start(name, &ws) {
                    Ok(qos) => {
                        recorded.insert(
                            name.to_owned(),
                            (qos, ws.iter().map(|w| guid_bytes(w)).collect()),
                        );
                    }
                    Err(e) => {
                        if !retry_at.contains_key(name) {
                            eprintln!("record: topic {name}: {e} (trying again every 5 s)");
                        }
                        retry_at.insert(name.to_owned(), Instant::now() + Duration::from_secs(5));
                    }
                }
                if self.stop.load(Ordering::SeqCst) {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Obtains the topic's type, creates its reader and hands both to the recording thread.
    fn start(&self, name: &str, writers: &[&DiscoveredEndpoint]) -> Result<ChannelQos, String> {
        let topic = self
            .participant
            .find_topic(name, self.type_timeout)
            .map_err(|e| e.to_string())?;
        let type_objects = type_objects_text(topic.dynamic_type()).ok_or_else(|| {
            format!(
                "its type {} is neither a struct nor a union",
                topic.type_name()
            )
        })?;
        let qos = ChannelQos::of_writers(writers);
        let partitions: Vec<&str> = qos.partitions.iter().map(String::as_str).collect();
        let reader = self
            .participant
            .create_subscriber(&partitions)
            .create_dynamic_reader(&topic, qos.reader_qos())
            .map_err(|e| e.to_string())?;
        let wake = Arc::clone(&self.wake);
        reader.set_data_available_listener(move || wake.notify());
        self.found
            .send(Found {
                topic,
                reader,
                qos: qos.clone(),
                type_objects,
            })
            .map_err(|_| "the recording ended".to_owned())?;
        self.wake.notify();
        Ok(qos)
    }
}

fn guid_bytes(e: &DiscoveredEndpoint) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..12].copy_from_slice(&e.data.guid.prefix.0);
    g[12..].copy_from_slice(&e.data.guid.entity_id.0);
    g
}

type McapWriter = mcap::Writer<BufWriter<File>>;

/// The recording thread's state.
struct Recording {
    out: McapWriter,
    path: PathBuf,
    topics: Vec<Recorded>,
    samples: u64,
    bytes: u64,
    skipped: u64,
    first: Option<Instant>,
}

impl Recording {
    fn err(&self, e: impl std::fmt::Display) -> String {
        format!("{}: {e}", self.path.display())
    }

    fn add(&mut self, f: Found) -> Result<(), String> {
        let ty = f.topic.dynamic_type();
        let schema = self
            .out
            .add_schema(f.topic.type_name(), "omgidl", to_idl(ty).as_bytes())
            .map_err(|e| self.err(e))?;
        let mut metadata = f.qos.metadata();
        metadata.insert(TYPE_OBJECTS_KEY.to_owned(), f.type_objects);
        let channel = self
            .out
            .add_channel(schema, f.topic.name(), "cdr", &metadata)
            .map_err(|e| self.err(e))?;
        eprintln!(
            "record: topic {} (type {}, {}, {})",
            f.topic.name(),
            f.topic.type_name(),
            metadata["reliability"],
            metadata["durability"]
        );
        self.topics.push(Recorded {
            name: f.topic.name().to_owned(),
            reader: f.reader,
            schema,
            metadata,
            data: (channel, 0),
            dispose: None,
            unregister: None,
            samples: 0,
        });
        Ok(())
    }

    /// Takes what every reader holds and writes it; stops at `limit` samples in all.
    /// Returns whether anything was taken.
    fn drain(&mut self, limit: u64) -> Result<bool, String> {
        let mut any = false;
        for i in 0..self.topics.len() {
            loop {
                if limit > 0 && self.samples >= limit {
                    return Ok(any);
                }
                // Large takes: the lock and the wake-up are paid once per batch (64 B
                // samples: 1024 at a time recorded ~5x as many per second as 64 at a time).
                let batch = self.topics[i].reader.take_serialized(TAKE_BATCH);
                if batch.is_empty() {
                    break;
                }
                any = true;
                self.first.get_or_insert_with(Instant::now);
                let log_time = nanos_since_epoch(SystemTime::now());
                for s in batch {
                    if limit > 0 && self.samples >= limit {
                        break;
                    }
                    let info = &s.info;
                    // The payload: the sample's, or for a dispose or unregister its key.
                    let Some(bytes) = s.value() else { continue };
                    let change = if info.valid_data {
                        None
                    } else if bytes.len() < EncapsulationHeader::LEN {
                        // Only a key hash came: nothing a replay could send.
                        self.skipped += 1;
                        continue;
                    } else if info.instance_state == InstanceState::NotAliveDisposed {
                        Some("dispose")
                    } else {
                        Some("unregister")
                    };
                    let (channel, sequence) = self.channel_for(i, change)?;
                    let header = MessageHeader {
                        channel_id: channel,
                        sequence,
                        log_time,
                        publish_time: info.source_timestamp.map_or(log_time, nanos_since_epoch),
                    };
                    self.out
                        .write_to_known_channel(&header, bytes)
                        .map_err(|e| format!("{}: {e}", self.path.display()))?;
                    self.samples += 1;
                    self.bytes += bytes.len() as u64;
                    self.topics[i].samples += 1;
                }
            }
        }
        Ok(any)
    }

    /// The channel of topic `i`'s samples (`change` `None`) or changes, and the next
    /// sequence number on it.
    fn channel_for(
        &mut self,
        i: usize,
        change: Option<&'static str>,
    ) -> Result<(u16, u32), String> {
        let t = &mut self.topics[i];
        let slot = match change {
            None => &mut t.data,
            Some(kind) => {
                let slot = if kind == "dispose" {
                    &mut t.dispose
                } else {
                    &mut t.unregister
                };
                if slot.is_none() {
                    let mut metadata = t.metadata.clone();
                    metadata.insert(CHANGE_KEY.to_owned(), kind.to_owned());
                    let id = self
                        .out
                        .add_channel(t.schema, &t.name, "cdr", &metadata)
                        .map_err(|e| format!("{}: {e}", self.path.display()))?;
                    *slot = Some((id, 0));
                }
                // INVARIANT: set just above when it was not.
                match slot {
                    Some(s) => s,
                    None => return Err("internal: no channel".into()),
                }
            }
        };
        let taken = *slot;
        slot.1 = slot.1.wrapping_add(1);
        Ok(taken)
    }
}

/// `ferrodds record`: records until `--duration`, `--count` or Ctrl-C, then finishes the
/// file.
pub(crate) fn record(args: &RecordArgs) -> Result<(), String> {
    let started = Instant::now();
    let duration = seconds(args.duration, "--duration")?;
    let type_timeout = seconds(args.type_timeout, "--type-timeout")?;
    let end = (!duration.is_zero()).then(|| started + duration);
    let path = args.output.clone();
    let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // No compression (this build has none): the bytes go to the file as they came, at the
    // speed of a copy; chunks, their CRCs and the indexes are the `mcap` crate's defaults,
    // so readers can seek by time and check what they read.
    let out = mcap::WriteOptions::new()
        .compression(None)
        .create(BufWriter::with_capacity(1 << 20, file))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(Wakeup::default());
    on_signal(&stop, &wake)?;
    let participant = args.join.participant()?;
    let (tx, rx): (Sender<Found>, Receiver<Found>) = mpsc::channel();
    let discovery = Discovery {
        participant: participant.clone(),
        wanted: args.topics.clone(),
        type_timeout,
        found: tx,
        wake: Arc::clone(&wake),
        stop: Arc::clone(&stop),
    };
    let finder = std::thread::Builder::new()
        .name("record-discovery".into())
        .spawn(move || discovery.run())
        .map_err(|e| format!("cannot start the discovery thread: {e}"))?;
    let mut rec = Recording {
        out,
        path: path.clone(),
        topics: Vec::new(),
        samples: 0,
        bytes: 0,
        skipped: 0,
        first: None,
    };
    let progress = std::io::stderr().is_terminal();
    let mut shown = Instant::now();
    let result = (|| -> Result<(), String> {
        loop {
            while let Ok(found) = rx.try_recv() {
                rec.add(found)?;
            }
            let took = rec.drain(args.count)?;
            if args.count > 0 && rec.samples >= args.count {
                return Ok(());
            }
            let now = Instant::now();
            if stop.load(Ordering::SeqCst) || end.is_some_and(|e| now >= e) {
                // What arrived before the end is recorded too.
                rec.drain(args.count)?;
                return Ok(());
            }
            if progress && now.duration_since(shown) >= Duration::from_secs(1) {
                shown = now;
                eprint!(
                    "\rrecording: {} topics, {} samples, {:.1} MB  ",
                    rec.topics.len(),
                    rec.samples,
                    rec.bytes as f64 / 1e6
                );
            }
            if !took {
                let left = end.map_or(Duration::from_millis(200), |e| {
                    e.saturating_duration_since(now)
                        .min(Duration::from_millis(200))
                });
                wake.wait(left);
            }
        }
    })();
    stop.store(true, Ordering::SeqCst);
    if progress {
        eprintln!();
    }
    // The file is finished whatever ended the run: what was written stays readable.
    let finished = rec
        .out
        .finish()
        .map(|_| ())
        .map_err(|e| format!("{}: cannot finish the file: {e}", path.display()));
    let seconds_recording = rec.first.map_or(0.0, |f| f.elapsed().as_secs_f64());
    let Recording {
        out,
        topics,
        samples,
        bytes,
        skipped,
        ..
    } = rec;
    let flushed = finished.and_then(|()| {
        out.into_inner()
            .into_inner()
            .map(drop)
            .map_err(|e| format!("{}: cannot finish the file: {}", path.display(), e.error()))
    });
    let _ = finder.join();
    result?;
    flushed?;
    let topic_counts: Vec<_> = topics
        .iter()
        .map(|t| {
            // What DDS itself counts as lost or rejected on the way in: a recording that
            // missed samples says so.
            json!({
                "topic": t.name,
                "samples": t.samples,
                "lost": t.reader.sample_lost_status().total_count,
                "rejected": t.reader.sample_rejected_status().total_count,
            })
        })
        .collect();
    let lost: u64 = topics
        .iter()
        .map(|t| {
            t.reader.sample_lost_status().total_count
                + t.reader.sample_rejected_status().total_count
        })
        .sum();
    if lost > 0 {
        // SAMPLE_LOST also counts what a writer had sent before the recorder's reader
        // matched it (the reader is told the writer no longer has it).
        eprintln!(
            "record: the readers report {lost} sample(s) lost or rejected (SAMPLE_LOST, \
             which includes what writers sent before the recorder matched them, and \
             SAMPLE_REJECTED)"
        );
    }
    eprintln!(
        "record: {} samples ({} bytes) of {} topic(s) to {}{}",
        samples,
        bytes,
        topics.len(),
        path.display(),
        if skipped > 0 {
            format!("; {skipped} dispose/unregister(s) with no key skipped")
        } else {
            String::new()
        }
    );
    if args.json {
        println!(
            "{}",
            json!({
                "file": path.display().to_string(),
                "samples": samples,
                "bytes": bytes,
                "skipped": skipped,
                "seconds": seconds_recording,
                "topics": topic_counts,
            })
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// replay

/// A file's summary: its channels and schemas (a file the recorder did not finish has
/// none, and is refused).
fn read_summary(path: &Path) -> Result<mcap::Summary, String> {
    use std::io::Seek;
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut file = File::open(path).map_err(|e| fail(&e))?;
    let size = file.metadata().map_err(|e| fail(&e))?.len();
    // The magic at both ends first: a plain answer for the commonest faults.
    let mut start = [0u8; 8];
    let read = file.read(&mut start).map_err(|e| fail(&e))?;
    if read < start.len() || start[..] != *mcap::MAGIC {
        return Err(fail(&"not an MCAP file (no MCAP magic at its start)"));
    }
    let mut end = [0u8; 8];
    file.seek(std::io::SeekFrom::End(-8))
        .map_err(|e| fail(&e))?;
    file.read_exact(&mut end).map_err(|e| fail(&e))?;
    if end[..] != *mcap::MAGIC || size < 16 {
        return Err(fail(
            &"truncated: no MCAP magic at its end (the recorder was killed before it finished the file, or the copy is incomplete)",
        ));
    }
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| fail(&e))?;
    let mut reader = SummaryReader::new_with_options(
        mcap::sans_io::SummaryReaderOptions::default().with_file_size(size),
    );
    while let Some(event) = reader.next_event() {
        match event.map_err(|e| fail(&format!("not a complete MCAP file ({e})")))? {
            SummaryReadEvent::ReadRequest(n) => {
                let read = file.read(reader.insert(n)).map_err(|e| fail(&e))?;
                reader.notify_read(read);
            }
            SummaryReadEvent::SeekRequest(to) => {
                let at = file.seek(to).map_err(|e| fail(&e))?;
                reader.notify_seeked(at);
            }
        }
    }
    reader
        .finish()
        .ok_or_else(|| fail(&"the MCAP file has no summary (it was not finished)"))
}

/// Reads every message of the file in order, handing each to `f` (header, bytes). Every
/// chunk's CRC is checked: a replay sends the bytes recorded or nothing.
fn for_each_message(
    path: &Path,
    mut f: impl FnMut(&MessageHeader, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    const READ_SIZE: usize = 1 << 20;
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut file = File::open(path).map_err(|e| fail(&e))?;
    let mut reader = LinearReader::new_with_options(
        LinearReaderOptions::default()
            .with_validate_chunk_crcs(true)
            .with_validate_data_section_crc(false),
    );
    while let Some(event) = reader.next_event() {
        match event.map_err(|e| fail(&format!("bad MCAP data ({e})")))? {
            LinearReadEvent::ReadRequest(need) => {
                let read = file
                    .read(reader.insert(need.max(READ_SIZE)))
                    .map_err(|e| fail(&e))?;
                reader.notify_read(read);
            }
            LinearReadEvent::Record { opcode, data } if opcode == op::MESSAGE => {
                let (header, data) = message_record(data)
                    .ok_or_else(|| fail(&"a message record shorter than its header"))?;
                f(&header, data)?;
            }
            LinearReadEvent::Record { .. } => {}
        }
    }
    Ok(())
}

/// A Message record's fields (MCAP spec, "Message (op=0x05)": channel id u16, sequence u32,
/// log and publish times u64, little-endian, then the data): read here rather than through
/// `mcap::parse_record`, whose general parser took a third of the read time of a file of
/// small messages.
fn message_record(record: &[u8]) -> Option<(MessageHeader, &[u8])> {
    const LEN: usize = 2 + 4 + 8 + 8;
    let (head, data) = (record.get(..LEN)?, record.get(LEN..)?);
    let u64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&head[at..at + 8]);
        u64::from_le_bytes(b)
    };
    Some((
        MessageHeader {
            channel_id: u16::from_le_bytes([head[0], head[1]]),
            sequence: u32::from_le_bytes([head[2], head[3], head[4], head[5]]),
            log_time: u64_at(6),
            publish_time: u64_at(14),
        },
        data,
    ))
}

/// A topic being replayed: its writers, one per data representation met.
struct Player {
    name: String,
    topic: DynamicTopic,
    qos: ChannelQos,
    writers: Vec<(XcdrVersion, DynamicWriter)>,
}

impl Player {
    fn writer(
        &mut self,
        p: &DomainParticipant,
        version: XcdrVersion,
    ) -> Result<&DynamicWriter, String> {
        let at = match self.writers.iter().position(|(v, _)| *v == version) {
            Some(at) => at,
            None => {
                let partitions: Vec<&str> =
                    self.qos.partitions.iter().map(String::as_str).collect();
                let w = p
                    .create_publisher(&partitions)
                    .create_dynamic_writer(&self.topic, self.qos.writer_qos(version))
                    .map_err(|e| format!("topic {}: {e}", self.name))?;
                self.writers.push((version, w));
                self.writers.len() - 1
            }
        };
        Ok(&self.writers[at].1)
    }
}

/// What a channel's messages are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Change {
    Sample,
    Dispose,
    Unregister,
}

/// `ferrodds replay FILE`.
pub(crate) fn replay(args: &ReplayArgs) -> Result<(), String> {
    let path = args.file.as_path();
    if !(args.rate >= 0.0 && args.rate.is_finite()) {
        return Err(format!("--rate: {} is not a speed factor", args.rate));
    }
    let wait = seconds(args.wait, "--wait")?;
    let summary = read_summary(path)?;
    let stop = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(Wakeup::default());
    on_signal(&stop, &wake)?;
    if args.dry_run {
        return dry_run(args, &summary, &stop);
    }
    let participant = args.join.participant()?;
    let remapped = |topic: &str| {
        args.remap
            .iter()
            .rev()
            .find(|(old, _)| old == topic)
            .map_or(topic.to_owned(), |(_, new)| new.clone())
    };
    // One player per topic and type; each channel's messages go to one.
    let mut players: Vec<Player> = Vec::new();
    let mut channels: HashMap<u16, (usize, Change)> = HashMap::new();
    let mut ids: Vec<u16> = summary.channels.keys().copied().collect();
    ids.sort_unstable();
    for id in ids {
        let c = &summary.channels[&id];
        let fail = |what: String| {
            format!(
                "{}: channel {id} (topic {}): {what}",
                path.display(),
                c.topic
            )
        };
        let schema = c.schema.as_ref().ok_or_else(|| fail("no schema".into()))?;
        let objects = c.metadata.get(TYPE_OBJECTS_KEY).ok_or_else(|| {
            fail(format!(
                "no {TYPE_OBJECTS_KEY} metadata (not recorded by ferrodds record): its type cannot be rebuilt"
            ))
        })?;
        let ty = type_from_objects(objects).map_err(&fail)?;
        let qos = ChannelQos::from_metadata(&c.metadata).map_err(&fail)?;
        let change = match c.metadata.get(CHANGE_KEY).map(String::as_str) {
            None => Change::Sample,
            Some("dispose") => Change::Dispose,
            Some("unregister") => Change::Unregister,
            Some(other) => {
                return Err(fail(format!(
                    "{CHANGE_KEY} {other:?} is not dispose or unregister"
                )))
            }
        };
        let name = remapped(&c.topic);
        let at = match players
            .iter()
            .position(|p| p.name == name && p.topic.type_name() == schema.name)
        {
            Some(at) => at,
            None => {
                let topic = participant
                    .create_dynamic_topic(&name, &schema.name, ty)
                    .map_err(|e| fail(e.to_string()))?;
                let mut player = Player {
                    name: name.clone(),
                    topic,
                    qos: qos.clone(),
                    writers: Vec::new(),
                };
                player.writer(&participant, qos.representation)?;
                players.push(player);
                players.len() - 1
            }
        };
        channels.insert(id, (at, change));
    }
    // Discovery takes a moment: samples written before a reader matched would not reach it.
    let deadline = Instant::now() + wait;
    if args.wait_for_readers > 0 {
        for p in &players {
            for (_, w) in &p.writers {
                let left = deadline.saturating_duration_since(Instant::now());
                if w.wait_for_matched(args.wait_for_readers, left).is_err() {
                    eprintln!(
                        "replay: topic {}: {} reader(s) after {:.1} s; playing anyway",
                        p.name,
                        w.matched_subscriptions().len(),
                        wait.as_secs_f64()
                    );
                }
            }
        }
    }
    if args.wait_for_readers > 0 {
        // Each side matches the other when it has the other's announcement: a reader this
        // writer matched may not have matched the writer yet, and a volatile reader drops
        // what comes before. A reliable reader that answered the writer has matched it.
        for p in &players {
            for (_, w) in &p.writers {
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_secs(1));
                let _ = w.wait_for_readers_heard(left);
            }
        }
    }
    let started = Instant::now();
    let (mut sent, mut bytes, mut refused) = (0u64, 0u64, 0u64);
    loop {
        let mut clock: Option<(u64, Instant)> = None;
        for_each_message(path, |header, data| {
            if stop.load(Ordering::SeqCst) {
                return Err(String::new());
            }
            let Some(&(at, change)) = channels.get(&header.channel_id) else {
                return Err(format!(
                    "{}: a message on channel {}, which the summary does not list",
                    path.display(),
                    header.channel_id
                ));
            };
            pace(&mut clock, header.log_time, args.rate, &stop);
            let timestamp = if args.original_timestamps {
                UNIX_EPOCH + Duration::from_nanos(header.publish_time)
            } else {
                SystemTime::now()
            };
            let player = &mut players[at];
            let version = EncapsulationHeader::parse(data)
                .map_or(player.qos.representation, |h| h.id.version());
            let writer = player.writer(&participant, version)?;
            let written = match change {
                Change::Sample => writer.write_serialized_slice(data, timestamp),
                Change::Dispose => writer.dispose_serialized(data.to_vec(), timestamp),
                Change::Unregister => writer.unregister_serialized(data.to_vec(), timestamp),
            };
            match written {
                Ok(()) => {
                    sent += 1;
                    bytes += data.len() as u64;
                    Ok(())
                }
                Err(e @ (ferrodds::Error::Encapsulation { .. } | ferrodds::Error::Decode(_))) => {
                    if refused == 0 {
                        eprintln!(
                            "replay: topic {}: message {} not sent: {e}",
                            player.name, header.sequence
                        );
                    }
                    refused += 1;
                    Ok(())
                }
                Err(e) => Err(format!("topic {}: {e}", player.name)),
            }
        })
        .or_else(|e| if e.is_empty() { Ok(()) } else { Err(e) })?;
        if !args.repeat || stop.load(Ordering::SeqCst) {
            break;
        }
    }
    // Reliable readers get everything before the writers go.
    for p in &players {
        for (_, w) in &p.writers {
            if p.qos.reliable && w.wait_for_acknowledgments(Duration::from_secs(10)).is_err() {
                eprintln!(
                    "replay: topic {}: not every sample was acknowledged within 10 s",
                    p.name
                );
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "replay: {sent} samples ({bytes} bytes) on {} topic(s) in {secs:.2} s{}",
        players.len(),
        if refused > 0 {
            format!("; {refused} refused")
        } else {
            String::new()
        }
    );
    if args.json {
        println!(
            "{}",
            json!({"samples": sent, "bytes": bytes, "refused": refused, "seconds": secs,
                   "topics": players.len()})
        );
    }
    Ok(())
}

/// Sleeps until the message logged at `log_time` is due: the first message of a pass is
/// due at once, each later one `(log_time - first) / rate` after it. Rate 0: never sleeps.
fn pace(clock: &mut Option<(u64, Instant)>, log_time: u64, rate: f64, stop: &AtomicBool) {
    let &mut (first, start) = clock.get_or_insert((log_time, Instant::now()));
    if rate == 0.0 {
        return;
    }
    let offset = Duration::from_nanos(log_time.saturating_sub(first)).div_f64(rate);
    let due = start + offset;
    // Short sleeps, so that Ctrl-C is not held up by a long pause in the recording.
    while !stop.load(Ordering::SeqCst) {
        let left = due.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// `--dry-run`: reads the messages (and keeps the timing, unless `--rate 0`) without
/// sending: with `--rate 0`, the rate the file can be read at.
fn dry_run(args: &ReplayArgs, summary: &mcap::Summary, stop: &AtomicBool) -> Result<(), String> {
    let started = Instant::now();
    let (mut frames, mut bytes) = (0u64, 0u64);
    loop {
        let mut clock = None;
        for_each_message(&args.file, |header, data| {
            if stop.load(Ordering::SeqCst) {
                return Err(String::new());
            }
            pace(&mut clock, header.log_time, args.rate, stop);
            frames += 1;
            bytes += data.len() as u64;
            Ok(())
        })
        .or_else(|e| if e.is_empty() { Ok(()) } else { Err(e) })?;
        if !args.repeat || stop.load(Ordering::SeqCst) {
            break;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    eprintln!(
        "replay (dry run): {frames} messages ({bytes} bytes) on {} channel(s) read in {secs:.3} s: {:.0} frames/s, {:.1} MB/s",
        summary.channels.len(),
        per_s(frames),
        per_s(bytes) / 1e6
    );
    if args.json {
        println!(
            "{}",
            json!({"frames": frames, "bytes": bytes, "seconds": secs,
                   "frames_per_s": per_s(frames), "mb_per_s": per_s(bytes) / 1e6})
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodds::dynamic::{Member, StructType};
    use ferrodds_cdr::Extensibility;

    #[test]
    fn a_type_survives_its_type_objects() {
        let inner = DynamicType::Struct(Arc::new(StructType {
            name: "m::Inner".into(),
            extensibility: Extensibility::Final,
            base: None,
            members: vec![Member::new("v", 0, DynamicType::Float64)],
        }));
        let outer = DynamicType::Struct(Arc::new(StructType {
            name: "m::Outer".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![
                Member::new("id", 0, DynamicType::Int32).key(),
                Member::new("inner", 1, inner),
                Member::new("name", 2, DynamicType::String { bound: Some(8) }),
            ],
        }));
        let text = type_objects_text(&outer).unwrap();
        assert_eq!(text.split(',').count(), 2, "the type and its dependency");
        assert_eq!(type_from_objects(&text).unwrap(), outer);
        // Without the dependency, or not hex: an error naming the key, not a panic.
        let first = text.split(',').next().unwrap();
        assert!(type_from_objects(first)
            .unwrap_err()
            .contains(TYPE_OBJECTS_KEY));
        assert!(type_from_objects("zz").unwrap_err().contains("not hex"));
    }

    #[test]
    fn qos_metadata_round_trips() {
        let q = ChannelQos {
            reliable: false,
            transient_local: true,
            partitions: vec!["a".into(), String::new()],
            representation: XcdrVersion::Xcdr2,
        };
        assert_eq!(ChannelQos::from_metadata(&q.metadata()).unwrap(), q);
        assert_eq!(parse_remap("a=b").unwrap(), ("a".into(), "b".into()));
        assert!(parse_remap("ab").is_err() && parse_remap("=b").is_err());
    }
}
