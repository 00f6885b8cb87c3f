//! Playbooks as data: one per pattern id of `DESIGN.md`, built from a [`Target`] (the objects of a
//! finding, with the facts the console saw). Each is an ordered list of [`Step`]s; step 1 is
//! always the Backup. The [`crate::remedy::run`] walks them.

pub mod condition;
mod guidance;
pub mod steps;
pub mod target;
pub mod version;

pub use self::steps::{PATTERNS, Playbook, PlaybookError, Step, StepKind, pattern_of};
pub use self::target::{HostMountHolder, Target, TargetNode, TargetPod};
use std::time::Duration;

use self::condition::Condition;
use self::version::{OUT_OF_SERVICE_GATE, OutOfService};
use crate::remedy::action::{HOST_TO_CONTAINER, WriteAction};

use crate::config::RemedyConfig;
use crate::lineage::Attachment;
use crate::model::ImageRef;
use crate::model::ceph::{EntityAddr, Lock, Watcher};

struct B {
    pattern: &'static str,
    steps: Vec<Step>,
}

impl B {
    fn push(&mut self, title: impl Into<String>, explain: &str, kind: StepKind, optional: bool) {
        let id = format!("{}/{}", self.pattern, self.steps.len() + 1);
        self.steps.push(Step { id, title: title.into(), explain: explain.into(), kind, optional });
    }
}

/// A Wait step on `condition` for at most `timeout_secs` seconds, polled every
/// `remedy.wait_poll_seconds`.
fn wait_step(condition: Condition, timeout_secs: u64, cfg: &RemedyConfig) -> StepKind {
    StepKind::Wait {
        condition,
        timeout: Duration::from_secs(timeout_secs),
        poll: Duration::from_secs(cfg.wait_poll_seconds),
    }
}

/// multi-attach-node-lost on 1.24+: the out-of-service taint lets the controllers force-delete the
/// node's pods and detach its volumes.
/// One optional step per pod of `t` that is not Terminating: `DELETE` it (UID precondition), so
/// its controller recreates it and the mount is retried; titled `<title> <ns>/<name>`.
fn delete_pods(b: &mut B, t: &Target, title: &str, explain: &str) {
    for p in t.pods.iter().filter(|p| !p.terminating) {
        let action = p.delete();
        b.push(format!("{title} {}/{}", p.namespace, p.name), explain, StepKind::Act(action), true);
    }
}

fn multi_attach_taint(b: &mut B, t: &Target, node: &str, va: &str, cfg: &RemedyConfig) {
    b.push(
        format!("Taint {node} out-of-service"),
        &taint_why(t, "the controllers force-delete its pods and detach its volumes"),
        StepKind::Act(WriteAction::TaintOutOfService { node: node.to_string() }),
        false,
    );
    b.push(
        format!("Wait for the attachment on {node} to be released"),
        "Pod GC force-deletes the node's Terminating pods within 20 s, then the attach-detach controller detaches at once. If it does not come: the node is Ready again, a pod keeps a finalizer, the gate is off (1.24–1.25), or the VolumeAttachment has a status.detachError. The step ends at its timeout.",
        wait_step(Condition::VaGone { name: va.to_string() }, cfg.wait_timeout_seconds, cfg),
        false,
    );
    b.push(
        "Verify the attachment is gone",
        "",
        StepKind::Verify(vec![Condition::VaGone { name: va.to_string() }]),
        false,
    );
    untaint_after_repair(b, node);
}

/// What the out-of-service taint step does on this cluster's version (`effect`: what the
/// controllers then do).
fn taint_why(t: &Target, effect: &str) -> String {
    let v = t.server_version.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
    let when = match t.server_version.map(|v| v.out_of_service()) {
        Some(OutOfService::BehindGate) => format!(
            "This API server is {v}: the controllers act on the taint only when kube-controller-manager runs with --feature-gates={OUT_OF_SERVICE_GATE}=true (alpha in 1.24–1.25); the confirmation asks you to type {OUT_OF_SERVICE_GATE} to say it does"
        ),
        _ => format!("This API server is {v}: on by default from 1.26"),
    };
    format!("Non-graceful node shutdown (KEP-2268): {effect}. {when}. Only for a node that is really powered off.")
}

/// The optional last step after an out-of-service taint: remove it once the node is repaired.
fn untaint_after_repair(b: &mut B, node: &str) {
    b.push(
        format!("After {node} is repaired: remove the taint"),
        "Remove the taint only after the node has been power-cycled (undo the taint step with `u`).",
        StepKind::Manual {
            on: None,
            commands: vec![format!(
                "kubectl taint nodes {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute-"
            )],
        },
        true,
    );
}

/// The attach-detach controller's own view (1.20, measured on the harness with the real
/// controller): it detaches a volume from a node only when no pod there needs it AND the node's
/// `status.volumesInUse` no longer lists it, or after `maxWaitForUnmountDuration` (6 minutes, a
/// constant). A lost node's kubelet never updates that list, so after the old pods are
/// force-deleted the entry is released by hand, then the controller detaches at once (deleting
/// the VolumeAttachment itself: a hand-deleted one does not change its actual state of world).
fn release_in_use(b: &mut B, t: &Target, node: &str, cfg: &RemedyConfig) -> u64 {
    match &t.unique_name {
        Some(volume) => {
            b.push(
                format!("Release the volume from {node}'s volumesInUse"),
                "The lost node's kubelet still reports the volume as mounted; while it does, the attach-detach controller waits 6 minutes before it detaches. Refused while the node is Ready, a pod is still bound to it there, or the image has a watcher from it.",
                StepKind::Act(WriteAction::ReleaseVolumeInUse { node: node.to_string(), volume: volume.clone() }),
                false,
            );
            cfg.wait_timeout_seconds
        }
        None => cfg.wait_timeout_seconds.max(420),
    }
}

/// multi-attach-node-lost before 1.24 (or when the server version is unknown): no controller acts
/// on the out-of-service taint, so the old pods on the lost node are force-deleted and the node's
/// volumesInUse entry released; the attach-detach controller then deletes the VolumeAttachment
/// (its attacher drops the finalizer). An attachment already being deleted whose attacher is gone
/// gets its finalizer removed.
fn multi_attach_release(b: &mut B, t: &Target, lost: &Attachment, cfg: &RemedyConfig) {
    let (va, node) = (&lost.name, &lost.node);
    let why = match t.server_version {
        Some(v) => format!("The API server is {v}: before 1.24 nothing acts on the out-of-service taint."),
        None => "The API server version is unknown, so the out-of-service taint may have no effect.".to_string(),
    };
    for p in t.pods.iter().filter(|p| p.node.as_deref() == Some(node.as_str())) {
        b.push(
            format!("Force-delete old pod {}/{} on {node}", p.namespace, p.name),
            &format!("{why} The node is lost and will never confirm the pod stopped; grace 0 removes it from the API, so the attach-detach controller stops counting it. Refused while the image has a watcher from a live node."),
            StepKind::Act(p.force_delete()),
            false,
        );
    }
    let timeout = release_in_use(b, t, node, cfg);
    if let Some(f) = lost.attacher_finalizer().filter(|_| lost.deleting) {
        b.push(
            format!("Remove finalizer {f} from {va}"),
            "The attachment is already being deleted and its attacher does not release it.",
            StepKind::Act(WriteAction::RemoveVaFinalizer { name: va.clone(), finalizer: f.to_string() }),
            false,
        );
    }
    b.push(
        format!("Wait for the attach-detach controller to release {va}"),
        &format!("It deletes the VolumeAttachment once the old pods are gone and the node no longer reports the volume in use (else after 6 minutes); the attacher then drops its finalizer. If the timeout passes first: a kube-controller-manager started with --disable-force-detach-on-timeout (1.30+) never force-detaches, and an attacher that cannot detach records status.detachError (`kubectl get volumeattachment {va} -o yaml`); on 1.26+ the out-of-service taint detaches without either."),
        wait_step(Condition::VaGone { name: va.clone() }, timeout, cfg),
        false,
    );
    b.push("Verify the attachment is gone", "", StepKind::Verify(vec![Condition::VaGone { name: va.clone() }]), false);
}

/// multi-attach-node-lost for a volume without a VolumeAttachment (in-tree `kubernetes.io/rbd`):
/// the attach-detach controller detaches it from the lost node's `volumesAttached` by itself once
/// the node's pods are gone: with the out-of-service taint at once (1.26+; 1.24–1.25 behind its
/// feature gate), else after its
/// `maxWaitForUnmountDuration` (6 minutes) once the old pods are force-deleted.
fn multi_attach_in_tree(b: &mut B, t: &Target, node: &str, volume: &str, cfg: &RemedyConfig) {
    let cond = Condition::NotAttached { node: node.to_string(), volume: volume.to_string() };
    let honours = t.server_version.is_some_and(|v| v.honours_out_of_service());
    let timeout = if honours {
        b.push(
            format!("Taint {node} out-of-service"),
            &taint_why(t, "the controllers force-delete its pods and detach its volumes, in-tree ones included"),
            StepKind::Act(WriteAction::TaintOutOfService { node: node.to_string() }),
            false,
        );
        cfg.wait_timeout_seconds
    } else {
        for p in t.pods.iter().filter(|p| p.node.as_deref() == Some(node)) {
            b.push(
                format!("Force-delete old pod {}/{} on {node}", p.namespace, p.name),
                "Before 1.24 (or with the version unknown) nothing is known to act on the out-of-service taint. The node is lost and will never confirm the pod stopped; grace 0 removes it from the API, so the attach-detach controller stops counting it. Refused while the image has a watcher from a live node.",
                StepKind::Act(p.force_delete()),
                false,
            );
        }
        release_in_use(b, t, node, cfg)
    };
    b.push(
        format!("Wait for {node} to stop listing the volume as attached"),
        "The attach-detach controller drops it from the node's volumesAttached once the node's pods are gone (in-tree volumes have no VolumeAttachment to release by hand).",
        wait_step(cond.clone(), timeout, cfg),
        false,
    );
    b.push("Verify the volume is detached from the lost node", "", StepKind::Verify(vec![cond]), false);
    if honours {
        untaint_after_repair(b, node);
    }
}

/// Builds the playbook for `pattern` (a pattern id or a diagnosis playbook id) on `t`.
pub fn build(pattern: &str, t: &Target, cfg: &RemedyConfig) -> Result<Playbook, PlaybookError> {
    let pattern = pattern_of(pattern).ok_or_else(|| PlaybookError::Unknown(pattern.to_string()))?;
    let none = |why: &str| PlaybookError::NothingToDo { pattern, why: why.into() };
    let mut b = B { pattern, steps: Vec::new() };
    b.push(
        "Back up manifests and snapshot the image",
        "PV, PVC, Pod and VolumeAttachment manifests as YAML, and an RBD snapshot verified with `rbd snap ls`. No action is possible before this succeeds.",
        StepKind::Backup(t.backup_plan()),
        false,
    );
    b.push(
        "Re-check the live state",
        "Re-read everything this finding was based on; any change stops the playbook.",
        StepKind::Check,
        false,
    );
    let image = t.image.clone();
    let title = match pattern {
        "stale-lock" => {
            let image = image.ok_or_else(|| none("no RBD image"))?;
            // locks held by a node that runs a live pod of this volume are in use, not stale
            let live_hosts: Vec<&str> =
                t.pods.iter().filter(|p| !p.terminating).filter_map(|p| p.node.as_deref()).collect();
            let stale: Vec<&Lock> = t
                .locks
                .iter()
                .filter(|l| {
                    let owner = EntityAddr::parse(&l.address).and_then(|a| t.node_at(a.ip));
                    !owner.is_some_and(|n| n.ready.is_ready() && live_hosts.contains(&n.name.as_str()))
                })
                .collect();
            if stale.is_empty() {
                return Err(none("no lock held by a node that lost the pod"));
            }
            for l in &stale {
                b.push(
                    format!("Remove lock {} held by {}", l.id, l.locker),
                    "The lock was left by the node that ran the pod before; kubelet on the new node refuses to map while it exists.",
                    StepKind::Act(WriteAction::RbdLockRm { image: image.clone(), lock_id: l.id.clone(), locker: l.locker.clone(), address: l.address.clone() }),
                    false,
                );
            }
            let conds =
                stale.iter().map(|l| Condition::LockGone { image: image.clone(), lock_id: l.id.clone() }).collect();
            b.push("Verify the lock is gone", "`rbd lock ls` must no longer list it.", StepKind::Verify(conds), false);
            delete_pods(
                &mut b,
                t,
                "Delete stuck pod",
                "Its controller recreates it and the mount is retried at once instead of after kubelet's backoff.",
            );
            "Remove the stale RBD lock"
        }
        "multi-attach-node-lost" => {
            let lost: Vec<&Attachment> = t.volume_attachments.iter().filter(|v| !t.ready(&v.node)).collect();
            let Some(lost) = lost.first() else {
                // in-tree volumes have no VolumeAttachment: the lost node's volumesAttached holds them
                let node = t
                    .attached_on
                    .iter()
                    .find(|n| !t.ready(n))
                    .ok_or_else(|| none("no VolumeAttachment or volumesAttached entry on a NotReady node"))?;
                let volume = t.unique_name.clone().ok_or_else(|| none("no unique volume name"))?;
                multi_attach_in_tree(&mut b, t, node, &volume, cfg);
                return Ok(Playbook {
                    pattern,
                    title: "Release the volume from the lost node".into(),
                    scope: t.scope(),
                    volume: t.pv.clone(),
                    steps: b.steps,
                });
            };
            let (va, node) = (lost.name.clone(), lost.node.clone());
            if t.server_version.is_some_and(|v| v.honours_out_of_service()) {
                multi_attach_taint(&mut b, t, &node, &va, cfg);
            } else {
                multi_attach_release(&mut b, t, lost, cfg);
            }
            "Release the volume from the lost node"
        }
        "dead-node-watcher" => {
            let image = image.ok_or_else(|| none("no RBD image"))?;
            let dead: Vec<&Watcher> = t
                .watchers
                .iter()
                .filter(|w| {
                    EntityAddr::parse(&w.address).and_then(|a| t.node_at(a.ip)).is_some_and(|n| !n.ready.is_ready())
                })
                .collect();
            if dead.is_empty() {
                return Err(none("no watcher from a node that is down"));
            }
            for p in t.pods.iter().filter(|p| p.terminating && p.node.as_deref().is_some_and(|n| !t.ready(n))) {
                b.push(
                    format!("Force-delete Terminating pod {}/{}", p.namespace, p.name),
                    "The node is down and will never confirm the pod stopped; grace 0 removes it from the API (finalizers, if any, still hold it).",
                    StepKind::Act(p.force_delete()),
                    false,
                );
            }
            match &t.fence_class {
                Some(class) => fence_through_csi_addons(&mut b, t, &dead, class, &image, cfg),
                None => {
                    for w in &dead {
                        b.push(
                            format!("Blocklist the dead client {}", w.address),
                            "Fences exactly that client instance (IP:port/nonce); its watcher disappears at once and the image can be mapped elsewhere.",
                            StepKind::Act(WriteAction::BlocklistAdd { addr: w.address.clone() }),
                            false,
                        );
                    }
                }
            }
            let conds =
                dead.iter().map(|w| Condition::WatcherGone { image: image.clone(), addr: w.address.clone() }).collect();
            b.push(
                "Verify the watcher is gone",
                "`rbd status` must no longer list it.",
                StepKind::Verify(conds),
                false,
            );
            "Fence the watcher left by a dead node"
        }
        "live-node-stale-map" => {
            let image = image.ok_or_else(|| none("no RBD image"))?;
            let using: Vec<&str> = t.pods.iter().filter(|p| !p.terminating).filter_map(|p| p.node.as_deref()).collect();
            let (w, n) = t
                .watchers
                .iter()
                .find_map(|w| {
                    let n = EntityAddr::parse(&w.address).and_then(|a| t.node_at(a.ip))?;
                    (n.ready.is_ready() && !using.contains(&n.name.as_str())).then_some((w, n))
                })
                .ok_or_else(|| none("no watcher from a Ready node without a pod of this claim"))?;
            let dev = t.device.clone().unwrap_or_else(|| "/dev/rbdN".into());
            let short = dev.trim_start_matches("/dev/").to_string();
            b.push(
                format!("On {}: release {dev}", n.name),
                "The node is alive: unmap it there instead of fencing it.",
                StepKind::Manual {
                    on: Some(n.name.clone()),
                    commands: vec![
                        format!("unstick probe --device {short}    # or: grep -l {short} /proc/*/task/*/mountinfo"),
                        format!("findmnt -S {dev}                   # then stop the holders and umount each target"),
                        format!("rbd unmap {dev}"),
                    ],
                },
                false,
            );
            let ip = EntityAddr::parse(&w.address).map(|a| a.ip).ok_or_else(|| none("bad watcher address"))?;
            b.push(
                "Wait for the watcher to disappear",
                "",
                wait_step(Condition::NoWatcherFrom { image: image.clone(), ip }, cfg.wait_timeout_seconds, cfg),
                false,
            );
            b.push("Verify", "", StepKind::Verify(vec![Condition::NoWatcherFrom { image, ip }]), false);
            "Unmap the image on the live node"
        }
        "unmap-busy" => {
            let h =
                t.stuck_holder().ok_or_else(|| none("no DaemonSet pod mounting the host root without propagation"))?;
            let m = h.mount.clone();
            b.push(
                format!("Set mountPropagation: {HOST_TO_CONTAINER} on {}/{}", m.namespace, m.daemonset),
                "The container's copy of the host mounts keeps the device busy; HostToContainer lets host unmounts reach it. The previous value is recorded for undo.",
                StepKind::Act(WriteAction::SetMountPropagation {
                    namespace: m.namespace.clone(),
                    daemonset: m.daemonset.clone(),
                    container: m.container.clone(),
                    mount_path: m.mount_path.clone(),
                    from: None,
                    to: Some(HOST_TO_CONTAINER.into()),
                }),
                false,
            );
            b.push(
                "Verify the patch",
                "",
                StepKind::Verify(vec![Condition::MountPropagation {
                    mount: m.clone(),
                    value: Some(HOST_TO_CONTAINER.into()),
                }]),
                false,
            );
            b.push(
                format!("Only for an OnDelete DaemonSet: restart {}/{}", h.pod.namespace, h.pod.name),
                "The old container keeps its private mounts until it is recreated. A RollingUpdate DaemonSet (the default) replaces its pods by itself after the patch (measured with the real DaemonSet controller): skip this step then; its live re-check refuses anyway once the pod is gone. With updateStrategy OnDelete nothing replaces it: delete it here.",
                StepKind::Act(h.pod.delete()),
                true,
            );
            let dev = t.device.clone().unwrap_or_else(|| "/dev/rbdN".into());
            b.push(
                "Unmap the device on the node (kubelet retries by itself)",
                "",
                StepKind::Manual { on: h.pod.node.clone(), commands: vec![format!("rbd unmap {dev}")] },
                true,
            );
            // the node's client that watches the image (its storage address when attribution tied
            // one to it), else its first InternalIP
            let node = h.pod.node.as_deref().and_then(|n| t.node(n));
            let watching = |n: &&TargetNode| {
                let mut ips = t.watchers.iter().filter_map(|w| EntityAddr::parse(&w.address).map(|a| a.ip));
                ips.find(|ip| n.ips.contains(ip)).or(n.ips.first().copied())
            };
            if let (Some(image), Some(ip)) = (&image, node.as_ref().and_then(watching)) {
                b.push(
                    "Wait for the node's watcher to go",
                    "",
                    wait_step(Condition::NoWatcherFrom { image: image.clone(), ip }, cfg.wait_timeout_seconds, cfg),
                    false,
                );
            }
            "Release the device held in another mount namespace"
        }
        "same-node-restage" => {
            // the old pod when it is still Terminating; else the old mapping's own watcher (its exact
            // address): "no watcher at all" holds only for the moment between the old unstage and
            // the new pod's mapping, which a poll misses on a real cluster
            let cond = match (t.pods.iter().find(|p| p.terminating), &image, t.watchers.first()) {
                (Some(p), _, _) => {
                    Condition::PodGone { namespace: p.namespace.clone(), name: p.name.clone(), uid: p.uid.clone() }
                }
                (None, Some(i), Some(w)) => Condition::WatcherGone { image: i.clone(), addr: w.address.clone() },
                (None, Some(i), None) => Condition::NoWatchers { image: i.clone() },
                (None, None, _) => return Err(none("no old pod and no image to watch")),
            };
            b.push(
                "Wait for the old unmount/detach to finish",
                "Usually resolves by itself: kubelet's desired and actual states converge within minutes.",
                wait_step(cond, cfg.wait_timeout_seconds.max(360), cfg),
                false,
            );
            delete_pods(
                &mut b,
                t,
                "Only if the wait timed out: delete",
                "Recreating the pod restarts its mount after the old unmount finished.",
            );
            "Let the same-node restage finish"
        }
        "va-finalizer-stuck" => {
            let stuck: Vec<(String, String)> = t
                .volume_attachments
                .iter()
                .filter(|v| v.deleting)
                .filter_map(|v| v.attacher_finalizer().map(|f| (v.name.clone(), f.to_string())))
                .collect();
            if stuck.is_empty() {
                return Err(none("no deleting VolumeAttachment with an external-attacher finalizer"));
            }
            for (name, fin) in &stuck {
                b.push(
                    format!("Remove finalizer {fin} from {name}"),
                    "The attacher on the gone node will never clear it. Refused while the image still has a watcher.",
                    StepKind::Act(WriteAction::RemoveVaFinalizer { name: name.clone(), finalizer: fin.clone() }),
                    false,
                );
            }
            let conds = stuck.iter().map(|(n, _)| Condition::VaGone { name: n.clone() }).collect();
            b.push("Verify the attachment is gone", "", StepKind::Verify(conds), false);
            "Release the stuck VolumeAttachment"
        }
        "blocklist-leftover" => {
            if t.blocklist.is_empty() {
                return Err(none("no blocklist entry"));
            }
            for e in &t.blocklist {
                let act = match &e.target {
                    crate::model::ceph::BlocklistTarget::Addr(a) => WriteAction::BlocklistRm { addr: a.clone() },
                    crate::model::ceph::BlocklistTarget::Range(r) => WriteAction::BlocklistRangeRm { range: r.clone() },
                };
                b.push(
                    format!("Remove blocklist entry {}", e.text()),
                    "The node has recovered; the entry fences every client on it.",
                    StepKind::Act(act),
                    false,
                );
            }
            let conds = t.blocklist.iter().map(|e| Condition::BlocklistGone { entry: e.text().to_string() }).collect();
            b.push("Verify the entries are gone", "", StepKind::Verify(conds), false);
            "Unfence the recovered node"
        }
        "csi-driver-not-registered" => guidance::restart_node_plugin(&mut b, t, cfg).map_err(|w| none(&w))?,
        "rwo-claim-shared" => guidance::rwo_claim_guidance(&mut b, t, cfg).map_err(|w| none(&w))?,
        _ => return Err(PlaybookError::Unknown(pattern.into())),
    };
    Ok(Playbook { pattern, title: title.into(), scope: t.scope(), volume: t.pv.clone(), steps: b.steps })
}

/// Where csi-addons is installed with a NetworkFenceClass for the volume's driver: one
/// NetworkFence per dead node (`unstick-<node>`), its CIDRs the host addresses of that node's
/// dead watchers (`IP/32`, `IP/128`), instead of raw blocklist entries. The safety rules accept
/// only addresses proven to be the node's. A Wait step follows per node: the fence acts when
/// the csi-addons controller and ceph-csi have (the watchers from that address gone).
fn fence_through_csi_addons(
    b: &mut B,
    t: &Target,
    dead: &[&Watcher],
    class: &str,
    image: &ImageRef,
    cfg: &RemedyConfig,
) {
    let mut by_node: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for w in dead {
        let Some(a) = EntityAddr::parse(&w.address) else { continue };
        let Some(n) = t.node_at(a.ip) else { continue };
        let cidr = ipnet::IpNet::from(a.ip).to_string();
        let cidrs = by_node.entry(n.name.as_str()).or_default();
        if !cidrs.contains(&cidr) {
            cidrs.push(cidr);
        }
    }
    for (node, cidrs) in by_node {
        let ips = cidrs_ips(&cidrs);
        b.push(
            format!("Fence node {node} through csi-addons (NetworkFence unstick-{node})"),
            "csi-addons is installed: a NetworkFence has ceph-csi blocklist the node's client addresses, \
             so csi-addons knows the fence and lifts it (set Unfenced) when the node is back; its watchers \
             disappear once the fence's status says Succeeded.",
            StepKind::Act(WriteAction::NetworkFenceCreate {
                name: format!("unstick-{node}"),
                node: node.to_string(),
                cidrs,
                class: class.to_string(),
            }),
            false,
        );
        for ip in ips {
            b.push(
                format!("Wait for csi-addons to fence {ip}"),
                "ceph-csi blocklists the address when the controller passes the fence on; the watcher goes then.",
                wait_step(Condition::NoWatcherFrom { image: image.clone(), ip }, cfg.wait_timeout_seconds, cfg),
                false,
            );
        }
    }
}

/// The addresses of host CIDRs (`IP/32`, `IP/128`).
fn cidrs_ips(cidrs: &[String]) -> Vec<std::net::IpAddr> {
    cidrs.iter().filter_map(|c| c.parse::<ipnet::IpNet>().ok()).map(|n| n.addr()).collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "guidance_tests.rs"]
mod guidance_tests;
