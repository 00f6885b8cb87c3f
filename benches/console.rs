//! Console costs over a 10,000-pod model (issue 13): drawing a full frame at 200×60 on a
//! `TestBackend`, and applying one watch event on the path the live console takes (the watch
//! store, then what the UI loop does with the change: take the store's changes, patch the
//! snapshot, bring what reads it over the change). Run with `cargo bench --bench console`; the per-step times printed first say where
//! an update's time goes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a bench fails by panicking")]

#[path = "support/cluster.rs"]
mod cluster;

use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ContainerStateWaiting;
use kube::runtime::watcher::Event as WEvent;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use unstick::theme::Theme;
use unstick::ui::app::{App, Msg};
use unstick_core::config::Config;
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::model::objects::{ContainerState, ContainerStatus, Node, Pod, VolumeAttachment};
use unstick_core::sources::kube::store::{self, Keyed, Writer};
use unstick_core::sources::kube::{KubeStores, SourceState, WatchedKind};

fn now() -> Timestamp {
    "2026-11-22T03:00:00Z".parse().unwrap()
}

/// The writers of the kinds the benchmark changes (what a watcher's task applies events with).
struct Writers {
    pods: Writer<Pod>,
    nodes: Writer<Node>,
    volume_attachments: Writer<VolumeAttachment>,
}

/// Watch stores holding the generated cluster, with the writers of the kinds the bench changes.
fn stores(snap: &Snapshot) -> (KubeStores, Writers) {
    fn fill<K: Keyed + Clone + PartialEq>(objs: &[Arc<K>]) -> (store::Store<K>, Writer<K>) {
        let (r, mut w) = store::store();
        for o in objs {
            w.apply(WEvent::Apply((**o).clone()));
        }
        (r, w)
    }
    let (pods, pw) = fill(&snap.pods);
    let (nodes, nw) = fill(&snap.nodes);
    let (volume_attachments, vw) = fill(&snap.volume_attachments);
    let s = KubeStores {
        nodes,
        pods,
        pvcs: fill(&snap.pvcs).0,
        pvs: fill(&snap.pvs).0,
        volume_attachments,
        events: fill(&snap.events).0,
    };
    (s, Writers { pods: pw, nodes: nw, volume_attachments: vw })
}

/// A console showing `snap` (its Ceph facts included) at 200×60, every kind live, a pod selected.
fn app(snap: Snapshot) -> App {
    let ceph = snap.ceph.clone();
    app_with(ceph, Msg::Objects(Box::new(snap)))
}

/// A console given its objects by `first`, with Ceph facts `ceph`, as [`app`] sets it up.
fn app_with(ceph: unstick_core::model::CephFacts, first: Msg) -> App {
    let mut a = App::new(Config::defaults(), Theme::monochrome(), "bench".into(), None, true, now());
    a.update(Msg::Resize(200, 60));
    for k in WatchedKind::ALL {
        a.update(Msg::KubeState(k, SourceState::Live));
    }
    a.data.snap.ceph = ceph;
    a.update(first);
    unstick::ui::testing::press(&mut a, crossterm::event::KeyCode::Char('3'));
    a
}

/// The `i`th pod with a new waiting reason (a status change the screen shows).
fn changed_pod(snap: &Snapshot, i: usize) -> Pod {
    let mut p = (*snap.pods[i % snap.pods.len()]).clone();
    let st = p.status.get_or_insert_with(Default::default);
    let cs = st.container_statuses.get_or_insert_with(Vec::new);
    if cs.is_empty() {
        cs.push(ContainerStatus { name: "app".into(), ..Default::default() });
    }
    let reason = if i.is_multiple_of(2) { "ContainerCreating" } else { "PodInitializing" };
    cs[0].state = Some(ContainerState {
        waiting: Some(ContainerStateWaiting { reason: Some(reason.into()), ..Default::default() }),
    });
    p
}

fn time<T>(what: &str, n: usize, mut f: impl FnMut() -> T) {
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(f());
    }
    println!("  {what:<48} {:8.3} ms", t.elapsed().as_secs_f64() * 1e3 / n as f64);
}

fn main() {
    let snap = cluster::generate(now());
    let (stores, _) = stores(&snap);
    let mut a = app(snap.clone());
    let cfg = Config::defaults();
    println!(
        "model: {} nodes, {} pods, {} PVs, {} events; one update's steps (mean of 10):",
        snap.nodes.len(),
        snap.pods.len(),
        snap.pvs.len(),
        snap.events.len()
    );
    time("KubeStores::fill (copy + sort six stores)", 10, || {
        let mut s = Snapshot::default();
        stores.fill(&mut s, now());
        s
    });
    time("Lineage::build", 10, || Lineage::build(&snap));
    let lin = Lineage::build(&snap);
    time("rows::compute", 10, || unstick_core::console_state::rows::compute(&snap, &lin, &a.filters(), false));
    time("diagnose::run", 10, || unstick_core::diagnose::run(&snap, &lin, &cfg.diagnose, now()));
    time("App::update(Msg::Objects) (lineage, rows, diagnosis)", 10, || a.update(Msg::Objects(Box::new(snap.clone()))));
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    time("draw a 200×60 frame", 10, || term.draw(|f| unstick::ui::view::draw(f, &a)).map(|_| ()));
    take_and_patch(&snap);
    ui_changes(&snap);
    render_percentiles(&a);
    divan::main();
}

/// This thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`): on the shared 2-core machine a wall-clock
/// p99 of a sub-millisecond step is mostly the scheduler's time slice given to another process.
fn thread_cpu() -> std::time::Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// p50 / p99 / max of `n` runs of `f` (which returns the part to time, wall clock and thread
/// CPU time), in ms.
fn percentiles(what: &str, n: usize, mut f: impl FnMut() -> (std::time::Duration, std::time::Duration)) {
    let runs: Vec<(std::time::Duration, std::time::Duration)> = (0..n).map(|_| f()).collect();
    for (clock, pick) in [("wall", 0), ("cpu", 1)] {
        let mut t: Vec<f64> = runs.iter().map(|r| if pick == 0 { r.0 } else { r.1 }.as_secs_f64() * 1e3).collect();
        t.sort_by(f64::total_cmp);
        let at = |p: f64| t[((p / 100.0) * (n - 1) as f64).round() as usize];
        println!("  {what:<44} {clock:<4} p50 {:6.3} p99 {:6.3} max {:6.3} ms (n={n})", at(50.0), at(99.0), t[n - 1]);
    }
}

/// Wall clock and thread CPU time of `f`.
fn timed(f: impl FnOnce()) -> (std::time::Duration, std::time::Duration) {
    let (t, c) = (Instant::now(), thread_cpu());
    f();
    (t.elapsed(), thread_cpu().saturating_sub(c))
}

/// The UI's part of one change, all of what the UI task does with one batch of watch events:
/// `change` writes the `i`th call's event into a store (the watcher's task: outside the timing),
/// then the timed part takes the stores' changes of `kinds`, patches the snapshot and brings
/// lineage, index, rows and the scoped diagnosis over the change (`Msg::Watched`).
fn ui_change(
    a: &mut App,
    stores: &KubeStores,
    w: &mut Writers,
    what: &str,
    kinds: &[WatchedKind],
    mut change: impl FnMut(&mut Writers, &Snapshot, usize),
) {
    let mut i = 0;
    percentiles(what, 200, || {
        i += 1;
        change(w, &a.data.snap, i);
        timed(|| {
            a.update(taken(stores, kinds));
        })
    });
}

/// The UI's part of one pod status change, one node's `volumesInUse` / `volumesAttached`
/// losing an entry (a detach: what moves node status on a busy cluster), one node's Ready
/// condition flipping (and back on the next change), and one VolumeAttachment's
/// `status.attached` flipping.
fn ui_changes(snap: &Snapshot) {
    let (stores, mut w) = stores(snap);
    let mut a = watching(&stores, snap);
    let a = &mut a;
    ui_change(a, &stores, &mut w, "App::update, one pod changed (UI part only)", &[WatchedKind::Pod], |w, s, i| {
        let j = (i * 7919) % s.pods.len();
        w.pods.apply(WEvent::Apply(changed_pod(s, j)));
    });
    let node = [WatchedKind::Node];
    ui_change(a, &stores, &mut w, "App::update, one node's volumes moved (UI part)", &node, |w, s, i| {
        let mut n = (*s.nodes[(i * 37) % s.nodes.len()]).clone();
        if let Some(st) = n.status.as_mut() {
            st.volumes_in_use.as_mut().map(Vec::pop);
            st.volumes_attached.as_mut().map(Vec::pop);
        }
        w.nodes.apply(WEvent::Apply(n));
    });
    ui_change(a, &stores, &mut w, "App::update, one node's Ready flipped (UI part)", &node, |w, s, i| {
        // a node goes NotReady, and Ready again on the next change (a flap)
        let mut n = (*s.nodes[(i.div_ceil(2) * 37) % s.nodes.len()]).clone();
        let c = n.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.first_mut());
        if let Some(c) = c {
            c.status = if c.status == "True" { "Unknown".into() } else { "True".into() };
        }
        w.nodes.apply(WEvent::Apply(n));
    });
    let va = [WatchedKind::VolumeAttachment];
    ui_change(a, &stores, &mut w, "App::update, one VolumeAttachment changed (UI part)", &va, |w, s, i| {
        let mut v = (*s.volume_attachments[(i * 13) % s.volume_attachments.len()]).clone();
        if let Some(st) = v.status.as_mut() {
            st.attached = !st.attached;
        }
        w.volume_attachments.apply(WEvent::Apply(v));
    });
}

/// The sources' part of the UI's work on one pod change: take the pods' store's changes and
/// patch them into a sorted snapshot (what `Msg::Watched` does before the derive). The store's
/// write is outside the timing.
fn take_and_patch(snap: &Snapshot) {
    let (stores, mut w) = stores(snap);
    let mut s = Snapshot::default();
    unstick_core::console_state::changes::Changes::patch(&mut s, stores.take_changes(&WatchedKind::ALL, now()));
    let mut i = 0;
    percentiles("take_changes + Changes::patch, one pod changed", 2000, || {
        i += 1;
        w.pods.apply(WEvent::Apply(changed_pod(snap, (i * 7919) % snap.pods.len())));
        timed(|| {
            std::hint::black_box(unstick_core::console_state::changes::Changes::patch(
                &mut s,
                stores.take_changes(&[WatchedKind::Pod], now()),
            ));
        })
    });
}

/// A full frame at 200×60, fresh terminal each time: the percentiles the target names.
fn render_percentiles(a: &App) {
    percentiles("draw a 200×60 frame (fresh terminal)", 200, || {
        let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
        timed(|| {
            term.draw(|f| unstick::ui::view::draw(f, a)).unwrap();
        })
    });
}

/// A full frame at 200×60 over the 10k-pod model (TestBackend: no terminal IO). A fresh terminal
/// each time, so every cell is drawn (not only the ones that changed).
#[divan::bench(sample_count = 50)]
fn render_frame_200x60(b: divan::Bencher) {
    let a = app(cluster::generate(now()));
    b.with_inputs(|| Terminal::new(TestBackend::new(200, 60)).unwrap())
        .bench_local_refs(|t| t.draw(|f| unstick::ui::view::draw(f, &a)).map(|_| ()).unwrap());
}

/// What the UI loop hands the app after a change of `kinds` (`KubeStores::take_changes`, as
/// `ui::run` calls it).
fn taken(stores: &KubeStores, kinds: &[WatchedKind]) -> Msg {
    Msg::Watched(Box::new(stores.take_changes(kinds, now())))
}

/// A console (as [`app`], with `snap`'s Ceph facts) given its objects as the console's loop
/// gives them: the stores' changes since they were made (every object), patched into an empty
/// snapshot, so its lists hold the stores' `Arc`s sorted as the patches keep them (the
/// generated lists are not sorted: patching those by binary search would be wrong).
fn watching(stores: &KubeStores, snap: &Snapshot) -> App {
    app_with(snap.ceph.clone(), taken(stores, &WatchedKind::ALL))
}

/// Changes pod `pick(snapshot, i)` in the watch store on the `i`-th call, then runs the UI
/// loop's batch (take the pods' store's change, patch, `Msg::Watched`: the pod join, rows, diagnosis).
fn bench_pod_changes(b: divan::Bencher, pick: fn(&Snapshot, usize) -> usize) {
    let snap = cluster::generate(now());
    let (stores, mut w) = stores(&snap);
    let mut a = watching(&stores, &snap);
    let mut i = 0;
    b.bench_local(|| {
        i += 1;
        w.pods.apply(WEvent::Apply(changed_pod(&snap, pick(&snap, i))));
        a.update(taken(&stores, &[WatchedKind::Pod]))
    });
}

/// One pod status change as the console takes it: the store's write, then the UI loop's batch
/// (take the change, patch, derive). The pods changed here mount a volume, so the diagnosis runs.
#[divan::bench(sample_count = 20)]
fn apply_one_watch_event(b: divan::Bencher) {
    bench_pod_changes(b, |_, i| i * 7);
}

/// The same for a pod without a volume and without Events (most pods of a cluster): no rule can
/// see it, so the diagnosis is skipped (the pod join and its row redone).
#[divan::bench(sample_count = 20)]
fn apply_one_watch_event_unseen_pod(b: divan::Bencher) {
    // the generated pods end with the volume-less `web-N` pods
    bench_pod_changes(b, |snap, i| snap.pods.len() - 1 - i % 5000);
}

/// One Event as the console takes it (Events change most often): the change taken and patched,
/// the events index and the diagnosis redone, the lineage and rows kept.
#[divan::bench(sample_count = 20)]
fn apply_one_event(b: divan::Bencher) {
    let snap = cluster::generate(now());
    let (mut stores, _) = stores(&snap);
    let (events, mut writer) = store::store();
    for e in &snap.events {
        writer.apply(WEvent::Apply((**e).clone()));
    }
    stores.events = events;
    let mut a = watching(&stores, &snap);
    let mut i = 0;
    b.bench_local(|| {
        i += 1;
        let mut e = (*snap.events[i * 13 % snap.events.len()]).clone();
        e.count = Some(e.count.unwrap_or(1) + 1);
        writer.apply(WEvent::Apply(e));
        a.update(taken(&stores, &[WatchedKind::Event]))
    });
}
