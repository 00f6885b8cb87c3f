use crossterm::event::KeyCode;

use crate::ui::app::{App, Effect, Msg, Pane};
use crate::ui::popups::playbook::WriteMode;
use crate::ui::popups::playbook::tests::{app, pb, press, runner_view, screen, settle};
use unstick_core::diagnose::PatternId;
use unstick_core::remedy::action::WriteAction;
use unstick_core::remedy::service::{ConfirmView, RemedyMsg, RemedyRequest};
use unstick_core::sources::sim::scenario::Scenario;

/// A reversible confirmation whose content is taller than a 60×20 popup.
fn long_confirm() -> ConfirmView {
    ConfirmView {
        step_id: "stale-lock/3".into(),
        action: WriteAction::BlocklistRm { addr: "10.0.0.1:0/3".into() },
        summary: "ceph osd blocklist rm 10.0.0.1:0/3".into(),
        command: "ceph --conf /etc/ceph/ceph.conf osd blocklist rm 10.0.0.1:0/3".into(),
        objects: vec!["blocklist entry 10.0.0.1:0/3".into()],
        precheck: (1..=12).map(|i| format!("re-check line {i}: blocklist entry 10.0.0.1:0/3 present")).collect(),
        reversible: true,
        inverse: "ceph osd blocklist add 10.0.0.1:0/3".into(),
        warnings: vec!["LAST WARNING: the client at 10.0.0.1 may resume writing".into()],
        typed_name: None,
        undo_of: None,
        dry_run: false,
        update_strategy: None,
    }
}

fn opened(c: ConfirmView, size: (u16, u16)) -> App {
    let mut a = app(WriteMode::Live);
    a.update(Msg::Resize(size.0, size.1));
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    a.update(Msg::Remedy(RemedyMsg::Confirm(c)));
    a
}

#[test]
fn confirm_is_refused_until_the_whole_popup_was_on_screen() {
    let mut a = opened(long_confirm(), (60, 20));
    settle(&mut a);
    let s = screen(&a, 60, 20);
    assert!(s.contains("more below"), "the popup says more is below:\n{s}");
    assert!(!s.contains("re-check line 12"), "{s}");
    insta::assert_snapshot!("confirm_long_60x20_top", s);
    assert!(press(&mut a, KeyCode::Char('y')).is_empty(), "y before the re-check was on screen sends nothing");
    assert!(a.popups().confirm().unwrap().error.as_deref().unwrap().contains("more below"));
    for _ in 0..30 {
        press(&mut a, KeyCode::Char('j'));
    }
    let s = screen(&a, 60, 20);
    assert!(s.contains("re-check line 12") && !s.contains("more below"), "{s}");
    insta::assert_snapshot!("confirm_long_60x20_end", s);
    let fx = press(&mut a, KeyCode::Char('y'));
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Confirm { step_id: "stale-lock/3".into(), typed: None })]);
}

#[test]
fn confirm_at_80x24_shows_everything_or_says_so() {
    let mut a = opened(long_confirm(), (80, 24));
    settle(&mut a);
    insta::assert_snapshot!("confirm_long_80x24", screen(&a, 80, 24));
}

#[test]
fn a_popup_that_opened_by_itself_takes_no_key_for_a_moment() {
    let mut c = long_confirm();
    c.precheck.truncate(1);
    let mut a = opened(c, (80, 24));
    // `y` typed for something else right as the popup appears is not a confirmation
    assert!(press(&mut a, KeyCode::Char('y')).is_empty());
    assert!(a.popups().confirm().is_some());
    settle(&mut a);
    assert_eq!(press(&mut a, KeyCode::Char('y')).len(), 1);
}

#[test]
fn long_names_are_confirmed_by_their_last_characters_never_completed() {
    let va = "csi-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".to_string();
    let mut c = long_confirm();
    c.precheck.truncate(1);
    c.action = WriteAction::DeleteVolumeAttachment { name: va.clone(), node: "node1".into() };
    c.reversible = false;
    c.typed_name = Some(va.clone());
    let mut a = opened(c, (80, 24));
    settle(&mut a);
    let ui = a.popups().confirm().unwrap();
    assert_eq!(ui.to_type(), Some("89abcdef"));
    let s = screen(&a, 80, 24);
    assert!(s.contains("type `89abcdef` then Enter"), "{s}");
    for ch in "89abcde".chars() {
        press(&mut a, KeyCode::Char(ch));
    }
    assert!(press(&mut a, KeyCode::Enter).is_empty(), "7 of 8 characters is not enough");
    press(&mut a, KeyCode::Char('f'));
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Remedy(RemedyRequest::Confirm { step_id: "stale-lock/3".into(), typed: Some("89abcdef".into()) })]
    );
    assert!(unstick_core::remedy::run::typed_matches(&va, Some("89abcdef")), "the runner accepts the same part");
    assert!(!unstick_core::remedy::run::typed_matches(&va, Some("abcdef")));
}

#[test]
fn the_out_of_service_taint_shows_its_blast_radius_and_needs_the_typed_node() {
    let mut a = app(WriteMode::Live);
    let f = a
        .data
        .findings
        .iter()
        .find(|f| f.pattern == PatternId::MultiAttachNodeLost)
        .expect("multi-attach finding")
        .clone();
    let node = f.node.clone().expect("lost node");
    a.select(Pane::Findings, a.data.findings.iter().position(|x| x.id == f.id).unwrap());
    press(&mut a, KeyCode::Char('p'));
    let mut c = long_confirm();
    c.precheck.truncate(1);
    c.action = WriteAction::TaintOutOfService { node: node.clone() };
    c.objects = vec![format!("node/{node}")];
    a.update(Msg::Remedy(RemedyMsg::Confirm(c)));
    settle(&mut a);
    let ui = a.popups().confirm().unwrap();
    assert!(ui.blast.lines.iter().any(|l| l.starts_with("pod/") && l.contains("force-deleted")), "{:?}", ui.blast);
    assert!(ui.blast.lines.iter().any(|l| l.starts_with("pv/") && l.contains("NO verified backup")), "{:?}", ui.blast);
    assert_eq!(ui.typed_name.as_deref(), Some(node.as_str()), "volumes without backup: y is not enough");
    assert!(press(&mut a, KeyCode::Char('y')).is_empty());
    let s = screen(&a, 80, 24);
    assert!(s.contains("Blast radius"), "{s}");
}

#[test]
fn full_copy_is_not_offered_in_training_where_it_cannot_work() {
    let mut a = app(WriteMode::Live);
    let s = Scenario::embedded("stale-lock").unwrap().unwrap();
    let sim = s.start("2026-11-22T03:00:00Z".parse().unwrap(), 0.0);
    let mut tr = unstick_core::train::Training::new(s, sim, std::env::temp_dir(), unstick_core::clock::wall());
    tr.begin(0.0);
    a.training = Some(tr);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 0, false))));
    let s = screen(&a, 80, 24);
    assert!(!s.contains("full copy"), "{s}");
    assert!(press(&mut a, KeyCode::Char('e')).is_empty());
    assert!(a.popups().full_copy().is_none() && pb(&a).message.as_ref().unwrap().1.starts_with("training:"));
    // h opens the hints from inside the playbook
    press(&mut a, KeyCode::Char('h'));
    assert!(a.popups().training().is_some_and(|s| s.screen == crate::ui::popups::training::Screen::Hints));
}

#[test]
fn esc_cancels_from_the_first_moment_while_other_keys_wait_for_the_guard() {
    let mut a = opened(long_confirm(), (80, 24));
    // no settle: the key guard holds
    assert!(press(&mut a, KeyCode::Char('y')).is_empty(), "y under the guard sends nothing");
    assert!(a.popups().confirm().unwrap().error.as_deref().unwrap().contains("Esc cancels"));
    let fx = press(&mut a, KeyCode::Esc);
    assert!(a.popups().confirm().is_none(), "Esc closed the popup under the guard");
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Cancel)], "the worker forgets the prepared step");
    assert!(a.playbook().is_some(), "the Playbook view stays");
}
