//! Participants, topics, writers and readers for Python: thin handles on the `ferrodds`
//! crate's untyped entities. Every call that waits, or that moves samples through the
//! network stack, releases the GIL.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferrodds::dynamic::{Bytes, DynamicValue};
use ferrodds::{
    DomainParticipant, DynamicReader, DynamicTopic, DynamicWriter, InstanceHandle, Sample,
    Selection,
};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::error::dds;
use crate::exit::DropReleased;
use crate::sample_info::{handed_out, handle, PySampleInfo};
use crate::TypeSupport;

/// A domain participant.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct Participant {
    inner: DropReleased<DomainParticipant>,
}

#[pymethods]
impl Participant {
    /// Joins domain `domain_id` (configured by `FERRODDS_CONFIG`, as the Rust API is),
    /// announcing `user_data` (USER_DATA).
    #[new]
    #[pyo3(signature = (domain_id, user_data = Vec::new()))]
    fn new(py: Python<'_>, domain_id: u32, user_data: Vec<u8>) -> PyResult<Self> {
        let inner = py
            .detach(|| {
                ferrodds::DomainParticipant::builder()
                    .map(|b| b.domain_id(domain_id).user_data(user_data))
                    .and_then(|b| b.build())
            })
            .map_err(|e| dds("creating the domain participant", e))?;
        Ok(Participant {
            inner: DropReleased::new(inner),
        })
    }

    /// The participant's domain.
    #[getter]
    fn domain_id(&self) -> u32 {
        self.inner.domain_id()
    }

    /// Changes the participant's USER_DATA (announced at once).
    fn set_user_data(&self, py: Python<'_>, user_data: Vec<u8>) -> PyResult<()> {
        py.detach(|| self.inner.set_user_data(user_data))
            .map_err(|e| dds("changing the participant's user data", e))
    }

    /// Waits up to `timeout` seconds for a sample one of `readers` selects, each with its
    /// state mask (a wait set of read conditions), woken only by their data; false on
    /// timeout. The readers must be this participant's.
    fn wait_for_any(
        &self,
        py: Python<'_>,
        readers: Vec<(PyRef<'_, Reader>, u32)>,
        timeout: f64,
    ) -> PyResult<bool> {
        let own = self.inner.guid_prefix();
        let mut set = ferrodds::WaitSet::new(&self.inner);
        for (reader, mask) in &readers {
            if reader.inner.guid().prefix != own {
                return Err(dds(
                    "waiting for data",
                    ferrodds::Error::BadParameter(
                        "a reader of another participant than the wait set's".into(),
                    ),
                ));
            }
            set.attach(ferrodds::Condition::read_selection(
                &reader.inner,
                selection(*mask, None),
            ));
        }
        if readers.is_empty() {
            return Ok(false);
        }
        crate::exit::wait(py, seconds(timeout), |t| set.wait(t).is_ok())
    }

    /// Asserts the liveliness of the participant's MANUAL_BY_PARTICIPANT writers.
    fn assert_liveliness(&self) -> PyResult<()> {
        self.inner
            .assert_liveliness()
            .map_err(|e| dds("asserting liveliness", e))
    }

    /// The participant's GUID prefix as an integer (its instance handle).
    #[getter]
    fn guid(&self) -> u128 {
        u128::from_be_bytes(guid_bytes(&self.inner))
    }

    /// A topic of the type `support` describes.
    fn topic(&self, name: &str, support: Py<TypeSupport>) -> PyResult<Topic> {
        let s = support.get();
        let inner = self
            .inner
            .create_dynamic_topic(name, s.ty.name(), s.ty.clone())
            .map_err(|e| dds(&format!("creating topic {name}"), e))?;
        Ok(Topic {
            inner: DropReleased::new(Arc::new(inner)),
            support,
        })
    }

    /// A publisher with the QoS policies `policies`: its PRESENTATION (coherent sets and
    /// ordered access) is the publisher's; its partition goes with each writer's QoS.
    fn publisher(&self, policies: &Bound<'_, PyAny>) -> PyResult<Publisher> {
        let presentation = crate::qos::apply(ferrodds::Qos::writer(), policies)?
            .policies()
            .presentation;
        Ok(Publisher {
            inner: self
                .inner
                .create_publisher(&[])
                .with_presentation(presentation),
        })
    }

    /// A subscriber with the QoS policies `policies` (see [`Participant::publisher`]).
    fn subscriber(&self, policies: &Bound<'_, PyAny>) -> PyResult<Subscriber> {
        let presentation = crate::qos::apply(ferrodds::Qos::reader(), policies)?
            .policies()
            .presentation;
        Ok(Subscriber {
            inner: self
                .inner
                .create_subscriber(&[])
                .with_presentation(presentation),
        })
    }

    /// A writer of `topic` with the QoS policies `policies` (see `ferrodds/core.py`).
    fn writer(
        &self,
        py: Python<'_>,
        topic: &Topic,
        policies: &Bound<'_, PyAny>,
    ) -> PyResult<Writer> {
        new_writer(py, topic, policies, |t, qos| {
            self.inner.create_dynamic_writer(t, qos)
        })
    }

    /// A reader of `topic` with the QoS policies `policies`.
    fn reader(
        &self,
        py: Python<'_>,
        topic: &Topic,
        policies: &Bound<'_, PyAny>,
    ) -> PyResult<Reader> {
        new_reader(py, topic, policies, |t, qos| {
            self.inner.create_dynamic_reader(t, qos)
        })
    }
}

/// A publisher: coherent sets across its writers.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct Publisher {
    inner: ferrodds::Publisher,
}

#[pymethods]
impl Publisher {
    /// A writer of `topic` in this publisher.
    fn writer(
        &self,
        py: Python<'_>,
        topic: &Topic,
        policies: &Bound<'_, PyAny>,
    ) -> PyResult<Writer> {
        new_writer(py, topic, policies, |t, qos| {
            self.inner.create_dynamic_writer(t, qos)
        })
    }

    /// Changes the publisher's QoS to `policies`: its partition moves the writers it made.
    fn set_qos(&self, py: Python<'_>, policies: &Bound<'_, PyAny>) -> PyResult<()> {
        let qos = crate::qos::apply(ferrodds::Qos::writer(), policies)?;
        py.detach(|| self.inner.set_qos(&qos))
            .map_err(|e| dds("set_qos", e))
    }

    /// `begin_coherent_changes`.
    fn begin_coherent(&self) {
        self.inner.begin_coherent_changes();
    }

    /// `end_coherent_changes`.
    fn end_coherent(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.end_coherent_changes())
            .map_err(|e| dds("ending the coherent set", e))
    }
}

/// A subscriber: `begin_access`/`end_access` over its readers.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct Subscriber {
    inner: ferrodds::Subscriber,
}

#[pymethods]
impl Subscriber {
    /// A reader of `topic` in this subscriber.
    fn reader(
        &self,
        py: Python<'_>,
        topic: &Topic,
        policies: &Bound<'_, PyAny>,
    ) -> PyResult<Reader> {
        new_reader(py, topic, policies, |t, qos| {
            self.inner.create_dynamic_reader(t, qos)
        })
    }

    /// Changes the subscriber's QoS to `policies`: its partition moves the readers it
    /// made.
    fn set_qos(&self, py: Python<'_>, policies: &Bound<'_, PyAny>) -> PyResult<()> {
        let qos = crate::qos::apply(ferrodds::Qos::reader(), policies)?;
        py.detach(|| self.inner.set_qos(&qos))
            .map_err(|e| dds("set_qos", e))
    }

    /// `begin_access`.
    fn begin_access(&self) {
        self.inner.begin_access();
    }

    /// `end_access`.
    fn end_access(&self, py: Python<'_>) {
        py.detach(|| self.inner.end_access());
    }

    /// DCPS `get_datareaders`: the GUIDs (as integers) of its readers, one per sample
    /// held, in the order to read one sample from each.
    fn datareaders(&self, py: Python<'_>) -> Vec<u128> {
        py.detach(|| self.inner.datareaders(ferrodds::Selection::ANY))
            .into_iter()
            .map(|g| u128::from_be_bytes(g.to_bytes()))
            .collect()
    }
}

/// A writer of `topic` with `policies`, made by `create` (a participant's or a
/// publisher's) with the GIL released.
fn new_writer(
    py: Python<'_>,
    topic: &Topic,
    policies: &Bound<'_, PyAny>,
    create: impl FnOnce(&DynamicTopic, ferrodds::Qos) -> ferrodds::Result<DynamicWriter> + Send,
) -> PyResult<Writer> {
    let qos = crate::qos::apply(ferrodds::Qos::writer(), policies)?;
    let inner = py
        .detach(|| create(&topic.inner, qos))
        .map_err(|e| dds("creating the writer", e))?;
    Ok(Writer {
        inner: DropReleased::new(inner),
        support: topic.support.clone_ref(py),
        topic: topic.inner.name().to_owned(),
    })
}

/// A reader of `topic` with `policies`, made by `create` (see [`new_writer`]).
fn new_reader(
    py: Python<'_>,
    topic: &Topic,
    policies: &Bound<'_, PyAny>,
    create: impl FnOnce(&DynamicTopic, ferrodds::Qos) -> ferrodds::Result<DynamicReader> + Send,
) -> PyResult<Reader> {
    let qos = crate::qos::apply(ferrodds::Qos::reader(), policies)?;
    let inner = py
        .detach(|| create(&topic.inner, qos))
        .map_err(|e| dds("creating the reader", e))?;
    Ok(Reader {
        inner: DropReleased::new(inner),
        support: topic.support.clone_ref(py),
    })
}

fn guid_bytes(p: &DomainParticipant) -> [u8; 16] {
    let mut out = [0; 16];
    out[..12].copy_from_slice(&p.guid_prefix().0);
    out[12..].copy_from_slice(&[0, 0, 1, 0xc1]);
    out
}

/// A topic: a name and a type.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct Topic {
    inner: DropReleased<Arc<ferrodds::DynamicTopic>>,
    support: Py<TypeSupport>,
}

#[pymethods]
impl Topic {
    /// The topic's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_owned()
    }

    /// Its type's name.
    #[getter]
    fn type_name(&self) -> String {
        self.support.get().ty.name().to_owned()
    }

    /// Changes the topic's TOPIC_DATA: its writers and readers announce it at once.
    fn set_topic_data(&self, py: Python<'_>, topic_data: Vec<u8>) {
        py.detach(|| self.inner.set_topic_data(topic_data));
    }

    /// A status as counts: `"inconsistent_topic"` → (total,).
    fn status(&self, name: &str) -> PyResult<(u64,)> {
        match name {
            "inconsistent_topic" => Ok((self.inner.inconsistent_topic_status().total_count,)),
            other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "a topic has no status {other:?}"
            ))),
        }
    }

    /// Calls `callback(name)` when a status of the topic changes (INCONSISTENT_TOPIC).
    fn set_status_listener(&self, callback: Py<PyAny>) {
        self.inner.set_listener(move |kind| {
            crate::exit::call_python(|py| {
                if let Err(e) = callback.call1(py, (kind.name(),)) {
                    // A listener that raises must not take the participant's thread down.
                    e.print(py);
                }
            });
        });
    }
}

/// A data writer of dynamic values.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct Writer {
    inner: DropReleased<DynamicWriter>,
    support: Py<TypeSupport>,
    /// Its topic's name, for the message of a write of another type's sample.
    topic: String,
}

#[pymethods]
impl Writer {
    /// Calls `callback(status_name)` (from a FerroDDS thread, holding the GIL) when one of
    /// this entity's statuses changes (`"subscription_matched"`, …).
    fn set_status_listener(&self, callback: Py<PyAny>) {
        self.inner.set_status_listener(move |kind| {
            crate::exit::call_python(|py| {
                if let Err(e) = callback.call1(py, (kind.name(),)) {
                    // A listener that raises must not take the participant's thread down.
                    e.print(py);
                }
            });
        });
    }
    /// Writes `sample`; `timestamp` in nanoseconds since the epoch, or now.
    #[pyo3(signature = (sample, timestamp = None))]
    fn write(
        &self,
        py: Python<'_>,
        sample: &Bound<'_, PyAny>,
        timestamp: Option<i64>,
    ) -> PyResult<()> {
        let value = self.value_of(sample)?;
        let at = timestamp.map(system_time).unwrap_or_else(SystemTime::now);
        crate::exit::released(py, || self.inner.write_with_timestamp(&value, at))?
            .map_err(|e| dds("write", e))
    }

    /// Writes the sample the JSON text `json` describes (the JSON path: the application
    /// hands over text, FerroDDS parses it into the topic's type).
    fn write_json(&self, py: Python<'_>, json: &Bound<'_, PyString>) -> PyResult<()> {
        let json = crate::text::utf8(json)?;
        let ty = &self.support.get().ty;
        // One release of the GIL for both: the text may be long, the write may block.
        crate::exit::released(py, || {
            DynamicValue::from_json_text(ty, json).map(|value| self.inner.write(&value))
        })?
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?
        .map_err(|e| dds("write", e))
    }

    /// Disposes the instance of `sample`.
    fn dispose(&self, py: Python<'_>, sample: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = self.value_of(sample)?;
        crate::exit::released(py, || self.inner.dispose(&value))?.map_err(|e| dds("dispose", e))
    }

    /// Unregisters the instance of `sample`.
    fn unregister(&self, py: Python<'_>, sample: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = self.value_of(sample)?;
        crate::exit::released(py, || self.inner.unregister(&value))?
            .map_err(|e| dds("unregister_instance", e))
    }

    /// Changes the writer's QoS to `policies` (DCPS `set_qos`: only the changeable
    /// policies may differ).
    fn set_qos(&self, py: Python<'_>, policies: &Bound<'_, PyAny>) -> PyResult<()> {
        let qos = crate::qos::apply(ferrodds::Qos::writer(), policies)?;
        py.detach(|| self.inner.set_qos(qos))
            .map_err(|e| dds("set_qos", e))
    }

    /// The instance handle of `sample`'s instance.
    fn instance_handle(&self, sample: &Bound<'_, PyAny>) -> PyResult<u128> {
        let value = self.support.get().value_of(sample)?;
        self.inner
            .instance_handle(&value)
            .map(handle)
            .map_err(|e| dds("lookup_instance", e))
    }

    /// Waits up to `timeout` seconds until every matched reliable reader acknowledged
    /// everything written; false on timeout.
    fn wait_for_acks(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        crate::exit::wait(py, seconds(timeout), |t| {
            self.inner.wait_for_acknowledgments(t).is_ok()
        })
    }

    /// Waits up to `timeout` seconds for `count` matched readers; false on timeout.
    fn wait_for_matched(&self, py: Python<'_>, count: usize, timeout: f64) -> PyResult<bool> {
        crate::exit::wait(py, seconds(timeout), |t| {
            self.inner.wait_for_matched(count, t).is_ok()
        })
    }

    /// The matched readers' GUIDs, as integers.
    fn matched(&self) -> Vec<u128> {
        self.inner
            .matched_subscriptions()
            .iter()
            .map(|g| u128::from_be_bytes(g.to_bytes()))
            .collect()
    }

    /// A status as counts: `"publication_matched"` → (total, current, last reader handle),
    /// `"offered_incompatible_qos"` → (total, last policy id), `"offered_deadline_missed"`
    /// → (total, last instance handle). `ferrodds.pub` turns them into status objects.
    fn status<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(match name {
            "publication_matched" => matched(py, self.inner.publication_matched_status())?,
            "offered_incompatible_qos" => incompatible(py, self.inner.offered_incompatible_qos())?,
            "offered_deadline_missed" => deadline(py, self.inner.offered_deadline_missed())?,
            "liveliness_lost" => (self.inner.liveliness_lost_status().total_count,)
                .into_pyobject(py)?
                .into_any(),
            other => return Err(unknown_status(other)),
        })
    }

    /// Asserts the writer's liveliness (as a write does).
    fn assert_liveliness(&self) -> PyResult<()> {
        self.inner
            .assert_liveliness()
            .map_err(|e| dds("asserting liveliness", e))
    }

    /// Sends what batching holds back.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        crate::exit::released(py, || self.inner.flush())?.map_err(|e| dds("flush", e))
    }
}

impl Writer {
    /// The value of `sample`, a `TypeError` unless it is an instance of the topic's type.
    /// Checked here rather than in `ferrodds.pub`: there it cost every write a Python frame
    /// and three attribute lookups.
    fn value_of(&self, sample: &Bound<'_, PyAny>) -> PyResult<DynamicValue> {
        let support = self.support.get();
        support.check_instance(sample, &self.topic)?;
        support.value_of(sample)
    }
}

/// A data reader of dynamic values.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct Reader {
    inner: DropReleased<DynamicReader>,
    support: Py<TypeSupport>,
}

#[pymethods]
impl Reader {
    /// The reader's GUID as an integer.
    #[getter]
    fn guid(&self) -> u128 {
        u128::from_be_bytes(self.inner.guid().to_bytes())
    }

    /// Changes the reader's QoS to `policies` (DCPS `set_qos`: only the changeable
    /// policies may differ).
    fn set_qos(&self, py: Python<'_>, policies: &Bound<'_, PyAny>) -> PyResult<()> {
        let qos = crate::qos::apply(ferrodds::Qos::reader(), policies)?;
        py.detach(|| self.inner.set_qos(qos))
            .map_err(|e| dds("set_qos", e))
    }

    /// Removes and returns up to `n` of the samples that `mask` (cyclonedds-python's state
    /// bits, all three kinds in one) and `instance` select, as `(sample, info)` pairs, where
    /// `info` is `(sample_state, view_state, instance_state, valid_data,
    /// source_timestamp_ns, instance_handle, publication_handle)`. The others stay.
    ///
    /// With `filter` (a query condition's: `filter(sample) -> bool`), only the selected
    /// samples it keeps are taken; the others stay.
    #[pyo3(signature = (n, mask = ANY_STATE, instance = None, filter = None))]
    fn take<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        mask: u32,
        instance: Option<u128>,
        filter: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.collect(py, n, true, selection(mask, instance), filter.as_ref())
    }

    /// Returns up to `n` of the selected samples without removing them (they, and only
    /// they, become READ).
    #[pyo3(signature = (n, mask = ANY_STATE, instance = None, filter = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        mask: u32,
        instance: Option<u128>,
        filter: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.collect(py, n, false, selection(mask, instance), filter.as_ref())
    }

    /// Removes and returns up to `n` samples as `(json_text, info)` pairs (the JSON path).
    fn take_json<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let ty = &self.support.get().ty;
        // Octets straight from the received payloads into base64 text (no copy of them
        // into the value first); each payload goes back to the reader once its text is made.
        let texts = crate::exit::released(py, || {
            let mut payloads = Vec::new();
            let texts = self
                .inner
                .collect_shared(n, true, Selection::ANY)
                .into_iter()
                .filter_map(|(s, payload)| {
                    let text = s.value().map(|value| value.to_json_text(ty));
                    payloads.extend(payload);
                    Some((text?, s.info))
                })
                .collect::<Vec<_>>();
            // The values are gone: the payloads go back in one call (one lock per take).
            self.inner.return_shared(payloads);
            texts
        })?;
        let out = PyList::empty(py);
        for (text, i) in texts {
            out.append(PyTuple::new(
                py,
                [
                    text.into_pyobject(py)?.into_any(),
                    Bound::new(py, PySampleInfo::from(&i))?.into_any(),
                ],
            )?)?;
        }
        Ok(out)
    }

    /// Whether a sample `mask` selects is waiting that `filter` (a query condition's)
    /// keeps — a sample without data (a dispose) counts, as take hands it out — without
    /// changing any sample's state: a query condition's trigger.
    fn selects(&self, py: Python<'_>, mask: u32, filter: Bound<'_, PyAny>) -> PyResult<bool> {
        let (mut found, mut failed) = (false, None);
        // `None` stops the read with nothing handed out: at the first sample kept, or at
        // an exception.
        let keep = |s: &Sample<DynamicValue>| match self.kept(py, &filter, s) {
            Ok(false) => Some(false),
            Ok(true) => {
                found = true;
                None
            }
            Err(e) => {
                failed = Some(e);
                None
            }
        };
        self.inner
            .read_if(1, selection(mask, None), keep)
            .map_err(|e| dds("read", e))?;
        failed.map_or(Ok(found), Err)
    }

    /// Waits up to `timeout` seconds for a sample `mask` selects (cyclonedds-python's state
    /// bits; by default one not yet read); false on timeout.
    #[pyo3(signature = (timeout, mask = NOT_READ_ANY))]
    fn wait_for_data(&self, py: Python<'_>, timeout: f64, mask: u32) -> PyResult<bool> {
        let selection = selection(mask, None);
        crate::exit::wait(py, seconds(timeout), |t| {
            self.inner.wait_for_selection(selection, t)
        })
    }

    /// `WaitSet.wait` on one read condition of this reader: 1 once a sample `mask` selects
    /// is there, 0 after `timeout` nanoseconds (`None`, or DDS_INFINITY and more: no limit).
    /// The wait set's common case in one call, without converting the timeout in Python.
    #[pyo3(signature = (timeout, mask))]
    fn wait_triggered(&self, py: Python<'_>, timeout: Option<f64>, mask: u32) -> PyResult<u32> {
        let timeout = match timeout {
            Some(ns) if ns < INFINITE_NS => seconds(ns / 1e9),
            _ => seconds(f64::INFINITY),
        };
        let selection = selection(mask, None);
        let triggered =
            crate::exit::wait(py, timeout, |t| self.inner.wait_for_selection(selection, t))?;
        Ok(u32::from(triggered))
    }

    /// Waits up to `timeout` seconds for `count` matched writers; false on timeout.
    fn wait_for_matched(&self, py: Python<'_>, count: usize, timeout: f64) -> PyResult<bool> {
        crate::exit::wait(py, seconds(timeout), |t| {
            self.inner.wait_for_matched(count, t).is_ok()
        })
    }

    /// The matched writers' GUIDs, as integers.
    fn matched(&self) -> Vec<u128> {
        self.inner
            .matched_publications()
            .iter()
            .map(|g| u128::from_be_bytes(g.to_bytes()))
            .collect()
    }

    /// A status as counts: `"subscription_matched"` → (total, current, last writer
    /// handle), `"requested_incompatible_qos"` → (total, last policy id),
    /// `"requested_deadline_missed"` → (total, last instance handle), `"sample_lost"` →
    /// (total,), `"sample_rejected"` → (total, last reason as DCPS numbers it).
    fn status<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(match name {
            "subscription_matched" => matched(py, self.inner.subscription_matched_status())?,
            "requested_incompatible_qos" => {
                incompatible(py, self.inner.requested_incompatible_qos())?
            }
            "requested_deadline_missed" => deadline(py, self.inner.requested_deadline_missed())?,
            "liveliness_changed" => {
                let s = self.inner.liveliness_changed_status();
                let last = s
                    .last_publication
                    .map_or(0, |g| u128::from_be_bytes(g.to_bytes()));
                (s.alive_count, s.not_alive_count, last)
                    .into_pyobject(py)?
                    .into_any()
            }
            "sample_lost" => (self.inner.sample_lost_status().total_count,)
                .into_pyobject(py)?
                .into_any(),
            "sample_rejected" => {
                use ferrodds::SampleRejectedReason as R;
                let s = self.inner.sample_rejected_status();
                // DCPS's SampleRejectedStatusKind; the reasons it has no number for
                // (undecodable, unknown instance) count as NOT_REJECTED's 0.
                let reason = match s.last_reason {
                    Some(R::InstancesLimit) => 1,
                    Some(R::SamplesLimit) => 2,
                    Some(R::SamplesPerInstanceLimit) => 3,
                    _ => 0,
                };
                (s.total_count, reason).into_pyobject(py)?.into_any()
            }
            other => return Err(unknown_status(other)),
        })
    }

    /// Calls `callback()` (from a FerroDDS thread, holding the GIL) when data arrives.
    fn set_data_available(&self, callback: Py<PyAny>) {
        self.inner.set_data_available_listener(move || {
            crate::exit::call_python(|py| {
                if let Err(e) = callback.call0(py) {
                    // A listener that raises must not take the receive thread down.
                    e.print(py);
                }
            });
        });
    }

    /// Calls `callback(status_name)` (from a FerroDDS thread, holding the GIL) when one of
    /// this entity's statuses changes (`"subscription_matched"`, …).
    fn set_status_listener(&self, callback: Py<PyAny>) {
        self.inner.set_status_listener(move |kind| {
            crate::exit::call_python(|py| {
                if let Err(e) = callback.call1(py, (kind.name(),)) {
                    // A listener that raises must not take the participant's thread down.
                    e.print(py);
                }
            });
        });
    }
}

impl Reader {
    /// Reads or takes (`take`) up to `n` of the selected samples, as Python objects. With
    /// `filter`, only those it keeps: that runs with the GIL held (the filter is Python
    /// code), which is safe, as no FerroDDS thread waits for the GIL while it holds the
    /// participant's lock; an exception in it is raised, and then nothing was read or
    /// taken. Without, the GIL is released meanwhile.
    fn collect<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        take: bool,
        selection: Selection,
        filter: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let what = if take { "take" } else { "read" };
        let Some(filter) = filter else {
            // The samples' octets are views into the received payloads: `to_python` copies
            // them once, into the `bytes` it makes, and gives each payload back to the
            // reader as soon as its sample is made, to receive the next samples into.
            let samples =
                crate::exit::released(py, || self.inner.collect_shared(n, take, selection))?;
            return self.to_python(py, samples);
        };
        let mut failed = None;
        let keep = |s: &Sample<DynamicValue>| match self.kept(py, filter, s) {
            Ok(v) => Some(v),
            // Nothing is handed out: the exception is raised with every sample left.
            Err(e) => {
                failed = Some(e);
                None
            }
        };
        let samples = if take {
            self.inner.take_if(n, selection, keep)
        } else {
            self.inner.read_if(n, selection, keep)
        }
        .map_err(|e| dds(what, e))?;
        match failed {
            Some(e) => Err(e),
            None => self.to_python(py, samples.into_iter().map(|s| (s, None)).collect()),
        }
    }

    /// Whether a query condition's `filter` keeps `s`. A sample without data (a dispose)
    /// has nothing for the filter to judge: it reports its instance's state, and is kept.
    fn kept(
        &self,
        py: Python<'_>,
        filter: &Bound<'_, PyAny>,
        s: &Sample<DynamicValue>,
    ) -> PyResult<bool> {
        let Some(data) = &s.data else {
            return Ok(true);
        };
        self.support
            .get()
            .object_of(py, data)
            .and_then(|obj| filter.call1((obj,)))
            .and_then(|v| v.is_truthy())
    }

    /// The samples as `take`/`read` return them (see [`handed_out`]). The payloads the
    /// samples' octets are views into go back to the reader once the objects are made, to
    /// receive the next samples into.
    fn to_python<'py>(
        &self,
        py: Python<'py>,
        samples: Vec<(Sample<DynamicValue>, Option<Bytes>)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let support = self.support.get();
        crate::heap::expect_churn(
            samples
                .iter()
                .filter_map(|(_, p)| p.as_ref().map(Bytes::len))
                .sum(),
        );
        let out = PyList::empty(py);
        let mut payloads = Vec::with_capacity(samples.len());
        for (s, payload) in samples {
            // A sample without data is handed out with its key (an InvalidSample).
            if let Some(value) = s.value() {
                out.append(handed_out(py, support.object_of(py, value)?, &s.info)?)?;
            }
            payloads.extend(payload);
        }
        // Every value is dropped by now: the payloads go back in one call (one lock per
        // take); the reader hands them to its receiving thread at its next take.
        self.inner.return_shared(payloads);
        Ok(out)
    }
}

/// (total, current, last remote's handle) of a *_MATCHED status.
fn matched(py: Python<'_>, s: ferrodds::MatchedStatus) -> PyResult<Bound<'_, PyAny>> {
    let last = s
        .last_remote
        .map_or(0, |g| u128::from_be_bytes(g.to_bytes()));
    Ok((s.total_count, s.current_count, last)
        .into_pyobject(py)?
        .into_any())
}

/// (total, last policy id) of an *_INCOMPATIBLE_QOS status.
fn incompatible(py: Python<'_>, s: ferrodds::IncompatibleStatus) -> PyResult<Bound<'_, PyAny>> {
    let policy = s.last_policy.map_or(0, |p| p as u32);
    Ok((s.total_count, policy).into_pyobject(py)?.into_any())
}

/// (total, last instance handle) of a *_DEADLINE_MISSED status.
fn deadline(py: Python<'_>, s: ferrodds::DeadlineMissedStatus) -> PyResult<Bound<'_, PyAny>> {
    Ok((s.total_count, handle(s.last_instance_handle))
        .into_pyobject(py)?
        .into_any())
}

fn unknown_status(name: &str) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("no status {name:?}"))
}

/// Every state, in cyclonedds-python's bits: sample states 1 and 2, view states 4 and 8,
/// instance states 16, 32 and 64.
const ANY_STATE: u32 = 0x7f;

/// Samples not read yet, of any view and instance state.
const NOT_READ_ANY: u32 = 0x2;

/// The selection a cyclonedds-python state mask and instance handle make. A kind with no
/// bit in `mask` selects every state of that kind, as Cyclone's masks do.
fn selection(mask: u32, instance: Option<u128>) -> Selection {
    let or_any = |bits: u32, all: u32| if bits == 0 { all } else { bits };
    Selection {
        sample_states: or_any(mask & 0x3, 0x3),
        view_states: or_any((mask >> 2) & 0x3, 0x3),
        instance_states: or_any((mask >> 4) & 0x7, 0x7),
        instance: instance.map(|h| InstanceHandle(h.to_be_bytes())),
    }
}

fn system_time(ns: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(u64::try_from(ns).unwrap_or(0))
}

/// DDS_INFINITY, in nanoseconds: a timeout this long or longer has no limit.
const INFINITE_NS: f64 = i64::MAX as f64;

/// Seconds from Python (cyclonedds-python's timeouts are nanoseconds; `ferrodds` converts
/// them before calling in), bounded so that a huge or negative one cannot overflow.
fn seconds(s: f64) -> Duration {
    if s.is_finite() && s > 0.0 {
        Duration::from_secs_f64(s.min(1e9))
    } else if s > 0.0 {
        Duration::from_secs(1_000_000_000)
    } else {
        Duration::ZERO
    }
}
