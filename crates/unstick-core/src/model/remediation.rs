//! Automatic node remediation (Medik8s) acting on a node: the console must not race it (a
//! remediator deletes the node's pods and VolumeAttachments, reboots or power-fences the node, and
//! applies and later removes the out-of-service taint on its own). The published APIs, all
//! `v1alpha1`, of which only what the console reads is kept:
//! - `NodeHealthCheck`, group `remediation.medik8s.io`, cluster-scoped, plural `nodehealthchecks`
//!   (medik8s/node-healthcheck-operator `api/v1alpha1/nodehealthcheck_types.go`):
//!   `status.unhealthyNodes[]` `{name, remediations[] {resource: ObjectReference, started,
//!   timedOut}}`, the deprecated `status.inFlightRemediations` (node → time), `status.phase`
//!   (`Disabled`, `Paused`, `Remediating`, `Enabled`).
//! - `SelfNodeRemediation`, group `self-node-remediation.medik8s.io`, namespaced, plural
//!   `selfnoderemediations` (medik8s/self-node-remediation
//!   `api/v1alpha1/selfnoderemediation_types.go`): `spec.remediationStrategy` (`Automatic`,
//!   `ResourceDeletion`, `OutOfServiceTaint`), `status.phase`, `status.conditions`
//!   (`Processing`, `Succeeded`).
//! - `FenceAgentsRemediation`, group `fence-agents-remediation.medik8s.io`, namespaced, plural
//!   `fenceagentsremediations` (medik8s/fence-agents-remediation
//!   `api/v1alpha1/fenceagentsremediation_types.go`): `status.conditions` (`Processing`,
//!   `FenceAgentActionSucceeded`, `Succeeded`).
//!
//! A remediation object names its node by the annotation `remediation.medik8s.io/node-name`
//! (NodeHealthCheck with several templates of one kind), else by its own name. Taints of the
//! remediators (their controllers' `NodeNoExecuteTaint`): `medik8s.io/remediation` with value
//! `self-node-remediation` or `fence-agents-remediation` (`NoExecute`); older Fence Agents
//! Remediation releases use the key `medik8s.io/fence-agents-remediation`. Self Node
//! Remediation's `OutOfServiceTaint` strategy also sets `node.kubernetes.io/out-of-service`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::kube::{OUT_OF_SERVICE_TAINT, taints};
use super::objects::Node;

/// The annotation a remediation object names its node with (else its name is the node's).
pub const NODE_NAME_ANNOTATION: &str = "remediation.medik8s.io/node-name";
/// The taint key Self Node Remediation and Fence Agents Remediation put on the node they act on.
pub const REMEDIATION_TAINT: &str = "medik8s.io/remediation";
/// The taint key of older Fence Agents Remediation releases.
pub const FAR_TAINT_OLD: &str = "medik8s.io/fence-agents-remediation";

/// One Medik8s kind the console reads (serialized as its kind name, `SelfNodeRemediation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RemediatorKind {
    /// `nodehealthchecks.remediation.medik8s.io` (cluster-scoped).
    NodeHealthCheck,
    /// `selfnoderemediations.self-node-remediation.medik8s.io`.
    SelfNodeRemediation,
    /// `fenceagentsremediations.fence-agents-remediation.medik8s.io`.
    FenceAgentsRemediation,
}

impl RemediatorKind {
    /// Every kind, in the order they are read.
    pub const ALL: [RemediatorKind; 3] =
        [RemediatorKind::NodeHealthCheck, RemediatorKind::SelfNodeRemediation, RemediatorKind::FenceAgentsRemediation];

    /// The API group.
    pub fn group(self) -> &'static str {
        match self {
            RemediatorKind::NodeHealthCheck => "remediation.medik8s.io",
            RemediatorKind::SelfNodeRemediation => "self-node-remediation.medik8s.io",
            RemediatorKind::FenceAgentsRemediation => "fence-agents-remediation.medik8s.io",
        }
    }

    /// The version read (`v1alpha1`, the only served one of each).
    pub fn version(self) -> &'static str {
        "v1alpha1"
    }

    /// The resource (plural).
    pub fn plural(self) -> &'static str {
        match self {
            RemediatorKind::NodeHealthCheck => "nodehealthchecks",
            RemediatorKind::SelfNodeRemediation => "selfnoderemediations",
            RemediatorKind::FenceAgentsRemediation => "fenceagentsremediations",
        }
    }

    /// The kind's name (`NodeHealthCheck`, ...).
    pub fn kind(self) -> &'static str {
        match self {
            RemediatorKind::NodeHealthCheck => "NodeHealthCheck",
            RemediatorKind::SelfNodeRemediation => "SelfNodeRemediation",
            RemediatorKind::FenceAgentsRemediation => "FenceAgentsRemediation",
        }
    }
}

/// One sign that automatic remediation acts on a node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Remediation {
    /// The node acted on.
    pub node: String,
    /// Who says so: `SelfNodeRemediation <ns>/<name>`, `NodeHealthCheck <name>`, `taint <key>=<value>:<effect>`.
    pub by: String,
    /// What it is doing, as its status words it (`phase Fencing-Completed`, `Succeeded=True`, ...);
    /// empty when it says nothing.
    pub state: String,
}

impl fmt::Display for Remediation {
    /// `<by>` or `<by> (<state>)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.state.is_empty() { f.write_str(&self.by) } else { write!(f, "{} ({})", self.by, self.state) }
    }
}

/// What the remediators' APIs said: the kinds whose list answered 404 (not installed, told by
/// the status code) and every remediation their objects show. A bundle's `remediators.json` is
/// this, serialized (`{"absent": [...], "unreadable": [[kind, why]], "objects": [{node, by, state}]}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Remediators {
    /// Kinds not installed (their list answered 404).
    pub absent: Vec<RemediatorKind>,
    /// Kinds installed but not readable (403, timeout): `(kind, why)`.
    pub unreadable: Vec<(RemediatorKind, String)>,
    /// Remediations read from the objects of the installed kinds.
    pub objects: Vec<Remediation>,
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).unwrap_or_default()
}

/// The conditions of `v`'s status that are `True`, as `Type=True`, joined by `, `.
fn true_conditions(v: &Value) -> String {
    let conds = v.pointer("/status/conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let on: Vec<String> =
        conds.iter().filter(|c| s(c, &["status"]) == "True").map(|c| format!("{}=True", s(c, &["type"]))).collect();
    on.join(", ")
}

/// The remediations one object of `kind` shows (JSON as the API server serves it). A
/// NodeHealthCheck: one per `status.unhealthyNodes` entry with remediations (and per deprecated
/// `inFlightRemediations` key); a remediation object: one for its node.
pub fn from_object(kind: RemediatorKind, v: &Value) -> Vec<Remediation> {
    let name = s(v, &["metadata", "name"]);
    let ns = s(v, &["metadata", "namespace"]);
    let key = if ns.is_empty() { name.to_string() } else { format!("{ns}/{name}") };
    let by = format!("{} {key}", kind.kind());
    if kind == RemediatorKind::NodeHealthCheck {
        let phase = s(v, &["status", "phase"]);
        let mut out = vec![];
        for u in v.pointer("/status/unhealthyNodes").and_then(Value::as_array).into_iter().flatten() {
            let rs = u.get("remediations").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            if rs.is_empty() {
                continue;
            }
            let made: Vec<String> =
                rs.iter().map(|r| format!("{} {}", s(r, &["resource", "kind"]), s(r, &["resource", "name"]))).collect();
            let state = format!("phase {phase}, remediating with {}", made.join(", "));
            out.push(Remediation { node: s(u, &["name"]).to_string(), by: by.clone(), state });
        }
        let inflight = v.pointer("/status/inFlightRemediations").and_then(Value::as_object);
        for node in inflight.into_iter().flat_map(|m| m.keys()) {
            if !out.iter().any(|r| &r.node == node) {
                let state = format!("phase {phase}, remediation in flight");
                out.push(Remediation { node: node.clone(), by: by.clone(), state });
            }
        }
        return out;
    }
    let node = v.pointer("/metadata/annotations").and_then(|a| a.get(NODE_NAME_ANNOTATION)).and_then(Value::as_str);
    let mut state: Vec<String> = vec![];
    let phase = s(v, &["status", "phase"]);
    if !phase.is_empty() {
        state.push(format!("phase {phase}"));
    }
    let strategy = s(v, &["spec", "remediationStrategy"]);
    if !strategy.is_empty() {
        state.push(format!("strategy {strategy}"));
    }
    let on = true_conditions(v);
    if !on.is_empty() {
        state.push(on);
    }
    if v.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
        state.push("being deleted".into());
    }
    vec![Remediation { node: node.unwrap_or(name).to_string(), by, state: state.join(", ") }]
}

/// The remediators' signs on `node`: the objects of `remediators` that name it, its remediator
/// taints, and its out-of-service taint when a remediator acts on it (then it is the
/// remediator's: it removes it itself). Empty when nothing acts on it.
pub fn acting_on(remediators: Option<&Remediators>, node: &Node) -> Vec<Remediation> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let mut out: Vec<Remediation> =
        remediators.map(|r| r.objects.iter().filter(|r| r.node == name).cloned().collect()).unwrap_or_default();
    let ts = taints(node);
    for t in ts.iter().filter(|t| t.starts_with(&format!("{REMEDIATION_TAINT}=")) || t.starts_with(FAR_TAINT_OLD)) {
        out.push(Remediation { node: name.to_string(), by: format!("taint {t}"), state: String::new() });
    }
    if !out.is_empty() {
        for t in ts.iter().filter(|t| t.starts_with(OUT_OF_SERVICE_TAINT)) {
            let state = "set or kept by the remediator, which removes it itself".to_string();
            out.push(Remediation { node: name.to_string(), by: format!("taint {t}"), state });
        }
    }
    out
}

/// What a live re-read (or a snapshot) says about remediation, for the safety rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemediationFacts {
    /// Every sign on every node ([`acting_on`]).
    pub signs: Vec<Remediation>,
    /// The kinds that could not be read, with why (whether they act is unknown); not-installed
    /// kinds are not here.
    pub unread: Vec<String>,
}

impl RemediationFacts {
    /// The signs of `remediators` (`None`: not read, then only the taints count) on `nodes`.
    pub fn of<'a>(remediators: Option<&Remediators>, nodes: impl IntoIterator<Item = &'a Node>) -> Self {
        RemediationFacts {
            signs: nodes.into_iter().flat_map(|n| acting_on(remediators, n)).collect(),
            unread: remediators.map(|r| r.unreadable.iter().map(|(_, why)| why.clone()).collect()).unwrap_or_default(),
        }
    }

    /// The signs on `node`.
    pub fn on(&self, node: &str) -> Vec<Remediation> {
        self.signs.iter().filter(|r| r.node == node).cloned().collect()
    }
}

/// One line saying what acts on the node: `automatic remediation acts on node <n>: <sign>; <sign>`.
pub fn describe(node: &str, signs: &[Remediation]) -> String {
    let list: Vec<String> = signs.iter().map(ToString::to_string).collect();
    format!("automatic remediation acts on node {node}: {}", list.join("; "))
}

#[cfg(test)]
#[path = "remediation_tests.rs"]
mod tests;
