//! Expands a [`Scenario`]'s compact tables into the simulated [`World`]: full Kubernetes objects
//! (Nodes with conditions and taints, ceph-csi or in-tree PVs, PVCs, Pods, DaemonSets and their
//! pods, VolumeAttachments, Events) and the Ceph state (images, watchers, locks, blocklist).

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::Sim;
use super::ceph::{CephState, Image};
use super::clock::SimClock;
use super::controllers::{app_pod_status, daemonset_pod};
use super::objects::unique_name;
use super::scenario::{Ago, AttachmentSpec, DaemonSetSpec, EventSpec, NodeSpec, PodSpec, Scenario, VolumeSpec};
use super::store::{Res, seconds};
use super::world::{CONTROLLER_LABEL, Controller, DeviceHolder, World};
use crate::model::ceph::{Lock, Watcher};
use crate::model::kube::Readiness;

impl Scenario {
    /// Builds the simulated world with simulated time starting at `start`, running `speed` times
    /// real time.
    pub fn world(&self, start: Timestamp, speed: f64) -> World {
        let mut w = World::new(SimClock::new(start, speed), self.api_version().unwrap_or((1, 20)));
        w.timings = self.timings.clone();
        w.ceph = CephState {
            watch_timeout_seconds: self.ceph.as_ref().map(|c| c.watch_timeout_seconds).unwrap_or(30),
            ..Default::default()
        };
        let ago = |a: Ago| seconds(start.checked_sub(SignedDuration::from_secs(a.0)).unwrap_or(start));
        let ip_of = |node: &str| self.nodes.iter().find(|n| n.name == node).map(|n| n.ip.clone()).unwrap_or_default();
        let pv_json: Vec<(String, Value)> = self.volumes.iter().map(|v| (v.pv.clone(), pv(v))).collect();
        let unique = |pv_name: &str| pv_json.iter().find(|(n, _)| n == pv_name).and_then(|(_, v)| unique_name(v));
        for n in &self.nodes {
            let attached: Vec<Value> = self
                .attachments
                .iter()
                .filter(|a| a.node == n.name)
                .filter_map(|a| unique(&a.pv))
                .map(|u| json!({"name": u, "devicePath": ""}))
                .collect();
            let in_use: Vec<String> = n.in_use.iter().filter_map(|p| unique(p)).collect();
            let _ = w.create(Res::Node, node(n, &ago(n.since), attached, in_use));
        }
        for v in &self.volumes {
            let _ = w.create(Res::Pvc, pvc(v));
            let (_, p) = pv_json.iter().find(|(n, _)| *n == v.pv).cloned().unwrap_or_default();
            let _ = w.create(Res::Pv, p);
            w.ceph.images.insert(
                v.image.clone(),
                Image {
                    id: crate::remedy::run::backup::sha256_hex(v.image.as_bytes())[..12].to_string(),
                    size: v.size_mib << 20,
                    ..Default::default()
                },
            );
        }
        for c in &self.controllers {
            w.controllers.push(Controller {
                kind: c.kind.clone(),
                namespace: c.namespace.clone(),
                name: c.name.clone(),
                claim: c.claim.clone(),
                node: Some(c.node.clone()),
                nodes: vec![],
            });
        }
        for p in &self.pods {
            let owner = p.controller.as_ref().and_then(|c| {
                self.controllers.iter().find(|k| k.name == *c && k.namespace == p.namespace).map(|k| k.kind.as_str())
            });
            let _ = w.create(Res::Pod, pod(p, &ago(p.age), owner));
            if let Some(after) = p.stops {
                let at = start.checked_add(SignedDuration::from_secs(after.0)).unwrap_or(start);
                w.stops.push((format!("{}/{}", p.namespace, p.name), at));
            }
        }
        for u in &self.unregistered {
            if let Some((ns, ds)) = u.daemonset.split_once('/') {
                w.unregistered.push((u.node.clone(), ns.to_string(), ds.to_string()));
            }
        }
        for d in &self.daemonsets {
            let _ = w.create(Res::DaemonSet, daemonset(d));
            w.controllers.push(Controller {
                kind: "DaemonSet".into(),
                namespace: d.namespace.clone(),
                name: d.name.clone(),
                claim: None,
                node: None,
                nodes: d.nodes.clone(),
            });
            let ds = daemonset(d);
            for n in &d.nodes {
                let at = start.checked_sub(SignedDuration::from_hours(7 * 24)).unwrap_or(start);
                let _ = w.create(Res::Pod, daemonset_pod(&ds, n, at));
            }
        }
        for h in &self.holders {
            let Some(d) = self.daemonsets.iter().find(|d| format!("{}/{}", d.namespace, d.name) == h.daemonset) else {
                continue;
            };
            w.holders.push(DeviceHolder {
                node: h.node.clone(),
                device: h.device.clone(),
                pv: h.pv.clone(),
                namespace: d.namespace.clone(),
                daemonset: d.name.clone(),
                container: d.container.clone(),
                mount_path: d.mount_path.clone(),
            });
        }
        for a in &self.attachments {
            let Some((_, p)) = pv_json.iter().find(|(n, _)| *n == a.pv) else { continue };
            if !p["spec"]["csi"].is_object() {
                continue;
            }
            let _ = w.create(Res::VolumeAttachment, va(a, p, a.deleting.map(ago)));
        }
        for (i, e) in self.events.iter().enumerate() {
            let uid = e.uid.clone().map(Value::from).or_else(|| {
                w.store
                    .get(&super::store::ObjKey::new(Res::Pod, &e.namespace, &e.object))
                    .map(|p| p["metadata"]["uid"].clone())
            });
            let _ = w.create(Res::Event, event(e, i, &ago(e.first), &ago(e.last), uid));
        }
        for c in &self.watchers {
            let address = c
                .address
                .clone()
                .unwrap_or_else(|| format!("{}:0/{}", ip_of(c.node.as_deref().unwrap_or("")), c.nonce));
            if let Some(img) = w.ceph.images.get_mut(&c.image) {
                img.watchers.push((Watcher { address, client: c.client, cookie: 139_882_320_104_896 + c.nonce }, None));
            }
        }
        for c in &self.locks {
            let address = c
                .address
                .clone()
                .unwrap_or_else(|| format!("{}:0/{}", ip_of(c.node.as_deref().unwrap_or("")), c.nonce));
            let id =
                c.id.clone().unwrap_or_else(|| format!("kubelet_lock_magic_{}", c.node.as_deref().unwrap_or("node")));
            if let Some(img) = w.ceph.images.get_mut(&c.image) {
                img.locks.push(Lock { id, locker: format!("client.{}", c.client), address });
            }
        }
        for o in &self.operations {
            w.operations.push(super::world::Teardown {
                node: o.node.clone(),
                pv: o.pv.clone(),
                at: start.checked_add(SignedDuration::from_secs(o.remaining.0)).unwrap_or(start),
            });
        }
        for b in &self.blocklist {
            w.ceph.block(&b.entry, b.range, b.expires_in.0, start);
        }
        w
    }

    /// [`Scenario::world`] wrapped in a [`Sim`].
    pub fn start(&self, start: Timestamp, speed: f64) -> Sim {
        Sim::new(self.world(start, speed))
    }
}

fn node(n: &NodeSpec, since: &str, attached: Vec<Value>, in_use: Vec<String>) -> Value {
    let ready = n.ready.is_ready();
    let cond = |t: &str| {
        let (status, reason, msg) = match (t, ready) {
            ("Ready", true) => ("True", "KubeletReady", "kubelet is posting ready status"),
            (_, true) => ("False", "KubeletHasSufficientResources", "kubelet has sufficient resources"),
            (_, false) if n.ready == Readiness::NotReady && t == "Ready" => {
                ("False", "KubeletNotReady", "container runtime is down")
            }
            _ => ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
        };
        json!({"type": t, "status": status, "reason": reason, "message": msg, "lastTransitionTime": since, "lastHeartbeatTime": since})
    };
    let taints: Vec<Value> = if ready {
        vec![]
    } else {
        vec![
            json!({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": since}),
            json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since}),
        ]
    };
    let conditions: Vec<Value> =
        ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"].iter().map(|t| cond(t)).collect();
    json!({
        "metadata": {"name": n.name, "labels": {"kubernetes.io/hostname": n.name}},
        "spec": {"taints": taints},
        "status": {
            "addresses": [{"type": "InternalIP", "address": n.ip}, {"type": "Hostname", "address": n.name}],
            "conditions": conditions,
            "nodeInfo": {"kubeletVersion": "v1.20.2", "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "docker://19.3.8",
                         "kernelVersion": "4.19.0", "kubeProxyVersion": "v1.20.2", "machineID": "", "operatingSystem": "linux",
                         "osImage": "Debian GNU/Linux 10 (buster)", "systemUUID": ""},
            "volumesAttached": attached,
            "volumesInUse": in_use,
        }
    })
}

fn access_modes(v: &VolumeSpec) -> Value {
    json!([match v.access.as_str() {
        "RWX" => "ReadWriteMany",
        "ROX" => "ReadOnlyMany",
        _ => "ReadWriteOnce",
    }])
}

fn pv(v: &VolumeSpec) -> Value {
    let (pool, image) = v.image.split_once('/').unwrap_or(("replicapool", &v.image));
    let size = format!("{}Mi", v.size_mib);
    let source = if v.driver == "in-tree" {
        json!({"rbd": {"monitors": ["10.0.0.1:6789"], "pool": pool, "image": image, "user": "admin", "fsType": "ext4"}})
    } else {
        let uuid = image.strip_prefix("csi-vol-").unwrap_or(image);
        json!({"csi": {"driver": "rbd.csi.ceph.com", "fsType": "ext4",
                       "volumeHandle": format!("0001-0009-rook-ceph-0000000000000001-{uuid}"),
                       "volumeAttributes": {"clusterID": "rook-ceph", "pool": pool, "imageName": image, "imageFeatures": "layering"}}})
    };
    let mut spec = json!({"accessModes": access_modes(v), "capacity": {"storage": size},
                          "claimRef": {"namespace": v.namespace, "name": v.claim, "kind": "PersistentVolumeClaim", "apiVersion": "v1"},
                          "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Filesystem",
                          "storageClassName": if v.driver == "in-tree" { "ceph-rbd" } else { "rook-ceph-block" }});
    if let (Some(s), Some(src)) = (spec.as_object_mut(), source.as_object()) {
        s.extend(src.clone());
    }
    json!({"metadata": {"name": v.pv, "finalizers": ["kubernetes.io/pv-protection"]}, "spec": spec, "status": {"phase": "Bound"}})
}

fn pvc(v: &VolumeSpec) -> Value {
    let size = format!("{}Mi", v.size_mib);
    json!({
        "metadata": {"namespace": v.namespace, "name": v.claim, "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"volumeName": v.pv, "accessModes": access_modes(v), "resources": {"requests": {"storage": size}}},
        "status": {"phase": "Bound", "accessModes": access_modes(v), "capacity": {"storage": size}}
    })
}

/// A scenario pod; one with a `controller` of kind `owner` (ReplicaSet, StatefulSet) carries its
/// controller `ownerReference` as the real controllers set it (uid as [`super::controllers`] gives).
fn pod(p: &PodSpec, at: &str, owner: Option<&str>) -> Value {
    let mut meta =
        json!({"namespace": p.namespace, "name": p.name, "creationTimestamp": at, "labels": {"app": p.name}});
    if let Some(c) = &p.controller {
        meta["labels"][CONTROLLER_LABEL] = json!(c);
        meta["labels"]["app"] = json!(c);
        if let Some(kind) = owner {
            meta["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind, "name": c, "uid": format!("sim-{c}"), "controller": true}]);
        }
    }
    if p.state == "Terminating" {
        meta["deletionTimestamp"] = json!(at);
        meta["deletionGracePeriodSeconds"] = json!(30);
        meta["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
    }
    let mut status = app_pod_status(p.state != "ContainerCreating", at);
    status["startTime"] = json!(at);
    let volumes: Vec<Value> =
        p.claim.iter().map(|c| json!({"name": "data", "persistentVolumeClaim": {"claimName": c}})).collect();
    json!({"metadata": meta, "spec": {"nodeName": p.node, "containers": [{"name": "app", "image": "app"}], "volumes": volumes}, "status": status})
}

fn daemonset(d: &DaemonSetSpec) -> Value {
    // the API server's defaults for a RollingUpdate DaemonSet are written out, as a GET shows them
    let strategy = match d.update_strategy.as_deref() {
        Some("OnDelete") => json!({"type": "OnDelete"}),
        _ => json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
    };
    let mut mount = json!({"name": "root", "mountPath": d.mount_path, "readOnly": true});
    if let Some(p) = &d.propagation {
        mount["mountPropagation"] = json!(p);
    }
    json!({
        "metadata": {"namespace": d.namespace, "name": d.name},
        "spec": {"selector": {"matchLabels": {"app": d.name}},
                 "updateStrategy": strategy,
                 "template": {"metadata": {"labels": {"app": d.name}},
                              "spec": {"hostPID": true, "containers": [{"name": d.container, "image": d.container, "volumeMounts": [mount]}],
                                       "volumes": [{"name": "root", "hostPath": {"path": "/"}}]}}},
        "status": {"currentNumberScheduled": d.nodes.len(), "desiredNumberScheduled": d.nodes.len(), "numberMisscheduled": 0, "numberReady": d.nodes.len()}
    })
}

fn va(a: &AttachmentSpec, pv: &Value, deleting: Option<String>) -> Value {
    let h = pv["spec"]["csi"]["volumeHandle"].as_str().unwrap_or("");
    let name =
        format!("csi-{}", crate::remedy::run::backup::sha256_hex(format!("{h}rbd.csi.ceph.com{}", a.node).as_bytes()));
    let mut meta = json!({"name": name, "finalizers": ["external-attacher/rbd-csi-ceph-com"]});
    if let Some(t) = deleting {
        meta["deletionTimestamp"] = json!(t);
    }
    json!({"metadata": meta, "spec": {"attacher": "rbd.csi.ceph.com", "nodeName": a.node, "source": {"persistentVolumeName": a.pv}},
           "status": {"attached": true}})
}

fn event(e: &EventSpec, i: usize, first: &str, last: &str, uid: Option<Value>) -> Value {
    let mut involved = json!({"kind": e.kind, "name": e.object});
    if e.kind == "Pod" {
        involved["namespace"] = json!(e.namespace);
        if let Some(u) = uid {
            involved["uid"] = u;
        }
    }
    let component = if e.reason.contains("Attach") { "attachdetach-controller" } else { "kubelet" };
    json!({
        "metadata": {"namespace": e.namespace, "name": format!("{}.{:016x}", e.object, i + 0x16a0_0000)},
        "involvedObject": involved,
        "reason": e.reason, "message": e.message, "type": e.type_, "count": e.count,
        "firstTimestamp": first, "lastTimestamp": last,
        "source": {"component": component, "host": e.host},
    })
}
