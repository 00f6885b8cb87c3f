//! The optional full copy of the Backup step in the console: `e` on the (current) Backup step
//! opens a prompt for the destination file (default `<incident dir>/backup/<image>.img`), Enter
//! runs the backup with `rbd export` of the fresh snapshot to that file. The worker streams
//! [`ExportProgress`] back; the view draws it as a bar with bytes, rate and ETA, and the backup's
//! journal record (path + sha256) is shown once verified.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::TextArea;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::theme::Theme;
use crate::ui::outcome::{AppCommand, Outcome};
use crate::ui::popups::confirm::{PromptFrame, draw_prompt};
use unstick_core::remedy::playbook::{Playbook, StepKind};
use unstick_core::remedy::run::backup::ExportProgress;

/// The destination prompt of the full copy.
#[derive(Debug, Clone)]
pub struct ExportPrompt {
    /// The destination path (one line, pre-filled with the default).
    pub input: TextArea<'static>,
    /// Why the last Enter was refused.
    pub error: Option<String>,
}

/// `<incident dir>/backup/<image>.img` for the incident whose journal is `journal`, or `None` when
/// the playbook has no image to export.
pub fn default_export_path(journal: &Path, playbook: &Playbook) -> Option<PathBuf> {
    let dir = journal.parent()?.join("backup");
    let StepKind::Backup(plan) = &playbook.steps.first()?.kind else { return None };
    Some(dir.join(format!("{}.img", plan.image.as_ref()?.image)))
}

/// `1.5 MiB`-style size (binary units, one decimal from KiB up; `512 B` below).
pub fn human_bytes(n: u64) -> String {
    bytesize::ByteSize(n).display().iec().to_string()
}

/// `32.0 MiB / 64.0 MiB · 120.5 MiB/s · ETA 1 s` (total and ETA only when known).
pub fn progress_text(p: &ExportProgress) -> String {
    let total = p.total.map(|t| format!(" / {}", human_bytes(t))).unwrap_or_default();
    let eta = p.eta.map(|e| format!(" · ETA {} s", e.as_secs())).unwrap_or_default();
    format!("{}{total} · {}/s{eta}", human_bytes(p.bytes), human_bytes(p.rate.max(0.0) as u64))
}

/// Fraction done in `[0, 1]`, when the total is known.
pub fn progress_ratio(p: &ExportProgress) -> Option<f64> {
    let t = p.total.filter(|t| *t > 0)?;
    Some((p.bytes as f64 / t as f64).clamp(0.0, 1.0))
}

impl ExportPrompt {
    /// The prompt pre-filled with `path`, the cursor at its end.
    pub fn new(path: &Path) -> Self {
        let mut input = TextArea::new(vec![path.display().to_string()]);
        input.set_cursor_line_style(ratatui::style::Style::default());
        input.move_cursor(ratatui_textarea::CursorMove::End);
        ExportPrompt { input, error: None }
    }

    /// The prompt's answer to a key: Enter asks to start the backup with the export to the typed
    /// path ([`AppCommand::StartExport`]) once it is absolute and names no existing file (else
    /// the prompt says why and stays), Esc or Ctrl-C close it ([`AppCommand::Close`]),
    /// Ctrl-U / Ctrl-W delete, anything else edits the path.
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl_c = key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            _ if ctrl_c => Outcome::Command(AppCommand::Close),
            KeyCode::Esc => Outcome::Command(AppCommand::Close),
            KeyCode::Enter => {
                let typed = self.input.lines().join("").trim().to_string();
                let path = PathBuf::from(&typed);
                let why = if typed.is_empty() || !path.is_absolute() {
                    Some("give an absolute path".to_string())
                } else if path.exists() {
                    Some(format!("{typed} exists: rbd export never overwrites; choose another file"))
                } else {
                    None
                };
                match why {
                    Some(why) => {
                        self.error = Some(why);
                        Outcome::Consumed
                    }
                    None => Outcome::Command(AppCommand::StartExport(path)),
                }
            }
            _ => {
                crate::ui::popups::confirm::edit_field(&mut self.input, key);
                self.error = None;
                Outcome::Consumed
            }
        }
    }
}

impl ExportPrompt {
    /// Draws the full-copy destination prompt over `area`.
    pub fn draw(&self, f: &mut Frame, area: Rect, t: &Theme) {
        draw_export(f, t, self, area)
    }
}

fn draw_export(f: &mut Frame, t: &Theme, e: &ExportPrompt, area: Rect) {
    let what = "Runs the Backup step and exports the new snapshot to this file (must not exist); the journal records its path and sha256.";
    let frame = PromptFrame {
        title: "Backup: full copy with rbd export",
        max_width: 100,
        what: Line::styled(what, t.text),
        how: "Destination file, then Enter · Esc cancel".into(),
        field: &e.input,
        error: e.error.as_deref(),
    };
    draw_prompt(f, t, area, frame);
}

#[cfg(test)]
#[path = "export_prompt_tests.rs"]
mod tests;
