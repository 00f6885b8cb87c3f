#!/usr/bin/python3
"""Medik8s remediators on the harness (issue 27 "Not racing a remediator"): their CRDs, and the
objects a NodeHealthCheck + Self Node Remediation write while they remediate a node. Nothing here
remediates: the objects only say so, as the real operators' would.

Imported by incident.py (`incident.py medik8s install | remediate NODE | remove`, which
`tests/harness/cluster medik8s ...` runs; `reset` removes them too).

The CRDs carry what the published API says (all `v1alpha1`, names, scope, the status
subresource) with schemas that keep unknown fields; the sources:
- NodeHealthCheck: medik8s/node-healthcheck-operator `api/v1alpha1/nodehealthcheck_types.go`
  (group remediation.medik8s.io, `+kubebuilder:resource:path=nodehealthchecks,scope=Cluster,shortName=nhc`,
  status `unhealthyNodes[] {name, remediations[] {resource, started}}`, `phase`);
- SelfNodeRemediation: medik8s/self-node-remediation `api/v1alpha1/selfnoderemediation_types.go`
  (group self-node-remediation.medik8s.io, namespaced, shortName snr; `spec.remediationStrategy`,
  status `phase`, `conditions` Processing / Succeeded);
- FenceAgentsRemediation: medik8s/fence-agents-remediation `api/v1alpha1/fenceagentsremediation_types.go`
  (group fence-agents-remediation.medik8s.io, namespaced, shortName far).
"""
import time

import harness_lib as H

NS = "medik8s"  # where the remediation objects live (the operators' namespace)
NHC = "nhc-workers"
KINDS = [  # kind, group, plural, scope, short names
    ("NodeHealthCheck", "remediation.medik8s.io", "nodehealthchecks", "Cluster", ["nhc"]),
    ("SelfNodeRemediation", "self-node-remediation.medik8s.io", "selfnoderemediations", "Namespaced", ["snr"]),
    ("FenceAgentsRemediation", "fence-agents-remediation.medik8s.io", "fenceagentsremediations", "Namespaced", ["far"]),
]
P_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
KEEP = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def log(msg):
    print(f"[medik8s {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def crd(kind, group, plural, scope, short):
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}", "labels": {H.SEEDED: "true"}},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                               "singular": kind.lower(), "shortNames": short},
                     "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": KEEP, "status": KEEP}}}}]}}


def established(k, name):
    c = k.try_get(f"{P_CRDS}/{name}")
    return c and any(x["type"] == "Established" and x["status"] == "True"
                     for x in (c.get("status") or {}).get("conditions") or [])


def install(k):
    t0 = time.time()
    for kind, group, plural, scope, short in KINDS:
        name = f"{plural}.{group}"
        if k.try_get(f"{P_CRDS}/{name}") is None:
            k.create(P_CRDS, crd(kind, group, plural, scope, short))
        deadline = time.time() + 30
        while not established(k, name):
            if time.time() > deadline:
                raise RuntimeError(f"CRD {name} not Established after 30 s")
            time.sleep(0.2)
    log(f"CRDs installed in {time.time() - t0:.1f} s")


def path(group, plural, ns=None, name=""):
    base = f"/apis/{group}/v1alpha1" + (f"/namespaces/{ns}" if ns else "") + f"/{plural}"
    return base + (f"/{name}" if name else "")


def remediate(k, node):
    """What NHC and SNR write once NHC found `node` unhealthy: the SelfNodeRemediation named after
    the node (strategy OutOfServiceTaint, phase and Processing condition in its status) and the
    NodeHealthCheck's status naming both."""
    if k.try_get(f"/api/v1/namespaces/{NS}") is None:
        k.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    snr_group, nhc_group = KINDS[1][1], KINDS[0][1]
    p_snr = path(snr_group, "selfnoderemediations", NS)
    snr = k.try_get(f"{p_snr}/{node}") or k.create(p_snr, {
        "apiVersion": f"{snr_group}/v1alpha1", "kind": "SelfNodeRemediation",
        "metadata": {"name": node, "namespace": NS, "labels": {H.SEEDED: "true"},
                     "annotations": {"remediation.medik8s.io/node-name": node}},
        "spec": {"remediationStrategy": "OutOfServiceTaint"}})
    now = H.ts(0)
    k.merge(f"{p_snr}/{node}/status", {"status": {"phase": "Pre-Reboot-Completed", "conditions": [
        {"type": "Processing", "status": "True", "reason": "RemediationStarted", "message": "",
         "lastTransitionTime": now},
        {"type": "Succeeded", "status": "Unknown", "reason": "RemediationStarted", "message": "",
         "lastTransitionTime": now}]}})
    p_nhc = path(nhc_group, "nodehealthchecks")
    if k.try_get(f"{p_nhc}/{NHC}") is None:
        k.create(p_nhc, {"apiVersion": f"{nhc_group}/v1alpha1", "kind": "NodeHealthCheck",
                         "metadata": {"name": NHC, "labels": {H.SEEDED: "true"}},
                         "spec": {"selector": {"matchLabels": {"unstick.test/live": "true"}},
                                  "minHealthy": "51%",
                                  "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "duration": "10s"},
                                                          {"type": "Ready", "status": "False", "duration": "10s"}],
                                  "remediationTemplate": {"apiVersion": f"{snr_group}/v1alpha1",
                                                          "kind": "SelfNodeRemediationTemplate", "namespace": NS,
                                                          "name": "self-node-remediation-automatic-strategy-template"}}})
    ref = {"apiVersion": f"{snr_group}/v1alpha1", "kind": "SelfNodeRemediation", "namespace": NS, "name": node,
           "uid": snr["metadata"]["uid"]}
    k.merge(f"{p_nhc}/{NHC}/status", {"status": {"phase": "Remediating", "reason": f"NHC is remediating 1 nodes",
                                                 "observedNodes": 3, "healthyNodes": 2,
                                                 "unhealthyNodes": [{"name": node, "remediations": [
                                                     {"resource": ref, "started": now}]}]}})
    log(f"NodeHealthCheck {NHC} remediating {node} with SelfNodeRemediation {NS}/{node}")


def remove(k):
    """The CRDs (their objects go with them); waits until each is gone (30 s)."""
    for kind, group, plural, *_ in KINDS:
        name = f"{plural}.{group}"
        if k.try_get(f"{P_CRDS}/{name}") is None:
            continue
        k.delete(f"{P_CRDS}/{name}")
        deadline = time.time() + 30
        while k.try_get(f"{P_CRDS}/{name}") is not None:
            if time.time() > deadline:
                raise RuntimeError(f"CRD {name} still there 30 s after its deletion")
            time.sleep(0.2)
        log(f"CRD {name} removed")
