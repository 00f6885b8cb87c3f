//! A step's blast radius: the pods and volumes an action affects beyond the object it names, read
//! from the console's snapshot, and which of those volumes have a verified backup. The
//! out-of-service taint is the widest: the pod garbage collector force-deletes every pod on the
//! node without a matching toleration and the attach-detach controller detaches every volume
//! attached there.

use std::collections::BTreeSet;

use crate::lineage::VolumeLineage;
use crate::model::{Snapshot, key_of};
use crate::remedy::action::WriteAction;

/// What an action affects beyond its own object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blast {
    /// One line per pod or volume affected, with what happens to it.
    pub lines: Vec<BlastLine>,
    /// PVs affected that have no verified backup in this console.
    pub unbacked: Vec<String>,
}

/// One pod or volume an action affects: the line shown (read it as a `str`), and for a volume
/// its PV and whether it lacks a verified backup (shown as an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlastLine {
    /// `pod/ns/name: what happens` or `pv/name (pvc/claim): what happens — backed up`.
    pub text: String,
    /// The PV, for a volume's line.
    pub pv: Option<String>,
    /// A volume without a verified backup in this console.
    pub unbacked: bool,
}

impl std::ops::Deref for BlastLine {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

fn volume_line(v: &VolumeLineage, what: &str, backed_up: &BTreeSet<String>) -> BlastLine {
    let claim = v.pvc.as_ref().map(|c| format!(" (pvc/{c})")).unwrap_or_default();
    let unbacked = !backed_up.contains(&v.pv);
    let backup = if unbacked { "NO verified backup" } else { "backed up" };
    BlastLine { text: format!("pv/{}{claim}: {what} — {backup}", v.pv), pv: Some(v.pv.clone()), unbacked }
}

/// The blast radius of `action` on `snap` / `lineage`; `backed_up` holds the PVs whose backup was
/// verified.
pub fn of(
    action: &WriteAction,
    snap: &Snapshot,
    lineage: &crate::lineage::Lineage,
    backed_up: &BTreeSet<String>,
) -> Blast {
    let mut out = Blast::default();
    let volume = |v: &VolumeLineage, what: &str, out: &mut Blast| {
        if out.lines.iter().any(|l| l.pv.as_ref() == Some(&v.pv)) {
            return;
        }
        out.lines.push(volume_line(v, what, backed_up));
        if !backed_up.contains(&v.pv) {
            out.unbacked.push(v.pv.clone());
        }
    };
    let on_node = |v: &VolumeLineage, node: &str| {
        v.attachments.iter().any(|a| a.node == node)
            || v.attached_on.iter().any(|n| n == node)
            || v.in_use_on.iter().any(|n| n == node)
    };
    match action {
        WriteAction::TaintOutOfService { node } => {
            for p in
                snap.pods.iter().filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node.as_str()))
            {
                let text = format!("pod/{}: force-deleted by the pod garbage collector", key_of(&p.metadata));
                out.lines.push(BlastLine { text, pv: None, unbacked: false });
            }
            for v in lineage.volumes.iter().filter(|v| on_node(v, node)) {
                volume(v, &format!("detached from {node} by the attach-detach controller"), &mut out);
            }
        }
        WriteAction::BlocklistAdd { addr } => {
            let ip = addr.split(':').next().unwrap_or_default();
            let nodes: Vec<String> = snap
                .nodes
                .iter()
                .filter(|n| crate::model::kube::internal_ips(n).iter().any(|i| i.to_string() == ip))
                .filter_map(|n| n.metadata.name.clone())
                .collect();
            for node in &nodes {
                for v in lineage.volumes.iter().filter(|v| on_node(v, node)) {
                    volume(v, &format!("its RBD client on {node} may be fenced"), &mut out);
                }
            }
        }
        WriteAction::DeletePod { namespace, name, .. } | WriteAction::ForceDeletePod { namespace, name, .. } => {
            for v in lineage.volumes_of_pod(&format!("{namespace}/{name}")) {
                volume(v, "its pod is deleted", &mut out);
            }
        }
        WriteAction::DeleteVolumeAttachment { name, .. } | WriteAction::RemoveVaFinalizer { name, .. } => {
            for v in lineage.volumes.iter().filter(|v| v.attachments.iter().any(|a| a.name == *name)) {
                volume(v, "its attachment is released", &mut out);
            }
        }
        WriteAction::RbdLockRm { image, .. } => {
            for v in lineage.volumes.iter().filter(|v| v.image.as_ref() == Some(image)) {
                volume(v, "its image lock is broken", &mut out);
            }
        }
        _ => {}
    }
    out
}
