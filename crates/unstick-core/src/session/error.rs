//! The one error type of session logs: IO on a named file, bad or unknown session ids.

use std::path::PathBuf;

/// A session log error, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Reading, writing or syncing failed.
    #[error("session log {path}: {op}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A session id with characters other than `[A-Za-z0-9._-]`, empty, or too long.
    #[error("invalid session id {0:?} (allowed: letters, digits, '.', '_', '-')")]
    BadId(String),
    /// [`SessionLog::start`](super::log::SessionLog::start) on a log that already has records.
    #[error("session log {0} already exists; pick a new session id")]
    Exists(PathBuf),
    /// A record could not be serialized for redaction (nothing was written).
    #[error("session record could not be serialized: {0}")]
    Redaction(String),
    /// No session with this id or path.
    #[error("no session {0:?} (see `unstick sessions`)")]
    NotFound(String),
    /// A prefix that several session ids start with.
    #[error("{0:?} matches {n} sessions: {list} (type more of the id)", n = .1.len(), list = .1.join(", "))]
    Ambiguous(String, Vec<String>),
}
