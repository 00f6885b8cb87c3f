//! Indexes over a [`Snapshot`](super::Snapshot) that the console keeps between changes, so that a
//! frame or a change reads only what it concerns instead of scanning every object (issue 13).

use std::collections::HashMap;
use std::sync::Arc;

use super::objects::Event;

/// Events by involved object: `(kind, id)` to the positions of its events in the snapshot's
/// `events` (ascending). `id` is the name for cluster-scoped kinds (Node, PersistentVolume: the
/// namespace an event gives them is not compared), `namespace/name` for the others (`name` when
/// the event gives no namespace), as the Events pane matched them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventsByObject {
    by: HashMap<(String, String), Vec<usize>>,
}

impl EventsByObject {
    /// Indexes `events` (one pass; positions ascending per object).
    pub fn build(events: &[Arc<Event>]) -> Self {
        let mut by: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            let o = &e.involved_object;
            let kind = o.kind.clone().unwrap_or_default();
            let (ns, name) = (o.namespace.as_deref().unwrap_or(""), o.name.as_deref().unwrap_or(""));
            let id = if ns.is_empty() || matches!(kind.as_str(), "Node" | "PersistentVolume") {
                name.to_string()
            } else {
                format!("{ns}/{name}")
            };
            by.entry((kind, id)).or_default().push(i);
        }
        EventsByObject { by }
    }

    /// Positions of the events about object `id` of `kind` (`Pod`, `namespace/name`), ascending.
    pub fn of(&self, kind: &str, id: &str) -> &[usize] {
        // a borrowed-key lookup without building the owned tuple would need a wrapper type; the
        // key is short and this runs once per frame per object shown
        self.by.get(&(kind.to_string(), id.to_string())).map_or(&[], Vec::as_slice)
    }
}

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
    fn events_are_found_by_their_object() {
        let mut node_ev = (*fixtures::event("default", "x", "NodeNotReady", "m", 1, "2026-01-01T00:00:00Z")).clone();
        node_ev.involved_object.kind = Some("Node".into());
        node_ev.involved_object.name = Some("node1".into());
        let events = vec![
            fixtures::event("ns", "p1", "Started", "m", 1, "2026-01-01T00:00:00Z"),
            fixtures::event("ns", "p2", "Started", "m", 1, "2026-01-01T00:00:00Z"),
            Arc::new(node_ev),
            fixtures::event("ns", "p1", "Pulled", "m", 1, "2026-01-01T00:00:00Z"),
        ];
        let idx = EventsByObject::build(&events);
        assert_eq!(idx.of("Pod", "ns/p1"), &[0, 3]);
        assert_eq!(idx.of("Pod", "ns/p2"), &[1]);
        assert_eq!(idx.of("Node", "node1"), &[2], "a node's events whatever namespace they give");
        assert!(idx.of("Pod", "p1").is_empty());
        assert!(same_objects(&events, &events.clone()));
        assert!(!same_objects(&events, &events[1..]));
    }
}
