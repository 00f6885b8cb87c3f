//! The tables of a training scenario file (`[[node]]`, `[[volume]]`, `[[pod]]`, ... as documented
//! in `docs/scenarios.md`), deserialized as written; [`super::Scenario`] holds them and checks
//! their cross-references.

use serde::Deserialize;

use super::values::Ago;
use crate::model::kube::Readiness;
use crate::model::step_type::StepType;

/// How hard a scenario is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Difficulty {
    /// One pattern, one obvious fix.
    Easy,
    /// One pattern with a trap.
    Medium,
    /// Several patterns or volumes at once.
    Hard,
}

impl Difficulty {
    /// `easy`, `medium`, `hard`.
    pub fn name(self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
        }
    }
}

/// `[[node]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Node name.
    pub name: String,
    /// InternalIP.
    pub ip: String,
    /// Ready condition status: `True` (default), `Unknown` (kubelet stopped posting) or `False`.
    #[serde(default = "ready_true")]
    pub ready: Readiness,
    /// How long ago the Ready condition last changed (default 30d).
    #[serde(default = "thirty_days")]
    pub since: Ago,
    /// PVs listed in `status.volumesInUse` (kubelet's report).
    #[serde(default)]
    pub in_use: Vec<String>,
}

fn ready_true() -> Readiness {
    Readiness::Ready
}

fn thirty_days() -> Ago {
    Ago(30 * 86_400)
}

/// `[[volume]]`: a claim, its PV and the RBD image behind it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeSpec {
    /// Claim namespace.
    pub namespace: String,
    /// Claim name.
    pub claim: String,
    /// PV name.
    pub pv: String,
    /// `pool/image`.
    pub image: String,
    /// `csi` (ceph-csi `rbd.csi.ceph.com`, default) or `in-tree` (`kubernetes.io/rbd`).
    #[serde(default = "csi")]
    pub driver: String,
    /// `RWO` (default), `RWX` or `ROX`.
    #[serde(default = "rwo")]
    pub access: String,
    /// Image size in MiB (default 1024).
    #[serde(default = "gib")]
    pub size_mib: u64,
}

fn csi() -> String {
    "csi".into()
}

fn rwo() -> String {
    "RWO".into()
}

fn gib() -> u64 {
    1024
}

/// `[[pod]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodSpec {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Node it is bound to.
    pub node: String,
    /// Claim it mounts, if any.
    pub claim: Option<String>,
    /// `Running`, `ContainerCreating` or `Terminating`.
    pub state: String,
    /// Created this long ago (Terminating: the deletion was this long ago).
    #[serde(default)]
    pub age: Ago,
    /// The `[[controller]]` that owns it.
    pub controller: Option<String>,
    /// Its owner deletes it this long after the start (a scale-down asked of the app's team).
    pub stops: Option<Ago>,
}

/// `[[controller]]`: replaces missing pods (see [`Controller`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSpec {
    /// `ReplicaSet` or `StatefulSet`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name (pods are named after it).
    pub name: String,
    /// Claim its pods mount.
    pub claim: Option<String>,
    /// Where new pods are scheduled.
    pub node: String,
}

/// `[[attachment]]`: the PV is attached to the node (`volumesAttached`, and a VolumeAttachment for
/// CSI volumes).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttachmentSpec {
    /// PV.
    pub pv: String,
    /// Node.
    pub node: String,
    /// The VolumeAttachment has been deleting this long (its finalizer holds it).
    pub deleting: Option<Ago>,
}

/// `[[event]]` about a pod (or a node with `kind = "Node"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// Namespace (of the pod; `default` for node events).
    #[serde(default = "default_ns")]
    pub namespace: String,
    /// Involved object name.
    pub object: String,
    /// `Pod` (default) or `Node`.
    #[serde(default = "pod_kind")]
    pub kind: String,
    /// Reason (`FailedMount`, `FailedAttachVolume`, `FailedUnMount`).
    pub reason: String,
    /// Message, as kubelet printed it.
    pub message: String,
    /// Times seen.
    #[serde(default = "one")]
    pub count: i32,
    /// First seen this long ago.
    #[serde(default)]
    pub first: Ago,
    /// Last seen this long ago.
    #[serde(default)]
    pub last: Ago,
    /// Reporting host.
    pub host: Option<String>,
    /// `involvedObject.uid` when the event is about an earlier pod of the same name (a
    /// predecessor); default: the current pod's uid.
    pub uid: Option<String>,
    /// `type`: `Warning` (default) or `Normal` (`Killing`, `Scheduled`).
    #[serde(default = "warning", rename = "type")]
    pub type_: String,
}

fn warning() -> String {
    "Warning".into()
}

fn default_ns() -> String {
    "default".into()
}

fn pod_kind() -> String {
    "Pod".into()
}

fn one() -> i32 {
    1
}

/// `[[watcher]]` or `[[lock]]`: a client of `node` (its InternalIP) or of an explicit address.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// `pool/image`.
    pub image: String,
    /// The node whose InternalIP the client connects from.
    pub node: Option<String>,
    /// Or the full `IP:PORT/NONCE`.
    pub address: Option<String>,
    /// Nonce (with `node`).
    #[serde(default = "nonce")]
    pub nonce: u64,
    /// `client.<N>` number.
    #[serde(default = "client_id")]
    pub client: u64,
    /// Lock id (locks only; default `kubelet_lock_magic_<node>`).
    pub id: Option<String>,
}

fn nonce() -> u64 {
    1_417_530_215
}

fn client_id() -> u64 {
    54_368
}

/// `[[blocklist]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlocklistSpec {
    /// `IP:PORT/NONCE`, `IP` (whole host) or a CIDR range with `range = true`.
    pub entry: String,
    /// A range entry.
    #[serde(default)]
    pub range: bool,
    /// Expires in (default 1h).
    #[serde(default = "hour")]
    pub expires_in: Ago,
}

fn hour() -> Ago {
    Ago(3600)
}

/// `[[daemonset]]`: a DaemonSet with one pod per node, mounting the host root at `mount_path`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaemonSetSpec {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Container name.
    pub container: String,
    /// Where the host root is mounted (`/host`).
    pub mount_path: String,
    /// `mountPropagation` of that mount; absent = `None` (the default).
    pub propagation: Option<String>,
    /// Nodes it runs on.
    pub nodes: Vec<String>,
    /// `spec.updateStrategy.type`: `RollingUpdate` (absent; maxUnavailable 1) or `OnDelete`.
    pub update_strategy: Option<String>,
}

/// `[[holder]]`: on `node`, the DaemonSet's container keeps `device` (of `pv`) mounted in its own
/// mount namespace, so the node cannot unmap it (exit status 16).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HolderSpec {
    /// Node.
    pub node: String,
    /// `/dev/rbdN`.
    pub device: String,
    /// PV.
    pub pv: String,
    /// `namespace/name` of a `[[daemonset]]`.
    pub daemonset: String,
}

/// `[[unregistered]]`: kubelet on `node` has no registration of the CSI driver; mounts of CSI
/// volumes there fail until the `daemonset`'s (the node plugin's) pod on that node is recreated.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnregisteredSpec {
    /// Node.
    pub node: String,
    /// `namespace/name` of a `[[daemonset]]` that runs on the node.
    pub daemonset: String,
}

/// `[[operation]]`: kubelet on `node` is still tearing down `pv` (unmount / unstage / unmap of a
/// pod already gone from the API) for `remaining` more; mounts of that volume there wait.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationSpec {
    /// Node.
    pub node: String,
    /// PV.
    pub pv: String,
    /// Time until it finishes.
    pub remaining: Ago,
}

/// `[[goal]]`: one condition the trainee must reach; all must hold at once to finish.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalSpec {
    /// What to tell the trainee.
    pub text: String,
    /// A pod of `namespace/name-prefix` is Running (and not being deleted).
    pub pod_running: Option<String>,
    /// The diagnosis (on the simulation's full state) has no finding of this pattern id.
    pub finding_gone: Option<String>,
    /// Nothing in `ceph osd blocklist ls` covers this node's InternalIP with a whole-host or
    /// range entry.
    pub node_unfenced: Option<String>,
}

/// `[[hint]]`: unlocked `after` simulated time since the start.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HintSpec {
    /// When it unlocks.
    pub after: Ago,
    /// The hint.
    pub text: String,
}

/// `[[reference]]`: one step of the reference path, matched against the trainee's journal.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// What the step is, for the debrief.
    pub text: String,
    /// Step kind: `Backup`, `Check`, `Act`, `Wait`, `Verify`, `Manual`.
    pub kind: StepType,
    /// For `Act` steps: the kind of the journaled write that shows it was done, as the journal
    /// names it (`rbd-lock-rm`, `blocklist-add`, `force-delete-pod`:
    /// [`crate::remedy::action::kind::WRITE_ACTION_KINDS`]).
    pub action: Option<String>,
    /// With `action`: only a write in this Kubernetes namespace counts (pods, DaemonSets).
    pub namespace: Option<String>,
    /// Needed only in some runs (e.g. deleting a pod that the simulation's kubelet retried by
    /// itself): not counted as missed when left out.
    #[serde(default)]
    pub optional: bool,
    /// To be done once for every `[[volume]]` of the scenario (a backup of each volume): the
    /// debrief counts the volumes done (`1 of 3 volumes`) and follows the step only when all are.
    #[serde(default)]
    pub each_volume: bool,
}

/// `[[risk]]`: what a risky action, refused by the safety rules, would have done here.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskSpec {
    /// `ready-node`, `wide-blocklist`, `live-watcher`, `has-watchers`, `state-changed`.
    pub kind: String,
    /// The consequence, in this scenario's terms.
    pub text: String,
}

/// Optional `[ceph]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CephSpec {
    /// Seconds a blocklisted client's watch lingers (default 30).
    #[serde(default = "thirty")]
    pub watch_timeout_seconds: i64,
}

fn thirty() -> i64 {
    30
}
