//! Key bindings, k9s style: one [`Action`] enum, one binding table per context ([`KeyContext`]:
//! the panes and the overlays over them, the Playbook view). The help overlay's rows are in
//! [`crate::ui::popups::help_rows`]; a test checks that every key they name is bound here.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use crate::ui::panes::Pane;

/// Where a key is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    /// The panes, and the overlays over them that take mapped keys (help, finding detail).
    Panes,
    /// The Playbook view.
    Playbook,
}

/// One binding: a key, with Ctrl held or not (other modifiers, e.g. Shift on `G`, do not
/// matter), and what it means.
type Bind = (KeyCode, bool, Action);

const fn key(c: char, a: Action) -> Bind {
    (KeyCode::Char(c), false, a)
}

const fn ctrl(c: char, a: Action) -> Bind {
    (KeyCode::Char(c), true, a)
}

/// The panes' keys.
const PANES: &[Bind] = &[
    ctrl('c', Action::Quit),
    ctrl('f', Action::PageDown),
    ctrl('b', Action::PageUp),
    key('q', Action::Quit),
    key('?', Action::ToggleHelp),
    (KeyCode::Tab, false, Action::NextPane),
    (KeyCode::BackTab, false, Action::PrevPane),
    key('1', Action::Focus(Pane::Findings)),
    key('2', Action::Focus(Pane::Nodes)),
    key('3', Action::Focus(Pane::Pods)),
    key('4', Action::Focus(Pane::Volumes)),
    key('5', Action::Focus(Pane::Ceph)),
    key('6', Action::Focus(Pane::Events)),
    key('j', Action::Down),
    (KeyCode::Down, false, Action::Down),
    key('k', Action::Up),
    (KeyCode::Up, false, Action::Up),
    (KeyCode::PageDown, false, Action::PageDown),
    (KeyCode::PageUp, false, Action::PageUp),
    key('g', Action::Top),
    (KeyCode::Home, false, Action::Top),
    key('G', Action::Bottom),
    (KeyCode::End, false, Action::Bottom),
    key('/', Action::StartFilter),
    (KeyCode::Enter, false, Action::Drill),
    (KeyCode::Esc, false, Action::Back),
    key('a', Action::ToggleAllPods),
    key('r', Action::RefreshCeph),
    key('s', Action::Scan),
    key('p', Action::OpenPlaybook),
    key('u', Action::Undo),
    key('n', Action::Note),
    key('h', Action::Hints),
    key(':', Action::Command),
    key('d', Action::Describe),
    key('y', Action::Yaml),
    (KeyCode::Left, false, Action::Left),
    (KeyCode::Right, false, Action::Right),
];

/// The Playbook view's keys.
const PLAYBOOK: &[Bind] = &[
    ctrl('c', Action::Quit),
    key('q', Action::Quit),
    key('?', Action::ToggleHelp),
    key('j', Action::Down),
    (KeyCode::Down, false, Action::Down),
    key('k', Action::Up),
    (KeyCode::Up, false, Action::Up),
    (KeyCode::Enter, false, Action::Run),
    key('x', Action::Run),
    key('s', Action::Skip),
    key('u', Action::Undo),
    key('a', Action::Acknowledge),
    key('o', Action::Override),
    key('t', Action::TakeOver),
    key('n', Action::Note),
    key(':', Action::Command),
    key('e', Action::Export),
    key('c', Action::CopyCommands),
    key('h', Action::Hints),
    (KeyCode::Esc, false, Action::Back),
];

/// What a key press means in `ctx`, if anything.
pub fn map_in(ctx: KeyContext, key: KeyEvent) -> Option<Action> {
    let table = match ctx {
        KeyContext::Panes => PANES,
        KeyContext::Playbook => PLAYBOOK,
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    table.iter().find(|(code, c, _)| *code == key.code && *c == ctrl).map(|(_, _, a)| *a)
}

/// Maps a key press in the Playbook view.
pub fn map_playbook(key: KeyEvent) -> Option<Action> {
    map_in(KeyContext::Playbook, key)
}

/// Maps a key press in the panes (and the overlays that read pane keys: help, finding detail).
pub fn map(key: KeyEvent) -> Option<Action> {
    map_in(KeyContext::Panes, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k9s_habits() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(map(k(KeyCode::Char('?'))), Some(Action::ToggleHelp));
        assert_eq!(map(k(KeyCode::Char('/'))), Some(Action::StartFilter));
        assert_eq!(map(k(KeyCode::Char('j'))), Some(Action::Down));
        assert_eq!(map(k(KeyCode::Esc)), Some(Action::Back));
        assert_eq!(map(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)), Some(Action::Quit));
        assert_eq!(map(k(KeyCode::Char('x'))), None);
    }
}
