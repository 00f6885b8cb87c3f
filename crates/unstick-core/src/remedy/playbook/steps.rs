//! A playbook as data: its [`Step`]s of each [`StepKind`], the pattern ids that have one, and
//! typed access to what each kind of step holds (the runner never matches steps by name).

use std::time::Duration;

use super::condition::Condition;
use crate::remedy::action::WriteAction;
use crate::remedy::action::precheck::Scope;
use crate::remedy::journal::step::StepType;
use crate::remedy::run::backup::BackupPlan;

/// Pattern ids with a playbook: `DESIGN.md`'s eight in its order, then the stuck-pod causes that
/// have one (issue 24).
pub const PATTERNS: [&str; 10] = [
    "stale-lock",
    "multi-attach-node-lost",
    "dead-node-watcher",
    "live-node-stale-map",
    "unmap-busy",
    "same-node-restage",
    "va-finalizer-stuck",
    "blocklist-leftover",
    "csi-driver-not-registered",
    "rwo-claim-shared",
];

/// The pattern id for a pattern id or a diagnosis playbook id (`remove-stale-lock` → `stale-lock`).
pub fn pattern_of(id: &str) -> Option<&'static str> {
    let p = match id {
        "remove-stale-lock" => "stale-lock",
        "release-lost-node-attachment" => "multi-attach-node-lost",
        "blocklist-dead-watcher" => "dead-node-watcher",
        "unmap-on-live-node" => "live-node-stale-map",
        "release-busy-device" => "unmap-busy",
        "wait-for-restage" => "same-node-restage",
        "remove-va-finalizer" => "va-finalizer-stuck",
        "remove-blocklist-leftover" => "blocklist-leftover",
        "restart-node-plugin" => "csi-driver-not-registered",
        "rwo-claim-guidance" => "rwo-claim-shared",
        other => other,
    };
    PATTERNS.iter().find(|x| **x == p).copied()
}

/// What a step does. [`StepKind::name`] gives its kind as shown and matched (`Backup`, `Act`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepKind {
    /// Save manifests, snapshot the image (and optionally export it); verified.
    Backup(BackupPlan),
    /// Re-read the facts live and compare with the finding.
    Check,
    /// A write, confirmed by the operator.
    Act(WriteAction),
    /// Node-side commands for the operator to run, ready to copy.
    Manual {
        /// Where to run them (node name).
        on: Option<String>,
        /// The commands, one per line.
        commands: Vec<String>,
    },
    /// Poll a condition until it holds or the timeout passes.
    Wait {
        /// The condition.
        condition: Condition,
        /// Give up after this long.
        timeout: Duration,
        /// Poll period.
        poll: Duration,
    },
    /// Check a condition once.
    Verify(Vec<Condition>),
}

impl StepKind {
    /// The kind without its content.
    pub fn step_type(&self) -> StepType {
        match self {
            StepKind::Backup(_) => StepType::Backup,
            StepKind::Check => StepType::Check,
            StepKind::Act(_) => StepType::Act,
            StepKind::Manual { .. } => StepType::Manual,
            StepKind::Wait { .. } => StepType::Wait,
            StepKind::Verify(_) => StepType::Verify,
        }
    }

    /// `Backup`, `Check`, `Act`, `Manual`, `Wait` or `Verify` (the [`StepType`]'s name).
    pub fn name(&self) -> &'static str {
        self.step_type().as_str()
    }
}

/// One step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// `<pattern>/<n>` (1-based), journaled with every record of the step.
    pub id: String,
    /// One line for the step list.
    pub title: String,
    /// Why this step, for the detail pane.
    pub explain: String,
    /// What it does.
    pub kind: StepKind,
    /// May be skipped by the operator (with a journaled reason).
    pub optional: bool,
}

/// An ordered list of steps for one incident.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playbook {
    /// Pattern id.
    pub pattern: &'static str,
    /// Title.
    pub title: String,
    /// The facts every step depends on (re-checked before each Act).
    pub scope: Scope,
    /// The PV (names the Lease), if the playbook is about a volume.
    pub volume: Option<String>,
    /// Steps; `steps[0]` is the Backup.
    pub steps: Vec<Step>,
}

/// Why no playbook could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaybookError {
    /// Not a known pattern or playbook id.
    #[error("no playbook for {0:?}")]
    Unknown(String),
    /// The target lacks what the playbook needs.
    #[error("{pattern}: nothing to do: {why}")]
    NothingToDo {
        /// Pattern.
        pattern: &'static str,
        /// What is missing.
        why: String,
    },
}

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
