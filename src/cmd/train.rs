//! `unstick train`: lists the embedded scenarios; `unstick train NAME` (or `--file x.toml`) runs the
//! console on one, with no cluster: the scenario's simulated API server and Ceph
//! ([`unstick_core::sources::sim`]) feed the same sources, diagnosis, playbooks, journal and session log
//! as a live session. Exit codes: 0 every goal met (debrief shown and printed), 1 left before the
//! end, 2 usage or scenario error (the message names the file, key and line).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use jiff::Timestamp;

use super::args::ConsoleArgs;
use super::load_config;
use crate::theme::Theme;
use crate::ui::app::App;
use crate::ui::popups::playbook::WriteMode;
use crate::ui::run::Sources;
use unstick_core::clock::SharedClock;
use unstick_core::config::Config;
use unstick_core::remedy::service::{self, Clocks};
use unstick_core::sources::ceph::cli::{CephCli, CephTransport};
use unstick_core::sources::sim::Sim;
use unstick_core::sources::sim::scenario::{EMBEDDED, Scenario, ScenarioError};
use unstick_core::train::Training;

/// Options of `unstick train`.
#[derive(Debug, Clone, Args)]
pub struct TrainArgs {
    /// Scenario name (see the list printed without it).
    pub scenario: Option<String>,
    /// Load a scenario from this TOML file instead (format: docs/scenarios.md).
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    pub file: Option<PathBuf>,
    /// Simulated seconds per real second (default: the scenario's `speed`).
    #[arg(long, value_name = "X")]
    pub speed: Option<f64>,
    /// Read-only / dry-run.
    #[command(flatten)]
    pub writes: super::args::WriteArgs,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
}

/// What a training console needs besides its terminal: the app (on the briefing screen), its
/// sources, and the simulation.
pub struct TrainParts {
    /// The console state, with [`App::training`] set.
    pub app: App,
    /// Sources fed by the simulation.
    pub sources: Sources,
    /// The simulation (tests advance its clock).
    pub sim: Sim,
}

/// The directory every training session's journals go under: `$XDG_DATA_HOME/unstick/training`.
pub fn training_root() -> PathBuf {
    unstick_core::dirs::project()
        .map(|p| p.data_dir().join("training"))
        .unwrap_or_else(|| PathBuf::from(".unstick-data/training"))
}

/// Where training incidents are journaled: `$XDG_DATA_HOME/unstick/training/<time>-<scenario>`,
/// apart from real incidents.
pub fn training_base(scenario: &str, now: Timestamp) -> PathBuf {
    training_dir(&training_root(), scenario, now)
}

/// True when `dir` is a training session's journal directory or lies under one (it is compared
/// after resolving links; a path that cannot be resolved is compared as given).
pub fn is_training_dir(dir: &std::path::Path) -> bool {
    let canon = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    canon(dir).starts_with(canon(&training_root()))
}

/// `<root>/<time>-<scenario>`, always one directory directly under `root`: scenario names are
/// checked when parsed ([`unstick_core::sources::sim::scenario::valid_name`]), and here every character
/// outside `[A-Za-z0-9._-]` is written as `-` besides, so no name can climb out of `root`.
pub fn training_dir(root: &std::path::Path, scenario: &str, now: Timestamp) -> PathBuf {
    let safe: String = scenario
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .collect();
    // the time prefix means the component never starts with `.`, so it is never `.` or `..`
    root.join(format!("{}-{safe}", now.strftime("%Y%m%dT%H%M%SZ")))
}

/// Builds a training console on `scenario` (call inside a tokio runtime). `journal_base` holds
/// its incident journals and backups; `read_only` / `dry_run` behave as in a live session.
/// `wall` is real time: the simulation starts at its time, and the journal, the trainee's times
/// and the debrief read it; the simulated cluster then runs on the simulation's own clock.
pub fn setup(
    scenario: Scenario,
    cfg: Config,
    theme: Theme,
    journal_base: PathBuf,
    (read_only, dry_run): (bool, bool),
    wall: SharedClock,
) -> TrainParts {
    setup_with(scenario, cfg, theme, journal_base, (read_only, dry_run), wall, |sim| Arc::new(sim.clone()))
}

/// [`setup`], with the remediation service's Ceph calls going through the transport `remedy_ceph`
/// makes from the simulation (tests wrap it, e.g. to make writes take time so a kill can land
/// between a journal intent and its outcome); the Ceph pane reads the simulation directly.
pub fn setup_with(
    scenario: Scenario,
    cfg: Config,
    theme: Theme,
    journal_base: PathBuf,
    (read_only, dry_run): (bool, bool),
    wall: SharedClock,
    remedy_ceph: impl FnOnce(&Sim) -> Arc<dyn CephTransport>,
) -> TrainParts {
    let sim = scenario.start(wall.now(), 0.0);
    let client = sim.client();
    let context = format!("train:{}", scenario.name);
    let (ktx, kube_rx) = tokio::sync::mpsc::unbounded_channel();
    let stores = unstick_core::sources::kube::start(client.clone(), None, ktx, Arc::new(sim.clone()));
    let ceph = sim.ceph_cli(cfg.ceph.clone());
    let (ceph_tx, ceph_req_rx) = tokio::sync::mpsc::unbounded_channel();
    let (ceph_msg_tx, ceph_rx) = tokio::sync::mpsc::unbounded_channel();
    unstick_core::sources::ceph::spawn(ceph, ceph_req_rx, ceph_msg_tx);
    let remedy = CephCli::with_transport(remedy_ceph(&sim), cfg.ceph.clone());
    let writes = unstick_core::session::Writes::from_flags(read_only, dry_run);
    // journal records on the wall clock; the Wait polls and Lease renewals on the simulation's
    let clocks = Clocks { records: wall.clone(), timers: Arc::new(sim.clone()) };
    let (remedy_tx, remedy_rx) =
        service::start_for_console(&client, Some(remedy), &cfg.remedy, journal_base.clone(), &context, writes, clocks);
    let mut app = App::new(cfg, theme, context, None, read_only, sim.now());
    if dry_run && !read_only {
        app.remedy.mode = WriteMode::DryRun;
    }
    app.start_training(Training::new(scenario, sim.clone(), journal_base, wall));
    sim.spawn_ticker(Duration::from_millis(200));
    let sources = Sources {
        stores,
        kube_rx,
        ceph_tx: Some(ceph_tx),
        ceph_rx,
        remedy_tx,
        remedy_rx,
        clock: Arc::new(sim.clone()),
        client: Some(client.clone()),
        fleet: None,
    };
    TrainParts { app, sources, sim }
}

/// Loads the scenario named on the command line (embedded, or `--file`).
pub fn load(args: &TrainArgs) -> Result<Scenario, ScenarioError> {
    let mut s = match (&args.file, &args.scenario) {
        (Some(path), _) => {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| ScenarioError { file: file.clone(), message: e.to_string() })?;
            Scenario::parse(&file, &text)?
        }
        (None, Some(name)) => Scenario::embedded(name).unwrap_or_else(|| {
            Err(ScenarioError {
                file: name.clone(),
                message: format!("no such scenario; `unstick train` lists them ({})", names().join(", ")),
            })
        })?,
        (None, None) => return Err(ScenarioError { file: String::new(), message: "no scenario named".into() }),
    };
    if let Some(x) = args.speed {
        if x == 0.0 || unstick_core::sources::sim::scenario::check_speed(x).is_err() {
            return Err(ScenarioError {
                file: s.name.clone(),
                message: format!(
                    "--speed {x}: must be a number above 0 and at most {}",
                    unstick_core::sources::sim::scenario::MAX_SPEED
                ),
            });
        }
        s.speed = x;
    }
    Ok(s)
}

/// The embedded scenarios' names, in [`EMBEDDED`] order.
pub fn names() -> Vec<String> {
    Scenario::all_embedded().into_iter().flatten().map(|s| s.name).collect()
}

/// The scenario list: name, difficulty, seed, patterns, title.
pub fn list_text() -> String {
    let mut out = format!("{:<24} {:<7} {:<5} {:<44} {}\n", "SCENARIO", "LEVEL", "SEED", "PATTERNS", "TITLE");
    let mut all: Vec<Scenario> = Scenario::all_embedded().into_iter().flatten().collect();
    all.sort_by_key(|s| (s.difficulty, s.seed.clone().unwrap_or_else(|| "~".into())));
    for s in all {
        out.push_str(&format!(
            "{:<24} {:<7} {:<5} {:<44} {}\n",
            s.name,
            s.difficulty.name(),
            s.seed.as_deref().unwrap_or("mixed"),
            s.patterns.join(","),
            s.title
        ));
    }
    out.push_str(&format!(
        "\n{} scenarios embedded. Start one with `unstick train NAME`; `unstick train --file x.toml` loads your own.\n",
        EMBEDDED.len()
    ));
    out
}

/// Runs `unstick train`.
pub async fn run(console: ConsoleArgs, args: TrainArgs) -> ExitCode {
    if args.scenario.is_none() && args.file.is_none() {
        unstick_core::print_safe!("{}", list_text());
        return ExitCode::SUCCESS;
    }
    let scenario = match load(&args) {
        Ok(s) => s,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick train: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = match load_config(&console) {
        Ok(c) => c,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick train: {e:#}");
            return ExitCode::from(2);
        }
    };
    let mut signals = match crate::ui::shutdown::Signals::new() {
        Ok(s) => s,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick train: cannot install the SIGTERM/SIGHUP/SIGINT handlers: {e}");
            return ExitCode::from(2);
        }
    };
    let log = crate::logging::init();
    let name = scenario.name.clone();
    let theme = Theme::resolve(&cfg.ui.theme, crate::theme::no_color_env());
    let writes = unstick_core::session::Writes::from_flags(console.writes.read_only, console.writes.dry_run);
    let spec = unstick_core::console_state::session_rec::SessionSpec::from_config(
        &cfg.session,
        unstick_core::session::Mode::Training,
        &name,
        writes,
    );
    let wall = unstick_core::clock::wall();
    let base = training_base(&name, wall.now());
    let mut parts =
        setup(scenario, cfg, theme, base.clone(), (console.writes.read_only, console.writes.dry_run), wall.clone());
    let mut terminal = match crate::ui::run::init_terminal() {
        Ok(t) => t,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick train: {e}");
            return ExitCode::from(2);
        }
    };
    // debug builds only: a background task that panics, for tests/signals_pty.rs (the panic
    // hook must restore the terminal and end the process even when the panic is not on the UI task)
    if cfg!(debug_assertions) && std::env::var_os("UNSTICK_TEST_PANIC_IN_TASK").is_some() {
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            panic!("injected by UNSTICK_TEST_PANIC_IN_TASK");
        });
    }
    // the session log is created only once the console really runs
    match spec {
        Ok(spec) => {
            parts.app.attach_session(unstick_core::console_state::session_rec::SessionRecorder::start(spec, wall))
        }
        Err(e) => {
            crate::ui::shutdown::restore_terminal();
            unstick_core::eprintln_safe!("unstick train: session log: {e}");
            return ExitCode::from(2);
        }
    }
    let (res, sources) = crate::ui::run::run(
        &mut terminal,
        &mut parts.app,
        parts.sources,
        crossterm::event::EventStream::new(),
        signals.recv(),
    )
    .await;
    crate::ui::shutdown::restore_terminal();
    // the scenario's Lease released, its journal closed
    sources.close().await;
    if let Some(e) = parts.app.end_session() {
        unstick_core::eprintln_safe!("unstick train: session log: {e}");
    }
    drop(log);
    let stopped = match res {
        Ok(s) => s,
        Err(e) => {
            // the console failed while running (a terminal that went away: EIO on the next
            // frame): a runtime error, exit 1, the session log already ended
            let (code, text) = crate::startup::message_as("unstick train", &e, crate::startup::want_detail());
            unstick_core::eprintln_safe!("{text}");
            return ExitCode::from(code);
        }
    };
    let tr = parts.app.training.as_ref();
    match (stopped, tr.and_then(|t| t.debrief())) {
        (None, Some(d)) => {
            unstick_core::println_safe!("{}", d.lines().join("\n"));
            unstick_core::println_safe!("\nJournals and backups of this run: {}", base.display());
            ExitCode::SUCCESS
        }
        (stopped, _) => {
            let (met, total) = tr.map(|t| (t.goals.iter().filter(|g| **g).count(), t.goals.len())).unwrap_or((0, 0));
            unstick_core::println_safe!(
                "unstick train: {name} left before the end ({met}/{total} goals met). Journals: {}",
                base.display()
            );
            match stopped {
                Some(sig) => {
                    unstick_core::eprintln_safe!("unstick train: stopped by {}", sig.name());
                    ExitCode::from(sig.exit_code())
                }
                None => ExitCode::from(1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 10: a hostile name never leaves the training directory.
    #[test]
    fn training_dirs_stay_under_their_root() {
        let root = std::path::Path::new("/data/unstick/training");
        let t: Timestamp = "2026-11-23T10:00:00Z".parse().unwrap();
        for name in ["../../../../x", "/etc", "a/../../b", "..", "x\u{1b}[2J", ""] {
            let d = training_dir(root, name, t);
            assert_eq!(d.parent(), Some(root), "{name}: {}", d.display());
            assert!(
                d.components().all(|c| matches!(c, std::path::Component::RootDir | std::path::Component::Normal(_))),
                "{}",
                d.display()
            );
            assert!(!d.to_string_lossy().chars().any(char::is_control));
        }
    }
}
