use crossterm::event::KeyCode;

use super::*;
use crate::ui::app::Msg;
use crate::ui::app::{App, Effect, Pane};
use unstick_core::diagnose::PatternId;
use unstick_core::fixtures;
use unstick_core::remedy::journal::{BackupRecord, FileRecord};
use unstick_core::remedy::service::ConfirmView;
use unstick_core::remedy::service::{RemedyMsg, RemedyRequest};

/// The incidents fixture with the stale-lock finding selected, in `mode`, with a worker.
pub(crate) fn app(mode: WriteMode) -> App {
    let mut a = crate::ui::app::tests::incidents_app(mode == WriteMode::ReadOnly);
    a.remedy.mode = mode;
    a.remedy.worker = mode != WriteMode::ReadOnly;
    a.focus = Pane::Findings;
    let row = a.data.findings.iter().position(|f| f.pattern == PatternId::StaleLock).expect("stale-lock finding");
    a.select(Pane::Findings, row);
    a
}

pub(crate) use crate::ui::testing::{press, screen};

/// A live console with the multi-attach finding selected, after the worker read a `1.minor`
/// API server (it picks the playbook's branch: 1.28 the taint, 1.20 the force-delete).
pub(crate) fn multi_attach_selected(minor: u32) -> App {
    let mut a = app(WriteMode::Live);
    let row = a
        .data
        .findings
        .iter()
        .position(|f| f.pattern == PatternId::MultiAttachNodeLost && f.volume.is_some())
        .expect("multi-attach finding");
    a.select(Pane::Findings, row);
    a.update(Msg::Remedy(RemedyMsg::ServerVersion(Ok(unstick_core::remedy::playbook::version::ServerVersion {
        major: 1,
        minor,
    }))));
    a
}

/// Opens the selected finding's playbook with the runner at its (first) Wait step; returns the
/// step's index.
pub(crate) fn open_at_the_wait_step(a: &mut App) -> usize {
    press(a, KeyCode::Char('p'));
    let wait = pb(a).playbook.steps.iter().position(|s| matches!(s.kind, StepKind::Wait { .. })).expect("a Wait step");
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(a, wait, true))));
    wait
}

/// Lets the console clock pass the key guard of a popup that just opened by itself.
pub(crate) fn settle(a: &mut App) {
    a.now += jiff::SignedDuration::from_secs(5);
}

pub(crate) fn pb(a: &App) -> &PlaybookUi {
    a.playbook().expect("playbook open")
}

/// What the worker answers after opening: cursor at `cursor`, backup made or not.
pub(crate) fn runner_view(a: &App, cursor: usize, backup: bool) -> RunnerView {
    let n = pb(a).playbook.steps.len();
    let mut states = vec![StepState::Pending; n];
    for s in states.iter_mut().take(cursor) {
        *s = StepState::Done("ok".into());
    }
    RunnerView {
        incident: "20261122t041500z-stale-lock-index-api-pv".into(),
        journal: "/data/incidents/x/journal.jsonl".into(),
        cursor,
        states,
        backup: backup.then(|| BackupRecord {
            files: vec![FileRecord {
                path: "/data/incidents/x/backup/pv-index-api-pv.yaml".into(),
                bytes: 10,
                sha256: "ab".into(),
            }],
            snapshot: Some("replicapool/index-api-image@unstick-x-20261122T041501Z".into()),
            export: None,
        }),
        interrupted: vec![],
        lease: LeaseView::Held("kube-system/unstick-index-api-pv as op@host#1".into()),
        next_undo: None,
    }
}

pub(crate) fn lock_rm_confirm() -> ConfirmView {
    ConfirmView {
        step_id: "stale-lock/3".into(),
        action: unstick_core::remedy::action::WriteAction::RbdLockRm {
            image: unstick_core::model::ImageRef {
                pool: "replicapool".into(),
                namespace: String::new(),
                image: "index-api-image".into(),
            },
            lock_id: "kubelet_lock_magic_node1".into(),
            locker: "client.4173".into(),
            address: "10.0.0.1:0/3".into(),
        },
        summary: "rbd lock rm replicapool/index-api-image kubelet_lock_magic_node1 client.4173".into(),
        command:
            "rbd --conf /etc/ceph/ceph.conf lock rm replicapool/index-api-image kubelet_lock_magic_node1 client.4173"
                .into(),
        objects: vec!["rbdimage replicapool/index-api-image".into()],
        precheck: vec![
            "image replicapool/index-api-image: 1 lock (kubelet_lock_magic_node1 by client.4173 at 10.0.0.1:0/3)"
                .into(),
        ],
        reversible: false,
        inverse: "none — a removed lock cannot be given back to its old owner".into(),
        warnings: vec!["rbd lock rm also blocklists the old locker 10.0.0.1:0/3 for 1 hour".into()],
        typed_name: Some("index-api-image".into()),
        undo_of: None,
        dry_run: false,
        update_strategy: None,
    }
}

#[test]
fn p_opens_the_playbook_backup_first_and_asks_the_worker() {
    let mut a = app(WriteMode::Live);
    let fx = press(&mut a, KeyCode::Char('p'));
    assert!(
        matches!(&fx[..], [Effect::Remedy(RemedyRequest::Open { playbook, .. })] if playbook.pattern == "stale-lock"),
        "{fx:?}"
    );
    let p = pb(&a);
    assert!(matches!(p.playbook.steps[0].kind, StepKind::Backup(_)));
    // also from the detail overlay
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Enter);
    assert!(a.is_open(crate::ui::popups::Kind::Detail));
    press(&mut a, KeyCode::Char('p'));
    assert!(a.playbook().is_some() && !a.is_open(crate::ui::popups::Kind::Detail));
}

#[test]
fn acting_before_the_backup_is_impossible() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    let v = runner_view(&a, 0, false);
    a.update(Msg::Remedy(RemedyMsg::View(v)));
    let act = pb(&a).playbook.steps.iter().position(|s| matches!(s.kind, StepKind::Act(_))).unwrap();
    for _ in 0..act {
        press(&mut a, KeyCode::Char('j'));
    }
    assert_eq!(pb(&a).selected, act);
    let fx = press(&mut a, KeyCode::Enter);
    assert!(fx.is_empty(), "{fx:?}");
    let msg = &pb(&a).message.as_ref().unwrap().1;
    assert!(msg.contains("until the backup (step 1) has succeeded and been verified"), "{msg}");
    assert_eq!(step_state(pb(&a), act), "locked");
    let s = screen(&a, 80, 24);
    assert!(s.contains("locked"), "{s}");
    // even with the runner's cursor on the Act step, no backup = locked
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, act, false))));
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    // after a verified backup the same key prepares the step (live re-check on the worker)
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, act, true))));
    let fx = press(&mut a, KeyCode::Enter);
    assert!(matches!(&fx[..], [Effect::Remedy(RemedyRequest::Prepare { .. })]), "{fx:?}");
    assert!(pb(&a).busy.is_some());
}

#[test]
fn backup_key_runs_the_backup_and_the_screen_shows_paths_and_snapshot() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 0, false))));
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Backup { export_to: None })]);
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    let s = screen(&a, 80, 24);
    assert!(s.contains("replicapool/index-api-image@unstick-x-20261122T041501Z"), "{s}");
    assert!(s.contains("pv-index-api-pv.yaml"), "{s}");
}

#[test]
fn irreversible_confirm_needs_the_typed_name() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    a.update(Msg::Remedy(RemedyMsg::Confirm(lock_rm_confirm())));
    settle(&mut a);
    assert!(a.popups().top().is_some_and(|p| p.takes_text()));
    assert!(press(&mut a, KeyCode::Char('y')).is_empty(), "y is not enough for an irreversible step");
    // 'y' went into the field: wrong name
    let fx = press(&mut a, KeyCode::Enter);
    assert!(fx.is_empty(), "{fx:?}");
    assert!(a.popups().confirm().unwrap().error.as_ref().unwrap().contains("type `index-api-image`"));
    press(&mut a, KeyCode::Backspace);
    for c in "index-api-image".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Remedy(RemedyRequest::Confirm {
            step_id: "stale-lock/3".into(),
            typed: Some("index-api-image".into())
        })]
    );
    assert!(a.popups().confirm().is_none());
}

#[test]
fn reversible_confirm_takes_y_and_esc_cancels() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    // the volume's backup is verified: the lock it touches is covered, `y` is enough
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    let mut c = lock_rm_confirm();
    c.reversible = true;
    c.typed_name = None;
    a.update(Msg::Remedy(RemedyMsg::Confirm(c.clone())));
    settle(&mut a);
    assert_eq!(press(&mut a, KeyCode::Esc), vec![Effect::Remedy(RemedyRequest::Cancel)]);
    assert!(a.popups().confirm().is_none() && a.playbook().is_some());
    a.update(Msg::Remedy(RemedyMsg::Confirm(c)));
    settle(&mut a);
    let fx = press(&mut a, KeyCode::Char('y'));
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Confirm { step_id: "stale-lock/3".into(), typed: None })]);
}

#[test]
fn overrides_need_their_own_typed_confirmation() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::Failed {
        refusal: unstick_core::remedy::action::safety::SafetyError::ReadyNode { node: "n1".into() }.into(),
        need: Some(OverrideNeed::ReadyNode("n1".into())),
        undo: false,
    }));
    press(&mut a, KeyCode::Char('o'));
    assert!(a.is_open(crate::ui::popups::Kind::Override));
    press(&mut a, KeyCode::Char('n'));
    press(&mut a, KeyCode::Enter);
    assert!(pb(&a).overrides.fence_ready_node.is_none(), "`n` is not `n1`");
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("OVERRIDE a safety rule") && s.contains("Node n1 is Ready: fencing it cuts off a live node."),
        "{s}"
    );
    assert!(s.contains("Type `n1` then Enter to override") && s.contains("type `n1` exactly to override"), "{s}");
    press(&mut a, KeyCode::Char('1'));
    press(&mut a, KeyCode::Enter);
    assert_eq!(pb(&a).overrides.fence_ready_node.as_deref(), Some("n1"));
}

#[test]
fn read_only_shows_steps_but_no_write_path() {
    let mut a = app(WriteMode::ReadOnly);
    let fx = press(&mut a, KeyCode::Char('p'));
    assert!(fx.is_empty(), "no worker request in read-only: {fx:?}");
    for k in
        [KeyCode::Enter, KeyCode::Char('j'), KeyCode::Char('j'), KeyCode::Enter, KeyCode::Char('u'), KeyCode::Char('s')]
    {
        let fx = press(&mut a, k);
        assert!(fx.is_empty(), "{k:?}: {fx:?}");
    }
    assert!(pb(&a).message.as_ref().unwrap().1.starts_with("read-only: no write path"));
    let s = screen(&a, 80, 24);
    assert!(s.contains("read-only: no write path") && s.contains("READ-ONLY"), "{s}");
    assert!(s.contains("lock rm"), "commands are still shown: {s}");
    press(&mut a, KeyCode::Esc);
    assert!(a.playbook().is_none());
}

#[test]
fn dry_run_previews_and_sends_nothing() {
    let mut a = app(WriteMode::DryRun);
    press(&mut a, KeyCode::Char('p'));
    assert!(press(&mut a, KeyCode::Enter).is_empty(), "busy until the worker answers");
    a.update(Msg::Remedy(RemedyMsg::Done { ok: true, text: "dry-run: steps are previewed".into() }));
    let act = pb(&a).playbook.steps.iter().position(|s| matches!(s.kind, StepKind::Act(_))).unwrap();
    for _ in 0..act {
        press(&mut a, KeyCode::Char('j'));
    }
    let fx = press(&mut a, KeyCode::Enter);
    assert!(matches!(&fx[..], [Effect::Remedy(RemedyRequest::Prepare { index, .. })] if *index == act), "{fx:?}");
    let mut c = lock_rm_confirm();
    c.dry_run = true;
    a.update(Msg::Remedy(RemedyMsg::Confirm(c)));
    settle(&mut a);
    for ch in "index-api-image".chars() {
        press(&mut a, KeyCode::Char(ch));
    }
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    assert!(pb(&a).message.as_ref().unwrap().1.contains("nothing was sent"));
}

#[test]
fn interrupted_steps_are_a_banner_and_block_the_runner() {
    let mut a = app(WriteMode::Live);
    a.remedy.interrupted = vec![unstick_core::remedy::journal::incidents::InterruptedStep {
        incident: "20261122t041500z-stale-lock-index-api-pv".into(),
        step: 2,
        summary: "rbd lock rm x".into(),
    }];
    let s = screen(&a, 80, 24);
    assert!(s.contains("interrupted — state unknown, re-check"), "{s}");
    press(&mut a, KeyCode::Char('p'));
    let mut v = runner_view(&a, 0, false);
    let rec = unstick_core::remedy::journal::JournalRecord {
        v: 1,
        time: fixtures::now(),
        operator: "op@host".into(),
        context: "kh".into(),
        incident: v.incident.clone(),
        body: unstick_core::remedy::journal::Body::Note { step_id: None, text: String::new() },
    };
    let intent = unstick_core::remedy::journal::Intent {
        step: 2,
        step_id: "stale-lock/3".into(),
        action: unstick_core::remedy::action::WriteAction::BlocklistAdd { addr: "10.0.0.1:0/3".into() },
        inverse: unstick_core::remedy::action::Inverse::Irreversible { why: String::new() },
        undo_of: None,
        precheck: vec![],
        volume: None,
        boot_ids: Default::default(),
    };
    v.interrupted = vec![unstick_core::remedy::journal::StepView {
        line: 2,
        record: rec,
        intent,
        outcome: None,
        status: unstick_core::remedy::journal::WriteStatus::Interrupted,
    }];
    a.update(Msg::Remedy(RemedyMsg::View(v)));
    assert!(press(&mut a, KeyCode::Enter).is_empty(), "never retried silently");
    let s = screen(&a, 80, 24);
    assert!(s.contains("a: acknowledge"), "{s}");
    assert_eq!(press(&mut a, KeyCode::Char('a')), vec![Effect::Remedy(RemedyRequest::Acknowledge)]);
}

#[test]
fn snapshot_playbook_80x24() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    insta::assert_snapshot!("playbook_80x24", screen(&a, 80, 24));
}

#[test]
fn snapshot_confirm_80x24() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    a.update(Msg::Remedy(RemedyMsg::Confirm(lock_rm_confirm())));
    settle(&mut a);
    for c in "index-api".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    insta::assert_snapshot!("confirm_80x24", screen(&a, 80, 24));
}

/// Issue 10: the error of a journal that could not be written (a full disk) is shown whole
/// under the steps at 80x24, not cut off below its panel.
#[test]
fn snapshot_disk_full_80x24() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, 2, true))));
    let e = unstick_core::remedy::journal::JournalError::Io {
        path: "/home/operator/.local/share/unstick/incidents/20261122t041500z-stale-lock-index-api-pv/journal.jsonl"
            .into(),
        op: "append",
        source: std::io::Error::from_raw_os_error(28),
    };
    a.update(Msg::Remedy(RemedyMsg::refused(unstick_core::remedy::run::RunError::Journal(e), false)));
    let s = screen(&a, 80, 24);
    let flat: String = s.lines().map(|l| l.trim_matches(|c| c == '│' || c == ' ')).collect::<Vec<_>>().join("");
    assert!(flat.contains("No space left on device (os error 28)"), "{s}");
    insta::assert_snapshot!("disk_full_80x24", s);
}

#[test]
fn wait_step_shows_a_countdown_of_the_polls_the_service_makes() {
    // the worker read a 1.28 server: the taint branch, whose attachment release is a Wait step
    let mut a = multi_attach_selected(28);
    let wait = open_at_the_wait_step(&mut a);
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::WaitPoll)]);
    let remaining = std::time::Duration::from_secs(300);
    a.update(Msg::Remedy(RemedyMsg::Wait(WaitStatus::Pending {
        seen: "volumeattachment csi-123 present".into(),
        remaining,
    })));
    assert_eq!(step_state(pb(&a), wait), "running");
    let later = fixtures::now() + jiff::SignedDuration::from_secs(3);
    let fx = a.update(Msg::Tick(later));
    assert!(fx.is_empty(), "{fx:?}");
    let s = screen(&a, 80, 24);
    assert!(s.contains("waiting… 297 s left"), "{s}");
    // past the poll period the console sends nothing: the service polls on its own timer
    // (remedy::service::timers) and its polls arrive as messages
    let fx = a.update(Msg::Tick(fixtures::now() + jiff::SignedDuration::from_secs(6)));
    assert!(fx.is_empty(), "{fx:?}");
    a.update(Msg::Remedy(RemedyMsg::Wait(WaitStatus::Pending {
        seen: "volumeattachment csi-123 present".into(),
        remaining: std::time::Duration::from_secs(294),
    })));
    assert_eq!(step_state(pb(&a), wait), "running");
    let s = screen(&a, 80, 24);
    assert!(s.contains("waiting… 294 s left"), "{s}");
}

#[test]
fn server_version_from_the_worker_picks_the_multi_attach_branch() {
    let mut a = multi_attach_selected(20);
    assert_eq!(a.remedy.server_version.map(|v| v.to_string()).as_deref(), Some("1.20"));
    press(&mut a, KeyCode::Char('p'));
    let kinds: Vec<String> = pb(&a)
        .playbook
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Act(x) => Some(x.summary()),
            _ => None,
        })
        .collect();
    assert!(
        kinds.iter().any(|k| k.starts_with("force-delete")) && kinds.iter().any(|k| k.contains("status.volumesInUse")),
        "{kinds:?}"
    );
    assert!(!kinds.iter().any(|k| k.contains("out-of-service")), "{kinds:?}");
    // an unreadable version keeps the safe branch
    a.update(Msg::Remedy(RemedyMsg::ServerVersion(Err(
        unstick_core::remedy::playbook::version::VersionError::Timeout { secs: 15 },
    ))));
    assert!(a.remedy.server_version.is_none());
}

#[test]
fn a_verify_that_does_not_hold_yet_counts_down_and_a_failed_one_says_how_to_run_it_again() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    let verify = pb(&a).playbook.steps.iter().position(|s| matches!(s.kind, StepKind::Verify(_))).expect("Verify");
    a.update(Msg::Remedy(RemedyMsg::View(runner_view(&a, verify, true))));
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Verify { index: verify })]);
    let check = |holds| unstick_core::remedy::playbook::condition::Checked {
        condition: "lock kubelet_lock_magic_node1 gone".into(),
        holds,
        seen: if holds { "no lock".into() } else { "1 lock".into() },
    };
    let remaining = Some(std::time::Duration::from_secs(60));
    a.update(Msg::Remedy(RemedyMsg::Verified { step: verify, checks: vec![check(false)], remaining }));
    assert_eq!(step_state(pb(&a), verify), "running", "still being read: not failed");
    a.update(Msg::Tick(fixtures::now() + jiff::SignedDuration::from_secs(4)));
    let s = screen(&a, 80, 24);
    assert!(s.contains("56 s left"), "{s}");
    assert!(pb(&a).in_progress().is_some(), "quitting now asks");
    // the time ran out: failed (the service journaled it), and the screen says how to go on
    let mut failed = runner_view(&a, verify, true);
    failed.states[verify] = StepState::Failed("still not so after 60 s: lock gone: NO (1 lock)".into());
    a.update(Msg::Remedy(RemedyMsg::Verified { step: verify, checks: vec![check(false)], remaining: None }));
    a.update(Msg::Remedy(RemedyMsg::View(failed)));
    assert_eq!(step_state(pb(&a), verify), "failed");
    let s = screen(&a, 80, 24);
    assert!(s.contains("Enter: verify again"), "{s}");
    assert!(s.contains("Enter runs it again"), "{s}");
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(fx, vec![Effect::Remedy(RemedyRequest::Verify { index: verify })], "a failed Verify runs again");
}

#[test]
fn c_copies_a_manual_steps_commands_and_the_step_says_which_step_checks_it() {
    let mut a = app(WriteMode::Live);
    press(&mut a, KeyCode::Char('p'));
    let commands = vec!["grep rbd0 /proc/*/mountinfo".to_string(), "rbd unmap /dev/rbd0".to_string()];
    let manual = unstick_core::remedy::playbook::Step {
        id: "stale-lock/9".into(),
        title: "Unmap on the node".into(),
        explain: String::new(),
        kind: StepKind::Manual { on: Some("node133".into()), commands: commands.clone() },
        optional: false,
    };
    let pb_ui = a.popups.playbook_mut().unwrap();
    pb_ui.playbook.steps.insert(1, manual);
    pb_ui.selected = 1;
    let fx = press(&mut a, KeyCode::Char('c'));
    assert_eq!(fx, vec![Effect::Clipboard(commands.join("\n"))]);
    let s = screen(&a, 80, 24);
    assert!(s.contains("run on node133 (c copies them"), "{s}");
    // the stale-lock playbook's next check after it is its Check step (step 3)
    assert!(s.contains("step 3 (Check) checks the result"), "{s}");
    // on another step, c says what it is for
    a.popups.playbook_mut().unwrap().selected = 0;
    assert!(press(&mut a, KeyCode::Char('c')).is_empty());
    assert!(pb(&a).message.as_ref().is_some_and(|m| m.1.contains("c copies a manual step")));
}
