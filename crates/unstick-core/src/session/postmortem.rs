//! The postmortem model a session log is exported as (`docs/session-export.md`): the JSON
//! schema as it is serialized, and what the Markdown renderer reads. Built by
//! [`super::export`], rendered by [`super::markdown`]; neither knows the other's internals.

use jiff::Timestamp;
use serde::Serialize;

use super::log::{EvidenceRecord, Mode, StepResult, Writes};

#[derive(Debug, Serialize)]
pub(super) struct Postmortem {
    pub(super) format: &'static str,
    pub(super) version: u32,
    pub(super) session: String,
    pub(super) summary: Summary,
    pub(super) affected_objects: Vec<String>,
    pub(super) timeline: Vec<TimelineEntry>,
    pub(super) findings: Vec<FindingEntry>,
    pub(super) confirmations: Vec<ConfirmationEntry>,
    pub(super) actions: Vec<ActionEntry>,
    pub(super) steps: Vec<StepEntry>,
    pub(super) backups: Vec<BackupEntry>,
    pub(super) undos: Vec<UndoEntry>,
    pub(super) notes: Vec<NoteEntry>,
    pub(super) debriefs: Vec<NoteEntry>,
    pub(super) unreadable_lines: Vec<ProblemEntry>,
    /// The first moment a pod of a cleared finding's volume was seen Running.
    pub(super) service_restored: Option<Restored>,
    /// What the session left in place ([`super::followups`]).
    pub(super) left_to_clean_up: Vec<String>,
    /// Which clock the times are on ([`super::followups::clock`]).
    pub(super) clock: String,
}

#[derive(Debug, Serialize)]
pub(super) struct Restored {
    pub(super) time: Timestamp,
    pub(super) pod: String,
}

#[derive(Debug, Default, Serialize)]
pub(super) struct Summary {
    pub(super) context: Option<String>,
    pub(super) operator: Option<String>,
    pub(super) unstick_version: Option<String>,
    pub(super) mode: Option<Mode>,
    pub(super) writes: Option<Writes>,
    pub(super) started: Option<Timestamp>,
    pub(super) ended: Option<Timestamp>,
    pub(super) last_record: Option<Timestamp>,
    pub(super) duration_seconds: Option<i64>,
    pub(super) counts: Counts,
}

#[derive(Debug, Default, Serialize)]
pub(super) struct Counts {
    pub(super) findings_appeared: usize,
    pub(super) findings_cleared: usize,
    /// Accepted, and the write was sent.
    pub(super) confirmations_accepted: usize,
    /// Accepted, but nothing was sent: the re-check before sending refused it.
    pub(super) confirmations_not_sent: usize,
    pub(super) confirmations_declined: usize,
    pub(super) actions: usize,
    pub(super) actions_failed: usize,
    pub(super) steps_done: usize,
    pub(super) steps_failed: usize,
    pub(super) steps_skipped: usize,
    pub(super) backups: usize,
    pub(super) undos: usize,
    pub(super) notes: usize,
    pub(super) unreadable_lines: usize,
}

#[derive(Debug, Serialize)]
pub(super) struct TimelineEntry {
    pub(super) time: Timestamp,
    pub(super) event: String,
    pub(super) text: String,
}

#[derive(Debug, Serialize)]
pub(super) struct FindingEntry {
    pub(super) id: String,
    pub(super) pattern: String,
    pub(super) severity: String,
    pub(super) summary: String,
    pub(super) appeared: Timestamp,
    pub(super) cleared: Option<Timestamp>,
    pub(super) objects: Vec<String>,
    pub(super) evidence: Vec<EvidenceRecord>,
}

#[derive(Debug, Serialize)]
pub(super) struct ConfirmationEntry {
    pub(super) time: Timestamp,
    pub(super) step_id: String,
    pub(super) command: String,
    pub(super) objects: Vec<String>,
    pub(super) reversible: bool,
    pub(super) inverse: String,
    pub(super) accepted: bool,
    /// Accepted and followed by its write (false: refused before sending, or declined).
    pub(super) sent: bool,
}

#[derive(Debug, Serialize)]
pub(super) struct ActionEntry {
    pub(super) time: Timestamp,
    pub(super) step_id: String,
    pub(super) command: String,
    pub(super) ok: bool,
    pub(super) outcome: String,
    pub(super) exit_code: Option<i32>,
    pub(super) api_status: Option<u16>,
    pub(super) duration_ms: u64,
    pub(super) sent: Option<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct StepEntry {
    pub(super) time: Timestamp,
    pub(super) step_id: String,
    pub(super) kind: String,
    pub(super) title: String,
    pub(super) result: StepResult,
    pub(super) detail: String,
}

#[derive(Debug, Serialize)]
pub(super) struct BackupEntry {
    pub(super) time: Timestamp,
    pub(super) paths: Vec<String>,
    pub(super) snapshot: Option<String>,
    /// The commands the backup ran (`rbd snap create pool/image@snap`).
    pub(super) commands: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(super) struct UndoEntry {
    pub(super) time: Timestamp,
    pub(super) step: u32,
    pub(super) command: String,
    pub(super) ok: bool,
    pub(super) outcome: String,
}

#[derive(Debug, Serialize)]
pub(super) struct NoteEntry {
    pub(super) time: Timestamp,
    pub(super) text: String,
}

#[derive(Debug, Serialize)]
pub(super) struct ProblemEntry {
    pub(super) line: usize,
    pub(super) error: String,
    pub(super) excerpt: String,
}

/// A duration in milliseconds as the export prints it: `850 ms`, `1.2 s`.
pub(super) fn ms(d: u64) -> String {
    if d < 1000 { format!("{d} ms") } else { format!("{}.{:01} s", d / 1000, (d % 1000) / 100) }
}
