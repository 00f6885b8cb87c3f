//! The console: state and the one place it changes ([`app`]), key bindings ([`keys`]), the panes
//! ([`panes`]: state, keys and drawing of each), the popup stack ([`popups`]), the screen's layout
//! and chrome ([`view`]) and the event loop ([`run`]); remediation runs in
//! [`unstick_core::remedy::service`].
//!
//! Everything over the panes is one stack, [`popups::Stack`]: the help, the filter and `:`
//! prompts, the note editor, the describe popup, the finding detail, the Playbook view and over it
//! its confirm, override and full-copy popups, the training screens and the quit confirmation. Each is
//! a component in `popups/` that owns its state, answers keys with an [`outcome::Outcome`] and
//! draws itself; none of them knows `App`. A key goes down the stack from its top ([`app::App::key`],
//! `app/routing.rs`), the mouse wheel is a key to the same top layer, and [`view::draw`] draws the
//! stack bottom to top, so a prompt on top receives every key. Each pane is a
//! [`panes::state::PaneView`] (selection or scroll offset, column offset, filter) that answers its
//! moving keys and draws itself from a read-only [`view::ViewCtx`]. The app's side of each popup
//! (opening it, applying what it answers) is in `app/` (a file per concern) and `popups/playbook/app.rs`.
//! Screen tests go through [`testing`], the terminal's own key entry.

mod action;
pub mod app;
pub mod keys;
pub mod outcome;
pub mod panes;
pub mod popup;
pub mod popups;
pub mod run;
pub mod shutdown;
pub mod testing;
pub mod view;

#[cfg(test)]
mod friction_tests;
#[cfg(test)]
mod identifier_tests;
#[cfg(test)]
mod newcomer_tests;
