//! The indexes the rules read (pods by key, nodes with their Ready condition, digested events by
//! involved object, VolumeAttachments being deleted), kept between diagnoses and updated from the
//! objects that changed (issue 13): a watch event on one pod re-indexes that pod, not the cluster.
//!
//! Objects are told apart by their `Arc` (the stores hand out the same `Arc` for an object that did
//! not change), so a change costs one pass over the changed kind's pointers plus the changed
//! objects' work; an event is digested ([`EventView::of`]) once, when it arrives.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::events::{EventView, is_fenced_map_failure, is_unmap_busy};
use crate::model::index::same_objects;
use crate::model::kube::{NodeReady, node_ready};
use crate::model::objects::{Event, Node, Pod, VolumeAttachment};
use crate::model::{Snapshot, key_of};

/// Where an event sorts among the events of its object: the event's own `namespace`, `name`,
/// then its pointer (two objects of one key only exist outside the stores).
type Order = (String, String, usize);

/// The rules' indexes over one snapshot; see the module doc.
#[derive(Debug, Default)]
pub struct Index {
    pods: HashMap<String, Arc<Pod>>,
    nodes: HashMap<String, (Arc<Node>, NodeReady)>,
    /// (involved kind, `namespace/name`) → its events in [`Order`].
    events: HashMap<String, HashMap<String, BTreeMap<Order, Arc<EventView>>>>,
    /// The events the rules scan whole (unmap-busy, fenced map failures), in the order of a full
    /// scan sorted by involved object: (kind, object, [`Order`]).
    scanned: BTreeMap<(String, String, Order), Arc<EventView>>,
    /// VolumeAttachments with a `deletionTimestamp`, by name.
    deleting_vas: BTreeMap<String, Arc<VolumeAttachment>>,
}

/// What [`Index::sync`] found changed between two snapshots, for the diagnosis to know what to redo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    /// Keys (`namespace/name`) of pods removed, added or changed.
    pub pods: Vec<String>,
    /// Pods (`namespace/name`) an event was removed, added or changed about.
    pub pod_events: Vec<String>,
    /// Nodes changed (their health and addresses are read by every rule).
    pub nodes: bool,
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
    /// from scratch.
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
                let key = key_of(&p.metadata);
                if self.pods.get(&key).is_some_and(|x| Arc::ptr_eq(x, p)) {
                    self.pods.remove(&key);
                }
                t.pods.push(key);
            }
            for p in came {
                let key = key_of(&p.metadata);
                self.pods.insert(key.clone(), p.clone());
                t.pods.push(key);
            }
        }
        if all || !same_objects(&old.nodes, &new.nodes) {
            self.nodes =
                new.nodes.iter().filter_map(|n| Some((n.metadata.name.clone()?, (n.clone(), node_ready(n))))).collect();
            t.nodes = true;
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
            self.deleting_vas = new
                .volume_attachments
                .iter()
                .filter(|v| v.metadata.deletion_timestamp.is_some())
                .filter_map(|v| Some((v.metadata.name.clone()?, v.clone())))
                .collect();
        }
        t.pods.sort();
        t.pods.dedup();
        t.pod_events.sort();
        t.pod_events.dedup();
        t
    }

    fn order(e: &Arc<Event>) -> Order {
        let m = &e.metadata;
        (m.namespace.clone().unwrap_or_default(), m.name.clone().unwrap_or_default(), Arc::as_ptr(e) as usize)
    }

    fn add_event(&mut self, e: &Arc<Event>, t: &mut Touched) {
        let v = Arc::new(EventView::of(e));
        let order = Self::order(e);
        if v.kind == "Pod" {
            t.pod_events.push(v.object.clone());
        }
        if is_unmap_busy(&v) || is_fenced_map_failure(&v) {
            self.scanned.insert((v.kind.clone(), v.object.clone(), order.clone()), v.clone());
        }
        self.events.entry(v.kind.clone()).or_default().entry(v.object.clone()).or_default().insert(order, v);
    }

    fn remove_event(&mut self, e: &Arc<Event>, t: &mut Touched) {
        let o = &e.involved_object;
        let kind = o.kind.clone().unwrap_or_default();
        let name = o.name.as_deref().unwrap_or("");
        let object = match o.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.to_string(),
        };
        let order = Self::order(e);
        if kind == "Pod" {
            t.pod_events.push(object.clone());
        }
        self.scanned.remove(&(kind.clone(), object.clone(), order.clone()));
        if let Some(by_object) = self.events.get_mut(&kind)
            && let Some(evs) = by_object.get_mut(&object)
        {
            evs.remove(&order);
            if evs.is_empty() {
                by_object.remove(&object);
            }
        }
    }

    /// The pod `namespace/name`.
    pub fn pod(&self, key: &str) -> Option<&Pod> {
        self.pods.get(key).map(|p| &**p)
    }

    /// A node and its Ready condition.
    pub fn node(&self, name: &str) -> Option<(&Node, &NodeReady)> {
        self.nodes.get(name).map(|(n, r)| (&**n, r))
    }

    /// Every node with its Ready condition (in no particular order).
    pub fn nodes(&self) -> impl Iterator<Item = (&str, &NodeReady)> {
        self.nodes.iter().map(|(k, (_, r))| (k.as_str(), r))
    }

    /// The events about (`kind`, `namespace/name`), in their order.
    pub fn events_of<'s>(&'s self, kind: &str, object: &str) -> impl Iterator<Item = &'s EventView> + use<'s> {
        self.events.get(kind).and_then(|m| m.get(object)).into_iter().flat_map(|m| m.values()).map(|e| &**e)
    }

    /// The unmap-busy and fenced-map-failure events (what the rules scan whole), sorted by
    /// involved object.
    pub fn scanned_events(&self) -> impl Iterator<Item = &EventView> {
        self.scanned.values().map(|e| &**e)
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
