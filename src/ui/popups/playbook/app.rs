//! The app's glue to the Playbook view ([`PlaybookUi`]): opening the selected finding's playbook
//! on the popup stack, closing it, and handing it the remediation service's messages (its own
//! timers poll a pending Wait step and renew the Lease). Its keys come down the stack
//! (`app/routing.rs`); the view's own logic is `mod.rs` and `popups.rs`.

use super::{ConfirmUi, PlaybookUi, WriteMode};
use crate::ui::app::{App, Effect};
use crate::ui::popups::{Kind, Popup};
use unstick_core::attribution::AddressBook;
use unstick_core::diagnose::{Finding, ObjectKind, PatternId};
use unstick_core::remedy::action::precheck::LiveState;
use unstick_core::remedy::playbook::{self, Target};
use unstick_core::remedy::service::RemedyMsg;

/// The target of a finding: its volume, or the blocklist entries it names; client addresses
/// tied to their nodes by every proof of the config ([`Target::tie_clients`]).
pub fn target_of(app: &App, f: &Finding) -> Option<Target> {
    target_untied(app, f).map(|t| t.tie_clients(&app.data.snap, &AddressBook::build(&app.data.snap, &app.cfg.diagnose)))
}

/// [`target_of`] before its clients are tied to nodes by the proofs beyond InternalIPs.
fn target_untied(app: &App, f: &Finding) -> Option<Target> {
    if let Some(pv) = &f.volume {
        return Target::for_volume(&app.data.snap, &app.data.lineage, pv)
            .map(|t| t.with_server_version(app.remedy.server_version));
    }
    if f.pattern == PatternId::BlocklistLeftover {
        let names: Vec<&str> =
            f.objects.iter().filter(|o| o.kind == ObjectKind::BlocklistEntry).map(|o| o.name.as_str()).collect();
        let entries = app.data.snap.ceph.blocklist.as_ref()?.value.as_ref().ok()?;
        let mine = entries.iter().filter(|e| names.contains(&e.text())).cloned().collect();
        return Some(Target::for_blocklist(&app.data.snap, mine));
    }
    None
}

impl App {
    /// Opens the Playbook view for the selected finding.
    pub(crate) fn open_playbook(&mut self) -> Vec<Effect> {
        let Some(f) = self.selected_finding().cloned() else {
            self.remedy.notice = Some("no finding selected: select one in the Findings pane (1)".into());
            return vec![];
        };
        if f.playbook == unstick_core::diagnose::NO_PLAYBOOK {
            // a pattern with no safe write: say what the finding is and where to go on, and
            // when the finding the operator meant cleared under the selection, that first
            self.remedy.notice = Some(match &self.cleared_selection {
                Some(c) => {
                    format!("{c}; now selected: {}, which has no playbook: Enter shows what to check", f.pattern)
                }
                None => format!(
                    "{} ({}) has no playbook: no write is known to be safe for it; Enter shows what to check",
                    f.pattern,
                    f.volume.as_deref().or(f.node.as_deref()).unwrap_or(&f.id)
                ),
            });
            return vec![];
        }
        let built = target_of(self, &f)
            .ok_or_else(|| format!("{}: no volume or blocklist entry to act on", f.id))
            .and_then(|t| playbook::build(&f.playbook, &t, &self.cfg.remedy).map_err(|e| e.to_string()));
        let subject = f.volume.clone().or(f.node.clone()).unwrap_or_else(|| f.id.clone());
        let pb = match built {
            Ok(pb) => self.remedy.runs.reuse(pb, &subject),
            Err(e) => {
                self.remedy.notice = Some(format!("no playbook: {e}"));
                return vec![];
            }
        };
        self.popups.close(Kind::Detail);
        self.remedy.notice = None;
        let baseline = LiveState::from_snapshot(&self.data.snap, &pb.scope, self.now);
        let (mut ui, req) = PlaybookUi::open(f.id.clone(), subject, pb, baseline, self.playbook_ctx());
        // the proofs beyond the nodes' own addresses, for the fencing step's safety rules
        ui.overrides.address_book =
            std::sync::Arc::new(unstick_core::attribution::AddressBook::build(&self.data.snap, &self.cfg.diagnose));
        self.popups.close(Kind::Playbook);
        self.popups.push(Popup::Playbook(Box::new(ui)));
        req.map(Effect::Remedy).into_iter().collect()
    }

    /// The Playbook view `pb` was closed: a finished run is forgotten, the runner released.
    pub(crate) fn closed_playbook(&mut self, pb: PlaybookUi) -> Vec<Effect> {
        if let Some((pattern, subject)) = pb.finished_run() {
            self.remedy.runs.finished(pattern, subject);
        }
        if self.remedy.mode == WriteMode::ReadOnly || !self.remedy.worker {
            vec![]
        } else {
            vec![Effect::Remedy(unstick_core::remedy::service::RemedyRequest::Close)]
        }
    }

    /// An answer from the worker.
    pub(crate) fn on_remedy(&mut self, m: RemedyMsg) {
        match m {
            RemedyMsg::Record(e) => return self.record_event(e),
            RemedyMsg::ServerVersion(v) => {
                if let Err(e) = &v {
                    tracing::warn!("server version unknown: {e}");
                }
                let mm = v.as_ref().ok().map(|v| (v.major, v.minor));
                self.remedy.server_version = v.ok();
                return self.derive(|d, i| d.on_server_version(mm, i));
            }
            _ => {}
        }
        let now = self.now;
        let Some(pb) = self.popups.playbook_mut() else { return };
        match m {
            RemedyMsg::View(v) => {
                if v.backup.is_some()
                    && let Some(pv) = pb.volume()
                {
                    self.remedy.backed_up.insert(pv.clone());
                }
                if v.interrupted.is_empty() {
                    let inc = v.incident.clone();
                    self.remedy.interrupted.retain(|s| s.incident != inc);
                }
                pb.on_view(v);
            }
            RemedyMsg::Confirm(v) => {
                let blast = unstick_core::console_state::blast::of(
                    &v,
                    &self.data.snap,
                    &self.data.lineage,
                    &self.remedy.backed_up,
                );
                let speed = self.training.as_ref().map(|t| t.sim.speed()).unwrap_or(1.0);
                pb.confirm_opened();
                self.popups.push(Popup::Confirm(Box::new(ConfirmUi::new(v, blast, now, speed))));
            }
            m => pb.on_remedy(m, now),
        }
    }
}
