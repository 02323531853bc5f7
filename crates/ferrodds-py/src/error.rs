//! Errors, and how each becomes a Python exception.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    DDSException,
    pyo3::exceptions::PyException,
    "An operation of FerroDDS failed (cyclonedds-python's DDSException)."
);

/// A type description `ferrodds.idl` made that cannot become a runtime type.
#[derive(Debug)]
pub(crate) enum TypeError {
    /// Not the shape `_describe.py` writes.
    Malformed(String),
    /// A kind of type this version does not know.
    UnknownKind(String),
    /// Not final, appendable or mutable.
    UnknownExtensibility(String),
    /// Nested deeper than the limit (a type that contains itself?).
    TooDeep,
    /// In a member or branch.
    InMember(String, Box<TypeError>),
    /// Python raised while the description was read.
    Python(PyErr),
}

impl std::fmt::Display for TypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TypeError::Malformed(what) => write!(f, "malformed type description: {what}"),
            TypeError::UnknownKind(kind) => write!(f, "unknown kind of type {kind:?}"),
            TypeError::UnknownExtensibility(e) => write!(
                f,
                "unknown extensibility {e:?} (final, appendable or mutable)"
            ),
            TypeError::TooDeep => write!(f, "type nested too deeply (does it contain itself?)"),
            TypeError::InMember(name, inner) => write!(f, "member {name}: {inner}"),
            TypeError::Python(e) => write!(f, "{e}"),
        }
    }
}

impl From<PyErr> for TypeError {
    fn from(e: PyErr) -> Self {
        TypeError::Python(e)
    }
}

impl From<TypeError> for PyErr {
    fn from(e: TypeError) -> Self {
        PyTypeError::new_err(e.to_string())
    }
}

/// A Python value that does not fit its member's type; `path` says where in the sample
/// (`pose.position.x`, `points[3]`).
#[derive(Debug)]
pub(crate) struct ValueError {
    pub(crate) path: Vec<String>,
    pub(crate) message: String,
}

impl ValueError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ValueError {
            path: Vec::new(),
            message: message.into(),
        }
    }

    /// Adds the member or index the error is in (innermost first).
    pub(crate) fn within(mut self, part: impl Into<String>) -> Self {
        self.path.push(part.into());
        self
    }

    fn path(&self) -> String {
        let mut out = String::new();
        for part in self.path.iter().rev() {
            if !part.starts_with('[') && !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
        out
    }
}

impl From<ValueError> for PyErr {
    fn from(e: ValueError) -> Self {
        if e.path.is_empty() {
            PyValueError::new_err(e.message)
        } else {
            PyValueError::new_err(format!("{}: {}", e.path(), e.message))
        }
    }
}

/// A FerroDDS error as a [`DDSException`] that says what failed.
pub(crate) fn dds(what: &str, e: impl std::fmt::Display) -> PyErr {
    DDSException::new_err(format!("{what}: {e}"))
}
