//! The indexes the rules read (pods by key and by node, nodes with their Ready condition,
//! digested events by involved object, VolumeAttachments being deleted), kept between diagnoses and updated from the
//! objects that changed (issue 13): a watch event on one pod re-indexes that pod, not the cluster.
//!
//! Objects are told apart by their `Arc` (the stores hand out the same `Arc` for an object that did
//! not change), so a change costs one pass over the changed kind's pointers plus the changed
//! objects' work; an event is digested ([`EventView::of`]) once, when it arrives, into the
//! [`EventIndex`] the Events pane reads too. No `namespace/name` key is copied: pods are hashed on
//! their own metadata, events on their involved object's (see [`EventIndex`]).

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::event_index::EventIndex;
use super::events::{EventView, is_fenced_map_failure, is_unmap_busy};
use crate::model::index::same_objects;
use crate::model::kube::{NodeReady, internal_ips, node_ready, pod_node};
use crate::model::objects::{Event, Node, Pod, VolumeAttachment};
use crate::model::{Snapshot, key_of};

/// The rules' indexes over one snapshot; see the module doc.
#[derive(Debug, Default)]
pub struct Index {
    /// Pods by `namespace/name`, hashed on their own metadata (no key copied).
    pods: HashSet<ByKey>,
    /// Pods by `spec.nodeName` (what `blocklist-leftover` reads of a fenced node).
    pods_on: HashMap<String, Vec<Arc<Pod>>>,
    nodes: HashMap<String, (Arc<Node>, NodeReady)>,
    /// The nodes not Ready (what the grace timer reads).
    not_ready: HashSet<String>,
    /// Events by involved object, shared with the Events pane.
    events: EventIndex,
    /// The events the rules scan whole (unmap-busy, fenced map failures), in the order of a full
    /// scan sorted by involved object ([`scan_order`]).
    scanned: Vec<Arc<EventView>>,
    /// VolumeAttachments with a `deletionTimestamp`, by name.
    deleting_vas: BTreeMap<String, Arc<VolumeAttachment>>,
}

/// A pod as a set member keyed by its `namespace` and `name` ([`Key`]).
#[derive(Debug)]
struct ByKey(Arc<Pod>);

/// What a pod is looked up by: (`namespace`, `name`), borrowed.
trait Key {
    fn key(&self) -> (Option<&str>, &str);
}

impl Key for ByKey {
    fn key(&self) -> (Option<&str>, &str) {
        (self.0.metadata.namespace.as_deref(), self.0.metadata.name.as_deref().unwrap_or(""))
    }
}

impl Key for (Option<&str>, &str) {
    fn key(&self) -> (Option<&str>, &str) {
        *self
    }
}

impl Hash for dyn Key + '_ {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.key().hash(h)
    }
}

impl PartialEq for dyn Key + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn Key + '_ {}

impl Hash for ByKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self as &dyn Key).hash(h)
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ByKey {}

impl<'a> Borrow<dyn Key + 'a> for ByKey {
    fn borrow(&self) -> &(dyn Key + 'a) {
        self
    }
}

/// `namespace/name` (as [`key_of`] writes it) split back: `name` alone has no namespace.
fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

/// Where a scanned event sorts: its involved object's kind and `namespace/name`, then its own
/// `namespace`, `name` and pointer.
fn scan_order(d: &EventView) -> (&str, &str, &str, &str, usize) {
    let m = &d.event().metadata;
    let (ns, name) = (m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or(""));
    (d.kind(), &d.object, ns, name, Arc::as_ptr(d.event()) as usize)
}

/// What [`Index::sync`] found changed between two snapshots, for the diagnosis to know what to redo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    /// Keys (`namespace/name`) of pods removed, added or changed.
    pub pods: Vec<String>,
    /// Pods (`namespace/name`) an event was removed, added or changed about.
    pub pod_events: Vec<String>,
    /// Claims (`namespace/name`) an event was removed, added or changed about (the stuck-pod
    /// rules read a claim's resize failures).
    pub claim_events: Vec<String>,
    /// Nodes (names) added, removed, or whose Ready condition or InternalIPs changed: what the
    /// rules read of a node (the rest of a node reaches them through the lineage).
    pub nodes: Vec<String>,
}

impl Index {
    /// Indexes every object of `snap`.
    pub fn build(snap: &Snapshot) -> Index {
        let mut idx = Index::default();
        idx.sync(&Snapshot::default(), snap, true);
        idx
    }

    /// Brings the index from `old` (the snapshot it was built or last synced from) to `new`.
    /// A kind whose objects are the same `Arc`s is skipped unless `all`; `all` re-reads every kind
    /// from scratch. Each kind is updated per changed object (the objects of `old` not in `new`
    /// and those of `new` not in `old`, by `Arc`): `old` and `new` may hold only what changed.
    pub fn sync(&mut self, old: &Snapshot, new: &Snapshot, all: bool) -> Touched {
        let mut t = Touched::default();
        if all {
            *self = Index::default();
        }
        let empty = Snapshot::default();
        let old = if all { &empty } else { old };
        if all || !same_objects(&old.pods, &new.pods) {
            let (gone, came) = diff(&old.pods, &new.pods);
            for p in gone {
                let b = ByKey(p.clone());
                if self.pods.get(&b as &dyn Key).is_some_and(|x| Arc::ptr_eq(&x.0, p)) {
                    self.pods.remove(&b as &dyn Key);
                }
                if let Some(on) = pod_node(p).and_then(|n| self.pods_on.get_mut(n)) {
                    on.retain(|x| !Arc::ptr_eq(x, p));
                }
                t.pods.push(key_of(&p.metadata));
            }
            for p in came {
                self.pods.replace(ByKey(p.clone()));
                if let Some(n) = pod_node(p) {
                    self.pods_on.entry(n.to_string()).or_default().push(p.clone());
                }
                t.pods.push(key_of(&p.metadata));
            }
        }
        if all || !same_objects(&old.nodes, &new.nodes) {
            let (gone, came) = diff(&old.nodes, &new.nodes);
            t.nodes = self.sync_nodes(&gone, &came);
        }
        if all || !same_objects(&old.events, &new.events) {
            let (gone, came) = diff(&old.events, &new.events);
            for e in gone {
                self.remove_event(e, &mut t);
            }
            for e in came {
                self.add_event(e, &mut t);
            }
        }
        if all || !same_objects(&old.volume_attachments, &new.volume_attachments) {
            let (gone, came) = diff(&old.volume_attachments, &new.volume_attachments);
            for v in gone.into_iter().filter(|v| v.metadata.deletion_timestamp.is_some()) {
                let name = v.metadata.name.as_deref().unwrap_or("");
                if self.deleting_vas.get(name).is_some_and(|x| Arc::ptr_eq(x, v)) {
                    self.deleting_vas.remove(name);
                }
            }
            for v in came.into_iter().filter(|v| v.metadata.deletion_timestamp.is_some()) {
                if let Some(name) = v.metadata.name.clone() {
                    self.deleting_vas.insert(name, v.clone());
                }
            }
        }
        t.pods.sort();
        t.pods.dedup();
        t.pod_events.sort();
        t.pod_events.dedup();
        t.claim_events.sort();
        t.claim_events.dedup();
        t
    }

    /// Takes the `gone` nodes out and puts the `came` ones in; returns the names whose Ready
    /// condition or InternalIPs differ from before (added and removed nodes included).
    fn sync_nodes(&mut self, gone: &[&Arc<Node>], came: &[&Arc<Node>]) -> Vec<String> {
        let seen = |n: &Node, r: &NodeReady| (r.clone(), internal_ips(n));
        let mut before: HashMap<&str, Option<(NodeReady, Vec<std::net::IpAddr>)>> = HashMap::new();
        for n in gone.iter().chain(came) {
            let name = n.metadata.name.as_deref().unwrap_or("");
            before.entry(name).or_insert_with(|| self.nodes.get(name).map(|(n, r)| seen(n, r)));
        }
        for n in gone {
            let Some(name) = n.metadata.name.as_deref() else { continue };
            if self.nodes.get(name).is_some_and(|(x, _)| Arc::ptr_eq(x, n)) {
                self.nodes.remove(name);
                self.not_ready.remove(name);
            }
        }
        for n in came {
            let Some(name) = n.metadata.name.clone() else { continue };
            let r = node_ready(n);
            if r.is_ready() {
                self.not_ready.remove(&name);
            } else {
                self.not_ready.insert(name.clone());
            }
            self.nodes.insert(name, ((*n).clone(), r));
        }
        let mut changed: Vec<String> = before
            .into_iter()
            .filter(|(name, was)| *was != self.nodes.get(*name).map(|(n, r)| seen(n, r)))
            .map(|(name, _)| name.to_string())
            .collect();
        changed.sort();
        changed
    }

    fn add_event(&mut self, e: &Arc<Event>, t: &mut Touched) {
        let d = self.events.insert(e);
        match d.kind() {
            "Pod" => t.pod_events.push(d.object.clone()),
            "PersistentVolumeClaim" => t.claim_events.push(d.object.clone()),
            _ => {}
        }
        if is_unmap_busy(&d) || is_fenced_map_failure(&d) {
            let at = self.scanned.partition_point(|x| scan_order(x) < scan_order(&d));
            self.scanned.insert(at, d);
        }
    }

    fn remove_event(&mut self, e: &Arc<Event>, t: &mut Touched) {
        let Some(d) = self.events.remove(e) else { return };
        match d.kind() {
            "Pod" => t.pod_events.push(d.object.clone()),
            "PersistentVolumeClaim" => t.claim_events.push(d.object.clone()),
            _ => {}
        }
        self.scanned.retain(|x| !Arc::ptr_eq(x, &d));
    }

    /// The pod `namespace/name`.
    pub fn pod(&self, key: &str) -> Option<&Pod> {
        self.pods.get(&split_key(key) as &dyn Key).map(|p| &*p.0)
    }

    /// A node and its Ready condition.
    pub fn node(&self, name: &str) -> Option<(&Node, &NodeReady)> {
        self.nodes.get(name).map(|(n, r)| (&**n, r))
    }

    /// Every node with its Ready condition (in no particular order).
    pub fn nodes(&self) -> impl Iterator<Item = (&str, &NodeReady)> {
        self.nodes.iter().map(|(k, (_, r))| (k.as_str(), r))
    }

    /// The nodes whose Ready condition is not `True`, with it (in no particular order).
    pub fn nodes_not_ready(&self) -> impl Iterator<Item = (&str, &NodeReady)> {
        self.not_ready.iter().filter_map(|k| Some((k.as_str(), &self.nodes.get(k)?.1)))
    }

    /// The pods whose `spec.nodeName` is `node` (in no particular order).
    pub fn pods_on(&self, node: &str) -> impl Iterator<Item = &Pod> {
        self.pods_on.get(node).into_iter().flatten().map(|p| &**p)
    }

    /// The events about (`kind`, `namespace/name`), in their order.
    pub fn events_of<'s, 'k>(
        &'s self,
        kind: &'k str,
        object: &'k str,
    ) -> impl Iterator<Item = &'s EventView> + use<'s, 'k> {
        self.events.of(kind, object).map(|d| &**d).filter(move |v| v.object == object)
    }

    /// Events by involved object (what the Events pane reads).
    pub fn events(&self) -> &EventIndex {
        &self.events
    }

    /// The unmap-busy and fenced-map-failure events (what the rules scan whole), sorted by
    /// involved object.
    pub fn scanned_events(&self) -> impl Iterator<Item = &EventView> {
        self.scanned.iter().map(|d| &**d)
    }

    /// VolumeAttachments being deleted, by name.
    pub fn deleting_vas(&self) -> impl Iterator<Item = &VolumeAttachment> {
        self.deleting_vas.values().map(|v| &**v)
    }
}

/// The objects of `old` not in `new` and those of `new` not in `old`, told apart by `Arc`.
fn diff<'a, T>(old: &'a [Arc<T>], new: &'a [Arc<T>]) -> (Vec<&'a Arc<T>>, Vec<&'a Arc<T>>) {
    let ptrs = |v: &[Arc<T>]| v.iter().map(|p| Arc::as_ptr(p) as usize).collect::<HashSet<usize>>();
    let (was, is) = (ptrs(old), ptrs(new));
    let gone = old.iter().filter(|p| !is.contains(&(Arc::as_ptr(p) as usize))).collect();
    let came = new.iter().filter(|p| !was.contains(&(Arc::as_ptr(p) as usize))).collect();
    (gone, came)
}
