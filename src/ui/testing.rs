//! The screen-test kit, shared by the console's unit tests and the integration tests: keys go in
//! through [`App::update`] with [`Msg::Key`], the entry the terminal's keys take in the run loop
//! (`Loop::step`, `Loop::key`), so a test sees the real routing down the popup stack; screens are
//! drawn by the real [`crate::ui::view::draw`] on a ratatui `TestBackend`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::{App, Effect, Msg};

/// The screen `app` draws on a `w`×`h` terminal, one line per row, trailing blanks trimmed.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    let Ok(mut t) = Terminal::new(TestBackend::new(w, h));
    if t.draw(|f| super::view::draw(f, app)).is_err() {
        return String::new();
    }
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Presses `key` as the terminal delivers it; returns the IO the app asks for.
pub fn press_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    app.update(Msg::Key(key))
}

/// Presses `code` without modifiers.
pub fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    press_key(app, KeyEvent::new(code, KeyModifiers::NONE))
}

/// Presses Ctrl and `c`.
pub fn ctrl(app: &mut App, c: char) -> Vec<Effect> {
    press_key(app, KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// Types `text` key by key (`\n` is Enter); returns every effect asked for on the way.
pub fn type_text(app: &mut App, text: &str) -> Vec<Effect> {
    let mut fx = vec![];
    for c in text.chars() {
        fx.extend(press(app, if c == '\n' { KeyCode::Enter } else { KeyCode::Char(c) }));
    }
    fx
}
