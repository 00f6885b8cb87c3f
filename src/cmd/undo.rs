//! `unstick undo INCIDENT [--step N] [--yes-i-typed NAME] [--not-rebooted NODE]`: undoes the newest undoable step of an
//! incident (or step N) with the console's rules: the inverse is re-checked live and approved by
//! the safety rules, the confirmation is printed, a reversible inverse needs `y` on stdin, an
//! irreversible one the typed object name (`--yes-i-typed NAME` or the prompt); then `intent` is
//! journaled, the write sent, `outcome` journaled. `--dry-run` prints the confirmation only;
//! `--read-only` refuses. When the journal names a volume, its Lease (`remedy.lease_namespace` /
//! `unstick-<pv>`, the one the console holds) is taken before the prompt and released at the end;
//! another holder, even an expired one, is a refusal naming that holder. Exit codes: 0 undone (or
//! dry-run shown), 1 refused or failed, 2 usage or error.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use super::args::ConsoleArgs;
use super::{ceph_cli, client, load_config};
use unstick_core::remedy::action::Inverse;
use unstick_core::remedy::action::executor::Executor;
use unstick_core::remedy::action::precheck::Reader;
use unstick_core::remedy::action::safety::Overrides;
use unstick_core::remedy::journal::{self, Author, Journal};
use unstick_core::remedy::run::lease::{Held, LeaseManager, lease_name, session_identity};
use unstick_core::remedy::run::{Confirmation, confirm_undo, prepare_undo, typed_part};

/// Options of `unstick undo`.
#[derive(Debug, Clone, clap::Args)]
pub struct UndoArgs {
    /// The incident (see `unstick journal`).
    pub incident: String,
    /// Undo this playbook step (its number as the playbook and `unstick journal` show it, or its
    /// id `stale-lock/3`) instead of the newest undoable one.
    #[arg(long, value_name = "N")]
    pub step: Option<String>,
    /// The confirmation without a prompt: the object's name for an irreversible inverse, `y` for a
    /// reversible one.
    #[arg(long, value_name = "NAME")]
    pub yes_i_typed: Option<String>,
    /// Unfence NODE although it is not shown to have rebooted since its fence (its bootID is
    /// unchanged, or no fence of it was journaled): the typed override of the guarded unfence.
    #[arg(long, value_name = "NODE")]
    pub not_rebooted: Option<String>,
    /// Incident directory base (default: `remedy.journal_dir`, else $XDG_DATA_HOME/unstick/incidents).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
    /// Cluster, identity, request bound.
    #[command(flatten)]
    pub kube: super::args::KubeArgs,
    /// Ceph access.
    #[command(flatten)]
    pub ceph: super::args::CephArgs,
    /// Read-only / dry-run.
    #[command(flatten)]
    pub writes: super::args::WriteArgs,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
}

/// The confirmation as printed.
pub fn render(c: &Confirmation) -> String {
    let mut out = format!("{}: {}\n", unstick_core::remedy::journal::step::step_label(&c.step_id), c.action.summary());
    out.push_str(&format!("  command:    {}\n", c.command));
    for o in &c.objects {
        out.push_str(&format!("  object:     {o}\n"));
    }
    for p in &c.precheck {
        out.push_str(&format!("  re-checked: {p}\n"));
    }
    out.push_str(&format!("  reversible: {}\n", if c.reversible { "yes" } else { "NO" }));
    match &c.inverse {
        Inverse::Action { action } => out.push_str(&format!("  inverse:    {}\n", action.summary())),
        Inverse::Irreversible { why } => out.push_str(&format!("  inverse:    none — {why}\n")),
    }
    for w in &c.warnings {
        out.push_str(&format!("  WARNING:    {w}\n"));
    }
    out
}

fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    unstick_core::eprintln_safe!("unstick undo: {msg}");
    ExitCode::from(code)
}

/// Runs `unstick undo`.
pub async fn run(console: ConsoleArgs, args: UndoArgs) -> ExitCode {
    let cfg = match load_config(&console) {
        Ok(c) => c,
        Err(e) => return fail(2, format!("{e:#}")),
    };
    let base = super::journal::base(args.dir.as_ref(), &cfg);
    if super::train::is_training_dir(&base) {
        // a training journal's writes went to the simulation: their inverse must never reach the
        // kubeconfig's real cluster
        return fail(
            1,
            format!(
                "{} is a training journal: its steps ran on the simulation, so nothing there can be undone on a cluster (undo inside `unstick train` with u)",
                base.display()
            ),
        );
    }
    let path = base.join(&args.incident).join(journal::JOURNAL_FILE);
    if args.incident.contains('/') || !path.is_file() {
        return fail(2, format!("no incident {:?} under {} (run `unstick journal`)", args.incident, base.display()));
    }
    let rep = match journal::read(&path) {
        Ok(r) => r,
        Err(e) => return fail(2, e),
    };
    for p in &rep.problems {
        unstick_core::eprintln_safe!("unstick undo: note: {p}");
    }
    let only = match args.step.as_deref().map(|w| rep.resolve_step(w)).transpose() {
        Ok(o) => o,
        Err(e) => return fail(1, e),
    };
    let plan = rep.undo_plan(only);
    let Some(item) = plan.items.first() else {
        for (n, why) in &plan.skipped {
            unstick_core::eprintln_safe!("  {}: {why}", rep.label_of(*n));
        }
        return fail(
            1,
            format!(
                "nothing to undo in {}{}",
                args.incident,
                args.step.as_deref().map(|n| format!(" step {n}")).unwrap_or_default()
            ),
        );
    };
    let (kube, context) = match client(&console).await {
        Ok(c) => c,
        Err(e) => {
            let (_, text) = crate::startup::message_as("unstick undo", &e, crate::startup::want_detail());
            unstick_core::eprintln_safe!("{text}");
            return ExitCode::from(2);
        }
    };
    let Some(ceph) = ceph_cli(&console, &cfg, &kube) else {
        return fail(2, "--no-ceph: the live re-check needs Ceph access");
    };
    let api_timeout = Duration::from_secs(cfg.remedy.api_timeout_seconds);
    let reader = Reader { kube: kube.clone(), ceph: ceph.clone(), api_timeout, clock: unstick_core::clock::wall() };
    let ov = Overrides { unfence_not_rebooted: args.not_rebooted.clone(), ..Overrides::default() };
    let c = match prepare_undo(&reader, item, &ov).await {
        Ok(c) => c,
        Err(e) => return fail(1, format!("refused: {e}")),
    };
    unstick_core::print_safe!("{}", render(&c));
    if console.writes.dry_run {
        unstick_core::println_safe!("dry-run: nothing was sent");
        return ExitCode::SUCCESS;
    }
    let exec = match Executor::new(console.writes.read_only, kube, ceph, api_timeout) {
        Ok(e) => e,
        Err(e) => return fail(1, e),
    };
    let volume = rep.volume();
    let mut lease = match &volume {
        Some(pv) => {
            let identity = session_identity(&journal::operator());
            let duration = Duration::from_secs(cfg.remedy.lease_duration_seconds);
            let mgr =
                LeaseManager::new(&exec, &cfg.remedy.lease_namespace, &identity, duration, unstick_core::clock::wall());
            match mgr.acquire(&lease_name(pv)).await {
                Ok(held) => Some((mgr, held)),
                Err(e) => return fail(1, format!("refused, nothing was sent: {e}")),
            }
        }
        None => None,
    };
    let code = confirm_and_send(&args, &base, context, &cfg, &exec, &reader, c, volume, &mut lease).await;
    if let Some((mgr, held)) = lease
        && let Err(e) = mgr.release(held).await
    {
        unstick_core::eprintln_safe!("unstick undo: releasing the Lease: {e}");
    }
    code
}

/// The prompt, the Lease renewal right before sending, and the send.
#[allow(clippy::too_many_arguments)]
async fn confirm_and_send(
    args: &UndoArgs,
    base: &std::path::Path,
    context: String,
    cfg: &unstick_core::config::Config,
    exec: &Executor,
    reader: &Reader,
    c: Confirmation,
    volume: Option<String>,
    lease: &mut Option<(LeaseManager, Held)>,
) -> ExitCode {
    let typed = match args.yes_i_typed.clone() {
        Some(t) => t,
        None => {
            match &c.typed_name {
                Some(name) if typed_part(name) != name => {
                    unstick_core::print_safe!(
                        "irreversible: type the last characters of {name}, `{}`, to confirm: ",
                        typed_part(name)
                    )
                }
                Some(name) => unstick_core::print_safe!("irreversible: type `{name}` to confirm: "),
                None => unstick_core::print_safe!("reversible: type y to confirm: "),
            }
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).is_err() {
                return fail(1, "no confirmation read: nothing was sent");
            }
            line.trim().to_string()
        }
    };
    let typed = match &c.typed_name {
        Some(_) => Some(typed),
        None if typed == "y" || typed == "Y" => None,
        None => return fail(1, "not confirmed (type y): nothing was sent"),
    };
    let author = Author { operator: journal::operator(), context };
    let mut j = match Journal::open(base, &args.incident, author) {
        Ok(j) => j,
        Err(e) => return fail(2, e),
    };
    j.set_volume(volume);
    if let Some((mgr, held)) = lease.as_mut()
        && let Err(e) = mgr.renew(held).await
    {
        return fail(1, format!("refused, nothing was sent: the volume's Lease was lost while waiting: {e}"));
    }
    match confirm_undo(exec, &mut j, reader, c, typed.as_deref(), &cfg.remedy).await {
        Ok(r) if r.ok => {
            unstick_core::println_safe!("undone: {}", if r.stderr.is_empty() { "ok".into() } else { r.stderr });
            ExitCode::SUCCESS
        }
        Ok(r) => fail(1, format!("the undo failed (journaled): {}", r.stderr)),
        Err(e) => fail(1, format!("refused, nothing was sent: {e}")),
    }
}
