//! Guided remediation, without UI: playbooks as data, a runner that enforces backup-first, a live
//! re-check and a journal around every write, the write actions and their inverses, the per-volume
//! Lease, and the crash-safe journal that undo replays.
//!
//! Flow of one Act step ([`runner`]): the backup has succeeded and been verified → the Lease for the
//! volume is renewed → the objects are re-read live and compared with the state the finding was made
//! on ([`precheck`]) → the safety rules approve the action on that live state ([`safety`]) → the
//! operator confirms (the UI shows [`runner::Confirmation`]) → the state is re-checked again if the
//! confirmation took long → `intent` is journaled and fsync'd → the [`executor`] sends the write →
//! `outcome` is journaled. `--read-only` makes the executor impossible to build.
//!
//! The console drives all of this through [`service`], a task with its own timers (Wait polling,
//! Lease keep-alive) that it talks to with typed commands and messages only.

pub mod action;
pub mod journal;
pub mod playbook;
pub mod run;
pub mod service;
