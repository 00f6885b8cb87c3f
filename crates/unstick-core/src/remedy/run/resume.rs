//! A playbook run belongs to the incident, not to the popup: the state of every step is derived
//! from the incident journal, so closing and reopening a playbook (or restarting the console)
//! resumes where the run stopped.
//!
//! Per step, the newest journal evidence for its id wins (file order):
//! - Backup: the newest `backup` record (reused only after [`crate::remedy::run::backup::reverify`] found its
//!   files and snapshot still intact), or the failed snapshot intent after it;
//! - Act: the newest intent of the step with the same action (done, failed; done then undone by a
//!   successful undo is [`StepState::Undone`]), or a `step` record (change already in effect);
//! - Check, Verify, Wait, Manual, skipped steps: the newest `step` record.
//!
//! The cursor is the first step that is neither done nor skipped; every step after it is pending
//! again (its evidence predates an undo or a failure, so it must run again).

use crate::remedy::journal::BackupRecord;
use crate::remedy::journal::step::{StepResult, StepState, step_label};
use crate::remedy::journal::{Body, JournalReport, WriteStatus, outcome_text};
use crate::remedy::playbook::{Playbook, StepKind};

/// The run state derived from a journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumed {
    /// Index of the current step (`steps.len()` when every step is finished).
    pub cursor: usize,
    /// State of every step.
    pub states: Vec<StepState>,
    /// The journaled backup the Backup step's `Done` rests on (to be re-verified before reuse).
    pub backup: Option<BackupRecord>,
}

impl Resumed {
    /// True when the journal holds nothing about this playbook.
    pub fn is_fresh(&self) -> bool {
        self.cursor == 0 && self.states.iter().all(|s| *s == StepState::Pending)
    }

    /// The journaled backup could not be re-verified (`why`): the run restarts at the Backup step,
    /// which shows why; nothing after it is reachable until a new backup is verified.
    pub fn backup_invalid(&mut self, why: &str) {
        self.backup = None;
        for s in self.states.iter_mut() {
            *s = StepState::Pending;
        }
        if let Some(s) = self.states.first_mut() {
            *s = StepState::Failed(format!("the journaled backup is no longer valid ({why}): back up again"));
        }
        self.cursor = 0;
    }
}

fn time(rep: &JournalReport, line: usize) -> String {
    rep.records
        .iter()
        .find(|(l, _)| *l == line)
        .map(|(_, r)| r.time.strftime("%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// The state of every step of `playbook` from the incident journal `rep`.
pub fn derive(playbook: &Playbook, rep: &JournalReport) -> Resumed {
    let steps = rep.steps();
    let mut backup = None;
    let mut states: Vec<StepState> = Vec::with_capacity(playbook.steps.len());
    for step in &playbook.steps {
        // (line, state) candidates; the newest wins
        let mut found: Vec<(usize, StepState)> = Vec::new();
        for (line, rec) in &rep.records {
            match &rec.body {
                Body::Step(s) if s.step_id == step.id => found.push((
                    *line,
                    match s.result {
                        StepResult::Done => StepState::Done(format!("{} (journaled {})", s.detail, time(rep, *line))),
                        StepResult::Failed => StepState::Failed(s.detail.clone()),
                        StepResult::Skipped => StepState::Skipped(s.detail.clone()),
                    },
                )),
                Body::Backup(b) if matches!(step.kind, StepKind::Backup(_)) => {
                    let what = format!(
                        "{} file(s){}, journaled {}",
                        b.files.len(),
                        b.snapshot.as_ref().map(|s| format!(", snapshot {s}")).unwrap_or_default(),
                        time(rep, *line)
                    );
                    found.push((*line, StepState::Done(what)));
                    backup = Some(b.clone());
                }
                _ => {}
            }
        }
        for s in steps.iter().filter(|s| s.intent.step_id == step.id && s.intent.undo_of.is_none()) {
            let state = match (&step.kind, &s.status) {
                (StepKind::Act(a), WriteStatus::Done) if a.summary() == s.intent.action.summary() => {
                    let undo =
                        steps.iter().find(|u| u.intent.undo_of == Some(s.intent.step) && u.status == WriteStatus::Done);
                    match undo {
                        Some(u) => StepState::Undone(format!(
                            "done, then undone at {} ({})",
                            u.record.time.strftime("%H:%M:%SZ"),
                            u.intent.action.summary()
                        )),
                        None => StepState::Done(format!("{} (journaled {})", outcome_ok(s), time(rep, s.line))),
                    }
                }
                (StepKind::Act(a), WriteStatus::Failed) if a.summary() == s.intent.action.summary() => {
                    StepState::Failed(s.outcome.as_ref().map(outcome_text).unwrap_or_default())
                }
                (StepKind::Backup(_), WriteStatus::Failed) => StepState::Failed(format!(
                    "snapshot failed: {}",
                    s.outcome.as_ref().map(outcome_text).unwrap_or_default()
                )),
                _ => continue,
            };
            found.push((s.line, state));
        }
        let newest = found.into_iter().max_by_key(|(l, _)| *l).map(|(_, s)| s);
        states.push(newest.unwrap_or(StepState::Pending));
    }
    // a Wait that timed out is passed (the runner moves on after its timeout, journaled)
    let passed = |i: usize, s: &StepState| {
        s.is_finished()
            || (matches!(s, StepState::Failed(_)) && matches!(playbook.steps[i].kind, StepKind::Wait { .. }))
    };
    let cursor = states.iter().enumerate().position(|(i, s)| !passed(i, s)).unwrap_or(states.len());
    for s in states.iter_mut().skip(cursor + 1) {
        *s = StepState::Pending;
    }
    if !states.first().is_some_and(|s| matches!(s, StepState::Done(_))) {
        backup = None;
    }
    Resumed { cursor, states, backup }
}

fn outcome_ok(s: &crate::remedy::journal::StepView) -> String {
    match s.outcome.as_ref().map(|o| o.stderr.as_str()) {
        Some(e) if !e.is_empty() => e.to_string(),
        _ => "ok".to_string(),
    }
}

/// One line saying where a resumed run stands (the playbook's message line).
pub fn summary(playbook: &Playbook, r: &Resumed) -> String {
    let done = r.states.iter().filter(|s| s.is_finished()).count();
    match playbook.steps.get(r.cursor) {
        Some(s) => format!(
            "resumed from the journal: {done} of {} step(s) finished; next is {}",
            playbook.steps.len(),
            step_label(&s.id)
        ),
        None => format!("resumed from the journal: all {} steps finished", playbook.steps.len()),
    }
}

#[cfg(test)]
#[path = "resume_tests.rs"]
mod tests;
