//! The simulated cluster's Kubernetes objects: JSON documents keyed by resource, namespace and
//! name, with a cluster-wide `resourceVersion` counter, the API server's create / replace /
//! JSON-patch / delete semantics (UID preconditions, finalizers hold a deletion, `test` operations
//! guard patches), and an event history that watches replay from a `resourceVersion`.
//!
//! This is plain data with no IO; [`super::apiserver`] turns HTTP requests into calls here.

use std::collections::{BTreeMap, VecDeque};

use jiff::Timestamp;
use serde_json::{Value, json};

/// A resource the simulated API server serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Res {
    /// core/v1 nodes (cluster-scoped)
    Node,
    /// core/v1 pods
    Pod,
    /// core/v1 persistentvolumeclaims
    Pvc,
    /// core/v1 persistentvolumes (cluster-scoped)
    Pv,
    /// core/v1 events
    Event,
    /// storage.k8s.io/v1 volumeattachments (cluster-scoped)
    VolumeAttachment,
    /// apps/v1 daemonsets
    DaemonSet,
    /// coordination.k8s.io/v1 leases
    Lease,
}

/// The API names of a [`Res`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResInfo {
    /// Group/version as in the URL (`v1`, `storage.k8s.io/v1`).
    pub group_version: &'static str,
    /// The plural in the URL (`pods`).
    pub plural: &'static str,
    /// The kind (`Pod`).
    pub kind: &'static str,
    /// Namespaced (true) or cluster-scoped.
    pub namespaced: bool,
}

impl Res {
    /// Every resource.
    pub const ALL: [Res; 8] =
        [Res::Node, Res::Pod, Res::Pvc, Res::Pv, Res::Event, Res::VolumeAttachment, Res::DaemonSet, Res::Lease];

    /// The resource's API names; the core group is `v1`.
    pub fn info(self) -> ResInfo {
        let (group_version, plural, kind, namespaced) = match self {
            Res::Node => ("v1", "nodes", "Node", false),
            Res::Pod => ("v1", "pods", "Pod", true),
            Res::Pvc => ("v1", "persistentvolumeclaims", "PersistentVolumeClaim", true),
            Res::Pv => ("v1", "persistentvolumes", "PersistentVolume", false),
            Res::Event => ("v1", "events", "Event", true),
            Res::VolumeAttachment => ("storage.k8s.io/v1", "volumeattachments", "VolumeAttachment", false),
            Res::DaemonSet => ("apps/v1", "daemonsets", "DaemonSet", true),
            Res::Lease => ("coordination.k8s.io/v1", "leases", "Lease", true),
        };
        ResInfo { group_version, plural, kind, namespaced }
    }

    /// The resource for a URL's group/version and plural (`v1` + `pods`).
    pub fn from_path(group_version: &str, plural: &str) -> Option<Res> {
        Res::ALL.into_iter().find(|r| {
            let i = r.info();
            i.group_version == group_version && i.plural == plural
        })
    }

    /// Is the resource namespaced?
    pub fn namespaced(self) -> bool {
        self.info().namespaced
    }
}

/// Where an object lives: resource, namespace (empty for cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjKey {
    /// Resource.
    pub res: Res,
    /// Namespace, `""` for cluster-scoped objects.
    pub ns: String,
    /// Name.
    pub name: String,
}

impl ObjKey {
    /// The key of object `o` (its `metadata.namespace` and `metadata.name`).
    pub fn of(res: Res, o: &Value) -> Self {
        ObjKey::new(
            res,
            o["metadata"]["namespace"].as_str().unwrap_or(""),
            o["metadata"]["name"].as_str().unwrap_or(""),
        )
    }

    /// A key; `ns` is ignored for cluster-scoped resources.
    pub fn new(res: Res, ns: &str, name: &str) -> Self {
        let ns = if res.namespaced() { ns.to_string() } else { String::new() };
        ObjKey { res, ns, name: name.to_string() }
    }
}

/// A failed request, as the API server would answer it: HTTP status, `reason` and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status (404, 409, 422).
    pub code: u16,
    /// `metav1.StatusReason` (`NotFound`, `Conflict`, `AlreadyExists`, `Invalid`).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
}

impl ApiError {
    fn not_found(k: &ObjKey) -> Self {
        let plural = k.res.info().plural;
        ApiError { code: 404, reason: "NotFound", message: format!("{plural} \"{}\" not found", k.name) }
    }

    fn conflict(message: String) -> Self {
        ApiError { code: 409, reason: "Conflict", message }
    }

    /// The `metav1.Status` body of this error.
    pub fn status(&self) -> Value {
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": self.message, "reason": self.reason, "code": self.code})
    }
}

/// One change, as a watch reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchChange {
    /// The `resourceVersion` the change produced.
    pub rv: u64,
    /// Where.
    pub key: ObjKey,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// The object after the change (before, for `DELETED`).
    pub object: Value,
}

/// How many changes a watch can be behind before it gets `410 Gone` and relists.
const HISTORY: usize = 20_000;

/// The objects.
#[derive(Debug, Default)]
pub struct Store {
    rv: u64,
    uids: u64,
    objects: BTreeMap<ObjKey, Value>,
    history: VecDeque<WatchChange>,
}

impl Store {
    /// The current `resourceVersion`.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    /// One object.
    pub fn get(&self, k: &ObjKey) -> Option<&Value> {
        self.objects.get(k)
    }

    /// Objects of `res`, in namespace `ns` or in all namespaces, in key order.
    pub fn list(&self, res: Res, ns: Option<&str>) -> Vec<Value> {
        self.iter(res).filter(|(k, _)| ns.is_none_or(|n| k.ns == n)).map(|(_, v)| v.clone()).collect()
    }

    /// Copies of the objects of `res` (in `ns`, or all namespaces) for which `keep` holds; only
    /// those are cloned (a 10k-pod simulation lists its few waiting pods, not all of them).
    pub fn list_where(&self, res: Res, ns: Option<&str>, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.iter(res).filter(|(k, v)| ns.is_none_or(|n| k.ns == n) && keep(v)).map(|(_, v)| v.clone()).collect()
    }

    /// `(key, object)` of every object of `res`.
    pub fn iter(&self, res: Res) -> impl Iterator<Item = (&ObjKey, &Value)> {
        // keys order by resource first: one range, not a scan of every object
        let from = ObjKey { res, ns: String::new(), name: String::new() };
        self.objects.range(from..).take_while(move |(k, _)| k.res == res)
    }

    /// Changes after `rv` for `res` (all namespaces), or `None` when that history is gone.
    pub fn changes_since(&self, rv: u64, res: Res) -> Option<Vec<WatchChange>> {
        if rv < self.rv && self.history.front().is_some_and(|c| c.rv > rv + 1) {
            return None;
        }
        Some(self.history.iter().filter(|c| c.rv > rv && c.key.res == res).cloned().collect())
    }

    fn record(&mut self, key: ObjKey, kind: &'static str, object: Value) -> WatchChange {
        let c = WatchChange { rv: self.rv, key, kind, object };
        self.history.push_back(c.clone());
        if self.history.len() > HISTORY {
            self.history.pop_front();
        }
        c
    }

    fn bump(&mut self, obj: &mut Value) {
        self.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(self.rv.to_string());
    }

    /// Creates an object; fills `apiVersion`, `kind`, `uid`, `creationTimestamp` (unless set) and
    /// `resourceVersion`. Errors: 409 AlreadyExists.
    pub fn create(&mut self, res: Res, mut obj: Value, now: Timestamp) -> Result<WatchChange, ApiError> {
        let ResInfo { group_version: gv, kind, .. } = res.info();
        let key = ObjKey::of(res, &obj);
        let name = key.name.clone();
        if name.is_empty() {
            return Err(ApiError { code: 422, reason: "Invalid", message: "metadata.name: Required value".into() });
        }
        if self.objects.contains_key(&key) {
            let plural = res.info().plural;
            return Err(ApiError {
                code: 409,
                reason: "AlreadyExists",
                message: format!("{plural} \"{name}\" already exists"),
            });
        }
        obj["apiVersion"] = json!(gv);
        obj["kind"] = json!(kind);
        self.uids += 1;
        if obj["metadata"]["uid"].as_str().is_none() {
            obj["metadata"]["uid"] = json!(format!("5e000000-0000-4000-8000-{:012}", self.uids));
        }
        if obj["metadata"]["creationTimestamp"].as_str().is_none() {
            obj["metadata"]["creationTimestamp"] = json!(seconds(now));
        }
        self.bump(&mut obj);
        self.objects.insert(key.clone(), obj.clone());
        Ok(self.record(key, "ADDED", obj))
    }

    /// Replaces an object. `metadata.resourceVersion` of `obj`, when set, must match (409 Conflict
    /// otherwise); `uid` and `creationTimestamp` are kept. Removing the last finalizer of an object
    /// being deleted deletes it.
    pub fn replace(&mut self, key: &ObjKey, mut obj: Value) -> Result<WatchChange, ApiError> {
        let cur = self.objects.get(key).ok_or_else(|| ApiError::not_found(key))?;
        if let Some(rv) = obj["metadata"]["resourceVersion"].as_str()
            && Some(rv) != cur["metadata"]["resourceVersion"].as_str()
        {
            return Err(ApiError::conflict(format!(
                "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                key.res.info().plural,
                key.name
            )));
        }
        for f in ["uid", "creationTimestamp", "deletionTimestamp", "name", "namespace"] {
            if let Some(v) = cur["metadata"].get(f) {
                obj["metadata"][f] = v.clone();
            }
        }
        obj["apiVersion"] = cur["apiVersion"].clone();
        obj["kind"] = cur["kind"].clone();
        self.put(key, obj)
    }

    fn put(&mut self, key: &ObjKey, mut obj: Value) -> Result<WatchChange, ApiError> {
        let deleting = obj["metadata"]["deletionTimestamp"].is_string();
        let finalizers = obj["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
        self.bump(&mut obj);
        if deleting && !finalizers {
            self.objects.remove(key);
            return Ok(self.record(key.clone(), "DELETED", obj));
        }
        self.objects.insert(key.clone(), obj.clone());
        Ok(self.record(key.clone(), "MODIFIED", obj))
    }

    /// Applies a change to an object's JSON through `f` (the simulation's own writes: status,
    /// taints, mounts). Errors: 404.
    pub fn update(&mut self, key: &ObjKey, f: impl FnOnce(&mut Value)) -> Result<WatchChange, ApiError> {
        let mut obj = self.objects.get(key).cloned().ok_or_else(|| ApiError::not_found(key))?;
        f(&mut obj);
        self.put(key, obj)
    }

    /// Applies an RFC 6902 JSON patch. A failing `test` operation (or any other) changes nothing:
    /// 422 Invalid, as the API server answers.
    pub fn json_patch(&mut self, key: &ObjKey, patch: &Value) -> Result<WatchChange, ApiError> {
        let mut obj = self.objects.get(key).cloned().ok_or_else(|| ApiError::not_found(key))?;
        let p: json_patch::Patch = serde_json::from_value(patch.clone()).map_err(|e| ApiError {
            code: 400,
            reason: "BadRequest",
            message: format!("invalid JSON patch: {e}"),
        })?;
        json_patch::patch(&mut obj, &p).map_err(|e| ApiError {
            code: 422,
            reason: "Invalid",
            message: format!("the server rejected our request due to an error in our request: {e}"),
        })?;
        self.put(key, obj)
    }

    /// Applies a JSON merge patch (RFC 7386; also used for strategic merge patches, which the
    /// simulation does not distinguish).
    pub fn merge_patch(&mut self, key: &ObjKey, patch: &Value) -> Result<WatchChange, ApiError> {
        let mut obj = self.objects.get(key).cloned().ok_or_else(|| ApiError::not_found(key))?;
        json_patch::merge(&mut obj, patch);
        self.put(key, obj)
    }

    /// Deletes an object. `uid` / `resource_version` are `DeleteOptions.preconditions` (409 when
    /// they do not match). An object with finalizers, or a pod deleted with a grace period
    /// (`grace_seconds` `None` or > 0) while `graceful` says its kubelet must confirm, only gets
    /// `deletionTimestamp`; otherwise it is removed at once.
    pub fn delete(
        &mut self,
        key: &ObjKey,
        uid: Option<&str>,
        resource_version: Option<&str>,
        grace_seconds: Option<i64>,
        now: Timestamp,
    ) -> Result<WatchChange, ApiError> {
        let cur = self.objects.get(key).cloned().ok_or_else(|| ApiError::not_found(key))?;
        if let Some(u) = uid
            && Some(u) != cur["metadata"]["uid"].as_str()
        {
            return Err(ApiError::conflict(format!(
                "Precondition failed: UID in precondition: {u}, UID in object meta: {}",
                cur["metadata"]["uid"].as_str().unwrap_or("")
            )));
        }
        if let Some(rv) = resource_version
            && Some(rv) != cur["metadata"]["resourceVersion"].as_str()
        {
            return Err(ApiError::conflict(format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                cur["metadata"]["resourceVersion"].as_str().unwrap_or("")
            )));
        }
        let finalizers = cur["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
        let graceful_pod = key.res == Res::Pod && grace_seconds != Some(0);
        if finalizers || graceful_pod {
            let mut obj = cur;
            if !obj["metadata"]["deletionTimestamp"].is_string() {
                obj["metadata"]["deletionTimestamp"] = json!(seconds(now));
                obj["metadata"]["deletionGracePeriodSeconds"] = json!(grace_seconds.unwrap_or(30));
            } else if grace_seconds == Some(0) {
                obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            }
            self.bump(&mut obj);
            self.objects.insert(key.clone(), obj.clone());
            return Ok(self.record(key.clone(), "MODIFIED", obj));
        }
        Ok(self.remove(key, cur))
    }

    /// Removes an object outright (what the API server does once kubelet confirmed a pod stopped,
    /// or the garbage collector finished).
    pub fn finalize(&mut self, key: &ObjKey) -> Option<WatchChange> {
        let cur = self.objects.get(key).cloned()?;
        Some(self.remove(key, cur))
    }

    fn remove(&mut self, key: &ObjKey, mut obj: Value) -> WatchChange {
        self.objects.remove(key);
        self.bump(&mut obj);
        self.record(key.clone(), "DELETED", obj)
    }
}

/// RFC 3339 with whole seconds, as Kubernetes prints `metav1.Time`.
pub fn seconds(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second()).map(|t| t.to_string()).unwrap_or_else(|_| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-22T03:00:00Z".parse().unwrap()
    }

    fn pod(name: &str) -> Value {
        json!({"metadata": {"namespace": "ns", "name": name}, "spec": {"nodeName": "n1"}})
    }

    #[test]
    fn create_fills_metadata_and_rejects_duplicates() {
        let mut s = Store::default();
        let c = s.create(Res::Pod, pod("a"), now()).unwrap();
        assert_eq!(c.kind, "ADDED");
        assert_eq!(c.object["kind"], "Pod");
        assert_eq!(c.object["metadata"]["resourceVersion"], "1");
        assert_eq!(c.object["metadata"]["creationTimestamp"], "2026-11-22T03:00:00Z");
        assert_eq!(s.create(Res::Pod, pod("a"), now()).unwrap_err().code, 409);
    }

    #[test]
    fn json_patch_test_failure_changes_nothing() {
        let mut s = Store::default();
        s.create(Res::Pod, pod("a"), now()).unwrap();
        let k = ObjKey::new(Res::Pod, "ns", "a");
        let bad = json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "99"},
                         {"op": "replace", "path": "/spec/nodeName", "value": "n2"}]);
        assert_eq!(s.json_patch(&k, &bad).unwrap_err().code, 422);
        assert_eq!(s.get(&k).unwrap()["spec"]["nodeName"], "n1");
        let good = json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
                          {"op": "replace", "path": "/spec/nodeName", "value": "n2"}]);
        assert_eq!(s.json_patch(&k, &good).unwrap().object["spec"]["nodeName"], "n2");
    }

    #[test]
    fn graceful_pod_delete_only_marks_and_force_delete_removes() {
        let mut s = Store::default();
        s.create(Res::Pod, pod("a"), now()).unwrap();
        let k = ObjKey::new(Res::Pod, "ns", "a");
        assert_eq!(s.delete(&k, Some("wrong"), None, Some(0), now()).unwrap_err().code, 409);
        let c = s.delete(&k, None, None, None, now()).unwrap();
        assert_eq!(c.kind, "MODIFIED");
        assert!(s.get(&k).unwrap()["metadata"]["deletionTimestamp"].is_string());
        let c = s.delete(&k, None, None, Some(0), now()).unwrap();
        assert_eq!(c.kind, "DELETED");
        assert!(s.get(&k).is_none());
    }

    #[test]
    fn finalizers_hold_a_deletion_until_removed() {
        let mut s = Store::default();
        let va = json!({"metadata": {"name": "csi-1", "finalizers": ["external-attacher/rbd-csi-ceph-com"]}});
        s.create(Res::VolumeAttachment, va, now()).unwrap();
        let k = ObjKey::new(Res::VolumeAttachment, "", "csi-1");
        s.delete(&k, None, None, None, now()).unwrap();
        assert!(s.get(&k).is_some());
        let p = json!([{"op": "remove", "path": "/metadata/finalizers/0"}]);
        assert_eq!(s.json_patch(&k, &p).unwrap().kind, "DELETED");
        assert!(s.get(&k).is_none());
    }

    #[test]
    fn history_replays_changes_after_a_version() {
        let mut s = Store::default();
        s.create(Res::Pod, pod("a"), now()).unwrap();
        s.create(Res::Node, json!({"metadata": {"name": "n1"}}), now()).unwrap();
        s.create(Res::Pod, pod("b"), now()).unwrap();
        let c = s.changes_since(1, Res::Pod).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].key.name, "b");
    }
}
