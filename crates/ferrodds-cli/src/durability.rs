//! `ferrodds durability`: the durability service of a domain. It keeps what TRANSIENT and
//! PERSISTENT writers write, and once such a writer is gone hands it to late-joining
//! readers: TRANSIENT in the service's memory, PERSISTENT also in an SQLite database
//! (`--store`) that outlives the service.
//!
//! **Keeping.** A writer announcing TRANSIENT or PERSISTENT durability is read by a reliable
//! KEEP_ALL reader of its topic in its partitions (TRANSIENT_LOCAL, so that its history
//! comes too; the topic's type comes over XTypes TypeLookup). Each writer's changes are
//! kept as its DURABILITY_SERVICE says: per instance the last `depth` (KEEP_LAST, by
//! default 1) or all (KEEP_ALL) within `max_samples`, disposes included (an unregister is
//! not kept: the data outlives its writer's interest in it); `service_cleanup_delay` after
//! the writer is gone, its disposed instances are forgotten.
//!
//! **Handing out.** While the writer lives it serves late joiners itself (a TRANSIENT or
//! PERSISTENT FerroDDS writer keeps its history as a TRANSIENT_LOCAL one does). When it is
//! gone — its SEDP announcement withdrawn or its lease run out — the service creates a
//! writer of its own for it (same topic, partitions, durability and data representation)
//! and writes what it kept into that writer's history before announcing it, each
//! change with PID_ORIGINAL_WRITER_INFO: the original writer and sequence number. Readers
//! that match it later get the history; VOLATILE readers get nothing; a reader that had
//! the changes from the writer itself drops them (FerroDDS readers keep, per original
//! writer, the highest sequence number taken in).
//!
//! **Restarting.** With `--store`, PERSISTENT writers and their kept changes are written to
//! the database as they come, and a service started on the same database hands them out
//! again at once.
//!
//! One service per domain: a second one would keep the first one's writers as writers of
//! their own.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use ferrodds::qos::{
    DataRepresentationId, Durability, DurabilityService, History, ReliabilityKind,
};
use ferrodds::{
    ChangeKind, DiscoveredEndpoint, DomainParticipant, DynamicReader, DynamicTopic, DynamicWriter,
    EndpointKind, InstanceState, Qos,
};
use ferrodds_cdr::{EncapsulationHeader, XcdrVersion};
use ferrodds_rtps::wire::Guid;

use crate::record::{on_signal, type_from_objects, type_objects_text, Wakeup};
use crate::tools::Join;

/// `ferrodds durability`.
#[derive(Args, Clone, Debug)]
pub(crate) struct DurabilityArgs {
    #[command(flatten)]
    join: Join,
    /// The SQLite database PERSISTENT writers' changes are kept in (created if missing);
    /// without it they are kept in memory, as TRANSIENT ones are.
    #[arg(long)]
    store: Option<PathBuf>,
    /// Stop after this many seconds (0: until Ctrl-C).
    #[arg(long, default_value_t = 0.0)]
    duration: f64,
    /// How long to wait for a topic's type (XTypes TypeLookup) before trying again later,
    /// in seconds.
    #[arg(long, default_value_t = 5.0)]
    type_timeout: f64,
}

/// A change kept for a writer.
#[derive(Debug, Clone)]
struct Kept {
    kind: ChangeKind,
    instance: [u8; 16],
    /// Source timestamp, nanoseconds since the Unix epoch.
    timestamp: u64,
    /// The sample, or the key-only sample of a dispose or unregister (encapsulated).
    payload: Vec<u8>,
}

/// A TRANSIENT or PERSISTENT writer whose changes the service keeps.
struct Source {
    topic: String,
    type_objects: String,
    partitions: Vec<String>,
    reliable: bool,
    durability: Durability,
    representation: XcdrVersion,
    service: DurabilityService,
    /// Kept changes by sequence number, and each instance's, oldest first.
    changes: BTreeMap<i64, Kept>,
    by_instance: HashMap<[u8; 16], VecDeque<i64>>,
    /// The highest sequence number taken from the writer.
    highest: i64,
    /// When the writer was seen gone (`None`: alive).
    gone: Option<Instant>,
    /// The writers that hand its changes out, and the highest sequence number handed over.
    orphans: Vec<DynamicWriter>,
    relayed: i64,
}

impl Source {
    /// A writer with nothing kept yet.
    fn new(topic: String, type_objects: String, partitions: Vec<String>) -> Source {
        Source {
            topic,
            type_objects,
            partitions,
            reliable: true,
            durability: Durability::Transient,
            representation: XcdrVersion::Xcdr2,
            service: DurabilityService::default(),
            changes: BTreeMap::new(),
            by_instance: HashMap::new(),
            highest: 0,
            gone: None,
            orphans: Vec::new(),
            relayed: 0,
        }
    }

    /// Keeps `change` (sequence number `sn`) as DURABILITY_SERVICE says; returns the
    /// sequence numbers it let go.
    fn keep(&mut self, sn: i64, change: Kept) -> Vec<i64> {
        let mut dropped = Vec::new();
        let instance = change.instance;
        self.changes.insert(sn, change);
        self.highest = self.highest.max(sn);
        let queue = self.by_instance.entry(instance).or_default();
        queue.push_back(sn);
        if let History::KeepLast { depth } = self.service.history {
            while queue.len() > usize::try_from(depth.max(1)).unwrap_or(1) {
                if let Some(old) = queue.pop_front() {
                    dropped.push(old);
                }
            }
        }
        let max = self.service.resource_limits.max_samples;
        if max > 0 {
            while self.changes.len() - dropped.len() > max as usize {
                let Some(old) = self.changes.keys().copied().find(|k| !dropped.contains(k)) else {
                    break;
                };
                dropped.push(old);
            }
        }
        for sn in &dropped {
            self.forget(*sn);
        }
        dropped
    }

    fn forget(&mut self, sn: i64) {
        if let Some(k) = self.changes.remove(&sn) {
            if let Some(q) = self.by_instance.get_mut(&k.instance) {
                q.retain(|s| *s != sn);
                if q.is_empty() {
                    self.by_instance.remove(&k.instance);
                }
            }
        }
    }

    /// The writer is gone and `service_cleanup_delay` passed: its disposed instances are
    /// forgotten. Returns the sequence numbers let go.
    fn clean_up(&mut self) -> Vec<i64> {
        let disposed: Vec<[u8; 16]> = self
            .by_instance
            .iter()
            .filter(|(_, q)| {
                q.back()
                    .and_then(|sn| self.changes.get(sn))
                    .is_some_and(|k| k.kind == ChangeKind::Disposed)
            })
            .map(|(i, _)| *i)
            .collect();
        let mut dropped = Vec::new();
        for instance in disposed {
            if let Some(q) = self.by_instance.remove(&instance) {
                for sn in q {
                    self.changes.remove(&sn);
                    dropped.push(sn);
                }
            }
        }
        dropped
    }

    fn writer_qos(&self) -> Qos {
        let qos = Qos::writer()
            .keep_all()
            .durability(self.durability)
            .autodispose_unregistered_instances(false)
            .data_representation([match self.representation {
                XcdrVersion::Xcdr1 => DataRepresentationId::XCDR,
                XcdrVersion::Xcdr2 => DataRepresentationId::XCDR2,
            }]);
        if self.reliable {
            qos.reliable()
        } else {
            qos.best_effort()
        }
    }
}

fn cleanup_delay(s: &DurabilityService) -> Duration {
    s.service_cleanup_delay.to_std().unwrap_or(Duration::MAX)
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A reader of a topic in some partitions, and the type it reads.
struct TopicReader {
    topic: DynamicTopic,
    reader: DynamicReader,
}

/// The service's state.
struct Service {
    participant: DomainParticipant,
    type_timeout: Duration,
    store: Option<store::Store>,
    sources: HashMap<Guid, Source>,
    readers: HashMap<(String, Vec<String>, bool), TopicReader>,
    /// Topics whose type could not be had, and when to try again.
    retry_at: HashMap<String, Instant>,
}

impl Service {
    /// Takes what the readers hold into the sources.
    fn take(&mut self) -> Result<bool, String> {
        let mut any = false;
        for r in self.readers.values() {
            loop {
                let batch = r.reader.take_serialized(1024);
                if batch.is_empty() {
                    break;
                }
                any = true;
                for s in batch {
                    let writer = Guid::from_bytes(s.info.publication_handle.0);
                    let Some(source) = self.sources.get_mut(&writer) else {
                        continue;
                    };
                    let sn = s.info.sequence_number;
                    let Some(payload) = s.value() else { continue };
                    if sn <= source.highest || payload.len() < EncapsulationHeader::LEN {
                        // Taken already, or only a key hash came (nothing to hand out).
                        continue;
                    }
                    let kind = if s.info.valid_data {
                        ChangeKind::Alive
                    } else if s.info.instance_state == InstanceState::NotAliveDisposed {
                        ChangeKind::Disposed
                    } else {
                        // An unregister ends the writer's interest, not the data: what it
                        // wrote outlives it, which is what the service is for.
                        continue;
                    };
                    let kept = Kept {
                        kind,
                        instance: s.info.instance_handle.0,
                        timestamp: s.info.source_timestamp.map_or(0, nanos),
                        payload: payload.clone(),
                    };
                    let persistent = source.durability == Durability::Persistent;
                    if let (Some(store), true) = (&self.store, persistent) {
                        store.put_change(writer, sn, &kept)?;
                    }
                    let dropped = source.keep(sn, kept);
                    if let (Some(store), true) = (&self.store, persistent) {
                        store.remove_changes(writer, &dropped)?;
                    }
                }
            }
        }
        Ok(any)
    }

    /// Follows discovery: new durable writers get kept, writers gone get their changes
    /// handed out.
    fn follow(&mut self) -> Result<(), String> {
        let own = self.participant.guid_prefix();
        let endpoints = self.participant.discovered_endpoints();
        let durable: Vec<&DiscoveredEndpoint> = endpoints
            .iter()
            .filter(|e| {
                e.kind == EndpointKind::Writer
                    && e.data.guid.prefix != own
                    && e.data.qos.durability >= Durability::Transient
            })
            .collect();
        let alive: HashSet<Guid> = durable.iter().map(|e| e.data.guid).collect();
        for w in &durable {
            let guid = w.data.guid;
            if let Some(s) = self.sources.get_mut(&guid) {
                s.gone = None;
                continue;
            }
            let name = &w.data.topic_name;
            if self.retry_at.get(name).is_some_and(|t| Instant::now() < *t) {
                continue;
            }
            match self.start(w) {
                Ok(()) => {}
                Err(e) => {
                    eprintln!("durability: topic {name}: {e} (trying again in 5 s)");
                    self.retry_at
                        .insert(name.clone(), Instant::now() + Duration::from_secs(5));
                }
            }
        }
        // What the readers hold is taken before a writer is declared gone.
        self.take()?;
        let gone: Vec<Guid> = self
            .sources
            .iter()
            .filter(|(g, s)| s.gone.is_none() && !alive.contains(g))
            .map(|(g, _)| *g)
            .collect();
        for guid in gone {
            if let Some(s) = self.sources.get_mut(&guid) {
                s.gone = Some(Instant::now());
            }
            self.hand_out(guid)?;
        }
        // Disposed instances of writers gone, after their cleanup delay.
        let due: Vec<Guid> = self
            .sources
            .iter()
            .filter(|(_, s)| {
                s.gone
                    .is_some_and(|at| at.elapsed() >= cleanup_delay(&s.service))
            })
            .map(|(g, _)| *g)
            .collect();
        for guid in due {
            let Some(s) = self.sources.get_mut(&guid) else {
                continue;
            };
            let dropped = s.clean_up();
            if let (Some(store), Durability::Persistent) = (&self.store, s.durability) {
                store.remove_changes(guid, &dropped)?;
            }
        }
        Ok(())
    }

    /// Starts keeping writer `w`: its topic's reader (created when first needed).
    fn start(&mut self, w: &DiscoveredEndpoint) -> Result<(), String> {
        let q = &w.data.qos;
        let mut partitions = q.partition.names.clone();
        partitions.sort();
        let reliable = q.reliability.kind == ReliabilityKind::Reliable;
        let key = (w.data.topic_name.clone(), partitions.clone(), reliable);
        if !self.readers.contains_key(&key) {
            let topic = self
                .participant
                .find_topic(&w.data.topic_name, self.type_timeout)
                .map_err(|e| e.to_string())?;
            let qos = Qos::reader().keep_all().transient_local().ignore_local();
            let qos = if reliable {
                qos.reliable()
            } else {
                qos.best_effort()
            };
            let names: Vec<&str> = partitions.iter().map(String::as_str).collect();
            let reader = self
                .participant
                .create_subscriber(&names)
                .create_dynamic_reader(&topic, qos)
                .map_err(|e| e.to_string())?;
            self.readers
                .insert(key.clone(), TopicReader { topic, reader });
        }
        let topic = &self.readers[&key].topic;
        let type_objects = type_objects_text(topic.dynamic_type()).ok_or_else(|| {
            format!(
                "its type {} is neither a struct nor a union",
                topic.type_name()
            )
        })?;
        let source = Source {
            reliable,
            durability: q.durability,
            representation: match q.data_representation.offered() {
                DataRepresentationId::XCDR2 => XcdrVersion::Xcdr2,
                _ => XcdrVersion::Xcdr1,
            },
            service: q.durability_service,
            ..Source::new(w.data.topic_name.clone(), type_objects, partitions)
        };
        if let (Some(store), Durability::Persistent) = (&self.store, source.durability) {
            store.put_source(w.data.guid, &source)?;
        }
        self.sources.insert(w.data.guid, source);
        Ok(())
    }

    /// Writer `guid` is gone: a writer of the service's own gets what was kept of it and not
    /// yet handed out, in its history.
    fn hand_out(&mut self, guid: Guid) -> Result<(), String> {
        let Some(s) = self.sources.get(&guid) else {
            return Ok(());
        };
        let pending: Vec<(i64, Kept)> = s
            .changes
            .range(s.relayed + 1..)
            .map(|(sn, k)| (*sn, k.clone()))
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        let topic = match self
            .readers
            .get(&(s.topic.clone(), s.partitions.clone(), s.reliable))
        {
            Some(r) => r.topic.clone(),
            None => {
                let ty = type_from_objects(&s.type_objects)?;
                let type_name = ty.name().to_owned();
                self.participant
                    .create_dynamic_topic(&s.topic, &type_name, ty)
                    .map_err(|e| e.to_string())?
            }
        };
        let names: Vec<&str> = s.partitions.iter().map(String::as_str).collect();
        let qos = s
            .writer_qos()
            .max_samples(u32::try_from(pending.len() + 1).unwrap_or(u32::MAX));
        let writer = self
            .participant
            .create_publisher(&names)
            .create_dynamic_writer_disabled(&topic, qos)
            .map_err(|e| e.to_string())?;
        // Written before the writer is announced: history for the readers that match it
        // and take history, sent to nobody now.
        for (sn, k) in &pending {
            let at = UNIX_EPOCH + Duration::from_nanos(k.timestamp);
            writer
                .write_relayed(k.kind, k.payload.clone(), at, guid, *sn)
                .map_err(|e| format!("topic {}: {e}", s.topic))?;
        }
        writer.enable();
        let last = pending.last().map_or(0, |p| p.0);
        eprintln!(
            "durability: writer {} of topic {} gone: {} changes handed out",
            hex::encode(guid.to_bytes()),
            s.topic,
            pending.len()
        );
        if let Some(s) = self.sources.get_mut(&guid) {
            s.orphans.push(writer);
            s.relayed = last;
        }
        Ok(())
    }
}

/// Runs the service until Ctrl-C or `--duration`.
pub(crate) fn run(args: &DurabilityArgs) -> Result<(), String> {
    let duration = Duration::try_from_secs_f64(args.duration)
        .map_err(|_| format!("--duration {}: not a number of seconds", args.duration))?;
    let type_timeout = Duration::try_from_secs_f64(args.type_timeout).map_err(|_| {
        format!(
            "--type-timeout {}: not a number of seconds",
            args.type_timeout
        )
    })?;
    let end = (!duration.is_zero()).then(|| Instant::now() + duration);
    let stop = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(Wakeup::default());
    on_signal(&stop, &wake)?;
    let store = args
        .store
        .as_ref()
        .map(|p| store::Store::open(p))
        .transpose()?;
    let participant = args.join.participant()?;
    let mut service = Service {
        participant,
        type_timeout,
        store,
        sources: HashMap::new(),
        readers: HashMap::new(),
        retry_at: HashMap::new(),
    };
    // A restarted service hands out what its database holds at once: the writers are gone
    // (or, if not, their readers drop what they have).
    if let Some(store) = &service.store {
        for (guid, source) in store.load()? {
            service.sources.insert(guid, source);
        }
        let guids: Vec<Guid> = service.sources.keys().copied().collect();
        for guid in guids {
            if let Some(s) = service.sources.get_mut(&guid) {
                s.gone = Some(Instant::now());
            }
            service.hand_out(guid)?;
        }
    }
    eprintln!(
        "durability: domain {} ready ({} writers from the store)",
        args.join.domain,
        service.sources.len()
    );
    while !stop.load(Ordering::SeqCst) && end.is_none_or(|e| Instant::now() < e) {
        service.follow()?;
        wake.wait(Duration::from_millis(50));
    }
    Ok(())
}

/// PERSISTENT writers and their kept changes in SQLite.
mod store {
    use std::path::Path;

    use ferrodds::qos::{Durability, DurabilityService, History};
    use ferrodds::ChangeKind;
    use ferrodds_cdr::XcdrVersion;
    use ferrodds_rtps::qos::Duration as QosDuration;
    use ferrodds_rtps::wire::Guid;
    use rusqlite::{params, Connection};

    use super::{Kept, Source};

    pub(super) struct Store {
        conn: Connection,
        path: String,
    }

    impl Store {
        pub(super) fn open(path: &Path) -> Result<Store, String> {
            let name = path.display().to_string();
            let conn = Connection::open(path).map_err(|e| format!("{name}: {e}"))?;
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 CREATE TABLE IF NOT EXISTS writers (
                     guid BLOB PRIMARY KEY, topic TEXT NOT NULL, type_objects TEXT NOT NULL,
                     partitions TEXT NOT NULL, reliable INTEGER NOT NULL,
                     xcdr INTEGER NOT NULL, depth INTEGER NOT NULL,
                     max_samples INTEGER NOT NULL, cleanup_ns INTEGER NOT NULL);
                 CREATE TABLE IF NOT EXISTS changes (
                     guid BLOB NOT NULL, sn INTEGER NOT NULL, kind INTEGER NOT NULL,
                     instance BLOB NOT NULL, timestamp INTEGER NOT NULL, payload BLOB NOT NULL,
                     PRIMARY KEY (guid, sn));",
            )
            .map_err(|e| format!("{name}: {e}"))?;
            Ok(Store { conn, path: name })
        }

        fn err(&self, e: rusqlite::Error) -> String {
            format!("{}: {e}", self.path)
        }

        pub(super) fn put_source(&self, guid: Guid, s: &Source) -> Result<(), String> {
            let depth = match s.service.history {
                History::KeepLast { depth } => i64::from(depth.max(1)),
                History::KeepAll => 0,
            };
            let cleanup = s
                .service
                .service_cleanup_delay
                .to_std()
                .map_or(-1, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
            self.conn
                .execute(
                    "INSERT OR REPLACE INTO writers VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        guid.to_bytes().to_vec(),
                        s.topic,
                        s.type_objects,
                        s.partitions.join("\u{1f}"),
                        s.reliable,
                        matches!(s.representation, XcdrVersion::Xcdr2) as i64 + 1,
                        depth,
                        i64::from(s.service.resource_limits.max_samples),
                        cleanup,
                    ],
                )
                .map_err(|e| self.err(e))?;
            Ok(())
        }

        pub(super) fn put_change(&self, guid: Guid, sn: i64, k: &Kept) -> Result<(), String> {
            let kind = match k.kind {
                ChangeKind::Alive => 0,
                ChangeKind::Disposed | ChangeKind::DisposedUnregistered => 1,
                ChangeKind::Unregistered => 2,
            };
            self.conn
                .execute(
                    "INSERT OR REPLACE INTO changes VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        guid.to_bytes().to_vec(),
                        sn,
                        kind,
                        k.instance.to_vec(),
                        i64::try_from(k.timestamp).unwrap_or(i64::MAX),
                        k.payload,
                    ],
                )
                .map_err(|e| self.err(e))?;
            Ok(())
        }

        pub(super) fn remove_changes(&self, guid: Guid, sns: &[i64]) -> Result<(), String> {
            for sn in sns {
                self.conn
                    .execute(
                        "DELETE FROM changes WHERE guid = ?1 AND sn = ?2",
                        params![guid.to_bytes().to_vec(), sn],
                    )
                    .map_err(|e| self.err(e))?;
            }
            Ok(())
        }

        /// Every writer kept, with its changes.
        pub(super) fn load(&self) -> Result<Vec<(Guid, Source)>, String> {
            let mut out = Vec::new();
            let mut writers = self
                .conn
                .prepare("SELECT guid, topic, type_objects, partitions, reliable, xcdr, depth, max_samples, cleanup_ns FROM writers")
                .map_err(|e| self.err(e))?;
            let rows = writers
                .query_map([], |r| {
                    Ok((
                        r.get::<_, Vec<u8>>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, bool>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, i64>(6)?,
                        r.get::<_, i64>(7)?,
                        r.get::<_, i64>(8)?,
                    ))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (guid, topic, type_objects, partitions, reliable, xcdr, depth, max, cleanup) =
                    row.map_err(|e| self.err(e))?;
                let Ok(guid) = <[u8; 16]>::try_from(guid.as_slice()) else {
                    continue;
                };
                let guid = Guid::from_bytes(guid);
                let service = DurabilityService {
                    service_cleanup_delay: if cleanup < 0 {
                        QosDuration::INFINITE
                    } else {
                        QosDuration::from_std(std::time::Duration::from_nanos(cleanup as u64))
                    },
                    history: if depth > 0 {
                        History::KeepLast {
                            depth: i32::try_from(depth).unwrap_or(i32::MAX),
                        }
                    } else {
                        History::KeepAll
                    },
                    resource_limits: ferrodds_rtps::qos::ResourceLimits {
                        max_samples: i32::try_from(max).unwrap_or(-1),
                        ..Default::default()
                    },
                };
                let partitions = if partitions.is_empty() {
                    Vec::new()
                } else {
                    partitions.split('\u{1f}').map(str::to_owned).collect()
                };
                let mut source = Source {
                    reliable,
                    durability: Durability::Persistent,
                    representation: if xcdr == 2 {
                        XcdrVersion::Xcdr2
                    } else {
                        XcdrVersion::Xcdr1
                    },
                    service,
                    ..Source::new(topic, type_objects, partitions)
                };
                let mut changes = self
                    .conn
                    .prepare(
                        "SELECT sn, kind, instance, timestamp, payload FROM changes WHERE guid = ?1 ORDER BY sn",
                    )
                    .map_err(|e| self.err(e))?;
                let rows = changes
                    .query_map(params![guid.to_bytes().to_vec()], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, Vec<u8>>(2)?,
                            r.get::<_, i64>(3)?,
                            r.get::<_, Vec<u8>>(4)?,
                        ))
                    })
                    .map_err(|e| self.err(e))?;
                for row in rows {
                    let (sn, kind, instance, timestamp, payload) = row.map_err(|e| self.err(e))?;
                    let Ok(instance) = <[u8; 16]>::try_from(instance.as_slice()) else {
                        continue;
                    };
                    let kind = match kind {
                        0 => ChangeKind::Alive,
                        1 => ChangeKind::Disposed,
                        _ => ChangeKind::Unregistered,
                    };
                    source.changes.insert(
                        sn,
                        Kept {
                            kind,
                            instance,
                            timestamp: u64::try_from(timestamp).unwrap_or(0),
                            payload,
                        },
                    );
                    source
                        .by_instance
                        .entry(instance)
                        .or_default()
                        .push_back(sn);
                    source.highest = source.highest.max(sn);
                }
                out.push((guid, source));
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(service: DurabilityService) -> Source {
        Source {
            service,
            ..Source::new("t".into(), String::new(), Vec::new())
        }
    }

    fn kept(instance: u8, kind: ChangeKind) -> Kept {
        Kept {
            kind,
            instance: [instance; 16],
            timestamp: 0,
            payload: vec![0, 1, 0, 0],
        }
    }

    #[test]
    fn the_service_history_keeps_the_last_per_instance_and_cleanup_forgets_disposed() {
        let mut s = source(DurabilityService::default());
        assert!(s.keep(1, kept(1, ChangeKind::Alive)).is_empty());
        assert!(s.keep(2, kept(2, ChangeKind::Alive)).is_empty());
        assert_eq!(
            s.keep(3, kept(1, ChangeKind::Alive)),
            [1],
            "KEEP_LAST 1 per instance"
        );
        assert_eq!(s.keep(4, kept(2, ChangeKind::Disposed)), [2]);
        assert_eq!(s.changes.keys().copied().collect::<Vec<_>>(), [3, 4]);
        assert_eq!(s.clean_up(), [4], "the disposed instance goes");
        assert_eq!(s.changes.keys().copied().collect::<Vec<_>>(), [3]);

        let mut all = source(DurabilityService {
            history: History::KeepAll,
            resource_limits: ferrodds_rtps::qos::ResourceLimits {
                max_samples: 2,
                ..Default::default()
            },
            ..Default::default()
        });
        for sn in 1..=3 {
            all.keep(sn, kept(1, ChangeKind::Alive));
        }
        assert_eq!(all.changes.keys().copied().collect::<Vec<_>>(), [2, 3]);
    }
}
