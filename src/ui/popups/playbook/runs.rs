//! The playbooks of runs in progress in this console, by incident (pattern + subject): reopening a
//! playbook shows the steps its run started with, so the journal's step ids still name the same
//! steps (a playbook rebuilt from the state after some steps would drop the steps already done,
//! renumber the rest, and lose track of what was done and undone). A finished run is forgotten
//! when its playbook is closed; the next opening builds a fresh one.

use std::collections::BTreeMap;

use unstick_core::remedy::playbook::Playbook;

/// Playbooks of unfinished runs, keyed by `<pattern> <subject>`.
#[derive(Debug, Clone, Default)]
pub struct Runs(BTreeMap<String, Playbook>);

fn key(pattern: &str, subject: &str) -> String {
    format!("{pattern} {subject}")
}

impl Runs {
    /// The playbook of the run in progress for `built`'s pattern on `subject`, else `built`
    /// (remembered as the run's playbook).
    pub fn reuse(&mut self, built: Playbook, subject: &str) -> Playbook {
        self.0.entry(key(built.pattern, subject)).or_insert(built).clone()
    }

    /// The run of `pattern` on `subject` finished: its next opening starts afresh.
    pub fn finished(&mut self, pattern: &str, subject: &str) {
        self.0.remove(&key(pattern, subject));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pb(title: &str) -> Playbook {
        Playbook { pattern: "stale-lock", title: title.into(), scope: Default::default(), volume: None, steps: vec![] }
    }

    #[test]
    fn a_run_keeps_its_playbook_until_finished() {
        let mut r = Runs::default();
        assert_eq!(r.reuse(pb("first"), "pv1").title, "first");
        assert_eq!(r.reuse(pb("rebuilt"), "pv1").title, "first", "reopened: the run's own steps");
        assert_eq!(r.reuse(pb("other"), "pv2").title, "other", "another volume is another run");
        r.finished("stale-lock", "pv1");
        assert_eq!(r.reuse(pb("fresh"), "pv1").title, "fresh");
    }
}
