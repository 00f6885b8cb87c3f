//! Listing session logs and exporting one as a postmortem timeline (`docs/session-export.md`).
//!
//! The export is built from the log's records after redacting them again ([`Redactor`]); the
//! Markdown is additionally redacted as a whole, and the JSON value string by string. Every text
//! from the log is sanitized ([`crate::text::sanitize`]): no terminal escapes reach an export.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;

use super::error::SessionError;
use super::log::{self, EvidenceRecord, Mode, SessionEvent, SessionRecord, SessionReport, StepResult};
use super::postmortem::{
    ActionEntry, BackupEntry, ConfirmationEntry, FindingEntry, NoteEntry, Postmortem, ProblemEntry, StepEntry, Summary,
    TimelineEntry, UndoEntry, ms,
};
use super::redact::Redactor;
use crate::jsonl::LineProblem;
use crate::text::sanitize;

/// Postmortem format version written in the JSON export (`version`).
pub const EXPORT_VERSION: u32 = 1;

/// Export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// GitHub-flavoured Markdown, pasteable into a postmortem doc.
    Markdown,
    /// Pretty-printed JSON (schema in `docs/session-export.md`).
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;

    /// `md` / `markdown` or `json` (case-insensitive); the error names the accepted values.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(format!("unknown export format {other:?} (md or json)")),
        }
    }
}

impl Format {
    /// File extension for `--out` defaults: `md` or `json`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Json => "json",
        }
    }
}

/// One session log, as listed by `unstick sessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// Session id (file stem).
    pub id: String,
    /// The log file.
    pub path: PathBuf,
    /// Start: context, operator, mode (absent when the log has no readable `start`).
    pub context: Option<String>,
    /// `user@host`.
    pub operator: Option<String>,
    /// Live, training or bundle.
    pub mode: Option<Mode>,
    /// Time of the first record.
    pub started: Option<Timestamp>,
    /// Time of the `end` record; absent for a session still running or that crashed.
    pub ended: Option<Timestamp>,
    /// Findings that appeared.
    pub findings: usize,
    /// Actions run.
    pub actions: usize,
    /// Notes.
    pub notes: usize,
    /// Unreadable lines (or 1 when the file itself could not be read).
    pub problems: usize,
}

/// Lists `<base>/*.jsonl`, sorted by id (ids start with a UTC timestamp, so oldest first). A
/// missing `base` is an empty list; an unreadable file is listed with `problems = 1`.
///
/// Errors: IO on the directory itself.
pub fn list(base: &Path) -> Result<Vec<SessionSummary>, SessionError> {
    let entries = match std::fs::read_dir(base) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(SessionError::Io { path: base.to_path_buf(), op: "list", source }),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "jsonl") || !path.is_file() {
            continue;
        }
        let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut s = SessionSummary {
            id,
            path: path.clone(),
            context: None,
            operator: None,
            mode: None,
            started: None,
            ended: None,
            findings: 0,
            actions: 0,
            notes: 0,
            problems: 1,
        };
        if let Ok(r) = log::read(&path) {
            if let Some(st) = r.start() {
                (s.context, s.operator, s.mode) =
                    (Some(sanitize(st.context)), Some(sanitize(st.operator)), Some(st.mode));
            }
            s.started = r.started();
            s.ended = r.ended();
            let count = |f: fn(&SessionEvent) -> bool| r.records.iter().filter(|(_, rec)| f(&rec.event)).count();
            s.findings = count(|e| matches!(e, SessionEvent::FindingAppeared { .. }));
            s.actions = count(|e| matches!(e, SessionEvent::Action { .. }));
            s.notes = count(|e| matches!(e, SessionEvent::Note { .. }));
            s.problems = r.problems.len();
        }
        out.push(s);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Reads the log at `path` and renders it with the built-in redaction rules.
pub fn export(path: &Path, format: Format) -> Result<String, SessionError> {
    export_with(path, format, &Redactor::builtin())
}

/// Reads the log at `path` and renders it, redacting with `redactor` (built-in plus configured
/// patterns). Errors: IO reading the file. Unreadable lines are listed in the export.
pub fn export_with(path: &Path, format: Format, redactor: &Redactor) -> Result<String, SessionError> {
    let report = log::read(path)?;
    let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(render(&id, &report, format, redactor))
}

fn event_name(e: &SessionEvent) -> String {
    let name = match e {
        SessionEvent::Unknown { name, .. } => return sanitize(name),
        SessionEvent::Start { .. } => "start",
        SessionEvent::FindingAppeared { .. } => "finding-appeared",
        SessionEvent::FindingCleared { .. } => "finding-cleared",
        SessionEvent::Viewed { .. } => "viewed",
        SessionEvent::Confirmation { .. } => "confirmation",
        SessionEvent::Action { .. } => "action",
        SessionEvent::Backup { .. } => "backup",
        SessionEvent::Undo { .. } => "undo",
        SessionEvent::Note { .. } => "note",
        SessionEvent::ContextSwitch { .. } => "context-switch",
        SessionEvent::Step { .. } => "step",
        SessionEvent::Debrief { .. } => "debrief",
        SessionEvent::Restored { .. } => "restored",
        SessionEvent::End => "end",
    };
    name.to_string()
}

fn step_verb(r: StepResult) -> &'static str {
    match r {
        StepResult::Done => "Done",
        StepResult::Failed => "FAILED",
        StepResult::Skipped => "Skipped",
    }
}

fn timeline_text(e: &SessionEvent) -> String {
    match e {
        SessionEvent::Start { context, operator, version, mode, writes } => {
            let writes = writes.map(|w| format!(", writes: {}", w.as_str())).unwrap_or_default();
            format!("Session started ({}{writes}) on {context} by {operator}, unstick {version}", mode.as_str())
        }
        SessionEvent::FindingAppeared { finding: f } => {
            format!("Finding appeared [{}] {}: {}", f.severity, f.id, f.summary)
        }
        SessionEvent::FindingCleared { id } => format!("Finding cleared: {id}"),
        SessionEvent::Viewed { pane, object: Some(o) } => format!("Viewed {pane}: {o}"),
        SessionEvent::Viewed { pane, object: None } => format!("Viewed {pane}"),
        SessionEvent::Confirmation { step_id, command, accepted, reversible, .. } => format!(
            "{} {step_id} ({}): {command}",
            if *accepted { "Confirmed" } else { "Declined" },
            if *reversible { "reversible" } else { "irreversible" }
        ),
        SessionEvent::Action { step_id, command, ok, outcome, duration_ms, sent, .. } => {
            let what = sent.as_deref().unwrap_or(command);
            let verb = if sent.is_some() { "Sent" } else { "Ran" };
            format!("{verb} {step_id}: {what} → {} {outcome} ({})", if *ok { "ok" } else { "FAILED" }, ms(*duration_ms))
        }
        SessionEvent::Step { step_id, kind, title, result, detail } => {
            let title = if title.is_empty() { String::new() } else { format!(" {title}") };
            format!("{} {step_id} ({kind}){title}: {detail}", step_verb(*result))
        }
        SessionEvent::Debrief { scenario, text } => {
            format!("Training debrief of {scenario}: {}", text.lines().next().unwrap_or_default())
        }
        SessionEvent::Restored { finding, pod } => format!("Service restored: pod {pod} Running ({finding} cleared)"),
        SessionEvent::Unknown { name, fields } => format!("Record {name} (unknown to this version): {fields}"),
        SessionEvent::Backup { paths, snapshot } => format!(
            "Backup: {} file(s){}",
            paths.len(),
            snapshot.as_ref().map(|s| format!(", snapshot {s} (`rbd snap create {s}`)")).unwrap_or_default()
        ),
        SessionEvent::Undo { step, command, ok, outcome } => {
            format!("Undo of step {step}: {command} → {} {outcome}", if *ok { "ok" } else { "FAILED" })
        }
        SessionEvent::Note { text } => format!("Note: {text}"),
        SessionEvent::ContextSwitch { from, to } => format!("Context switched: {from} → {to}"),
        SessionEvent::End => "Session ended".into(),
    }
}

/// A record redacted through JSON; a record that cannot be round-tripped is withheld.
fn redacted(rec: &SessionRecord, redactor: &Redactor) -> SessionRecord {
    redactor.redact_serde(rec).unwrap_or_else(|| SessionRecord {
        event: SessionEvent::Note { text: "[record withheld: could not be redacted]".into() },
        ..rec.clone()
    })
}

fn build(id: &str, report: &SessionReport, redactor: &Redactor) -> Postmortem {
    let records: Vec<SessionRecord> = report.records.iter().map(|(_, r)| redacted(r, redactor)).collect();
    let mut pm = Postmortem {
        format: "unstick-postmortem",
        version: EXPORT_VERSION,
        session: sanitize(id),
        summary: Summary::default(),
        affected_objects: Vec::new(),
        timeline: Vec::new(),
        findings: Vec::new(),
        confirmations: Vec::new(),
        actions: Vec::new(),
        steps: Vec::new(),
        backups: Vec::new(),
        undos: Vec::new(),
        notes: Vec::new(),
        debriefs: Vec::new(),
        unreadable_lines: Vec::new(),
        service_restored: None,
        left_to_clean_up: Vec::new(),
        clock: String::new(),
    };
    let mut objects = BTreeSet::new();
    let s = sanitize;
    // objects in the console's one spelling (`Pod ns/name`), whatever version wrote the log
    let sv = |v: &[String]| v.iter().map(|x| super::convert::object_label(&sanitize(x))).collect::<Vec<_>>();
    let c = &mut pm.summary.counts;
    for rec in &records {
        let t = rec.time;
        pm.timeline.push(TimelineEntry { time: t, event: event_name(&rec.event), text: s(&timeline_text(&rec.event)) });
        match &rec.event {
            SessionEvent::Start { context, operator, version, mode, writes } => {
                if pm.summary.mode.is_none() {
                    pm.summary.context = Some(s(context));
                    pm.summary.operator = Some(s(operator));
                    pm.summary.unstick_version = Some(s(version));
                    pm.summary.mode = Some(*mode);
                    pm.summary.writes = *writes;
                }
            }
            SessionEvent::FindingAppeared { finding: f } => {
                c.findings_appeared += 1;
                objects.extend(sv(&f.objects));
                let evidence = f
                    .evidence
                    .iter()
                    .map(|e| EvidenceRecord { source: s(&e.source), text: s(&e.text), observed_at: e.observed_at })
                    .collect();
                pm.findings.push(FindingEntry {
                    id: s(&f.id),
                    pattern: s(&f.pattern),
                    severity: s(&f.severity),
                    summary: s(&f.summary),
                    appeared: t,
                    cleared: None,
                    objects: sv(&f.objects),
                    evidence,
                });
            }
            SessionEvent::FindingCleared { id } => {
                c.findings_cleared += 1;
                let id = s(id);
                if let Some(f) = pm.findings.iter_mut().rev().find(|f| f.id == id && f.cleared.is_none()) {
                    f.cleared = Some(t);
                }
            }
            SessionEvent::Viewed { .. } => {}
            SessionEvent::Confirmation { step_id, command, objects: objs, reversible, inverse, accepted } => {
                if *accepted {
                    c.confirmations_accepted += 1;
                } else {
                    c.confirmations_declined += 1;
                }
                objects.extend(sv(objs));
                pm.confirmations.push(ConfirmationEntry {
                    time: t,
                    step_id: s(step_id),
                    command: s(command),
                    objects: sv(objs),
                    reversible: *reversible,
                    inverse: s(inverse),
                    accepted: *accepted,
                    sent: *accepted,
                });
            }
            SessionEvent::Action { step_id, command, ok, outcome, exit_code, api_status, duration_ms, sent } => {
                c.actions += 1;
                if !ok {
                    c.actions_failed += 1;
                }
                pm.actions.push(ActionEntry {
                    time: t,
                    step_id: s(step_id),
                    command: s(command),
                    ok: *ok,
                    outcome: s(outcome),
                    exit_code: *exit_code,
                    api_status: *api_status,
                    duration_ms: *duration_ms,
                    sent: sent.as_deref().map(s),
                });
            }
            SessionEvent::Step { step_id, kind, title, result, detail } => {
                match result {
                    StepResult::Done => c.steps_done += 1,
                    StepResult::Failed => c.steps_failed += 1,
                    StepResult::Skipped => c.steps_skipped += 1,
                }
                pm.steps.push(StepEntry {
                    time: t,
                    step_id: s(step_id),
                    kind: s(kind),
                    title: s(title),
                    result: *result,
                    detail: s(detail),
                });
            }
            SessionEvent::Debrief { text, .. } => {
                // line by line: the debrief keeps its lines
                let text = text.lines().map(s).collect::<Vec<_>>().join("\n");
                pm.debriefs.push(NoteEntry { time: t, text });
            }
            SessionEvent::Unknown { .. } => {}
            SessionEvent::Restored { pod, .. } => {
                if pm.service_restored.is_none() {
                    pm.service_restored = Some(super::postmortem::Restored { time: t, pod: s(pod) });
                }
            }
            SessionEvent::Backup { paths, snapshot } => {
                c.backups += 1;
                let commands = snapshot.iter().map(|x| format!("rbd snap create {}", s(x))).collect();
                pm.backups.push(BackupEntry {
                    time: t,
                    paths: sv(paths),
                    snapshot: snapshot.as_deref().map(s),
                    commands,
                });
            }
            SessionEvent::Undo { step, command, ok, outcome } => {
                c.undos += 1;
                pm.undos.push(UndoEntry { time: t, step: *step, command: s(command), ok: *ok, outcome: s(outcome) });
            }
            SessionEvent::Note { text } => {
                c.notes += 1;
                pm.notes.push(NoteEntry { time: t, text: s(text) });
            }
            SessionEvent::ContextSwitch { .. } | SessionEvent::End => {}
        }
    }
    c.unreadable_lines = report.problems.len();
    pm.unreadable_lines = report.problems.iter().map(|p: &LineProblem| problem(p, redactor)).collect();
    pm.affected_objects = objects.into_iter().collect();
    not_sent(&mut pm);
    pm.left_to_clean_up = super::followups::left_to_clean_up(&pm);
    pm.clock = super::followups::clock(pm.summary.mode).to_string();
    pm.summary.started = report.started();
    pm.summary.ended = report.ended();
    pm.summary.last_record = report.last();
    pm.summary.duration_seconds = match (pm.summary.started, pm.summary.ended.or(pm.summary.last_record)) {
        (Some(a), Some(b)) => Some(b.as_second() - a.as_second()),
        _ => None,
    };
    pm
}

/// An accepted confirmation after which nothing was sent for its step (the live re-check refused
/// it: the state had changed) is not counted as accepted: `sent` false, counted apart.
fn not_sent(pm: &mut Postmortem) {
    let undo = crate::remedy::journal::step::UNDO_OF;
    for i in 0..pm.confirmations.len() {
        let c = &pm.confirmations[i];
        if !c.accepted {
            continue;
        }
        // until the next confirmation of the same step
        let until = pm.confirmations[i + 1..].iter().find(|n| n.step_id == c.step_id).map(|n| n.time);
        let within = |t: Timestamp| t >= c.time && until.is_none_or(|u| t <= u);
        let sent = pm.actions.iter().any(|a| a.step_id == c.step_id && within(a.time))
            || (c.step_id.starts_with(undo.trim_end()) && pm.undos.iter().any(|u| within(u.time)));
        if !sent {
            pm.confirmations[i].sent = false;
            pm.summary.counts.confirmations_accepted -= 1;
            pm.summary.counts.confirmations_not_sent += 1;
        }
    }
}

fn problem(p: &LineProblem, redactor: &Redactor) -> ProblemEntry {
    ProblemEntry {
        line: p.line,
        error: redactor.redact(&sanitize(&p.error)),
        excerpt: redactor.redact(&sanitize(&p.excerpt)),
    }
}

/// Renders a read session log as a postmortem in `format`. `id` names the session (file stem).
/// Pure: the same report always gives the same text (golden-tested). Never panics.
pub fn render(id: &str, report: &SessionReport, format: Format, redactor: &Redactor) -> String {
    let pm = build(id, report, redactor);
    match format {
        Format::Json => {
            let mut v = serde_json::to_value(&pm).unwrap_or(serde_json::Value::Null);
            redactor.redact_value(&mut v);
            let mut out =
                crate::text::json_escape_controls(serde_json::to_string_pretty(&v).unwrap_or_else(|_| "null".into()));
            out.push('\n');
            out
        }
        Format::Markdown => redactor.redact(&super::markdown::markdown(&pm)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_parses() {
        assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
        assert_eq!("Markdown".parse::<Format>(), Ok(Format::Markdown));
        assert_eq!("json".parse::<Format>(), Ok(Format::Json));
        assert!("yaml".parse::<Format>().unwrap_err().contains("md or json"));
        assert_eq!(Format::Json.extension(), "json");
    }
}
