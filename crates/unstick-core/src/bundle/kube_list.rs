//! `kube.json`: a `v1` `List` as printed by
//! `kubectl get nodes,pods,pvc,pv,volumeattachments,events -A -o json`, read into a [`Snapshot`]
//! and written from one.

use std::cell::Cell;
use std::sync::Arc;

use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::format::BundleError;
use crate::model::Snapshot;

/// Reads the items of a `List` (or a single object) into `snap`. Items of other kinds
/// (StorageClass, Namespace, ...) are skipped and counted; nested `List`s are flattened.
///
/// Errors: invalid JSON (with line and column), a document that is not an object, or an item of a
/// known kind that does not have that kind's shape (named by its index, kind and name).
pub fn parse(file: &str, text: &str, snap: &mut Snapshot) -> Result<usize, BundleError> {
    parse_from(file, &mut serde_json::Deserializer::from_str(text), "", None, snap)
}

/// Bytes read since the last item went into the model, for the streaming reader's meter.
pub(super) struct Held {
    pub(super) since: Cell<u64>,
    pub(super) over: Cell<bool>,
    pub(super) max: u64,
}

pub(super) fn parse_from<'de, R: serde_json::de::Read<'de>>(
    file: &str,
    de: &mut serde_json::Deserializer<R>,
    path: &str,
    held: Option<&Held>,
    snap: &mut Snapshot,
) -> Result<usize, BundleError> {
    let mut sink = Sink { file, snap, skipped: 0, error: None, held };
    let r = DocSeed { sink: &mut sink, path }.deserialize(&mut *de).and_then(|()| de.end());
    match (sink.error.take(), r) {
        (Some(e), _) => Err(e),
        (None, Err(e)) => Err(BundleError::json(file, &e)),
        (None, Ok(())) => Ok(sink.skipped),
    }
}

/// Where parsed items go; `error` holds a shape error (serde's error type cannot carry it).
pub(super) struct Sink<'s> {
    pub(super) file: &'s str,
    pub(super) snap: &'s mut Snapshot,
    pub(super) skipped: usize,
    pub(super) error: Option<BundleError>,
    /// What the streaming reader holds; restarted after each item taken.
    pub(super) held: Option<&'s Held>,
}

/// Items without a kind seen before their list's `kind`: `(index, raw text)`.
pub(super) type Pending = Vec<(usize, Box<str>)>;

impl Sink<'_> {
    /// Records `e` and returns the error that stops the parser.
    fn fail<E: serde::de::Error>(&mut self, e: BundleError) -> E {
        let msg = e.to_string();
        self.error.get_or_insert(e);
        E::custom(msg)
    }

    /// One item (raw JSON text) at `path`; `child` is the kind and apiVersion of a typed list's items.
    fn item(&mut self, path: &str, raw: &str, child: Option<(&str, &str)>) -> Result<(), BundleError> {
        let h = self.header(path, raw)?;
        self.item_with(path, raw, h, child)
    }

    /// What is read of an item before its kind is known. Errors: not an object.
    fn header(&self, path: &str, raw: &str) -> Result<Header, BundleError> {
        if !raw.trim_start().starts_with('{') {
            return Err(BundleError::shape(self.file, format!("{}: expected an object", or_root(path))));
        }
        // a malformed `metadata` is the item's shape error, reported later: read the kind without it
        serde_json::from_str(raw).or_else(|_| {
            serde_json::from_str::<HeaderKind>(raw)
                .map(|k| Header { kind: k.kind, api_version: k.api_version, ..Header::default() })
                .map_err(|e| BundleError::json(self.file, &e))
        })
    }

    /// [`Self::item`] with its header read.
    fn item_with(&mut self, path: &str, raw: &str, h: Header, child: Option<(&str, &str)>) -> Result<(), BundleError> {
        let kind = h.kind.as_deref().or(child.map(|c| c.0)).unwrap_or("");
        let api = h.api_version.as_deref().or(child.map(|c| c.1)).unwrap_or("");
        if kind == "List" || kind.ends_with("List") || (kind.is_empty() && h.items.is_some()) {
            self.skipped += parse_from(self.file, &mut serde_json::Deserializer::from_str(raw), path, None, self.snap)?;
            return Ok(());
        }
        let what = |e: serde_json::Error| {
            let name = match (h.metadata.namespace.as_deref(), h.metadata.name.as_deref()) {
                (Some(ns), Some(n)) => format!("{ns}/{n}"),
                (None, Some(n)) => n.to_string(),
                _ => "<unnamed>".to_string(),
            };
            // positions are within the item: drop them, the path names it
            let e = e.to_string();
            let e = e.rsplit_once(" at line ").map_or(e.as_str(), |(m, _)| m);
            BundleError::shape(self.file, format!("{} ({kind} {name}): {e}", or_root(path)))
        };
        let snap = &mut *self.snap;
        match (api, kind) {
            ("v1", "Node") => snap.nodes.push(item(raw).map_err(what)?),
            ("v1", "Pod") => snap.pods.push(item(raw).map_err(what)?),
            ("v1", "PersistentVolumeClaim") => snap.pvcs.push(item(raw).map_err(what)?),
            ("v1", "PersistentVolume") => snap.pvs.push(item(raw).map_err(what)?),
            ("storage.k8s.io/v1", "VolumeAttachment") => snap.volume_attachments.push(item(raw).map_err(what)?),
            ("v1", "Event") => snap.events.push(item(raw).map_err(what)?),
            _ => self.skipped += 1,
        }
        if let Some(h) = self.held {
            h.since.set(0);
        }
        Ok(())
    }

    /// Item `i` of the `items` at `path` (raw JSON text): read now when its kind is known,
    /// else kept in `pending` until the list's `kind` is.
    pub(super) fn next_item(
        &mut self,
        path: &str,
        i: usize,
        raw: &str,
        child: Option<(&str, &str)>,
        pending: &mut Pending,
    ) -> Result<(), BundleError> {
        let path = format!("{path}items[{i}]");
        let h = self.header(&path, raw)?;
        if child.is_some() || h.kind.as_deref().is_some_and(|k| !k.is_empty()) {
            self.item_with(&path, raw, h, child)
        } else {
            pending.push((i, raw.into()));
            Ok(())
        }
    }

    /// The end of the document (or nested list) at `path` whose fields other than `items` are
    /// `fields`: a single object is read from them; the `pending` items of a list are read.
    pub(super) fn finish(
        &mut self,
        path: &str,
        fields: &[(String, Box<RawValue>)],
        has_items: bool,
        pending: Pending,
    ) -> Result<(), BundleError> {
        let (kind, api) = kind_of(fields);
        let is_list = kind == "List" || kind.ends_with("List") || (kind.is_empty() && has_items);
        if !is_list {
            // a single object: re-assemble it from its fields
            let mut text = String::from("{");
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&serde_json::to_string(k).unwrap_or_default());
                text.push(':');
                text.push_str(v.get());
            }
            text.push('}');
            return self.item(path, &text, None);
        }
        let child = kind.strip_suffix("List").filter(|k| !k.is_empty()).map(|k| (k.to_string(), api));
        for (i, raw) in pending {
            let path = format!("{path}items[{i}]");
            let c = child.as_ref().map(|(k, a)| (k.as_str(), a.as_str()));
            self.item(&path, &raw, c)?;
        }
        Ok(())
    }
}

/// What is read of an item before its kind is known.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Header {
    kind: Option<String>,
    api_version: Option<String>,
    metadata: HeaderMeta,
    items: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct HeaderKind {
    kind: Option<String>,
    api_version: Option<String>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct HeaderMeta {
    name: Option<String>,
    namespace: Option<String>,
}

/// The document (or a nested list): an object whose `items` are streamed; its other fields are
/// kept raw (a single object is re-read whole from them).
struct DocSeed<'a, 's> {
    sink: &'a mut Sink<'s>,
    path: &'a str,
}

impl<'de> DeserializeSeed<'de> for DocSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut fields: Vec<(String, Box<RawValue>)> = vec![];
        // items seen before `kind` and without their own: they wait for the list's kind
        let mut pending = Pending::new();
        let mut has_items = false;
        while let Some(k) = map.next_key::<String>()? {
            if k != "items" {
                let v: Box<RawValue> = map.next_value()?;
                fields.push((k, v));
                continue;
            }
            has_items = true;
            let child = child_kind(&fields);
            let seed = ItemsSeed { sink: &mut *self.sink, path: self.path, child, pending: &mut pending };
            map.next_value_seed(seed)?;
        }
        self.sink.finish(self.path, &fields, has_items, pending).map_err(|e| self.sink.fail(e))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        let e = BundleError::shape(self.sink.file, format!("{}: expected an object", or_root(self.path)));
        Err(self.sink.fail(e))
    }
}

/// `(kind, apiVersion)` from raw fields (empty when absent or not strings).
pub(super) fn kind_of(fields: &[(String, Box<RawValue>)]) -> (String, String) {
    let get = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| serde_json::from_str::<String>(v.get()).ok())
            .unwrap_or_default()
    };
    (get("kind"), get("apiVersion"))
}

/// The item kind of a typed list whose `kind` was already read (`PodList` → `Pod`).
pub(super) fn child_kind(fields: &[(String, Box<RawValue>)]) -> Option<(String, String)> {
    let (kind, api) = kind_of(fields);
    kind.strip_suffix("List").filter(|k| !k.is_empty()).map(|k| (k.to_string(), api))
}

/// The `items` array, one raw item at a time.
struct ItemsSeed<'a, 's> {
    sink: &'a mut Sink<'s>,
    path: &'a str,
    /// Known item kind of a typed list.
    child: Option<(String, String)>,
    pending: &'a mut Pending,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            let c = self.child.as_ref().map(|(k, a)| (k.as_str(), a.as_str()));
            self.sink.next_item(self.path, i, raw.get(), c, self.pending).map_err(|e| self.sink.fail(e))?;
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.not_array())
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        Err(self.not_array())
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Err(self.not_array())
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.not_array())
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.not_array())
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.not_array())
    }
}

impl ItemsSeed<'_, '_> {
    fn not_array<E: serde::de::Error>(self) -> E {
        let e = BundleError::shape(self.sink.file, format!("{}.items: expected an array", or_root(self.path)));
        self.sink.fail(e)
    }
}

fn or_root(path: &str) -> &str {
    if path.is_empty() { "document" } else { path }
}

fn item<T: DeserializeOwned>(raw: &str) -> Result<Arc<T>, serde_json::Error> {
    serde_json::from_str(raw).map(Arc::new)
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
    out.extend(items.iter().filter_map(|i| list_item(&**i)));
}

/// One object as a `List` item: its JSON with its `apiVersion` and `kind` (`None` when it does
/// not serialize to an object, which k8s-openapi's and the slim types always do).
pub fn list_item<T: serde::Serialize + k8s_openapi::Resource>(o: &T) -> Option<Value> {
    let mut v = serde_json::to_value(o).ok()?;
    let obj = v.as_object_mut()?;
    obj.insert("apiVersion".into(), T::API_VERSION.into());
    obj.insert("kind".into(), T::KIND.into());
    Some(v)
}

/// The annotation `kubectl apply` keeps the whole applied object in: dropped from bundles.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// One list item as `kube.json` holds it, from the text the API server sent (`raw`, an object):
/// `apiVersion` and `kind` first (a list's items come without them), then its fields in the
/// server's order, verbatim, except `metadata.managedFields` and the
/// `kubectl.kubernetes.io/last-applied-configuration` annotation, which are dropped (as
/// `collect` always has). Only the object's top level, its `metadata` and its annotations are
/// parsed, as raw fields. Errors: `raw`, its `metadata` or its annotations are not objects.
pub fn stripped_item(api_version: &str, kind: &str, raw: &str) -> Result<String, serde_json::Error> {
    let mut out = String::with_capacity(raw.len() + 64);
    out.push_str(r#"{"apiVersion":"#);
    out.push_str(&serde_json::to_string(api_version)?);
    out.push_str(r#","kind":"#);
    out.push_str(&serde_json::to_string(kind)?);
    for (k, v) in serde_json::from_str::<Fields>(raw)?.0 {
        match k.as_str() {
            "apiVersion" | "kind" => continue,
            "metadata" => {
                let meta = serde_json::from_str::<Fields>(v.get())?.0.into_iter().filter(|(k, _)| k != "managedFields");
                push_field(
                    &mut out,
                    &k,
                    &write_object(meta, |out, k, v| {
                        if k == "annotations" {
                            let kept = serde_json::from_str::<Fields>(v.get())?
                                .0
                                .into_iter()
                                .filter(|(k, _)| k != LAST_APPLIED);
                            out.push_str(&write_object(kept, |out, _, v| {
                                out.push_str(v.get());
                                Ok(())
                            })?);
                        } else {
                            out.push_str(v.get());
                        }
                        Ok(())
                    })?,
                );
            }
            _ => push_field(&mut out, &k, v.get()),
        }
    }
    out.push('}');
    Ok(out)
}

/// `,"key":value` (the key JSON-escaped).
fn push_field(out: &mut String, key: &str, value: &str) {
    out.push(',');
    out.push_str(&serde_json::to_string(key).unwrap_or_default());
    out.push(':');
    out.push_str(value);
}

/// An object of `fields`, each value written by `value`.
fn write_object<'a>(
    fields: impl Iterator<Item = (String, &'a RawValue)>,
    mut value: impl FnMut(&mut String, &str, &'a RawValue) -> Result<(), serde_json::Error>,
) -> Result<String, serde_json::Error> {
    let mut out = String::from("{");
    for (i, (k, v)) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(&k)?);
        out.push(':');
        value(&mut out, &k, v)?;
    }
    out.push('}');
    Ok(out)
}

/// An object's fields in their order, each value kept as its text.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut fields = vec![];
                while let Some(kv) = map.next_entry::<String, &'de RawValue>()? {
                    fields.push(kv);
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// A `v1` `List` of `items`, as kubectl prints one.
pub fn list_of(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

#[cfg(test)]
#[path = "kube_item_tests.rs"]
mod kube_item_tests;
