//! The optional full copy of the Backup step in the console: `e` on the (current) Backup step
//! opens a prompt for the destination file (default `<incident dir>/backup/<image>.img`), Enter
//! runs the backup with `rbd export` of the fresh snapshot to that file. The worker streams
//! [`ExportProgress`] back; the view draws it as a bar with bytes, rate and ETA, and the backup's
//! journal record (path + sha256) is shown once verified.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::TextArea;

use super::app::{App, Effect};
use super::playbook::{PlaybookUi, WriteMode};
use crate::remedy::backup::ExportProgress;
use crate::remedy::playbook::StepKind;
use crate::remedy::service::RemedyRequest;

/// The destination prompt of the full copy.
#[derive(Debug, Clone)]
pub struct ExportPrompt {
    /// The destination path (one line, pre-filled with the default).
    pub input: TextArea<'static>,
    /// Why the last Enter was refused.
    pub error: Option<String>,
}

/// `<incident dir>/backup/<image>.img`, or `None` when the runner is not open or the playbook has
/// no image to export.
pub fn default_export_path(pb: &PlaybookUi) -> Option<PathBuf> {
    let dir = pb.runner.as_ref()?.journal.parent()?.join("backup");
    let StepKind::Backup(plan) = &pb.playbook.steps.first()?.kind else { return None };
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

impl App {
    /// `e` in the Playbook view: opens the destination prompt when the Backup step is current.
    pub(crate) fn open_export(&mut self) -> Vec<Effect> {
        let mode = self.remedy.mode;
        let worker = self.remedy.worker;
        let training = self.training.is_some();
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let on_backup = pb.runner.as_ref().is_some_and(|r| r.cursor == 0 && r.backup.is_none());
        let refusal = match () {
            _ if mode == WriteMode::ReadOnly => Some(super::playbook::READ_ONLY.to_string()),
            _ if training => Some(
                "training: the simulated Ceph has no image data to export; the snapshot is the backup here".to_string(),
            ),
            _ if mode == WriteMode::DryRun => Some("dry-run: nothing is exported".to_string()),
            _ if !worker => Some("no remediation worker: nothing can run".to_string()),
            _ if pb.busy.is_some() => Some("busy: wait for the current call to finish".to_string()),
            _ if !on_backup => Some("the full copy is part of the Backup step (step 1), before it has run".to_string()),
            _ => None,
        };
        if let Some(why) = refusal {
            pb.message = Some((false, why));
            return vec![];
        }
        let Some(path) = default_export_path(pb) else {
            pb.message = Some((false, "this playbook has no RBD image to export".into()));
            return vec![];
        };
        let mut input = TextArea::new(vec![path.display().to_string()]);
        input.set_cursor_line_style(ratatui::style::Style::default());
        input.move_cursor(ratatui_textarea::CursorMove::End);
        pb.selected = 0;
        pb.export_ui = Some(ExportPrompt { input, error: None });
        vec![]
    }

    /// A raw key while the destination prompt is open: Enter starts the backup with the export,
    /// Esc or Ctrl-C closes the prompt, Ctrl-U / Ctrl-W delete, anything else edits the path.
    pub(crate) fn export_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(pb) = self.remedy.playbook.as_mut() else { return vec![] };
        let Some(e) = pb.export_ui.as_mut() else { return vec![] };
        let ctrl_c = key.modifiers.contains(crossterm::event::KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        match key.code {
            _ if ctrl_c => {
                pb.export_ui = None;
                pb.message = Some((true, "full copy cancelled: nothing was sent".into()));
                vec![]
            }
            KeyCode::Esc => {
                pb.export_ui = None;
                pb.message = Some((true, "full copy cancelled: nothing was sent".into()));
                vec![]
            }
            KeyCode::Enter => {
                let typed = e.input.lines().join("").trim().to_string();
                let path = PathBuf::from(&typed);
                let why = if typed.is_empty() || !path.is_absolute() {
                    Some("give an absolute path".to_string())
                } else if path.exists() {
                    Some(format!("{typed} exists: rbd export never overwrites; choose another file"))
                } else {
                    None
                };
                if let Some(why) = why {
                    e.error = Some(why);
                    return vec![];
                }
                pb.export_ui = None;
                pb.export = None;
                pb.busy = Some(format!("backing up with a full copy to {typed}…"));
                vec![Effect::Remedy(RemedyRequest::Backup { export_to: Some(path) })]
            }
            _ => {
                super::confirm::edit_field(&mut e.input, key);
                e.error = None;
                vec![]
            }
        }
    }
}

#[cfg(test)]
#[path = "export_prompt_tests.rs"]
mod tests;
