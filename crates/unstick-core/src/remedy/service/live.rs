//! The commands on a live run (an executor and a runner exist): each runner call, its session log
//! record and its answer.

use std::path::PathBuf;

use tokio::sync::mpsc::UnboundedSender;

use super::msg::{ConfirmView, LeaseView, RemedyMsg, RemedyRequest};
use super::step_log::StepLog;
use super::{PlaybookRun, Service};
use crate::remedy::action::safety::Overrides;
use crate::remedy::run::lease::lease_name;
use crate::remedy::run::refusal::Refusal;
use crate::remedy::run::{Confirmation, RunError, Runner};
use crate::session::SessionEvent;
use crate::session::log::StepResult;

/// A runner call on the current step that needs nothing but the runner.
enum StepCall {
    Backup(Option<PathBuf>),
    Check,
    ManualDone,
    Skip,
    Acknowledge,
}

impl Service {
    /// A command on the live run (Open and Close are [`Service::open`] and [`Service::close`]).
    pub(super) async fn live(&mut self, req: RemedyRequest) {
        let call = match req {
            RemedyRequest::Confirm { step_id, typed } => {
                let res = self.confirm(&step_id, typed).await;
                return self.answer(res);
            }
            RemedyRequest::WaitPoll => return self.poll_wait().await,
            RemedyRequest::Verify { .. } => return self.poll_verify().await,
            RemedyRequest::StopWait => {
                self.timers.stop_waiting();
                if let Some(r) = self.runner() {
                    r.stop_polling();
                }
                let text = "stopped waiting: the step is still current (Enter runs it again, Esc closes)";
                return self.send(RemedyMsg::Done { ok: true, text: text.into() });
            }
            RemedyRequest::PrepareUndo(ov) => {
                let Some(s) = self.run.as_ref() else { return };
                let Some(r) = s.runner.as_ref() else { return };
                let path = r.journal().path().to_path_buf();
                return match super::undo::prepare(&self.p.reader, &path, &s.incident, &ov).await {
                    Ok(c) => self.pending_confirm(c),
                    Err(refusal) => self.refuse(refusal),
                };
            }
            RemedyRequest::Prepare { overrides, .. } => return self.prepare(&overrides).await,
            RemedyRequest::Cancel => {
                self.pending = None;
                return self.send(RemedyMsg::Done { ok: true, text: "cancelled: nothing was sent".into() });
            }
            RemedyRequest::TakeOverLease => {
                if let Some(res) = self.take_over().await {
                    self.answer(res);
                }
                return;
            }
            RemedyRequest::Backup { export_to } => StepCall::Backup(export_to),
            RemedyRequest::Check => StepCall::Check,
            RemedyRequest::ManualDone => StepCall::ManualDone,
            RemedyRequest::Skip => StepCall::Skip,
            RemedyRequest::Acknowledge => StepCall::Acknowledge,
            RemedyRequest::Open { .. } | RemedyRequest::Close => return,
        };
        let tx = self.tx.clone();
        let Some(r) = self.runner() else { return };
        let res = step_call(r, call, tx).await;
        self.answer(res);
    }

    /// Sends the answer of a call, or its failure.
    fn answer(&self, res: Result<RemedyMsg, RunError>) {
        match res {
            Ok(m) => self.send(m),
            Err(e) => self.fail(e),
        }
    }

    /// Prepares the current Act step: its confirmation shows the command as it would be sent now.
    async fn prepare(&mut self, overrides: &Overrides) {
        let tx = self.tx.clone();
        let Some(r) = self.runner() else { return };
        let step = StepLog::of(r.current(), tx);
        match r.prepare(overrides).await {
            Ok(mut c) => {
                c.command = crate::remedy::action::resolve::display_now(&self.p.reader, &c.action).await;
                self.pending_confirm(c);
            }
            Err(RunError::AlreadyInEffect(note)) => {
                step.log(StepResult::Done, note.clone());
                self.send(RemedyMsg::Done { ok: true, text: note });
            }
            Err(e) => {
                step.failed(&e);
                self.fail(e);
            }
        }
    }

    /// Keeps `c` as the pending confirmation and sends its view for the popup.
    fn pending_confirm(&mut self, c: Confirmation) {
        let v = ConfirmView::of(&c, false);
        self.pending = Some(c);
        self.send(RemedyMsg::Confirm(v));
    }

    /// Takes over the volume's expired Lease. `None`: nothing to answer (no volume, no Lease
    /// manager).
    async fn take_over(&mut self) -> Option<Result<RemedyMsg, RunError>> {
        let Some(PlaybookRun { runner: Some(r), lease_mgr: Some(mgr), playbook, lease, .. }) = self.run.as_mut() else {
            return None;
        };
        let name = lease_name(playbook.volume.as_ref()?);
        if !matches!(lease, LeaseView::Expired(_)) {
            return Some(Ok(RemedyMsg::refused(Refusal::LeaseNotExpired, false)));
        }
        let holder = crate::remedy::run::lease::read_holder(
            self.p.reader.kube.clone(),
            &self.p.cfg.lease_namespace,
            &name,
            self.p.reader.api_timeout,
            self.p.clocks.records.now(),
        )
        .await
        .ok()
        .flatten()
        .map(|h| h.identity)
        .unwrap_or_default();
        Some(match mgr.take_over(&name, &holder).await {
            Ok(held) => {
                *lease = LeaseView::Held(format!("{}/{} as {} (taken over)", held.namespace, held.name, held.identity));
                r.set_lease(mgr.clone(), held);
                self.timers.renewed();
                Ok(RemedyMsg::Done { ok: true, text: "Lease taken over (journal it in your notes)".into() })
            }
            Err(e) => {
                *lease = LeaseView::Other(e.to_string());
                Err(RunError::Lease(Some(e)))
            }
        })
    }
}

/// Runs `call` on the current step; records how the step ended (through `tx`) and answers.
async fn step_call(r: &mut Runner, call: StepCall, tx: UnboundedSender<RemedyMsg>) -> Result<RemedyMsg, RunError> {
    // the step this request is about, for the session log's `step` records
    let step = StepLog::of(r.current(), tx.clone());
    match call {
        StepCall::Backup(export_to) => {
            let progress = tx.clone();
            let b = r
                .run_backup(export_to, move |p| {
                    let _ = progress.send(RemedyMsg::Export(p));
                })
                .await
                .inspect_err(|e| step.failed(e))?;
            let _ = tx.send(RemedyMsg::Record(SessionEvent::backup(b.record())));
            let snap = b.record().snapshot.clone().unwrap_or_else(|| "no image".into());
            let export = b
                .record()
                .export
                .as_ref()
                .map(|e| format!(", full copy {} ({} bytes, sha256 {})", e.path.display(), e.bytes, e.sha256))
                .unwrap_or_default();
            Ok(RemedyMsg::Done {
                ok: true,
                text: format!("backup verified: {} file(s), snapshot {snap}{export}", b.record().files.len()),
            })
        }
        StepCall::Check => r.check().await.inspect_err(|e| step.failed(e)).map(|lines| {
            step.log(StepResult::Done, format!("state unchanged since the finding: {}", lines.join("; ")));
            RemedyMsg::Done { ok: true, text: "re-check: state unchanged since the finding".into() }
        }),
        StepCall::ManualDone => r.manual_done().map(|_| {
            step.log(StepResult::Done, "done by the operator (marked in the console)".into());
            RemedyMsg::Done { ok: true, text: "manual step marked done".into() }
        }),
        StepCall::Skip => {
            let reason = "skipped by the operator in the console";
            r.skip(reason).map(|_| {
                step.log(StepResult::Skipped, reason.into());
                RemedyMsg::Done { ok: true, text: "step skipped (journaled)".into() }
            })
        }
        StepCall::Acknowledge => r
            .acknowledge_interrupted("re-checked by the operator in the console")
            .map(|_| RemedyMsg::Done { ok: true, text: "interrupted steps acknowledged (journaled)".into() }),
    }
}
