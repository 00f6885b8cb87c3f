//! The remediation service: a tokio task that owns the open playbook run (its [`Runner`], journal
//! and Lease) and does every remediation call off the console's task. It knows no UI: the console
//! sends [`RemedyRequest`] commands and shows the [`RemedyMsg`] messages that come back, as owned
//! views ([`RunnerView`], [`ConfirmView`]); it never holds the runner.
//!
//! The service runs on its own timers ([`timers`]): while a Wait step is pending it polls it every
//! `remedy.wait_poll_seconds`, and it renews the Lease it holds every third of
//! `remedy.lease_duration_seconds` (at least 5 s), both counted on the console's clock
//! ([`Clocks::timers`]), whatever the console is doing.
//!
//! Modes: live (an [`Executor`] exists), dry-run (no executor, no runner, no journal: Act steps are
//! previewed from a live re-check, nothing is sent; [`dry_run`]), read-only (the service is never
//! started).
//!
//! Files: this one holds the task, its loop and the open/close of a run; [`live`] the commands on
//! a live run, [`confirm`] sending a confirmation, [`undo`] preparing an undo (both modes),
//! [`msg`] the commands and messages, [`step_log`] the session log's step records.

mod confirm;
mod dry_run;
mod live;
mod msg;
mod step_log;
mod timers;
mod undo;

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::clock::SharedClock;
use crate::config::RemedyConfig;
use crate::remedy::action::executor::Executor;
use crate::remedy::action::precheck::{LiveState, Reader};
use crate::remedy::action::safety::SafetyError;
use crate::remedy::journal::incidents::find_incident;
use crate::remedy::journal::{self, Author, Journal};
use crate::remedy::playbook::Playbook;
use crate::remedy::run::lease::{LeaseError, LeaseManager, lease_name, session_identity};
use crate::remedy::run::refusal::Refusal;
use crate::remedy::run::{Confirmation, RunError, Runner, RunnerParts};
use crate::session::log::Writes;

pub use self::msg::{ConfirmView, LeaseView, OverrideNeed, RemedyMsg, RemedyRequest, RunnerView};
use self::step_log::StepLog;
use self::timers::Timers;
use crate::remedy::run::{VerifyStatus, WaitStatus};
use crate::session::log::StepResult;

/// The service's clocks.
#[derive(Debug, Clone)]
pub struct Clocks {
    /// What journal records, Lease times and incident ids are stamped with: the wall clock, in
    /// training too (the journal is a real record of the training session).
    pub records: SharedClock,
    /// What the service's timers count on (the Wait poll period, the Lease renewal period): the
    /// console's clock, so a training scenario's Wait steps keep pace with its simulated time.
    pub timers: SharedClock,
}

/// Everything the service needs.
pub struct ServiceParts {
    /// Live reads.
    pub reader: Reader,
    /// Writes; `None` = dry-run.
    pub executor: Option<Executor>,
    /// `[remedy]`.
    pub cfg: RemedyConfig,
    /// Incident directory base.
    pub base: PathBuf,
    /// Operator and kube context for the journal.
    pub author: Author,
    /// Its clocks.
    pub clocks: Clocks,
}

/// The open playbook run: its runner (none in dry-run), the finding's state, the Lease.
struct PlaybookRun {
    runner: Option<Runner>,
    playbook: Playbook,
    baseline: LiveState,
    lease_mgr: Option<LeaseManager>,
    lease: LeaseView,
    incident: String,
}

struct Service {
    p: ServiceParts,
    tx: UnboundedSender<RemedyMsg>,
    run: Option<PlaybookRun>,
    pending: Option<Confirmation>,
    identity: String,
    /// The request being handled is a `PrepareUndo` (said with each refusal).
    undo: bool,
    timers: Timers,
}

/// The remediation service of a console on `client`: none with [`Writes::ReadOnly`] (no executor
/// can exist) or without Ceph access (`ceph` is `None`; the channel then only carries the API
/// server version, so the playbooks shown are built for it); without an executor with
/// [`Writes::DryRun`]. Journals go under `base`, stamped with the operator and `context`.
/// Returns the command sender (`None`: no service) and the message receiver.
pub fn start_for_console(
    client: &kube::Client,
    ceph: Option<crate::sources::ceph::cli::CephCli>,
    cfg: &RemedyConfig,
    base: PathBuf,
    context: &str,
    writes: Writes,
    clocks: Clocks,
) -> (Option<UnboundedSender<RemedyRequest>>, UnboundedReceiver<RemedyMsg>) {
    let api_timeout = Duration::from_secs(cfg.api_timeout_seconds);
    let ceph = match ceph {
        Some(c) if writes != Writes::ReadOnly => c,
        _ => {
            let (tx, rx) = unbounded_channel();
            let client = client.clone();
            tokio::spawn(async move {
                let v = crate::remedy::playbook::version::read_server_version(&client, api_timeout).await;
                let _ = tx.send(RemedyMsg::ServerVersion(v));
            });
            return (None, rx);
        }
    };
    let executor = match writes {
        Writes::Live => Executor::new(false, client.clone(), ceph.clone(), api_timeout).ok(),
        Writes::DryRun | Writes::ReadOnly => None,
    };
    let reader = Reader { kube: client.clone(), ceph, api_timeout, clock: clocks.timers.clone() };
    let author = Author { operator: journal::operator(), context: context.to_string() };
    let (tx, rx) = spawn(ServiceParts { reader, executor, cfg: cfg.clone(), base, author, clocks });
    (Some(tx), rx)
}

/// Starts the service; returns the command sender and the message receiver. The service ends
/// (releasing the Lease it holds) when the sender is dropped.
pub fn spawn(parts: ServiceParts) -> (UnboundedSender<RemedyRequest>, UnboundedReceiver<RemedyMsg>) {
    let (req_tx, mut req_rx) = unbounded_channel::<RemedyRequest>();
    let (tx, rx) = unbounded_channel();
    let identity = session_identity(&parts.author.operator);
    let timers = Timers::new(parts.clocks.timers.clone(), &parts.cfg);
    let mut s = Service { p: parts, tx, run: None, pending: None, identity, undo: false, timers };
    tokio::spawn(async move {
        // the playbook builder picks the multi-attach fix from this (out-of-service taint from 1.24)
        let v = crate::remedy::playbook::version::read_server_version(&s.p.reader.kube, s.p.reader.api_timeout).await;
        s.send(RemedyMsg::ServerVersion(v));
        let mut tick = tokio::time::interval(timers::TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                req = req_rx.recv() => match req {
                    Some(req) => s.handle(req).await,
                    None => break,
                },
                _ = tick.tick() => s.on_tick().await,
            }
        }
        s.close().await;
    });
    (req_tx, rx)
}

fn override_need(e: &RunError) -> Option<OverrideNeed> {
    match e {
        RunError::Safety(SafetyError::ReadyNode { node }) => Some(OverrideNeed::ReadyNode(node.clone())),
        RunError::Safety(SafetyError::WideBlocklist { addr, .. }) => Some(OverrideNeed::WideBlocklist(addr.clone())),
        RunError::Safety(SafetyError::NotRebooted { node, .. }) => Some(OverrideNeed::NotRebooted(node.clone())),
        RunError::Safety(SafetyError::Unattributed { addr, .. }) => Some(OverrideNeed::Unattributed(addr.clone())),
        RunError::Safety(SafetyError::Remediating { node, .. }) => Some(OverrideNeed::Remediating(node.clone())),
        RunError::Safety(SafetyError::FeatureGate { .. }) => {
            Some(OverrideNeed::FeatureGate(crate::remedy::playbook::version::OUT_OF_SERVICE_GATE.to_string()))
        }
        _ => None,
    }
}

impl Service {
    fn send(&self, m: RemedyMsg) {
        let _ = self.tx.send(m);
    }

    /// Sends a refusal, with the override the safety rules would accept when there is one.
    fn refuse(&self, refusal: Refusal) {
        let need = refusal.run_error().and_then(override_need);
        self.send(RemedyMsg::Failed { refusal, need, undo: self.undo });
    }

    fn fail(&self, e: RunError) {
        self.refuse(e.into());
    }

    /// The live run's runner, when one is open.
    fn runner(&mut self) -> Option<&mut Runner> {
        self.run.as_mut()?.runner.as_mut()
    }

    fn view(&self) {
        let Some(s) = &self.run else { return };
        let Some(r) = &s.runner else { return };
        let next_undo = journal::read(r.journal().path())
            .ok()
            .and_then(|rep| rep.undo_plan(None).items.into_iter().next())
            .map(|i| (i.step, i.action.summary()));
        self.send(RemedyMsg::View(RunnerView {
            incident: s.incident.clone(),
            journal: r.journal().path().to_path_buf(),
            cursor: r.cursor(),
            states: r.states().to_vec(),
            backup: r.backup().map(|b| b.record().clone()),
            interrupted: r.interrupted().to_vec(),
            lease: s.lease.clone(),
            next_undo,
        }));
    }

    async fn close(&mut self) {
        self.pending = None;
        self.timers.stop_waiting();
        self.timers.released();
        if let Some(mut s) = self.run.take()
            && let Some(r) = s.runner.as_mut()
            && let Some((mgr, held)) = r.take_lease()
            && let Err(e) = mgr.release(held).await
        {
            tracing::warn!("releasing the Lease: {e}");
        }
    }

    fn runner_for(
        &self,
        exec: &Executor,
        playbook: &Playbook,
        baseline: &LiveState,
        incident: &str,
    ) -> Result<Runner, RunError> {
        let journal =
            Journal::open(&self.p.base, incident, self.p.author.clone())?.with_clock(self.p.clocks.records.clone());
        Runner::new(RunnerParts {
            playbook: playbook.clone(),
            journal,
            reader: self.p.reader.clone(),
            executor: Some(exec.clone()),
            baseline: baseline.clone(),
            cfg: self.p.cfg.clone(),
        })
    }

    async fn open(&mut self, playbook: Playbook, baseline: LiveState, subject: String) {
        self.close().await;
        let now = self.p.clocks.records.now();
        let incident = find_incident(&self.p.base, playbook.pattern, &subject, now)
            .unwrap_or_else(|| journal::new_incident_id(playbook.pattern, &subject, now));
        let mut s = PlaybookRun {
            runner: None,
            playbook: playbook.clone(),
            baseline: baseline.clone(),
            lease_mgr: None,
            lease: LeaseView::None,
            incident: incident.clone(),
        };
        let Some(exec) = self.p.executor.clone() else {
            self.run = Some(s);
            self.send(RemedyMsg::Done {
                ok: true,
                text: "dry-run: steps are previewed from a live re-check; nothing is sent".into(),
            });
            return;
        };
        let mut runner = match self.runner_for(&exec, &playbook, &baseline, &incident) {
            Ok(r) => r,
            Err(e) => return self.fail(e),
        };
        // the run belongs to the incident: continue where its journal says it stopped; once its
        // playbook finished, acting again (the finding is back) is a new incident
        let mut resumed = runner.resume_from_journal().await;
        if runner.cursor() >= playbook.steps.len() {
            s.incident = journal::new_incident_id(playbook.pattern, &subject, now);
            runner = match self.runner_for(&exec, &playbook, &baseline, &s.incident) {
                Ok(r) => r,
                Err(e) => return self.fail(e),
            };
            resumed = Ok(None);
        }
        if let Some(pv) = &playbook.volume {
            let mgr = LeaseManager::new(
                &exec,
                &self.p.cfg.lease_namespace,
                &self.identity,
                Duration::from_secs(self.p.cfg.lease_duration_seconds),
                self.p.clocks.records.clone(),
            );
            match mgr.acquire(&lease_name(pv)).await {
                Ok(held) => {
                    s.lease = LeaseView::Held(format!("{}/{} as {}", held.namespace, held.name, held.identity));
                    runner.set_lease(mgr.clone(), held);
                    self.timers.renewed();
                }
                Err(e @ LeaseError::Expired { .. }) => s.lease = LeaseView::Expired(e.to_string()),
                Err(e) => s.lease = LeaseView::Other(e.to_string()),
            }
            s.lease_mgr = Some(mgr);
        }
        s.runner = Some(runner);
        self.run = Some(s);
        self.view();
        match resumed {
            Ok(Some(text)) => self.send(RemedyMsg::Done { ok: true, text }),
            Ok(None) => {}
            Err(e) => self.fail(e),
        }
    }

    async fn handle(&mut self, req: RemedyRequest) {
        self.undo = matches!(req, RemedyRequest::PrepareUndo(_));
        if let RemedyRequest::Open { playbook, baseline, subject } = req {
            return self.open(*playbook, *baseline, subject).await;
        }
        if req == RemedyRequest::Close {
            return self.close().await;
        }
        if self.run.is_none() {
            return self.refuse(Refusal::NoPlaybook);
        }
        if self.run.as_ref().is_some_and(|s| s.runner.is_none()) {
            return self.dry_run(req).await;
        }
        let undo = matches!(req, RemedyRequest::Confirm { .. }) && self.pending_undo();
        self.live(req).await;
        if undo && let Some(r) = self.runner() {
            // the undone step is current again, shown as undone
            if let Err(e) = r.resync().await {
                self.fail(e);
            }
        }
        self.view();
    }

    /// The timers' work, between commands: a poll of the pending Wait step when its period has
    /// passed, a renewal of the held Lease when due.
    async fn on_tick(&mut self) {
        self.undo = false;
        let cursor = self.run.as_ref().and_then(|s| s.runner.as_ref()).map(Runner::cursor);
        if let Some(step) = self.timers.wait_due() {
            let verify = self.run.as_ref().and_then(|s| s.playbook.steps.get(step)).and_then(|s| s.kind.verify());
            if cursor == Some(step) && verify.is_some() {
                self.poll_verify().await;
                self.view();
            } else if cursor == Some(step) {
                self.poll_wait().await;
                self.view();
            } else {
                // the step ended another way (skipped, closed): nothing left to poll
                self.timers.stop_waiting();
            }
        }
        if self.timers.renew_due() {
            self.keep_alive().await;
        }
    }
}

// ---- the timers: Wait polling and Lease keep-alive

impl Service {
    /// One poll of the current Wait step: recorded in the session log when it ends, answered as
    /// [`RemedyMsg::Wait`]; while pending, the timer polls it again after the poll period.
    pub(super) async fn poll_wait(&mut self) {
        let tx = self.tx.clone();
        let Some(r) = self.runner() else { return };
        let step = StepLog::of(r.current(), tx);
        let index = r.cursor();
        match r.wait_poll().await {
            Ok(w) => {
                match &w {
                    WaitStatus::Met(seen) => step.log(StepResult::Done, seen.clone()),
                    WaitStatus::TimedOut(text) => step.log(StepResult::Failed, text.clone()),
                    WaitStatus::Pending { .. } => {}
                }
                match &w {
                    WaitStatus::Pending { .. } => self.timers.waiting(index),
                    _ => self.timers.stop_waiting(),
                }
                self.send(RemedyMsg::Wait(w));
            }
            Err(e) => {
                step.failed(&e);
                self.timers.stop_waiting();
                self.fail(e);
            }
        }
    }

    /// One read of the current Verify step: recorded in the session log when it ends, answered as
    /// [`RemedyMsg::Verified`]; while some condition does not hold yet, the timer reads it again
    /// after the poll period.
    pub(super) async fn poll_verify(&mut self) {
        let tx = self.tx.clone();
        let Some(r) = self.runner() else { return };
        let step = StepLog::of(r.current(), tx);
        let index = r.cursor();
        match r.verify_poll().await {
            Ok(v) => {
                let remaining = match &v {
                    VerifyStatus::Pending { remaining, .. } => Some(*remaining),
                    VerifyStatus::Held(c) | VerifyStatus::Failed(c) => {
                        step.verified(c);
                        None
                    }
                };
                match remaining {
                    Some(_) => self.timers.waiting(index),
                    None => self.timers.stop_waiting(),
                }
                self.send(RemedyMsg::Verified { step: index, checks: v.checks().to_vec(), remaining });
            }
            Err(e) => {
                step.failed(&e);
                self.timers.stop_waiting();
                self.fail(e);
            }
        }
    }

    /// Renews the held Lease. A failure loses it: the view says so and the failure is sent.
    pub(super) async fn keep_alive(&mut self) {
        let Some(s) = self.run.as_mut() else { return self.timers.released() };
        let Some((mgr, mut held)) = s.runner.as_mut().and_then(|r| r.take_lease()) else {
            return self.timers.released();
        };
        match mgr.renew(&mut held).await {
            Ok(()) => {
                if let Some(r) = s.runner.as_mut() {
                    r.set_lease(mgr, held);
                }
                self.timers.renewed();
            }
            Err(e) => {
                s.lease = LeaseView::Other(e.to_string());
                self.timers.released();
                self.fail(RunError::Lease(Some(e)));
                self.view();
            }
        }
    }
}

#[cfg(test)]
mod tests;
