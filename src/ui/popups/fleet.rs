//! The fleet view (`:fleet`): every context of the kubeconfig diagnosed at once, as
//! `unstick diagnose --all-contexts` does ([`unstick_core::fleet`]), one row per context (findings
//! by severity, stuck pods, incomplete inputs or the error), and Enter opens the selected context
//! in this console (the in-place switch of `:ctx NAME`). This file holds the view's state, its
//! keys (answered with an [`Outcome`], no `App`) and its drawing; the diagnosis runs off the UI
//! task (`Effect::Fleet`, answered by `Msg::Fleet`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Table};

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::view::util::{centered, fit};
use unstick_core::fleet::{self, FleetReport};

/// The open fleet view.
#[derive(Debug, Clone)]
pub struct FleetView {
    /// The context the console reads now (marked `*`; Enter on it just closes the view).
    pub current: String,
    /// `None` while the contexts are being diagnosed; the report, or why there is none.
    pub report: Option<Result<FleetReport, String>>,
    /// The selected row.
    pub selected: usize,
}

impl FleetView {
    /// The view on the console's `current` context, its diagnosis under way.
    pub fn new(current: &str) -> Self {
        FleetView { current: current.to_string(), report: None, selected: 0 }
    }

    /// The diagnosis arrived: shown, the console's own context selected.
    pub fn set(&mut self, report: Result<FleetReport, String>) {
        self.selected = match &report {
            Ok(r) => r.contexts.iter().position(|c| c.context == self.current).unwrap_or(0),
            Err(_) => 0,
        };
        self.report = Some(report);
    }

    fn rows(&self) -> &[fleet::ContextRow] {
        match &self.report {
            Some(Ok(r)) => &r.contexts,
            _ => &[],
        }
    }

    /// The view's answer to a key: `j k / ↓ ↑` select, Enter opens the selected context
    /// ([`AppCommand::SwitchContext`]; the current one: close), `r` diagnoses again
    /// ([`AppCommand::RefreshFleet`]), `?` the help, Esc, `q` or Ctrl-C close it.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let n = self.rows().len();
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Outcome::Command(AppCommand::Close);
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Outcome::Command(AppCommand::Close),
            KeyCode::Char('?') => Outcome::Command(AppCommand::OpenHelp),
            KeyCode::Char('j') | KeyCode::Down => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
                Outcome::Consumed
            }
            KeyCode::Char('k') | KeyCode::Up => {
                self.selected = self.selected.saturating_sub(1);
                Outcome::Consumed
            }
            KeyCode::Char('r') if self.report.is_some() => {
                self.report = None;
                Outcome::Command(AppCommand::RefreshFleet)
            }
            KeyCode::Enter => match self.rows().get(self.selected) {
                Some(r) if r.context == self.current => Outcome::Command(AppCommand::Close),
                Some(r) => Outcome::Command(AppCommand::SwitchContext(r.context.clone())),
                None => Outcome::Consumed,
            },
            _ => Outcome::Consumed,
        }
    }

    /// Draws the view over `area` (the body: header, banner and status line stay visible).
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme) {
        let r = centered(area, area.width.saturating_sub(2).min(140), area.height);
        f.render_widget(Clear, r);
        let width = r.width.saturating_sub(2) as usize;
        let title = match &self.report {
            Some(Ok(rep)) => format!(
                " fleet: {} contexts, diagnosed {} ",
                rep.contexts.len(),
                rep.generated_at.strftime("%H:%M:%S UTC")
            ),
            _ => " fleet ".into(),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::styled(fit(&title, width), t.title))
            .title_bottom(Line::styled(" Enter open · r again · ? help · Esc close ", t.accent));
        match &self.report {
            None => {
                let text = "diagnosing every context of the kubeconfig (4 at once, 60 s each)…";
                f.render_widget(Paragraph::new(Line::styled(text, t.muted)).block(block), r);
            }
            Some(Err(e)) => {
                let text = format!("no fleet: {}", unstick_core::text::sanitize(e));
                f.render_widget(Paragraph::new(Line::styled(text, t.error)).block(block), r);
            }
            Some(Ok(rep)) => {
                let short = ["CONTEXT", "STATUS", "CRIT", "WARN", "INFO", "STUCK", "INCOMPLETE / ERROR"];
                let rows = rep.contexts.iter().enumerate().map(|(i, c)| {
                    let mut cells = fleet::cells(c);
                    let mark = if c.context == self.current { "*" } else { " " };
                    cells[0] = format!("{mark}{}", cells[0]);
                    let style = match c.exit_code {
                        _ if i == self.selected => t.selected,
                        fleet::EXIT_UNDIAGNOSED => t.error,
                        fleet::EXIT_FINDINGS | fleet::EXIT_INCOMPLETE => t.warn,
                        _ => t.text,
                    };
                    Row::new(cells).style(style)
                });
                // the context column as wide as the longest name (and its `*`), at most 32
                let names = rep.contexts.iter().map(|c| c.context.chars().count() + 1).max().unwrap_or(0);
                let widths = [
                    Constraint::Length(names.clamp(8, 32) as u16),
                    Constraint::Length(10),
                    Constraint::Length(5),
                    Constraint::Length(5),
                    Constraint::Length(5),
                    Constraint::Length(6),
                    Constraint::Min(10),
                ];
                let table = Table::new(rows, widths).header(Row::new(short).style(t.title)).block(block);
                f.render_widget(table, r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unstick_core::fleet::{ContextRow, Outcome as Row, SeverityCounts};

    fn report() -> FleetReport {
        let diagnosed = |critical, warning, stuck_pods, ids: &[&str]| Row::Diagnosed {
            findings: SeverityCounts { critical, warning, info: 0 },
            stuck_pods,
            incomplete: vec![],
            finding_ids: ids.iter().map(|s| s.to_string()).collect(),
        };
        let row = |context: &str, outcome: Row| ContextRow {
            context: context.into(),
            exit_code: outcome.exit_code(),
            outcome,
        };
        FleetReport {
            generated_at: "2026-11-26T15:40:00Z".parse().unwrap(),
            contexts: vec![
                row("prod-a", diagnosed(2, 1, 2, &["stale-lock:x", "unmap-busy:y", "w"])),
                row("prod-b", diagnosed(0, 0, 0, &[])),
                row("down", Row::Error { error: "connecting: Connection refused".into() }),
                row("slow", Row::TimedOut { after_seconds: 60 }),
            ],
        }
    }

    fn press(v: &mut FleetView, c: KeyCode) -> Outcome {
        v.handle_key(KeyEvent::from(c))
    }

    #[test]
    fn enter_opens_the_selected_context_and_the_current_one_closes() {
        let mut v = FleetView::new("prod-b");
        assert_eq!(press(&mut v, KeyCode::Enter), Outcome::Consumed, "nothing to open while diagnosing");
        assert_eq!(press(&mut v, KeyCode::Char('r')), Outcome::Consumed, "already diagnosing");
        v.set(Ok(report()));
        assert_eq!(v.selected, 1, "the console's own context is selected");
        assert_eq!(press(&mut v, KeyCode::Enter), Outcome::Command(AppCommand::Close));
        press(&mut v, KeyCode::Char('k'));
        assert_eq!(press(&mut v, KeyCode::Enter), Outcome::Command(AppCommand::SwitchContext("prod-a".into())));
        for _ in 0..9 {
            press(&mut v, KeyCode::Down);
        }
        assert_eq!(v.selected, 3, "the selection stops at the last row");
        assert_eq!(press(&mut v, KeyCode::Char('r')), Outcome::Command(AppCommand::RefreshFleet));
        assert!(v.report.is_none(), "diagnosing again");
        assert_eq!(press(&mut v, KeyCode::Esc), Outcome::Command(AppCommand::Close));
        assert_eq!(press(&mut v, KeyCode::Char('?')), Outcome::Command(AppCommand::OpenHelp));
    }

    #[test]
    fn fleet_view_80x24() {
        let theme = Theme::resolve("dark", true);
        let draw = |v: &FleetView| {
            let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
            term.draw(|f| v.draw(f, f.area(), &theme)).unwrap();
            term.backend().to_string()
        };
        let mut v = FleetView::new("prod-b");
        let waiting = draw(&v);
        assert!(waiting.contains("diagnosing every context"), "{waiting}");
        v.set(Ok(report()));
        let screen = draw(&v);
        assert!(screen.contains("*prod-b"), "{screen}");
        assert!(screen.contains("Connection refused"), "{screen}");
        insta::assert_snapshot!(screen);
    }
}
