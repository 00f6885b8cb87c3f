//! Typed access to a [`StepKind`]'s data: the runner takes what the current step holds through
//! these instead of matching step kinds by name.

use std::time::Duration;

use super::action::WriteAction;
use super::backup::BackupPlan;
use super::condition::Condition;
use super::playbook::StepKind;

impl StepKind {
    /// A Backup step's plan.
    pub fn backup(&self) -> Option<&BackupPlan> {
        match self {
            StepKind::Backup(p) => Some(p),
            _ => None,
        }
    }

    /// A Check step: `Some(())`.
    pub fn check(&self) -> Option<()> {
        matches!(self, StepKind::Check).then_some(())
    }

    /// An Act step's action.
    pub fn act(&self) -> Option<&WriteAction> {
        match self {
            StepKind::Act(a) => Some(a),
            _ => None,
        }
    }

    /// A Manual step: `Some(())`.
    pub fn manual(&self) -> Option<()> {
        matches!(self, StepKind::Manual { .. }).then_some(())
    }

    /// A Wait step's condition and timeout.
    pub fn wait(&self) -> Option<(&Condition, Duration)> {
        match self {
            StepKind::Wait { condition, timeout, .. } => Some((condition, *timeout)),
            _ => None,
        }
    }

    /// A Verify step's conditions.
    pub fn verify(&self) -> Option<&[Condition]> {
        match self {
            StepKind::Verify(c) => Some(c),
            _ => None,
        }
    }
}
