//! `blocklist-leftover`: a node that is Ready again but still fenced by a blocklist entry without a
//! nonce (`IP:0/0`, every client on that host) or a CIDR range covering its InternalIP.
//!
//! A nonce-specific entry (`IP:port/nonce`) is NOT a leftover: it blocks one old client instance
//! only, expires (default 1 h), and `rbd lock rm` itself adds one for the lock holder. Entries for
//! IPs of nodes that are not Ready are expected fencing. Deliberate fences are not leftovers
//! either: an entry a csi-addons NetworkFence in state `Fenced` owns (its CIDR, or a whole host
//! inside it; [`crate::model::fence`]), an entry a node's CSIAddonsNode lists among its fence
//! clients ([`crate::model::csiaddons_node`]), and ceph-csi's own out-of-service fence (a whole-host
//! entry for the client address its image metadata records for a node that still has the
//! out-of-service taint: ceph-csi blocklists it when the taint comes and lifts it itself).

use jiff::Timestamp;

use super::ctx::{Ctx, Health};
use super::events::is_fenced_map_failure;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::model::ceph::{BlocklistTarget, EntityAddr};
use crate::model::key_of;
use crate::model::kube::{internal_ips, pod_node};
use std::net::IpAddr;

const EXPLANATION: &str = "`ceph osd blocklist` makes the OSDs refuse a client. An entry with a \
nonce (IP:port/nonce) fences one client instance; an entry without one (IP:0/0, what `blocklist add \
IP` stores) or a CIDR range (`blocklist range add`) fences every client on the host, including the \
RBD mappings of pods that start there later: their I/O fails with \"connection was shutdown\" (errno \
108). After a node has been fenced and recovered, such an entry must be removed (`ceph osd blocklist \
rm IP:0/0` or `ceph osd blocklist range rm CIDR`); a blocklisted client stays dead until it \
reconnects, so pods on the node may need a restart afterwards.";

/// Finds whole-host / range blocklist entries that fence Ready nodes. See the module doc.
pub fn blocklist_leftover(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now))
}

/// The findings. A whole-host entry's node is found by its IP ([`Lineage::node_for_ip`]); only
/// a range entry (or two nodes sharing an InternalIP) makes it read every node. The RBD pods of
/// a fenced node are found through the pods on it ([`Index::pods_on`]), not by walking every
/// volume.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(bl) = &ctx.snap.ceph.blocklist else { return vec![] };
    let Ok(entries) = &bl.value else { return vec![] };
    // Only whole-host or range entries can be leftovers; most entries are nonce-specific. An
    // entry that had expired by the diagnosis clock fences nothing.
    let wide: Vec<_> = entries
        .iter()
        .filter(|e| !e.is_expired_at(ctx.now))
        .filter(|e| match &e.target {
            BlocklistTarget::Addr(a) => crate::model::ceph::EntityAddr::parse(a).is_some_and(|x| x.is_whole_host()),
            BlocklistTarget::Range(_) => true,
        })
        .filter(|e| deliberate(ctx, e).is_none())
        .collect();
    if wide.is_empty() {
        return vec![];
    }
    // the Ready nodes with their InternalIPs, read only for a range entry (or when two nodes
    // share an address): a whole-host entry's node is looked up by its IP
    let mut ready: Option<Vec<(&str, Vec<IpAddr>)>> = None;
    let mut out = vec![];
    for entry in wide {
        let host = match &entry.target {
            BlocklistTarget::Addr(a) if ctx.lin.ips_unique() => EntityAddr::parse(a).map(|x| x.ip),
            _ => None,
        };
        let covered: Vec<(String, IpAddr)> = match host {
            Some(ip) => {
                // a node's own address, else any other proof (a plugin pod's IP, the metadata)
                let node = ctx
                    .lin
                    .node_for_ip(ip)
                    .map(str::to_string)
                    .or_else(|| ctx.attr.tie(&ip.to_string()).map(|t| t.node));
                let node = node.filter(|n| !n.is_empty() && ctx.health(n) == Health::Ready);
                node.map(|n| (n, ip)).into_iter().collect()
            }
            None => ready
                .get_or_insert_with(|| ready_nodes(ctx))
                .iter()
                .filter_map(|(name, ips)| {
                    Some((name.to_string(), ips.iter().copied().find(|ip| entry.covers_whole_host(*ip))?))
                })
                .collect(),
        };
        if covered.is_empty() {
            continue;
        }
        let names: Vec<&str> = covered.iter().map(|(n, _)| n.as_str()).collect();
        let rbd_pods = rbd_pods_on(ctx, &names);
        let severity = if rbd_pods.is_empty() { Severity::Warning } else { Severity::Critical };
        let kind = match entry.target {
            BlocklistTarget::Addr(_) => "whole-host entry",
            BlocklistTarget::Range(_) => "range",
        };
        let summary = format!(
            "Ready node {} is still fenced by blocklist {kind} {}: every RBD client there is refused{}",
            names.join(", "),
            entry.text(),
            if rbd_pods.is_empty() { String::new() } else { format!(" ({} pod(s) with RBD volumes)", rbd_pods.len()) }
        );
        let until = entry.until.as_deref().map(|u| format!(" until {u}")).unwrap_or_default();
        let mut b = Builder::new(PatternId::BlocklistLeftover, severity, entry.text(), summary)
            .node(names.first().copied())
            .explanation(EXPLANATION)
            .object(ObjectRef::blocklist(entry.text()))
            .evidence(Evidence::new(
                EvidenceSource::Blocklist,
                format!("blocklist {kind} {}{until}", entry.text()),
                bl.at,
            ));
        for (n, ip) in &covered {
            b = b.object(ObjectRef::node(n)).evidence(ctx.node_evidence(n)).evidence(Evidence::new(
                EvidenceSource::NodeStatus,
                format!("node {n} address {ip} is covered by {}", entry.text()),
                ctx.seen,
            ));
        }
        let cnodes = ctx.snap.csiaddons_nodes.as_deref().unwrap_or_default();
        if let Some(n) = crate::model::csiaddons_node::covering(cnodes, entry) {
            b = b.evidence(Evidence::new(
                EvidenceSource::Blocklist,
                format!(
                    "{} covers node {}'s csi-addons fence client (CSIAddonsNode {}) but no NetworkFence owns it: \
                     left by a NetworkFence deleted without unfencing, or by hand",
                    entry.text(),
                    n.node_id,
                    n.key()
                ),
                bl.at,
            ));
        }
        for k in rbd_pods.iter().map(String::as_str).take(20) {
            b = b.object(ObjectRef::pod(k));
        }
        // Maps refused with ESHUTDOWN on the fenced nodes: the entry's effect, seen by kubelet.
        let fenced_maps =
            ctx.idx.scanned_events().filter(|e| is_fenced_map_failure(e) && ctx.is_recent(e)).filter(|e| {
                let pod_node = (e.kind() == "Pod").then(|| ctx.pod(&e.object)).flatten().and_then(pod_node);
                pod_node.or(e.host()).is_some_and(|n| names.contains(&n))
            });
        for e in fenced_maps.take(20) {
            b = b.evidence(ctx.event_evidence(e));
        }
        out.push(b.build());
    }
    out
}

/// Who fenced `entry` on purpose, if someone did: `NetworkFence <name>` or `ceph-csi (node <n> is
/// out of service)`. A CSIAddonsNode's fence client is not proof of a fence: every node lists its
/// client whether or not anyone fences it, and an entry a NetworkFence left behind when it was
/// deleted without unfencing (csi-addons v0.14.0 does not unfence on delete) is a leftover.
pub(crate) fn deliberate(ctx: &Ctx<'_>, entry: &crate::model::ceph::BlocklistEntry) -> Option<String> {
    let fences = ctx.snap.network_fences.as_deref().unwrap_or_default();
    if let Some(f) = crate::model::fence::owner_of(fences, entry) {
        return Some(format!("NetworkFence {}", f.name));
    }
    let BlocklistTarget::Addr(a) = &entry.target else { return None };
    let ip = EntityAddr::parse(a).filter(EntityAddr::is_whole_host)?.ip;
    let metas = ctx.snap.ceph.image_meta.values().filter_map(|m| m.value.as_ref().ok());
    let node = metas.flat_map(crate::model::ceph::client_addresses).find(|c| c.ip == ip)?.node;
    let (n, _) = ctx.idx.node(&node)?;
    let tainted = crate::model::kube::taints(n).iter().any(|t| t.starts_with(crate::model::kube::OUT_OF_SERVICE_TAINT));
    tainted.then(|| format!("ceph-csi (node {node} is out of service)"))
}

/// The Ready nodes (named ones, in the snapshot's order) with their InternalIPs.
fn ready_nodes<'a>(ctx: &Ctx<'a>) -> Vec<(&'a str, Vec<IpAddr>)> {
    ctx.snap
        .nodes
        .iter()
        .filter_map(|n| Some((n.metadata.name.as_deref()?, n)))
        .filter(|(name, _)| ctx.health(name) == Health::Ready)
        .map(|(name, n)| (name, internal_ips(n)))
        .collect()
}

/// The pods (`namespace/name`) on the nodes `names` that hold RBD volumes, once per RBD volume
/// they mount, in the volumes' order then the pods' (the order of a walk over every volume's
/// pods).
fn rbd_pods_on(ctx: &Ctx<'_>, names: &[&str]) -> Vec<String> {
    let mut found: Vec<(usize, String)> = vec![];
    for pod in names.iter().flat_map(|n| ctx.idx.pods_on(n)).filter(|p| ctx.holds_volumes(p)) {
        let key = key_of(&pod.metadata);
        for &i in ctx.lin.volume_indices_of_pod(&key) {
            if ctx.lin.volumes[i].image.is_some() {
                found.push((i, key.clone()));
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}
