//! Training screens: the briefing (before the start), the hints overlay (`h`) and the debrief
//! (every goal met). Each is a scrollable box over the console; keys are on its border.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{centered, plain};
use crate::theme::Theme;
use unstick_core::train::{Phase, Training};

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
        .title_bottom(Line::styled(super::more_marks(scroll, total, height), t.warn).right_aligned());
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
pub fn draw(f: &mut Frame, t: &Theme, tr: &Training, area: Rect) {
    let s = &tr.scenario;
    match &tr.phase {
        Phase::Briefing => {
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
                tr.scroll,
            );
        }
        Phase::Debrief(d) => {
            let mut lines: Vec<Line> = d.lines().into_iter().map(|l| Line::styled(l, t.text)).collect();
            lines.insert(0, Line::styled("Every goal is met.", t.ok));
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "The session log has it all: unstick sessions, then unstick export SESSION --format md.",
                t.muted,
            ));
            boxed(f, t, area, format!(" debrief: {} ", s.name), "j/k scroll · n note · q quit", lines, tr.scroll);
        }
        Phase::Running if tr.hints_open => {
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
            boxed(f, t, rect, format!(" hints {}/{} ", tr.unlocked, s.hints.len()), "Esc or h close", lines, tr.scroll);
        }
        Phase::Running => {}
    }
}

/// The status-bar segment: goals met and hints unlocked.
pub fn status_segment(tr: &Training) -> String {
    let met = tr.goals.iter().filter(|g| **g).count();
    let new = if tr.unlocked > tr.hints_read { "!" } else { "" };
    format!(" goals {met}/{} hints {}/{}{new}(h) │", tr.goals.len(), tr.unlocked, tr.scenario.hints.len())
}
