//! Dry-run mode (no executor, no runner, no journal): Act steps are previewed from a live
//! re-check (the popup of a real run, with nothing that could send it), Check and Verify read live,
//! an undo is prepared from the incident's journal; nothing is sent.

use super::Service;
use super::msg::{ConfirmView, RemedyMsg, RemedyRequest};
use super::step_log::StepLog;
use crate::remedy::action::WriteAction;
use crate::remedy::action::precheck::{LiveState, Reader, compare, read_live};
use crate::remedy::action::safety::Overrides;
use crate::remedy::action::scope::merge_scope;
use crate::remedy::journal;
use crate::remedy::playbook::condition::Checked;
use crate::remedy::playbook::condition::evaluate;
use crate::remedy::playbook::{Playbook, StepKind};
use crate::remedy::run::refusal::Refusal;
use crate::remedy::run::{Confirmation, RunError, confirmation, scope_for};
use crate::session::log::StepResult;

impl Service {
    /// A command in dry-run mode: reads only.
    pub(super) async fn dry_run(&mut self, req: RemedyRequest) {
        let Some(s) = self.run.as_ref() else { return };
        let reader = &self.p.reader;
        // dry-run Checks and Verifies are in the session log too (its `start` says dry-run)
        let check = StepLog::of(s.playbook.steps.iter().find(|st| st.kind.check().is_some()), self.tx.clone());
        let msg = match req {
            RemedyRequest::Prepare { index, overrides } => match s.playbook.steps.get(index) {
                Some(step @ crate::remedy::playbook::Step { kind: StepKind::Act(action), .. }) => {
                    match preview(reader, &s.playbook, &s.baseline, &step.id, action, &overrides).await {
                        Ok(c) => RemedyMsg::Confirm(ConfirmView::of(&c, true)),
                        Err(e) => return self.fail(e),
                    }
                }
                _ => RemedyMsg::refused(Refusal::NotAct, false),
            },
            RemedyRequest::Check => dry_check(reader, &s.playbook, &s.baseline, &check).await,
            RemedyRequest::Verify { index } => match s.playbook.steps.get(index).map(|st| &st.kind) {
                Some(StepKind::Verify(conds)) => {
                    let mut checks = Vec::new();
                    for c in conds {
                        let (holds, seen) = match evaluate(reader, c).await {
                            Ok(r) => r,
                            Err(e) => (false, e.to_string()),
                        };
                        checks.push(Checked { condition: c.describe(), holds, seen });
                    }
                    StepLog::of(s.playbook.steps.get(index), self.tx.clone()).verified(&checks);
                    RemedyMsg::Verified { step: index, checks, remaining: None }
                }
                _ => RemedyMsg::refused(Refusal::NotVerify, false),
            },
            RemedyRequest::PrepareUndo(ov) => {
                let path = self.p.base.join(&s.incident).join(journal::JOURNAL_FILE);
                match super::undo::prepare(reader, &path, &s.incident, &ov).await {
                    Ok(c) => RemedyMsg::Confirm(ConfirmView::of(&c, true)),
                    Err(refusal) => return self.refuse(refusal),
                }
            }
            RemedyRequest::Cancel => return,
            _ => RemedyMsg::refused(Refusal::DryRun, false),
        };
        self.send(msg);
    }
}

/// A dry-run preview of an Act step: the live re-check against the baseline and the safety rules,
/// exactly as the popup of a real run would show them (its command as it would be sent now).
async fn preview(
    reader: &Reader,
    playbook: &Playbook,
    baseline: &LiveState,
    step_id: &str,
    action: &WriteAction,
    ov: &Overrides,
) -> Result<Confirmation, RunError> {
    let scope = merge_scope(&playbook.scope, &scope_for(action));
    let live = read_live(reader, &scope).await?;
    let changes = compare(baseline, &live, &scope);
    if !changes.is_empty() {
        return Err(crate::remedy::action::precheck::PrecheckError::Changed(changes).into());
    }
    let mut c = confirmation(step_id, action, live, scope, ov, None, reader)?;
    c.command = crate::remedy::action::resolve::display_now(reader, action).await;
    Ok(c)
}

/// A dry-run Check: the live state against the baseline, recorded in the session log through
/// `check` (the playbook's Check step).
async fn dry_check(reader: &Reader, playbook: &Playbook, baseline: &LiveState, check: &StepLog) -> RemedyMsg {
    match read_live(reader, &playbook.scope).await {
        Ok(live) => {
            let changes = compare(baseline, &live, &playbook.scope);
            if changes.is_empty() {
                check.log(StepResult::Done, "state unchanged since the finding".into());
                RemedyMsg::Done { ok: true, text: "dry-run re-check: state unchanged since the finding".into() }
            } else {
                let refusal = Refusal::DryRunChanged(changes);
                check.log(StepResult::Failed, refusal.to_string());
                RemedyMsg::refused(refusal, false)
            }
        }
        Err(e) => {
            check.log(StepResult::Failed, e.to_string());
            RemedyMsg::refused(e, false)
        }
    }
}
