//! `DataReader<T>`: takes samples of type `T`, decoding them in the caller's thread.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ferrodds_cdr::{key_hash, Cdr, Decoder, EncapsulationHeader, XcdrVersion};
use ferrodds_rtps::discovery_engine::EndpointKind;
use ferrodds_rtps::wire::{EntityId, Guid};
use ferrodds_rtps::{LocalEndpoint, Reader, ReaderConfig};

use crate::cache::{CacheLimits, ReaderCache, Taken};
use crate::error::{Error, Result};
use crate::participant::{DomainParticipant, Topic};
use crate::qos::Qos;
use crate::runtime::{Callback, IncompatibleStatus, ReaderState};
use crate::sample::{InstanceHandle, SampleInfo};

/// A sample and what the reader knows about it. When `info.valid_data` is false the
/// sample only reports an instance state change and `data` holds just its key (the other
/// members at their defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<T> {
    /// The data.
    pub data: T,
    /// Its sample info.
    pub info: SampleInfo,
}

/// Reads samples of type `T` from a topic.
pub struct DataReader<T> {
    inner: Arc<ReaderInner>,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for DataReader<T> {
    fn clone(&self) -> Self {
        DataReader {
            inner: Arc::clone(&self.inner),
            _type: PhantomData,
        }
    }
}

pub(crate) struct ReaderInner {
    pub(crate) participant: DomainParticipant,
    pub(crate) entity_id: EntityId,
    guid: Guid,
}

impl Drop for ReaderInner {
    fn drop(&mut self) {
        let shared = &self.participant.inner.shared;
        let now = shared.now();
        let mut core = shared.lock();
        let crate::runtime::Core {
            discovery, rtps, ..
        } = &mut *core;
        discovery.remove_local(now, self.guid, rtps);
        rtps.remove_reader(self.entity_id);
        core.readers.remove(&self.entity_id);
        core.collect_transmits();
        shared.finish(core);
    }
}

/// The instance of a received payload: the key hash computed from its key (XCDR2 rules,
/// so instances agree whatever representation or key hash a writer used).
fn key_of<T: Cdr>(payload: &[u8], key_only: bool) -> Option<InstanceHandle> {
    if !T::IS_KEYED {
        return Some(InstanceHandle::NIL);
    }
    let value = decode::<T>(payload, key_only).ok()?;
    key_hash(&value, XcdrVersion::Xcdr2)
        .ok()
        .map(|k| InstanceHandle(k.0))
}

fn decode<T: Cdr>(payload: &[u8], key_only: bool) -> Result<T> {
    if !key_only {
        return Ok(ferrodds_cdr::deserialize(payload)?);
    }
    let header = EncapsulationHeader::parse(payload)?;
    let body = payload.get(EncapsulationHeader::LEN..).unwrap_or_default();
    let mut d = Decoder::new(body, header.id.version(), header.id.endianness());
    Ok(T::decode_key_sample(&mut d)?)
}

impl<T: Cdr> DataReader<T> {
    pub(crate) fn new(participant: &DomainParticipant, topic: &Topic<T>, qos: Qos) -> Result<Self> {
        let shared = &participant.inner.shared;
        let now = shared.now();
        let mut core = shared.lock();
        let entity_id = core.next_entity_id(if T::IS_KEYED { 0x07 } else { 0x04 });
        let guid = Guid::new(core.rtps.prefix(), entity_id);
        core.rtps.add_reader(Reader::new(
            guid,
            ReaderConfig {
                reliable: qos.is_reliable(),
                ..ReaderConfig::default()
            },
        ));
        let limits = CacheLimits {
            depth: qos.depth(),
            max_samples: qos.sample_limit(usize::MAX),
        };
        core.readers.insert(
            entity_id,
            ReaderState {
                cache: ReaderCache::new(limits),
                key_of: key_of::<T>,
                matched: Default::default(),
                matched_changes: 0,
                incompatible: Default::default(),
                wakers: Vec::new(),
                on_data: None,
                data_pending: false,
            },
        );
        let endpoint = LocalEndpoint {
            guid,
            kind: EndpointKind::Reader,
            topic_name: topic.name.clone(),
            type_name: topic.type_name.clone(),
            qos: qos.policies.clone(),
            keyed: T::IS_KEYED,
        };
        let crate::runtime::Core {
            discovery, rtps, ..
        } = &mut *core;
        discovery.add_local(now, endpoint, rtps);
        core.collect_transmits();
        shared.finish(core);
        Ok(DataReader {
            inner: Arc::new(ReaderInner {
                participant: participant.clone(),
                entity_id,
                guid,
            }),
            _type: PhantomData,
        })
    }

    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.inner.guid
    }

    fn collect(&self, max: usize, take: bool, unread_only: bool) -> Vec<Taken> {
        let mut core = self.inner.participant.inner.shared.lock();
        core.readers
            .get_mut(&self.inner.entity_id)
            .map(|r| r.cache.collect(max, take, unread_only))
            .unwrap_or_default()
    }

    fn decode_all(taken: Vec<Taken>) -> Result<Vec<Sample<T>>> {
        taken
            .into_iter()
            .map(|t| {
                Ok(Sample {
                    data: decode::<T>(&t.stored.payload, t.stored.key_only)?,
                    info: t.info,
                })
            })
            .collect()
    }

    /// Removes and returns every sample waiting, oldest first.
    pub fn take(&self) -> Result<Vec<Sample<T>>> {
        Self::decode_all(self.collect(usize::MAX, true, false))
    }

    /// Removes and returns up to `max` samples.
    pub fn take_max(&self, max: usize) -> Result<Vec<Sample<T>>> {
        Self::decode_all(self.collect(max, true, false))
    }

    /// Returns every sample waiting without removing them (they become READ).
    pub fn read(&self) -> Result<Vec<Sample<T>>> {
        Self::decode_all(self.collect(usize::MAX, false, false))
    }

    /// Returns the samples not read before, without removing them.
    pub fn read_unread(&self) -> Result<Vec<Sample<T>>> {
        Self::decode_all(self.collect(usize::MAX, false, true))
    }

    /// Waits until a sample not yet read is waiting; false on timeout.
    pub fn wait_for_data(&self, timeout: Duration) -> bool {
        let id = self.inner.entity_id;
        self.inner
            .participant
            .inner
            .shared
            .wait_until(timeout, |core| {
                core.readers.get(&id).is_some_and(|r| r.cache.has_unread())
            })
    }

    /// Waits until at least `count` writers are matched.
    pub fn wait_for_matched(&self, count: usize, timeout: Duration) -> Result<()> {
        let id = self.inner.entity_id;
        if self
            .inner
            .participant
            .inner
            .shared
            .wait_until(timeout, |core| {
                core.readers
                    .get(&id)
                    .is_some_and(|r| r.matched.len() >= count)
            })
        {
            Ok(())
        } else {
            Err(Error::Timeout(timeout, "not enough writers matched"))
        }
    }

    /// The writers matched now.
    pub fn matched_publications(&self) -> Vec<Guid> {
        let core = self.inner.participant.inner.shared.lock();
        core.readers
            .get(&self.inner.entity_id)
            .map(|r| r.matched.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The REQUESTED_INCOMPATIBLE_QOS status.
    pub fn requested_incompatible_qos(&self) -> IncompatibleStatus {
        let core = self.inner.participant.inner.shared.lock();
        core.readers
            .get(&self.inner.entity_id)
            .map(|r| r.incompatible.clone())
            .unwrap_or_default()
    }

    /// Calls `f` (from a participant thread, without locks held) whenever samples arrive:
    /// DCPS's `on_data_available`.
    pub fn set_data_available_listener(&self, f: impl Fn() + Send + Sync + 'static) {
        let callback: Callback = Arc::new(f);
        let mut core = self.inner.participant.inner.shared.lock();
        if let Some(r) = core.readers.get_mut(&self.inner.entity_id) {
            r.on_data = Some(callback);
        }
    }

    /// A future that resolves to the samples waiting once there is at least one. It needs
    /// no particular executor: the participant's threads wake it.
    pub fn take_async(&self) -> TakeFuture<T> {
        TakeFuture {
            reader: self.clone(),
        }
    }

    pub(crate) fn entity_id(&self) -> EntityId {
        self.inner.entity_id
    }

    pub(crate) fn participant(&self) -> &DomainParticipant {
        &self.inner.participant
    }
}

/// The future of [`DataReader::take_async`].
pub struct TakeFuture<T> {
    reader: DataReader<T>,
}

impl<T: Cdr> Future for TakeFuture<T> {
    type Output = Result<Vec<Sample<T>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let taken = {
            let mut core = self.reader.inner.participant.inner.shared.lock();
            if core.closed {
                return Poll::Ready(Err(Error::Closed));
            }
            let Some(r) = core.readers.get_mut(&self.reader.inner.entity_id) else {
                return Poll::Ready(Err(Error::Closed));
            };
            if r.cache.len() == 0 {
                r.wakers.push(cx.waker().clone());
                return Poll::Pending;
            }
            r.cache.collect(usize::MAX, true, false)
        };
        Poll::Ready(DataReader::<T>::decode_all(taken))
    }
}
