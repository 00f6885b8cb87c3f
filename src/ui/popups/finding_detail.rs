//! The finding detail overlay (Enter on a finding) as a component: its state is the highlighted
//! object row and the scroll offset; the finding it shows is the Findings pane's selected one,
//! handed in with each key and frame. Drawn by `view::findings` ([`FindingDetail::draw`]).

use crate::ui::action::Action;
use crate::ui::outcome::{AppCommand, Outcome};
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
