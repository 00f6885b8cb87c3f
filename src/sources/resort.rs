//! Sorting a store's objects after a watch event from the previous snapshot's order (issue 13).

use std::collections::HashMap;
use std::sync::Arc;

use super::store::{Keyed, Store};

/// `namespace`, `name`: the order of every list in a snapshot.
fn key<K: Keyed>(o: &K) -> (Option<&str>, &str) {
    o.store_key()
}

/// The objects of store `s` sorted by namespace/name, as `KubeStores::fill` sorts them, using
/// `prev` (the same store's objects, sorted so, from an earlier snapshot): an object still in
/// `prev` (the same `Arc`) sorts by its index there and a new one by where it would be inserted,
/// so a watch event costs a pass over pointers and integer compares instead of a sort comparing
/// names (that sort was a third of the console's CPU under pod churn at 10k pods).
pub(super) fn resorted<K: Keyed>(prev: &[Arc<K>], s: &Store<K>) -> Vec<Arc<K>> {
    let at: HashMap<usize, usize> = prev.iter().enumerate().map(|(i, o)| (Arc::as_ptr(o) as usize, i)).collect();
    let mut v: Vec<((usize, bool), Arc<K>)> = s
        .state()
        .into_iter()
        .map(|o| match at.get(&(Arc::as_ptr(&o) as usize)) {
            Some(&i) => ((i, true), o),
            None => ((prev.partition_point(|p| key(&**p) < key(&*o)), false), o),
        })
        .collect();
    v.sort_by(|(a, x), (b, y)| {
        a.cmp(b).then_with(|| match (a.1, b.1) {
            (false, false) => key(&**x).cmp(&key(&**y)),
            _ => std::cmp::Ordering::Equal,
        })
    });
    v.into_iter().map(|(_, o)| o).collect()
}

#[cfg(test)]
mod tests {
    use kube::runtime::watcher::Event as WEvent;

    use super::*;
    use crate::fixtures;
    use crate::model::objects::Pod;

    /// The same order as sorting the store by name, after objects were added, changed and removed.
    #[test]
    fn resorted_equals_a_full_sort() {
        let pods: Vec<Arc<Pod>> = fixtures::incidents().pods;
        let (r, mut w) = crate::sources::store::store::<Pod>();
        for p in pods.iter().step_by(2) {
            w.apply(WEvent::Apply((**p).clone()));
        }
        let full = |r: &Store<Pod>| {
            let mut v = r.state();
            v.sort_by(|a, b| key(&**a).cmp(&key(&**b)));
            v.iter().map(|p| key(&**p).1.to_string()).collect::<Vec<_>>()
        };
        let names = |v: &[Arc<Pod>]| v.iter().map(|p| key(&**p).1.to_string()).collect::<Vec<_>>();
        let first = resorted(&[], &r);
        assert_eq!(names(&first), full(&r));
        for p in pods.iter().skip(1).step_by(2) {
            w.apply(WEvent::Apply((**p).clone()));
        }
        w.apply(WEvent::Delete((*pods[0]).clone()));
        let mut changed = (*pods[2]).clone();
        changed.spec.as_mut().expect("a fixture pod has a spec").node_name = Some("elsewhere".into());
        w.apply(WEvent::Apply(changed));
        let second = resorted(&first, &r);
        assert_eq!(names(&second), full(&r));
        assert!(second.len() > 3 && second.len() == pods.len() - 1);
    }
}
