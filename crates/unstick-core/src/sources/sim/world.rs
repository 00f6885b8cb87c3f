//! The state of a simulated cluster: Kubernetes objects ([`Store`]), Ceph ([`CephState`]), the
//! node-side facts no API shows (which host mounts hold a device busy), the clock, the open watches
//! and the log of every write the operator sent.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::ceph::CephState;
use super::clock::SimClock;
use super::store::{ApiError, Res, Store, WatchChange};

/// A controller that keeps pods running: `ReplicaSet` (a new name each time, on `node`),
/// `StatefulSet` (`<name>-0`, created once the old pod is gone) or `DaemonSet` (one pod per node in
/// `nodes`, `<name>-<node>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    /// `ReplicaSet`, `StatefulSet` or `DaemonSet`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name; pods carry the label `unstick.sim/controller=<name>`.
    pub name: String,
    /// The claim its pods mount, if any.
    pub claim: Option<String>,
    /// Node new pods are scheduled to (ReplicaSet / StatefulSet).
    pub node: Option<String>,
    /// Nodes of a DaemonSet.
    pub nodes: Vec<String>,
}

/// Label that ties a pod to its [`Controller`].
pub const CONTROLLER_LABEL: &str = "unstick.sim/controller";

/// A container that mounted the host's root without mount propagation and so keeps a copy of an
/// RBD filesystem mount in its own mount namespace (seed 003): while it runs, the node cannot
/// unmap the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceHolder {
    /// Node.
    pub node: String,
    /// `/dev/rbdN`.
    pub device: String,
    /// PV whose device is held.
    pub pv: String,
    /// DaemonSet namespace.
    pub namespace: String,
    /// DaemonSet name.
    pub daemonset: String,
    /// Container name.
    pub container: String,
    /// The host-root mount path inside the container (`/host`).
    pub mount_path: String,
}

/// How fast the simulated kubelets and controllers react, in simulated seconds.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Timings {
    /// A deleted pod on a Ready node is gone after this long (if its volumes can be unmounted).
    pub terminate_seconds: i64,
    /// A controller replaces a missing pod after this long.
    pub recreate_seconds: i64,
    /// A pod whose volume became free is Running after this long.
    pub mount_seconds: i64,
    /// With the out-of-service taint (1.26+), the node's pods and attachments are released after
    /// this long. Default 10: on the harness's 1.37.2 the pod GC controller force-deleted the old
    /// pod 2.6, 10.2 and 13.4 s after the taint (it runs every 20 s, so 0–20 s) and the attach-detach controller
    /// force-detached 0.1 s later (tests/harness/SEED.md "The current control plane").
    pub out_of_service_seconds: i64,
}

impl Default for Timings {
    fn default() -> Self {
        Timings { terminate_seconds: 20, recreate_seconds: 5, mount_seconds: 15, out_of_service_seconds: 10 }
    }
}

/// One watch event as the API server streams it: `{"type":…,"object":…}` and a newline.
fn watch_line(kind: &str, object: &Value) -> Bytes {
    Bytes::from(format!("{}\n", json!({"type": kind, "object": object})))
}

struct Sub {
    res: Res,
    ns: Option<String>,
    tx: UnboundedSender<Bytes>,
}

/// A volume teardown in flight on a node (kubelet's unmount + unmap), finished at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Teardown {
    /// Node name.
    pub node: String,
    /// PV name.
    pub pv: String,
    /// When it finishes (simulated time).
    pub at: Timestamp,
}

/// Everything the simulation knows.
pub struct World {
    /// Kubernetes objects.
    pub store: Store,
    /// Ceph.
    pub ceph: CephState,
    /// Simulated time.
    pub clock: SimClock,
    /// `(major, minor)` the API server reports.
    pub version: (u32, u32),
    /// Reaction delays.
    pub timings: Timings,
    /// Busy mounts held in other mount namespaces.
    pub holders: Vec<DeviceHolder>,
    /// Teardowns in flight.
    pub operations: Vec<Teardown>,
    /// Nodes whose kubelet has not registered a CSI driver: `(node, namespace, daemonset)` of the
    /// node plugin whose recreation there registers it again. CSI mounts on such a node fail with
    /// `driver name … not found in the list of registered CSI drivers`.
    pub unregistered: Vec<(String, String, String)>,
    /// Pods their owner stops (`namespace/name`, when): deleted gracefully at that time.
    pub(crate) stops: Vec<(String, Timestamp)>,
    /// Controllers that replace missing pods.
    pub controllers: Vec<Controller>,
    /// Every write the operator's tools sent, with the simulated time.
    pub writes: Vec<(Timestamp, String)>,
    /// Every reaction of the simulation, with the simulated time (for the debrief and tests).
    pub reactions: Vec<(Timestamp, String)>,
    /// Per waiting pod (`ns/name`): since when its volume has been free to mount.
    pub(crate) free_since: BTreeMap<String, Timestamp>,
    /// Events already emitted for a waiting pod (`ns/name` + reason).
    pub(crate) emitted: BTreeSet<String>,
    /// Per node: when the simulation first saw its out-of-service taint. A taint written without
    /// `timeAdded` (the console's, `kubectl taint` for NoExecute sets one; the API server adds
    /// none) counts from then, as the real controllers count from their own next pass.
    pub(crate) tainted_since: BTreeMap<String, Timestamp>,
    /// Client ids handed out to new watchers.
    pub(crate) next_client: u64,
    subs: Vec<Sub>,
}

impl World {
    /// An empty world at `clock`.
    pub fn new(clock: SimClock, version: (u32, u32)) -> Self {
        World {
            store: Store::default(),
            ceph: CephState { watch_timeout_seconds: 30, ..Default::default() },
            clock,
            version,
            timings: Timings::default(),
            holders: vec![],
            controllers: vec![],
            operations: vec![],
            unregistered: vec![],
            stops: vec![],
            writes: vec![],
            reactions: vec![],
            free_since: BTreeMap::new(),
            emitted: BTreeSet::new(),
            tainted_since: BTreeMap::new(),
            next_client: 500_000,
            subs: vec![],
        }
    }

    /// Runs `f` on the store and sends its change to the open watches; returns the object.
    pub fn apply(&mut self, f: impl FnOnce(&mut Store) -> Result<WatchChange, ApiError>) -> Result<Value, ApiError> {
        let c = f(&mut self.store)?;
        let obj = c.object.clone();
        self.publish_change(&c);
        Ok(obj)
    }

    /// Creates an object as the simulation (not the operator).
    pub fn create(&mut self, res: Res, obj: Value) -> Result<Value, ApiError> {
        let now = self.clock.now();
        self.apply(|s| s.create(res, obj, now))
    }

    /// Removes an object outright (see [`Store::finalize`]) and tells the watches; false when it
    /// was not there.
    pub fn finalize(&mut self, key: &super::store::ObjKey) -> bool {
        match self.store.finalize(key) {
            Some(c) => {
                self.publish_change(&c);
                true
            }
            None => false,
        }
    }

    /// Sends a change made directly on the store to the open watches.
    fn publish_change(&mut self, c: &WatchChange) {
        let line = watch_line(c.kind, &c.object);
        self.subs.retain(|s| {
            if s.res != c.key.res || s.ns.as_ref().is_some_and(|n| *n != c.key.ns) {
                return !s.tx.is_closed();
            }
            s.tx.send(line.clone()).is_ok()
        });
    }

    /// Registers a watch (see [`super::Sim::watch`]).
    pub fn watch(&mut self, res: Res, ns: Option<String>, rv: u64, tx: UnboundedSender<Bytes>) {
        let in_ns = |k: &super::store::ObjKey| ns.as_ref().is_none_or(|n| *n == k.ns);
        if rv == 0 {
            for (k, v) in self.store.iter(res) {
                if in_ns(k) {
                    let _ = tx.send(watch_line("ADDED", v));
                }
            }
        } else {
            match self.store.changes_since(rv, res) {
                Some(cs) => {
                    for c in cs.iter().filter(|c| in_ns(&c.key)) {
                        let _ = tx.send(watch_line(c.kind, &c.object));
                    }
                }
                None => {
                    let gone =
                        ApiError { code: 410, reason: "Expired", message: format!("too old resource version: {rv}") };
                    let _ = tx.send(watch_line("ERROR", &gone.status()));
                    return;
                }
            }
        }
        self.subs.push(Sub { res, ns, tx });
    }

    /// Logs an operator write.
    pub fn record_write(&mut self, what: String) {
        let now = self.clock.now();
        tracing::debug!(%what, "simulated write");
        self.writes.push((now, what));
    }

    /// Logs a reaction of the simulation.
    pub fn react(&mut self, what: String) {
        let now = self.clock.now();
        tracing::debug!(%what, "simulated reaction");
        self.reactions.push((now, what));
    }

    /// The Kubernetes objects and Ceph facts as the console would see them after a full read, at
    /// simulated now: for checking goals with the same diagnosis the console runs.
    pub fn snapshot(&self) -> crate::model::Snapshot {
        use crate::model::{ImageFacts, ImageRef, Observed};
        fn typed<T: serde::de::DeserializeOwned>(vs: Vec<Value>) -> Vec<std::sync::Arc<T>> {
            vs.into_iter().filter_map(|v| serde_json::from_value(v).ok()).map(std::sync::Arc::new).collect()
        }
        let at = self.clock.now();
        let mut snap = crate::model::Snapshot {
            nodes: typed(self.store.list(Res::Node, None)),
            pods: typed(self.store.list(Res::Pod, None)),
            pvcs: typed(self.store.list(Res::Pvc, None)),
            pvs: typed(self.store.list(Res::Pv, None)),
            volume_attachments: typed(self.store.list(Res::VolumeAttachment, None)),
            events: typed(self.store.list(Res::Event, None)),
            taken_at: Some(at),
            server_version: Some(self.version),
            ..Default::default()
        };
        for (spec, img) in &self.ceph.images {
            let Some((pool, name)) = spec.split_once('/') else { continue };
            let watchers = img.watchers.iter().map(|(w, _)| w.clone()).collect();
            snap.ceph.images.insert(
                ImageRef::new(pool, name),
                ImageFacts {
                    watchers: Observed { value: Ok(watchers), at },
                    locks: Observed { value: Ok(img.locks.clone()), at },
                },
            );
        }
        let entries = self.ceph.blocklist.iter().map(|b| b.entry()).collect();
        snap.ceph.blocklist = Some(Observed { value: Ok(entries), at });
        snap
    }
}
