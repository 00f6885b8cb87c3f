//! The undo plan of a journal: the inverses of its successful steps, newest first, and the steps
//! that cannot be undone with the reason (failed, interrupted, irreversible, already undone, or an
//! undo themselves). Running the items is the runner's job (`prepare_undo` / `confirm_undo`), with
//! the same confirmation, re-check and journal rules as any step.

use std::collections::BTreeMap;
use std::path::Path;

use super::action::{Action, Inverse};
use super::journal::{JOURNAL_FILE, JournalReport, StepStatus, outcome_text, read};

/// One inverse to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoItem {
    /// The step being undone.
    pub step: u32,
    /// The original action.
    pub original: Action,
    /// The inverse to run.
    pub action: Action,
    /// The bootIDs journaled with the original step (a fence): what its unfence compares with.
    pub fenced_boot_ids: std::collections::BTreeMap<String, String>,
}

/// Undo plan: inverses newest-first, and the steps that cannot be undone with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UndoPlan {
    /// To run, in this order.
    pub items: Vec<UndoItem>,
    /// `(step, reason)` of steps left alone.
    pub skipped: Vec<(u32, String)>,
}

impl JournalReport {
    /// The undo plan: inverses newest-first. With `only`, just that step. Steps that failed, were
    /// interrupted, are irreversible, are undos themselves, or were already undone are skipped
    /// with the reason.
    pub fn undo_plan(&self, only: Option<u32>) -> UndoPlan {
        let steps = self.steps();
        let mut plan = UndoPlan::default();
        for s in steps.iter().rev() {
            let n = s.intent.step;
            if only.is_some_and(|o| o != n) {
                continue;
            }
            if let Some(of) = s.intent.undo_of {
                plan.skipped.push((n, format!("is the undo of step {of}")));
                continue;
            }
            let undone_by = steps
                .iter()
                .find(|u| u.intent.undo_of == Some(n) && u.status == StepStatus::Done)
                .map(|u| u.intent.step);
            if let Some(u) = undone_by {
                plan.skipped.push((n, format!("already undone by step {u}")));
                continue;
            }
            if let Some(u) = steps.iter().find(|u| u.intent.undo_of == Some(n) && u.status == StepStatus::Interrupted) {
                plan.skipped
                    .push((n, format!("its undo (step {}) was interrupted — state unknown, re-check", u.intent.step)));
                continue;
            }
            match s.status {
                StepStatus::Interrupted => {
                    plan.skipped.push((n, "interrupted — state unknown, re-check before undoing".into()));
                    continue;
                }
                StepStatus::Failed => {
                    let why = s.outcome.as_ref().map(outcome_text).unwrap_or_default();
                    plan.skipped.push((n, format!("failed ({why}): nothing to undo, re-check")));
                    continue;
                }
                StepStatus::Done => {}
            }
            match &s.intent.inverse {
                Inverse::Action { action } => plan.items.push(UndoItem {
                    step: n,
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
/// `BlocklistAdd` of the same entry, the `TaintOutOfService` of the same node), searched in every
/// incident journal under `base` (`BASE/<incident>/journal.jsonl`). Empty when none is found;
/// unreadable journals are skipped (the unfence then needs the typed override).
pub fn fence_boot_ids(base: &Path, unfence: &Action) -> BTreeMap<String, String> {
    let Inverse::Action { action: fence } = unfence.inverse() else { return BTreeMap::new() };
    let Ok(dirs) = std::fs::read_dir(base) else { return BTreeMap::new() };
    let mut newest: Option<(jiff::Timestamp, BTreeMap<String, String>)> = None;
    for d in dirs.flatten() {
        let Ok(rep) = read(&d.path().join(JOURNAL_FILE)) else { continue };
        for s in rep.steps() {
            let fits = s.intent.action == *fence && s.status == StepStatus::Done && !s.intent.boot_ids.is_empty();
            if fits && newest.as_ref().is_none_or(|(t, _)| s.record.time > *t) {
                newest = Some((s.record.time, s.intent.boot_ids.clone()));
            }
        }
    }
    newest.map(|(_, b)| b).unwrap_or_default()
}
