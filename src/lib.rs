//! unstick: a terminal incident console for Kubernetes pods stuck on Ceph RBD volumes.
//!
//! Layout follows `DESIGN.md`: [`sources`] does all IO, [`model`] is plain data, [`lineage`] joins
//! it, [`ui`] renders it.

pub mod bundle;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod diagnose;
pub mod dirs;
pub mod fixtures;
pub mod lineage;
pub mod logging;
pub mod model;
pub mod probe;
pub mod remedy;
pub mod session;
pub mod sources;
pub mod text;
pub mod theme;
pub mod train;
pub mod ui;
