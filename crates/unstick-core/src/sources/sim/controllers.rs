//! The simulated control plane: controllers that replace missing pods (ReplicaSet, StatefulSet,
//! DaemonSet), the attach-detach controller (detaching released and lost-node volumes, with the
//! 1.20 six-minute wait for unmount), and (API 1.26+) the out-of-service taint releasing a lost
//! node's pods and attachments.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::objects::{age, deleting, key, node_ready, nodes_where, unique_name, volume_of};
use super::store::{ObjKey, Res, seconds};
use super::world::{CONTROLLER_LABEL, Controller, World};
use crate::model::kube::OUT_OF_SERVICE_TAINT;

pub(super) fn out_of_service(w: &mut World, now: Timestamp) {
    // on by default from 1.26; the simulated 1.24–1.25 controller-manager runs without the alpha gate
    if w.version < (1, 26) {
        return;
    }
    let tainted =
        |n: &Value| n["spec"]["taints"].as_array().is_some_and(|t| t.iter().any(|t| t["key"] == OUT_OF_SERVICE_TAINT));
    let names = |w: &World| -> Vec<String> {
        nodes_where(w, tainted).iter().filter_map(|n| n["metadata"]["name"].as_str().map(String::from)).collect()
    };
    let now_tainted = names(w);
    w.tainted_since.retain(|n, _| now_tainted.contains(n));
    for n in now_tainted {
        w.tainted_since.entry(n).or_insert(now);
    }
    for n in nodes_where(w, |n| tainted(n) && !node_ready(n)) {
        let Some(taint) =
            n["spec"]["taints"].as_array().and_then(|t| t.iter().find(|t| t["key"] == OUT_OF_SERVICE_TAINT).cloned())
        else {
            continue;
        };
        if node_ready(&n) {
            continue;
        }
        let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
        let since = if taint["timeAdded"].is_string() {
            age(now, &taint["timeAdded"])
        } else {
            w.tainted_since.get(&name).map_or(0, |t| (now - *t).get_seconds())
        };
        if since < w.timings.out_of_service_seconds {
            continue;
        }
        for p in w.store.list_where(Res::Pod, None, |p| p["spec"]["nodeName"] == name.as_str()).iter() {
            if w.finalize(&ObjKey::of(Res::Pod, p)) {
                w.react(format!("out-of-service: pod {} on {name} force-deleted", key(p)));
            }
        }
        for va in w.store.list_where(Res::VolumeAttachment, None, |v| v["spec"]["nodeName"] == name.as_str()).iter() {
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

pub(super) fn controllers(w: &mut World, now: Timestamp) {
    let ctrls = w.controllers.clone();
    for c in ctrls {
        let pods: Vec<Value> = w
            .store
            .list_where(Res::Pod, Some(&c.namespace), |p| p["metadata"]["labels"][CONTROLLER_LABEL] == c.name.as_str());
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

pub(super) fn create_pod(w: &mut World, c: &Controller, name: &str, node_name: &str, now: Timestamp) {
    if c.kind == "DaemonSet" {
        let Some(ds) = w.store.get(&ObjKey::new(Res::DaemonSet, &c.namespace, &c.name)).cloned() else { return };
        if w.create(Res::Pod, daemonset_pod(&ds, node_name, now)).is_ok() {
            w.react(format!("DaemonSet {}/{}: created pod {name} on {node_name}", c.namespace, c.name));
            let before = w.unregistered.len();
            w.unregistered.retain(|(n, ns, d)| !(n == node_name && *ns == c.namespace && *d == c.name));
            if w.unregistered.len() < before {
                w.react(format!("kubelet on {node_name}: CSI driver registered by {name}"));
            }
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
pub(super) fn release_holders(w: &mut World, c: &Controller, node_name: &str) {
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
pub(super) fn detach_released(w: &mut World, now: Timestamp) {
    force_detach_in_tree(w, now);
    let csi_attached = |n: &Value| {
        n["status"]["volumesAttached"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["name"].as_str().is_some_and(|u| u.starts_with("kubernetes.io/csi/"))))
    };
    let attached_nodes = nodes_where(w, csi_attached);
    if attached_nodes.is_empty() {
        return;
    }
    let vas = w.store.list(Res::VolumeAttachment, None);
    let pvs = w.store.list(Res::Pv, None);
    for n in attached_nodes {
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
pub(super) const MAX_WAIT_FOR_UNMOUNT_SECONDS: i64 = 360;

pub(super) fn force_detach_in_tree(w: &mut World, now: Timestamp) {
    let lost =
        nodes_where(w, |n| !node_ready(n) && n["status"]["volumesAttached"].as_array().is_some_and(|a| !a.is_empty()));
    if lost.is_empty() {
        return;
    }
    let lost_names: Vec<&str> = lost.iter().filter_map(|n| n["metadata"]["name"].as_str()).collect();
    let vas = w.store.list(Res::VolumeAttachment, None);
    let pods =
        w.store.list_where(Res::Pod, None, |p| p["spec"]["nodeName"].as_str().is_some_and(|n| lost_names.contains(&n)));
    let pvs = w.store.list(Res::Pv, None);
    for n in lost.iter() {
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
