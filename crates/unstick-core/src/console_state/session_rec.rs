//! The console's session log recorder: what the operator saw and did, as session [`SessionEvent`]s
//! (`docs/session-export.md`), written by a small writer thread so no file IO (open, write,
//! fsync) happens on the UI task.
//!
//! [`SessionRecorder::start`] never fails: the log is opened (and the `start` record written) by
//! the writer thread, and any write error comes back over a channel. The current error is kept in
//! [`SessionRecorder::error`] for the status line (`log ✗`) and the note editor, and cleared when a
//! write succeeds again (a full disk that was freed); the first error of the session is printed on
//! exit. Records keep being tried after a failure. A recorder whose log could not be opened drops
//! the records it is given.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use jiff::Timestamp;

use crate::clock::SharedClock;
use crate::config::SessionConfig;
use crate::remedy::service::ConfirmView;
use crate::session::redact::PatternError;
use crate::session::{
    Mode, Redactor, SessionError, SessionEvent, SessionLog, Writes, new_session_id, unique_session_id,
};

/// What a session log is about: everything the `start` record and the file name need.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The log directory (`[session] dir`, else `$XDG_STATE_HOME/unstick/sessions`).
    pub base: PathBuf,
    /// Live cluster, training scenario or support bundle.
    pub mode: Mode,
    /// The kube context, the scenario name (training) or the bundle path.
    pub context: String,
    /// What the console may write (`--read-only`, `--dry-run`).
    pub writes: Writes,
    /// Built-in rules plus `[session] redact_patterns`.
    pub redactor: Redactor,
    /// Adds a random suffix to the id ([`unique_session_id`]) so two consoles started in the
    /// same second both log; true from [`SessionSpec::from_config`], false only where a test
    /// needs a fixed id.
    pub unique: bool,
}

impl SessionSpec {
    /// A spec from the `[session]` config: its directory and redaction patterns.
    ///
    /// Errors: a `redact_patterns` entry that does not compile (config loading already rejects
    /// those, so this only fails for a config built in code).
    pub fn from_config(cfg: &SessionConfig, mode: Mode, context: &str, writes: Writes) -> Result<Self, PatternError> {
        Ok(SessionSpec {
            base: crate::session::base(cfg),
            mode,
            context: context.to_string(),
            writes,
            redactor: crate::session::redactor(cfg)?,
            unique: true,
        })
    }
}

enum Job {
    Record(Timestamp, SessionEvent),
    /// Write the `end` record, then stop and answer on the channel.
    End(Timestamp, Sender<()>),
}

/// The open session log of a console: a writer thread, the view last recorded, the first error.
#[derive(Debug)]
pub struct SessionRecorder {
    id: String,
    path: PathBuf,
    tx: Option<Sender<Job>>,
    errors: Receiver<Report>,
    /// The view on screen, not yet recorded: `(pane, object)`.
    pending_view: Option<(String, Option<String>)>,
    /// The view last recorded.
    last_view: Option<(String, Option<String>)>,
    /// The current error: set by a failed write, cleared by the next write that succeeds.
    error: Option<String>,
    /// The first error of the session (printed on exit).
    first_error: Option<String>,
    failures: usize,
    /// Stamps every record (the wall clock in the console and in training).
    clock: SharedClock,
}

/// What the writer thread reports back.
enum Report {
    /// A write failed.
    Failed(String),
    /// A write succeeded after a failure: the log works again.
    Recovered,
}

/// How long [`SessionRecorder::finish`] waits for the writer to write the `end` record.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(3);

impl SessionRecorder {
    /// Starts a session log for `spec` stamped by `clock`: the id is [`unique_session_id`] (mode, context,
    /// UTC time and a random suffix), the file `<base>/<id>.jsonl`. The writer thread creates it and writes the
    /// `start` record (context, operator `user@host`, version, mode, writes).
    pub fn start(spec: SessionSpec, clock: SharedClock) -> Self {
        let now = clock.now();
        let id = if spec.unique {
            unique_session_id(spec.mode, &spec.context, now)
        } else {
            new_session_id(spec.mode, &spec.context, now)
        };
        let path = spec.base.join(format!("{id}.jsonl"));
        let (tx, rx) = mpsc::channel::<Job>();
        let (err_tx, errors) = mpsc::channel::<Report>();
        let start = SessionEvent::start_now(&spec.context, spec.mode, spec.writes);
        let thread_id = id.clone();
        let spawned = std::thread::Builder::new()
            .name("session-log".into())
            .spawn(move || writer(spec.base, thread_id, spec.redactor, start, now, rx, err_tx));
        let mut rec = SessionRecorder {
            id,
            path,
            tx: Some(tx),
            errors,
            pending_view: None,
            last_view: None,
            error: None,
            first_error: None,
            failures: 0,
            clock,
        };
        if let Err(e) = spawned {
            rec.tx = None;
            rec.fail(format!("session log: cannot start the writer thread: {e}"));
        }
        rec
    }

    /// The session id (`20261122t040000z-live-prod-east`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The log file `<base>/<id>.jsonl`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current write error, if the last write failed (for the status line); cleared as soon
    /// as a write succeeds again (a full disk that was freed).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// How many write errors there were (the first is [`SessionRecorder::error`]).
    pub fn failures(&self) -> usize {
        self.failures
    }

    fn fail(&mut self, e: String) {
        self.failures += 1;
        self.first_error.get_or_insert_with(|| e.clone());
        self.error.get_or_insert(e);
    }

    /// Collects errors the writer reported. Returns true when the first one just arrived (the
    /// status line should show it). Never blocks.
    pub fn poll(&mut self) -> bool {
        let had = self.error.is_some();
        while let Ok(r) = self.errors.try_recv() {
            match r {
                Report::Failed(e) => self.fail(e),
                Report::Recovered => self.error = None,
            }
        }
        !had && self.error.is_some()
    }

    /// Records `event` stamped now on the recorder's clock, after the view still pending (the operator was looking
    /// at it). Never blocks; a failure shows up in [`SessionRecorder::poll`].
    pub fn record(&mut self, event: SessionEvent) {
        self.record_at(self.clock.now(), event);
    }

    /// Now on the recorder's clock: the time the next record would carry.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// [`SessionRecorder::record`] stamped `time` (UTC).
    pub fn record_at(&mut self, time: Timestamp, event: SessionEvent) {
        self.flush_view();
        self.send(time, event);
    }

    fn send(&mut self, time: Timestamp, event: SessionEvent) {
        let Some(tx) = &self.tx else { return };
        if tx.send(Job::Record(time, event)).is_err() {
            self.tx = None;
            self.fail("session log: the writer thread stopped; nothing more is logged".into());
        }
    }

    /// Notes that `pane` (and `object`, a label) is on screen. Debounced: it is recorded by the
    /// next [`SessionRecorder::flush_view`] (the clock tick, or before any other event) unless
    /// another view replaced it first; a view equal to the last recorded one is not recorded again.
    pub fn viewing(&mut self, pane: &str, object: Option<String>) {
        let view = (pane.to_string(), object);
        if self.last_view.as_ref() == Some(&view) {
            self.pending_view = None;
        } else if self.pending_view.as_ref() != Some(&view) {
            self.pending_view = Some(view);
        }
    }

    /// Records the pending view, if any.
    pub fn flush_view(&mut self) {
        if let Some((pane, object)) = self.pending_view.take() {
            self.last_view = Some((pane.clone(), object.clone()));
            let now = self.clock.now();
            self.send(now, SessionEvent::Viewed { pane, object });
        }
    }

    /// Records the pending view and the `end` record, and waits up to `timeout` for the writer to
    /// have written them. Returns the first error of the session, if any (including a timeout).
    pub fn finish(mut self, timeout: Duration) -> Option<String> {
        self.flush_view();
        if let Some(tx) = self.tx.take() {
            let (done_tx, done_rx) = mpsc::channel();
            if tx.send(Job::End(self.clock.now(), done_tx)).is_err() {
                self.fail("session log: the writer thread stopped before the end record".into());
            } else {
                match done_rx.recv_timeout(timeout) {
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
                    Err(RecvTimeoutError::Timeout) => self.fail(format!(
                        "session log {}: the end record was not written within {} s",
                        self.path.display(),
                        timeout.as_secs()
                    )),
                }
            }
        }
        self.poll();
        self.first_error
    }
}

/// A `confirmation` event for the popup's view, answered (`accepted`) or cancelled.
pub fn confirmation_event(v: &ConfirmView, accepted: bool) -> SessionEvent {
    SessionEvent::Confirmation {
        step_id: v.step_id.clone(),
        command: v.command.clone(),
        objects: v.objects.clone(),
        reversible: v.reversible,
        inverse: v.inverse.clone(),
        accepted,
    }
}

/// A session log error with the cause first (the status line may cut the path).
fn describe(e: &SessionError) -> String {
    match e {
        SessionError::Io { path, op, source } => format!("{op}: {source} ({})", path.display()),
        e => e.to_string(),
    }
}

/// The writer thread: opens the log, then appends each record (redacted and fsync'd by
/// [`SessionLog`]). The first error of each kind is reported; later appends are still tried.
fn writer(
    base: PathBuf,
    id: String,
    redactor: Redactor,
    start: SessionEvent,
    now: Timestamp,
    rx: Receiver<Job>,
    errors: Sender<Report>,
) {
    let mut log = match SessionLog::start(&base, &id, redactor, start, now) {
        Ok(l) => Some(l),
        Err(e) => {
            let _ = errors.send(Report::Failed(format!("session log not written: {}", describe(&e))));
            None
        }
    };
    let mut failing = false;
    for job in rx {
        let (time, event, done) = match job {
            Job::Record(t, e) => (t, e, None),
            Job::End(t, d) => (t, SessionEvent::End, Some(d)),
        };
        if let Some(l) = log.as_mut() {
            match l.append_at(time, event) {
                Err(e) => {
                    failing = true;
                    let _ = errors.send(Report::Failed(format!("session log write failed: {}", describe(&e))));
                }
                Ok(()) if failing => {
                    failing = false;
                    let _ = errors.send(Report::Recovered);
                }
                Ok(()) => {}
            }
        }
        if let Some(d) = done {
            let _ = d.send(());
            return;
        }
    }
}

/// `restored` events for the findings of `cleared` (findings that just cleared): each volume's
/// pods seen Running in `snap` (phase Running, not being deleted), named `namespace/name`, as
/// `lin` (the lineage of `snap`) joins them to the volume: the pods in the PV's claim's namespace
/// that mount that claim. Costs the cleared findings' pods, not the cluster (issue 29: a scan of
/// every PV and pod per cleared finding was most of the console's CPU at 50k pods).
pub fn restored(
    cleared: &[&crate::diagnose::Finding],
    snap: &crate::model::Snapshot,
    lin: &crate::lineage::Lineage,
) -> Vec<SessionEvent> {
    let mut out = Vec::new();
    for f in cleared {
        let Some(vol) = f.volume.as_deref().and_then(|pv| lin.by_pv(pv)) else { continue };
        for key in &vol.pods {
            let Some((ns, name)) = key.split_once('/') else { continue };
            let at = snap.pods.binary_search_by(|p| {
                (p.metadata.namespace.as_deref(), p.metadata.name.as_deref().unwrap_or("")).cmp(&(Some(ns), name))
            });
            // the console's lists are sorted by namespace/name; any other snapshot is searched
            let pod = match at {
                Ok(i) => Some(&snap.pods[i]),
                Err(_) => snap.pods.iter().find(|p| crate::model::key_of(&p.metadata) == *key),
            };
            let running = pod.is_some_and(|p| {
                p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    && p.metadata.deletion_timestamp.is_none()
            });
            if running {
                out.push(SessionEvent::Restored { finding: f.id.clone(), pod: key.clone() });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 10: `log ✗` and "notes refused" clear once writes succeed again; the first error is
    /// still printed on exit.
    #[test]
    fn a_log_that_works_again_clears_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = SessionRecorder::start(
            SessionSpec {
                base: dir.path().to_path_buf(),
                mode: Mode::Live,
                context: "kh".into(),
                writes: Writes::Live,
                redactor: Redactor::builtin(),
                unique: false,
            },
            std::sync::Arc::new(crate::clock::FixedClock(crate::fixtures::now())),
        );
        let (tx, rx) = std::sync::mpsc::channel();
        rec.errors = rx;
        tx.send(Report::Failed("session log write failed: No space left on device".into())).unwrap();
        assert!(rec.poll());
        assert!(rec.error().is_some_and(|e| e.contains("No space")));
        tx.send(Report::Recovered).unwrap();
        assert!(!rec.poll());
        assert_eq!(rec.error(), None);
        tx.send(Report::Failed("again".into())).unwrap();
        assert!(rec.poll(), "a new failure after recovery is shown again");
        tx.send(Report::Recovered).unwrap();
        let first = rec.finish(std::time::Duration::from_secs(3));
        assert!(first.is_some_and(|e| e.contains("No space")));
    }
}
