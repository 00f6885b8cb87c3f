//! The remediation worker: a tokio task that owns the playbook [`Runner`] (and its journal and
//! Lease) and runs every runner call off the UI task. The app sends [`RemedyRequest`]s as effects;
//! the worker answers with [`RemedyMsg`]s, which the loop feeds back into `App::update`. The app
//! never holds the runner, only owned copies of what it shows ([`RunnerView`], [`ConfirmView`]).
//!
//! Modes: live (an [`Executor`] exists), dry-run (no executor, no runner, no journal: Act steps are
//! previewed from a live re-check, nothing is sent), read-only (the worker is never started).

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::clock::SharedClock;
use crate::config::RemedyConfig;
use crate::remedy::condition::evaluate;
use crate::remedy::executor::Executor;
use crate::remedy::journal::{self, Author, Journal};
use crate::remedy::lease::{LeaseError, LeaseManager, lease_name, session_identity};
use crate::remedy::playbook::{Playbook, StepKind};
use crate::remedy::precheck::{LiveState, Reader};
use crate::remedy::refusal::Refusal;
use crate::remedy::runner::{Confirmation, RunError, Runner, RunnerParts, WaitStatus};
use crate::remedy::safety::SafetyError;

pub use super::worker_msg::{ConfirmView, LeaseView, OverrideNeed, RemedyMsg, RemedyRequest, RunnerView};
use super::worker_msg::{StepLog, step_event};
use super::worker_preview::{dry_check, preview};
use crate::session::log::StepResult;

/// Everything the worker needs.
pub struct WorkerParts {
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
    /// The clock journal records, Lease times and incident ids are read from: the wall clock,
    /// in training too (the journal is a real record of the training session; the simulation's
    /// own time drives only the simulated cluster).
    pub clock: SharedClock,
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

struct Worker {
    p: WorkerParts,
    tx: UnboundedSender<RemedyMsg>,
    run: Option<PlaybookRun>,
    pending: Option<Confirmation>,
    identity: String,
    /// The request being handled is a `PrepareUndo` (said with each refusal).
    undo: bool,
}

/// The remediation worker of a console on `client`: none with `read_only` (no executor can
/// exist) or without Ceph access (`ceph` is `None`; the channel then only carries the API server
/// version, so the playbooks shown are built for it); without an executor with `dry_run`.
/// Journals go under `base`, stamped with the operator and `context` at `clock`'s time.
#[allow(clippy::too_many_arguments, reason = "the console's composition root passes each part once")]
pub fn start_for_console(
    client: &kube::Client,
    ceph: Option<crate::sources::ceph::cli::CephCli>,
    cfg: &RemedyConfig,
    base: PathBuf,
    context: &str,
    read_only: bool,
    dry_run: bool,
    clock: SharedClock,
) -> (Option<UnboundedSender<RemedyRequest>>, UnboundedReceiver<RemedyMsg>) {
    let api_timeout = Duration::from_secs(cfg.api_timeout_seconds);
    let ceph = match ceph {
        Some(c) if !read_only => c,
        _ => {
            let (tx, rx) = unbounded_channel();
            let client = client.clone();
            tokio::spawn(async move {
                let v = crate::remedy::version::read_server_version(&client, api_timeout).await;
                let _ = tx.send(RemedyMsg::ServerVersion(v));
            });
            return (None, rx);
        }
    };
    let executor = if dry_run { None } else { Executor::new(false, client.clone(), ceph.clone(), api_timeout).ok() };
    let reader = Reader { kube: client.clone(), ceph, api_timeout };
    let author = Author { operator: journal::operator(), context: context.to_string() };
    let (tx, rx) = spawn(WorkerParts { reader, executor, cfg: cfg.clone(), base, author, clock });
    (Some(tx), rx)
}

/// Starts the worker; returns the request sender and the answer receiver.
pub fn spawn(parts: WorkerParts) -> (UnboundedSender<RemedyRequest>, UnboundedReceiver<RemedyMsg>) {
    let (req_tx, mut req_rx) = unbounded_channel::<RemedyRequest>();
    let (tx, rx) = unbounded_channel();
    let identity = session_identity(&parts.author.operator);
    let mut w = Worker { p: parts, tx, run: None, pending: None, identity, undo: false };
    tokio::spawn(async move {
        // the playbook builder picks the multi-attach fix from this (out-of-service taint from 1.28)
        let v = crate::remedy::version::read_server_version(&w.p.reader.kube, w.p.reader.api_timeout).await;
        w.send(RemedyMsg::ServerVersion(v));
        while let Some(req) = req_rx.recv().await {
            w.handle(req).await;
        }
        w.close().await;
    });
    (req_tx, rx)
}

/// Interrupted steps of every incident journal under `base`: `(incident, step, summary)`.
pub fn interrupted_steps(base: &std::path::Path) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    for inc in
        crate::remedy::incidents::list_incidents(base).unwrap_or_default().into_iter().filter(|i| i.interrupted > 0)
    {
        if let Ok(rep) = journal::read(&inc.path) {
            for s in rep.interrupted() {
                out.push((inc.id.clone(), s.intent.step, s.intent.action.summary()));
            }
        }
    }
    out
}

/// The newest incident under `base` for `pattern` on `subject` started within a day, so a restarted
/// console continues its journal (interrupted steps, undo).
pub fn find_incident(base: &std::path::Path, pattern: &str, subject: &str, now: jiff::Timestamp) -> Option<String> {
    let fresh = journal::new_incident_id(pattern, subject, now);
    let suffix = fresh.get(17..)?.to_string();
    crate::remedy::incidents::list_incidents(base)
        .ok()?
        .into_iter()
        .rev()
        .filter(|i| i.id.get(17..) == Some(suffix.as_str()))
        .find(|i| i.started.is_some_and(|t| (now - t).get_seconds() < 86_400))
        .map(|i| i.id)
}

fn override_need(e: &RunError) -> Option<OverrideNeed> {
    match e {
        RunError::Safety(SafetyError::ReadyNode { node }) => Some(OverrideNeed::ReadyNode(node.clone())),
        RunError::Safety(SafetyError::WideBlocklist { addr, .. }) => Some(OverrideNeed::WideBlocklist(addr.clone())),
        RunError::Safety(SafetyError::NotRebooted { node, .. }) => Some(OverrideNeed::NotRebooted(node.clone())),
        _ => None,
    }
}

impl Worker {
    fn send(&self, m: RemedyMsg) {
        let _ = self.tx.send(m);
    }

    fn fail(&self, e: RunError) {
        let need = override_need(&e);
        self.send(RemedyMsg::Failed { refusal: e.into(), need, undo: self.undo });
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
        if let Some(mut s) = self.run.take()
            && let Some(r) = s.runner.as_mut()
            && let Some((mgr, held)) = r.take_lease()
            && let Err(e) = mgr.release(held).await
        {
            tracing::warn!("releasing the Lease: {e}");
        }
    }

    async fn open(&mut self, playbook: Playbook, baseline: LiveState, subject: String) {
        self.close().await;
        let now = self.p.clock.now();
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
            self.send(RemedyMsg::Done(
                true,
                "dry-run: steps are previewed from a live re-check; nothing is sent".into(),
            ));
            return;
        };
        let runner_for = |incident: &str| -> Result<Runner, RunError> {
            let journal =
                Journal::open(&self.p.base, incident, self.p.author.clone())?.with_clock(self.p.clock.clone());
            let (reader, cfg) = (self.p.reader.clone(), self.p.cfg.clone());
            let playbook = playbook.clone();
            Runner::new(RunnerParts {
                playbook,
                journal,
                reader,
                executor: Some(exec.clone()),
                baseline: baseline.clone(),
                cfg,
            })
        };
        let mut runner = match runner_for(&incident) {
            Ok(r) => r,
            Err(e) => return self.fail(e),
        };
        // the run belongs to the incident: continue where its journal says it stopped; once its
        // playbook finished, acting again (the finding is back) is a new incident
        let mut resumed = runner.resume_from_journal().await;
        if runner.cursor() >= playbook.steps.len() {
            s.incident = journal::new_incident_id(playbook.pattern, &subject, now);
            runner = match runner_for(&s.incident) {
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
                self.p.clock.clone(),
            );
            match mgr.acquire(&lease_name(pv)).await {
                Ok(held) => {
                    s.lease = LeaseView::Held(format!("{}/{} as {}", held.namespace, held.name, held.identity));
                    runner.set_lease(mgr.clone(), held);
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
            Ok(Some(text)) => self.send(RemedyMsg::Done(true, text)),
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
            return self.send(RemedyMsg::refused(Refusal::NoPlaybook, self.undo));
        }
        if self.run.as_ref().is_some_and(|s| s.runner.is_none()) {
            return self.dry_run(req).await;
        }
        let undo =
            matches!(req, RemedyRequest::Confirm { .. }) && self.pending.as_ref().is_some_and(|c| c.undo_of.is_some());
        self.live(req).await;
        if undo && let Some(r) = self.run.as_mut().and_then(|s| s.runner.as_mut()) {
            // the undone step is current again, shown as undone
            if let Err(e) = r.resync().await {
                self.fail(e);
            }
        }
        self.view();
    }

    async fn live(&mut self, req: RemedyRequest) {
        let tx = self.tx.clone();
        let record = move |e: crate::session::Event| {
            let _ = tx.send(RemedyMsg::Record(e));
        };
        let Some(s) = self.run.as_mut() else { return };
        let Some(r) = s.runner.as_mut() else { return };
        // the step this request is about, for the session log's `step` records
        let step = StepLog::of(r.current(), self.tx.clone());
        let res: Result<RemedyMsg, RunError> = match req {
            RemedyRequest::Backup { export_to } => {
                let tx = self.tx.clone();
                r.run_backup(export_to, move |p| {
                    let _ = tx.send(RemedyMsg::Export(p));
                })
                .await
                .inspect_err(|e| step.failed(e))
                .map(|b| {
                    record(crate::session::Event::backup(b.record()));
                    let snap = b.record().snapshot.clone().unwrap_or_else(|| "no image".into());
                    let export = b
                        .record()
                        .export
                        .as_ref()
                        .map(|e| format!(", full copy {} ({} bytes, sha256 {})", e.path.display(), e.bytes, e.sha256))
                        .unwrap_or_default();
                    RemedyMsg::Done(
                        true,
                        format!("backup verified: {} file(s), snapshot {snap}{export}", b.record().files.len()),
                    )
                })
            }
            RemedyRequest::Check => r.check().await.inspect_err(|e| step.failed(e)).map(|lines| {
                step.log(StepResult::Done, format!("state unchanged since the finding: {}", lines.join("; ")));
                RemedyMsg::Done(true, "re-check: state unchanged since the finding".into())
            }),
            RemedyRequest::Prepare { overrides, .. } => match r.prepare(&overrides).await {
                Ok(mut c) => {
                    c.command = crate::remedy::resolve::display_now(&self.p.reader, &c.action).await;
                    let v = ConfirmView::of(&c, false);
                    self.pending = Some(c);
                    Ok(RemedyMsg::Confirm(v))
                }
                Err(RunError::AlreadyInEffect(note)) => {
                    step.log(StepResult::Done, note.clone());
                    Ok(RemedyMsg::Done(true, note))
                }
                Err(e) => {
                    step.failed(&e);
                    Err(e)
                }
            },
            RemedyRequest::Confirm { step_id, typed } => match self.pending.take() {
                Some(c) if c.step_id == step_id => {
                    let undo = c.undo_of.is_some();
                    let (logged_step, logged_command, undo_of) = (c.step_id.clone(), c.command.clone(), c.undo_of);
                    let res = if undo {
                        match self.p.executor.clone() {
                            Some(exec) => {
                                crate::remedy::runner::confirm_undo(
                                    &exec,
                                    r.journal_mut(),
                                    &self.p.reader,
                                    c,
                                    typed.as_deref(),
                                    &self.p.cfg,
                                )
                                .await
                            }
                            None => Err(RunError::NoWrites("dry-run")),
                        }
                    } else {
                        r.confirm(c, typed.as_deref()).await
                    };
                    match &res {
                        Err(RunError::Journal(_)) | Ok(_) => {}
                        // refused before anything was sent (typed name, stale, state changed)
                        Err(e) if undo => {
                            record(step_event(&logged_step, "undo", "", StepResult::Failed, e.to_string()))
                        }
                        Err(e) => step.failed(e),
                    }
                    if let Err(e @ RunError::Journal(_)) = &res {
                        // accepted, but the journal could not be written: the session log says
                        // so. Before the intent nothing was sent; after it, the journal shows the
                        // step as interrupted, so the outcome is stated as unknown.
                        record(crate::session::Event::Action {
                            step_id: logged_step.clone(),
                            command: logged_command.clone(),
                            ok: false,
                            outcome: format!(
                                "journal write failed, outcome unknown (not sent if no intent was written): {e}"
                            ),
                            exit_code: None,
                            api_status: None,
                            duration_ms: 0,
                            sent: None,
                        });
                    }
                    res.map(|x| {
                        let outcome = x.outcome(undo_of.unwrap_or(0));
                        record(match undo_of {
                            Some(n) => {
                                crate::session::Event::undo(n, x.sent.as_deref().unwrap_or(&logged_command), &outcome)
                            }
                            None => crate::session::Event::action(
                                &logged_step,
                                &logged_command,
                                x.sent.as_deref(),
                                &outcome,
                            ),
                        });
                        let text = if x.stderr.is_empty() { "ok".to_string() } else { x.stderr.clone() };
                        let what = if undo { "undo" } else { "action" };
                        let extra = if undo { " — the undone step is current again" } else { "" };
                        RemedyMsg::Done(x.ok, format!("{what} {}: {text}{extra}", if x.ok { "done" } else { "FAILED" }))
                    })
                }
                _ => Ok(RemedyMsg::refused(Refusal::ConfirmMismatch, false)),
            },
            RemedyRequest::Cancel => {
                self.pending = None;
                Ok(RemedyMsg::Done(true, "cancelled: nothing was sent".into()))
            }
            RemedyRequest::ManualDone => r.manual_done().map(|_| {
                step.log(StepResult::Done, "done by the operator (marked in the console)".into());
                RemedyMsg::Done(true, "manual step marked done".into())
            }),
            RemedyRequest::Skip => {
                let reason = "skipped by the operator in the console";
                r.skip(reason).map(|_| {
                    step.log(StepResult::Skipped, reason.into());
                    RemedyMsg::Done(true, "step skipped (journaled)".into())
                })
            }
            RemedyRequest::WaitPoll => r.wait_poll().await.inspect_err(|e| step.failed(e)).map(|w| {
                match &w {
                    WaitStatus::Met(seen) => step.log(StepResult::Done, seen.clone()),
                    WaitStatus::TimedOut(text) => step.log(StepResult::Failed, text.clone()),
                    WaitStatus::Pending { .. } => {}
                }
                RemedyMsg::Wait(w)
            }),
            RemedyRequest::Verify { .. } => {
                let i = r.cursor();
                r.verify().await.inspect_err(|e| step.failed(e)).map(|v| {
                    let v: Vec<_> = v.into_iter().map(|(c, ok, seen)| (c.describe(), ok, seen)).collect();
                    step.verified(&v);
                    RemedyMsg::Verified(i, v)
                })
            }
            RemedyRequest::Acknowledge => r
                .acknowledge_interrupted("re-checked by the operator in the console")
                .map(|_| RemedyMsg::Done(true, "interrupted steps acknowledged (journaled)".into())),
            RemedyRequest::PrepareUndo(ov) => {
                let plan = journal::read(r.journal().path()).map(|rep| rep.undo_plan(None));
                match plan {
                    Err(e) => Err(e.into()),
                    Ok(p) => match p.items.first() {
                        None => Ok(RemedyMsg::refused(
                            Refusal::NothingToUndo {
                                incident: s.incident.clone(),
                                irreversible: Some(p.skipped.len()),
                            },
                            true,
                        )),
                        Some(item) => match crate::remedy::runner::prepare_undo(&self.p.reader, item, &ov).await {
                            Ok(mut c) => {
                                c.command = crate::remedy::resolve::display_now(&self.p.reader, &c.action).await;
                                let v = ConfirmView::of(&c, false);
                                self.pending = Some(c);
                                Ok(RemedyMsg::Confirm(v))
                            }
                            Err(e) => Err(e),
                        },
                    },
                }
            }
            RemedyRequest::TakeOverLease | RemedyRequest::RenewLease => {
                let (Some(mgr), Some(pv)) = (s.lease_mgr.clone(), s.playbook.volume.clone()) else { return };
                let name = lease_name(&pv);
                let res = if req == RemedyRequest::RenewLease {
                    match r.take_lease() {
                        Some((m, mut held)) => {
                            let res = m.renew(&mut held).await;
                            if res.is_ok() {
                                r.set_lease(m, held);
                            }
                            res.map(|_| None)
                        }
                        None => return,
                    }
                } else {
                    let holder = match &s.lease {
                        LeaseView::Expired(_) => crate::remedy::lease::read_holder(
                            self.p.reader.kube.clone(),
                            &self.p.cfg.lease_namespace,
                            &name,
                            self.p.reader.api_timeout,
                            self.p.clock.now(),
                        )
                        .await
                        .ok()
                        .flatten()
                        .map(|h| h.identity)
                        .unwrap_or_default(),
                        _ => {
                            let _ = self.tx.send(RemedyMsg::refused(Refusal::LeaseNotExpired, false));
                            return;
                        }
                    };
                    mgr.take_over(&name, &holder).await.map(Some)
                };
                match res {
                    Ok(Some(held)) => {
                        s.lease = LeaseView::Held(format!(
                            "{}/{} as {} (taken over)",
                            held.namespace, held.name, held.identity
                        ));
                        r.set_lease(mgr, held);
                        Ok(RemedyMsg::Done(true, "Lease taken over (journal it in your notes)".into()))
                    }
                    Ok(None) => return,
                    Err(e) => {
                        s.lease = LeaseView::Other(e.to_string());
                        Err(RunError::Lease(Some(e)))
                    }
                }
            }
            RemedyRequest::Open { .. } | RemedyRequest::Close => return,
        };
        match res {
            Ok(m) => self.send(m),
            Err(e) => self.fail(e),
        }
    }

    /// Dry-run: reads only. Act steps are previewed, Check / Verify read live; nothing is sent.
    async fn dry_run(&mut self, req: RemedyRequest) {
        let Some(s) = self.run.as_ref() else { return };
        let reader = &self.p.reader;
        // dry-run Checks and Verifies are in the session log too (its `start` says dry-run)
        let check = StepLog::of(s.playbook.steps.iter().find(|st| st.kind.check().is_some()), self.tx.clone());
        let msg = match req {
            RemedyRequest::Prepare { index, overrides } => match s.playbook.steps.get(index).map(|st| &st.kind) {
                Some(StepKind::Act(action)) => {
                    match preview(reader, &s.playbook, &s.baseline, &s.playbook.steps[index].id, action, &overrides)
                        .await
                    {
                        Ok(v) => RemedyMsg::Confirm(v),
                        Err(e) => return self.fail(e),
                    }
                }
                _ => RemedyMsg::refused(Refusal::NotAct, false),
            },
            RemedyRequest::Check => dry_check(reader, &s.playbook, &s.baseline, &check).await,
            RemedyRequest::Verify { index } => match s.playbook.steps.get(index).map(|st| &st.kind) {
                Some(StepKind::Verify(conds)) => {
                    let mut out = Vec::new();
                    for c in conds {
                        match evaluate(reader, c).await {
                            Ok((ok, seen)) => out.push((c.describe(), ok, seen)),
                            Err(e) => out.push((c.describe(), false, e.to_string())),
                        }
                    }
                    StepLog::of(s.playbook.steps.get(index), self.tx.clone()).verified(&out);
                    RemedyMsg::Verified(index, out)
                }
                _ => RemedyMsg::refused(Refusal::NotVerify, false),
            },
            RemedyRequest::PrepareUndo(ov) => {
                let path = self.p.base.join(&s.incident).join(journal::JOURNAL_FILE);
                match journal::read(&path).map(|r| r.undo_plan(None)) {
                    Ok(p) => match p.items.first() {
                        Some(item) => match crate::remedy::runner::prepare_undo(reader, item, &ov).await {
                            Ok(c) => RemedyMsg::Confirm(ConfirmView::of(&c, true)),
                            Err(e) => return self.fail(e),
                        },
                        None => RemedyMsg::refused(
                            Refusal::NothingToUndo { incident: s.incident.clone(), irreversible: None },
                            true,
                        ),
                    },
                    Err(_) => RemedyMsg::refused(Refusal::NoJournal(s.incident.clone()), true),
                }
            }
            RemedyRequest::Cancel => return,
            _ => RemedyMsg::refused(Refusal::DryRun, false),
        };
        self.send(msg);
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
