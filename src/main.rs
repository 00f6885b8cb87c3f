//! The `unstick` binary: parses the command line ([`unstick::cli`]) and runs the command.

use std::process::ExitCode;

use color_eyre::eyre::WrapErr;
use unstick::cli::{ConsoleArgs, Subcommand};
use unstick::theme::{Theme, no_color_env};
use unstick::ui::app::App;
use unstick::ui::popups::playbook::WriteMode;
use unstick::ui::run::{Sources, run};
use unstick::ui::shutdown::{Signals, Stopped};
use unstick_core::console_state::session_rec::{SessionRecorder, SessionSpec};
use unstick_core::remedy::service;
use unstick_core::session::{Mode, Writes};
use unstick_core::sources::{ceph, kube};

fn main() -> ExitCode {
    unstick::malloc::tune();
    let cli = match unstick::cli::parse_from(std::env::args_os()) {
        Ok(c) => c,
        Err(e) => {
            // clap echoes the arguments: sanitized like every other foreign string
            let text = unstick_core::text::for_terminal(&e.render().to_string());
            if e.use_stderr() {
                unstick_core::eprintln_safe!("{}", text.trim_end());
            } else {
                unstick_core::println_safe!("{}", text.trim_end());
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    unstick::startup::install_report_hook();
    unstick::ui::shutdown::install_panic_hook();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let top = cli.console;
    let result = match cli.command {
        None => {
            let mut switch = None;
            let r = rt.block_on(console(top, &mut switch));
            match (&r, switch) {
                (Ok(None), Some(context)) => {
                    // `:ctx NAME`: the console has ended as on `q`; start it again on NAME
                    rt.shutdown_timeout(std::time::Duration::from_secs(2));
                    let e = unstick::startup::restart_on_context(&context);
                    unstick_core::eprintln_safe!("unstick: cannot restart on context {context:?}: {e}");
                    return ExitCode::from(1);
                }
                _ => r,
            }
        }
        Some(Subcommand::Diagnose(a)) => {
            let c = top.with_kube(&a.kube).with_scope(&a.scope).with_ceph(&a.ceph).with_config(&a.config);
            if a.fleet.is_fleet() {
                return rt.block_on(unstick::cmd::fleet::run(c, a));
            }
            return rt.block_on(unstick::cmd::diagnose::run(c, a));
        }
        Some(Subcommand::Collect(a)) => {
            let c = top.with_kube(&a.kube).with_scope(&a.scope).with_ceph(&a.ceph).with_config(&a.config);
            return rt.block_on(unstick::cmd::collect::run(c, a));
        }
        Some(Subcommand::Probe(args)) => return unstick::cmd::probe::run(args),
        Some(Subcommand::Journal(a)) => return unstick::cmd::journal::run(top.with_config(&a.config), a),
        Some(Subcommand::Undo(a)) => {
            let c = top.with_kube(&a.kube).with_ceph(&a.ceph).with_writes(a.writes).with_config(&a.config);
            return rt.block_on(unstick::cmd::undo::run(c, a));
        }
        Some(Subcommand::Sessions(a)) => return unstick::cmd::sessions::run_sessions(top.with_config(&a.config), a),
        Some(Subcommand::Export(a)) => return unstick::cmd::sessions::run_export(top.with_config(&a.config), a),
        Some(Subcommand::Train(a)) => {
            let c = top.with_writes(a.writes).with_config(&a.config);
            return rt.block_on(unstick::cmd::train::run(c, a));
        }
        Some(Subcommand::Completions { shell }) => return unstick::shell::completions(shell, &mut std::io::stdout()),
        Some(Subcommand::Man { subcommand }) => {
            return unstick::shell::man(subcommand.as_deref(), &mut std::io::stdout());
        }
    };
    match result {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(sig)) => {
            unstick_core::eprintln_safe!("unstick: stopped by {}", sig.name());
            ExitCode::from(sig.exit_code())
        }
        Err(e) => {
            // one line (what failed, what to do); RUST_BACKTRACE adds the full report
            let (code, text) = unstick::startup::message(&e, unstick::startup::want_detail());
            unstick_core::eprintln_safe!("{text}");
            ExitCode::from(code)
        }
    }
}

/// The live console; `switch` is set to the context `:ctx NAME` asked for (the console quit to
/// restart on it).
async fn console(cli: ConsoleArgs, switch: &mut Option<String>) -> color_eyre::Result<Option<Stopped>> {
    let cfg = unstick::cmd::load_config(&cli)?;
    let log = unstick::logging::init();
    tracing::info!(version = env!("CARGO_PKG_VERSION"), read_only = cli.writes.read_only, "console start");
    let mut signals = Signals::new().wrap_err("installing the SIGTERM/SIGHUP/SIGINT handlers")?;
    let conn = unstick_core::sources::kube::client::connect_with(&cli.kube.connect_options()).await?;
    let (client, context) = (conn.client.clone(), conn.context.clone());
    let namespace = unstick::cmd::namespace(&cli, &cfg);
    let (ktx, kube_rx) = tokio::sync::mpsc::unbounded_channel();
    let clock = unstick_core::clock::wall();
    let stores = kube::start_with(client.clone(), namespace.as_deref(), ktx, Some(&conn.signals), clock.clone());
    let (ceph_tx_msg, ceph_rx) = tokio::sync::mpsc::unbounded_channel();
    let ceph_cli = unstick::cmd::ceph_cli(&cli, &cfg, &client);
    let ceph_tx = ceph_cli.clone().map(|runner| {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        ceph::spawn(runner, rx, ceph_tx_msg);
        tx
    });
    let theme = Theme::resolve(&cfg.ui.theme, no_color_env());
    let base = journal_base(&cfg.remedy.journal_dir);
    let writes = Writes::from_flags(cli.writes.read_only, cli.writes.dry_run);
    let clocks = service::Clocks { records: clock.clone(), timers: clock.clone() };
    let (remedy_tx, remedy_rx) =
        service::start_for_console(&client, ceph_cli, &cfg.remedy, base, &context, writes, clocks);
    let cfg_base = cfg.remedy.journal_dir.clone();
    let spec = SessionSpec::from_config(&cfg.session, Mode::Live, &context, writes).wrap_err("session log")?;
    let mut app = App::new(cfg, theme, context, namespace, cli.writes.read_only, clock.now());
    app.contexts = unstick_core::sources::kube::client::load_kubeconfig(&cli.kube.connect_options())
        .map(|kc| kc.contexts.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    if cli.writes.dry_run {
        app.remedy.mode = WriteMode::DryRun;
    }
    // interrupted steps of earlier sessions: shown as a banner, never retried
    app.remedy.interrupted = unstick_core::remedy::journal::incidents::interrupted_steps(&journal_base(&cfg_base));
    let mut terminal = unstick::ui::run::init_terminal()?;
    // the log is created only once the console really runs; the writer thread opens it and a
    // failure shows in the status line, the console runs on
    app.attach_session(SessionRecorder::start(spec, clock.clone()));
    let res = run(
        &mut terminal,
        &mut app,
        Sources { stores, kube_rx, ceph_tx, ceph_rx, remedy_tx, remedy_rx, clock, client: Some(client.clone()) },
        crossterm::event::EventStream::new(),
        signals.recv(),
    )
    .await
    .wrap_err("console loop");
    *switch = app.switch_to.take();
    unstick::ui::shutdown::restore_terminal();
    // the end record; waits at most a few seconds for the writer, with the terminal already back
    let log_error = app.end_session();
    if let Some(e) = log_error {
        unstick_core::eprintln_safe!("unstick: {e}");
    }
    if let Some((path, _guard)) = log {
        tracing::info!("console exit");
        drop(path);
    }
    res
}

fn journal_base(dir: &str) -> std::path::PathBuf {
    match dir {
        "" => unstick_core::remedy::journal::default_base(),
        d => std::path::PathBuf::from(d),
    }
}
