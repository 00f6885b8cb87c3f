//! Identifiers on screen at 80×24 and 60×20: names that differ only at their end (three PVs of
//! one provisioner, `pvc-6a1e0c3d-…-0201/0202/0203`) never read the same once cut, in the Findings
//! list, the playbook, the confirmation and the Ceph pane (issue 25 item 9).

use crossterm::event::KeyCode;

use crate::ui::app::tests::incidents_app;
use crate::ui::app::{App, Msg};
use crate::ui::popups::playbook::WriteMode;
use crate::ui::popups::playbook::tests::{app as playbook_app, lock_rm_confirm, runner_view};
use crate::ui::testing::{press, screen};
use unstick_core::remedy::service::RemedyMsg;

/// The fixture console with three findings whose summaries name PVs sharing a 29-column prefix.
fn three_pvs() -> App {
    let mut a = incidents_app(false);
    for (i, f) in a.data.findings.iter_mut().take(3).enumerate() {
        f.summary = format!(
            "node node20{n} cannot unmap /dev/rbd{n} (pvc-6a1e0c3d-55aa-4e7b-9c1d-0a000000020{n}): device busy (exit status 16), 30 failures",
            n = i + 1
        );
    }
    a
}

/// The rows of the Findings list that name one of the three PVs, as drawn.
fn pv_cells(s: &str) -> Vec<String> {
    s.lines().filter_map(|l| l.split(' ').find(|w| w.starts_with("(pvc-")).map(String::from)).collect()
}

#[test]
fn findings_keep_the_pvs_apart_at_80x24_and_60x20() {
    let a = three_pvs();
    for (w, h, name) in [(80, 24, "findings_80x24"), (60, 20, "findings_60x20")] {
        let s = screen(&a, w, h);
        let pvs = pv_cells(&s);
        let rows: Vec<&str> = s.lines().filter(|l| l.contains("node node20")).collect();
        assert!(rows.len() >= 3 && rows[0] != rows[1] && rows[1] != rows[2], "{s}");
        let mut distinct = pvs.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), pvs.len(), "two PVs read the same at {w}×{h}: {pvs:?}\n{s}");
        assert!(pvs.iter().all(|p| p.ends_with("):")), "a PV is cut at its end: {pvs:?}");
        insta::assert_snapshot!(name, s);
    }
}

#[test]
fn the_playbook_and_confirmation_at_60x20() {
    let mut a = playbook_app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    let s = screen(&a, 60, 20);
    assert!(s.contains("client.24128") || s.contains("…"), "{s}");
    // the incident id (the journal's name) keeps both ends in the title; the prose title gives way
    assert!(s.lines().nth(1).is_some_and(|l| l.contains("· 2026") && l.contains("api-pv")), "{s}");
    insta::assert_snapshot!("playbook_60x20", s);
    a.update(Msg::Remedy(RemedyMsg::Confirm(lock_rm_confirm())));
    insta::assert_snapshot!("confirm_60x20", screen(&a, 60, 20));
}

#[test]
fn the_ceph_pane_at_80x24_and_60x20() {
    let mut a = incidents_app(false);
    press(&mut a, KeyCode::Char('3'));
    press(&mut a, KeyCode::Char('j'));
    press(&mut a, KeyCode::Char('5'));
    insta::assert_snapshot!("ceph_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("ceph_60x20", screen(&a, 60, 20));
}
