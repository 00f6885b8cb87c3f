//! The console: state ([`app`]), key bindings ([`keys`]), visible rows ([`rows`]), rendering
//! ([`view`]) and the event loop ([`run`]); remediation runs in [`unstick_core::remedy::service`].
//!
//! Popups and views are components that own their state and answer keys with an
//! [`outcome::Outcome`] ([`notes`], [`export_prompt`], [`describe`], [`command`],
//! [`filter_editor`], [`help`], [`confirm`], [`finding_detail`], [`playbook`], the training
//! screens in `train_screen`); none of them knows `App`, and each draws from its own state and a
//! read-only context ([`view::draw`] alone reads `App`). Each pane is a [`pane_view::PaneView`]
//! (selection or scroll offset, column offset, filter) that answers its moving keys and draws
//! itself from a read-only [`view::ViewCtx`]. Keys are one [`keys`]-mapped `Action` enum, one
//! binding table per context (the panes, the Playbook view). The app's
//! side of each (opening it, routing keys to it, applying what it answers) is in the `app_*.rs`
//! files: `app_keys` (raw-key routing, the commands), `app_playbook`, `app_session` (the session
//! log and the note editor), `app_command`, `app_filter`, `describe_app`.

mod action;
pub mod app;
mod app_ceph;
mod app_command;
mod app_derive;
mod app_detail;
mod app_filter;
mod app_keys;
mod app_layout;
mod app_playbook;
mod app_session;
mod app_train;
mod blast;
pub mod changes;
pub mod command;
pub mod confirm;
pub mod describe;
mod describe_app;
pub mod export_prompt;
pub mod filter_editor;
pub mod finding_detail;
pub mod help;
pub mod keys;
pub mod keys_help;
mod mouse;
pub mod notes;
pub mod outcome;
mod pane;
pub mod pane_view;
pub mod playbook;
mod playbook_popups;
pub mod playbook_runs;
pub mod popup;
pub mod rows;
pub mod run;
pub mod session_rec;
pub mod shutdown;
mod train_screen;
pub mod view;

#[cfg(test)]
mod friction_tests;
