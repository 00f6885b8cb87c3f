//! The popup stack's routing, through the real key entry ([`crate::ui::testing`]): a prompt on
//! top receives every key (nothing typed into it runs as a command, in every pane and prompt),
//! `/` opens a filter everywhere, and quitting with a step or Wait in progress asks first.

use crossterm::event::KeyCode;

use super::{Kind, Popup};
use crate::ui::app::{App, Effect, Msg, Pane};
use crate::ui::popups::playbook::WriteMode;
use crate::ui::popups::playbook::tests::{app, multi_attach_selected, open_at_the_wait_step, pb, runner_view, settle};
use crate::ui::testing::{press, screen, type_text};
use unstick_core::diagnose::PatternId;
use unstick_core::remedy::run::WaitStatus;
use unstick_core::remedy::service::{RemedyMsg, RemedyRequest};

/// What a command run by a stray letter would change: quitting, a popup opening or closing, the
/// focus, the banner.
fn state(a: &App) -> (bool, Vec<Kind>, Pane, Option<String>) {
    (a.quit, a.popups().iter().map(Popup::kind).collect(), a.focus, a.remedy.notice.clone())
}

/// Types `text` into the prompt on top of `a` and checks that only the prompt took it: every
/// effect is the filter's own (the Ceph pane following a new selection), nothing else changed.
fn typed_into_prompt(a: &mut App, text: &str, what: &str) {
    let before = state(a);
    let fx = type_text(a, text);
    assert_eq!(state(a), before, "{what}: `{text}` ran a command");
    assert!(fx.iter().all(|e| matches!(e, Effect::Ceph(_))), "{what}: `{text}` asked for {fx:?}");
}

#[test]
fn slash_opens_a_filter_in_every_pane_and_no_typed_letter_runs_a_command() {
    for pane in Pane::ALL {
        for text in ["led", "queue"] {
            let mut a = crate::ui::app::tests::incidents_app(false);
            a.update(Msg::Resize(80, 24));
            press(&mut a, KeyCode::Char(char::from(b'1' + pane.index() as u8)));
            assert_eq!(a.focus, pane);
            press(&mut a, KeyCode::Char('/'));
            assert_eq!(a.popups().top().map(Popup::kind), Some(Kind::Filter), "{pane:?}: / opens the filter");
            typed_into_prompt(&mut a, text, &format!("{pane:?} filter"));
            assert_eq!(a.view(pane).filter().text(), text, "{pane:?}: the letters are the filter");
            let s = screen(&a, 80, 24);
            assert!(s.lines().nth(23).unwrap().contains(text), "{pane:?}: the prompt shows it: {s}");
            press(&mut a, KeyCode::Esc);
            assert!(a.popups().is_empty() && a.view(pane).filter().is_empty(), "{pane:?}: Esc clears and closes");
        }
    }
}

#[test]
fn the_findings_filter_narrows_the_list_and_what_enter_opens() {
    let mut a = crate::ui::app::tests::incidents_app(false);
    let total = a.data.findings.len();
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "stale-lock\n");
    assert!(a.popups().is_empty(), "Enter keeps the filter and closes the prompt");
    assert!(a.data.rows.findings.len() < total && !a.data.rows.findings.is_empty(), "{:?}", a.data.rows.findings);
    assert!(a.data.rows.findings.iter().all(|&i| a.data.findings[i].pattern == PatternId::StaleLock));
    let s = screen(&a, 80, 24);
    assert!(s.contains(&format!("/{}] /stale-lock", total)), "the title says so: {s}");
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.open_finding().map(|(f, _)| f.pattern), Some(PatternId::StaleLock));
    // `/` in the detail closes it and edits the same filter: `led` cannot reach `d`
    press(&mut a, KeyCode::Char('/'));
    assert_eq!(a.popups().iter().map(Popup::kind).collect::<Vec<_>>(), vec![Kind::Filter]);
    typed_into_prompt(&mut a, "led", "filter from the detail");
}

#[test]
fn letters_typed_into_every_prompt_stay_in_it() {
    for text in ["/led", "/queue"] {
        // the `:` prompt and the note editor, over the panes and over the finding detail
        for (open, kind) in [(':', Kind::Command), ('n', Kind::Note)] {
            for detail in [false, true] {
                let mut a = crate::ui::app::tests::incidents_app(false);
                if detail {
                    press(&mut a, KeyCode::Enter);
                }
                press(&mut a, KeyCode::Char(open));
                assert_eq!(a.popups().top().map(Popup::kind), Some(kind));
                typed_into_prompt(&mut a, text, &format!("{kind:?} (over the detail: {detail})"));
            }
        }
        // the filter prompt over the help: `/` goes through the help to the panes
        let mut a = crate::ui::app::tests::incidents_app(false);
        press(&mut a, KeyCode::Char('?'));
        press(&mut a, KeyCode::Char('/'));
        assert_eq!(a.popups().top().map(Popup::kind), Some(Kind::Filter));
        typed_into_prompt(&mut a, text, "filter over the help");
        // the Playbook view's prompts: the full-copy path, the typed name of a confirmation
        let mut a = app(WriteMode::Live);
        press(&mut a, KeyCode::Char('p'));
        a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 0, false))));
        press(&mut a, KeyCode::Char('e'));
        assert!(a.popups().full_copy().is_some());
        typed_into_prompt(&mut a, text, "full-copy path");
        let mut a = app(WriteMode::Live);
        press(&mut a, KeyCode::Char('p'));
        a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
        a.update(Msg::Remedy(RemedyMsg::Confirm(crate::ui::popups::playbook::tests::lock_rm_confirm())));
        settle(&mut a);
        assert!(a.popups().confirm().is_some_and(|c| c.to_type().is_some()), "a typed-name confirmation");
        typed_into_prompt(&mut a, text, "typed-name confirmation");
        assert!(a.popups().confirm().is_some(), "still asking");
    }
}

#[test]
fn q_while_a_wait_is_polled_asks_before_quitting() {
    let mut a = multi_attach_selected(28);
    open_at_the_wait_step(&mut a);
    assert_eq!(press(&mut a, KeyCode::Enter), vec![Effect::Remedy(RemedyRequest::WaitPoll)]);
    a.update(Msg::Remedy(RemedyMsg::Wait(WaitStatus::Pending {
        seen: "volumeattachment csi-123 present".into(),
        remaining: std::time::Duration::from_secs(300),
    })));
    press(&mut a, KeyCode::Char('q'));
    assert!(!a.quit, "q mid-Wait does not quit at once");
    assert_eq!(a.popups().top().map(Popup::kind), Some(Kind::Quit));
    let s = screen(&a, 80, 24);
    assert!(s.contains("quit while a step runs?") && s.contains("waiting for its condition"), "{s}");
    press(&mut a, KeyCode::Char('n'));
    assert!(!a.quit && pb(&a).waiting, "n stays; the Wait goes on");
    press(&mut a, KeyCode::Char('q'));
    // the condition is met while the question is open: the question says so, live
    a.update(Msg::Remedy(RemedyMsg::Wait(WaitStatus::Met("volumeattachment csi-123 gone".into()))));
    let s = screen(&a, 80, 24);
    assert!(s.contains("is at step 4 of 6") && !s.contains("waiting for its condition"), "{s}");
    let n = pb(&a).playbook.steps.len();
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, n, true))));
    let s = screen(&a, 80, 24);
    assert!(s.contains("has finished since") && s.contains("Nothing is in progress now"), "{s}");
    press(&mut a, KeyCode::Char('y'));
    assert!(a.quit, "y quits");
}

#[test]
fn q_with_a_playbook_open_before_any_step_asks_and_says_esc_closes_it() {
    // behaviour change (issue 25): q with a playbook open quit at once, even when it was meant
    // for the view
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 0, false))));
    press(&mut a, KeyCode::Char('q'));
    assert!(!a.quit, "a playbook open asks first");
    assert_eq!(a.popups().top().map(Popup::kind), Some(Kind::Quit));
    let s = screen(&a, 80, 24);
    assert!(s.contains("quit with the playbook open?") && s.contains("at step 1 of"), "{s}");
    assert!(s.contains("nothing is running") && s.contains("Esc closes the playbook"), "{s}");
    insta::assert_snapshot!("quit_playbook_open_80x24", s);
    press(&mut a, KeyCode::Esc);
    assert!(!a.quit && a.playbook().is_some(), "Esc stays, the playbook still open");
    press(&mut a, KeyCode::Esc);
    assert!(a.playbook().is_none(), "Esc closes the playbook");
    press(&mut a, KeyCode::Char('q'));
    assert!(a.quit, "with no playbook open q quits at once");
}

#[test]
fn ctx_with_a_playbook_open_before_any_step_switches_without_asking() {
    // `:ctx NAME` is typed whole: unlike a stray `q`, it leaves an idle playbook at once (the
    // harness's ctx switch found the console asking "quit with the playbook open?" instead)
    let mut a = app(WriteMode::Live);
    a.contexts = vec![a.context.clone(), "other".into()];
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 0, false))));
    assert!(a.playbook().is_some());
    press(&mut a, KeyCode::Char(':'));
    type_text(&mut a, "ctx other");
    press(&mut a, KeyCode::Enter);
    assert!(a.quit, "the switch ends this context's loop");
    assert_eq!(a.switch_to.as_deref(), Some("other"));
    assert_ne!(a.popups().top().map(Popup::kind), Some(Kind::Quit), "nothing asked");
}

#[test]
fn quitting_with_nothing_open_is_at_once() {
    let mut a = crate::ui::app::tests::incidents_app(false);
    press(&mut a, KeyCode::Char(':'));
    type_text(&mut a, "q\n");
    assert!(a.quit);
}

#[test]
fn esc_during_a_polled_wait_stops_it_and_keeps_the_view() {
    let mut a = multi_attach_selected(28);
    open_at_the_wait_step(&mut a);
    assert_eq!(press(&mut a, KeyCode::Enter), vec![Effect::Remedy(RemedyRequest::WaitPoll)]);
    assert!(pb(&a).waiting);
    assert_eq!(press(&mut a, KeyCode::Esc), vec![Effect::Remedy(RemedyRequest::StopWait)], "Esc stops the wait");
    assert!(a.playbook().is_some() && !pb(&a).waiting, "the view stays open, not waiting");
    let fx = press(&mut a, KeyCode::Esc);
    assert!(a.playbook().is_none(), "a second Esc closes the view");
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Close)]);
}
