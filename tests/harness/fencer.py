#!/usr/bin/python3
"""The harness's csi-addons + ceph-csi stand-in: acts on NetworkFence objects
(csiaddons.openshift.io/v1alpha1, CRDs in tests/harness/crds/) the way the csi-addons controller
(v0.14.0, internal/controller/csiaddons/networkfence_controller.go) and ceph-csi's fencing
(internal/csi-addons/networkfence/fencing.go) do together, against the harness's Ceph.

Per NetworkFence, each time its generation changes (and once at start; a failure again every second):
- driver: `spec.networkFenceClassName` -> that NetworkFenceClass's `spec.provisioner`, else the
  deprecated `spec.driver`; anything but rbd.csi.ceph.com is a Failed status (no such driver);
- the finalizer `csiaddons.openshift.io/network-fence` is added first (the controller does);
- `Fenced`: per CIDR `ceph osd blocklist range add CIDR 157784760` (ceph-csi's 5 years); when the
  mon answers "invalid command" (no range blocklist), every address of the CIDR with
  `ceph osd blocklist add IP 157784760`, as ceph-csi falls back;
- `Unfenced`: `ceph osd blocklist range rm CIDR` (or `rm IP` per address);
- status: `result` Succeeded / Failed and `message` ("fencing operation successful",
  "unfencing operation successful", or the error), on the status subresource.
A NetworkFence being deleted only loses its finalizer, its entries stay: csi-addons v0.14.0 does
exactly that ("NetworkFence object is terminated, skipping reconciliation"); unfencing is
setting `Unfenced` first.

Started by `tests/harness/cluster up` (pidfile $RUN/fencer.pid, log $RUN/fencer.log), stopped by
PID on `down`. Stdlib only, through harness_lib.
"""
import argparse
import ipaddress
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_lib as H  # noqa: E402

GROUP_PATH = "/apis/csiaddons.openshift.io/v1alpha1"
P_FENCES = f"{GROUP_PATH}/networkfences"
P_CLASSES = f"{GROUP_PATH}/networkfenceclasses"
FINALIZER = "csiaddons.openshift.io/network-fence"
FIVE_YEARS = "157784760"
STOP = {"flag": False}


def log(msg):
    print(f"{time.strftime('%H:%M:%S')} fencer: {msg}", flush=True)


def driver_of(k, fence):
    spec = fence.get("spec") or {}
    cls = spec.get("networkFenceClassName")
    if cls:
        c = k.try_get(f"{P_CLASSES}/{cls}")
        if c is None:
            raise RuntimeError(f"NetworkFenceClass {cls} not found")
        return (c.get("spec") or {}).get("provisioner", "")
    return spec.get("driver", "")


def hosts(cidr):
    net = ipaddress.ip_network(cidr, strict=False)
    if net.num_addresses > 256:
        raise RuntimeError(f"{cidr}: more than 256 addresses to blocklist one by one")
    return [str(a) for a in net] if net.num_addresses > 1 else [str(net.network_address)]


def blocklist(op, cidr):
    """`op` is "add" or "rm"; returns the commands that ran (for the log)."""
    extra = [FIVE_YEARS] if op == "add" else []
    r = H.ceph("osd", "blocklist", "range", op, cidr, *extra, check=False)
    if r.returncode == 0:
        return [f"range {op} {cidr}"]
    if "invalid command" not in r.stderr.lower():
        raise RuntimeError(f"ceph osd blocklist range {op} {cidr}: rc={r.returncode}: {r.stderr.strip()}")
    done = []
    for ip in hosts(cidr):
        H.ceph("osd", "blocklist", op, ip, *extra)
        done.append(f"{op} {ip}")
    return done


def reconcile(k, fence):
    """Acts on one NetworkFence; True when done (a failure is retried on the next pass)."""
    m = fence["metadata"]
    path = f"{P_FENCES}/{m['name']}"
    fins = m.get("finalizers") or []
    if m.get("deletionTimestamp"):
        if FINALIZER in fins:
            k.merge(path, {"metadata": {"finalizers": [f for f in fins if f != FINALIZER] or None,
                                        "resourceVersion": m["resourceVersion"]}})
            log(f"{m['name']}: deleted; finalizer removed, entries left as they are (csi-addons v0.14.0)")
        return True
    spec = fence.get("spec") or {}
    state = spec.get("fenceState", "Fenced")
    try:
        drv = driver_of(k, fence)
        if drv != H.CSI_DRIVER:
            raise RuntimeError(f"no csi-addons sidecar for driver {drv!r}")
        if FINALIZER not in fins:
            k.merge(path, {"metadata": {"finalizers": fins + [FINALIZER], "resourceVersion": m["resourceVersion"]}})
        done = []
        for cidr in spec.get("cidrs") or []:
            done += blocklist("add" if state == "Fenced" else "rm", cidr)
        result, msg = "Succeeded", ("fencing operation successful" if state == "Fenced"
                                    else "unfencing operation successful")
        log(f"{m['name']}: {state}: {'; '.join(done)}")
    except (RuntimeError, ValueError, H.ApiError) as e:
        result, msg = "Failed", str(e)
        log(f"{m['name']}: {state} failed: {e}")
    k.merge(path + "/status", {"status": {"result": result, "message": msg}})
    return result == "Succeeded"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: STOP.update(flag=True))
    signal.signal(signal.SIGINT, lambda *_: STOP.update(flag=True))
    k = H.Kube()
    done = {}  # name -> (uid, generation) acted on
    log("watching NetworkFences (csiaddons.openshift.io/v1alpha1)")
    while not STOP["flag"]:
        try:
            items = (k.try_get(P_FENCES) or {}).get("items", [])
            for f in items:
                m = f["metadata"]
                key = (m.get("uid"), m.get("generation"), bool(m.get("deletionTimestamp")))
                if done.get(m["name"]) != key and reconcile(k, f):
                    done[m["name"]] = key
            names = {f["metadata"]["name"] for f in items}
            for gone in [n for n in done if n not in names]:
                del done[gone]
        except (H.ApiError, RuntimeError, OSError, KeyError) as e:
            log(f"error: {e!r}")
        time.sleep(1)


if __name__ == "__main__":
    main()
