//! A step's blast radius: the pods and volumes an action affects beyond the object it names, read
//! from the console's snapshot, and which of those volumes have a verified backup. The
//! out-of-service taint is the widest: the pod garbage collector force-deletes every pod on the
//! node without a matching toleration and the attach-detach controller detaches every volume
//! attached there. Every pod a write deletes names the workload that recreates it (and how:
//! [`crate::model::workload`]) with its other replicas; a DaemonSet template patch lists every pod
//! of the DaemonSet with its node and what its `updateStrategy` does to it.

use std::collections::BTreeSet;

use crate::lineage::VolumeLineage;
use crate::model::workload::{Workload, WorkloadKind, replicas, workload_of};
use crate::model::{Snapshot, key_of};
use crate::remedy::action::WriteAction;
use crate::remedy::service::ConfirmView;

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

fn pod_line(text: String) -> BlastLine {
    BlastLine { text, pv: None, unbacked: false }
}

/// `ns/a on n1, ns/b on n2` (the replicas of a workload), marking `this` one.
fn replica_list(list: &[(String, String)], this: &str) -> String {
    let one =
        |(p, n): &(String, String)| if p == this { format!("{p} on {n} (this one)") } else { format!("{p} on {n}") };
    list.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// The line for the workload of pod `ns/name` that a write deletes: who recreates it, and its
/// replicas; a bare pod is not recreated.
fn owner_line(snap: &Snapshot, key: &str) -> BlastLine {
    let pod = snap.pods.iter().find(|p| key_of(&p.metadata) == key);
    // a Terminating pod's Deployment has already created its replacement
    let terminating = pod.is_some_and(|p| p.metadata.deletion_timestamp.is_some());
    match pod.and_then(|p| workload_of(p)) {
        None => pod_line(format!("pod/{key}: no controller owns it; nothing recreates it")),
        Some(w) => {
            let list = replicas(snap, &w);
            let what = match (terminating, w.kind) {
                (true, WorkloadKind::Deployment | WorkloadKind::ReplicaSet) => {
                    "it is Terminating: its replacement was already created"
                }
                _ => w.on_delete(),
            };
            pod_line(format!("{}: {what}; {} pod(s): {}", kind_ref(&w), list.len(), replica_list(&list, key)))
        }
    }
}

/// `deployment/ns/name` (the line's object, as the other lines name theirs).
fn kind_ref(w: &Workload) -> String {
    let kind = match w.kind {
        WorkloadKind::DaemonSet => "daemonset",
        WorkloadKind::Deployment => "deployment",
        WorkloadKind::ReplicaSet => "replicaset",
        WorkloadKind::StatefulSet => "statefulset",
    };
    format!("{kind}/{}/{}", w.namespace, w.name)
}

/// What a force-deleted pod's controller does while the out-of-service taint stays; a
/// `terminating` pod of a Deployment/ReplicaSet was already replaced.
fn after_taint(w: Option<&Workload>, terminating: bool) -> &'static str {
    match w.map(|w| w.kind) {
        None => "no controller recreates it",
        Some(WorkloadKind::DaemonSet) => "its DaemonSet does not recreate it while the taint stays",
        Some(WorkloadKind::StatefulSet) => "its StatefulSet recreates it (same name, same claims) on another node",
        Some(_) if terminating => "it is Terminating: its replacement was already created",
        Some(_) => "its Deployment/ReplicaSet creates a replacement on another node",
    }
}

/// The pods of DaemonSet `ns/ds` with their nodes, and what a patch of its template does to each
/// under `strategy` (`None`: not read; said so).
fn template_patch(snap: &Snapshot, ns: &str, ds: &str, strategy: Option<&str>, out: &mut Blast) {
    let w = Workload { kind: WorkloadKind::DaemonSet, namespace: ns.into(), name: ds.into(), owner: ds.into() };
    let what = match strategy {
        Some("OnDelete") => "keeps the old template until someone deletes it",
        Some(_) => "deleted and recreated from the new template by the controller",
        None => "recreated from the new template, or not, as its updateStrategy says (not read)",
    };
    if let Some(s) = strategy {
        out.lines.push(pod_line(format!("daemonset/{ns}/{ds}: updateStrategy {s}")));
    }
    for (pod, node) in replicas(snap, &w) {
        out.lines.push(pod_line(format!("pod/{pod} on {node}: {what}")));
    }
}

/// The blast radius of the confirmation `view` (its action; a DaemonSet patch's `updateStrategy`
/// as re-checked) on `snap` / `lineage`; `backed_up` holds the PVs whose backup was verified.
pub fn of(
    view: &ConfirmView,
    snap: &Snapshot,
    lineage: &crate::lineage::Lineage,
    backed_up: &BTreeSet<String>,
) -> Blast {
    let action = &view.action;
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
                let owner = workload_of(p);
                let by = owner.as_ref().map(|w| format!(" ({w})")).unwrap_or_default();
                let text = format!(
                    "pod/{}{by}: force-deleted by the pod garbage collector; {}",
                    key_of(&p.metadata),
                    after_taint(owner.as_ref(), p.metadata.deletion_timestamp.is_some())
                );
                out.lines.push(pod_line(text));
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
        // a NetworkFence fences the whole host: every RBD client of the node
        WriteAction::NetworkFenceCreate { node, .. } => {
            for v in lineage.volumes.iter().filter(|v| on_node(v, node)) {
                volume(v, &format!("every RBD client on {node} is fenced (NetworkFence)"), &mut out);
            }
        }
        WriteAction::DeletePod { namespace, name, .. } | WriteAction::ForceDeletePod { namespace, name, .. } => {
            let key = format!("{namespace}/{name}");
            out.lines.push(owner_line(snap, &key));
            for v in lineage.volumes_of_pod(&key) {
                volume(v, "its pod is deleted", &mut out);
            }
        }
        WriteAction::SetMountPropagation { namespace, daemonset, .. } => {
            template_patch(snap, namespace, daemonset, view.update_strategy.as_deref(), &mut out)
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

#[cfg(test)]
#[path = "blast_tests.rs"]
mod tests;
