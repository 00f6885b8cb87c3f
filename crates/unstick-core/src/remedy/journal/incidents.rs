//! The incidents under a journal base directory: one line per incident directory (`unstick
//! journal`, the console's interrupted-step check, training's debrief), the interrupted steps of
//! them all, and the incident a restarted console continues.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::remedy::journal::{JOURNAL_FILE, JournalError, WriteStatus, incident_topic, new_incident_id, read};

/// One incident directory.
#[derive(Debug, Clone)]
pub struct IncidentSummary {
    /// Incident id (directory name).
    pub id: String,
    /// The journal file.
    pub path: PathBuf,
    /// Time of the first record, if any.
    pub started: Option<Timestamp>,
    /// Number of steps (intents).
    pub steps: usize,
    /// Steps interrupted.
    pub interrupted: usize,
    /// Unreadable lines, and steps whose newest journal record is a failure (a Verify that did not
    /// hold, a Wait that timed out, a write that failed: [`crate::remedy::journal::JournalReport::failed_steps`]).
    pub problems: usize,
}

/// Lists the incidents under `base`, oldest first (ids start with a UTC timestamp). A missing
/// `base` is an empty list; an unreadable journal is listed with its problem count.
pub fn list_incidents(base: &Path) -> Result<Vec<IncidentSummary>, JournalError> {
    let entries = match std::fs::read_dir(base) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(JournalError::Io { path: base.to_path_buf(), op: "list", source: e }),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path().join(JOURNAL_FILE);
        if !path.is_file() {
            continue;
        }
        let id = e.file_name().to_string_lossy().into_owned();
        let summary = match read(&path) {
            Ok(r) => {
                let steps = r.steps();
                IncidentSummary {
                    id,
                    started: r.records.first().map(|(_, rec)| rec.time),
                    steps: steps.len(),
                    interrupted: steps.iter().filter(|s| s.status == WriteStatus::Interrupted).count(),
                    problems: r.problems.len() + r.failed_steps(),
                    path,
                }
            }
            Err(_) => IncidentSummary { id, path, started: None, steps: 0, interrupted: 0, problems: 1 },
        };
        out.push(summary);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// A step whose write may or may not have happened (its journal has the intent but no outcome):
/// shown as a banner at start, never retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterruptedStep {
    /// The incident id (the journal's file stem).
    pub incident: String,
    /// The step number (1-based, as the journal records it).
    pub step: u32,
    /// One line saying what the step was writing.
    pub summary: String,
}

/// Interrupted steps of every incident journal under `base`, in incident order (unreadable
/// journals are skipped: the `unstick journal` listing shows their problems).
pub fn interrupted_steps(base: &Path) -> Vec<InterruptedStep> {
    let mut out = Vec::new();
    for inc in list_incidents(base).unwrap_or_default().into_iter().filter(|i| i.interrupted > 0) {
        if let Ok(rep) = read(&inc.path) {
            for s in rep.interrupted() {
                out.push(InterruptedStep {
                    incident: inc.id.clone(),
                    step: s.intent.step,
                    summary: s.intent.action.summary(),
                });
            }
        }
    }
    out
}

/// The newest incident under `base` for `pattern` on `subject` started within a day of `now`, so a
/// restarted console continues its journal (interrupted steps, undo). `None` also when `base`
/// cannot be listed.
pub fn find_incident(base: &Path, pattern: &str, subject: &str, now: Timestamp) -> Option<String> {
    let fresh = new_incident_id(pattern, subject, now);
    let topic = incident_topic(&fresh)?;
    list_incidents(base)
        .ok()?
        .into_iter()
        .rev()
        .filter(|i| incident_topic(&i.id) == Some(topic))
        .find(|i| i.started.is_some_and(|t| (now - t).get_seconds() < 86_400))
        .map(|i| i.id)
}

#[cfg(test)]
#[path = "incidents_tests.rs"]
mod tests;
