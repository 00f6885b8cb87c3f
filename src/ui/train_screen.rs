//! The training screens (briefing, hints overlay, debrief) as a component: their state is the
//! [`Training`] (phase, scroll, hints open, until when the debrief ignores keys); drawn by `view/train.rs`.
//! The app's side (ticks, goals, the debrief record) is `app_train.rs`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;

use super::outcome::{AppCommand, Outcome};
use unstick_core::train::{Phase, Training};

/// The training screens' keys, on the core's [`Training`] state.
pub trait TrainingScreen {
    /// True while a training screen takes the keys (briefing, hints, debrief).
    fn captures_keys(&self) -> bool;
    /// The screen's answer to a key at `now` (see the implementation).
    fn handle_key(&mut self, k: KeyEvent, now: Timestamp) -> Outcome;
}

impl TrainingScreen for Training {
    fn captures_keys(&self) -> bool {
        self.hints_open || !matches!(self.phase, Phase::Running)
    }

    /// The screen's answer to a key at `now` (the console clock): the briefing starts on Enter
    /// (the simulation's clock starts: [`AppCommand::ClockStarted`]), the hints close on Esc, `h`
    /// or Enter; j/k and PgUp/PgDn scroll; q quits (Ctrl-C too), `?` opens the help. The debrief
    /// opens by itself, so it ignores every key but scrolling for a moment
    /// ([`crate::ui::popup::Guard`]) and never maps Enter or Esc to quit: only `q` (or Ctrl-C)
    /// leaves; `n` asks for the note editor.
    fn handle_key(&mut self, k: KeyEvent, now: Timestamp) -> Outcome {
        let scrolling = matches!(
            k.code,
            KeyCode::Char('j' | 'k' | ' ') | KeyCode::Down | KeyCode::Up | KeyCode::PageDown | KeyCode::PageUp
        );
        if self.keys_from.is_some_and(|t| now < t) && !scrolling {
            return Outcome::Consumed;
        }
        let in_debrief = matches!(self.phase, Phase::Debrief(_)) && !self.hints_open;
        if in_debrief && k.code == KeyCode::Char('n') && k.modifiers.is_empty() {
            return Outcome::Command(AppCommand::OpenNote);
        }
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            return Outcome::Command(AppCommand::Quit);
        }
        match k.code {
            KeyCode::Char('j') | KeyCode::Down => self.scroll = self.scroll.saturating_add(1),
            KeyCode::Char('k') | KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char('?') => return Outcome::Command(AppCommand::OpenHelp),
            KeyCode::Char('q') => return Outcome::Command(AppCommand::Quit),
            _ if self.hints_open => {
                if matches!(k.code, KeyCode::Esc | KeyCode::Char('h') | KeyCode::Enter) {
                    self.hints_open = false;
                    self.scroll = 0;
                }
            }
            KeyCode::Enter if self.phase == Phase::Briefing => {
                self.begin(self.scenario.speed);
                return Outcome::Command(AppCommand::ClockStarted(self.sim.now()));
            }
            _ => {}
        }
        Outcome::Consumed
    }
}
