//! Slim Kubernetes objects: the six kinds the console watches, holding exactly the fields that the
//! panes, lineage, diagnosis, remedy's targets and the bundle read. Field names and `Option`
//! shapes are k8s-openapi's (`pod.spec.as_ref()?.node_name`), leaf types are k8s-openapi's where
//! they are small (`Time`, `Taint`, `NodeCondition`, `ObjectReference`...). Unknown fields are
//! skipped by the parser (serde's default), so `managedFields`, container env / resources / probes,
//! labels, annotations and every volume source other than a PVC or hostPath are never built
//! (issue 13: a whole `k8s_openapi::Pod` of a real cluster costs several KB; these a few hundred
//! bytes). Full objects stay where they are needed: describe's and remedy's live GETs before a
//! write, and `collect`'s bundle (it lists full objects and converts with [`super::meta::from_full`]).
//!
//! Inventory (every reader in the crate, `grep` of the accessors):
//! - metadata (all kinds, [`Meta`]): `name`, `namespace` (the stores' keys), `uid` (restage,
//!   remedy targets), `creationTimestamp` (pod age, waiting-since, event
//!   time fallback), `deletionTimestamp` (Terminating, VolumeAttachment being deleted),
//!   `finalizers` (VolumeAttachment finalizer rule, lineage), `ownerReferences` of kind
//!   DaemonSet, ReplicaSet or StatefulSet (DaemonSet pods holding a host mount; the controller a
//!   write's blast radius names; the others are dropped).
//! - Pod: `spec.nodeName`; `spec.volumes[]` `name` + `persistentVolumeClaim.claimName` (lineage)
//!   or `hostPath.path` (host-mount holders; other volumes are dropped at parse time);
//!   `spec.containers[]` `name` + `volumeMounts[]` `name`/`mountPath`/`mountPropagation` of the
//!   hostPath volumes only (containers without one are dropped); `status.phase`,
//!   `status.startTime`, `status.(init)containerStatuses[]` `name` + `state.waiting.reason` (only
//!   the waiting ones are kept); `spec.hostNetwork`, `status.podIPs` (address attribution).
//! - Node: `metadata.annotations` (a cluster-scoped object's, [`Meta`]); `spec.taints`; `status.addresses`, `status.conditions`, `status.volumesInUse`,
//!   `status.volumesAttached`, `status.nodeInfo.bootID` (guarded unfence).
//! - PVC: `spec.volumeName`, `spec.accessModes`, `spec.storageClassName`; `status.phase`,
//!   `status.accessModes`.
//! - PV: `spec.claimRef`, `spec.csi` (driver, volumeHandle, volumeAttributes `pool` /
//!   `imageName` / `radosNamespace`, and CephFS's `fsName` / `subvolumeName` / `subvolumeGroup`), `spec.rbd` (in-tree pool/image), `spec.accessModes`,
//!   `spec.storageClassName`, `spec.persistentVolumeReclaimPolicy`; `status.phase`.
//! - VolumeAttachment: `spec.attacher`, `spec.nodeName`, `spec.source.persistentVolumeName`;
//!   `status.attached`, `status.attachError`, `status.detachError`.
//! - Event: `involvedObject`, `reason`, `message`, `type`, `count`, `firstTimestamp`,
//!   `lastTimestamp`, `eventTime`, `series`, `source`. Which events are kept, and how many per
//!   object: [`super::event_bound`].

use k8s_openapi::api::core::v1::{
    AttachedVolume, ContainerStateWaiting, EventSeries, EventSource, HostPathVolumeSource, NodeAddress, NodeCondition,
    ObjectReference, PersistentVolumeClaimVolumeSource, RBDPersistentVolumeSource, Taint,
};
use k8s_openapi::api::storage::v1::VolumeError;

pub use super::pod_condition::PodCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use serde::{Deserialize, Serialize};

use super::exact::kept;
use super::meta::{Meta, impl_resource};

/// core/v1 Pod, slim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pod {
    /// Kept metadata ([`super::meta`]).
    #[serde(default)]
    pub metadata: Meta,
    /// Kept spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
    /// Kept status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodStatus>,
}
impl_resource!(Pod, "", "v1", "v1", "Pod", "pods", NamespaceResourceScope);

/// The kept `spec` of a Pod: only PVC and hostPath volumes, and only the mounts of hostPath
/// volumes (what lineage and the host-mount holders read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "RawPodSpec")]
pub struct PodSpec {
    /// `spec.nodeName`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// PVC and hostPath volumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volumes: Option<Vec<Volume>>,
    /// Containers: name and hostPath mounts.
    pub containers: Vec<Container>,
    /// `spec.hostNetwork`: the pod's IPs are its node's (attribution ignores them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPodSpec {
    #[serde(default)]
    node_name: Option<String>,
    #[serde(default)]
    volumes: Option<Vec<Volume>>,
    #[serde(default)]
    containers: Vec<Container>,
    #[serde(default)]
    host_network: Option<bool>,
}

impl From<RawPodSpec> for PodSpec {
    fn from(r: RawPodSpec) -> Self {
        let volumes = r.volumes.map(|v| kept(v, |v| v.persistent_volume_claim.is_some() || v.host_path.is_some()));
        let host: Vec<&str> =
            volumes.iter().flatten().filter(|v| v.host_path.is_some()).map(|v| v.name.as_str()).collect();
        // containers without a hostPath mount are never read: not kept
        let containers =
            kept(r.containers, |c| c.volume_mounts.iter().flatten().any(|m| host.contains(&m.name.as_str())))
                .into_iter()
                .map(|c| Container {
                    volume_mounts: c
                        .volume_mounts
                        .map(|m| kept(m, |m| host.contains(&m.name.as_str())))
                        .filter(|m| !m.is_empty()),
                    name: c.name,
                })
                .collect();
        PodSpec { node_name: r.node_name, volumes, containers, host_network: r.host_network.filter(|h| *h) }
    }
}

/// A Pod volume: its name and, when it is one, the PVC or hostPath source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// Volume name.
    pub name: String,
    /// `persistentVolumeClaim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<PersistentVolumeClaimVolumeSource>,
    /// `hostPath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<HostPathVolumeSource>,
}

/// A container: name and volume mounts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Container name.
    pub name: String,
    /// Mounts (of hostPath volumes only, in a [`PodSpec`]).
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub volume_mounts: Option<Vec<VolumeMount>>,
}

/// A volume mount.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    /// Volume name.
    pub name: String,
    /// Path in the container.
    pub mount_path: String,
    /// `None`, `HostToContainer`, `Bidirectional`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_propagation: Option<String>,
}

/// The kept `status` of a Pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// `Pending`, `Running`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// When the kubelet started the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// Init container states (only the waiting ones: their reason is all that is read).
    #[serde(default, deserialize_with = "waiting_only", skip_serializing_if = "Option::is_none")]
    pub init_container_statuses: Option<Vec<ContainerStatus>>,
    /// Container states (only the waiting ones).
    #[serde(default, deserialize_with = "waiting_only", skip_serializing_if = "Option::is_none")]
    pub container_statuses: Option<Vec<ContainerStatus>>,
    /// Pod conditions, only `DisruptionTarget` kept: why the pod GC, the taint manager, an eviction
    /// or preemption is deleting the pod (`reason` `DeletionByTaintManager`, `DeletionByPodGC`,
    /// `EvictionByEvictionAPI`, `PreemptionByScheduler`, `TerminationByKubelet`; GA in 1.31,
    /// KEP-3329).
    #[serde(
        default,
        deserialize_with = "super::pod_condition::disruption_only",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<PodCondition>,
    /// `status.podIPs` (`[{"ip": "10.244.1.7"}, {"ip": "fd00::7"}]`, dual stack): a ceph-csi node
    /// plugin's or holder pod's address is its Ceph clients' address ([`crate::attribution`]).
    #[serde(
        default,
        rename = "podIPs",
        deserialize_with = "super::exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub pod_ips: Option<Vec<PodIp>>,
}

/// One `status.podIPs` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodIp {
    /// The address, as the API server wrote it.
    #[serde(default)]
    pub ip: String,
}

/// Container statuses, keeping only those in a `waiting` state (a running or terminated
/// container's status is never read).
fn waiting_only<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<ContainerStatus>>, D::Error> {
    let v: Option<Vec<ContainerStatus>> = Option::deserialize(d)?;
    Ok(v.map(|v| kept(v, |c| c.state.as_ref().is_some_and(|s| s.waiting.is_some()))))
}

/// A container status: name and state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Current state (only `waiting` is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerState>,
}

/// A container state: only `waiting` (its reason is the pod's STATUS).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContainerState {
    /// `waiting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<ContainerStateWaiting>,
}

/// core/v1 Node, slim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Kept metadata.
    #[serde(default)]
    pub metadata: Meta,
    /// Kept spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<NodeSpec>,
    /// Kept status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<NodeStatus>,
}
impl_resource!(Node, "", "v1", "v1", "Node", "nodes", ClusterResourceScope);

/// The kept `spec` of a Node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Taints (`node.kubernetes.io/out-of-service`, `unreachable`).
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
}

/// The kept `status` of a Node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Addresses (InternalIP is matched against watchers and the blocklist).
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<NodeAddress>>,
    /// Conditions (Ready).
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<NodeCondition>>,
    /// `bootID` and nothing else of `nodeInfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_info: Option<NodeSystemInfo>,
    /// Volumes attached to the node.
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub volumes_attached: Option<Vec<AttachedVolume>>,
    /// Volumes in use (mounted) on the node.
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub volumes_in_use: Option<Vec<String>>,
}

/// The kept `status.nodeInfo` of a Node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSystemInfo {
    /// `bootID`: changes when the node reboots.
    #[serde(rename = "bootID", default)]
    pub boot_id: String,
    /// `kubeletVersion` as the kubelet reports it (`v1.37.2`); empty when not reported.
    #[serde(rename = "kubeletVersion", default)]
    pub kubelet_version: String,
}

/// core/v1 PersistentVolumeClaim, slim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PersistentVolumeClaim {
    /// Kept metadata.
    #[serde(default)]
    pub metadata: Meta,
    /// Kept spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PersistentVolumeClaimSpec>,
    /// Kept status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PersistentVolumeClaimStatus>,
}
impl_resource!(
    PersistentVolumeClaim,
    "",
    "v1",
    "v1",
    "PersistentVolumeClaim",
    "persistentvolumeclaims",
    NamespaceResourceScope
);

/// The kept `spec` of a PVC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimSpec {
    /// Access modes asked for.
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub access_modes: Option<Vec<String>>,
    /// StorageClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    /// The bound PV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_name: Option<String>,
}

/// The kept `status` of a PVC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimStatus {
    /// Access modes of the bound volume.
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub access_modes: Option<Vec<String>>,
    /// `Pending`, `Bound`, `Lost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// core/v1 PersistentVolume, slim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PersistentVolume {
    /// Kept metadata, without annotations (nothing reads a PersistentVolume's).
    #[serde(default, deserialize_with = "super::meta::without_annotations")]
    pub metadata: Meta,
    /// Kept spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PersistentVolumeSpec>,
    /// Kept status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PersistentVolumeStatus>,
}
impl_resource!(PersistentVolume, "", "v1", "v1", "PersistentVolume", "persistentvolumes", ClusterResourceScope);

/// The kept `spec` of a PV: the claim, and the CSI or in-tree RBD source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeSpec {
    /// Access modes.
    #[serde(default, deserialize_with = "super::exact::opt", skip_serializing_if = "Option::is_none")]
    pub access_modes: Option<Vec<String>>,
    /// The claim bound to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_ref: Option<ObjectReference>,
    /// CSI source (ceph-csi: `volumeHandle`, `volumeAttributes.pool` / `imageName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csi: Option<CsiSource>,
    /// `Retain`, `Delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_reclaim_policy: Option<String>,
    /// In-tree RBD source (boxed: about 200 bytes that every CSI volume would carry empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbd: Option<Box<RBDPersistentVolumeSource>>,
    /// StorageClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    /// A hostPath source (only its presence: the driver column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<Present>,
    /// An NFS source (presence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<Present>,
    /// A local source (presence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<Present>,
    /// A CephFS source (presence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cephfs: Option<Present>,
}

/// The kept CSI source of a PV: driver, `volumeHandle`, and of `volumeAttributes` only what the
/// lineage reads (ceph-csi's `pool`, `imageName`, `radosNamespace`; the `clusterID`,
/// `imageFeatures`, `journalPool`, provisioner identity and the five secret references of
/// k8s-openapi's `CSIPersistentVolumeSource` cost ~1.5 KB per PV and were never read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsiSource {
    /// The CSI driver (`rbd.csi.ceph.com`, `<namespace>.rbd.csi.ceph.com`).
    pub driver: String,
    /// The kept `volumeAttributes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_attributes: Option<VolumeAttributes>,
    /// `volumeHandle` (ceph-csi: `0001-0009-<clusterID>-<pool id>-<uuid>`).
    pub volume_handle: String,
}

/// The `volumeAttributes` of a CSI source the lineage reads, sorted by key: a JSON object as in
/// the API, of which [`VolumeAttributes::KEPT`] are kept at parse time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VolumeAttributes(Vec<(String, String)>);

impl VolumeAttributes {
    /// The keys kept (sorted): the RBD image's, and the CephFS subvolume's (`fsName`,
    /// `subvolumeGroup`, `subvolumeName`).
    pub const KEPT: [&str; 6] = ["fsName", "imageName", "pool", "radosNamespace", "subvolumeGroup", "subvolumeName"];

    /// The value of `key`, if kept and present.
    pub fn get(&self, key: &str) -> Option<&String> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'de> Deserialize<'de> for VolumeAttributes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let all: std::collections::BTreeMap<String, String> = Deserialize::deserialize(d)?;
        let mut v: Vec<(String, String)> = all.into_iter().filter(|(k, _)| Self::KEPT.contains(&k.as_str())).collect();
        v.shrink_to_fit();
        Ok(VolumeAttributes(v))
    }
}

impl Serialize for VolumeAttributes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// A field of which only the presence is kept: parsed from any value (skipped), written as `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Present;

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Present)
    }
}

impl Serialize for Present {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

/// The kept `status` of a PV.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PersistentVolumeStatus {
    /// `Available`, `Bound`, `Released`, `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// storage.k8s.io/v1 VolumeAttachment, slim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VolumeAttachment {
    /// Kept metadata, without annotations (nothing reads a VolumeAttachment's).
    #[serde(default, deserialize_with = "super::meta::without_annotations")]
    pub metadata: Meta,
    /// The spec.
    #[serde(default)]
    pub spec: VolumeAttachmentSpec,
    /// Kept status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<VolumeAttachmentStatus>,
}
impl_resource!(
    VolumeAttachment,
    "storage.k8s.io",
    "v1",
    "storage.k8s.io/v1",
    "VolumeAttachment",
    "volumeattachments",
    ClusterResourceScope
);

/// The `spec` of a VolumeAttachment (without an inline volume spec).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeAttachmentSpec {
    /// The CSI driver (`rbd.csi.ceph.com`).
    #[serde(default)]
    pub attacher: String,
    /// The node.
    #[serde(default)]
    pub node_name: String,
    /// The PV.
    #[serde(default)]
    pub source: VolumeAttachmentSource,
}

/// The source of a VolumeAttachment: the PV name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeAttachmentSource {
    /// PV name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_name: Option<String>,
}

/// The `status` of a VolumeAttachment (without `attachmentMetadata`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeAttachmentStatus {
    /// Attach error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach_error: Option<VolumeError>,
    /// Attached.
    #[serde(default)]
    pub attached: bool,
    /// Detach error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detach_error: Option<VolumeError>,
}

/// core/v1 Event, slim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Kept metadata.
    #[serde(default)]
    pub metadata: Meta,
    /// The object the event is about.
    #[serde(default)]
    pub involved_object: ObjectReference,
    /// `FailedMount`, `FailedAttachVolume`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `Warning` or `Normal`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// How many times it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// First time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    /// Last time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    /// events.k8s.io time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
    /// events.k8s.io series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<EventSeries>,
    /// Reporting component and host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<EventSource>,
}
impl_resource!(Event, "", "v1", "v1", "Event", "events", NamespaceResourceScope);
