//! The lineage kept up to date per watch event (issue 13): a change of VolumeAttachments, nodes
//! or PVs redoes the joins of the objects it changed, not the cluster's. Each `apply_*` takes
//! what a batch changed of one kind (`gone`: the objects, as `Arc`s, this lineage joined and
//! the batch replaced or removed; `came`: the new or replacing ones) and the new snapshot (read
//! only when it falls back to [`Lineage::build`]), and says which volumes' lineage changed
//! ([`Applied`]). After any sequence of them the lineage equals [`Lineage::build`] on the new
//! snapshot (tested in `lineage_apply_tests.rs`), given the stores' guarantees: object names are
//! unique per kind and every list is in name order.
//!
//! Falls back to [`Lineage::build`] (O(cluster), said by [`Applied::Rebuilt`]) when:
//! - a PV is added or removed, or a PV's claim, driver, image, volumeHandle or unique name
//!   changes (a claim binding; the volume source is immutable in the API): the volumes' order
//!   and every index over them move;
//! - two nodes or two PVs of one batch share a name (not a stores' batch).
//!
//! Two nodes sharing an InternalIP make the node addresses be redone over every node on each
//! node change (`shared_ips`: which of them owns the address depends on the nodes' order).

use std::collections::{BTreeSet, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;

use super::{Attachment, Lineage, VolumeLineage, volume_of};
use crate::model::Snapshot;
use crate::model::kube::{node_addresses, volumes_attached, volumes_in_use};
use crate::model::objects::{Node, PersistentVolume, VolumeAttachment};

/// What an `apply_*` changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// These volumes' lineage (PV names) changed; the others are as they were.
    Volumes(BTreeSet<String>),
    /// The lineage was built again from the snapshot: any volume may have changed, and the
    /// pods were joined from the snapshot too (do not apply the batch's pods after this).
    Rebuilt,
}

impl Applied {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        matches!(self, Applied::Volumes(v) if v.is_empty())
    }
}

/// The attachment a VolumeAttachment gives its PV, with the PV's name.
fn attachment(va: &VolumeAttachment) -> Option<(&str, Attachment)> {
    let pv = va.spec.source.persistent_volume_name.as_deref()?;
    Some((
        pv,
        Attachment {
            name: va.metadata.name.clone().unwrap_or_default(),
            node: va.spec.node_name.clone(),
            attached: va.status.as_ref().is_some_and(|s| s.attached),
            deleting: va.metadata.deletion_timestamp.is_some(),
            finalizers: va.metadata.finalizers.clone().unwrap_or_default(),
        },
    ))
}

/// True when the names of `objs` (as `name` reads them) are unique.
fn unique_names<T>(objs: &[Arc<T>], name: impl Fn(&T) -> &str) -> bool {
    let names: HashSet<&str> = objs.iter().map(|o| name(o)).collect();
    names.len() == objs.len()
}

fn pv_names(v: &[Arc<PersistentVolume>]) -> HashSet<&str> {
    v.iter().map(|p| p.metadata.name.as_deref().unwrap_or("")).collect()
}

fn node_name(n: &Node) -> &str {
    n.metadata.name.as_deref().unwrap_or("")
}

impl Lineage {
    /// Fills the indexes over `volumes` (by PV, claim, image, unique name): the last volume wins
    /// a key two volumes share.
    pub(super) fn index_volumes(&mut self) {
        self.by_pv = self.volumes.iter().enumerate().map(|(i, v)| (v.pv.clone(), i)).collect();
        self.by_pvc = self.volumes.iter().enumerate().filter_map(|(i, v)| v.pvc.clone().map(|c| (c, i))).collect();
        self.by_image =
            self.volumes.iter().enumerate().filter_map(|(i, v)| v.image.clone().map(|im| (im, i))).collect();
        self.by_unique.clear();
        for i in 0..self.volumes.len() {
            let Some(u) = self.volumes[i].unique_name.as_deref() else { continue };
            let h = self.hasher.hash_one(u);
            let (volumes, hasher) = (&self.volumes, &self.hasher);
            let eq = |&j: &usize| volumes[j].unique_name.as_deref() == Some(u);
            let rehash = |&j: &usize| hasher.hash_one(volumes[j].unique_name.as_deref().unwrap_or(""));
            match self.by_unique.entry(h, eq, rehash) {
                hashbrown::hash_table::Entry::Occupied(mut e) => *e.get_mut() = i,
                hashbrown::hash_table::Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
    }

    /// Index of the volume whose `unique_name` is `u`.
    fn by_unique(&self, u: &str) -> Option<usize> {
        let h = self.hasher.hash_one(u);
        self.by_unique.find(h, |&j| self.volumes[j].unique_name.as_deref() == Some(u)).copied()
    }

    /// Adds `va`'s attachment to its PV's volume (at the end: [`Lineage::build`] sorts them).
    pub(super) fn attach(&mut self, va: &VolumeAttachment) {
        let Some((pv, a)) = attachment(va) else { return };
        let Some(&i) = self.by_pv.get(pv) else { return };
        self.attached_to.entry(a.node.clone()).or_default().push(i);
        self.volumes[i].attachments.push(a);
    }

    /// Joins `node`: its addresses (every `status.addresses` IP), and its name into `in_use_on` / `attached_on` of the
    /// volumes its status lists (unsorted: the caller sorts them).
    pub(super) fn join_node(&mut self, node: &Node) {
        let name = node_name(node);
        for (ip, _) in node_addresses(node) {
            if self.node_by_ip.insert(ip.to_canonical(), name.to_string()).is_some_and(|n| n != name) {
                self.shared_ips = true;
            }
        }
        for u in volumes_in_use(node) {
            if let Some(i) = self.by_unique(u) {
                self.volumes[i].in_use_on.push(name.to_string());
            }
        }
        for u in volumes_attached(node) {
            if let Some(i) = self.by_unique(u) {
                self.volumes[i].attached_on.push(name.to_string());
            }
        }
    }

    /// Takes `node` (as joined) out: its addresses, its name from the volumes its status lists.
    fn leave_node(&mut self, node: &Node) {
        let name = node_name(node);
        for (ip, _) in node_addresses(node) {
            let ip = ip.to_canonical();
            if self.node_by_ip.get(&ip).is_some_and(|n| n == name) {
                self.node_by_ip.remove(&ip);
            }
        }
        let listed: Vec<usize> = volumes_in_use(node)
            .iter()
            .map(String::as_str)
            .chain(volumes_attached(node))
            .filter_map(|u| self.by_unique(u))
            .collect();
        for &i in &listed {
            let v = &mut self.volumes[i];
            v.in_use_on.retain(|n| n != name);
            v.attached_on.retain(|n| n != name);
        }
    }

    /// The volumes attached to node `name` by a VolumeAttachment (`spec.nodeName`), and those
    /// the `status.volumesAttached` of `versions` (the node's objects) lists: what a change of
    /// the node's health can alter the findings of (indices into [`Lineage::volumes`], maybe
    /// repeated).
    pub fn volumes_on_node<'a>(&'a self, name: &str, versions: &'a [&'a Node]) -> impl Iterator<Item = usize> + 'a {
        let by_va = self.attached_to.get(name).into_iter().flatten().copied();
        let listed = versions.iter().flat_map(|n| volumes_attached(n)).filter_map(|u| self.by_unique(u));
        by_va.chain(listed)
    }

    /// Applies changed VolumeAttachments: each one's attachment leaves (`gone`) or joins
    /// (`came`) the volume of the PV it names, in name order. Never falls back.
    pub fn apply_vas(&mut self, gone: &[Arc<VolumeAttachment>], came: &[Arc<VolumeAttachment>]) -> Applied {
        let mut touched = BTreeSet::new();
        for va in gone {
            let Some((pv, a)) = attachment(va) else { continue };
            let Some(&i) = self.by_pv.get(pv) else { continue };
            let atts = &mut self.volumes[i].attachments;
            if let Some(k) = atts.iter().position(|x| *x == a) {
                atts.remove(k);
                if let Some(on) = self.attached_to.get_mut(&a.node) {
                    if let Some(k) = on.iter().position(|&j| j == i) {
                        on.swap_remove(k);
                    }
                    if on.is_empty() {
                        self.attached_to.remove(&a.node);
                    }
                }
                touched.insert(pv.to_string());
            }
        }
        for va in came {
            let Some((pv, a)) = attachment(va) else { continue };
            let Some(&i) = self.by_pv.get(pv) else { continue };
            self.attached_to.entry(a.node.clone()).or_default().push(i);
            let atts = &mut self.volumes[i].attachments;
            let k = atts.partition_point(|x| x.name <= a.name);
            atts.insert(k, a);
            touched.insert(pv.to_string());
        }
        Applied::Volumes(touched)
    }

    /// Applies changed nodes: their addresses, and their names in `in_use_on` / `attached_on`
    /// of the volumes their old and new status list. Returns the volumes whose lists changed.
    /// Falls back to a build when two nodes of `gone` or of `came` share a name.
    pub fn apply_nodes(&mut self, gone: &[Arc<Node>], came: &[Arc<Node>], snap: &Snapshot) -> Applied {
        if !unique_names(gone, node_name) || !unique_names(came, node_name) {
            *self = Lineage::build(snap);
            return Applied::Rebuilt;
        }
        // the volumes the old and the new versions list, with their lists as they are now
        let mut at: Vec<usize> = gone
            .iter()
            .chain(came)
            .flat_map(|n| volumes_in_use(n).iter().map(String::as_str).chain(volumes_attached(n)))
            .filter_map(|u| self.by_unique(u))
            .collect();
        at.sort_unstable();
        at.dedup();
        let before: Vec<(Vec<String>, Vec<String>)> =
            at.iter().map(|&i| (self.volumes[i].in_use_on.clone(), self.volumes[i].attached_on.clone())).collect();
        for n in gone {
            self.leave_node(n);
        }
        for n in came {
            self.join_node(n);
        }
        if self.shared_ips {
            self.node_by_ip.clear();
            for n in &snap.nodes {
                for (ip, _) in node_addresses(n) {
                    self.node_by_ip.insert(ip.to_canonical(), node_name(n).to_string());
                }
            }
        }
        let mut touched = BTreeSet::new();
        for (&i, (in_use, attached)) in at.iter().zip(before) {
            let v = &mut self.volumes[i];
            v.in_use_on.sort();
            v.attached_on.sort();
            if v.in_use_on != in_use || v.attached_on != attached {
                touched.insert(v.pv.clone());
            }
        }
        Applied::Volumes(touched)
    }

    /// Applies PVs changed in place (the same names in `gone` and `came`, nothing added or
    /// removed): a PV whose claim, driver, image, volumeHandle and unique name are as they were
    /// only updates its access modes. Anything else falls back to a build (see the module doc).
    pub fn apply_pvs(
        &mut self,
        gone: &[Arc<PersistentVolume>],
        came: &[Arc<PersistentVolume>],
        snap: &Snapshot,
    ) -> Applied {
        let (was, is) = (pv_names(gone), pv_names(came));
        let in_place = was == is && was.len() == gone.len() && is.len() == came.len();
        let mut updates: Vec<(usize, VolumeLineage)> = Vec::with_capacity(came.len());
        for pv in came.iter().take_while(|_| in_place) {
            let v = volume_of(pv);
            let Some(&i) = self.by_pv.get(&v.pv) else { break };
            let old = &self.volumes[i];
            let same = (&old.pvc, &old.driver, &old.image, &old.subvolume, &old.volume_handle, &old.unique_name)
                == (&v.pvc, &v.driver, &v.image, &v.subvolume, &v.volume_handle, &v.unique_name);
            if !same {
                break;
            }
            updates.push((i, v));
        }
        if !in_place || updates.len() != came.len() {
            *self = Lineage::build(snap);
            return Applied::Rebuilt;
        }
        let mut touched = BTreeSet::new();
        for (i, v) in updates {
            if self.volumes[i].access_modes != v.access_modes {
                self.volumes[i].access_modes = v.access_modes;
                touched.insert(v.pv);
            }
        }
        Applied::Volumes(touched)
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
