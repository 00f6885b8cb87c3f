//! Live re-check right before an action: re-read the objects a step depends on (nodes, pods,
//! VolumeAttachments, a DaemonSet's volumeMount, `rbd status`, `rbd lock ls`, the blocklist) and
//! compare them with the state recorded when the finding was made (or after the previous step).
//! Any change aborts the action with an explanation of what changed.
//!
//! The same [`LiveState`] type is built from the console's [`Snapshot`] (the baseline) and from
//! live reads (the re-check), so the comparison is like for like. A fact the baseline does not
//! know (e.g. a DaemonSet, which the console does not watch) is not compared.

use std::net::IpAddr;
use std::time::Duration;

use crate::model::objects::{Node, Pod, VolumeAttachment};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use kube::api::{Api, ListParams};

use crate::model::ceph::{BlocklistEntry, EntityAddr, Lock, Watcher};
use crate::model::kube::{OUT_OF_SERVICE_TAINT, Readiness, node_addresses, node_ready};
use crate::model::remediation::RemediationFacts;
use crate::model::{CephReadError, ImageRef, Snapshot};
use crate::sources::ceph::cli::CephCli;
use crate::sources::kube::watched::Watched;

#[path = "precheck_text.rs"]
mod text;
use text::*;

/// A DaemonSet container's volumeMount, by `mountPath`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct MountRef {
    /// Namespace.
    pub namespace: String,
    /// DaemonSet name.
    pub daemonset: String,
    /// Container name.
    pub container: String,
    /// `mountPath`.
    pub mount_path: String,
}

/// What a step depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The RBD image (watchers and locks are read).
    pub image: Option<ImageRef>,
    /// Nodes whose Ready condition and out-of-service taint matter.
    pub nodes: Vec<String>,
    /// Pods as `(namespace, name)`.
    pub pods: Vec<(String, String)>,
    /// VolumeAttachment names.
    pub volume_attachments: Vec<String>,
    /// DaemonSet volumeMounts.
    pub mounts: Vec<MountRef>,
    /// Read (and compare) `ceph osd blocklist ls`.
    pub blocklist: bool,
    /// Read csi-addons' NetworkFences (not compared; the safety rules use them).
    pub fences: bool,
}

/// A node as the safety rules need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFact {
    /// Name.
    pub name: String,
    /// Ready condition status (displays as `True`, `False`, `Unknown`, `Missing`).
    pub ready: Readiness,
    /// Every IP of its `status.addresses` (InternalIP, ExternalIP, both families).
    pub ips: Vec<IpAddr>,
    /// Has the out-of-service taint.
    pub out_of_service: bool,
    /// `status.volumesAttached` names (`kubernetes.io/rbd/<pool>:<image>`, `kubernetes.io/csi/...`).
    pub attached: Vec<String>,
    /// `status.nodeInfo.bootID` (changes when the machine reboots); `None` when not reported.
    pub boot_id: Option<String>,
}

/// A pod (or its absence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodFact {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID; `None` when the pod does not exist.
    pub uid: Option<String>,
    /// `deletionTimestamp` is set.
    pub terminating: bool,
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
}

/// A VolumeAttachment (or its absence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaFact {
    /// Name.
    pub name: String,
    /// Exists.
    pub present: bool,
    /// `spec.nodeName`.
    pub node: String,
    /// `deletionTimestamp` is set.
    pub deleting: bool,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
}

/// A DaemonSet volumeMount's `mountPropagation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountFact {
    /// Which mount.
    pub mount: MountRef,
    /// The DaemonSet, container and mount exist.
    pub present: bool,
    /// `mountPropagation` (`None` = unset, i.e. `None` propagation).
    pub propagation: Option<String>,
    /// The DaemonSet's `spec.updateStrategy` as [`update_strategy`] words it (`None`: not read).
    pub strategy: Option<String>,
}

/// The facts a step depends on, as observed at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveState {
    /// When observed.
    pub at: Timestamp,
    /// Every node (the safety rules map watcher IPs to nodes); compared only for [`Scope::nodes`].
    pub nodes: Vec<NodeFact>,
    /// `rbd status` watchers of the scope's image; `None` = not known.
    pub watchers: Option<Vec<Watcher>>,
    /// `rbd lock ls` of the scope's image; `None` = not known.
    pub locks: Option<Vec<Lock>>,
    /// Pods in scope.
    pub pods: Vec<PodFact>,
    /// VolumeAttachments in scope.
    pub volume_attachments: Vec<VaFact>,
    /// DaemonSet mounts in scope.
    pub mounts: Vec<MountFact>,
    /// Blocklist; `None` = not known.
    pub blocklist: Option<Vec<BlocklistEntry>>,
    /// Medik8s remediation acting on nodes (objects and taints); not compared.
    pub remediation: RemediationFacts,
    /// csi-addons NetworkFences; `None` = not known, or csi-addons is not installed.
    pub fences: Option<Vec<crate::model::fence::NetworkFence>>,
    /// csi-addons CSIAddonsNodes (read with the fences); `None` = not known, or not installed.
    pub csiaddons_nodes: crate::model::csiaddons_node::CsiAddonsNodes,
}

/// One difference between the baseline and the live state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// What (`watchers of replicapool/img`, `pod incident-002/x`).
    pub what: String,
    /// Before.
    pub before: String,
    /// Now.
    pub now: String,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: was {}, now {}", self.what, self.before, self.now)
    }
}

/// Why a re-check read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadFailure {
    /// The API call failed: the client's message (transport error, HTTP status).
    #[error("{0}")]
    Api(String),
    /// The API call got no answer within its timeout.
    #[error("timed out after {secs} s")]
    Timeout {
        /// The timeout, seconds.
        secs: u64,
    },
    /// A Ceph read failed.
    #[error(transparent)]
    Ceph(#[from] CephReadError),
}

/// A failed re-check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrecheckError {
    /// A read failed: the state cannot be confirmed, so the action must not run.
    #[error("could not re-check {what}: {error}")]
    Read {
        /// What was being read.
        what: String,
        /// Why it failed.
        error: ReadFailure,
    },
    /// The state changed since the finding: nothing was sent. The message ends with how to go on
    /// (the playbook was built on the finding's state; it is rebuilt on the live one by reopening).
    #[error("state changed since the finding; nothing was done:\n  {}\n  Esc closes this playbook; the findings follow the live state: reopen it with p if its finding is still listed", .0.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("\n  "))]
    Changed(Vec<Drift>),
}

/// Read access for re-checks: a Kubernetes client and a Ceph runner, each call bounded.
#[derive(Clone)]
pub struct Reader {
    /// Kubernetes client.
    pub kube: kube::Client,
    /// Ceph CLI runner (its own timeouts).
    pub ceph: CephCli,
    /// Kill timer for each API call.
    pub api_timeout: Duration,
    /// The console's clock (simulated time in training): a Wait step's timeout and a
    /// confirmation's age count on it, like the polls that drive them.
    pub clock: crate::clock::SharedClock,
}

/// Runs `fut` with a timeout, mapping both failure kinds into [`PrecheckError::Read`].
pub(crate) async fn bounded<T>(
    what: impl Into<String>,
    timeout: Duration,
    fut: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> Result<T, PrecheckError> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(PrecheckError::Read { what: what.into(), error: ReadFailure::Api(e.to_string()) }),
        Err(_) => {
            Err(PrecheckError::Read { what: what.into(), error: ReadFailure::Timeout { secs: timeout.as_secs() } })
        }
    }
}

/// A node's facts.
pub fn node_fact(n: &Node) -> NodeFact {
    let out_of_service = n
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == OUT_OF_SERVICE_TAINT));
    NodeFact {
        name: n.metadata.name.clone().unwrap_or_default(),
        ready: node_ready(n).status,
        ips: node_addresses(n).into_iter().map(|(ip, _)| ip).collect(),
        out_of_service,
        attached: n
            .status
            .as_ref()
            .and_then(|s| s.volumes_attached.as_ref())
            .map(|v| v.iter().map(|a| a.name.clone()).collect())
            .unwrap_or_default(),
        boot_id: n
            .status
            .as_ref()
            .and_then(|s| s.node_info.as_ref())
            .map(|i| i.boot_id.clone())
            .filter(|b| !b.is_empty()),
    }
}

fn pod_fact(namespace: &str, name: &str, p: Option<&Pod>) -> PodFact {
    PodFact {
        namespace: namespace.into(),
        name: name.into(),
        uid: p.and_then(|p| p.metadata.uid.clone()),
        terminating: p.is_some_and(|p| p.metadata.deletion_timestamp.is_some()),
        node: p.and_then(|p| p.spec.as_ref()?.node_name.clone()),
        finalizers: p.and_then(|p| p.metadata.finalizers.clone()).unwrap_or_default(),
    }
}

fn va_fact(name: &str, va: Option<&VolumeAttachment>) -> VaFact {
    VaFact {
        name: name.into(),
        present: va.is_some(),
        node: va.map(|v| v.spec.node_name.clone()).unwrap_or_default(),
        deleting: va.is_some_and(|v| v.metadata.deletion_timestamp.is_some()),
        finalizers: va.and_then(|v| v.metadata.finalizers.clone()).unwrap_or_default(),
    }
}

/// The `mountPropagation` of `m` in `ds`: `None` when the container or mount is missing,
/// `Some(None)` when unset.
pub fn mount_propagation(ds: &DaemonSet, m: &MountRef) -> Option<Option<String>> {
    let spec = ds.spec.as_ref()?.template.spec.as_ref()?;
    let c = spec.containers.iter().find(|c| c.name == m.container)?;
    let vm = c.volume_mounts.as_ref()?.iter().find(|v| v.mount_path == m.mount_path)?;
    Some(vm.mount_propagation.clone())
}

/// A DaemonSet's `spec.updateStrategy`, worded: `RollingUpdate (maxUnavailable 1, maxSurge 0)`
/// or `OnDelete`, with the API server's defaults (RollingUpdate, maxUnavailable 1, maxSurge 0)
/// for what the object leaves out.
pub fn update_strategy(ds: &DaemonSet) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let s = ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
    if s.and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return "OnDelete".into();
    }
    let ru = s.and_then(|s| s.rolling_update.as_ref());
    let text = |v: Option<&IntOrString>, default: &str| match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => default.to_string(),
    };
    format!(
        "RollingUpdate (maxUnavailable {}, maxSurge {})",
        text(ru.and_then(|r| r.max_unavailable.as_ref()), "1"),
        text(ru.and_then(|r| r.max_surge.as_ref()), "0")
    )
}

impl LiveState {
    /// The baseline from the console's snapshot (what the finding was made on), observed when the
    /// snapshot was taken, or at `now` (the console's clock) for a snapshot that carries no time.
    /// Facts the snapshot does not carry (DaemonSets) are left out and therefore not compared.
    pub fn from_snapshot(snap: &Snapshot, scope: &Scope, now: Timestamp) -> Self {
        let facts = scope.image.as_ref().and_then(|i| snap.ceph.images.get(i));
        let find_pod = |ns: &str, name: &str| {
            snap.pods
                .iter()
                .find(|p| p.metadata.namespace.as_deref() == Some(ns) && p.metadata.name.as_deref() == Some(name))
                .map(|p| p.as_ref())
        };
        let find_va = |name: &str| {
            snap.volume_attachments.iter().find(|v| v.metadata.name.as_deref() == Some(name)).map(|v| v.as_ref())
        };
        LiveState {
            at: snap.taken_at.unwrap_or(now),
            nodes: snap.nodes.iter().map(|n| node_fact(n)).collect(),
            watchers: facts.and_then(|f| f.watchers.value.clone().ok()),
            locks: facts.and_then(|f| f.locks.value.clone().ok()),
            pods: scope.pods.iter().map(|(ns, n)| pod_fact(ns, n, find_pod(ns, n))).collect(),
            volume_attachments: scope.volume_attachments.iter().map(|n| va_fact(n, find_va(n))).collect(),
            mounts: Vec::new(),
            blocklist: if scope.blocklist {
                snap.ceph.blocklist.as_ref().and_then(|b| b.value.clone().ok())
            } else {
                None
            },
            remediation: RemediationFacts::of(snap.remediators.as_ref(), snap.nodes.iter().map(|n| n.as_ref())),
            fences: snap.network_fences.clone().filter(|_| scope.fences),
            csiaddons_nodes: snap.csiaddons_nodes.clone().filter(|_| scope.fences),
        }
    }

    /// The node(s) with `ip` among their `status.addresses`.
    pub fn nodes_at(&self, ip: IpAddr) -> Vec<&NodeFact> {
        self.nodes.iter().filter(|n| n.ips.contains(&ip)).collect()
    }

    /// A node by name.
    pub fn node(&self, name: &str) -> Option<&NodeFact> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// A pod by namespace and name.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<&PodFact> {
        self.pods.iter().find(|p| p.namespace == namespace && p.name == name)
    }

    /// A VolumeAttachment by name.
    pub fn va(&self, name: &str) -> Option<&VaFact> {
        self.volume_attachments.iter().find(|v| v.name == name)
    }

    /// A mount by reference.
    pub fn mount(&self, m: &MountRef) -> Option<&MountFact> {
        self.mounts.iter().find(|f| &f.mount == m)
    }

    /// One line per DaemonSet mount read (`daemonset ns/x container c mount /host: mountPropagation
    /// (unset); updateStrategy OnDelete`): the facts the snapshot does not carry.
    pub fn describe_mounts(&self) -> Vec<String> {
        self.mounts.iter().map(|m| format!("{}: {}", mount_what(&m.mount), mount_text(m))).collect()
    }

    /// Human-readable lines describing the facts in `scope` (confirm popup and journal).
    pub fn describe(&self, scope: &Scope) -> Vec<String> {
        let mut out = Vec::new();
        for n in &scope.nodes {
            match self.node(n) {
                Some(f) => out.push(format!(
                    "node {n}: Ready={}{}",
                    f.ready,
                    if f.out_of_service { ", out-of-service taint" } else { "" }
                )),
                None => out.push(format!("node {n}: not found")),
            }
        }
        if let Some(i) = &scope.image {
            if let Some(w) = &self.watchers {
                out.push(format!("watchers of {i}: {}", watcher_text(w, self)));
            }
            if let Some(l) = &self.locks {
                out.push(format!("locks of {i}: {}", lock_text(l)));
            }
        }
        for p in &self.pods {
            out.push(format!("pod {}/{}: {}", p.namespace, p.name, pod_text(p)));
        }
        for v in &self.volume_attachments {
            out.push(format!("volumeattachment {}: {}", v.name, va_text(v)));
        }
        out.extend(self.describe_mounts());
        if let Some(b) = &self.blocklist {
            out.push(format!("blocklist: {}", blocklist_text(b)));
        }
        out.push(format!("observed {}", self.at.strftime("%Y-%m-%dT%H:%M:%SZ")));
        out
    }
}

/// Differences between `baseline` and `live` for the facts in `scope`. Watcher cookies,
/// exclusive-lock owners and observation times are ignored (cookies change on every re-watch, the
/// owner with every writer).
pub fn compare(baseline: &LiveState, live: &LiveState, scope: &Scope) -> Vec<Drift> {
    let mut out = Vec::new();
    let mut diff = |what: String, before: String, now: String| {
        if before != now {
            out.push(Drift { what, before, now });
        }
    };
    for n in &scope.nodes {
        let t = |s: &LiveState| {
            s.node(n)
                .map(|f| format!("Ready={}{}", f.ready, if f.out_of_service { " +out-of-service" } else { "" }))
                .unwrap_or_else(|| "absent".into())
        };
        diff(format!("node {n}"), t(baseline), t(live));
    }
    if let Some(i) = &scope.image {
        if let (Some(b), Some(l)) = (&baseline.watchers, &live.watchers) {
            diff(format!("watchers of {i}"), list_text(&addresses(b)), list_text(&addresses(l)));
        }
        if let (Some(b), Some(l)) = (&baseline.locks, &live.locks) {
            // an exclusive-lock owner (`auto <cookie>`) changes hands by itself with every new
            // writer, the playbook's own backup too (its `rbd snap create` breaks a dead owner's
            // lock: incident 000-csi): only advisory locks are facts a playbook depends on
            let advisory = |ls: &[Lock]| ls.iter().filter(|l| !l.id.starts_with("auto ")).cloned().collect::<Vec<_>>();
            diff(format!("locks of {i}"), lock_text(&advisory(b)), lock_text(&advisory(l)));
        }
    }
    for b in &baseline.pods {
        if let Some(l) = live.pod(&b.namespace, &b.name) {
            diff(format!("pod {}/{}", b.namespace, b.name), pod_text(b), pod_text(l));
        }
    }
    for b in &baseline.volume_attachments {
        if let Some(l) = live.va(&b.name) {
            diff(format!("volumeattachment {}", b.name), va_text(b), va_text(l));
        }
    }
    for b in &baseline.mounts {
        if let Some(l) = live.mount(&b.mount) {
            diff(mount_what(&b.mount), mount_text(b), mount_text(l));
        }
    }
    if scope.blocklist
        && let (Some(b), Some(l)) = (&baseline.blocklist, &live.blocklist)
    {
        diff("blocklist".into(), blocklist_text(b), blocklist_text(l));
    }
    out
}

/// Reads the facts in `scope` live. Every read must succeed: a fact that cannot be read cannot be
/// confirmed, and the action must not run.
pub async fn read_live(r: &Reader, scope: &Scope) -> Result<LiveState, PrecheckError> {
    let t = r.api_timeout;
    let at = r.ceph.now();
    let nodes: Api<Watched<Node>> = Api::all(r.kube.clone());
    let nodes = bounded("nodes", t, nodes.list(&ListParams::default())).await?;
    let (watchers, locks) = match &scope.image {
        Some(i) => {
            let f = crate::sources::ceph::read_image(&r.ceph, i).await;
            let w = f
                .watchers
                .value
                .map_err(|error| PrecheckError::Read { what: format!("watchers of {i}"), error: error.into() })?;
            let l = f
                .locks
                .value
                .map_err(|error| PrecheckError::Read { what: format!("locks of {i}"), error: error.into() })?;
            (Some(w), Some(l))
        }
        None => (None, None),
    };
    let mut pods = Vec::new();
    for (ns, name) in &scope.pods {
        let api: Api<Watched<Pod>> = Api::namespaced(r.kube.clone(), ns);
        let p = bounded(format!("pod {ns}/{name}"), t, api.get_opt(name)).await?;
        pods.push(pod_fact(ns, name, p.map(Watched::into_inner).as_ref()));
    }
    let mut vas = Vec::new();
    for name in &scope.volume_attachments {
        let api: Api<Watched<VolumeAttachment>> = Api::all(r.kube.clone());
        let v = bounded(format!("volumeattachment {name}"), t, api.get_opt(name)).await?;
        vas.push(va_fact(name, v.map(Watched::into_inner).as_ref()));
    }
    let mut mounts = Vec::new();
    for m in &scope.mounts {
        let api: Api<DaemonSet> = Api::namespaced(r.kube.clone(), &m.namespace);
        let ds = bounded(format!("daemonset {}/{}", m.namespace, m.daemonset), t, api.get_opt(&m.daemonset)).await?;
        let prop = ds.as_ref().and_then(|d| mount_propagation(d, m));
        let strategy = ds.as_ref().map(update_strategy);
        mounts.push(MountFact { mount: m.clone(), present: prop.is_some(), propagation: prop.flatten(), strategy });
    }
    let blocklist = if scope.blocklist {
        let b = crate::sources::ceph::read_blocklist(&r.ceph).await;
        Some(b.value.map_err(|error| PrecheckError::Read { what: "blocklist".into(), error: error.into() })?)
    } else {
        None
    };
    let remediators = crate::sources::kube::remediators::list(&r.kube, t).await;
    let (fences, csiaddons_nodes) = match scope.fences {
        true => {
            let c = crate::sources::kube::network_fence::read_all(&r.kube, t).await.map_err(|e| {
                PrecheckError::Read { what: "csi-addons".into(), error: ReadFailure::Api(e.to_string()) }
            })?;
            (c.fences, c.nodes)
        }
        false => (None, None),
    };
    Ok(LiveState {
        at,
        remediation: RemediationFacts::of(Some(&remediators), nodes.items.iter().map(|n| &n.object)),
        nodes: nodes.items.iter().map(|n| node_fact(&n.object)).collect(),
        watchers,
        locks,
        pods,
        volume_attachments: vas,
        mounts,
        blocklist,
        fences,
        csiaddons_nodes,
    })
}

/// Reads the live state and compares it with `baseline`: the live state when nothing changed,
/// [`PrecheckError::Changed`] listing every difference otherwise.
pub async fn recheck(r: &Reader, scope: &Scope, baseline: &LiveState) -> Result<LiveState, PrecheckError> {
    let live = read_live(r, scope).await?;
    let changes = compare(baseline, &live, scope);
    if changes.is_empty() { Ok(live) } else { Err(PrecheckError::Changed(changes)) }
}

#[cfg(test)]
#[path = "precheck_tests.rs"]
mod tests;
