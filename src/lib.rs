//! unstick: a terminal incident console for Kubernetes pods stuck on Ceph RBD volumes.
//!
//! Layout follows `DESIGN.md`: [`sources`] does all IO, [`model`] is plain data, [`lineage`] joins
//! it, [`ui`] renders it.

pub mod bundle;
pub mod cli;
pub mod clock;
pub mod cmd;
pub mod config;
pub mod diagnose;
pub mod dirs;
pub mod fixtures;
pub mod jsonl;
pub mod lineage;
pub mod logging;
pub mod malloc;
pub mod model;
pub mod probe;
pub mod remedy;
pub mod session;
pub mod sources;
pub mod startup;
pub mod text;
pub mod theme;
pub mod train;
pub mod ui;

/// Case count of the proptest fuzz targets: `UNSTICK_FUZZ_CASES` when set (long runs, e.g.
/// 100000), else `ci_default` (a few seconds in a debug build, what `tests/run-all` runs).
#[doc(hidden)]
pub fn fuzz_cases(ci_default: u32) -> u32 {
    std::env::var("UNSTICK_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(ci_default)
}
