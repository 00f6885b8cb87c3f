//! Which objects of one kind a change replaced, added or removed, found from two lists of the
//! same kind (issue 13): the previous snapshot's and the new one's. The stores hand out the same
//! `Arc` for an object that did not change and keep every list in one order, so a watch event
//! leaves the two lists equal pointer for pointer except where it changed them; the change set
//! costs a walk over the pointers (no hashing, no names compared) plus work on the changed part.
//!
//! The console's loop does not diff lists: the stores record what each watch event changed and
//! [`Changes::patch`] applies a batch of those ([`Deltas`]) to the app's snapshot in place, by
//! binary search in the sorted lists, finding the same change sets at the cost of the change.
//! The whole-list diff ([`Changes::between`]) remains for whole snapshots handed to the app
//! (`Msg::Objects`: tests, benches, the harness tests).

use std::collections::HashSet;
use std::sync::Arc;

use crate::model::Snapshot;
use crate::model::meta::SlimObject;
use crate::model::objects::{Event, Node, PersistentVolume, Pod, VolumeAttachment};
use crate::sources::kube::Deltas;
use crate::sources::kube::store::{Keyed, StoreChange};

/// The objects of one kind that differ between two lists: `gone` are in the old list only,
/// `came` in the new one only (told apart by `Arc`). An object changed by a watch event is in
/// both, as its old and its new version.
#[derive(Debug, Clone)]
pub struct Changed<T> {
    /// In the old list and not in the new one.
    pub gone: Vec<Arc<T>>,
    /// In the new list and not in the old one.
    pub came: Vec<Arc<T>>,
    /// Positions (the same in both lists, which have the same length) where an object was
    /// replaced by a new version of itself (same namespace and name), when that is the whole
    /// change: nothing was added or removed, every other object is where it was. `None` when
    /// objects were added or removed.
    pub in_place: Option<Vec<usize>>,
}

impl<T> Changed<T> {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.gone.is_empty() && self.came.is_empty()
    }
}

impl<T> Default for Changed<T> {
    /// Nothing changed (in place: no position).
    fn default() -> Self {
        Changed { gone: vec![], came: vec![], in_place: Some(vec![]) }
    }
}

/// What one coalesced batch of watch events changed, kind by kind: what the app carries to the
/// lineage, the rules' indexes, the rows and the diagnosis (each reads the kinds it joins). No
/// PVCs: nothing the console derives reads them (the lineage reads a PV's claimRef; an export
/// reads the stores).
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// Nodes.
    pub nodes: Changed<Node>,
    /// Pods.
    pub pods: Changed<Pod>,
    /// PVs.
    pub pvs: Changed<PersistentVolume>,
    /// VolumeAttachments.
    pub volume_attachments: Changed<VolumeAttachment>,
    /// Events.
    pub events: Changed<Event>,
}

impl Changes {
    /// What changed from `old`'s Kubernetes objects to `new`'s, each kind found by [`changed`].
    pub fn between(old: &Snapshot, new: &Snapshot) -> Changes {
        Changes {
            nodes: changed(&old.nodes, &new.nodes),
            pods: changed(&old.pods, &new.pods),
            pvs: changed(&old.pvs, &new.pvs),
            volume_attachments: changed(&old.volume_attachments, &new.volume_attachments),
            events: changed(&old.events, &new.events),
        }
    }

    /// Applies the stores' changes `d` to `snap` (whose lists are sorted as
    /// [`crate::sources::kube::KubeStores::fill`] sorts them: by namespace, name) and says what
    /// changed, kind by kind ([`patch`]); `snap` is stamped `d.taken_at`. Costs the changes
    /// (binary searches, a pointer move per insertion or removal), not the cluster.
    pub fn patch(snap: &mut Snapshot, d: Deltas) -> Changes {
        let Deltas { nodes, pods, pvcs, pvs, volume_attachments, events, taken_at } = d;
        // no PVC change set: nothing the console derives reads them
        patch(&mut snap.pvcs, pvcs);
        if taken_at.is_some() {
            snap.taken_at = taken_at;
        }
        Changes {
            nodes: patch(&mut snap.nodes, nodes),
            pods: patch(&mut snap.pods, pods),
            pvs: patch(&mut snap.pvs, pvs),
            volume_attachments: patch(&mut snap.volume_attachments, volume_attachments),
            events: patch(&mut snap.events, events),
        }
    }
}

/// Above this many insertions and removals in one list, [`patch`] rebuilds the list in one merge
/// pass instead of moving its tail once per object (a re-list, the first list).
const MERGE_ABOVE: usize = 4;

/// Applies `changes` (one per key, from a store) to `list`, sorted by
/// [`Keyed::store_key`] and kept so: an object whose key is in `list` is replaced in place, or
/// removed; one whose key is not is inserted where it sorts. The change set names what `list`
/// held (`gone`: the `Arc`s taken out of it) and holds now (`came`); `in_place` lists the
/// positions replaced when nothing was inserted or removed (in list order, `gone[k]` and
/// `came[k]` being the old and new object at `in_place[k]`). A change that does not fit `list`
/// (a removal of an object it does not hold) is skipped.
pub fn patch<K: Keyed>(list: &mut Vec<Arc<K>>, mut changes: Vec<StoreChange<K>>) -> Changed<K> {
    changes.sort_unstable_by(|a, b| a.key().cmp(&b.key()));
    let mut out = Changed::default();
    let mut at = vec![];
    let mut moves: Vec<StoreChange<K>> = vec![];
    for c in changes {
        match (list.binary_search_by(|x| x.store_key().cmp(&c.key())), c.after) {
            (Ok(i), Some(new)) if !Arc::ptr_eq(&list[i], &new) => {
                out.gone.push(std::mem::replace(&mut list[i], new.clone()));
                out.came.push(new);
                at.push(i);
            }
            (Ok(_), Some(_)) | (Err(_), None) => {}
            (_, after) => moves.push(StoreChange { before: c.before, after }),
        }
    }
    if moves.is_empty() {
        out.in_place = Some(at);
        return out;
    }
    out.in_place = None;
    if moves.len() <= MERGE_ABOVE {
        for c in moves {
            match (list.binary_search_by(|x| x.store_key().cmp(&c.key())), c.after) {
                (Ok(i), None) => out.gone.push(list.remove(i)),
                (Err(i), Some(new)) => {
                    list.insert(i, new.clone());
                    out.came.push(new);
                }
                _ => {}
            }
        }
        return out;
    }
    let old = std::mem::take(list);
    list.reserve(old.len() + moves.len());
    let mut moves = moves.into_iter().peekable();
    for o in old {
        while let Some(c) = moves.next_if(|c| c.key() < o.store_key()) {
            if let Some(new) = c.after {
                list.push(new.clone());
                out.came.push(new);
            }
        }
        if moves.next_if(|c| c.key() == o.store_key()).is_some() {
            // only removals are left for keys the list holds
            out.gone.push(o);
        } else {
            list.push(o);
        }
    }
    for new in moves.filter_map(|c| c.after) {
        list.push(new.clone());
        out.came.push(new);
    }
    out
}

/// `namespace`, `name`.
fn key<T: SlimObject>(o: &T) -> (Option<&str>, Option<&str>) {
    (o.meta().namespace.as_deref(), o.meta().name.as_deref())
}

/// What changed from `old` to `new` (see [`Changed`]). The common prefix and suffix (the same
/// `Arc`s at the same places) are skipped by pointer compares; in the middle, a list of the same
/// length whose differing places hold the same namespace/name is an in-place change, anything
/// else is diffed by pointer sets over the middle only. Correct whatever the lists' order; fast
/// when the change is local or in place.
pub fn changed<T: SlimObject>(old: &[Arc<T>], new: &[Arc<T>]) -> Changed<T> {
    let same = |a: &Arc<T>, b: &Arc<T>| Arc::ptr_eq(a, b);
    let head = old.iter().zip(new).take_while(|(a, b)| same(a, b)).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| same(a, b)).count();
    let (om, nm) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    if om.len() == nm.len() {
        let differ: Vec<usize> = (0..om.len()).filter(|&i| !same(&om[i], &nm[i])).collect();
        if differ.iter().all(|&i| key(&*om[i]) == key(&*nm[i])) {
            return Changed {
                gone: differ.iter().map(|&i| om[i].clone()).collect(),
                came: differ.iter().map(|&i| nm[i].clone()).collect(),
                in_place: Some(differ.iter().map(|&i| head + i).collect()),
            };
        }
    }
    let ptrs = |v: &[Arc<T>]| v.iter().map(|p| Arc::as_ptr(p) as usize).collect::<HashSet<usize>>();
    let (was, is) = (ptrs(om), ptrs(nm));
    Changed {
        gone: om.iter().filter(|p| !is.contains(&(Arc::as_ptr(p) as usize))).cloned().collect(),
        came: nm.iter().filter(|p| !was.contains(&(Arc::as_ptr(p) as usize))).cloned().collect(),
        in_place: None,
    }
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod patch_tests;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fixtures;
    use crate::model::objects::Pod;

    fn ptrs(v: &[Arc<Pod>]) -> HashSet<usize> {
        v.iter().map(|p| Arc::as_ptr(p) as usize).collect()
    }

    proptest! {
        /// The same sets as a diff of the whole lists by pointer, and in-place positions exactly
        /// when only same-named replacements happened.
        #[test]
        fn equals_a_whole_diff(ops in proptest::collection::vec((0u8..3, 0usize..64), 0..6), shuffle in any::<bool>()) {
            let mut old: Vec<Arc<Pod>> = fixtures::incidents().pods;
            if shuffle {
                old.reverse();
            }
            let mut new = old.clone();
            let mut replaced_only = true;
            for (op, at) in ops {
                if new.is_empty() {
                    break;
                }
                let i = at % new.len();
                match op {
                    0 => {
                        new.remove(i);
                        replaced_only = false;
                    }
                    1 => {
                        let mut p = (*new[i]).clone();
                        p.metadata.name = Some(format!("new-{at}"));
                        new.insert(i, Arc::new(p));
                        replaced_only = false;
                    }
                    _ => new[i] = Arc::new((*new[i]).clone()),
                }
            }
            let c = changed(&old, &new);
            let gone: HashSet<usize> = ptrs(&old).difference(&ptrs(&new)).copied().collect();
            let came: HashSet<usize> = ptrs(&new).difference(&ptrs(&old)).copied().collect();
            prop_assert_eq!(ptrs(&c.gone), gone);
            prop_assert_eq!(ptrs(&c.came), came);
            prop_assert_eq!(c.gone.len() + c.came.len(), ptrs(&c.gone).len() + ptrs(&c.came).len());
            if replaced_only {
                let at = c.in_place.expect("replacements only are in place");
                prop_assert_eq!(at.len(), c.came.len());
                for (k, &i) in at.iter().enumerate() {
                    prop_assert!(Arc::ptr_eq(&new[i], &c.came[k]) && Arc::ptr_eq(&old[i], &c.gone[k]));
                }
            }
        }
    }
}
