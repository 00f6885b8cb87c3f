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
//!
//! The writer also records what it changed since the console last took the changes
//! ([`Store::take_changes`], issue 13: a batch of watch events costs the console O(change)):
//! one [`StoreChange`] per (namespace, name), the object stored when the changes were last taken and
//! the one stored now, so an object added, changed and deleted between two takes nets out. An
//! `Apply` equal to the stored object keeps the stored `Arc` and records nothing; a re-list keeps
//! the stored `Arc` of every object it lists unchanged and records only the differences (found in
//! the watcher's task, not the console's), so a watch restart does not wake a full rebuild.
//! Until they are taken, the changes hold the replaced and deleted objects' `Arc`s (one per key).

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

/// One object's change between two takes of a store's changes ([`Store::take_changes`]).
/// At least one side is set, and the two are different `Arc`s of the same (namespace, name).
#[derive(Debug, Clone)]
pub struct StoreChange<K> {
    /// The object stored when the changes were last taken (`None`: there was none).
    pub before: Option<Arc<K>>,
    /// The object stored now (`None`: deleted).
    pub after: Option<Arc<K>>,
}

impl<K: Keyed> StoreChange<K> {
    /// The changed object's (namespace, name) ([`Keyed::store_key`]).
    pub fn key(&self) -> (Option<&str>, &str) {
        match (&self.after, &self.before) {
            (Some(o), _) | (None, Some(o)) => o.store_key(),
            (None, None) => (None, ""),
        }
    }
}

fn hash(hasher: &DefaultHashBuilder, key: (Option<&str>, &str)) -> u64 {
    use std::hash::BuildHasher;
    hasher.hash_one(key)
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

    /// Inserts `o`, replacing the object of the same key; returns the replaced one.
    fn insert(&mut self, o: Arc<K>) -> Option<Arc<K>> {
        let Map { table, hasher } = self;
        let h = hash(hasher, o.store_key());
        match table.entry(h, |x| x.store_key() == o.store_key(), |x| hash(hasher, x.store_key())) {
            Entry::Occupied(mut e) => Some(std::mem::replace(e.get_mut(), o)),
            Entry::Vacant(e) => {
                e.insert(o);
                None
            }
        }
    }

    fn remove(&mut self, key: (Option<&str>, &str)) -> Option<Arc<K>> {
        let h = hash(&self.hasher, key);
        self.table.find_entry(h, |x| x.store_key() == key).ok().map(|e| e.remove().0)
    }

    fn get(&self, key: (Option<&str>, &str)) -> Option<&Arc<K>> {
        self.table.find(hash(&self.hasher, key), |x| x.store_key() == key)
    }
}

/// The changes not taken yet, one per key (see the module doc).
struct Pending<K> {
    table: HashTable<StoreChange<K>>,
    hasher: DefaultHashBuilder,
}

impl<K: Keyed> Pending<K> {
    fn new() -> Self {
        Pending { table: HashTable::new(), hasher: DefaultHashBuilder::default() }
    }

    /// Records that the object stored under `before`'s / `after`'s key went from `before` to
    /// `after`: a key already changed keeps its first `before` and takes the new `after`; a change
    /// that comes back to where it started (added then deleted) nets out.
    fn record(&mut self, before: Option<Arc<K>>, after: Option<Arc<K>>) {
        let c = StoreChange { before, after };
        let Pending { table, hasher } = self;
        let h = hash(hasher, c.key());
        match table.entry(h, |x| x.key() == c.key(), |x| hash(hasher, x.key())) {
            Entry::Occupied(mut e) => {
                e.get_mut().after = c.after;
                if nets_out(e.get()) {
                    e.remove();
                }
            }
            Entry::Vacant(e) => {
                if !nets_out(&c) {
                    e.insert(c);
                }
            }
        }
    }
}

/// True when `c` changes nothing: no object before or after, or the same `Arc`.
fn nets_out<K>(c: &StoreChange<K>) -> bool {
    match (&c.before, &c.after) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// A store's objects and its changes not taken yet, under one lock (a take sees the objects and
/// the changes that made them).
struct Inner<K> {
    map: Map<K>,
    pending: Pending<K>,
}

/// The read side of one kind's store, shared by cloning (what the console and the bundle of a
/// snapshot read). Reads take a read lock for the time of the copy.
pub struct Store<K> {
    inner: Arc<RwLock<Inner<K>>>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store { inner: self.inner.clone() }
    }
}

impl<K: Keyed> Store<K> {
    /// Every object (the `Arc`s, not copies), in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.read().map.table.iter().cloned().collect()
    }

    /// The object `namespace`/`name` (`None` namespace: cluster-scoped), if stored.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.read().map.get((namespace, name)).cloned()
    }

    /// How many objects are stored.
    pub fn len(&self) -> usize {
        self.read().map.table.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the writer changed since the last call (since the store was made, at the first), one
    /// [`StoreChange`] per (namespace, name), in no particular order; costs the number of changes.
    /// Applying them to the objects stored at the last call gives the objects stored now. Meant
    /// for one taker (the console's loop): a second one would miss what the first took.
    pub fn take_changes(&self) -> Vec<StoreChange<K>> {
        let taken = {
            let mut g = self.inner.write().unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut g.pending.table, HashTable::new())
        };
        taken.into_iter().collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner<K>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The write side of one kind's store: the watcher's task applies its events through it.
pub struct Writer<K> {
    inner: Arc<RwLock<Inner<K>>>,
    /// The list being received (between `Init` and `InitDone`).
    buffer: Option<Map<K>>,
}

/// An empty store and its writer.
pub fn store<K: Keyed>() -> (Store<K>, Writer<K>) {
    let inner = Arc::new(RwLock::new(Inner { map: Map::new(), pending: Pending::new() }));
    (Store { inner: inner.clone() }, Writer { inner, buffer: None })
}

impl<K: Keyed + PartialEq> Writer<K> {
    /// Applies one watcher event (see the module doc), taking the object without copying it, and
    /// records what it changed.
    pub fn apply(&mut self, event: WEvent<K>) {
        match event {
            WEvent::Apply(o) => {
                let mut g = self.write();
                if g.map.get(o.store_key()).is_some_and(|old| **old == o) {
                    return;
                }
                let new = Arc::new(o);
                let old = g.map.insert(new.clone());
                g.pending.record(old, Some(new));
            }
            WEvent::Delete(o) => {
                let mut g = self.write();
                if let Some(old) = g.map.remove(o.store_key()) {
                    g.pending.record(Some(old), None);
                }
            }
            WEvent::Init => self.buffer = Some(Map::new()),
            WEvent::InitApply(o) => {
                self.buffer.get_or_insert_with(Map::new).insert(Arc::new(o));
            }
            WEvent::InitDone => {
                let mut listed = self.buffer.take().unwrap_or_else(Map::new);
                // the differences, found under the read lock (this task is the only writer)
                let diff = relisted(&self.inner.read().unwrap_or_else(PoisonError::into_inner).map, &mut listed);
                let mut g = self.write();
                // the old map is dropped after the lock is released
                let _old = std::mem::replace(&mut g.map, listed);
                for c in diff {
                    g.pending.record(c.before, c.after);
                }
            }
        }
    }

    /// The stored object with `o`'s key (not one of a list still being received).
    pub fn get_like(&self, o: &K) -> Option<Arc<K>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner).map.get(o.store_key()).cloned()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner<K>> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a re-list changes from `old` to `listed`; an object `listed`
/// holds equal to the stored one is given the stored `Arc` (so it is no change).
fn relisted<K: Keyed + PartialEq>(old: &Map<K>, listed: &mut Map<K>) -> Vec<StoreChange<K>> {
    let mut diff = vec![];
    for o in listed.table.iter_mut() {
        match old.get(o.store_key()) {
            Some(was) if **was == **o => *o = was.clone(),
            was => diff.push(StoreChange { before: was.cloned(), after: Some(o.clone()) }),
        }
    }
    for o in old.table.iter() {
        if listed.get(o.store_key()).is_none() {
            diff.push(StoreChange { before: Some(o.clone()), after: None });
        }
    }
    diff
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
