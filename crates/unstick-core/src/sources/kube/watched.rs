//! What kube's `watcher` watches (issue 13, memory): a slim object with, beside it, the only
//! metadata the watcher reads, its `resourceVersion` (kube-runtime 5's `watcher.rs` reads an
//! object's `resource_version()` to resume the watch, nothing else of its metadata). kube's
//! `Resource` trait hands out a k8s-openapi `ObjectMeta`, which the slim objects do not have
//! (their [`Meta`](crate::model::meta::Meta) is a third of its size and has no version); the
//! stores keep only [`Watched::object`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer};

use crate::model::meta::capturing_version;

/// A slim object `T` as the watcher sees it: `metadata` holds only `resourceVersion`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watched<T> {
    /// `resourceVersion` only.
    pub metadata: ObjectMeta,
    /// The object.
    pub object: T,
}

impl<T: k8s_openapi::Resource> k8s_openapi::Resource for Watched<T> {
    const API_VERSION: &'static str = T::API_VERSION;
    const GROUP: &'static str = T::GROUP;
    const KIND: &'static str = T::KIND;
    const VERSION: &'static str = T::VERSION;
    const URL_PATH_SEGMENT: &'static str = T::URL_PATH_SEGMENT;
    type Scope = T::Scope;
}

impl<T: k8s_openapi::ListableResource> k8s_openapi::ListableResource for Watched<T> {
    const LIST_KIND: &'static str = T::LIST_KIND;
}

impl<T: k8s_openapi::Resource> k8s_openapi::Metadata for Watched<T> {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Watched<T> {
    /// `T` as it parses, and the `resourceVersion` its `metadata` had.
    ///
    /// Errors: those of `T`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (object, resource_version) = capturing_version(|| T::deserialize(d));
        Ok(Watched { metadata: ObjectMeta { resource_version, ..ObjectMeta::default() }, object: object? })
    }
}

impl<T> Watched<T> {
    /// The object without its version.
    pub fn into_inner(self) -> T {
        self.object
    }
}

/// A watcher event on [`Watched`] objects as the same event on the objects.
pub fn unwrap_event<T>(e: kube::runtime::watcher::Event<Watched<T>>) -> kube::runtime::watcher::Event<T> {
    use kube::runtime::watcher::Event as E;
    match e {
        E::Apply(o) => E::Apply(o.object),
        E::Delete(o) => E::Delete(o.object),
        E::Init => E::Init,
        E::InitApply(o) => E::InitApply(o.object),
        E::InitDone => E::InitDone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::objects::{Event, Pod};
    use kube::Resource;

    #[test]
    fn the_version_is_beside_the_object_and_the_api_paths_are_the_objects() {
        let raw = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","resourceVersion":"123",
            "labels":{"a":"b"}},"spec":{"nodeName":"n1"}}"#;
        let w: Watched<Pod> = serde_json::from_str(raw).unwrap();
        assert_eq!(w.meta().resource_version.as_deref(), Some("123"));
        assert_eq!(w.meta().name, None, "nothing else is copied");
        assert_eq!(w.object.metadata.name.as_deref(), Some("p"));
        assert_eq!(w.object.spec.as_ref().and_then(|s| s.node_name.as_deref()), Some("n1"));
        assert_eq!(Watched::<Pod>::url_path(&(), Some("ns")), "/api/v1/namespaces/ns/pods");
        assert_eq!(
            Watched::<crate::model::objects::VolumeAttachment>::url_path(&(), None),
            "/apis/storage.k8s.io/v1/volumeattachments"
        );
        // a label patch parses to the same object, another version
        let patched = raw.replace("\"123\"", "\"124\"").replace("\"b\"", "\"c\"");
        let w2: Watched<Pod> = serde_json::from_str(&patched).unwrap();
        assert_eq!(w2.object, w.object);
        assert_eq!(w2.meta().resource_version.as_deref(), Some("124"));
    }

    #[test]
    fn a_list_and_a_watch_event_parse_with_versions() {
        let list = r#"{"apiVersion":"v1","kind":"EventList","metadata":{"resourceVersion":"900"},"items":[
            {"metadata":{"name":"e1","namespace":"ns","resourceVersion":"10"},"involvedObject":{"kind":"Pod","name":"p","resourceVersion":"77"},"reason":"FailedMount"},
            {"metadata":{"name":"e2","namespace":"ns","resourceVersion":"11"},"involvedObject":{"kind":"Node","name":"n"}}]}"#;
        let l: kube::core::ObjectList<Watched<Event>> = serde_json::from_str(list).unwrap();
        let v: Vec<_> = l.items.iter().map(|w| w.metadata.resource_version.as_deref()).collect();
        assert_eq!(v, [Some("10"), Some("11")], "the object's own version, not its involvedObject's");
        assert_eq!(l.items[0].object.reason.as_deref(), Some("FailedMount"));
        // `object` before `type`: serde buffers the object, the version still comes out
        let ev = r#"{"object":{"metadata":{"name":"p","resourceVersion":"5"}},"type":"MODIFIED"}"#;
        match serde_json::from_str::<kube::core::WatchEvent<Watched<Pod>>>(ev).unwrap() {
            kube::core::WatchEvent::Modified(w) => assert_eq!(w.metadata.resource_version.as_deref(), Some("5")),
            other => panic!("{other:?}"),
        }
    }
}
