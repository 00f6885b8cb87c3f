//! Guided remediation in the console: the Playbook view's state ([`PlaybookUi`]), the confirm
//! popup's state ([`ConfirmUi`], the action to confirm is a value), the typed-override prompt, and
//! the key and message handling around them. Runner calls are [`Effect::Remedy`] commands to the
//! remediation service ([`crate::remedy::service`]); its messages come back as [`Msg::Remedy`]
//! (a pending Wait step's polls and the Lease renewals run on the service's own timers).

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;
use ratatui_textarea::TextArea;

use super::app::{App, Effect, Pane};
pub use super::confirm::{ConfirmKey, ConfirmUi};
use super::confirm::{edit_field, one_line_field};
use super::export_prompt::ExportPrompt;
use super::session_rec::confirmation_event;
use crate::diagnose::{Finding, ObjectKind, PatternId};
use crate::remedy::backup::ExportProgress;
use crate::remedy::playbook::{self, Playbook, StepKind, Target};
use crate::remedy::precheck::LiveState;
use crate::remedy::runner::{StepState, WaitStatus};
use crate::remedy::safety::Overrides;
use crate::remedy::service::{LeaseView, OverrideNeed, RemedyMsg, RemedyRequest, RunnerView};
use crate::remedy::version::ServerVersion;

/// What the console may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// `--read-only`: no executor, no worker; steps and commands are shown only.
    #[default]
    ReadOnly,
    /// `--dry-run`: confirmations are shown from a live re-check; nothing is sent.
    DryRun,
    /// Writes are possible after backup, re-check and confirmation.
    Live,
}

/// Keys of the Playbook view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaybookAction {
    /// Select the previous step.
    Up,
    /// Select the next step.
    Down,
    /// Run the selected step (it must be the current one).
    Run,
    /// Skip the current optional step.
    Skip,
    /// Undo the newest undoable step of the incident.
    Undo,
    /// Acknowledge interrupted steps after re-checking.
    Acknowledge,
    /// Type the override the safety rules asked for.
    Override,
    /// Take over an expired Lease.
    TakeOver,
    /// Back up with a full `rbd export` copy (asks for the destination).
    Export,
    /// Close the view (releases the Lease).
    Close,
    /// Open the note editor.
    Note,
    /// Help overlay.
    Help,
    /// Training: the hints overlay.
    Hints,
    /// Quit the console.
    Quit,
}

/// The typed-override prompt (fence a Ready node, wide blocklist).
#[derive(Debug, Clone)]
pub struct OverrideUi {
    /// What must be typed.
    pub need: OverrideNeed,
    /// The field.
    pub input: TextArea<'static>,
    /// Why the last attempt was refused.
    pub error: Option<String>,
}

/// The open Playbook view.
#[derive(Debug, Clone)]
pub struct PlaybookUi {
    /// Finding id.
    pub finding: String,
    /// PV, node or finding id naming the incident.
    pub subject: String,
    /// The steps.
    pub playbook: Playbook,
    /// Selected step (the view's cursor).
    pub selected: usize,
    /// The runner's state (live mode, once opened).
    pub runner: Option<RunnerView>,
    /// A call in flight.
    pub busy: Option<String>,
    /// Last result `(ok, text)`.
    pub message: Option<(bool, String)>,
    /// Last Wait poll and when it arrived.
    pub wait: Option<(WaitStatus, Timestamp)>,
    /// Polling the current Wait step.
    pub waiting: bool,
    /// Verify results per step index.
    pub verified: BTreeMap<usize, Vec<(String, bool, String)>>,
    /// Confirm popup.
    pub confirm: Option<ConfirmUi>,
    /// Override the safety rules would accept.
    pub override_need: Option<OverrideNeed>,
    /// Override prompt.
    pub override_ui: Option<OverrideUi>,
    /// Overrides typed so far.
    pub overrides: Overrides,
    /// The full-copy destination prompt.
    pub export_ui: Option<ExportPrompt>,
    /// Last progress of the backup's `rbd export`.
    pub export: Option<ExportProgress>,
}

/// Remediation state of the app.
#[derive(Debug, Clone, Default)]
pub struct RemedyUi {
    /// What may be written.
    pub mode: WriteMode,
    /// A worker runs (false in read-only mode and in tests).
    pub worker: bool,
    /// Interrupted steps found in the journals at start: `(incident, step, summary)`.
    pub interrupted: Vec<(String, u32, String)>,
    /// A one-line notice (no playbook for a finding, ...).
    pub notice: Option<String>,
    /// The open Playbook view.
    pub playbook: Option<PlaybookUi>,
    /// The API server's version as the worker read it at start (`None`: unknown); playbooks are
    /// built for it.
    pub server_version: Option<ServerVersion>,
    /// PVs whose backup was verified in this console (for the blast radius of a step).
    pub backed_up: std::collections::BTreeSet<String>,
    /// The playbooks of the runs in progress (reopening shows the steps the run started with).
    pub runs: super::playbook_runs::Runs,
}

impl RemedyUi {
    /// The state for a mode; no worker yet.
    pub fn new(mode: WriteMode) -> Self {
        RemedyUi { mode, ..Default::default() }
    }
}

/// The text shown for every write key in read-only mode.
pub const READ_ONLY: &str = "read-only: no write path (started with --read-only); steps and commands are shown only";

/// The target of a finding: its volume, or the blocklist entries it names.
pub fn target_of(app: &App, f: &Finding) -> Option<Target> {
    if let Some(pv) = &f.volume {
        return Target::for_volume(&app.snap, &app.lineage, pv)
            .map(|t| t.with_server_version(app.remedy.server_version));
    }
    if f.pattern == PatternId::BlocklistLeftover {
        let names: Vec<&str> =
            f.objects.iter().filter(|o| o.kind == ObjectKind::BlocklistEntry).map(|o| o.name.as_str()).collect();
        let entries = app.snap.ceph.blocklist.as_ref()?.value.as_ref().ok()?;
        let mine = entries.iter().filter(|e| names.contains(&e.text())).cloned().collect();
        return Some(Target::for_blocklist(&app.snap, mine));
    }
    None
}

/// Why step `i` cannot run now, if it cannot.
pub fn lock_reason(pb: &PlaybookUi, i: usize) -> Option<String> {
    let step = pb.playbook.steps.get(i)?;
    let backup_ok = pb.runner.as_ref().is_some_and(|r| r.backup.is_some());
    let is_act = matches!(step.kind, StepKind::Act(_));
    if is_act && !backup_ok {
        return Some("locked: no action is reachable until the backup (step 1) has succeeded and been verified".into());
    }
    let cursor = pb.runner.as_ref().map(|r| r.cursor)?;
    (i > cursor).then(|| format!("locked: step {} comes first (steps run in order)", cursor + 1))
}

/// The state shown for step `i`.
pub fn step_state(pb: &PlaybookUi, i: usize) -> &'static str {
    let Some(r) = &pb.runner else {
        return if lock_reason(pb, i).is_some() { "locked" } else { "pending" };
    };
    match r.states.get(i) {
        Some(StepState::Done(_)) => "done",
        Some(StepState::Failed(_)) => "failed",
        Some(StepState::Skipped(_)) => "skipped",
        Some(StepState::Undone(_)) if pb.busy.is_none() => "undone",
        _ if i == r.cursor && (pb.busy.is_some() || pb.waiting) => "running",
        _ if lock_reason(pb, i).is_some() => "locked",
        _ => "pending",
    }
}

impl App {
    /// True while raw keys go to a text field (filter, confirm popup, override prompt).
    pub fn wants_raw_keys(&self) -> bool {
        self.filter_editor.is_some()
            || self
                .remedy
                .playbook
                .as_ref()
                .is_some_and(|p| p.confirm.is_some() || p.override_ui.is_some() || p.export_ui.is_some())
    }

    /// `(content rows, visible rows)` of the open confirm popup (the view's own geometry).
    fn confirm_metrics(&self) -> (u16, u16) {
        match self.remedy.playbook.as_ref().and_then(|p| p.confirm.as_ref()) {
            Some(c) => super::view::confirm_metrics(self, c),
            None => (0, 0),
        }
    }

    /// Opens the Playbook view for the selected finding.
    pub(crate) fn open_playbook(&mut self) -> Vec<Effect> {
        let Some(f) = self.findings.get(self.selected_row(Pane::Findings)).cloned() else {
            self.remedy.notice = Some("no finding selected: select one in the Findings pane (1)".into());
            return vec![];
        };
        let built = target_of(self, &f)
            .ok_or_else(|| format!("{}: no volume or blocklist entry to act on", f.id))
            .and_then(|t| playbook::build(&f.playbook, &t, &self.cfg.remedy).map_err(|e| e.to_string()));
        let subject = f.volume.clone().or(f.node.clone()).unwrap_or_else(|| f.id.clone());
        let pb = match built {
            Ok(pb) => self.remedy.runs.reuse(pb, &subject),
            Err(e) => {
                self.remedy.notice = Some(format!("no playbook: {e}"));
                return vec![];
            }
        };
        self.finding_detail = None;
        self.remedy.notice = None;
        let baseline = LiveState::from_snapshot(&self.snap, &pb.scope, self.now);
        let mut ui = PlaybookUi {
            finding: f.id.clone(),
            subject: subject.clone(),
            playbook: pb.clone(),
            selected: 0,
            runner: None,
            busy: None,
            message: None,
            wait: None,
            waiting: false,
            verified: BTreeMap::new(),
            confirm: None,
            override_need: None,
            override_ui: None,
            overrides: Overrides::default(),
            export_ui: None,
            export: None,
        };
        let fx = match (self.remedy.mode, self.remedy.worker) {
            (WriteMode::ReadOnly, _) => {
                ui.message = Some((true, READ_ONLY.into()));
                vec![]
            }
            (_, false) => {
                ui.message = Some((false, "no remediation worker (no Ceph access?): steps are shown only".into()));
                vec![]
            }
            (_, true) => {
                ui.busy = Some("opening the incident journal and the volume's Lease…".into());
                vec![Effect::Remedy(RemedyRequest::Open {
                    playbook: Box::new(pb),
                    baseline: Box::new(baseline),
                    subject,
                })]
            }
        };
        self.remedy.playbook = Some(ui);
        fx
    }

    /// A key in the Playbook view.
    pub fn playbook_action(&mut self, a: PlaybookAction) -> Vec<Effect> {
        if self.help {
            match a {
                PlaybookAction::Help | PlaybookAction::Close => self.help = false,
                PlaybookAction::Down => self.help_scroll = self.help_scroll.saturating_add(1),
                PlaybookAction::Up => self.help_scroll = self.help_scroll.saturating_sub(1),
                _ => {}
            }
            return vec![];
        }
        let mode = self.remedy.mode;
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let n = pb.playbook.steps.len();
        let say = |pb: &mut PlaybookUi, ok: bool, t: &str| pb.message = Some((ok, t.to_string()));
        match a {
            PlaybookAction::Quit => self.quit = true,
            PlaybookAction::Help => self.help = true,
            PlaybookAction::Note => self.open_note(),
            PlaybookAction::Hints => self.toggle_hints(),
            PlaybookAction::Up => pb.selected = pb.selected.saturating_sub(1),
            PlaybookAction::Down => pb.selected = (pb.selected + 1).min(n.saturating_sub(1)),
            PlaybookAction::Close => {
                if pb.runner.as_ref().is_some_and(|r| r.cursor >= n) {
                    self.remedy.runs.finished(pb.playbook.pattern, &pb.subject);
                }
                self.remedy.playbook = None;
                return if mode == WriteMode::ReadOnly || !self.remedy.worker {
                    vec![]
                } else {
                    vec![Effect::Remedy(RemedyRequest::Close)]
                };
            }
            _ if pb.busy.is_some() => say(pb, false, "busy: wait for the current call to finish"),
            _ if mode == WriteMode::ReadOnly => say(pb, false, READ_ONLY),
            _ if !self.remedy.worker => say(pb, false, "no remediation worker: nothing can run"),
            PlaybookAction::Run => return self.run_selected(),
            PlaybookAction::Export => return self.open_export(),
            PlaybookAction::Skip => {
                let optional =
                    pb.runner.as_ref().and_then(|r| pb.playbook.steps.get(r.cursor)).is_some_and(|s| s.optional);
                if mode == WriteMode::DryRun {
                    say(pb, false, "dry-run: nothing is journaled");
                } else if optional {
                    pb.busy = Some("skipping…".into());
                    return vec![Effect::Remedy(RemedyRequest::Skip)];
                } else {
                    say(pb, false, "only optional steps can be skipped");
                }
            }
            PlaybookAction::Undo => {
                pb.busy = Some("reading the undo plan and re-checking live…".into());
                return vec![Effect::Remedy(RemedyRequest::PrepareUndo(pb.overrides.clone()))];
            }
            PlaybookAction::Acknowledge => {
                if pb.runner.as_ref().is_some_and(|r| !r.interrupted.is_empty()) {
                    pb.busy = Some("acknowledging…".into());
                    return vec![Effect::Remedy(RemedyRequest::Acknowledge)];
                }
                say(pb, true, "no interrupted step to acknowledge");
            }
            PlaybookAction::Override => match pb.override_need.clone() {
                Some(need) => pb.override_ui = Some(OverrideUi { need, input: one_line_field(), error: None }),
                None => say(pb, false, "no override was asked for"),
            },
            PlaybookAction::TakeOver => {
                if pb.runner.as_ref().is_some_and(|r| matches!(r.lease, LeaseView::Expired(_))) {
                    pb.busy = Some("taking over the expired Lease…".into());
                    return vec![Effect::Remedy(RemedyRequest::TakeOverLease)];
                }
                say(pb, false, "no expired Lease to take over");
            }
        }
        vec![]
    }

    fn run_selected(&mut self) -> Vec<Effect> {
        let mode = self.remedy.mode;
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let i = pb.selected;
        let Some(step) = pb.playbook.steps.get(i).cloned() else { return vec![] };
        let req = |pb: &mut PlaybookUi, busy: &str, r: RemedyRequest| {
            pb.busy = Some(busy.to_string());
            vec![Effect::Remedy(r)]
        };
        if mode == WriteMode::DryRun {
            let text = match &step.kind {
                StepKind::Backup(plan) => format!(
                    "dry-run: would save {} manifest(s){} — nothing was sent",
                    plan.objects.len(),
                    plan.image
                        .as_ref()
                        .map(|im| format!(" and snapshot {}@unstick-<incident>-<UTC time>", im.spec()))
                        .unwrap_or_default()
                ),
                StepKind::Check => return req(pb, "re-reading the live state…", RemedyRequest::Check),
                StepKind::Act(_) => {
                    return req(
                        pb,
                        "re-checking live…",
                        RemedyRequest::Prepare { index: i, overrides: pb.overrides.clone() },
                    );
                }
                StepKind::Verify(_) => return req(pb, "verifying…", RemedyRequest::Verify { index: i }),
                StepKind::Manual { .. } => "dry-run: run the commands yourself; nothing is journaled".into(),
                StepKind::Wait { .. } => "dry-run: not waiting".into(),
            };
            pb.message = Some((true, text));
            return vec![];
        }
        let Some(r) = &pb.runner else {
            pb.message = Some((false, "the runner is not open yet".into()));
            return vec![];
        };
        if !r.interrupted.is_empty() {
            pb.message = Some((false, "interrupted — state unknown, re-check: then press a to acknowledge".into()));
            return vec![];
        }
        if let Some(why) = lock_reason(pb, i) {
            pb.message = Some((false, why));
            return vec![];
        }
        if r.cursor >= pb.playbook.steps.len() {
            pb.message = Some((
                true,
                "every step is done: Esc closes the playbook (the findings refresh from the live state)".into(),
            ));
            return vec![];
        }
        if i < r.cursor {
            pb.message = Some((false, format!("step {} is finished; the current step is {}", i + 1, r.cursor + 1)));
            return vec![];
        }
        match &step.kind {
            StepKind::Backup(_) => {
                req(pb, "backing up: manifests, snapshot, verification…", RemedyRequest::Backup { export_to: None })
            }
            StepKind::Check => req(pb, "re-reading the live state…", RemedyRequest::Check),
            StepKind::Act(_) => req(
                pb,
                "re-checking live and applying the safety rules…",
                RemedyRequest::Prepare { index: i, overrides: pb.overrides.clone() },
            ),
            StepKind::Manual { .. } => req(pb, "journaling…", RemedyRequest::ManualDone),
            StepKind::Wait { .. } => {
                pb.waiting = true;
                req(pb, "polling…", RemedyRequest::WaitPoll)
            }
            StepKind::Verify(_) => req(pb, "verifying…", RemedyRequest::Verify { index: i }),
        }
    }

    /// A raw key while the confirm popup or the override prompt is open.
    pub fn popup_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if self.remedy.playbook.as_ref().is_some_and(|p| p.export_ui.is_some()) {
            return self.export_key(key);
        }
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        if let Some(o) = pb.override_ui.as_mut() {
            let ctrl_c =
                key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
            match key.code {
                _ if ctrl_c => pb.override_ui = None,
                KeyCode::Esc => pb.override_ui = None,
                KeyCode::Enter => {
                    let typed = o.input.lines().join("").trim().to_string();
                    if typed != o.need.name() {
                        o.error = Some(format!("type `{}` exactly to override", o.need.name()));
                        return vec![];
                    }
                    match &o.need {
                        OverrideNeed::ReadyNode(n) => pb.overrides.fence_ready_node = Some(n.clone()),
                        OverrideNeed::WideBlocklist(a) => pb.overrides.wide_blocklist = Some(a.clone()),
                        OverrideNeed::NotRebooted(n) => pb.overrides.unfence_not_rebooted = Some(n.clone()),
                    }
                    pb.override_ui = None;
                    pb.override_need = None;
                    pb.message = Some((true, "override typed: prepare the step again (Enter)".into()));
                }
                _ => edit_field(&mut o.input, key),
            }
            return vec![];
        }
        if pb.confirm.is_none() {
            return vec![];
        }
        let (total, height) = self.confirm_metrics();
        let now = self.now;
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let Some(c) = pb.confirm.as_mut() else { return vec![] };
        let confirm = match c.key(key, now, total, height) {
            ConfirmKey::Stay => return vec![],
            ConfirmKey::Cancel => {
                let view = c.view.clone();
                pb.confirm = None;
                pb.message = Some((true, "cancelled: nothing was sent".into()));
                self.record_event(confirmation_event(&view, false));
                return if self.remedy.mode == WriteMode::Live {
                    vec![Effect::Remedy(RemedyRequest::Cancel)]
                } else {
                    vec![]
                };
            }
            ConfirmKey::Confirm(typed) => typed,
        };
        let view = c.view.clone();
        pb.confirm = None;
        if view.dry_run || self.remedy.mode != WriteMode::Live {
            pb.message = Some((true, format!("dry-run: {} — nothing was sent", view.summary)));
            self.record_event(confirmation_event(&view, true));
            return vec![];
        }
        pb.busy = Some(format!("sending {}…", view.summary));
        self.record_event(confirmation_event(&view, true));
        vec![Effect::Remedy(RemedyRequest::Confirm { step_id: view.step_id, typed: confirm })]
    }

    /// A message from the remediation service.
    pub(crate) fn on_remedy(&mut self, m: RemedyMsg) {
        match m {
            RemedyMsg::Interrupted(list) => return self.remedy.interrupted = list,
            RemedyMsg::Record(e) => return self.record_event(e),
            RemedyMsg::ServerVersion(v) => {
                if let Err(e) = &v {
                    tracing::warn!("server version unknown: {e}");
                }
                return self.remedy.server_version = v.ok();
            }
            _ => {}
        }
        let now = self.now;
        let Some(pb) = self.remedy.playbook.as_mut() else { return };
        match m {
            RemedyMsg::Interrupted(_) | RemedyMsg::ServerVersion(_) | RemedyMsg::Record(_) => {}
            RemedyMsg::Export(p) => pb.export = Some(p),
            RemedyMsg::View(v) => {
                let moved = pb.runner.as_ref().is_none_or(|r| r.cursor != v.cursor);
                if moved {
                    pb.selected = v.cursor.min(pb.playbook.steps.len().saturating_sub(1));
                    pb.wait = None;
                    pb.waiting = false;
                }
                if v.backup.is_some()
                    && let Some(pv) = &pb.playbook.volume
                {
                    self.remedy.backed_up.insert(pv.clone());
                }
                if v.interrupted.is_empty() {
                    let inc = v.incident.clone();
                    self.remedy.interrupted.retain(|(i, _, _)| *i != inc);
                }
                pb.runner = Some(v);
                if !pb.waiting {
                    pb.busy = None;
                }
            }
            RemedyMsg::Confirm(v) => {
                pb.busy = None;
                let blast = super::blast::of(&v.action, &self.snap, &self.lineage, &self.remedy.backed_up);
                let speed = self.training.as_ref().map(|t| t.sim.speed()).unwrap_or(1.0);
                pb.confirm = Some(ConfirmUi::new(v, blast, now, speed));
            }
            RemedyMsg::Done(ok, text) => {
                pb.busy = None;
                pb.message = Some((ok, text));
            }
            RemedyMsg::Failed { refusal, need, .. } => {
                pb.busy = None;
                pb.waiting = false;
                let hint = need.as_ref().map(|_| "  — o: type the override").unwrap_or_default();
                pb.message = Some((false, format!("{refusal}{hint}")));
                pb.override_need = need;
            }
            RemedyMsg::Wait(st) => {
                pb.busy = None;
                match &st {
                    WaitStatus::Pending { .. } => {}
                    WaitStatus::Met(s) => {
                        pb.waiting = false;
                        pb.message = Some((true, format!("condition met: {s}")));
                    }
                    WaitStatus::TimedOut(s) => {
                        pb.waiting = false;
                        pb.message = Some((false, s.clone()));
                    }
                }
                pb.wait = Some((st, now));
            }
            RemedyMsg::Verified(i, v) => {
                pb.busy = None;
                let ok = v.iter().all(|(_, ok, _)| *ok);
                pb.message =
                    Some((ok, if ok { "verified".into() } else { "verification failed: see the step".into() }));
                pb.verified.insert(i, v);
            }
        }
    }
}

#[cfg(test)]
#[path = "playbook_tests.rs"]
pub(crate) mod tests;
