//! Which volumes' findings a change of one node can alter (issue 13), read from the per-volume
//! rules (`multi_attach.rs`, `stale_lock.rs`, `watchers.rs`, `restage.rs`). Of a node they read:
//! - its health (Ready condition, or no Node object) and evidence line, for the nodes named by a
//!   volume's VolumeAttachments (`spec.nodeName`) and `attached_on` (`multi-attach-node-lost`),
//!   and for the node whose InternalIP is a watcher's or lock holder's address, or whose name is a
//!   lock's `kubelet_lock_magic_<node>` id (`stale-lock`, the watcher patterns);
//! - its addresses, through [`Lineage::node_for_address`] (the same watchers and locks); a
//!   watcher or lock no node address ties may be tied to any node by another proof
//!   ([`crate::attribution`]): its volume is in every node's scope;
//! - its `volumesInUse` / `volumesAttached`, only through the lineage's `in_use_on` /
//!   `attached_on` (what [`Lineage::apply_nodes`] says changed).
//!
//! - its health and InternalIPs for the node a stuck pod runs on (the stuck-pod findings,
//!   `stuck.rs`, quote its Ready condition and look its addresses up in the blocklist): the
//!   volumes with such a finding about a pod on the node (kept in [`Diagnosis`]'s findings).
//!
//! No other per-volume rule reads the health of the node a pod runs on (a pod's `spec.nodeName`
//! is compared with the nodes above, and is part of the pod, not of the node). The global rules (`blocklist-leftover`, `va-finalizer-stuck`,
//! `unmap-busy`, watchers on images no PV uses) are redone after every change anyway.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;

use super::Diagnosis;
use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::model::ceph::EntityAddr;
use crate::model::kube::internal_ips;
use crate::model::objects::Node;

/// The volumes (PV names) whose image's Ceph facts name a node: by the IP of a watcher's or a
/// lock's address, by a lock id's node name. Only images a PV's lineage gives (the rules see
/// an image through that volume); built with the diagnosis of every volume, which the caller
/// runs after every change of the Ceph facts or of the PVs.
#[derive(Debug, Clone, Default)]
pub(super) struct CephRefs {
    by_ip: HashMap<IpAddr, Vec<String>>,
    /// Volumes with a watcher or lock address that no node's address ties: another proof
    /// ([`crate::attribution`]) may tie it to any node, so a change of any node may alter them.
    untied: Vec<String>,
    by_lock_node: HashMap<String, Vec<String>>,
}

impl CephRefs {
    /// Reads `snap`'s Ceph facts (one pass over the scanned images' watchers and locks).
    pub(super) fn build(snap: &Snapshot, lin: &Lineage) -> CephRefs {
        let mut refs = CephRefs::default();
        for (image, facts) in &snap.ceph.images {
            let Some(vol) = lin.by_image(image) else { continue };
            let watchers = facts.watchers.value.iter().flatten().map(|w| w.address.as_str());
            let locks = facts.locks.value.iter().flatten();
            for addr in watchers.chain(locks.clone().map(|l| l.address.as_str())) {
                let all = EntityAddr::parse_all(addr);
                if !all.iter().any(|a| lin.node_for_ip(a.ip).is_some()) {
                    refs.untied.push(vol.pv.clone());
                }
                for a in all {
                    refs.by_ip.entry(a.ip).or_default().push(vol.pv.clone());
                }
            }
            for node in locks.filter_map(|l| l.id.strip_prefix("kubelet_lock_magic_")) {
                refs.by_lock_node.entry(node.to_string()).or_default().push(vol.pv.clone());
            }
        }
        refs
    }
}

impl Diagnosis {
    /// The volumes (PV names) whose findings a change of node `name`'s health or addresses can
    /// alter (see the module doc): those attached to it by a VolumeAttachment or listed in the
    /// `status.volumesAttached` of `versions` (the node's old and new objects, none when it does
    /// not exist), and those whose image's watchers or locks name it by one of `versions`'
    /// InternalIPs or by its name. The cost is the node's own lists, not the cluster's.
    pub fn node_scope(&self, lin: &Lineage, name: &str, versions: &[&Node]) -> BTreeSet<String> {
        let at = lin.volumes_on_node(name, versions);
        let mut pvs: BTreeSet<String> = at.filter_map(|i| lin.volumes.get(i)).map(|v| v.pv.clone()).collect();
        let refs = &self.ceph_refs;
        for ip in versions.iter().flat_map(|n| internal_ips(n)) {
            pvs.extend(refs.by_ip.get(&ip).into_iter().flatten().cloned());
        }
        pvs.extend(refs.by_lock_node.get(name).into_iter().flatten().cloned());
        pvs.extend(refs.untied.iter().cloned());
        pvs.extend(self.stuck_on(name));
        pvs
    }
}
