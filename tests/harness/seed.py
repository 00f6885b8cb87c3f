#!/usr/bin/python3
"""Seed / reset the unstick test incidents on the harness cluster (the static seeds).

usage: /usr/bin/python3 seed.py seed default|000|001|002|003|004
       /usr/bin/python3 seed.py reset

An entry script, called through `tests/harness/cluster seed|reset`, which sets UNSTICK_HARNESS_DIR
and CEPH_CONF; the API client, Ceph command lines and shared names are harness_lib.py's.
The object names are documented in SEED.md; keep the two in sync.
After seeding, $UNSTICK_HARNESS_DIR/seed.json describes the live state
(pod UIDs, watcher addresses, lock lockers, ...).
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_lib import (  # noqa: E402
    ApiError, CEPH_ENV, CEPH_PY, CLUSTER_ID, CSI_DRIVER, HERE, Kube, LOCAL_IP, MON_ADDR, POOL, P_LEASES,
    P_NETWORK_FENCES, P_NETWORK_FENCE_CLASSES, P_NODES,
    P_PVS, P_SCS, P_VAS, RUN, SEEDED, STATE, blocklist_clear, ceph, csi_handle, micro_ts, p_apps,
    p_core, pid_alive_holder, pool_id, rbd, rbd_json, strip_and_delete, ts, va_name,
)

NAMESPACES = [f"incident-00{i}" for i in range(5)]

# the bytes kubelet printed in seed 003 ("rbd output: [114 98 100 58 ...]")
UNMAP_BUSY_OUTPUT = "rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy\n"
SEED_003_BYTES = ("114 98 100 58 32 115 121 115 102 115 32 119 114 105 116 101 32 102 97 105 108 101 100 10 "
                  "114 98 100 58 32 117 110 109 97 112 32 102 97 105 108 101 100 58 32 40 49 54 41 32 68 101 "
                  "118 105 99 101 32 111 114 32 114 101 115 111 117 114 99 101 32 98 117 115 121 10")
# a leftover blocklist entry (nonce taken from seed 002); it matches NO live client
LEFTOVER_BLOCKLIST = f"{LOCAL_IP}:0/4208975345"

# fixed UUIDs for the ceph-csi volumes, so names are stable (SEED.md)
UUID_001 = "bbae4ef3-cabb-455e-9179-4b47b029aa3c"
UUID_002 = "7250b242-c2ba-4a96-a015-36bfb4c0cadd"
UUID_004 = "11551b53-560a-4da2-914c-ed7b42065f64"
IMAGE_000 = "index-api-image"
IMAGE_003 = "kubernetes-dynamic-pvc-998825ec-9c79-11e9-a3b2-fa163ed7c802"
ALL_IMAGES = [IMAGE_000, f"csi-vol-{UUID_001}", f"csi-vol-{UUID_002}", IMAGE_003, f"csi-vol-{UUID_004}"]

# nodes: name -> default InternalIP. node1 always has 127.0.0.1 (it owns 000's lock and
# 002's watcher); node133 / 10-10-88-113 get 127.0.0.1 only in the single-incident seeds 003 / 004.
NODE_IPS = {
    "node1": LOCAL_IP,
    "10.46.181.146": "10.46.181.146",
    "worker-22-51": "192.168.22.51",
    "worker-22-52": "192.168.22.52",
    "10.10.11.22": "10.10.11.22",
    "node133": "10.125.54.133",
    "10-10-88-113": "10.10.88.113",
}


def log(msg):
    print(f"[seed {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- holders
def stop_holders():
    for fn in sorted(os.listdir(RUN)) if os.path.isdir(RUN) else []:
        if not (fn.startswith("holder-") and fn.endswith(".pid")):
            continue
        path = os.path.join(RUN, fn)
        try:
            pid = int(open(path).read().strip() or "0")
        except (OSError, ValueError):
            pid = 0
        if pid and pid_alive_holder(pid):
            log(f"stopping {fn[:-4]} (pid {pid})")
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not pid_alive_holder(pid):
                    break
                time.sleep(0.1)
            if pid_alive_holder(pid):
                os.kill(pid, signal.SIGKILL)
        for f in (path, path[:-4] + ".addr"):
            try:
                os.unlink(f)
            except FileNotFoundError:
                pass


def start_holder(name, image):
    pidfile = os.path.join(RUN, f"{name}.pid")
    logf = open(os.path.join(RUN, f"{name}.log"), "a")
    proc = subprocess.Popen([CEPH_PY, os.path.join(HERE, "holder.py"), POOL, image, "--pidfile", pidfile],
                            env=CEPH_ENV, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                            start_new_session=True, close_fds=True)  # setsid: survives the caller
    logf.close()
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}; see {RUN}/{name}.log")
        watchers = rbd_json("status", f"{POOL}/{image}").get("watchers", [])
        if watchers:
            addr = watchers[0]["address"]
            log(f"{name} (pid {proc.pid}) holds {POOL}/{image}: watcher {addr}")
            return {"name": name, "pid": proc.pid, "image": image, "address": addr,
                    "client": watchers[0].get("client")}
        time.sleep(0.3)
    raise RuntimeError(f"{name}: no watcher on {image} after 30 s")


# ---------------------------------------------------------------------------- object builders
def meta(name, ns=None, labels=None, **extra):
    m = {"name": name, "labels": {SEEDED: "true", **(labels or {})}}
    if ns:
        m["namespace"] = ns
    m.update(extra)
    return m


class Seeder:
    def __init__(self, kube, which):
        self.k = kube
        self.which = which
        self.incidents = ["000", "001", "002", "003", "004"] if which == "default" else [which]
        self.local_node = {"default": "node1", "000": "node1", "001": None, "002": "node1",
                           "003": "node133", "004": "10-10-88-113"}[which]
        self.pool_id = pool_id()
        self.ev_seq = 0
        self.nodes = {}  # name -> dict(ready, lost_for, attached[], in_use[])
        self.out = {"seed": which, "local_node": self.local_node, "pool_id": self.pool_id,
                    "incidents": {}, "holders": [], "locks": [], "blocklist": []}

    # ---- helpers
    def node_ip(self, name):
        if name == self.local_node:
            return LOCAL_IP
        ip = NODE_IPS[name]
        if ip == LOCAL_IP:
            raise RuntimeError(f"node {name} would be {LOCAL_IP} but {self.local_node} owns it")
        return ip

    def want_node(self, name, ready=True, lost_for=0):
        n = self.nodes.setdefault(name, {"ready": ready, "lost_for": lost_for, "attached": [], "in_use": []})
        n["ready"] = n["ready"] and ready
        n["lost_for"] = max(n["lost_for"], lost_for)
        return n

    def node_volume(self, node, unique_name, in_use=True):
        n = self.nodes[node]
        n["attached"].append(unique_name)
        if in_use:
            n["in_use"].append(unique_name)

    def create_image(self, img):
        rbd("create", f"{POOL}/{img}", "--size", "64", "--image-feature", "layering")

    def workload_deployment(self, ns, name, rs_hash, image, volume, claim):
        labels = {"app": name}
        dep = self.k.create(p_apps(ns, "deployments"), {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, ns, labels),
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "strategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": labels},
                                  "spec": self.pod_spec(name, image, volume, claim)}}})
        self.workload_status(dep, {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
                                   "unavailableReplicas": 1})
        rs_labels = {**labels, "pod-template-hash": rs_hash}
        rs = self.k.create(p_apps(ns, "replicasets"), {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta(f"{name}-{rs_hash}", ns, rs_labels, ownerReferences=[self.owner(dep)]),
            "spec": {"replicas": 1, "selector": {"matchLabels": rs_labels},
                     "template": {"metadata": {"labels": rs_labels},
                                  "spec": self.pod_spec(name, image, volume, claim)}}})
        self.workload_status(rs, {"observedGeneration": 1, "replicas": 1, "fullyLabeledReplicas": 1})
        return rs, rs_labels

    def workload_status(self, obj, status):
        m = obj["metadata"]
        res = obj["kind"].lower() + "s"
        self.k.merge(p_apps(m["namespace"], res, m["name"]) + "/status", {"status": status})

    @staticmethod
    def owner(obj):
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
                "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}

    @staticmethod
    def pod_spec(container, image, volume, claim, node=None):
        spec = {"containers": [{"name": container, "image": image,
                                "volumeMounts": [{"name": volume, "mountPath": "/data"}]}],
                "volumes": [{"name": volume, "persistentVolumeClaim": {"claimName": claim}}]}
        if node:
            spec["nodeName"] = node
        return spec

    def create_pod(self, ns, name, node, labels, owner, container, image, volume, claim):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": meta(name, ns, labels, ownerReferences=[self.owner(owner)]),
               "spec": self.pod_spec(container, image, volume, claim, node)}
        return self.k.create(p_core(ns, "pods"), pod)

    def pod_status(self, pod, state, node, age_s=3600, ready=False):
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        c = pod["spec"]["containers"][0]
        if state == "creating":
            cstate = {"waiting": {"reason": "ContainerCreating"}}
            phase, started = "Pending", False
        else:
            cstate = {"running": {"startedAt": ts(age_s)}}
            phase, started = "Running", True
        ready_s = "True" if ready else "False"
        conds = [
            {"type": "Initialized", "status": "True", "lastTransitionTime": ts(age_s)},
            {"type": "Ready", "status": ready_s, "lastTransitionTime": ts(age_s if ready else 60),
             **({} if ready else {"reason": "ContainersNotReady",
                                  "message": f"containers with unready status: [{c['name']}]"})},
            {"type": "ContainersReady", "status": ready_s, "lastTransitionTime": ts(age_s if ready else 60),
             **({} if ready else {"reason": "ContainersNotReady",
                                  "message": f"containers with unready status: [{c['name']}]"})},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(age_s)},
        ]
        status = {"phase": phase, "conditions": conds, "hostIP": self.node_ip(node), "startTime": ts(age_s),
                  "qosClass": "BestEffort",
                  "containerStatuses": [{"name": c["name"], "image": c["image"],
                                         "imageID": "" if not started else f"docker-pullable://{c['image']}",
                                         "ready": ready, "restartCount": 0, "started": started,
                                         "state": cstate}]}
        if started:
            status["podIP"] = "10.244.%d.%d" % (sum(map(ord, node)) % 250, sum(map(ord, name)) % 250 + 2)
            status["containerStatuses"][0]["containerID"] = "docker://" + hashlib.sha256(name.encode()).hexdigest()
        return self.k.merge(p_core(ns, "pods", name) + "/status", {"status": status})

    def event(self, pod, reason, message, source, count=1, first_ago=600, last_ago=30, etype="Warning",
              involved_uid=None):
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.ev_seq += 1
        ev_name = f"{name}.{time.time_ns() + self.ev_seq:x}"
        body = {"apiVersion": "v1", "kind": "Event",
                "metadata": meta(ev_name, ns),
                "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name,
                                   "uid": involved_uid or pod["metadata"]["uid"]},
                "reason": reason, "message": message, "type": etype, "count": count,
                "firstTimestamp": ts(first_ago), "lastTimestamp": ts(last_ago),
                "source": source, "reportingComponent": "", "reportingInstance": ""}
        self.k.create(p_core(ns, "events"), body)
        return {"reason": reason, "type": etype, "source": source.get("component"), "message": message}

    def pvc_pv(self, ns, pvc_name, pv_name, volume_source, storage_class, provisioner):
        rwo = ["ReadWriteOnce"]
        pvc = self.k.create(p_core(ns, "persistentvolumeclaims"), {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": meta(pvc_name, ns, annotations={
                "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
                **({"volume.beta.kubernetes.io/storage-provisioner": provisioner} if provisioner else {})}),
            "spec": {"accessModes": rwo, "resources": {"requests": {"storage": "64Mi"}},
                     "storageClassName": storage_class, "volumeName": pv_name, "volumeMode": "Filesystem"}})
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": meta(pv_name, annotations=(
                  {"pv.kubernetes.io/provisioned-by": provisioner} if provisioner else {})),
              "spec": {"accessModes": rwo, "capacity": {"storage": "64Mi"},
                       "persistentVolumeReclaimPolicy": "Delete" if provisioner else "Retain",
                       "storageClassName": storage_class, "volumeMode": "Filesystem",
                       "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns,
                                    "name": pvc_name, "uid": pvc["metadata"]["uid"]},
                       **volume_source}}
        if provisioner == CSI_DRIVER:
            pv["metadata"]["finalizers"] = ["kubernetes.io/pv-protection", "external-attacher/rbd-csi-ceph-com"]
        self.k.create(P_PVS, pv)
        self.k.merge(f"{P_PVS}/{pv_name}/status", {"status": {"phase": "Bound"}})
        self.k.merge(p_core(ns, "persistentvolumeclaims", pvc_name) + "/status", {"status": {
            "phase": "Bound", "accessModes": rwo, "capacity": {"storage": "64Mi"}}})
        return pvc

    def csi_volume(self, ns, pvc_name, pv_name, uuid):
        handle = csi_handle(uuid, self.pool_id)
        img = f"csi-vol-{uuid}"
        src = {"csi": {"driver": CSI_DRIVER, "volumeHandle": handle, "fsType": "ext4",
                       "volumeAttributes": {"clusterID": CLUSTER_ID, "pool": POOL, "imageName": img,
                                            "imageFeatures": "layering"}}}
        self.pvc_pv(ns, pvc_name, pv_name, src, "rook-ceph-block", CSI_DRIVER)
        return handle, img, f"kubernetes.io/csi/{CSI_DRIVER}^{handle}"

    def intree_volume(self, ns, pvc_name, pv_name, image, storage_class, provisioner):
        src = {"rbd": {"monitors": [MON_ADDR], "pool": POOL, "image": image, "user": "admin",
                       "keyring": "/etc/ceph/keyring", "fsType": "ext4", "readOnly": False}}
        self.pvc_pv(ns, pvc_name, pv_name, src, storage_class, provisioner)
        return f"kubernetes.io/rbd/{POOL}:{image}"

    def volume_attachment(self, pv_name, handle, node):
        name = va_name(handle, node)
        self.k.create(P_VAS, {
            "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": meta(name, finalizers=["external-attacher/rbd-csi-ceph-com"],
                             annotations={"csi.alpha.kubernetes.io/node-id": node}),
            "spec": {"attacher": CSI_DRIVER, "nodeName": node,
                     "source": {"persistentVolumeName": pv_name}}})
        self.k.merge(f"{P_VAS}/{name}/status", {"status": {"attached": True}})
        return name

    # ---- nodes
    def create_nodes(self):
        for name, n in self.nodes.items():
            ip = self.node_ip(name)
            hb = ts(n["lost_for"] + 20) if not n["ready"] else ts(5)
            if n["ready"]:
                conds = [{"type": t, "status": "False", "reason": r, "message": m,
                          "lastHeartbeatTime": hb, "lastTransitionTime": ts(86400 * 30)}
                         for t, r, m in (("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                                         ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                         ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"))]
                conds.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                              "message": "kubelet is posting ready status", "lastHeartbeatTime": hb,
                              "lastTransitionTime": ts(86400 * 30)})
                taints = []
            else:
                conds = [{"type": t, "status": "Unknown", "reason": "NodeStatusUnknown",
                          "message": "Kubelet stopped posting node status.", "lastHeartbeatTime": hb,
                          "lastTransitionTime": ts(n["lost_for"])}
                         for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")]
                taints = [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule",
                           "timeAdded": ts(n["lost_for"])},
                          {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                           "timeAdded": ts(n["lost_for"])}]
            node = {"apiVersion": "v1", "kind": "Node",
                    "metadata": meta(name, labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                   "kubernetes.io/arch": "amd64"},
                                     annotations={"node.alpha.kubernetes.io/ttl": "0",
                                                  "volumes.kubernetes.io/controller-managed-attach-detach": "true"}),
                    "spec": {"taints": taints},
                    "status": {"addresses": [{"type": "InternalIP", "address": ip},
                                             {"type": "Hostname", "address": name}],
                               "conditions": conds,
                               "capacity": {"cpu": "8", "memory": "32863296Ki", "pods": "110"},
                               "allocatable": {"cpu": "8", "memory": "32760896Ki", "pods": "110"},
                               "nodeInfo": {"kubeletVersion": "v1.20.2", "kubeProxyVersion": "v1.20.2",
                                            "containerRuntimeVersion": "docker://19.3.15",
                                            "operatingSystem": "linux", "architecture": "amd64",
                                            "osImage": "CentOS Linux 7 (Core)",
                                            "kernelVersion": "4.4.184-1.el7.elrepo.x86_64",
                                            "machineID": hashlib.md5(name.encode()).hexdigest(),
                                            "systemUUID": hashlib.md5(name.encode()).hexdigest(),
                                            "bootID": hashlib.md5((name + "boot").encode()).hexdigest()},
                               "volumesAttached": [{"name": v, "devicePath": ""} for v in n["attached"]],
                               "volumesInUse": list(n["in_use"])}}
            self.k.create(P_NODES, node)
            # admission (TaintNodesByCondition) added not-ready:NoSchedule on create; set the real taints
            self.k.merge(f"{P_NODES}/{name}", {"spec": {"taints": taints or None}})
            if self.k.try_get("/api/v1/namespaces/kube-node-lease") is not None:
                self.k.create(P_LEASES, {
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta(name),
                    "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                             "renewTime": micro_ts(n["lost_for"] + 20 if not n["ready"] else 3)}})
            self.out.setdefault("nodes", {})[name] = {
                "ip": ip, "ready": n["ready"], "volumesAttached": n["attached"], "volumesInUse": n["in_use"]}

    # ---- incidents: plan() registers nodes/volumes (before nodes exist), build() creates objects
    def plan(self):
        if "000" in self.incidents:
            self.want_node("node1", ready=False, lost_for=900)
            self.want_node("10.46.181.146")
            self.node_volume("10.46.181.146", f"kubernetes.io/rbd/{POOL}:{IMAGE_000}")
        if "001" in self.incidents:
            self.want_node("worker-22-51", ready=False, lost_for=720)
            self.want_node("worker-22-52")
            self.node_volume("worker-22-51", f"kubernetes.io/csi/{CSI_DRIVER}^{csi_handle(UUID_001, self.pool_id)}")
        if "002" in self.incidents:
            self.want_node("node1", ready=False, lost_for=900)
            self.want_node("10.10.11.22")
            self.node_volume("node1", f"kubernetes.io/csi/{CSI_DRIVER}^{csi_handle(UUID_002, self.pool_id)}")
        if "003" in self.incidents:
            self.want_node("node133")
            self.node_volume("node133", f"kubernetes.io/rbd/{POOL}:{IMAGE_003}")
        if "004" in self.incidents:
            self.want_node("10-10-88-113")
            self.node_volume("10-10-88-113", f"kubernetes.io/csi/{CSI_DRIVER}^{csi_handle(UUID_004, self.pool_id)}")

    def build_000(self):
        ns = "incident-000"
        self.create_image(IMAGE_000)
        self.intree_volume(ns, "index-api-pvc", "index-api-pv", IMAGE_000, "", None)
        rs, labels = self.workload_deployment(ns, "index-api", "3362878852", "registry.local/index-api:v2",
                                              "index-api-pv", "index-api-pvc")
        new = self.create_pod(ns, "index-api-3362878852-pzxm8", "10.46.181.146", labels, rs,
                              "index-api", "registry.local/index-api:v2", "index-api-pv", "index-api-pvc")
        self.pod_status(new, "creating", "10.46.181.146", age_s=600)
        uid = new["metadata"]["uid"]
        kubelet = {"component": "kubelet", "host": "10.46.181.146"}
        evs = [
            self.event(new, "Scheduled", f"Successfully assigned {ns}/index-api-3362878852-pzxm8 to 10.46.181.146",
                       {"component": "default-scheduler"}, etype="Normal", first_ago=600, last_ago=600),
            self.event(new, "FailedMount",
                       'MountVolume.SetUp failed for volume "index-api-pv" : '
                       "rbd: image index-api-image is locked by other nodes",
                       kubelet, count=12, first_ago=590, last_ago=25),
            self.event(new, "FailedMount",
                       f'Unable to mount volumes for pod "index-api-3362878852-pzxm8_{ns}({uid})": '
                       f'timeout expired waiting for volumes to attach/mount for pod '
                       f'"index-api-3362878852-pzxm8"/"{ns}". list of unattached/unmounted volumes=[index-api-pv]',
                       kubelet, count=4, first_ago=480, last_ago=11),
        ]
        # the stale lock: taken "by node1" (127.0.0.1) and left behind
        rbd("lock", "add", f"{POOL}/{IMAGE_000}", "kubelet_lock_magic_node1")
        locks = rbd_json("lock", "ls", f"{POOL}/{IMAGE_000}")
        self.out["locks"].extend({"image": IMAGE_000, **lk} for lk in locks)
        self.out["incidents"]["000"] = {"namespace": ns, "pods": {"new": self.pod_info(new)},
                                        "pvc": "index-api-pvc", "pv": "index-api-pv", "image": IMAGE_000,
                                        "old_node": "node1", "new_node": "10.46.181.146", "locks": locks,
                                        "events": evs}

    def build_001(self):
        ns = "incident-001"
        handle, img, _ = self.csi_volume(ns, "user-pvc", "user-pv", UUID_001)
        self.create_image(img)
        rs, labels = self.workload_deployment(ns, "user-db", "79f7876cbc", "weaveworksdemos/user-db:0.3.0",
                                              "data-volume", "user-pvc")
        old = self.create_pod(ns, "user-db-79f7876cbc-dl8b8", "worker-22-51", labels, rs, "user-db",
                              "weaveworksdemos/user-db:0.3.0", "data-volume", "user-pvc")
        self.pod_status(old, "running", "worker-22-51", age_s=3 * 86400, ready=False)
        new = self.create_pod(ns, "user-db-79f7876cbc-chddt", "worker-22-52", labels, rs, "user-db",
                              "weaveworksdemos/user-db:0.3.0", "data-volume", "user-pvc")
        self.pod_status(new, "creating", "worker-22-52", age_s=420)
        va = self.volume_attachment("user-pv", handle, "worker-22-51")
        uid = new["metadata"]["uid"]
        evs = [
            self.event(new, "FailedAttachVolume",
                       'Multi-Attach error for volume "user-pv" Volume is already used by pod(s) user-db-79f7876cbc-dl8b8',
                       {"component": "attachdetach-controller"}, count=1, first_ago=415, last_ago=415),
            self.event(new, "FailedMount",
                       f'Unable to mount volumes for pod "user-db-79f7876cbc-chddt_{ns}({uid})": timeout expired '
                       f'waiting for volumes to attach or mount for pod "{ns}"/"user-db-79f7876cbc-chddt". '
                       f"list of unmounted volumes=[data-volume]. list of unattached volumes=[data-volume]",
                       {"component": "kubelet", "host": "worker-22-52"}, count=3, first_ago=295, last_ago=40),
        ]
        self.out["incidents"]["001"] = {"namespace": ns, "pods": {"old": self.pod_info(old), "new": self.pod_info(new)},
                                        "pvc": "user-pvc", "pv": "user-pv", "image": img, "volumeHandle": handle,
                                        "volumeAttachment": va, "old_node": "worker-22-51",
                                        "new_node": "worker-22-52", "events": evs}

    def build_002(self):
        ns = "incident-002"
        pv = "pvc-2de7d17c-04c6-11eb-b22b-5254002d96de"
        handle, img, _ = self.csi_volume(ns, "claim1", pv, UUID_002)
        self.create_image(img)
        rs, labels = self.workload_deployment(ns, "sleep", "6f7c8cc954", "busybox:1.32", "pvc1", "claim1")
        old = self.create_pod(ns, "sleep-6f7c8cc954-rcpnc", "node1", labels, rs, "sleep", "busybox:1.32",
                              "pvc1", "claim1")
        self.pod_status(old, "running", "node1", age_s=86400, ready=False)
        self.k.delete(p_core(ns, "pods", "sleep-6f7c8cc954-rcpnc"))  # -> Terminating forever (no kubelet)
        new = self.create_pod(ns, "sleep-6f7c8cc954-pqjj6", "10.10.11.22", labels, rs, "sleep", "busybox:1.32",
                              "pvc1", "claim1")
        self.pod_status(new, "creating", "10.10.11.22", age_s=300)
        va = self.volume_attachment(pv, handle, "node1")
        uid = new["metadata"]["uid"]
        kubelet = {"component": "kubelet", "host": "10.10.11.22"}
        evs = [
            self.event(new, "FailedAttachVolume",
                       f'Multi-Attach error for volume "{pv}" Volume is already exclusively attached to one node '
                       f"and can't be attached to another",
                       {"component": "attachdetach-controller"}, count=1, first_ago=290, last_ago=290),
            self.event(new, "FailedMount",
                       f'MountVolume.WaitForAttach failed for volume "{pv}" : rbd image {POOL}/{img} is still being used',
                       kubelet, count=2, first_ago=112, last_ago=62),
            self.event(new, "FailedMount",
                       f'Unable to mount volumes for pod "sleep-6f7c8cc954-pqjj6_{ns}({uid})": timeout expired '
                       f'waiting for volumes to attach or mount for pod "{ns}"/"sleep-6f7c8cc954-pqjj6". '
                       f"list of unmounted volumes=[pvc1]. list of unattached volumes=[pvc1]",
                       kubelet, count=2, first_ago=160, last_ago=24),
        ]
        holder = start_holder("holder-002", img)
        self.out["holders"].append({**holder, "node": "node1", "incident": "002"})
        if holder["address"] == LEFTOVER_BLOCKLIST:
            raise RuntimeError("holder nonce collides with the leftover blocklist entry; re-run seed")
        ceph("osd", "blocklist", "add", LEFTOVER_BLOCKLIST)
        self.out["blocklist"].append(LEFTOVER_BLOCKLIST)
        self.out["incidents"]["002"] = {"namespace": ns, "pods": {"old": self.pod_info(old), "new": self.pod_info(new)},
                                        "pvc": "claim1", "pv": pv, "image": img, "volumeHandle": handle,
                                        "volumeAttachment": va, "old_node": "node1", "new_node": "10.10.11.22",
                                        "watcher": holder["address"], "leftover_blocklist": LEFTOVER_BLOCKLIST,
                                        "events": evs}

    def build_003(self):
        ns = "incident-003"
        pv = "pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802"
        self.create_image(IMAGE_003)
        unique = self.intree_volume(ns, "mariadb-data", pv, IMAGE_003, "ceph-rbd", "kubernetes.io/rbd")
        rs, labels = self.workload_deployment(ns, "mariadb", "5b8c7d9f6", "mariadb:10.4", "data", "mariadb-data")
        old = self.create_pod(ns, "mariadb-5b8c7d9f6-kx4lq", "node133", labels, rs, "mariadb", "mariadb:10.4",
                              "data", "mariadb-data")
        self.pod_status(old, "running", "node133", age_s=5 * 86400, ready=True)
        self.k.delete(p_core(ns, "pods", "mariadb-5b8c7d9f6-kx4lq"))  # Terminating
        # node_exporter DaemonSet with the host's / mounted WITHOUT mountPropagation (the culprit)
        ds_labels = {"app": "node-exporter"}
        args = ["--path.procfs=/host/proc", "--path.sysfs=/host/sys",
                "--collector.filesystem.ignored-fs-types=^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|"
                "devtmpfs|fusectl|hugetlbfs|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|"
                "squashfs|sysfs|tracefs|tmpfs)$",
                "--collector.filesystem.ignored-mount-points=^/(dev|proc|sys|data/docker/.+|etc/.+|run/secrets)($|/)",
                "--path.rootfs=/host"]
        ds_pod_spec = {"hostNetwork": True, "hostPID": True,
                       "containers": [{"name": "node-exporter", "image": "prom/node-exporter:v0.18.1",
                                       "args": args,
                                       "volumeMounts": [{"name": "proc", "mountPath": "/host/proc", "readOnly": True},
                                                        {"name": "sys", "mountPath": "/host/sys", "readOnly": True},
                                                        {"name": "rootfs", "mountPath": "/host", "readOnly": True}]}],
                       "volumes": [{"name": "proc", "hostPath": {"path": "/proc"}},
                                   {"name": "sys", "hostPath": {"path": "/sys"}},
                                   {"name": "rootfs", "hostPath": {"path": "/"}}]}
        ds = self.k.create(p_apps(ns, "daemonsets"), {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta("node-exporter", ns, ds_labels),
            "spec": {"selector": {"matchLabels": ds_labels},
                     "template": {"metadata": {"labels": ds_labels}, "spec": ds_pod_spec}}})
        self.workload_status(ds, {"currentNumberScheduled": 1, "desiredNumberScheduled": 1, "numberReady": 1,
                                  "numberAvailable": 1, "updatedNumberScheduled": 1, "numberMisscheduled": 0,
                                  "observedGeneration": 1})
        ne = self.k.create(p_core(ns, "pods"), {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": meta("node-exporter-7xq2m", ns, {**ds_labels, "controller-revision-hash": "6d8f4b7c9"},
                             ownerReferences=[self.owner(ds)]),
            "spec": {**ds_pod_spec, "nodeName": "node133"}})
        self.pod_status(ne, "running", "node133", age_s=20 * 86400, ready=True)
        out_bytes = " ".join(str(b) for b in UNMAP_BUSY_OUTPUT.encode())
        assert out_bytes == SEED_003_BYTES, "byte list differs from seed 003"
        evs = [self.event(old, "FailedUnMount",
                          f'UnmountDevice failed for volume "{pv}" (UniqueName: "{unique}") on node "node133" : '
                          f"rbd: failed to unmap device /dev/rbd3, error exit status 16, rbd output: [{out_bytes}]",
                          {"component": "kubelet", "host": "node133"}, count=27, first_ago=1500, last_ago=14)]
        info = {"namespace": ns, "pods": {"old": self.pod_info(old), "node_exporter": self.pod_info(ne)},
                "daemonset": "node-exporter", "pvc": "mariadb-data", "pv": pv, "image": IMAGE_003,
                "node": "node133", "events": evs, "watcher": None}
        if self.local_node == "node133":
            holder = start_holder("holder-003", IMAGE_003)
            self.out["holders"].append({**holder, "node": "node133", "incident": "003"})
            info["watcher"] = holder["address"]
        self.out["incidents"]["003"] = info

    def build_004(self):
        ns = "incident-004"
        node = "10-10-88-113"
        pv = f"pvc-{UUID_004}"
        handle, img, _ = self.csi_volume(ns, "data-web-0", pv, UUID_004)
        self.create_image(img)
        labels = {"app": "web"}
        sts = self.k.create(p_apps(ns, "statefulsets"), {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("web", ns, labels),
            "spec": {"replicas": 1, "serviceName": "web", "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.19",
                                                           "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"],
                                                        "storageClassName": "rook-ceph-block",
                                                        "resources": {"requests": {"storage": "64Mi"}}}}]}})
        self.workload_status(sts, {"observedGeneration": 1, "replicas": 1, "currentReplicas": 1,
                                   "updatedReplicas": 1, "currentRevision": "web-6b8f5c7d9",
                                   "updateRevision": "web-6b8f5c7d9"})
        pod_labels = {**labels, "controller-revision-hash": "web-6b8f5c7d9", "statefulset.kubernetes.io/pod-name": "web-0"}
        new = self.create_pod(ns, "web-0", node, pod_labels, sts, "web", "nginx:1.19", "data", "data-web-0")
        self.pod_status(new, "creating", node, age_s=180)
        va = self.volume_attachment(pv, handle, node)
        kubelet = {"component": "kubelet", "host": node}
        old_uid = "3f1e8d52-9b7a-4c36-8e21-5d0c4a9b7e13"  # the previous web-0 (already gone from the API)
        evs = [
            self.event(new, "Killing", "Stopping container web", kubelet, etype="Normal", first_ago=200,
                       last_ago=200, involved_uid=old_uid),
            self.event(new, "FailedMount",
                       f'MountVolume.MountDevice failed for volume "{pv}" : rpc error: code = Aborted desc = '
                       f"an operation with the given Volume ID {handle} already exists",
                       kubelet, count=6, first_ago=175, last_ago=20),
            self.event(new, "FailedMount",
                       "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: "
                       "timed out waiting for the condition", kubelet, count=1, first_ago=58, last_ago=58),
        ]
        info = {"namespace": ns, "pods": {"new": self.pod_info(new)}, "old_pod_uid": old_uid,
                "statefulset": "web", "pvc": "data-web-0", "pv": pv, "image": img, "volumeHandle": handle,
                "volumeAttachment": va, "node": node, "events": evs, "watcher": None}
        if self.local_node == node:
            holder = start_holder("holder-004", img)
            self.out["holders"].append({**holder, "node": node, "incident": "004"})
            info["watcher"] = holder["address"]
        self.out["incidents"]["004"] = info

    @staticmethod
    def pod_info(pod):
        return {"name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"], "node": pod["spec"].get("nodeName")}

    def storage_classes(self):
        for name, prov, params in (
                ("rook-ceph-block", CSI_DRIVER, {"clusterID": CLUSTER_ID, "pool": POOL, "imageFeatures": "layering",
                                                 "csi.storage.k8s.io/fstype": "ext4"}),
                ("ceph-rbd", "kubernetes.io/rbd", {"monitors": MON_ADDR, "pool": POOL, "adminId": "admin",
                                                   "userId": "admin", "imageFeatures": "layering"})):
            self.k.create(P_SCS, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                  "metadata": meta(name), "provisioner": prov, "parameters": params,
                                  "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})

    def run(self):
        t0 = time.time()
        for ns in NAMESPACES:
            cur = self.k.try_get(f"/api/v1/namespaces/{ns}")
            if cur is None:
                self.k.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(ns)})
            elif cur.get("metadata", {}).get("deletionTimestamp"):
                raise RuntimeError(f"namespace {ns} is Terminating (1.20 has no namespace controller here); "
                                   "it cannot be reused: remove it from etcd or recreate the harness state")
        self.plan()
        self.create_nodes()
        self.storage_classes()
        for inc in self.incidents:
            log(f"incident {inc}")
            getattr(self, f"build_{inc}")()
        path = os.path.join(STATE, "seed.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.out, f, indent=2, sort_keys=True)
        os.replace(path + ".tmp", path)
        log(f"seeded '{self.which}' in {time.time() - t0:.1f} s; state in {path}")


def reset_kube(k):
    ns_kinds = [("pods", p_core, 0), ("events", p_core, None), ("persistentvolumeclaims", p_core, None),
                ("replicasets", p_apps, None), ("deployments", p_apps, None), ("statefulsets", p_apps, None),
                ("daemonsets", p_apps, None)]
    sel = f"?labelSelector={SEEDED}%3Dtrue"
    cluster_kinds = [P_VAS, P_PVS, P_NODES, P_SCS]
    # NetworkFences a test (or the console) made, and their classes, when the CRDs are installed:
    # every one, labelled or not (the fences' blocklist entries go with reset_ceph)
    all_kinds = [p for p in (P_NETWORK_FENCES, P_NETWORK_FENCE_CLASSES) if k.try_get(p) is not None]
    if k.try_get("/api/v1/namespaces/kube-node-lease") is not None:
        cluster_kinds.append(P_LEASES)
    namespaces = [ns for ns in NAMESPACES if k.try_get(f"/api/v1/namespaces/{ns}") is not None]
    # the console's volume Leases (`unstick-<pv>`, remedy.lease_namespace): a test that failed
    # half-way leaves another operator's Lease behind, which the next test's runner must not meet
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    for obj in (k.try_get(leases) or {}).get("items", []):
        if obj["metadata"]["name"].startswith("unstick-"):
            strip_and_delete(k, f"{leases}/{obj['metadata']['name']}", obj)
    deadline = time.time() + 30
    while True:
        left = []
        for ns in namespaces:
            for res, pfn, grace in ns_kinds:
                for obj in k.get(pfn(ns, res)).get("items", []):
                    left.append(f"{ns}/{res}/{obj['metadata']['name']}")
                    strip_and_delete(k, pfn(ns, res, obj["metadata"]["name"]), obj, grace)
        for base in cluster_kinds:
            for obj in k.get(base + sel).get("items", []):
                left.append(f"{base}/{obj['metadata']['name']}")
                strip_and_delete(k, f"{base}/{obj['metadata']['name']}", obj)
        for base in all_kinds:
            for obj in k.get(base).get("items", []):
                left.append(f"{base}/{obj['metadata']['name']}")
                strip_and_delete(k, f"{base}/{obj['metadata']['name']}", obj)
        if not left:  # a pass that found nothing: all gone
            return
        if time.time() > deadline:
            raise RuntimeError(f"objects still present after reset: {left[:10]}")
        time.sleep(0.2)


def reset_ceph():
    blocklist_clear()  # first: a stray no-nonce/range entry for 127.0.0.1 would block our own rbd calls
    present = set(rbd_json("ls", POOL) or [])
    for img in ALL_IMAGES:
        if img not in present:
            continue
        spec = f"{POOL}/{img}"
        for lk in rbd_json("lock", "ls", spec) or []:
            rbd("lock", "rm", spec, lk["id"], lk["locker"], check=False)  # (blocklists the locker; cleared below)
        for snap in rbd_json("snap", "ls", spec) or []:
            if str(snap.get("protected")) == "true":
                rbd("snap", "unprotect", f"{spec}@{snap['name']}", check=False)
        rbd("snap", "purge", "--no-progress", spec, check=False)
        r = rbd("rm", "--no-progress", spec, check=False)
        if r.returncode == 16:  # still watched (e.g. a SIGKILLed holder or a test's client): fence it exactly
            for w in rbd_json("status", spec).get("watchers", []):
                log(f"{img}: blocklisting leftover watcher {w['address']}")
                ceph("osd", "blocklist", "add", w["address"], "60")
            r = rbd("rm", "--no-progress", spec, check=False)
        if r.returncode != 0:
            raise RuntimeError(f"rbd rm {spec} failed rc={r.returncode}: {r.stderr.strip()}")
    blocklist_clear()


def reset(k):
    t0 = time.time()
    stop_holders()
    reset_kube(k)
    reset_ceph()
    for f in ("seed.json",):
        try:
            os.unlink(os.path.join(STATE, f))
        except FileNotFoundError:
            pass
    log(f"reset done in {time.time() - t0:.1f} s")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("seed", "reset"):
        sys.exit(__doc__)
    k = Kube()
    if sys.argv[1] == "reset":
        reset(k)
        return
    which = sys.argv[2] if len(sys.argv) > 2 else "default"
    if which not in ("default", "000", "001", "002", "003", "004"):
        sys.exit(f"unknown seed {which!r}")
    reset(k)
    Seeder(k, which).run()


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, ApiError, AssertionError) as e:
        log(f"ERROR: {e}")
        sys.exit(1)
