//! The playbooks of two stuck-pod causes (issue 24), after the Backup and the live re-check that
//! every playbook starts with:
//! - `csi-driver-not-registered`: restart the node plugin pod on the node where the pod waits
//!   (a `DELETE` with the UID precondition; its DaemonSet recreates it and the registrar
//!   re-registers the driver with kubelet), between the exact `kubectl` reads of the CSINode and
//!   the registrar's log before, and of the CSINode after;
//! - `rwo-claim-shared`: read-only guidance. The claim's other pod runs on a healthy node: nothing
//!   here force-deletes it or fences its node; the operator stops the second user the ordinary way.

use super::condition::Condition;
use super::target::{Target, TargetPod};
use super::{B, StepKind, wait_step};
use crate::config::RemedyConfig;

/// `-n <namespace> <name>`, the way every command below names a pod.
fn at(p: &TargetPod) -> String {
    format!("-n {} {}", p.namespace, p.name)
}

/// csi-driver-not-registered: the node plugin pods on the nodes where a pod of the claim waits.
/// Errors (as the `why` of nothing-to-do): no waiting pod, or no node plugin pod on its node (its
/// DaemonSet does not run there: tolerations or nodeSelector, which no delete fixes).
pub(super) fn restart_node_plugin(b: &mut B, t: &Target, cfg: &RemedyConfig) -> Result<&'static str, String> {
    let driver = t.driver.clone().unwrap_or_else(|| "<driver>".into());
    let waiting: Vec<&TargetPod> = t.pods.iter().filter(|p| p.waiting && p.node.is_some()).collect();
    if waiting.is_empty() {
        return Err("no pod of the claim waits on a node".into());
    }
    let Some(plugin) = t.node_plugins.first() else {
        let nodes: Vec<&str> = waiting.iter().filter_map(|p| p.node.as_deref()).collect();
        return Err(format!(
            "no node plugin pod of {driver} runs on {}: its DaemonSet does not schedule there (compare its tolerations and nodeSelector with `kubectl describe node {}`)",
            nodes.join(", "),
            nodes.first().copied().unwrap_or("<node>")
        ));
    };
    let node = plugin.node.clone().unwrap_or_default();
    let csinode = format!("kubectl get csinode {node} -o jsonpath={{.spec.drivers[*].name}}");
    b.push(
        format!("Read why {driver} is not registered on {node}"),
        "Read-only. The CSINode lists the drivers kubelet has registered on the node; the registrar sidecar's log says why the registration failed (socket path, kubelet root dir).",
        StepKind::Manual {
            on: None,
            commands: vec![
                csinode.clone(),
                format!("kubectl get pod {} -o wide", at(plugin)),
                format!("kubectl logs {} -c driver-registrar --tail=50", at(plugin)),
            ],
        },
        false,
    );
    b.push(
        format!("Restart node plugin {}/{}", plugin.namespace, plugin.name),
        "Deletes the pod (refused unless it still has the UID seen here); its DaemonSet recreates it and the registrar registers the driver again. Mounts made by the kernel (krbd, the kernel CephFS client) live on; with the rbd-nbd or ceph-fuse mounter the mounts of running pods on this node die with the plugin: do not restart it then.",
        StepKind::Act(plugin.delete()),
        false,
    );
    b.push(
        format!("Wait for the old plugin pod on {node} to go"),
        "The DaemonSet controller starts a new one at once; its registrar registers the driver and kubelet retries the mount by itself.",
        wait_step(Condition::PodGone {
                namespace: plugin.namespace.clone(),
                name: plugin.name.clone(),
                uid: plugin.uid.clone(),
            }, cfg.wait_timeout_seconds, cfg),
        false,
    );
    b.push(
        format!("Read that {driver} is registered on {node} again"),
        "Read-only. The new plugin pod's registrar has registered the driver when the CSINode lists it; if it does not within a minute, its log (the same read as above, on the new pod) says why, and restarting again will not help.",
        StepKind::Manual { on: None, commands: vec![csinode, format!("kubectl get pod -n {} -o wide --field-selector spec.nodeName={node}", plugin.namespace)] },
        false,
    );
    for p in waiting.iter().filter(|p| p.node.as_deref() == Some(node.as_str())) {
        b.push(
            format!("Only if it still waits: delete {}/{}", p.namespace, p.name),
            "Its controller recreates it and the mount is retried at once instead of after kubelet's backoff.",
            StepKind::Act(p.delete()),
            true,
        );
    }
    Ok("Restart the CSI node plugin")
}

/// rwo-claim-shared: read-only steps naming the pod that holds the RWO claim on a healthy node
/// and the one that waits, then a Wait for the holder to stop (its owner scales it down). Error: no pod of the claim waits while another runs on another node.
pub(super) fn rwo_claim_guidance(b: &mut B, t: &Target, cfg: &RemedyConfig) -> Result<&'static str, String> {
    let waiting = t.pods.iter().find(|p| p.waiting && p.node.is_some());
    let holder = waiting
        .and_then(|w| t.pods.iter().find(|p| !p.waiting && !p.terminating && p.node.is_some() && p.node != w.node));
    let (Some(w), Some(h)) = (waiting, holder) else {
        return Err("no pod of the claim waits while another runs on another node".into());
    };
    let owner = "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}";
    b.push(
        format!("Find the workload behind {}/{} and {}/{}", h.namespace, h.name, w.namespace, w.name),
        "Read-only. Both pods use one ReadWriteOnce claim from two nodes: a second replica, or a rolling update that starts the new pod before the old one stops.",
        StepKind::Manual {
            on: None,
            commands: vec![
                format!("kubectl get pod {} {} -o wide", at(h), w.name),
                format!("kubectl get pod {} -o {owner}", at(h)),
                format!("kubectl get pod {} -o {owner}", at(w)),
            ],
        },
        false,
    );
    b.push(
        "Stop the second user the ordinary way",
        "The holder runs on a healthy node: never force-delete it or fence its node. Scale the workload to one replica, or make its updates stop the old pod first (Deployment `strategy: Recreate`), or move to a ReadWriteMany volume (CephFS). The waiting pod starts once the holder has stopped and the volume is detached.",
        StepKind::Manual {
            on: None,
            commands: vec![
                format!("kubectl -n {} scale <kind>/<name> --replicas=1", w.namespace),
                format!(
                    "kubectl -n {} patch deployment <name> -p '{{\"spec\":{{\"strategy\":{{\"type\":\"Recreate\",\"rollingUpdate\":null}}}}}}'",
                    w.namespace
                ),
            ],
        },
        false,
    );
    b.push(
        format!("Wait for {}/{} to stop", h.namespace, h.name),
        "Read-only: its owner stops it (the scale-down above); kubelet on its node then unmounts and the volume is detached, and the waiting pod mounts it.",
        wait_step(Condition::PodGone { namespace: h.namespace.clone(), name: h.name.clone(), uid: h.uid.clone() }, cfg.wait_timeout_seconds, cfg),
        false,
    );
    Ok("Stop the second user of the RWO claim")
}
