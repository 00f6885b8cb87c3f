//! The workload that owns a pod, read from the pod's controller `ownerReference` (the slim
//! [`super::meta::Meta`] keeps those of kind DaemonSet, ReplicaSet and StatefulSet): what recreates
//! the pod when a write deletes it, and its other replicas (the pods of the same owner, with their
//! nodes). A ReplicaSet named `<deployment>-<pod-template-hash>` (the hash in Kubernetes'
//! safe-encoding alphabet, as the Deployment controller names them) is shown as its Deployment.

use super::Snapshot;
use super::kube::pod_node;
use super::objects::Pod;

/// The characters of a `pod-template-hash` (`k8s.io/apimachinery/pkg/util/rand.SafeEncodeString`).
const HASH_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// The kind of a pod's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// One pod per node; recreated on the same node.
    DaemonSet,
    /// A Deployment's ReplicaSet: a replacement with a new name, wherever the scheduler puts it.
    Deployment,
    /// A ReplicaSet without a Deployment (its name has no template hash).
    ReplicaSet,
    /// Recreated under the same name, with the same claims, once the old pod is gone.
    StatefulSet,
}

/// A pod's owning workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// What kind.
    pub kind: WorkloadKind,
    /// Namespace.
    pub namespace: String,
    /// Name (the Deployment's for a Deployment's ReplicaSet).
    pub name: String,
    /// The owner reference's name (`mariadb-5b8c7d9f6` for a Deployment's ReplicaSet).
    pub owner: String,
}

impl std::fmt::Display for Workload {
    /// `Deployment incident-003/mariadb`, `DaemonSet monitoring/node-exporter`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::StatefulSet => "StatefulSet",
        };
        write!(f, "{kind} {}/{}", self.namespace, self.name)
    }
}

impl Workload {
    /// What its controller does when one of its pods is deleted.
    pub fn on_delete(&self) -> &'static str {
        match self.kind {
            WorkloadKind::DaemonSet => "recreates it on the same node",
            WorkloadKind::Deployment | WorkloadKind::ReplicaSet => "creates a replacement (new name, any node)",
            WorkloadKind::StatefulSet => "recreates it under the same name with the same claims once it is gone",
        }
    }
}

/// The Deployment a ReplicaSet named `rs` belongs to, when its name ends in a template hash.
fn deployment_of(rs: &str) -> Option<&str> {
    let (name, hash) = rs.rsplit_once('-')?;
    let hashed = (6..=10).contains(&hash.len()) && hash.chars().all(|c| HASH_ALPHABET.contains(c));
    (hashed && !name.is_empty()).then_some(name)
}

/// The workload owning `pod` (its controller reference; the first kept one when none says
/// `controller: true`), or `None` for a bare pod.
pub fn workload_of(pod: &Pod) -> Option<Workload> {
    let owners = pod.metadata.owner_references.as_deref().unwrap_or_default();
    let o = owners.iter().find(|o| o.controller == Some(true)).or(owners.first())?;
    let (kind, name) = match o.kind.as_str() {
        "DaemonSet" => (WorkloadKind::DaemonSet, o.name.as_str()),
        "StatefulSet" => (WorkloadKind::StatefulSet, o.name.as_str()),
        "ReplicaSet" => match deployment_of(&o.name) {
            Some(d) => (WorkloadKind::Deployment, d),
            None => (WorkloadKind::ReplicaSet, o.name.as_str()),
        },
        _ => return None,
    };
    Some(Workload {
        kind,
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        name: name.to_string(),
        owner: o.name.clone(),
    })
}

/// The pods of `w` in `snap` (same namespace and owner reference name), as `(namespace/name,
/// node)`, sorted by name; a pod not yet scheduled has node `-`.
pub fn replicas(snap: &Snapshot, w: &Workload) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = snap
        .pods
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some(w.namespace.as_str()))
        .filter(|p| workload_of(p).is_some_and(|o| o.owner == w.owner && o.kind == w.kind))
        .map(|p| (super::key_of(&p.metadata), pod_node(p).unwrap_or("-").to_string()))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn pod(name: &str, node: &str, kind: &str, owner: &str) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(serde_json::json!({
                "metadata": {"namespace": "ns", "name": name,
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": owner, "uid": "u", "controller": true}]},
                "spec": {"nodeName": node, "containers": []}
            }))
            .unwrap(),
        )
    }

    #[test]
    fn a_hashed_replicaset_is_its_deployment_and_replicas_are_its_pods() {
        let snap = Snapshot {
            pods: vec![
                pod("db-5b8c7d9f6-b", "n2", "ReplicaSet", "db-5b8c7d9f6"),
                pod("db-5b8c7d9f6-a", "n1", "ReplicaSet", "db-5b8c7d9f6"),
                pod("db-77c4b8d5f9-c", "n3", "ReplicaSet", "db-77c4b8d5f9"),
                pod("web-0", "n1", "StatefulSet", "web"),
                pod("x", "n1", "ReplicaSet", "plain-name"),
            ],
            ..Default::default()
        };
        let w = workload_of(&snap.pods[0]).unwrap();
        assert_eq!(w.to_string(), "Deployment ns/db");
        assert_eq!(
            replicas(&snap, &w),
            [("ns/db-5b8c7d9f6-a".to_string(), "n1".to_string()), ("ns/db-5b8c7d9f6-b".into(), "n2".into())],
            "the other ReplicaSet's pod is not a replica of this one"
        );
        assert_eq!(workload_of(&snap.pods[3]).unwrap().to_string(), "StatefulSet ns/web");
        assert_eq!(workload_of(&snap.pods[4]).unwrap().to_string(), "ReplicaSet ns/plain-name", "no template hash");
    }
}
