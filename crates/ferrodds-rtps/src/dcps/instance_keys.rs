//! How a reader finds the instance of a received change: the key hash of the key its payload
//! holds (XCDR2 rule), whatever PID_KEY_HASH the writer sent; and the key hashes other
//! implementations compute for that key, by which their key-hash-only disposes and
//! unregisters name the instance.
//!
//! A derived type brings its own functions (its decoder is generated code the core cannot
//! name); a runtime type uses the runtime codec.

use ferrodds_cdr::dynamic::{self, DynamicType, DynamicValue};
use ferrodds_cdr::XcdrVersion;

use super::sample::InstanceHandle;

/// The instance of a payload (`key_only`: a dispose's or unregister's key sample); `None`
/// when its key does not decode.
pub type InstanceOf = fn(&[u8], bool) -> Option<InstanceHandle>;

/// Every key hash implementations compute for the key of a payload.
pub type KeyHashVariants = fn(&[u8], bool) -> Vec<InstanceHandle>;

/// How a reader finds instances, per the type it reads.
#[derive(Clone)]
pub enum InstanceKeys {
    /// Functions of compiled code.
    Typed {
        /// The type has keys.
        keyed: bool,
        /// The type at run time: large samples' keys are read by the runtime codec, which
        /// steps over what is not a key instead of decoding the whole sample.
        ty: DynamicType,
        /// The instance of a payload.
        of_payload: InstanceOf,
        /// The key hashes of a payload's key by every rule.
        variants: KeyHashVariants,
    },
    /// The runtime codec on a runtime type.
    Dynamic(DynamicType),
}

impl std::fmt::Debug for InstanceKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstanceKeys::Typed { keyed, .. } => write!(f, "Typed {{ keyed: {keyed} }}"),
            InstanceKeys::Dynamic(_) => f.write_str("Dynamic"),
        }
    }
}

impl InstanceKeys {
    /// The type has keys.
    pub fn keyed(&self) -> bool {
        match self {
            InstanceKeys::Typed { keyed, .. } => *keyed,
            InstanceKeys::Dynamic(ty) => ty.is_keyed(),
        }
    }

    /// The instance of a payload; `None` when its key does not decode.
    pub fn of_payload(&self, payload: &[u8], key_only: bool) -> Option<InstanceHandle> {
        match self {
            InstanceKeys::Typed {
                keyed: true, ty, ..
            } if !key_only && payload.len() >= LARGE_SAMPLE => dynamic_instance(ty, payload),
            InstanceKeys::Typed { of_payload, .. } => of_payload(payload, key_only),
            InstanceKeys::Dynamic(ty) if !ty.is_keyed() => Some(InstanceHandle::NIL),
            InstanceKeys::Dynamic(ty) if !key_only => dynamic_instance(ty, payload),
            InstanceKeys::Dynamic(ty) => {
                let value = decode_dynamic(ty, payload, key_only).ok()?;
                dynamic::key_hash(ty, &value, XcdrVersion::Xcdr2)
                    .ok()
                    .map(|k| InstanceHandle(k.0))
            }
        }
    }

    /// Every key hash implementations compute for the key of a payload.
    pub fn variants(&self, payload: &[u8], key_only: bool) -> Vec<InstanceHandle> {
        match self {
            InstanceKeys::Typed { variants, .. } => variants(payload, key_only),
            // The key members alone: a whole sample's sequences would be copied for nothing.
            InstanceKeys::Dynamic(ty) => if key_only {
                dynamic::deserialize_key_sample(ty, payload)
            } else {
                dynamic::deserialize_keys(ty, payload)
            }
            .ok()
            .and_then(|value| dynamic::key_hash_variants(ty, &value).ok())
            .map(|hashes| hashes.into_iter().map(|k| InstanceHandle(k.0)).collect())
            .unwrap_or_default(),
        }
    }
}

/// Samples at least this large have their keys read by the runtime codec even when the
/// type's compiled decoder is at hand (which would build the whole sample to find them).
const LARGE_SAMPLE: usize = 4096;

/// The instance of a sample of the keyed type `ty`, from its key members alone.
fn dynamic_instance(ty: &DynamicType, payload: &[u8]) -> Option<InstanceHandle> {
    let keys = dynamic::deserialize_keys(ty, payload).ok()?;
    dynamic::key_hash(ty, &keys, XcdrVersion::Xcdr2)
        .ok()
        .map(|k| InstanceHandle(k.0))
}

/// A sample, or (`key_only`) the key of a dispose or unregister, as a value of `ty`.
pub fn decode_dynamic(
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
