//! Session logs and postmortem export.
//!
//! Every console session (live, training or bundle) writes a JSONL log ([`log`]) in
//! `$XDG_STATE_HOME/unstick/sessions/<id>.jsonl`; [`export`](mod@export) lists the logs and turns one into a
//! postmortem timeline (Markdown or JSON, documented in `docs/session-export.md`). Secrets are
//! removed by [`redact`] before anything is written, and again on export.

mod convert;
mod error;
pub mod export;
mod followups;
pub mod log;
mod markdown;
mod pick;
mod postmortem;
pub mod redact;

use std::path::PathBuf;

use jiff::Timestamp;

pub use self::convert::inverse_text;
pub use self::error::SessionError;
pub use self::export::{Format, SessionSummary, export, export_with, list, render};
pub use self::log::{
    FindingRecord, Mode, SessionEvent, SessionLog, SessionRecord, SessionReport, Writes, diff_findings, read,
};
pub use self::redact::{REDACTED, Redactor};

/// The default log directory: `$XDG_STATE_HOME/unstick/sessions` ([`crate::dirs::state_dir`]).
pub fn default_base() -> PathBuf {
    crate::dirs::state_dir().join("sessions")
}

/// The log directory from `[session] dir` (empty = [`default_base`]).
pub fn base_from_config(dir: &str) -> PathBuf {
    if dir.is_empty() { default_base() } else { PathBuf::from(dir) }
}

/// The session log directory of a `[session]` config ([`base_from_config`] of its `dir`).
pub fn base(cfg: &crate::config::SessionConfig) -> PathBuf {
    base_from_config(&cfg.dir)
}

/// The redactor of a `[session]` config: built-in rules plus its `redact_patterns`. Errors: a
/// pattern that does not compile (the config loader already refuses those).
pub fn redactor(cfg: &crate::config::SessionConfig) -> Result<Redactor, redact::PatternError> {
    Redactor::new(&cfg.redact_patterns)
}

/// A new session id: `<UTC yyyymmddThhmmssZ>-<mode>-<context>`, lowercased, other characters
/// mapped to `-`, at most 80 characters (`20261122t051500z-live-prod-east`).
pub fn new_session_id(mode: Mode, context: &str, now: Timestamp) -> String {
    let raw = format!("{}-{}-{context}", now.strftime("%Y%m%dT%H%M%SZ"), mode.as_str());
    let mut id: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    while id.contains("--") {
        id = id.replace("--", "-");
    }
    id.truncate(80);
    id.trim_end_matches('-').to_string()
}

/// [`new_session_id`] plus a random 4-hex-digit suffix (`…-live-prod-east-3f9a`), so two
/// sessions started in the same second with the same context each get their own log.
pub fn unique_session_id(mode: Mode, context: &str, now: Timestamp) -> String {
    format!("{}-{:04x}", new_session_id(mode, context, now), fastrand::u16(..))
}

/// Finds a session by id (`<base>/<id>.jsonl`), takes `arg` as a path when it names an existing
/// file, else `latest` or a unique id prefix. Errors: [`SessionError::NotFound`],
/// [`SessionError::Ambiguous`] (listing the candidates).
pub fn resolve(base: &std::path::Path, arg: &str) -> Result<PathBuf, SessionError> {
    let as_path = PathBuf::from(arg);
    if as_path.is_file() {
        return Ok(as_path);
    }
    let stem = arg.strip_suffix(".jsonl").unwrap_or(arg);
    if log::valid_session_id(stem) {
        let p = base.join(format!("{stem}.jsonl"));
        if p.is_file() {
            return Ok(p);
        }
    }
    // `latest`, or a unique prefix of an id
    pick::by_prefix_or_latest(base, stem)?.ok_or_else(|| SessionError::NotFound(arg.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids() {
        let t: Timestamp = "2026-11-22T05:15:00Z".parse().unwrap();
        assert_eq!(new_session_id(Mode::Live, "Prod East/1", t), "20261122t051500z-live-prod-east-1");
        assert!(log::valid_session_id(&new_session_id(Mode::Training, "", t)));
        assert!(!log::valid_session_id("../etc"));
        let (a, b) = (unique_session_id(Mode::Live, "x", t), unique_session_id(Mode::Live, "x", t));
        assert!(a.starts_with("20261122t051500z-live-x-") && a.len() == "20261122t051500z-live-x-".len() + 4, "{a}");
        assert!(log::valid_session_id(&a));
        // 65536 suffixes: two equal ones in a row would be a 1-in-65536 event, not a pattern
        let all: std::collections::BTreeSet<String> = (0..50).map(|_| unique_session_id(Mode::Live, "x", t)).collect();
        assert!(all.len() > 45, "{all:?} ({a} {b})");
    }

    #[test]
    fn resolve_by_id_or_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s1.jsonl"), "").unwrap();
        assert_eq!(resolve(dir.path(), "s1").unwrap(), dir.path().join("s1.jsonl"));
        assert_eq!(resolve(dir.path(), "s1.jsonl").unwrap(), dir.path().join("s1.jsonl"));
        let full = dir.path().join("s1.jsonl");
        assert_eq!(resolve(dir.path(), full.to_str().unwrap()).unwrap(), full);
        assert!(matches!(resolve(dir.path(), "nope"), Err(SessionError::NotFound(_))));
    }
}
