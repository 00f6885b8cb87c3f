//! The shared reading of a snapshot that every rule uses: indexes (pods by key, nodes by name,
//! events by involved object: [`Index`], kept between diagnoses), and the judgements with their thresholds (is this pod
//! blocked, is this node lost, is this event recent).

use std::collections::HashSet;
use std::net::IpAddr;

use crate::model::objects::Pod;
use jiff::Timestamp;

use super::events::EventView;
use super::finding::{Evidence, EvidenceSource};
use super::index::Index;
use crate::attribution::{Attributor, Tie};
use crate::config::DiagnoseConfig;
use crate::lineage::{Lineage, VolumeLineage};
use crate::model::ceph::{BlocklistEntry, BlocklistTarget, EntityAddr};
use crate::model::kube::{PodState, Readiness, pod_node, pod_state};
use crate::model::{ImageFacts, ImageRef, Snapshot};
use crate::text::human_age;

/// A node's health as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// `Ready=True`.
    Ready,
    /// Not Ready, but for less than `node_lost_grace_seconds` (or since an unknown time).
    Flapping,
    /// Not Ready for at least the grace.
    Lost,
    /// No Node object of that name.
    Missing,
}

/// Indexes and thresholds over one snapshot. The indexes are an [`Index`] kept between
/// diagnoses; building a `Ctx` costs only the blocklist's digest.
pub struct Ctx<'a> {
    /// The snapshot.
    pub snap: &'a Snapshot,
    /// Its lineage.
    pub lin: &'a Lineage,
    /// Its indexes.
    pub idx: &'a Index,
    /// Thresholds.
    pub cfg: &'a DiagnoseConfig,
    /// The diagnosis clock (live: now; bundle: collection time).
    pub now: Timestamp,
    /// When the Kubernetes objects were observed (`taken_at`, else `now`).
    pub seen: Timestamp,
    /// Who Ceph client addresses belong to ([`crate::attribution`]).
    pub attr: Attributor<'a>,
    /// Blocklist entries read from Ceph: exact addresses, whole hosts, ranges.
    fenced: (HashSet<EntityAddr>, HashSet<IpAddr>, Vec<&'a BlocklistEntry>),
}

impl<'a> Ctx<'a> {
    /// The rules' view of `snap`, whose indexes `idx` holds.
    pub fn new(snap: &'a Snapshot, lin: &'a Lineage, idx: &'a Index, cfg: &'a DiagnoseConfig, now: Timestamp) -> Self {
        let mut fenced = (HashSet::new(), HashSet::new(), vec![]);
        if let Some(Ok(entries)) = snap.ceph.blocklist.as_ref().map(|b| &b.value) {
            // An entry that had expired by the diagnosis clock fences nothing.
            for e in entries.iter().filter(|e| !e.is_expired_at(now)) {
                match &e.target {
                    BlocklistTarget::Addr(a) => match EntityAddr::parse(a) {
                        Some(x) if x.is_whole_host() => {
                            fenced.1.insert(x.ip);
                        }
                        Some(x) => {
                            fenced.0.insert(x);
                        }
                        None => {}
                    },
                    BlocklistTarget::Range(_) => fenced.2.push(e),
                }
            }
        }
        Ctx {
            snap,
            lin,
            idx,
            cfg,
            now,
            seen: snap.taken_at.unwrap_or(now),
            attr: Attributor::new(snap, lin, cfg),
            fenced,
        }
    }

    /// The image of `vol` with its Ceph facts, when `vol` is the volume the lineage gives for the
    /// image (two PVs naming one image: the rules see it through one of them).
    pub fn image_of(&self, vol: &VolumeLineage) -> Option<(&'a ImageRef, &'a ImageFacts)> {
        let image = vol.image.as_ref()?;
        if self.lin.by_image(image).is_none_or(|v| v.pv != vol.pv) {
            return None;
        }
        self.snap.ceph.images.get_key_value(image)
    }

    /// The pod `namespace/name`.
    pub fn pod(&self, key: &str) -> Option<&'a Pod> {
        self.idx.pod(key)
    }

    /// Seconds from `t` to the diagnosis clock.
    pub fn age(&self, t: Timestamp) -> i64 {
        self.now.duration_since(t).as_secs()
    }

    /// Health of node `name`.
    pub fn health(&self, name: &str) -> Health {
        match self.idx.node(name) {
            None => Health::Missing,
            Some((_, r)) if r.is_ready() => Health::Ready,
            Some((_, r)) => match r.since {
                Some(t) if self.age(t) >= self.cfg.node_lost_grace_seconds => Health::Lost,
                // A node that never reported Ready has been down since we know it.
                None if r.status == Readiness::Missing => Health::Lost,
                _ => Health::Flapping,
            },
        }
    }

    /// Lost or missing: its clients are gone, its kubelet will not clean up.
    pub fn is_down(&self, name: &str) -> bool {
        matches!(self.health(name), Health::Lost | Health::Missing)
    }

    /// When node `name` stopped being Ready, if known.
    pub fn down_since(&self, name: &str) -> Option<Timestamp> {
        self.idx.node(name).filter(|(_, r)| !r.is_ready()).and_then(|(_, r)| r.since)
    }

    /// The evidence line for a node's Ready condition (or its absence).
    pub fn node_evidence(&self, name: &str) -> Evidence {
        let text = match self.idx.node(name) {
            None => format!("node {name} does not exist (no Node object)"),
            Some((_, r)) => {
                let since = r.since.map(|t| format!(" for {}", human_age(self.age(t)))).unwrap_or_default();
                let reason = r.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default();
                format!("node {name} Ready={}{since}{reason}", r.status)
            }
        };
        Evidence::new(EvidenceSource::NodeCondition, text, self.seen)
    }

    /// The node a Ceph client address is tied to, and by which proof ([`Attributor::tie`]).
    pub fn node_of_addr(&self, addr: &str) -> Option<Tie> {
        self.attr.tie(addr)
    }

    /// True when a blocklist entry read from Ceph, unexpired at the diagnosis clock, already
    /// fences the client at `addr` (any address of a vector).
    pub fn blocklisted(&self, addr: &str) -> bool {
        let (exact, hosts, ranges) = &self.fenced;
        EntityAddr::parse_all(addr)
            .iter()
            .any(|a| exact.contains(a) || hosts.contains(&a.ip) || ranges.iter().any(|e| e.covers(a)))
    }

    /// True when the pod is Terminating for longer than `terminating_grace_seconds`.
    pub fn terminating_overdue(&self, pod: &Pod) -> bool {
        matches!(pod_state(pod), PodState::Terminating { since } if self.age(since) > self.cfg.terminating_grace_seconds)
    }

    /// True when the pod still has a claim on its volumes: not finished, and not Terminating past
    /// the grace (a pod in its grace period is still unmounting normally).
    pub fn holds_volumes(&self, pod: &Pod) -> bool {
        match pod_state(pod) {
            PodState::Phase(p) if p == "Succeeded" || p == "Failed" => false,
            PodState::Terminating { .. } => !self.terminating_overdue(pod),
            _ => true,
        }
    }

    /// When the pod started waiting for its volumes: it is scheduled and `ContainerCreating` (or
    /// `Pending` without container statuses). The earliest of `creationTimestamp` and
    /// `status.startTime`.
    pub fn waiting_since(&self, pod: &Pod) -> Option<Timestamp> {
        pod_node(pod)?;
        if !is_waiting_for_volumes(pod) {
            return None;
        }
        let created = pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let started = pod.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0);
        match (created, started) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b).or(Some(self.seen)),
        }
    }

    /// Waiting for longer than `creating_grace_seconds`: since when.
    pub fn blocked_since(&self, pod: &Pod) -> Option<Timestamp> {
        self.waiting_since(pod).filter(|&t| self.age(t) >= self.cfg.creating_grace_seconds)
    }

    /// The evidence line for a pod's state.
    pub fn pod_evidence(&self, key: &str, pod: &Pod) -> Evidence {
        let node = pod_node(pod).unwrap_or("<unscheduled>");
        let text = match pod_state(pod) {
            PodState::Terminating { since } if self.age(since) < 0 => {
                format!("pod {key} on {node} Terminating, in its grace period until {since}")
            }
            PodState::Terminating { since } => {
                format!(
                    "pod {key} on {node} Terminating for {} (deletionTimestamp {since})",
                    human_age(self.age(since))
                )
            }
            s => match self.waiting_since(pod) {
                Some(t) => format!("pod {key} on {node} {} for {}", s.label(), human_age(self.age(t))),
                None => format!("pod {key} on {node} {}", s.label()),
            },
        };
        Evidence::new(EvidenceSource::Pod, text + &disruption(pod), self.seen)
    }

    /// Pods (key, pod) that mount `vol`'s claim.
    pub fn pods_of(&self, vol: &'a VolumeLineage) -> impl Iterator<Item = (&'a str, &'a Pod)> + '_ {
        vol.pods.iter().filter_map(|k| Some((k.as_str(), self.pod(k)?)))
    }

    /// Events whose involved object is (`kind`, `namespace/name`), last seen within
    /// `event_max_age_seconds`.
    pub fn recent_events<'s, 'k>(
        &'s self,
        kind: &'k str,
        object: &'k str,
    ) -> impl Iterator<Item = &'a EventView> + use<'s, 'a, 'k> {
        self.idx.events_of(kind, object).filter(|e| self.is_recent(e))
    }

    /// Last seen within `event_max_age_seconds`.
    pub fn is_recent(&self, e: &EventView) -> bool {
        e.last.is_some_and(|t| self.age(t) <= self.cfg.event_max_age_seconds)
    }

    /// Evidence for an event (observed at its last time).
    pub fn event_evidence(&self, e: &EventView) -> Evidence {
        Evidence::new(EvidenceSource::Event, e.line(), e.last.unwrap_or(self.seen))
    }

    /// True when `pod` is on `node`.
    pub fn on_node(pod: &Pod, node: &str) -> bool {
        pod_node(pod) == Some(node)
    }
}

/// `ContainerCreating` (the first waiting reason, as `kubectl get pods` shows it), or `Pending`
/// without any waiting reason; never for a pod being deleted. Allocation-free [`pod_state`].
fn is_waiting_for_volumes(pod: &Pod) -> bool {
    if pod.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let status = pod.status.as_ref();
    let waiting = status.and_then(|s| {
        let init = s.init_container_statuses.iter().flatten();
        let main = s.container_statuses.iter().flatten();
        init.chain(main).find_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.as_deref().filter(|r| !r.is_empty()))
    });
    match waiting {
        Some(r) => r == "ContainerCreating",
        None => matches!(status.and_then(|s| s.phase.as_deref()), Some("Pending") | None),
    }
}

/// True when multi-attach is forbidden for the volume, as the attach-detach controller decides:
/// access modes are given and none is `ReadWriteMany` / `ReadOnlyMany` (seed 001).
pub fn is_rwo(vol: &VolumeLineage) -> bool {
    !vol.access_modes.is_empty() && !vol.access_modes.iter().any(|m| m == "ReadWriteMany" || m == "ReadOnlyMany")
}

/// `; DisruptionTarget <reason>: <message>` when a controller marked the pod for deletion (the
/// taint manager, the pod GC, an eviction), else empty.
fn disruption(pod: &Pod) -> String {
    let Some(c) = pod.status.as_ref().and_then(|s| s.conditions.iter().find(|c| c.status == "True")) else {
        return String::new();
    };
    let reason = c.reason.as_deref().unwrap_or("(no reason)");
    match c.message.as_deref() {
        Some(m) => format!("; DisruptionTarget {reason}: {m}"),
        None => format!("; DisruptionTarget {reason}"),
    }
}
