//! Which watch updates change nothing the console keeps: a new `resourceVersion` alone (a label
//! or annotation patch: the slim objects keep neither labels, annotations nor the version, so
//! such an update parses to the stored object), or a node's status heartbeat (a condition's
//! `lastHeartbeatTime`). The watchers still store such an update (the stores stay exact, the
//! watch resumes from the newest version) but do not wake the console for it, so churn the screen
//! cannot show costs no rebuild (issue 13: 20 label patches a second took a quarter of a core).
//!
//! Nothing in the console reads `lastHeartbeatTime` from the stored objects: the describe popup
//! and the remediation re-checks read the object from the API server again.

use crate::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};

/// An object kind whose updates may be told apart from the stored version.
pub trait Unchanged: PartialEq + Sized {
    /// True when `new` differs from `old` only in what the console never reads. `new` is taken
    /// mutably to compare in place; it is left as it came.
    fn unchanged(old: &Self, new: &mut Self) -> bool {
        old == new
    }
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
        let same = old == new;
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
    fn label_patches_are_unchanged_but_state_changes_are_not() {
        let old = fixtures::pod("ns", "p", "node1", "c", "Running", "2026-01-01T00:00:00Z");
        // a label patch as the watch delivers it: a new version and labels, the rest the same
        let mut wire = serde_json::to_value(&*old).unwrap();
        wire["metadata"]["resourceVersion"] = "99".into();
        wire["metadata"]["labels"] = serde_json::json!({"patched": "yes"});
        let w: crate::sources::kube::watched::Watched<Pod> = serde_json::from_value(wire).unwrap();
        assert_eq!(w.metadata.resource_version.as_deref(), Some("99"));
        let mut new = w.object;
        assert!(Pod::unchanged(&old, &mut new));
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
