//! The app's derived state after a sequence of changes taken one at a time (what it keeps when a
//! kind did not change) equals the state of an app given the final objects at once.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{AttachedVolume, NodeAddress};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use unstick_core::model::meta::SlimObject;

use crate::theme::Theme;
use crate::ui::app::{App, Msg};
use unstick_core::config::Config;
use unstick_core::fixtures;
use unstick_core::model::Snapshot;
use unstick_core::sources::kube::{SourceState, WatchedKind};

/// How the pods pane is viewed: every pod or the troubled ones, with a filter or none (the rows
/// patched for the changed pods must be those a whole computation gives under each).
fn set_view(a: &mut App, view: u8) {
    a.all_pods = view.is_multiple_of(2);
    let filter = match view / 2 {
        1 => "term",       // the status column: a change toggles Terminating
        2 => "k8s-node-x", // the node column: a change moves a pod there and back
        _ => "",
    };
    a.view_mut(crate::ui::panes::Pane::Pods).set_filter(filter);
    a.recompute_rows();
}

fn fresh() -> App {
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = false;
    let mut a = App::new(cfg, Theme::monochrome(), "kh".into(), None, true, fixtures::now());
    for k in WatchedKind::ALL {
        a.update(Msg::KubeState(k, SourceState::Live));
    }
    a.data.snap.ceph = fixtures::incidents().ceph;
    a.all_pods = true;
    a
}

/// The objects of `snap` without its Ceph facts (the app keeps its own), as the UI loop sends them.
fn kube_part(snap: &Snapshot) -> Snapshot {
    Snapshot {
        nodes: snap.nodes.clone(),
        pods: snap.pods.clone(),
        pvcs: snap.pvcs.clone(),
        pvs: snap.pvs.clone(),
        volume_attachments: snap.volume_attachments.clone(),
        events: snap.events.clone(),
        taken_at: snap.taken_at,
        ..Snapshot::default()
    }
}

fn time(t: &str) -> Time {
    Time(t.parse().expect("a constant timestamp"))
}

/// Removes (0), puts back (1) or changes (2) the `at`th object of `kinds`'s list, keeping the
/// others' Arcs (as the stores do).
fn mutate<K: Clone + SlimObject>(
    v: &mut Vec<Arc<K>>,
    pool: &mut Vec<Arc<K>>,
    op: u8,
    at: usize,
    change: impl Fn(&mut K),
) {
    match op {
        0 if !v.is_empty() => pool.push(v.remove(at % v.len())),
        1 if !pool.is_empty() => {
            let o = pool.remove(at % pool.len());
            v.push(o);
            v.sort_by(|a, b| {
                (a.meta().namespace.as_deref(), a.meta().name.as_deref())
                    .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
            });
        }
        _ if !v.is_empty() => {
            let i = at % v.len();
            let mut o = (*v[i]).clone();
            change(&mut o);
            v[i] = Arc::new(o);
        }
        _ => {}
    }
}

#[derive(Default)]
struct Pools {
    nodes: Vec<Arc<unstick_core::model::objects::Node>>,
    pods: Vec<Arc<unstick_core::model::objects::Pod>>,
    pvcs: Vec<Arc<unstick_core::model::objects::PersistentVolumeClaim>>,
    pvs: Vec<Arc<unstick_core::model::objects::PersistentVolume>>,
    vas: Vec<Arc<unstick_core::model::objects::VolumeAttachment>>,
    events: Vec<Arc<unstick_core::model::objects::Event>>,
}

fn step(s: &mut Snapshot, p: &mut Pools, kind: u8, op: u8, at: usize, now: jiff::Timestamp) {
    let uniques: Vec<String> = unstick_core::lineage::Lineage::build(&fixtures::incidents())
        .volumes
        .into_iter()
        .filter_map(|v| v.unique_name)
        .collect();
    let young = Time(now - jiff::SignedDuration::from_secs(30));
    let toggle = |t: &mut Option<Time>| *t = if t.is_some() { None } else { Some(time("2026-11-22T02:50:00Z")) };
    match kind % 6 {
        0 => mutate(&mut s.nodes, &mut p.nodes, op, at, |n| match at % 3 {
            0 => {
                if let Some(c) = n.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.first_mut()) {
                    c.status = if c.status == "True" { "Unknown".into() } else { "True".into() };
                    // lost long ago, or within the grace (a tick later makes it lost)
                    c.last_transition_time =
                        Some(if at.is_multiple_of(2) { time("2026-11-22T02:40:00Z") } else { young.clone() });
                }
            }
            // a volume enters or leaves its volumesInUse and volumesAttached (an attach or detach)
            1 => {
                let u = uniques[at / 3 % uniques.len()].clone();
                let st = n.status.get_or_insert_with(Default::default);
                let in_use = st.volumes_in_use.get_or_insert_with(Vec::new);
                let attached = st.volumes_attached.get_or_insert_with(Vec::new);
                match in_use.iter().position(|x| *x == u) {
                    Some(k) => {
                        in_use.remove(k);
                        attached.retain(|a| a.name != u);
                    }
                    None => {
                        in_use.push(u.clone());
                        attached.push(AttachedVolume { name: u, device_path: String::new() });
                    }
                }
            }
            // its InternalIP moves: onto the watchers' and locks' address, another node's, none's
            _ => {
                let ip = ["127.0.0.1", "10.20.0.14", "10.99.0.1"][at / 3 % 3];
                let st = n.status.get_or_insert_with(Default::default);
                st.addresses = Some(vec![NodeAddress { type_: "InternalIP".into(), address: ip.into() }]);
            }
        }),
        1 => mutate(&mut s.pods, &mut p.pods, op, at, |o| {
            toggle(&mut o.metadata.deletion_timestamp);
            if at % 2 == 1 {
                // a young pod: waiting within the grace (a tick later makes it blocked)
                o.metadata.creation_timestamp = Some(young.clone());
                if let Some(st) = o.status.as_mut() {
                    st.start_time = None;
                }
            }
            // and its node (what the event rules read of a pod without a volume)
            if let Some(sp) = o.spec.as_mut() {
                sp.node_name = Some(
                    if sp.node_name.as_deref() == Some("k8s-node-x") { "k8s-node-c" } else { "k8s-node-x" }.into(),
                );
            }
            // the claim changes too: the pod leaves its volume, or joins pvc1's (another
            // namespace's claim joins nothing)
            let first = o.spec.as_mut().and_then(|s| s.volumes.as_mut()).and_then(|v| v.first_mut());
            if let Some(c) = first.and_then(|v| v.persistent_volume_claim.as_mut()) {
                c.claim_name = if c.claim_name == "pvc1" { "gone".into() } else { "pvc1".into() };
            }
        }),
        2 => mutate(&mut s.pvcs, &mut p.pvcs, op, at, |o| {
            if let Some(st) = o.status.as_mut() {
                st.phase = Some("Lost".into());
            }
        }),
        3 => mutate(&mut s.pvs, &mut p.pvs, op, at, |o| {
            if let Some(sp) = o.spec.as_mut() {
                if at.is_multiple_of(2) {
                    sp.claim_ref = None;
                } else {
                    // in place: what multi-attach reads of a volume
                    let rwo = sp.access_modes.as_ref().is_some_and(|m| m.iter().any(|m| m == "ReadWriteOnce"));
                    sp.access_modes = Some(vec![if rwo { "ReadWriteMany" } else { "ReadWriteOnce" }.into()]);
                }
            }
        }),
        4 => mutate(&mut s.volume_attachments, &mut p.vas, op, at, |o| match at % 3 {
            0 => toggle(&mut o.metadata.deletion_timestamp),
            1 => o.status.get_or_insert_with(Default::default).attached ^= true,
            _ => o.spec.node_name = ["k8s-node-lost", "k8s-node-c", "k8s-node-x"][at / 3 % 3].into(),
        }),
        _ => mutate(&mut s.events, &mut p.events, op, at, |o| {
            o.count = Some(o.count.unwrap_or(1) + 7);
            match at % 4 {
                // a cause's own words come and go (a stuck pod's finding moves between
                // `unexplained` and a named cause)
                1 => {
                    let cephx = "MountVolume.MountDevice failed: rbd: map failed: (13) Permission denied";
                    let m = o.message.get_or_insert_with(String::new);
                    *m = if m.contains("(13)") { m.replace(cephx, "") } else { format!("{m} {cephx}") };
                }
                // the event moves to the pod's claim (a resize failure on the claim) and back
                3 => {
                    let io = &mut o.involved_object;
                    if io.kind.as_deref() == Some("Pod") {
                        io.kind = Some("PersistentVolumeClaim".into());
                        io.name = Some("pvc1".into());
                        o.reason = Some("VolumeResizeFailed".into());
                    } else if io.kind.as_deref() == Some("PersistentVolumeClaim") {
                        io.kind = Some("Pod".into());
                    }
                }
                _ => {}
            }
        }),
    }
}

/// The clock moves on by `at` minutes and some seconds (at least the re-diagnosis period), or
/// an image's Ceph facts change (its watchers go or come back); `inc` is told as the console is.
fn tick_or_ceph(inc: &mut App, op: u8, at: usize) {
    if op == 0 {
        let images: Vec<_> = fixtures::incidents().ceph.images.into_iter().collect();
        let Some((image, mut facts)) = images.get(at % images.len().max(1)).cloned() else { return };
        if inc.data.snap.ceph.images.get(&image).is_some_and(|f| f.watchers.value.as_ref().is_ok_and(|w| !w.is_empty()))
        {
            facts.watchers.value = Ok(vec![]);
        }
        inc.update(Msg::Ceph(unstick_core::sources::ceph::CephMsg::Image { image, facts }));
    } else {
        let now = inc.now + jiff::SignedDuration::from_secs(at as i64 * 60 + 5 + i64::from(op) * 17);
        inc.update(Msg::Tick(now));
    }
}

/// The app's events by involved object: (kind, object, the event's pointer), sorted.
fn events_by_object(a: &App) -> Vec<(String, String, usize)> {
    let all = a.data.index.events().all();
    let mut v: Vec<_> =
        all.map(|d| (d.kind().to_string(), d.object.clone(), Arc::as_ptr(d.event()) as usize)).collect();
    v.sort();
    v
}

/// The events of `snap` about object `id` of `kind` (a Node by name, whatever namespace the event
/// gives), in namespace/name order.
fn scan(snap: &Snapshot, kind: &str, id: &str) -> Vec<usize> {
    let mut v: Vec<_> = snap
        .events
        .iter()
        .filter(|e| {
            let o = &e.involved_object;
            let (ns, name) = (o.namespace.as_deref().unwrap_or(""), o.name.as_deref().unwrap_or(""));
            let oid = if ns.is_empty() || kind == "Node" { name.to_string() } else { format!("{ns}/{name}") };
            o.kind.as_deref() == Some(kind) && oid == id
        })
        .collect();
    v.sort_by(|a, b| {
        let k = |e: &Arc<unstick_core::model::objects::Event>| (e.metadata.namespace.clone(), e.metadata.name.clone());
        k(a).cmp(&k(b)).then_with(|| Arc::as_ptr(a).cmp(&Arc::as_ptr(b)))
    });
    v.into_iter().map(|e| Arc::as_ptr(e) as usize).collect()
}

/// Asserts that `inc` derived the same as an app given `snap` at once (at `inc`'s clock, with
/// its Ceph facts).
fn same_as_whole(inc: &App, snap: &Snapshot) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut whole = fresh();
    whole.now = inc.now;
    whole.data.snap.ceph = inc.data.snap.ceph.clone();
    whole.all_pods = inc.all_pods;
    whole.view_mut(crate::ui::panes::Pane::Pods).set_filter(inc.view(crate::ui::panes::Pane::Pods).filter().text());
    whole.update(Msg::Objects(Box::new(kube_part(snap))));
    proptest::prop_assert_eq!(&inc.data.lineage.volumes, &whole.data.lineage.volumes);
    for p in &snap.pods {
        let key = unstick_core::model::key_of(&p.metadata);
        let pvs = |a: &App| a.data.lineage.volumes_of_pod(&key).map(|v| v.pv.clone()).collect::<Vec<_>>();
        proptest::prop_assert_eq!(pvs(inc), pvs(&whole));
    }
    proptest::prop_assert_eq!(&inc.data.rows, &whole.data.rows);
    proptest::prop_assert_eq!(events_by_object(inc), events_by_object(&whole));
    // and what the Events pane reads of each pod and node equals a scan of the snapshot
    let subjects = snap.pods.iter().map(|p| ("Pod", unstick_core::model::key_of(&p.metadata)));
    let subjects = subjects.chain(snap.nodes.iter().map(|n| ("Node", n.metadata.name.clone().unwrap_or_default())));
    for (kind, id) in subjects {
        let read: Vec<usize> = inc.data.index.events().of(kind, &id).map(|d| Arc::as_ptr(d.event()) as usize).collect();
        proptest::prop_assert_eq!(read, scan(snap, kind, &id));
    }
    proptest::prop_assert_eq!(&inc.data.findings, &whole.data.findings);
    proptest::prop_assert_eq!(&inc.data.flagged, &whole.data.flagged);
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(unstick_core::fuzz_cases(48)))]
    /// After every change, not only at the end (a diagnosis skipped wrongly would be redone by a
    /// later change). Changes of the six kinds, of Ceph facts, and clock ticks (the findings kept
    /// for the volumes a tick does not redo must be those a whole diagnosis gives then).
    #[test]
    fn changes_one_at_a_time_equal_the_whole_at_once(
        ops in proptest::collection::vec((0u8..7, 0u8..3, 0usize..64), 1..16),
        view in 0u8..6,
    ) {
        let mut snap = fixtures::incidents();
        let mut inc = fresh();
        set_view(&mut inc, view);
        inc.update(Msg::Objects(Box::new(kube_part(&snap))));
        let mut pools = Pools::default();
        for (kind, op, at) in ops {
            if kind == 6 {
                tick_or_ceph(&mut inc, op, at);
            } else {
                step(&mut snap, &mut pools, kind, op, at, inc.now);
                inc.update(Msg::Objects(Box::new(kube_part(&snap))));
            }
            same_as_whole(&inc, &snap)?;
        }
    }
}

/// A pod waiting within `creating_grace_seconds` on a volume a lost node holds is no finding
/// yet; the first tick past the grace makes it one, though nothing about that volume changed
/// (the volume's next threshold is due).
#[test]
fn a_tick_past_the_creating_grace_finds_what_the_grace_hid() {
    use unstick_core::diagnose::{ObjectKind, PatternId};
    let mut snap = fixtures::incidents();
    // without Ceph facts (no watcher findings about the same volume; no blocklist expiring)
    let no_ceph = || {
        let mut a = fresh();
        a.data.snap.ceph = Default::default();
        a
    };
    let mut whole = no_ceph();
    whole.update(Msg::Objects(Box::new(kube_part(&snap))));
    let f = whole.data.findings.iter().find(|f| f.pattern == PatternId::MultiAttachNodeLost).expect("seed 001");
    let (pv, waiting) =
        (f.volume.clone(), f.objects.iter().find(|o| o.kind == ObjectKind::Pod).expect("its pod").clone());
    let key = format!("{}/{}", waiting.namespace.as_deref().unwrap_or(""), waiting.name);
    snap.events.retain(|e| {
        let o = &e.involved_object;
        (o.namespace.as_deref(), o.name.as_deref()) != (waiting.namespace.as_deref(), Some(waiting.name.as_str()))
    });
    let i = snap.pods.iter().position(|p| unstick_core::model::key_of(&p.metadata) == key).expect("the pod");
    let mut p = (*snap.pods[i]).clone();
    p.metadata.creation_timestamp = Some(Time(fixtures::now() - jiff::SignedDuration::from_secs(30)));
    if let Some(st) = p.status.as_mut() {
        st.start_time = None;
    }
    snap.pods[i] = Arc::new(p);
    let mut inc = no_ceph();
    inc.update(Msg::Objects(Box::new(kube_part(&snap))));
    // (the old pod Terminating on the lost node is stuck meanwhile: `unexplained` until the
    // multi-attach finding, which covers the volume, appears)
    let of_pv = |a: &App| {
        a.data.findings.iter().filter(|f| f.volume == pv && f.pattern == PatternId::MultiAttachNodeLost).count()
    };
    assert_eq!(of_pv(&inc), 0, "within the grace");
    inc.update(Msg::Tick(fixtures::now() + jiff::SignedDuration::from_secs(60)));
    assert_eq!(of_pv(&inc), 0, "still within the grace");
    inc.update(Msg::Tick(fixtures::now() + jiff::SignedDuration::from_secs(150)));
    assert_eq!(of_pv(&inc), 1, "past the grace");
    assert!(!inc.data.findings.iter().any(|f| f.volume == pv && f.pattern == PatternId::Unexplained), "covered now");
    same_as_whole(&inc, &snap).expect("the same as a whole diagnosis");
}

/// A node that lists a volume in `status.volumesAttached` (and holds no VolumeAttachment of it)
/// going lost alters that volume's findings: the node's scope reads its own list.
#[test]
fn a_node_lost_with_a_volume_in_its_status_redoes_that_volume() {
    use unstick_core::diagnose::{ObjectKind, PatternId};
    let mut snap = fixtures::incidents();
    let mut inc = fresh();
    inc.update(Msg::Objects(Box::new(kube_part(&snap))));
    let f = inc.data.findings.iter().find(|f| f.pattern == PatternId::MultiAttachNodeLost).expect("seed 001");
    let pv = f.volume.clone().expect("its volume");
    let unique = inc.data.lineage.by_pv(&pv).and_then(|v| v.unique_name.clone()).expect("a CSI volume");
    let i = snap.nodes.iter().position(|n| n.metadata.name.as_deref() == Some("k8s-node-a")).expect("node a");
    let mut n = (*snap.nodes[i]).clone();
    let st = n.status.get_or_insert_with(Default::default);
    st.volumes_attached.get_or_insert_with(Vec::new).push(AttachedVolume { name: unique, device_path: String::new() });
    snap.nodes[i] = Arc::new(n.clone());
    inc.update(Msg::Objects(Box::new(kube_part(&snap))));
    same_as_whole(&inc, &snap).expect("after the attach");
    let c = n.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.first_mut()).expect("Ready");
    c.status = "Unknown".into();
    c.last_transition_time = Some(time("2026-11-22T02:40:00Z"));
    snap.nodes[i] = Arc::new(n);
    inc.update(Msg::Objects(Box::new(kube_part(&snap))));
    let names_a = |f: &&unstick_core::diagnose::Finding| f.mentions(ObjectKind::Node, None, "k8s-node-a");
    assert!(inc.data.findings.iter().filter(|f| f.volume.as_deref() == Some(pv.as_str())).any(|f| names_a(&f)));
    same_as_whole(&inc, &snap).expect("after the node is lost");
}

/// A node that goes NotReady by a change (not a whole diagnosis) is lost once its grace has
/// passed: the grace timer is redone with the node's scope, and the tick past it finds what the
/// grace hid.
#[test]
fn a_node_not_ready_by_a_change_is_lost_after_its_grace() {
    use unstick_core::diagnose::PatternId;
    let mut snap = fixtures::incidents();
    let mut inc = fresh();
    inc.update(Msg::Objects(Box::new(kube_part(&snap))));
    let multi = |a: &App| a.data.findings.iter().filter(|f| f.pattern == PatternId::MultiAttachNodeLost).count();
    let lost = multi(&inc);
    assert!(lost > 0, "seeds 001, 002: k8s-node-lost lost long ago");
    let i = snap.nodes.iter().position(|n| n.metadata.name.as_deref() == Some("k8s-node-lost")).expect("the node");
    let mut set = |status: &str, since: jiff::Timestamp| {
        let mut n = (*snap.nodes[i]).clone();
        let c = n.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.first_mut()).expect("Ready");
        (c.status, c.last_transition_time) = (status.into(), Some(Time(since)));
        snap.nodes[i] = Arc::new(n);
        snap.clone()
    };
    inc.update(Msg::Objects(Box::new(kube_part(&set("True", fixtures::now())))));
    assert_eq!(multi(&inc), 0, "Ready again");
    let s = set("Unknown", fixtures::now() - jiff::SignedDuration::from_secs(10));
    inc.update(Msg::Objects(Box::new(kube_part(&s))));
    assert_eq!(multi(&inc), 0, "within the grace");
    inc.update(Msg::Tick(fixtures::now() + jiff::SignedDuration::from_secs(30)));
    assert_eq!(multi(&inc), 0, "still within the grace");
    inc.update(Msg::Tick(fixtures::now() + jiff::SignedDuration::from_secs(70)));
    assert_eq!(multi(&inc), lost, "past the grace");
    same_as_whole(&inc, &s).expect("the same as a whole diagnosis");
}

#[test]
fn the_first_scan_waits_for_the_pvs_not_only_their_live_state() {
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = true;
    let mut a = App::new(cfg, Theme::monochrome(), "kh".into(), None, true, fixtures::now());
    for k in WatchedKind::ALL {
        a.update(Msg::KubeState(k, SourceState::Live));
    }
    let inc = fixtures::incidents();
    // the nodes taken before the PVs' change: no scan of nothing
    let nodes_only = Snapshot { nodes: inc.nodes.clone(), taken_at: inc.taken_at, ..Snapshot::default() };
    let fx = a.update(Msg::Objects(Box::new(nodes_only)));
    assert!(!fx.iter().any(|e| matches!(e, crate::ui::app::Effect::Ceph(_))), "{fx:?}");
    assert!(!a.ceph.scanned);
    let fx = a.update(Msg::Objects(Box::new(kube_part(&inc))));
    let scans = fx
        .iter()
        .filter(|e| {
            matches!(e, crate::ui::app::Effect::Ceph(unstick_core::sources::ceph::CephRequest::Scan(i)) if !i.is_empty())
        })
        .count();
    assert_eq!(scans, 1, "{fx:?}");
}

#[path = "watched_tests.rs"]
mod watched;
