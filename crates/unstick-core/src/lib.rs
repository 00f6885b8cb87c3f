//! unstick-core: everything of unstick below the console, with no terminal dependency (no ratatui,
//! no crossterm), so a UI import here fails to build.
//!
//! Layout follows `DESIGN.md`: [`sources`] does all IO (Kubernetes watches, Ceph commands, the
//! training simulation), [`model`] is plain data, [`lineage`] joins it into PVC → PV → RBD image
//! lineage, [`diagnose`] finds the patterns, [`remedy`] runs playbooks with their journal,
//! [`session`] records and exports session logs, [`train`] scores training runs,
//! [`console_state`] holds what the console derives and records without a terminal.

pub mod attribution;
pub mod bundle;
pub mod clock;
pub mod config;
pub mod console_state;
pub mod diagnose;
pub mod dirs;
pub mod fixtures;
pub mod fleet;
pub mod jsonl;
pub mod lineage;
pub mod model;
pub mod probe;
pub mod remedy;
pub mod session;
pub mod sources;
pub mod text;
pub mod train;

/// Case count of the proptest fuzz targets: `UNSTICK_FUZZ_CASES` when set (long runs, e.g.
/// 100000), else `ci_default` (a few seconds in a debug build, what `tests/run-all` runs).
#[doc(hidden)]
pub fn fuzz_cases(ci_default: u32) -> u32 {
    std::env::var("UNSTICK_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(ci_default)
}
