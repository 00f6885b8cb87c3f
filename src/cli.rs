//! Command-line interface (clap).

use clap::Parser;

pub use crate::cmd::args::ConsoleArgs;

/// Terminal incident console for Kubernetes pods stuck on Ceph RBD volumes.
///
/// Opens a live console on the current kubeconfig context: nodes, troubled pods (Terminating,
/// ContainerCreating), the PVC → PV → RBD image lineage, the image's watchers, locks and blocklist
/// entries, and events; all updated from watches. Read the pane help with `?`.
///
/// Exit codes: 0 normal exit, 1 runtime error (config, kubeconfig, terminal), 2 usage error,
/// 129 / 130 / 143 stopped by SIGHUP / SIGINT / SIGTERM (terminal restored, session log ended),
/// 101 internal error (a panic: terminal restored, one line on stderr).
#[derive(Debug, Parser)]
#[command(name = "unstick", version, about, long_about)]
pub struct Cli {
    /// What to run; without a subcommand, the live console.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the console (and of live subcommands).
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// Subcommands besides the console.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Diagnose the live cluster (or a support bundle) once and print the findings.
    ///
    /// Exit codes: 0 no findings, 1 findings, 2 error, 3 incomplete (live: a kind or a Ceph read
    /// the rules need failed, or --no-ceph; the output ends "incomplete: could not read X, Y" and
    /// the findings printed are what could be proven without it). The JSON output is documented
    /// in docs/diagnose-json.md.
    Diagnose(crate::cmd::diagnose::DiagnoseArgs),
    /// Write a support bundle of the live cluster (for `diagnose --bundle`).
    ///
    /// Exit codes: 0 written (failed reads are listed in manifest.json), 2 error.
    Collect(crate::cmd::collect::CollectArgs),
    /// Node-side scan: which processes, in which mount namespaces, mount an RBD device (JSON).
    ///
    /// Run it on the node as root, e.g. `unstick probe --device rbd3`. Exit codes: 0, 2 error.
    Probe(crate::cmd::probe::ProbeArgs),
    /// List remediation incidents, or show one incident's journal: steps with status, commands,
    /// outcomes, backups, interrupted steps and unreadable lines (kept in the file).
    ///
    /// Exit codes: 0 shown, 2 error (no such incident, bad config).
    Journal(crate::cmd::journal::JournalArgs),
    /// Undo the newest undoable step of an incident (or --step N), with the console's rules.
    ///
    /// The inverse is re-checked live and approved by the safety rules, then the confirmation is
    /// printed: a reversible inverse needs `y` on stdin, an irreversible one the typed object name
    /// (or --yes-i-typed NAME). Journaled intent → write → outcome. --dry-run prints only;
    /// --read-only refuses. Exit codes: 0 undone (or shown with --dry-run), 1 refused or failed,
    /// 2 usage or error.
    Undo(crate::cmd::undo::UndoArgs),
    /// List the session logs (newest last) with their finding, action, note and problem counts.
    ///
    /// Exit codes: 0 listed, 2 error.
    Sessions(crate::cmd::sessions::SessionsArgs),
    /// Export a session log as a postmortem timeline: summary, affected objects, UTC timeline,
    /// findings with evidence, actions with exact commands and outcomes, backups, undos, notes.
    ///
    /// Secrets (kubeconfig tokens and keys, Ceph keys, Secret data, `session.redact_patterns`) are
    /// replaced by [REDACTED]. Formats are documented in docs/session-export.md.
    /// Exit codes: 0 written, 2 error.
    Export(crate::cmd::sessions::ExportArgs),
    /// Practise on an embedded scenario, no cluster needed: `unstick train` lists them,
    /// `unstick train NAME` starts one with its briefing; a debrief compares your steps with the
    /// reference path at the end.
    ///
    /// The console, diagnosis, playbooks, backups, confirmations, journal and undo run unchanged on
    /// the scenario's simulated API server and Ceph; simulated time runs faster than real time.
    /// `--file x.toml` loads your own scenario (format: docs/scenarios.md). Exit codes: 0 every
    /// goal met, 1 left before the end, 2 usage or scenario error.
    Train(crate::cmd::train::TrainArgs),
}
