//! `unstick diagnose --all-contexts` / `--contexts a,b`: the CLI side of
//! [`unstick_core::fleet`] (which contexts, the one-context diagnosis, the output).

use std::process::ExitCode;
use unstick_core::clock::Clock;
use unstick_core::fleet::{self, FleetReport};
use unstick_core::sources::kube::client::{UnknownContext, load_kubeconfig};

use super::args::ConsoleArgs;
use super::diagnose::{DiagnoseArgs, Output};
use crate::startup::UsageError;

/// Runs the fleet diagnosis and prints the table; exit code as
/// [`FleetArgs::all_contexts`](super::args::FleetArgs::all_contexts) says.
pub async fn run(console: ConsoleArgs, args: DiagnoseArgs) -> ExitCode {
    let clock = unstick_core::clock::WallClock;
    match report(&console, &args, &clock).await {
        Ok(f) => {
            let out = match args.output {
                Output::Text => fleet::text(&f),
                Output::Md => fleet::markdown(&f),
                Output::Json => match super::diagnose::json(&f) {
                    Some(s) => s,
                    None => return ExitCode::from(2),
                },
            };
            unstick_core::print_safe!("{out}");
            ExitCode::from(f.exit_code())
        }
        Err(e) => {
            let (_, text) = crate::startup::message_as("unstick diagnose", &e, crate::startup::want_detail());
            unstick_core::eprintln_safe!("{text}");
            ExitCode::from(2)
        }
    }
}

/// The contexts asked for, each diagnosed as `unstick diagnose --context NAME` would.
pub async fn report(console: &ConsoleArgs, args: &DiagnoseArgs, clock: &dyn Clock) -> color_eyre::Result<FleetReport> {
    if console.kube.context.is_some() {
        return Err(UsageError("--context cannot be combined with --all-contexts or --contexts".into()).into());
    }
    // a bad config file fails the run, not every row
    super::load_config(console)?;
    let known: Vec<String> =
        load_kubeconfig(&console.kube.connect_options())?.contexts.into_iter().map(|c| c.name).collect();
    let names = if args.fleet.all_contexts {
        known
    } else {
        let mut names: Vec<String> = vec![];
        for n in &args.fleet.contexts {
            if !known.contains(n) {
                return Err(UnknownContext { name: Some(n.clone()), known }.into());
            }
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        names
    };
    let (in_flight, timeout) = (usize::from(args.fleet.max_in_flight), args.fleet.context_timeout);
    Ok(fleet::diagnose_all(
        names,
        in_flight,
        timeout,
        || clock.now(),
        |context| {
            let mut one = console.clone();
            one.kube.context = Some(context);
            async move { super::diagnose::report(&one, args, clock).await.map_err(|e| crate::startup::one_line(&e)) }
        },
    )
    .await)
}
