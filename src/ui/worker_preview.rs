//! The dry-run preview of an Act step (`worker.rs` in dry-run mode): the popup's contents from a
//! live re-check, with nothing that could send it.

use crate::remedy::action::WriteAction;
use crate::remedy::playbook::Playbook;
use crate::remedy::precheck::{LiveState, Reader, Scope, compare, read_live};
use crate::remedy::refusal::Refusal;
use crate::remedy::runner::{RunError, scope_for};
use crate::remedy::safety::{Overrides, approve};

use super::worker_msg::{ConfirmView, RemedyMsg, StepLog, inverse_text};
use crate::session::log::StepResult;

pub(super) fn merged(a: &Scope, b: &Scope) -> Scope {
    let mut s = a.clone();
    s.image = s.image.or_else(|| b.image.clone());
    s.nodes.extend(b.nodes.iter().filter(|n| !a.nodes.contains(n)).cloned());
    s.pods.extend(b.pods.iter().filter(|n| !a.pods.contains(n)).cloned());
    s.volume_attachments.extend(b.volume_attachments.iter().filter(|n| !a.volume_attachments.contains(n)).cloned());
    s.mounts.extend(b.mounts.iter().filter(|n| !a.mounts.contains(n)).cloned());
    s.blocklist |= b.blocklist;
    s
}

/// A dry-run preview of an Act step: the live re-check against the baseline and the safety rules,
/// exactly as the popup of a real run would show them. Nothing can send it.
pub(super) async fn preview(
    reader: &Reader,
    playbook: &Playbook,
    baseline: &LiveState,
    step_id: &str,
    action: &WriteAction,
    ov: &Overrides,
) -> Result<ConfirmView, RunError> {
    let scope = merged(&playbook.scope, &scope_for(action));
    let live = read_live(reader, &scope).await?;
    let changes = compare(baseline, &live, &scope);
    if !changes.is_empty() {
        return Err(crate::remedy::precheck::PrecheckError::Changed(changes).into());
    }
    let approved = approve(action, &live, ov)?;
    let reversible = action.is_reversible();
    Ok(ConfirmView {
        step_id: step_id.to_string(),
        action: action.clone(),
        summary: action.summary(),
        command: crate::remedy::resolve::display_now(reader, action).await,
        objects: action.objects(),
        precheck: live.describe(&scope),
        reversible,
        inverse: inverse_text(&action.inverse()),
        warnings: approved.warnings().to_vec(),
        typed_name: (!reversible).then(|| action.confirm_name()),
        undo_of: None,
        dry_run: true,
    })
}

/// A dry-run Check: the live state against the baseline, recorded in the session log through
/// `check` (the playbook's Check step).
pub(super) async fn dry_check(
    reader: &Reader,
    playbook: &Playbook,
    baseline: &LiveState,
    check: &StepLog,
) -> RemedyMsg {
    match read_live(reader, &playbook.scope).await {
        Ok(live) => {
            let changes = compare(baseline, &live, &playbook.scope);
            if changes.is_empty() {
                check.log(StepResult::Done, "state unchanged since the finding".into());
                RemedyMsg::Done(true, "dry-run re-check: state unchanged since the finding".into())
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
