//! The write actions of remediation as data: what each one sends (exact argv, or API verb +
//! resource + patch), and its inverse (or why there is none).
//!
//! Executing them is [`crate::remedy::action::executor`]'s job; deciding whether they may run is
//! [`crate::remedy::action::safety`]'s. A `WriteAction` is serialised into the journal (`kind` tag, kebab-case), so
//! field names are part of the journal format: add fields with `#[serde(default)]`, never rename.

pub mod executor;
mod fence_rules;
pub mod kind;
pub mod precheck;
pub mod remediating;
pub mod resolve;
pub mod safety;
mod safety_error;
pub mod scope;

use serde::{Deserialize, Serialize};

use crate::diagnose::ObjectRef;
use crate::model::ImageRef;
use crate::model::fence::{self, FENCED, UNFENCED};
use crate::model::kube::OUT_OF_SERVICE_TAINT;
use crate::sources::ceph::cli::{CephCli, Tool, display_argv};

/// Value of the out-of-service taint (`node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`).
pub const OUT_OF_SERVICE_VALUE: &str = "nodeshutdown";
/// Effect of the out-of-service taint.
pub const OUT_OF_SERVICE_EFFECT: &str = "NoExecute";
/// `mountPropagation` value that lets a host-mounting DaemonSet see (and release) unmounts.
pub const HOST_TO_CONTAINER: &str = "HostToContainer";

/// One write to the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WriteAction {
    /// `rbd lock rm <pool/image> <lock-id> <locker>`. Side effect measured on Ceph 16.2: the locker's
    /// address is blocklisted for 3600 s (`rbd_blocklist_on_break_lock`).
    RbdLockRm {
        /// The image.
        image: ImageRef,
        /// Lock id (`kubelet_lock_magic_node1`).
        lock_id: String,
        /// Locker entity (`client.24128`).
        locker: String,
        /// Locker address `IP:port/nonce` from `rbd lock ls` (shown; the blocklist side effect hits it).
        address: String,
    },
    /// `ceph osd blocklist add <addr>`: fences one client instance (`IP:port/nonce`).
    BlocklistAdd {
        /// `IP:port/nonce` from `rbd status`.
        addr: String,
    },
    /// `ceph osd blocklist rm <addr>`.
    BlocklistRm {
        /// The entry as `ceph osd blocklist ls` prints it.
        addr: String,
    },
    /// `ceph osd blocklist range rm <cidr>` (Ceph prints ranges as `NET:0/LEN`; the CLI takes `NET/LEN`).
    BlocklistRangeRm {
        /// The range as printed by `ceph osd blocklist ls` (`10.1.0.0:0/16`).
        range: String,
    },
    /// Adds `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute` to a node (JSON patch).
    TaintOutOfService {
        /// Node name.
        node: String,
    },
    /// Removes the out-of-service taint from a node (JSON patch with a `test` of the taint).
    UntaintOutOfService {
        /// Node name.
        node: String,
    },
    /// `DELETE pods/<name>` with the default grace period and a UID precondition.
    DeletePod {
        /// Namespace.
        namespace: String,
        /// Pod name.
        name: String,
        /// The UID seen when the step was prepared (precondition: a recreated pod is never deleted).
        uid: String,
    },
    /// `DELETE pods/<name>` with `gracePeriodSeconds: 0` (what `kubectl delete --grace-period=0
    /// --force` sends) of a Terminating pod. Like kubectl it does NOT touch finalizers: a pod that
    /// has finalizers stays (Terminating) until their controllers remove them.
    ForceDeletePod {
        /// Namespace.
        namespace: String,
        /// Pod name.
        name: String,
        /// UID precondition.
        uid: String,
    },
    /// `DELETE storage.k8s.io/v1 volumeattachments/<name>` of an attachment to a lost node, with
    /// UID and resourceVersion preconditions from a read just before. With the
    /// `external-attacher/<driver>` finalizer the object then waits in deletion until the
    /// finalizer is removed ([`WriteAction::RemoveVaFinalizer`]); without one it is gone at once.
    DeleteVolumeAttachment {
        /// VolumeAttachment name.
        name: String,
        /// Its `spec.nodeName` (the lost node); the delete is refused if it changed.
        node: String,
    },
    /// Removes one finalizer (`external-attacher/<driver>`) from a VolumeAttachment being deleted
    /// (JSON patch: `test` of the finalizer at its index, then `remove`).
    RemoveVaFinalizer {
        /// VolumeAttachment name.
        name: String,
        /// The finalizer to remove.
        finalizer: String,
    },
    /// Removes one volume from a lost node's `status.volumesInUse` (JSON patch on the `status`
    /// subresource: `test` of the entry at its index, then `remove`). That list is kubelet's word
    /// that the volume is still mounted there: while it names the volume, the attach-detach
    /// controller (1.20) refuses to detach it for `maxWaitForUnmountDuration` (6 minutes), even
    /// after the node's pods are gone and its VolumeAttachment is deleted (measured on the harness).
    ReleaseVolumeInUse {
        /// Node name.
        node: String,
        /// The unique volume name (`kubernetes.io/csi/<driver>^<volumeHandle>`, `kubernetes.io/rbd/<pool>:<image>`).
        volume: String,
    },
    /// Sets (or removes, `to: None`) `mountPropagation` of one volumeMount of a DaemonSet container
    /// (JSON patch guarded by `test` ops on the container, the mountPath and the previous value).
    SetMountPropagation {
        /// Namespace.
        namespace: String,
        /// DaemonSet name.
        daemonset: String,
        /// Container name.
        container: String,
        /// `mountPath` of the volumeMount (unique within a container).
        mount_path: String,
        /// The value before (`None` = field absent, which means `None` propagation).
        from: Option<String>,
        /// The value to set (`None` = remove the field).
        to: Option<String>,
    },
    /// Creates a csi-addons `NetworkFence` (`csiaddons.openshift.io/v1alpha1`, cluster-scoped;
    /// [`fence::manifest`]) in state `Fenced`: the csi-addons controller has the driver (ceph-csi)
    /// blocklist every CIDR (`ceph osd blocklist range add CIDR`, 5 years). The fencing step
    /// where csi-addons is installed, instead of a raw `ceph osd blocklist add`.
    NetworkFenceCreate {
        /// The fence's name (`unstick-<node>`).
        name: String,
        /// The node whose addresses are fenced.
        node: String,
        /// `spec.cidrs`: host CIDRs (`198.18.0.98/32`) of addresses proven to be the node's.
        cidrs: Vec<String>,
        /// `spec.networkFenceClassName` (the class names the driver and its secret).
        class: String,
    },
    /// Sets a NetworkFence's `spec.fenceState` (JSON patch testing the state before). `Unfenced`
    /// is csi-addons' unfence: ceph-csi removes the fence's entries. (Deleting a `Fenced` fence
    /// is no unfence: the v0.14.0 controller then only removes its finalizer.)
    NetworkFenceState {
        /// The fence's name.
        name: String,
        /// The state before (`Fenced`), tested.
        from: String,
        /// The state to set (`Unfenced`).
        to: String,
    },
    /// `rbd snap create --no-progress <pool/image>@<snap>` (the backup snapshot).
    SnapCreate {
        /// The image.
        image: ImageRef,
        /// Snapshot name (`unstick-<incident>-<UTC timestamp>`).
        snap: String,
    },
}

/// What the inverse of an action is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Inverse {
    /// Running this action undoes it.
    Action {
        /// The undoing action.
        action: Box<WriteAction>,
    },
    /// Nothing can undo it.
    Irreversible {
        /// Why (shown in the confirm popup and by undo).
        why: String,
    },
}

/// How an action reaches the cluster, for display and for the executor.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A Ceph CLI call: `tool` + subcommand args (the runner adds identity and timeout flags).
    Argv {
        /// `rbd` or `ceph`.
        tool: Tool,
        /// Subcommand and arguments.
        args: Vec<String>,
    },
    /// A Kubernetes API call.
    Api {
        /// HTTP verb (`PATCH`, `DELETE`).
        verb: &'static str,
        /// `group/version resource namespace/name` (`v1 pods incident-002/sleep-...`).
        resource: String,
        /// Patch type and body, or delete options, as JSON (shown verbatim).
        body: Option<serde_json::Value>,
        /// Extra parameters (`preconditions.uid=...`, `patch type: json`).
        params: String,
    },
}

impl WriteAction {
    /// True for the writes that lift a fence (blocklist rm, range rm, out-of-service untaint): they
    /// are guarded by the node's reboot ([`crate::remedy::action::safety`]).
    pub fn is_unfence(&self) -> bool {
        matches!(
            self,
            WriteAction::BlocklistRm { .. }
                | WriteAction::BlocklistRangeRm { .. }
                | WriteAction::UntaintOutOfService { .. }
        ) || matches!(self, WriteAction::NetworkFenceState { to, .. } if to == UNFENCED)
    }

    /// A one-line summary for lists (`rbd lock rm replicapool/img kubelet_lock_magic_node1 client.4173`).
    pub fn summary(&self) -> String {
        match self.request() {
            Request::Argv { tool, args } => {
                let bin = match tool {
                    Tool::Rbd => "rbd",
                    Tool::Ceph => "ceph",
                    Tool::Python => "python3",
                };
                format!("{bin} {}", display_argv(&args))
            }
            Request::Api { verb, resource, .. } => match self {
                WriteAction::TaintOutOfService { node } => {
                    format!("taint node {node} {OUT_OF_SERVICE_TAINT}={OUT_OF_SERVICE_VALUE}:{OUT_OF_SERVICE_EFFECT}")
                }
                WriteAction::UntaintOutOfService { node } => format!("untaint node {node} {OUT_OF_SERVICE_TAINT}"),
                WriteAction::ForceDeletePod { namespace, name, .. } => {
                    format!("force-delete (grace 0) pod {namespace}/{name}")
                }
                WriteAction::RemoveVaFinalizer { name, finalizer } => {
                    format!("remove finalizer {finalizer} from VolumeAttachment {name}")
                }
                WriteAction::DeleteVolumeAttachment { name, node } => {
                    format!("delete VolumeAttachment {name} (node {node})")
                }
                WriteAction::ReleaseVolumeInUse { node, volume } => {
                    format!("remove {volume} from node {node} status.volumesInUse")
                }
                WriteAction::SetMountPropagation { namespace, daemonset, container, mount_path, to, .. } => format!(
                    "set mountPropagation={} on {namespace}/{daemonset} container {container} mount {mount_path}",
                    to.as_deref().unwrap_or("(none)")
                ),
                WriteAction::NetworkFenceCreate { name, node, cidrs, class } => {
                    format!("create NetworkFence {name} fencing {} of node {node} (class {class})", cidrs.join(", "))
                }
                WriteAction::NetworkFenceState { name, from, to } => {
                    format!("set NetworkFence {name} fenceState {from} → {to}")
                }
                _ => format!("{verb} {resource}"),
            },
        }
    }

    /// The exact request, for the confirm popup and the executor.
    pub fn request(&self) -> Request {
        let argv = |tool, a: &[&str]| Request::Argv { tool, args: a.iter().map(|s| s.to_string()).collect() };
        match self {
            WriteAction::RbdLockRm { image, lock_id, locker, .. } => {
                argv(Tool::Rbd, &["lock", "rm", &image.spec(), lock_id, locker])
            }
            WriteAction::BlocklistAdd { addr } => argv(Tool::Ceph, &["osd", "blocklist", "add", addr]),
            WriteAction::BlocklistRm { addr } => argv(Tool::Ceph, &["osd", "blocklist", "rm", addr]),
            WriteAction::BlocklistRangeRm { range } => {
                argv(Tool::Ceph, &["osd", "blocklist", "range", "rm", &range_cli_form(range)])
            }
            WriteAction::SnapCreate { image, snap } => {
                argv(Tool::Rbd, &["snap", "create", "--no-progress", &format!("{}@{snap}", image.spec())])
            }
            WriteAction::TaintOutOfService { node } => Request::Api {
                verb: "PATCH",
                resource: format!("v1 nodes {node}"),
                body: Some(serde_json::json!([
                    {"op": "add", "path": "/spec/taints/-", "value": out_of_service_taint()}
                ])),
                params: "patch type: json (taints list created first when the node has none)".into(),
            },
            WriteAction::UntaintOutOfService { node } => Request::Api {
                verb: "PATCH",
                resource: format!("v1 nodes {node}"),
                body: Some(serde_json::json!([
                    {"op": "test", "path": "/spec/taints/<index>/key", "value": OUT_OF_SERVICE_TAINT},
                    {"op": "remove", "path": "/spec/taints/<index>"}
                ])),
                params: "patch type: json; <index> = position of the taint read just before".into(),
            },
            WriteAction::DeletePod { namespace, name, uid } => Request::Api {
                verb: "DELETE",
                resource: format!("v1 pods {namespace}/{name}"),
                body: Some(serde_json::json!({"preconditions": {"uid": uid}})),
                params: "default grace period".into(),
            },
            WriteAction::ForceDeletePod { namespace, name, uid } => Request::Api {
                verb: "DELETE",
                resource: format!("v1 pods {namespace}/{name}"),
                body: Some(serde_json::json!({"gracePeriodSeconds": 0, "preconditions": {"uid": uid}})),
                params: "grace 0, like kubectl delete --grace-period=0 --force; finalizers are left alone".into(),
            },
            WriteAction::DeleteVolumeAttachment { name, node } => Request::Api {
                verb: "DELETE",
                resource: format!("storage.k8s.io/v1 volumeattachments {name}"),
                body: Some(
                    serde_json::json!({"preconditions": {"uid": "<uid>", "resourceVersion": "<resourceVersion>"}}),
                ),
                params: format!(
                    "<uid>/<resourceVersion> read just before; refused unless spec.nodeName is still {node}"
                ),
            },
            WriteAction::RemoveVaFinalizer { name, finalizer } => Request::Api {
                verb: "PATCH",
                resource: format!("storage.k8s.io/v1 volumeattachments {name}"),
                body: Some(serde_json::json!([
                    {"op": "test", "path": "/metadata/finalizers/<index>", "value": finalizer},
                    {"op": "remove", "path": "/metadata/finalizers/<index>"}
                ])),
                params: "patch type: json; <index> = position of the finalizer read just before".into(),
            },
            WriteAction::ReleaseVolumeInUse { node, volume } => Request::Api {
                verb: "PATCH",
                resource: format!("v1 nodes {node} (status)"),
                body: Some(serde_json::json!([
                    {"op": "test", "path": "/status/volumesInUse/<index>", "value": volume},
                    {"op": "remove", "path": "/status/volumesInUse/<index>"}
                ])),
                params: "patch type: json on the status subresource; <index> = position of the entry read just before"
                    .into(),
            },
            WriteAction::NetworkFenceCreate { name, class, cidrs, .. } => Request::Api {
                verb: "POST",
                resource: fence_resource(name),
                body: Some(fence::manifest(name, class, cidrs)),
                params: "create; if it exists with this spec: Fenced sends nothing, Unfenced is set Fenced".into(),
            },
            WriteAction::NetworkFenceState { name, from, to } => Request::Api {
                verb: "PATCH",
                resource: fence_resource(name),
                body: Some(serde_json::json!([
                    {"op": "test", "path": "/metadata/resourceVersion", "value": "<resourceVersion>"},
                    {"op": "test", "path": "/spec/fenceState", "value": from},
                    {"op": "replace", "path": "/spec/fenceState", "value": to}
                ])),
                params: "patch type: json; <resourceVersion> read just before".into(),
            },
            WriteAction::SetMountPropagation { namespace, daemonset, container, mount_path, from, to } => {
                let p = "/spec/template/spec/containers/<c>/volumeMounts/<m>";
                let mut ops = vec![
                    serde_json::json!({"op": "test", "path": "/spec/template/spec/containers/<c>/name", "value": container}),
                    serde_json::json!({"op": "test", "path": format!("{p}/mountPath"), "value": mount_path}),
                ];
                if let Some(f) = from {
                    ops.push(serde_json::json!({"op": "test", "path": format!("{p}/mountPropagation"), "value": f}));
                }
                ops.push(match (from, to) {
                    (_, Some(t)) => {
                        serde_json::json!({"op": "add", "path": format!("{p}/mountPropagation"), "value": t})
                    }
                    (_, None) => serde_json::json!({"op": "remove", "path": format!("{p}/mountPropagation")}),
                });
                Request::Api {
                    verb: "PATCH",
                    resource: format!("apps/v1 daemonsets {namespace}/{daemonset}"),
                    body: Some(serde_json::Value::Array(ops)),
                    params: format!(
                        "patch type: json; previous value {}; <c>/<m> = indexes read just before",
                        from.as_deref().unwrap_or("(unset)")
                    ),
                }
            }
        }
    }

    /// The full command line or API request as shown in the confirm popup. With a [`CephCli`], Ceph
    /// commands are shown exactly as they will run (binary, `--conf`, timeout flags).
    pub fn display(&self, cli: Option<&CephCli>) -> String {
        match self.request() {
            Request::Argv { tool, args } => {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                match cli {
                    Some(cli) if self.rbd_rejects_format() => display_argv(&cli.argv_plain(tool, &refs)),
                    Some(cli) => display_argv(&cli.argv(tool, &refs)),
                    None => self.summary(),
                }
            }
            Request::Api { verb, resource, body, params } => {
                let body = body.map(|b| format!("\n{b}")).unwrap_or_default();
                format!("{verb} {resource} ({params}){body}")
            }
        }
    }

    /// True for `rbd` subcommands that reject `--format json` (measured: `lock rm`, `snap create`).
    pub(crate) fn rbd_rejects_format(&self) -> bool {
        matches!(self, WriteAction::RbdLockRm { .. } | WriteAction::SnapCreate { .. })
    }

    /// The inverse, or why there is none.
    pub fn inverse(&self) -> Inverse {
        let inv = |a: WriteAction| Inverse::Action { action: Box::new(a) };
        let no = |why: &str| Inverse::Irreversible { why: why.to_string() };
        match self {
            WriteAction::RbdLockRm { .. } => {
                no("a removed lock cannot be given back to its old owner (re-adding would take it with this \
                 console's identity and block the pod again); the locker stays blocklisted for 1 h")
            }
            WriteAction::BlocklistAdd { addr } => inv(WriteAction::BlocklistRm { addr: addr.clone() }),
            WriteAction::BlocklistRm { addr } => inv(WriteAction::BlocklistAdd { addr: addr.clone() }),
            WriteAction::BlocklistRangeRm { .. } => {
                no("re-adding a range fences every client in it; do it by hand if needed")
            }
            WriteAction::TaintOutOfService { node } => inv(WriteAction::UntaintOutOfService { node: node.clone() }),
            WriteAction::UntaintOutOfService { node } => inv(WriteAction::TaintOutOfService { node: node.clone() }),
            WriteAction::DeletePod { .. } | WriteAction::ForceDeletePod { .. } => {
                no("a deleted pod cannot be restored; its controller creates a new one (manifest kept in the backup)")
            }
            WriteAction::RemoveVaFinalizer { .. } => {
                no("the API server forbids adding finalizers to an object being deleted; it is gone once released")
            }
            WriteAction::DeleteVolumeAttachment { .. } => {
                no("a deleted VolumeAttachment cannot be restored; the attach-detach controller creates a new one \
                 when a pod needs the volume on a node (manifest kept in the backup)")
            }
            WriteAction::ReleaseVolumeInUse { .. } => {
                no("the list is kubelet's own report: the attach-detach controller detaches the volume as soon as \
                 the entry is gone, and a kubelet that comes back posts its real list again")
            }
            WriteAction::SetMountPropagation { namespace, daemonset, container, mount_path, from, to } => {
                inv(WriteAction::SetMountPropagation {
                    namespace: namespace.clone(),
                    daemonset: daemonset.clone(),
                    container: container.clone(),
                    mount_path: mount_path.clone(),
                    from: to.clone(),
                    to: from.clone(),
                })
            }
            WriteAction::NetworkFenceCreate { name, .. } => {
                inv(WriteAction::NetworkFenceState { name: name.clone(), from: FENCED.into(), to: UNFENCED.into() })
            }
            WriteAction::NetworkFenceState { name, from, to } => {
                inv(WriteAction::NetworkFenceState { name: name.clone(), from: to.clone(), to: from.clone() })
            }
            WriteAction::SnapCreate { image, snap } => Inverse::Irreversible {
                why: format!(
                    "backup snapshots are kept on purpose; remove it with `rbd snap rm {}@{snap}` when no longer needed",
                    image.spec()
                ),
            },
        }
    }

    /// True when [`WriteAction::inverse`] is an action.
    pub fn is_reversible(&self) -> bool {
        matches!(self.inverse(), Inverse::Action { .. })
    }

    /// The name an operator types to confirm an irreversible action (the object's name).
    pub fn confirm_name(&self) -> String {
        match self {
            WriteAction::RbdLockRm { image, .. } | WriteAction::SnapCreate { image, .. } => image.image.clone(),
            WriteAction::BlocklistAdd { addr } | WriteAction::BlocklistRm { addr } => addr.clone(),
            WriteAction::BlocklistRangeRm { range } => range.clone(),
            WriteAction::TaintOutOfService { node } | WriteAction::UntaintOutOfService { node } => node.clone(),
            WriteAction::ReleaseVolumeInUse { node, .. } => node.clone(),
            WriteAction::DeletePod { name, .. } | WriteAction::ForceDeletePod { name, .. } => name.clone(),
            WriteAction::RemoveVaFinalizer { name, .. } | WriteAction::DeleteVolumeAttachment { name, .. } => {
                name.clone()
            }
            WriteAction::SetMountPropagation { daemonset, .. } => daemonset.clone(),
            WriteAction::NetworkFenceCreate { name, .. } | WriteAction::NetworkFenceState { name, .. } => name.clone(),
        }
    }

    /// Objects the action touches, labelled as everywhere in the console (`Pod ns/name`, `Node
    /// name`, `RbdImage pool/image`; [`ObjectRef::label`]): the popup, the journal views and the
    /// session log use one spelling.
    pub fn objects(&self) -> Vec<String> {
        let label = |o: ObjectRef| o.label();
        match self {
            WriteAction::RbdLockRm { image, .. } | WriteAction::SnapCreate { image, .. } => {
                vec![label(ObjectRef::image(image))]
            }
            WriteAction::BlocklistAdd { addr } | WriteAction::BlocklistRm { addr } => {
                vec![label(ObjectRef::blocklist(addr))]
            }
            WriteAction::BlocklistRangeRm { range } => vec![label(ObjectRef::blocklist(range))],
            WriteAction::TaintOutOfService { node }
            | WriteAction::UntaintOutOfService { node }
            | WriteAction::ReleaseVolumeInUse { node, .. } => vec![label(ObjectRef::node(node))],
            WriteAction::DeletePod { namespace, name, .. } | WriteAction::ForceDeletePod { namespace, name, .. } => {
                vec![label(ObjectRef::pod(&format!("{namespace}/{name}")))]
            }
            WriteAction::RemoveVaFinalizer { name, .. } | WriteAction::DeleteVolumeAttachment { name, .. } => {
                vec![label(ObjectRef::va(name))]
            }
            WriteAction::SetMountPropagation { namespace, daemonset, .. } => {
                vec![format!("DaemonSet {namespace}/{daemonset}")]
            }
            WriteAction::NetworkFenceCreate { name, node, .. } => {
                vec![format!("{} {name}", fence::KIND), label(ObjectRef::node(node))]
            }
            WriteAction::NetworkFenceState { name, .. } => vec![format!("{} {name}", fence::KIND)],
        }
    }

    /// A warning the operator must read before confirming, if any.
    pub fn warning(&self) -> Option<String> {
        match self {
            WriteAction::RbdLockRm { address, .. } => Some(format!(
                "`rbd lock rm` also blocklists the old locker {address} for 1 hour (rbd_blocklist_on_break_lock): \
                 a blocklist entry for it afterwards is expected, not a leftover"
            )),
            WriteAction::ForceDeletePod { .. } => Some(
                "grace 0 removes the pod from the API at once, without waiting for its node to confirm the \
                 containers stopped; finalizers (if any) still hold it"
                    .into(),
            ),
            WriteAction::TaintOutOfService { .. } => Some(
                "only for a node that is really powered off: its pods are force-deleted and its volumes detached"
                    .into(),
            ),
            WriteAction::ReleaseVolumeInUse { node, .. } => Some(format!(
                "only for a node that is really powered off: the attach-detach controller detaches the volume \
                 from {node} at once, as if its kubelet had unmounted it"
            )),
            WriteAction::DeleteVolumeAttachment { node, .. } => Some(format!(
                "only for a node that is really powered off: if {node} comes back with the image still mapped, \
                 two nodes could write the volume"
            )),
            WriteAction::NetworkFenceCreate { cidrs, .. } => Some(format!(
                "fences every client on {} (the whole host) until unfenced: ceph-csi blocklists it for 5 years; \
                 undo sets the fence Unfenced (deleting a Fenced NetworkFence would leave its entries)",
                cidrs.join(", ")
            )),
            WriteAction::NetworkFenceState { name, to, .. } if to == UNFENCED => Some(format!(
                "ceph-csi removes NetworkFence {name}'s blocklist entries: every client on its CIDRs can write again"
            )),
            _ => None,
        }
    }
}

/// `csiaddons.openshift.io/v1alpha1 networkfences <name>`, as [`Request::Api`] names resources.
pub fn fence_resource(name: &str) -> String {
    format!("{}/{} {} {name}", fence::GROUP, fence::VERSION, fence::PLURAL)
}

/// The out-of-service taint as a JSON object.
pub fn out_of_service_taint() -> serde_json::Value {
    serde_json::json!({"key": OUT_OF_SERVICE_TAINT, "value": OUT_OF_SERVICE_VALUE, "effect": OUT_OF_SERVICE_EFFECT})
}

/// `10.1.0.0:0/16` or `cidr:10.1.0.0:0/16` (as printed) → `10.1.0.0/16` (as the CLI takes it).
pub fn range_cli_form(range: &str) -> String {
    let r = range.strip_prefix("cidr:").unwrap_or(range);
    match r.rsplit_once('/') {
        Some((net, len)) => format!("{}/{len}", net.strip_suffix(":0").unwrap_or(net)),
        None => r.to_string(),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod kind_tests;
