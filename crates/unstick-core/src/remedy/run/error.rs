//! Why a runner call did nothing ([`RunError`]): a refusal of the rules (backup first, safety, a
//! live state that changed, a wrong typed name), or an error of what it reads and writes (the
//! journal, the Lease, the backup).

use crate::remedy::action::precheck::PrecheckError;
use crate::remedy::action::safety::SafetyError;
use crate::remedy::journal::JournalError;
use crate::remedy::journal::step::StepType;
use crate::remedy::run::backup::BackupError;
use crate::remedy::run::lease::LeaseError;

/// Why a runner call did nothing.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// An Act step before the backup succeeded and was verified.
    #[error("the backup has not succeeded and been verified yet: no action is possible before it")]
    BackupFirst,
    /// No executor: started with --read-only (or --dry-run).
    #[error("no write is possible: {0}")]
    NoWrites(&'static str),
    /// The call does not match the current step's kind.
    #[error("the current step is {current}, not {wanted}")]
    WrongStep {
        /// Current step kind.
        current: StepType,
        /// What the call expected.
        wanted: StepType,
    },
    /// A confirmation prepared for another step than the current one.
    #[error("the current step is {current}, not the prepared step")]
    NotPrepared {
        /// Current step id.
        current: String,
    },
    /// The playbook is finished.
    #[error("the playbook is finished")]
    Finished,
    /// The Act step's change is already in effect live (another playbook made it, e.g. the
    /// DaemonSet patch shared by several nodes): the step is marked done, nothing was sent.
    #[error("{0}")]
    AlreadyInEffect(String),
    /// Interrupted steps in the journal must be acknowledged first.
    #[error("{0} interrupted step(s) in the journal — state unknown: re-check and acknowledge them first")]
    Interrupted(usize),
    /// Irreversible step: the typed name did not match.
    #[error("this step is irreversible: type `{expected}` to confirm")]
    TypedName {
        /// The name to type.
        expected: String,
    },
    /// The volume's Lease is not held: lost or refused (the Lease's error), or never acquired (`None`).
    #[error("the volume's Lease is not held: {}", .0.as_ref().map_or("acquire it first".into(), ToString::to_string))]
    Lease(Option<LeaseError>),
    /// Only optional steps may be skipped.
    #[error("step {0} is not optional")]
    NotOptional(String),
    /// The live re-check failed or found changes.
    #[error(transparent)]
    Precheck(#[from] PrecheckError),
    /// A safety rule refused.
    #[error(transparent)]
    Safety(#[from] SafetyError),
    /// The backup failed.
    #[error(transparent)]
    Backup(#[from] BackupError),
    /// The journal could not be written: nothing was sent.
    #[error(transparent)]
    Journal(#[from] JournalError),
}
