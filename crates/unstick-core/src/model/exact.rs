//! Lists in buffers of their own size. serde_json gives a sequence no length hint, so a parsed
//! `Vec` grows 0 → 4 → 8 …: a pod's one ownerReference (104 bytes) sat in a 416-byte buffer, its
//! one `podIPs` entry in 96 bytes, a claim's one access mode in 96. Measured with heaptrack on
//! `unstick diagnose` at 100k pods / 5,000 nodes / 20k volumes (issue 29): 41.6 MB of the 285 MB
//! heap peak were ownerReference buffers and 9.6 MB `podIPs` buffers.

use serde::{Deserialize, Deserializer};

/// `v` with only the items `keep` accepts, in a buffer of their size (a filtering `collect`
/// reuses the parsed list's buffer whole).
pub(crate) fn kept<T>(mut v: Vec<T>, keep: impl FnMut(&T) -> bool) -> Vec<T> {
    v.retain(keep);
    v.shrink_to_fit();
    v
}

/// `v` in a buffer of its size.
pub(crate) fn exact<T>(mut v: Vec<T>) -> Vec<T> {
    v.shrink_to_fit();
    v
}

/// `deserialize_with` for an `Option<Vec<T>>` field: the list in a buffer of its size.
///
/// Errors: those of `T`'s deserializer.
pub(crate) fn opt<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Vec<T>>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.map(exact))
}
