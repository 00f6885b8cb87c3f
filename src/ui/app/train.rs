//! The console's training screens: the briefing before the start, the hints overlay (`h`), the
//! goals in the status bar and the debrief once every goal holds. See [`unstick_core::train`].

use super::App;
use crate::ui::popups::training::{Screen, TrainingScreen};
use crate::ui::popups::{Kind, Popup};
use unstick_core::remedy::playbook::StepKind;
use unstick_core::remedy::service::RemedyMsg;
use unstick_core::train::Phase;

impl App {
    /// Trains on `t` (`unstick train`): its briefing opens over the console.
    pub fn start_training(&mut self, t: unstick_core::train::Training) {
        if t.phase == Phase::Briefing {
            self.popups.push(Popup::Training(TrainingScreen::new(Screen::Briefing, None)));
        }
        self.training = Some(t);
    }

    /// `h`: the hints unlocked so far.
    pub(crate) fn toggle_hints(&mut self) {
        match self.training.as_mut() {
            Some(t) => {
                // the "hint unlocked" banner was read (if it is still the notice shown)
                if t.hint_notice.take().is_some_and(|h| self.remedy.notice.as_ref() == Some(&h)) {
                    self.remedy.notice = None;
                }
                t.hints_read = t.hints_read.max(t.unlocked);
                let open = self.popups.training().is_some_and(|s| s.screen == Screen::Hints);
                if open {
                    self.popups.close(Kind::Training);
                } else {
                    self.popups.push(Popup::Training(TrainingScreen::new(Screen::Hints, None)));
                }
            }
            None => self.remedy.notice = Some("h: hints belong to training scenarios (unstick train)".into()),
        }
    }

    /// A remediation answer in training (other than a Wait poll or export progress): the goals are
    /// checked again at once on the next tick (an action may have met them); refusals of actions the trainee tried (an Act step or an
    /// undo was being prepared) are kept for the debrief. A failed Check is the safety net doing
    /// its job, not an attempt.
    pub(crate) fn train_observe(&mut self, m: &RemedyMsg) {
        let Some(t) = self.training.as_mut() else { return };
        // a write, a refusal or a runner that moved; not the Wait and Verify polls and export progress that
        // arrive every few seconds and change nothing the goals read
        if !matches!(m, RemedyMsg::Wait(_) | RemedyMsg::Export(_) | RemedyMsg::Verified { remaining: Some(_), .. }) {
            t.goals_may_have_changed();
        }
        let RemedyMsg::Failed { refusal, undo, .. } = m else { return };
        let acting = self.popups.playbook().is_some_and(|pb| *undo || pb.at_act_step());
        if acting {
            t.refused.push((t.wall_now(), refusal.clone()));
        }
    }

    /// The open playbook's step states, for the debrief.
    pub(crate) fn train_steps(&mut self) {
        let (Some(t), Some(pb)) = (self.training.as_mut(), self.popups.playbook()) else { return };
        for (id, step, state) in pb.run_states() {
            t.saw_step(id, step.kind.step_type(), &step.title, state);
        }
    }

    /// On the clock: unlock hints (announced in the banner) and check the goals on the
    /// simulation; when all hold, the debrief opens and is written to the session log (a `debrief` record).
    pub(crate) fn train_tick(&mut self) {
        let cfg = self.cfg.diagnose.clone();
        let Some(t) = self.training.as_mut() else { return };
        if t.phase != Phase::Running {
            return;
        }
        if t.unlock_hints() {
            let banner = format!("hint {} of {} unlocked: h shows it", t.unlocked, t.scenario.hints.len());
            (t.hint_notice, self.remedy.notice) = (Some(banner.clone()), Some(banner));
        }
        // the debrief waits for the open playbook's remaining Verify and Wait steps
        let pending = self
            .popups
            .playbook()
            .and_then(|pb| {
                let r = pb.runner.as_ref()?;
                Some(
                    pb.playbook
                        .steps
                        .iter()
                        .skip(r.cursor)
                        .filter(|s| matches!(s.kind, StepKind::Verify(_) | StepKind::Wait { .. }))
                        .count(),
                )
            })
            .unwrap_or(0);
        if pending > 0 {
            if t.goals_hold(&cfg) {
                self.remedy.notice = Some(format!(
                    "every goal is met: the debrief opens after the playbook's {pending} remaining Verify/Wait step(s) (or Esc)"
                ));
            }
            return;
        }
        let speed = t.sim.speed();
        if t.check(&cfg) {
            let keys_from = Some(crate::ui::popup::Guard::new(self.now, speed).until);
            let text = t.debrief().map(|d| d.lines().join("\n")).unwrap_or_default();
            self.remedy.notice = None;
            self.popups.close(Kind::Help);
            self.popups.close(Kind::Detail);
            self.popups.close(Kind::Training);
            self.popups.push(Popup::Training(TrainingScreen::new(Screen::Debrief, keys_from)));
            let scenario = t.scenario.name.clone();
            if let Some(s) = self.session.as_mut() {
                s.record(unstick_core::session::SessionEvent::Debrief { scenario, text });
            }
        }
    }
}

#[cfg(test)]
#[path = "train_tests.rs"]
mod tests;
