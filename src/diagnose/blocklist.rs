//! `blocklist-leftover`: a node that is Ready again but still fenced by a blocklist entry without a
//! nonce (`IP:0/0`, every client on that host) or a CIDR range covering its InternalIP.
//!
//! A nonce-specific entry (`IP:port/nonce`) is NOT a leftover: it blocks one old client instance
//! only, expires (default 1 h), and `rbd lock rm` itself adds one for the lock holder. Entries for
//! IPs of nodes that are not Ready are expected fencing.

use jiff::Timestamp;

use super::ctx::{Ctx, Health};
use super::events::is_fenced_map_failure;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::Lineage;
use crate::model::Snapshot;
use crate::model::ceph::BlocklistTarget;
use crate::model::kube::{internal_ips, pod_node};

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
        .collect();
    if wide.is_empty() {
        return vec![];
    }
    let ready: Vec<(&str, Vec<std::net::IpAddr>)> = ctx
        .snap
        .nodes
        .iter()
        .filter_map(|n| Some((n.metadata.name.as_deref()?, n)))
        .filter(|(name, _)| ctx.health(name) == Health::Ready)
        .map(|(name, n)| (name, internal_ips(n)))
        .collect();
    let mut out = vec![];
    for entry in wide {
        let covered: Vec<(&str, std::net::IpAddr)> = ready
            .iter()
            .filter_map(|(name, ips)| Some((*name, ips.iter().copied().find(|ip| entry.covers_whole_host(*ip))?)))
            .collect();
        if covered.is_empty() {
            continue;
        }
        let names: Vec<&str> = covered.iter().map(|(n, _)| *n).collect();
        let rbd_pods: Vec<&str> = ctx
            .lin
            .volumes
            .iter()
            .filter(|v| v.image.is_some())
            .flat_map(|v| ctx.pods_of(v))
            .filter(|(_, p)| pod_node(p).is_some_and(|n| names.contains(&n)) && ctx.holds_volumes(p))
            .map(|(k, _)| k)
            .collect();
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
                format!("node {n} InternalIP {ip} is covered by {}", entry.text()),
                ctx.seen,
            ));
        }
        for k in rbd_pods.iter().take(20) {
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
