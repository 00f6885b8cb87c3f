//! Which watch updates change nothing the console keeps: a new `resourceVersion` alone (a label
//! or annotation patch: the slim objects do not keep labels or annotations, so such an update
//! parses to the stored object but for its version), or a node's status heartbeat (a condition's
//! `lastHeartbeatTime`). The watchers still store such an update (the stores stay exact, the
//! watch resumes from the newest version) but do not wake the console for it, so churn the screen
//! cannot show costs no rebuild (issue 13: 20 label patches a second took a quarter of a core).
//!
//! Nothing in the console reads `resourceVersion` or `lastHeartbeatTime` from the stored objects:
//! the describe popup and the remediation re-checks read the object from the API server again.

use crate::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};
use kube::Resource;

/// An object kind whose updates may be told apart from the stored version.
pub trait Unchanged: Resource + PartialEq + Sized {
    /// True when `new` differs from `old` only in what the console never reads. `new` is taken
    /// mutably to compare in place; it is left as it came.
    fn unchanged(old: &Self, new: &mut Self) -> bool {
        same_but_version(old, new, |a, b| a == b)
    }
}

/// Compares `old` and `new` with `new`'s resourceVersion set to `old`'s for the comparison `eq`
/// (then restored).
fn same_but_version<K: Resource>(old: &K, new: &mut K, eq: impl FnOnce(&K, &K) -> bool) -> bool {
    let rv = std::mem::replace(&mut new.meta_mut().resource_version, old.meta().resource_version.clone());
    let same = eq(old, new);
    new.meta_mut().resource_version = rv;
    same
}

impl Unchanged for Pod {}
impl Unchanged for PersistentVolumeClaim {}
impl Unchanged for PersistentVolume {}
impl Unchanged for VolumeAttachment {}
impl Unchanged for Event {}

impl Unchanged for Node {
    /// Also ignores the conditions' `lastHeartbeatTime` (the kubelet's periodic status updates).
    fn unchanged(old: &Self, new: &mut Self) -> bool {
        fn conditions(n: &mut Node) -> Option<&mut Vec<k8s_openapi::api::core::v1::NodeCondition>> {
            n.status.as_mut().and_then(|s| s.conditions.as_mut())
        }
        let old_beats: Vec<_> = old
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .map(|c| c.last_heartbeat_time.clone())
            .collect();
        if conditions(new).map_or(0, |c| c.len()) != old_beats.len() {
            return false;
        }
        // swap the old heartbeats in, compare, swap the new ones back
        let mut beats = old_beats;
        let swap = |n: &mut Node, beats: &mut Vec<_>| {
            for (c, b) in conditions(n).into_iter().flatten().zip(beats.iter_mut()) {
                std::mem::swap(&mut c.last_heartbeat_time, b);
            }
        };
        swap(new, &mut beats);
        let same = same_but_version(old, new, |a, b| a == b);
        swap(new, &mut beats);
        same
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    #[test]
    fn version_changes_are_unchanged_but_state_changes_are_not() {
        let old = fixtures::pod("ns", "p", "node1", "c", "Running", "2026-01-01T00:00:00Z");
        let mut new = (*old).clone();
        new.metadata.resource_version = Some("99".into());
        assert!(Pod::unchanged(&old, &mut new));
        assert_eq!(new.metadata.resource_version.as_deref(), Some("99"), "new is left as it came");
        new.spec.as_mut().unwrap().node_name = Some("node2".into());
        assert!(!Pod::unchanged(&old, &mut new), "a spec change counts");
        let mut gone = (*old).clone();
        gone.metadata.deletion_timestamp = Some(Time("2026-01-01T00:01:00Z".parse().unwrap()));
        assert!(!Pod::unchanged(&old, &mut gone), "a deletionTimestamp counts");
    }

    #[test]
    fn node_heartbeats_are_unchanged_but_ready_changes_are_not() {
        let old = fixtures::node("n1", "10.0.0.1", "True", "2026-01-01T00:00:00Z", &[]);
        let mut beat = (*old).clone();
        for c in beat.status.as_mut().unwrap().conditions.as_mut().unwrap() {
            c.last_heartbeat_time = Some(Time("2026-01-01T00:05:00Z".parse().unwrap()));
        }
        assert!(Node::unchanged(&old, &mut beat));
        let c = &beat.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
        assert_eq!(c.last_heartbeat_time, Some(Time("2026-01-01T00:05:00Z".parse().unwrap())), "left as it came");
        let mut down = (*old).clone();
        down.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "Unknown".into();
        assert!(!Node::unchanged(&old, &mut down));
        let mut more = (*old).clone();
        more.status.as_mut().unwrap().conditions.as_mut().unwrap().push(Default::default());
        assert!(!Node::unchanged(&old, &mut more), "a new condition counts");
    }
}
