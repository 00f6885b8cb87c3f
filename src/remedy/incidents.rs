//! The incidents under a journal base directory: one line per incident directory (`unstick
//! journal`, the console's interrupted-step check, training's debrief).

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::journal::{JOURNAL_FILE, JournalError, StepStatus, read};

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
    /// Unreadable lines.
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
                    interrupted: steps.iter().filter(|s| s.status == StepStatus::Interrupted).count(),
                    problems: r.problems.len(),
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
