//! The debrief at the end of a training scenario: how long it took, which steps of the reference
//! path were done (and when), which checks were skipped, which actions were taken beyond the
//! reference, and every risky action the safety rules refused, with what it would have done here.
//!
//! Inputs are the journals the training session wrote (the same incident journals as a live
//! session), the playbook step states the console saw, and the refusals it showed.

use std::path::Path;

use jiff::Timestamp;

use super::StepSeen;
use crate::remedy::action::safety::SafetyError;
use crate::remedy::journal::{self, Body, JournalReport, StepEnd, StepResult, StepType, StepView, WriteStatus};
use crate::remedy::run::StepState;
use crate::remedy::run::refusal::Refusal;
use crate::sources::sim::scenario::{ReferenceSpec, Scenario};

/// One reference step and whether (and when) the trainee did it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceResult {
    /// The reference step.
    pub text: String,
    /// Its kind.
    pub kind: StepType,
    /// Optional in the reference.
    pub optional: bool,
    /// Seconds after the start when it was first done, `None` if never (or only done, then undone).
    pub done_after: Option<i64>,
    /// Every time it was done, with what it was done on (each node's or volume's own time in a
    /// multi-node scenario), oldest first.
    pub times: Vec<(i64, String)>,
    /// Done, then undone (and not done again): counted as not done.
    pub undone: bool,
    /// Not done, but still pending in a playbook (closed before it ran): not a missed step.
    pub pending: bool,
    /// Not done, and the newest journal record of its step is a failure.
    pub failed: bool,
    /// For a step to be done on each volume of the scenario: `(volumes done, volumes)`; the step
    /// is followed only when both are equal.
    pub of: Option<(usize, usize)>,
}

impl ReferenceResult {
    /// Done (on every volume, for a step done on each).
    pub fn followed(&self) -> bool {
        self.done_after.is_some() && self.of.is_none_or(|(done, all)| done >= all)
    }
}

/// A risky action that the safety rules refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risky {
    /// Seconds after the start.
    pub after: i64,
    /// The refusal as shown.
    pub refusal: String,
    /// What it would have done in this scenario.
    pub consequence: String,
}

/// The debrief.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Debrief {
    /// Scenario name.
    pub scenario: String,
    /// Wall-clock seconds from the end of the briefing to the last goal.
    pub seconds: i64,
    /// Simulated seconds over the same span.
    pub sim_seconds: i64,
    /// Hints unlocked / total.
    pub hints: (usize, usize),
    /// The reference path, step by step.
    pub reference: Vec<ReferenceResult>,
    /// Actions sent that the reference does not contain (undos included).
    pub extra: Vec<String>,
    /// Checks of the reference (Backup, Check, Verify, Wait) not done: skipped (with the reason)
    /// or never done. Exactly the required check lines marked ✗ in the reference.
    pub skipped: Vec<String>,
    /// Optional playbook steps the trainee skipped that the reference does not require.
    pub skipped_optional: Vec<String>,
    /// Refused risky actions (a safety rule refused them).
    pub risky: Vec<Risky>,
    /// Steps the console's own live re-check refused because the state had changed since the
    /// finding: the re-check at work, not a risky action.
    pub stale: Vec<Risky>,
    /// Actions that failed when sent.
    pub failed: Vec<String>,
}

/// What the debrief is computed from.
pub struct Input<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// Real time the trainee started (briefing closed) and finished.
    pub started: Timestamp,
    /// Real time the last goal was met.
    pub finished: Timestamp,
    /// Simulated seconds elapsed.
    pub sim_seconds: i64,
    /// Hints unlocked by the end.
    pub hints_unlocked: usize,
    /// Every incident journal of the session: `(incident id, journal)`.
    pub journals: Vec<(String, JournalReport)>,
    /// Playbook steps as last seen by the console.
    pub seen: Vec<StepSeen>,
    /// Refusals and failures of attempted actions: `(real time, why)`.
    pub refused: Vec<(Timestamp, Refusal)>,
}

/// The `[[risk]]` kind (see `sources::sim::scenario::RISK_KINDS`) of a refusal: which safety
/// rule refused ([`SafetyError`]), or the live re-check found the state changed; `None` for
/// anything else (a failed read, a journal error, ...).
pub fn risk_kind(refusal: &Refusal) -> Option<&'static str> {
    match refusal.safety() {
        Some(SafetyError::ReadyNode { .. }) => Some("ready-node"),
        Some(SafetyError::WideBlocklist { .. } | SafetyError::OwnHost { .. }) => Some("wide-blocklist"),
        Some(SafetyError::LiveWatcher { .. }) => Some("live-watcher"),
        Some(SafetyError::HasWatchers(_)) => Some("has-watchers"),
        _ if refusal.state_changed() => Some("state-changed"),
        _ => None,
    }
}

fn default_consequence(kind: &str) -> &'static str {
    match kind {
        "ready-node" => "Fencing a Ready node cuts off every RBD client and pod on it, healthy ones included.",
        "wide-blocklist" => {
            "An entry without a nonce fences every client of that host for an hour, the console's own calls included when it is this host."
        }
        "live-watcher" => {
            "Force-deleting while a live node still has the image open lets two nodes write one filesystem."
        }
        "has-watchers" => {
            "Releasing the attachment while the image is still open lets a second node map it under a live writer."
        }
        _ => "Acting on a state that changed since the finding acts on facts that are no longer true.",
    }
}

/// True when the journaled step `s` (done, not an undo) is the write `r` names: same action
/// kind, and same namespace when `r` names one.
fn matches(r: &ReferenceSpec, s: &StepView) -> bool {
    let Some(kind) = &r.action else { return false };
    let a = &s.intent.action;
    s.intent.undo_of.is_none()
        && s.status == WriteStatus::Done
        && a.kind() == kind
        && r.namespace.as_deref().is_none_or(|ns| a.namespace() == Some(ns))
}

/// Reads every journal under `base` (the training session's incident directory).
pub fn journals(base: &Path) -> Vec<(String, JournalReport)> {
    let Ok(list) = crate::remedy::journal::incidents::list_incidents(base) else { return vec![] };
    list.iter().filter_map(|i| journal::read(&i.path).ok().map(|r| (i.id.clone(), r))).collect()
}

/// What an incident is about, for a debrief line: `<subject> (<pattern>)` from its id.
fn subject(incident: &str) -> String {
    let rest = crate::remedy::journal::incident_topic(incident).unwrap_or(incident);
    crate::remedy::playbook::PATTERNS
        .iter()
        .find_map(|p| rest.strip_prefix(p).and_then(|r| r.strip_prefix('-')).map(|s| format!("{s} ({p})")))
        .unwrap_or_else(|| rest.to_string())
}

/// Where reference step `r` stands among the scenario's reference steps of its kind:
/// `(its index among them, how many there are)`.
fn nth_of_kind(s: &Scenario, r: &ReferenceSpec) -> (usize, usize) {
    let same: Vec<&ReferenceSpec> = s.reference.iter().filter(|x| x.kind == r.kind).collect();
    (same.iter().position(|x| std::ptr::eq(*x, r)).unwrap_or(0), same.len())
}

/// The number a playbook step id ends with (`rwo-claim-shared/3` → 3).
fn step_number(id: &str) -> Option<u32> {
    id.rsplit_once('/').and_then(|(_, n)| n.parse().ok())
}

/// The steps of incident `inc` (journal `rep`) that reference step `r` (not an Act) names, each
/// by its newest journal record: of its kind, and when the console saw a step titled as `r`
/// (in any playbook), that step only (a Verify of another playbook is not this Verify). Without
/// such a title, the scenario's `nth` reference step of this kind (`nth`: `r`'s index among
/// them, their count) is each playbook's `nth` step of that kind: each of rwo-claim-shared's two
/// Manual steps listed both Manual ends before, and driver-not-registered's one Manual reference
/// step the read after the restart too.
fn matching_ends(
    r: &ReferenceSpec,
    nth: (usize, usize),
    inc: &str,
    rep: &JournalReport,
    seen: &[StepSeen],
) -> Vec<journal::StepEnded> {
    let ends = rep.step_ends();
    let named = |id: &str| seen.iter().any(|s| s.title == r.text && s.id == format!("{inc}/{id}"));
    let by_title = seen.iter().any(|s| s.title == r.text && s.kind == r.kind);
    let mut out: Vec<journal::StepEnded> =
        ends.into_iter().filter(|e| e.kind == r.kind && (!by_title || named(&e.step_id))).collect();
    if !by_title && nth.1 > 0 {
        let mut numbers: Vec<u32> = out.iter().filter_map(|e| step_number(&e.step_id)).collect();
        numbers.sort();
        numbers.dedup();
        // only where the journal has several numbered steps of this kind to tell apart (a
        // backup's record has no step number)
        if numbers.len() > 1 {
            let want = numbers.get(nth.0).copied();
            out.retain(|e| want.is_some() && step_number(&e.step_id) == want);
        }
    }
    out
}

/// `(time, what, undone)` of every journaled completion of reference step `r`.
fn evidence(
    r: &ReferenceSpec,
    nth: (usize, usize),
    journals: &[(String, JournalReport)],
    seen: &[StepSeen],
) -> Vec<(Timestamp, String, bool)> {
    let mut out = Vec::new();
    for (inc, rep) in journals {
        if r.kind == StepType::Act {
            let steps = rep.steps();
            for s in steps.iter().filter(|s| matches(r, s)) {
                let undone =
                    steps.iter().any(|u| u.intent.undo_of == Some(s.intent.step) && u.status == WriteStatus::Done);
                let what = s.intent.action.objects().into_iter().next().unwrap_or_else(|| subject(inc));
                out.push((s.record.time, what, undone));
            }
            continue;
        }
        // (done, undone) times of the actions undone since: a check made in between checked a
        // change that is gone, so it no longer counts
        let steps = rep.steps();
        let undone: Vec<(Timestamp, Timestamp)> = steps
            .iter()
            .filter(|u| u.status == WriteStatus::Done)
            .filter_map(|u| {
                let of = steps.iter().find(|s| Some(s.intent.step) == u.intent.undo_of)?;
                Some((of.record.time, u.record.time))
            })
            .collect();
        for e in matching_ends(r, nth, inc, rep, seen).into_iter().filter(|e| e.end == StepEnd::Done) {
            let stale = undone.iter().any(|(a, b)| *a <= e.time && e.time <= *b);
            out.push((e.time, subject(inc), stale));
        }
    }
    out.sort_by_key(|(t, _, _)| *t);
    out
}

/// Computes the debrief.
pub fn debrief(i: Input<'_>) -> Debrief {
    let after = |t: Timestamp| (t - i.started).get_seconds().max(0);
    let steps: Vec<StepView> = i.journals.iter().flat_map(|(_, r)| r.steps()).collect();
    let mut reference = Vec::new();
    for r in &i.scenario.reference {
        let nth = nth_of_kind(i.scenario, r);
        let ev = evidence(r, nth, &i.journals, &i.seen);
        let mut times: Vec<(i64, String)> =
            ev.iter().filter(|(_, _, undone)| !undone).map(|(t, w, _)| (after(*t), w.clone())).collect();
        if i.journals.is_empty() && r.kind != StepType::Act {
            // no journal at all (dry-run): the steps the console saw done
            times = i
                .seen
                .iter()
                .filter(|s| s.kind == r.kind && matches!(s.state, StepState::Done(_)))
                .map(|s| (after(s.at), String::new()))
                .collect();
        }
        times.sort();
        let undone = times.is_empty() && ev.iter().any(|(_, _, u)| *u);
        let done_after = times.first().map(|(t, _)| *t);
        // its step's newest journal record is a failure (a Verify whose time ran out)
        let failed = done_after.is_none()
            && r.kind != StepType::Act
            && i.journals
                .iter()
                .any(|(inc, rep)| matching_ends(r, nth, inc, rep, &i.seen).iter().any(|e| e.end == StepEnd::Failed));
        let pending = done_after.is_none()
            && matches!(r.kind, StepType::Verify | StepType::Wait)
            && i.seen.iter().any(|s| s.kind == r.kind && s.state == StepState::Pending);
        reference.push(ReferenceResult {
            text: r.text.clone(),
            kind: r.kind,
            optional: r.optional,
            done_after,
            failed,
            of: r.each_volume.then(|| volumes_done(&i.journals, r.kind, i.scenario)),
            times,
            undone,
            pending,
        });
    }
    // in the order they happened; what was not done keeps its reference place after them
    reference.sort_by_key(|r| r.done_after.unwrap_or(i64::MAX));
    let extra = steps
        .iter()
        .filter(|s| s.status == WriteStatus::Done && !i.scenario.reference.iter().any(|r| matches(r, s)))
        .filter(|s| !matches!(s.intent.action, crate::remedy::action::WriteAction::SnapCreate { .. }))
        .map(|s| {
            let undo = if s.intent.undo_of.is_some() { " (undo)" } else { "" };
            format!("{}{undo}", s.intent.action.summary())
        })
        .collect();
    let failed = steps
        .iter()
        .filter(|s| s.status != WriteStatus::Done)
        .map(|s| {
            let why = s.outcome.as_ref().map(journal::outcome_text).unwrap_or_else(|| "interrupted".into());
            format!("{} — {why}", s.intent.action.summary())
        })
        .collect();
    // skips as journaled (`step` records), else as the console saw them
    let mut skips: Vec<(StepType, String, String)> = i
        .journals
        .iter()
        .flat_map(|(_, rep)| rep.records.iter())
        .filter_map(|(_, rec)| match &rec.body {
            Body::Step(st) if st.result == StepResult::Skipped => {
                Some((st.kind, crate::remedy::journal::step::step_label(&st.step_id), st.detail.clone()))
            }
            _ => None,
        })
        .collect();
    if skips.is_empty() {
        skips = i
            .seen
            .iter()
            .filter_map(|s| match &s.state {
                StepState::Skipped(why) => Some((s.kind, s.title.clone(), why.clone())),
                _ => None,
            })
            .collect();
    }
    let mut skipped = Vec::new();
    let mut missing_kinds: Vec<StepType> = Vec::new();
    for r in reference.iter().filter(|r| {
        r.done_after.is_none()
            && !r.pending
            && !r.optional
            && matches!(r.kind, StepType::Backup | StepType::Check | StepType::Verify | StepType::Wait)
    }) {
        missing_kinds.push(r.kind);
        match skips.iter().find(|(k, _, _)| *k == r.kind) {
            Some((_, what, why)) => skipped.push(format!("{} ({}): {what} skipped — {why}", r.text, r.kind)),
            None => skipped.push(format!("{} ({}): never done", r.text, r.kind)),
        }
    }
    // skipped steps the reference does not require (or that were done elsewhere)
    let skipped_optional = skips
        .iter()
        .filter(|(k, _, _)| !missing_kinds.contains(k))
        .map(|(k, what, why)| format!("{what} ({k}): skipped — {why}"))
        .collect();
    let (risky, stale) = refusals(&i, after);
    Debrief {
        scenario: i.scenario.name.clone(),
        seconds: (i.finished - i.started).get_seconds().max(0),
        sim_seconds: i.sim_seconds,
        hints: (i.hints_unlocked, i.scenario.hints.len()),
        reference,
        extra,
        skipped,
        skipped_optional,
        risky,
        stale,
        failed,
    }
}

/// `(volumes of the scenario with a journaled `kind` step done, volumes of the scenario)`.
fn volumes_done(journals: &[(String, JournalReport)], kind: StepType, s: &Scenario) -> (usize, usize) {
    let done: std::collections::BTreeSet<String> = journals
        .iter()
        .filter(|(_, rep)| rep.step_ends().iter().any(|e| e.kind == kind && e.end == StepEnd::Done))
        .filter_map(|(_, rep)| rep.volume())
        .filter(|pv| s.volumes.iter().any(|v| v.pv == *pv))
        .collect();
    (done.len(), s.volumes.len())
}

/// The refusals of attempted actions: `(risky, stale)` — those a safety rule made, with what the
/// action would have done here, and those of the console's own re-check (the state changed).
fn refusals(i: &Input<'_>, after: impl Fn(Timestamp) -> i64) -> (Vec<Risky>, Vec<Risky>) {
    let (mut risky, mut stale) = (vec![], vec![]);
    for (t, refusal) in &i.refused {
        let Some(kind) = risk_kind(refusal) else { continue };
        let consequence = i
            .scenario
            .risks
            .iter()
            .find(|r| r.kind == kind)
            .map(|r| r.text.clone())
            .unwrap_or_else(|| default_consequence(kind).to_string());
        let r = Risky { after: after(*t), refusal: refusal.to_string(), consequence };
        if kind == "state-changed" { stale.push(r) } else { risky.push(r) }
    }
    (risky, stale)
}

fn mmss(s: i64) -> String {
    format!("{}:{:02}", s / 60, s % 60)
}

impl Debrief {
    /// `(reference steps followed, reference steps required)`: the optional ones count only
    /// when done.
    pub fn followed(&self) -> (usize, usize) {
        let done = self.reference.iter().filter(|r| r.followed()).count();
        let required = self.reference.iter().filter(|r| !r.optional || r.done_after.is_some()).count();
        (done, required)
    }

    /// True when the journal shows something the trainee did: a reference step done (undone
    /// ones included) or an action beyond the reference.
    pub fn acted(&self) -> bool {
        self.reference.iter().any(|r| r.done_after.is_some() || r.undone) || !self.extra.is_empty()
    }

    /// The verdict the debrief opens with, from the journal's outcomes (never from the goals
    /// alone: goals that hold by themselves are not the trainee's work): `Every goal is met.`
    /// only when every required reference step was followed.
    pub fn headline(&self) -> String {
        let (done, required) = self.followed();
        if !self.acted() {
            return "The goals hold, but no step of yours met them: the journal has no step done. \
                    The incident settled by itself before its playbook ran."
                .into();
        }
        if done >= required {
            return "Every goal is met.".into();
        }
        format!(
            "The goals hold; you followed {done} of the {required} reference steps: what was not done is marked below."
        )
    }

    /// The debrief as lines of text (the console's overlay and the terminal after exit), its
    /// [`Debrief::headline`] first.
    pub fn lines(&self) -> Vec<String> {
        let (done, required) = self.followed();
        // an optional step left pending was not needed: it is not counted, nor marked as not run
        let left = self.reference.iter().filter(|r| r.done_after.is_none() && r.pending && !r.optional).count();
        let left = match left {
            0 => String::new(),
            n => format!(" ({n} left pending: the goals held before {} ran)", if n == 1 { "it" } else { "they" }),
        };
        let verb = if self.acted() { "solved" } else { "settled by itself" };
        let mut out = vec![
            self.headline(),
            format!(
                "Scenario {} {verb} in {} (simulated {}); hints unlocked {}/{}.",
                self.scenario,
                mmss(self.seconds),
                mmss(self.sim_seconds),
                self.hints.0,
                self.hints.1
            ),
            String::new(),
            format!("Reference path: {done}/{required} steps followed{left}"),
        ];
        for r in &self.reference {
            let (mark, when) = match (r.done_after, r.optional) {
                (Some(_), _) if !r.followed() => ("◐", "PARTIAL".to_string()),
                (Some(s), _) => ("✓", format!("at {}", mmss(s))),
                (None, _) if r.undone => ("↶", "UNDONE".to_string()),
                (None, _) if r.failed => ("✗", "FAILED".to_string()),
                (None, false) if r.pending => ("…", "NOT RUN".to_string()),
                (None, true) => ("–", "not needed".to_string()),
                (None, false) => ("✗", "NOT DONE".to_string()),
            };
            let of = r.of.map(|(d, n)| format!(" ({d} of {n} volumes)")).unwrap_or_default();
            out.push(format!("  {mark} {:<7} {when:<9} {}{of}", r.kind, r.text));
            if r.done_after.is_none() && r.pending && !r.optional {
                out.push(
                    "            left pending in its playbook (stopped or closed before its condition held): \
                     the goals held without it, so it was never checked"
                        .into(),
                );
            }
            if r.times.len() > 1 {
                // each node's / volume's own time
                for (t, what) in &r.times {
                    out.push(format!("            at {:<6} {what}", mmss(*t)));
                }
            }
        }
        out.push(String::new());
        if self.skipped.is_empty() {
            out.push("Skipped checks: none".into());
        } else {
            out.push(format!("Skipped checks ({}):", self.skipped.len()));
            out.extend(self.skipped.iter().map(|s| format!("  - {s}")));
        }
        if !self.skipped_optional.is_empty() {
            out.push(format!("Optional steps skipped ({}):", self.skipped_optional.len()));
            out.extend(self.skipped_optional.iter().map(|s| format!("  - {s}")));
        }
        if self.risky.is_empty() {
            out.push("Risky actions attempted: none".into());
        } else {
            out.push(format!("Risky actions attempted ({}), refused by the safety rules:", self.risky.len()));
            for r in &self.risky {
                out.push(format!("  ! at {}: {}", mmss(r.after), r.refusal));
                out.push(format!("    would have: {}", r.consequence));
            }
        }
        if !self.stale.is_empty() {
            out.push(format!(
                "Refused by the live re-check, the state having changed since the finding ({}): nothing was sent; reopen the playbook from the fresh finding",
                self.stale.len()
            ));
            out.extend(self.stale.iter().map(|r| format!("  · at {}: {}", mmss(r.after), r.refusal)));
        }
        if !self.extra.is_empty() {
            out.push(format!("Actions beyond the reference ({}):", self.extra.len()));
            out.extend(self.extra.iter().map(|s| format!("  + {s}")));
        }
        if !self.failed.is_empty() {
            out.push(format!("Actions that failed ({}):", self.failed.len()));
            out.extend(self.failed.iter().map(|s| format!("  ✗ {s}")));
        }
        out
    }
}

#[cfg(test)]
#[path = "debrief_tests.rs"]
mod tests;
