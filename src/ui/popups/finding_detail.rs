//! The finding detail overlay (Enter on a finding) as a component: its state is the highlighted
//! object row and the scroll offset; the finding it shows is the Findings pane's selected one,
//! handed in with each key and frame. Drawn with the Findings pane's finding body ([`FindingDetail::draw`]).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::ui::action::Action;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::panes::ctx::ViewCtx;
use unstick_core::diagnose::Finding;

/// Lines a page key scrolls.
const PAGE: u16 = 5;

/// The overlay's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FindingDetail {
    /// The highlighted row of the finding's objects (Enter jumps to it).
    object: usize,
    /// First line shown.
    scroll: u16,
}

impl FindingDetail {
    /// The overlay on its first object, scrolled to the top.
    pub fn new() -> Self {
        FindingDetail::default()
    }

    /// The highlighted object row.
    pub fn object(&self) -> usize {
        self.object
    }

    /// The first line shown (clamped to the content when drawn).
    pub fn scroll(&self) -> u16 {
        self.scroll
    }

    /// The overlay's answer to a key about `f`: ↑/↓ move between its objects, PgUp/PgDn/Home
    /// scroll; Enter jumps to the highlighted object ([`AppCommand::JumpTo`]), Esc closes
    /// ([`AppCommand::Close`]); `?`, `p`, `n`, `d`, `y`, `:` and `q` open what they open over
    /// the panes, `/` the Findings filter (the overlay closes: it shows the selected finding). Any other key is swallowed: nothing acts on the panes under the overlay.
    pub fn handle_key(&mut self, a: Action, f: &Finding) -> Outcome {
        let n = f.objects.len();
        let c = match a {
            Action::Quit => AppCommand::Quit,
            Action::Back => AppCommand::Close,
            Action::ToggleHelp => AppCommand::OpenHelp,
            Action::OpenPlaybook => AppCommand::OpenPlaybook,
            Action::Note => AppCommand::OpenNote,
            Action::Describe => AppCommand::OpenDescribe { yaml: false },
            Action::Yaml => AppCommand::OpenDescribe { yaml: true },
            Action::Command => AppCommand::OpenCommand,
            Action::StartFilter => AppCommand::OpenFilter,
            Action::Drill => match f.objects.get(self.object) {
                Some(o) => AppCommand::JumpTo(o.clone()),
                None => return Outcome::Consumed,
            },
            Action::Up => {
                self.object = self.object.saturating_sub(1);
                return Outcome::Consumed;
            }
            Action::Down => {
                self.object = (self.object + 1).min(n.saturating_sub(1));
                return Outcome::Consumed;
            }
            Action::PageDown => {
                self.scroll = self.scroll.saturating_add(PAGE);
                return Outcome::Consumed;
            }
            Action::PageUp => {
                self.scroll = self.scroll.saturating_sub(PAGE);
                return Outcome::Consumed;
            }
            Action::Top => {
                self.scroll = 0;
                return Outcome::Consumed;
            }
            _ => return Outcome::Consumed,
        };
        Outcome::Command(c)
    }
}

impl FindingDetail {
    /// Draws the overlay of `fd` over `area`: its highlighted object row, scrolled (clamped to
    /// the content).
    pub fn draw(&self, f: &mut Frame, area: Rect, cx: &ViewCtx, fd: &Finding) {
        let t = cx.theme;
        let lines = crate::ui::panes::findings::body(cx, fd, Some(self.object()));
        let w = area.width.saturating_sub(4).min(120);
        let h = area.height.saturating_sub(2);
        let rect = crate::ui::view::util::centered(area, w, h);
        f.render_widget(Clear, rect);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_focused)
            .title(Line::styled(" finding — j/k object · Enter jump · PgDn/PgUp · p playbook · Esc ", t.title));
        // never cut silently: the bottom border says what is above and below
        let p = Paragraph::new(lines).wrap(Wrap { trim: false });
        let total = p.line_count(rect.width.saturating_sub(2)).min(u16::MAX as usize) as u16;
        let height = rect.height.saturating_sub(2);
        let scroll = self.scroll().min(total.saturating_sub(height));
        let block = block.title_bottom(
            Line::styled(crate::ui::view::util::more_marks(scroll, total, height), t.warn).right_aligned(),
        );
        let p = p.scroll((scroll, 0)).block(block);
        f.render_widget(p, rect);
    }
}
