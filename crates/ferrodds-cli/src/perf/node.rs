//! The entities every `ferrodds perf` process has, as every ddsperf process has them, so
//! that ddsperf sees all the endpoints it expects of a peer:
//!
//! | endpoint | topic | partition | QoS |
//! |---|---|---|---|
//! | ping writer, ping reader | `DDSPerf{R,U}Ping<T>` | default | KEEP_LAST 1 |
//! | pong reader | `DDSPerf{R,U}Pong<T>` | our participant's GUID | as data |
//! | a pong writer per remote participant | `DDSPerf{R,U}Pong<T>` | its GUID | KEEP_LAST 1 |
//! | data writer (always), data reader (`sub`) | `DDSPerf{R,U}Data<T>` | default | KEEP_ALL (or `-k N`), max_samples 10000 |
//!
//! R and RELIABLE (max blocking time 10 s) unless `--best-effort`, then U and BEST_EFFORT.
//! A GUID as a partition name is ddsperf's `make_guidstr`: the 16 GUID bytes in hex, in four
//! groups of four joined by `_` (`0110be73_1463bca5_56fa4261_000001c1`).
//!
//! Every mode answers pings, as ddsperf does: a ping is written back unchanged on the pong
//! writer of the pinging participant with the ping's source timestamp, its lowest bit set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferrodds::{DataReader, DataWriter, DomainParticipant, PublishMode, Qos, SampleInfo, Topic};

use super::types::PerfSample;
use super::user_data::ddsperf_user_data;
use super::{History, Settings, TransportChoice, Trigger};

/// ddsperf's topics' max blocking time (`dds_qset_reliability (…, DDS_SECS (10))`).
const MAX_BLOCKING: Duration = Duration::from_secs(10);

/// ddsperf's data reader and writer resource limit.
const MAX_SAMPLES: u32 = 10_000;
/// How long `pub --batch` lets a sample wait for others to share its datagram.
const BATCH_DELAY: Duration = Duration::from_millis(1);

/// The partition name ddsperf derives from a participant's GUID prefix.
pub(crate) fn guid_partition(prefix: [u8; 12]) -> String {
    let mut bytes = [0u8; 16];
    bytes[..12].copy_from_slice(&prefix);
    bytes[12..].copy_from_slice(&[0x00, 0x00, 0x01, 0xc1]);
    let hex: Vec<String> = bytes
        .chunks(4)
        .map(|c| c.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    hex.join("_")
}

/// The GUID prefix of the participant that wrote a sample.
pub(crate) fn writer_prefix(info: &SampleInfo) -> [u8; 12] {
    let mut p = [0u8; 12];
    p.copy_from_slice(&info.publication_handle.0[..12]);
    p
}

/// A sample's source timestamp in nanoseconds since the epoch, exactly as its writer meant
/// it: ddsperf keeps a flag in the lowest bit, and RTPS time conversion (Cyclone DDS's and
/// `ferrodds_rtps::wire::Time`'s: up when encoding, to nearest when decoding) keeps every
/// nanosecond.
pub(crate) fn source_nanos(info: &SampleInfo) -> Option<u64> {
    let t = info.source_timestamp?;
    u64::try_from(t.duration_since(UNIX_EPOCH).ok()?.as_nanos()).ok()
}

/// Now, in nanoseconds since the epoch.
pub(crate) fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A system time from nanoseconds since the epoch.
pub(crate) fn system_time(ns: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(ns)
}

/// Reliability as asked, and (as ddsperf sets DDS_IGNORELOCAL_PARTICIPANT) no match with
/// the node's own endpoints: its pings do not come back to its own ping reader.
fn reliability(qos: Qos, reliable: bool) -> Qos {
    let qos = qos.ignore_local();
    if reliable {
        qos.reliable().max_blocking_time(MAX_BLOCKING)
    } else {
        qos.best_effort().max_blocking_time(MAX_BLOCKING)
    }
}

fn with_history(qos: Qos, history: History) -> Qos {
    match history {
        History::KeepAll => qos.keep_all(),
        History::KeepLast(n) => qos.keep_last(n),
    }
}

/// The pong writers, one per remote participant, created when it is discovered (or when
/// it first pings).
pub(crate) struct PongWriters<T> {
    participant: DomainParticipant,
    /// Our own GUID prefix: we do not answer ourselves.
    own: [u8; 12],
    topic: Topic<T>,
    reliable: bool,
    writers: Mutex<HashMap<[u8; 12], DataWriter<T>>>,
}

impl<T: PerfSample> PongWriters<T> {
    /// The writer for `prefix`'s pongs, created if needed; `None` for ourselves.
    pub(crate) fn get(&self, prefix: [u8; 12]) -> Option<DataWriter<T>> {
        if prefix == self.own {
            return None;
        }
        if let Some(w) = self.lock().get(&prefix) {
            return Some(w.clone());
        }
        // Created without our lock held: creating an entity may run listeners (ours too),
        // which take this lock.
        let partition = guid_partition(prefix);
        let writer = self
            .participant
            .create_publisher(&[partition.as_str()])
            .create_writer(
                &self.topic,
                reliability(Qos::writer(), self.reliable).keep_last(1),
            )
            .ok()?;
        Some(self.lock().entry(prefix).or_insert(writer).clone())
    }

    /// Creates the writers of participants discovered since the last call.
    pub(crate) fn refresh(&self) -> usize {
        let discovered = self.participant.discovered_participants();
        let mut created = 0;
        for p in discovered {
            if !self.lock().contains_key(&p.0) && self.get(p.0).is_some() {
                created += 1;
            }
        }
        created
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 12], DataWriter<T>>> {
        self.writers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A perf process's participant and endpoints.
pub(crate) struct Node<T> {
    pub(crate) ping_writer: DataWriter<T>,
    pub(crate) ping_reader: DataReader<T>,
    pub(crate) pong_reader: DataReader<T>,
    pub(crate) pong_writers: Arc<PongWriters<T>>,
    pub(crate) data_writer: DataWriter<T>,
    pub(crate) data_reader: Option<DataReader<T>>,
    /// Pings answered so far.
    pub(crate) pings_answered: Arc<AtomicU64>,
    /// Our participant's GUID prefix.
    pub(crate) own: [u8; 12],
}

impl<T: PerfSample> Node<T> {
    /// The datagrams each transport sent (in the summaries: which way the data went).
    pub(crate) fn datagrams(&self) -> serde_json::Value {
        datagrams(&self.pong_writers.participant)
    }

    /// Creates the participant and every endpoint; `with_data_reader` for `sub`.
    pub(crate) fn new(settings: &Settings, with_data_reader: bool) -> Result<Self, String> {
        // ddsperf recognises its peers by the participant's USER_DATA.
        let participant = participant(settings, ddsperf_user_data(with_data_reader))?;
        if settings.transport == TransportChoice::Shm
            && !participant
                .datagrams_by_transport()
                .iter()
                .any(|(name, _)| *name == "shared-memory")
        {
            return Err("--transport shm: shared memory is not available here".into());
        }
        let r = if settings.reliable { 'R' } else { 'U' };
        let topic = |kind: &str| {
            participant
                .create_topic::<T>(&format!("DDSPerf{r}{kind}{}", T::SUFFIX))
                .map_err(|e| e.to_string())
        };
        let (data_topic, ping_topic, pong_topic) = (topic("Data")?, topic("Ping")?, topic("Pong")?);

        let ping_qos = |q: Qos| reliability(q, settings.reliable).keep_last(1);
        let data_qos = |q: Qos| {
            with_history(reliability(q, settings.reliable), settings.history)
                .max_samples(MAX_SAMPLES)
        };
        let e = |e: ferrodds::Error| e.to_string();
        let ping_reader = participant
            .create_reader(&ping_topic, ping_qos(Qos::reader()))
            .map_err(e)?;
        let ping_writer = participant
            .create_writer(&ping_topic, ping_qos(Qos::writer()))
            .map_err(e)?;
        let data_reader = if with_data_reader {
            Some(
                participant
                    .create_reader(&data_topic, data_qos(Qos::reader()))
                    .map_err(e)?,
            )
        } else {
            None
        };
        let mut writer_qos = data_qos(Qos::writer());
        if settings.batch {
            writer_qos = writer_qos.batching(BATCH_DELAY);
        }
        if settings.asynchronous {
            writer_qos = writer_qos.publish_mode(PublishMode::Asynchronous);
        }
        let data_writer = participant
            .create_writer(&data_topic, writer_qos)
            .map_err(e)?;
        let own = guid_partition(participant.guid_prefix().0);
        let pong_reader = participant
            .create_subscriber(&[own.as_str()])
            .create_reader(&pong_topic, data_qos(Qos::reader()))
            .map_err(e)?;
        let pong_writers = Arc::new(PongWriters {
            participant: participant.clone(),
            own: participant.guid_prefix().0,
            topic: pong_topic,
            reliable: settings.reliable,
            writers: Mutex::new(HashMap::new()),
        });
        let node = Node {
            ping_writer,
            ping_reader,
            pong_reader,
            pong_writers,
            data_writer,
            data_reader,
            pings_answered: Arc::new(AtomicU64::new(0)),
            own: participant.guid_prefix().0,
        };
        node.start_answering_pings(settings.trigger);
        node.maintain();
        Ok(node)
    }

    /// Answers pings from now on, in a listener or a thread of its own.
    ///
    /// Our own ping writer does not match our own ping reader (`Qos::ignore_local`, as
    /// ddsperf sets `DDS_IGNORELOCAL_PARTICIPANT`); a ping of our own is still dropped here
    /// should one come (from a ddsperf-like peer that echoes, say).
    fn start_answering_pings(&self, trigger: Trigger) {
        let own = self.own;
        let reader = self.ping_reader.clone();
        let writers = Arc::clone(&self.pong_writers);
        let answered = Arc::clone(&self.pings_answered);
        let answer = move || {
            let Ok(samples) = reader.take() else { return };
            for s in samples {
                let from = writer_prefix(&s.info);
                let Some(data) = s.data.as_ref().filter(|_| from != own) else {
                    continue;
                };
                let Some(writer) = writers.get(from) else {
                    continue;
                };
                let ts = source_nanos(&s.info).unwrap_or_else(now_nanos) | 1;
                if writer.write_with_timestamp(data, system_time(ts)).is_ok() {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        match trigger {
            Trigger::Listener => self.ping_reader.set_data_available_listener(answer),
            Trigger::Waitset => {
                let reader = self.ping_reader.clone();
                std::thread::spawn(move || loop {
                    if reader.wait_for_data(Duration::from_millis(100)) {
                        answer();
                    }
                });
            }
        }
    }

    /// Called about every 100 ms: creates pong writers for new participants.
    pub(crate) fn maintain(&self) {
        self.pong_writers.refresh();
    }

    /// The GUID prefixes of the peers that can answer our pings: their ping reader matched
    /// our ping writer and their pong writer matched our pong reader.
    pub(crate) fn ready_peers(&self) -> Vec<[u8; 12]> {
        let readers: Vec<[u8; 12]> = self
            .ping_writer
            .matched_subscriptions()
            .into_iter()
            .map(|g| g.prefix.0)
            .collect();
        let mut ready: Vec<[u8; 12]> = self
            .pong_reader
            .matched_publications()
            .into_iter()
            .map(|g| g.prefix.0)
            .filter(|p| *p != self.own && readers.contains(p))
            .collect();
        ready.sort_unstable();
        ready.dedup();
        ready
    }

    /// Removes the listeners (they hold handles to the readers, which would otherwise
    /// keep the participant alive).
    pub(crate) fn close(&self) {
        self.ping_reader.set_data_available_listener(|| {});
        self.pong_reader.set_data_available_listener(|| {});
        if let Some(r) = &self.data_reader {
            r.set_data_available_listener(|| {});
        }
    }
}

/// The datagrams `participant` sent, by transport, as the summaries give them.
pub(crate) fn datagrams(participant: &DomainParticipant) -> serde_json::Value {
    serde_json::Value::Object(
        participant
            .datagrams_by_transport()
            .into_iter()
            .map(|(name, n)| (name.to_owned(), n.into()))
            .collect(),
    )
}

/// A participant as the common options say (domain, interface, busy-poll, transport),
/// announcing `user_data`.
pub(crate) fn participant(
    settings: &Settings,
    user_data: Vec<u8>,
) -> Result<DomainParticipant, String> {
    let mut builder = DomainParticipant::builder()
        .map_err(|e| e.to_string())?
        .domain_id(settings.domain)
        .busy_poll(settings.busy_poll)
        .user_data(user_data);
    if let Some(interface) = &settings.interface {
        builder = builder.interface(interface).map_err(|e| e.to_string())?;
    }
    match settings.transport {
        TransportChoice::Auto => {}
        TransportChoice::Udp => builder = builder.in_process(false).shared_memory(false),
        TransportChoice::Shm => builder = builder.shared_memory(true),
    }
    builder.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_are_ddsperfs_guid_strings() {
        // From cyclone_pingpong.pcap: the pong writer of 011010f3… for 0110be73….
        let prefix = [
            0x01, 0x10, 0xbe, 0x73, 0x14, 0x63, 0xbc, 0xa5, 0x56, 0xfa, 0x42, 0x61,
        ];
        assert_eq!(
            guid_partition(prefix),
            "0110be73_1463bca5_56fa4261_000001c1"
        );
    }
}
