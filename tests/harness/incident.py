#!/usr/bin/python3
"""Live incidents: made by the real controllers, scheduler and the node agents (SEED.md "Live incidents").

usage: /usr/bin/python3 incident.py reset | wait-nodes | incident NAME | marker NAME
       /usr/bin/python3 incident.py medik8s install | remediate NODE | remove

Called by `tests/harness/cluster incident NAME` after the control plane and the agents are up.
Each incident creates an RBD image with a marker written through librbd, a PV/PVC and a workload,
waits until it runs on a node, then does to that node what happened in the real incident and waits
until the controllers have produced the symptom. $UNSTICK_HARNESS_DIR/live.json then describes the
incident (names, nodes, uids, image, marker, measured seconds).
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_lib as H  # noqa: E402
import medik8s  # noqa: E402

LIVE_NODES = ["worker-1", "worker-2", "worker-3"]
LIVE = "unstick.test/live"
CSI_NS = "live-csi"  # the ceph-csi node plugin DaemonSet (wait_nodes)
CLIENT_POD_NODE = "worker-3"  # the node whose storage address is its plugin pod's IP (agent.py)
HOST_IP = H.LOCAL_IP
LIVE_JSON = os.path.join(H.STATE, "live.json")
SLOW_UNSTAGE = 40  # 004: seconds the old pod's NodeUnstage takes
UUIDS = {"001": "0c0ffee0-0001-4000-8000-000000000001", "002": "0c0ffee0-0002-4000-8000-000000000002",
         "004": "0c0ffee0-0004-4000-8000-000000000004", "va-finalizer-stuck": "0c0ffee0-00a5-4000-8000-0000000000a5",
         "000-csi": "0c0ffee0-0000-4000-8000-000000000000",
         "003-csi": "0c0ffee0-0003-4000-8000-000000000003",
         "blocklist-leftover": "0c0ffee0-00b1-4000-8000-0000000000b1",
         "rwo-claim-shared": "0c0ffee0-00c1-4000-8000-0000000000c1",
         "ceph-unreachable": "0c0ffee0-00c2-4000-8000-0000000000c2",
         "ceph-auth-failed": "0c0ffee0-00c3-4000-8000-0000000000c3"}
# ceph-unreachable: a neighbour entry for the host's Ceph address pointing at a MAC nobody has, in
# one node's namespace: every packet from that node to the monitors and OSDs is lost on the bridge
# (SYNs time out, as behind a firewall's DROP), while its kubelet (the agent, in the host's
# namespace) still talks to the API server.
NOWHERE_MAC = "02:00:5e:00:53:01"
KINDS = [("pods", H.p_core, 0), ("events", H.p_core, None), ("persistentvolumeclaims", H.p_core, None),
         ("deployments", H.p_apps, None), ("replicasets", H.p_apps, None), ("statefulsets", H.p_apps, None),
         ("daemonsets", H.p_apps, None), ("controllerrevisions", H.p_apps, None)]


def log(msg):
    print(f"[incident {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def wait(what, secs, fn, poll=0.5):
    deadline = time.monotonic() + secs
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {secs} s waiting for {what}")
        time.sleep(poll)


def live_namespaces(k):
    return [n["metadata"]["name"] for n in k.get("/api/v1/namespaces")["items"]
            if n["metadata"]["name"].startswith("live-") or n["metadata"]["name"] == ROOK_NS]


# ---------------------------------------------------------------------------- reset
def reset(k):
    """Everything a live incident made (controllers and agents must be stopped)."""
    t0 = time.time()
    for _ in range(60):
        left = []
        for ns in live_namespaces(k):
            for res, pfn, grace in KINDS:
                for o in k.get(pfn(ns, res))["items"]:
                    left.append(f"{ns}/{res}/{o['metadata']['name']}")
                    H.strip_and_delete(k, pfn(ns, res, o["metadata"]["name"]), o, grace)
        for o in k.get(H.P_VAS)["items"]:
            if o["spec"].get("attacher") == H.CSI_DRIVER:
                left.append(f"va/{o['metadata']['name']}")
                H.strip_and_delete(k, f"{H.P_VAS}/{o['metadata']['name']}", o)
        for o in k.get(f"{H.P_PVS}?labelSelector={LIVE}%3Dtrue")["items"]:
            left.append(f"pv/{o['metadata']['name']}")
            H.strip_and_delete(k, f"{H.P_PVS}/{o['metadata']['name']}", o)
        for n in LIVE_NODES:
            if k.try_get(f"{H.P_NODES}/{n}") is not None:
                left.append(f"node/{n}")
                k.delete(f"{H.P_NODES}/{n}")
            if k.try_get("/api/v1/namespaces/kube-node-lease") and k.try_get(f"{H.P_LEASES}/{n}") is not None:
                k.delete(f"{H.P_LEASES}/{n}")
        if not left:
            break
        time.sleep(0.3)
    else:
        raise RuntimeError(f"live objects still present: {left[:10]}")
    H.blocklist_clear()
    for img in H.rbd_json("ls", H.POOL) or []:
        if not img.startswith("live-"):
            continue
        spec = f"{H.POOL}/{img}"
        for lk in H.rbd_json("lock", "ls", spec) or []:
            H.rbd("lock", "rm", spec, lk["id"], lk["locker"], check=False)
        for snap in H.rbd_json("snap", "ls", spec) or []:
            if str(snap.get("protected")) == "true":
                H.rbd("snap", "unprotect", f"{spec}@{snap['name']}", check=False)
        H.rbd("snap", "purge", "--no-progress", spec, check=False)
        if H.rbd("rm", "--no-progress", spec, check=False).returncode == 16:
            for w in H.rbd_json("status", spec).get("watchers", []):
                H.ceph("osd", "blocklist", "add", w["address"], "60")
            H.rbd("rm", "--no-progress", spec)
    H.blocklist_clear()
    medik8s.remove(k)
    with open("/proc/self/mountinfo") as f:  # the agents' tmpfs "filesystems" (mnt-NODE/...)
        mnts = [line.split()[4] for line in f if line.split()[4].startswith(os.path.join(H.RUN, "mnt-"))]
    for m in sorted(mnts, reverse=True):
        H.run(["umount", "-l", m], check=False)
    for fn in os.listdir(H.RUN):
        p = os.path.join(H.RUN, fn)
        if (fn.startswith("mounts-") or fn.startswith("mnt-")) and os.path.isdir(p):
            for f in os.listdir(p):
                q = os.path.join(p, f)
                os.rmdir(q) if os.path.isdir(q) else os.unlink(q)
        elif fn.startswith("agent-") and fn.endswith((".bootid", ".die-before-unlock", ".slow-unstage")):
            os.unlink(p)
        elif fn == "attacher.paused":
            os.unlink(p)
        elif fn.startswith("firewall-"):  # ceph-unreachable: the node's path to Ceph comes back
            H.run(["ip", "-n", open(p).read().strip(), "neigh", "del", HOST_IP, "dev", "eth0"], check=False)
            os.unlink(p)
        elif fn.startswith("agent-") and fn.endswith(".keyring"):  # ceph-auth-failed
            os.unlink(p)
    if os.path.exists(LIVE_JSON):
        os.unlink(LIVE_JSON)
    log(f"live reset done in {time.time() - t0:.1f} s")


def node_ready(k, name):
    n = k.try_get(f"{H.P_NODES}/{name}")
    if not n:
        return False
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions") or [])
    return ready and not n["spec"].get("taints")


def wait_nodes(k):
    t0 = time.time()
    for n in LIVE_NODES:
        wait(f"node {n} Ready and untainted", 120, lambda n=n: node_ready(k, n))
    log(f"nodes {', '.join(LIVE_NODES)} Ready in {time.time() - t0:.1f} s")
    plugin = client_pod(k)
    log(f"ceph-csi node plugin {plugin['metadata']['name']} on {CLIENT_POD_NODE} at {plugin['status']['podIP']} "
        f"after {time.time() - t0:.1f} s")


def storage_of(node):
    """(storage address, how it is tied: "annotation" | "client-pod") of a live node (its agent's)."""
    ip, tie = open(os.path.join(H.RUN, f"agent-{node}.storage")).read().split()
    return ip, tie


def client_pod(k):
    """The ceph-csi node plugin DaemonSet (pod networking) on CLIENT_POD_NODE, whose pod's IP is
    that node's storage address (agent.py `--storage-tie client-pod`): made, and waited for until
    its pod runs with that IP."""
    ensure_ns(k, CSI_NS)
    if k.try_get(H.p_apps(CSI_NS, "daemonsets", "csi-rbdplugin")) is None:
        labels = {"app": "csi-rbdplugin"}
        k.create(H.p_apps(CSI_NS, "daemonsets"), {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "csi-rbdplugin", "namespace": CSI_NS},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"nodeSelector": {"kubernetes.io/hostname": CLIENT_POD_NODE},
                                           "containers": [{"name": "csi-rbdplugin",
                                                           "image": "quay.io/cephcsi/cephcsi:v3.9.0"}]}}}})
    ip, _ = storage_of(CLIENT_POD_NODE)

    def running():
        for p in pods(k, CSI_NS, "csi-rbdplugin"):
            if p["status"].get("podIP") == ip and not p["metadata"].get("deletionTimestamp"):
                return p
        return None
    return wait(f"the ceph-csi node plugin pod on {CLIENT_POD_NODE} running at {ip}", 60, running)


# ---------------------------------------------------------------------------- node actions
def _kill_if(pidfile, sig, must):
    try:
        pid = int(open(pidfile).read().strip())
        cl = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
    except (OSError, ValueError):
        return
    if must in cl and H.SYSPY in cl:
        os.kill(pid, sig)
        log(f"{os.path.basename(pidfile)[:-4]} (pid {pid}): signal {sig}")


def power_off(node):
    """The node loses power: its agent and every Ceph client of it die at once."""
    _kill_if(os.path.join(H.RUN, f"agent-{node}.pid"), signal.SIGKILL, f"--run {H.RUN}")
    mdir = os.path.join(H.RUN, f"mounts-{node}")
    for f in os.listdir(mdir) if os.path.isdir(mdir) else []:
        if f.endswith(".pid"):
            _kill_if(os.path.join(mdir, f), signal.SIGKILL, f"--pidfile {H.RUN}/")


def agent_argv(node):
    """The running agent's command line (to start it again the same way)."""
    pid = int(open(os.path.join(H.RUN, f"agent-{node}.pid")).read().strip())
    return open(f"/proc/{pid}/cmdline", "rb").read().rstrip(b"\0").decode().split("\0")


def boot(node, argv):
    """The node boots again: a new boot id, its agent started as `cluster` starts it."""
    bf = os.path.join(H.RUN, f"agent-{node}.bootid")
    if os.path.exists(bf):
        os.unlink(bf)
    with open(os.path.join(H.RUN, f"agent-{node}.log"), "a") as logf:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True,
                             close_fds=True)
    with open(os.path.join(H.RUN, f"agent-{node}.pid"), "w") as f:
        f.write(f"{p.pid}\n")
    log(f"agent-{node} booted again (pid {p.pid})")


def stop_kubelet(node):
    """kubelet stops (SIGTERM): the node's mappings (watchers) stay."""
    _kill_if(os.path.join(H.RUN, f"agent-{node}.pid"), signal.SIGTERM, f"--run {H.RUN}")


# ---------------------------------------------------------------------------- objects
def ensure_ns(k, ns):
    if k.try_get(f"/api/v1/namespaces/{ns}") is None:
        k.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def make_image(name, marker, features="layering"):
    import rados
    import rbd
    H.rbd("create", f"{H.POOL}/{name}", "--size", "64", "--image-feature", features)
    c = rados.Rados(conffile=H.CEPH_CONF, conf={"client_mount_timeout": "5", "rados_osd_op_timeout": "10"})
    c.connect(timeout=10)
    try:
        io = c.open_ioctx(H.POOL)
        with rbd.Image(io, name) as img:
            img.write(marker.encode(), 0)
            img.flush()
        io.close()
    finally:
        c.shutdown()


def read_marker(name, n):
    import rados
    import rbd
    c = rados.Rados(conffile=H.CEPH_CONF, conf={"client_mount_timeout": "5", "rados_osd_op_timeout": "10"})
    c.connect(timeout=10)
    try:
        io = c.open_ioctx(H.POOL)
        with rbd.Image(io, name, read_only=True) as img:
            data = img.read(0, n)
        io.close()
    finally:
        c.shutdown()
    return data.decode(errors="replace")


def pv_pvc(k, ns, pv, pvc, source):
    k.create(H.P_PVS, {"apiVersion": "v1", "kind": "PersistentVolume",
                       "metadata": {"name": pv, "labels": {LIVE: "true", H.SEEDED: "true"}},
                       "spec": {"capacity": {"storage": "64Mi"}, "accessModes": ["ReadWriteOnce"],
                                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                                "volumeMode": "Filesystem", "claimRef": {"namespace": ns, "name": pvc}, **source}})
    k.create(H.p_core(ns, "persistentvolumeclaims"), {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": pvc, "namespace": ns},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": pv,
                 "resources": {"requests": {"storage": "64Mi"}}}})


def csi_source(uuid, pool_id):
    return {"csi": {"driver": H.CSI_DRIVER, "fsType": "ext4", "volumeHandle": H.csi_handle(uuid, pool_id),
                    "volumeAttributes": {"clusterID": H.CLUSTER_ID, "pool": H.POOL, "imageName": f"live-csi-vol-{uuid}",
                                         "imageFeatures": "layering"}}}


def deployment(k, ns, name, image, claim, volname):
    k.create(H.p_apps(ns, "deployments"), {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"terminationGracePeriodSeconds": 30,
                                       "containers": [{"name": name, "image": image,
                                                       "volumeMounts": [{"name": volname, "mountPath": "/data"}]}],
                                       "volumes": [{"name": volname, "persistentVolumeClaim": {"claimName": claim}}]}}}})


def pods(k, ns, app):
    return k.get(H.p_core(ns, "pods") + f"?labelSelector=app%3D{app}")["items"]


def running_pod(k, ns, app):
    for p in pods(k, ns, app):
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp") \
                and all(c.get("ready") for c in p["status"].get("containerStatuses") or [{}]):
            return p
    return None


def events_of(k, ns, pod):
    uid = pod["metadata"]["uid"]
    return [e for e in k.get(H.p_core(ns, "events"))["items"] if e["involvedObject"].get("uid") == uid]


# The attach-detach controller's FailedAttachVolume for an RWO volume attached elsewhere: "Multi-Attach
# error for volume ..." up to 1.36, "Waiting for detach for volume ..." from 1.37 (kubernetes
# pkg/controller/volume/attachdetach/reconciler/reconciler.go reportMultiAttachError, after
# kubernetes/kubernetes#138836 "Multi-attach events unnecessarily scary").
MULTI_ATTACH = ("Multi-Attach error", "Waiting for detach")


def new_pod_with_event(k, ns, app, old_uid, reason, needles):
    for p in pods(k, ns, app):
        if p["metadata"]["uid"] != old_uid and not p["metadata"].get("deletionTimestamp"):
            if any(e["reason"] == reason and any(n in e["message"] for n in needles) for e in events_of(k, ns, p)):
                return p
    return None


# ---------------------------------------------------------------------------- incidents
def start_workload(k, inc, ns, app, image, pv, pvc, volname, source, img_name, make=None, features="layering"):
    """The image (with `features`) with its marker, PV + PVC and the workload (`make(k)`, default a
    Deployment), up to its pod Running and its node reporting the volume in use."""
    t0 = time.monotonic()
    ensure_ns(k, ns)
    marker = f"unstick-marker-{inc}-{int(time.time())}"
    make_image(img_name, marker, features)
    pv_pvc(k, ns, pv, pvc, source)
    # $UNSTICK_INCIDENT_NODE: the workload starts on that node (the others are cordoned until then)
    pin = os.environ.get("UNSTICK_INCIDENT_NODE")
    if pin and pin not in LIVE_NODES:
        raise RuntimeError(f"UNSTICK_INCIDENT_NODE={pin} is none of {LIVE_NODES}")
    others = [n for n in LIVE_NODES if pin and n != pin]
    for n in others:
        k.merge(f"{H.P_NODES}/{n}", {"spec": {"unschedulable": True}})
    (make or (lambda k: deployment(k, ns, app, image, pvc, volname)))(k)
    old = wait(f"{app} Running", 120, lambda: running_pod(k, ns, app))
    for n in others:
        k.merge(f"{H.P_NODES}/{n}", {"spec": {"unschedulable": None}})
    node = old["spec"]["nodeName"]
    wait(f"{node} reporting the volume in use", 30, lambda: k.get(f"{H.P_NODES}/{node}")["status"].get("volumesInUse"))
    out = {"incident": inc, "namespace": ns, "app": app, "pv": pv, "pvc": pvc, "image": img_name, "marker": marker,
           "old_pod": old["metadata"]["name"], "old_uid": old["metadata"]["uid"], "old_node": old["spec"]["nodeName"],
           "old_node_ip": old["status"].get("hostIP"), "seconds": {"running": round(time.monotonic() - t0, 1)}}
    out["old_node_storage_ip"], out["old_node_tie"] = storage_of(node)
    log(f"{ns}/{out['old_pod']} Running on {out['old_node']} after {out['seconds']['running']} s")
    return out


def multi_attach(k, inc, action):
    """001 (power off) / 002 (kubelet stopped, watcher stays): a CSI Deployment loses its node."""
    pid = H.pool_id()
    uuid = UUIDS[inc]
    app, ns = ("user-db", "live-001") if inc == "001" else ("sleep", "live-002")
    out = start_workload(k, inc, ns, app, "weaveworksdemos/user-db:0.3.0" if inc == "001" else "busybox:1.32",
                         f"live-pv-{inc}", f"live-pvc-{inc}", "data-volume", csi_source(uuid, pid), f"live-csi-vol-{uuid}")
    out["va"] = H.va_name(H.csi_handle(uuid, pid), out["old_node"])
    out["volume_handle"] = H.csi_handle(uuid, pid)
    t0 = time.monotonic()
    (power_off if action == "poweroff" else stop_kubelet)(out["old_node"])
    new = wait("the replacement pod's Multi-Attach event", 180,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedAttachVolume", MULTI_ATTACH))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=new["spec"]["nodeName"])
    out["seconds"]["multi_attach"] = round(time.monotonic() - t0, 1)
    if action == "poweroff":  # the dead client's watch times out (osd_client_watch_timeout, 30 s)
        wait("the powered-off node's watcher to time out", 90,
             lambda: not H.rbd_json("status", f"{H.POOL}/{out['image']}").get("watchers"), poll=1)
        out["seconds"]["watch_timeout"] = round(time.monotonic() - t0, 1)
    return out


def stale_lock(k):
    """000: an in-tree RBD Deployment is drained off its node, whose kubelet dies after the unmap and
    before the unlock (the in-tree plugin's kubelet_lock_magic_<node> stays)."""
    ns, app, img = "live-000", "index-api", "live-index-api-image"
    out = start_workload(k, "000", ns, app, "registry.local/index-api:v2", "live-index-api-pv", "index-api-pvc",
                         "index-api-pv", rbd_intree(img), img)
    node = out["old_node"]
    t0 = time.monotonic()
    open(os.path.join(H.RUN, f"agent-{node}.die-before-unlock"), "w").close()
    k.merge(f"{H.P_NODES}/{node}", {"spec": {"unschedulable": True}})  # kubectl drain: cordon, then evict
    k.delete(H.p_core(ns, "pods", out["old_pod"]))
    new = wait("the replacement pod's 'locked by other nodes' event", 180,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedMount", "is locked by other nodes"))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=new["spec"]["nodeName"])
    out["seconds"]["locked"] = round(time.monotonic() - t0, 1)
    return out


def stale_lock_csi(k):
    """000-csi: 000's lock left by a dead node, as it is on ceph-csi. ceph-csi takes no advisory lock;
    the image's only lock is exclusive-lock's, which the node's client took at its first write (the
    image has the feature, as Rook's current StorageClass gives it). The node loses power holding it:
    the replacement gets the attach-detach controller's Multi-Attach, the dead client's watch times
    out, its `auto` lock stays in `rbd lock ls` until the next writer breaks it."""
    ns, app, inc, feats = "live-000-csi", "index-api", "000-csi", "layering,exclusive-lock"
    src = csi_source(UUIDS[inc], H.pool_id())
    src["csi"]["volumeAttributes"]["imageFeatures"] = feats
    out = start_workload(k, inc, ns, app, "registry.local/index-api:v2", f"live-pv-{inc}", f"live-pvc-{inc}",
                         "index-api-pv", src, f"live-csi-vol-{UUIDS[inc]}", features=feats)
    out["volume_handle"] = src["csi"]["volumeHandle"]
    out["va"] = H.va_name(out["volume_handle"], out["old_node"])
    spec = f"{H.POOL}/{out['image']}"
    lock = wait("the node's exclusive lock", 30, lambda: (H.rbd_json("lock", "ls", spec) or [None])[0])
    if not lock["id"].startswith("auto ") or not lock["address"].startswith(out["old_node_storage_ip"] + ":"):
        raise RuntimeError(f"not the node's exclusive lock: {lock}")
    out["lock"] = lock
    t0 = time.monotonic()
    power_off(out["old_node"])
    new = wait("the replacement pod's Multi-Attach event", 180,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedAttachVolume", MULTI_ATTACH))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=new["spec"]["nodeName"])
    out["seconds"]["multi_attach"] = round(time.monotonic() - t0, 1)
    wait("the powered-off node's watcher to time out", 90,
         lambda: not H.rbd_json("status", spec).get("watchers"), poll=1)
    out["seconds"]["watch_timeout"] = round(time.monotonic() - t0, 1)
    if H.rbd_json("lock", "ls", spec) != [lock]:
        raise RuntimeError(f"the dead node's lock changed: {H.rbd_json('lock', 'ls', spec)}")
    return out


def rbd_intree(img):
    return {"rbd": {"monitors": [H.MON_ADDR], "pool": H.POOL, "image": img, "user": "admin",
                    "keyring": "/etc/ceph/keyring", "fsType": "ext4", "readOnly": False}}


NODE_EXPORTER = ("node-exporter", "prom/node-exporter:v0.18.1",
                 ["--path.procfs=/host/proc", "--path.sysfs=/host/sys", "--path.rootfs=/host"], {})
# 003-csi: a host scanner reading files under the host root (agent.py HOLDS_FILES: its container keeps
# the node's volume mounts it found at start open)
SCANNER = ("host-scanner", "clamav/clamav:1.4", ["clamscan", "--recursive", "/host"],
           {"unstick.test/holds-files": "true"})


def node_exporter(k, ns, what=NODE_EXPORTER):
    """A DaemonSet with the host root at /host and no mountPropagation: prometheus node_exporter as
    deployed in seed 003 (default), or `SCANNER`."""
    name, image, args, ann = what
    ensure_ns(k, ns)
    k.create(H.p_apps(ns, "daemonsets"), {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}, "annotations": ann},
                              "spec": {"hostNetwork": True, "hostPID": True, "terminationGracePeriodSeconds": 1,
                                       "containers": [{"name": name, "image": image, "args": args,
                                                       "volumeMounts": [{"name": "rootfs", "mountPath": "/host",
                                                                         "readOnly": True}]}],
                                       "volumes": [{"name": "rootfs", "hostPath": {"path": "/"}}]}}}})


def ds_running_on(k, ns, node, app="node-exporter"):
    return [p for p in pods(k, ns, app) if p["spec"].get("nodeName") == node
            and p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


def unmap_busy_csi(k):
    """003-csi: 003 on a ceph-csi volume. A host scanner DaemonSet (host root at /host, no
    mountPropagation) starts after the volume is mounted on the node and keeps files of it open; the
    volume's pod is drained off the node. ceph-csi's NodeUnstage unmounts and removes the staging
    path (which detaches the scanner's copy of the mount) and its `rbd unmap` fails with exit status
    16, as the open files keep the filesystem. kubelet deletes the pod anyway (NodeUnpublish is done),
    logs the failed UnmountDevice without an event, and keeps the volume in volumesInUse: the
    attach-detach controller does not detach from the Ready node, and the replacement pod elsewhere
    waits for the detach (Multi-Attach)."""
    ns, app, mon = "live-003-csi", "mariadb", "live-monitoring"
    out = csi_workload(k, "003-csi", ns, app, "mariadb:10.4")
    node = out["old_node"]
    t0 = time.monotonic()
    node_exporter(k, mon, SCANNER)
    for n in LIVE_NODES:
        wait(f"{SCANNER[0]} Running on {n}", 60, lambda n=n: ds_running_on(k, mon, n, SCANNER[0]))
    out["daemonset"] = {"namespace": mon, "name": SCANNER[0],
                        "pod": ds_running_on(k, mon, node, SCANNER[0])[0]["metadata"]["name"]}
    k.merge(f"{H.P_NODES}/{node}", {"spec": {"unschedulable": True}})  # kubectl drain: cordon, then evict
    k.delete(H.p_core(ns, "pods", out["old_pod"]))
    wait("the old pod gone", 60, lambda: k.try_get(H.p_core(ns, "pods", out["old_pod"])) is None)
    new = wait("the replacement pod's Multi-Attach event", 120,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedAttachVolume", MULTI_ATTACH))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=new["spec"]["nodeName"])
    in_use = k.get(f"{H.P_NODES}/{node}")["status"].get("volumesInUse") or []
    if not any(out["volume_handle"] in v for v in in_use):
        raise RuntimeError(f"{node} no longer has the volume in use: {in_use}")
    logf = os.path.join(H.RUN, f"agent-{node}.log")
    if "attacher.UnmountDevice failed" not in open(logf).read():
        raise RuntimeError(f"no failed UnmountDevice in {logf}")
    out["seconds"]["multi_attach"] = round(time.monotonic() - t0, 1)
    return out


def unmap_busy(k):
    """003: a node_exporter DaemonSet (host root without mountPropagation) starts after an in-tree
    RBD volume is mounted on the node; the volume's pod is then drained off the node: the unmap
    fails with exit status 16 because the container's mount namespace still has the filesystem."""
    ns, app, img, mon = "live-003", "mariadb", "live-mariadb-image", "live-monitoring"
    out = start_workload(k, "003", ns, app, "mariadb:10.4", "live-mariadb-pv", "mariadb-data", "data",
                         rbd_intree(img), img)
    node = out["old_node"]
    t0 = time.monotonic()
    node_exporter(k, mon)
    for n in LIVE_NODES:
        wait(f"node-exporter Running on {n}", 60, lambda n=n: ds_running_on(k, mon, n))
    out["daemonset"] = {"namespace": mon, "name": "node-exporter", "pod": ds_running_on(k, mon, node)[0]["metadata"]["name"]}
    k.merge(f"{H.P_NODES}/{node}", {"spec": {"unschedulable": True}})  # kubectl drain: cordon, then evict
    k.delete(H.p_core(ns, "pods", out["old_pod"]))

    def busy():
        p = k.try_get(H.p_core(ns, "pods", out["old_pod"]))
        return p and sum(e.get("count", 1) for e in events_of(k, ns, p)
                         if e["reason"] == "FailedUnMount" and "exit status 16" in e["message"]) >= 3
    wait("three failed unmaps (exit status 16)", 120, busy)
    out["seconds"]["unmap_busy"] = round(time.monotonic() - t0, 1)
    new = [p for p in pods(k, ns, app) if p["metadata"]["uid"] != out["old_uid"]]
    if new:
        out.update(new_pod=new[0]["metadata"]["name"], new_node=new[0]["spec"].get("nodeName"))
    return out


def statefulset(k, ns, name, node, image):
    k.create(H.p_apps(ns, "statefulsets"), {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": ns},
        "spec": {"serviceName": name, "replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"terminationGracePeriodSeconds": 30, "nodeSelector": {"kubernetes.io/hostname": node},
                                       "containers": [{"name": name, "image": image,
                                                       "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                                                    "resources": {"requests": {"storage": "64Mi"}}}}]}})


def restage(k):
    """004: a StatefulSet pod (pinned to its node) is deleted while the node's unstage of its CSI
    volume is slow; the controller recreates web-0 on the same node at once, and its NodeStage runs
    into the unstage still in progress."""
    ns, app, uuid, node = "live-004", "web", UUIDS["004"], LIVE_NODES[1]
    pid = H.pool_id()
    out = start_workload(k, "004", ns, app, "nginx:1.19", "live-pv-004", "data-web-0", "data", csi_source(uuid, pid),
                         f"live-csi-vol-{uuid}", make=lambda k: statefulset(k, ns, app, node, "nginx:1.19"))
    out["va"] = H.va_name(H.csi_handle(uuid, pid), node)
    out["volume_handle"] = H.csi_handle(uuid, pid)
    t0 = time.monotonic()
    with open(os.path.join(H.RUN, f"agent-{node}.slow-unstage"), "w") as f:
        f.write(f"{SLOW_UNSTAGE}\n")
    k.delete(H.p_core(ns, "pods", out["old_pod"]))
    new = wait("the recreated pod's 'operation ... already exists'", 60,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedMount", "already exists"))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=new["spec"]["nodeName"])
    out["seconds"]["restage"] = round(time.monotonic() - t0, 1)
    out["slow_unstage_seconds"] = SLOW_UNSTAGE
    return out


def csi_workload(k, inc, ns, app, image):
    pid = H.pool_id()
    uuid = UUIDS[inc]
    out = start_workload(k, inc, ns, app, image, f"live-pv-{inc}", f"live-pvc-{inc}", "data", csi_source(uuid, pid),
                         f"live-csi-vol-{uuid}")
    out["volume_handle"] = H.csi_handle(uuid, pid)
    out["va"] = H.va_name(out["volume_handle"], out["old_node"])
    return out


def va_finalizer_stuck(k):
    """va-finalizer-stuck: a node is drained and removed from the cluster (autoscaler scale-down)
    while the CSI attacher is down (its pod was evicted with the drain); the attach-detach
    controller deletes the VolumeAttachment, and the attacher, back, cannot detach from a node
    that no longer exists (its CSINode is gone): the finalizer stays, the replacement pod gets
    Multi-Attach."""
    ns, app = "live-va", "reports"
    out = csi_workload(k, "va-finalizer-stuck", ns, app, "registry.local/reports:v7")
    node = out["old_node"]
    t0 = time.monotonic()
    open(os.path.join(H.RUN, "attacher.paused"), "w").close()
    k.merge(f"{H.P_NODES}/{node}", {"spec": {"unschedulable": True}})
    k.delete(H.p_core(ns, "pods", out["old_pod"]))
    wait("the VolumeAttachment being deleted", 120,
         lambda: (k.try_get(f"{H.P_VAS}/{out['va']}") or {}).get("metadata", {}).get("deletionTimestamp"))
    # the drain ends once kubelet has unmounted and unmapped (volumesInUse empty); 1.20 deletes the
    # VolumeAttachment only then, 1.37 already while the unmap runs (seen 27 Nov 2026)
    wait(f"{node}'s unmount (volumesInUse empty)", 60,
         lambda: not k.get(f"{H.P_NODES}/{node}")["status"].get("volumesInUse"))
    stop_kubelet(node)  # the machine is deleted
    apid = open(os.path.join(H.RUN, f"agent-{node}.pid")).read().strip()
    wait(f"agent-{node} gone", 15, lambda: not os.path.exists(f"/proc/{apid}"))
    k.delete(f"{H.P_NODES}/{node}")
    os.unlink(os.path.join(H.RUN, "attacher.paused"))  # the attacher's new pod runs

    def stuck():
        va = k.try_get(f"{H.P_VAS}/{out['va']}")
        return va and (va.get("status") or {}).get("detachError")
    wait("the attacher's detachError", 60, stuck)
    new = wait("the replacement pod's Multi-Attach event", 120,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedAttachVolume", MULTI_ATTACH))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=new["spec"]["nodeName"])
    out["seconds"]["stuck"] = round(time.monotonic() - t0, 1)
    return out


def blocklist_leftover(k):
    """blocklist-leftover: a node loses power and is fenced by hand as a whole host (`ceph osd
    blocklist add <its storage address>`, no nonce); it boots again (a new boot id) and is Ready, still fenced."""
    ns, app = "live-bl", "billing"
    out = csi_workload(k, "blocklist-leftover", ns, app, "registry.local/billing:v3")
    node, ip = out["old_node"], out["old_node_storage_ip"]  # its clients' address
    argv = agent_argv(node)
    t0 = time.monotonic()
    power_off(node)
    H.ceph("osd", "blocklist", "add", ip)
    out["entry"] = f"{ip}:0/0"
    wait("the replacement pod's Multi-Attach event", 180,
         lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedAttachVolume", MULTI_ATTACH))
    out["seconds"]["multi_attach"] = round(time.monotonic() - t0, 1)
    boot(node, argv)
    wait(f"{node} Ready again", 60, lambda: node_ready(k, node))
    out["seconds"]["rebooted"] = round(time.monotonic() - t0, 1)
    return out


def rwo_claim_shared(k):
    """rwo-claim-shared (issue 24): a second pod of an RWO CSI claim is started on
    another Ready node while the first still runs (a second replica): the attach-detach controller
    reports Multi-Attach, both nodes stay Ready. Nothing may be fenced or force-deleted; the test
    finishes it as the owner would, by deleting the second pod or scaling the first away."""
    ns, app = "live-rwo", "wiki"
    out = csi_workload(k, "rwo-claim-shared", ns, app, "registry.local/wiki:v2")
    other = next(n for n in LIVE_NODES if n != out["old_node"] and node_ready(k, n))
    t0 = time.monotonic()
    k.create(H.p_core(ns, "pods"), {
        "apiVersion": "v1", "kind": "Pod",
        # its own label: the Deployment's ReplicaSet would adopt (and delete) a pod matching app=wiki
        "metadata": {"name": f"{app}-second", "namespace": ns, "labels": {"app": f"{app}-second"}},
        "spec": {"nodeName": other, "terminationGracePeriodSeconds": 30,
                 "containers": [{"name": app, "image": "registry.local/wiki:v2",
                                 "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": out["pvc"]}}]}})
    new = wait("the second pod's Multi-Attach event", 120,
               lambda: new_pod_with_event(k, ns, f"{app}-second", out["old_uid"], "FailedAttachVolume",
                                          MULTI_ATTACH))
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=other)
    out["seconds"]["multi_attach"] = round(time.monotonic() - t0, 1)
    return out


def replaced_on_the_same_node(k, ns, app, out, fault):
    """`fault(node)` breaks the node's way to Ceph, the other nodes are cordoned and the workload's
    pod is deleted: its replacement must stage the volume on the broken node, and waits there."""
    node = out["old_node"]
    fault(node)
    t0 = time.monotonic()
    for other in (n for n in LIVE_NODES if n != node):
        k.merge(f"{H.P_NODES}/{other}", {"spec": {"unschedulable": True}})
    k.delete(H.p_core(ns, "pods", out["old_pod"]))
    new = wait("the replacement pod's FailedMount on the broken node", 180,
               lambda: new_pod_with_event(k, ns, app, out["old_uid"], "FailedMount", "rbd error output"))
    assert new["spec"].get("nodeName") == node, f"the replacement landed on {new['spec'].get('nodeName')}"
    out.update(new_pod=new["metadata"]["name"], new_uid=new["metadata"]["uid"], new_node=node)
    out["seconds"]["failed_mount"] = round(time.monotonic() - t0, 1)
    return out


def ceph_unreachable(k):
    """ceph-unreachable (issue 24): the monitors and OSDs become unreachable from one node's network
    namespace (see NOWHERE_MAC) and the workload's pod is replaced there: NodeStage's Ceph read
    times out (`monclient(hunting): authenticate timed out`, rbd exits 110) and kubelet reports
    it as FailedMount. Undone by `reset` (the neighbour entry removed)."""
    ns, app = "live-unreach", "ledger"
    out = csi_workload(k, "ceph-unreachable", ns, app, "registry.local/ledger:v1")

    def fault(node):
        netns = agent_argv(node)[agent_argv(node).index("--netns") + 1]
        H.run(["ip", "-n", netns, "neigh", "replace", HOST_IP, "lladdr", NOWHERE_MAC, "dev", "eth0", "nud", "permanent"])
        with open(os.path.join(H.RUN, f"firewall-{node}"), "w") as f:
            f.write(netns + "\n")
        out["netns"] = netns
    return replaced_on_the_same_node(k, ns, app, out, fault)


def ceph_auth_failed(k):
    """ceph-auth-failed (issue 24): one node's cephx key is wrong (the key of a rotated or
    mistyped CSI secret, RUN/agent-NODE.keyring) and the workload's pod is replaced there: the
    monitors refuse it (`handle_auth_bad_method`, rbd exits 13) and kubelet reports FailedMount.
    Undone by `reset` (the keyring removed)."""
    ns, app = "live-auth", "billing"
    out = csi_workload(k, "ceph-auth-failed", ns, app, "registry.local/billing:v3")

    def fault(node):
        path = os.path.join(H.RUN, f"agent-{node}.keyring")
        with open(path, "w") as f:  # a well-formed key that is not client.admin's
            f.write("[client.admin]\n\tkey = AQBm1VZlAAAAABAAl1y9L4CmT6dsZ3nS7W2Ubw==\n")
        out["keyring"] = path
    return replaced_on_the_same_node(k, ns, app, out, fault)


def incident(k, which):
    t0 = time.monotonic()
    if which == "000":
        out = stale_lock(k)
    elif which == "000-csi":
        out = stale_lock_csi(k)
    elif which in ("001", "002"):
        out = multi_attach(k, which, "poweroff" if which == "001" else "stop")
    elif which == "003":
        out = unmap_busy(k)
    elif which == "003-csi":
        out = unmap_busy_csi(k)
    elif which == "004":
        out = restage(k)
    elif which == "va-finalizer-stuck":
        out = va_finalizer_stuck(k)
    elif which == "blocklist-leftover":
        out = blocklist_leftover(k)
    elif which == "rwo-claim-shared":
        out = rwo_claim_shared(k)
    elif which == "ceph-unreachable":
        out = ceph_unreachable(k)
    elif which == "ceph-auth-failed":
        out = ceph_auth_failed(k)
    else:
        raise RuntimeError(f"incident {which} is not scripted yet")
    out["seconds"]["total"] = round(time.monotonic() - t0, 1)
    out["host_ip"] = HOST_IP
    with open(LIVE_JSON + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(LIVE_JSON + ".tmp", LIVE_JSON)
    log(f"incident {which} ready in {out['seconds']['total']} s: {json.dumps(out['seconds'])}")


# ---------------------------------------------------------------------------- Rook pods (exec)
ROOK_NS = "rook-ceph"
ROOK_PODS = {"toolbox": ("rook-ceph-tools", "rook-ceph-tools-5f7b9c6d4-x2x7q"),
             "operator": ("rook-ceph-operator", "rook-ceph-operator-6d8f7b5c9-k4m2p")}


def rook(k, which):
    """`rook toolbox|operator|none`: namespace rook-ceph with exactly that Rook pod (none: neither),
    bound to the first live node whose agent runs (worker-1 unless an incident stopped it) and Running
    there (its agent serves exec: SEED.md "Exec into Rook pods")."""
    ensure_ns(k, ROOK_NS)
    node = next(n for n in ("worker-1", "worker-2", "worker-3")
                if agent_alive(n) and node_ready(k, n))
    for role, (app, name) in ROOK_PODS.items():
        path = H.p_core(ROOK_NS, "pods", name)
        if role != which:
            if k.try_get(path) is not None:
                k.request("DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
                wait(f"{name} gone", 60, lambda p=path: k.try_get(p) is None)
            continue
        if k.try_get(path) is None:
            k.create(H.p_core(ROOK_NS, "pods"), {"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": name, "namespace": ROOK_NS, "labels": {"app": app}}, "spec": {
                "nodeName": node, "containers": [{"name": app, "image": "quay.io/ceph/ceph:v18.2.4"}]}})
        wait(f"{name} Running", 60, lambda a=app: running_pod(k, ROOK_NS, a))
        log(f"rook: {ROOK_NS}/{name} Running on {k.get(path)['spec']['nodeName']}")


def agent_alive(node):
    try:
        os.kill(int(open(os.path.join(H.RUN, f"agent-{node}.pid")).read().strip()), 0)
        return True
    except (OSError, ValueError):
        return False


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    k = H.Kube()
    cmd = sys.argv[1]
    if cmd == "reset":
        reset(k)
    elif cmd == "wait-nodes":
        wait_nodes(k)
    elif cmd == "incident" and len(sys.argv) == 3:
        incident(k, sys.argv[2])
    elif cmd == "medik8s" and sys.argv[2:3] == ["install"]:
        medik8s.install(k)
    elif cmd == "medik8s" and len(sys.argv) == 4 and sys.argv[2] == "remediate":
        medik8s.remediate(k, sys.argv[3])
    elif cmd == "medik8s" and sys.argv[2:3] == ["remove"]:
        medik8s.remove(k)
    elif cmd == "rook" and sys.argv[2:3] in (["toolbox"], ["operator"], ["none"]):
        rook(k, sys.argv[2])
    elif cmd == "marker" and len(sys.argv) == 3:
        live = json.load(open(LIVE_JSON))
        if live["incident"] != sys.argv[2]:
            sys.exit(f"live.json is incident {live['incident']}, not {sys.argv[2]}")
        print(read_marker(live["image"], len(live["marker"])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, H.ApiError, AssertionError, OSError) as e:
        log(f"ERROR: {e}")
        sys.exit(1)
