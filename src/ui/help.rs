//! The help overlay (`?`) as a component: its state is the scroll offset (`App::help_scroll`,
//! lines), its keys are the mapped ones (it has no text field). The tables are `keys_help.rs`, the
//! drawing `view/help.rs`.

use super::action::Action;
use super::outcome::{AppCommand, Outcome};

/// Lines a page key scrolls.
const PAGE: u16 = 10;

/// The overlay's answer to a pane key: ↑/↓ and PgUp/PgDn scroll `scroll`, Esc and `?` close it
/// ([`AppCommand::Close`]); any other key is [`Outcome::Ignored`] (it acts on the panes under
/// the overlay, as before).
pub fn handle_action(scroll: &mut u16, a: Action) -> Outcome {
    match a {
        Action::Down => *scroll = scroll.saturating_add(1),
        Action::Up => *scroll = scroll.saturating_sub(1),
        Action::PageDown => *scroll = scroll.saturating_add(PAGE),
        Action::PageUp => *scroll = scroll.saturating_sub(PAGE),
        Action::Back | Action::ToggleHelp => return Outcome::Command(AppCommand::Close),
        _ => return Outcome::Ignored,
    }
    Outcome::Consumed
}

/// The overlay's answer to a Playbook key while it covers the Playbook view: `?` and Esc close
/// it, ↑/↓ scroll, every other key is swallowed (nothing runs under the help).
pub fn handle_playbook_action(scroll: &mut u16, a: Action) -> Outcome {
    match a {
        Action::ToggleHelp | Action::Back => return Outcome::Command(AppCommand::Close),
        Action::Down => *scroll = scroll.saturating_add(1),
        Action::Up => *scroll = scroll.saturating_sub(1),
        _ => {}
    }
    Outcome::Consumed
}
