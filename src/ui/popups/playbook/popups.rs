//! The Playbook view's keys, the answers of its popups (the confirm popup, the typed-override and
//! full-copy prompts: layers of their own over it) and the remediation service's messages about
//! the open run (its Wait polls and Lease renewals run on its own timers). Methods of
//! [`PlaybookUi`]; nothing here knows the app.

use std::path::PathBuf;

use crossterm::event::KeyEvent;
use jiff::Timestamp;

use super::{PlaybookCtx, PlaybookUi, WriteMode};
use crate::ui::outcome::{AppCommand, Outcome};
use unstick_core::console_state::session_rec::confirmation_event;
use unstick_core::remedy::run::WaitStatus;
use unstick_core::remedy::service::{ConfirmView, OverrideNeed, RemedyMsg, RemedyRequest, RunnerView};

impl PlaybookUi {
    /// The view's answer to a key: the Playbook keys ([`crate::ui::keys::map_playbook`],
    /// [`PlaybookUi::handle_action`]). Every key is the view's: one it does not bind does nothing.
    pub fn handle_key(&mut self, key: KeyEvent, ctx: PlaybookCtx) -> Outcome {
        match crate::ui::keys::map_playbook(key) {
            Some(a) => match self.handle_action(a, ctx) {
                Outcome::Ignored => Outcome::Consumed,
                out => out,
            },
            None => Outcome::Consumed,
        }
    }

    /// What is in progress in the run, said for a question about quitting: a call in flight, a
    /// Wait being polled, or a run started and not finished; `None` when nothing is.
    pub fn in_progress(&self) -> Option<String> {
        let n = self.playbook.steps.len();
        let r = self.runner.as_ref();
        let cursor = r.map(|r| r.cursor).unwrap_or(0);
        let title = self.playbook.steps.get(cursor).map(|s| s.title.as_str()).unwrap_or("");
        if self.waiting {
            return Some(format!("step {} of {n} ({title}) is waiting for its condition", cursor + 1));
        }
        if let Some(b) = &self.busy {
            return Some(format!("step {} of {n} is running: {}", cursor + 1, b.trim_end_matches('…')));
        }
        let started = r.is_some_and(|r| r.cursor > 0 && r.cursor < n);
        started.then(|| format!("the playbook is at step {} of {n} ({title})", cursor + 1))
    }

    /// Where the open playbook stands when nothing is in progress, said for the question asked
    /// before quitting with it open (`q` quits the console, not the view: Esc closes the view).
    pub fn open_at(&self) -> String {
        let n = self.playbook.steps.len();
        let cursor = self.runner.as_ref().map(|r| r.cursor).unwrap_or(0);
        match self.playbook.steps.get(cursor) {
            Some(s) => {
                format!("the playbook {} is open at step {} of {n} ({})", self.playbook.pattern, cursor + 1, s.title)
            }
            None => format!("the playbook {} is open, every step done", self.playbook.pattern),
        }
    }

    /// The confirm popup over the view was answered: `typed` is `None` when it was cancelled,
    /// else what was typed (`Some(None)` for a `y` confirmation). Returns the answer's record for
    /// the session log and what to send (the confirmation, or `Cancel` so the worker drops the
    /// prepared step; nothing in dry-run or read-only `mode`).
    pub fn confirm_answered(
        &mut self,
        view: &ConfirmView,
        typed: Option<Option<String>>,
        mode: WriteMode,
    ) -> AppCommand {
        let Some(typed) = typed else {
            self.message = Some((true, "cancelled: nothing was sent".into()));
            let send = (mode == WriteMode::Live).then_some(RemedyRequest::Cancel);
            return AppCommand::Answered { record: Box::new(confirmation_event(view, false)), send };
        };
        let record = Box::new(confirmation_event(view, true));
        if view.dry_run || mode != WriteMode::Live {
            self.message = Some((true, format!("dry-run: {} — nothing was sent", view.summary)));
            return AppCommand::Answered { record, send: None };
        }
        self.busy = Some(format!("sending {}…", view.summary));
        let send = Some(RemedyRequest::Confirm { step_id: view.step_id.clone(), typed });
        AppCommand::Answered { record, send }
    }

    /// The override prompt over the view took `need`, typed exactly: kept for the next
    /// preparation of the step.
    pub fn override_typed(&mut self, need: OverrideNeed) {
        match &need {
            OverrideNeed::ReadyNode(n) => self.overrides.fence_ready_node = Some(n.clone()),
            OverrideNeed::WideBlocklist(a) => self.overrides.wide_blocklist = Some(a.clone()),
            OverrideNeed::NotRebooted(n) => self.overrides.unfence_not_rebooted = Some(n.clone()),
            OverrideNeed::FeatureGate(g) => self.overrides.feature_gate = Some(g.clone()),
            OverrideNeed::Unattributed(a) => self.overrides.unattributed = Some(a.clone()),
            OverrideNeed::Remediating(n) => self.overrides.remediating = Some(n.clone()),
        }
        self.override_need = None;
        self.message = Some((true, "override typed: prepare the step again (Enter)".into()));
    }

    /// The full-copy prompt over the view was answered: `None` cancelled, else the destination.
    /// Returns the backup request to send.
    pub fn full_copy_answered(&mut self, to: Option<PathBuf>) -> Option<AppCommand> {
        let Some(path) = to else {
            self.message = Some((true, "full copy cancelled: nothing was sent".into()));
            return None;
        };
        self.export = None;
        self.busy = Some(format!("backing up with a full copy to {}…", path.display()));
        Some(AppCommand::Remedy(RemedyRequest::Backup { export_to: Some(path) }))
    }

    /// The worker's view of the runner after a call: the cursor follows the run.
    pub fn on_view(&mut self, v: RunnerView) {
        let moved = self.runner.as_ref().is_none_or(|r| r.cursor != v.cursor);
        if moved {
            self.selected = v.cursor.min(self.playbook.steps.len().saturating_sub(1));
            self.wait = None;
            self.waiting = false;
        }
        self.runner = Some(v);
        if !self.waiting {
            self.busy = None;
        }
    }

    /// The worker asks for a confirmation (the app opens the confirm popup over the view): the
    /// call it was busy with has answered.
    pub fn confirm_opened(&mut self) {
        self.busy = None;
    }

    /// The worker's other answers about the open run (`now`: when it arrived, for Wait polls).
    /// Runner views and confirmations go to [`PlaybookUi::on_view`] and
    /// [`PlaybookUi::confirm_opened`]; answers about the console are the app's.
    pub fn on_remedy(&mut self, m: RemedyMsg, now: Timestamp) {
        match m {
            RemedyMsg::ServerVersion(_) | RemedyMsg::Record(_) | RemedyMsg::View(_) | RemedyMsg::Confirm(_) => {}
            RemedyMsg::Export(p) => self.export = Some(p),
            RemedyMsg::Done { ok, text } => {
                self.busy = None;
                self.message = Some((ok, text));
            }
            RemedyMsg::Failed { refusal, need, .. } => {
                self.busy = None;
                self.waiting = false;
                let hint = need.as_ref().map(|_| "  — o: type the override").unwrap_or_default();
                self.message = Some((false, format!("{refusal}{hint}")));
                self.override_need = need;
            }
            RemedyMsg::Wait(st) => {
                self.busy = None;
                match &st {
                    WaitStatus::Pending { .. } => {}
                    WaitStatus::Met(s) => {
                        self.waiting = false;
                        self.message = Some((true, format!("condition met: {s}")));
                    }
                    WaitStatus::TimedOut(s) => {
                        self.waiting = false;
                        self.message = Some((false, s.clone()));
                    }
                }
                self.wait = Some((st, now));
            }
            RemedyMsg::Verified { step: i, checks: v, remaining } => {
                self.busy = None;
                self.waiting = remaining.is_some();
                self.verify_left = remaining.map(|r| (r, now));
                let ok = v.iter().all(|c| c.holds);
                self.message = match remaining {
                    Some(_) => None,
                    None if ok => Some((true, "verified".into())),
                    None => Some((false, "verification failed (journaled): Enter runs it again".into())),
                };
                self.verified.insert(i, v);
            }
        }
    }
}
