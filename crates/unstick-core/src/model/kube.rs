//! Small, pure readings of Kubernetes objects: a node's Ready condition and InternalIP, a pod's
//! displayed state (as `kubectl get pods` shows it), a pod's PVCs.

use std::net::IpAddr;

use crate::model::objects::{Node, Pod};
use jiff::Timestamp;

/// A node's readiness: its `Ready` condition's status, parsed once where the node is read.
///
/// Displays as the condition's status (`True`, `False`, `Unknown`) or `Missing` when the node
/// reports no Ready condition. Deserializes from `True` / `False` / `Unknown` (a scenario's
/// `ready = ...`); `Missing` is never read from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
pub enum Readiness {
    /// `Ready=True`: the kubelet posts ready status.
    #[serde(rename = "True")]
    Ready,
    /// `Ready=False`: the kubelet posts that the node is not ready.
    #[serde(rename = "False")]
    NotReady,
    /// `Ready=Unknown`: the kubelet stopped posting (the node controller's verdict); also any
    /// status outside the three the API defines.
    Unknown,
    /// The node reports no Ready condition at all.
    #[serde(skip_deserializing)]
    Missing,
}

impl Readiness {
    /// Parses a Ready condition's `status` (`None`: no Ready condition). A status other than
    /// `True` / `False` / `Unknown` reads as [`Readiness::Unknown`].
    pub fn from_status(status: Option<&str>) -> Self {
        match status {
            Some("True") => Self::Ready,
            Some("False") => Self::NotReady,
            Some(_) => Self::Unknown,
            None => Self::Missing,
        }
    }

    /// True only for `Ready=True`.
    pub fn is_ready(self) -> bool {
        self == Self::Ready
    }

    /// The condition status as the API writes it (`True`, `False`, `Unknown`), or `Missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "True",
            Self::NotReady => "False",
            Self::Unknown => "Unknown",
            Self::Missing => "Missing",
        }
    }
}

impl std::fmt::Display for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A node's `Ready` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeReady {
    /// The condition's status, [`Readiness::Missing`] when the node reports no Ready condition.
    pub status: Readiness,
    /// `lastTransitionTime` of the condition.
    pub since: Option<Timestamp>,
    /// The condition's reason (`NodeStatusUnknown`, `KubeletReady`).
    pub reason: Option<String>,
}

impl NodeReady {
    /// True only for `Ready=True`.
    pub fn is_ready(&self) -> bool {
        self.status.is_ready()
    }
}

/// Reads the `Ready` condition of `node`.
pub fn node_ready(node: &Node) -> NodeReady {
    let cond =
        node.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    match cond {
        Some(c) => NodeReady {
            status: Readiness::from_status(Some(&c.status)),
            since: c.last_transition_time.as_ref().map(|t| t.0),
            reason: c.reason.clone(),
        },
        None => NodeReady { status: Readiness::Missing, since: None, reason: None },
    }
}

/// The node's `InternalIP` addresses (one, or an IPv4 and an IPv6 one on a dual-stack node),
/// parsed (an IPv4-mapped IPv6 address as IPv4); unparsable ones are skipped.
pub fn internal_ips(node: &Node) -> Vec<IpAddr> {
    node.status
        .as_ref()
        .and_then(|s| s.addresses.as_ref())
        .map(|a| {
            a.iter()
                .filter(|a| a.type_ == "InternalIP")
                .filter_map(|a| a.address.trim().parse::<IpAddr>().ok())
                .map(|ip| ip.to_canonical())
                .collect()
        })
        .unwrap_or_default()
}

/// Every `status.addresses` entry of the node that is an IP address (`InternalIP`, `ExternalIP`,
/// an IP given as `Hostname`; IPv4 and IPv6 of a dual-stack node), with its `type`, in the node's
/// order; an IPv4-mapped IPv6 address as IPv4. Names (`Hostname`, `InternalDNS`) are skipped.
pub fn node_addresses(node: &Node) -> Vec<(IpAddr, &str)> {
    let all = node.status.as_ref().and_then(|s| s.addresses.as_deref()).unwrap_or_default();
    all.iter()
        .filter_map(|a| Some((a.address.trim().parse::<IpAddr>().ok()?.to_canonical(), a.type_.as_str())))
        .collect()
}

/// The pod's `status.podIPs`, parsed (unparsable ones skipped).
pub fn pod_ips(pod: &Pod) -> Vec<IpAddr> {
    let ips = pod.status.as_ref().and_then(|s| s.pod_ips.as_deref()).unwrap_or_default();
    ips.iter().filter_map(|p| p.ip.trim().parse::<IpAddr>().ok()).map(|ip| ip.to_canonical()).collect()
}

/// True for a pod whose address is a node's Ceph client address: a ceph-csi node plugin (RBD or
/// CephFS, [`is_node_plugin`]'s names) or a Rook holder pod (`csi-rbdplugin-holder-…`,
/// `csi-cephfsplugin-holder-…`, Rook PR #13348: with Multus the clients run in its network
/// namespace), owned by a DaemonSet and not on the host network.
pub fn is_ceph_client_pod(pod: &Pod) -> bool {
    let host = pod.spec.as_ref().and_then(|s| s.host_network).unwrap_or(false);
    !host && (is_node_plugin(pod, "rbd.csi.ceph.com") || is_node_plugin(pod, "cephfs.csi.ceph.com"))
}

/// The node's taints as `key=value:Effect` (or `key:Effect`).
pub fn taints(node: &Node) -> Vec<String> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .map(|t| {
            t.iter()
                .map(|t| match t.value.as_deref() {
                    Some(v) if !v.is_empty() => format!("{}={v}:{}", t.key, t.effect),
                    _ => format!("{}:{}", t.key, t.effect),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The out-of-service taint key (non-graceful node shutdown, GA in Kubernetes 1.28).
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";

/// `status.volumesInUse` of a node (unique volume names such as
/// `kubernetes.io/csi/rbd.csi.ceph.com^<volumeHandle>`).
pub fn volumes_in_use(node: &Node) -> &[String] {
    node.status.as_ref().and_then(|s| s.volumes_in_use.as_deref()).unwrap_or(&[])
}

/// Names from `status.volumesAttached` of a node.
pub fn volumes_attached(node: &Node) -> Vec<&str> {
    node.status
        .as_ref()
        .and_then(|s| s.volumes_attached.as_ref())
        .map(|v| v.iter().map(|a| a.name.as_str()).collect())
        .unwrap_or_default()
}

/// A pod's state as an on-call engineer reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodState {
    /// `metadata.deletionTimestamp` is set.
    Terminating {
        /// The deletion timestamp (deletion requested + grace period).
        since: Timestamp,
    },
    /// A container (or init container) waits with this reason (`ContainerCreating`, ...).
    Waiting {
        /// Waiting reason.
        reason: String,
    },
    /// Phase `Pending` with no container status yet.
    Pending,
    /// Any other phase (`Running`, `Succeeded`, `Failed`, `Unknown`).
    Phase(String),
}

impl PodState {
    /// Terminating, ContainerCreating, or otherwise not started: the pods the console shows by default.
    pub fn is_troubled(&self) -> bool {
        !matches!(self, PodState::Phase(p) if p == "Running" || p == "Succeeded")
    }

    /// The text of the STATUS column.
    pub fn label(&self) -> String {
        match self {
            PodState::Terminating { .. } => "Terminating".into(),
            PodState::Waiting { reason } => reason.clone(),
            PodState::Pending => "Pending".into(),
            PodState::Phase(p) => p.clone(),
        }
    }
}

/// Reads the state of `pod` the way `kubectl get pods` prints STATUS.
pub fn pod_state(pod: &Pod) -> PodState {
    if let Some(t) = &pod.metadata.deletion_timestamp {
        return PodState::Terminating { since: t.0 };
    }
    let status = pod.status.as_ref();
    let waiting = status.and_then(|s| {
        let init = s.init_container_statuses.iter().flatten();
        let main = s.container_statuses.iter().flatten();
        init.chain(main).find_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.clone().filter(|r| !r.is_empty()))
    });
    if let Some(reason) = waiting {
        return PodState::Waiting { reason };
    }
    match status.and_then(|s| s.phase.as_deref()) {
        Some("Pending") | None => PodState::Pending,
        Some(p) => PodState::Phase(p.to_string()),
    }
}

/// Claim names of the pod's `persistentVolumeClaim` volumes.
pub fn pod_claims(pod: &Pod) -> Vec<&str> {
    pod.spec
        .as_ref()
        .map(|s| {
            s.volumes
                .iter()
                .flatten()
                .filter_map(|v| v.persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()))
                .collect()
        })
        .unwrap_or_default()
}

/// The pod's `spec.nodeName`.
pub fn pod_node(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref())
}

/// True for a CephFS volume's driver: the ceph-csi CephFS driver (`cephfs.csi.ceph.com`, Rook's
/// `<namespace>.cephfs.csi.ceph.com`) or the lineage's name of an in-tree `cephfs` source.
pub fn is_cephfs_driver(driver: &str) -> bool {
    driver == "cephfs.csi.ceph.com" || driver.ends_with(".cephfs.csi.ceph.com") || driver == "cephfs"
}

/// True for a ceph-csi node plugin pod of `driver`'s kind (RBD or CephFS): owned by a DaemonSet
/// and named as Rook (`csi-rbdplugin-…`, `csi-cephfsplugin-…`) or ceph-csi's Helm charts
/// (`…-ceph-csi-rbd-nodeplugin-…`, `…-cephfs-nodeplugin-…`) name them; never a provisioner's pod.
pub fn is_node_plugin(pod: &Pod, driver: &str) -> bool {
    let daemon = pod.metadata.owner_references.iter().flatten().any(|o| o.kind == "DaemonSet");
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let kinds: &[&str] = if is_cephfs_driver(driver) {
        &["cephfsplugin-", "cephfs-nodeplugin-"]
    } else if driver.ends_with("rbd.csi.ceph.com") {
        &["rbdplugin-", "rbd-nodeplugin-"]
    } else {
        &[]
    };
    daemon && !name.contains("provisioner") && kinds.iter().any(|k| name.contains(k))
}

/// A container mount that brings the host's root into a DaemonSet pod without mount propagation
/// ([`host_root_mounts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRootMount {
    /// The owning DaemonSet's name.
    pub daemonset: String,
    /// The container's name.
    pub container: String,
    /// The `volumeMounts[].mountPath` (e.g. `/host`).
    pub mount_path: String,
}

/// The mounts of a DaemonSet-owned pod's containers whose volume is a hostPath of `/` or of a
/// directory above `/var/lib/kubelet`, with `mountPropagation` unset or `None` (empty for any
/// other pod). Such a container keeps its own copy of every host mount present when it started
/// (the unmap-busy holder of seed 003: prometheus node_exporter with `--path.rootfs=/host`).
pub fn host_root_mounts(pod: &Pod) -> Vec<HostRootMount> {
    let Some(owner) = pod.metadata.owner_references.iter().flatten().find(|o| o.kind == "DaemonSet") else {
        return vec![];
    };
    let Some(spec) = &pod.spec else { return vec![] };
    let roots: Vec<&str> = spec
        .volumes
        .iter()
        .flatten()
        .filter(|v| {
            v.host_path
                .as_ref()
                .is_some_and(|h| h.path == "/" || "/var/lib/kubelet".starts_with(h.path.trim_end_matches('/')))
        })
        .map(|v| v.name.as_str())
        .collect();
    let mut out = vec![];
    for c in &spec.containers {
        for m in c.volume_mounts.iter().flatten() {
            let unset = m.mount_propagation.as_deref().is_none_or(|v| v == "None");
            if roots.contains(&m.name.as_str()) && unset {
                out.push(HostRootMount {
                    daemonset: owner.name.clone(),
                    container: c.name.clone(),
                    mount_path: m.mount_path.clone(),
                });
            }
        }
    }
    out
}
