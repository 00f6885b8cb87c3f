//! The app's glue to the Playbook view ([`PlaybookUi`]): opening the selected finding's playbook,
//! routing keys to it (the help overlay on top first), applying its [`Outcome`]s, and handing it
//! the remediation service's messages (its own timers poll a pending Wait step and renew the
//! Lease). The view's own logic is in `playbook.rs`.

use crossterm::event::KeyEvent;

use super::action::Action;
use super::app::{App, Effect, Pane};
use super::outcome::{AppCommand, Outcome};
use super::playbook::{PlaybookCtx, PlaybookUi, WriteMode};
use unstick_core::diagnose::{Finding, ObjectKind, PatternId};
use unstick_core::remedy::action::precheck::LiveState;
use unstick_core::remedy::playbook::{self, Target};
use unstick_core::remedy::service::RemedyMsg;

/// The target of a finding: its volume, or the blocklist entries it names.
pub fn target_of(app: &App, f: &Finding) -> Option<Target> {
    if let Some(pv) = &f.volume {
        return Target::for_volume(&app.snap, &app.lineage, pv)
            .map(|t| t.with_server_version(app.remedy.server_version));
    }
    if f.pattern == PatternId::BlocklistLeftover {
        let names: Vec<&str> =
            f.objects.iter().filter(|o| o.kind == ObjectKind::BlocklistEntry).map(|o| o.name.as_str()).collect();
        let entries = app.snap.ceph.blocklist.as_ref()?.value.as_ref().ok()?;
        let mine = entries.iter().filter(|e| names.contains(&e.text())).cloned().collect();
        return Some(Target::for_blocklist(&app.snap, mine));
    }
    None
}

impl App {
    /// True while raw keys go to a text field (filter, confirm popup, override prompt).
    pub fn wants_raw_keys(&self) -> bool {
        self.filter_editor.is_some() || self.remedy.playbook.as_ref().is_some_and(PlaybookUi::has_popup)
    }

    /// What the Playbook view may do in this console.
    fn playbook_ctx(&self) -> PlaybookCtx {
        PlaybookCtx { mode: self.remedy.mode, worker: self.remedy.worker, training: self.training.is_some() }
    }

    /// `(content rows, visible rows)` of the open confirm popup (the view's own geometry).
    fn confirm_metrics(&self) -> (u16, u16) {
        match self.remedy.playbook.as_ref().and_then(PlaybookUi::confirm_popup) {
            Some(c) => c.metrics(self.body_area(), &self.theme),
            None => (0, 0),
        }
    }

    /// Opens the Playbook view for the selected finding.
    pub(crate) fn open_playbook(&mut self) -> Vec<Effect> {
        let Some(f) = self.findings.get(self.selected_row(Pane::Findings)).cloned() else {
            self.remedy.notice = Some("no finding selected: select one in the Findings pane (1)".into());
            return vec![];
        };
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
        self.finding_detail = None;
        self.remedy.notice = None;
        let baseline = LiveState::from_snapshot(&self.snap, &pb.scope, self.now);
        let (ui, req) = PlaybookUi::open(f.id.clone(), subject, pb, baseline, self.playbook_ctx());
        self.remedy.playbook = Some(ui);
        req.map(Effect::Remedy).into_iter().collect()
    }

    /// A key in the Playbook view (the help overlay, when open, takes it first).
    pub fn playbook_action(&mut self, a: Action) -> Vec<Effect> {
        if self.help {
            if super::help::handle_playbook_action(&mut self.help_scroll, a) == Outcome::Command(AppCommand::Close) {
                self.help = false;
            }
            return vec![];
        }
        let ctx = self.playbook_ctx();
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let out = pb.handle_action(a, ctx);
        self.apply_playbook(out)
    }

    /// A raw key while a popup of the Playbook view is open (confirm, override, full copy).
    pub fn popup_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let metrics = self.confirm_metrics();
        let (now, mode) = (self.now, self.remedy.mode);
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let out = pb.popup_key(key, now, metrics, mode);
        self.apply_playbook(out)
    }

    /// Applies what the Playbook view answered.
    fn apply_playbook(&mut self, out: Outcome) -> Vec<Effect> {
        match out {
            Outcome::Command(AppCommand::Close) => self.close_playbook(),
            Outcome::Command(c) => self.apply_command(c),
            Outcome::Consumed | Outcome::Ignored => vec![],
        }
    }

    /// Closes the Playbook view (a finished run is forgotten) and releases the runner.
    fn close_playbook(&mut self) -> Vec<Effect> {
        let Some(pb) = self.remedy.playbook.take() else { return vec![] };
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
                return self.remedy.server_version = v.ok();
            }
            _ => {}
        }
        let now = self.now;
        let Some(pb) = self.remedy.playbook.as_mut() else { return };
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
                let blast = super::blast::of(&v.action, &self.snap, &self.lineage, &self.remedy.backed_up);
                let speed = self.training.as_ref().map(|t| t.sim.speed()).unwrap_or(1.0);
                pb.open_confirm(v, blast, now, speed);
            }
            m => pb.on_remedy(m, now),
        }
    }
}
