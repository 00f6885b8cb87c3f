//! Which Events are kept (issue 13): only those about the kinds the console watches (Pod, Node,
//! PersistentVolumeClaim, PersistentVolume, VolumeAttachment: what the Events pane and the rules
//! look at; a ReplicaSet's or a Lease's events are dropped), and at most [`PER_OBJECT`] per
//! involved object (kind, namespace, name), Warnings first, then the newest.
//!
//! Why [`PER_OBJECT`] = 16: the rules read, per pod or node, the latest Warning of each reason
//! (`FailedMount`, `FailedAttachVolume`, Multi-Attach, `FailedUnMount`…), and the kubelet and the
//! controllers aggregate repeats of one reason and message into one Event with a `count`, so an
//! object in trouble carries a handful of distinct Warnings; 16 keeps all of them with room for
//! several messages of one reason, while a cluster's routine `Scheduled` / `Pulled` / `Created` /
//! `Started` Normals of 10k healthy pods stay bounded (4 per pod, or fewer once a pod has Warnings).
//!
//! Two forms: [`bound`] for a whole list (a bundle, a one-shot list), and [`Bounder`], a filter
//! between a watcher and its reflector store that evicts with `Delete` events.

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;
use kube::runtime::watcher::Event as WEvent;

use super::objects::Event;

/// Events kept per involved object.
pub const PER_OBJECT: usize = 16;

/// `involvedObject.kind`s whose events are kept.
pub const KINDS: [&str; 5] = ["Pod", "Node", "PersistentVolumeClaim", "PersistentVolume", "VolumeAttachment"];

/// True when `e` is about one of [`KINDS`].
pub fn is_kept_kind(e: &Event) -> bool {
    e.involved_object.kind.as_deref().is_some_and(|k| KINDS.contains(&k))
}

/// (kind, namespace, name) of the involved object, for [`bound`].
type Subject = (String, String, String);
/// The involved object as the [`Bounder`] keeps it: `kind NUL namespace NUL name`, one allocation.
type SubjectKey = Box<str>;
/// An event as the [`Bounder`] keeps it: `namespace NUL name`, one allocation (ordered as the
/// (namespace, name) pair: NUL sorts first, and names hold none).
type Key = Box<str>;
/// Higher is kept: a Warning over a Normal, then the later one.
type Rank = (bool, Option<Timestamp>);

fn subject(e: &Event) -> Subject {
    let o = &e.involved_object;
    (o.kind.clone().unwrap_or_default(), o.namespace.clone().unwrap_or_default(), o.name.clone().unwrap_or_default())
}

fn subject_key(e: &Event) -> SubjectKey {
    let o = &e.involved_object;
    let part = |s: &Option<String>| s.as_deref().unwrap_or("").to_owned();
    [part(&o.kind), part(&o.namespace), part(&o.name)].join("\0").into_boxed_str()
}

fn key(e: &Event) -> Key {
    let m = &e.metadata;
    format!("{}\0{}", m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or("")).into_boxed_str()
}

/// Last seen: `lastTimestamp`, `series.lastObservedTime`, `eventTime`, `firstTimestamp`, creation.
fn rank(e: &Event) -> Rank {
    let last = e
        .last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.series.as_ref().and_then(|s| s.last_observed_time.as_ref()).map(|t| t.0))
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0));
    (e.type_.as_deref() == Some("Warning"), last)
}

/// Keeps the events of [`KINDS`], at most [`PER_OBJECT`] per involved object (Warnings first,
/// then the newest), in their original order. Returns how many were dropped.
pub fn bound(events: &mut Vec<Arc<Event>>) -> usize {
    let before = events.len();
    let mut by_subject: HashMap<Subject, Vec<(Rank, usize)>> = HashMap::new();
    for (i, e) in events.iter().enumerate().filter(|(_, e)| is_kept_kind(e)) {
        by_subject.entry(subject(e)).or_default().push((rank(e), i));
    }
    let mut keep = vec![false; events.len()];
    for mut v in by_subject.into_values() {
        v.sort_by(|a, b| b.cmp(a));
        for (_, i) in v.into_iter().take(PER_OBJECT) {
            keep[i] = true;
        }
    }
    let mut i = 0;
    events.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    before - events.len()
}

/// The live filter between an Event watcher and its store: drops events of other kinds, and once
/// an object has [`PER_OBJECT`] events, either drops a new lower-ranked one or evicts the
/// lowest-ranked kept one with a `Delete`. During a (re-)list the items are held here and only the
/// kept ones are passed on at `InitDone` (the store's re-list buffer cannot take a `Delete`).
///
/// Its state is, per involved object, one key string and the rank and key string of each kept
/// event (a list of at most [`PER_OBJECT`] + 1, searched linearly).
#[derive(Debug, Default)]
pub struct Bounder {
    kept: HashMap<SubjectKey, Vec<(Rank, Key)>>,
    /// During a list: the kept items, already wrapped as they are passed on (at `InitDone` the
    /// list is handed over as it is, not copied: a list of 5,000 events is a few MB).
    listing: Option<Vec<WEvent<Event>>>,
}

impl Bounder {
    /// The events to pass on for `ev`, in order.
    pub fn on(&mut self, ev: WEvent<Event>) -> Vec<WEvent<Event>> {
        match ev {
            WEvent::Init => {
                self.kept.clear();
                self.listing = Some(vec![]);
                vec![WEvent::Init]
            }
            WEvent::InitApply(e) => {
                if is_kept_kind(&e) {
                    let evicted = self.admit(&e);
                    let listing = self.listing.get_or_insert_with(Vec::new);
                    let own = evicted.as_ref().is_some_and(|k| is_key(&e, k));
                    if let Some(k) = &evicted {
                        listing.retain(|x| !matches!(x, WEvent::InitApply(x) if is_key(x, k)));
                    }
                    if !own {
                        listing.push(WEvent::InitApply(e));
                    }
                }
                vec![]
            }
            WEvent::InitDone => {
                let mut out = self.listing.take().unwrap_or_default();
                out.push(WEvent::InitDone);
                out
            }
            WEvent::Apply(e) => {
                if !is_kept_kind(&e) {
                    return vec![];
                }
                match self.admit(&e) {
                    None => vec![WEvent::Apply(e)],
                    Some(k) if is_key(&e, &k) => vec![],
                    Some(k) => vec![WEvent::Apply(e), WEvent::Delete(stub(&k))],
                }
            }
            WEvent::Delete(e) => {
                let s = subject_key(&e);
                if let Some(m) = self.kept.get_mut(&s) {
                    let k = key(&e);
                    m.retain(|(_, x)| *x != k);
                    if m.is_empty() {
                        self.kept.remove(&s);
                    }
                }
                vec![WEvent::Delete(e)]
            }
        }
    }

    /// Records `e` among its subject's kept events; returns the key evicted to stay within
    /// [`PER_OBJECT`] (possibly `e`'s own: then it is not kept).
    /// The lowest-ranked is a Normal before a Warning, then the oldest, then (equal ranks) the
    /// last by (namespace, name).
    fn admit(&mut self, e: &Event) -> Option<Key> {
        let m = self.kept.entry(subject_key(e)).or_default();
        let (k, r) = (key(e), rank(e));
        match m.iter_mut().find(|(_, x)| *x == k) {
            Some(slot) => slot.0 = r,
            None => {
                m.reserve_exact(1);
                m.push((r, k));
            }
        }
        if m.len() <= PER_OBJECT {
            return None;
        }
        let (i, _) = m.iter().enumerate().min_by(|(_, a), (_, b)| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)))?;
        Some(m.swap_remove(i).1)
    }
}

/// True when `e` is the event `key` (`namespace NUL name`), compared in place.
fn is_key(e: &Event, key: &str) -> bool {
    let m = &e.metadata;
    key.split_once('\0') == Some((m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or("")))
}

/// A `Delete` for the event `key` (`namespace NUL name`).
fn stub(key: &str) -> Event {
    let (namespace, name) = key.split_once('\0').unwrap_or(("", key));
    let mut e = Event::default();
    e.metadata.namespace = Some(namespace.to_owned());
    e.metadata.name = Some(name.to_owned());
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, pod: &str, kind: &str, warning: bool, sec: i64) -> Event {
        serde_json::from_value(serde_json::json!({
            "metadata": {"namespace": "ns", "name": name},
            "involvedObject": {"kind": kind, "namespace": "ns", "name": pod},
            "type": if warning {"Warning"} else {"Normal"},
            "lastTimestamp": Timestamp::from_second(1_800_000_000 + sec).unwrap().to_string(),
        }))
        .unwrap()
    }

    #[test]
    fn a_list_keeps_watched_kinds_and_the_warnings_then_newest_per_object() {
        let mut v: Vec<Arc<Event>> = vec![Arc::new(ev("rs", "web-1", "ReplicaSet", true, 0))];
        v.push(Arc::new(ev("w-old", "p", "Pod", true, 0)));
        for i in 0..PER_OBJECT as i64 {
            v.push(Arc::new(ev(&format!("n{i}"), "p", "Pod", false, 100 + i)));
        }
        v.push(Arc::new(ev("other", "q", "Pod", false, 0)));
        let dropped = bound(&mut v);
        let names: Vec<&str> = v.iter().map(|e| e.metadata.name.as_deref().unwrap()).collect();
        assert_eq!(dropped, 2, "{names:?}");
        assert!(!names.contains(&"rs") && !names.contains(&"n0"), "the ReplicaSet event and the oldest Normal go");
        assert!(names.contains(&"w-old") && names.contains(&"other") && names.len() == PER_OBJECT + 1);
        assert_eq!(names[0], "w-old", "order is kept");
    }

    #[test]
    fn the_live_filter_evicts_with_a_delete_and_bounds_a_relist() {
        let mut b = Bounder::default();
        assert!(b.on(WEvent::Apply(ev("rs", "web", "ReplicaSet", true, 0))).is_empty());
        for i in 0..PER_OBJECT as i64 {
            assert_eq!(b.on(WEvent::Apply(ev(&format!("n{i}"), "p", "Pod", false, 100 + i))).len(), 1);
        }
        // an older Normal than all kept: dropped
        assert!(b.on(WEvent::Apply(ev("older", "p", "Pod", false, 0))).is_empty());
        // a Warning: kept, the oldest Normal evicted
        let out = b.on(WEvent::Apply(ev("w", "p", "Pod", true, 0)));
        assert!(matches!(&out[..], [WEvent::Apply(a), WEvent::Delete(d)]
            if a.metadata.name.as_deref() == Some("w") && d.metadata.name.as_deref() == Some("n0")));
        // a re-list of PER_OBJECT + 2 events of one pod passes PER_OBJECT on, at InitDone
        assert!(matches!(&b.on(WEvent::Init)[..], [WEvent::Init]));
        for i in 0..PER_OBJECT as i64 + 2 {
            assert!(b.on(WEvent::InitApply(ev(&format!("r{i}"), "p", "Pod", false, i))).is_empty());
        }
        let out = b.on(WEvent::InitDone);
        assert_eq!(out.len(), PER_OBJECT + 1);
        assert!(matches!(out.last(), Some(WEvent::InitDone)));
        assert!(out.iter().all(
            |e| !matches!(e, WEvent::InitApply(e) if ["r0", "r1"].contains(&e.metadata.name.as_deref().unwrap()))
        ));
    }
}
