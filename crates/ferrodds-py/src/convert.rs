//! Python values to and from dynamic values, walking a [`DynamicType`] and its [`Node`].

use ferrodds::dynamic::{Bytes, DynamicType, DynamicValue};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};

use crate::error::ValueError;
use crate::types::Node;

/// The dynamic value of the Python value `obj` of type `ty`.
pub(crate) fn to_value(
    ty: &DynamicType,
    node: &Node,
    obj: &Bound<'_, PyAny>,
) -> Result<DynamicValue, ValueError> {
    Ok(match (ty, node) {
        (DynamicType::Bool, _) => {
            DynamicValue::Bool(obj.extract::<bool>().map_err(|_| expected("a bool", obj))?)
        }
        (DynamicType::Int8 | DynamicType::Int16 | DynamicType::Int32 | DynamicType::Int64, _) => {
            DynamicValue::Int(int(obj)?)
        }
        (
            DynamicType::UInt8
            | DynamicType::Octet
            | DynamicType::UInt16
            | DynamicType::UInt32
            | DynamicType::UInt64,
            _,
        ) => DynamicValue::UInt(
            obj.extract::<u64>()
                .map_err(|_| expected("a non-negative int", obj))?,
        ),
        (DynamicType::Float32 | DynamicType::Float64, _) => {
            DynamicValue::Float(obj.extract::<f64>().map_err(|_| expected("a float", obj))?)
        }
        (DynamicType::Char | DynamicType::WChar, _) => {
            let s: String = obj
                .extract()
                .map_err(|_| expected("a str of one character", obj))?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => DynamicValue::Char(c),
                _ => return Err(expected("a str of one character", obj)),
            }
        }
        (DynamicType::String { .. } | DynamicType::WString, _) => {
            DynamicValue::String(obj.extract().map_err(|_| expected("a str", obj))?)
        }
        (DynamicType::Sequence { .. }, Node::Bytes { .. }) => DynamicValue::Bytes(bytes(obj)?),
        (DynamicType::Sequence { element, .. }, Node::List(inner)) => {
            if element.is_octet_like() {
                if let Ok(b) = bytes(obj) {
                    return Ok(DynamicValue::Bytes(b));
                }
            }
            DynamicValue::Sequence(list(element, inner, obj)?)
        }
        (
            DynamicType::Array {
                element,
                dimensions,
            },
            Node::List(_),
        ) => array(element, dimensions, node, obj)?,
        (DynamicType::Struct(s), Node::Struct(n)) => {
            let mut values = Vec::with_capacity(s.members.len());
            // Messages name the Python attribute, which is what the caller wrote.
            for ((m, name), child) in s.members.iter().zip(&n.names).zip(&n.members) {
                let name = name.bind(obj.py());
                let attr = obj.getattr(name).map_err(|_| {
                    ValueError::new(format!("{} has no attribute {name}", type_name(obj)))
                })?;
                if m.optional && attr.is_none() {
                    values.push(None);
                    continue;
                }
                values.push(Some(
                    to_value(&m.ty, child, &attr).map_err(|e| e.within(name.to_string()))?,
                ));
            }
            DynamicValue::Struct(values)
        }
        (DynamicType::Enum(_), Node::Enum(_)) => {
            // An IdlEnum member (its `.value`), or the integer itself.
            let value = match obj.getattr("value") {
                Ok(v) if !obj.is_instance_of::<pyo3::types::PyInt>() => v,
                _ => obj.clone(),
            };
            DynamicValue::Enum(
                value
                    .extract()
                    .map_err(|_| expected("an enumerator", obj))?,
            )
        }
        (DynamicType::Bitmask(_), Node::Bitmask(n)) => {
            if let Ok(mask) = obj.extract::<u64>() {
                DynamicValue::Bitmask(mask)
            } else {
                let mut mask = 0u64;
                for (flag, position) in &n.flags {
                    let set = obj
                        .getattr(flag.bind(obj.py()))
                        .and_then(|v| v.is_truthy())
                        .map_err(|_| expected("a bitmask", obj))?;
                    if set {
                        mask |= 1u64.checked_shl(u32::from(*position)).unwrap_or(0);
                    }
                }
                DynamicValue::Bitmask(mask)
            }
        }
        (DynamicType::Union(u), Node::Union(n)) => {
            let d = obj
                .getattr("discriminator")
                .map_err(|_| expected("a union", obj))?;
            let discriminator = discriminator(&u.discriminator, &d)?;
            let value = match branch_index(u, discriminator) {
                Some(i) => {
                    let case = &u.cases[i];
                    let attribute = n.attributes.get(i).unwrap_or(&case.name);
                    let v = obj.getattr("value").map_err(|_| expected("a union", obj))?;
                    Some(Box::new(
                        to_value(&case.ty, &n.cases[i], &v)
                            .map_err(|e| e.within(attribute.clone()))?,
                    ))
                }
                None => None,
            };
            DynamicValue::Union {
                discriminator,
                value,
            }
        }
        _ => return Err(ValueError::new(format!("cannot hold {}", type_name(obj)))),
    })
}

/// Which of a union's branches `discriminator` selects.
fn branch_index(u: &ferrodds::dynamic::UnionType, discriminator: i64) -> Option<usize> {
    let branch = u.branch(discriminator)?;
    u.cases.iter().position(|c| std::ptr::eq(c, branch))
}

/// A union discriminator as the integer the codec keeps.
fn discriminator(ty: &DynamicType, d: &Bound<'_, PyAny>) -> Result<i64, ValueError> {
    match ty {
        DynamicType::Bool => Ok(i64::from(d.is_truthy().map_err(|_| expected("a bool", d))?)),
        DynamicType::Char => {
            let s: String = d.extract().map_err(|_| expected("a character", d))?;
            s.chars()
                .next()
                .map(|c| i64::from(u32::from(c)))
                .ok_or_else(|| expected("a character", d))
        }
        DynamicType::Enum(_) => {
            let v = match d.getattr("value") {
                Ok(v) if !d.is_instance_of::<pyo3::types::PyInt>() => v,
                _ => d.clone(),
            };
            v.extract().map_err(|_| expected("an enumerator", d))
        }
        _ => int(d),
    }
}

fn int(obj: &Bound<'_, PyAny>) -> Result<i64, ValueError> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(expected("an int", obj));
    }
    obj.extract::<i64>().map_err(|_| expected("an int", obj))
}

/// The bytes of `bytes`, `bytearray`, `memoryview` or anything with the buffer protocol.
/// A `bytes` object is not copied: the value holds it (immutable, and kept alive until the
/// value is dropped), and the write serializes straight from its buffer.
fn bytes(obj: &Bound<'_, PyAny>) -> Result<Bytes, ValueError> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Bytes::from_owner(PyBackedBytes::from(b.clone())));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        // Mutable: copied, so that the application may change it once `write` returns.
        return Ok(Bytes::from(b.to_vec()));
    }
    // Anything else with the buffer protocol (memoryview, array, numpy): what `bytes()`
    // makes of it (the stable ABI of Python 3.8 has no buffer calls).
    if obj.is_instance_of::<pyo3::types::PyMemoryView>()
        || obj.hasattr("__buffer__").unwrap_or(false)
        || obj.hasattr("__array_interface__").unwrap_or(false)
    {
        let b = obj
            .py()
            .get_type::<PyBytes>()
            .call1((obj,))
            .map_err(|_| expected("bytes", obj))?;
        if let Ok(b) = b.cast_into::<PyBytes>() {
            return Ok(Bytes::from_owner(PyBackedBytes::from(b)));
        }
    }
    Err(expected("bytes", obj))
}

fn list(
    element: &DynamicType,
    node: &Node,
    obj: &Bound<'_, PyAny>,
) -> Result<Vec<DynamicValue>, ValueError> {
    if obj.is_instance_of::<PyString>() {
        return Err(expected("a list", obj));
    }
    if let Some(values) = numbers_from_buffer(element, obj) {
        return values;
    }
    let iter = obj.try_iter().map_err(|_| expected("a list", obj))?;
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for (i, item) in iter.enumerate() {
        let item = item.map_err(|e| ValueError::new(e.to_string()))?;
        out.push(to_value(element, node, &item).map_err(|e| e.within(format!("[{i}]")))?);
    }
    Ok(out)
}

/// The numbers of a numpy array, `array.array` or `memoryview` whose items are the
/// element type's (same size, same kind, this host's byte order), read from its buffer in
/// one piece: no Python object per element. `None` for anything else (lists, other item
/// types), which takes the general path.
fn numbers_from_buffer(
    element: &DynamicType,
    obj: &Bound<'_, PyAny>,
) -> Option<Result<Vec<DynamicValue>, ValueError>> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return None;
    }
    let (size, kind) = match element {
        DynamicType::Int8 => (1, 'i'),
        DynamicType::UInt8 | DynamicType::Octet => (1, 'u'),
        DynamicType::Int16 => (2, 'i'),
        DynamicType::UInt16 => (2, 'u'),
        DynamicType::Int32 => (4, 'i'),
        DynamicType::UInt32 => (4, 'u'),
        DynamicType::Int64 => (8, 'i'),
        DynamicType::UInt64 => (8, 'u'),
        DynamicType::Float32 => (4, 'f'),
        DynamicType::Float64 => (8, 'f'),
        _ => return None,
    };
    let (item_size, item_kind) = buffer_items(obj)?;
    if item_size != size || item_kind != kind {
        return None;
    }
    let bytes = obj.call_method0("tobytes").ok()?;
    let bytes = bytes.cast::<PyBytes>().ok()?.as_bytes();
    macro_rules! read {
        ($t:ty, $wrap:expr) => {
            bytes
                .chunks_exact(size)
                .map(|c| {
                    let mut a = [0u8; std::mem::size_of::<$t>()];
                    a.copy_from_slice(c);
                    $wrap(<$t>::from_ne_bytes(a))
                })
                .collect()
        };
    }
    Some(Ok(match element {
        DynamicType::Int8 => read!(i8, |v| DynamicValue::Int(i64::from(v))),
        DynamicType::UInt8 | DynamicType::Octet => read!(u8, |v| DynamicValue::UInt(u64::from(v))),
        DynamicType::Int16 => read!(i16, |v| DynamicValue::Int(i64::from(v))),
        DynamicType::UInt16 => read!(u16, |v| DynamicValue::UInt(u64::from(v))),
        DynamicType::Int32 => read!(i32, |v| DynamicValue::Int(i64::from(v))),
        DynamicType::UInt32 => read!(u32, |v| DynamicValue::UInt(u64::from(v))),
        DynamicType::Int64 => read!(i64, DynamicValue::Int),
        DynamicType::UInt64 => read!(u64, DynamicValue::UInt),
        DynamicType::Float32 => read!(f32, DynamicValue::Float32),
        _ => read!(f64, DynamicValue::Float),
    }))
}

/// The item size and kind (`'i'` signed, `'u'` unsigned, `'f'` float) of a numpy array
/// (in this host's byte order), an `array.array` or a `memoryview`.
fn buffer_items(obj: &Bound<'_, PyAny>) -> Option<(usize, char)> {
    if let Ok(dtype) = obj.getattr("dtype") {
        let order: String = dtype.getattr("byteorder").ok()?.extract().ok()?;
        let native = if cfg!(target_endian = "little") {
            "<"
        } else {
            ">"
        };
        if !(order == "=" || order == "|" || order == native) {
            return None;
        }
        let kind: String = dtype.getattr("kind").ok()?.extract().ok()?;
        let size: usize = dtype.getattr("itemsize").ok()?.extract().ok()?;
        return Some((size, kind.chars().next()?));
    }
    // array.array's typecode, memoryview's struct format: the same letters.
    let code: String = obj
        .getattr("typecode")
        .or_else(|_| obj.getattr("format"))
        .ok()?
        .extract()
        .ok()?;
    let size: usize = obj.getattr("itemsize").ok()?.extract().ok()?;
    let kind = match code.trim_start_matches(['@', '=']) {
        "f" | "d" => 'f',
        "b" | "h" | "i" | "l" | "q" => 'i',
        "B" | "H" | "I" | "L" | "Q" => 'u',
        _ => return None,
    };
    Some((size, kind))
}

/// An array's outermost dimension (its elements are the inner dimensions' lists).
fn array(
    element: &DynamicType,
    dimensions: &[usize],
    node: &Node,
    obj: &Bound<'_, PyAny>,
) -> Result<DynamicValue, ValueError> {
    let Some((n, rest)) = dimensions.split_first() else {
        return to_value(element, node, obj);
    };
    if rest.is_empty() && element.is_octet_like() {
        if let Node::Bytes { .. } = node {
            let b = bytes(obj)?;
            check_len(*n, b.len())?;
            return Ok(DynamicValue::Sequence(
                b.into_iter()
                    .map(|x| DynamicValue::UInt(u64::from(x)))
                    .collect(),
            ));
        }
    }
    let Node::List(inner) = node else {
        return to_value(element, node, obj);
    };
    if rest.is_empty() {
        if let Some(values) = numbers_from_buffer(element, obj) {
            let values = values?;
            check_len(*n, values.len())?;
            return Ok(DynamicValue::Sequence(values));
        }
    }
    let items: Vec<Bound<'_, PyAny>> = obj
        .try_iter()
        .map_err(|_| expected("a list", obj))?
        .collect::<PyResult<_>>()
        .map_err(|e| ValueError::new(e.to_string()))?;
    check_len(*n, items.len())?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let v = if rest.is_empty() {
            to_value(element, inner, item)
        } else {
            array(element, rest, inner, item)
        };
        out.push(v.map_err(|e| e.within(format!("[{i}]")))?);
    }
    Ok(DynamicValue::Sequence(out))
}

fn check_len(expected_len: usize, found: usize) -> Result<(), ValueError> {
    if expected_len == found {
        Ok(())
    } else {
        Err(ValueError::new(format!(
            "an array of {expected_len} elements cannot hold {found}"
        )))
    }
}

fn expected(what: &str, obj: &Bound<'_, PyAny>) -> ValueError {
    let repr = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    let repr = if repr.chars().count() > 60 {
        format!("{}...", repr.chars().take(57).collect::<String>())
    } else {
        repr
    };
    ValueError::new(format!("expected {what}, got {} {repr}", type_name(obj)))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The Python value of `value` of type `ty`.
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    ty: &DynamicType,
    node: &Node,
    value: &DynamicValue,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match (ty, node, value) {
        (_, _, DynamicValue::Bool(b)) => b.into_pyobject(py)?.to_owned().into_any(),
        (DynamicType::Enum(_), Node::Enum(class), DynamicValue::Enum(v)) => {
            class.bind(py).call1((*v,))?
        }
        (DynamicType::Bitmask(_), Node::Bitmask(n), DynamicValue::Bitmask(mask)) => {
            let obj = n.class.bind(py).call0()?;
            for (flag, position) in &n.flags {
                let set = mask >> u32::from(*position).min(63) & 1 == 1;
                obj.setattr(flag.bind(py), set)?;
            }
            obj
        }
        (_, _, DynamicValue::Int(v)) => v.into_pyobject(py)?.into_any(),
        (_, _, DynamicValue::UInt(v)) => v.into_pyobject(py)?.into_any(),
        (_, _, DynamicValue::Float(v)) => v.into_pyobject(py)?.into_any(),
        (_, _, DynamicValue::Float32(v)) => f64::from(*v).into_pyobject(py)?.into_any(),
        (_, _, DynamicValue::Char(c)) => c.into_pyobject(py)?.into_any(),
        (_, _, DynamicValue::String(s)) => PyString::new(py, s).into_any(),
        (_, _, DynamicValue::Enum(v)) => v.into_pyobject(py)?.into_any(),
        (_, _, DynamicValue::Bitmask(v)) => v.into_pyobject(py)?.into_any(),
        (_, Node::Bytes { bytearray: true }, DynamicValue::Bytes(b)) => {
            PyByteArray::new(py, b).into_any()
        }
        // A `sequence<uint8>` declared as such (not as `bytes`) is a list of ints, as
        // cyclonedds-python gives it.
        (_, Node::List(_), DynamicValue::Bytes(b)) => PyList::new(py, b.iter())?.into_any(),
        (_, _, DynamicValue::Bytes(b)) => PyBytes::new(py, b).into_any(),
        (_, Node::Bytes { bytearray }, DynamicValue::Sequence(_)) => {
            // An array of octets held as bytes.
            let b = value.as_octets().ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(
                    "an array of octets holds a value that is not an octet",
                )
            })?;
            if *bytearray {
                PyByteArray::new(py, &b).into_any()
            } else {
                PyBytes::new(py, &b).into_any()
            }
        }
        (
            DynamicType::Array {
                element,
                dimensions,
            },
            Node::List(_),
            DynamicValue::Sequence(_),
        ) => array_to_python(py, element, dimensions, node, value)?,
        (
            DynamicType::Sequence { element, .. },
            Node::List(inner),
            DynamicValue::Sequence(items),
        ) => {
            let out = PyList::empty(py);
            for item in items {
                out.append(to_python(py, element, inner, item)?)?;
            }
            out.into_any()
        }
        (DynamicType::Struct(s), Node::Struct(n), DynamicValue::Struct(values)) => {
            let mut args = Vec::with_capacity(values.len());
            for ((m, child), v) in s.members.iter().zip(&n.members).zip(values) {
                args.push(match v {
                    Some(v) => to_python(py, &m.ty, child, v)?,
                    None => py.None().into_bound(py),
                });
            }
            n.class.bind(py).call1(PyTuple::new(py, args)?)?
        }
        (
            DynamicType::Union(u),
            Node::Union(n),
            DynamicValue::Union {
                discriminator,
                value,
            },
        ) => {
            let d = match &u.discriminator {
                DynamicType::Enum(_) => match &n.discriminator {
                    Node::Enum(class) => class.bind(py).call1((*discriminator,))?,
                    _ => discriminator.into_pyobject(py)?.into_any(),
                },
                DynamicType::Bool => (*discriminator != 0)
                    .into_pyobject(py)?
                    .to_owned()
                    .into_any(),
                // A character, as the labels and a `char` member are (and as
                // cyclonedds-python gives it), not its code.
                DynamicType::Char | DynamicType::WChar => u32::try_from(*discriminator)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| {
                        pyo3::exceptions::PyValueError::new_err(format!(
                            "union {}: discriminator {discriminator} is no character",
                            ty.name()
                        ))
                    })?
                    .into_pyobject(py)?
                    .into_any(),
                _ => discriminator.into_pyobject(py)?.into_any(),
            };
            let v = match (branch_index(u, *discriminator), value) {
                (Some(i), Some(v)) => to_python(py, &u.cases[i].ty, &n.cases[i], v)?,
                _ => py.None().into_bound(py),
            };
            n.class.bind(py).call_method1("_from_wire", (d, v))?
        }
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "a decoded value does not fit type {}",
                ty.name()
            )))
        }
    })
}

fn array_to_python<'py>(
    py: Python<'py>,
    element: &DynamicType,
    dimensions: &[usize],
    node: &Node,
    value: &DynamicValue,
) -> PyResult<Bound<'py, PyAny>> {
    let (Some((_, rest)), DynamicValue::Sequence(items), Node::List(inner)) =
        (dimensions.split_first(), value, node)
    else {
        return to_python(py, element, node, value);
    };
    if rest.is_empty() {
        if let Node::Bytes { .. } = inner.as_ref() {
            return to_python(py, element, inner, value);
        }
    }
    let out = PyList::empty(py);
    for item in items {
        out.append(if rest.is_empty() {
            to_python(py, element, inner, item)?
        } else {
            array_to_python(py, element, rest, inner, item)?
        })?;
    }
    Ok(out.into_any())
}
