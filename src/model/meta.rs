//! The plumbing of the slim objects ([`super::objects`]): `metadata` read into k8s-openapi's
//! `ObjectMeta` with only the fields the console uses (the others, `managedFields`, labels and
//! annotations among them, are skipped by the parser, never built), the k8s-openapi `Resource` /
//! `Metadata` impls that make kube's `Api<T>`, `watcher` and `reflector` work on the slim types,
//! and the conversion from full k8s-openapi objects (simulation, `collect`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer};

/// The `metadata` fields kept: name, namespace, uid, resourceVersion (the watcher resumes from
/// it), creation and deletion timestamps, finalizers, ownerReferences (of kind DaemonSet only: a
/// DaemonSet's pods).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SlimMeta {
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

/// `deserialize_with` for `metadata`: an `ObjectMeta` holding only the kept fields.
///
/// Errors: a kept field of the wrong type (as serde reports it).
pub fn slim<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let m = SlimMeta::deserialize(d)?;
    Ok(ObjectMeta {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resource_version: m.resource_version,
        creation_timestamp: m.creation_timestamp,
        deletion_timestamp: m.deletion_timestamp,
        finalizers: m.finalizers,
        // only a DaemonSet owner is read (host-mount holders)
        owner_references: m
            .owner_references
            .map(|o| o.into_iter().filter(|o| o.kind == "DaemonSet").collect::<Vec<_>>())
            .filter(|o| !o.is_empty()),
        ..ObjectMeta::default()
    })
}

/// Implements k8s-openapi's `Resource`, `ListableResource` and `Metadata` for a slim type (kube's
/// `Resource` follows from them): `impl_resource!(Pod, "", "v1", "Pod", "pods", Namespace)`.
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

        impl k8s_openapi::Metadata for $t {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
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
