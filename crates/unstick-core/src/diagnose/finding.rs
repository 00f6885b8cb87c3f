//! What a diagnosis produces: [`Finding`]s with the objects involved and the evidence that proves
//! them. Serialized as documented in `docs/diagnose-json.md`.

use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

use crate::model::ImageRef;
use crate::text::sanitize;

/// The failure patterns of `DESIGN.md`, serialized as their kebab-case ids (`stale-lock`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatternId {
    /// An advisory RBD lock held by a node that no longer runs the pod (seed 000).
    StaleLock,
    /// An RWO volume still attached to a NotReady / missing node (seeds 001, 002).
    MultiAttachNodeLost,
    /// A watcher on the image from a node that is down (seed 002).
    DeadNodeWatcher,
    /// A Ready node still maps the image while no pod there uses it (seed 002, node alive).
    LiveNodeStaleMap,
    /// `rbd unmap` fails with exit status 16: something holds the device (seed 003: another mount
    /// namespace).
    UnmapBusy,
    /// A pod recreated on the same node while the old one's unmount/detach is in progress (seed 004).
    SameNodeRestage,
    /// A VolumeAttachment whose deletion waits forever on its finalizer (node gone).
    VaFinalizerStuck,
    /// A Ready node still fenced by a whole-host or range blocklist entry.
    BlocklistLeftover,
    /// A pod stuck on a Ceph volume for which no rule recognised a cause: what was checked and
    /// found normal, the latest events verbatim, and the next reads (`diagnose/unexplained.rs`).
    Unexplained,
    /// The node's Ceph client is refused by cephx: key missing, wrong or without caps, or the
    /// CSI secret missing (`(1) Operation not permitted`, `(13) Permission denied`, no keyring).
    CephAuthFailed,
    /// The node's kernel cannot map the image: features it does not support (`RBD image feature
    /// set mismatch`, `(6) No such device or address`), a kernel too old, no `rbd` module.
    KernelCannotMap,
    /// The node cannot reach the monitors or OSDs (`(110) Connection timed out`, `ret=-110`).
    CephUnreachable,
    /// The volume's filesystem cannot be mounted: wrong fs type / bad superblock, `fsck` errors,
    /// XFS duplicate UUID.
    FilesystemError,
    /// The CSI driver is not registered with the node's kubelet (node plugin not running there).
    CsiDriverNotRegistered,
    /// An RWO claim used by pods on two healthy nodes: a workload defect, never fenced.
    RwoClaimShared,
    /// A volume expansion that failed or waits (`VolumeResizeFailed`, `FileSystemResizeFailed`).
    ResizeStuck,
    /// The attach step failed: a VolumeAttachment's `status.attachError` / `detachError`, or the
    /// external attacher timing out.
    AttachError,
    /// An in-tree `kubernetes.io/rbd` volume on a kubelet that no longer has that plugin.
    InTreeRbdUnsupported,
    /// The node's Ceph client is blocklisted: a map or I/O fails with `(108) Cannot send after
    /// transport endpoint shutdown`, and no blocklist entry read explains it further.
    ClientBlocklisted,
    /// The RBD image or CephFS subvolume the PV names does not exist (`(2) No such file or
    /// directory` on map/stage, `does not exist`).
    BackingImageMissing,
    /// A pod left unscheduled because its ReadWriteOncePod claim is in use by another pod (the
    /// scheduler's `… ReadWriteOncePod access mode` reason): a workload defect, never fenced.
    RwopClaimInUse,
    /// A CephFS volume whose node client the MDS evicted (and blocklisted): the stale kernel mount
    /// answers `stat …/globalmount: permission denied` or ESHUTDOWN (108).
    CephfsClientEvicted,
}

impl PatternId {
    /// Every pattern: `DESIGN.md`'s eight in table order, then the stuck-pod causes (issue 24)
    /// and `unexplained`.
    pub const ALL: [PatternId; 22] = [
        PatternId::StaleLock,
        PatternId::MultiAttachNodeLost,
        PatternId::DeadNodeWatcher,
        PatternId::LiveNodeStaleMap,
        PatternId::UnmapBusy,
        PatternId::SameNodeRestage,
        PatternId::VaFinalizerStuck,
        PatternId::BlocklistLeftover,
        PatternId::CephAuthFailed,
        PatternId::KernelCannotMap,
        PatternId::CephUnreachable,
        PatternId::FilesystemError,
        PatternId::CsiDriverNotRegistered,
        PatternId::RwoClaimShared,
        PatternId::ResizeStuck,
        PatternId::AttachError,
        PatternId::InTreeRbdUnsupported,
        PatternId::ClientBlocklisted,
        PatternId::BackingImageMissing,
        PatternId::RwopClaimInUse,
        PatternId::CephfsClientEvicted,
        PatternId::Unexplained,
    ];

    /// The id as printed (`stale-lock`).
    pub fn as_str(self) -> &'static str {
        match self {
            PatternId::StaleLock => "stale-lock",
            PatternId::MultiAttachNodeLost => "multi-attach-node-lost",
            PatternId::DeadNodeWatcher => "dead-node-watcher",
            PatternId::LiveNodeStaleMap => "live-node-stale-map",
            PatternId::UnmapBusy => "unmap-busy",
            PatternId::SameNodeRestage => "same-node-restage",
            PatternId::VaFinalizerStuck => "va-finalizer-stuck",
            PatternId::BlocklistLeftover => "blocklist-leftover",
            PatternId::Unexplained => "unexplained",
            PatternId::CephAuthFailed => "ceph-auth-failed",
            PatternId::KernelCannotMap => "kernel-cannot-map",
            PatternId::CephUnreachable => "ceph-unreachable",
            PatternId::FilesystemError => "filesystem-error",
            PatternId::CsiDriverNotRegistered => "csi-driver-not-registered",
            PatternId::RwoClaimShared => "rwo-claim-shared",
            PatternId::ResizeStuck => "resize-stuck",
            PatternId::AttachError => "attach-error",
            PatternId::InTreeRbdUnsupported => "in-tree-rbd-unsupported",
            PatternId::ClientBlocklisted => "client-blocklisted",
            PatternId::BackingImageMissing => "backing-image-missing",
            PatternId::RwopClaimInUse => "rwop-claim-in-use",
            PatternId::CephfsClientEvicted => "cephfs-client-evicted",
        }
    }

    /// True for the patterns about one stuck pod or claim that [`super::stuck`] reports: the
    /// causes it names and `unexplained`. A finding of the eight `DESIGN.md` patterns about the
    /// same volume or pod hides them.
    pub fn is_stuck_cause(self) -> bool {
        !matches!(
            self,
            PatternId::StaleLock
                | PatternId::MultiAttachNodeLost
                | PatternId::DeadNodeWatcher
                | PatternId::LiveNodeStaleMap
                | PatternId::UnmapBusy
                | PatternId::SameNodeRestage
                | PatternId::VaFinalizerStuck
                | PatternId::BlocklistLeftover
        )
    }

    /// The id of the playbook that fixes this pattern (see `docs/diagnose-json.md`); `none` for
    /// the patterns with no safe write (read-only guidance in the explanation).
    pub fn playbook(self) -> &'static str {
        match self {
            PatternId::StaleLock => "remove-stale-lock",
            PatternId::MultiAttachNodeLost => "release-lost-node-attachment",
            PatternId::DeadNodeWatcher => "blocklist-dead-watcher",
            PatternId::LiveNodeStaleMap => "unmap-on-live-node",
            PatternId::UnmapBusy => "release-busy-device",
            PatternId::SameNodeRestage => "wait-for-restage",
            PatternId::VaFinalizerStuck => "remove-va-finalizer",
            PatternId::BlocklistLeftover => "remove-blocklist-leftover",
            PatternId::CsiDriverNotRegistered => "restart-node-plugin",
            PatternId::RwoClaimShared => "rwo-claim-guidance",
            _ => NO_PLAYBOOK,
        }
    }
}

/// The playbook id of the patterns with no safe write ([`PatternId::playbook`]).
pub const NO_PLAYBOOK: &str = "none";

impl fmt::Display for PatternId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How urgent a finding is. Orders most urgent first (`Critical < Warning < Info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A workload is blocked now (a pod cannot start, a node is fenced).
    Critical,
    /// Something is wrong and will block the next pod, or may resolve itself.
    Warning,
    /// Worth knowing; nothing is blocked.
    Info,
}

impl Severity {
    /// `critical`, `warning`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// The kind of an object a finding involves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ObjectKind {
    /// core/v1 Pod (namespaced).
    Pod,
    /// core/v1 PersistentVolumeClaim (namespaced).
    PersistentVolumeClaim,
    /// core/v1 PersistentVolume.
    PersistentVolume,
    /// storage.k8s.io/v1 VolumeAttachment.
    VolumeAttachment,
    /// core/v1 Node.
    Node,
    /// An RBD image: `pool` is set, `namespace` is the RADOS namespace (if any), `name` the image.
    RbdImage,
    /// A `ceph osd blocklist` entry: `name` is the address or range as Ceph prints it.
    BlocklistEntry,
}

/// One object a finding involves. The UI marks rows whose object appears here.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ObjectRef {
    /// What kind of object.
    pub kind: ObjectKind,
    /// Kubernetes namespace for namespaced kinds; the RADOS namespace for an `RbdImage` in a
    /// non-default RADOS namespace; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name (image name for `RbdImage`).
    pub name: String,
    /// Pool, for `RbdImage` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

impl ObjectRef {
    fn new(kind: ObjectKind, namespace: Option<&str>, name: &str) -> Self {
        Self { kind, namespace: namespace.map(sanitize), name: sanitize(name), pool: None }
    }

    /// A namespaced object from its `namespace/name` key (a key without `/` is taken as a name).
    fn from_key(kind: ObjectKind, key: &str) -> Self {
        match key.split_once('/') {
            Some((ns, name)) => Self::new(kind, Some(ns), name),
            None => Self::new(kind, None, key),
        }
    }

    /// A Pod from its `namespace/name` key.
    pub fn pod(key: &str) -> Self {
        Self::from_key(ObjectKind::Pod, key)
    }

    /// A PersistentVolumeClaim from its `namespace/name` key.
    pub fn pvc(key: &str) -> Self {
        Self::from_key(ObjectKind::PersistentVolumeClaim, key)
    }

    /// A PersistentVolume.
    pub fn pv(name: &str) -> Self {
        Self::new(ObjectKind::PersistentVolume, None, name)
    }

    /// A VolumeAttachment.
    pub fn va(name: &str) -> Self {
        Self::new(ObjectKind::VolumeAttachment, None, name)
    }

    /// A Node.
    pub fn node(name: &str) -> Self {
        Self::new(ObjectKind::Node, None, name)
    }

    /// An RBD image.
    pub fn image(image: &ImageRef) -> Self {
        let ns = (!image.namespace.is_empty()).then_some(image.namespace.as_str());
        Self { pool: Some(sanitize(&image.pool)), ..Self::new(ObjectKind::RbdImage, ns, &image.image) }
    }

    /// A blocklist entry (address or range text).
    pub fn blocklist(entry: &str) -> Self {
        Self::new(ObjectKind::BlocklistEntry, None, entry)
    }

    /// `Kind ns/name`, `Kind name`, or `RbdImage pool/[ns/]image`, for text output.
    pub fn label(&self) -> String {
        let kind = match self.kind {
            ObjectKind::Pod => "Pod",
            ObjectKind::PersistentVolumeClaim => "PVC",
            ObjectKind::PersistentVolume => "PV",
            ObjectKind::VolumeAttachment => "VolumeAttachment",
            ObjectKind::Node => "Node",
            ObjectKind::RbdImage => "RbdImage",
            ObjectKind::BlocklistEntry => "BlocklistEntry",
        };
        let mut parts: Vec<&str> = vec![];
        if let Some(p) = &self.pool {
            parts.push(p);
        }
        if let Some(n) = &self.namespace {
            parts.push(n);
        }
        parts.push(&self.name);
        format!("{kind} {}", parts.join("/"))
    }
}

/// Where a piece of evidence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceSource {
    /// A core/v1 Event (message decoded and sanitized).
    Event,
    /// `rbd status` watchers.
    RbdStatus,
    /// `rbd lock ls` entries.
    RbdLockLs,
    /// `ceph osd blocklist ls` entries.
    Blocklist,
    /// A node's `Ready` condition (or its absence).
    NodeCondition,
    /// A node's `status.volumesAttached` / `volumesInUse`.
    NodeStatus,
    /// A VolumeAttachment's spec, status or deletion.
    VolumeAttachment,
    /// A pod's state (phase, waiting reason, deletion).
    Pod,
    /// A PersistentVolume's spec (access modes, driver).
    PersistentVolume,
    /// `unstick probe` output from a node.
    Probe,
    /// The API server's `GET /version` (what the cluster's release can do).
    ServerVersion,
    /// A Medik8s remediator's object or taint acting on the node ([`crate::model::remediation`]).
    Remediator,
}

/// One line that proves (part of) a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// Where it comes from.
    pub source: EvidenceSource,
    /// The line itself, sanitized: an event message, a watcher, a condition, ...
    pub text: String,
    /// When the fact was observed: an event's last time, the time Ceph was read, the snapshot time.
    pub observed_at: Timestamp,
}

impl Evidence {
    /// Evidence with sanitized `text`.
    pub fn new(source: EvidenceSource, text: impl AsRef<str>, observed_at: Timestamp) -> Self {
        Self { source, text: sanitize(text.as_ref()), observed_at }
    }
}

/// One diagnosed problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id: `<pattern>:<subject>` (`stale-lock:replicapool/index-api-image`).
    pub id: String,
    /// Which pattern.
    pub pattern: PatternId,
    /// How urgent.
    pub severity: Severity,
    /// One line: what is stuck and why.
    pub summary: String,
    /// When the problem started, as far as the evidence shows (oldest blocked pod, node lost
    /// since, first event); used for sorting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    /// The PersistentVolume this finding is about, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// The node this finding is about (lock holder, lost node, node with the busy device), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The block device this finding is about (`/dev/rbd0`; the busy device of unmap-busy), as
    /// read from the evidence when the finding was made. Not in the JSON output.
    #[serde(skip)]
    pub device: Option<String>,
    /// Every object involved (pods, claim, volume, image, nodes, attachments, entries).
    pub objects: Vec<ObjectRef>,
    /// The lines that prove it.
    pub evidence: Vec<Evidence>,
    /// The mechanism in plain language (what the seeds explain).
    pub explanation: String,
    /// Id of the playbook that fixes it ([`PatternId::playbook`]).
    pub playbook: String,
    /// Ceph reads this finding rests on whose latest attempts failed: the finding is kept on the
    /// last successful read (a failed read is not an empty list) but is not re-verified. Empty
    /// (and absent from JSON) when everything was re-read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<UnverifiedRead>,
}

/// A read a finding rests on that could not be repeated (see [`Finding::unverified`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnverifiedRead {
    /// The read (`rbd status replicapool/img`, `rbd lock ls …`, `ceph osd blocklist ls`).
    pub read: String,
    /// When the first failed attempt after the last success finished (RFC 3339).
    pub since: Timestamp,
    /// The latest failure, sanitized.
    pub error: String,
}

impl UnverifiedRead {
    /// `unverified since HH:MM:SSZ (error)`, the line the console and text output show.
    pub fn line(&self) -> String {
        format!("{} unverified since {} ({})", self.read, self.since.strftime("%H:%M:%SZ"), self.error)
    }
}

impl Finding {
    /// True when `obj` is one of the objects involved.
    pub fn involves(&self, obj: &ObjectRef) -> bool {
        self.objects.contains(obj)
    }

    /// True when the finding involves an object of `kind` named `name` (and in `namespace`, when
    /// given): what a pane needs to mark a row.
    pub fn mentions(&self, kind: ObjectKind, namespace: Option<&str>, name: &str) -> bool {
        self.objects
            .iter()
            .any(|o| o.kind == kind && o.name == name && (namespace.is_none() || o.namespace.as_deref() == namespace))
    }
}

/// Collects the parts of a finding; [`Builder::build`] dedups objects and sanitizes text.
#[derive(Debug)]
pub(crate) struct Builder {
    f: Finding,
}

impl Builder {
    pub(crate) fn new(pattern: PatternId, severity: Severity, subject: &str, summary: String) -> Self {
        Builder {
            f: Finding {
                id: format!("{pattern}:{}", sanitize(subject)),
                pattern,
                severity,
                summary: sanitize(&summary),
                since: None,
                volume: None,
                node: None,
                device: None,
                objects: vec![],
                evidence: vec![],
                explanation: String::new(),
                playbook: pattern.playbook().to_string(),
                unverified: vec![],
            },
        }
    }

    pub(crate) fn since(mut self, t: Option<Timestamp>) -> Self {
        self.f.since = match (self.f.since, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self
    }

    pub(crate) fn volume(mut self, pv: Option<&str>) -> Self {
        self.f.volume = pv.map(sanitize);
        self
    }

    pub(crate) fn node(mut self, node: Option<&str>) -> Self {
        self.f.node = node.map(sanitize);
        self
    }

    pub(crate) fn device(mut self, device: Option<&str>) -> Self {
        self.f.device = device.map(sanitize);
        self
    }

    pub(crate) fn object(mut self, o: ObjectRef) -> Self {
        if !self.f.objects.contains(&o) {
            self.f.objects.push(o);
        }
        self
    }

    pub(crate) fn objects(mut self, os: impl IntoIterator<Item = ObjectRef>) -> Self {
        for o in os {
            self = self.object(o);
        }
        self
    }

    pub(crate) fn evidence(mut self, e: Evidence) -> Self {
        if !self.f.evidence.contains(&e) {
            self.f.evidence.push(e);
        }
        self
    }

    pub(crate) fn evidences(mut self, es: impl IntoIterator<Item = Evidence>) -> Self {
        for e in es {
            self = self.evidence(e);
        }
        self
    }

    pub(crate) fn explanation(mut self, text: impl Into<String>) -> Self {
        self.f.explanation = text.into();
        self
    }

    pub(crate) fn build(self) -> Finding {
        self.f
    }
}
