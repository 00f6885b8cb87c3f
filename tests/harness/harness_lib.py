#!/usr/bin/python3
"""What every harness script shares: the harness's environment and paths, a Kubernetes API client,
the `rbd`/`ceph` command lines, and the names the seeds and live incidents use alike.

A library, not a script: imported by seed.py, incident.py and agent.py (`import harness_lib as H`),
which `tests/harness/cluster` starts with UNSTICK_HARNESS_DIR, CEPH_CONF, UNSTICK_API_PORT,
UNSTICK_HOST_IP and UNSTICK_MON_V1 set (importing it without UNSTICK_HARNESS_DIR exits).
Talks to kube-apiserver with stdlib http.client (admin client certificate) and to Ceph with the
`rbd`/`ceph` CLIs (argv lists, CEPH_ARGS timeouts, an outer timeout on every call).
"""
import datetime
import hashlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import time

STATE = os.environ.get("UNSTICK_HARNESS_DIR") or sys.exit(f"{os.path.basename(sys.argv[0])}: UNSTICK_HARNESS_DIR not set")
CEPH_CONF = os.environ.get("CEPH_CONF") or os.path.join(STATE, "ceph", "ceph.conf")
API_PORT = int(os.environ.get("UNSTICK_API_PORT", "16443"))
RUN = os.path.join(STATE, "run")
PKI = os.path.join(STATE, "pki")
HERE = os.path.dirname(os.path.abspath(__file__))
SYSPY = "/usr/bin/python3"
# the python a librados/librbd client (holder.py) runs under: Debian 12's (Ceph 16's python3-rbd),
# or with `cluster up --ceph 18` the wrapper of Ceph 18's root (tests/harness/ceph_root.sh)
CEPH_PY = os.environ.get("UNSTICK_CEPH_PYTHON") or SYSPY

POOL = "replicapool"
# every host-side Ceph client connects from the harness bridge address (cluster: HOST_IP)
LOCAL_IP = os.environ.get("UNSTICK_HOST_IP", "127.0.0.1")
MON_ADDR = f"{LOCAL_IP}:{os.environ.get('UNSTICK_MON_V1', '16789')}"
CSI_DRIVER = "rbd.csi.ceph.com"
CLUSTER_ID = "rook-ceph"
SEEDED = "unstick.test/seeded"  # label on every seeded object
CEPH_ENV = dict(os.environ, CEPH_CONF=CEPH_CONF,
                CEPH_ARGS="--client_mount_timeout 5 --rados_mon_op_timeout 10 --rados_osd_op_timeout 10")


def ts(seconds_ago=0):
    t = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_ts(seconds_ago=0):
    t = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def csi_handle(uuid, pool_id):
    return f"0001-{len(CLUSTER_ID):04x}-{CLUSTER_ID}-{pool_id:016x}-{uuid}"


def va_name(handle, node):
    # kubernetes pkg/volume/csi: getAttachmentName(volumeHandle, driver, nodeName)
    return "csi-" + hashlib.sha256(f"{handle}{CSI_DRIVER}{node}".encode()).hexdigest()


# ---------------------------------------------------------------------------- kube API
class ApiError(Exception):
    def __init__(self, status, method, path, body):
        super().__init__(f"{method} {path} -> {status}: {body[:400]}")
        self.status = status


class Kube:
    def __init__(self):
        self.ctx = ssl.create_default_context(cafile=os.path.join(PKI, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(PKI, "admin.crt"), os.path.join(PKI, "admin.key"))
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPSConnection("127.0.0.1", API_PORT, context=self.ctx, timeout=20)

    def request(self, method, path, body=None, ctype="application/json"):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in range(3):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read().decode()
            except (OSError, http.client.HTTPException) as e:
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise RuntimeError(f"{method} {path}: {e!r}")
                time.sleep(0.5)
                continue
            if resp.status == 429 or resp.status >= 500:
                if attempt < 2:
                    time.sleep(1)
                    continue
            if resp.status >= 300:
                raise ApiError(resp.status, method, path, raw)
            return json.loads(raw) if raw else {}
        raise RuntimeError("unreachable")

    def get(self, path):
        return self.request("GET", path)

    def try_get(self, path):
        try:
            return self.get(path)
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def merge(self, path, patch):
        return self.request("PATCH", path, patch, "application/merge-patch+json")

    def delete(self, path, grace=None):
        body = None if grace is None else {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace}
        try:
            return self.request("DELETE", path, body)
        except ApiError as e:
            if e.status == 404:
                return None
            raise


# API paths
def p_core(ns, res, name=""):
    return f"/api/v1/namespaces/{ns}/{res}" + (f"/{name}" if name else "")


def p_apps(ns, res, name=""):
    return f"/apis/apps/v1/namespaces/{ns}/{res}" + (f"/{name}" if name else "")


P_NODES = "/api/v1/nodes"
P_PVS = "/api/v1/persistentvolumes"
P_VAS = "/apis/storage.k8s.io/v1/volumeattachments"
P_SCS = "/apis/storage.k8s.io/v1/storageclasses"
P_LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
# csi-addons (tests/harness/crds/, fencer.py): reset removes every one, seeded or not
P_NETWORK_FENCES = "/apis/csiaddons.openshift.io/v1alpha1/networkfences"
P_NETWORK_FENCE_CLASSES = "/apis/csiaddons.openshift.io/v1alpha1/networkfenceclasses"


# ---------------------------------------------------------------------------- ceph CLI
def run(argv, timeout=40, check=True):
    try:
        p = subprocess.run(argv, env=CEPH_ENV, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timeout after {timeout}s: {argv}")
    if check and p.returncode != 0:
        raise RuntimeError(f"rc={p.returncode}: {argv}: {p.stderr.strip()}")
    return p


def rbd(*args, check=True, timeout=40):
    return run(["rbd", "--conf", CEPH_CONF, *args], timeout=timeout, check=check)


def ceph(*args, check=True, timeout=40):
    return run(["ceph", "--conf", CEPH_CONF, *args], timeout=timeout, check=check)


def rbd_json(*args):
    return json.loads(rbd(*args, "--format", "json").stdout or "null")


def pool_id():
    dump = json.loads(ceph("osd", "dump", "--format", "json").stdout)
    for p in dump["pools"]:
        if p["pool_name"] == POOL:
            return int(p["pool"])
    raise RuntimeError(f"pool {POOL} not found")


def blocklist_clear():
    ceph("osd", "blocklist", "clear")
    dump = json.loads(ceph("osd", "dump", "--format", "json").stdout)
    for key in (dump.get("range_blocklist") or {}):
        # "cidr:10.1.0.0:0/16" -> "10.1.0.0/16"
        body = key.split(":", 1)[1] if key.startswith("cidr:") else key
        ip, rest = body.rsplit(":", 1)
        ceph("osd", "blocklist", "range", "rm", f"{ip}/{rest.split('/')[-1]}", check=False)



# ---------------------------------------------------------------------------- holders (holder.py)
def pid_alive_holder(pid):
    """Whether `pid` is a holder.py of this harness (pids get reused)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cl = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return "holder.py" in cl and f"--pidfile {RUN}/" in cl



# ---------------------------------------------------------------------------- reset
def strip_and_delete(k, path, obj, grace=None):
    """Deletes the object at `path` (`obj` as read), its finalizers removed first."""
    if obj["metadata"].get("finalizers"):
        try:
            k.merge(path, {"metadata": {"finalizers": None}})
        except ApiError as e:
            if e.status != 404:
                raise
    k.delete(path, grace=grace)
