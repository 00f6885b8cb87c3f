//! What a popup or view answers to a key, for [`super::app::App`] to apply: components own their
//! state and never reach into the app's fields; anything beyond their own state (closing them,
//! the session log, IO) comes back as an [`Outcome`].

use std::path::PathBuf;

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
    /// Full-copy prompt: start the backup with an `rbd export` to this (absolute, new) file.
    StartExport(PathBuf),
}
