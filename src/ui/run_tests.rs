//! The loop's handling of watch messages: a kind's `Live` state is shown with the objects its
//! list brought, never before (issue 29: at 50k pods the status bar said `po✓` about 30 s before
//! any pod was in the panes).

use std::sync::Arc;

use kube::runtime::watcher::Event as WEvent;

use super::{Loop, Sources};
use crate::theme::Theme;
use crate::ui::app::App;
use unstick_core::clock::FixedClock;
use unstick_core::config::Config;
use unstick_core::fixtures;
use unstick_core::sources::kube::store::{self, Store};
use unstick_core::sources::kube::{KubeMsg, KubeStores, SourceState, WatchedKind};

fn empty<K: unstick_core::sources::kube::store::Keyed + Clone + PartialEq>() -> Store<K> {
    store::store().0
}

#[tokio::test]
async fn a_kind_turns_live_in_the_step_that_takes_its_list() {
    let (pods, mut writer) = store::store();
    let stores =
        KubeStores { nodes: empty(), pods, pvcs: empty(), pvs: empty(), volume_attachments: empty(), events: empty() };
    let (ktx, kube_rx) = tokio::sync::mpsc::unbounded_channel();
    let (_ceph_tx, ceph_rx) = tokio::sync::mpsc::unbounded_channel();
    let (_remedy_tx, remedy_rx) = tokio::sync::mpsc::unbounded_channel();
    let src = Sources {
        stores,
        kube_rx,
        ceph_tx: None,
        ceph_rx,
        remedy_tx: None,
        remedy_rx,
        clock: Arc::new(FixedClock(fixtures::now())),
        client: None,
        fleet: None,
    };
    let mut app = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, true, fixtures::now());
    let mut lp = Loop::new(&mut app, src);
    let mut keys = futures::stream::pending();

    // what a watcher does at the end of its initial list: the list swapped into its store, then
    // its state, then the change
    writer.apply(WEvent::Init);
    for k in 0..3 {
        let p = fixtures::pod("shop", &format!("db-{k}"), "worker-1", "", "ContainerCreating", "2026-11-22T02:00:00Z");
        writer.apply(WEvent::InitApply((*p).clone()));
    }
    writer.apply(WEvent::InitDone);
    ktx.send(KubeMsg::State(WatchedKind::Pod, SourceState::Live)).unwrap();
    ktx.send(KubeMsg::Changed(WatchedKind::Pod)).unwrap();

    let mut steps = 0;
    while app.kube_state.get(&WatchedKind::Pod) != Some(&SourceState::Live) {
        assert!(steps < 20, "pods never shown Live");
        lp.step(&mut app, &mut keys).await.unwrap();
        steps += 1;
        // after every step (each may be followed by a frame)
        if app.kube_state.get(&WatchedKind::Pod) == Some(&SourceState::Live) {
            assert_eq!(app.data.snap.pods.len(), 3, "pods shown Live before their list was taken");
        }
    }
    assert!(steps >= 2, "the state came with the coalesced take, not with its own message ({steps} steps)");

    // a state that says less than Live is shown at once
    ktx.send(KubeMsg::State(WatchedKind::Pod, SourceState::Connecting)).unwrap();
    while app.kube_state.get(&WatchedKind::Pod) == Some(&SourceState::Live) {
        lp.step(&mut app, &mut keys).await.unwrap();
    }
    assert_eq!(app.kube_state.get(&WatchedKind::Pod), Some(&SourceState::Connecting));
}
