//! The Playbook view's popups and the remediation service's messages: the keys of the full-copy
//! prompt, the typed-override prompt and the confirm popup, and the service's messages about the
//! open run (its Wait polls and Lease renewals run on its own timers). Methods of [`PlaybookUi`];
//! nothing here knows the app.

use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;

use super::{PlaybookCtx, PlaybookUi, WriteMode};
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popups::confirm::{ConfirmUi, edit_field};
use unstick_core::console_state::blast::Blast;
use unstick_core::console_state::session_rec::confirmation_event;
use unstick_core::remedy::run::WaitStatus;
use unstick_core::remedy::service::{ConfirmView, OverrideNeed, RemedyMsg, RemedyRequest, RunnerView};

impl PlaybookUi {
    /// The view's answer to a key: to its popup when one is open ([`PlaybookUi::popup_key`]),
    /// else the Playbook keys ([`crate::ui::keys::map_playbook`], [`PlaybookUi::handle_action`]).
    /// Every key is the view's: one it does not bind does nothing.
    pub fn handle_key(&mut self, key: KeyEvent, cx: PlaybookKeyCtx) -> Outcome {
        if self.has_popup() {
            return self.popup_key(key, cx.now, cx.metrics, cx.ctx.mode);
        }
        match crate::ui::keys::map_playbook(key) {
            Some(a) => match self.handle_action(a, cx.ctx) {
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

    /// A raw key while a popup of the view is open (the full-copy prompt, else the override
    /// prompt, else the confirm popup). `now` is the console clock (the confirm popup's key
    /// guard), `metrics` the confirm popup's `(content rows, visible rows)` on screen, `mode` what
    /// the console may write. An answered confirmation comes back as [`AppCommand::Answered`].
    pub fn popup_key(&mut self, key: KeyEvent, now: Timestamp, metrics: (u16, u16), mode: WriteMode) -> Outcome {
        if let Some(e) = self.export_ui.as_mut() {
            match e.handle_key(key) {
                Outcome::Command(AppCommand::Close) => {
                    self.export_ui = None;
                    self.message = Some((true, "full copy cancelled: nothing was sent".into()));
                }
                Outcome::Command(AppCommand::StartExport(path)) => {
                    self.export_ui = None;
                    self.export = None;
                    self.busy = Some(format!("backing up with a full copy to {}…", path.display()));
                    return Outcome::Command(AppCommand::Remedy(RemedyRequest::Backup { export_to: Some(path) }));
                }
                _ => {}
            }
            return Outcome::Consumed;
        }
        if self.override_ui.is_some() {
            self.override_key(key);
            return Outcome::Consumed;
        }
        let Some(c) = self.confirm.as_mut() else { return Outcome::Ignored };
        let typed = match c.handle_key(key, now, metrics) {
            Outcome::Command(AppCommand::Confirm(typed)) => typed,
            Outcome::Command(AppCommand::Close) => {
                let view = c.view.clone();
                self.confirm = None;
                self.message = Some((true, "cancelled: nothing was sent".into()));
                let send = (mode == WriteMode::Live).then_some(RemedyRequest::Cancel);
                return Outcome::Command(AppCommand::Answered {
                    record: Box::new(confirmation_event(&view, false)),
                    send,
                });
            }
            _ => return Outcome::Consumed,
        };
        let view = c.view.clone();
        self.confirm = None;
        let record = Box::new(confirmation_event(&view, true));
        if view.dry_run || mode != WriteMode::Live {
            self.message = Some((true, format!("dry-run: {} — nothing was sent", view.summary)));
            return Outcome::Command(AppCommand::Answered { record, send: None });
        }
        self.busy = Some(format!("sending {}…", view.summary));
        let send = Some(RemedyRequest::Confirm { step_id: view.step_id, typed });
        Outcome::Command(AppCommand::Answered { record, send })
    }

    /// A key in the typed-override prompt: Enter takes the override when it was typed exactly.
    fn override_key(&mut self, key: KeyEvent) {
        let Some(o) = self.override_ui.as_mut() else { return };
        let ctrl_c = key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            _ if ctrl_c => self.override_ui = None,
            KeyCode::Esc => self.override_ui = None,
            KeyCode::Enter => {
                let typed = o.input.lines().join("").trim().to_string();
                if typed != o.need.name() {
                    o.error = Some(format!("type `{}` exactly to override", o.need.name()));
                    return;
                }
                match &o.need {
                    OverrideNeed::ReadyNode(n) => self.overrides.fence_ready_node = Some(n.clone()),
                    OverrideNeed::WideBlocklist(a) => self.overrides.wide_blocklist = Some(a.clone()),
                    OverrideNeed::NotRebooted(n) => self.overrides.unfence_not_rebooted = Some(n.clone()),
                }
                self.override_ui = None;
                self.override_need = None;
                self.message = Some((true, "override typed: prepare the step again (Enter)".into()));
            }
            _ => edit_field(&mut o.input, key),
        }
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

    /// The worker asks for a confirmation: opens the confirm popup on `v` with its blast radius,
    /// its key guard running from `now` on a clock `speed` times real time.
    pub fn open_confirm(&mut self, v: ConfirmView, blast: Blast, now: Timestamp, speed: f64) {
        self.busy = None;
        self.confirm = Some(ConfirmUi::new(v, blast, now, speed));
    }

    /// The worker's other answers about the open run (`now`: when it arrived, for Wait polls).
    /// Runner views and confirmations go to [`PlaybookUi::on_view`] and
    /// [`PlaybookUi::open_confirm`]; answers about the console are the app's.
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
            RemedyMsg::Verified { step: i, checks: v } => {
                self.busy = None;
                let ok = v.iter().all(|c| c.holds);
                self.message =
                    Some((ok, if ok { "verified".into() } else { "verification failed: see the step".into() }));
                self.verified.insert(i, v);
            }
        }
    }
}

/// What the Playbook view's keys need from the console: its settings, the console clock (the
/// confirm popup's key guard) and the confirm popup's `(content rows, visible rows)` on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaybookKeyCtx {
    /// What the view may do.
    pub ctx: PlaybookCtx,
    /// The console clock.
    pub now: Timestamp,
    /// The confirm popup's metrics.
    pub metrics: (u16, u16),
}
