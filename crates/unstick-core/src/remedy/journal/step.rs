//! The journal's `step` record (a Check, Verify, Wait or Manual step's result, an Act step already
//! in effect, a skipped step) and the one step numbering every screen uses.
//!
//! Numbering: a step is named by its playbook's 1-based number, taken from its id
//! (`dead-node-watcher/3` is "step 3"), in the playbook, the confirmation popups (an undo says
//! "UNDO of step 3"), `unstick journal`, `unstick undo --step 3` and the export. The journal's own
//! sequence number (`Intent::step`) only links an outcome or an undo to its intent.

use serde::{Deserialize, Serialize};

pub use crate::model::step_type::StepType;

/// How a step that sends nothing ended, as its `step` journal record says (a write's state is a
/// `WriteStatus` in the journal module; a playbook step's state in the runner a [`StepState`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepResult {
    /// Done: a Check that found the state unchanged, every Verify condition held, a Wait met, a
    /// Manual step confirmed, an Act step whose change was already in effect.
    Done,
    /// Failed: state changed, a condition did not hold, a Wait timed out, a refusal.
    Failed,
    /// Skipped by the operator (optional steps only).
    Skipped,
}

impl StepResult {
    /// `done`, `failed`, `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            StepResult::Done => "done",
            StepResult::Failed => "failed",
            StepResult::Skipped => "skipped",
        }
    }
}

/// A `step` journal record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Playbook step id (`stale-lock/2`).
    pub step_id: String,
    /// The step's kind (on disk its name: `Check`, `Verify`, `Wait`, `Manual`, `Act`, `Backup`).
    pub kind: StepType,
    /// How it ended.
    pub result: StepResult,
    /// What was seen (conditions with their values), why it failed, or why it was skipped.
    #[serde(default)]
    pub detail: String,
}

/// The state of one playbook step, as the runner and the playbook view know it (derived from the
/// journal's [`StepResult`]s and write statuses on resume).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepState {
    /// Not run yet.
    Pending,
    /// Done, with a one-line result.
    Done(String),
    /// Last attempt failed (the step can be prepared again explicitly).
    Failed(String),
    /// Skipped by the operator, with the reason.
    Skipped(String),
    /// Done, then undone (the text says by which journal entry): the step is to be run again.
    Undone(String),
}

impl StepState {
    /// True for a step the run can move past: done or skipped.
    pub fn is_finished(&self) -> bool {
        matches!(self, StepState::Done(_) | StepState::Skipped(_))
    }
}

/// Prefix of the step id journaled for an undo: `undo of stale-lock/3`.
pub const UNDO_OF: &str = "undo of ";

/// The step id journaled for the undo of `step_id` (`undo of stale-lock/3`); an undo has its own
/// id, distinct from the step it undoes. Journals of older versions wrote `undo`.
pub fn undo_id(step_id: &str) -> String {
    format!("{UNDO_OF}{step_id}")
}

/// The step an undo's id names (`undo of stale-lock/3` → `stale-lock/3`).
pub fn undone_step(step_id: &str) -> Option<&str> {
    step_id.strip_prefix(UNDO_OF)
}

/// The playbook's 1-based step number in a step id (`stale-lock/3` → 3); `None` for an undo or
/// an id without a number.
pub fn step_number(step_id: &str) -> Option<u32> {
    if undone_step(step_id).is_some() {
        return None;
    }
    step_id.rsplit_once('/').and_then(|(_, n)| n.parse().ok())
}

/// How a step is named everywhere: `step 3 (stale-lock/3)`, `undo of step 3 (stale-lock/3)`; an
/// id without a number as itself.
pub fn step_label(step_id: &str) -> String {
    if let Some(t) = undone_step(step_id) {
        return format!("undo of {}", step_label(t));
    }
    match step_number(step_id) {
        Some(n) => format!("step {n} ({step_id})"),
        None => step_id.to_string(),
    }
}

/// True when `wanted` (`3` or `stale-lock/3`) names the step `step_id` (never an undo).
pub fn names_step(wanted: &str, step_id: &str) -> bool {
    let wanted = wanted.trim();
    let Some(n) = step_number(step_id) else { return false };
    wanted == step_id || wanted.parse::<u32>().ok() == Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_labels() {
        assert_eq!(step_number("dead-node-watcher/3"), Some(3));
        assert_eq!(step_number("undo"), None);
        assert_eq!(step_label("stale-lock/4"), "step 4 (stale-lock/4)");
        assert_eq!(step_label("undo"), "undo");
        assert_eq!(step_label(&undo_id("stale-lock/4")), "undo of step 4 (stale-lock/4)");
        assert_eq!(step_number("undo of stale-lock/4"), None);
        assert!(!names_step("4", "undo of stale-lock/4"));
        assert!(names_step("4", "stale-lock/4"));
        assert!(names_step("stale-lock/4", "stale-lock/4"));
        assert!(!names_step("3", "stale-lock/4"));
        assert!(!names_step("unmap-busy/4", "stale-lock/4"));
    }

    #[test]
    fn record_round_trip() {
        let r = StepRecord {
            step_id: "stale-lock/2".into(),
            kind: StepType::Check,
            result: StepResult::Skipped,
            detail: "in a hurry".into(),
        };
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.contains(r#""result":"skipped""#), "{s}");
        assert!(s.contains(r#""kind":"Check""#), "the kind keeps its on-disk name: {s}");
        assert_eq!(serde_json::from_str::<StepRecord>(&s).unwrap(), r);
    }
}
