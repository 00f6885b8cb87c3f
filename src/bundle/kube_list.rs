//! `kube.json`: a `v1` `List` as printed by
//! `kubectl get nodes,pods,pvc,pv,volumeattachments,events -A -o json`, read into a [`Snapshot`]
//! and written from one.

use std::sync::Arc;

use crate::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::BundleError;
use crate::model::Snapshot;

/// Reads the items of a `List` (or a single object) into `snap`. Items of other kinds
/// (StorageClass, Namespace, ...) are skipped and counted; nested `List`s are flattened.
///
/// Errors: invalid JSON (with line and column), a document that is not an object, or an item of a
/// known kind that does not have that kind's shape (named by its index, kind and name).
pub fn parse(file: &str, text: &str, snap: &mut Snapshot) -> Result<usize, BundleError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| BundleError::json(file, &e))?;
    let mut skipped = 0;
    let mut stack = vec![(String::new(), doc)];
    while let Some((path, v)) = stack.pop() {
        let Value::Object(mut o) = v else {
            return Err(BundleError::shape(file, format!("{}: expected an object", or_root(&path))));
        };
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        let api = o.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string();
        if kind == "List" || kind.ends_with("List") || (kind.is_empty() && o.contains_key("items")) {
            let items = match o.remove("items") {
                Some(Value::Array(a)) => a,
                Some(Value::Null) | None => vec![],
                Some(_) => {
                    return Err(BundleError::shape(file, format!("{}.items: expected an array", or_root(&path))));
                }
            };
            // A typed list straight from the API (`PodList`) has items without kind/apiVersion.
            let child = kind.strip_suffix("List").filter(|k| !k.is_empty()).map(str::to_string);
            // Reverse so that items come out in file order.
            for (i, mut item) in items.into_iter().enumerate().rev() {
                if let (Some(k), Value::Object(io)) = (&child, &mut item) {
                    io.entry("kind").or_insert_with(|| Value::String(k.clone()));
                    io.entry("apiVersion").or_insert_with(|| Value::String(api.clone()));
                }
                stack.push((format!("{path}items[{i}]"), item));
            }
            continue;
        }
        let v = Value::Object(o);
        let what = |e: serde_json::Error| {
            let name = v_name(&v);
            BundleError::shape(file, format!("{} ({kind} {name}): {e}", or_root(&path)))
        };
        match (api.as_str(), kind.as_str()) {
            ("v1", "Node") => snap.nodes.push(item::<Node>(&v).map_err(what)?),
            ("v1", "Pod") => snap.pods.push(item::<Pod>(&v).map_err(what)?),
            ("v1", "PersistentVolumeClaim") => snap.pvcs.push(item::<PersistentVolumeClaim>(&v).map_err(what)?),
            ("v1", "PersistentVolume") => snap.pvs.push(item::<PersistentVolume>(&v).map_err(what)?),
            ("storage.k8s.io/v1", "VolumeAttachment") => {
                snap.volume_attachments.push(item::<VolumeAttachment>(&v).map_err(what)?)
            }
            ("v1", "Event") => snap.events.push(item::<Event>(&v).map_err(what)?),
            _ => skipped += 1,
        }
    }
    Ok(skipped)
}

fn or_root(path: &str) -> &str {
    if path.is_empty() { "document" } else { path }
}

fn v_name(v: &Value) -> String {
    let m = &v["metadata"];
    match (m["namespace"].as_str(), m["name"].as_str()) {
        (Some(ns), Some(n)) => format!("{ns}/{n}"),
        (None, Some(n)) => n.to_string(),
        _ => "<unnamed>".to_string(),
    }
}

fn item<T: DeserializeOwned>(v: &Value) -> Result<Arc<T>, serde_json::Error> {
    T::deserialize(v).map(Arc::new)
}

/// The Kubernetes objects of `snap` as a `v1` `List` (each item with its `apiVersion` and `kind`),
/// in the order kubectl prints them: nodes, pods, PVCs, PVs, VolumeAttachments, events.
pub fn to_list(snap: &Snapshot) -> Value {
    let mut items = vec![];
    push_items(&mut items, &snap.nodes);
    push_items(&mut items, &snap.pods);
    push_items(&mut items, &snap.pvcs);
    push_items(&mut items, &snap.pvs);
    push_items(&mut items, &snap.volume_attachments);
    push_items(&mut items, &snap.events);
    list_of(items)
}

/// Appends `items` as JSON, each with its `apiVersion` and `kind` (slim or full types).
pub fn push_items<T: serde::Serialize + k8s_openapi::Resource>(out: &mut Vec<Value>, items: &[Arc<T>]) {
    out.extend(items.iter().filter_map(|i| {
        let mut v = serde_json::to_value(&**i).ok()?;
        let o = v.as_object_mut()?;
        o.insert("apiVersion".into(), T::API_VERSION.into());
        o.insert("kind".into(), T::KIND.into());
        Some(v)
    }));
}

/// A `v1` `List` of `items`, as kubectl prints one.
pub fn list_of(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}
