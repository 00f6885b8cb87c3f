//! The session log: one JSONL file per console session, `<base>/<id>.jsonl` (`base` is
//! `$XDG_STATE_HOME/unstick/sessions` by default, see [`super::default_base`]).
//!
//! Each line is one [`SessionRecord`]: schema version `v`, UTC `time` (RFC 3339), `session` id, and the
//! [`SessionEvent`] flattened in, tagged by `event` (`start`, `finding-appeared`, `finding-cleared`,
//! `viewed`, `confirmation`, `action`, `step`, `debrief`, `backup`, `undo`, `note`, `end`; a kind
//! written by a newer version is read as [`SessionEvent::Unknown`]).
//!
//! Every record is redacted ([`Redactor`]) before it is serialized, written with one `write`, and
//! fsync'd. Reading never modifies the file: a line that does not parse (a crash mid-write leaves a
//! truncated last line) is reported with its file and line number and kept; the next append starts
//! on a fresh line.

use std::fs::File;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::error::SessionError;
use super::redact::Redactor;
use crate::diagnose::{Evidence, Finding};
pub use crate::jsonl::LineProblem;

/// Session log schema version written in every record (`v`).
pub const SCHEMA_VERSION: u32 = 1;

/// What the console was looking at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A live cluster.
    Live,
    /// An embedded or user training scenario (`unstick train`).
    Training,
    /// A support bundle (`--bundle`).
    Bundle,
}

impl Mode {
    /// `live`, `training`, `bundle`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Live => "live",
            Mode::Training => "training",
            Mode::Bundle => "bundle",
        }
    }
}

/// What the console could write during a session (the `--read-only` / `--dry-run` flags), logged
/// in `start` as `writes` beside the [`Mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writes {
    /// Writes are possible after backup, re-check and confirmation.
    Live,
    /// `--dry-run`: confirmations are shown from a live re-check; nothing is sent.
    DryRun,
    /// `--read-only`: no write path exists.
    ReadOnly,
}

impl Writes {
    /// What the command line's `--read-only` and `--dry-run` allow (`--read-only` wins).
    pub fn from_flags(read_only: bool, dry_run: bool) -> Self {
        match (read_only, dry_run) {
            (true, _) => Writes::ReadOnly,
            (false, true) => Writes::DryRun,
            (false, false) => Writes::Live,
        }
    }

    /// `live`, `dry-run`, `read-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Writes::Live => "live",
            Writes::DryRun => "dry-run",
            Writes::ReadOnly => "read-only",
        }
    }
}

/// One evidence line of a logged finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRecord {
    /// Evidence source id (`event`, `rbd-status`, ...; see `docs/diagnose-json.md`).
    pub source: String,
    /// The line (sanitized, redacted).
    pub text: String,
    /// When the fact was observed (UTC).
    pub observed_at: Timestamp,
}

/// A finding as logged: enough to explain it in a postmortem without the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingRecord {
    /// Stable finding id (`stale-lock:replicapool/img`).
    pub id: String,
    /// Pattern id (`stale-lock`).
    pub pattern: String,
    /// `critical`, `warning` or `info`.
    pub severity: String,
    /// One-line summary.
    pub summary: String,
    /// Objects involved, as labels (`Pod ns/name`, `RbdImage pool/image`).
    pub objects: Vec<String>,
    /// The evidence lines.
    pub evidence: Vec<EvidenceRecord>,
}

fn evidence_record(e: &Evidence) -> EvidenceRecord {
    let source = serde_json::to_value(e.source)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{:?}", e.source));
    EvidenceRecord { source, text: e.text.clone(), observed_at: e.observed_at }
}

impl From<&Finding> for FindingRecord {
    fn from(f: &Finding) -> Self {
        FindingRecord {
            id: f.id.clone(),
            pattern: f.pattern.as_str().to_string(),
            severity: f.severity.as_str().to_string(),
            summary: f.summary.clone(),
            objects: f.objects.iter().map(|o| o.label()).collect(),
            evidence: f.evidence.iter().map(evidence_record).collect(),
        }
    }
}

/// One thing that happened in a session, tagged by `event` in the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum SessionEvent {
    /// The session began (always the first record).
    Start {
        /// kubeconfig context, scenario name or bundle path.
        context: String,
        /// `user@host` ([`crate::remedy::journal::operator`]).
        operator: String,
        /// unstick version (`CARGO_PKG_VERSION`).
        version: String,
        /// Live, training or bundle.
        mode: Mode,
        /// What the console could write (absent in logs of older versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        writes: Option<Writes>,
    },
    /// A finding appeared in a diagnosis (see [`diff_findings`]).
    FindingAppeared {
        /// The finding with its evidence.
        finding: FindingRecord,
    },
    /// A finding no longer appears.
    FindingCleared {
        /// Its id.
        id: String,
    },
    /// The operator looked at a pane (and an object in it).
    Viewed {
        /// Pane name (`pods`, `volumes`, `playbook`, ...).
        pane: String,
        /// Object label, if one was selected.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        object: Option<String>,
    },
    /// A confirmation popup was answered.
    Confirmation {
        /// Playbook step id (`stale-lock/3`) or `undo`.
        step_id: String,
        /// The exact command (argv or API verb + resource + patch).
        command: String,
        /// Objects touched.
        objects: Vec<String>,
        /// Whether the step can be undone.
        reversible: bool,
        /// The inverse command, or why there is none.
        inverse: String,
        /// True when the operator confirmed; false when cancelled.
        accepted: bool,
    },
    /// An action ran (after an accepted confirmation).
    Action {
        /// Playbook step id.
        step_id: String,
        /// The exact command.
        command: String,
        /// True when the call succeeded.
        ok: bool,
        /// One-line outcome (`exit 0`, `HTTP 409: conflict`, stderr).
        outcome: String,
        /// Exit code of a CLI call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// HTTP status of an API call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_status: Option<u16>,
        /// Wall time, milliseconds.
        duration_ms: u64,
        /// The request as sent, every value real (full argv, or API verb + resource + body with
        /// the `resourceVersion`, UID and list indexes read just before sending); absent when
        /// nothing was sent, and in logs of older versions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sent: Option<String>,
    },
    /// A playbook step other than a write ran, failed or was skipped: Check, Verify, Wait,
    /// Manual, Backup, and Act steps refused before anything was sent.
    Step {
        /// Playbook step id (`stale-lock/2`).
        step_id: String,
        /// Step kind, lowercase (`check`, `verify`, `wait`, `manual`, `backup`, `act`).
        kind: String,
        /// The step's title, as the playbook shows it.
        #[serde(default)]
        title: String,
        /// Done, failed or skipped.
        result: StepResult,
        /// What was seen (Verify conditions with their values), why it failed, or why it was skipped.
        detail: String,
    },
    /// The service came back: a pod using the volume of a finding that just cleared was seen
    /// Running (observed state, on the console's refresh).
    Restored {
        /// The finding that cleared.
        finding: String,
        /// `namespace/name` of the Running pod.
        pod: String,
    },
    /// The training debrief, as shown when every goal was met.
    Debrief {
        /// Scenario name.
        scenario: String,
        /// The debrief's lines.
        text: String,
    },
    /// A record of a kind this version does not know (written by a newer unstick): kept by
    /// name with its fields, never written by this version.
    Unknown {
        /// The record's `event` value.
        name: String,
        /// Its other fields.
        fields: serde_json::Value,
    },
    /// A verified backup was written.
    Backup {
        /// Files written (absolute paths).
        paths: Vec<String>,
        /// `pool/image@snap`, if a snapshot was taken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot: Option<String>,
    },
    /// A journaled step was undone.
    Undo {
        /// The journal step number undone.
        step: u32,
        /// The undoing command.
        command: String,
        /// True when the undo succeeded.
        ok: bool,
        /// One-line outcome.
        outcome: String,
    },
    /// The console switched kubeconfig context (`:ctx NAME`, the fleet view's Enter): the old
    /// context's watches, Ceph worker and remediation service (its Lease, its journal) were closed,
    /// the new one's started. The records after it are the new context's.
    ContextSwitch {
        /// The context left.
        from: String,
        /// The context now shown.
        to: String,
    },
    /// A free-text note from the operator.
    Note {
        /// The text (may span lines).
        text: String,
    },
    /// The session ended cleanly.
    End,
}

/// How a [`SessionEvent::Step`] ended: the same result the journal's `step` records carry.
pub use crate::remedy::journal::step::StepResult;

/// One session log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub v: u32,
    /// When it happened (UTC).
    pub time: Timestamp,
    /// Session id (the file stem).
    pub session: String,
    /// What happened.
    #[serde(flatten)]
    pub event: SessionEvent,
}

/// The events that turn finding list `before` into `after`: `FindingCleared` for ids gone (in
/// `before` order), then `FindingAppeared` for new ids (in `after` order). A finding whose id
/// stays is not reported, even if its evidence changed. Call after each re-diagnosis.
pub fn diff_findings(before: &[Finding], after: &[Finding]) -> Vec<SessionEvent> {
    let mut out: Vec<SessionEvent> = before
        .iter()
        .filter(|b| !after.iter().any(|a| a.id == b.id))
        .map(|b| SessionEvent::FindingCleared { id: b.id.clone() })
        .collect();
    out.extend(
        after
            .iter()
            .filter(|a| !before.iter().any(|b| b.id == a.id))
            .map(|a| SessionEvent::FindingAppeared { finding: a.into() }),
    );
    out
}

fn io(path: &Path, op: &'static str) -> impl FnOnce(std::io::Error) -> SessionError {
    let path = path.to_path_buf();
    move |source| SessionError::Io { path, op, source }
}

/// True for ids made of `[A-Za-z0-9._-]`, not starting with `.`, at most 128 characters.
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// An open session log for appending.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    file: File,
    id: String,
    redactor: Redactor,
}

impl SessionLog {
    /// Opens (creating if needed, with `base`) `<base>/<id>.jsonl` for appending. A new file and
    /// its directory are fsync'd; a truncated last line gets a newline so it stays intact.
    ///
    /// Errors: [`SessionError::BadId`] for an id outside [`valid_session_id`]; IO errors with path.
    pub fn open(base: &Path, id: &str, redactor: Redactor) -> Result<Self, SessionError> {
        if !valid_session_id(id) {
            return Err(SessionError::BadId(id.to_string()));
        }
        let created_base = !base.exists();
        std::fs::create_dir_all(base).map_err(io(base, "create directory"))?;
        if created_base && let Some(parent) = base.parent().filter(|p| !p.as_os_str().is_empty()) {
            let _ = crate::jsonl::sync_dir(parent);
        }
        let path = base.join(format!("{id}.jsonl"));
        let file = crate::jsonl::open_append(&path, None).map_err(|e| SessionError::Io {
            path: e.path,
            op: e.op,
            source: e.source,
        })?;
        Ok(Self { path, file, id: id.to_string(), redactor })
    }

    /// Creates `<base>/<id>.jsonl` and writes the `start` record at `time`.
    ///
    /// Errors: as [`SessionLog::open`], plus [`SessionError::Exists`] when the file has content.
    pub fn start(
        base: &Path,
        id: &str,
        redactor: Redactor,
        start: SessionEvent,
        time: Timestamp,
    ) -> Result<Self, SessionError> {
        let mut log = Self::open(base, id, redactor)?;
        let len = log.file.metadata().map_err(io(&log.path, "stat"))?.len();
        if len > 0 {
            return Err(SessionError::Exists(log.path.clone()));
        }
        log.append_at(time, start)?;
        Ok(log)
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Appends `event` stamped `time`: redacted, serialized, written in one `write`, fsync'd.
    ///
    /// Errors: IO with the file path; [`SessionError::Redaction`] if the record cannot be redacted
    /// (then nothing is written).
    pub fn append_at(&mut self, time: Timestamp, event: SessionEvent) -> Result<(), SessionError> {
        let rec = SessionRecord { v: SCHEMA_VERSION, time, session: self.id.clone(), event };
        let mut value = serde_json::to_value(&rec).map_err(|e| SessionError::Redaction(e.to_string()))?;
        self.redactor.redact_value(&mut value);
        let line = serde_json::to_vec(&value).map_err(|e| SessionError::Redaction(e.to_string()))?;
        crate::jsonl::append_line(&mut self.file, &line).map_err(io(&self.path, "append"))
    }

    /// Appends the [`diff_findings`] events between two diagnoses, stamped `time`. Returns how many.
    pub fn findings_changed(
        &mut self,
        time: Timestamp,
        before: &[Finding],
        after: &[Finding],
    ) -> Result<usize, SessionError> {
        let events = diff_findings(before, after);
        let n = events.len();
        for e in events {
            self.append_at(time, e)?;
        }
        Ok(n)
    }

    /// Appends a note stamped `time`.
    pub fn note(&mut self, time: Timestamp, text: &str) -> Result<(), SessionError> {
        self.append_at(time, SessionEvent::Note { text: text.to_string() })
    }

    /// Appends the `end` record stamped `time`.
    pub fn end(&mut self, time: Timestamp) -> Result<(), SessionError> {
        self.append_at(time, SessionEvent::End)
    }
}

/// Everything read from one session log.
#[derive(Debug, Clone, Default)]
pub struct SessionReport {
    /// The file.
    pub path: PathBuf,
    /// Records with their 1-based line numbers, in file order.
    pub records: Vec<(usize, SessionRecord)>,
    /// Lines that could not be read (kept in the file).
    pub problems: Vec<LineProblem>,
}

/// Reads a session log file. Never modifies it.
///
/// Errors: only IO (with path); unreadable lines are [`LineProblem`]s whose excerpt is sanitized
/// and redacted.
pub fn read(path: &Path) -> Result<SessionReport, SessionError> {
    let bytes = std::fs::read(path).map_err(io(path, "read"))?;
    Ok(parse(path, &bytes, &Redactor::builtin()))
}

/// Parses session log bytes (`path` only names the file in problems). Never panics.
pub fn parse(path: &Path, bytes: &[u8], redactor: &Redactor) -> SessionReport {
    let excerpt = |text: &str| redactor.redact(&crate::text::sanitize(text));
    let (records, problems) = crate::jsonl::parse_lines::<SessionRecord>(path, bytes, excerpt);
    SessionReport { path: path.to_path_buf(), records, problems }
}

impl crate::jsonl::Versioned for SessionRecord {
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;
    const KIND: &'static str = "session";
    fn version(&self) -> u32 {
        self.v
    }

    fn fallback(raw: &[u8]) -> Option<Self> {
        unknown_kind(raw)
    }
}

/// Event names this version reads (the `event` tags of [`SessionEvent`]).
const KNOWN: &[&str] = &[
    "start",
    "finding-appeared",
    "finding-cleared",
    "viewed",
    "confirmation",
    "action",
    "step",
    "debrief",
    "restored",
    "unknown",
    "backup",
    "undo",
    "note",
    "end",
];

/// A well-formed record whose `event` this version does not know, as [`SessionEvent::Unknown`]; `None`
/// for anything else (a known kind that does not parse stays an unreadable line).
fn unknown_kind(raw: &[u8]) -> Option<SessionRecord> {
    let serde_json::Value::Object(mut m) = serde_json::from_slice(raw).ok()? else { return None };
    let name = m.get("event")?.as_str()?.to_string();
    if KNOWN.contains(&name.as_str()) {
        return None;
    }
    let v = u32::try_from(m.get("v")?.as_u64()?).ok()?;
    let time: Timestamp = m.get("time")?.as_str()?.parse().ok()?;
    let session = m.get("session")?.as_str()?.to_string();
    for k in ["v", "time", "session", "event"] {
        m.remove(k);
    }
    Some(SessionRecord {
        v,
        time,
        session,
        event: SessionEvent::Unknown { name, fields: serde_json::Value::Object(m) },
    })
}

/// The fields of a session's `start` event ([`SessionReport::start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartInfo<'a> {
    /// The kube context.
    pub context: &'a str,
    /// Who ran the console (`user@host`).
    pub operator: &'a str,
    /// The console's version.
    pub version: &'a str,
    /// Live, dry-run or read-only.
    pub mode: Mode,
}

impl SessionReport {
    /// The `start` event's fields, if present.
    pub fn start(&self) -> Option<StartInfo<'_>> {
        self.records.iter().find_map(|(_, r)| match &r.event {
            SessionEvent::Start { context, operator, version, mode, .. } => {
                Some(StartInfo { context, operator, version, mode: *mode })
            }
            _ => None,
        })
    }

    /// Time of the first record.
    pub fn started(&self) -> Option<Timestamp> {
        self.records.first().map(|(_, r)| r.time)
    }

    /// Time of the `end` record, if the session ended cleanly.
    pub fn ended(&self) -> Option<Timestamp> {
        self.records.iter().rev().find_map(|(_, r)| matches!(r.event, SessionEvent::End).then_some(r.time))
    }

    /// Time of the last record.
    pub fn last(&self) -> Option<Timestamp> {
        self.records.last().map(|(_, r)| r.time)
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
