//! Events by involved object, the one index the rules and the Events pane share (issue 13): each
//! event is digested once ([`EventView::of`], which keeps its `Arc<Event>`) when it arrives;
//! adding or removing an event touches its object's list only.
//!
//! No key is copied out of an event: the map's key is a hash of the object's identity (kind,
//! namespace, name, borrowed from the event), and a lookup keeps only the entries whose identity
//! is the one asked for, so two objects whose hashes collide share a list and are told apart.
//!
//! An object's identity is its kind and `namespace/name` (`name` when the event gives no
//! namespace), except for the cluster-scoped Node and PersistentVolume, whose namespace is not
//! compared (an event may give one): the Events pane matches them by name. Within an object, the
//! events are in the order of their own `namespace`, `name` (the snapshot's order), then pointer.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use super::events::EventView;
use crate::model::objects::Event;

/// See the module doc.
#[derive(Debug, Default)]
pub struct EventIndex {
    hasher: RandomState,
    /// Hash of (kind, namespace compared, name) → the events of the objects of that hash, sorted
    /// by [`order`].
    by: HashMap<u64, Vec<Arc<EventView>>>,
}

/// (kind, namespace as compared, name) of the object `e` is about.
fn identity(e: &Event) -> (&str, &str, &str) {
    let o = &e.involved_object;
    let kind = o.kind.as_deref().unwrap_or("");
    let ns = if matches!(kind, "Node" | "PersistentVolume") { "" } else { o.namespace.as_deref().unwrap_or("") };
    (kind, ns, o.name.as_deref().unwrap_or(""))
}

/// (kind, namespace, name) of object `id` (`namespace/name`, or `name`) of `kind`, as
/// [`identity`] gives it.
fn identity_of<'a>(kind: &'a str, id: &'a str) -> (&'a str, &'a str, &'a str) {
    let (ns, name) = id.split_once('/').unwrap_or(("", id));
    if matches!(kind, "Node" | "PersistentVolume") { (kind, "", name) } else { (kind, ns, name) }
}

/// Where a digest sorts: its object, then its event's own namespace and name, then its pointer.
fn order(d: &EventView) -> ((&str, &str, &str), Option<&str>, Option<&str>, usize) {
    let e = d.event();
    let m = &e.metadata;
    (identity(e), m.namespace.as_deref(), m.name.as_deref(), Arc::as_ptr(e) as usize)
}

impl EventIndex {
    fn hash(&self, id: (&str, &str, &str)) -> u64 {
        self.hasher.hash_one(id)
    }

    /// Digests `e` and adds it; returns the digest.
    pub fn insert(&mut self, e: &Arc<Event>) -> Arc<EventView> {
        let d = Arc::new(EventView::of(e));
        let list = self.by.entry(self.hasher.hash_one(identity(e))).or_default();
        let at = list.partition_point(|x| order(x) < order(&d));
        list.insert(at, d.clone());
        d
    }

    /// Removes `e` (the same `Arc`); returns its digest, `None` when it was not in.
    pub fn remove(&mut self, e: &Arc<Event>) -> Option<Arc<EventView>> {
        let h = self.hash(identity(e));
        let list = self.by.get_mut(&h)?;
        let at = list.iter().position(|x| Arc::ptr_eq(x.event(), e))?;
        let d = list.remove(at);
        if list.is_empty() {
            self.by.remove(&h);
        }
        Some(d)
    }

    /// The events about object `id` (`namespace/name`, or `name`; for a Node or a
    /// PersistentVolume its name) of `kind`, in order.
    pub fn of<'s, 'k>(&'s self, kind: &'k str, id: &'k str) -> impl Iterator<Item = &'s Arc<EventView>> + use<'s, 'k> {
        let want = identity_of(kind, id);
        self.by.get(&self.hash(want)).into_iter().flatten().filter(move |d| identity(d.event()) == want)
    }

    /// Every event in the index (in no particular order).
    pub fn all(&self) -> impl Iterator<Item = &Arc<EventView>> {
        self.by.values().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn events_are_found_by_their_object_and_leave_one_at_a_time() {
        let mut node_ev = (*fixtures::event("default", "x", "NodeNotReady", "m", 1, "2026-01-01T00:00:00Z")).clone();
        node_ev.involved_object.kind = Some("Node".into());
        node_ev.involved_object.name = Some("node1".into());
        let mut late = (*fixtures::event("ns", "p1", "Started", "m", 1, "2026-01-01T00:00:00Z")).clone();
        late.metadata.name = Some("zz".into());
        let events = vec![
            Arc::new(late),
            fixtures::event("ns", "p2", "Started", "m", 1, "2026-01-01T00:00:00Z"),
            Arc::new(node_ev),
            fixtures::event("ns", "p1", "Pulled", "m", 1, "2026-01-01T00:00:00Z"),
        ];
        let mut idx = EventIndex::default();
        for e in &events {
            idx.insert(e);
        }
        let of = |idx: &EventIndex, k: &str, id: &str| {
            idx.of(k, id).map(|d| events.iter().position(|e| Arc::ptr_eq(e, d.event())).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(of(&idx, "Pod", "ns/p1"), [3, 0], "in the events' own name order");
        assert_eq!(of(&idx, "Pod", "ns/p2"), [1]);
        assert_eq!(of(&idx, "Node", "node1"), [2], "a node's events whatever namespace they give");
        assert!(of(&idx, "Pod", "p1").is_empty() && of(&idx, "Node", "p1").is_empty());
        assert_eq!(idx.remove(&events[3]).map(|d| d.reason().to_string()), Some("Pulled".into()));
        assert!(idx.remove(&events[3]).is_none(), "already gone");
        assert_eq!(of(&idx, "Pod", "ns/p1"), [0]);
        idx.remove(&events[0]);
        assert!(of(&idx, "Pod", "ns/p1").is_empty());
        assert_eq!(idx.all().count(), 2);
    }

    #[test]
    fn colliding_objects_are_told_apart() {
        // every object in one list: a lookup still keeps only its own
        let mut idx = EventIndex::default();
        let (a, b) = (
            fixtures::event("ns", "a", "Started", "m", 1, "2026-01-01T00:00:00Z"),
            fixtures::event("ns", "b", "Started", "m", 1, "2026-01-01T00:00:00Z"),
        );
        idx.insert(&a);
        let h = idx.hash(identity(&a));
        idx.by.entry(h).or_default().push(Arc::new(EventView::of(&b)));
        assert_eq!(idx.of("Pod", "ns/a").count(), 1);
    }
}
