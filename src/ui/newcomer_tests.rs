//! What a second newcomer's play-through of the training scenarios found (issue 25): the header
//! keeps the context and namespace distinct at every width down to 60 columns, the list panes
//! cut identifiers in their middle, and `p` after the selected finding cleared says what happened.

use crossterm::event::KeyCode;

use crate::ui::app::tests::incidents_app;
use crate::ui::app::{App, Pane};
use crate::ui::testing::{press, screen};
use crate::ui::view::util::width;
use unstick_core::sources::sim::scenario::Scenario;
use unstick_core::train::Training;

/// The incidents console training on `scenario` (briefing closed), its context named as
/// `unstick train` names it.
fn training(scenario: &str, dir: &std::path::Path) -> App {
    let s = Scenario::embedded(scenario).unwrap().unwrap();
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    let mut a = incidents_app(false);
    a.context = format!("train:{scenario}");
    a.start_training(Training::new(s, sim, dir.to_path_buf(), unstick_core::clock::wall()));
    press(&mut a, KeyCode::Enter);
    a
}

/// The `ctx …` cell of the header's first line.
fn ctx_cell(s: &str) -> String {
    let header = s.lines().next().unwrap_or_default();
    let after = header.split("│ ctx ").nth(1).unwrap_or_default();
    after.split(" │").next().unwrap_or_default().to_string()
}

#[test]
fn the_header_keeps_contexts_that_share_a_prefix_apart_at_every_width() {
    // seen at 60×20 in tmux: `ctx t… │ ns a…`, the context name lost
    let dir = tempfile::tempdir().unwrap();
    let names = ["node-loss-five-volumes", "dead-node-watcher", "same-node-restage", "mass-unmap-busy"];
    let mut apps: Vec<App> = names.iter().map(|n| training(n, dir.path())).collect();
    for w in 60u16..=200 {
        let cells: Vec<String> = apps.iter().map(|a| ctx_cell(&screen(a, w, 20))).collect();
        for (cell, name) in cells.iter().zip(names) {
            let full = format!("train:{name}");
            assert!(cell.len() >= 8, "{w}: the context is lost: {cell:?}");
            // whole, or cut in its middle with both ends readable
            let (front, back) = cell.split_once('…').unwrap_or((cell.as_str(), ""));
            assert!(full.starts_with(front) && full.ends_with(back), "{w}: {cell:?} is not {full}");
            assert!(back.len() >= 3 || *cell == full, "{w}: the end of {full} is lost: {cell:?}");
        }
        let mut distinct = cells.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), cells.len(), "{w}: two contexts read the same: {cells:?}");
        let header = screen(&apps[0], w, 20).lines().next().unwrap_or_default().to_string();
        assert!(
            header.contains("TRAINING") && header.contains("│ ns all") && header.contains("?:help"),
            "{w}: {header}"
        );
        assert!(width(&header) <= w as usize);
    }
    insta::assert_snapshot!("header_training_60x20", screen(&apps[0], 60, 20).lines().next().unwrap_or_default());
    insta::assert_snapshot!("header_training_80x24", screen(&apps[0], 80, 24).lines().next().unwrap_or_default());
    // a long namespace keeps its end too, the context still first
    apps[1].namespace = "incident-dead-node-watcher-0001".into();
    let s = screen(&apps[1], 60, 20);
    let header = s.lines().next().unwrap_or_default();
    assert!(header.contains("001 │ pods") || header.contains("001  ?:help"), "{header}");
    assert!(header.contains("tcher │ ns ") && header.contains("ctx train:"), "{header}");
}

#[test]
fn the_pods_pane_cuts_namespaces_and_nodes_in_their_middle() {
    // seen in tmux on mass-unmap-busy: the namespace column read `incident-mas`
    let mut a = incidents_app(false);
    let long = ["incident-mass-unmap-busy-a", "incident-mass-unmap-busy-b"];
    for (p, ns) in a.data.snap.pods.iter_mut().zip(long.iter().cycle()) {
        std::sync::Arc::make_mut(p).metadata.namespace = Some(ns.to_string());
    }
    press(&mut a, KeyCode::Char('3'));
    assert_eq!(a.focus, Pane::Pods);
    for (w, h) in [(80u16, 24u16), (60, 20)] {
        let s = screen(&a, w, h);
        let cells: Vec<&str> =
            s.lines().filter_map(|l| l.split_whitespace().find(|x| x.starts_with("incide"))).collect();
        assert!(cells.len() >= 2, "{w}×{h}: {s}");
        assert!(
            cells.iter().all(|c| c.ends_with("-a") || c.ends_with("-b")),
            "{w}×{h}: a namespace cut at its end: {cells:?}"
        );
        insta::assert_snapshot!(format!("pods_namespaces_{w}x{h}"), s);
    }
}

#[test]
fn p_after_the_selected_finding_cleared_says_so_and_what_the_selection_is_now() {
    // seen in tmux on same-node-restage: the finding cleared before its playbook was opened, and
    // `p` said `no playbook: no playbook for "none"`
    let mut a = incidents_app(false);
    let stale = a.data.findings.iter().position(|f| f.pattern.as_str() == "stale-lock").unwrap();
    let row = a.data.rows.findings.iter().position(|&i| i == stale).unwrap();
    a.select(Pane::Findings, row);
    assert_eq!(a.selected_finding().map(|f| f.pattern.as_str()), Some("stale-lock"));
    // its detail is open (seen in tmux on same-node-restage: the detail went on showing the next
    // finding once it cleared, under the same frame, without a word)
    press(&mut a, KeyCode::Enter);
    assert!(a.is_open(crate::ui::popups::Kind::Detail));
    // the stale lock goes: the finding clears, the selection moves on to the unexplained one
    a.derive(|d, i| {
        let before = d.findings.clone();
        d.findings.retain(|f| f.pattern.as_str() != "stale-lock");
        d.recompute_rows(i);
        Some(before)
    });
    assert!(!a.is_open(crate::ui::popups::Kind::Detail), "the detail of the cleared finding closed");
    let now = a.selected_finding().cloned().unwrap();
    assert_eq!(now.playbook, unstick_core::diagnose::NO_PLAYBOOK, "{now:?}");
    let notice = a.remedy.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("selected finding gone: stale-lock on") && notice.contains("cleared at"),
        "said at once: {notice}"
    );
    press(&mut a, KeyCode::Char('p'));
    let notice = a.remedy.notice.clone().unwrap_or_default();
    assert!(!notice.contains("\"none\""), "{notice}");
    assert!(
        notice.contains("stale-lock on") && notice.contains(&format!("now selected: {},", now.pattern)),
        "{notice}"
    );
    assert!(notice.contains("no playbook: Enter shows what to check"), "how to go on: {notice}");
    let s = screen(&a, 80, 24);
    assert!(s.contains("Enter shows what to check"), "the whole notice is on screen at 80×24: {s}");
    assert!(a.playbook().is_none());
    insta::assert_snapshot!("p_after_cleared_80x24", screen(&a, 80, 24));
    // with nothing cleared, `p` on a finding with no playbook says what it is and how to go on
    a.cleared_selection = None;
    press(&mut a, KeyCode::Char('p'));
    let notice = a.remedy.notice.clone().unwrap_or_default();
    assert!(notice.starts_with("unexplained (") && notice.contains("has no playbook: no write is known"), "{notice}");
}

#[test]
fn the_status_line_keeps_what_matters_and_never_ends_in_a_cut() {
    // seen at 80 columns on node-loss-five-volumes: the status line ended in `…`
    let dir = tempfile::tempdir().unwrap();
    let mut a = training("node-loss-five-volumes", dir.path());
    a.ceph.blocklist_pending = true;
    a.ceph.scan = Some((3, 5));
    a.ceph.last_refresh = Some(a.now);
    a.ceph.last_failure = Some(a.now + jiff::SignedDuration::from_secs(1));
    for w in [60u16, 80, 120, 200] {
        let s = screen(&a, w, 24);
        let status = s.lines().last().unwrap_or_default();
        assert!(status.contains("goals 0/") && status.contains("(h)"), "{w}: the goals: {status}");
        assert!(status.contains("kube ") && status.contains("│ ceph 0s ago (failing)"), "{w}: {status}");
        if w >= 80 {
            assert!(status.contains("scan 3/5"), "{w}: {status}");
        }
        assert!(!status.ends_with('…') && width(status) <= w as usize, "{w}: {status}");
        if w >= 120 {
            assert!(
                status.contains("no✓ po✓") && status.contains("(reading) │ scan 3/5 [######....]"),
                "{w}: {status}"
            );
        }
    }
    insta::assert_snapshot!("status_training_80x24", screen(&a, 80, 24).lines().last().unwrap_or_default());
    // a source that is not live stays named when the others are summed up
    a.kube_state
        .insert(unstick_core::sources::kube::WatchedKind::Pod, unstick_core::sources::kube::SourceState::Connecting);
    let s = screen(&a, 80, 24);
    let status = s.lines().last().unwrap_or_default();
    assert!(status.contains("po…") && status.contains("others ✓"), "{status}");
}

#[test]
fn q_in_a_running_training_asks_before_ending_it_without_a_debrief() {
    // seen in tmux on node-loss-five-volumes: Esc closed the playbook, the next q ended the
    // training at once (exit 1), one goal of seven met
    let dir = tempfile::tempdir().unwrap();
    let mut a = training("stale-lock", dir.path());
    press(&mut a, KeyCode::Char('q'));
    assert!(!a.quit, "a running training asks first");
    let s = screen(&a, 80, 24);
    assert!(s.contains("quit the training?") && s.contains("the training on stale-lock runs, 0 of"), "{s}");
    assert!(s.contains("without its debrief"), "{s}");
    insta::assert_snapshot!("quit_training_80x24", s);
    press(&mut a, KeyCode::Char('n'));
    assert!(!a.quit && !a.is_open(crate::ui::popups::Kind::Quit), "n stays");
    press(&mut a, KeyCode::Char('q'));
    press(&mut a, KeyCode::Char('y'));
    assert!(a.quit, "y quits");
}

#[test]
fn a_cleared_finding_without_a_playbook_is_not_announced() {
    // seen in tmux on stale-lock at 60×20: the `unexplained` finding shown before the lock was
    // read was announced as "the finding you had selected … cleared" once the lock explained it
    let mut a = incidents_app(false);
    let un = a.data.findings.iter().position(|f| f.pattern.as_str() == "unexplained").unwrap();
    let row = a.data.rows.findings.iter().position(|&i| i == un).unwrap();
    a.select(Pane::Findings, row);
    a.remedy.notice = None;
    a.derive(|d, i| {
        let before = d.findings.clone();
        d.findings.retain(|f| f.pattern.as_str() != "unexplained");
        d.recompute_rows(i);
        Some(before)
    });
    assert_eq!(a.remedy.notice, None);
    assert_eq!(a.cleared_selection, None);
}

#[test]
fn a_long_refusal_keeps_what_happened_and_how_to_go_on_on_screen() {
    // seen in tmux on unmap-busy: a state-changed refusal's list of changes filled the message
    // rows, and its last line ("Esc closes this playbook …") was cut off
    use unstick_core::remedy::action::precheck::{Drift, PrecheckError};
    let mut a = crate::ui::popups::playbook::tests::app(crate::ui::popups::playbook::WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    let drift = |n: u32| Drift {
        what: format!("pod incident-003/mariadb-5b8c7d9f6-kx4l{n}"),
        before: "uid 5e000000-0000-4000-8000-000000000005, Terminating, node node133".into(),
        now: "absent".into(),
    };
    let refusal = PrecheckError::Changed((0..5).map(drift).collect()).into();
    let failed = unstick_core::remedy::service::RemedyMsg::Failed { refusal, need: None, undo: false };
    a.update(crate::ui::app::Msg::Remedy(failed));
    for (w, h) in [(80u16, 24u16), (60, 20)] {
        let s = screen(&a, w, h);
        assert!(s.contains("state changed since the finding; nothing was done:"), "{w}×{h}: {s}");
        assert!(s.contains("Esc closes this playbook"), "{w}×{h}: how to go on is cut off: {s}");
    }
    insta::assert_snapshot!("refusal_80x24", screen(&a, 80, 24));
}

#[test]
fn a_pattern_wider_than_its_column_keeps_its_end() {
    // seen in tmux on driver-not-registered: `csi-driver-not-registe`
    let mut a = incidents_app(false);
    a.data.findings[0].pattern = unstick_core::diagnose::PatternId::CsiDriverNotRegistered;
    let s = screen(&a, 80, 24);
    assert!(!s.contains("csi-driver-not-registe ") && s.contains("…registered"), "{s}");
}
