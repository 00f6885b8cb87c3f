//! Sending the pending confirmation (a playbook step's or an undo's) and what the session log
//! says about it.

use super::Service;
use super::msg::RemedyMsg;
use super::step_log::{StepLog, step_event};
use crate::remedy::action::executor::ExecResult;
use crate::remedy::run::refusal::Refusal;
use crate::remedy::run::{Confirmation, RunError};
use crate::session::SessionEvent;
use crate::session::log::StepResult;

impl Service {
    /// Sends the pending confirmation when it is the one for `step_id`, with the operator's typed
    /// name. The answer says how it went; the session log gets the action (or undo) and how the
    /// step ended.
    pub(super) async fn confirm(&mut self, step_id: &str, typed: Option<String>) -> Result<RemedyMsg, RunError> {
        let c = match self.pending.take() {
            Some(c) if c.step_id == step_id => c,
            _ => return Ok(RemedyMsg::refused(Refusal::ConfirmMismatch, false)),
        };
        let tx = self.tx.clone();
        let record = |e: SessionEvent| {
            let _ = tx.send(RemedyMsg::Record(e));
        };
        let Some(r) = self.run.as_mut().and_then(|s| s.runner.as_mut()) else { return Err(RunError::Finished) };
        let step = StepLog::of(r.current(), self.tx.clone());
        let (logged_step, logged_command, undo_of) = (c.step_id.clone(), c.command.clone(), c.undo_of);
        let res = match undo_of {
            Some(_) => match self.p.executor.clone() {
                Some(exec) => {
                    crate::remedy::run::confirm_undo(
                        &exec,
                        r.journal_mut(),
                        &self.p.reader,
                        c,
                        typed.as_deref(),
                        &self.p.cfg,
                    )
                    .await
                }
                None => Err(RunError::NoWrites("dry-run")),
            },
            None => r.confirm(c, typed.as_deref()).await,
        };
        match &res {
            Err(RunError::Journal(_)) | Ok(_) => {}
            // refused before anything was sent (typed name, stale, state changed)
            Err(e) if undo_of.is_some() => {
                record(step_event(&logged_step, "undo", "", StepResult::Failed, e.to_string()))
            }
            Err(e) => step.failed(e),
        }
        if let Err(e @ RunError::Journal(_)) = &res {
            // accepted, but the journal could not be written: the session log says so. Before the
            // intent nothing was sent; after it, the journal shows the step as interrupted, so the
            // outcome is stated as unknown.
            record(SessionEvent::Action {
                step_id: logged_step.clone(),
                command: logged_command.clone(),
                ok: false,
                outcome: format!("journal write failed, outcome unknown (not sent if no intent was written): {e}"),
                exit_code: None,
                api_status: None,
                duration_ms: 0,
                sent: None,
            });
        }
        res.map(|x| {
            record(sent_event(&x, &logged_step, &logged_command, undo_of));
            done(&x, undo_of.is_some())
        })
    }

    /// True when the pending confirmation undoes a journaled step.
    pub(super) fn pending_undo(&self) -> bool {
        self.pending.as_ref().is_some_and(|c: &Confirmation| c.undo_of.is_some())
    }
}

/// The session log's `action` (or `undo` of step N) event for a sent confirmation.
fn sent_event(x: &ExecResult, step_id: &str, command: &str, undo_of: Option<u32>) -> SessionEvent {
    let outcome = x.outcome(undo_of.unwrap_or(0));
    match undo_of {
        Some(n) => SessionEvent::undo(n, x.sent.as_deref().unwrap_or(command), &outcome),
        None => SessionEvent::action(step_id, command, x.sent.as_deref(), &outcome),
    }
}

/// The message line after a sent action or undo.
fn done(x: &ExecResult, undo: bool) -> RemedyMsg {
    let text = if x.stderr.is_empty() { "ok".to_string() } else { x.stderr.clone() };
    let what = if undo { "undo" } else { "action" };
    let extra = if undo { " — the undone step is current again" } else { "" };
    RemedyMsg::Done { ok: x.ok, text: format!("{what} {}: {text}{extra}", if x.ok { "done" } else { "FAILED" }) }
}
