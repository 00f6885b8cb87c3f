//! How a simulated cluster reacts: the kubelets of Ready nodes finish deleted pods (unless a
//! device is held busy in another mount namespace), attach and mount volumes for waiting pods once
//! nothing blocks them (a VolumeAttachment on another node, a lock or a watcher from another host,
//! the old pod of the same claim still tearing down on the same node), controllers replace missing
//! pods, the attach-detach controller drops `volumesAttached` entries whose VolumeAttachment is
//! gone, and (API 1.28+) the out-of-service taint releases a lost node's pods and attachments.
//! Lost nodes do nothing: their pods stay Terminating and their watchers stay until fenced.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::store::{ObjKey, Res, seconds};
use super::world::World;
use crate::model::ceph::{EntityAddr, Lock, Watcher};
use crate::model::kube::OUT_OF_SERVICE_TAINT;

/// A controller that keeps pods running: `ReplicaSet` (a new name each time, on `node`),
/// `StatefulSet` (`<name>-0`, created once the old pod is gone) or `DaemonSet` (one pod per node in
/// `nodes`, `<name>-<node>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    /// `ReplicaSet`, `StatefulSet` or `DaemonSet`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name; pods carry the label `unstick.sim/controller=<name>`.
    pub name: String,
    /// The claim its pods mount, if any.
    pub claim: Option<String>,
    /// Node new pods are scheduled to (ReplicaSet / StatefulSet).
    pub node: Option<String>,
    /// Nodes of a DaemonSet.
    pub nodes: Vec<String>,
}

/// Label that ties a pod to its [`Controller`].
pub const CONTROLLER_LABEL: &str = "unstick.sim/controller";

fn age(now: Timestamp, t: &Value) -> i64 {
    t.as_str().and_then(|s| s.parse::<Timestamp>().ok()).map(|t| (now - t).get_seconds()).unwrap_or(i64::MAX)
}

/// Is the node's Ready condition `True`?
pub fn node_ready(n: &Value) -> bool {
    n["status"]["conditions"].as_array().into_iter().flatten().any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// The node's InternalIP.
pub fn node_ip(n: &Value) -> Option<String> {
    n["status"]["addresses"].as_array()?.iter().find(|a| a["type"] == "InternalIP")?["address"]
        .as_str()
        .map(str::to_string)
}

/// A PV's image spec (`pool/image`), from `spec.csi.volumeAttributes` or `spec.rbd`.
pub fn pv_image(pv: &Value) -> Option<String> {
    let s = &pv["spec"];
    if let (Some(p), Some(i)) =
        (s["csi"]["volumeAttributes"]["pool"].as_str(), s["csi"]["volumeAttributes"]["imageName"].as_str())
    {
        return Some(format!("{p}/{i}"));
    }
    Some(format!("{}/{}", s["rbd"]["pool"].as_str()?, s["rbd"]["image"].as_str()?))
}

/// The name kubelet and the attach-detach controller use for a PV in `volumesAttached` /
/// `volumesInUse`.
pub fn unique_name(pv: &Value) -> Option<String> {
    let s = &pv["spec"];
    if let (Some(d), Some(h)) = (s["csi"]["driver"].as_str(), s["csi"]["volumeHandle"].as_str()) {
        return Some(format!("kubernetes.io/csi/{d}^{h}"));
    }
    Some(format!("kubernetes.io/rbd/{}:{}", s["rbd"]["pool"].as_str()?, s["rbd"]["image"].as_str()?))
}

fn is_rwo(pv: &Value) -> bool {
    pv["spec"]["accessModes"]
        .as_array()
        .is_none_or(|m| m.iter().all(|x| x == "ReadWriteOnce" || x == "ReadWriteOncePod"))
}

fn claim_of(pod: &Value) -> Option<String> {
    pod["spec"]["volumes"]
        .as_array()?
        .iter()
        .find_map(|v| v["persistentVolumeClaim"]["claimName"].as_str().map(str::to_string))
}

fn key(pod: &Value) -> String {
    format!(
        "{}/{}",
        pod["metadata"]["namespace"].as_str().unwrap_or(""),
        pod["metadata"]["name"].as_str().unwrap_or("")
    )
}

fn deleting(o: &Value) -> bool {
    o["metadata"]["deletionTimestamp"].is_string()
}

fn waiting(pod: &Value) -> bool {
    !deleting(pod) && pod["status"]["phase"] != "Running"
}

struct Vol {
    pv_name: String,
    pv: Value,
    image: Option<String>,
    unique: Option<String>,
}

fn volume_of(w: &World, pod: &Value) -> Option<Vol> {
    let ns = pod["metadata"]["namespace"].as_str()?;
    let pvc = w.store.get(&ObjKey::new(Res::Pvc, ns, &claim_of(pod)?))?;
    let pv_name = pvc["spec"]["volumeName"].as_str()?.to_string();
    let pv = w.store.get(&ObjKey::new(Res::Pv, "", &pv_name))?.clone();
    Some(Vol { image: pv_image(&pv), unique: unique_name(&pv), pv_name, pv })
}

fn ip_of(addr: &str) -> Option<String> {
    EntityAddr::parse(addr).map(|a| a.ip.to_string())
}

/// One reaction pass at the world's current time.
pub fn step(w: &mut World) {
    let now = w.clock.now();
    w.ceph.expire(now);
    out_of_service(w, now);
    finish_operations(w, now);
    finish_deleted_pods(w, now);
    controllers(w, now);
    detach_released(w, now);
    mount_waiting_pods(w, now);
}

fn nodes(w: &World) -> Vec<Value> {
    w.store.list(Res::Node, None)
}

fn node(w: &World, name: &str) -> Option<Value> {
    w.store.get(&ObjKey::new(Res::Node, "", name)).cloned()
}

fn out_of_service(w: &mut World, now: Timestamp) {
    if w.version < (1, 28) {
        return;
    }
    for n in nodes(w) {
        let Some(taint) =
            n["spec"]["taints"].as_array().and_then(|t| t.iter().find(|t| t["key"] == OUT_OF_SERVICE_TAINT).cloned())
        else {
            continue;
        };
        if node_ready(&n) {
            continue;
        }
        let since = if taint["timeAdded"].is_string() { age(now, &taint["timeAdded"]) } else { i64::MAX };
        if since < w.timings.out_of_service_seconds {
            continue;
        }
        let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
        for p in w.store.list(Res::Pod, None).iter().filter(|p| p["spec"]["nodeName"] == name.as_str()) {
            if w.finalize(&ObjKey::of(Res::Pod, p)) {
                w.react(format!("out-of-service: pod {} on {name} force-deleted", key(p)));
            }
        }
        for va in w.store.list(Res::VolumeAttachment, None).iter().filter(|v| v["spec"]["nodeName"] == name.as_str()) {
            if w.finalize(&ObjKey::of(Res::VolumeAttachment, va)) {
                w.react(format!(
                    "out-of-service: VolumeAttachment {} on {name} detached",
                    va["metadata"]["name"].as_str().unwrap_or("")
                ));
            }
        }
        // the attach-detach controller force-detaches in-tree volumes too
        if n["status"]["volumesAttached"].as_array().is_some_and(|a| !a.is_empty()) {
            let _ = w.apply(|s| {
                s.update(&ObjKey::new(Res::Node, "", &name), |n| n["status"]["volumesAttached"] = json!([]))
            });
        }
    }
}

/// Kubelet on a Ready node tears a volume down: unmap (the watcher and in-tree lock of that host
/// go), `volumesInUse` / `volumesAttached` lose it, the VolumeAttachment is detached.
fn teardown(w: &mut World, node_name: &str, vol: &Vol) {
    let Some(n) = node(w, node_name) else { return };
    let ip = node_ip(&n);
    if let (Some(img), Some(ip)) = (vol.image.as_ref().and_then(|i| w.ceph.images.get_mut(i)), &ip) {
        img.watchers.retain(|(wt, _)| ip_of(&wt.address).as_ref() != Some(ip));
        img.locks.retain(|l| ip_of(&l.address).as_ref() != Some(ip));
    }
    if let Some(u) = &vol.unique {
        let u = u.clone();
        let _ = w.apply(|s| {
            s.update(&ObjKey::new(Res::Node, "", node_name), |n| {
                for f in ["volumesInUse", "volumesAttached"] {
                    if let Some(a) = n["status"][f].as_array_mut() {
                        a.retain(|x| x != u.as_str() && x["name"] != u.as_str());
                    }
                }
            })
        });
    }
    for va in w.store.list(Res::VolumeAttachment, None) {
        if va["spec"]["nodeName"] == node_name && va["spec"]["source"]["persistentVolumeName"] == vol.pv_name.as_str() {
            w.finalize(&ObjKey::of(Res::VolumeAttachment, &va));
        }
    }
}

fn finish_operations(w: &mut World, now: Timestamp) {
    let (done, pending): (Vec<_>, Vec<_>) =
        std::mem::take(&mut w.operations).into_iter().partition(|(_, _, at)| *at <= now);
    w.operations = pending;
    for (node_name, pv_name, _) in done {
        let Some(pv) = w.store.get(&ObjKey::new(Res::Pv, "", &pv_name)).cloned() else { continue };
        let vol = Vol { image: pv_image(&pv), unique: unique_name(&pv), pv_name: pv_name.clone(), pv };
        teardown(w, &node_name, &vol);
        w.react(format!("kubelet on {node_name}: teardown of {pv_name} finished"));
    }
}

fn held(w: &World, node_name: &str, pv: &str) -> bool {
    w.holders.iter().any(|h| h.node == node_name && h.pv == pv)
}

fn finish_deleted_pods(w: &mut World, now: Timestamp) {
    for p in w.store.list(Res::Pod, None).into_iter().filter(deleting) {
        let node_name = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
        if !node(w, &node_name).is_some_and(|n| node_ready(&n)) {
            continue; // a lost node's kubelet never confirms
        }
        if age(now, &p["metadata"]["deletionTimestamp"]) < w.timings.terminate_seconds {
            continue;
        }
        let vol = volume_of(w, &p);
        if let Some(v) = &vol {
            if held(w, &node_name, &v.pv_name) {
                busy_event(w, &p, &node_name, now);
                continue;
            }
            let others = w.store.list(Res::Pod, None).into_iter().any(|o| {
                key(&o) != key(&p)
                    && !deleting(&o)
                    && o["spec"]["nodeName"] == node_name.as_str()
                    && o["status"]["phase"] == "Running"
                    && volume_of(w, &o).is_some_and(|ov| ov.pv_name == v.pv_name)
            });
            if !others {
                teardown(w, &node_name, v);
            }
        }
        if w.finalize(&ObjKey::of(Res::Pod, &p)) {
            w.react(format!("kubelet on {node_name}: pod {} stopped and removed", key(&p)));
        }
    }
}

fn busy_event(w: &mut World, p: &Value, node_name: &str, now: Timestamp) {
    let id = format!("{}#busy", key(p));
    if !w.emitted.insert(id) || has_event(w, p, "FailedUnMount") {
        return;
    }
    let device =
        w.holders.iter().find(|h| h.node == node_name).map(|h| h.device.clone()).unwrap_or_else(|| "/dev/rbd0".into());
    let pv = volume_of(w, p).map(|v| v.pv_name).unwrap_or_default();
    let msg = format!(
        "UnmountDevice failed for volume \"{pv}\" : rbd: failed to unmap device {device}, error exit status 16, rbd output: rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy"
    );
    event(w, p, "FailedUnMount", &msg, now);
}

fn event(w: &mut World, p: &Value, reason: &str, message: &str, now: Timestamp) {
    let ns = p["metadata"]["namespace"].as_str().unwrap_or("");
    let name = p["metadata"]["name"].as_str().unwrap_or("");
    let n = w.store.rv();
    let e = json!({
        "metadata": {"namespace": ns, "name": format!("{name}.sim{n}")},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": name, "uid": p["metadata"]["uid"]},
        "reason": reason, "message": message, "type": "Warning", "count": 1,
        "firstTimestamp": seconds(now), "lastTimestamp": seconds(now),
        "source": {"component": if reason.contains("Attach") { "attachdetach-controller" } else { "kubelet" },
                   "host": p["spec"]["nodeName"]},
    });
    let _ = w.create(Res::Event, e);
}

fn controllers(w: &mut World, now: Timestamp) {
    let ctrls = w.controllers.clone();
    for c in ctrls {
        let pods: Vec<Value> = w
            .store
            .list(Res::Pod, Some(&c.namespace))
            .into_iter()
            .filter(|p| p["metadata"]["labels"][CONTROLLER_LABEL] == c.name.as_str())
            .collect();
        let wanted: Vec<(String, String)> = match c.kind.as_str() {
            "DaemonSet" => c.nodes.iter().map(|n| (format!("{}-{}", c.name, n.replace('.', "-")), n.clone())).collect(),
            "StatefulSet" => c.node.iter().map(|n| (format!("{}-0", c.name), n.clone())).collect(),
            _ => {
                let live = pods.iter().filter(|p| !deleting(p)).count();
                if live >= 1 {
                    vec![]
                } else {
                    w.next_client += 1;
                    let suffix: String = format!("{:x}", w.next_client * 7919).chars().rev().take(5).collect();
                    c.node.iter().map(|n| (format!("{}-{suffix}", c.name), n.clone())).collect()
                }
            }
        };
        for (name, node_name) in wanted {
            if c.kind != "ReplicaSet" && pods.iter().any(|p| p["metadata"]["name"] == name.as_str()) {
                continue;
            }
            let gone_key = format!("{}/{}#gone", c.namespace, c.name);
            let since = *w.free_since.entry(gone_key.clone()).or_insert(now);
            if (now - since).get_seconds() < w.timings.recreate_seconds {
                continue;
            }
            w.free_since.remove(&gone_key);
            create_pod(w, &c, &name, &node_name, now);
        }
    }
}

/// `status` of a one-container (`app`) pod: Running and Ready since `at`, or waiting in
/// `ContainerCreating`.
pub fn app_pod_status(running: bool, at: &str) -> Value {
    let (ready, state) = if running {
        (true, json!({"running": {"startedAt": at}}))
    } else {
        (false, json!({"waiting": {"reason": "ContainerCreating"}}))
    };
    let containers =
        json!([{"name": "app", "image": "app", "imageID": "", "ready": ready, "restartCount": 0, "state": state}]);
    if running {
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": containers})
    } else {
        json!({"phase": "Pending", "containerStatuses": containers})
    }
}

/// The pod a DaemonSet runs on `node`, from its current template: labels, `ownerReferences`
/// (kind DaemonSet), containers with their volume mounts, hostPath volumes; Running since `at`.
pub fn daemonset_pod(ds: &Value, node_name: &str, at: Timestamp) -> Value {
    let name = ds["metadata"]["name"].as_str().unwrap_or("");
    let t = &ds["spec"]["template"];
    let mut labels = t["metadata"]["labels"].clone();
    labels[CONTROLLER_LABEL] = json!(name);
    let started = seconds(at);
    let statuses: Vec<Value> = t["spec"]["containers"].as_array().into_iter().flatten()
        .map(|c| json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": true, "restartCount": 0, "state": {"running": {"startedAt": started}}}))
        .collect();
    let mut spec = t["spec"].clone();
    spec["nodeName"] = json!(node_name);
    json!({
        "metadata": {"namespace": ds["metadata"]["namespace"], "name": format!("{name}-{}", node_name.replace('.', "-")),
                     "labels": labels, "creationTimestamp": started,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name, "uid": ds["metadata"]["uid"], "controller": true}]},
        "spec": spec,
        "status": {"phase": "Running", "startTime": started, "conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": statuses},
    })
}

fn create_pod(w: &mut World, c: &Controller, name: &str, node_name: &str, now: Timestamp) {
    if c.kind == "DaemonSet" {
        let Some(ds) = w.store.get(&ObjKey::new(Res::DaemonSet, &c.namespace, &c.name)).cloned() else { return };
        if w.create(Res::Pod, daemonset_pod(&ds, node_name, now)).is_ok() {
            w.react(format!("DaemonSet {}/{}: created pod {name} on {node_name}", c.namespace, c.name));
        }
        release_holders(w, c, node_name);
        return;
    }
    let volumes: Vec<Value> =
        c.claim.iter().map(|cl| json!({"name": "data", "persistentVolumeClaim": {"claimName": cl}})).collect();
    let status = app_pod_status(c.claim.is_none(), &seconds(now));
    let pod = json!({
        "metadata": {"namespace": c.namespace, "name": name, "labels": {CONTROLLER_LABEL: c.name, "app": c.name},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": c.kind, "name": c.name, "uid": format!("sim-{}", c.name), "controller": true}]},
        "spec": {"nodeName": node_name, "containers": [{"name": "app", "image": "app"}], "volumes": volumes},
        "status": status,
    });
    if w.create(Res::Pod, pod).is_ok() {
        w.react(format!("{} {}/{}: created pod {name} on {node_name}", c.kind, c.namespace, c.name));
    }
}

/// A DaemonSet pod recreated with `mountPropagation: HostToContainer` on its host mount no longer
/// keeps a private copy of the node's RBD mounts.
fn release_holders(w: &mut World, c: &Controller, node_name: &str) {
    let Some(ds) = w.store.get(&ObjKey::new(Res::DaemonSet, &c.namespace, &c.name)).cloned() else { return };
    let before = w.holders.len();
    w.holders.retain(|h| {
        if h.node != node_name || h.namespace != c.namespace || h.daemonset != c.name {
            return true;
        }
        let prop = ds["spec"]["template"]["spec"]["containers"]
            .as_array()
            .and_then(|cs| cs.iter().find(|x| x["name"] == h.container.as_str()))
            .and_then(|x| x["volumeMounts"].as_array())
            .and_then(|ms| ms.iter().find(|m| m["mountPath"] == h.mount_path.as_str()))
            .map(|m| m["mountPropagation"].as_str().unwrap_or("None").to_string());
        !matches!(prop.as_deref(), Some("HostToContainer" | "Bidirectional"))
    });
    if w.holders.len() < before {
        w.react(format!(
            "{}/{} on {node_name} restarted with HostToContainer: device no longer held",
            c.namespace, c.name
        ));
    }
}

/// The attach-detach controller: a CSI volume whose VolumeAttachment is gone leaves the node's
/// `volumesAttached`; a volume on a lost node is detached once the last pod using it there is gone
/// from the API and the node's `volumesInUse` no longer lists it, or `maxWaitForUnmountDuration`
/// (6 minutes) after the pod is gone (the real 1.20 reconciler, proven on the live harness).
/// Detaching a CSI volume deletes its VolumeAttachment (the attacher releases it at once).
fn detach_released(w: &mut World, now: Timestamp) {
    force_detach_in_tree(w, now);
    let vas = w.store.list(Res::VolumeAttachment, None);
    let pvs = w.store.list(Res::Pv, None);
    for n in nodes(w) {
        let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
        let Some(attached) = n["status"]["volumesAttached"].as_array() else { continue };
        let stale: Vec<String> = attached
            .iter()
            .filter_map(|a| a["name"].as_str())
            .filter(|u| u.starts_with("kubernetes.io/csi/"))
            .filter(|u| {
                let pv = pvs.iter().find(|p| unique_name(p).as_deref() == Some(*u));
                let pv_name = pv.and_then(|p| p["metadata"]["name"].as_str());
                !vas.iter().any(|v| {
                    v["spec"]["nodeName"] == name.as_str()
                        && v["spec"]["source"]["persistentVolumeName"].as_str() == pv_name
                })
            })
            .map(str::to_string)
            .collect();
        if stale.is_empty() {
            continue;
        }
        let _ = w.apply(|s| {
            s.update(&ObjKey::new(Res::Node, "", &name), |n| {
                if let Some(a) = n["status"]["volumesAttached"].as_array_mut() {
                    a.retain(|x| !stale.iter().any(|u| x["name"] == u.as_str()));
                }
            })
        });
    }
}

/// Seconds the attach-detach controller waits for an unmount before it force-detaches.
const MAX_WAIT_FOR_UNMOUNT_SECONDS: i64 = 360;

fn force_detach_in_tree(w: &mut World, now: Timestamp) {
    let vas = w.store.list(Res::VolumeAttachment, None);
    let pods = w.store.list(Res::Pod, None);
    let pvs = w.store.list(Res::Pv, None);
    for n in nodes(w).into_iter().filter(|n| !node_ready(n)) {
        let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
        let Some(attached) = n["status"]["volumesAttached"].as_array() else { continue };
        let in_use: Vec<String> = n["status"]["volumesInUse"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        for u in attached.iter().filter_map(|a| a["name"].as_str()).map(str::to_string).collect::<Vec<_>>() {
            let pv_name = pvs
                .iter()
                .find(|p| unique_name(p).as_deref() == Some(u.as_str()))
                .and_then(|p| p["metadata"]["name"].as_str())
                .map(str::to_string);
            let used = pods.iter().any(|p| {
                p["spec"]["nodeName"] == name.as_str()
                    && volume_of(w, p).is_some_and(|v| Some(&v.pv_name) == pv_name.as_ref())
            });
            let key = format!("{name}#detach#{u}");
            if used {
                w.free_since.remove(&key);
                continue;
            }
            let since = *w.free_since.entry(key.clone()).or_insert(now);
            let mounted = in_use.contains(&u);
            if mounted && (now - since).get_seconds() < MAX_WAIT_FOR_UNMOUNT_SECONDS {
                continue;
            }
            w.free_since.remove(&key);
            if u.starts_with("kubernetes.io/csi/") {
                for va in vas.iter().filter(|v| {
                    v["spec"]["nodeName"] == name.as_str()
                        && v["spec"]["source"]["persistentVolumeName"].as_str() == pv_name.as_deref()
                }) {
                    let va_name = va["metadata"]["name"].as_str().unwrap_or("").to_string();
                    let _ = w.apply(|s| {
                        s.update(&ObjKey::new(Res::VolumeAttachment, "", &va_name), |v| {
                            v["metadata"]["finalizers"] = json!([])
                        })
                    });
                    let _ =
                        w.apply(|s| s.delete(&ObjKey::new(Res::VolumeAttachment, "", &va_name), None, None, None, now));
                    w.react(format!("attach-detach controller: detached {va_name} from lost node {name}"));
                }
                continue;
            }
            let _ = w.apply(|s| {
                s.update(&ObjKey::new(Res::Node, "", &name), |n| {
                    if let Some(a) = n["status"]["volumesAttached"].as_array_mut() {
                        a.retain(|x| x["name"] != u.as_str());
                    }
                })
            });
            w.react(if mounted {
                format!("attach-detach controller: force-detached {u} from lost node {name} after {MAX_WAIT_FOR_UNMOUNT_SECONDS} s")
            } else {
                format!("attach-detach controller: detached {u} from lost node {name} (no longer in use)")
            });
        }
    }
}

/// Why a waiting pod cannot mount yet, with the event kubelet or the attach-detach controller
/// reports; `None` when nothing blocks it.
fn blocker(w: &World, p: &Value, node_name: &str, ip: Option<&str>, vol: &Vol) -> Option<(&'static str, String)> {
    let restage = w.store.list(Res::Pod, p["metadata"]["namespace"].as_str()).into_iter().any(|o| {
        key(&o) != key(p) && deleting(&o) && o["spec"]["nodeName"] == node_name && claim_of(&o) == claim_of(p)
    });
    let in_flight = w.operations.iter().any(|(n, pv, _)| n == node_name && *pv == vol.pv_name);
    if restage || in_flight {
        let h = vol.pv["spec"]["csi"]["volumeHandle"].as_str().unwrap_or(&vol.pv_name);
        return Some((
            "FailedMount",
            format!(
                "MountVolume.MountDevice failed for volume \"{}\" : rpc error: code = Aborted desc = an operation with the given Volume ID {h} already exists",
                vol.pv_name
            ),
        ));
    }
    if !is_rwo(&vol.pv) {
        return None;
    }
    let elsewhere_va = w.store.list(Res::VolumeAttachment, None).into_iter().any(|v| {
        v["spec"]["source"]["persistentVolumeName"] == vol.pv_name.as_str() && v["spec"]["nodeName"] != node_name
    });
    let elsewhere_node = vol.unique.as_ref().is_some_and(|u| {
        nodes(w).iter().any(|n| {
            n["metadata"]["name"] != node_name
                && n["status"]["volumesAttached"].as_array().is_some_and(|a| a.iter().any(|x| x["name"] == u.as_str()))
        })
    });
    if elsewhere_va || elsewhere_node {
        return Some((
            "FailedAttachVolume",
            format!(
                "Multi-Attach error for volume \"{}\" Volume is already exclusively attached to one node and can't be attached to another",
                vol.pv_name
            ),
        ));
    }
    let img = vol.image.as_ref().and_then(|i| w.ceph.images.get(i))?;
    let foreign = |addr: &str| ip_of(addr).as_deref() != ip;
    if img.locks.iter().any(|l| foreign(&l.address)) {
        return Some((
            "FailedMount",
            format!(
                "MountVolume.SetUp failed for volume \"{}\" : rbd: image {} is locked by other nodes",
                vol.pv_name,
                vol.image.as_deref().unwrap_or("")
            ),
        ));
    }
    if img.watchers.iter().any(|(wt, _)| foreign(&wt.address)) {
        return Some((
            "FailedMount",
            format!(
                "MountVolume.WaitForAttach failed for volume \"{}\" : rbd image {} is still being used",
                vol.pv_name,
                vol.image.as_deref().unwrap_or("")
            ),
        ));
    }
    None
}

fn mount_waiting_pods(w: &mut World, now: Timestamp) {
    for p in w.store.list(Res::Pod, None).into_iter().filter(waiting) {
        let node_name = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
        let Some(n) = node(w, &node_name).filter(node_ready) else { continue };
        let Some(vol) = volume_of(w, &p) else { continue };
        let ip = node_ip(&n);
        let k = key(&p);
        if let Some((reason, msg)) = blocker(w, &p, &node_name, ip.as_deref(), &vol) {
            w.free_since.remove(&k);
            if w.emitted.insert(format!("{k}#{reason}#{}", &msg[..msg.len().min(24)])) && !has_event(w, &p, reason) {
                event(w, &p, reason, &msg, now);
            }
            continue;
        }
        let since = *w.free_since.entry(k.clone()).or_insert(now);
        if (now - since).get_seconds() < w.timings.mount_seconds {
            continue;
        }
        w.free_since.remove(&k);
        mount(w, &p, &node_name, ip.as_deref(), &vol, now);
    }
}

fn has_event(w: &World, p: &Value, reason: &str) -> bool {
    w.store
        .list(Res::Event, p["metadata"]["namespace"].as_str())
        .iter()
        .any(|e| e["involvedObject"]["name"] == p["metadata"]["name"] && e["reason"] == reason)
}

fn mount(w: &mut World, p: &Value, node_name: &str, ip: Option<&str>, vol: &Vol, now: Timestamp) {
    let csi = vol.pv["spec"]["csi"].is_object();
    if csi
        && !w.store.list(Res::VolumeAttachment, None).iter().any(|v| {
            v["spec"]["nodeName"] == node_name && v["spec"]["source"]["persistentVolumeName"] == vol.pv_name.as_str()
        })
    {
        let h = vol.pv["spec"]["csi"]["volumeHandle"].as_str().unwrap_or("");
        let name =
            format!("csi-{}", crate::remedy::backup::sha256_hex(format!("{h}rbd.csi.ceph.com{node_name}").as_bytes()));
        let _ = w.create(
            Res::VolumeAttachment,
            json!({"metadata": {"name": name, "finalizers": ["external-attacher/rbd-csi-ceph-com"]},
                   "spec": {"attacher": "rbd.csi.ceph.com", "nodeName": node_name, "source": {"persistentVolumeName": vol.pv_name}},
                   "status": {"attached": true}}),
        );
    }
    if let Some(u) = vol.unique.clone() {
        let _ = w.apply(|s| {
            s.update(&ObjKey::new(Res::Node, "", node_name), |n| {
                let st = &mut n["status"];
                if !st["volumesInUse"].is_array() {
                    st["volumesInUse"] = json!([]);
                }
                if !st["volumesAttached"].is_array() {
                    st["volumesAttached"] = json!([]);
                }
                if let Some(a) = st["volumesInUse"].as_array_mut().filter(|a| !a.iter().any(|x| x == u.as_str())) {
                    a.push(json!(u));
                }
                if let Some(a) =
                    st["volumesAttached"].as_array_mut().filter(|a| !a.iter().any(|x| x["name"] == u.as_str()))
                {
                    a.push(json!({"name": u, "devicePath": ""}));
                }
            })
        });
    }
    w.next_client += 1;
    let client = w.next_client;
    if let (Some(img), Some(ip)) = (vol.image.as_ref().and_then(|i| w.ceph.images.get_mut(i)), ip) {
        let address = format!("{ip}:0/{}", 3_000_000_000u64 + client);
        if !csi {
            img.locks.push(Lock {
                id: format!("kubelet_lock_magic_{node_name}"),
                locker: format!("client.{client}"),
                address: address.clone(),
            });
        }
        img.watchers.push((Watcher { address, client, cookie: 18_446_462_598_732_840_000 + client }, None));
    }
    let running = app_pod_status(true, &seconds(now));
    let _ = w.apply(|s| s.update(&ObjKey::of(Res::Pod, p), |pod| pod["status"] = running));
    w.react(format!("kubelet on {node_name}: {} mounted {} and is Running", key(p), vol.pv_name));
}
