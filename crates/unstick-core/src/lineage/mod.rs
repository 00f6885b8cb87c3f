//! Lineage: Pod → PVC → PV → RBD image → watchers/locks → the node whose InternalIP owns the
//! address; plus VolumeAttachments and node `volumesAttached` / `volumesInUse`.
//!
//! Built from a [`Snapshot`] in one pass over each kind (O(objects)); pure. Kept up to date
//! per watch event by the `apply_*` methods (`lineage_apply.rs`, issue 13).

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;

use crate::model::objects::{PersistentVolume, Pod};

use crate::model::ceph::EntityAddr;
use crate::model::kube::pod_claims;
use crate::model::{ImageRef, Snapshot, key_of};

/// In-tree RBD plugin name (deprecated in 1.28, removed in 1.31).
pub const IN_TREE_RBD: &str = "kubernetes.io/rbd";

pub use crate::model::kube::is_cephfs_driver;

/// The CephFS subvolume behind a ceph-csi CephFS PV (`volumeAttributes` `fsName`,
/// `subvolumeName`, `subvolumeGroup`; ceph-csi's defaults otherwise: the name `csi-vol-<uuid>`
/// from the volumeHandle, the group `csi`). `ceph fs subvolume info <fs> <name> --group_name
/// <group>` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subvolume {
    /// The filesystem (`fsName`); `None` when the PV does not say.
    pub fs: Option<String>,
    /// The subvolume's name.
    pub name: String,
    /// The subvolume group (`csi` unless the PV names another).
    pub group: String,
}

impl Subvolume {
    /// `<fs>/<group>/<name>` (`?` for an unknown filesystem), as the evidence prints it.
    pub fn spec(&self) -> String {
        format!("{}/{}/{}", self.fs.as_deref().unwrap_or("?"), self.group, self.name)
    }

    /// The read-only `ceph` command that shows it.
    pub fn info_command(&self) -> String {
        format!(
            "ceph fs subvolume info {} {} --group_name {}",
            self.fs.as_deref().unwrap_or("<fs>"),
            self.name,
            self.group
        )
    }
}

/// True for the ceph-csi RBD driver: `rbd.csi.ceph.com` or `<namespace>.rbd.csi.ceph.com` (Rook).
pub fn is_rbd_csi_driver(driver: &str) -> bool {
    driver == "rbd.csi.ceph.com" || driver.ends_with(".rbd.csi.ceph.com")
}

/// A VolumeAttachment of a volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// VolumeAttachment name.
    pub name: String,
    /// `spec.nodeName`.
    pub node: String,
    /// `status.attached`.
    pub attached: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
}

impl Attachment {
    /// The external attacher's finalizer (`external-attacher/<driver>`), if it holds one.
    pub fn attacher_finalizer(&self) -> Option<&str> {
        self.finalizers.iter().map(String::as_str).find(|f| f.starts_with("external-attacher/"))
    }
}

/// What [`Lineage::update_pods`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodsChanged {
    /// `namespace/name` of each pod removed, added or changed (a changed pod may appear twice).
    pub keys: Vec<String>,
    /// Some changed pod is, or was, joined to a volume (true when not known).
    pub joined: bool,
}

/// One PersistentVolume and everything joined to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeLineage {
    /// PV name.
    pub pv: String,
    /// Bound claim as `namespace/name` (from `spec.claimRef`).
    pub pvc: Option<String>,
    /// CSI driver name, `kubernetes.io/rbd` for in-tree RBD, or the volume source kind.
    pub driver: String,
    /// The RBD image, when the PV is RBD-backed (CSI or in-tree).
    pub image: Option<ImageRef>,
    /// The CephFS subvolume, when the PV is a ceph-csi CephFS volume.
    pub subvolume: Option<Subvolume>,
    /// CSI `volumeHandle`.
    pub volume_handle: Option<String>,
    /// The name kubelet and the attach-detach controller use in `volumesInUse`/`volumesAttached`:
    /// `kubernetes.io/csi/<driver>^<volumeHandle>` or `kubernetes.io/rbd/<pool>:<image>`.
    pub unique_name: Option<String>,
    /// `spec.accessModes` (`ReadWriteOnce`, ...).
    pub access_modes: Vec<String>,
    /// VolumeAttachments whose `spec.source.persistentVolumeName` is this PV.
    pub attachments: Vec<Attachment>,
    /// Nodes whose `status.volumesInUse` lists `unique_name`.
    pub in_use_on: Vec<String>,
    /// Nodes whose `status.volumesAttached` lists `unique_name`.
    pub attached_on: Vec<String>,
    /// Pods (`namespace/name`) that mount the bound claim.
    pub pods: Vec<String>,
}

/// The joined view of a snapshot.
#[derive(Debug, Clone, Default)]
pub struct Lineage {
    /// One entry per PV, sorted by PVC key then PV name.
    pub volumes: Vec<VolumeLineage>,
    by_pv: HashMap<String, usize>,
    by_pvc: HashMap<String, usize>,
    by_image: HashMap<ImageRef, usize>,
    pod_volumes: HashMap<String, Vec<usize>>,
    node_by_ip: HashMap<IpAddr, String>,
    /// Volume index by `unique_name`, hashed on the volume's own name (no copy).
    by_unique: hashbrown::HashTable<usize>,
    hasher: hashbrown::DefaultHashBuilder,
    /// Node name (`spec.nodeName` of a VolumeAttachment) → the volumes attached to it, one entry
    /// per attachment.
    attached_to: HashMap<String, Vec<usize>>,
    /// Two nodes share an InternalIP: [`Lineage::node_for_ip`] gives the last one in the nodes'
    /// order, which the incremental update cannot know: it redoes the addresses whole then.
    shared_ips: bool,
}

impl Lineage {
    /// Joins everything in `snap`. A volume's attachments are in VolumeAttachment name order
    /// (the order of the stores' lists; sorted here so that the incremental updates of
    /// [`Lineage::apply_vas`] equal a build whatever the input order).
    pub fn build(snap: &Snapshot) -> Lineage {
        let mut volumes: Vec<VolumeLineage> = snap.pvs.iter().map(|pv| volume_of(pv)).collect();
        volumes.sort_by(|a, b| (&a.pvc, &a.pv).cmp(&(&b.pvc, &b.pv)));
        let mut lin = Lineage { volumes, ..Lineage::default() };
        lin.index_volumes();
        for va in &snap.volume_attachments {
            lin.attach(va);
        }
        for v in &mut lin.volumes {
            v.attachments.sort_by(|a, b| a.name.cmp(&b.name));
        }
        for node in &snap.nodes {
            lin.join_node(node);
        }
        for pod in &snap.pods {
            join_pod(&mut lin.volumes, &lin.by_pvc, &mut lin.pod_volumes, pod);
        }
        for v in &mut lin.volumes {
            v.pods.sort();
            v.in_use_on.sort();
            v.attached_on.sort();
            // lists grown by push sit in buffers of four: at 20k volumes with one pod and one
            // attachment each, 9 MB of them were empty (heaptrack, issue 29)
            v.pods.shrink_to_fit();
            v.in_use_on.shrink_to_fit();
            v.attached_on.shrink_to_fit();
            v.attachments.shrink_to_fit();
        }
        for v in lin.pod_volumes.values_mut() {
            v.shrink_to_fit();
        }
        lin
    }

    /// Redoes the pod join for the pods that changed between `old` (the pods this lineage was
    /// built or last updated from) and `new`: a pod whose `Arc` is in both is the same object.
    /// The nodes, PVs and VolumeAttachments must be the ones the lineage was built from. The
    /// result equals [`Lineage::build`] on the new snapshot; the cost is two passes over the
    /// pointers plus the changed pods' joins (a watch event changes one pod of thousands).
    /// Pod keys are unique in `new` (as in the stores); falls back to joining every pod when two
    /// changed pods share a key. Returns the changed pods' keys and whether any of them is or was
    /// joined to a volume (always true after the fall-back).
    pub fn update_pods(&mut self, old: &[Arc<Pod>], new: &[Arc<Pod>]) -> PodsChanged {
        let ptrs = |v: &[Arc<Pod>]| v.iter().map(|p| Arc::as_ptr(p) as usize).collect::<HashSet<usize>>();
        let (was, is) = (ptrs(old), ptrs(new));
        if was.len() != old.len() || is.len() != new.len() {
            return self.rejoin_all_pods(new, vec![]);
        }
        let gone: Vec<Arc<Pod>> = old.iter().filter(|p| !is.contains(&(Arc::as_ptr(p) as usize))).cloned().collect();
        let came: Vec<Arc<Pod>> = new.iter().filter(|p| !was.contains(&(Arc::as_ptr(p) as usize))).cloned().collect();
        self.apply_pods(&gone, &came, new)
    }

    /// [`Lineage::update_pods`] given what changed: `gone` are the pods (the `Arc`s this lineage
    /// joined) no longer in `all`, `came` the pods of `all` it has not joined yet; `all` is every
    /// pod now, read only on the fall-back (two changed pods sharing a key). The cost is the
    /// changed pods' joins.
    pub fn apply_pods(&mut self, gone: &[Arc<Pod>], came: &[Arc<Pod>], all: &[Arc<Pod>]) -> PodsChanged {
        let keys = |v: &[Arc<Pod>]| v.iter().map(|p| key_of(&p.metadata)).collect::<HashSet<String>>();
        if keys(gone).len() != gone.len() || keys(came).len() != came.len() {
            return self.rejoin_all_pods(all, vec![]);
        }
        let mut changed = PodsChanged { keys: Vec::with_capacity(gone.len() + came.len()), joined: false };
        for p in gone {
            let key = key_of(&p.metadata);
            let joined_to = self.pod_volumes.remove(&key).unwrap_or_default();
            changed.joined |= !joined_to.is_empty();
            changed.keys.push(key.clone());
            for i in joined_to {
                self.volumes[i].pods.retain(|k| *k != key);
            }
        }
        for p in came {
            let key = key_of(&p.metadata);
            if self.pod_volumes.contains_key(&key) {
                // another pod object of this key is still joined: the keys are not unique
                return self.rejoin_all_pods(all, changed.keys);
            }
            join_pod(&mut self.volumes, &self.by_pvc, &mut self.pod_volumes, p);
            for &i in self.pod_volumes.get(&key).into_iter().flatten() {
                changed.joined = true;
                self.volumes[i].pods.sort();
            }
            changed.keys.push(key);
        }
        changed
    }

    fn rejoin_all_pods(&mut self, pods: &[Arc<Pod>], keys: Vec<String>) -> PodsChanged {
        self.pod_volumes.clear();
        for v in &mut self.volumes {
            v.pods.clear();
        }
        for pod in pods {
            join_pod(&mut self.volumes, &self.by_pvc, &mut self.pod_volumes, pod);
        }
        for v in &mut self.volumes {
            v.pods.sort();
        }
        PodsChanged { keys, joined: true }
    }

    /// The volume of PV `name`.
    pub fn by_pv(&self, name: &str) -> Option<&VolumeLineage> {
        self.by_pv.get(name).map(|&i| &self.volumes[i])
    }

    /// The volume bound to claim `namespace/name`.
    pub fn by_pvc(&self, key: &str) -> Option<&VolumeLineage> {
        self.by_pvc.get(key).map(|&i| &self.volumes[i])
    }

    /// Index into [`Lineage::volumes`] of the volume bound to claim `namespace/name`.
    pub fn index_of_pvc(&self, key: &str) -> Option<usize> {
        self.by_pvc.get(key).copied()
    }

    /// The volume backed by `image`.
    pub fn by_image(&self, image: &ImageRef) -> Option<&VolumeLineage> {
        self.by_image.get(image).map(|&i| &self.volumes[i])
    }

    /// Indices into [`Lineage::volumes`] of the volumes a pod (`namespace/name`) mounts, once
    /// per claim of the pod (in its volumes' order).
    pub fn volume_indices_of_pod(&self, pod_key: &str) -> &[usize] {
        self.pod_volumes.get(pod_key).map(Vec::as_slice).unwrap_or_default()
    }

    /// The volumes a pod (`namespace/name`) mounts.
    pub fn volumes_of_pod(&self, pod_key: &str) -> impl Iterator<Item = &VolumeLineage> {
        self.pod_volumes.get(pod_key).into_iter().flatten().map(|&i| &self.volumes[i])
    }

    /// The node whose InternalIP (any of a dual-stack node's, IPv4 or IPv6) is the host of a Ceph
    /// client address (`IP:PORT/NONCE`, or the first address of a vector whose IP is a node's).
    pub fn node_for_address(&self, addr: &str) -> Option<&str> {
        EntityAddr::parse_all(addr).iter().find_map(|a| self.node_by_ip.get(&a.ip)).map(String::as_str)
    }

    /// False when two nodes share an InternalIP ([`Lineage::node_for_ip`] then names only the
    /// last of them in name order).
    pub fn ips_unique(&self) -> bool {
        !self.shared_ips
    }

    /// The node with InternalIP `ip`.
    pub fn node_for_ip(&self, ip: IpAddr) -> Option<&str> {
        self.node_by_ip.get(&ip).map(String::as_str)
    }

    /// Every RBD image referenced by a PV, sorted.
    pub fn images(&self) -> Vec<ImageRef> {
        let mut v: Vec<ImageRef> = self.volumes.iter().filter_map(|v| v.image.clone()).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// Joins `pod` to the volumes of its claims (unsorted: the caller sorts each volume's pods).
fn join_pod(
    volumes: &mut [VolumeLineage],
    by_pvc: &HashMap<String, usize>,
    pod_volumes: &mut HashMap<String, Vec<usize>>,
    pod: &Pod,
) {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let key = key_of(&pod.metadata);
    for claim in pod_claims(pod) {
        if let Some(&i) = by_pvc.get(&format!("{ns}/{claim}")) {
            volumes[i].pods.push(key.clone());
            pod_volumes.entry(key.clone()).or_default().push(i);
        }
    }
}

/// Reads one PV: driver, image, unique name, access modes, claim.
pub fn volume_of(pv: &PersistentVolume) -> VolumeLineage {
    let spec = pv.spec.as_ref();
    let pvc = spec
        .and_then(|s| s.claim_ref.as_ref())
        .and_then(|c| Some(format!("{}/{}", c.namespace.as_deref().unwrap_or("default"), c.name.as_deref()?)));
    let access_modes = spec.and_then(|s| s.access_modes.clone()).unwrap_or_default();
    let mut v = VolumeLineage {
        pv: pv.metadata.name.clone().unwrap_or_default(),
        pvc,
        driver: "unknown".into(),
        image: None,
        subvolume: None,
        volume_handle: None,
        unique_name: None,
        access_modes,
        attachments: vec![],
        in_use_on: vec![],
        attached_on: vec![],
        pods: vec![],
    };
    if let Some(csi) = spec.and_then(|s| s.csi.as_ref()) {
        v.driver = csi.driver.clone();
        v.volume_handle = Some(csi.volume_handle.clone());
        v.unique_name = Some(format!("kubernetes.io/csi/{}^{}", csi.driver, csi.volume_handle));
        let attrs = csi.volume_attributes.as_ref();
        let get = |k: &str| attrs.and_then(|a| a.get(k)).filter(|s| !s.is_empty()).cloned();
        if is_cephfs_driver(&csi.driver) {
            let name = get("subvolumeName")
                .or_else(|| parse_volume_handle(&csi.volume_handle).map(|h| format!("csi-vol-{}", h.uuid)));
            v.subvolume = name.map(|name| Subvolume {
                fs: get("fsName"),
                name,
                group: get("subvolumeGroup").unwrap_or_else(|| "csi".into()),
            });
        }
        if is_rbd_csi_driver(&csi.driver) {
            let image = get("imageName")
                .or_else(|| parse_volume_handle(&csi.volume_handle).map(|h| format!("csi-vol-{}", h.uuid)));
            if let (Some(pool), Some(image)) = (get("pool"), image) {
                v.image = Some(ImageRef { pool, namespace: get("radosNamespace").unwrap_or_default(), image });
            }
        }
    } else if let Some(rbd) = spec.and_then(|s| s.rbd.as_ref()) {
        v.driver = IN_TREE_RBD.into();
        let pool = rbd.pool.clone().unwrap_or_else(|| "rbd".into());
        v.unique_name = Some(format!("{IN_TREE_RBD}/{pool}:{}", rbd.image));
        v.image = Some(ImageRef::new(pool, rbd.image.clone()));
    } else if let Some(s) = spec {
        v.driver = if s.host_path.is_some() {
            "hostPath"
        } else if s.nfs.is_some() {
            "nfs"
        } else if s.local.is_some() {
            "local"
        } else if s.cephfs.is_some() {
            "cephfs"
        } else {
            "other"
        }
        .into();
    }
    v
}

/// The parts of a ceph-csi `volumeHandle`:
/// `<version 4 hex>-<len(clusterID) 4 hex>-<clusterID>-<pool id 16 hex>-<uuid 36>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeHandle {
    /// Encoding version (1).
    pub version: u16,
    /// clusterID (`rook-ceph`, or a fsid).
    pub cluster_id: String,
    /// Pool id (numeric).
    pub pool_id: u64,
    /// The image's UUID; the image is `csi-vol-<uuid>` with the default prefix.
    pub uuid: String,
}

/// Parses a ceph-csi volumeHandle; `None` if it is not one.
pub fn parse_volume_handle(h: &str) -> Option<VolumeHandle> {
    let version = u16::from_str_radix(h.get(0..4)?, 16).ok()?;
    if h.get(4..5)? != "-" {
        return None;
    }
    let len = usize::from_str_radix(h.get(5..9)?, 16).ok()?;
    if h.get(9..10)? != "-" {
        return None;
    }
    let cluster_id = h.get(10..10 + len)?.to_string();
    let rest = h.get(10 + len..)?.strip_prefix('-')?;
    let pool_id = u64::from_str_radix(rest.get(0..16)?, 16).ok()?;
    let uuid = rest.get(16..)?.strip_prefix('-')?.to_string();
    if uuid.len() != 36 || !uuid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return None;
    }
    Some(VolumeHandle { version, cluster_id, pool_id, uuid })
}

pub mod apply;

#[cfg(test)]
mod tests;
