//! The console: state ([`app`]), key bindings ([`keys`]), visible rows ([`rows`]), rendering
//! ([`view`]) and the event loop ([`run`]).

pub mod app;
pub mod export;
mod app_ceph;
pub mod keys;
pub mod playbook;
pub mod rows;
pub mod run;
pub mod view;
pub mod worker;
pub mod worker_msg;
