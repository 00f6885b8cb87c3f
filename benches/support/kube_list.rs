//! A generated `kubectl get … -o json` List shaped like a real API server's answers (the shapes of
//! `benches/scale/run`): labels, annotations, ownerReferences and `managedFields` (one entry per
//! manager, `fieldsV1` mirroring the fields it set, as the API server writes them), containers with
//! env, resources, probes, ports, security contexts and mounts, nodes with 20 images, capacity and
//! conditions. Included by the memory benches with `#[path]`.

use serde_json::{Value, json};
const DRIVER: &str = "rbd.csi.ceph.com";
/// The generated objects' clock (seconds since the epoch).
pub const NOW: i64 = 1_795_000_000;

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

/// How many objects of each kind.
pub struct Shape {
    /// Pods.
    pub pods: usize,
    /// Nodes.
    pub nodes: usize,
    /// PVC + PV + VolumeAttachment triples.
    pub volumes: usize,
    /// Events (10% about ReplicaSets).
    pub events: usize,
    /// Pods waiting in ContainerCreating.
    pub troubled: usize,
}

/// The List's text, written item by item (the whole Value tree of 50k pods is not needed).
pub fn generate(s: &Shape) -> String {
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
