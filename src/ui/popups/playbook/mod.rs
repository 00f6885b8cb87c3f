//! Guided remediation in the console: the Playbook view as a component. [`PlaybookUi`] owns the
//! view's state (the steps, the runner's view, the overrides typed) and answers keys with an
//! [`Outcome`]. Its popups are layers of their own over it on the stack (the confirm popup
//! [`ConfirmUi`], the typed-override and full-copy prompts); what they answer comes back to the
//! view ([`PlaybookUi::confirm_answered`], [`PlaybookUi::override_typed`],
//! [`PlaybookUi::full_copy_answered`]). Runner calls come back as runner calls come back as
//! [`AppCommand::Remedy`] commands, which the app sends to the remediation service
//! ([`unstick_core::remedy::service`]); its messages come back through [`PlaybookUi::on_remedy`]
//! (`popups.rs`, with its keys). Drawn by `view.rs`; the app's glue (opening a finding's
//! playbook on the popup stack, closing it, the service's messages) is `app.rs`.

mod app;
mod popups;
pub mod runs;
pub mod view;

pub use app::target_of;

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::ui::action::Action;
use crate::ui::outcome::{AppCommand, Outcome};
pub use crate::ui::popups::confirm::ConfirmUi;
use crate::ui::popups::export_prompt::default_export_path;
use unstick_core::model::ImageRef;
use unstick_core::remedy::action::precheck::LiveState;
use unstick_core::remedy::action::safety::Overrides;
use unstick_core::remedy::playbook::version::ServerVersion;
use unstick_core::remedy::playbook::{Playbook, Step, StepKind};
use unstick_core::remedy::run::backup::ExportProgress;
use unstick_core::remedy::run::{StepState, WaitStatus};
use unstick_core::remedy::service::{LeaseView, OverrideNeed, RemedyRequest, RunnerView};

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
    /// While the service reads the current Verify step again: the time it had left at the last
    /// read (console time) and when that read arrived.
    pub verify_left: Option<(std::time::Duration, Timestamp)>,
    /// Verify results per step index.
    pub verified: BTreeMap<usize, Vec<unstick_core::remedy::playbook::condition::Checked>>,
    /// Override the safety rules would accept.
    pub override_need: Option<OverrideNeed>,
    /// Overrides typed so far.
    pub overrides: Overrides,
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
    /// Interrupted steps found in the journals at start.
    pub interrupted: Vec<unstick_core::remedy::journal::incidents::InterruptedStep>,
    /// A one-line notice (no playbook for a finding, ...).
    pub notice: Option<String>,
    /// The API server's version as the worker read it at start (`None`: unknown); playbooks are
    /// built for it.
    pub server_version: Option<ServerVersion>,
    /// PVs whose backup was verified in this console (for the blast radius of a step).
    pub backed_up: std::collections::BTreeSet<String>,
    /// The playbooks of the runs in progress (reopening shows the steps the run started with).
    pub runs: runs::Runs,
}

impl RemedyUi {
    /// The state for a mode; no worker yet.
    pub fn new(mode: WriteMode) -> Self {
        RemedyUi { mode, ..Default::default() }
    }
}

/// The text shown for every write key in read-only mode.
pub const READ_ONLY: &str = "read-only: no write path (started with --read-only); steps and commands are shown only";

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

/// What the Playbook view may do: the app's settings, read for each call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaybookCtx {
    /// What the console may write.
    pub mode: WriteMode,
    /// A remediation worker runs.
    pub worker: bool,
    /// The console runs a training scenario (its simulated Ceph has no image data to export).
    pub training: bool,
}

impl PlaybookUi {
    /// The view of `playbook` for finding `finding` on `subject`, with the request that opens the
    /// incident's journal and Lease when the remediation service can run it (a message says why
    /// not otherwise).
    pub fn open(
        finding: String,
        subject: String,
        playbook: Playbook,
        baseline: LiveState,
        ctx: PlaybookCtx,
    ) -> (Self, Option<RemedyRequest>) {
        let mut ui = PlaybookUi {
            finding,
            subject: subject.clone(),
            playbook: playbook.clone(),
            selected: 0,
            runner: None,
            busy: None,
            message: None,
            wait: None,
            waiting: false,
            verify_left: None,
            verified: BTreeMap::new(),
            override_need: None,
            overrides: Overrides::default(),
            export: None,
        };
        let req = match (ctx.mode, ctx.worker) {
            (WriteMode::ReadOnly, _) => {
                ui.message = Some((true, READ_ONLY.into()));
                None
            }
            (_, false) => {
                ui.message = Some((false, "no remediation worker (no Ceph access?): steps are shown only".into()));
                None
            }
            (_, true) => {
                ui.busy = Some("opening the incident journal and the volume's Lease…".into());
                Some(RemedyRequest::Open { playbook: Box::new(playbook), baseline: Box::new(baseline), subject })
            }
        };
        (ui, req)
    }

    /// The finding whose playbook this is (its id).
    pub fn finding(&self) -> &str {
        &self.finding
    }

    /// The RBD image the playbook acts on, if any.
    pub fn image(&self) -> Option<&ImageRef> {
        self.playbook.scope.image.as_ref()
    }

    /// True when the run's current step is an Act step (a write).
    pub fn at_act_step(&self) -> bool {
        let cursor = self.runner.as_ref().map(|r| r.cursor).unwrap_or(0);
        self.playbook.steps.get(cursor).is_some_and(|s| matches!(s.kind, StepKind::Act(_)))
    }

    /// Each step with its state in the run (none before the runner opened), named as the
    /// journal names it (`incident/step`).
    pub fn run_states(&self) -> Vec<(String, &Step, &StepState)> {
        let Some(r) = &self.runner else { return vec![] };
        self.playbook.steps.iter().zip(&r.states).map(|(s, st)| (format!("{}/{}", r.incident, s.id), s, st)).collect()
    }

    /// The PV the playbook acts on, if any.
    pub fn volume(&self) -> Option<&String> {
        self.playbook.volume.as_ref()
    }

    /// `(pattern, subject)` of the run when every step is done (closing forgets it).
    pub fn finished_run(&self) -> Option<(&'static str, &str)> {
        let n = self.playbook.steps.len();
        self.runner.as_ref().is_some_and(|r| r.cursor >= n).then_some((self.playbook.pattern, self.subject.as_str()))
    }

    fn say(&mut self, ok: bool, text: &str) -> Outcome {
        self.message = Some((ok, text.to_string()));
        Outcome::Consumed
    }

    fn send(&mut self, busy: &str, r: RemedyRequest) -> Outcome {
        self.busy = Some(busy.to_string());
        Outcome::Command(AppCommand::Remedy(r))
    }

    /// The view's answer to a key (the help overlay on top is the app's): the cursor moves here,
    /// runner calls come back as [`AppCommand::Remedy`], closing and the console's own keys as
    /// commands; a key that cannot act now leaves a message saying why.
    /// Keys the view does not use (the panes' own) are [`Outcome::Ignored`].
    pub fn handle_action(&mut self, a: Action, ctx: PlaybookCtx) -> Outcome {
        let n = self.playbook.steps.len();
        let runs = matches!(
            a,
            Action::Run
                | Action::Export
                | Action::Skip
                | Action::Undo
                | Action::Acknowledge
                | Action::Override
                | Action::TakeOver
        );
        match a {
            Action::Quit => Outcome::Command(AppCommand::Quit),
            Action::ToggleHelp => Outcome::Command(AppCommand::OpenHelp),
            Action::Note => Outcome::Command(AppCommand::OpenNote),
            Action::Command => Outcome::Command(AppCommand::OpenCommand),
            Action::Hints => Outcome::Command(AppCommand::ToggleHints),
            Action::CopyCommands => self.copy_commands(),
            Action::Up => {
                self.selected = self.selected.saturating_sub(1);
                Outcome::Consumed
            }
            Action::Down => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
                Outcome::Consumed
            }
            // Esc cancels what runs first: a Wait or Verify being polled stops (the view stays open)
            Action::Back if self.waiting => {
                self.waiting = false;
                self.verify_left = None;
                self.send("stopping…", RemedyRequest::StopWait)
            }
            Action::Back => Outcome::Command(AppCommand::Close),
            _ if !runs => Outcome::Ignored,
            _ if self.busy.is_some() => self.say(false, "busy: wait for the current call to finish"),
            _ if ctx.mode == WriteMode::ReadOnly => self.say(false, READ_ONLY),
            _ if !ctx.worker => self.say(false, "no remediation worker: nothing can run"),
            Action::Run => self.run_selected(ctx.mode),
            Action::Export => self.open_export(ctx),
            Action::Skip => {
                let optional =
                    self.runner.as_ref().and_then(|r| self.playbook.steps.get(r.cursor)).is_some_and(|s| s.optional);
                if ctx.mode == WriteMode::DryRun {
                    self.say(false, "dry-run: nothing is journaled")
                } else if optional {
                    self.send("skipping…", RemedyRequest::Skip)
                } else {
                    self.say(false, "only optional steps can be skipped")
                }
            }
            Action::Undo => self.send(
                "reading the undo plan and re-checking live…",
                RemedyRequest::PrepareUndo(Box::new(self.overrides.clone())),
            ),
            Action::Acknowledge => {
                if self.runner.as_ref().is_some_and(|r| !r.interrupted.is_empty()) {
                    return self.send("acknowledging…", RemedyRequest::Acknowledge);
                }
                self.say(true, "no interrupted step to acknowledge")
            }
            Action::Override => match self.override_need.clone() {
                Some(need) => Outcome::Command(AppCommand::OpenOverride(need)),
                None => self.say(false, "no override was asked for"),
            },
            Action::TakeOver => {
                if self.runner.as_ref().is_some_and(|r| matches!(r.lease, LeaseView::Expired(_))) {
                    return self.send("taking over the expired Lease…", RemedyRequest::TakeOverLease);
                }
                self.say(false, "no expired Lease to take over")
            }
            // the panes' keys: `runs` sent them back above
            _ => Outcome::Ignored,
        }
    }

    fn run_selected(&mut self, mode: WriteMode) -> Outcome {
        let i = self.selected;
        let Some(step) = self.playbook.steps.get(i).cloned() else { return Outcome::Consumed };
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
                StepKind::Check => return self.send("re-reading the live state…", RemedyRequest::Check),
                StepKind::Act(_) => {
                    let overrides = self.overrides.clone();
                    return self.send(
                        "re-checking live…",
                        RemedyRequest::Prepare { index: i, overrides: Box::new(overrides) },
                    );
                }
                StepKind::Verify(_) => return self.send("verifying…", RemedyRequest::Verify { index: i }),
                StepKind::Manual { .. } => "dry-run: run the commands yourself; nothing is journaled".into(),
                StepKind::Wait { .. } => "dry-run: not waiting".into(),
            };
            return self.say(true, &text);
        }
        let Some(r) = &self.runner else {
            return self.say(false, "the runner is not open yet");
        };
        if !r.interrupted.is_empty() {
            return self.say(false, "interrupted — state unknown, re-check: then press a to acknowledge");
        }
        let cursor = r.cursor;
        if let Some(why) = lock_reason(self, i) {
            return self.say(false, &why);
        }
        if cursor >= self.playbook.steps.len() {
            return self
                .say(true, "every step is done: Esc closes the playbook (the findings refresh from the live state)");
        }
        if i < cursor {
            return self.say(false, &format!("step {} is finished; the current step is {}", i + 1, cursor + 1));
        }
        match &step.kind {
            StepKind::Backup(_) => {
                self.send("backing up: manifests, snapshot, verification…", RemedyRequest::Backup { export_to: None })
            }
            StepKind::Check => self.send("re-reading the live state…", RemedyRequest::Check),
            StepKind::Act(_) => {
                let overrides = self.overrides.clone();
                self.send(
                    "re-checking live and applying the safety rules…",
                    RemedyRequest::Prepare { index: i, overrides: Box::new(overrides) },
                )
            }
            StepKind::Manual { .. } => self.send("journaling…", RemedyRequest::ManualDone),
            StepKind::Wait { .. } => {
                self.waiting = true;
                self.send("polling…", RemedyRequest::WaitPoll)
            }
            StepKind::Verify(_) => {
                self.verify_left = None;
                self.send("verifying…", RemedyRequest::Verify { index: i })
            }
        }
    }

    /// `c`: the selected Manual step's commands, one a line, to the terminal's clipboard.
    fn copy_commands(&mut self) -> Outcome {
        match self.playbook.steps.get(self.selected).map(|s| &s.kind) {
            Some(StepKind::Manual { commands, on }) if !commands.is_empty() => {
                // the same place the step's detail names: a node's shell, or wherever kubectl
                // reaches the cluster (kubectl reads have no node; seen in tmux on
                // driver-not-registered: "run them on the node" for kubectl reads)
                let place = match on.as_deref() {
                    Some(node) => format!("on {node}"),
                    None => "where kubectl reaches the cluster".to_string(),
                };
                self.message =
                    Some((true, format!("{} command(s) copied to the clipboard: run them {place}", commands.len())));
                Outcome::Command(AppCommand::Copy(commands.join("\n")))
            }
            _ => self.say(false, "c copies a manual step's commands: select one (j/k)"),
        }
    }

    /// `e`: opens the full-copy destination prompt when the Backup step is current.
    fn open_export(&mut self, ctx: PlaybookCtx) -> Outcome {
        let on_backup = self.runner.as_ref().is_some_and(|r| r.cursor == 0 && r.backup.is_none());
        let refusal = match () {
            _ if ctx.mode == WriteMode::ReadOnly => Some(READ_ONLY),
            _ if ctx.training => {
                Some("training: the simulated Ceph has no image data to export; the snapshot is the backup here")
            }
            _ if ctx.mode == WriteMode::DryRun => Some("dry-run: nothing is exported"),
            _ if !ctx.worker => Some("no remediation worker: nothing can run"),
            _ if self.busy.is_some() => Some("busy: wait for the current call to finish"),
            _ if !on_backup => Some("the full copy is part of the Backup step (step 1), before it has run"),
            _ => None,
        };
        if let Some(why) = refusal {
            return self.say(false, why);
        }
        let path = self.runner.as_ref().and_then(|r| default_export_path(&r.journal, &self.playbook));
        let Some(path) = path else {
            return self.say(false, "this playbook has no RBD image to export");
        };
        self.selected = 0;
        Outcome::Command(AppCommand::OpenFullCopy(path))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
pub(crate) mod tests;
