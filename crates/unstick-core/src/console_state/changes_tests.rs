//! The store's recorded changes, taken in batches and patched into a sorted list, give exactly the
//! list a whole read of the store gives, and the change sets a whole diff of the two lists gives.

use std::collections::HashSet;
use std::sync::Arc;

use kube::runtime::watcher::Event as WEvent;
use proptest::prelude::*;

use super::{changed, patch};
use crate::fixtures;
use crate::model::objects::Pod;
use crate::sources::kube::store::{self, Keyed, Store};

/// Pod `k` of a small set of keys (two namespaces, so keys share names), on node `node`.
fn pod(k: usize, node: u8) -> Pod {
    let (ns, name) = (["a", "b"][k % 2], format!("p{}", k / 2));
    (*fixtures::pod(ns, &name, &format!("n{node}"), "c", "Running", "2026-01-01T00:00:00Z")).clone()
}

/// The store's objects sorted as `KubeStores::fill` sorts them.
fn filled(s: &Store<Pod>) -> Vec<Arc<Pod>> {
    let mut v = s.state();
    v.sort_by(|a, b| a.store_key().cmp(&b.store_key()));
    v
}

fn ptrs(v: &[Arc<Pod>]) -> Vec<usize> {
    v.iter().map(|p| Arc::as_ptr(p) as usize).collect()
}

fn set(v: &[Arc<Pod>]) -> HashSet<usize> {
    ptrs(v).into_iter().collect()
}

/// One step: Apply (0), Delete (1), a re-list of the keys whose bit is set in `bits` (2), or a
/// take (3) of the changes, patched into the list.
fn op() -> impl Strategy<Value = (u8, usize, u8, u32)> {
    (0u8..4, 0usize..24, 0u8..3, any::<u32>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(256)))]
    #[test]
    fn patched_batches_equal_a_whole_read_and_a_whole_diff(ops in proptest::collection::vec(op(), 1..60)) {
        let (s, mut w) = store::store::<Pod>();
        let mut list: Vec<Arc<Pod>> = vec![];
        for (what, k, node, bits) in ops {
            match what {
                0 => w.apply(WEvent::Apply(pod(k, node))),
                1 => w.apply(WEvent::Delete(pod(k, node))),
                2 => {
                    w.apply(WEvent::Init);
                    for j in (0..24).filter(|j| bits & (1 << j) != 0) {
                        w.apply(WEvent::InitApply(pod(j, (node + (bits >> 24) as u8 % 2) % 3)));
                    }
                    w.apply(WEvent::InitDone);
                }
                _ => {}
            }
            if what == 3 {
                let before = list.clone();
                let c = patch(&mut list, s.take_changes());
                let whole = filled(&s);
                prop_assert_eq!(ptrs(&list), ptrs(&whole), "the same objects in the same order");
                let diff = changed(&before, &list);
                prop_assert_eq!(set(&c.gone), set(&diff.gone));
                prop_assert_eq!(set(&c.came), set(&diff.came));
                prop_assert_eq!(c.gone.len() + c.came.len(), diff.gone.len() + diff.came.len(), "no duplicates");
                prop_assert_eq!(&c.in_place, &diff.in_place);
                if c.in_place.is_some() {
                    prop_assert_eq!(ptrs(&c.gone), ptrs(&diff.gone), "in list order");
                    prop_assert_eq!(ptrs(&c.came), ptrs(&diff.came));
                }
            }
        }
        // whatever is left, taken at the end
        let c = patch(&mut list, s.take_changes());
        prop_assert_eq!(ptrs(&list), ptrs(&filled(&s)));
        prop_assert!(c.gone.iter().all(|g| !list.iter().any(|p| Arc::ptr_eq(p, g))));
        prop_assert!(s.take_changes().is_empty(), "taken once");
    }
}

/// An object added, changed and deleted between two takes is no change; one deleted and put back
/// is a replacement (the first object before, the last after).
#[test]
fn changes_between_two_takes_net_out() {
    let (s, mut w) = store::store::<Pod>();
    w.apply(WEvent::Apply(pod(0, 0)));
    let mut list = vec![];
    patch(&mut list, s.take_changes());
    let first = list[0].clone();
    w.apply(WEvent::Apply(pod(1, 0)));
    w.apply(WEvent::Apply(pod(1, 1)));
    w.apply(WEvent::Delete(pod(1, 1)));
    w.apply(WEvent::Delete(pod(0, 0)));
    w.apply(WEvent::Apply(pod(0, 2)));
    w.apply(WEvent::Apply(pod(0, 1)));
    let taken = s.take_changes();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert!(taken[0].before.as_ref().is_some_and(|b| Arc::ptr_eq(b, &first)));
    let c = patch(&mut list, taken);
    assert_eq!(c.in_place.as_deref(), Some(&[0][..]));
    assert!(Arc::ptr_eq(&c.gone[0], &first));
    assert_eq!(list[0].spec.as_ref().and_then(|s| s.node_name.as_deref()), Some("n1"));
}

/// A re-list of what is stored changes nothing (the stored Arcs are kept); an Apply equal to the
/// stored object neither.
#[test]
fn a_relist_records_only_differences() {
    let (s, mut w) = store::store::<Pod>();
    for k in 0..10 {
        w.apply(WEvent::Apply(pod(k, 0)));
    }
    let mut list = vec![];
    assert_eq!(patch(&mut list, s.take_changes()).came.len(), 10);
    w.apply(WEvent::Apply(pod(3, 0)));
    assert!(s.take_changes().is_empty(), "an equal Apply is no change");
    w.apply(WEvent::Init);
    for k in 1..11 {
        w.apply(WEvent::InitApply(pod(k, if k == 5 { 1 } else { 0 })));
    }
    w.apply(WEvent::InitDone);
    let c = patch(&mut list, s.take_changes());
    // p0 gone, p10 came, p5 replaced
    assert_eq!((c.gone.len(), c.came.len(), c.in_place.is_none()), (2, 2, true));
    assert_eq!(ptrs(&list), ptrs(&filled(&s)));
}
