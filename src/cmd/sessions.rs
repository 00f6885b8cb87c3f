//! `unstick sessions` lists the session logs; `unstick export SESSION --format md|json` writes one
//! as a postmortem timeline (redacted with the built-in rules and `session.redact_patterns`).
//! Exit codes: 0 written, 2 error (no such session, unreadable log directory, bad config, bad
//! redaction pattern, unwritable --out).

use std::path::PathBuf;
use std::process::ExitCode;

use super::args::ConsoleArgs;
use super::load_config;
use unstick_core::config::Config;
use unstick_core::session::{self, Format};

/// Options of `unstick sessions`.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionsArgs {
    /// Session log directory (default: `session.dir`, else $XDG_STATE_HOME/unstick/sessions).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
}

/// Options of `unstick export`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// Session id (from `unstick sessions`), a unique prefix of one, `latest`, `<id>.jsonl`, or a
    /// path to a session log.
    pub session: String,
    /// Output format: `md` (Markdown, pastes into a postmortem doc) or `json`.
    #[arg(long, short = 'f', default_value = "md", value_parser = parse_format)]
    pub format: Format,
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Session log directory (default: `session.dir`, else $XDG_STATE_HOME/unstick/sessions).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse::<Format>().map_err(|e| e.to_string())
}

fn base(dir: Option<&PathBuf>, cfg: &Config) -> PathBuf {
    dir.cloned().unwrap_or_else(|| unstick_core::session::base(&cfg.session))
}

fn fail(cmd: &str, e: impl std::fmt::Display) -> ExitCode {
    unstick_core::eprintln_safe!("unstick {cmd}: {e}");
    ExitCode::from(2)
}

/// Runs `unstick sessions`: one line per session log, oldest first.
pub fn run_sessions(console: ConsoleArgs, args: SessionsArgs) -> ExitCode {
    let cfg = match load_config(&console) {
        Ok(c) => c,
        Err(e) => return fail("sessions", format!("{e:#}")),
    };
    let base = base(args.dir.as_ref(), &cfg);
    let list = match session::list(&base) {
        Ok(l) => l,
        Err(e) => return fail("sessions", e),
    };
    if list.is_empty() {
        unstick_core::println_safe!("no sessions in {}", base.display());
        return ExitCode::SUCCESS;
    }
    let mut rows =
        vec![["SESSION", "STARTED", "FINDINGS", "ACTIONS", "NOTES", "PROBLEMS", "CONTEXT"].map(String::from).to_vec()];
    for s in list {
        let started = s.started.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()).unwrap_or_else(|| "?".into());
        let running = if s.ended.is_none() { " (no end record)" } else { "" };
        rows.push(vec![
            unstick_core::text::sanitize(&s.id),
            started,
            s.findings.to_string(),
            s.actions.to_string(),
            s.notes.to_string(),
            s.problems.to_string(),
            format!("{}{running}", unstick_core::text::sanitize(s.context.as_deref().unwrap_or("?"))),
        ]);
    }
    // columns sized to their longest cell: long ids never push the others out of line
    unstick_core::print_safe!("{}", unstick_core::text::table(&rows, &[false, false, true, true, true, true, false]));
    ExitCode::SUCCESS
}

/// Runs `unstick export`.
pub fn run_export(console: ConsoleArgs, args: ExportArgs) -> ExitCode {
    let cfg = match load_config(&console) {
        Ok(c) => c,
        Err(e) => return fail("export", format!("{e:#}")),
    };
    let redactor = match unstick_core::session::redactor(&cfg.session) {
        Ok(r) => r,
        Err(e) => return fail("export", e),
    };
    let path = match session::resolve(&base(args.dir.as_ref(), &cfg), &args.session) {
        Ok(p) => p,
        Err(e) => return fail("export", e),
    };
    let text = match session::export_with(&path, args.format, &redactor) {
        Ok(t) => t,
        Err(e) => return fail("export", e),
    };
    match &args.out {
        Some(out) => match std::fs::write(out, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail("export", format!("writing {}: {e}", out.display())),
        },
        None => {
            unstick_core::print_safe!("{text}");
            ExitCode::SUCCESS
        }
    }
}
