#!/usr/bin/python3
"""Stand-ins for kubelet + the ceph-csi node plugin (one per node) and for the CSI external-attacher.

usage: /usr/bin/python3 agent.py --run RUN node --node NAME --ip IP --netns NS
       /usr/bin/python3 agent.py --run RUN attacher

Started and stopped by PID by `tests/harness/cluster` (SEED.md "Live incidents"); environment as
for seed.py (UNSTICK_HARNESS_DIR, CEPH_CONF, UNSTICK_API_PORT). Talks to the API server with the
admin certificate (stdlib http.client + ssl, seed.Kube).

node: registers the Node (annotated for controller-managed attach/detach), renews its Lease every
2 s and posts its status every 4 s (Ready, InternalIP = IP, nodeInfo.bootID = the boot id kept in
RUN/agent-NAME.bootid, which only a "reboot" replaces, volumesInUse). For each pod bound to the node
it does what kubelet + ceph-csi do with RBD volumes, from inside the node's network namespace NS
(so every Ceph client of the node carries IP): waits for the volume in the node's volumesAttached
(and, for CSI, for its VolumeAttachment to be attached), checks watchers before mapping like
ceph-csi, takes the in-tree lock `kubelet_lock_magic_NAME` like the old in-tree plugin, then keeps
the image open with holder.py (a real librbd watcher, the "mapping"). A pod whose volumes are all
mapped becomes Running; a failure leaves it ContainerCreating with kubelet's event. A deleted pod
(or one gone from the API) is unmapped and unlocked, then its deletion is finished (grace 0).
SIGTERM stops the agent only (kubelet stopped: the mappings stay); the harness SIGKILLs agent and
holders together for a power-off.
Fault hooks (files the incident scripts create): RUN/agent-NAME.die-before-unlock makes the next
teardown of an in-tree volume exit after the unmap, before the unlock and before the pod is deleted.

attacher: for every VolumeAttachment of rbd.csi.ceph.com adds the finalizer
external-attacher/rbd-csi-ceph-com (also to the PV) and sets status.attached; on deletion it marks
it detached and removes the finalizer.
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
import seed as S  # noqa: E402  (Kube, paths, ceph env)

FIN = "external-attacher/rbd-csi-ceph-com"
STOP = {"flag": False}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def now_ts():
    return S.ts(0)


def pod_path(pod, sub=""):
    m = pod["metadata"]
    return S.p_core(m["namespace"], "pods", m["name"]) + sub


class Node:
    def __init__(self, a):
        self.node, self.ip, self.netns, self.run = a.node, a.ip, a.netns, a.run
        self.k = S.Kube()
        self.mdir = os.path.join(self.run, f"mounts-{self.node}")
        os.makedirs(self.mdir, exist_ok=True)
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
        self.seq = 0

    # ---- Ceph, from inside the node's network namespace
    def ns_rbd(self, *args, check=True):
        argv = ["ip", "netns", "exec", self.netns, "rbd", "--conf", S.CEPH_CONF, *args]
        return S.run(argv, timeout=40, check=check)

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
        if self.k.try_get(f"{S.P_NODES}/{self.node}") is None:
            self.k.create(S.P_NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": self.node,
                "labels": {"kubernetes.io/hostname": self.node, "kubernetes.io/os": "linux",
                           "kubernetes.io/arch": "amd64", "unstick.test/live": "true"},
                "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true",
                                "node.alpha.kubernetes.io/ttl": "0"}}})
            log(f"registered node {self.node}")

    def renew_lease(self):
        path = f"{S.P_LEASES}/{self.node}"
        spec = {"holderIdentity": self.node, "leaseDurationSeconds": 40, "renewTime": S.micro_ts(0)}
        if self.k.try_get(path) is None:
            self.k.create(S.P_LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
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
        self.k.request("PATCH", f"{S.P_NODES}/{self.node}/status", {"status": status},
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
                self.k.merge(S.p_core(ns, "events", name), {"count": count + 1, "lastTimestamp": now_ts()})
                return
            except S.ApiError:
                pass
        self.seq += 1
        name = f"{m['name']}.{int(time.time() * 1e6):x}{self.seq}"
        self.events[key] = [name, 1]
        self.k.create(S.p_core(ns, "events"), {
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
        if state == "running":
            h = int(pod["metadata"]["uid"].replace("-", "")[:4], 16)
            status["podIP"] = f"10.244.{self.ip.rsplit('.', 1)[1]}.{h % 250 + 2}"
        self.k.merge(pod_path(pod, "/status"), {"status": status})

    # ---- mapping
    def start_holder(self, base, pool, image):
        pidf, addrf = base + ".pid", base + ".addr"
        logf = open(base + ".log", "a")
        proc = subprocess.Popen(["ip", "netns", "exec", self.netns, S.SYSPY, os.path.join(S.HERE, "holder.py"),
                                 pool, image, "--pidfile", pidf, "--ip", self.ip],
                                env=S.CEPH_ENV, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
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
            if unique not in attached:
                return "wait"
            va = self.k.try_get(f"{S.P_VAS}/{S.va_name(handle, self.node)}")
            if not va or not (va.get("status") or {}).get("attached"):
                return "wait"
            # ceph-csi NodeStage: refuse to map an image that someone still watches
            if self.ns_rbd_json("status", f"{pool}/{image}").get("watchers"):
                return f'MountVolume.WaitForAttach failed for volume "{name}" : rbd image {pool}/{image} is still being used'
        elif "rbd" in spec:
            pool, image = spec["rbd"]["pool"], spec["rbd"]["image"]
            unique = f"kubernetes.io/rbd/{pool}:{image}"
            if unique not in attached:
                return "wait"
            lock_id = f"kubelet_lock_magic_{self.node}"
            locks = self.ns_rbd_json("lock", "ls", f"{pool}/{image}") or []
            if any(lk["id"] != lock_id for lk in locks):
                return f'MountVolume.SetUp failed for volume "{name}" : rbd: image {image} is locked by other nodes'
            if not locks:
                self.ns_rbd("lock", "add", f"{pool}/{image}", lock_id)
        else:
            return None  # not an RBD volume: nothing to do
        rec = {"uid": uid, "pod": f"{pod['metadata']['namespace']}/{pod['metadata']['name']}", "pv": name,
               "pool": pool, "image": image, "unique": unique, "lock": lock_id, "watcher": None}

        def save():
            with open(base + ".json.tmp", "w") as f:
                json.dump(rec, f)
            os.replace(base + ".json.tmp", base + ".json")
        # kubelet reports the volume in volumesInUse before it mounts it
        save()
        self.post_status()
        try:
            addr = self.start_holder(base, pool, image)
        except RuntimeError:
            os.unlink(base + ".json")
            raise
        rec["watcher"] = addr
        save()
        log(f"mapped {pool}/{image} for {rec['pod']} (watcher {addr})")
        return None

    def unmount(self, rec):
        base = self.rec_base(rec["uid"], rec["pv"])
        try:
            pid = int(open(base + ".pid").read().strip())
        except (OSError, ValueError):
            pid = 0
        if pid and S.pid_alive_holder(pid):
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not S.pid_alive_holder(pid):
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

    # ---- the pod loop
    def try_start(self, pod):
        uid = pod["metadata"]["uid"]
        ns = pod["metadata"]["namespace"]
        node = self.k.get(f"{S.P_NODES}/{self.node}")
        attached = {v["name"] for v in (node["status"].get("volumesAttached") or [])}
        waiting, error = [], None
        for v in pod["spec"].get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if not claim:
                continue
            pvc = self.k.try_get(S.p_core(ns, "persistentvolumeclaims", claim))
            pv = pvc and pvc["spec"].get("volumeName") and self.k.try_get(f"{S.P_PVS}/{pvc['spec']['volumeName']}")
            r = self.mount(pod, pv, attached) if pv else "wait"
            if r == "wait":
                waiting.append(v["name"])
            elif r:
                error = r
                waiting.append(v["name"])
                break
        if not waiting:
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
        if mine and any(c.get("state", {}).get("running") for c in pod["status"].get("containerStatuses") or []):
            self.pod_status(pod, "terminated")  # kubelet kills the containers first
        for r in mine:
            self.unmount(r)
        self.post_status()
        self.running.discard(uid)
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        try:
            self.k.request("DELETE", pod_path(pod), body)
            log(f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']} deleted (grace 0)")
        except S.ApiError as e:
            if e.status not in (404, 409):
                raise

    def sync_pods(self):
        pods = self.k.get(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{self.node}")["items"]
        live = set()
        for pod in pods:
            uid = pod["metadata"]["uid"]
            live.add(uid)
            if pod["metadata"].get("deletionTimestamp"):
                self.teardown(pod)
            elif uid not in self.running and time.monotonic() >= self.next_try.get(uid, 0):
                self.try_start(pod)
        for r in self.records():  # orphaned volumes (pod force-deleted): kubelet cleans them up
            if r["uid"] not in live:
                self.unmount(r)
                self.post_status()

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
                    next_status = t + 4
                self.sync_pods()
            except (S.ApiError, RuntimeError, OSError, KeyError, ValueError) as e:
                log(f"error: {e!r}")
            time.sleep(1)


def attacher(_a):
    k = S.Kube()
    log("attacher for rbd.csi.ceph.com")
    while not STOP["flag"]:
        try:
            for va in k.get(S.P_VAS)["items"]:
                if va["spec"].get("attacher") != S.CSI_DRIVER:
                    continue
                m = va["metadata"]
                fins = m.get("finalizers") or []
                path = f"{S.P_VAS}/{m['name']}"
                if m.get("deletionTimestamp"):
                    if FIN in fins:
                        k.merge(path, {"metadata": {"finalizers": [f for f in fins if f != FIN] or None,
                                                    "resourceVersion": m["resourceVersion"]}})
                        log(f"detached {m['name']} from {va['spec']['nodeName']}")
                    continue
                if FIN not in fins:
                    k.merge(path, {"metadata": {"finalizers": fins + [FIN], "resourceVersion": m["resourceVersion"]}})
                pvn = va["spec"]["source"].get("persistentVolumeName")
                pv = pvn and k.try_get(f"{S.P_PVS}/{pvn}")
                if pv and FIN not in (pv["metadata"].get("finalizers") or []) and not pv["metadata"].get("deletionTimestamp"):
                    k.merge(f"{S.P_PVS}/{pvn}", {"metadata": {"finalizers": (pv["metadata"].get("finalizers") or []) + [FIN],
                                                              "resourceVersion": pv["metadata"]["resourceVersion"]}})
                if not (va.get("status") or {}).get("attached"):
                    k.merge(path + "/status", {"status": {"attached": True}})
                    log(f"attached {m['name']} to {va['spec']['nodeName']}")
        except (S.ApiError, RuntimeError, OSError, KeyError) as e:
            log(f"error: {e!r}")
        time.sleep(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    sub = ap.add_subparsers(dest="mode", required=True)
    n = sub.add_parser("node")
    n.add_argument("--node", required=True)
    n.add_argument("--ip", required=True)
    n.add_argument("--netns", required=True)
    sub.add_parser("attacher")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: STOP.update(flag=True))
    signal.signal(signal.SIGINT, lambda *_: STOP.update(flag=True))
    if a.mode == "node":
        Node(a).loop()
    else:
        attacher(a)


if __name__ == "__main__":
    main()
