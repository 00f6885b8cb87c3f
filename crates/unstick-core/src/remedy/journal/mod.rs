//! The per-incident journal: an append-only JSONL file, `<base>/<incident>/journal.jsonl`, fsync'd
//! after every record (and its directory when the file is created). The file and its directory are
//! created by the first record, so opening and closing a playbook without acting leaves nothing.
//!
//! Each line is one [`JournalRecord`]: schema version `v`, UTC `time` (RFC 3339), `operator` (`user@host`),
//! kube `context`, `incident`, and a body tagged `record`: `intent` (written BEFORE an action runs:
//! step number, playbook step id, the typed action, its inverse), `outcome` (after: ok, exit code or
//! HTTP status, stderr, duration in ms), `backup` (files + checksums, snapshot), `step` (a Check,
//! Verify, Wait or Manual step's result, a skipped step: [`StepRecord`]), `note`.
//!
//! Reading never deletes or rewrites anything: a line that does not parse (a crash in the middle of
//! a write leaves a truncated last line) is reported with its file and line number and kept; the
//! next append starts on a fresh line. An intent without an outcome is reported as interrupted
//! ("state unknown, re-check") and is never retried or undone automatically.

pub mod ends;
pub mod incidents;
pub mod step;

use std::fs::File;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::clock::SharedClock;
use serde::{Deserialize, Serialize};

use crate::remedy::action::{Inverse, WriteAction};
pub use crate::remedy::journal::step::{StepRecord, StepResult, StepType};

/// Journal schema version written in every record (`v`).
pub const SCHEMA_VERSION: u32 = 1;
/// File name of the journal inside an incident directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// Who writes the records: operator and kube context, copied into every record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    /// `user@host` ([`operator`]).
    pub operator: String,
    /// kubeconfig context name.
    pub context: String,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalRecord {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub v: u32,
    /// When it was written (UTC).
    pub time: Timestamp,
    /// `user@host`.
    pub operator: String,
    /// kubeconfig context.
    pub context: String,
    /// Incident id.
    pub incident: String,
    /// The record's content.
    #[serde(flatten)]
    pub body: Body,
}

/// The content of a record, tagged by `record`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "kebab-case")]
pub enum Body {
    /// Written before an action is sent.
    Intent(Intent),
    /// Written after the action returned (or failed to be sent).
    Outcome(ActionOutcome),
    /// A verified backup.
    Backup(BackupRecord),
    /// A step that sends nothing (Check, Verify, Wait, Manual, an Act already in effect) ended, or
    /// a step was skipped.
    Step(StepRecord),
    /// Free text: a manual step confirmed, a wait that timed out, a skipped step.
    Note {
        /// Playbook step id, if any.
        #[serde(default)]
        step_id: Option<String>,
        /// The text.
        text: String,
    },
}

/// An action about to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// Step number in this journal (1, 2, ...), unique; outcomes refer to it.
    pub step: u32,
    /// Playbook step id (`stale-lock/3`) or `undo`.
    pub step_id: String,
    /// The action.
    pub action: WriteAction,
    /// Its inverse, as known when it ran.
    pub inverse: Inverse,
    /// Set when this action undoes an earlier step.
    #[serde(default)]
    pub undo_of: Option<u32>,
    /// The live precondition just re-checked (human-readable lines).
    #[serde(default)]
    pub precheck: Vec<String>,
    /// The PV the playbook acts on (names its Lease, `unstick undo` takes it); absent when the
    /// playbook is not about a volume, and in journals written before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// For a fence (blocklist add, out-of-service taint): node → its `status.nodeInfo.bootID` read
    /// live right before the write. A later unfence of the node requires a different bootID (a
    /// reboot) or a typed override. Absent for other actions and in older journals.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub boot_ids: std::collections::BTreeMap<String, String>,
}

/// The result of an action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionOutcome {
    /// The intent's step number.
    pub step: u32,
    /// True when the call succeeded.
    pub ok: bool,
    /// Exit code of a Ceph CLI call.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// HTTP status of an API call.
    #[serde(default)]
    pub api_status: Option<u16>,
    /// stderr of a CLI call, or the API error message.
    #[serde(default)]
    pub stderr: String,
    /// Wall time of the call, milliseconds.
    pub duration_ms: u64,
}

/// One file written by a backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Absolute path.
    pub path: PathBuf,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256, lowercase hex.
    pub sha256: String,
}

/// A verified backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupRecord {
    /// Manifests (YAML) and other files written.
    pub files: Vec<FileRecord>,
    /// `pool/image@snap` of the snapshot, verified with `rbd snap ls`.
    #[serde(default)]
    pub snapshot: Option<String>,
    /// The `rbd export` copy, if one was made.
    #[serde(default)]
    pub export: Option<FileRecord>,
}

/// A journal error, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading, writing or syncing failed.
    #[error("journal {path}: {op}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// An incident id with characters other than `[a-z0-9-]`, or empty.
    #[error("invalid incident id {0:?} (allowed: a-z, 0-9, '-')")]
    BadIncident(String),
    /// An outcome for a step that has no intent in this journal.
    #[error("journal {path}: outcome for step {step}, which has no intent")]
    UnknownStep {
        /// The journal.
        path: PathBuf,
        /// The step.
        step: u32,
    },
}

fn io(path: &Path, op: &'static str) -> impl FnOnce(std::io::Error) -> JournalError {
    let path = path.to_path_buf();
    move |source| JournalError::Io { path, op, source }
}

/// `user@host`: `$USER` (or `$LOGNAME`, else the login name of the process's uid), and the kernel
/// hostname.
pub fn operator() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(uid_name)
        .unwrap_or_else(|| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into());
    format!("{user}@{host}")
}

/// The login name of this process's real uid when `USER` and `LOGNAME` are unset (a cron job, a
/// `sudo -i` shell, a container): from `/proc/self/status` and `/etc/passwd`, else `uid-N`;
/// `None` when not even the uid can be read.
fn uid_name() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:"))?.split_whitespace().next()?.to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    Some(passwd_name(&passwd, &uid).unwrap_or_else(|| format!("uid-{uid}")))
}

/// The name of `uid` in an `/etc/passwd` text (`name:x:uid:gid:…` lines).
fn passwd_name(passwd: &str, uid: &str) -> Option<String> {
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[2] == uid && !f[0].is_empty()).then(|| f[0].to_string())
    })
}

/// The default base directory: `$XDG_DATA_HOME/unstick/incidents` (or `./.unstick-data/incidents`).
pub fn default_base() -> PathBuf {
    crate::dirs::project()
        .map(|p| p.data_dir().join("incidents"))
        .unwrap_or_else(|| PathBuf::from(".unstick-data/incidents"))
}

/// A new incident id: `<UTC yyyymmddThhmmssZ>-<pattern>-<subject>`, lowercased, every other
/// character mapped to `-`, at most 80 characters (`20261122T041500z-stale-lock-index-api-pv`).
pub fn new_incident_id(pattern: &str, subject: &str, now: Timestamp) -> String {
    let ts = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let raw = format!("{ts}-{pattern}-{subject}");
    let mut id: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    while id.contains("--") {
        id = id.replace("--", "-");
    }
    id.truncate(80);
    id.trim_end_matches('-').to_string()
}

/// The part of an incident id after its time stamp (`stale-lock-pv-1` of
/// `20260301t120000z-stale-lock-pv-1`): pattern and subject as [`new_incident_id`] spelled them,
/// the same for every incident of that pattern on that subject. `None` when `id` does not start
/// with a `YYYYMMDDtHHMMSSz-` stamp.
pub fn incident_topic(id: &str) -> Option<&str> {
    let (stamp, topic) = id.split_once('-')?;
    let b = stamp.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let stamped = b.len() == 16 && digits(0..8) && b[8] == b't' && digits(9..15) && b[15] == b'z';
    stamped.then_some(topic)
}

fn valid_incident(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// An open journal for appending. The file is created by the first record.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    path: PathBuf,
    base: PathBuf,
    file: Option<File>,
    incident: String,
    author: Author,
    next_step: u32,
    volume: Option<String>,
    clock: SharedClock,
}

impl Journal {
    /// Opens `<base>/<incident>/journal.jsonl` if it exists; otherwise nothing is created until
    /// the first record (which creates the directories and the file, and fsyncs them).
    /// If the last line is truncated (no final newline), a newline is appended so the damaged line
    /// stays intact and the next record starts cleanly.
    pub fn open(base: &Path, incident: &str, author: Author) -> Result<Self, JournalError> {
        if !valid_incident(incident) {
            return Err(JournalError::BadIncident(incident.to_string()));
        }
        let dir = base.join(incident);
        let path = dir.join(JOURNAL_FILE);
        let to_journal_error =
            |e: crate::jsonl::OpenError| JournalError::Io { path: e.path, op: e.op, source: e.source };
        let file =
            if path.exists() { Some(crate::jsonl::open_append(&path, None).map_err(to_journal_error)?) } else { None };
        let report = read(&path)?;
        let next_step = report.max_step() + 1;
        let volume = report.volume();
        Ok(Self {
            dir,
            path,
            base: base.to_path_buf(),
            file,
            incident: incident.to_string(),
            author,
            next_step,
            volume,
            clock: crate::clock::wall(),
        })
    }

    /// The same journal stamping its records with `clock` (the wall clock by default).
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Now on the journal's clock: the time the next record would carry.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The open file, created (with its directories, all fsync'd) on first use.
    fn file(&mut self) -> Result<&mut File, JournalError> {
        if let Some(f) = self.file.take() {
            return Ok(self.file.insert(f));
        }
        let created_dir = !self.dir.exists();
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir, "create directory"))?;
        let f = crate::jsonl::open_append(&self.path, created_dir.then_some(self.base.as_path()))
            .map_err(|e| JournalError::Io { path: e.path, op: e.op, source: e.source })?;
        Ok(self.file.insert(f))
    }

    /// Everything recorded so far (an empty report before the first record).
    pub fn report(&self) -> Result<JournalReport, JournalError> {
        read(&self.path)
    }

    /// The incident directory (backups go in `backup/` below it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The incident id.
    pub fn incident(&self) -> &str {
        &self.incident
    }

    /// The author written into records.
    pub fn author(&self) -> &Author {
        &self.author
    }

    /// The PV written into every following intent (the runner sets its playbook's volume; a
    /// reopened journal starts with the volume of its newest intent).
    pub fn set_volume(&mut self, volume: Option<String>) {
        self.volume = volume;
    }

    /// The PV written into intents.
    pub fn volume(&self) -> Option<&str> {
        self.volume.as_deref()
    }

    fn append(&mut self, body: Body) -> Result<(), JournalError> {
        let rec = JournalRecord {
            v: SCHEMA_VERSION,
            time: self.clock.now(),
            operator: self.author.operator.clone(),
            context: self.author.context.clone(),
            incident: self.incident.clone(),
            body,
        };
        let line = serde_json::to_vec(&rec).map_err(|e| JournalError::Io {
            path: self.path.clone(),
            op: "serialize",
            source: std::io::Error::other(e),
        })?;
        // One write of the whole line (O_APPEND) after repairing a torn tail, then fsync: a crash
        // or a full disk leaves whole records and at most one torn line, which the reader reports.
        let path = self.path.clone();
        crate::jsonl::append_line(self.file()?, &line).map_err(io(&path, "append"))
    }

    /// Writes an `intent` (fsync'd) and returns its step number. Call BEFORE sending the action.
    pub fn intent(
        &mut self,
        step_id: &str,
        action: &WriteAction,
        undo_of: Option<u32>,
        precheck: Vec<String>,
    ) -> Result<u32, JournalError> {
        self.intent_with_boot_ids(step_id, action, undo_of, precheck, Default::default())
    }

    /// [`Journal::intent`] with the bootIDs of the nodes a fence concerns ([`Intent::boot_ids`]).
    pub fn intent_with_boot_ids(
        &mut self,
        step_id: &str,
        action: &WriteAction,
        undo_of: Option<u32>,
        precheck: Vec<String>,
        boot_ids: std::collections::BTreeMap<String, String>,
    ) -> Result<u32, JournalError> {
        let step = self.next_step;
        self.append(Body::Intent(Intent {
            step,
            step_id: step_id.to_string(),
            action: action.clone(),
            inverse: action.inverse(),
            undo_of,
            precheck,
            volume: self.volume.clone(),
            boot_ids,
        }))?;
        self.next_step += 1;
        Ok(step)
    }

    /// Writes the `outcome` of `outcome.step`.
    pub fn outcome(&mut self, outcome: ActionOutcome) -> Result<(), JournalError> {
        if outcome.step == 0 || outcome.step >= self.next_step {
            return Err(JournalError::UnknownStep { path: self.path.clone(), step: outcome.step });
        }
        self.append(Body::Outcome(outcome))
    }

    /// Writes a `backup` record.
    pub fn backup(&mut self, rec: BackupRecord) -> Result<(), JournalError> {
        self.append(Body::Backup(rec))
    }

    /// Writes a `step` record: the result of a step that sends nothing, or a skipped step.
    pub fn step(&mut self, rec: StepRecord) -> Result<(), JournalError> {
        self.append(Body::Step(rec))
    }

    /// Writes a `note`.
    pub fn note(&mut self, step_id: Option<&str>, text: &str) -> Result<(), JournalError> {
        self.append(Body::Note { step_id: step_id.map(str::to_string), text: text.to_string() })
    }
}

pub use crate::jsonl::LineProblem;
pub use ends::{StepEnd, StepEnded};

/// Everything read from one journal file.
#[derive(Debug, Clone, Default)]
pub struct JournalReport {
    /// The file.
    pub path: PathBuf,
    /// Records with their 1-based line numbers, in file order.
    pub records: Vec<(usize, JournalRecord)>,
    /// Lines that could not be read.
    pub problems: Vec<LineProblem>,
}

/// Where a journaled write (an `intent` and, once written, its `outcome`) stands. Not to be
/// confused with [`StepResult`] (how a step that sends nothing ended, journaled as such) or
/// [`step::StepState`] (where a playbook step stands in the runner and on screen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteStatus {
    /// Its outcome is ok.
    Done,
    /// Its outcome is not ok.
    Failed,
    /// Intent without outcome: the process died (or is still running) after writing the intent.
    /// State unknown: re-check before doing anything; never retried silently.
    Interrupted,
}

/// One step: its intent and outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct StepView {
    /// Line of the intent.
    pub line: usize,
    /// The intent record (time, operator, context).
    pub record: JournalRecord,
    /// The intent.
    pub intent: Intent,
    /// The outcome, if written.
    pub outcome: Option<ActionOutcome>,
    /// Status.
    pub status: WriteStatus,
}

/// Reads a journal. Never modifies the file. IO errors are errors; bad lines are [`LineProblem`]s.
/// A journal not created yet (no record written) reads as an empty report.
pub fn read(path: &Path) -> Result<JournalReport, JournalError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io(path, "read")(e)),
    };
    let (records, problems) = crate::jsonl::parse_lines::<JournalRecord>(path, &bytes, crate::text::sanitize);
    Ok(JournalReport { path: path.to_path_buf(), records, problems })
}

impl crate::jsonl::Versioned for JournalRecord {
    const SCHEMA_VERSION: u32 = SCHEMA_VERSION;
    const KIND: &'static str = "journal";
    fn version(&self) -> u32 {
        self.v
    }
}

impl JournalReport {
    /// The highest step number of any intent or outcome (0 when none).
    pub fn max_step(&self) -> u32 {
        self.records
            .iter()
            .filter_map(|(_, r)| match &r.body {
                Body::Intent(i) => Some(i.step),
                Body::Outcome(o) => Some(o.step),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Steps in journal order, each with its outcome and status.
    pub fn steps(&self) -> Vec<StepView> {
        let mut out: Vec<StepView> = Vec::new();
        for (line, rec) in &self.records {
            match &rec.body {
                Body::Intent(i) => out.push(StepView {
                    line: *line,
                    record: rec.clone(),
                    intent: i.clone(),
                    outcome: None,
                    status: WriteStatus::Interrupted,
                }),
                Body::Outcome(o) => {
                    if let Some(s) = out.iter_mut().rev().find(|s| s.intent.step == o.step && s.outcome.is_none()) {
                        s.status = if o.ok { WriteStatus::Done } else { WriteStatus::Failed };
                        s.outcome = Some(o.clone());
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The volume of the newest intent that names one (see [`Intent::volume`]).
    pub fn volume(&self) -> Option<String> {
        self.records.iter().rev().find_map(|(_, r)| match &r.body {
            Body::Intent(i) => i.volume.clone(),
            _ => None,
        })
    }

    /// Steps whose intent has no outcome: "interrupted — state unknown, re-check".
    pub fn interrupted(&self) -> Vec<StepView> {
        self.steps().into_iter().filter(|s| s.status == WriteStatus::Interrupted).collect()
    }

    /// Backups recorded in this journal, oldest first.
    pub fn backups(&self) -> Vec<&BackupRecord> {
        self.records
            .iter()
            .filter_map(|(_, r)| match &r.body {
                Body::Backup(b) => Some(b),
                _ => None,
            })
            .collect()
    }
}

/// `exit 16: ...` / `HTTP 409: ...` / `ok`.
pub fn outcome_text(o: &ActionOutcome) -> String {
    let code = match (o.exit_code, o.api_status) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("HTTP {s}"),
        (None, None) if o.ok => "ok".into(),
        (None, None) => "not sent".into(),
    };
    if o.stderr.is_empty() { code } else { format!("{code}: {}", o.stderr) }
}

#[cfg(test)]
mod tests;
