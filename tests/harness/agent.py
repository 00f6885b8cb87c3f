#!/usr/bin/python3
"""Stand-ins for kubelet + the ceph-csi node plugin (one per node) and for the CSI external-attacher.

usage: /usr/bin/python3 agent.py --run RUN node --node NAME --ip IP --storage-ip SIP
           --storage-tie annotation|client-pod --netns NS
       /usr/bin/python3 agent.py --run RUN attacher

Started and stopped by PID by `tests/harness/cluster` (SEED.md "Live incidents"); environment as
for harness_lib.py (UNSTICK_HARNESS_DIR, CEPH_CONF, UNSTICK_API_PORT). Talks to the API server with the
admin certificate (stdlib http.client + ssl, harness_lib.Kube).

node: registers the Node (annotated for controller-managed attach/detach), renews its Lease every
2 s and posts its status every 4 s (Ready, InternalIP = IP, nodeInfo.bootID = the boot id kept in
RUN/agent-NAME.bootid, which only a "reboot" replaces, volumesInUse). For each pod bound to the node
it does what kubelet + ceph-csi do with RBD volumes, from inside the node's network namespace NS
(so every Ceph client of the node carries SIP, the node's storage address, which the namespace's
route makes the source of its connections to Ceph): waits for the volume in the node's volumesAttached
(and, for CSI, for its VolumeAttachment to be attached), checks watchers before mapping like
ceph-csi, takes the in-tree lock `kubelet_lock_magic_NAME` like the old in-tree plugin, then keeps
the image open with holder.py (a real librbd watcher, the "mapping"). A pod whose volumes are all
mapped becomes Running; a failure leaves it ContainerCreating with kubelet's event. A deleted pod
(or one gone from the API) is unmapped and unlocked, then its deletion is finished (grace 0).
Storage address: with `--storage-tie annotation` the Node carries the annotation
`unstick.test/storage-addresses: SIP` (what an operator would write for `diagnose.node_address_annotation`);
with `client-pod` it has none, and the node's ceph-csi node plugin pod (label `app=csi-rbdplugin`, a
DaemonSet's pod, `incident.py wait-nodes` creates the DaemonSet) gets SIP as its podIP, like a
plugin on pod networking or a Multus holder pod. RUN/agent-NAME.storage holds SIP for the scripts.
SIGTERM stops the agent only (kubelet stopped: the mappings stay); the harness SIGKILLs agent and
holders together for a power-off.
Mounts: each mapped volume also gets a real tmpfs mounted (shared) at RUN/mnt-NAME/<uid>_<pv> with
the source /dev/rbdN, the "filesystem on the device". A pod with a hostPath `/` volume gets a
container process (holder.py --container) started under `unshare -m --propagation P`: P is
private for mountPropagation None (the default), slave for HostToContainer, shared for
Bidirectional, so it keeps a copy of every mount present when it started exactly as a container
does. Teardown unmounts the tmpfs first and then "unmaps": while one of the node's container
processes still has the mount in its namespace, the unmap fails like `rbd unmap` with exit status
16 (kubelet's FailedUnMount event with rbd's output as a Go byte list), the mapping (watcher) stays
and the pod stays Terminating; kubelet retries every 3 s. A CSI volume is torn down as ceph-csi's
NodeUnstageVolume does it: unmount, remove the mount point (the kernel then detaches the other
namespaces' copies), then the "unmap", which fails only while a container process still uses the
filesystem (an open file, cwd or a mount of it); kubelet then only logs the failure (no event),
deletes the pod and keeps the volume in volumesInUse (SEED.md "What an agent does"). A pod annotated
`unstick.test/holds-files` keeps the volume mounts its container found at start open. A CSI volume
whose `imageFeatures` has exclusive-lock is mapped with one write (its client takes the lock).
Fault hooks (files the incident scripts create): RUN/agent-NAME.die-before-unlock makes the next
teardown of an in-tree volume exit after the unmap, before the unlock and before the pod is deleted.
RUN/agent-NAME.slow-unstage (a number of seconds) makes the next teardown's unstage (NodeUnstage:
unmount + unmap) take that long: the pod object is deleted at once, as kubelet does once the pod's
own mounts are gone, while the mapping and volumesInUse stay until the time is up; a new pod of
the same volume on this node meanwhile gets ceph-csi's "an operation with the given Volume ID ...
already exists" (NodeStage racing NodeUnstage).

Exec: each node agent also serves the kubelet's exec endpoint (kubelet_exec.py), so the API server
proxies `pods/exec` of the node's pods into it; `pod-exec` is its helper inside the node's namespace.

attacher: for every VolumeAttachment of rbd.csi.ceph.com adds the finalizer
external-attacher/rbd-csi-ceph-com (also to the PV) and sets status.attached; on deletion it marks
it detached and removes the finalizer. Like the real csi-attacher, it cannot detach from a node
whose Node object is gone (ControllerUnpublish needs the node's CSI id from its CSINode): it sets
status.detachError and keeps the finalizer, forever. While RUN/attacher.paused exists it does
nothing (its pod is down, e.g. evicted with a drain).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_lib as H  # noqa: E402
import kubelet_exec  # noqa: E402

FIN = "external-attacher/rbd-csi-ceph-com"
STOP = {"flag": False}
# `rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy\n`, as kubelet prints it
UNMAP_BUSY = "rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy\n"
PROPAGATION = {"HostToContainer": "slave", "Bidirectional": "shared"}
# a pod annotation (the harness's, on incident 003-csi's scanner): its container keeps open the node's
# volume mounts it finds at start, as a process reading files under the host root does
HOLDS_FILES = "unstick.test/holds-files"
# the Node annotation listing a node's storage addresses (the live tests' diagnose.node_address_annotation)
STORAGE_ANNOTATION = "unstick.test/storage-addresses"
# csi-addons (tests/harness/crds/): the node plugin's namespace, where each node's CSIAddonsNode is
CSI_NS = "live-csi"
GROUP_PATH = "/apis/csiaddons.openshift.io/v1alpha1"
P_CLASSES = f"{GROUP_PATH}/networkfenceclasses"
ANN_CLASSES = "csiaddons.openshift.io/networkfenceclass-names"
CLUSTER_ID = "rook-ceph"


def is_plugin_pod(pod):
    """The ceph-csi node plugin pod of `incident.py wait-nodes`'s DaemonSet (pod networking)."""
    owned = any(o.get("kind") == "DaemonSet" for o in pod["metadata"].get("ownerReferences") or [])
    return owned and (pod["metadata"].get("labels") or {}).get("app") == "csi-rbdplugin"


def is_csi(rec):
    return rec["unique"].startswith("kubernetes.io/csi/")


def go_bytes(text):
    return "[" + " ".join(str(b) for b in text.encode()) + "]"


def mounts_of(pid):
    """(source, mount point) of every mount in the namespace of `pid` ("self" for ours)."""
    out = []
    try:
        with open(f"/proc/{pid}/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, rfields = left.split(), right.split()
                if len(fields) > 4 and len(rfields) > 1:
                    out.append((rfields[1], fields[4]))
    except OSError:
        pass
    return out


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def now_ts():
    return H.ts(0)


def pod_path(pod, sub=""):
    m = pod["metadata"]
    return H.p_core(m["namespace"], "pods", m["name"]) + sub


class StageError(Exception):
    """NodeStage failed on a Ceph call: the message is the FailedMount event's."""


class Node:
    def __init__(self, a):
        self.node, self.ip, self.netns, self.run = a.node, a.ip, a.netns, a.run
        self.storage_ip, self.storage_tie = a.storage_ip, a.storage_tie
        with open(os.path.join(self.run, f"agent-{self.node}.storage.tmp"), "w") as f:
            f.write(f"{self.storage_ip} {self.storage_tie}\n")
        os.replace(os.path.join(self.run, f"agent-{self.node}.storage.tmp"),
                   os.path.join(self.run, f"agent-{self.node}.storage"))
        self.k = H.Kube()
        self.mdir = os.path.join(self.run, f"mounts-{self.node}")
        self.mnt = os.path.join(self.run, f"mnt-{self.node}")
        os.makedirs(self.mdir, exist_ok=True)
        os.makedirs(self.mnt, exist_ok=True)
        self.dev_base = int(self.ip.rsplit(".", 1)[1]) % 32 * 10
        bf = os.path.join(self.run, f"agent-{self.node}.bootid")
        if not os.path.exists(bf):
            with open(bf, "w") as f:
                f.write(str(uuid.uuid4()) + "\n")
        self.boot_id = open(bf).read().strip()
        self.started = now_ts()
        self.events = {}      # (pod uid, reason, message) -> [event name, count]
        self.running = set()  # pod uids this agent made Running
        self.next_try = {}    # pod uid -> monotonic time of the next mount attempt
        self.first_try = {}   # pod uid -> monotonic time of the first attempt
        self.next_teardown = {}  # pod uid -> monotonic time of the next teardown attempt
        self.unstage_logged = {}  # "<uid>_<pv>" -> monotonic time before which a failed unstage is not logged again
        self.seq = 0

    # ---- Ceph, from inside the node's network namespace
    def ns_rbd(self, *args, check=True):
        # ceph-auth-failed: RUN/agent-NODE.keyring, when present, is the node's (wrong) cephx key
        kr = os.path.join(self.run, f"agent-{self.node}.keyring")
        key = ["--keyring", kr] if os.path.exists(kr) else []
        argv = ["ip", "netns", "exec", self.netns, "rbd", "--conf", H.CEPH_CONF, *key, *args]
        return H.run(argv, timeout=40, check=check)

    def stage_rbd_json(self, pv_name, *args):
        """A Ceph read of NodeStage. Its failure raises StageError with the message kubelet posts for
        ceph-csi's NodeStage (`internal/util/cephcmds.go` ExecCommand's `an error (exit status N)
        occurred while running rbd args: [...]`, then rbd's own stderr, verbatim)."""
        p = self.ns_rbd(*args, "--format", "json", check=False)
        if p.returncode != 0:
            out = " ".join(p.stderr.split())
            raise StageError(f'MountVolume.MountDevice failed for volume "{pv_name}" : rpc error: code = Internal '
                             f'desc = an error (exit status {p.returncode}) occurred while running rbd args: '
                             f'[{" ".join(args)} --format json], rbd error output: {out}')
        return json.loads(p.stdout or "null")

    def ns_rbd_json(self, *args):
        return json.loads(self.ns_rbd(*args, "--format", "json").stdout or "null")

    # ---- mount records: RUN/mounts-NODE/<pod uid>_<pv>.json (+ holder .pid/.addr)
    def records(self):
        out = []
        for fn in sorted(os.listdir(self.mdir)):
            if fn.endswith(".json"):
                try:
                    out.append(json.load(open(os.path.join(self.mdir, fn))))
                except (OSError, ValueError):
                    pass
        return out

    def rec_base(self, uid, pv):
        return os.path.join(self.mdir, f"{uid}_{pv}")

    # ---- node registration, lease, status
    def register(self):
        storage = {STORAGE_ANNOTATION: self.storage_ip if self.storage_tie == "annotation" else None}
        if self.k.try_get(f"{H.P_NODES}/{self.node}") is None:
            self.k.create(H.P_NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": self.node,
                "labels": {"kubernetes.io/hostname": self.node, "kubernetes.io/os": "linux",
                           "kubernetes.io/arch": "amd64", "unstick.test/live": "true"},
                "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true",
                                "node.alpha.kubernetes.io/ttl": "0",
                                **{k: v for k, v in storage.items() if v}}}})
            log(f"registered node {self.node}")
        else:
            self.k.merge(f"{H.P_NODES}/{self.node}", {"metadata": {"annotations": storage}})

    def sync_csiaddons_node(self):
        """The node's CSIAddonsNode (csi-addons v0.14.0, tests/harness/crds/), when its CRD and the
        live-csi namespace exist: created as the csi-addons sidecar of the node plugin creates it
        (`<node>-live-csi-daemonset-csi-rbdplugin`, spec.driver.nodeID = the node), and its status as
        the csi-addons controller writes it after asking the driver's GetFenceClients for every
        NetworkFenceClass: one `ClientDetails` entry per class, the node's Ceph client address (its
        storage address) as a /32, as ceph-csi answers. Written only when it differs."""
        base = f"{GROUP_PATH}/namespaces/{CSI_NS}/csiaddonsnodes"
        name = f"{self.node}-{CSI_NS}-daemonset-csi-rbdplugin"
        classes = sorted(c["metadata"]["name"] for c in (self.k.try_get(P_CLASSES) or {}).get("items", []))
        ann = {"csiaddons.openshift.io/networkfenceclass-names": json.dumps(classes)}
        obj = self.k.try_get(f"{base}/{name}")
        if obj is None:
            if self.k.try_get(f"/api/v1/namespaces/{CSI_NS}") is None or self.k.try_get(P_CLASSES) is None:
                return  # no namespace yet, or csi-addons not installed
            obj = self.k.create(base, {"apiVersion": "csiaddons.openshift.io/v1alpha1", "kind": "CSIAddonsNode",
                                       "metadata": {"name": name, "namespace": CSI_NS, "annotations": ann},
                                       "spec": {"driver": {"name": "rbd.csi.ceph.com", "nodeID": self.node,
                                                           "endpoint": f"pod://csi-rbdplugin.{CSI_NS}:9070"}}})
        elif (obj["metadata"].get("annotations") or {}).get(ANN_CLASSES) != ann[ANN_CLASSES]:
            self.k.merge(f"{base}/{name}", {"metadata": {"annotations": ann}})
        clients = [{"networkFenceClassName": c, "ClientDetails": [{"id": CLUSTER_ID, "cidrs": [f"{self.storage_ip}/32"]}]}
                   for c in classes]
        status = {"state": "Connected", "message": "Successfully established connection with sidecar",
                  "capabilities": ["network_fence.GET_CLIENTS_TO_FENCE"], "networkFenceClientStatus": clients}
        if obj.get("status") != status:
            self.k.merge(f"{base}/{name}/status", {"status": status})

    def renew_lease(self):
        path = f"{H.P_LEASES}/{self.node}"
        spec = {"holderIdentity": self.node, "leaseDurationSeconds": 40, "renewTime": H.micro_ts(0)}
        if self.k.try_get(path) is None:
            self.k.create(H.P_LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                       "metadata": {"name": self.node, "namespace": "kube-node-lease"}, "spec": spec})
        else:
            self.k.merge(path, {"spec": spec})

    def post_status(self):
        t = now_ts()

        def cond(typ, status, reason, msg):
            return {"type": typ, "status": status, "reason": reason, "message": msg,
                    "lastHeartbeatTime": t, "lastTransitionTime": self.started}
        res = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "20Gi"}
        in_use = sorted({r["unique"] for r in self.records()})
        status = {
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": self.ip}, {"type": "Hostname", "address": self.node}],
            "nodeInfo": {"bootID": self.boot_id, "machineID": self.node.replace("-", "") * 2,
                         "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, self.node)),
                         "kernelVersion": os.uname().release, "osImage": "Debian GNU/Linux 12 (bookworm)",
                         "containerRuntimeVersion": "containerd://1.4.13", "kubeletVersion": "v1.20.2",
                         "kubeProxyVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64"},
            "capacity": res, "allocatable": res, "volumesInUse": in_use,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        }
        self.k.request("PATCH", f"{H.P_NODES}/{self.node}/status", {"status": status},
                       "application/strategic-merge-patch+json")

    # ---- events and pod status, as kubelet writes them
    def event(self, pod, reason, msg, etype="Warning"):
        m = pod["metadata"]
        key = (m["uid"], reason, msg)
        ns = m["namespace"]
        if key in self.events:
            name, count = self.events[key]
            self.events[key][1] = count + 1
            try:
                self.k.merge(H.p_core(ns, "events", name), {"count": count + 1, "lastTimestamp": now_ts()})
                return
            except H.ApiError:
                pass
        self.seq += 1
        name = f"{m['name']}.{int(time.time() * 1e6):x}{self.seq}"
        self.events[key] = [name, 1]
        self.k.create(H.p_core(ns, "events"), {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"kind": "Pod", "namespace": ns, "name": m["name"], "uid": m["uid"],
                               "apiVersion": "v1", "resourceVersion": m.get("resourceVersion", "")},
            "reason": reason, "message": msg, "type": etype, "count": 1,
            "source": {"component": "kubelet", "host": self.node},
            "firstTimestamp": now_ts(), "lastTimestamp": now_ts(), "reportingComponent": "",
            "reportingInstance": ""})

    def pod_status(self, pod, state):
        t = now_ts()
        ready = "True" if state == "running" else "False"
        cs = []
        for c in pod["spec"]["containers"]:
            st = {"waiting": {"reason": "ContainerCreating"}}
            if state == "running":
                st = {"running": {"startedAt": t}}
            elif state == "terminated":
                st = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": t, "finishedAt": t}}
            cs.append({"name": c["name"], "image": c["image"], "imageID": "", "ready": state == "running",
                       "restartCount": 0, "started": state == "running", "state": st,
                       **({"containerID": f"containerd://{uuid.uuid4().hex}"} if state == "running" else {})})
        status = {"phase": "Running" if state != "creating" else "Pending", "hostIP": self.ip,
                  "startTime": pod["status"].get("startTime") or t, "containerStatuses": cs,
                  "conditions": [{"type": "Initialized", "status": "True", "lastTransitionTime": t},
                                 {"type": "Ready", "status": ready, "lastTransitionTime": t},
                                 {"type": "ContainersReady", "status": ready, "lastTransitionTime": t},
                                 {"type": "PodScheduled", "status": "True", "lastTransitionTime": t}]}
        if state == "running" and self.storage_tie == "client-pod" and is_plugin_pod(pod):
            status["podIP"] = self.storage_ip
            status["podIPs"] = [{"ip": self.storage_ip}]
        elif state == "running":
            h = int(pod["metadata"]["uid"].replace("-", "")[:4], 16)
            status["podIP"] = f"10.244.{self.ip.rsplit('.', 1)[1]}.{h % 250 + 2}"
        self.k.merge(pod_path(pod, "/status"), {"status": status})

    # ---- mapping
    def start_holder(self, base, pool, image, write=False):
        """The mapping: holder.py (`write`: it writes once, as the first write to a mapped image
        with exclusive-lock takes the lock)."""
        pidf, addrf = base + ".pid", base + ".addr"
        logf = open(base + ".log", "a")
        proc = subprocess.Popen(["ip", "netns", "exec", self.netns, H.CEPH_PY, os.path.join(H.HERE, "holder.py"),
                                 pool, image, "--pidfile", pidf, "--ip", self.storage_ip, *(["--write"] if write else [])],
                                env=H.CEPH_ENV, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                start_new_session=True, close_fds=True)
        logf.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(addrf):
                return open(addrf).read().strip()
            if proc.poll() is not None:
                raise RuntimeError(f"holder for {image} exited {proc.returncode} (see {base}.log)")
            time.sleep(0.2)
        proc.kill()
        raise RuntimeError(f"holder for {image} did not open it in 30 s")

    def mount(self, pod, pv, attached):
        """None when mapped, "wait" while not attached, else kubelet's error message."""
        name, uid = pv["metadata"]["name"], pod["metadata"]["uid"]
        base = self.rec_base(uid, name)
        if os.path.exists(base + ".json"):
            return None
        spec = pv["spec"]
        if "csi" in spec:
            handle = spec["csi"]["volumeHandle"]
            attrs = spec["csi"].get("volumeAttributes", {})
            pool, image = attrs["pool"], attrs["imageName"]
            unique = f"kubernetes.io/csi/{spec['csi']['driver']}^{handle}"
            lock_id = None
            write = "exclusive-lock" in attrs.get("imageFeatures", "")  # mkfs / the mount writes at once
            if unique not in attached:
                return "wait"
            va = self.k.try_get(f"{H.P_VAS}/{H.va_name(handle, self.node)}")
            if not va or not (va.get("status") or {}).get("attached"):
                return "wait"
            # ceph-csi serialises operations per volume: NodeStage while NodeUnstage still runs
            if any(r["unique"] == unique and r.get("unstage_until") for r in self.records()):
                return (f'MountVolume.MountDevice failed for volume "{name}" : rpc error: code = Aborted desc = '
                        f'an operation with the given Volume ID {handle} already exists')
            # ceph-csi NodeStage: refuse to map an image that someone still watches
            if self.stage_rbd_json(name, "status", f"{pool}/{image}").get("watchers"):
                return f'MountVolume.WaitForAttach failed for volume "{name}" : rbd image {pool}/{image} is still being used'
        elif "rbd" in spec:
            write = False
            pool, image = spec["rbd"]["pool"], spec["rbd"]["image"]
            unique = f"kubernetes.io/rbd/{pool}:{image}"
            if unique not in attached:
                return "wait"
            lock_id = f"kubelet_lock_magic_{self.node}"
            locks = self.stage_rbd_json(name, "lock", "ls", f"{pool}/{image}") or []
            if any(lk["id"] != lock_id for lk in locks):
                return f'MountVolume.SetUp failed for volume "{name}" : rbd: image {image} is locked by other nodes'
            if not locks:
                self.ns_rbd("lock", "add", f"{pool}/{image}", lock_id)
        else:
            return None  # not an RBD volume: nothing to do
        rec = {"uid": uid, "pod": f"{pod['metadata']['namespace']}/{pod['metadata']['name']}", "pv": name,
               "pool": pool, "image": image, "unique": unique, "lock": lock_id, "watcher": None,
               "device": self.free_device(), "mnt": os.path.join(self.mnt, f"{uid}_{name}")}

        def save():
            with open(base + ".json.tmp", "w") as f:
                json.dump(rec, f)
            os.replace(base + ".json.tmp", base + ".json")
        # kubelet reports the volume in volumesInUse before it mounts it
        save()
        self.post_status()
        try:
            addr = self.start_holder(base, pool, image, write)
        except RuntimeError:
            os.unlink(base + ".json")
            raise
        self.mount_fs(rec)
        rec["watcher"] = addr
        save()
        log(f"mapped {pool}/{image} for {rec['pod']} (watcher {addr})")
        return None

    def free_device(self):
        used = {r.get("device") for r in self.records()}
        return next(f"/dev/rbd{self.dev_base + i}" for i in range(100) if f"/dev/rbd{self.dev_base + i}" not in used)

    def mount_fs(self, rec):
        """The filesystem on the device, mounted shared (kubelet's global mount); its st_dev kept
        in the record (what an open file of it shows)."""
        os.makedirs(rec["mnt"], exist_ok=True)
        for argv in (["mount", "-t", "tmpfs", "-o", "size=64k", rec["device"], rec["mnt"]],
                     ["mount", "--make-shared", rec["mnt"]]):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                log(f"{' '.join(argv)}: {r.stderr.strip()}")
                return
        rec["st_dev"] = os.stat(rec["mnt"]).st_dev

    def container_pids(self):
        out = []
        for fn in os.listdir(self.mdir):
            if fn.endswith(".ctr.pid"):
                try:
                    pid = int(open(os.path.join(self.mdir, fn)).read().strip())
                except (OSError, ValueError):
                    continue
                if H.pid_alive_holder(pid):
                    out.append(pid)
        return out

    def holders_of(self, rec):
        """This node's container processes that still have the volume's mount in their namespace."""
        return [pid for pid in self.container_pids() if (rec["device"], rec["mnt"]) in mounts_of(pid)]

    def users_of(self, rec):
        """This node's container processes that still use the volume's filesystem: a copy of its
        mount in their namespace, or a file or directory of it open (or as cwd/root), which keeps
        the filesystem alive after the kernel detached every mount of it."""
        out = []
        for pid in self.container_pids():
            paths = [f"/proc/{pid}/cwd", f"/proc/{pid}/root"]
            try:
                paths += [f"/proc/{pid}/fd/{fd}" for fd in os.listdir(f"/proc/{pid}/fd")]
            except OSError:
                continue
            devs = set()
            for q in paths:
                try:
                    devs.add(os.stat(q).st_dev)
                except OSError:
                    pass
            if rec.get("st_dev") in devs or (rec["device"], rec["mnt"]) in mounts_of(pid):
                out.append(pid)
        return out

    def unmount(self, rec):
        """"done", "busy" (a container of the node still mounts it: the unmap fails with status 16),
        or "slow" (a slow unstage in progress)."""
        base = self.rec_base(rec["uid"], rec["pv"])
        hook = os.path.join(self.run, f"agent-{self.node}.slow-unstage")
        if os.path.exists(hook) and not rec.get("unstage_until"):
            secs = float(open(hook).read().strip() or "30")
            os.unlink(hook)
            rec["unstage_until"] = time.time() + secs
            with open(base + ".json.tmp", "w") as f:
                json.dump(rec, f)
            os.replace(base + ".json.tmp", base + ".json")
            log(f"fault hook: unstaging {rec['image']} takes {secs:.0f} s")
        if rec.get("unstage_until") and time.time() < rec["unstage_until"]:
            return "slow"
        if rec.get("mnt") and is_csi(rec):
            # ceph-csi NodeUnstageVolume (internal/rbd/nodeserver.go, v3.12.2): unmount the staging
            # path, os.Remove it, then `rbd unmap POOL/IMAGE`. The rmdir makes the kernel detach the
            # copies of the mount in other mount namespaces (Linux >= 3.18, fs/namei.c vfs_rmdir ->
            # detach_mounts), so only a process that still has a file of the filesystem open keeps
            # the device busy.
            if (rec["device"], rec["mnt"]) in mounts_of("self"):
                subprocess.run(["umount", rec["mnt"]], capture_output=True, timeout=10)
            try:
                os.rmdir(rec["mnt"])
            except OSError:
                pass
            if self.users_of(rec):
                self.unstage_failed(rec)
                return "busy"
        elif rec.get("mnt"):
            if (rec["device"], rec["mnt"]) in mounts_of("self"):
                subprocess.run(["umount", rec["mnt"]], capture_output=True, timeout=10)
            if self.holders_of(rec):
                return "busy"
            try:
                os.rmdir(rec["mnt"])
            except OSError:
                pass
        try:
            pid = int(open(base + ".pid").read().strip())
        except (OSError, ValueError):
            pid = 0
        if pid and H.pid_alive_holder(pid):
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not H.pid_alive_holder(pid):
                    break
                time.sleep(0.1)
        if rec.get("lock"):
            if os.path.exists(os.path.join(self.run, f"agent-{self.node}.die-before-unlock")):
                os.unlink(os.path.join(self.run, f"agent-{self.node}.die-before-unlock"))
                os.unlink(base + ".json")
                self.post_status()
                log(f"fault hook: dying after unmapping {rec['image']}, before the unlock")
                os._exit(137)
            spec = f"{rec['pool']}/{rec['image']}"
            for lk in self.ns_rbd_json("lock", "ls", spec) or []:
                if lk["id"] == rec["lock"]:
                    self.ns_rbd("lock", "rm", spec, lk["id"], lk["locker"], check=False)
        for ext in (".json", ".pid", ".addr"):
            try:
                os.unlink(base + ext)
            except FileNotFoundError:
                pass
        log(f"unmapped {rec['pool']}/{rec['image']} of {rec['pod']}")
        return "done"

    def unstage_failed(self, rec):
        """kubelet's log line for a failed UnmountDevice of a ceph-csi volume (at most every 30 s).
        kubelet posts no event for it (pkg/volume/util/operationexecutor/operation_generator.go
        GenerateUnmountDeviceFunc: `EventRecorderFunc: nil`, in 1.20.2 and 1.37.2 alike); the message is
        kubelet's `UnmountDevice failed for volume ...` around csi_attacher.go's `attacher.UnmountDevice
        failed: %v` around ceph-csi's NodeUnstageVolume error (internal/rbd/rbd_attach.go
        detachRBDImageOrDeviceSpec `rbd: unmap for spec (%s) failed (%w): (%s)`, the %w being
        internal/util/cephcmds.go ExecCommand's `an error (%w) occurred while running %s args: %v`)."""
        key = f"{rec['uid']}_{rec['pv']}"
        if time.monotonic() < self.unstage_logged.get(key, 0):
            return
        self.unstage_logged[key] = time.monotonic() + 30
        spec = f"{rec['pool']}/{rec['image']}"
        args = f"[unmap {spec} --device-type krbd --options noudev]"
        log(f'E nestedpendingoperations.go: Operation for "{{volumeName:{rec["unique"]} podName: nodeName:}}" failed. '
            f'Error: UnmountDevice failed for volume "{rec["pv"]}" (UniqueName: "{rec["unique"]}") on node '
            f'"{self.node}" : kubernetes.io/csi: attacher.UnmountDevice failed: rpc error: code = Internal desc = '
            f'rbd: unmap for spec ({spec}) failed (an error (exit status 16) occurred while running rbd args: '
            f'{args}): ({UNMAP_BUSY})'.replace("\n", "\\n"))

    # ---- containers: a pod with a hostPath `/` volume keeps a mount namespace of its own
    def start_containers(self, pod):
        spec = pod["spec"]
        roots = {v["name"] for v in spec.get("volumes") or [] if (v.get("hostPath") or {}).get("path") == "/"}
        props = [PROPAGATION.get(m.get("mountPropagation"), "private") for c in spec["containers"]
                 for m in c.get("volumeMounts") or [] if m["name"] in roots]
        if not props:
            return
        pidf = os.path.join(self.mdir, f"{pod['metadata']['uid']}.ctr.pid")
        # a container that reads the files under the host root (HOLDS_FILES) keeps the node's volume
        # mounts open that it found at start
        hold = ["--hold-under", self.mnt] if (pod["metadata"].get("annotations") or {}).get(HOLDS_FILES) else []
        subprocess.Popen(["unshare", "-m", "--propagation", props[0], H.SYSPY, os.path.join(H.HERE, "holder.py"),
                          "--container", "--pidfile", pidf, *hold], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        for _ in range(50):
            if os.path.exists(pidf):
                break
            time.sleep(0.1)
        log(f"container of {pod['metadata']['namespace']}/{pod['metadata']['name']} in its own mount namespace "
            f"(propagation {props[0]})")

    def stop_container(self, uid):
        pidf = os.path.join(self.mdir, f"{uid}.ctr.pid")
        try:
            pid = int(open(pidf).read().strip())
        except (OSError, ValueError):
            return
        if H.pid_alive_holder(pid):
            os.kill(pid, signal.SIGTERM)
            for _ in range(50):
                if not H.pid_alive_holder(pid):
                    break
                time.sleep(0.1)
        try:
            os.unlink(pidf)
        except FileNotFoundError:
            pass

    # ---- the pod loop
    def try_start(self, pod):
        uid = pod["metadata"]["uid"]
        ns = pod["metadata"]["namespace"]
        node = self.k.get(f"{H.P_NODES}/{self.node}")
        attached = {v["name"] for v in (node["status"].get("volumesAttached") or [])}
        waiting, error = [], None
        for v in pod["spec"].get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if not claim:
                continue
            pvc = self.k.try_get(H.p_core(ns, "persistentvolumeclaims", claim))
            pv = pvc and pvc["spec"].get("volumeName") and self.k.try_get(f"{H.P_PVS}/{pvc['spec']['volumeName']}")
            try:
                r = self.mount(pod, pv, attached) if pv else "wait"
            except StageError as e:
                r = str(e)
            if r == "wait":
                waiting.append(v["name"])
            elif r:
                error = r
                waiting.append(v["name"])
                break
        if not waiting:
            self.start_containers(pod)
            self.pod_status(pod, "running")
            self.running.add(uid)
            log(f"pod {ns}/{pod['metadata']['name']} Running")
            return
        if pod["status"].get("phase") != "Pending" or not pod["status"].get("containerStatuses"):
            self.pod_status(pod, "creating")
        if error:
            self.event(pod, "FailedMount", error)
        first = self.first_try.setdefault(uid, time.monotonic())
        if time.monotonic() - first > 123:  # kubelet's podAttachAndMountTimeout (2 min 3 s), then again
            self.first_try[uid] = time.monotonic()
            vs = ",".join(waiting)
            self.event(pod, "FailedMount", f"Unable to attach or mount volumes: unmounted volumes=[{vs}], "
                       f"unattached volumes=[{vs}]: timed out waiting for the condition")
        self.next_try[uid] = time.monotonic() + 3

    def teardown(self, pod):
        uid = pod["metadata"]["uid"]
        mine = [r for r in self.records() if r["uid"] == uid]
        if any(c.get("state", {}).get("running") for c in pod["status"].get("containerStatuses") or []):
            for c in pod["spec"]["containers"]:  # kubelet kills the containers first
                self.event(pod, "Killing", f"Stopping container {c['name']}", "Normal")
            self.pod_status(pod, "terminated")
        self.stop_container(uid)
        # a CSI volume's failed NodeUnstage does not hold the pod: kubelet deletes it once NodeUnpublish
        # is done, and retries UnmountDevice on its own (the volume stays in volumesInUse)
        busy = [r for r in mine if self.unmount(r) == "busy" and not is_csi(r)]
        self.post_status()
        if busy:
            for r in busy:
                self.event(pod, "FailedUnMount", f'UnmountDevice failed for volume "{r["pv"]}" (UniqueName: '
                           f'"{r["unique"]}") on node "{self.node}" : rbd: failed to unmap device {r["device"]}, '
                           f'error exit status 16, rbd output: {go_bytes(UNMAP_BUSY)}')
            self.next_teardown[uid] = time.monotonic() + 3
            return
        self.running.discard(uid)
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        try:
            self.k.request("DELETE", pod_path(pod), body)
            log(f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']} deleted (grace 0)")
        except H.ApiError as e:
            if e.status not in (404, 409):
                raise

    def sync_pods(self):
        pods = self.k.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{self.node}")["items"]
        live = set()
        for pod in pods:
            uid = pod["metadata"]["uid"]
            live.add(uid)
            if pod["metadata"].get("deletionTimestamp"):
                if time.monotonic() >= self.next_teardown.get(uid, 0):
                    self.teardown(pod)
            elif uid not in self.running and time.monotonic() >= self.next_try.get(uid, 0):
                self.try_start(pod)
        for r in self.records():  # orphaned volumes (pod force-deleted): kubelet cleans them up
            if r["uid"] not in live and self.unmount(r) == "done":
                self.post_status()
        for fn in os.listdir(self.mdir):  # containers of pods gone from the API
            if fn.endswith(".ctr.pid") and fn[:-8] not in live:
                self.stop_container(fn[:-8])

    def loop(self):
        self.register()
        log(f"node {self.node} ip {self.ip} netns {self.netns} bootID {self.boot_id}")
        next_lease = next_status = 0.0
        while not STOP["flag"]:
            t = time.monotonic()
            try:
                if t >= next_lease:
                    self.renew_lease()
                    next_lease = t + 2
                if t >= next_status:
                    self.post_status()
                    self.sync_csiaddons_node()
                    next_status = t + 4
                self.sync_pods()
            except (H.ApiError, RuntimeError, OSError, KeyError, ValueError) as e:
                log(f"error: {e!r}")
            time.sleep(1)


def attacher(a):
    k = H.Kube()
    log("attacher for rbd.csi.ceph.com")
    paused = os.path.join(a.run, "attacher.paused")
    while not STOP["flag"]:
        if os.path.exists(paused):
            time.sleep(1)
            continue
        try:
            for va in k.get(H.P_VAS)["items"]:
                if va["spec"].get("attacher") != H.CSI_DRIVER:
                    continue
                m = va["metadata"]
                fins = m.get("finalizers") or []
                path = f"{H.P_VAS}/{m['name']}"
                if m.get("deletionTimestamp"):
                    node = va["spec"]["nodeName"]
                    if FIN in fins and k.try_get(f"{H.P_NODES}/{node}") is None:
                        err = f'csinode.storage.k8s.io "{node}" not found'
                        if (va.get("status") or {}).get("detachError", {}).get("message") != err:
                            k.merge(path + "/status", {"status": {"detachError": {"time": now_ts(), "message": err}}})
                            log(f"cannot detach {m['name']}: {err}")
                        continue
                    if FIN in fins:
                        k.merge(path, {"metadata": {"finalizers": [f for f in fins if f != FIN] or None,
                                                    "resourceVersion": m["resourceVersion"]}})
                        log(f"detached {m['name']} from {va['spec']['nodeName']}")
                    continue
                if FIN not in fins:
                    k.merge(path, {"metadata": {"finalizers": fins + [FIN], "resourceVersion": m["resourceVersion"]}})
                pvn = va["spec"]["source"].get("persistentVolumeName")
                pv = pvn and k.try_get(f"{H.P_PVS}/{pvn}")
                if pv and FIN not in (pv["metadata"].get("finalizers") or []) and not pv["metadata"].get("deletionTimestamp"):
                    k.merge(f"{H.P_PVS}/{pvn}", {"metadata": {"finalizers": (pv["metadata"].get("finalizers") or []) + [FIN],
                                                              "resourceVersion": pv["metadata"]["resourceVersion"]}})
                if not (va.get("status") or {}).get("attached"):
                    k.merge(path + "/status", {"status": {"attached": True}})
                    log(f"attached {m['name']} to {va['spec']['nodeName']}")
        except (H.ApiError, RuntimeError, OSError, KeyError) as e:
            log(f"error: {e!r}")
        time.sleep(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    sub = ap.add_subparsers(dest="mode", required=True)
    n = sub.add_parser("node")
    n.add_argument("--node", required=True)
    n.add_argument("--ip", required=True)
    n.add_argument("--storage-ip", required=True)
    n.add_argument("--storage-tie", choices=["annotation", "client-pod"], required=True)
    n.add_argument("--netns", required=True)
    sub.add_parser("attacher")
    pe = sub.add_parser("pod-exec")  # kubelet_exec.py runs it inside the node's namespace
    pe.add_argument("--role", choices=["toolbox", "operator"], required=True)
    pe.add_argument("--cluster-ns", required=True)
    pe.add_argument("argv", nargs="+")
    a = ap.parse_args()
    if a.mode == "pod-exec":
        kubelet_exec.pod_exec(a.role, a.cluster_ns, a.argv)
    signal.signal(signal.SIGTERM, lambda *_: STOP.update(flag=True))
    signal.signal(signal.SIGINT, lambda *_: STOP.update(flag=True))
    if a.mode == "node":
        node = Node(a)
        kubelet_exec.Server(a.node, a.ip, a.netns, a.run, log).start()
        node.loop()
    else:
        attacher(a)


if __name__ == "__main__":
    main()
