//! `dead-node-watcher` and `live-node-stale-map` (seed 002): a watcher on an RBD image means some
//! client has it open (mapped); a new map is refused while one exists ("rbd image ... is still
//! being used"). Which of the two patterns depends on the watcher's node.
//!
//! Common proof: `rbd status` watcher whose address is tied to a node by any proof of
//! [`crate::attribution`] (named in the evidence), not already fenced by a blocklist entry, and no pod of the claim holding the volume on that node.
//! - dead-node-watcher: the node is lost (NotReady past `node_lost_grace_seconds`). Critical when a
//!   pod of the claim waits elsewhere (or a `still being used` event), warning otherwise.
//! - live-node-stale-map: the node is Ready; requires a pod of the claim blocked elsewhere, a
//!   recent `still being used` / `Multi-Attach` event, or the claim's pods on that node all
//!   Terminating past the grace. Healthy look-alike: the watcher's node runs the pod.
//! - For a shared (RWX/ROX) volume, which several nodes may map at once, a pod waiting elsewhere
//!   counts only with a recent `still being used` event.

use std::collections::BTreeMap;

use crate::model::objects::Pod;
use jiff::Timestamp;

use super::ctx::{Ctx, Health, is_rwo};
use super::events::{EventView, is_fenced_map_failure, is_multi_attach, is_still_being_used};
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::attribution::Tie;
use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::ceph::Watcher;
use crate::model::{ImageFacts, ImageRef, Snapshot};

const DEAD_EXPLANATION: &str = "A watcher on an RBD image is a client that has it open: a node that \
mapped it (krbd) or a librbd process. Before mapping an image for a new pod, the RBD plugin checks \
`rbd status` and refuses while any watcher exists (\"rbd image ... is still being used\"), so an \
image is never mapped read-write twice. When the node holding the watcher dies, nobody unmaps: the \
watcher lingers until the client's session times out, and may be re-established if the node is \
only partitioned. Blocklisting the exact watcher address (`ceph osd blocklist add IP:port/nonce`) \
fences that client: the OSDs drop its watch at once and reject its writes. Remove the entry later, \
once the node has been rebooted or drained.";

const LIVE_EXPLANATION: &str = "A watcher on an RBD image is a client that has it open. This one is \
on a node that is Ready but runs no pod of the claim: the device is still mapped (and perhaps \
mounted) there after the pod left, e.g. because a container still uses /dev/rbdN or kubelet failed \
to unmount. Because the RBD plugin refuses to map an image that has a watcher (\"is still being \
used\"), the pod elsewhere cannot start. Fix it on the node: find the users of the device \
(`unstick probe --device rbdN`, `grep rbdN /proc/*/task/*/mountinfo`), stop them, umount, \
`rbd unmap`; then verify the watcher is gone.";

/// Finds watchers from lost nodes. See the module doc for the evidence required.
pub fn dead_node_watcher(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now), PatternId::DeadNodeWatcher)
}

/// Finds watchers from Ready nodes that run no pod of the claim. See the module doc.
pub fn live_node_stale_map(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now), PatternId::LiveNodeStaleMap)
}

/// What blocks a volume's other pods: (pod key, pod, blocked since) and recent events.
struct Blocked<'a> {
    pods: Vec<(&'a str, &'a Pod, Option<Timestamp>)>,
    events: Vec<&'a EventView>,
}

fn blocked_elsewhere<'a>(ctx: &'a Ctx<'a>, vol: &'a VolumeLineage, node: &str, image: &ImageRef) -> Blocked<'a> {
    let mut pods = vec![];
    let mut events = vec![];
    for (k, p) in ctx.pods_of(vol).filter(|(_, p)| !Ctx::on_node(p, node)) {
        if ctx.waiting_since(p).is_none() {
            continue;
        }
        let evs: Vec<_> = ctx
            .recent_events("Pod", k)
            .filter(|e| {
                (is_still_being_used(e) && e.has(image.image.as_str()))
                    || is_multi_attach(e)
                    || is_fenced_map_failure(e)
            })
            .collect();
        // A shared (RWX/ROX) volume may be mapped on several nodes at once: there a slow pod
        // elsewhere is only blamed on the watcher with an event saying so.
        let since = ctx.blocked_since(p).filter(|_| is_rwo(vol));
        if since.is_some() || !evs.is_empty() {
            pods.push((k, p, since));
            events.extend(evs);
        }
    }
    Blocked { pods, events }
}

pub(crate) fn check(ctx: &Ctx<'_>, pattern: PatternId) -> Vec<Finding> {
    let mut out = orphans(ctx, pattern);
    out.extend(ctx.lin.volumes.iter().flat_map(|v| volume(ctx, v, pattern)));
    out
}

/// The findings about one volume's image.
pub(crate) fn volume(ctx: &Ctx<'_>, vol: &VolumeLineage, pattern: PatternId) -> Vec<Finding> {
    match ctx.image_of(vol) {
        Some((image, facts)) => of_image(ctx, image, facts, Some(vol), pattern),
        None => vec![],
    }
}

/// The findings about images no PV uses (only a lost node's watcher is one).
pub(crate) fn orphans(ctx: &Ctx<'_>, pattern: PatternId) -> Vec<Finding> {
    if pattern != PatternId::DeadNodeWatcher {
        return vec![];
    }
    let images = ctx.snap.ceph.images.iter().filter(|(i, _)| ctx.lin.by_image(i).is_none());
    images.flat_map(|(i, f)| of_image(ctx, i, f, None, pattern)).collect()
}

fn of_image(
    ctx: &Ctx<'_>,
    image: &ImageRef,
    facts: &ImageFacts,
    vol: Option<&VolumeLineage>,
    pattern: PatternId,
) -> Vec<Finding> {
    let mut out = vec![];
    {
        let Ok(watchers) = &facts.watchers.value else { return out };
        let mut by_node: BTreeMap<String, Vec<(&Watcher, Tie)>> = BTreeMap::new();
        for w in watchers.iter().filter(|w| !ctx.blocklisted(&w.address)) {
            if let Some(t) = ctx.node_of_addr(&w.address) {
                by_node.entry(t.node.clone()).or_default().push((w, t));
            }
        }
        for (node, ws) in &by_node {
            let node = node.as_str();
            let health = ctx.health(node);
            let f = match (pattern, health) {
                (PatternId::DeadNodeWatcher, Health::Lost) => dead(ctx, image, facts, vol, node, ws),
                (PatternId::LiveNodeStaleMap, Health::Ready) => match vol {
                    Some(vol) => live(ctx, image, facts, vol, node, ws),
                    None => None,
                },
                _ => None,
            };
            out.extend(f);
        }
    }
    out
}

fn watcher_evidence(image: &ImageRef, facts: &ImageFacts, ws: &[(&Watcher, Tie)]) -> Vec<Evidence> {
    ws.iter()
        .map(|(w, t)| {
            let text = format!("{image}: watcher={} client.{} cookie={} ({t})", w.address, w.client, w.cookie);
            Evidence::new(EvidenceSource::RbdStatus, text, facts.watchers.at)
        })
        .collect()
}

fn common(
    ctx: &Ctx<'_>,
    mut b: Builder,
    image: &ImageRef,
    vol: Option<&VolumeLineage>,
    node: &str,
    blocked: Option<&Blocked<'_>>,
) -> Builder {
    b = b.evidence(ctx.node_evidence(node)).object(ObjectRef::node(node)).object(ObjectRef::image(image));
    if let Some(bl) = blocked {
        for (k, p, since) in &bl.pods {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p)).since(*since);
        }
        for e in &bl.events {
            b = b.evidence(ctx.event_evidence(e)).since(e.first);
        }
    }
    if let Some(vol) = vol {
        for (k, p) in ctx.pods_of(vol).filter(|(_, p)| Ctx::on_node(p, node)) {
            b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p));
        }
        b = b.objects(vol.pvc.as_deref().map(ObjectRef::pvc)).object(ObjectRef::pv(&vol.pv)).volume(Some(&vol.pv));
    }
    b
}

fn dead(
    ctx: &Ctx<'_>,
    image: &ImageRef,
    facts: &ImageFacts,
    vol: Option<&VolumeLineage>,
    node: &str,
    ws: &[(&Watcher, Tie)],
) -> Option<Finding> {
    let blocked = vol.map(|v| blocked_elsewhere(ctx, v, node, image));
    let is_blocking = blocked.as_ref().is_some_and(|b| !b.pods.is_empty() || !b.events.is_empty());
    let severity = if is_blocking { Severity::Critical } else { Severity::Warning };
    let down = ctx.down_since(node).map(|t| crate::text::human_age(ctx.age(t))).unwrap_or_else(|| "?".into());
    let addrs: Vec<&str> = ws.iter().map(|(w, _)| w.address.as_str()).collect();
    let summary = match blocked.as_ref().and_then(|b| b.pods.first()) {
        Some((k, _, _)) => {
            format!("{k} cannot map {image}: watcher {} is on node {node}, not Ready for {down}", addrs.join(", "))
        }
        None => format!("{image} is still open on node {node} (not Ready for {down}): watcher {}", addrs.join(", ")),
    };
    let b = Builder::new(PatternId::DeadNodeWatcher, severity, &format!("{image}@{node}"), summary)
        .node(Some(node))
        .explanation(DEAD_EXPLANATION)
        .since(ctx.down_since(node))
        .evidences(watcher_evidence(image, facts, ws));
    Some(common(ctx, b, image, vol, node, blocked.as_ref()).build())
}

fn live(
    ctx: &Ctx<'_>,
    image: &ImageRef,
    facts: &ImageFacts,
    vol: &VolumeLineage,
    node: &str,
    ws: &[(&Watcher, Tie)],
) -> Option<Finding> {
    let here: Vec<(&str, &Pod)> = ctx.pods_of(vol).filter(|(_, p)| Ctx::on_node(p, node)).collect();
    if here.iter().any(|(_, p)| ctx.holds_volumes(p)) {
        return None; // the node runs a pod of the claim: its watcher is the pod's own map
    }
    let blocked = blocked_elsewhere(ctx, vol, node, image);
    let overdue = !here.is_empty();
    if blocked.pods.is_empty() && blocked.events.is_empty() && !overdue {
        return None;
    }
    let severity =
        if blocked.pods.is_empty() && blocked.events.is_empty() { Severity::Warning } else { Severity::Critical };
    let addrs: Vec<&str> = ws.iter().map(|(w, _)| w.address.as_str()).collect();
    let summary = match blocked.pods.first() {
        Some((k, _, _)) => format!(
            "{k} cannot map {image}: node {node} (Ready) still has it open ({}) but runs no pod of the claim",
            addrs.join(", ")
        ),
        None => format!(
            "node {node} (Ready) still has {image} open ({}) though its pod is stuck Terminating",
            addrs.join(", ")
        ),
    };
    let b = Builder::new(PatternId::LiveNodeStaleMap, severity, &format!("{image}@{node}"), summary)
        .node(Some(node))
        .explanation(LIVE_EXPLANATION)
        .evidences(watcher_evidence(image, facts, ws));
    Some(common(ctx, b, image, Some(vol), node, Some(&blocked)).build())
}
