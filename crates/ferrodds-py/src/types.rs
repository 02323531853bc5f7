//! Python classes as runtime types: the description `ferrodds.idl` makes of a class (nested
//! tuples, see `_Describer` in `python/ferrodds/idl/__init__.py`) becomes a [`DynamicType`]
//! for the codec and a [`Node`] tree that says how each value looks in Python (which class to
//! build, which attribute holds which member). The two can name a member differently: the
//! type has its IDL name, the node its Python attribute (`type_` for IDL's `type`).

use std::sync::Arc;

use ferrodds::dynamic::{
    BitmaskType, DynamicType, EnumType, Member, StructType, UnionCase, UnionType,
};
use ferrodds::ferrodds_cdr::Extensibility;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::error::TypeError;

/// How values of a type look in Python, beside their [`DynamicType`].
#[derive(Debug)]
pub(crate) enum Node {
    /// A number, boolean, character or string: the [`DynamicType`] decides.
    Leaf,
    /// A sequence or array of octets held as `bytes` (or `bytearray`).
    Bytes {
        /// Decoded as `bytearray` rather than `bytes`.
        bytearray: bool,
    },
    /// A sequence or one dimension of an array, held as a list.
    List(Box<Node>),
    /// A struct: an instance of its class.
    Struct(Arc<StructNode>),
    /// An enum: a member of its `IdlEnum` class.
    Enum(Py<PyAny>),
    /// A bitmask: an instance of its `IdlBitmask` class (a flag per attribute).
    Bitmask(Arc<BitmaskNode>),
    /// A union: an instance of its `IdlUnion` class.
    Union(Arc<UnionNode>),
}

/// A struct's class and its members' attributes, in encoding order.
#[derive(Debug)]
pub(crate) struct StructNode {
    pub(crate) class: Py<PyAny>,
    /// The Python attribute of each member (its name in the type may differ).
    pub(crate) names: Vec<Py<PyString>>,
    pub(crate) members: Vec<Node>,
}

/// A bitmask's class and its flags' attributes with their bit positions.
#[derive(Debug)]
pub(crate) struct BitmaskNode {
    pub(crate) class: Py<PyAny>,
    pub(crate) flags: Vec<(Py<PyString>, u16)>,
}

/// A union's class, its discriminator and its branches (in the [`UnionType`]'s order).
#[derive(Debug)]
pub(crate) struct UnionNode {
    pub(crate) class: Py<PyAny>,
    pub(crate) discriminator: Node,
    pub(crate) cases: Vec<Node>,
    /// The Python attribute of each branch, for messages (its name in the type may differ).
    pub(crate) attributes: Vec<String>,
}

/// Nesting deeper than this in a description is refused (a description is a user's, but a
/// type that contains itself would otherwise recurse until the stack ends).
const MAX_DEPTH: usize = 64;

/// Builds the runtime type and the Python view of the description `desc`.
pub(crate) fn build(desc: &Bound<'_, PyAny>) -> Result<(DynamicType, Node), TypeError> {
    build_at(desc, 0)
}

fn build_at(desc: &Bound<'_, PyAny>, depth: usize) -> Result<(DynamicType, Node), TypeError> {
    if depth > MAX_DEPTH {
        return Err(TypeError::TooDeep);
    }
    let tuple = desc
        .cast::<PyTuple>()
        .map_err(|_| TypeError::Malformed(format!("{desc}")))?;
    let tag: String = item(tuple, 0)?;
    let leaf = |ty: DynamicType| Ok((ty, Node::Leaf));
    match tag.as_str() {
        "bool" => leaf(DynamicType::Bool),
        "int8" => leaf(DynamicType::Int8),
        "uint8" => leaf(DynamicType::UInt8),
        "octet" => leaf(DynamicType::Octet),
        "int16" => leaf(DynamicType::Int16),
        "uint16" => leaf(DynamicType::UInt16),
        "int32" => leaf(DynamicType::Int32),
        "uint32" => leaf(DynamicType::UInt32),
        "int64" => leaf(DynamicType::Int64),
        "uint64" => leaf(DynamicType::UInt64),
        "float32" => leaf(DynamicType::Float32),
        "float64" => leaf(DynamicType::Float64),
        "char" => leaf(DynamicType::Char),
        "wchar" => leaf(DynamicType::WChar),
        "wstring" => leaf(DynamicType::WString),
        "string" => leaf(DynamicType::String {
            bound: item(tuple, 1)?,
        }),
        "bytes" => {
            // ("bytes", bound, bytearray): a sequence of octets held as bytes.
            let bound: Option<usize> = item(tuple, 1)?;
            let bytearray: bool = item(tuple, 2)?;
            Ok((
                DynamicType::Sequence {
                    element: Box::new(DynamicType::Octet),
                    bound,
                },
                Node::Bytes { bytearray },
            ))
        }
        "sequence" => {
            let (element, node) = build_at(&tuple.get_item(1)?, depth + 1)?;
            let bound: Option<usize> = item(tuple, 2)?;
            Ok((
                DynamicType::Sequence {
                    element: Box::new(element),
                    bound,
                },
                Node::List(Box::new(node)),
            ))
        }
        "array" => {
            let (element, node) = build_at(&tuple.get_item(1)?, depth + 1)?;
            let n: usize = item(tuple, 2)?;
            // An array of arrays is one array of several dimensions, as IDL's `T a[2][3]`.
            let ty = match element {
                DynamicType::Array {
                    element,
                    mut dimensions,
                } => {
                    dimensions.insert(0, n);
                    DynamicType::Array {
                        element,
                        dimensions,
                    }
                }
                element => DynamicType::Array {
                    element: Box::new(element),
                    dimensions: vec![n],
                },
            };
            Ok((ty, Node::List(Box::new(node))))
        }
        "struct" => build_struct(tuple, depth),
        "enum" => {
            // ("enum", class, name, bit_bound, [(name, value), ...])
            let class = tuple.get_item(1)?.unbind();
            let ty = EnumType {
                name: item(tuple, 2)?,
                bit_bound: item(tuple, 3)?,
                enumerators: item(tuple, 4)?,
            };
            Ok((DynamicType::Enum(Arc::new(ty)), Node::Enum(class)))
        }
        "bitmask" => {
            // ("bitmask", class, name, bit_bound, [(flag, position), ...])
            let class = tuple.get_item(1)?.unbind();
            let flags: Vec<(String, u16)> = item(tuple, 4)?;
            let py = tuple.py();
            let node = BitmaskNode {
                class,
                flags: flags
                    .iter()
                    .map(|(n, p)| (PyString::intern(py, n).unbind(), *p))
                    .collect(),
            };
            let ty = BitmaskType {
                name: item(tuple, 2)?,
                bit_bound: item(tuple, 3)?,
                flags,
            };
            Ok((
                DynamicType::Bitmask(Arc::new(ty)),
                Node::Bitmask(Arc::new(node)),
            ))
        }
        "union" => build_union(tuple, depth),
        other => Err(TypeError::UnknownKind(other.to_owned())),
    }
}

/// ("struct", class, name, extensibility,
///  [(idl_name, attribute, id, desc, key, optional, must_understand)])
fn build_struct(
    tuple: &Bound<'_, PyTuple>,
    depth: usize,
) -> Result<(DynamicType, Node), TypeError> {
    let py = tuple.py();
    let class = tuple.get_item(1)?.unbind();
    let name: String = item(tuple, 2)?;
    let extensibility = extensibility(&item::<String>(tuple, 3)?)?;
    let mut members = Vec::new();
    let mut node = StructNode {
        class,
        names: Vec::new(),
        members: Vec::new(),
    };
    for m in tuple.get_item(4)?.try_iter()? {
        let m = m?;
        let m = m
            .cast::<PyTuple>()
            .map_err(|_| TypeError::Malformed(format!("member {m}")))?;
        let member_name: String = item(m, 0)?;
        let attribute: String = item(m, 1)?;
        let (ty, child) = build_at(&m.get_item(3)?, depth + 1)
            .map_err(|e| TypeError::InMember(attribute.clone(), Box::new(e)))?;
        let mut member = Member::new(&member_name, item(m, 2)?, ty);
        member.key = item(m, 4)?;
        member.optional = item(m, 5)?;
        // Only `@must_understand` sets the flag, keys included: Cyclone DDS leaves it off
        // keys (its golden vectors, crates/ferrodds-cdr/tests/cyclone/), and so does
        // ferrodds-cdr-derive, so both kinds of FerroDDS type write Cyclone's bytes.
        member.must_understand = item(m, 6)?;
        node.names.push(PyString::intern(py, &attribute).unbind());
        node.members.push(child);
        members.push(member);
    }
    let ty = StructType {
        name,
        extensibility,
        base: None,
        members,
    };
    Ok((
        DynamicType::Struct(Arc::new(ty)),
        Node::Struct(Arc::new(node)),
    ))
}

/// ("union", class, name, extensibility, discriminator,
///  [(idl_name, attribute, labels, is_default, desc)])
fn build_union(tuple: &Bound<'_, PyTuple>, depth: usize) -> Result<(DynamicType, Node), TypeError> {
    let class = tuple.get_item(1)?.unbind();
    let name: String = item(tuple, 2)?;
    let extensibility = extensibility(&item::<String>(tuple, 3)?)?;
    let (discriminator, discriminator_node) = build_at(&tuple.get_item(4)?, depth + 1)?;
    let mut cases = Vec::new();
    let mut nodes = Vec::new();
    let mut attributes = Vec::new();
    for c in tuple.get_item(5)?.try_iter()? {
        let c = c?;
        let c = c
            .cast::<PyTuple>()
            .map_err(|_| TypeError::Malformed(format!("case {c}")))?;
        let case_name: String = item(c, 0)?;
        let attribute: String = item(c, 1)?;
        let (ty, node) = build_at(&c.get_item(4)?, depth + 1)
            .map_err(|e| TypeError::InMember(attribute.clone(), Box::new(e)))?;
        cases.push(UnionCase {
            name: case_name,
            labels: item(c, 2)?,
            default: item(c, 3)?,
            ty,
        });
        nodes.push(node);
        attributes.push(attribute);
    }
    let ty = UnionType {
        name,
        extensibility,
        discriminator,
        cases,
        no_member: Vec::new(),
        default_discriminator: None,
    };
    let node = UnionNode {
        class,
        discriminator: discriminator_node,
        cases: nodes,
        attributes,
    };
    Ok((
        DynamicType::Union(Arc::new(ty)),
        Node::Union(Arc::new(node)),
    ))
}

fn extensibility(name: &str) -> Result<Extensibility, TypeError> {
    match name {
        "final" => Ok(Extensibility::Final),
        "appendable" => Ok(Extensibility::Appendable),
        "mutable" => Ok(Extensibility::Mutable),
        other => Err(TypeError::UnknownExtensibility(other.to_owned())),
    }
}

/// Element `i` of a description tuple, converted.
fn item<'py, T: FromPyObjectOwned<'py>>(
    tuple: &Bound<'py, PyTuple>,
    i: usize,
) -> Result<T, TypeError> {
    let value = tuple
        .get_item(i)
        .map_err(|_| TypeError::Malformed(format!("{tuple}: no element {i}")))?;
    value
        .extract()
        .map_err(|_| TypeError::Malformed(format!("{tuple}: element {i} is {value}")))
}
