//! The console's path: watch events written to the stores, their changes taken in batches and
//! patched into the app's snapshot (`Msg::Watched`), give the snapshot a whole read of the stores
//! gives (the same `Arc`s in the same order), the lineage, rows, index and findings of an app
//! given that snapshot at once, and the screen of an app given the whole read at every batch
//! (`Msg::Objects`, diffed whole: the same selection moves).

use std::sync::Arc;

use kube::runtime::watcher::Event as WEvent;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::{Pools, fresh, kube_part, same_as_whole, set_view, step, tick_or_ceph};
use crate::ui::app::{App, Msg};
use unstick_core::console_state::changes::changed;
use unstick_core::fixtures;
use unstick_core::model::Snapshot;
use unstick_core::sources::kube::store::{self, Keyed, Writer};
use unstick_core::sources::kube::{KubeStores, WatchedKind};

/// The six stores' writers.
struct Writers {
    nodes: Writer<unstick_core::model::objects::Node>,
    pods: Writer<unstick_core::model::objects::Pod>,
    pvcs: Writer<unstick_core::model::objects::PersistentVolumeClaim>,
    pvs: Writer<unstick_core::model::objects::PersistentVolume>,
    vas: Writer<unstick_core::model::objects::VolumeAttachment>,
    events: Writer<unstick_core::model::objects::Event>,
}

fn stores() -> (KubeStores, Writers) {
    let (nodes, nw) = store::store();
    let (pods, pw) = store::store();
    let (pvcs, cw) = store::store();
    let (pvs, vw) = store::store();
    let (volume_attachments, aw) = store::store();
    let (events, ew) = store::store();
    let s = KubeStores { nodes, pods, pvcs, pvs, volume_attachments, events };
    (s, Writers { nodes: nw, pods: pw, pvcs: cw, pvs: vw, vas: aw, events: ew })
}

/// Writes to `w` the watch events that take its store from `old` to `new` (both sorted by key):
/// a Delete per object gone, an Apply (a copy, as a watcher parses it) per object come; or, with
/// `relist`, the whole of `new` as a re-list.
fn write<K: Keyed + Clone + PartialEq + unstick_core::model::meta::SlimObject>(
    w: &mut Writer<K>,
    old: &[Arc<K>],
    new: &[Arc<K>],
    relist: bool,
) {
    if relist {
        w.apply(WEvent::Init);
        for o in new {
            w.apply(WEvent::InitApply((**o).clone()));
        }
        return w.apply(WEvent::InitDone);
    }
    let c = changed(old, new);
    for g in &c.gone {
        if !c.came.iter().any(|n| n.store_key() == g.store_key()) {
            w.apply(WEvent::Delete((**g).clone()));
        }
    }
    for n in &c.came {
        w.apply(WEvent::Apply((**n).clone()));
    }
}

fn write_all(w: &mut Writers, old: &Snapshot, new: &Snapshot, relist: bool) {
    write(&mut w.nodes, &old.nodes, &new.nodes, relist);
    write(&mut w.pods, &old.pods, &new.pods, relist);
    write(&mut w.pvcs, &old.pvcs, &new.pvcs, relist);
    write(&mut w.pvs, &old.pvs, &new.pvs, relist);
    write(&mut w.vas, &old.volume_attachments, &new.volume_attachments, relist);
    write(&mut w.events, &old.events, &new.events, relist);
}

fn ptrs<K>(v: &[Arc<K>]) -> Vec<usize> {
    v.iter().map(|o| Arc::as_ptr(o) as usize).collect()
}

/// The stores read whole, stamped `at`.
fn read(stores: &KubeStores, at: jiff::Timestamp) -> Snapshot {
    let mut s = Snapshot::default();
    stores.fill(&mut s, at);
    s
}

/// The screen of `a` at 160×45, as text.
fn screen(a: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(160, 45)).expect("a test terminal");
    t.draw(|f| crate::ui::view::draw(f, a)).expect("drawn");
    format!("{:?}", t.backend().buffer())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(unstick_core::fuzz_cases(32)))]
    /// Changes of the six kinds written as watch events (or as re-lists), Ceph facts and clock
    /// ticks, taken by the app at random points.
    #[test]
    fn patched_batches_equal_the_stores_read_whole(
        ops in proptest::collection::vec((0u8..7, 0u8..3, 0usize..64, 0u8..4), 1..16),
        view in 0u8..6,
    ) {
        let mut truth = fixtures::incidents();
        let (stores, mut w) = stores();
        write_all(&mut w, &Snapshot::default(), &truth, false);
        let (mut inc, mut full) = (fresh(), fresh());
        for a in [&mut inc, &mut full] {
            set_view(a, view);
            a.update(Msg::Resize(160, 45));
        }
        inc.update(Msg::Watched(Box::new(stores.take_changes(&WatchedKind::ALL, fixtures::now()))));
        full.update(Msg::Objects(Box::new(read(&stores, fixtures::now()))));
        let mut pools = Pools::default();
        for (kind, op, at, how) in ops {
            if kind == 6 {
                tick_or_ceph(&mut inc, op, at);
                tick_or_ceph(&mut full, op, at);
            } else {
                let old = kube_part(&truth);
                step(&mut truth, &mut pools, kind, op, at, inc.now);
                write_all(&mut w, &old, &truth, how == 3);
            }
            if how == 0 {
                // not taken yet: the next take has several changes
                continue;
            }
            // stamped as the first take (evidence is observed at the snapshot's time: a take
            // that changes nothing redoes no finding, before as now)
            inc.update(Msg::Watched(Box::new(stores.take_changes(&WatchedKind::ALL, fixtures::now()))));
            let whole = read(&stores, fixtures::now());
            proptest::prop_assert_eq!(ptrs(&inc.data.snap.nodes), ptrs(&whole.nodes));
            proptest::prop_assert_eq!(ptrs(&inc.data.snap.pods), ptrs(&whole.pods));
            proptest::prop_assert_eq!(ptrs(&inc.data.snap.pvcs), ptrs(&whole.pvcs));
            proptest::prop_assert_eq!(ptrs(&inc.data.snap.pvs), ptrs(&whole.pvs));
            proptest::prop_assert_eq!(ptrs(&inc.data.snap.volume_attachments), ptrs(&whole.volume_attachments));
            proptest::prop_assert_eq!(ptrs(&inc.data.snap.events), ptrs(&whole.events));
            same_as_whole(&inc, &whole)?;
            full.update(Msg::Objects(Box::new(whole)));
            proptest::prop_assert_eq!(screen(&inc), screen(&full));
        }
    }
}
