//! XDG directories (`directories` crate): config, state (logs, session logs) and data (journals).

use std::path::PathBuf;

/// The project's directories (`$XDG_CONFIG_HOME/unstick`, `$XDG_STATE_HOME/unstick`, ...), or
/// `None` when no home directory can be found.
pub fn project() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "unstick")
}

/// `$XDG_STATE_HOME/unstick` (falls back to the data dir, then `./.unstick-state`).
pub fn state_dir() -> PathBuf {
    project()
        .map(|p| p.state_dir().unwrap_or(p.data_local_dir()).to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".unstick-state"))
}
