//! Why the safety rules (the safety module's `approve`) refused an action.

use crate::remedy::playbook::version::OUT_OF_SERVICE_GATE;

/// Why an action may not run. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SafetyError {
    /// Fencing a Ready node without the typed override.
    #[error("node {node} is Ready: fencing it cuts off a live node; type the node name `{node}` to override")]
    ReadyNode {
        /// The node.
        node: String,
    },
    /// A blocklist entry without a nonce, without the typed override.
    #[error(
        "{addr} has no nonce: it blocks EVERY client on {ip}; blocklist the exact IP:port/nonce from `rbd status`, or type `{addr}` to override"
    )]
    WideBlocklist {
        /// The entry.
        addr: String,
        /// Its host.
        ip: String,
    },
    /// A whole-host entry for this console's own host.
    #[error("{addr} would block every client on this host, including this console's own rbd/ceph calls; refused")]
    OwnHost {
        /// The entry.
        addr: String,
    },
    /// Not an `IP:port/nonce`.
    #[error("{addr:?} is not a Ceph client address (IP:port/nonce)")]
    BadAddress {
        /// The text.
        addr: String,
    },
    /// Force-delete while a live node still has the image open.
    #[error(
        "image has a watcher {addr} from node {node}, which is Ready: force-deleting the pod could let two nodes write the volume; stop the pod on {node} first"
    )]
    LiveWatcher {
        /// Watcher address.
        addr: String,
        /// The live node.
        node: String,
    },
    /// Watchers must be known for this action and could not be read.
    #[error("watchers of the image are unknown; cannot prove the volume is not in use")]
    WatchersUnknown,
    /// The image still has watchers (VolumeAttachment finalizer release).
    #[error(
        "image still has watcher(s) {0}: release the attachment only after the image is closed (or its client fenced)"
    )]
    HasWatchers(String),
    /// A force-delete of a pod that is not Terminating and runs on a Ready node (or on no node).
    #[error(
        "pod {pod} is not Terminating and its node {node} is Ready: force-delete is only for pods stuck in Terminating or on a lost node (delete it normally)"
    )]
    NotTerminating {
        /// `namespace/name`.
        pod: String,
        /// Its `spec.nodeName` (`-` when unscheduled).
        node: String,
    },
    /// A VolumeAttachment delete while its node is Ready.
    #[error(
        "volumeattachment {name} is on node {node}, which is Ready: a live node may still use the volume; it is detached by its own controllers"
    )]
    AttachedToReadyNode {
        /// The VolumeAttachment.
        name: String,
        /// Its node.
        node: String,
    },
    /// A VolumeAttachment finalizer release while the attachment is not being deleted.
    #[error("volumeattachment {name} is not being deleted: its finalizer must stay")]
    NotDeleting {
        /// The VolumeAttachment.
        name: String,
    },
    /// Releasing a node's `volumesInUse` entry while a pod of the volume is still bound to it.
    #[error(
        "pod {pod} is still bound to node {node}: force-delete it first, or the attach-detach controller keeps the volume there anyway"
    )]
    PodStillOnNode {
        /// `namespace/name`.
        pod: String,
        /// The node.
        node: String,
    },
    /// Unfencing a node that has not rebooted since the fence (or without a journaled fence),
    /// without the typed override.
    #[error(
        "node {node} {why}: its clients from before the fence may still run and would write again; reboot it first, or type `{node}` to override"
    )]
    NotRebooted {
        /// The node.
        node: String,
        /// What is known (`has not rebooted since it was fenced (bootID … unchanged)`, ...).
        why: String,
    },
    /// An out-of-service taint on 1.24–1.25 without the typed feature gate.
    #[error(
        "the API server is {version}: the out-of-service taint is acted on only when kube-controller-manager runs with --feature-gates={OUT_OF_SERVICE_GATE}=true (alpha in 1.24–1.25); check its flags, then type `{OUT_OF_SERVICE_GATE}` to override"
    )]
    FeatureGate {
        /// `major.minor`.
        version: String,
    },
    /// Fencing an address no proof ties to a node, without the typed override.
    #[error(
        "no proof ties {addr} to a node ({attribution}): fencing it may cut off some other client (Rook turned its automatic fencing off for blocklisting wrong addresses); tie it with diagnose.address_rules or diagnose.node_address_annotation, or type `{addr}` to override"
    )]
    Unattributed {
        /// The address.
        addr: String,
        /// `unattributed (candidates: …)` ([`crate::attribution::Attribution::text`]).
        attribution: String,
    },
    /// A Medik8s remediator acts on the node the action touches, without the typed override.
    #[error(
        "{by}: acting on node {node} now races it (a remediator deletes the node's pods and VolumeAttachments, fences or reboots the node, and sets and removes the out-of-service taint itself); pause it or let it finish, or type `{node}` to override"
    )]
    Remediating {
        /// The node.
        node: String,
        /// What acts there ([`crate::model::remediation::describe`]).
        by: String,
    },
    /// Removing by hand a blocklist entry a `Fenced` csi-addons NetworkFence owns.
    #[error(
        "blocklist entry {entry} belongs to NetworkFence {fence} (csi-addons): lift it through the fence (set it Unfenced), never behind the controller's back"
    )]
    FenceOwned {
        /// The entry.
        entry: String,
        /// The fence's name.
        fence: String,
    },
    /// A NetworkFence action where csi-addons' NetworkFence API is not served.
    #[error("csi-addons is not installed (the networkfences.csiaddons.openshift.io API is not served)")]
    NoCsiAddons,
    /// A NetworkFence CIDR that is not one address proven to be the fenced node's. No override:
    /// a NetworkFence fences whole hosts, so only proven addresses go into one.
    #[error("{cidr} cannot go into node {node}'s NetworkFence: {why}")]
    FenceCidr {
        /// The CIDR.
        cidr: String,
        /// The node being fenced.
        node: String,
        /// Why (`not a single address`, `no proof ties it to a node (...)`, `it is node x's`).
        why: String,
    },
    /// The object the action targets is not in the live state.
    #[error("{0} not found in the live state (re-read it first)")]
    Missing(String),
    /// The live value differs from what the action expects (e.g. a pod UID, a mountPropagation).
    #[error("{what} changed: expected {expected}, found {found}")]
    Stale {
        /// What.
        what: String,
        /// Expected.
        expected: String,
        /// Found.
        found: String,
    },
}
