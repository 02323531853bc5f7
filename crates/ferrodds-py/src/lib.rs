//! `ferrodds._native`: the Rust under the `ferrodds` Python package.
//!
//! The Python modules (`python/ferrodds/`) give cyclonedds-python's API; this module holds
//! what they stand on: a Python class as a runtime type ([`TypeSupport`]), serialization in
//! Rust, and the untyped writers and readers of the `ferrodds` crate. Calls that block or
//! move samples release the GIL.

mod convert;
mod entities;
mod error;
mod exit;
mod heap;
mod qos;
mod sample_info;
mod text;
mod types;

use std::sync::Arc;

use ferrodds::dynamic::{self, DynamicType, DynamicValue};
use ferrodds::ferrodds_cdr::{Endianness, XcdrVersion};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::types::Node;

/// A Python class made a runtime type: the codec's type and the Python view beside it.
#[pyclass(module = "ferrodds._native", frozen)]
pub struct TypeSupport {
    pub(crate) ty: DynamicType,
    pub(crate) node: Arc<Node>,
}

impl TypeSupport {
    pub(crate) fn value_of(&self, obj: &Bound<'_, PyAny>) -> PyResult<DynamicValue> {
        Ok(convert::to_value(&self.ty, &self.node, obj)?)
    }

    /// A `TypeError` unless `obj` is an instance of the type's class (a sample of another
    /// type with the same attributes would otherwise be written as this one).
    pub(crate) fn check_instance(&self, obj: &Bound<'_, PyAny>, topic: &str) -> PyResult<()> {
        let class = match &*self.node {
            Node::Struct(n) => &n.class,
            Node::Union(n) => &n.class,
            _ => return Ok(()),
        };
        let class = class.bind(obj.py());
        if obj.is_instance(class)? {
            return Ok(());
        }
        let name = |o: &Bound<'_, PyAny>| -> PyResult<String> {
            o.getattr(pyo3::intern!(o.py(), "__name__"))?
                .extract::<String>()
        };
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{} is not {}, the type of topic '{topic}'",
            name(&obj.get_type().into_any())?,
            name(class)?
        )))
    }

    pub(crate) fn object_of<'py>(
        &self,
        py: Python<'py>,
        value: &DynamicValue,
    ) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &self.ty, &self.node, value)
    }
}

#[pymethods]
impl TypeSupport {
    /// Builds the runtime type of a description made by `ferrodds.idl`.
    #[new]
    fn new(description: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (ty, node) = types::build(description)?;
        Ok(TypeSupport {
            ty,
            node: Arc::new(node),
        })
    }

    /// The type's name (`module::Name`).
    #[getter]
    fn type_name(&self) -> String {
        self.ty.name().to_owned()
    }

    /// Whether the type has key members.
    #[getter]
    fn keyed(&self) -> bool {
        match &self.ty {
            DynamicType::Struct(s) => s.members.iter().any(|m| m.key),
            _ => false,
        }
    }

    /// The sample `obj` serialized with its encapsulation header.
    #[pyo3(signature = (obj, use_version_2, little_endian = true))]
    fn serialize<'py>(
        &self,
        py: Python<'py>,
        obj: &Bound<'py, PyAny>,
        use_version_2: bool,
        little_endian: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let value = self.value_of(obj)?;
        let version = if use_version_2 {
            XcdrVersion::Xcdr2
        } else {
            XcdrVersion::Xcdr1
        };
        let endianness = if little_endian {
            Endianness::Little
        } else {
            Endianness::Big
        };
        let bytes = dynamic::serialize(&self.ty, &value, version, endianness)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The sample in `data` (with its encapsulation header).
    fn deserialize<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let value = dynamic::deserialize(&self.ty, data)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        self.object_of(py, &value)
    }

    /// The sample as JSON (the JSON view FerroDDS's tools print).
    fn to_json(&self, obj: &Bound<'_, PyAny>) -> PyResult<String> {
        let value = self.value_of(obj)?;
        Ok(value.to_json_text(&self.ty))
    }

    /// The sample that the JSON text `text` describes.
    fn parse_json<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'_, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let value = DynamicValue::from_json_text(&self.ty, text::utf8(text)?)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        self.object_of(py, &value)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TypeSupport>()?;
    m.add_class::<entities::Participant>()?;
    m.add_class::<entities::Topic>()?;
    m.add_class::<entities::Writer>()?;
    m.add_class::<entities::Publisher>()?;
    m.add_class::<entities::Subscriber>()?;
    m.add_class::<entities::Reader>()?;
    m.add_class::<sample_info::PySampleInfo>()?;
    m.add("DDSException", m.py().get_type::<error::DDSException>())?;
    m.add_function(wrap_pyfunction!(exit::at_exit, m)?)?;
    Ok(())
}
