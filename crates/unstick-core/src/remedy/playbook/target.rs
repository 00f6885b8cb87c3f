//! The objects a playbook acts on ([`Target`]), gathered from the console's snapshot and lineage:
//! the PV, claim, image, pods, VolumeAttachments, the nodes involved (pods, attachments, in use,
//! watcher and lock owners), watchers, locks, and DaemonSet pods that mount the host root without
//! mount propagation (the unmap-busy holders).

use std::net::IpAddr;

use crate::attribution::{AddressBook, Attribution};
use crate::lineage::Lineage;
use crate::model::ceph::{BlocklistEntry, EntityAddr, Lock, Watcher};
use crate::model::kube::{
    PodState, Readiness, host_root_mounts, internal_ips, is_node_plugin, node_ready, pod_node, pod_state,
};
use crate::model::{ImageRef, Snapshot};
use crate::remedy::action::precheck::{MountRef, Scope};
use crate::remedy::run::backup::{BackupPlan, ManifestRef};

/// A pod of the target volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPod {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// Terminating.
    pub terminating: bool,
    /// Neither Terminating nor Running/Succeeded: waiting for its volumes (or unscheduled).
    pub waiting: bool,
}

impl TargetPod {
    /// `DELETE` of this pod, refused unless it still has this UID (its controller recreates it).
    pub fn delete(&self) -> crate::remedy::action::WriteAction {
        crate::remedy::action::WriteAction::DeletePod {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }

    /// `DELETE` with grace 0 of this pod, refused unless it still has this UID.
    pub fn force_delete(&self) -> crate::remedy::action::WriteAction {
        crate::remedy::action::WriteAction::ForceDeletePod {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }
}

/// A node involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetNode {
    /// Name.
    pub name: String,
    /// Ready condition status.
    pub ready: Readiness,
    /// InternalIPs.
    pub ips: Vec<IpAddr>,
}

/// A DaemonSet pod that mounts the host's root without mount propagation (unmap-busy holder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMountHolder {
    /// The DaemonSet volumeMount.
    pub mount: MountRef,
    /// Its pod on the node (restarted after the patch).
    pub pod: TargetPod,
}

/// The objects a playbook acts on, as the console saw them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// PV name.
    pub pv: Option<String>,
    /// PVC `(namespace, name)`.
    pub pvc: Option<(String, String)>,
    /// The image.
    pub image: Option<ImageRef>,
    /// `kubernetes.io/csi/<driver>^<handle>` or `kubernetes.io/rbd/<pool>:<image>`.
    pub unique_name: Option<String>,
    /// Pods using the claim.
    pub pods: Vec<TargetPod>,
    /// VolumeAttachments of the PV.
    pub volume_attachments: Vec<crate::lineage::Attachment>,
    /// Nodes whose `status.volumesAttached` lists the volume (in-tree volumes have no
    /// VolumeAttachment).
    pub attached_on: Vec<String>,
    /// Nodes involved (pods, attachments, in use, watcher and lock owners).
    pub nodes: Vec<TargetNode>,
    /// `rbd lock ls`.
    pub locks: Vec<Lock>,
    /// `rbd status`.
    pub watchers: Vec<Watcher>,
    /// Blocklist entries concerned (blocklist-leftover).
    pub blocklist: Vec<BlocklistEntry>,
    /// Host-mount holders on the nodes of the volume (unmap-busy).
    pub holders: Vec<HostMountHolder>,
    /// `/dev/rbdN` from the events, if any.
    pub device: Option<String>,
    /// The volume's CSI driver (or `kubernetes.io/rbd`, `cephfs`).
    pub driver: Option<String>,
    /// The ceph-csi node plugin pods of the volume's driver on the nodes where a pod of the claim
    /// waits (csi-driver-not-registered restarts the one there).
    pub node_plugins: Vec<TargetPod>,
    /// The API server's version, read live ([`crate::remedy::playbook::version::read_server_version`]); `None` when
    /// unknown. Picks the multi-attach fix: the out-of-service taint from 1.24 (1.24–1.25 behind its feature gate).
    pub server_version: Option<crate::remedy::playbook::version::ServerVersion>,
    /// The csi-addons NetworkFenceClass for the volume's driver, when csi-addons is installed
    /// and has one: the fencing step then creates a NetworkFence of that class instead of a raw
    /// `ceph osd blocklist add`.
    pub fence_class: Option<String>,
}

fn target_pod(p: &crate::model::objects::Pod) -> TargetPod {
    let terminating = p.metadata.deletion_timestamp.is_some();
    let running = matches!(pod_state(p), PodState::Phase(ph) if ph == "Running" || ph == "Succeeded");
    TargetPod {
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        name: p.metadata.name.clone().unwrap_or_default(),
        uid: p.metadata.uid.clone().unwrap_or_default(),
        node: pod_node(p).map(str::to_string),
        terminating,
        waiting: !terminating && !running,
    }
}

pub(crate) fn device_in(text: &str) -> Option<String> {
    let i = text.find("/dev/rbd")?;
    let digits: String = text[i + 8..].chars().take_while(|c| c.is_ascii_digit()).collect();
    (!digits.is_empty()).then(|| format!("/dev/rbd{digits}"))
}

/// DaemonSet pods on `node` with a hostPath `/` volume mounted without propagation.
fn host_mount_holders(snap: &Snapshot, node: &str) -> Vec<HostMountHolder> {
    let mut out = Vec::new();
    for p in snap.pods.iter().filter(|p| pod_node(p) == Some(node)) {
        for m in host_root_mounts(p) {
            out.push(HostMountHolder {
                mount: MountRef {
                    namespace: p.metadata.namespace.clone().unwrap_or_default(),
                    daemonset: m.daemonset,
                    container: m.container,
                    mount_path: m.mount_path,
                },
                pod: target_pod(p),
            });
        }
    }
    out
}

impl Target {
    /// The unmap-busy holder on the node that cannot unmap: where the volume is still attached or
    /// its old pod is Terminating (a DaemonSet has a pod on every node); else the first one.
    pub fn stuck_holder(&self) -> Option<&HostMountHolder> {
        let stuck_on = |n: &str| {
            self.attached_on.iter().any(|a| a == n)
                || self.pods.iter().any(|p| p.terminating && p.node.as_deref() == Some(n))
        };
        self.holders.iter().find(|h| h.pod.node.as_deref().is_some_and(stuck_on)).or(self.holders.first())
    }

    /// The same target, for a cluster whose API server is `v` (`None`: unknown).
    pub fn with_server_version(mut self, v: Option<crate::remedy::playbook::version::ServerVersion>) -> Self {
        self.server_version = v;
        self
    }

    /// Everything the console knows about PV `pv`, or `None` if it is not in the lineage.
    pub fn for_volume(snap: &Snapshot, lin: &Lineage, pv: &str) -> Option<Target> {
        let v = lin.by_pv(pv)?;
        let mut t = Target {
            pv: Some(v.pv.clone()),
            pvc: v.pvc.as_ref().and_then(|k| k.split_once('/')).map(|(a, b)| (a.to_string(), b.to_string())),
            image: v.image.clone(),
            unique_name: v.unique_name.clone(),
            driver: Some(v.driver.clone()),
            ..Default::default()
        };
        for key in &v.pods {
            if let Some(p) = snap.pods.iter().find(|p| crate::model::key_of(&p.metadata) == *key) {
                t.pods.push(target_pod(p));
            }
        }
        t.fence_class = snap
            .network_fences
            .is_some()
            .then(|| crate::model::fence::class_for(&snap.network_fence_classes, &v.driver))
            .flatten()
            .map(|c| c.name.clone());
        t.volume_attachments = v.attachments.clone();
        t.attached_on = v.attached_on.clone();
        if let Some(f) = v.image.as_ref().and_then(|i| snap.ceph.images.get(i)) {
            t.watchers = f.watchers.value.clone().unwrap_or_default();
            t.locks = f.locks.value.clone().unwrap_or_default();
        }
        let mut names: Vec<String> = t.pods.iter().filter_map(|p| p.node.clone()).collect();
        names.extend(v.attachments.iter().map(|a| a.node.clone()));
        names.extend(v.in_use_on.iter().cloned());
        names.extend(v.attached_on.iter().cloned());
        let ips: Vec<IpAddr> = t
            .watchers
            .iter()
            .map(|w| w.address.as_str())
            .chain(t.locks.iter().map(|l| l.address.as_str()))
            .filter_map(|a| EntityAddr::parse(a).map(|a| a.ip))
            .collect();
        for n in &snap.nodes {
            let name = n.metadata.name.clone().unwrap_or_default();
            let nips = internal_ips(n);
            if names.contains(&name) || nips.iter().any(|ip| ips.contains(ip)) {
                t.nodes.push(TargetNode { name, ready: node_ready(n).status, ips: nips });
            }
        }
        t.nodes.sort_by(|a, b| a.name.cmp(&b.name));
        t.nodes.dedup();
        for n in &t.nodes.clone() {
            t.holders.extend(host_mount_holders(snap, &n.name));
        }
        let waiting_on: Vec<&str> = t.pods.iter().filter(|p| p.waiting).filter_map(|p| p.node.as_deref()).collect();
        t.node_plugins = snap
            .pods
            .iter()
            .filter(|p| pod_node(p).is_some_and(|n| waiting_on.contains(&n)) && is_node_plugin(p, &v.driver))
            .map(|p| target_pod(p))
            .collect();
        for e in &snap.events {
            let about = e.involved_object.namespace.as_deref().zip(e.involved_object.name.as_deref());
            let ours = about.is_some_and(|(ns, name)| t.pods.iter().any(|p| p.namespace == ns && p.name == name));
            if (ours || e.message.as_deref().is_some_and(|m| m.contains(pv)))
                && let Some(d) = e.message.as_deref().and_then(device_in)
            {
                t.device = Some(d);
            }
        }
        Some(t)
    }

    /// A target for blocklist entries that keep `node` fenced.
    pub fn for_blocklist(snap: &Snapshot, entries: Vec<BlocklistEntry>) -> Target {
        let nodes = snap
            .nodes
            .iter()
            .filter(|n| internal_ips(n).iter().any(|ip| entries.iter().any(|e| e.covers_whole_host(*ip))))
            .map(|n| TargetNode {
                name: n.metadata.name.clone().unwrap_or_default(),
                ready: node_ready(n).status,
                ips: internal_ips(n),
            })
            .collect();
        Target { nodes, blocklist: entries, ..Default::default() }
    }

    /// Ties the client addresses (watchers, lockers, whole-host blocklist entries) that no target
    /// node has among its InternalIPs to their nodes by `book`'s proofs ([`crate::attribution`]:
    /// a storage address, a ceph-csi plugin or holder pod's IP, an operator's rule). The node joins
    /// the target (with its readiness) if it was not involved yet, and the address joins its
    /// `ips`, so the steps that map a client to its node (the fence of a lost node's watcher, the
    /// lock owner) see it; without this a watcher from a storage address has no node and the
    /// dead-node-watcher playbook has nothing to fence.
    pub fn tie_clients(mut self, snap: &Snapshot, book: &AddressBook) -> Self {
        let addrs: Vec<&str> = (self.watchers.iter().map(|w| w.address.as_str()))
            .chain(self.locks.iter().map(|l| l.address.as_str()))
            .chain(self.blocklist.iter().map(|e| e.text()))
            .collect();
        for ip in addrs.into_iter().filter_map(|a| EntityAddr::parse(a).map(|a| a.ip)) {
            if self.node_at(ip).is_some() {
                continue;
            }
            let Attribution::Tied(tie) = book.attribute_ip(ip, &[]) else { continue };
            if let Some(n) = self.nodes.iter_mut().find(|n| n.name == tie.node) {
                n.ips.push(ip);
            } else if let Some(n) = snap.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(tie.node.as_str())) {
                self.nodes.push(TargetNode { name: tie.node.clone(), ready: node_ready(n).status, ips: vec![ip] });
                self.nodes.sort_by(|a, b| a.name.cmp(&b.name));
            }
        }
        self
    }

    pub(crate) fn node(&self, name: &str) -> Option<&TargetNode> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub(crate) fn node_at(&self, ip: IpAddr) -> Option<&TargetNode> {
        self.nodes.iter().find(|n| n.ips.contains(&ip))
    }

    pub(crate) fn ready(&self, name: &str) -> bool {
        self.node(name).is_some_and(|n| n.ready.is_ready())
    }

    /// The facts the playbook depends on, each once (a DaemonSet's holders on several nodes share
    /// one mount: read and shown once, not once per node).
    pub fn scope(&self) -> Scope {
        let all = Scope {
            image: self.image.clone(),
            nodes: self.nodes.iter().map(|n| n.name.clone()).collect(),
            pods: self.pods.iter().chain(&self.node_plugins).map(|p| (p.namespace.clone(), p.name.clone())).collect(),
            volume_attachments: self.volume_attachments.iter().map(|v| v.name.clone()).collect(),
            mounts: self.holders.iter().map(|h| h.mount.clone()).collect(),
            blocklist: !self.blocklist.is_empty(),
            fences: self.fence_class.is_some() || !self.blocklist.is_empty(),
        };
        crate::remedy::action::scope::merge_scope(&Scope::default(), &all)
    }

    pub(crate) fn backup_plan(&self) -> BackupPlan {
        let mut objects = Vec::new();
        if let Some(pv) = &self.pv {
            objects.push(ManifestRef::Pv(pv.clone()));
        }
        if let Some((ns, n)) = &self.pvc {
            objects.push(ManifestRef::Pvc(ns.clone(), n.clone()));
        }
        objects.extend(
            self.pods.iter().chain(&self.node_plugins).map(|p| ManifestRef::Pod(p.namespace.clone(), p.name.clone())),
        );
        objects.extend(self.volume_attachments.iter().map(|v| ManifestRef::VolumeAttachment(v.name.clone())));
        for h in &self.holders {
            let o = ManifestRef::DaemonSet(h.mount.namespace.clone(), h.mount.daemonset.clone());
            if !objects.contains(&o) {
                objects.push(o);
            }
        }
        BackupPlan { objects, image: self.image.clone(), export_to: None, export_stall_seconds: 0 }
    }
}
