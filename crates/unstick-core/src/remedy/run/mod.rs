//! The playbook runner: a state machine over [`Playbook`] steps that enforces
//! - **backup first**: an Act step is only reachable after the Backup step produced a
//!   [`BackupVerified`] (the cursor cannot pass the Backup step otherwise, and [`Runner::confirm`]
//!   checks it again);
//! - **Lease**: the volume's Lease is renewed right before every write;
//! - **live re-check**: [`Runner::prepare`] re-reads the state and compares it with the baseline (the
//!   finding, then the state after each step), then applies the safety rules; [`Runner::confirm`]
//!   re-reads and compares again right before sending;
//! - **journal**: `intent` (fsync'd) → write → `outcome`;
//! - **no silent retry**: interrupted steps found in the journal block the runner until the operator
//!   acknowledges them after re-checking.
//!
//! The runner never sends anything without an [`Executor`]; without one (read-only or dry-run)
//! every step can still be shown and prepared.

pub mod backup;
pub mod confirm;
pub mod error;
pub mod lease;
pub mod refusal;
pub mod resume;
pub mod typed;
pub mod undo;

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;

use crate::config::RemedyConfig;
use crate::remedy::action::WriteAction;
use crate::remedy::action::executor::{ExecResult, Executor};
use crate::remedy::action::precheck::{LiveState, PrecheckError, Reader, compare, read_live};
use crate::remedy::action::safety::Overrides;
use crate::remedy::action::scope::merge_scope;
pub use crate::remedy::action::scope::scope_for;
pub use crate::remedy::journal::step::StepState;
use crate::remedy::journal::step::{StepRecord, StepResult, StepType};
use crate::remedy::journal::{Journal, StepView};
pub use crate::remedy::playbook::condition::WaitStatus;
use crate::remedy::playbook::condition::{Checked, Condition, evaluate};
use crate::remedy::playbook::{Playbook, Step, StepKind};
use crate::remedy::run::backup::{BackupVerified, ExportProgress, run_backup};
use crate::remedy::run::lease::{Held, LeaseError, LeaseManager};
pub use crate::remedy::run::typed::{TYPED_TAIL, TYPED_WHOLE_MAX, typed_matches, typed_part};
use confirm::send;
pub use confirm::{Confirmation, confirm_undo, confirmation, prepare_undo};
pub use error::RunError;

/// Everything a runner needs.
pub struct RunnerParts {
    /// The playbook.
    pub playbook: Playbook,
    /// The incident journal.
    pub journal: Journal,
    /// Live reads.
    pub reader: Reader,
    /// Writes; `None` in read-only / dry-run mode.
    pub executor: Option<Executor>,
    /// The state the finding was made on ([`LiveState::from_snapshot`]).
    pub baseline: LiveState,
    /// `[remedy]` settings.
    pub cfg: RemedyConfig,
}

/// Walks a playbook. See the module doc.
pub struct Runner {
    p: RunnerParts,
    backup: Option<BackupVerified>,
    cursor: usize,
    states: Vec<StepState>,
    lease: Option<(LeaseManager, Held)>,
    interrupted: Vec<StepView>,
    wait_started: Option<Timestamp>,
}

impl Runner {
    /// A runner at step 1. Interrupted steps already in the journal block it until
    /// [`Runner::acknowledge_interrupted`].
    pub fn new(mut parts: RunnerParts) -> Result<Self, RunError> {
        parts.journal.set_volume(parts.playbook.volume.clone());
        let interrupted = parts.journal.report()?.interrupted();
        let n = parts.playbook.steps.len();
        Ok(Self {
            p: parts,
            backup: None,
            cursor: 0,
            states: vec![StepState::Pending; n],
            lease: None,
            interrupted,
            wait_started: None,
        })
    }

    /// The playbook.
    pub fn playbook(&self) -> &Playbook {
        &self.p.playbook
    }

    /// Index of the current step (== `steps.len()` when finished).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The current step.
    pub fn current(&self) -> Option<&Step> {
        self.p.playbook.steps.get(self.cursor)
    }

    /// State of every step.
    pub fn states(&self) -> &[StepState] {
        &self.states
    }

    /// The verified backup, once made.
    pub fn backup(&self) -> Option<&BackupVerified> {
        self.backup.as_ref()
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.p.journal
    }

    /// The journal, for appending (undo from the console goes through the runner's own journal so
    /// step numbers stay unique).
    pub fn journal_mut(&mut self) -> &mut Journal {
        &mut self.p.journal
    }

    /// Interrupted steps found in the journal at start (not yet acknowledged).
    pub fn interrupted(&self) -> &[StepView] {
        &self.interrupted
    }

    /// The operator re-checked the interrupted steps: journal a note and unblock.
    pub fn acknowledge_interrupted(&mut self, note: &str) -> Result<(), RunError> {
        if self.interrupted.is_empty() {
            return Ok(());
        }
        let steps: Vec<String> = self.interrupted.iter().map(|s| s.intent.step.to_string()).collect();
        self.p
            .journal
            .note(None, &format!("interrupted step(s) {} acknowledged after re-check: {note}", steps.join(", ")))?;
        self.interrupted.clear();
        Ok(())
    }

    /// Holds the volume's Lease (required before any write when the playbook is about a volume).
    pub fn set_lease(&mut self, mgr: LeaseManager, held: Held) {
        self.lease = Some((mgr, held));
    }

    /// Gives the Lease back (release it with [`LeaseManager::release`]).
    pub fn take_lease(&mut self) -> Option<(LeaseManager, Held)> {
        self.lease.take()
    }

    /// The current step and what `pick` takes from its kind (e.g. [`StepKind::act`]); a
    /// [`RunError::WrongStep`] naming `wanted` when `pick` finds nothing.
    fn step<T>(&self, wanted: StepType, pick: impl FnOnce(&StepKind) -> Option<T>) -> Result<(Step, T), RunError> {
        if !self.interrupted.is_empty() {
            return Err(RunError::Interrupted(self.interrupted.len()));
        }
        let s = self.current().ok_or(RunError::Finished)?;
        let v = pick(&s.kind).ok_or_else(|| RunError::WrongStep { current: s.kind.step_type(), wanted })?;
        Ok((s.clone(), v))
    }

    /// Continues the run where the journal says it stopped ([`crate::remedy::run::resume::derive`]): the
    /// states and cursor, and the journaled backup once [`crate::remedy::run::backup::reverify`] found it
    /// intact (else the Backup step is current again and says why). Returns the one-line summary;
    /// `None` when the journal holds nothing about this playbook.
    pub async fn resume_from_journal(&mut self) -> Result<Option<String>, RunError> {
        let mut r = crate::remedy::run::resume::derive(&self.p.playbook, &self.p.journal.report()?);
        if r.is_fresh() {
            return Ok(None);
        }
        self.backup = None;
        if let Some(b) = r.backup.clone() {
            let checked = match &self.p.executor {
                Some(exec) => crate::remedy::run::backup::reverify(exec, &b).await.map_err(|e| e.to_string()),
                None => Err("no executor to re-verify it".to_string()),
            };
            match checked {
                Ok(v) => self.backup = Some(v),
                Err(why) => r.backup_invalid(&why),
            }
        }
        let text = crate::remedy::run::resume::summary(&self.p.playbook, &r);
        (self.cursor, self.states, self.wait_started) = (r.cursor, r.states, None);
        Ok(Some(text))
    }

    /// After an undo: the states again from the journal (the undone step is current again) and
    /// the live state after the undo as the new baseline.
    pub async fn resync(&mut self) -> Result<(), RunError> {
        self.resume_from_journal().await?;
        self.p.baseline = read_live(&self.p.reader, &self.p.playbook.scope).await?;
        Ok(())
    }

    /// Journals a `step` record for `step` (steps that send nothing, skips).
    fn journal_step(&mut self, step: &Step, result: StepResult, detail: &str) -> Result<(), RunError> {
        let rec =
            StepRecord { step_id: step.id.clone(), kind: step.kind.step_type(), result, detail: detail.to_string() };
        Ok(self.p.journal.step(rec)?)
    }

    fn advance(&mut self, state: StepState) {
        if let Some(s) = self.states.get_mut(self.cursor) {
            *s = state;
        }
        self.cursor += 1;
        self.wait_started = None;
    }

    async fn renew_lease(&mut self) -> Result<(), RunError> {
        match &mut self.lease {
            Some((mgr, held)) => mgr.renew(held).await.map_err(|e: LeaseError| RunError::Lease(Some(e))),
            None if self.p.playbook.volume.is_some() => Err(RunError::Lease(None)),
            None => Ok(()),
        }
    }

    /// Runs the Backup step (re-reads the state first; snapshot + optional export).
    pub async fn run_backup(
        &mut self,
        export_to: Option<PathBuf>,
        progress: impl FnMut(ExportProgress) + Send,
    ) -> Result<&BackupVerified, RunError> {
        let (step, mut plan) = self.step(StepType::Backup, |k| k.backup().cloned())?;
        let exec = self.p.executor.clone().ok_or(RunError::NoWrites("read-only or dry-run"))?;
        self.renew_lease().await?;
        plan.export_to = export_to;
        plan.export_stall_seconds = self.p.cfg.export_stall_seconds;
        let live = read_live(&self.p.reader, &self.p.playbook.scope).await?;
        match run_backup(&exec, &mut self.p.journal, &step.id, &plan, &live, progress).await {
            Ok(v) => {
                let what = format!(
                    "{} file(s){}",
                    v.record().files.len(),
                    v.record().snapshot.as_ref().map(|s| format!(", snapshot {s}")).unwrap_or_default()
                );
                self.advance(StepState::Done(what));
                Ok(self.backup.insert(v))
            }
            Err(e) => {
                self.states[self.cursor] = StepState::Failed(e.to_string());
                Err(e.into())
            }
        }
    }

    /// Runs the Check step: the live state must match the baseline.
    pub async fn check(&mut self) -> Result<Vec<String>, RunError> {
        let (step, ()) = self.step(StepType::Check, StepKind::check)?;
        let scope = self.p.playbook.scope.clone();
        let live = read_live(&self.p.reader, &scope).await?;
        let changes = compare(&self.p.baseline, &live, &scope);
        if !changes.is_empty() {
            let e = PrecheckError::Changed(changes);
            self.journal_step(&step, StepResult::Failed, &e.to_string())?;
            self.states[self.cursor] = StepState::Failed(e.to_string());
            return Err(e.into());
        }
        let lines = live.describe(&scope);
        self.journal_step(&step, StepResult::Done, &format!("state unchanged: {}", lines.join("; ")))?;
        // facts the snapshot did not carry (DaemonSet mounts) join the baseline here, and are shown
        // (a later step's text depends on the DaemonSet's updateStrategy)
        let read = live.describe_mounts();
        self.p.baseline = live;
        let note = std::iter::once("state unchanged".to_string()).chain(read).collect::<Vec<_>>().join("; ");
        self.advance(StepState::Done(note));
        Ok(lines)
    }

    /// Prepares the current Act step: live re-check against the baseline, then the safety rules.
    /// Returns what the confirm popup shows. Unreachable before the verified backup.
    pub async fn prepare(&mut self, overrides: &Overrides) -> Result<Confirmation, RunError> {
        let (step, action) = self.step(StepType::Act, |k| k.act().cloned())?;
        let action = &action;
        if self.backup.is_none() {
            return Err(RunError::BackupFirst);
        }
        let scope = merge_scope(&self.p.playbook.scope, &scope_for(action));
        let live = read_live(&self.p.reader, &scope).await?;
        let changes = compare(&self.p.baseline, &live, &scope);
        if !changes.is_empty() {
            return Err(PrecheckError::Changed(changes).into());
        }
        if let WriteAction::SetMountPropagation { namespace, daemonset, mount_path, to, .. } = action
            && live.mounts.iter().any(|m| {
                m.present
                    && m.mount.namespace == *namespace
                    && m.mount.daemonset == *daemonset
                    && m.mount.mount_path == *mount_path
                    && m.propagation == *to
            })
        {
            let note = format!(
                "mountPropagation of {namespace}/{daemonset} {mount_path} is already {}: nothing sent",
                to.as_deref().unwrap_or("(unset)")
            );
            self.journal_step(&step, StepResult::Done, &note)?;
            self.p.baseline = live;
            self.advance(StepState::Done(note.clone()));
            return Err(RunError::AlreadyInEffect(note));
        }
        let mut ov = overrides.clone();
        if matches!(action, WriteAction::TaintOutOfService { .. }) {
            // the taint's gate is checked on the version read now, not the one the playbook was built on
            let (kube, t) = (&self.p.reader.kube, self.p.reader.api_timeout);
            ov.server_version = crate::remedy::playbook::version::read_server_version(kube, t).await.ok();
        }
        if action.is_unfence() {
            // the fence may have been journaled by another incident (another console, earlier)
            let base = self.p.journal.path().parent().and_then(|d| d.parent());
            ov.fenced_boot_ids = base.map(|b| crate::remedy::run::undo::fence_boot_ids(b, action)).unwrap_or_default();
        }
        confirmation(&step.id, action, live, scope, &ov, None, &self.p.reader)
    }

    /// Sends a prepared Act step: typed name (irreversible steps), Lease renewal, final re-check,
    /// intent, write, outcome. On success the state after the write becomes the new baseline.
    pub async fn confirm(&mut self, c: Confirmation, typed: Option<&str>) -> Result<ExecResult, RunError> {
        let (step, ()) = self.step(StepType::Act, |k| k.act().map(|_| ()))?;
        if self.backup.is_none() {
            return Err(RunError::BackupFirst);
        }
        if c.step_id != step.id {
            return Err(RunError::NotPrepared { current: step.id });
        }
        let exec = self.p.executor.clone().ok_or(RunError::NoWrites("read-only or dry-run: nothing was sent"))?;
        self.renew_lease().await?;
        let max_age = Duration::from_secs(self.p.cfg.precheck_max_age_seconds);
        let (r, _) = send(&exec, &mut self.p.journal, &self.p.reader, c, typed, max_age).await?;
        if r.ok {
            // what the next step is compared with: the state after this write
            self.p.baseline = read_live(&self.p.reader, &self.p.playbook.scope).await?;
            let note = if r.stderr.is_empty() { "ok".to_string() } else { r.stderr.clone() };
            self.advance(StepState::Done(note));
        } else {
            self.states[self.cursor] = StepState::Failed(crate::remedy::journal::outcome_text(&r.outcome(0)));
        }
        Ok(r)
    }

    /// The operator ran a Manual step's commands (journaled).
    pub fn manual_done(&mut self) -> Result<(), RunError> {
        let (step, ()) = self.step(StepType::Manual, StepKind::manual)?;
        self.journal_step(&step, StepResult::Done, "done by the operator")?;
        self.advance(StepState::Done("done by the operator".into()));
        Ok(())
    }

    /// Skips the current step if it is optional (journaled with the reason).
    pub fn skip(&mut self, reason: &str) -> Result<(), RunError> {
        let s = self.current().ok_or(RunError::Finished)?.clone();
        if !s.optional {
            return Err(RunError::NotOptional(s.id));
        }
        self.journal_step(&s, StepResult::Skipped, reason)?;
        self.advance(StepState::Skipped(reason.into()));
        Ok(())
    }

    /// One poll of the current Wait step (the UI calls it every `poll`; the countdown is `remaining`).
    pub async fn wait_poll(&mut self) -> Result<WaitStatus, RunError> {
        let (step, (condition, timeout)) = self.step(StepType::Wait, |k| k.wait().map(|(c, t)| (c.clone(), t)))?;
        let (condition, timeout) = (&condition, &timeout);
        let now = self.p.reader.clock.now();
        let started = *self.wait_started.get_or_insert(now);
        let (met, seen) = evaluate(&self.p.reader, condition).await?;
        if met {
            self.journal_step(&step, StepResult::Done, &seen)?;
            self.advance(StepState::Done(seen.clone()));
            return Ok(WaitStatus::Met(seen));
        }
        let elapsed = now.duration_since(started).unsigned_abs();
        if elapsed >= *timeout {
            // what the step said to do when it does not come (its explanation), after what it waited for
            let next = if step.explain.is_empty() { String::new() } else { format!(". {}", step.explain) };
            let text =
                format!("timed out after {} s waiting for: {} ({seen}){next}", timeout.as_secs(), condition.describe());
            self.journal_step(&step, StepResult::Failed, &text)?;
            self.advance(StepState::Failed(text.clone()));
            return Ok(WaitStatus::TimedOut(text));
        }
        Ok(WaitStatus::Pending { seen, remaining: *timeout - elapsed })
    }

    /// Polls the current Wait step until it is met or times out.
    pub async fn wait(&mut self) -> Result<WaitStatus, RunError> {
        let poll = match self.current().map(|s| &s.kind) {
            Some(StepKind::Wait { poll, .. }) => *poll,
            _ => Duration::from_secs(1),
        };
        loop {
            match self.wait_poll().await? {
                WaitStatus::Pending { remaining, .. } => tokio::time::sleep(poll.min(remaining)).await,
                done => return Ok(done),
            }
        }
    }

    /// One poll of the current Verify step (the service calls it every `remedy.wait_poll_seconds`
    /// while it is [`VerifyStatus::Pending`]): every condition is read; when all hold the step is
    /// journaled done and the runner moves on. A condition that does not hold yet (a watcher Ceph
    /// drops 30 s after the client went away) is read again until `remedy.verify_timeout_seconds`
    /// of console time have passed since the first poll; then the failure is journaled and the
    /// step stays current, so it can be run again (the timeout starts again).
    pub async fn verify_poll(&mut self) -> Result<VerifyStatus, RunError> {
        let (step, conds) = self.step(StepType::Verify, |k| k.verify().map(<[Condition]>::to_vec))?;
        let now = self.p.reader.clock.now();
        let started = *self.wait_started.get_or_insert(now);
        let mut out = Vec::new();
        for c in &conds {
            match evaluate(&self.p.reader, c).await {
                Ok((holds, seen)) => out.push(Checked { condition: c.describe(), holds, seen }),
                Err(e) => {
                    self.wait_started = None;
                    return Err(e.into());
                }
            }
        }
        let text = Checked::journal_text(&out);
        if out.iter().all(|c| c.holds) {
            self.journal_step(&step, StepResult::Done, &text)?;
            self.advance(StepState::Done(text));
            return Ok(VerifyStatus::Held(out));
        }
        let timeout = Duration::from_secs(self.p.cfg.verify_timeout_seconds);
        let elapsed = now.duration_since(started).unsigned_abs();
        if elapsed < timeout {
            return Ok(VerifyStatus::Pending { checks: out, remaining: timeout - elapsed });
        }
        let text = format!("still not so after {} s: {text}", timeout.as_secs());
        self.journal_step(&step, StepResult::Failed, &text)?;
        self.states[self.cursor] = StepState::Failed(text);
        self.wait_started = None;
        Ok(VerifyStatus::Failed(out))
    }

    /// The service stopped reading the current step (Esc): a Verify's time starts again on its
    /// next run; a Wait keeps its start (its timeout counts from its first poll).
    pub fn stop_polling(&mut self) {
        if self.current().is_some_and(|s| s.kind.verify().is_some()) {
            self.wait_started = None;
        }
    }

    /// Polls the current Verify step until every condition holds or its time runs out (see
    /// [`Runner::verify_poll`]); returns the last checks. A failed verification stays on the step
    /// (it can be run again).
    pub async fn verify(&mut self) -> Result<Vec<Checked>, RunError> {
        let poll = Duration::from_secs(self.p.cfg.wait_poll_seconds.max(1));
        loop {
            match self.verify_poll().await? {
                VerifyStatus::Pending { remaining, .. } => tokio::time::sleep(poll.min(remaining)).await,
                VerifyStatus::Held(c) | VerifyStatus::Failed(c) => return Ok(c),
            }
        }
    }
}

/// One poll of a Verify step ([`Runner::verify_poll`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyStatus {
    /// Every condition holds (journaled); the runner moved on.
    Held(Vec<Checked>),
    /// Not every condition holds yet: read again until `remaining` (console time) has passed.
    Pending {
        /// Every condition as read now, in the step's order.
        checks: Vec<Checked>,
        /// Time left before the step fails.
        remaining: Duration,
    },
    /// Still not holding when the time ran out: journaled as failed; the step stays current.
    Failed(Vec<Checked>),
}

impl VerifyStatus {
    /// The conditions as last read.
    pub fn checks(&self) -> &[Checked] {
        match self {
            VerifyStatus::Held(c) | VerifyStatus::Failed(c) | VerifyStatus::Pending { checks: c, .. } => c,
        }
    }
}

#[cfg(test)]
mod tests;
