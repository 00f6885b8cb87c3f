//! The console: state ([`app`]), key bindings ([`keys`]), visible rows ([`rows`]), rendering
//! ([`view`]), the event loop ([`run`]), the session log recorder ([`session_rec`]) and the note
//! editor ([`notes`]).

mod action;
pub mod app;
mod app_ceph;
mod app_derive;
mod app_detail;
mod app_filter;
mod app_train;
mod blast;
pub mod command;
pub mod confirm;
pub mod describe;
mod describe_app;
pub mod export_prompt;
pub mod keys;
pub mod keys_help;
mod mouse;
pub mod notes;
mod pane;
pub mod playbook;
pub mod playbook_runs;
pub mod popup;
pub mod rows;
pub mod run;
pub mod session_rec;
pub mod shutdown;
pub mod view;
pub mod worker;
pub mod worker_msg;
mod worker_preview;

#[cfg(test)]
mod friction_tests;
