//! What a key asks for, once mapped: one enum for every context (the panes and the overlays over
//! them, the Playbook view); `keys.rs` holds each context's bindings.

use crate::ui::panes::Pane;

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Leave the console.
    Quit,
    /// Open or close the help overlay.
    ToggleHelp,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Focus a given pane.
    Focus(Pane),
    /// Selection up one row.
    Up,
    /// Selection down one row.
    Down,
    /// Selection up one page.
    PageUp,
    /// Selection down one page.
    PageDown,
    /// First row.
    Top,
    /// Last row.
    Bottom,
    /// Open the filter editor on the focused pane.
    StartFilter,
    /// Follow the selection into the next pane of the lineage.
    Drill,
    /// Go back (close overlay, clear filter, or return from a drill; close the Playbook view).
    Back,
    /// Show all pods / only troubled pods.
    ToggleAllPods,
    /// Re-read the selected image from Ceph now.
    RefreshCeph,
    /// Read every RBD image referenced by a PV.
    Scan,
    /// Open the Playbook view of the selected finding.
    OpenPlaybook,
    /// Undo the newest undoable step of the open incident.
    Undo,
    /// Playbook: run the selected step (it must be the current one).
    Run,
    /// Playbook: skip the current optional step.
    Skip,
    /// Playbook: acknowledge interrupted steps after re-checking.
    Acknowledge,
    /// Playbook: type the override the safety rules asked for.
    Override,
    /// Playbook: take over an expired Lease.
    TakeOver,
    /// Playbook: back up with a full `rbd export` copy (asks for the destination).
    Export,
    /// Playbook: copy the selected Manual step's commands to the terminal's clipboard (OSC 52).
    CopyCommands,
    /// Open the note editor (a note for the session log).
    Note,
    /// Show or hide the unlocked hints of a training scenario.
    Hints,
    /// Open the `:` command prompt.
    Command,
    /// Describe the selected object (`d`), read from the API server now.
    Describe,
    /// The selected object's YAML (`y`), read from the API server now.
    Yaml,
    /// Scroll the focused table's columns left.
    Left,
    /// Scroll the focused table's columns right.
    Right,
}
