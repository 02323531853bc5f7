//! What the untyped layer knows of a topic's type: its name for peers, its runtime type
//! (announced in SEDP and described to peers that ask), and how a reader finds the instance
//! of a received payload. Built from a derived type (`TypeSupport::of::<T>`, whose key
//! functions are the derived code's) or from a runtime type (`TypeSupport::dynamic`, a
//! Python class, an IDL file, a peer's TypeObject).

use ferrodds_cdr::dynamic::DynamicType;
use ferrodds_cdr::{key_hash, key_hash_variants, Cdr, Extensibility, XcdrVersion};
use ferrodds_rtps::dcps::InstanceHandle;
use ferrodds_rtps::dcps::InstanceKeys;

pub(crate) use ferrodds_rtps::dcps::instance_keys::decode_dynamic;

fn typed_instance<T: Cdr>(payload: &[u8], key_only: bool) -> Option<InstanceHandle> {
    if !T::IS_KEYED {
        return Some(InstanceHandle::NIL);
    }
    let value = decode_typed::<T>(payload, key_only).ok()?;
    key_hash(&value, XcdrVersion::Xcdr2)
        .ok()
        .map(|k| InstanceHandle(k.0))
}

fn typed_variants<T: Cdr>(payload: &[u8], key_only: bool) -> Vec<InstanceHandle> {
    decode_typed::<T>(payload, key_only)
        .ok()
        .and_then(|value| key_hash_variants(&value).ok())
        .map(|hashes| hashes.into_iter().map(|k| InstanceHandle(k.0)).collect())
        .unwrap_or_default()
}

/// A topic's type for writers and readers of any kind.
#[derive(Clone)]
pub(crate) struct TypeSupport {
    /// The registered type name, as peers know it.
    pub(crate) type_name: String,
    /// The type at run time.
    pub(crate) ty: DynamicType,
    pub(crate) keys: InstanceKeys,
}

impl TypeSupport {
    /// A derived type: instances found by the derived code.
    pub(crate) fn of<T: Cdr>(type_name: &str) -> Self {
        TypeSupport {
            type_name: type_name.to_owned(),
            ty: T::dynamic_type(),
            keys: InstanceKeys::Typed {
                keyed: T::IS_KEYED,
                ty: T::dynamic_type(),
                of_payload: typed_instance::<T>,
                variants: typed_variants::<T>,
            },
        }
    }

    /// A runtime type: instances found by the runtime codec.
    pub(crate) fn dynamic(type_name: &str, ty: DynamicType) -> Self {
        TypeSupport {
            type_name: type_name.to_owned(),
            keys: InstanceKeys::Dynamic(ty.clone()),
            ty,
        }
    }

    pub(crate) fn keyed(&self) -> bool {
        self.keys.keyed()
    }

    /// The representation writers use when the QoS does not say: XCDR1 for final types,
    /// XCDR2 for the others (what Cyclone DDS does; it will not write XCDR1 for an
    /// appendable type).
    pub(crate) fn default_version(&self) -> XcdrVersion {
        if self.ty.extensibility() == Extensibility::Final {
            XcdrVersion::Xcdr1
        } else {
            XcdrVersion::Xcdr2
        }
    }
}

/// A sample, or (`key_only`) the key of a dispose or unregister, as a `T`.
pub(crate) fn decode_typed<T: Cdr>(
    payload: &[u8],
    key_only: bool,
) -> Result<T, ferrodds_cdr::DecodeError> {
    if key_only {
        ferrodds_cdr::deserialize_key_sample(payload)
    } else {
        ferrodds_cdr::deserialize(payload)
    }
}
