//! Key hashes (RTPS 9.6.4.8, XTypes 7.6.8): the key holder serialized big-endian, padded
//! with zeros to 16 bytes, or its MD5 when the holder's maximum size exceeds 16 bytes (the
//! holder zero-padded to at least 16 bytes first, as Cyclone DDS does).

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

/// Computes the key hash of `sample`.
///
/// The holder is aligned as `version` aligns (XTypes prescribes XCDR2's 4; Cyclone DDS and
/// RTI Connext align XCDR1 data's holders to 8), so pass the version the data goes out in.
pub fn key_hash<T: Cdr>(sample: &T, version: XcdrVersion) -> Result<KeyHash, EncodeError> {
    let mut holder = Vec::with_capacity(32);
    let mut e = Encoder::new(&mut holder, version, Endianness::Big);
    sample.encode_key(&mut e)?;
    let fits = T::key_max_end(0, version.max_align()).is_some_and(|end| end <= 16);
    let mut hash = [0u8; 16];
    if fits && holder.len() <= 16 {
        hash[..holder.len()].copy_from_slice(&holder);
    } else {
        // Cyclone DDS hashes a holder shorter than 16 bytes padded with zeros to 16
        // (checked against its vectors: KeyString "abc" hashes 0000000461626300 + 8 zeros).
        if holder.len() < 16 {
            holder.resize(16, 0);
        }
        hash.copy_from_slice(&Md5::digest(&holder));
    }
    Ok(KeyHash(hash))
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
    fn an_unbounded_key_is_hashed() {
        let h = key_hash(&String::from("a"), XcdrVersion::Xcdr2).unwrap();
        let expected = Md5::digest([0, 0, 0, 2, b'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(h.0.as_slice(), expected.as_slice());
    }
}
