//! Key bindings, k9s style. The help overlay's tables are in [`super::keys_help`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{Action, App, Msg, Pane};
use super::playbook::PlaybookAction;

/// Maps a key press in the Playbook view.
pub fn map_playbook(key: KeyEvent) -> Option<PlaybookAction> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return (key.code == KeyCode::Char('c')).then_some(PlaybookAction::Quit);
    }
    Some(match key.code {
        KeyCode::Char('q') => PlaybookAction::Quit,
        KeyCode::Char('?') => PlaybookAction::Help,
        KeyCode::Char('j') | KeyCode::Down => PlaybookAction::Down,
        KeyCode::Char('k') | KeyCode::Up => PlaybookAction::Up,
        KeyCode::Enter | KeyCode::Char('x') => PlaybookAction::Run,
        KeyCode::Char('s') => PlaybookAction::Skip,
        KeyCode::Char('u') => PlaybookAction::Undo,
        KeyCode::Char('a') => PlaybookAction::Acknowledge,
        KeyCode::Char('o') => PlaybookAction::Override,
        KeyCode::Char('t') => PlaybookAction::TakeOver,
        KeyCode::Char('n') => PlaybookAction::Note,
        KeyCode::Char('e') => PlaybookAction::Export,
        KeyCode::Char('h') => PlaybookAction::Hints,
        KeyCode::Esc => PlaybookAction::Close,
        _ => return None,
    })
}

/// The message a key press means in the app's current state: a raw key while a popup or prompt
/// has the keys (the app routes it, see [`App::takes_raw_keys`]), Playbook keys while the view is
/// open, else the pane keys.
pub fn to_msg(app: &App, key: KeyEvent) -> Option<Msg> {
    if app.takes_raw_keys() {
        return Some(Msg::Key(key));
    }
    if app.remedy.playbook.is_some() {
        return map_playbook(key).is_some().then_some(Msg::Key(key));
    }
    map(key).map(Msg::Action)
}

/// Maps a key press (outside the filter editor) to an action.
pub fn map(key: KeyEvent) -> Option<Action> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('c') => Some(Action::Quit),
            KeyCode::Char('f') => Some(Action::PageDown),
            KeyCode::Char('b') => Some(Action::PageUp),
            _ => None,
        };
    }
    Some(match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Tab => Action::NextPane,
        KeyCode::BackTab => Action::PrevPane,
        KeyCode::Char('1') => Action::Focus(Pane::Findings),
        KeyCode::Char('2') => Action::Focus(Pane::Nodes),
        KeyCode::Char('3') => Action::Focus(Pane::Pods),
        KeyCode::Char('4') => Action::Focus(Pane::Volumes),
        KeyCode::Char('5') => Action::Focus(Pane::Ceph),
        KeyCode::Char('6') => Action::Focus(Pane::Events),
        KeyCode::Char('j') | KeyCode::Down => Action::Down,
        KeyCode::Char('k') | KeyCode::Up => Action::Up,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::Char('g') | KeyCode::Home => Action::Top,
        KeyCode::Char('G') | KeyCode::End => Action::Bottom,
        KeyCode::Char('/') => Action::StartFilter,
        KeyCode::Enter => Action::Drill,
        KeyCode::Esc => Action::Back,
        KeyCode::Char('a') => Action::ToggleAllPods,
        KeyCode::Char('r') => Action::RefreshCeph,
        KeyCode::Char('s') => Action::Scan,
        KeyCode::Char('p') => Action::OpenPlaybook,
        KeyCode::Char('u') => Action::Undo,
        KeyCode::Char('n') => Action::Note,
        KeyCode::Char('h') => Action::Hints,
        KeyCode::Char(':') => Action::Command,
        KeyCode::Char('d') => Action::Describe,
        KeyCode::Char('y') => Action::Yaml,
        KeyCode::Left => Action::Left,
        KeyCode::Right => Action::Right,
        _ => return None,
    })
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
