//! The watch stores (issue 13, memory): one kind's objects as its watcher reports them, held as
//! `Arc`s in a `hashbrown::HashTable` hashed on (namespace, name) read from the objects
//! themselves. kube-runtime's `reflector::Store` keys an `AHashMap` with an `ObjectRef` per object
//! (~96 bytes plus copies of the name, namespace, resourceVersion and uid: 300-400 bytes per
//! object at 10k pods); here a slot is one pointer plus a control byte.
//!
//! [`Writer::apply`] has the semantics of kube-runtime 5's `Writer::apply_watcher_event`:
//! `Apply` inserts or replaces, `Delete` removes, and a (re-)list (`Init`, `InitApply`...,
//! `InitDone`) is built in a separate map swapped in whole on `InitDone`, so readers see the old
//! objects until the new list is complete and nothing the re-list no longer has survives it.

use std::sync::{Arc, PoisonError, RwLock};

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};
use kube::runtime::watcher::Event as WEvent;

/// An object a [`Store`] can hold: its (namespace, name), read from the object itself.
pub trait Keyed {
    /// `(metadata.namespace, metadata.name)`; `None` namespace for cluster-scoped objects, `""`
    /// for a missing name (the API server always sets one).
    fn store_key(&self) -> (Option<&str>, &str);
}

impl<K: crate::model::meta::SlimObject> Keyed for K {
    fn store_key(&self) -> (Option<&str>, &str) {
        (self.meta().namespace.as_deref(), self.meta().name.as_deref().unwrap_or(""))
    }
}

/// Objects keyed on their (namespace, name), each map with its own hasher.
struct Map<K> {
    table: HashTable<Arc<K>>,
    hasher: DefaultHashBuilder,
}

impl<K: Keyed> Map<K> {
    fn new() -> Self {
        Map { table: HashTable::new(), hasher: DefaultHashBuilder::default() }
    }

    fn hash(hasher: &DefaultHashBuilder, key: (Option<&str>, &str)) -> u64 {
        use std::hash::BuildHasher;
        hasher.hash_one(key)
    }

    /// Inserts `o`, replacing the object of the same key.
    fn insert(&mut self, o: Arc<K>) {
        let Map { table, hasher } = self;
        let h = Self::hash(hasher, o.store_key());
        match table.entry(h, |x| x.store_key() == o.store_key(), |x| Self::hash(hasher, x.store_key())) {
            Entry::Occupied(mut e) => *e.get_mut() = o,
            Entry::Vacant(e) => {
                e.insert(o);
            }
        }
    }

    fn remove(&mut self, key: (Option<&str>, &str)) {
        let h = Self::hash(&self.hasher, key);
        if let Ok(e) = self.table.find_entry(h, |x| x.store_key() == key) {
            e.remove();
        }
    }

    fn get(&self, key: (Option<&str>, &str)) -> Option<&Arc<K>> {
        self.table.find(Self::hash(&self.hasher, key), |x| x.store_key() == key)
    }
}

/// The read side of one kind's store, shared by cloning (what the console and the bundle of a
/// snapshot read). Reads take a read lock for the time of the copy.
pub struct Store<K> {
    map: Arc<RwLock<Map<K>>>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store { map: self.map.clone() }
    }
}

impl<K: Keyed> Store<K> {
    /// Every object (the `Arc`s, not copies), in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        let m = self.map.read().unwrap_or_else(PoisonError::into_inner);
        m.table.iter().cloned().collect()
    }

    /// The object `namespace`/`name` (`None` namespace: cluster-scoped), if stored.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let m = self.map.read().unwrap_or_else(PoisonError::into_inner);
        m.get((namespace, name)).cloned()
    }

    /// How many objects are stored.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(PoisonError::into_inner).table.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The write side of one kind's store: the watcher's task applies its events through it.
pub struct Writer<K> {
    map: Arc<RwLock<Map<K>>>,
    /// The list being received (between `Init` and `InitDone`).
    buffer: Option<Map<K>>,
}

/// An empty store and its writer.
pub fn store<K: Keyed>() -> (Store<K>, Writer<K>) {
    let map = Arc::new(RwLock::new(Map::new()));
    (Store { map: map.clone() }, Writer { map, buffer: None })
}

impl<K: Keyed> Writer<K> {
    /// Applies one watcher event (see the module doc), taking the object without copying it.
    pub fn apply(&mut self, event: WEvent<K>) {
        match event {
            WEvent::Apply(o) => self.write().insert(Arc::new(o)),
            WEvent::Delete(o) => self.write().remove(o.store_key()),
            WEvent::Init => self.buffer = Some(Map::new()),
            WEvent::InitApply(o) => self.buffer.get_or_insert_with(Map::new).insert(Arc::new(o)),
            WEvent::InitDone => {
                let listed = self.buffer.take().unwrap_or_else(Map::new);
                // the old map is dropped after the lock is released
                let _old = std::mem::replace(&mut *self.write(), listed);
            }
        }
    }

    /// The stored object with `o`'s key (not one of a list still being received).
    pub fn get_like(&self, o: &K) -> Option<Arc<K>> {
        self.map.read().unwrap_or_else(PoisonError::into_inner).get(o.store_key()).cloned()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Map<K>> {
        self.map.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use crate::model::objects::{Node, Pod};

    fn pod(ns: &str, name: &str, node: &str) -> Pod {
        (*fixtures::pod(ns, name, node, "c", "Running", "2026-01-01T00:00:00Z")).clone()
    }

    fn node_of(s: &Store<Pod>, ns: &str, name: &str) -> Option<String> {
        s.get(Some(ns), name).and_then(|p| p.spec.as_ref()?.node_name.clone())
    }

    #[test]
    fn apply_replaces_by_namespace_and_name_and_delete_removes() {
        let (s, mut w) = store::<Pod>();
        w.apply(WEvent::Apply(pod("a", "p", "n1")));
        w.apply(WEvent::Apply(pod("b", "p", "n2")));
        w.apply(WEvent::Apply(pod("a", "q", "n3")));
        assert_eq!(s.len(), 3);
        assert_eq!(node_of(&s, "a", "p").as_deref(), Some("n1"));
        assert_eq!(node_of(&s, "b", "p").as_deref(), Some("n2"), "same name, other namespace");
        w.apply(WEvent::Apply(pod("a", "p", "n9")));
        assert_eq!(s.len(), 3, "an update replaces");
        assert_eq!(node_of(&s, "a", "p").as_deref(), Some("n9"));
        w.apply(WEvent::Delete(pod("a", "p", "n9")));
        assert_eq!(s.len(), 2);
        assert!(s.get(Some("a"), "p").is_none());
        assert!(s.get(Some("b"), "p").is_some());
        w.apply(WEvent::Delete(pod("zz", "none", "n1")));
        assert_eq!(s.len(), 2, "deleting what is not there changes nothing");
        assert!(s.get(None, "p").is_none(), "a namespaced object is not found without its namespace");
    }

    #[test]
    fn cluster_scoped_objects_have_no_namespace() {
        let (s, mut w) = store::<Node>();
        let n = fixtures::node("n1", "10.0.0.1", "True", "2026-01-01T00:00:00Z", &[]);
        w.apply(WEvent::Apply((*n).clone()));
        assert!(s.get(None, "n1").is_some());
        assert!(s.get(Some(""), "n1").is_none());
        assert!(w.get_like(&n).is_some());
    }

    #[test]
    fn a_relist_is_swapped_in_whole_on_init_done() {
        let (s, mut w) = store::<Pod>();
        for name in ["p1", "p2", "p3"] {
            w.apply(WEvent::Apply(pod("a", name, "old")));
        }
        w.apply(WEvent::Init);
        w.apply(WEvent::InitApply(pod("a", "p2", "new")));
        w.apply(WEvent::InitApply(pod("a", "p4", "new")));
        // until InitDone, readers see the old objects
        assert_eq!(s.len(), 3);
        assert_eq!(node_of(&s, "a", "p2").as_deref(), Some("old"));
        assert!(s.get(Some("a"), "p4").is_none());
        w.apply(WEvent::InitDone);
        let mut names: Vec<String> = s.state().iter().map(|p| p.metadata.name.clone().unwrap_or_default()).collect();
        names.sort();
        assert_eq!(names, ["p2", "p4"], "what the re-list no longer has is gone");
        assert_eq!(node_of(&s, "a", "p2").as_deref(), Some("new"));
        // an event after the swap lands in the new map
        w.apply(WEvent::Apply(pod("a", "p5", "x")));
        assert_eq!(s.len(), 3);
        // a second re-list starts from an empty buffer
        w.apply(WEvent::Init);
        w.apply(WEvent::InitDone);
        assert!(s.is_empty());
    }

    #[test]
    fn many_objects_are_all_found() {
        let (s, mut w) = store::<Pod>();
        for i in 0..2000 {
            w.apply(WEvent::Apply(pod(&format!("ns{}", i % 7), &format!("p{i}"), "n")));
        }
        assert_eq!(s.len(), 2000);
        assert!((0..2000).all(|i| s.get(Some(&format!("ns{}", i % 7)), &format!("p{i}")).is_some()));
        for i in (0..2000).step_by(2) {
            w.apply(WEvent::Delete(pod(&format!("ns{}", i % 7), &format!("p{i}"), "n")));
        }
        assert_eq!(s.len(), 1000);
        assert!(s.get(Some("ns0"), "p0").is_none() && s.get(Some("ns1"), "p1").is_some());
    }
}
