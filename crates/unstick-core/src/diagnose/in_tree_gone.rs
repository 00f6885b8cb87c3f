//! An in-tree RBD PV (`spec.rbd`, driver `kubernetes.io/rbd`) on a cluster that no longer has the
//! in-tree RBD plugin: kubernetes/kubernetes#124546 removed the plugin from kube-controller-manager
//! and kubelet in 1.31 together with its CSI migration (1.37.2's `csi-translation-lib` has no RBD
//! translator and no `CSIMigrationRBD` gate is left), so from 1.31 nothing attaches or maps such a
//! volume. Seen on the harness's 1.37.2 (`live_000`): the pod is scheduled and then nothing
//! happens, no VolumeAttachment and no event naming the volume, so events alone may name no
//! cause.
//!
//! The release is the API server's (`GET /version`, [`crate::model::Snapshot::server_version`]);
//! when it was not read (a bundle), the kubelet version of the pod's node
//! (`status.nodeInfo.kubeletVersion`).

use super::ctx::Ctx;
use super::finding::{Evidence, EvidenceSource};
use super::stuck_parts::How;
use crate::lineage::VolumeLineage;
use crate::model::kube::{PodState, pod_state};
use crate::model::objects::Pod;

/// The release that removed the in-tree RBD plugin and its CSI migration.
pub(crate) const REMOVED_IN: (u32, u32) = (1, 31);

/// `(major, minor)` of a version string as Kubernetes prints it (`v1.37.2`, `1.31.0-gke.1`).
fn major_minor(v: &str) -> Option<(u32, u32)> {
    let mut it = v.trim_start_matches('v').split('.');
    let major = it.next()?.parse().ok()?;
    let minor: String = it.next()?.chars().take_while(char::is_ascii_digit).collect();
    Some((major, minor.parse().ok()?))
}

/// The evidence that `vol` can never be attached or mounted for a pod on `node`: the PV's
/// `spec.rbd` and the release (API server, else the node's kubelet) at or past
/// [`REMOVED_IN`]. `None` for any other volume or an older or unknown release.
pub(crate) fn evidence(ctx: &Ctx<'_>, vol: &VolumeLineage, node: &str) -> Option<Vec<Evidence>> {
    // the lineage names an in-tree RBD PV's driver so: any other volume is done without the
    // search of every PV below (issue 29: the whole diagnosis at 50k pods spent most of its time
    // here, once per pod of every CSI volume)
    if vol.driver != crate::lineage::IN_TREE_RBD {
        return None;
    }
    let pv = ctx.snap.pvs.iter().find(|p| p.metadata.name.as_deref() == Some(vol.pv.as_str()))?;
    let rbd = pv.spec.as_ref()?.rbd.as_ref()?;
    let release = match ctx.snap.server_version {
        Some(v) => (v, format!("API server {}.{}", v.0, v.1), EvidenceSource::ServerVersion),
        None => {
            let n = ctx.snap.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(node))?;
            let kv = &n.status.as_ref()?.node_info.as_ref()?.kubelet_version;
            (major_minor(kv)?, format!("node {node} kubelet {kv}"), EvidenceSource::NodeStatus)
        }
    };
    let (version, what, source) = release;
    if version < REMOVED_IN {
        return None;
    }
    let pv_line = format!(
        "PV {} spec.rbd: monitors {} pool {} image {} (in-tree kubernetes.io/rbd, no CSI driver)",
        vol.pv,
        rbd.monitors.join(","),
        rbd.pool.as_deref().unwrap_or("rbd"),
        rbd.image
    );
    let release_line = format!(
        "{what}: the in-tree RBD plugin and its CSI migration were removed in {}.{} (kubernetes/kubernetes#124546)",
        REMOVED_IN.0, REMOVED_IN.1
    );
    Some(vec![
        Evidence::new(EvidenceSource::PersistentVolume, pv_line, ctx.seen),
        Evidence::new(source, release_line, ctx.seen),
    ])
}

/// A pod of such a volume that is not running: it waits since it was created (no grace: it can
/// never mount). `None` for a running, finished or Terminating pod.
pub(crate) fn waiting(pod: &Pod) -> Option<How> {
    match pod_state(pod) {
        PodState::Phase(p) if p == "Running" || p == "Succeeded" || p == "Failed" => None,
        PodState::Terminating { .. } => None,
        _ => pod.metadata.creation_timestamp.as_ref().map(|t| How::Waiting(t.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::major_minor;

    #[test]
    fn versions_as_kubernetes_prints_them() {
        assert_eq!(major_minor("v1.37.2"), Some((1, 37)));
        assert_eq!(major_minor("v1.31.0-gke.1200"), Some((1, 31)));
        assert_eq!(major_minor("1.30+"), Some((1, 30)));
        assert_eq!(major_minor("garbage"), None);
    }
}
