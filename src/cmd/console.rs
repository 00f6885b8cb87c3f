//! The live console (`unstick` without a subcommand), one kubeconfig context at a time.
//!
//! [`run`] takes the terminal, then for each context: connects, starts that context's sources
//! ([`start`]: the watches, the Ceph worker, the remediation service; services without UI that
//! answer typed messages), runs the event loop until the operator quits or asks for another
//! context (`:ctx NAME`, the fleet view's Enter: [`App::switch_to`]), and closes the sources
//! ([`Sources::close`]: the open run's journal closed, its Lease released; each watch ends at its
//! next event, when it finds its channel closed) before
//! starting the next context's. The terminal, the key stream, the signal handlers and the session
//! log stay across switches; the log records each one ([`App::switched_context`]).

use color_eyre::eyre::WrapErr;

use crate::cmd::ConsoleArgs;
use crate::cmd::args::FleetArgs;
use crate::cmd::diagnose::{DiagnoseArgs, Output};
use crate::theme::{Theme, no_color_env};
use crate::ui::app::App;
use crate::ui::popups::playbook::WriteMode;
use crate::ui::run::{FleetProbe, Sources};
use crate::ui::shutdown::{Signals, Stopped};
use unstick_core::clock::SharedClock;
use unstick_core::config::Config;
use unstick_core::console_state::session_rec::{SessionRecorder, SessionSpec};
use unstick_core::remedy::service;
use unstick_core::session::{Mode, Writes};
use unstick_core::sources::kube::client::connect_with;
use unstick_core::sources::{ceph, kube};

/// One context's sources, running.
pub struct Started {
    /// What the event loop reads and writes.
    pub sources: Sources,
    /// The context's name, as the kubeconfig spells it.
    pub context: String,
}

/// Connects to `context` (`None`: `--context`, else the kubeconfig's current one) with the
/// command line's kubeconfig options and starts its sources: the watches (`namespace` limits the
/// namespaced kinds), the Ceph worker (unless `--no-ceph`), the remediation service (journals
/// under `[remedy] journal_dir`, stamped with the context). Errors: the kubeconfig or the
/// context's credentials (see [`connect_with`]).
pub async fn start(
    cli: &ConsoleArgs,
    cfg: &Config,
    context: Option<&str>,
    namespace: Option<&str>,
    clock: &SharedClock,
) -> color_eyre::Result<Started> {
    let mut opts = cli.kube.connect_options();
    if let Some(c) = context {
        opts.context = Some(c.to_string());
    }
    let conn = connect_with(&opts).await?;
    let client = conn.client.clone();
    let (ktx, kube_rx) = tokio::sync::mpsc::unbounded_channel();
    let stores =
        kube::start_with(client.clone(), namespace, ktx, Some(&conn.signals), cfg.kube.initial_list, clock.clone());
    let (ceph_tx_msg, ceph_rx) = tokio::sync::mpsc::unbounded_channel();
    let ceph_cli = crate::cmd::ceph_cli(cli, cfg, &client);
    let ceph_tx = ceph_cli.clone().map(|runner| {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        ceph::spawn(runner, rx, ceph_tx_msg);
        tx
    });
    let writes = Writes::from_flags(cli.writes.read_only, cli.writes.dry_run);
    let clocks = service::Clocks { records: clock.clone(), timers: clock.clone() };
    let base = journal_base(&cfg.remedy.journal_dir);
    let (remedy_tx, remedy_rx) =
        service::start_for_console(&client, ceph_cli, &cfg.remedy, base, &conn.context, writes, clocks);
    let fleet = Some(fleet_probe(cli));
    let clock = clock.clone();
    let sources =
        Sources { stores, kube_rx, ceph_tx, ceph_rx, remedy_tx, remedy_rx, clock, client: Some(client), fleet };
    Ok(Started { sources, context: conn.context })
}

/// The live console until the operator quits (`Ok(None)`) or a signal stops it
/// (`Ok(Some(signal))`). Errors: the config, the kubeconfig or the first context's connection,
/// no terminal, the terminal failing while the console runs.
pub async fn run(cli: ConsoleArgs) -> color_eyre::Result<Option<Stopped>> {
    let cfg = crate::cmd::load_config(&cli)?;
    let log = crate::logging::init();
    tracing::info!(version = env!("CARGO_PKG_VERSION"), read_only = cli.writes.read_only, "console start");
    let mut signals = Signals::new().wrap_err("installing the SIGTERM/SIGHUP/SIGINT handlers")?;
    let clock = unstick_core::clock::wall();
    let namespace = crate::cmd::namespace(&cli, &cfg);
    let first = start(&cli, &cfg, None, namespace.as_deref(), &clock).await?;
    let theme = Theme::resolve(&cfg.ui.theme, no_color_env());
    let writes = Writes::from_flags(cli.writes.read_only, cli.writes.dry_run);
    let spec = SessionSpec::from_config(&cfg.session, Mode::Live, &first.context, writes).wrap_err("session log")?;
    let base = journal_base(&cfg.remedy.journal_dir);
    let mut app = App::new(cfg.clone(), theme, first.context, namespace.clone(), cli.writes.read_only, clock.now());
    app.contexts = unstick_core::sources::kube::client::load_kubeconfig(&cli.kube.connect_options())
        .map(|kc| kc.contexts.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    app.open_fleet_at_start = cli.fleet;
    if cli.writes.dry_run {
        app.remedy.mode = WriteMode::DryRun;
    }
    // interrupted steps of earlier sessions: shown as a banner, never retried
    app.remedy.interrupted = unstick_core::remedy::journal::incidents::interrupted_steps(&base);
    let mut terminal = crate::ui::run::init_terminal()?;
    // the log is created only once the console really runs; the writer thread opens it and a
    // failure shows in the status line, the console runs on
    app.attach_session(SessionRecorder::start(spec, clock.clone()));
    let mut keys = crossterm::event::EventStream::new();
    let mut sources = first.sources;
    let (res, last) = loop {
        let (res, used) = crate::ui::run::run(&mut terminal, &mut app, sources, &mut keys, signals.recv()).await;
        let Some(to) = app.switch_to.take().filter(|_| matches!(res, Ok(None))) else { break (res, Some(used)) };
        if !used.close().await {
            tracing::warn!(context = %app.context, "the remediation service did not end in time");
        }
        sources = match switch(&cli, &cfg, &mut app, &to, namespace.as_deref(), &clock).await {
            Ok(s) => s,
            // neither context could be started again: the console ends, the terminal given back
            Err(e) => break (Err(e), None),
        };
    };
    crate::ui::shutdown::restore_terminal();
    // the Lease released and the journal closed before the process ends
    if let Some(last) = last
        && !last.close().await
    {
        unstick_core::eprintln_safe!(
            "unstick: the remediation service did not end in time (its Lease expires on its own)"
        );
    }
    // the end record; waits at most a few seconds for the writer, with the terminal already back
    if let Some(e) = app.end_session() {
        unstick_core::eprintln_safe!("unstick: {e}");
    }
    if let Some((path, _guard)) = log {
        tracing::info!("console exit");
        drop(path);
    }
    res.wrap_err("console loop")
}

/// Starts context `to`'s sources and moves `app` onto it; when `to` cannot be started, the
/// context left is started afresh and the banner says why. Errors: that failed too.
async fn switch(
    cli: &ConsoleArgs,
    cfg: &Config,
    app: &mut App,
    to: &str,
    namespace: Option<&str>,
    clock: &SharedClock,
) -> color_eyre::Result<Sources> {
    let why = match start(cli, cfg, Some(to), namespace, clock).await {
        Ok(s) => {
            app.switched_context(s.context);
            return Ok(s.sources);
        }
        Err(e) => crate::startup::one_line(&e),
    };
    let back = start(cli, cfg, Some(&app.context), namespace, clock).await?;
    app.switched_context(back.context);
    app.remedy.notice = Some(format!("cannot switch to {}: {why}", unstick_core::text::sanitize(to)));
    Ok(back.sources)
}

/// The fleet view's diagnosis: every context of the kubeconfig, as `unstick diagnose
/// --all-contexts` with its defaults (4 at once, 60 s each) and this console's Ceph, namespace
/// and config options.
fn fleet_probe(cli: &ConsoleArgs) -> FleetProbe {
    let mut console = cli.clone();
    console.kube.context = None;
    let args = DiagnoseArgs {
        bundle: None,
        output: Output::Text,
        kube: console.kube.clone(),
        scope: console.scope.clone(),
        ceph: console.ceph.clone(),
        config: console.config.clone(),
        fleet: FleetArgs {
            all_contexts: true,
            contexts: vec![],
            max_in_flight: 4,
            context_timeout: std::time::Duration::from_secs(60),
        },
    };
    std::sync::Arc::new(move || {
        let (console, args) = (console.clone(), args.clone());
        Box::pin(async move {
            crate::cmd::fleet::report(&console, &args, &unstick_core::clock::WallClock)
                .await
                .map_err(|e| crate::startup::one_line(&e))
        })
    })
}

/// The journal base directory of `[remedy] journal_dir` (`""`: the default under the data dir).
pub fn journal_base(dir: &str) -> std::path::PathBuf {
    match dir {
        "" => unstick_core::remedy::journal::default_base(),
        d => std::path::PathBuf::from(d),
    }
}
