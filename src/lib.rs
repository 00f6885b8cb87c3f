//! unstick: a terminal incident console for Kubernetes pods stuck on Ceph RBD volumes.
//!
//! This crate is the console on top of [`unstick_core`] (model, lineage, diagnosis, sources,
//! remediation, sessions, training): [`ui`] renders it and routes keys, [`cmd`] holds the
//! subcommands, [`cli`] their arguments, [`shell`] the completion scripts and man pages.

pub mod cli;
pub mod cmd;
pub mod logging;
pub mod malloc;
pub mod shell;
pub mod startup;
pub mod theme;
pub mod ui;
