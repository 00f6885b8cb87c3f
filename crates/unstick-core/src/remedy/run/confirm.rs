//! One write, confirmed: what the confirm popup shows ([`Confirmation`], built by
//! [`confirmation`] under the safety rules) and the send that consumes it — typed name, the live
//! state read again and compared with what the operator was shown, re-approval, journal intent,
//! the write, journal outcome. Shared by playbook steps ([`super::Runner::confirm`]) and undo
//! ([`prepare_undo`], [`confirm_undo`]).

use std::time::Duration;

use jiff::Timestamp;

use super::error::RunError;
use crate::config::RemedyConfig;
use crate::remedy::action::executor::{ExecResult, Executor};
use crate::remedy::action::precheck::{LiveState, PrecheckError, Reader, Scope, compare, read_live};
use crate::remedy::action::safety::{Overrides, approve};
use crate::remedy::action::scope::scope_for;
use crate::remedy::action::{Inverse, WriteAction};
use crate::remedy::journal::Journal;
use crate::remedy::run::typed::typed_matches;
use crate::remedy::run::undo::UndoItem;

/// What the confirm popup shows, and what [`super::Runner::confirm`] consumes.
#[derive(Debug, Clone)]
pub struct Confirmation {
    /// Playbook step id (`stale-lock/3`) or `undo`.
    pub step_id: String,
    /// The action.
    pub action: WriteAction,
    /// Exact argv or API verb + resource + patch.
    pub command: String,
    /// Objects touched.
    pub objects: Vec<String>,
    /// The live precondition just re-checked.
    pub precheck: Vec<String>,
    /// Reversible?
    pub reversible: bool,
    /// The inverse or why there is none.
    pub inverse: Inverse,
    /// Warnings (lock rm blocklists its locker for 1 h, overrides, finalizers).
    pub warnings: Vec<String>,
    /// For irreversible steps: the name the operator must type. `None`: `y` is enough.
    pub typed_name: Option<String>,
    /// Set when this undoes a journaled step.
    pub undo_of: Option<u32>,
    live: LiveState,
    scope: Scope,
    overrides: Overrides,
    prepared: Timestamp,
}

impl Confirmation {
    /// For a DaemonSet template patch: the DaemonSet's `updateStrategy` as the re-check read it
    /// ([`crate::remedy::action::precheck::update_strategy`]); `None` for other actions.
    pub fn update_strategy(&self) -> Option<String> {
        let WriteAction::SetMountPropagation { namespace, daemonset, .. } = &self.action else { return None };
        let m = self.live.mounts.iter().find(|m| m.mount.namespace == *namespace && m.mount.daemonset == *daemonset);
        m.and_then(|m| m.strategy.clone())
    }
}

/// Builds a confirmation for `action` on `live` (read for `scope`) under the safety rules with the
/// overrides `ov` (shared by playbook steps, undo and the dry-run preview). Refused by a safety rule.
pub fn confirmation(
    step_id: &str,
    action: &WriteAction,
    live: LiveState,
    scope: Scope,
    ov: &Overrides,
    undo_of: Option<u32>,
    reader: &Reader,
) -> Result<Confirmation, RunError> {
    let approved = approve(action, &live, ov)?;
    let reversible = action.is_reversible();
    Ok(Confirmation {
        step_id: step_id.to_string(),
        action: action.clone(),
        command: action.display(Some(&reader.ceph)),
        objects: action.objects(),
        precheck: live.describe(&scope),
        reversible,
        inverse: action.inverse(),
        warnings: approved.warnings().to_vec(),
        typed_name: (!reversible).then(|| action.confirm_name()),
        undo_of,
        live,
        scope,
        overrides: ov.clone(),
        prepared: reader.clock.now(),
    })
}

/// Checks the typed name and age, re-reads and compares, re-approves, journals the intent, sends,
/// journals the outcome. Shared by playbook steps and undo.
pub(super) async fn send(
    exec: &Executor,
    journal: &mut Journal,
    reader: &Reader,
    c: Confirmation,
    typed: Option<&str>,
    max_age: Duration,
) -> Result<(ExecResult, LiveState), RunError> {
    if let Some(name) = &c.typed_name
        && !typed_matches(name, typed)
    {
        return Err(RunError::TypedName { expected: name.clone() });
    }
    // the last live re-check, right before sending, against what the operator was shown: a
    // confirmation read for longer than `max_age` is not refused, its state is simply read again
    // here (a change refuses with what changed), and the journal says how old it was
    let age = reader.clock.now().duration_since(c.prepared).unsigned_abs();
    let live = read_live(reader, &c.scope).await?;
    let changes = compare(&c.live, &live, &c.scope);
    if !changes.is_empty() {
        return Err(PrecheckError::Changed(changes).into());
    }
    let approved = approve(&c.action, &live, &c.overrides)?;
    let mut checked = live.describe(&c.scope);
    if age > max_age {
        checked.push(format!(
            "confirmed {} s after the re-check it showed (over {} s): read again before sending, unchanged",
            age.as_secs(),
            max_age.as_secs()
        ));
    }
    let step =
        journal.intent_with_boot_ids(&c.step_id, approved.action(), c.undo_of, checked, approved.boot_ids().clone())?;
    let r = exec.execute(&approved).await;
    journal.outcome(r.outcome(step))?;
    Ok((r, live))
}

/// Prepares the undo of a journaled step: reads the live state the inverse depends on and applies
/// the safety rules (same popup contents as a playbook step).
pub async fn prepare_undo(reader: &Reader, item: &UndoItem, overrides: &Overrides) -> Result<Confirmation, RunError> {
    let scope = scope_for(&item.action);
    let live = read_live(reader, &scope).await?;
    let id = crate::remedy::journal::step::undo_id(&item.step_id);
    let ov = Overrides { fenced_boot_ids: item.fenced_boot_ids.clone(), ..overrides.clone() };
    confirmation(&id, &item.action, live, scope, &ov, Some(item.step), reader)
}

/// Sends a prepared undo with the same rules: typed name, age, final re-check, intent, outcome.
pub async fn confirm_undo(
    exec: &Executor,
    journal: &mut Journal,
    reader: &Reader,
    c: Confirmation,
    typed: Option<&str>,
    cfg: &RemedyConfig,
) -> Result<ExecResult, RunError> {
    let max_age = Duration::from_secs(cfg.precheck_max_age_seconds);
    Ok(send(exec, journal, reader, c, typed, max_age).await?.0)
}
