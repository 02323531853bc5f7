//! What the untyped layer knows of a topic's type: its name for peers, its runtime type
//! (announced in SEDP and described to peers that ask), and how a reader finds the instance
//! of a received payload. Built from a derived type (`TypeSupport::of::<T>`, whose key
//! functions are the derived code's) or from a runtime type (`TypeSupport::dynamic`, a
//! Python class, an IDL file, a peer's TypeObject).

use ferrodds_cdr::dynamic::{self, DynamicType, DynamicValue};
use ferrodds_cdr::{key_hash, key_hash_variants, Cdr, Extensibility, XcdrVersion};

use crate::sample::InstanceHandle;

/// How a reader finds the instance of a received change (`key_only` for a dispose or
/// unregister): the key hash of the key the payload holds (XCDR2 rule), whatever
/// PID_KEY_HASH the writer sent; and the key hashes other implementations compute for it, by
/// which their key-hash-only disposes and unregisters name the instance.
#[derive(Clone)]
pub(crate) enum InstanceKeys {
    /// The derived code's functions (`T` decoded by its own code).
    Typed {
        keyed: bool,
        of_payload: fn(&[u8], bool) -> Option<InstanceHandle>,
        variants: fn(&[u8], bool) -> Vec<InstanceHandle>,
    },
    /// The runtime codec.
    Dynamic(DynamicType),
}

impl InstanceKeys {
    /// The type has keys.
    pub(crate) fn keyed(&self) -> bool {
        match self {
            InstanceKeys::Typed { keyed, .. } => *keyed,
            InstanceKeys::Dynamic(ty) => ty.is_keyed(),
        }
    }

    /// The instance of a payload; `None` when its key does not decode.
    pub(crate) fn of_payload(&self, payload: &[u8], key_only: bool) -> Option<InstanceHandle> {
        match self {
            InstanceKeys::Typed { of_payload, .. } => of_payload(payload, key_only),
            InstanceKeys::Dynamic(ty) => {
                if !ty.is_keyed() {
                    return Some(InstanceHandle::NIL);
                }
                let value = decode_dynamic(ty, payload, key_only).ok()?;
                dynamic::key_hash(ty, &value, XcdrVersion::Xcdr2)
                    .ok()
                    .map(|k| InstanceHandle(k.0))
            }
        }
    }

    /// Every key hash implementations compute for the key of a payload.
    pub(crate) fn variants(&self, payload: &[u8], key_only: bool) -> Vec<InstanceHandle> {
        match self {
            InstanceKeys::Typed { variants, .. } => variants(payload, key_only),
            InstanceKeys::Dynamic(ty) => decode_dynamic(ty, payload, key_only)
                .ok()
                .and_then(|value| dynamic::key_hash_variants(ty, &value).ok())
                .map(|hashes| hashes.into_iter().map(|k| InstanceHandle(k.0)).collect())
                .unwrap_or_default(),
        }
    }
}

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

/// A sample, or (`key_only`) the key of a dispose or unregister, as a value of `ty`.
pub(crate) fn decode_dynamic(
    ty: &DynamicType,
    payload: &[u8],
    key_only: bool,
) -> Result<DynamicValue, ferrodds_cdr::DecodeError> {
    if key_only {
        dynamic::deserialize_key_sample(ty, payload)
    } else {
        dynamic::deserialize(ty, payload)
    }
}
