//! The help overlay (`?`) as a component: its state ([`Help`]) is the scroll offset, its keys the
//! pane keys that scroll and close it. The tables of each view's keys are `help_rows.rs`, the
//! drawing [`ViewHelp::draw`] below.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::theme::Theme;
use crate::ui::action::Action;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::view::util::{centered, more_marks, plain};

/// One row of a help table: the keys, what they do.
pub type KeyRow = (&'static str, &'static str);

/// The help of the view on top: its title and rows, then a few lines about it.
pub struct ViewHelp {
    /// What the help is about (`Pods`, `Playbook`, …).
    pub title: String,
    /// Key rows of that view, then the global ones where they apply.
    pub rows: Vec<KeyRow>,
    /// Short explanation lines.
    pub about: &'static [&'static str],
}

/// Lines a page key scrolls.
const PAGE: u16 = 10;

/// The open help overlay: how far it is scrolled, and whether the keys it does not use act
/// under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Help {
    /// Scroll offset, lines (clamped to the content when drawn).
    pub scroll: u16,
    /// Opened over the panes or the finding detail: keys it does not use act under it (moving,
    /// focusing a pane, which the help then describes). Over anything else it keeps them.
    passes: bool,
}

impl Help {
    /// The overlay at the top; `passes`: keys it does not use go to the layer under it.
    pub fn new(passes: bool) -> Self {
        Help { scroll: 0, passes }
    }

    /// True when keys it does not use go on to the layer under it.
    pub fn passes_keys(&self) -> bool {
        self.passes
    }

    /// The overlay's answer to a key: ↑/↓ (j/k) and PgUp/PgDn (Ctrl-B/F) scroll, Esc and `?`
    /// close it ([`AppCommand::Close`]); any other key is [`Outcome::Ignored`].
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let a = match crate::ui::keys::map(key) {
            Some(a) => a,
            None => return Outcome::Ignored,
        };
        match a {
            Action::Down => self.scroll = self.scroll.saturating_add(1),
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::PageDown => self.scroll = self.scroll.saturating_add(PAGE),
            Action::PageUp => self.scroll = self.scroll.saturating_sub(PAGE),
            Action::Back | Action::ToggleHelp => return Outcome::Command(AppCommand::Close),
            _ => return Outcome::Ignored,
        }
        Outcome::Consumed
    }
}

impl ViewHelp {
    /// Draws the help box centred over `area`, scrolled down `scroll` lines (clamped to the end).
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme, scroll: u16) {
        let help = self;
        let kw = help.rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0).max(5) + 2;
        let w = 80.min(area.width);
        // what each key does, wrapped under itself (a hanging indent), never under the keys
        let room = (w as usize).saturating_sub(kw + 3).max(10);
        let mut lines: Vec<Line> = vec![];
        for (k, what) in &help.rows {
            for (i, part) in wrap_words(what, room).into_iter().enumerate() {
                let keys = if i == 0 { format!(" {k:<kw$}") } else { " ".repeat(kw + 1) };
                lines.push(Line::from(vec![plain(keys, t.accent), plain(part, t.text)]));
            }
        }
        if !help.about.is_empty() {
            lines.push(Line::raw(""));
            lines.extend(help.about.iter().map(|l| Line::styled(*l, t.muted)));
        }
        let h = (lines.len() as u16 + 2).min(area.height);
        let rect = centered(area, w, h);
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::styled(format!(" keys: {} — Esc or ? to close ", help.title), t.title));
        let p = Paragraph::new(lines).wrap(Wrap { trim: false });
        let total = p.line_count(rect.width.saturating_sub(2)).min(u16::MAX as usize) as u16;
        let height = rect.height.saturating_sub(2);
        let scroll = scroll.min(total.saturating_sub(height));
        let block = block.title_bottom(Line::styled(more_marks(scroll, total, height), t.warn).right_aligned());
        f.render_widget(p.scroll((scroll, 0)).block(block), rect);
    }
}

/// `text` cut at spaces into lines of at most `width` characters (a longer word is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut line = String::new();
    for word in text.split(' ') {
        let (n, wn) = (line.chars().count(), word.chars().count());
        if n > 0 && n + 1 + wn > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let head: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            out.push(head);
        }
    }
    out.push(line);
    out
}
