//! A playbook step's kind without its content ([`StepType`]): named in the journal, in a training
//! scenario's reference path and on screen. It sits in the model so that the scenario reader
//! (below the remediation layer) can parse it.

use serde::{Deserialize, Serialize};

/// What kind of step a playbook step is, without its content (the playbook's `StepKind` carries it):
/// what a `step` journal record, the debrief's reference steps and the console's step list name.
///
/// On disk (journal `kind`, a scenario's `[[reference]] kind`) and on screen it is the kind's name
/// as written here: `Backup`, `Check`, `Act`, `Manual`, `Wait`, `Verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StepType {
    /// Save manifests and snapshot the image, verified.
    Backup,
    /// Re-read the facts live and compare with the finding.
    Check,
    /// A write, confirmed by the operator.
    Act,
    /// Node-side commands for the operator to run.
    Manual,
    /// Poll a condition until it holds or the timeout passes.
    Wait,
    /// Check conditions once.
    Verify,
}

impl StepType {
    /// `Backup`, `Check`, `Act`, `Manual`, `Wait` or `Verify`.
    pub fn as_str(self) -> &'static str {
        match self {
            StepType::Backup => "Backup",
            StepType::Check => "Check",
            StepType::Act => "Act",
            StepType::Manual => "Manual",
            StepType::Wait => "Wait",
            StepType::Verify => "Verify",
        }
    }
}

impl std::fmt::Display for StepType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}
