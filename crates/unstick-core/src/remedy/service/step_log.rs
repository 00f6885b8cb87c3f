//! The session log's record of how a playbook step ended ([`StepLog`]), sent to the console as
//! [`RemedyMsg::Record`] for its session log.

use crate::remedy::playbook::condition::Checked;
use tokio::sync::mpsc::UnboundedSender;

use super::msg::RemedyMsg;
use crate::remedy::playbook::Step;
use crate::remedy::run::RunError;
use crate::session::SessionEvent;
use crate::session::log::StepResult;

/// A session log `step` record (see [`SessionEvent::Step`]).
pub(crate) fn step_event(step_id: &str, kind: &str, title: &str, result: StepResult, detail: String) -> SessionEvent {
    SessionEvent::Step { step_id: step_id.into(), kind: kind.into(), title: title.into(), result, detail }
}

/// The playbook step a service command is about, to record how it ended in the session log
/// (sent to the app as [`RemedyMsg::Record`]).
pub(crate) struct StepLog {
    step: Option<(String, String, String)>,
    tx: UnboundedSender<RemedyMsg>,
}

impl StepLog {
    /// The runner's current step (`None` when the playbook is finished: nothing is recorded).
    pub(crate) fn of(step: Option<&Step>, tx: UnboundedSender<RemedyMsg>) -> Self {
        let step = step.map(|s| (s.id.clone(), s.kind.name().to_ascii_lowercase(), s.title.clone()));
        StepLog { step, tx }
    }

    /// Records the step with `result` and `detail`.
    pub(crate) fn log(&self, result: StepResult, detail: String) {
        if let Some((id, kind, title)) = &self.step {
            let _ = self.tx.send(RemedyMsg::Record(step_event(id, kind, title, result, detail)));
        }
    }

    /// Records a refusal or failure of the step, unless nothing ran (the request did not fit the
    /// current step, or the playbook was finished).
    pub(crate) fn failed(&self, e: &RunError) {
        if !matches!(e, RunError::WrongStep { .. } | RunError::NotPrepared { .. } | RunError::Finished) {
            self.log(StepResult::Failed, e.to_string());
        }
    }

    /// Records a Verify: done when every condition holds; the detail lists each with what was seen.
    pub(crate) fn verified(&self, v: &[Checked]) {
        let all = v.iter().all(|c| c.holds);
        self.log(if all { StepResult::Done } else { StepResult::Failed }, Checked::journal_text(v));
    }
}
