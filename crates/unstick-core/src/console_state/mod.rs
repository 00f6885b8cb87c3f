//! The console's state that needs no terminal: what the console derives from the objects it
//! reads ([`derived`]: the snapshot, lineage, findings and rows; [`rows`]: the panes' visible rows and filters; [`changes`]: the change sets of the watch
//! stores), the blast radius of a write a confirmation shows ([`blast`]) and the session log the
//! console writes as it runs ([`session_rec`]). The console crate draws and routes keys on top.

pub mod blast;
pub mod changes;
pub mod derived;
pub mod rows;
pub mod session_rec;
