//! The panes of the console: which there are ([`Pane`]), the subject the Ceph and Events panes
//! follow ([`Subject`]), each pane's own state and keys ([`state::PaneView`]: selection or scroll
//! offset, column offset, filter) and its drawing from a read-only [`ctx::ViewCtx`] ([`draw`]): the list
//! panes ([`lists`], their columns in [`columns`]), [`findings`], [`ceph`] and [`events`].

pub mod ceph;
pub mod ceph_status;
pub mod columns;
pub mod ctx;
pub mod draw;
pub mod events;
pub mod findings;
pub mod lists;
pub mod state;

use std::collections::BTreeMap;

use unstick_core::diagnose::{Finding, ObjectKind};
use unstick_core::lineage::Lineage;
use unstick_core::model::ImageRef;
use unstick_core::sources::kube::{SourceState, WatchedKind};

/// The panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    /// Findings of the diagnosis, most severe first.
    Findings,
    /// Nodes: Ready, InternalIP, taints, volumes.
    Nodes,
    /// Pods: troubled ones by default.
    Pods,
    /// PVC → PV → image lineage.
    Volumes,
    /// Watchers, locks, blocklist of the selected image.
    Ceph,
    /// Events of the selected object.
    Events,
}

impl Pane {
    /// Tab order.
    pub const ALL: [Pane; 6] = [Pane::Findings, Pane::Nodes, Pane::Pods, Pane::Volumes, Pane::Ceph, Pane::Events];

    /// Title shown on the pane border and the tab bar.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Findings => "Findings",
            Pane::Nodes => "Nodes",
            Pane::Pods => "Pods",
            Pane::Volumes => "Volumes",
            Pane::Ceph => "Ceph",
            Pane::Events => "Events",
        }
    }

    /// Position in [`Pane::ALL`].
    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }
}

/// The object the Ceph and Events panes follow: the last one selected in a list pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// Nothing selected yet.
    None,
    /// A node by name.
    Node(String),
    /// A pod by `namespace/name`.
    Pod(String),
    /// A volume by PV name.
    Volume(String),
}

/// The subject a finding puts in the Ceph and Events panes: its volume, else its node, else its
/// first pod.
pub(super) fn subject_of_finding(f: &Finding) -> Subject {
    if let Some(pv) = &f.volume {
        return Subject::Volume(pv.clone());
    }
    if let Some(n) = &f.node {
        return Subject::Node(n.clone());
    }
    f.objects
        .iter()
        .find(|o| o.kind == ObjectKind::Pod)
        .map(|o| Subject::Pod(format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name)))
        .unwrap_or(Subject::None)
}

/// The RBD image the Ceph pane shows for `subject`: the subject volume's, or the subject pod's
/// first RBD volume's.
pub fn image_of(subject: &Subject, lineage: &Lineage) -> Option<ImageRef> {
    match subject {
        Subject::Volume(pv) => lineage.by_pv(pv)?.image.clone(),
        Subject::Pod(key) => lineage.volumes_of_pod(key).find_map(|v| v.image.clone()),
        _ => None,
    }
}

/// The state of the kinds `pane` shows: the worst one (forbidden > error > stale > connecting);
/// `None` for the panes without a kind of their own (Ceph, Findings).
pub fn pane_state(kube_state: &BTreeMap<WatchedKind, SourceState>, pane: Pane) -> Option<(WatchedKind, &SourceState)> {
    let kinds: &[WatchedKind] = match pane {
        Pane::Nodes => &[WatchedKind::Node],
        Pane::Pods => &[WatchedKind::Pod],
        Pane::Volumes => &[WatchedKind::Pvc, WatchedKind::Pv, WatchedKind::VolumeAttachment],
        Pane::Events => &[WatchedKind::Event],
        Pane::Ceph | Pane::Findings => return None,
    };
    let rank = |s: &SourceState| match s {
        SourceState::Forbidden { .. } => 4,
        SourceState::Error(_) => 3,
        SourceState::Stale { .. } => 2,
        SourceState::Connecting => 1,
        SourceState::Live => 0,
    };
    kinds.iter().filter_map(|k| kube_state.get(k).map(|s| (*k, s))).max_by_key(|(_, s)| rank(s))
}
