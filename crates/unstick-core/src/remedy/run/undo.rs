//! The undo plan of a journal: the inverses of its successful steps, newest first, and the steps
//! that cannot be undone with the reason (failed, interrupted, irreversible, already undone, or an
//! undo themselves). Running the items is the runner's job (`prepare_undo` / `confirm_undo`), with
//! the same confirmation, re-check and journal rules as any step.

use std::collections::BTreeMap;
use std::path::Path;

use crate::remedy::action::{Inverse, WriteAction};
use crate::remedy::journal::step::{names_step, step_label};
use crate::remedy::journal::{JOURNAL_FILE, JournalReport, WriteStatus, outcome_text, read};

/// Why `unstick undo --step` named no single journal entry ([`JournalReport::resolve_step`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveStepError {
    /// No action of that step in the journal (undos do not count).
    #[error("no action of step {wanted} in this journal")]
    NoAction {
        /// The step as given (`3` or `stale-lock/3`).
        wanted: String,
    },
    /// A bare number that names steps of several playbooks.
    #[error("step {wanted} is ambiguous ({}): give the step id", .ids.join(", "))]
    Ambiguous {
        /// The step as given.
        wanted: String,
        /// The step ids it names, sorted.
        ids: Vec<String>,
    },
}

/// One inverse to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoItem {
    /// The journal entry being undone (its intent's sequence number).
    pub step: u32,
    /// The playbook step id of the action being undone (`stale-lock/3`).
    pub step_id: String,
    /// The original action.
    pub original: WriteAction,
    /// The inverse to run.
    pub action: WriteAction,
    /// The bootIDs journaled with the original step (a fence): what its unfence compares with.
    pub fenced_boot_ids: std::collections::BTreeMap<String, String>,
}

/// Undo plan: inverses newest-first, and the steps that cannot be undone with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UndoPlan {
    /// To run, in this order.
    pub items: Vec<UndoItem>,
    /// `(journal entry, reason)` of steps left alone; the reason names steps by their playbook
    /// number ([`step_label`]).
    pub skipped: Vec<(u32, String)>,
}

impl JournalReport {
    /// How journal entry `n` is named: its step's [`step_label`] (`step 3 (stale-lock/3)`), or
    /// `#n` when no intent has that number.
    pub fn label_of(&self, n: u32) -> String {
        self.steps()
            .iter()
            .find(|s| s.intent.step == n)
            .map(|s| step_label(&s.intent.step_id))
            .unwrap_or(format!("#{n}"))
    }

    /// The journal entry `wanted` names (`3` or `stale-lock/3`: the newest action of that playbook
    /// step that is not an undo). Errors: no such step, or `3` names steps of several playbooks.
    pub fn resolve_step(&self, wanted: &str) -> Result<u32, ResolveStepError> {
        let steps = self.steps();
        let hits: Vec<_> =
            steps.iter().filter(|s| s.intent.undo_of.is_none() && names_step(wanted, &s.intent.step_id)).collect();
        let mut ids: Vec<String> = hits.iter().map(|s| s.intent.step_id.clone()).collect();
        ids.sort_unstable();
        ids.dedup();
        match (hits.last(), ids.len()) {
            (None, _) => Err(ResolveStepError::NoAction { wanted: wanted.to_string() }),
            (Some(_), n) if n > 1 => Err(ResolveStepError::Ambiguous { wanted: wanted.to_string(), ids }),
            (Some(s), _) => Ok(s.intent.step),
        }
    }

    /// The undo plan: inverses newest-first. With `only`, just that step. Steps that failed, were
    /// interrupted, are irreversible, are undos themselves, or were already undone are skipped
    /// with the reason.
    pub fn undo_plan(&self, only: Option<u32>) -> UndoPlan {
        let steps = self.steps();
        let label = |n: u32| {
            steps.iter().find(|s| s.intent.step == n).map(|s| step_label(&s.intent.step_id)).unwrap_or(format!("#{n}"))
        };
        let mut plan = UndoPlan::default();
        for s in steps.iter().rev() {
            let n = s.intent.step;
            if only.is_some_and(|o| o != n) {
                continue;
            }
            if let Some(of) = s.intent.undo_of {
                plan.skipped.push((n, format!("is the undo of {}", label(of))));
                continue;
            }
            if steps.iter().any(|u| u.intent.undo_of == Some(n) && u.status == WriteStatus::Done) {
                plan.skipped.push((n, "already undone".to_string()));
                continue;
            }
            if steps.iter().any(|u| u.intent.undo_of == Some(n) && u.status == WriteStatus::Interrupted) {
                plan.skipped.push((n, "its undo was interrupted — state unknown, re-check".to_string()));
                continue;
            }
            match s.status {
                WriteStatus::Interrupted => {
                    plan.skipped.push((n, "interrupted — state unknown, re-check before undoing".into()));
                    continue;
                }
                WriteStatus::Failed => {
                    let why = s.outcome.as_ref().map(outcome_text).unwrap_or_default();
                    plan.skipped.push((n, format!("failed ({why}): nothing to undo, re-check")));
                    continue;
                }
                WriteStatus::Done => {}
            }
            match &s.intent.inverse {
                Inverse::Action { action } => plan.items.push(UndoItem {
                    step: n,
                    step_id: s.intent.step_id.clone(),
                    original: s.intent.action.clone(),
                    action: (**action).clone(),
                    fenced_boot_ids: s.intent.boot_ids.clone(),
                }),
                Inverse::Irreversible { why } => plan.skipped.push((n, format!("irreversible: {why}"))),
            }
        }
        plan
    }
}

/// The bootIDs journaled with the newest successful fence that `unfence` reverses (the
/// `BlocklistAdd` of the same entry, the `TaintOutOfService` of the same node, the
/// `NetworkFenceCreate` of the same NetworkFence), searched in every
/// incident journal under `base` (`BASE/<incident>/journal.jsonl`). Empty when none is found;
/// unreadable journals are skipped (the unfence then needs the typed override).
pub fn fence_boot_ids(base: &Path, unfence: &WriteAction) -> BTreeMap<String, String> {
    let Inverse::Action { action: fence } = unfence.inverse() else { return BTreeMap::new() };
    let Ok(dirs) = std::fs::read_dir(base) else { return BTreeMap::new() };
    let mut newest: Option<(jiff::Timestamp, BTreeMap<String, String>)> = None;
    for d in dirs.flatten() {
        let Ok(rep) = read(&d.path().join(JOURNAL_FILE)) else { continue };
        for s in rep.steps() {
            let fits = (s.intent.action == *fence || creates_fence_of(&s.intent.action, unfence))
                && s.status == WriteStatus::Done
                && !s.intent.boot_ids.is_empty();
            if fits && newest.as_ref().is_none_or(|(t, _)| s.record.time > *t) {
                newest = Some((s.record.time, s.intent.boot_ids.clone()));
            }
        }
    }
    newest.map(|(_, b)| b).unwrap_or_default()
}

/// True when `fence` created the NetworkFence that `unfence` sets Unfenced.
fn creates_fence_of(fence: &WriteAction, unfence: &WriteAction) -> bool {
    matches!((fence, unfence), (WriteAction::NetworkFenceCreate { name: a, .. }, WriteAction::NetworkFenceState { name: b, .. }) if a == b)
}
