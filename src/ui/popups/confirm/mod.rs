//! The confirm-before-act popup as a component ([`ConfirmUi`]: its state, and its keys answered
//! with an [`Outcome`]; the action to confirm is a value). Drawn by `view.rs`
//! (`ConfirmUi::draw`, `ConfirmUi::metrics`).
//!
//! Nothing can be confirmed unseen: the content scrolls (`j`/`k`, arrows, PgUp/PgDn; only arrows
//! and pages while a name is typed) and the confirm key is refused until every row (the live
//! re-check and the warnings included) has been on screen. A popup that opened by itself takes no
//! key for a moment ([`Guard`]). Irreversible steps, and steps that affect volumes without a
//! verified backup, need a typed name (its last characters when long, [`typed_part`]).

mod view;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;
use ratatui_textarea::TextArea;

use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popup::{Guard, Scroll, scroll_delta};
use unstick_core::console_state::blast::Blast;
use unstick_core::remedy::run::typed_part;
use unstick_core::remedy::service::ConfirmView;

/// The confirm popup: the confirmation (a value), its blast radius and the typed-name field.
#[derive(Debug, Clone)]
pub struct ConfirmUi {
    /// What is confirmed.
    pub view: ConfirmView,
    /// Pods and volumes affected beyond the action's own object.
    pub blast: Blast,
    /// The name whose [`typed_part`] must be typed: the runner's (irreversible step) or, for a
    /// step affecting volumes without a verified backup, the action's object.
    pub typed_name: Option<String>,
    /// The typed field.
    pub input: TextArea<'static>,
    /// Why the last attempt was refused.
    pub error: Option<String>,
    /// Scroll position and how far the content has been on screen.
    pub scroll: Scroll,
    /// Keys are ignored until the console clock passes this.
    pub guard: Guard,
}

/// A one-line text field without the cursor-line underline.
pub fn one_line_field() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_cursor_line_style(ratatui::style::Style::default());
    t
}

/// Applies the editing keys every typed prompt shares: Ctrl-U deletes to the line start (as in a
/// shell), Ctrl-W the word before the cursor; other keys go to the field.
pub fn edit_field(field: &mut TextArea<'static>, key: KeyEvent) {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        match key.code {
            KeyCode::Char('u') => {
                field.delete_line_by_head();
            }
            KeyCode::Char('w') => {
                field.delete_word();
            }
            _ => {}
        }
        return;
    }
    field.input(key);
}

impl ConfirmUi {
    /// A popup for `view` with its blast radius, opened at `now` on a clock running `speed`×.
    pub fn new(view: ConfirmView, blast: Blast, now: Timestamp, speed: f64) -> Self {
        let typed_name =
            view.typed_name.clone().or_else(|| (!blast.unbacked.is_empty()).then(|| view.action.confirm_name()));
        ConfirmUi {
            view,
            blast,
            typed_name,
            input: one_line_field(),
            error: None,
            scroll: Scroll::default(),
            guard: Guard::new(now, speed),
        }
    }

    /// What the operator types, if anything.
    pub fn to_type(&self) -> Option<&str> {
        self.typed_name.as_deref().map(typed_part)
    }

    /// The popup's answer to `key` at console time `now`; `metrics` are the content rows and the
    /// rows visible ([`ConfirmUi::metrics`]). Scrolling, typing and a refused confirm (unseen
    /// rows, wrong name, the opening guard) are [`Outcome::Consumed`]; Esc, Ctrl-C and `n` (on a
    /// `y` popup) cancel ([`AppCommand::Close`]: nothing is sent); the confirm key answers
    /// [`AppCommand::Confirm`] with the text typed (typed-name popups).
    pub fn handle_key(&mut self, key: KeyEvent, now: Timestamp, metrics: (u16, u16)) -> Outcome {
        let (total, height) = metrics;
        self.scroll.shown(total, height);
        let typing = self.typed_name.is_some();
        if let Some(d) = scroll_delta(&key, height.saturating_sub(1), !typing) {
            self.scroll.by(d, total, height);
            self.error = None;
            return Outcome::Consumed;
        }
        // cancelling is never guarded: Esc (Ctrl-C, n) works from the first moment
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Command(AppCommand::Close),
            KeyCode::Char('c') if ctrl => return Outcome::Command(AppCommand::Close),
            KeyCode::Char('n') if !typing => return Outcome::Command(AppCommand::Close),
            _ => {}
        }
        if self.guard.holds(now) {
            self.error = Some("just opened: keys are ignored for a moment — read it first (Esc cancels)".into());
            return Outcome::Consumed;
        }
        let confirming = match (&self.typed_name, key.code) {
            (None, KeyCode::Char('y') | KeyCode::Char('Y')) => true,
            (Some(_), KeyCode::Enter) => true,
            (Some(_), _) => {
                edit_field(&mut self.input, key);
                self.error = None;
                return Outcome::Consumed;
            }
            _ => false,
        };
        if !confirming {
            return Outcome::Consumed;
        }
        if !self.scroll.all_seen(total) {
            self.error = Some("more below: scroll to the end (↓ / PgDn) first — nothing was sent".into());
            return Outcome::Consumed;
        }
        match self.to_type() {
            None => Outcome::Command(AppCommand::Confirm(None)),
            Some(part) => {
                let typed = self.input.lines().join("").trim().to_string();
                // the whole name proves attention too (never completed for the operator)
                if typed != part && Some(typed.as_str()) != self.typed_name.as_deref() {
                    self.error = Some(format!("type `{part}` exactly to confirm (nothing was sent)"));
                    return Outcome::Consumed;
                }
                Outcome::Command(AppCommand::Confirm(Some(typed)))
            }
        }
    }
}

/// Draws a one-line field with its `> ` label in `area` (the override and full-copy prompts).
pub(crate) fn draw_field(
    f: &mut ratatui::Frame,
    t: &crate::theme::Theme,
    field: &TextArea<'static>,
    area: ratatui::layout::Rect,
) {
    let label = "> ";
    f.render_widget(ratatui::widgets::Paragraph::new(ratatui::text::Line::styled(label, t.accent)), area);
    let r = ratatui::layout::Rect { x: area.x + 2, width: area.width.saturating_sub(2), ..area };
    f.render_widget(field, r);
}

/// What a one-line prompt over the Playbook view shows (the override and full-copy prompts).
pub(crate) struct PromptFrame<'a> {
    /// The border title.
    pub title: &'a str,
    /// The widest the box gets, columns.
    pub max_width: u16,
    /// What answering does (two lines, wrapped).
    pub what: ratatui::text::Line<'a>,
    /// What to type and the keys.
    pub how: String,
    /// The field.
    pub field: &'a TextArea<'static>,
    /// Why the last answer was refused.
    pub error: Option<&'a str>,
}

/// Draws `p` as an 8-row box centred over `area`: what, how, the field, the error.
pub(crate) fn draw_prompt(
    f: &mut ratatui::Frame,
    t: &crate::theme::Theme,
    area: ratatui::layout::Rect,
    p: PromptFrame,
) {
    use ratatui::layout::{Constraint, Layout};
    use ratatui::text::Line;
    use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
    let rect = crate::ui::view::util::centered(area, area.width.saturating_sub(4).min(p.max_width), 8);
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border_focused)
        .title(Line::styled(format!(" {} ", p.title), t.title));
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let [a, b, c, d] =
        Layout::vertical([Constraint::Length(2), Constraint::Length(1), Constraint::Length(1), Constraint::Length(1)])
            .areas(inner);
    f.render_widget(Paragraph::new(p.what).wrap(Wrap { trim: false }), a);
    f.render_widget(Paragraph::new(Line::styled(p.how, t.accent)), b);
    draw_field(f, t, p.field, c);
    if let Some(e) = p.error {
        f.render_widget(Paragraph::new(Line::styled(unstick_core::text::sanitize(e), t.error)), d);
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
