//! `ferrodds.core.SampleInfo` and the samples `take`/`read` hand out, made here rather than
//! in Python: a round trip spends its time in the few Python operations per sample between
//! the wake-up and the answer (each one slower with caches cold after a sleep than a
//! micro-benchmark shows), so the list a reader returns is built whole in one native call.

use std::time::UNIX_EPOCH;

use ferrodds::{InstanceHandle, InstanceState, SampleState, ViewState};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// What DDS says about a sample (`sample.sample_info`), with cyclonedds-python's attribute
/// names and state bits.
#[pyclass(module = "ferrodds.core", name = "SampleInfo", frozen, get_all, eq)]
#[derive(Debug, Clone, PartialEq)]
pub struct PySampleInfo {
    sample_state: u32,
    view_state: u32,
    instance_state: u32,
    valid_data: bool,
    /// Nanoseconds since the epoch; None when the writer sent none.
    source_timestamp: Option<i64>,
    instance_handle: u128,
    publication_handle: u128,
}

#[pymethods]
impl PySampleInfo {
    #[new]
    #[pyo3(signature = (sample_state, view_state, instance_state, valid_data,
                        source_timestamp, instance_handle, publication_handle))]
    fn new(
        sample_state: u32,
        view_state: u32,
        instance_state: u32,
        valid_data: bool,
        source_timestamp: Option<i64>,
        instance_handle: u128,
        publication_handle: u128,
    ) -> Self {
        PySampleInfo {
            sample_state,
            view_state,
            instance_state,
            valid_data,
            source_timestamp,
            instance_handle,
            publication_handle,
        }
    }

    fn __repr__(&self) -> String {
        let timestamp = self
            .source_timestamp
            .map_or_else(|| "None".to_owned(), |t| t.to_string());
        format!(
            "SampleInfo(sample_state={}, view_state={}, instance_state={}, valid_data={}, \
             source_timestamp={timestamp}, instance_handle={}, publication_handle={})",
            self.sample_state,
            self.view_state,
            self.instance_state,
            if self.valid_data { "True" } else { "False" },
            self.instance_handle,
            self.publication_handle
        )
    }
}

impl From<&ferrodds::SampleInfo> for PySampleInfo {
    fn from(i: &ferrodds::SampleInfo) -> Self {
        PySampleInfo {
            sample_state: match i.sample_state {
                SampleState::Read => 1,
                SampleState::NotRead => 2,
            },
            view_state: match i.view_state {
                ViewState::New => 4,
                ViewState::NotNew => 8,
            },
            instance_state: match i.instance_state {
                InstanceState::Alive => 16,
                InstanceState::NotAliveDisposed => 32,
                InstanceState::NotAliveNoWriters => 64,
            },
            valid_data: i.valid_data,
            source_timestamp: i
                .source_timestamp
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)),
            instance_handle: handle(i.instance_handle),
            publication_handle: handle(i.publication_handle),
        }
    }
}

/// An instance handle as the integer Python sees.
pub(crate) fn handle(h: InstanceHandle) -> u128 {
    u128::from_be_bytes(h.0)
}

/// `data` as a reader hands it out: the object itself with `sample_info` set when it
/// carries data, else `ferrodds.core.InvalidSample(data, info)` (a dispose or unregister,
/// `data` holding only the key).
pub(crate) fn handed_out<'py>(
    py: Python<'py>,
    data: Bound<'py, PyAny>,
    info: &ferrodds::SampleInfo,
) -> PyResult<Bound<'py, PyAny>> {
    let info = Bound::new(py, PySampleInfo::from(info))?;
    if info.get().valid_data {
        data.setattr(pyo3::intern!(py, "sample_info"), info)?;
        Ok(data)
    } else {
        static INVALID: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        INVALID
            .import(py, "ferrodds.core", "InvalidSample")?
            .call1((data, info))
    }
}
