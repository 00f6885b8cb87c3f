//! `unstick diagnose [--bundle DIR] [--output text|json|md]`: one-shot diagnosis of the live
//! cluster (default) or of a support bundle. Exit codes: 0 no findings, 1 findings, 2 error,
//! 3 incomplete (live: something the rules need could not be read; findings, if any, are printed).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use unstick_core::clock::Clock;

use super::args::ConsoleArgs;
use super::{ceph_cli, live, load_config, namespace};
use unstick_core::bundle;
use unstick_core::diagnose::{self, Report, render};
use unstick_core::lineage::Lineage;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Plain text for a terminal.
    Text,
    /// The JSON document of `docs/diagnose-json.md`.
    Json,
    /// Markdown for a ticket or postmortem.
    Md,
}

/// Options of `unstick diagnose`.
#[derive(Debug, Clone, clap::Args)]
pub struct DiagnoseArgs {
    /// Diagnose this support bundle (written by `unstick collect`) instead of the live cluster.
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    pub output: Output,
    /// Cluster, identity, request bound.
    #[command(flatten)]
    pub kube: super::args::KubeArgs,
    /// Namespaces.
    #[command(flatten)]
    pub scope: super::args::ScopeArgs,
    /// Ceph access.
    #[command(flatten)]
    pub ceph: super::args::CephArgs,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
    /// Fleet: which contexts, how many at once, how long each.
    #[command(flatten)]
    pub fleet: super::args::FleetArgs,
}

/// Exit code of a complete run with findings.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code of a run where something the rules need could not be read ([`Report::incomplete`]).
pub const EXIT_INCOMPLETE: u8 = 3;

/// Runs the diagnosis and prints the report (one context: `main` runs [`super::fleet::run`] for
/// --all-contexts / --contexts). Exit code 0 = no findings, 1 = findings, 2 = error
/// (bad config, unreadable bundle, no cluster connection), 3 = incomplete (a kind or Ceph could
/// not be read; the findings printed are what could be proven without it).
pub async fn run(console: ConsoleArgs, args: DiagnoseArgs) -> ExitCode {
    match report(&console, &args, &unstick_core::clock::WallClock).await {
        Ok(r) => {
            let out = match args.output {
                Output::Text => render::text(&r),
                Output::Md => render::markdown(&r),
                Output::Json => match json(&r) {
                    Some(s) => s,
                    None => return ExitCode::from(2),
                },
            };
            unstick_core::print_safe!("{out}");
            if !r.incomplete.is_empty() {
                ExitCode::from(EXIT_INCOMPLETE)
            } else if r.findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_FINDINGS)
            }
        }
        Err(e) => {
            // one line, the hint for a kubeconfig or config error; exit 2 whatever the kind
            let (_, text) = crate::startup::message_as("unstick diagnose", &e, crate::startup::want_detail());
            unstick_core::eprintln_safe!("{text}");
            ExitCode::from(2)
        }
    }
}

/// `v` as pretty JSON (control characters escaped) and a newline; `None` after saying on stderr
/// that it cannot be encoded.
pub fn json(v: &impl serde::Serialize) -> Option<String> {
    match serde_json::to_string_pretty(v).map(unstick_core::text::json_escape_controls) {
        Ok(s) => Some(s + "\n"),
        Err(e) => {
            unstick_core::eprintln_safe!("unstick diagnose: cannot encode the report: {e}");
            None
        }
    }
}

/// Builds the report from the bundle or the live cluster.
pub async fn report(console: &ConsoleArgs, args: &DiagnoseArgs, clock: &dyn Clock) -> color_eyre::Result<Report> {
    let cfg = load_config(console)?;
    if let Some(dir) = &args.bundle {
        let b = bundle::read(dir, clock)?;
        let lin = Lineage::build(&b.snapshot);
        let mut findings = diagnose::run(&b.snapshot, &lin, &cfg.diagnose, b.clock);
        diagnose::add_probe_evidence(&mut findings, &b.probes);
        return Ok(Report {
            findings,
            missing: b.missing,
            incomplete: vec![],
            generated_at: b.clock,
            input: format!("bundle {}", dir.display()),
        });
    }
    let conn = unstick_core::sources::kube::client::connect_with(&console.kube.connect_options()).await?;
    let (client, context, server) = (conn.client, conn.context, conn.signals.server);
    let ns = namespace(console, &cfg);
    let timeout = Duration::from_secs(cfg.diagnose.list_timeout_seconds);
    let (mut snap, mut missing, mut incomplete) = live::kube_snapshot(&client, ns.as_deref(), timeout, clock).await;
    if missing.len() == 6 {
        // Nothing could be listed: that is an error, not "no findings".
        color_eyre::eyre::bail!("cannot list anything from context {context:?} at {server}: {}", missing.join("; "));
    }
    let lin = Lineage::build(&snap);
    match ceph_cli(console, &cfg, &client) {
        Some(cli) => {
            let lost = live::ceph_facts(cli, &mut snap, &lin).await;
            if !lost.is_empty() {
                incomplete.push("ceph (see missing)".into());
            }
            missing.extend(lost);
        }
        None => {
            missing.push("ceph: not read (--no-ceph)".into());
            incomplete.push("ceph (--no-ceph)".into());
        }
    }
    let now = clock.now();
    let findings = diagnose::run(&snap, &lin, &cfg.diagnose, now);
    let scope = ns.map(|n| format!(" namespace {n}")).unwrap_or_default();
    Ok(Report { findings, missing, incomplete, generated_at: now, input: format!("live {context}{scope}") })
}
