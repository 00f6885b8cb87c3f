//! What a popup or view answers to a key, for [`super::app::App`] to apply: components own their
//! state and never reach into the app's fields; anything beyond their own state (closing them,
//! the session log, IO) comes back as an [`Outcome`].

use std::path::PathBuf;

use jiff::Timestamp;

use unstick_core::diagnose::ObjectRef;
use unstick_core::remedy::service::{OverrideNeed, RemedyRequest};
use unstick_core::session::SessionEvent;

/// A component's answer to a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The key was used (or deliberately swallowed); nothing else to do.
    Consumed,
    /// The key means nothing to the component.
    Ignored,
    /// Something only the app can do.
    Command(AppCommand),
}

/// What a component asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum AppCommand {
    /// Close the component that answered.
    Close,
    /// Note editor: write this note (non-empty, trailing blanks removed) to the session log.
    SaveNote(String),
    /// Confirm popup: the operator confirmed, with the text typed (typed-name popups); the
    /// Playbook view sends the confirmation.
    Confirm(Option<String>),
    /// Full-copy prompt: start the backup with an `rbd export` to this (absolute, new) file.
    StartExport(PathBuf),
    /// Override prompt: this override was typed exactly; the Playbook view keeps it.
    Override(OverrideNeed),
    /// Playbook view: open the typed-override prompt for this need over it.
    OpenOverride(OverrideNeed),
    /// Playbook view: open the full-copy destination prompt over it, pre-filled with this path.
    OpenFullCopy(PathBuf),
    /// Playbook view: put this text (a Manual step's commands, one a line) on the terminal's
    /// clipboard.
    Copy(String),
    /// Filter editor: filter the focused pane by `text` (empty: no filter); `close` closes the
    /// editor too.
    Filter {
        /// The filter text as typed.
        text: String,
        /// Close the editor.
        close: bool,
    },
    /// `:` prompt: run this command line (the app closes the prompt first).
    RunCommand(String),
    /// Training: the briefing was left and the simulation's clock started at this time; the
    /// console's clock moves to it.
    ClockStarted(Timestamp),
    /// Leave the console.
    Quit,
    /// Open the help overlay.
    OpenHelp,
    /// Fleet view: open this context in the console (the in-place switch of `:ctx NAME`).
    SwitchContext(String),
    /// Fleet view: diagnose every context again.
    RefreshFleet,
    /// Open the note editor.
    OpenNote,
    /// Training: show or hide the hints.
    ToggleHints,
    /// Open the selected finding's Playbook view.
    OpenPlaybook,
    /// Open the describe popup (`yaml`: the YAML popup) of the selected object.
    OpenDescribe {
        /// The YAML popup instead of the describe one.
        yaml: bool,
    },
    /// Open the `:` prompt.
    OpenCommand,
    /// Finding detail: close it and open the Findings pane's filter prompt (`/`).
    OpenFilter,
    /// Finding detail: close it, focus the pane that lists this object and select its row.
    JumpTo(ObjectRef),
    /// Describe popup: read this object from the API server.
    Describe(ObjectRef),
    /// Send a command to the remediation service.
    Remedy(RemedyRequest),
    /// A confirmation was answered: record it in the session log, then send `send`, if any.
    Answered {
        /// The `confirmation` event (accepted or cancelled).
        record: Box<SessionEvent>,
        /// The remediation service request that follows (confirm, cancel), if any.
        send: Option<RemedyRequest>,
    },
}
