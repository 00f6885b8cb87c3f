//! Memory of the Kubernetes model (issue 13), measured with a counting global allocator: bytes
//! live after building the model from a generated `kubectl get … -o json` List, with the old
//! full k8s-openapi types (managedFields and the last-applied annotation stripped, as the old
//! watcher did) and with the slim types of `unstick::model::objects` (events bounded), per kind
//! and per pod; and the peak while streaming the list from a file as `diagnose --bundle` does.
//!
//! The objects are shaped like a real API server's answers (the shapes of `benches/scale/run`):
//! labels, annotations, ownerReferences and `managedFields` (one entry per manager, `fieldsV1`
//! mirroring the fields it set, as the API server writes them), containers with env, resources,
//! probes, ports, security contexts and mounts, nodes with 20 images, capacity and conditions.
//!
//! ```text
//! cargo bench --bench model_memory                      # 10k pods / 500 nodes / 2k volumes / 5k events
//! cargo bench --bench model_memory -- 50000 2500 10000 10000
//! cargo bench --bench model_memory -- --write-bundle DIR [PODS NODES VOLUMES EVENTS]
//! ```
//! `--write-bundle` writes DIR/kube.json (and a manifest) for measuring
//! `/usr/bin/time -v unstick diagnose --bundle DIR --no-ceph`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails by panicking")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};

use serde_json::{Value, json};

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size() as isize, Ordering::Relaxed) + l.size() as isize;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            let now =
                LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed) + new as isize - l.size() as isize;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

const DRIVER: &str = "rbd.csi.ceph.com";
const NOW: i64 = 1_795_000_000;

fn t(ago: i64) -> String {
    jiff::Timestamp::from_second(NOW - ago).unwrap().to_string()
}

fn uid(kind: &str, i: usize) -> String {
    let h = format!("{:032x}", ((i as u128 + 1) * 0x9e37_79b9_7f4a_7c15) ^ (kind.len() as u128 * 0x1234_5678_9abc));
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// `fieldsV1` for `v` as the API server records a manager's fields: `f:<key>` per object key,
/// `k:{"name":…}` per named list item, `.` for set leaves.
fn fields_v1(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut m = serde_json::Map::new();
            for (k, v) in o {
                m.insert(format!("f:{k}"), fields_v1(v));
            }
            Value::Object(m)
        }
        Value::Array(a) => {
            let mut m = serde_json::Map::new();
            for item in a {
                match item.get("name").and_then(Value::as_str) {
                    Some(n) => {
                        let mut f = fields_v1(item);
                        f.as_object_mut().unwrap().insert(".".into(), json!({}));
                        m.insert(format!("k:{{\"name\":\"{n}\"}}"), f);
                    }
                    None => {
                        m.insert(format!("v:{item}"), json!({}));
                    }
                }
            }
            Value::Object(m)
        }
        _ => json!({}),
    }
}

/// Adds `managedFields`: `manager` set metadata + spec, `status_manager` the status.
fn managed(mut o: Value, manager: &str, status_manager: &str) -> Value {
    let mut spec_part = serde_json::Map::new();
    for k in ["metadata", "spec"] {
        if let Some(v) = o.get(k) {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.remove("name");
                m.remove("namespace");
            }
            spec_part.insert(k.into(), v);
        }
    }
    let mut entries = vec![json!({"manager": manager, "operation": "Update", "apiVersion": "v1",
        "time": t(86_400 * 7), "fieldsType": "FieldsV1", "fieldsV1": fields_v1(&Value::Object(spec_part))})];
    if let Some(st) = o.get("status") {
        entries.push(json!({"manager": status_manager, "operation": "Update", "apiVersion": "v1",
            "time": t(3600), "fieldsType": "FieldsV1", "fieldsV1": {"f:status": fields_v1(st)}}));
    }
    o["metadata"]["managedFields"] = Value::Array(entries);
    o["metadata"]["uid"] = json!(uid("obj", o.to_string().len()));
    o["metadata"]["resourceVersion"] = json!("123456");
    o["metadata"]["creationTimestamp"] = json!(t(86_400 * 7));
    o
}

fn container(name: &str, image: &str, env_n: usize, mounts: Value, probes: bool) -> Value {
    let mut env: Vec<Value> =
        (0..env_n).map(|k| json!({"name": format!("SETTING_{k}"), "value": format!("value-{k}")})).collect();
    env.push(
        json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}),
    );
    env.push(
        json!({"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db-credentials", "key": "password"}}}),
    );
    let mut c = json!({
        "name": name, "image": image, "imagePullPolicy": "IfNotPresent",
        "args": ["--config=/etc/app/config.yaml", "--log-level=info", "--metrics-addr=:9090"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "env": env,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "volumeMounts": mounts,
        "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "allowPrivilegeEscalation": false},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    });
    if probes {
        c["livenessProbe"] = json!({"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
            "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3});
    }
    c
}

fn pod(i: usize, s: &Shape) -> Value {
    let ns = format!("ns-{:02}", i % 40);
    let (app, claim) = if i < s.volumes {
        (format!("db-{i}"), Some(format!("data-db-{i}-0")))
    } else {
        (format!("web-{}", i % 200), None)
    };
    let name = format!("{app}-7d9f8c6b5d-{i:05x}");
    let node = format!("node-{:04}", i % s.nodes);
    let mut mounts = vec![
        json!({"name": "config", "mountPath": "/etc/app", "readOnly": true}),
        json!({"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}),
    ];
    let mut vols = vec![
        json!({"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}}),
        json!({"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}]}}),
    ];
    if let Some(c) = &claim {
        mounts.push(json!({"name": "data", "mountPath": "/var/lib/data"}));
        vols.push(json!({"name": "data", "persistentVolumeClaim": {"claimName": c}}));
    }
    let troubled = i.is_multiple_of((s.pods / s.troubled.max(1)).max(1));
    let waiting = troubled.then_some("ContainerCreating");
    let cs = |name: &str, image: &str| {
        let state = match waiting {
            None => json!({"running": {"startedAt": t(86_400)}}),
            Some(w) => json!({"waiting": {"reason": w}}),
        };
        json!({"name": name, "ready": waiting.is_none(), "restartCount": 0, "image": image,
               "imageID": format!("{image}@sha256:{:064x}", i), "containerID": format!("containerd://{:064x}", i * 7),
               "started": waiting.is_none(), "state": state, "lastState": {}})
    };
    let ok = if waiting.is_none() { "True" } else { "False" };
    let conds: Vec<Value> = [("Initialized", "True"), ("Ready", ok), ("ContainersReady", ok), ("PodScheduled", "True")]
        .iter()
        .map(|(ty, st)| json!({"type": ty, "status": st, "lastProbeTime": null, "lastTransitionTime": t(86_400)}))
        .collect();
    let o = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns, "generateName": format!("{app}-7d9f8c6b5d-"),
            "labels": {"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/instance": format!("{app}-prod"),
                       "app.kubernetes.io/part-of": "shop", "pod-template-hash": "7d9f8c6b5d", "team": "payments", "tier": "backend"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                            "kubectl.kubernetes.io/restartedAt": t(7 * 86_400),
                            "checksum/config": format!("{:064x}", i * 31), "cni.projectcalico.org/podIP": "10.244.1.2/32"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-7d9f8c6b5d"),
                                 "uid": uid("rs", i % 200), "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "nodeName": node, "serviceAccountName": "default", "serviceAccount": "default", "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
            "containers": [container("app", &format!("registry.example.com/shop/{app}:2.14.1"), 5, json!(mounts), true),
                           container("log-shipper", "registry.example.com/infra/fluent-bit:2.1.8", 0,
                                     json!([mounts[1].clone()]), false)],
            "volumes": vols,
            "securityContext": {"fsGroup": 1000},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        },
        "status": {
            "phase": if waiting.is_none() { "Running" } else { "Pending" }, "conditions": conds,
            "hostIP": format!("10.0.{}.{}", (i % s.nodes) / 250, (i % s.nodes) % 250 + 1), "podIP": "10.244.1.2",
            "podIPs": [{"ip": "10.244.1.2"}], "startTime": t(86_400), "qosClass": "Burstable",
            "containerStatuses": [cs("app", "registry.example.com/shop/app:2.14"), cs("log-shipper", "registry.example.com/infra/fluent-bit:2.1.8")],
        },
    });
    managed(o, "kube-controller-manager", "kubelet")
}

fn node(i: usize, s: &Shape) -> Value {
    let name = format!("node-{i:04}");
    let vols: Vec<String> = (i..s.volumes).step_by(s.nodes).map(unique).collect();
    let cond = |ty: &str, st: &str, r: &str| {
        json!({"type": ty, "status": st, "reason": r, "message": format!("kubelet has {r}"),
        "lastHeartbeatTime": t(30), "lastTransitionTime": t(86_400 * 20)})
    };
    let images: Vec<Value> = (0..20)
        .map(|k| json!({"names": [format!("registry.example.com/team/img-{k}@sha256:{:064x}", k * 977),
                                  format!("registry.example.com/team/img-{k}:1.{k}.0")], "sizeBytes": 10_000_000 + k * 1_234_567}))
        .collect();
    let o = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "m5.2xlarge",
                       "topology.kubernetes.io/zone": format!("zone-{}", i % 3), "topology.kubernetes.io/region": "region-1",
                       "node-role.kubernetes.io/worker": ""},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                            "csi.volume.kubernetes.io/nodeid": format!("{{\"{DRIVER}\":\"{name}\"}}"),
                            "projectcalico.org/IPv4Address": format!("10.0.{}.{}/16", i / 250, i % 250 + 1)}},
        "spec": {"podCIDR": format!("10.244.{}.0/24", i % 256), "podCIDRs": [format!("10.244.{}.0/24", i % 256)], "providerID": format!("external://{name}")},
        "status": {
            "capacity": {"cpu": "8", "memory": "32778468Ki", "pods": "110", "ephemeral-storage": "101445540Ki"},
            "allocatable": {"cpu": "7800m", "memory": "31627492Ki", "pods": "110", "ephemeral-storage": "93492209510"},
            "conditions": [cond("MemoryPressure", "False", "KubeletHasSufficientMemory"), cond("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                           cond("PIDPressure", "False", "KubeletHasSufficientPID"), cond("Ready", "True", "KubeletReady")],
            "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 250, i % 250 + 1)}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": uid("m", i).replace('-', ""), "systemUUID": uid("s", i), "bootID": uid("b", i),
                         "kernelVersion": "6.1.0-18-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)", "containerRuntimeVersion": "containerd://1.6.20",
                         "kubeletVersion": "v1.20.2", "kubeProxyVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64"},
            "images": images,
            "volumesInUse": vols,
            "volumesAttached": vols.iter().map(|u| json!({"name": u, "devicePath": ""})).collect::<Vec<_>>(),
        },
    });
    managed(o, "kubelet", "kubelet")
}

fn handle(v: usize) -> String {
    format!("0001-0009-rook-ceph-0000000000000002-{}", uid("vol", v))
}

fn unique(v: usize) -> String {
    format!("kubernetes.io/csi/{DRIVER}^{}", handle(v))
}

fn volume(v: usize, s: &Shape) -> [Value; 3] {
    let ns = format!("ns-{:02}", v % 40);
    let claim = format!("data-db-{v}-0");
    let pv = format!("pvc-{}", uid("pv", v));
    let node = format!("node-{:04}", v % s.nodes);
    let pvo = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": pv, "annotations": {"pv.kubernetes.io/provisioned-by": DRIVER}, "finalizers": ["kubernetes.io/pv-protection"]},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
                 "storageClassName": "ceph-block", "volumeMode": "Filesystem",
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": claim, "uid": uid("pvc", v), "resourceVersion": "4242"},
                 "csi": {"driver": DRIVER, "volumeHandle": handle(v), "fsType": "ext4",
                         "volumeAttributes": {"clusterID": "rook-ceph", "pool": "replicapool", "imageFeatures": "layering",
                                              "imageName": format!("csi-vol-{}", uid("vol", v)), "journalPool": "replicapool",
                                              "storage.kubernetes.io/csiProvisionerIdentity": "1700000000000-8081-rook-ceph.rbd.csi.ceph.com"},
                         "nodeStageSecretRef": {"name": "rook-csi-rbd-node", "namespace": "rook-ceph"},
                         "controllerExpandSecretRef": {"name": "rook-csi-rbd-provisioner", "namespace": "rook-ceph"}}},
        "status": {"phase": "Bound"}});
    let pvco = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": ns, "labels": {"app": format!("db-{v}"), "app.kubernetes.io/name": "db"},
                     "annotations": {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
                                     "volume.beta.kubernetes.io/storage-provisioner": DRIVER},
                     "finalizers": ["kubernetes.io/pvc-protection"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                 "storageClassName": "ceph-block", "volumeMode": "Filesystem", "volumeName": pv},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}});
    let vao = json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": format!("csi-{:064x}", v * 13 + 1), "finalizers": ["external-attacher/rbd-csi-ceph-com"]},
        "spec": {"attacher": DRIVER, "nodeName": node, "source": {"persistentVolumeName": pv}},
        "status": {"attached": true, "attachmentMetadata": {"kubernetes.io/csi/device": "/dev/rbd0"}}});
    [
        managed(pvo, "kube-controller-manager", "kube-controller-manager"),
        managed(pvco, "kube-controller-manager", "kube-controller-manager"),
        managed(vao, "csi-attacher", "csi-attacher"),
    ]
}

fn event(i: usize, s: &Shape) -> Value {
    let p = i % s.pods;
    let (kind, ns, name) = if i % 10 == 9 {
        ("ReplicaSet", format!("ns-{:02}", p % 40), format!("web-{}-7d9f8c6b5d", p % 200))
    } else {
        let app = if p < s.volumes { format!("db-{p}") } else { format!("web-{}", p % 200) };
        ("Pod", format!("ns-{:02}", p % 40), format!("{app}-7d9f8c6b5d-{p:05x}"))
    };
    let (ty, reason, msg) = match i % 5 {
        0 => ("Normal", "Scheduled", format!("Successfully assigned {ns}/{name} to node-{:04}", p % s.nodes)),
        1 => (
            "Normal",
            "Pulled",
            "Container image \"registry.example.com/shop/app:2.14.1\" already present on machine".to_string(),
        ),
        2 => ("Normal", "Started", "Started container app".to_string()),
        3 => (
            "Warning",
            "FailedMount",
            format!(
                "MountVolume.MountDevice failed for volume \"pvc-{}\" : rpc error: code = Internal desc = rbd image replicapool/csi-vol-{} is still being used",
                uid("pv", p),
                uid("vol", p)
            ),
        ),
        _ => (
            "Warning",
            "FailedAttachVolume",
            format!(
                "Multi-Attach error for volume \"pvc-{}\" Volume is already exclusively attached to one node and can't be attached to another",
                uid("pv", p)
            ),
        ),
    };
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{name}.{:016x}", i * 7919), "namespace": ns, "uid": uid("ev", i), "resourceVersion": "99",
                     "creationTimestamp": t(600)},
        "involvedObject": {"apiVersion": "v1", "kind": kind, "namespace": ns, "name": name, "uid": uid("pod", p),
                           "resourceVersion": "1", "fieldPath": "spec.containers{app}"},
        "reason": reason, "message": msg, "type": ty, "count": 1 + i % 4,
        "firstTimestamp": t(3600), "lastTimestamp": t(60 + (i % 300) as i64),
        "source": {"component": "kubelet", "host": format!("node-{:04}", p % s.nodes)}, "reportingComponent": "", "reportingInstance": ""})
}

struct Shape {
    pods: usize,
    nodes: usize,
    volumes: usize,
    events: usize,
    troubled: usize,
}

/// The List's text, written item by item (the whole Value tree of 50k pods is not needed).
fn generate(s: &Shape) -> String {
    let mut out = String::from("{\"apiVersion\":\"v1\",\"items\":[");
    let mut first = true;
    let mut push = |v: Value| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&v.to_string());
    };
    (0..s.nodes).for_each(|i| push(node(i, s)));
    (0..s.pods).for_each(|i| push(pod(i, s)));
    let mut pvs = vec![];
    let mut vas = vec![];
    for v in 0..s.volumes {
        let [pv, pvc, va] = volume(v, s);
        push(pvc);
        pvs.push(pv);
        vas.push(va);
    }
    pvs.into_iter().for_each(&mut push);
    vas.into_iter().for_each(&mut push);
    (0..s.events).for_each(|i| push(event(i, s)));
    out.push_str("],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}");
    out
}

/// The old model: k8s-openapi's full types, managedFields and last-applied stripped.
#[derive(Default)]
struct Full {
    nodes: Vec<Arc<k8s_openapi::api::core::v1::Node>>,
    pods: Vec<Arc<k8s_openapi::api::core::v1::Pod>>,
    pvcs: Vec<Arc<k8s_openapi::api::core::v1::PersistentVolumeClaim>>,
    pvs: Vec<Arc<k8s_openapi::api::core::v1::PersistentVolume>>,
    vas: Vec<Arc<k8s_openapi::api::storage::v1::VolumeAttachment>>,
    events: Vec<Arc<k8s_openapi::api::core::v1::Event>>,
}

fn full_of<T: serde::de::DeserializeOwned + kube::Resource>(v: &Value) -> Arc<T> {
    use kube::ResourceExt;
    let mut o: T = serde_json::from_value(v.clone()).unwrap();
    o.managed_fields_mut().clear();
    o.annotations_mut().remove("kubectl.kubernetes.io/last-applied-configuration");
    Arc::new(o)
}

fn full(text: &str) -> Full {
    let doc: Value = serde_json::from_str(text).unwrap();
    let mut f = Full::default();
    for v in doc["items"].as_array().unwrap() {
        match v["kind"].as_str().unwrap() {
            "Node" => f.nodes.push(full_of(v)),
            "Pod" => f.pods.push(full_of(v)),
            "PersistentVolumeClaim" => f.pvcs.push(full_of(v)),
            "PersistentVolume" => f.pvs.push(full_of(v)),
            "VolumeAttachment" => f.vas.push(full_of(v)),
            _ => f.events.push(full_of(v)),
        }
    }
    f
}

/// Bytes freed by dropping `v`.
fn freed<T>(v: T) -> isize {
    let before = live();
    drop(v);
    before - live()
}

/// Bytes live in a store of `objs`' copies (moved in, as a watcher's event is stored) beyond
/// the objects themselves (each in an `Arc`, as a snapshot holds them): what keying and the
/// table cost.
fn store_overhead<K: Clone>(objs: &[Arc<K>], fill: impl FnOnce(Vec<K>) -> Box<dyn std::any::Any>) -> isize {
    let copies: Vec<K> = objs.iter().map(|o| (**o).clone()).collect();
    let n = objs.len() as isize;
    let size = std::mem::size_of::<K>() as isize;
    let base = live();
    let store = fill(copies);
    // the objects' own heap moved in; the Vec's buffer (n * size) was freed, n Arcs allocated
    let overhead = live() - base + n * size - n * (size + 16);
    drop(store);
    overhead
}

/// [`store_overhead`] of the console's watch stores, summed over the six kinds (kube-runtime's
/// reflector store, which they replaced, cost 266 B per object here: 5.6 MB at 10k pods).
fn stores_overhead(snap: &unstick::model::Snapshot) -> isize {
    use kube::runtime::watcher::Event as WEvent;
    fn ours<K: unstick::sources::store::Keyed + 'static>(v: Vec<K>) -> Box<dyn std::any::Any> {
        let (r, mut w) = unstick::sources::store::store::<K>();
        for o in v {
            w.apply(WEvent::Apply(o));
        }
        Box::new((r, w))
    }
    store_overhead(&snap.nodes, ours)
        + store_overhead(&snap.pods, ours)
        + store_overhead(&snap.pvcs, ours)
        + store_overhead(&snap.pvs, ours)
        + store_overhead(&snap.volume_attachments, ours)
        + store_overhead(&snap.events, ours)
}

fn mb(b: isize) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let bundle = args.iter().position(|a| a == "--write-bundle").map(|i| {
        args.remove(i);
        std::path::PathBuf::from(args.remove(i))
    });
    let n = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let pods = n(0, 10_000);
    let s = Shape { pods, nodes: n(1, pods / 20), volumes: n(2, pods / 5), events: n(3, pods / 2), troubled: 40 };
    let text = generate(&s);
    println!(
        "shape: {} pods / {} nodes / {} PVC+PV+VA / {} events (10% about ReplicaSets); kube.json {}",
        s.pods,
        s.nodes,
        s.volumes,
        s.events,
        mb(text.len() as isize)
    );
    if let Some(dir) = bundle {
        let w = unstick::bundle::Writer::create(&dir).unwrap();
        w.put(unstick::bundle::KUBE, &text).unwrap();
        let m = unstick::bundle::Manifest {
            collected_at: Some(jiff::Timestamp::from_second(NOW).unwrap()),
            ..Default::default()
        };
        w.manifest(&m).unwrap();
        println!("bundle written to {}", dir.display());
        return;
    }

    let base = live();
    let f = full(&text);
    let before_total = live() - base;
    let per = |name: &str, b: isize, count: usize| format!("{name} {} ({} B each)", mb(b), b / count.max(1) as isize);
    let (np, nn, nc, nv, na, ne) =
        (f.pods.len(), f.nodes.len(), f.pvcs.len(), f.pvs.len(), f.vas.len(), f.events.len());
    let Full { nodes, pods: fp, pvcs, pvs, vas, events } = f;
    let before = [freed(fp), freed(nodes), freed(pvcs), freed(pvs), freed(vas), freed(events)];
    println!(
        "before (k8s-openapi full types, managedFields + last-applied stripped): {} live, {} bytes per pod",
        mb(before_total),
        before_total / s.pods as isize
    );
    println!(
        "  {}; {}; {}; {}; {}; {}",
        per("pods", before[0], np),
        per("nodes", before[1], nn),
        per("pvcs", before[2], nc),
        per("pvs", before[3], nv),
        per("vas", before[4], na),
        per("events", before[5], ne)
    );

    let base = live();
    let mut snap = unstick::model::Snapshot::default();
    unstick::bundle::parse_kube("kube.json", &text, &mut snap).unwrap();
    let dropped = unstick::model::event_bound::bound(&mut snap.events);
    snap.events.shrink_to_fit();
    let after_total = live() - base;
    let objects = snap.nodes.len()
        + snap.pods.len()
        + snap.pvcs.len()
        + snap.pvs.len()
        + snap.volume_attachments.len()
        + snap.events.len();
    let our_store = stores_overhead(&snap);
    let counts = (
        snap.pods.len(),
        snap.nodes.len(),
        snap.pvcs.len(),
        snap.pvs.len(),
        snap.volume_attachments.len(),
        snap.events.len(),
    );
    let after = [
        freed(std::mem::take(&mut snap.pods)),
        freed(std::mem::take(&mut snap.nodes)),
        freed(std::mem::take(&mut snap.pvcs)),
        freed(std::mem::take(&mut snap.pvs)),
        freed(std::mem::take(&mut snap.volume_attachments)),
        freed(std::mem::take(&mut snap.events)),
    ];
    println!(
        "after (slim types, {dropped} events dropped by the bound): {} live, {} bytes per pod",
        mb(after_total),
        after_total / s.pods as isize
    );
    println!(
        "  {}; {}; {}; {}; {}; {}",
        per("pods", after[0], counts.0),
        per("nodes", after[1], counts.1),
        per("pvcs", after[2], counts.2),
        per("pvs", after[3], counts.3),
        per("vas", after[4], counts.4),
        per("events", after[5], counts.5)
    );
    println!("ratio after/before: {:.3}", after_total as f64 / before_total as f64);
    println!(
        "watch stores, beyond the objects ({objects} objects): {} ({} B per object)",
        mb(our_store),
        our_store / objects as isize
    );

    // the bundle path: streamed from a file, the text never held whole
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kube.json");
    std::fs::write(&path, &text).unwrap();
    drop(text);
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    let mut snap = unstick::model::Snapshot::default();
    unstick::bundle::parse_kube_reader("kube.json", std::fs::File::open(&path).unwrap(), &mut snap).unwrap();
    println!(
        "streamed from the file: peak {} above the start, {} live after ({} pods)",
        mb(PEAK.load(Ordering::Relaxed) - base),
        mb(live() - base),
        snap.pods.len()
    );
}
