//! Telling what changed between two snapshots taken from the stores (issue 13): the indexes the
//! console keeps between changes (`diagnose::Index`, its events by involved object shared with the
//! Events pane) are updated only for the kinds whose objects are not the same `Arc`s.

use std::sync::Arc;

/// True when `a` and `b` hold the same objects (the same `Arc`s, in the same order): nothing of
/// this kind changed between two snapshots taken from the stores.
pub fn same_objects<T>(a: &[Arc<T>], b: &[Arc<T>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn same_objects_are_the_same_arcs_in_order() {
        let events = vec![
            fixtures::event("ns", "p1", "Started", "m", 1, "2026-01-01T00:00:00Z"),
            fixtures::event("ns", "p2", "Started", "m", 1, "2026-01-01T00:00:00Z"),
        ];
        assert!(same_objects(&events, &events.clone()));
        assert!(!same_objects(&events, &events[1..]));
        let copied: Vec<_> = events.iter().map(|e| Arc::new((**e).clone())).collect();
        assert!(!same_objects(&events, &copied), "equal objects, other Arcs");
    }
}
