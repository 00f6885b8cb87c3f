//! Subcommand-line interface (clap). The binary answers as `unstick`, and as `kubectl unstick` when
//! started as `kubectl-unstick` (a kubectl plugin: krew's link, or a copy or link on PATH).

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser};

pub use crate::cmd::args::ConsoleArgs;

/// Terminal incident console for Kubernetes pods stuck on Ceph RBD volumes.
///
/// Opens a live console on the current kubeconfig context: nodes, troubled pods (Terminating,
/// ContainerCreating), the PVC → PV → RBD image lineage, the image's watchers, locks and blocklist
/// entries, and events; all updated from watches. Read the pane help with `?`.
///
/// Exit codes: 0 normal exit, 1 runtime error (the console failed while running), 2 usage or
/// setup error (bad option, config file, kubeconfig or context, no terminal), 129 / 130 / 143 stopped by SIGHUP / SIGINT / SIGTERM (terminal restored, session log ended),
/// 101 internal error (a panic: terminal restored, one line on stderr).
#[derive(Debug, Parser)]
#[command(name = "unstick", version = VERSION, about, long_about)]
pub struct Cli {
    /// What to run; without a subcommand, the live console.
    #[command(subcommand)]
    pub command: Option<Subcommand>,
    /// Options of the console; they may also stand before a subcommand that takes them
    /// (`unstick --context prod diagnose`).
    #[command(flatten)]
    pub console: ConsoleArgs,
}

/// Subcommands besides the console.
#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Diagnose the live cluster (or a support bundle) once and print the findings.
    ///
    /// Exit codes: 0 no findings, 1 findings, 2 error (an exec credential plugin that fails or
    /// gives no answer within 30 s included), 3 incomplete (live: a kind or a Ceph read
    /// the rules need failed, or --no-ceph; the output ends "incomplete: could not read X, Y" and
    /// the findings printed are what could be proven without it). With --all-contexts or
    /// --contexts: one row per context, exit code the worst row's (0 < 1 < 3 < 4 could not be
    /// diagnosed), 2 only when the run cannot start. The JSON output is documented in
    /// docs/diagnose-json.md.
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
    /// Print a shell completion script (subcommands, options, `train` scenario names).
    ///
    /// bash: `unstick completions bash > ~/.local/share/bash-completion/completions/unstick`;
    /// zsh: `unstick completions zsh > "${fpath[1]}/_unstick"`; fish: `unstick completions fish >
    /// ~/.config/fish/completions/unstick.fish`; PowerShell: `unstick completions powershell |
    /// Out-String | Invoke-Expression`. Exit codes: 0.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of unstick, or of one subcommand: `unstick man | man -l -`.
    ///
    /// Exit codes: 0 printed, 2 no such subcommand.
    Man {
        /// The subcommand (`diagnose` gives unstick-diagnose(1)).
        subcommand: Option<String>,
    },
}

/// `--version`: the package version and the commit it was built from (`build.rs`: `git rev-parse
/// --short HEAD`, else `$UNSTICK_BUILD_COMMIT`, else `unknown`), e.g. `0.1.0 (74fbb31)`.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("UNSTICK_COMMIT"), ")");

/// What the usage lines call the program: `kubectl unstick` when `argv0`'s file name is
/// `kubectl-unstick` (`.exe` aside), else `unstick`.
pub fn invoked_as(argv0: Option<&std::ffi::OsStr>) -> &'static str {
    let stem = argv0.and_then(|a| std::path::Path::new(a).file_stem()).and_then(|s| s.to_str());
    match stem {
        Some("kubectl-unstick") => "kubectl unstick",
        _ => "unstick",
    }
}

/// The clap command, its usage naming the program `name` ([`invoked_as`]).
pub fn command(name: &'static str) -> clap::Command {
    Cli::command().bin_name(name).display_name(name)
}

/// Parses `args` (argv, the program first) as [`Cli`], usage and errors naming the program as
/// [`invoked_as`] says. Errors: clap's (help and version included), exit code from
/// [`clap::Error::exit_code`].
pub fn parse_from(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut cmd = command(invoked_as(args.first().map(OsString::as_os_str)));
    let matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        parse_from(args.iter().map(OsString::from)).unwrap()
    }

    #[test]
    fn the_command_is_well_formed() {
        command("unstick").debug_assert();
    }

    #[test]
    fn started_as_kubectl_unstick_it_is_named_so() {
        assert_eq!(invoked_as(Some("/home/u/.krew/bin/kubectl-unstick".as_ref())), "kubectl unstick");
        assert_eq!(invoked_as(Some("kubectl-unstick.exe".as_ref())), "kubectl unstick");
        assert_eq!(invoked_as(Some("/usr/bin/unstick".as_ref())), "unstick");
        assert_eq!(invoked_as(None), "unstick");
        let e = parse_from(["/x/kubectl-unstick", "--help"].map(OsString::from)).unwrap_err();
        assert!(e.to_string().contains("Usage: kubectl unstick [OPTIONS]"), "{e}");
    }

    #[test]
    fn console_options_stand_before_a_subcommand_and_its_own_after() {
        let cli = parse(&["unstick", "--context", "a", "diagnose", "--as", "oncall"]);
        assert_eq!(cli.console.kube.context.as_deref(), Some("a"));
        let Some(Subcommand::Diagnose(d)) = cli.command else { panic!("diagnose") };
        assert_eq!(d.kube.as_user.as_deref(), Some("oncall"));
        // an option the subcommand does not take is refused after it (usage error)
        let e = parse_from(["unstick", "journal", "--kubeconfig", "x"].map(OsString::from)).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
    }
}
