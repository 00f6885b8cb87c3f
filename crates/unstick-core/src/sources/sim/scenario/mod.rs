//! Training scenarios: TOML files (`assets/scenarios/*.toml`, embedded in the binary, or a user's
//! file) describing a briefing, the initial cluster and Ceph state in compact form, goals, hints
//! that unlock over simulated time, the reference path and what risky actions would have done.
//! [`Scenario::world`] (in `build.rs`) expands the compact form into full Kubernetes objects and Ceph state.
//!
//! Errors name the file, the key and the line (`stale-lock.toml: line 12: pod[1].node = "x": no
//! [[node]] named "x"`). The format is documented in `docs/scenarios.md`.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::world::Timings;
use crate::model::step_type::StepType;

mod values;
pub use self::values::{Ago, MAX_AGO_SECONDS, MAX_SIZE_MIB, MAX_SPEED, check_speed, parse_duration, valid_name};

mod specs;
pub use self::specs::{
    AttachmentSpec, BlocklistSpec, CephSpec, ClientSpec, ControllerSpec, DaemonSetSpec, Difficulty, EventSpec,
    GoalSpec, HintSpec, HolderSpec, NodeSpec, OperationSpec, PodSpec, ReferenceSpec, RiskSpec, UnregisteredSpec,
    VolumeSpec,
};

/// The scenarios shipped in the binary: `(file name, TOML text)`.
pub const EMBEDDED: [(&str, &str); 9] = [
    ("stale-lock.toml", include_str!("../../../../../../assets/scenarios/stale-lock.toml")),
    ("lost-node-multi-attach.toml", include_str!("../../../../../../assets/scenarios/lost-node-multi-attach.toml")),
    ("dead-node-watcher.toml", include_str!("../../../../../../assets/scenarios/dead-node-watcher.toml")),
    ("unmap-busy.toml", include_str!("../../../../../../assets/scenarios/unmap-busy.toml")),
    ("same-node-restage.toml", include_str!("../../../../../../assets/scenarios/same-node-restage.toml")),
    ("mass-unmap-busy.toml", include_str!("../../../../../../assets/scenarios/mass-unmap-busy.toml")),
    ("node-loss-five-volumes.toml", include_str!("../../../../../../assets/scenarios/node-loss-five-volumes.toml")),
    ("driver-not-registered.toml", include_str!("../../../../../../assets/scenarios/driver-not-registered.toml")),
    ("rwo-claim-shared.toml", include_str!("../../../../../../assets/scenarios/rwo-claim-shared.toml")),
];

/// A scenario file with an error: which file, and the message (with key and line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ScenarioError {
    /// File name or path.
    pub file: String,
    /// What is wrong, naming the key and the line.
    pub message: String,
}

/// A whole scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Id used on the command line (`unstick train stale-lock`).
    pub name: String,
    /// One line.
    pub title: String,
    /// The seed write-up it follows (`000` … `004`), if any.
    pub seed: Option<String>,
    /// Difficulty.
    pub difficulty: Difficulty,
    /// Pattern ids the trainee should find.
    pub patterns: Vec<String>,
    /// Simulated seconds per real second (default 5).
    #[serde(default = "five")]
    pub speed: f64,
    /// Kubernetes version the simulated API server reports (`1.20`; 1.26+ acts on the
    /// out-of-service taint).
    #[serde(default = "v120")]
    pub api_version: String,
    /// Shown before the start.
    pub briefing: String,
    /// Reaction delays.
    #[serde(default)]
    pub timings: Timings,
    /// Ceph behaviour.
    pub ceph: Option<CephSpec>,
    /// Nodes.
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeSpec>,
    /// Volumes.
    #[serde(default, rename = "volume")]
    pub volumes: Vec<VolumeSpec>,
    /// Pods.
    #[serde(default, rename = "pod")]
    pub pods: Vec<PodSpec>,
    /// Controllers.
    #[serde(default, rename = "controller")]
    pub controllers: Vec<ControllerSpec>,
    /// Attachments.
    #[serde(default, rename = "attachment")]
    pub attachments: Vec<AttachmentSpec>,
    /// Events.
    #[serde(default, rename = "event")]
    pub events: Vec<EventSpec>,
    /// Watchers.
    #[serde(default, rename = "watcher")]
    pub watchers: Vec<ClientSpec>,
    /// Locks.
    #[serde(default, rename = "lock")]
    pub locks: Vec<ClientSpec>,
    /// Blocklist entries.
    #[serde(default, rename = "blocklist")]
    pub blocklist: Vec<BlocklistSpec>,
    /// DaemonSets.
    #[serde(default, rename = "daemonset")]
    pub daemonsets: Vec<DaemonSetSpec>,
    /// Busy mounts.
    #[serde(default, rename = "holder")]
    pub holders: Vec<HolderSpec>,
    /// Teardowns in flight.
    #[serde(default, rename = "operation")]
    pub operations: Vec<OperationSpec>,
    /// Nodes without the CSI driver's registration.
    #[serde(default, rename = "unregistered")]
    pub unregistered: Vec<UnregisteredSpec>,
    /// Goals.
    #[serde(rename = "goal")]
    pub goals: Vec<GoalSpec>,
    /// Hints.
    #[serde(default, rename = "hint")]
    pub hints: Vec<HintSpec>,
    /// Reference path (may be empty: the debrief then only reports time, skips and risks).
    #[serde(default, rename = "reference")]
    pub reference: Vec<ReferenceSpec>,
    /// Risks.
    #[serde(default, rename = "risk")]
    pub risks: Vec<RiskSpec>,
}

fn five() -> f64 {
    5.0
}

fn v120() -> String {
    "1.20".into()
}

/// Line (1-based) of the `n`-th (0-based) `[[table]]` header in `text`.
fn table_line(text: &str, table: &str, n: usize) -> usize {
    let header = format!("[[{table}]]");
    text.lines().enumerate().filter(|(_, l)| l.trim() == header).nth(n).map(|(i, _)| i + 1).unwrap_or(0)
}

impl Scenario {
    /// Parses and checks a scenario. `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let fail = |message: String| ScenarioError { file: file.to_string(), message };
        let s: Scenario = crate::config::toml_from_str(text).map_err(|e| {
            let key = if e.key.is_empty() { String::new() } else { format!("{}: ", e.key) };
            fail(format!("{}{key}{}", e.position(), e.message))
        })?;
        s.check(text).map_err(fail)?;
        Ok(s)
    }

    /// An embedded scenario by name.
    pub fn embedded(name: &str) -> Option<Result<Scenario, ScenarioError>> {
        EMBEDDED
            .iter()
            .map(|(f, t)| Scenario::parse(f, t))
            .find(|s| s.as_ref().map(|s| s.name == name).unwrap_or(false))
    }

    /// Every embedded scenario (an error for a broken one is a bug caught by the tests).
    pub fn all_embedded() -> Vec<Result<Scenario, ScenarioError>> {
        EMBEDDED.iter().map(|(f, t)| Scenario::parse(f, t)).collect()
    }

    fn check(&self, text: &str) -> Result<(), String> {
        let nodes: BTreeSet<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        let pvs: BTreeSet<&str> = self.volumes.iter().map(|v| v.pv.as_str()).collect();
        let images: BTreeSet<&str> = self.volumes.iter().map(|v| v.image.as_str()).collect();
        let claims: BTreeSet<(&str, &str)> =
            self.volumes.iter().map(|v| (v.namespace.as_str(), v.claim.as_str())).collect();
        let err = |table: &str, i: usize, key: &str, val: &str, why: &str| {
            format!("line {}: {table}[{i}].{key} = {val:?}: {why}", table_line(text, table, i))
        };
        if !valid_name(&self.name) {
            return Err(format!(
                "name = {:?}: must be 1 to 64 of a-z, A-Z, 0-9, '-', '_' and '.', not starting with '.' (it names the training directory)",
                crate::text::sanitize(&self.name)
            ));
        }
        check_speed(self.speed).map_err(|e| format!("speed = {}: {e}", self.speed))?;
        if let Some(c) = &self.ceph
            && !(0..=86_400).contains(&c.watch_timeout_seconds)
        {
            return Err(format!(
                "ceph.watch_timeout_seconds = {}: must be between 0 and 86400",
                c.watch_timeout_seconds
            ));
        }
        let t = &self.timings;
        for (k, v) in [
            ("terminate_seconds", t.terminate_seconds),
            ("recreate_seconds", t.recreate_seconds),
            ("mount_seconds", t.mount_seconds),
            ("out_of_service_seconds", t.out_of_service_seconds),
        ] {
            if !(0..=86_400).contains(&v) {
                return Err(format!("timings.{k} = {v}: must be between 0 and 86400"));
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            if !(1..=1_000_000).contains(&e.count) {
                return Err(err("event", i, "count", &e.count.to_string(), "must be between 1 and 1000000"));
            }
        }
        if self.api_version().is_none() {
            return Err(format!("api_version = {:?}: expected MAJOR.MINOR like \"1.20\"", self.api_version));
        }
        for (i, v) in self.volumes.iter().enumerate() {
            if !matches!(v.driver.as_str(), "csi" | "in-tree") {
                return Err(err("volume", i, "driver", &v.driver, "expected \"csi\" or \"in-tree\""));
            }
            if !matches!(v.access.as_str(), "RWO" | "RWX" | "ROX") {
                return Err(err("volume", i, "access", &v.access, "expected RWO, RWX or ROX"));
            }
            if !(1..=MAX_SIZE_MIB).contains(&v.size_mib) {
                return Err(err(
                    "volume",
                    i,
                    "size_mib",
                    &v.size_mib.to_string(),
                    "must be between 1 and 16777216 (16 TiB)",
                ));
            }
            if v.image.split('/').count() != 2 {
                return Err(err("volume", i, "image", &v.image, "expected pool/image"));
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.ip.parse::<std::net::IpAddr>().is_err() {
                return Err(err("node", i, "ip", &n.ip, "not an IP address"));
            }
            if let Some(pv) = n.in_use.iter().find(|p| !pvs.contains(p.as_str())) {
                return Err(err("node", i, "in_use", pv, "no [[volume]] with that pv"));
            }
        }
        for (i, p) in self.pods.iter().enumerate() {
            if !nodes.contains(p.node.as_str()) {
                return Err(err("pod", i, "node", &p.node, "no [[node]] with that name"));
            }
            if let Some(c) = &p.claim
                && !claims.contains(&(p.namespace.as_str(), c.as_str()))
            {
                return Err(err("pod", i, "claim", c, "no [[volume]] with that claim in the pod's namespace"));
            }
            if !matches!(p.state.as_str(), "Running" | "ContainerCreating" | "Terminating") {
                return Err(err("pod", i, "state", &p.state, "expected Running, ContainerCreating or Terminating"));
            }
            if let Some(c) = &p.controller
                && !self.controllers.iter().any(|x| x.name == *c && x.namespace == p.namespace)
            {
                return Err(err("pod", i, "controller", c, "no [[controller]] with that name in the pod's namespace"));
            }
        }
        for (i, c) in self.controllers.iter().enumerate() {
            if !matches!(c.kind.as_str(), "ReplicaSet" | "StatefulSet") {
                return Err(err("controller", i, "kind", &c.kind, "expected ReplicaSet or StatefulSet"));
            }
            if !nodes.contains(c.node.as_str()) {
                return Err(err("controller", i, "node", &c.node, "no [[node]] with that name"));
            }
        }
        for (i, a) in self.attachments.iter().enumerate() {
            if !pvs.contains(a.pv.as_str()) {
                return Err(err("attachment", i, "pv", &a.pv, "no [[volume]] with that pv"));
            }
            if !nodes.contains(a.node.as_str()) {
                return Err(err("attachment", i, "node", &a.node, "no [[node]] with that name"));
            }
        }
        for (table, list) in [("watcher", &self.watchers), ("lock", &self.locks)] {
            for (i, c) in list.iter().enumerate() {
                if !images.contains(c.image.as_str()) {
                    return Err(err(table, i, "image", &c.image, "no [[volume]] with that image"));
                }
                match (&c.node, &c.address) {
                    (Some(n), None) if !nodes.contains(n.as_str()) => {
                        return Err(err(table, i, "node", n, "no [[node]] with that name"));
                    }
                    (Some(_), None) => {}
                    (None, Some(a)) if crate::model::ceph::EntityAddr::parse(a).is_none() => {
                        return Err(err(table, i, "address", a, "expected IP:PORT/NONCE"));
                    }
                    (None, Some(_)) => {}
                    _ => {
                        return Err(format!(
                            "line {}: {table}[{i}]: set exactly one of node and address",
                            table_line(text, table, i)
                        ));
                    }
                }
            }
        }
        for (i, d) in self.daemonsets.iter().enumerate() {
            if let Some(u) = &d.update_strategy
                && !matches!(u.as_str(), "RollingUpdate" | "OnDelete")
            {
                return Err(err("daemonset", i, "update_strategy", u, "expected RollingUpdate or OnDelete"));
            }
        }
        for (i, h) in self.holders.iter().enumerate() {
            if !self.daemonsets.iter().any(|d| format!("{}/{}", d.namespace, d.name) == h.daemonset) {
                return Err(err("holder", i, "daemonset", &h.daemonset, "no [[daemonset]] with that namespace/name"));
            }
            if !pvs.contains(h.pv.as_str()) {
                return Err(err("holder", i, "pv", &h.pv, "no [[volume]] with that pv"));
            }
        }
        for (i, o) in self.operations.iter().enumerate() {
            if !pvs.contains(o.pv.as_str()) {
                return Err(err("operation", i, "pv", &o.pv, "no [[volume]] with that pv"));
            }
            if !nodes.contains(o.node.as_str()) {
                return Err(err("operation", i, "node", &o.node, "no [[node]] with that name"));
            }
        }
        for (i, u) in self.unregistered.iter().enumerate() {
            if !nodes.contains(u.node.as_str()) {
                return Err(err("unregistered", i, "node", &u.node, "no [[node]] with that name"));
            }
            let ds = self.daemonsets.iter().find(|d| format!("{}/{}", d.namespace, d.name) == u.daemonset);
            if !ds.is_some_and(|d| d.nodes.contains(&u.node)) {
                return Err(err(
                    "unregistered",
                    i,
                    "daemonset",
                    &u.daemonset,
                    "no [[daemonset]] of that name runs on the node",
                ));
            }
        }
        for (i, g) in self.goals.iter().enumerate() {
            let set = [&g.pod_running, &g.finding_gone, &g.node_unfenced].iter().filter(|x| x.is_some()).count();
            if set != 1 {
                return Err(format!(
                    "line {}: goal[{i}]: set exactly one of pod_running, finding_gone, node_unfenced",
                    table_line(text, "goal", i)
                ));
            }
            if let Some(p) = &g.finding_gone
                && crate::remedy::playbook::pattern_of(p).is_none()
            {
                return Err(err("goal", i, "finding_gone", p, "not a pattern id"));
            }
        }
        for (i, r) in self.reference.iter().enumerate() {
            let kinds = crate::remedy::action::kind::WRITE_ACTION_KINDS;
            if let Some(a) = &r.action
                && !kinds.contains(&a.as_str())
            {
                return Err(err("reference", i, "action", a, &format!("expected one of {}", kinds.join(", "))));
            }
            if r.action.is_some() != (r.kind == StepType::Act) || (r.namespace.is_some() && r.action.is_none()) {
                let why = "an Act step names its action (and only it may name a namespace)";
                return Err(err("reference", i, "action", r.action.as_deref().unwrap_or(""), why));
            }
        }
        for (i, r) in self.risks.iter().enumerate() {
            if !RISK_KINDS.contains(&r.kind.as_str()) {
                return Err(err("risk", i, "kind", &r.kind, &format!("expected one of {}", RISK_KINDS.join(", "))));
            }
        }
        if self.goals.is_empty() {
            return Err("at least one [[goal]] is required".into());
        }
        Ok(())
    }

    /// `(major, minor)` of `api_version`.
    pub fn api_version(&self) -> Option<(u32, u32)> {
        let (a, b) = self.api_version.split_once('.')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    }
}

/// The `kind`s a `[[risk]]` may have.
pub const RISK_KINDS: [&str; 5] = ["ready-node", "wide-blocklist", "live-watcher", "has-watchers", "state-changed"];

#[cfg(test)]
mod tests;
