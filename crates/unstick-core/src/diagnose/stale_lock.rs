//! `stale-lock` (seed 000): an advisory RBD lock held by a node that no longer runs the pod, while
//! a pod of the volume waits on another node.
//!
//! Proof: `rbd lock ls` entry (not an exclusive-lock `auto <cookie>` owner, which a new client
//! breaks by itself), its address mapped to a node by InternalIP (or the node named in
//! `kubelet_lock_magic_<node>`), no pod of the claim holding the volume on that node, and a pod of
//! the claim waiting past `creating_grace_seconds` elsewhere or a recent `is locked by other nodes`
//! event. Locks only block in-tree `kubernetes.io/rbd` mounts, so for CSI volumes the event is
//! required. Healthy look-alike: the lock holder's node runs the pod.

use jiff::Timestamp;

use super::ctx::Ctx;
use super::events::is_locked_by_other_nodes;
use super::finding::{Builder, Evidence, EvidenceSource, Finding, ObjectRef, PatternId, Severity};
use super::index::Index;
use crate::config::DiagnoseConfig;
use crate::lineage::{IN_TREE_RBD, Lineage, VolumeLineage};
use crate::model::Snapshot;
use crate::model::ceph::Lock;

const EXPLANATION: &str = "The in-tree kubernetes.io/rbd plugin takes an advisory RBD lock \
(id kubelet_lock_magic_<node>) when a node maps the image, and refuses to map an image that \
another node has locked (\"rbd: image ... is locked by other nodes\"). When the pod moved and the \
old node never released the lock (it died, or its detach failed), the lock stays behind: the new \
pod waits in ContainerCreating and FailedMount repeats \"timeout expired waiting for volumes to \
attach/mount\". Restarting kubelet does not release it. Removing the lock (`rbd lock rm`) also \
blocklists the old locker's address for an hour, so the old node can no longer write.";

/// Finds stale advisory locks. See the module doc for the evidence required.
pub fn stale_lock(snap: &Snapshot, lin: &Lineage, cfg: &DiagnoseConfig, now: Timestamp) -> Vec<Finding> {
    check(&Ctx::new(snap, lin, &Index::build(snap), cfg, now))
}

/// The node a lock belongs to, with how it is known: its address tied by
/// [`crate::attribution`] (the proof), else the `kubelet_lock_magic_<node>` id.
fn holder_node<'a>(ctx: &Ctx<'a>, lock: &Lock) -> Option<(String, String)> {
    if let Some(t) = ctx.node_of_addr(&lock.address) {
        return Some((t.node, format!("by {}", t.proof)));
    }
    let name = lock.id.strip_prefix("kubelet_lock_magic_")?;
    (ctx.health(name) != super::ctx::Health::Missing).then(|| (name.to_string(), "by the lock id".to_string()))
}

pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    ctx.lin.volumes.iter().flat_map(|v| volume(ctx, v)).collect()
}

/// The findings about one volume's image (a lock on an image no PV uses is no finding).
pub(crate) fn volume(ctx: &Ctx<'_>, vol: &VolumeLineage) -> Vec<Finding> {
    let mut out = vec![];
    {
        let Some((image, facts)) = ctx.image_of(vol) else { return out };
        let Ok(locks) = &facts.locks.value else { return out };
        for lock in locks.iter().filter(|l| !l.id.starts_with("auto ")) {
            let held = holder_node(ctx, lock);
            let holder = held.as_ref().map(|(n, _)| n.clone());
            let held_by_user = ctx
                .pods_of(vol)
                .any(|(_, p)| ctx.holds_volumes(p) && holder.as_deref().is_some_and(|h| Ctx::on_node(p, h)));
            if held_by_user {
                continue;
            }
            let elsewhere = |p: &crate::model::objects::Pod| holder.as_deref().is_none_or(|h| !Ctx::on_node(p, h));
            let blocked: Vec<_> = ctx
                .pods_of(vol)
                .filter(|(_, p)| elsewhere(p))
                .filter_map(|(k, p)| Some((k, p, ctx.blocked_since(p)?)))
                .collect();
            let events: Vec<_> = ctx
                .pods_of(vol)
                .filter(|(_, p)| elsewhere(p) && ctx.waiting_since(p).is_some())
                .flat_map(|(k, _)| ctx.recent_events("Pod", k))
                .filter(|e| is_locked_by_other_nodes(e) && e.has(image.image.as_str()))
                .collect();
            let in_tree = vol.driver == IN_TREE_RBD;
            if events.is_empty() && (blocked.is_empty() || !in_tree) {
                continue;
            }
            let holder_text = match &held {
                Some((n, how)) => format!("node {n} {how}"),
                None => ctx
                    .attr
                    .attribute(&lock.address, &crate::attribution::volume_nodes(vol))
                    .map(|a| a.text())
                    .unwrap_or_else(|| "not an address".into()),
            };
            let first_pod = blocked.first().map(|(k, _, _)| *k).or_else(|| events.first().map(|e| e.object.as_str()));
            let summary = format!(
                "{} cannot map {image}: lock {:?} is held by {} at {} ({holder_text})",
                first_pod.unwrap_or("a pod"),
                lock.id,
                lock.locker,
                lock.address
            );
            let mut b =
                Builder::new(PatternId::StaleLock, Severity::Critical, &format!("{image}#{}", lock.id), summary)
                    .volume(Some(&vol.pv))
                    .node(holder.as_deref())
                    .explanation(EXPLANATION)
                    .evidence(Evidence::new(
                        EvidenceSource::RbdLockLs,
                        format!("{image}: lock id {:?} locker {} address {}", lock.id, lock.locker, lock.address),
                        facts.locks.at,
                    ));
            b = match &holder {
                Some(n) => b.evidence(ctx.node_evidence(n)),
                None => b.evidence(Evidence::new(
                    EvidenceSource::NodeCondition,
                    format!("no proof ties {} to a node: {holder_text}", lock.address),
                    ctx.seen,
                )),
            };
            for (k, p, since) in &blocked {
                b = b.object(ObjectRef::pod(k)).evidence(ctx.pod_evidence(k, p)).since(Some(*since));
            }
            for e in &events {
                b = b.object(ObjectRef::pod(&e.object)).evidence(ctx.event_evidence(e)).since(e.first);
            }
            let timeouts = blocked
                .iter()
                .flat_map(|(k, _, _)| ctx.recent_events("Pod", k))
                .filter(|e| e.reason() == "FailedMount" && e.message().contains("timeout expired waiting for volumes"));
            b = b.evidences(timeouts.map(|e| ctx.event_evidence(e)).collect::<Vec<_>>());
            b = b
                .objects(vol.pvc.as_deref().map(ObjectRef::pvc))
                .object(ObjectRef::pv(&vol.pv))
                .object(ObjectRef::image(image));
            if let Some(n) = &holder {
                b = b.object(ObjectRef::node(n));
            }
            out.push(b.build());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::tests::{at, facts, run_one, snap_with};
    use crate::fixtures::{self, node, pod, pvc, rbd_pv};

    fn lock(addr: &str) -> Lock {
        Lock { id: "kubelet_lock_magic_node1".into(), locker: "client.24128".into(), address: addr.into() }
    }

    #[test]
    fn seed_000_found() {
        let f = run_one(&fixtures::incidents(), PatternId::StaleLock);
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.node.as_deref(), Some("k8s-node-lost"));
        assert_eq!(f.volume.as_deref(), Some("index-api-pv"));
        assert!(f.mentions(super::super::ObjectKind::Pod, Some("incident-000"), "index-api-3362878852-pzxm8"));
        assert!(
            f.evidence
                .iter()
                .any(|e| e.source == EvidenceSource::RbdLockLs && e.text.contains("127.0.0.1:0/1864102866"))
        );
        assert!(
            f.evidence.iter().any(|e| e.source == EvidenceSource::Event && e.text.contains("is locked by other nodes"))
        );
        assert_eq!(f.playbook, "remove-stale-lock");
    }

    /// A lock held by the node that runs the pod is how in-tree RBD works.
    #[test]
    fn lock_of_the_running_node_is_healthy() {
        let s = snap_with(
            vec![node("node1", "10.47.136.60", "True", &at(-86400), &[])],
            vec![pod("ns", "api-1", "node1", "claim", "Running", &at(-3600))],
            vec![pvc("ns", "claim", "pv1")],
            vec![rbd_pv("pv1", "ns", "claim", "mioss", "index-api-image")],
            vec![],
        );
        let mut s = s;
        s.ceph.images.insert(
            crate::model::ImageRef::new("mioss", "index-api-image"),
            facts(vec![], vec![lock("10.47.136.60:0/1864102866")]),
        );
        assert!(run_one(&s, PatternId::StaleLock).is_empty());
    }

    /// A lock left behind but nobody waiting (pod only just created) is not a finding yet.
    #[test]
    fn young_pod_and_no_event_is_not_a_finding() {
        let mut s = snap_with(
            vec![
                node("node1", "10.47.136.60", "True", &at(-86400), &[]),
                node("node2", "10.46.181.146", "True", &at(-86400), &[]),
            ],
            vec![pod("ns", "api-2", "node2", "claim", "ContainerCreating", &at(-30))],
            vec![pvc("ns", "claim", "pv1")],
            vec![rbd_pv("pv1", "ns", "claim", "mioss", "index-api-image")],
            vec![],
        );
        s.ceph.images.insert(
            crate::model::ImageRef::new("mioss", "index-api-image"),
            facts(vec![], vec![lock("10.47.136.60:0/1")]),
        );
        assert!(run_one(&s, PatternId::StaleLock).is_empty());
        // ... but after the grace it is (in-tree volume, pod blocked elsewhere).
        s.pods = vec![pod("ns", "api-2", "node2", "claim", "ContainerCreating", &at(-600))];
        assert_eq!(run_one(&s, PatternId::StaleLock).len(), 1);
        // An exclusive-lock owner is never a stale advisory lock.
        let mut l = lock("10.47.136.60:0/1");
        l.id = "auto 140645683434688".into();
        s.ceph.images.insert(crate::model::ImageRef::new("mioss", "index-api-image"), facts(vec![], vec![l]));
        assert!(run_one(&s, PatternId::StaleLock).is_empty());
    }
}
