//! The debrief and the export say what the journal says: every step the debrief ticks has a
//! journal record of its kind whose newest outcome is a success, every step it marks failed one
//! that failed, every failed write is listed; the export's steps and actions end as the journal's
//! newest records of the same step ids do, and it has one backup per journaled backup.

use std::path::Path;

use unstick_core::remedy::journal::{JournalReport, StepEnd, StepType, WriteStatus};
use unstick_core::train::debrief::Debrief;

/// Every incident journal under `base`.
pub fn journals(base: &Path) -> Vec<(String, JournalReport)> {
    unstick_core::train::debrief::journals(base)
}

/// Panics (naming `name`) where the debrief `db` says something the journals do not.
pub fn debrief_agrees(name: &str, db: &Debrief, journals: &[(String, JournalReport)]) {
    let ends: Vec<_> = journals.iter().flat_map(|(_, r)| r.step_ends()).collect();
    let writes: Vec<_> = journals.iter().flat_map(|(_, r)| r.steps()).collect();
    for r in &db.reference {
        if r.followed() && r.kind != StepType::Act {
            assert!(
                ends.iter().any(|e| e.kind == r.kind && e.end == StepEnd::Done),
                "{name}: the debrief ticks {:?} but no {} step's newest journal record is done: {ends:?}",
                r.text,
                r.kind
            );
        }
        if r.followed() && r.kind == StepType::Act {
            assert!(
                writes.iter().any(|w| w.status == WriteStatus::Done),
                "{name}: the debrief ticks {:?} with no write done",
                r.text
            );
        }
        if r.failed {
            assert!(
                ends.iter().any(|e| e.kind == r.kind && e.end == StepEnd::Failed),
                "{name}: the debrief says {:?} failed; the journal has no such failure: {ends:?}",
                r.text
            );
        }
    }
    let failed = writes.iter().filter(|w| w.status != WriteStatus::Done).count();
    assert_eq!(db.failed.len(), failed, "{name}: the debrief's failed writes are the journal's: {:?}", db.failed);
}

/// Panics (naming `name`) where the export `json` says something the journals do not.
pub fn export_agrees(name: &str, json: &serde_json::Value, journals: &[(String, JournalReport)]) {
    let mut ends: Vec<_> = journals.iter().flat_map(|(_, r)| r.step_ends()).collect();
    ends.sort_by_key(|e| e.time);
    let steps = json["steps"].as_array().cloned().unwrap_or_default();
    let actions = json["actions"].as_array().cloned().unwrap_or_default();
    let newest = |list: &[serde_json::Value], id: &str| list.iter().rev().find(|s| s["step_id"] == id).cloned();
    for e in ends.iter().filter(|e| matches!(e.kind, StepType::Check | StepType::Verify | StepType::Wait)) {
        // the newest journal record of this id (several incidents may run the same playbook)
        let last = ends.iter().rev().find(|x| x.step_id == e.step_id).map(|x| x.end);
        let want = match last {
            Some(StepEnd::Done) => "done",
            Some(StepEnd::Failed) => "failed",
            Some(StepEnd::Skipped) => "skipped",
            _ => continue,
        };
        let got = newest(&steps, &e.step_id);
        assert_eq!(
            got.as_ref().and_then(|s| s["result"].as_str()),
            Some(want),
            "{name}: the export's step {} ends as the journal's: {got:?}",
            e.step_id
        );
    }
    for (_, rep) in journals {
        for w in rep.steps().iter().filter(|w| w.status != WriteStatus::Interrupted) {
            if matches!(w.intent.action, unstick_core::remedy::action::WriteAction::SnapCreate { .. })
                || w.intent.undo_of.is_some()
            {
                continue;
            }
            assert!(
                actions
                    .iter()
                    .any(|a| a["step_id"] == w.intent.step_id.as_str() && a["ok"] == (w.status == WriteStatus::Done)),
                "{name}: the journal's write {} ({:?}) is in the export as it ended: {actions:?}",
                w.intent.step_id,
                w.status
            );
        }
    }
    let backups: usize = journals.iter().map(|(_, r)| r.backups().len()).sum();
    assert_eq!(json["backups"].as_array().map(Vec::len), Some(backups), "{name}: one export backup per journaled one");
}
