use crossterm::event::KeyCode;

use super::*;
use unstick_core::diagnose::ObjectKind;
use unstick_core::fixtures;
use unstick_core::model::ceph::Watcher;
use unstick_core::model::{CephError, ImageFacts, Observed};
use unstick_core::sources::ceph::ScanMethod;

/// An app on the fixed incident snapshot, every source live, clock at fixtures::now(), Ceph facts
/// in and diagnosed, no start-up scan. Shared with the playbook tests.
pub(crate) fn incidents_app(read_only: bool) -> App {
    incidents_app_with(read_only, None)
}

/// [`incidents_app`] with a session log attached before any data arrives (so the first diagnosis
/// is logged as findings appearing).
pub(crate) fn incidents_app_with(
    read_only: bool,
    session: Option<unstick_core::console_state::session_rec::SessionRecorder>,
) -> App {
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = false;
    let mut a = App::new(cfg, Theme::monochrome(), "kh".into(), None, read_only, fixtures::now());
    if let Some(rec) = session {
        a.attach_session(rec);
    }
    a.now = fixtures::now();
    for k in WatchedKind::ALL {
        a.update(Msg::KubeState(k, SourceState::Live));
    }
    let snap = fixtures::incidents();
    let ceph = snap.ceph.clone();
    a.update(Msg::Objects(Box::new(snap)));
    a.data.snap.ceph = ceph;
    a.ceph.pending.clear();
    a.ceph.blocklist_pending = false;
    a.ceph.last_refresh = Some(fixtures::now());
    // Diagnose again now that the Ceph facts are in.
    a.data.diagnosed_at = None;
    a.update(Msg::Tick(fixtures::now()));
    a.ceph.pending.clear();
    a.ceph.blocklist_pending = false;
    a
}

/// [`incidents_app`] with the Pods pane focused.
fn app() -> App {
    let mut a = incidents_app(false);
    a.focus = Pane::Pods;
    a
}

/// Selects the Pods pane's row of the pod named `name` (it must be listed); returns the row.
fn select_pod(a: &mut App, name: &str) -> usize {
    let row =
        a.data.rows.pods.iter().position(|&i| a.data.snap.pods[i].metadata.name.as_deref() == Some(name)).unwrap();
    a.select(Pane::Pods, row);
    row
}

use crate::ui::testing::press as key;
pub(crate) use crate::ui::testing::screen;

#[test]
fn default_pods_are_the_troubled_ones() {
    let a = app();
    let names: Vec<_> = a.data.rows.pods.iter().map(|&i| a.data.snap.pods[i].metadata.name.clone().unwrap()).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(!names.contains(&"api-5d8f7-healthy".to_string()));
}

#[test]
fn toggle_all_pods() {
    let mut a = app();
    key(&mut a, KeyCode::Char('a'));
    assert_eq!(a.data.rows.pods.len(), 8);
}

#[test]
fn selecting_a_pod_asks_ceph_for_its_image_once() {
    let mut a = app();
    a.data.snap.ceph.images.clear();
    let fx = key(&mut a, KeyCode::Char('j'));
    let Subject::Pod(p) = &a.subject else { panic!("{:?}", a.subject) };
    assert_eq!(p, "incident-001/user-db-79f7876cbc-dl8b8");
    assert!(matches!(&fx[..], [Effect::Ceph(CephRequest::Image(i)), ..] if i.image.starts_with("csi-vol-")), "{fx:?}");
    // In flight: moving away and back does not ask again.
    key(&mut a, KeyCode::Char('k'));
    let fx = key(&mut a, KeyCode::Char('j'));
    assert!(fx.is_empty(), "{fx:?}");
}

#[test]
fn filter_is_incremental_and_esc_clears() {
    let mut a = app();
    key(&mut a, KeyCode::Char('/'));
    for c in "mysql".chars() {
        key(&mut a, KeyCode::Char(c));
    }
    assert_eq!(a.data.rows.pods.len(), 1);
    key(&mut a, KeyCode::Enter);
    assert!(!a.is_open(crate::ui::popups::Kind::Filter));
    assert_eq!(a.view(Pane::Pods).filter().text(), "mysql");
    key(&mut a, KeyCode::Esc);
    assert!(a.view(Pane::Pods).filter().is_empty());
    assert_eq!(a.data.rows.pods.len(), 7);
}

#[test]
fn enter_drills_pod_to_volume_and_esc_returns() {
    let mut a = app();
    // incident-002 new pod
    let row = select_pod(&mut a, "sleep-6f7c8cc954-5hptw");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.focus, Pane::Volumes);
    assert_eq!(a.subject, Subject::Volume("pvc-2de7d17c-04c6-11eb-b22b-5254002d96de".into()));
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.focus, Pane::Pods);
    assert_eq!(a.selected_row(Pane::Pods), row);
}

#[test]
fn ceph_answer_clears_pending_and_updates_pane() {
    let mut a = app();
    select_pod(&mut a, "sleep-6f7c8cc954-5hptw");
    key(&mut a, KeyCode::Enter);
    let image = a.subject_image().unwrap();
    a.ceph.pending.insert(image.clone());
    let at = fixtures::now();
    a.update(Msg::Ceph(CephMsg::Image {
        image: image.clone(),
        facts: ImageFacts {
            watchers: Observed {
                value: Ok(vec![Watcher { address: "127.0.0.1:0/77".into(), client: 9, cookie: 1 }]),
                at,
            },
            locks: Observed {
                value: Err(CephError::Exit {
                    cmd: "rbd lock ls".into(),
                    code: 110,
                    stderr: "couldn't connect to the cluster!".into(),
                }
                .into()),
                at,
            },
        },
    }));
    assert!(a.ceph.pending.is_empty());
    a.focus = Pane::Ceph;
    let s = screen(&a, 80, 24);
    assert!(s.contains("127.0.0.1:0/77"), "{s}");
    assert!(s.contains("from k8s-node-lost (Ready=Unknown)"), "{s}");
    // The fixture had read the locks before: the failed re-read keeps them, marked unverified.
    assert!(s.contains("unverified since") && s.contains("exited 110"), "{s}");
    assert!(a.data.snap.ceph.unverified.contains_key(&unstick_core::model::CephRead::Locks(image)));
}

#[test]
fn forbidden_kind_degrades_only_its_pane() {
    let mut a = app();
    a.update(Msg::KubeState(
        WatchedKind::Pod,
        SourceState::Forbidden {
            verb: unstick_core::sources::kube::Verb::List,
            message: "pods is forbidden: User \"nobody\" cannot list resource \"pods\"".into(),
        },
    ));
    let s = screen(&a, 200, 50);
    assert!(s.contains("forbidden: list pods"), "{s}");
    assert!(s.contains("k8s-node-lost"), "nodes pane still works:\n{s}");
    assert!(s.contains("po:forbidden"));
}

#[test]
fn stale_source_shows_its_age() {
    let mut a = app();
    let since = fixtures::now() - jiff::SignedDuration::from_secs(42);
    a.update(Msg::KubeState(WatchedKind::Node, SourceState::Stale { since, error: "connection refused".into() }));
    let s = screen(&a, 200, 50);
    assert!(s.contains("no:stale 42s"), "{s}");
}

#[test]
fn event_messages_are_decoded_and_clean() {
    let mut a = app();
    select_pod(&mut a, "mysql-0");
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('k'));
    a.focus = Pane::Events;
    let s = screen(&a, 200, 50);
    assert!(s.contains("(16) Device or resource busy"), "{s}");
    assert!(!s.contains("114 98 100"), "{s}");
    assert!(!s.contains('\u{1b}'));
}

#[test]
fn help_overlay_lists_keys() {
    let mut a = app();
    key(&mut a, KeyCode::Char('?'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("keys: Pods") && s.contains("drill: the pod's volume"), "{s}");
    assert!(!s.contains("playbook of the selected finding"), "only the Pods pane's keys: {s}");
    key(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Help));
}

#[test]
fn snapshot_main_80x24() {
    let mut a = app();
    a.read_only = true;
    insta::assert_snapshot!("main_80x24", screen(&a, 80, 24));
}

#[test]
fn snapshot_main_200x50() {
    let mut a = app();
    // Select the incident-002 replacement pod so the Ceph and Events panes have content.
    select_pod(&mut a, "sleep-6f7c8cc954-5hptw");
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('k'));
    a.ceph.pending.clear();
    insta::assert_snapshot!("main_200x50", screen(&a, 200, 50));
}

#[test]
fn snapshot_volumes_80x24() {
    let mut a = app();
    key(&mut a, KeyCode::Char('4'));
    insta::assert_snapshot!("volumes_80x24", screen(&a, 80, 24));
}

#[test]
fn periodic_refresh_only_while_the_ceph_pane_is_visible() {
    let mut a = app();
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Char('k')); // index-api pod: its image was read at fixtures::now()
    a.ceph.pending.clear();
    let later = fixtures::now() + jiff::SignedDuration::from_secs(60);
    // Tab layout, Events focused: the Ceph pane is hidden, nothing is read.
    a.update(Msg::Resize(80, 24));
    a.focus = Pane::Events;
    assert!(a.update(Msg::Tick(later)).is_empty());
    // Pods focused at 80x24: the Ceph pane sits under the list, the stale image is re-read.
    a.focus = Pane::Pods;
    let fx = a.update(Msg::Tick(later));
    assert!(fx.iter().any(|e| matches!(e, Effect::Ceph(CephRequest::Image(_)))), "{fx:?}");
    assert!(fx.contains(&Effect::Ceph(CephRequest::Blocklist)), "{fx:?}");
    assert!(fx.contains(&Effect::Fences), "csi-addons' fences are read with the blocklist: {fx:?}");
}

/// A Ready node's range entry is a blocklist-leftover until the console reads the Fenced
/// NetworkFence that owns it (`Msg::Fences`); an error reading them keeps what was read before.
#[test]
fn a_network_fence_read_takes_its_entries_out_of_the_leftovers() {
    use unstick_core::diagnose::PatternId;
    use unstick_core::model::ceph::{BlocklistEntry, BlocklistTarget};
    use unstick_core::model::fence::NetworkFence;
    let mut snap = fixtures::incidents();
    snap.nodes.push(fixtures::node("fenced-1", "10.9.0.1", "True", &fixtures::now().to_string(), &[]));
    let mut a = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, false, fixtures::now());
    a.update(Msg::Objects(Box::new(snap)));
    let e = BlocklistEntry { target: BlocklistTarget::Range("10.9.0.1:0/32".into()), until: None };
    a.update(Msg::Ceph(CephMsg::Blocklist(Observed { value: Ok(vec![e]), at: fixtures::now() })));
    let leftovers = |a: &App| a.data.findings.iter().filter(|f| f.pattern == PatternId::BlocklistLeftover).count();
    assert_eq!(leftovers(&a), 1);
    let fence = NetworkFence {
        name: "unstick-fenced-1".into(),
        fence_state: "Fenced".into(),
        cidrs: vec!["10.9.0.1/32".into()],
        ..Default::default()
    };
    a.update(Msg::Fences(Ok(Fences { fences: Some(vec![fence]), ..Default::default() })));
    assert_eq!(leftovers(&a), 0, "the fence's own entry");
    let err = unstick_core::sources::kube::network_fence::FenceReadError::Timeout("networkfences", 10);
    a.update(Msg::Fences(Err(err)));
    assert_eq!(leftovers(&a), 0, "kept");
    a.update(Msg::Fences(Ok(Fences::default())));
    assert_eq!(leftovers(&a), 1, "csi-addons gone: a leftover again");
    // the node's CSIAddonsNode lists the address as its fence client: still a leftover (no
    // NetworkFence owns it), which names the fence client
    let node = unstick_core::model::csiaddons_node::CsiAddonsNode {
        namespace: "rook-ceph".into(),
        name: "fenced-1-rook-ceph-daemonset-csi-rbdplugin".into(),
        node_id: "fenced-1".into(),
        fence_clients: vec![unstick_core::model::csiaddons_node::FenceClient {
            cidrs: vec!["10.9.0.1/32".into()],
            ..Default::default()
        }],
        ..Default::default()
    };
    a.update(Msg::Fences(Ok(Fences { nodes: Some(vec![node]), ..Default::default() })));
    assert_eq!(leftovers(&a), 1, "a CSIAddonsNode's fence client is no fence");
    let f = a.data.findings.iter().find(|f| f.pattern == PatternId::BlocklistLeftover).expect("the leftover");
    assert!(f.evidence.iter().any(|e| e.text.contains("node fenced-1's csi-addons fence client")), "{:?}", f.evidence);
}

#[test]
fn findings_detail_and_jump_to_object() {
    let mut a = app();
    key(&mut a, KeyCode::Char('1'));
    assert_eq!(a.focus, Pane::Findings);
    let first = a.data.findings.first().expect("the incidents fixture has findings").clone();
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.popups().detail().map(|d| d.object()), Some(0));
    let s = screen(&a, 120, 40);
    assert!(s.contains("Evidence") && s.contains("Why"), "{s}");
    assert!(s.contains(first.pattern.as_str()), "{s}");
    // Move to the first Pod object and jump to it.
    let pod_idx = first.objects.iter().position(|o| o.kind == ObjectKind::Pod).expect("finding names a pod");
    for _ in 0..pod_idx {
        key(&mut a, KeyCode::Char('j'));
    }
    key(&mut a, KeyCode::Enter);
    assert!(!a.is_open(crate::ui::popups::Kind::Detail));
    assert_eq!(a.focus, Pane::Pods);
    let o = &first.objects[pod_idx];
    let Subject::Pod(k) = &a.subject else { panic!("{:?}", a.subject) };
    assert_eq!(k, &format!("{}/{}", o.namespace.as_deref().unwrap(), o.name));
    // Esc returns to the findings list.
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.focus, Pane::Findings);
}

#[test]
fn rows_with_findings_are_marked() {
    let a = app();
    assert!(a.data.flagged.pods.contains("incident-000/index-api-3362878852-pzxm8"));
    assert!(a.data.flagged.nodes.contains("k8s-node-lost"));
    assert!(!a.data.flagged.pods.contains("incident-004/api-5d8f7-healthy"));
}

#[test]
fn first_complete_pv_list_starts_one_scan() {
    let mut a = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, false, fixtures::now());
    let fx = a.update(Msg::Objects(Box::new(fixtures::incidents())));
    assert!(!fx.iter().any(|e| matches!(e, Effect::Ceph(CephRequest::Scan(_)))), "PVs not listed yet: {fx:?}");
    a.update(Msg::KubeState(WatchedKind::Pv, SourceState::Live));
    let fx = a.update(Msg::Objects(Box::new(fixtures::incidents())));
    let scans: Vec<_> = fx.iter().filter(|e| matches!(e, Effect::Ceph(CephRequest::Scan(_)))).collect();
    assert_eq!(scans.len(), 1, "{fx:?}");
    let Effect::Ceph(CephRequest::Scan(images)) = scans[0] else { unreachable!() };
    assert_eq!(images.len(), 5);
    a.update(Msg::Ceph(CephMsg::ScanDone {
        total: 5,
        elapsed: std::time::Duration::from_millis(10),
        method: ScanMethod::DumpWatchers,
    }));
    let fx = a.update(Msg::Objects(Box::new(fixtures::incidents())));
    assert!(!fx.iter().any(|e| matches!(e, Effect::Ceph(CephRequest::Scan(_)))), "only once: {fx:?}");
}

#[test]
fn a_second_s_cancels_the_running_scan() {
    let mut a = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, false, fixtures::now());
    a.update(Msg::Objects(Box::new(fixtures::incidents())));
    assert!(matches!(a.start_scan().as_slice(), [Effect::Ceph(CephRequest::Scan(_)), Effect::Fences]));
    a.update(Msg::Ceph(CephMsg::ScanProgress { done: 2, total: 5 }));
    assert!(matches!(a.start_scan().as_slice(), [Effect::Ceph(CephRequest::CancelScan)]));
    assert_eq!(a.ceph.scan, None);
    assert_eq!(a.ceph.last_scan.as_deref(), Some("cancelled at 2/5 images"));
    // late messages of the cancelled scan change nothing
    a.update(Msg::Ceph(CephMsg::ScanProgress { done: 3, total: 5 }));
    a.update(Msg::Ceph(CephMsg::ScanDone {
        total: 5,
        elapsed: std::time::Duration::from_millis(10),
        method: ScanMethod::Failed,
    }));
    assert_eq!(a.ceph.scan, None);
    assert_eq!(a.ceph.last_scan.as_deref(), Some("cancelled at 2/5 images"));
}

/// Issue 10: after a scan that found Ceph not answering, the console scans again by itself
/// after a back-off (30 s, 60 s, ... at most 10 min) and stops once a scan works; `s` takes over.
#[test]
fn a_failed_scan_is_retried_with_back_off() {
    let mut a = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, false, fixtures::now());
    a.now = fixtures::now();
    a.update(Msg::Objects(Box::new(fixtures::incidents())));
    let scans = |fx: &[Effect]| fx.iter().filter(|e| matches!(e, Effect::Ceph(CephRequest::Scan(_)))).count();
    let done = |a: &mut App, method| {
        a.update(Msg::Ceph(CephMsg::ScanDone { total: 5, elapsed: std::time::Duration::from_millis(10), method }))
    };
    let at = |s: i64| fixtures::now() + jiff::SignedDuration::from_secs(s);
    assert_eq!(scans(&a.start_scan()), 1);
    done(&mut a, ScanMethod::Failed);
    assert!(
        a.ceph.last_scan.as_deref().is_some_and(|s| s.starts_with("FAILED, retry 30s (")),
        "{:?}",
        a.ceph.last_scan
    );
    let s = crate::ui::popups::playbook::tests::screen(&a, 80, 24);
    assert!(s.contains("scan: FAILED, retry 30s"), "the failure shows at 80 columns:\n{s}");
    assert_eq!(scans(&a.update(Msg::Tick(at(29)))), 0);
    assert_eq!(scans(&a.update(Msg::Tick(at(30)))), 1);
    assert_eq!(scans(&a.update(Msg::Tick(at(31)))), 0, "one scan at a time");
    done(&mut a, ScanMethod::Failed);
    assert_eq!(scans(&a.update(Msg::Tick(at(89)))), 0);
    assert_eq!(scans(&a.update(Msg::Tick(at(91)))), 1, "60 s after the second failure");
    done(&mut a, ScanMethod::DumpWatchers);
    assert_eq!((a.ceph.failed_scans, a.ceph.rescan_at), (0, None));
    assert_eq!(scans(&a.update(Msg::Tick(at(3600)))), 0, "a working scan is not repeated");
    assert_eq!(crate::ui::app::ceph::rescan_backoff(9), std::time::Duration::from_secs(600));
    // a failed scan, then `s` by hand: no automatic scan on top
    a.start_scan();
    done(&mut a, ScanMethod::Failed);
    a.start_scan();
    a.start_scan(); // cancelled
    assert_eq!(scans(&a.update(Msg::Tick(at(7200)))), 0);
}

#[test]
fn finding_detail_scrolls_at_80x24() {
    let mut a = app();
    key(&mut a, KeyCode::Char('1'));
    key(&mut a, KeyCode::Enter);
    let top = screen(&a, 80, 24);
    key(&mut a, KeyCode::PageDown);
    key(&mut a, KeyCode::PageDown);
    key(&mut a, KeyCode::PageDown);
    let scrolled = screen(&a, 80, 24);
    assert_ne!(top, scrolled);
    assert!(scrolled.contains("above"), "{scrolled}");
    key(&mut a, KeyCode::Char('g'));
    assert_eq!(screen(&a, 80, 24), top);
}

#[test]
fn the_status_bar_ages_the_last_ceph_read_that_succeeded_and_says_when_reads_fail() {
    use unstick_core::model::Observed;
    use unstick_core::sources::ceph::CephMsg;
    let mut a = incidents_app(false);
    let t0 = a.now;
    a.update(Msg::Ceph(CephMsg::Blocklist(Observed { value: Ok(vec![]), at: t0 })));
    let later = t0 + jiff::SignedDuration::from_secs(79);
    a.update(Msg::Tick(later));
    a.update(Msg::Ceph(CephMsg::Blocklist(Observed {
        value: Err(unstick_core::model::ceph_error::CephError::Timeout {
            cmd: "ceph osd blocklist ls".into(),
            secs: 10,
        }
        .into()),
        at: later,
    })));
    assert!(a.ceph.failing());
    let s = crate::ui::testing::screen(&a, 200, 50);
    let status = s.lines().rfind(|l| l.contains("ceph")).unwrap_or_default().to_string();
    assert!(status.contains("ceph 1m19s ago (failing)") || status.contains("ceph 79s ago (failing)"), "{status}");
    a.update(Msg::Ceph(CephMsg::Blocklist(Observed { value: Ok(vec![]), at: later })));
    assert!(!a.ceph.failing(), "a success after the failure clears it");
}

/// The live console lists the Medik8s remediators every 15 s of its clock (only with an API
/// client), and a SelfNodeRemediation naming a finding's node adds the remediator evidence line
/// to that finding, as diagnose does.
#[test]
fn the_live_console_lists_the_remediators_and_its_findings_say_so() {
    use unstick_core::diagnose::EvidenceSource;
    use unstick_core::model::remediation::{Remediation, RemediatorKind, Remediators};
    let mut a = app();
    let t0 = fixtures::now();
    let asks = |fx: &[Effect]| fx.iter().filter(|e| **e == Effect::Remediators).count();
    assert_eq!(asks(&a.update(Msg::Tick(t0))), 0, "no API client: nothing to list");
    a.remediators.live = true;
    assert_eq!(asks(&a.update(Msg::Tick(t0))), 1);
    assert_eq!(asks(&a.update(Msg::Tick(t0 + jiff::SignedDuration::from_secs(14)))), 0, "not due yet");
    assert_eq!(asks(&a.update(Msg::Tick(t0 + jiff::SignedDuration::from_secs(15)))), 1);
    let (i, node) = a
        .data
        .findings
        .iter()
        .enumerate()
        .find_map(|(i, f)| Some((i, f.node.clone()?)))
        .expect("the incidents fixture has a finding on a node");
    let remediator = |f: &unstick_core::diagnose::Finding| {
        f.evidence.iter().any(|e| e.source == EvidenceSource::Remediator && e.text.contains("SelfNodeRemediation"))
    };
    assert!(!remediator(&a.data.findings[i]));
    let id = a.data.findings[i].id.clone();
    let r = Remediators {
        absent: vec![RemediatorKind::FenceAgentsRemediation],
        objects: vec![Remediation {
            node: node.clone(),
            by: format!("SelfNodeRemediation medik8s/{node}"),
            state: "phase Fencing-Completed".into(),
        }],
        ..Default::default()
    };
    a.update(Msg::Remediators(r));
    let f = a.data.findings.iter().find(|f| f.id == id).expect("the finding stays");
    assert!(remediator(f), "{:?}", f.evidence);
}

/// Issue 27: the status bar names the Rook pod the Ceph calls run in, as the worker reports it,
/// and follows a new choice (the toolbox went, the operator took over).
#[test]
fn the_status_bar_names_the_rook_pod() {
    let mut a = App::new(Config::defaults(), Theme::monochrome(), "kh".into(), None, false, fixtures::now());
    a.update(Msg::Objects(Box::new(fixtures::incidents())));
    let last = |a: &App| screen(a, 160, 24).lines().last().unwrap_or_default().to_string();
    assert!(!last(&a).contains("via"), "{}", last(&a));
    a.update(Msg::Ceph(CephMsg::Via(Some("rook toolbox rook-ceph/rook-ceph-tools-5f7b9".into()))));
    assert!(last(&a).contains("│ ceph via rook toolbox rook-ceph/rook-ceph-tools-5f7b9 "), "{}", last(&a));
    a.update(Msg::Ceph(CephMsg::Via(Some("rook operator rook-ceph/rook-ceph-operator-6d8".into()))));
    assert!(last(&a).contains("via rook operator rook-ceph/rook-ceph-operator-6d8"), "{}", last(&a));
}
