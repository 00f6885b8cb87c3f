//! The messages between the console and the remediation service ([`super`]): commands
//! ([`RemedyRequest`]), messages ([`RemedyMsg`]: answers, and what the service's own timers
//! found) and the owned views the console shows ([`ConfirmView`], [`RunnerView`], [`LeaseView`],
//! [`OverrideNeed`]). Plain data: no UI type appears here.

use std::path::PathBuf;

use crate::remedy::action::WriteAction;
use crate::remedy::action::precheck::LiveState;
use crate::remedy::action::safety::Overrides;
use crate::remedy::journal::{BackupRecord, StepView};
use crate::remedy::playbook::Playbook;
use crate::remedy::playbook::version::{ServerVersion, VersionError};
use crate::remedy::run::backup::ExportProgress;
use crate::remedy::run::refusal::Refusal;
use crate::remedy::run::{Confirmation, StepState, WaitStatus};
use crate::session::inverse_text;

/// What the confirm popup shows: the public part of a [`Confirmation`], as an owned value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmView {
    /// Playbook step id (`stale-lock/3`) or `undo`.
    pub step_id: String,
    /// The action (for its blast radius and confirmation name).
    pub action: WriteAction,
    /// One-line summary of the action.
    pub summary: String,
    /// Exact argv or API verb + resource + patch.
    pub command: String,
    /// Objects touched.
    pub objects: Vec<String>,
    /// The live precondition just re-checked.
    pub precheck: Vec<String>,
    /// Reversible?
    pub reversible: bool,
    /// The inverse, or why there is none.
    pub inverse: String,
    /// Warnings.
    pub warnings: Vec<String>,
    /// For irreversible steps: the name to type.
    pub typed_name: Option<String>,
    /// Set when this undoes journaled step N.
    pub undo_of: Option<u32>,
    /// A dry-run preview: confirming sends nothing.
    pub dry_run: bool,
    /// For a DaemonSet template patch: its `updateStrategy` as the live re-check read it
    /// ([`crate::remedy::action::precheck::update_strategy`]); what its pods do after the patch.
    pub update_strategy: Option<String>,
}

impl ConfirmView {
    /// The view of a prepared confirmation.
    pub fn of(c: &Confirmation, dry_run: bool) -> Self {
        ConfirmView {
            step_id: c.step_id.clone(),
            action: c.action.clone(),
            summary: c.action.summary(),
            command: c.command.clone(),
            objects: c.objects.clone(),
            precheck: c.precheck.clone(),
            reversible: c.reversible,
            inverse: inverse_text(&c.inverse),
            warnings: c.warnings.clone(),
            typed_name: c.typed_name.clone(),
            undo_of: c.undo_of,
            dry_run,
            update_strategy: c.update_strategy(),
        }
    }
}

/// Who holds the volume's Lease, as far as this console knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseView {
    /// Not needed (no volume) or not tried (dry-run).
    None,
    /// We hold it.
    Held(String),
    /// Someone else does (text names the holder); acting is refused.
    Other(String),
    /// Someone else's Lease expired: `t` takes it over.
    Expired(String),
}

/// The runner's state, copied for the view.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerView {
    /// Incident id.
    pub incident: String,
    /// The journal file.
    pub journal: PathBuf,
    /// Index of the current step.
    pub cursor: usize,
    /// State of every step.
    pub states: Vec<StepState>,
    /// The verified backup, once made.
    pub backup: Option<BackupRecord>,
    /// Interrupted steps of the journal, not yet acknowledged.
    pub interrupted: Vec<StepView>,
    /// The Lease.
    pub lease: LeaseView,
    /// The newest undoable step: `(step, summary of the inverse)`.
    pub next_undo: Option<(u32, String)>,
}

/// An override the safety rules would accept when typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverrideNeed {
    /// Fence this Ready node anyway.
    ReadyNode(String),
    /// Blocklist this whole-host entry anyway.
    WideBlocklist(String),
    /// Unfence this node without proof that it rebooted since the fence.
    NotRebooted(String),
    /// Taint out-of-service on 1.24–1.25: the feature gate's name, typed to say it is on.
    FeatureGate(String),
    /// Fence this address, which no proof ties to a node, anyway.
    Unattributed(String),
    /// Act on this node although a Medik8s remediator acts on it.
    Remediating(String),
}

impl RemedyMsg {
    /// A refusal that no typed override can lift.
    pub fn refused(refusal: impl Into<Refusal>, undo: bool) -> Self {
        RemedyMsg::Failed { refusal: refusal.into(), need: None, undo }
    }
}

impl OverrideNeed {
    /// The text the operator must type.
    pub fn name(&self) -> &str {
        match self {
            OverrideNeed::ReadyNode(n)
            | OverrideNeed::WideBlocklist(n)
            | OverrideNeed::NotRebooted(n)
            | OverrideNeed::FeatureGate(n)
            | OverrideNeed::Unattributed(n)
            | OverrideNeed::Remediating(n) => n,
        }
    }
}

/// Requests from the app.
#[derive(Debug, Clone, PartialEq)]
pub enum RemedyRequest {
    /// Start a runner for this playbook (journal, Lease). `subject` names the incident.
    Open {
        /// The playbook built from the console's snapshot.
        playbook: Box<Playbook>,
        /// The state the finding was made on.
        baseline: Box<LiveState>,
        /// PV, node or finding id.
        subject: String,
    },
    /// Run the Backup step; with `export_to`, also a full `rbd export` of the snapshot to that file
    /// (progress comes back as [`RemedyMsg::Export`]).
    Backup {
        /// Destination of the full copy (must not exist); `None`: snapshot and manifests only.
        export_to: Option<PathBuf>,
    },
    /// Run the Check step.
    Check,
    /// Prepare the current Act step (live mode) or preview step `index` (dry-run).
    Prepare {
        /// Step index (dry-run preview; live mode always prepares the current step).
        index: usize,
        /// Typed overrides (boxed: they are the largest part of a request).
        overrides: Box<Overrides>,
    },
    /// Send the prepared confirmation for `step_id`.
    Confirm {
        /// Must match the pending confirmation.
        step_id: String,
        /// The typed name for irreversible steps.
        typed: Option<String>,
    },
    /// Forget the pending confirmation (Esc).
    Cancel,
    /// The operator ran the Manual step.
    ManualDone,
    /// Skip the optional current step.
    Skip,
    /// Start waiting on the current Wait step: one poll now, then the service polls it on its own
    /// timer every `remedy.wait_poll_seconds` (on the console's clock) until the condition is met,
    /// the step times out or a poll fails; each poll answers [`RemedyMsg::Wait`].
    WaitPoll,
    /// Stop polling the current Wait step (Esc while it is polled): the step stays current and
    /// nothing is journaled; [`RemedyRequest::WaitPoll`] starts polling again.
    StopWait,
    /// Run the Verify step: one read of its conditions now; while they do not all hold the service
    /// reads them again on its timer (like a Wait) until they do or `remedy.verify_timeout_seconds`
    /// pass; each read answers [`RemedyMsg::Verified`]. [`RemedyRequest::StopWait`] stops the
    /// reads. Dry-run: one read of step `index`.
    Verify {
        /// Step index (dry-run).
        index: usize,
    },
    /// The operator re-checked the interrupted steps.
    Acknowledge,
    /// Prepare the undo of the newest undoable step, with the operator's typed overrides (an
    /// unfence of a node not shown to have rebooted).
    PrepareUndo(Box<Overrides>),
    /// Take over an expired Lease. (Renewing a held Lease needs no command: the service keeps it
    /// alive on its own timer.)
    TakeOverLease,
    /// Close the runner and release the Lease.
    Close,
}

/// Messages to the console: answers to its commands, and what the service's own timers did (a
/// Wait poll, a Lease renewal that failed).
#[derive(Debug, Clone)]
pub enum RemedyMsg {
    /// The runner's state after a call.
    View(RunnerView),
    /// A confirmation to show.
    Confirm(ConfirmView),
    /// A call finished; `text` is for the message line.
    Done {
        /// It did what was asked (false: a write failed, its outcome journaled).
        ok: bool,
        /// What happened, one line.
        text: String,
    },
    /// A call was refused or failed (or the service's Lease renewal failed).
    Failed {
        /// Why (shown as its text; kept as a value for training's debrief).
        refusal: Refusal,
        /// An override the safety rules would accept when typed.
        need: Option<OverrideNeed>,
        /// The call was preparing an undo (`u`): an attempted action, like a refused Act step.
        undo: bool,
    },
    /// A Wait poll (asked for, or made by the service's timer while the step is pending).
    Wait(WaitStatus),
    /// Progress of the backup's `rbd export` (bytes, total, rate, ETA), about every 200 ms.
    Export(ExportProgress),
    /// The API server's version, read once when the service starts (or why it could not be read).
    ServerVersion(Result<ServerVersion, VersionError>),
    /// What a call did, for the session log: an `action`, `undo` or `backup` event (sent before
    /// the call's `Done`).
    Record(crate::session::SessionEvent),
    /// A Verify step was read: each of its conditions, checked.
    Verified {
        /// The step's index in the playbook.
        step: usize,
        /// Every condition, in the step's order.
        checks: Vec<crate::remedy::playbook::condition::Checked>,
        /// `Some(time left)` while the service keeps reading them (not all hold yet); `None` when
        /// the step ended (all held, or the time ran out: journaled as failed).
        remaining: Option<std::time::Duration>,
    },
}
