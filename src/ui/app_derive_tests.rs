//! The app's derived state after a sequence of changes taken one at a time (what it keeps when a
//! kind did not change) equals the state of an app given the final objects at once.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource;

use crate::config::Config;
use crate::fixtures;
use crate::model::Snapshot;
use crate::sources::kube::{SourceState, WatchedKind};
use crate::theme::Theme;
use crate::ui::app::{App, Msg};

fn fresh() -> App {
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = false;
    let mut a = App::new(cfg, Theme::monochrome(), "kh".into(), None, true, fixtures::now());
    for k in WatchedKind::ALL {
        a.update(Msg::KubeState(k, SourceState::Live));
    }
    a.snap.ceph = fixtures::incidents().ceph;
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
fn mutate<K: Clone + Resource>(
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
    nodes: Vec<Arc<crate::model::objects::Node>>,
    pods: Vec<Arc<crate::model::objects::Pod>>,
    pvcs: Vec<Arc<crate::model::objects::PersistentVolumeClaim>>,
    pvs: Vec<Arc<crate::model::objects::PersistentVolume>>,
    vas: Vec<Arc<crate::model::objects::VolumeAttachment>>,
    events: Vec<Arc<crate::model::objects::Event>>,
}

fn step(s: &mut Snapshot, p: &mut Pools, kind: u8, op: u8, at: usize) {
    let toggle = |t: &mut Option<Time>| *t = if t.is_some() { None } else { Some(time("2026-11-22T02:50:00Z")) };
    match kind % 6 {
        0 => mutate(&mut s.nodes, &mut p.nodes, op, at, |n| {
            if let Some(c) = n.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.first_mut()) {
                c.status = if c.status == "True" { "Unknown".into() } else { "True".into() };
                c.last_transition_time = Some(time("2026-11-22T02:40:00Z"));
            }
        }),
        1 => mutate(&mut s.pods, &mut p.pods, op, at, |o| {
            toggle(&mut o.metadata.deletion_timestamp);
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
                sp.claim_ref = None;
            }
        }),
        4 => mutate(&mut s.volume_attachments, &mut p.vas, op, at, |o| toggle(&mut o.metadata.deletion_timestamp)),
        _ => mutate(&mut s.events, &mut p.events, op, at, |o| o.count = Some(o.count.unwrap_or(1) + 7)),
    }
}

/// Asserts that `inc` derived the same as an app given `snap` at once.
fn same_as_whole(inc: &App, snap: &Snapshot) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut whole = fresh();
    whole.update(Msg::Objects(Box::new(kube_part(snap))));
    proptest::prop_assert_eq!(&inc.lineage.volumes, &whole.lineage.volumes);
    for p in &snap.pods {
        let key = crate::model::key_of(&p.metadata);
        let pvs = |a: &App| a.lineage.volumes_of_pod(&key).map(|v| v.pv.clone()).collect::<Vec<_>>();
        proptest::prop_assert_eq!(pvs(inc), pvs(&whole));
    }
    proptest::prop_assert_eq!(&inc.rows, &whole.rows);
    proptest::prop_assert_eq!(&inc.events_by_object, &whole.events_by_object);
    proptest::prop_assert_eq!(&inc.findings, &whole.findings);
    proptest::prop_assert_eq!(&inc.flagged, &whole.flagged);
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(48)))]
    /// After every change, not only at the end (a diagnosis skipped wrongly would be redone by a
    /// later change).
    #[test]
    fn changes_one_at_a_time_equal_the_whole_at_once(ops in proptest::collection::vec((0u8..6, 0u8..3, 0usize..64), 1..12)) {
        let mut snap = fixtures::incidents();
        let mut inc = fresh();
        inc.update(Msg::Objects(Box::new(kube_part(&snap))));
        let mut pools = Pools::default();
        for (kind, op, at) in ops {
            step(&mut snap, &mut pools, kind, op, at);
            inc.update(Msg::Objects(Box::new(kube_part(&snap))));
            same_as_whole(&inc, &snap)?;
        }
    }
}
