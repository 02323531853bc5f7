//! Key hashes (RTPS 2.5 §9.6.4.8, XTypes 1.3 §7.6.8): the key holder — the key members in
//! member-id order, serialized big-endian as a final struct — zero-padded to 16 bytes when
//! its maximum size is at most 16, else the MD5 of exactly its serialized bytes.
//!
//! Implementations depart from the rule in ways that matter for messages that name their
//! instance by the hash alone (Fast DDS's and RTI Connext's disposes and unregisters), so
//! [`key_hash_variants`] gives the hashes they compute for the same key, for a reader to
//! recognise them by.

use crate::error::EncodeError;
use crate::{Cdr, Encoder, Endianness, XcdrVersion};
use md5::{Digest, Md5};

/// The 16-byte hash that identifies an instance on the wire (PID_KEY_HASH).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct KeyHash(pub [u8; 16]);

impl std::fmt::Display for KeyHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// The key holder of `sample`, big-endian, aligned as `version` aligns, and whether its
/// maximum size fits in 16 bytes.
fn holder<T: Cdr>(sample: &T, version: XcdrVersion) -> Result<(Vec<u8>, bool), EncodeError> {
    let mut holder = Vec::with_capacity(32);
    let mut e = Encoder::new(&mut holder, version, Endianness::Big);
    sample.encode_key(&mut e)?;
    let fits = T::key_max_end(0, version.max_align()).is_some_and(|end| end <= 16);
    Ok((holder, fits))
}

/// The holder itself, zero-padded (it must be at most 16 bytes).
fn raw(holder: &[u8]) -> Option<KeyHash> {
    let mut hash = [0u8; 16];
    hash.get_mut(..holder.len())?.copy_from_slice(holder);
    Some(KeyHash(hash))
}

fn md5(bytes: &[u8]) -> KeyHash {
    let mut hash = [0u8; 16];
    hash.copy_from_slice(&Md5::digest(bytes));
    KeyHash(hash)
}

/// The key hash of a serialized key holder whose maximum size `fits` in 16 bytes or not.
pub(crate) fn hash_holder(holder: &[u8], fits: bool) -> KeyHash {
    match raw(holder) {
        Some(hash) if fits => hash,
        _ => md5(holder),
    }
}

/// Computes the key hash of `sample` by the rule of the module documentation.
///
/// XTypes prescribes XCDR2's alignment (at most 4) for the holder; Fast DDS, Cyclone DDS
/// and RTI Connext align the holder of XCDR1 data to 8, so pass the version the data goes
/// out in (the two differ only for keys with 8-byte members).
pub fn key_hash<T: Cdr>(sample: &T, version: XcdrVersion) -> Result<KeyHash, EncodeError> {
    // Every keyed write asks: the holder is built in a buffer the thread keeps (a fresh
    // one only if a type's own encoding asks for a key hash while it is in use).
    HOLDER.with(|kept| {
        let mut fresh = Vec::new();
        let mut kept = kept.try_borrow_mut();
        let buf = match kept.as_deref_mut() {
            Ok(buf) => buf,
            Err(_) => &mut fresh,
        };
        buf.clear();
        let mut e = Encoder::new(buf, version, Endianness::Big);
        sample.encode_key(&mut e)?;
        let fits = T::key_max_end(0, version.max_align()).is_some_and(|end| end <= 16);
        Ok(hash_holder(buf, fits))
    })
}

thread_local! {
    /// The buffer [`key_hash`] builds holders in.
    static HOLDER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The key hashes implementations compute for `sample` besides [`key_hash`]'s XCDR2 one
/// (which comes first), without repeats:
///
/// - the same rule on the XCDR1 holder (8-byte alignment: Fast DDS 2.x, which serializes
///   keys in classic CDR; Cyclone DDS and RTI Connext for XCDR1 data);
/// - Cyclone DDS 11: a holder shorter than 16 bytes is zero-padded to 16 before its MD5;
/// - Cyclone DDS 0.10: a holder that happens to be at most 16 bytes is used as it is, MD5
///   only when the actual holder is longer (it decides by the actual size, not the maximum).
pub fn key_hash_variants<T: Cdr>(sample: &T) -> Result<Vec<KeyHash>, EncodeError> {
    Ok(variants_of([
        holder(sample, XcdrVersion::Xcdr2)?,
        holder(sample, XcdrVersion::Xcdr1)?,
    ]))
}

/// [`key_hash_variants`] of the XCDR2 and the XCDR1 holder (each with whether its maximum
/// size fits in 16 bytes).
pub(crate) fn variants_of(holders: [(Vec<u8>, bool); 2]) -> Vec<KeyHash> {
    let mut out = Vec::with_capacity(6);
    for (holder, fits) in holders {
        let spec = hash_holder(&holder, fits);
        let mut padded = holder.clone();
        if padded.len() < 16 {
            padded.resize(16, 0);
        }
        let cyclone_11 = if fits { spec } else { md5(&padded) };
        let cyclone_0_10 = raw(&holder).unwrap_or(spec);
        for hash in [spec, cyclone_11, cyclone_0_10] {
            if !out.contains(&hash) {
                out.push(hash);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_key_is_its_own_hash() {
        let h = key_hash(&0x0102_0304i32, XcdrVersion::Xcdr2).unwrap();
        assert_eq!(h.0, [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn an_unbounded_key_is_hashed_as_it_is() {
        // What Fast DDS 2.9 sends for a string key, and the spec's rule: MD5 of the five
        // holder bytes, not of the holder padded to 16.
        let h = key_hash(&String::from("a"), XcdrVersion::Xcdr2).unwrap();
        let expected = Md5::digest([0, 0, 0, 2, b'a', 0]);
        assert_eq!(h.0.as_slice(), expected.as_slice());
    }

    #[test]
    fn other_implementations_hashes_are_recognised() {
        let key = String::from("a");
        let variants = key_hash_variants(&key).unwrap();
        let holder = [0, 0, 0, 2, b'a', 0];
        let mut padded = holder.to_vec();
        padded.resize(16, 0);
        assert_eq!(variants[0], key_hash(&key, XcdrVersion::Xcdr2).unwrap());
        assert!(variants.contains(&md5(&padded)), "Cyclone DDS 11");
        assert!(
            variants.contains(&raw(&holder).unwrap()),
            "Cyclone DDS 0.10"
        );
        assert_eq!(variants.len(), 3, "XCDR1 aligns a string key as XCDR2 does");
    }
}
