//! How each step of an incident ended, as its journal last says ([`JournalReport::step_ends`]):
//! the one reading of the journal's outcomes that `unstick journal`'s problem count, training's
//! debrief and the session export all rest on, so none of them can say a step succeeded when the
//! journal says it failed.

use jiff::Timestamp;

use super::step::{StepResult, StepType};
use super::{Body, JournalReport};

/// Where a step stands by its newest journal record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEnd {
    /// A `step` record `done`, or a write whose outcome is ok.
    Done,
    /// A `step` record `failed` (a Verify whose conditions did not hold in time, a Wait that timed
    /// out, a changed state), or a write whose outcome is not ok.
    Failed,
    /// Skipped by the operator.
    Skipped,
    /// A write's intent without an outcome.
    Interrupted,
}

/// One step's newest journal evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepEnded {
    /// Playbook step id (`dead-node-watcher/4`), or the undo's id (`undo of …`).
    pub step_id: String,
    /// The step's kind (`Act` for a write, `Backup` for the backup's snapshot).
    pub kind: StepType,
    /// How it stands.
    pub end: StepEnd,
    /// When the newest record was written (the journal's clock: real time).
    pub time: Timestamp,
    /// What the record says: the `step` record's detail, the write's outcome text.
    pub detail: String,
}

impl JournalReport {
    /// Every step id the journal names, in the order it first appears, with its newest evidence:
    /// `step` records and writes (intent → outcome) of that id; a `backup` record is the Backup
    /// step done.
    pub fn step_ends(&self) -> Vec<StepEnded> {
        let mut out: Vec<StepEnded> = Vec::new();
        let mut put = |id: &str, kind: StepType, end: StepEnd, time: Timestamp, detail: String| {
            let e = StepEnded { step_id: id.to_string(), kind, end, time, detail };
            match out.iter_mut().find(|s| s.step_id == id) {
                Some(s) => *s = e,
                None => out.push(e),
            }
        };
        let writes = self.steps();
        for (line, rec) in &self.records {
            match &rec.body {
                Body::Step(s) => {
                    let end = match s.result {
                        StepResult::Done => StepEnd::Done,
                        StepResult::Failed => StepEnd::Failed,
                        StepResult::Skipped => StepEnd::Skipped,
                    };
                    put(&s.step_id, s.kind, end, rec.time, s.detail.clone());
                }
                Body::Backup(b) => {
                    let id = self.backup_step_id(*line).unwrap_or_else(|| "backup".to_string());
                    let what = format!("{} file(s), snapshot {}", b.files.len(), b.snapshot.as_deref().unwrap_or("-"));
                    put(&id, StepType::Backup, StepEnd::Done, rec.time, what);
                }
                Body::Intent(i) => {
                    let Some(w) = writes.iter().find(|w| w.line == *line) else { continue };
                    let (end, detail) = match &w.outcome {
                        Some(o) if o.ok => (StepEnd::Done, super::outcome_text(o)),
                        Some(o) => (StepEnd::Failed, super::outcome_text(o)),
                        None => (StepEnd::Interrupted, "intent without outcome".to_string()),
                    };
                    let kind = if self.backup_step_id(*line).is_some() { StepType::Backup } else { StepType::Act };
                    put(&i.step_id, kind, end, rec.time, detail);
                }
                _ => {}
            }
        }
        out
    }

    /// Steps whose newest evidence is a failure (interrupted writes are counted apart).
    pub fn failed_steps(&self) -> usize {
        self.step_ends().iter().filter(|s| s.end == StepEnd::Failed).count()
    }

    /// The step id of the Backup step a record at `line` belongs to: a `backup` record, or the
    /// snapshot intent the backup journals first (`rbd snap create`), by the intent's step id.
    fn backup_step_id(&self, line: usize) -> Option<String> {
        let rec = self.records.iter().find(|(l, _)| *l == line).map(|(_, r)| r)?;
        match &rec.body {
            Body::Intent(i) if matches!(i.action, crate::remedy::action::WriteAction::SnapCreate { .. }) => {
                Some(i.step_id.clone())
            }
            // the newest snapshot intent before the backup record names its step
            Body::Backup(_) => self.records.iter().rev().filter(|(l, _)| *l < line).find_map(|(_, r)| match &r.body {
                Body::Intent(i) if matches!(i.action, crate::remedy::action::WriteAction::SnapCreate { .. }) => {
                    Some(i.step_id.clone())
                }
                _ => None,
            }),
            _ => None,
        }
    }
}
