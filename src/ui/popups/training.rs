//! The training screens (briefing, hints, debrief) as a component: [`TrainingScreen`] holds what
//! is the screen's own (which screen, its scroll, until when the debrief ignores keys); the
//! scenario, goals and hints it shows are the core's [`Training`]. Each screen is a scrollable box
//! over the console, its keys on its border.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::view::util::{centered, more_marks, plain};
use unstick_core::train::{Phase, Training};

/// Which training screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    /// Before the start: the scenario, its goals.
    Briefing,
    /// The hints unlocked so far (`h`).
    Hints,
    /// Every goal met: what happened.
    Debrief,
}

/// An open training screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingScreen {
    /// Which screen.
    pub screen: Screen,
    /// Scroll offset, lines.
    pub scroll: u16,
    /// The screen opened by itself (the debrief): keys other than scrolling are ignored until the
    /// console clock reaches this time ([`crate::ui::popup::Guard`]).
    pub keys_from: Option<Timestamp>,
}

impl TrainingScreen {
    /// `screen` at its top; `keys_from`: see [`TrainingScreen::keys_from`].
    pub fn new(screen: Screen, keys_from: Option<Timestamp>) -> Self {
        TrainingScreen { screen, scroll: 0, keys_from }
    }

    /// The screen's answer to a key at `now` (the console clock), on `tr`: the briefing starts on
    /// Enter (the simulation's clock starts: [`AppCommand::ClockStarted`]; the screen closes),
    /// the hints close on Esc, `h` or Enter; j/k and PgUp/PgDn scroll; q quits (Ctrl-C too), `?`
    /// opens the help. The debrief opens by itself, so it ignores every key but scrolling for a
    /// moment and never maps Enter or Esc to quit: only `q` (or Ctrl-C) leaves; `n` asks for the
    /// note editor. Every key is the screen's.
    pub fn handle_key(&mut self, k: KeyEvent, now: Timestamp, tr: &mut Training) -> Outcome {
        let scrolling = matches!(
            k.code,
            KeyCode::Char('j' | 'k' | ' ') | KeyCode::Down | KeyCode::Up | KeyCode::PageDown | KeyCode::PageUp
        );
        if self.keys_from.is_some_and(|t| now < t) && !scrolling {
            return Outcome::Consumed;
        }
        if self.screen == Screen::Debrief && k.code == KeyCode::Char('n') && k.modifiers.is_empty() {
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
            KeyCode::Esc | KeyCode::Char('h') | KeyCode::Enter if self.screen == Screen::Hints => {
                return Outcome::Command(AppCommand::Close);
            }
            KeyCode::Enter if self.screen == Screen::Briefing && tr.phase == Phase::Briefing => {
                tr.begin(tr.scenario.speed);
                return Outcome::Command(AppCommand::ClockStarted(tr.sim.now()));
            }
            _ => {}
        }
        Outcome::Consumed
    }

    /// Draws the screen over `area`.
    pub fn draw(&self, f: &mut Frame, t: &Theme, tr: &Training, area: Rect) {
        draw(f, t, tr, self, area);
    }
}

fn boxed(f: &mut Frame, t: &Theme, area: Rect, title: String, keys: &str, lines: Vec<Line<'_>>, scroll: u16) {
    let w = area.width.min(100);
    let h = area.height;
    let rect = centered(area, w, h);
    f.render_widget(Clear, rect);
    // the box never cuts silently: its bottom border says what is above and below
    let p = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = p.line_count(rect.width.saturating_sub(2)).min(u16::MAX as usize) as u16;
    let height = rect.height.saturating_sub(2);
    let scroll = scroll.min(total.saturating_sub(height));
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(title, t.title))
        .title_bottom(Line::styled(format!(" {keys} "), t.accent))
        .title_bottom(Line::styled(more_marks(scroll, total, height), t.warn).right_aligned());
    f.render_widget(p.scroll((scroll, 0)).block(block), rect);
}

fn goal_lines<'a>(t: &Theme, tr: &Training) -> Vec<Line<'a>> {
    tr.scenario
        .goals
        .iter()
        .zip(&tr.goals)
        .map(|(g, ok)| {
            let (mark, style) = if *ok { ("✓", t.ok) } else { ("·", t.text) };
            Line::from(vec![plain(format!("  {mark} "), style), plain(g.text.clone(), t.text)])
        })
        .collect()
}

/// Draws whichever training screen is open.
fn draw(f: &mut Frame, t: &Theme, tr: &Training, screen: &TrainingScreen, area: Rect) {
    let s = &tr.scenario;
    match (&tr.phase, screen.screen) {
        (_, Screen::Hints) => hints(f, t, tr, screen, area),
        (Phase::Briefing, _) => {
            let mut lines = vec![
                Line::from(vec![plain(s.title.clone(), t.accent)]),
                Line::styled(
                    format!(
                        "difficulty {} · {}simulated time runs {}× real time",
                        s.difficulty.name(),
                        s.seed.as_ref().map(|x| format!("seed {x} · ")).unwrap_or_default(),
                        s.speed
                    ),
                    t.muted,
                ),
                Line::raw(""),
            ];
            // paragraphs are reflowed: the box wraps them at its own width
            for (i, para) in s.briefing.trim().split("\n\n").enumerate() {
                if i > 0 {
                    lines.push(Line::raw(""));
                }
                lines.push(Line::styled(para.split_whitespace().collect::<Vec<_>>().join(" "), t.text));
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled("Goals", t.accent));
            lines.extend(goal_lines(t, tr));
            lines.push(Line::raw(""));
            lines.push(Line::styled("How: 1 Findings → Enter shows the evidence → p opens the playbook.", t.muted));
            lines.push(Line::styled("The backup step comes first; every write asks for a confirmation.", t.muted));
            lines.push(Line::styled("h shows hints as they unlock, ? lists every key, n writes a note.", t.muted));
            boxed(
                f,
                t,
                area,
                format!(" training: {} ", s.name),
                "Enter start · j/k scroll · ? help · q quit",
                lines,
                screen.scroll,
            );
        }
        (Phase::Debrief(d), _) => {
            // the headline (first line) is the verdict: green only when the reference path was
            // followed, the goals alone do not make it so
            let (done, required) = d.followed();
            let verdict = if d.acted() && done >= required { t.ok } else { t.warn };
            let mut lines: Vec<Line> = d
                .lines()
                .into_iter()
                .enumerate()
                .map(|(i, l)| Line::styled(l, if i == 0 { verdict } else { t.text }))
                .collect();
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "The session log has it all: unstick sessions, then unstick export SESSION --format md.",
                t.muted,
            ));
            boxed(f, t, area, format!(" debrief: {} ", s.name), "j/k scroll · n note · q quit", lines, screen.scroll);
        }
        (Phase::Running, _) => {}
    }
}

/// The hints unlocked so far, with the goals.
fn hints(f: &mut Frame, t: &Theme, tr: &Training, screen: &TrainingScreen, area: Rect) {
    let s = &tr.scenario;
    let mut lines = vec![Line::styled("Goals", t.accent)];
    lines.extend(goal_lines(t, tr));
    lines.push(Line::raw(""));
    if tr.unlocked == 0 {
        lines.push(Line::styled("No hint unlocked yet: hints unlock as simulated time passes.", t.muted));
    }
    for (i, h) in s.hints.iter().take(tr.unlocked).enumerate() {
        lines.push(Line::from(vec![plain(format!("{}. ", i + 1), t.accent), plain(h.text.clone(), t.text)]));
    }
    if let Some(next) = s.hints.get(tr.unlocked) {
        let left = next.after.0 - tr.elapsed_sim();
        lines.push(Line::styled(
            format!("next hint in about {} (simulated)", unstick_core::text::human_age(left.max(0))),
            t.muted,
        ));
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, area.width.min(90), h.max(6));
    boxed(f, t, rect, format!(" hints {}/{} ", tr.unlocked, s.hints.len()), "Esc or h close", lines, screen.scroll);
}

/// The status-bar segment: goals met and hints unlocked.
pub fn status_segment(tr: &Training) -> String {
    let met = tr.goals.iter().filter(|g| **g).count();
    let new = if tr.unlocked > tr.hints_read { "!" } else { "" };
    format!(" goals {met}/{} hints {}/{}{new}(h) │", tr.goals.len(), tr.unlocked, tr.scenario.hints.len())
}
