//! Preparing an undo, the same in live and dry-run mode: the incident journal's newest undoable
//! step, its inverse re-checked live.

use std::path::Path;

use crate::remedy::action::precheck::Reader;
use crate::remedy::action::safety::Overrides;
use crate::remedy::journal;
use crate::remedy::run::refusal::Refusal;
use crate::remedy::run::{Confirmation, RunError, prepare_undo};

/// The confirmation of the undo of the newest undoable step in the journal at `path` (incident
/// `incident`): the live re-check and the safety rules applied with the operator's overrides `ov`,
/// the command as it would be sent now. Refused when the journal cannot be read, nothing can be
/// undone, or the re-check or a safety rule refuses.
pub(super) async fn prepare(
    reader: &Reader,
    path: &Path,
    incident: &str,
    ov: &Overrides,
) -> Result<Confirmation, Refusal> {
    let plan = journal::read(path).map_err(RunError::from)?.undo_plan(None);
    let Some(item) = plan.items.first() else {
        return Err(Refusal::NothingToUndo { incident: incident.to_string(), irreversible: plan.skipped.len() });
    };
    let mut c = prepare_undo(reader, item, ov).await?;
    c.command = crate::remedy::action::resolve::display_now(reader, &c.action).await;
    Ok(c)
}
