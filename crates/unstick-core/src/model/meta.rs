//! The plumbing of the slim objects ([`super::objects`]): their `metadata`, a [`Meta`] holding
//! only the fields the console uses (the others, `managedFields`, labels, a namespaced object's
//! annotations and
//! `resourceVersion` among them, are skipped by the parser, never built), the k8s-openapi
//! `Resource` / `ListableResource` impls (the API paths; kube's watcher watches them through
//! [`crate::sources::kube::watched::Watched`], which carries the `resourceVersion`), and the conversion
//! from full k8s-openapi objects (simulation, `collect`).

use std::cell::RefCell;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use serde::{Deserialize, Deserializer, Serialize};

/// The kept `metadata` of a slim object: k8s-openapi's `ObjectMeta` field names and `Option`
/// shapes (`pod.metadata.name.as_deref()` reads the same), serialized as `ObjectMeta` is (camelCase
/// keys in its alphabetical order, `None` left out), without `resourceVersion` (only the watcher
/// reads it: [`crate::sources::kube::watched::Watched`] keeps it beside the object, not in it).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// `annotations`, kept for cluster-scoped objects only (no `namespace`: a Node's annotation may
    /// name its storage addresses, [`crate::attribution`]); `None` for every namespaced object,
    /// and for PersistentVolumes and VolumeAttachments (`without_annotations`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
    /// `creationTimestamp`: pod age, waiting-since, event time fallback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// `deletionTimestamp`: Terminating, a VolumeAttachment being deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    /// `finalizers`: the VolumeAttachment finalizer rule, lineage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
    /// `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `namespace` (`None` for cluster-scoped objects).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `ownerReferences` of the workload kinds only ([`WORKLOAD_OWNERS`]: DaemonSet, ReplicaSet,
    /// StatefulSet; a DaemonSet's pods hold host mounts, and a write's blast radius names the
    /// controller that recreates a pod), each with only `kind`, `name` and `controller` set
    /// (`slim_owner`); `None` when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReference>>,
    /// `uid`: restage, remedy targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// What the parser reads of `metadata`: the kept fields and `resourceVersion` (handed to
/// [`capturing_version`], not kept).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireMeta {
    #[serde(default)]
    annotations: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    creation_timestamp: Option<Time>,
    #[serde(default)]
    deletion_timestamp: Option<Time>,
    #[serde(default)]
    finalizers: Option<Vec<String>>,
    #[serde(default)]
    owner_references: Option<Vec<OwnerReference>>,
}

/// An ownerReference as a [`Meta`] keeps it: `kind`, `name` and `controller` (what
/// [`super::workload::workload_of`] and the host-mount holders read); `apiVersion` and `uid`
/// emptied (two strings fewer on each of 100k pods), `blockOwnerDeletion` unset.
fn slim_owner(o: OwnerReference) -> OwnerReference {
    OwnerReference { kind: o.kind, name: o.name, controller: o.controller, ..OwnerReference::default() }
}

/// The `ownerReferences` kinds a [`Meta`] keeps: the controllers that recreate a pod.
pub const WORKLOAD_OWNERS: [&str; 3] = ["DaemonSet", "ReplicaSet", "StatefulSet"];

thread_local! {
    /// `Some` while [`capturing_version`] runs on this thread: the last `resourceVersion` read.
    static VERSION: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Runs `parse` (a synchronous deserialization of one object) and returns its result with the
/// `resourceVersion` of the [`Meta`] it parsed (`None` when it had none). Serde's derived
/// deserializers give a field no way out but the value they build, and the stored objects do not
/// keep the version: this is how [`crate::sources::kube::watched::Watched`] gets it for the watcher.
/// Nested calls each see their own object's version.
pub fn capturing_version<T>(parse: impl FnOnce() -> T) -> (T, Option<String>) {
    let outer = VERSION.with(|v| v.replace(Some(None)));
    let out = parse();
    let version = VERSION.with(|v| v.replace(outer)).flatten();
    (out, version)
}

impl<'de> Deserialize<'de> for Meta {
    /// The kept fields; ownerReferences other than [`WORKLOAD_OWNERS`] dropped.
    ///
    /// Errors: a kept field of the wrong type (as serde reports it).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = WireMeta::deserialize(d)?;
        VERSION.with(|v| {
            if let Some(slot) = v.borrow_mut().as_mut() {
                *slot = m.resource_version;
            }
        });
        Ok(Meta {
            annotations: m.annotations.filter(|a| m.namespace.is_none() && !a.is_empty()),
            name: m.name,
            namespace: m.namespace,
            uid: m.uid,
            creation_timestamp: m.creation_timestamp,
            deletion_timestamp: m.deletion_timestamp,
            finalizers: m.finalizers.map(super::exact::exact),
            // only a workload owner is read (host-mount holders, blast radius)
            owner_references: m
                .owner_references
                .map(|o| {
                    let kept = o.into_iter().filter(|o| WORKLOAD_OWNERS.contains(&o.kind.as_str())).map(slim_owner);
                    super::exact::exact(kept.collect())
                })
                .filter(|o| !o.is_empty()),
        })
    }
}

/// `deserialize_with` for the metadata of a cluster-scoped kind whose annotations nothing reads
/// (PersistentVolume, VolumeAttachment): [`Meta`] without them. A provisioned PV carries
/// `pv.kubernetes.io/provisioned-by` and more: 20k PVs held 14 MB of annotation maps (heaptrack,
/// issue 29).
///
/// Errors: as [`Meta`]'s deserializer.
pub(super) fn without_annotations<'de, D: Deserializer<'de>>(d: D) -> Result<Meta, D::Error> {
    let mut m = Meta::deserialize(d)?;
    m.annotations = None;
    Ok(m)
}

/// A slim object: its [`Meta`].
pub trait SlimObject {
    /// The kept metadata.
    fn meta(&self) -> &Meta;
}

/// Implements k8s-openapi's `Resource` and `ListableResource` (the API group, version, kind and
/// path) and [`SlimObject`] for a slim type:
/// `impl_resource!(Pod, "", "v1", "v1", "Pod", "pods", NamespaceResourceScope)`.
macro_rules! impl_resource {
    ($t:ident, $group:literal, $version:literal, $api_version:literal, $kind:literal, $plural:literal, $scope:ident) => {
        impl k8s_openapi::Resource for $t {
            const API_VERSION: &'static str = $api_version;
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::$scope;
        }

        impl k8s_openapi::ListableResource for $t {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }

        impl $crate::model::meta::SlimObject for $t {
            fn meta(&self) -> &$crate::model::meta::Meta {
                &self.metadata
            }
        }
    };
}
pub(crate) use impl_resource;

/// A slim object from a full one (the simulation's and `collect`'s objects): through JSON, so
/// exactly what parsing the API server's answer would keep.
///
/// Errors: the full object does not serialize to the slim type's shape (does not happen for the
/// k8s-openapi type of the same kind).
pub fn from_full<F: serde::Serialize, S: serde::de::DeserializeOwned>(full: &F) -> Result<S, serde_json::Error> {
    serde_json::to_value(full).and_then(serde_json::from_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::objects::Pod;

    #[test]
    fn kept_fields_are_read_and_written_as_object_meta() {
        let raw = serde_json::json!({
            "name": "p", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
            "creationTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["f"],
            "labels": {"a": "b"}, "annotations": {"c": "d"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "r"},
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "d"},
                {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j"}
            ]
        });
        let m: Meta = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!((m.name.as_deref(), m.namespace.as_deref(), m.uid.as_deref()), (Some("p"), Some("ns"), Some("u-1")));
        let owners: Vec<&str> = m.owner_references.iter().flatten().map(|o| o.kind.as_str()).collect();
        assert_eq!(owners, ["ReplicaSet", "DaemonSet"]);
        // the same JSON as k8s-openapi's ObjectMeta with the same fields (an ownerReference's kind,
        // name and controller)
        let full: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta = serde_json::from_value(raw).unwrap();
        let full = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            annotations: None,
            labels: None,
            resource_version: None,
            owner_references: full
                .owner_references
                .map(|o| o.into_iter().filter(|o| o.kind != "Job").map(slim_owner).collect()),
            ..full
        };
        assert_eq!(serde_json::to_string(&m).unwrap(), serde_json::to_string(&full).unwrap());
    }

    #[test]
    fn the_version_is_captured_only_when_asked_and_per_object() {
        let with = |rv: &str| serde_json::json!({"metadata": {"name": "p", "resourceVersion": rv}});
        let (p, rv) = capturing_version(|| serde_json::from_value::<Pod>(with("7")));
        assert_eq!((p.unwrap().metadata.name.as_deref(), rv.as_deref()), (Some("p"), Some("7")));
        let (outer, rv) = capturing_version(|| {
            let (_, inner) = capturing_version(|| serde_json::from_value::<Pod>(with("8")));
            assert_eq!(inner.as_deref(), Some("8"));
            serde_json::from_value::<Pod>(serde_json::json!({"metadata": {"name": "q"}}))
        });
        assert!(outer.is_ok());
        assert_eq!(rv, None, "the outer object had no version; the inner one's is not taken for it");
        // without a capture, parsing leaves nothing behind
        let _: Pod = serde_json::from_value(with("9")).unwrap();
        assert_eq!(capturing_version(|| ()).1, None);
    }
}
