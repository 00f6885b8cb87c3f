//! The console's glue to its session log ([`SessionRecorder`]): attaching and ending it, recording
//! events and finding changes, noting what is on screen after each message, and the note editor
//! (`popups/note.rs`) whose text goes into the log.

use super::{App, Pane, Subject};
use crate::ui::popups::Kind;
use unstick_core::console_state::session_rec::{FINISH_TIMEOUT, SessionRecorder};
use unstick_core::diagnose::{Finding, ObjectRef};
use unstick_core::session::SessionEvent;

/// The label of what the Ceph and Events panes follow (`Pod ns/name`, `PV name`, `Node name`).
fn subject_label(s: &Subject) -> Option<String> {
    match s {
        Subject::None => None,
        Subject::Node(n) => Some(ObjectRef::node(n).label()),
        Subject::Pod(p) => Some(ObjectRef::pod(p).label()),
        Subject::Volume(pv) => Some(ObjectRef::pv(pv).label()),
    }
}

impl App {
    /// Logs this console session with `rec`: from now on findings appearing and clearing, panes
    /// viewed, confirmations, the remediation worker's actions, backups and undos, and notes are
    /// recorded. Call once, before the event loop.
    pub fn attach_session(&mut self, rec: SessionRecorder) {
        self.session = Some(rec);
    }

    /// Ends the session log (the `end` record), waiting at most [`FINISH_TIMEOUT`]. Returns the
    /// first write error of the session, if any, for a message after the terminal is restored.
    pub fn end_session(&mut self) -> Option<String> {
        self.session.take().and_then(|rec| rec.finish(FINISH_TIMEOUT))
    }

    /// Records `event` in the session log, if there is one.
    pub(crate) fn record_event(&mut self, event: SessionEvent) {
        if let Some(rec) = self.session.as_mut() {
            rec.record(event);
        }
    }

    /// Records what changed between the findings `before` and the current ones.
    pub(crate) fn record_findings(&mut self, before: &[Finding]) {
        if let Some(rec) = self.session.as_mut() {
            for e in unstick_core::session::diff_findings(before, &self.data.findings) {
                rec.record(e);
            }
            // the service is back: a pod of a cleared finding's volume is Running (now or on a
            // later refresh)
            // (once per finding: one that clears again while awaiting is not added twice)
            let now = &self.data.findings;
            for b in before.iter().filter(|b| b.volume.is_some() && !now.iter().any(|a| a.id == b.id)) {
                if !self.awaiting_restore.iter().any(|w| w.id == b.id) {
                    self.awaiting_restore.push(b.clone());
                }
            }
            let waiting: Vec<&Finding> = self.awaiting_restore.iter().collect();
            let events =
                unstick_core::console_state::session_rec::restored(&waiting, &self.data.snap, &self.data.lineage);
            for e in events {
                if let SessionEvent::Restored { finding, .. } = &e {
                    self.awaiting_restore.retain(|f| f.id != *finding);
                }
                rec.record(e);
            }
        }
    }

    /// What is on screen: `(pane, object)`. The Playbook view and the finding detail are panes of
    /// their own (object: the finding id); the Findings list names the selected finding; the
    /// other panes name the subject the Ceph and Events panes follow.
    pub fn current_view(&self) -> (&'static str, Option<String>) {
        if let Some(pb) = self.popups.playbook() {
            return ("playbook", Some(pb.finding().to_string()));
        }
        if let Some((f, _)) = self.open_finding() {
            return ("finding", Some(f.id.clone()));
        }
        let pane = match self.focus {
            Pane::Findings => "findings",
            Pane::Nodes => "nodes",
            Pane::Pods => "pods",
            Pane::Volumes => "volumes",
            Pane::Ceph => "ceph",
            Pane::Events => "events",
        };
        let object = match self.focus {
            Pane::Findings => self.selected_finding().map(|f| f.id.clone()),
            _ => subject_label(&self.subject),
        };
        (pane, object)
    }

    /// After each message: note the view (recorded on the clock tick, see
    /// [`SessionRecorder::viewing`]) and collect write errors; the first one raises the status
    /// line alert.
    pub(crate) fn after_update(&mut self, tick: bool) {
        if self.session.is_none() {
            return;
        }
        let (pane, object) = self.current_view();
        let Some(rec) = self.session.as_mut() else { return };
        rec.viewing(pane, object);
        if tick {
            rec.flush_view();
        }
        if rec.poll() {
            self.log_alert = true;
        }
    }

    /// Writes the note to the session log and closes the editor; when there is no working log the
    /// editor stays open with the text and says why.
    pub(super) fn save_note(&mut self, text: String) {
        if text.trim().is_empty() {
            self.popups.close(Kind::Note);
            self.remedy.notice = Some("empty note: nothing saved".into());
            return;
        }
        let why = match &self.session {
            None => Some("this console has no session log".to_string()),
            Some(rec) => rec.error().map(|e| format!("the session log is failing ({e})")),
        };
        if let Some(why) = why {
            if let Some(note) = self.popups.note_mut() {
                note.refuse_save(&why);
            }
            return;
        }
        self.popups.close(Kind::Note);
        if let Some(rec) = self.session.as_mut() {
            let at = rec.now();
            rec.record_at(at, SessionEvent::Note { text });
            self.remedy.notice = Some(format!("note saved {} UTC to session {}", at.strftime("%H:%M:%S"), rec.id()));
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
