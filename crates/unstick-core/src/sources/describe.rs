//! One GET of one object for the describe / YAML popup (`d` / `y`): read from the API server at
//! that moment (the cluster, or the training simulation's API server over tower), with a timeout,
//! `managedFields` and the last-applied annotation dropped. The caller redacts before display.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Api;
use serde_json::Value;

use crate::diagnose::{ObjectKind, ObjectRef};

/// How long one GET may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeMsg {
    /// The object asked for.
    pub target: ObjectRef,
    /// The object as JSON, or why it could not be read (one line a person can act on).
    pub result: Result<Value, String>,
}

/// Reads `target` with `client` (at most [`TIMEOUT`]).
pub async fn fetch(client: kube::Client, target: ObjectRef) -> DescribeMsg {
    let result = match tokio::time::timeout(TIMEOUT, get(client, &target)).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer from the API server within {} s", TIMEOUT.as_secs())),
    };
    DescribeMsg { target, result: result.map(slim) }
}

async fn get(client: kube::Client, t: &ObjectRef) -> Result<Value, String> {
    let ns = t.namespace.as_deref().unwrap_or("default");
    let name = t.name.as_str();
    let v = match t.kind {
        ObjectKind::Pod => to_value(Api::<Pod>::namespaced(client, ns).get(name).await),
        ObjectKind::PersistentVolumeClaim => {
            to_value(Api::<PersistentVolumeClaim>::namespaced(client, ns).get(name).await)
        }
        ObjectKind::PersistentVolume => to_value(Api::<PersistentVolume>::all(client).get(name).await),
        ObjectKind::VolumeAttachment => to_value(Api::<VolumeAttachment>::all(client).get(name).await),
        ObjectKind::Node => to_value(Api::<Node>::all(client).get(name).await),
        ObjectKind::RbdImage | ObjectKind::BlocklistEntry => {
            return Err(format!("{} is a Ceph object: the Ceph pane shows it", t.label()));
        }
    };
    v.map_err(|e| match e {
        kube::Error::Api(s) if s.code == 404 => {
            format!("{} is gone (404): it was deleted since the last list", t.label())
        }
        kube::Error::Api(s) if s.code == 403 => format!("forbidden: get {}: {}", t.label(), s.message),
        e => format!("get {}: {e}", t.label()),
    })
}

fn to_value<T: serde::Serialize>(r: Result<T, kube::Error>) -> Result<Value, kube::Error> {
    r.map(|o| serde_json::to_value(o).unwrap_or(Value::Null))
}

/// Drops what nobody reads in an incident: `managedFields` and the last-applied annotation.
pub fn slim(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    v
}
