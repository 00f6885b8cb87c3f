//! Why a remediation call did nothing (or failed), as a typed value: the remediation worker sends
//! it to the console, which shows its [`Display`](std::fmt::Display) text and keeps the value
//! itself for whoever needs to know *what* was refused (the training debrief classifies risky
//! attempts from the variants, never from the wording).

use std::sync::Arc;

use crate::remedy::action::precheck::{Drift, PrecheckError};
use crate::remedy::action::safety::SafetyError;
use crate::remedy::run::RunError;

/// Why a call to the remediation worker did nothing or failed. Text only at display time.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Refusal {
    /// A runner call failed or was refused (shared: a [`RunError`] can hold an I/O error, which
    /// cannot be cloned).
    #[error(transparent)]
    Run(Arc<RunError>),
    /// A request arrived while no playbook was open.
    #[error("no playbook is open")]
    NoPlaybook,
    /// A Confirm did not match the pending confirmation (none, or another step's).
    #[error("the confirmation does not match the prepared step: prepare it again")]
    ConfirmMismatch,
    /// A take-over of a Lease that has not expired.
    #[error("the Lease has not expired: it cannot be taken over")]
    LeaseNotExpired,
    /// Dry-run: a preview of a step that is not an Act step.
    #[error("not an Act step")]
    NotAct,
    /// Dry-run: a Verify of a step that is not a Verify step.
    #[error("not a Verify step")]
    NotVerify,
    /// The incident's journal holds no step that can be undone.
    #[error("nothing to undo in {incident} ({irreversible} step(s) cannot be undone)")]
    NothingToUndo {
        /// Incident id.
        incident: String,
        /// Journaled steps that cannot be undone.
        irreversible: usize,
    },
    /// Dry-run: a request that would send something.
    #[error("dry-run: nothing is sent (no executor)")]
    DryRun,
    /// Dry-run Check: the live state differs from the finding's.
    #[error("state changed: {}", .0.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("; "))]
    DryRunChanged(Vec<Drift>),
}

impl From<RunError> for Refusal {
    fn from(e: RunError) -> Self {
        Refusal::Run(Arc::new(e))
    }
}

impl From<SafetyError> for Refusal {
    fn from(e: SafetyError) -> Self {
        RunError::Safety(e).into()
    }
}

impl From<PrecheckError> for Refusal {
    fn from(e: PrecheckError) -> Self {
        RunError::Precheck(e).into()
    }
}

impl Refusal {
    /// The runner's error, when this is one.
    pub fn run_error(&self) -> Option<&RunError> {
        match self {
            Refusal::Run(e) => Some(e),
            _ => None,
        }
    }

    /// The safety rule that refused, when one did.
    pub fn safety(&self) -> Option<&SafetyError> {
        match self.run_error() {
            Some(RunError::Safety(s)) => Some(s),
            _ => None,
        }
    }

    /// The live state differs from the one the finding (or the previous step) was made on.
    pub fn state_changed(&self) -> bool {
        matches!(self, Refusal::DryRunChanged(_))
            || matches!(self.run_error(), Some(RunError::Precheck(PrecheckError::Changed(_))))
    }
}
