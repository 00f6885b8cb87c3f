//! Key-sequence and screen tests of the view friction fixes: the `:` prompt, Ctrl-C / Ctrl-U in
//! every prompt, messages that no popup or prompt hides, the header at 80 columns.

use crossterm::event::KeyCode;

use crate::ui::app::tests::incidents_app;
use crate::ui::app::{App, Msg, Pane};
use crate::ui::testing::screen;

use crate::ui::testing::{ctrl, press as key, type_text as typed};

#[test]
fn colon_commands_switch_panes_and_unknown_ones_say_so_in_one_line() {
    let mut a = incidents_app(false);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "po");
    let s = screen(&a, 80, 24);
    assert!(s.lines().nth(23).unwrap().starts_with(" :po"), "the prompt replaces the status line: {s}");
    assert!(!s.lines().nth(23).unwrap().contains("kube"), "nothing of the status bar shows through");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.focus, Pane::Pods);
    assert!(!a.is_open(crate::ui::popups::Kind::Command));
    for (cmd, pane) in
        [("no", Pane::Nodes), ("pvc", Pane::Volumes), ("findings", Pane::Findings), ("va", Pane::Volumes)]
    {
        key(&mut a, KeyCode::Char(':'));
        typed(&mut a, cmd);
        key(&mut a, KeyCode::Enter);
        assert_eq!(a.focus, pane, ":{cmd}");
    }
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "podz");
    key(&mut a, KeyCode::Enter);
    let s = screen(&a, 80, 24);
    assert!(s.contains("unknown command :podz"), "{s}");
    // Esc and Ctrl-C cancel without running anything (Ctrl-C does not quit here)
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "q");
    key(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Command) && !a.quit);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "q");
    ctrl(&mut a, 'c');
    assert!(!a.is_open(crate::ui::popups::Kind::Command) && !a.quit);
    // Tab completes, Ctrl-U clears the line
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "eve");
    key(&mut a, KeyCode::Tab);
    assert_eq!(a.popups().prompt_text(crate::ui::popups::Kind::Command).unwrap(), "events ");
    ctrl(&mut a, 'u');
    assert_eq!(a.popups().prompt_text(crate::ui::popups::Kind::Command).unwrap(), "");
    typed(&mut a, "q");
    key(&mut a, KeyCode::Enter);
    assert!(a.quit);
}

#[test]
fn colon_ns_narrows_pods_and_volumes_and_colon_ctx_names_the_context() {
    let mut a = incidents_app(false);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "ns incident-001");
    key(&mut a, KeyCode::Enter);
    assert!(
        a.data.rows.pods.iter().all(|&i| a.data.snap.pods[i].metadata.namespace.as_deref() == Some("incident-001"))
    );
    assert_eq!(a.data.rows.pods.len(), 2);
    assert_eq!(a.data.rows.volumes.len(), 1);
    let s = screen(&a, 80, 24);
    assert!(s.lines().next().unwrap().contains("ns incident-001"), "{s}");
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "ns");
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.data.rows.pods.len(), 7);
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "ctx");
    key(&mut a, KeyCode::Enter);
    assert!(screen(&a, 80, 24).contains("context kh (no other contexts known)"));
    // a console started on one namespace cannot show another
    let mut one = incidents_app(false);
    one.namespace = "incident-000".into();
    key(&mut one, KeyCode::Char(':'));
    typed(&mut one, "ns incident-001");
    key(&mut one, KeyCode::Enter);
    assert!(screen(&one, 80, 24).contains("reads only namespace incident-000"));
}

#[test]
fn colon_ctx_lists_completes_and_switches_contexts_in_place() {
    let mut a = incidents_app(false);
    a.contexts = vec!["kh".into(), "prod-a".into(), "stage".into()];
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "ctx");
    key(&mut a, KeyCode::Enter);
    assert!(screen(&a, 120, 24).contains("context kh; contexts: kh, prod-a, stage (:ctx NAME switches"));
    // unknown and current names are refused in one line; nothing quits
    for (name, says) in [("prod", "no context prod in the kubeconfig"), ("kh", "already on context kh")] {
        key(&mut a, KeyCode::Char(':'));
        typed(&mut a, &format!("ctx {name}"));
        key(&mut a, KeyCode::Enter);
        assert!(screen(&a, 120, 24).contains(says), "{name}");
        assert!(!a.quit && a.switch_to.is_none());
    }
    // Tab completes the name; Enter ends this context's event loop, asking for that context
    key(&mut a, KeyCode::Char(':'));
    typed(&mut a, "ctx st");
    key(&mut a, KeyCode::Tab);
    assert_eq!(a.popups().prompt_text(crate::ui::popups::Kind::Command).unwrap(), "ctx stage");
    key(&mut a, KeyCode::Enter);
    assert!(a.quit);
    assert_eq!(a.switch_to.as_deref(), Some("stage"));
    // the console started stage's sources: the same app, emptied, on stage
    assert!(!a.data.snap.pods.is_empty());
    a.switched_context("stage".into());
    assert!(!a.quit && a.switch_to.is_none() && a.context == "stage");
    assert!(a.data.snap.pods.is_empty() && a.data.findings.is_empty(), "kh's objects are gone");
    let s = screen(&a, 120, 24);
    assert!(s.contains("ctx stage") && s.contains("context stage: reading it"), "{s}");
    assert!(!s.contains("ctx kh"), "{s}");
}

#[test]
fn colon_fleet_lists_contexts_and_enter_opens_one() {
    use unstick_core::fleet::{ContextRow, FleetReport, Outcome};
    let mut a = incidents_app(false);
    a.contexts = vec!["kh".into(), "stage".into()];
    key(&mut a, KeyCode::Char(':'));
    let fx = typed(&mut a, "fleet\n");
    assert_eq!(fx, vec![crate::ui::app::Effect::Fleet], "the diagnosis runs off the UI task");
    assert!(a.is_open(crate::ui::popups::Kind::Fleet));
    let row = |context: &str| {
        let outcome = Outcome::Error { error: "403 Forbidden".into() };
        ContextRow { context: context.into(), exit_code: outcome.exit_code(), outcome }
    };
    let report = FleetReport { generated_at: unstick_core::fixtures::now(), contexts: vec![row("kh"), row("stage")] };
    a.update(Msg::Fleet(Ok(report)));
    let s = screen(&a, 80, 24);
    assert!(s.contains("*kh") && s.contains("stage") && s.contains("403 Forbidden"), "{s}");
    key(&mut a, KeyCode::Char('?'));
    assert!(screen(&a, 80, 24).contains("open it in this console"));
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('j'));
    key(&mut a, KeyCode::Enter);
    assert!(!a.is_open(crate::ui::popups::Kind::Fleet));
    assert!(a.quit, "the switch ends this context's loop");
    assert_eq!(a.switch_to.as_deref(), Some("stage"));
}

#[test]
fn ctrl_c_cancels_and_ctrl_u_clears_the_filter() {
    let mut a = incidents_app(false);
    a.focus = Pane::Pods;
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "mysql");
    assert_eq!(a.data.rows.pods.len(), 1);
    let s = screen(&a, 80, 24);
    let status = s.lines().nth(23).unwrap();
    assert!(status.starts_with(" filter Pods: mysql") && !status.contains("ceph"), "{status}");
    ctrl(&mut a, 'u');
    assert_eq!(a.data.rows.pods.len(), 7, "Ctrl-U deletes the whole line");
    assert!(a.is_open(crate::ui::popups::Kind::Filter));
    typed(&mut a, "web");
    ctrl(&mut a, 'c');
    assert!(!a.is_open(crate::ui::popups::Kind::Filter) && !a.quit, "Ctrl-C cancels the filter, it does not quit");
    assert!(a.view(Pane::Pods).filter().is_empty());
}

#[test]
fn ctrl_c_cancels_the_note_editor_like_esc() {
    let mut a = incidents_app(false);
    key(&mut a, KeyCode::Char('n'));
    typed(&mut a, "half a thought");
    ctrl(&mut a, 'u');
    assert_eq!(note_text(&a), "", "Ctrl-U deletes to the line start");
    typed(&mut a, "again");
    ctrl(&mut a, 'c');
    assert!(a.is_open(crate::ui::popups::Kind::Note), "a note with text needs a second Ctrl-C");
    ctrl(&mut a, 'c');
    assert!(!a.is_open(crate::ui::popups::Kind::Note) && !a.quit);
}

#[test]
fn a_popup_leaves_the_message_line_visible() {
    let mut a = incidents_app(false);
    a.remedy.notice = Some("note saved 04:10:00 UTC to session s1".into());
    key(&mut a, KeyCode::Char('?'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("note saved 04:10:00 UTC"), "the banner stays above the help: {s}");
    assert!(s.lines().nth(23).unwrap().contains("kube"), "the status line stays: {s}");
    insta::assert_snapshot!("help_findings_80x24", s);
    insta::assert_snapshot!("help_findings_60x20", screen(&a, 60, 20));
}

#[test]
fn a_long_context_is_cut_so_that_help_stays_on_the_header() {
    let mut a = incidents_app(false);
    a.context = "arn:aws:eks:eu-west-1:123456789012:cluster/production-storage-east-2".into();
    a.read_only = true;
    for w in [80u16, 60] {
        let s = screen(&a, w, 24);
        let header = s.lines().next().unwrap();
        assert!(header.contains("?:help"), "{w}: {header}");
        assert!(header.contains('…'), "{w}: {header}");
    }
    insta::assert_snapshot!("long_context_80x24", screen(&a, 80, 24));
}

#[test]
fn help_follows_the_view_on_top() {
    let mut a = incidents_app(false);
    a.focus = Pane::Volumes;
    key(&mut a, KeyCode::Char('?'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("keys: Volumes") && s.contains("scroll the columns sideways"), "{s}");
    assert!(!s.contains("open its playbook"), "{s}");
    key(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Help));
    a.focus = Pane::Findings;
    key(&mut a, KeyCode::Enter);
    key(&mut a, KeyCode::Char('?'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("keys: Finding") && s.contains("jump to the selected object"), "{s}");
    key(&mut a, KeyCode::Esc);
    assert!(
        !a.is_open(crate::ui::popups::Kind::Help) && a.is_open(crate::ui::popups::Kind::Detail),
        "Esc closes the help first, then the detail"
    );
    a.update(Msg::Resize(80, 24));
}

fn note_text(a: &App) -> String {
    a.popups()
        .iter()
        .find_map(|p| match p {
            crate::ui::popups::Popup::Note(n) => Some(n.text()),
            _ => None,
        })
        .expect("note open")
}
