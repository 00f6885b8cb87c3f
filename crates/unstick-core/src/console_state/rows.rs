//! Which objects each list pane shows, in order: the filter and the "troubled pods only" toggle
//! applied to the snapshot. Computed once per change (not per frame); views format only the rows
//! that fit on screen.

use std::sync::Arc;

use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::model::kube::{internal_ips, node_ready, pod_node, pod_state};
use crate::model::objects::{Node, Pod};

/// Indices of the visible rows of each list pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    /// Into `Snapshot::nodes`.
    pub nodes: Vec<usize>,
    /// Into `Snapshot::pods`.
    pub pods: Vec<usize>,
    /// Into `Lineage::volumes`.
    pub volumes: Vec<usize>,
    /// Into the app's findings (the Findings pane's filter applied).
    pub findings: Vec<usize>,
}

/// Case-insensitive substring filter; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter(String);

impl Filter {
    /// A filter for `text` (trimmed, lower-cased).
    pub fn new(text: &str) -> Self {
        Filter(text.trim().to_lowercase())
    }

    /// The filter text.
    pub fn text(&self) -> &str {
        &self.0
    }

    /// True when the filter is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when any of `fields` contains the filter text.
    pub fn matches<'a>(&self, fields: impl IntoIterator<Item = &'a str>) -> bool {
        self.0.is_empty() || fields.into_iter().any(|f| f.to_lowercase().contains(&self.0))
    }
}

/// Filters per list pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// Nodes pane filter (name, IP, Ready status).
    pub nodes: Filter,
    /// Pods pane filter (namespace, name, status, node).
    pub pods: Filter,
    /// Volumes pane filter (PVC, PV, driver, image).
    pub volumes: Filter,
    /// `:ns NAME`: only this namespace's pods and claims (`None`: every namespace read).
    pub namespace: Option<String>,
}

/// The findings the Findings pane lists: those whose id, pattern, severity, summary, node or
/// volume contains `filter`, as indexes into `findings`.
pub fn finding_rows(findings: &[crate::diagnose::Finding], filter: &Filter) -> Vec<usize> {
    let fields = |f: &crate::diagnose::Finding| {
        [f.id.clone(), f.pattern.as_str().to_string(), f.severity.as_str().to_string(), f.summary.clone()]
            .into_iter()
            .chain(f.node.clone())
            .chain(f.volume.clone())
            .collect::<Vec<_>>()
    };
    (0..findings.len())
        .filter(|&i| filter.is_empty() || filter.matches(fields(&findings[i]).iter().map(String::as_str)))
        .collect()
}

/// Computes the visible rows (the findings' are [`finding_rows`]).
pub fn compute(snap: &Snapshot, lineage: &Lineage, filters: &Filters, all_pods: bool) -> Rows {
    let nodes = node_rows(&snap.nodes, filters);
    let volumes = lineage
        .volumes
        .iter()
        .enumerate()
        .filter(|(_, v)| {
            let in_ns = filters.namespace.as_deref().is_none_or(|ns| {
                v.pvc.as_deref().and_then(|c| c.split_once('/')).is_some_and(|(pvc_ns, _)| pvc_ns == ns)
            });
            in_ns
                && (filters.volumes.is_empty() || {
                    let image = v.image.as_ref().map(|i| i.spec()).unwrap_or_default();
                    filters.volumes.matches([
                        v.pvc.as_deref().unwrap_or(""),
                        v.pv.as_str(),
                        v.driver.as_str(),
                        image.as_str(),
                    ])
                })
        })
        .map(|(i, _)| i)
        .collect();
    Rows { nodes, pods: pod_rows(&snap.pods, filters, all_pods), volumes, findings: vec![] }
}

/// The nodes pane's rows (indices into `nodes`).
pub fn node_rows(nodes: &[Arc<Node>], filters: &Filters) -> Vec<usize> {
    nodes.iter().enumerate().filter(|(_, n)| node_shown(n, filters)).map(|(i, _)| i).collect()
}

/// Patches the nodes pane's rows after the nodes at positions `at` were replaced in place, as
/// [`patch_pod_rows`] does for pods.
pub fn patch_node_rows(rows: &mut Vec<usize>, nodes: &[Arc<Node>], at: &[usize], filters: &Filters) {
    patch(rows, at, |i| nodes.get(i).map(|n| node_shown(n, filters)));
}

/// True when the nodes pane shows `n`: it matches the filter (name, Ready status, IPs).
fn node_shown(n: &Node, filters: &Filters) -> bool {
    // the fields are read only for a filter (no allocation per node otherwise)
    filters.nodes.is_empty() || {
        let ips: Vec<String> = internal_ips(n).iter().map(|i| i.to_string()).collect();
        let ready = node_ready(n).status.as_str();
        filters.nodes.matches(
            [n.metadata.name.as_deref().unwrap_or(""), ready].into_iter().chain(ips.iter().map(String::as_str)),
        )
    }
}

/// Each position of `at` enters or leaves `rows` (ascending) as `shown` says now (`None`: no
/// such object, left as it is).
fn patch(rows: &mut Vec<usize>, at: &[usize], shown: impl Fn(usize) -> Option<bool>) {
    for &i in at {
        let Some(show) = shown(i) else { continue };
        match (rows.binary_search(&i), show) {
            (Ok(k), false) => {
                rows.remove(k);
            }
            (Err(k), true) => rows.insert(k, i),
            _ => {}
        }
    }
}

/// The pods pane's rows (indices into `pods`).
pub fn pod_rows(pods: &[Arc<Pod>], filters: &Filters, all_pods: bool) -> Vec<usize> {
    pods.iter().enumerate().filter(|(_, p)| pod_shown(p, filters, all_pods)).map(|(i, _)| i).collect()
}

/// Patches the pods pane's rows `rows` (indices into `pods`, ascending) after the pods at
/// positions `at` were replaced in place (nothing added or removed): each of them enters or
/// leaves the rows as the filters now say. The cost is the changed pods' filter and a search in
/// the rows, not a pass over every pod (issue 13).
pub fn patch_pod_rows(rows: &mut Vec<usize>, pods: &[Arc<Pod>], at: &[usize], filters: &Filters, all_pods: bool) {
    patch(rows, at, |i| pods.get(i).map(|p| pod_shown(p, filters, all_pods)));
}

/// True when the pods pane shows `p`: troubled (unless every pod is shown), in the `:ns`
/// namespace, matching the filter (namespace, name, status, node).
fn pod_shown(p: &Pod, filters: &Filters, all_pods: bool) -> bool {
    if !all_pods && !is_troubled(p) {
        return false;
    }
    filters.namespace.as_deref().is_none_or(|ns| p.metadata.namespace.as_deref() == Some(ns))
        && (filters.pods.is_empty() || {
            let state = pod_state(p);
            filters.pods.matches([
                p.metadata.namespace.as_deref().unwrap_or(""),
                p.metadata.name.as_deref().unwrap_or(""),
                state.label().as_str(),
                pod_node(p).unwrap_or(""),
            ])
        })
}

/// [`crate::model::kube::PodState::is_troubled`] of [`pod_state`] without building the state (no
/// allocation): the filter runs on every pod after every change (issue 13).
fn is_troubled(pod: &Pod) -> bool {
    if pod.metadata.deletion_timestamp.is_some() {
        return true;
    }
    let status = pod.status.as_ref();
    let waiting = status.is_some_and(|s| {
        let all = s.init_container_statuses.iter().flatten().chain(s.container_statuses.iter().flatten());
        all.filter_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.as_deref()).any(|r| !r.is_empty())
    });
    waiting || !matches!(status.and_then(|s| s.phase.as_deref()), Some("Running" | "Succeeded"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_troubled_agrees_with_pod_state() {
        let snap = crate::fixtures::incidents();
        let mut seen = [false; 2];
        for p in &snap.pods {
            let t = super::pod_state(p).is_troubled();
            assert_eq!(super::is_troubled(p), t, "{:?}", p.metadata.name);
            seen[usize::from(t)] = true;
        }
        assert_eq!(seen, [true, true], "both kinds of pod in the fixture");
    }
}
