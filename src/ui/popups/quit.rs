//! "Quit with the playbook open?": asked when `q` (or Ctrl-C, `:q`) comes while a playbook is
//! open. With a step or a Wait in progress, quitting would leave the step's outcome unseen and
//! the run to be found again in its journal; with nothing running, `q` was likely meant to close
//! the view (Esc does). A training scenario that runs asks too: quitting ends it without its
//! debrief.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::view::util::centered;

/// How the open playbook stands while the question is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuitNow {
    /// A step or a Wait in progress (its text).
    Running(String),
    /// Open, nothing running (where it stands).
    Open(String),
    /// No playbook open, a training scenario running (how far it is).
    Training(String),
}

/// The open question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuitConfirm {
    /// What is in progress (`step 3 of 6 (Wait for the pod to stop) is running`).
    pub what: String,
}

impl QuitConfirm {
    /// Asks about quitting while `what` is in progress.
    pub fn new(what: String) -> Self {
        QuitConfirm { what }
    }

    /// The answer to a key: `y`, `q` or Ctrl-C quit ([`AppCommand::Quit`]); `n`, Esc or Enter stay
    /// ([`AppCommand::Close`]); every other key is swallowed.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            _ if ctrl_c => Outcome::Command(AppCommand::Quit),
            KeyCode::Char('y' | 'Y' | 'q') => Outcome::Command(AppCommand::Quit),
            KeyCode::Char('n' | 'N') | KeyCode::Esc | KeyCode::Enter => Outcome::Command(AppCommand::Close),
            _ => Outcome::Consumed,
        }
    }

    /// Draws the question centred over `area`; `now` is how the open playbook stands as the frame
    /// is drawn (the run moves on while the question is open: a step that finished meanwhile is
    /// said so, not the text of when `q` was pressed); `None` once no playbook is open.
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme, now: Option<QuitNow>) {
        let title = match now {
            Some(QuitNow::Running(_)) => " quit while a step runs? ",
            Some(QuitNow::Training(_)) => " quit the training? ",
            _ => " quit with the playbook open? ",
        };
        let lines = match now {
            Some(QuitNow::Running(what)) => vec![
                Line::styled(format!("{what}."), t.warn),
                Line::styled("Quitting now leaves it unfinished: the journal keeps it, and the next", t.text),
                Line::styled("console shows it as interrupted until it is acknowledged.", t.text),
            ],
            Some(QuitNow::Open(what)) if what == self.what => vec![
                Line::styled(format!("{what}; nothing is running."), t.text),
                Line::styled("q quits the whole console, not the playbook: Esc closes the playbook.", t.warn),
                Line::styled("The journal keeps every step done so far.", t.text),
            ],
            Some(QuitNow::Training(what)) => vec![
                Line::styled(format!("{what}."), t.warn),
                Line::styled("Quitting ends it here, without its debrief (exit 1); its journals stay.", t.text),
            ],
            _ => vec![
                Line::styled(format!("Asked while {}; it has finished since.", self.what), t.text),
                Line::styled("Nothing is in progress now: quitting leaves nothing unfinished.", t.text),
            ],
        };
        let rect = centered(area, area.width.min(76), 8.min(area.height));
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::styled(title, t.title))
            .title_bottom(Line::styled(" y quit · n/Esc stay ", t.accent));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), rect);
    }
}
