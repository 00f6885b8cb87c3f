//! `unstick completions SHELL` (clap_complete's scripts) and `unstick man [SUBCOMMAND]`
//! (clap_mangen's roff), both from the clap command of [`crate::cli`]. The scripts are static:
//! the embedded `train` scenario names are written into them as the values `unstick train
//! <TAB>` proposes (parsing still accepts any name and says which exist).

use std::io::Write;
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;

/// The program name completion scripts register and man pages carry.
const NAME: &str = "unstick";

/// The command the scripts and pages describe: [`crate::cli::command`], with `train`'s scenario
/// argument listing the embedded scenarios as its values.
pub fn documented_command() -> clap::Command {
    let names = crate::cmd::train::names();
    crate::cli::command(NAME).mut_subcommand("train", |train| {
        train.mut_arg("scenario", |a| a.value_parser(PossibleValuesParser::new(names)))
    })
}

/// Writes the completion script of `shell` to `out`. Exit code 0, or 1 when `out` fails.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> ExitCode {
    let mut cmd = documented_command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, NAME, &mut buf);
    write_all(out, &buf)
}

/// Writes the man page of unstick, or of `subcommand` (named `unstick-SUBCOMMAND`), to `out`.
/// Exit code 0, 2 when there is no such subcommand, 1 when `out` fails.
pub fn man(subcommand: Option<&str>, out: &mut dyn Write) -> ExitCode {
    let mut cmd = documented_command();
    cmd.build();
    let page = match subcommand {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => sub.clone().name(format!("{NAME}-{name}")),
            None => {
                let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
                unstick_core::eprintln_safe!(
                    "unstick man: no subcommand {:?}; there are: {}",
                    unstick_core::text::sanitize(name),
                    names.join(", ")
                );
                return ExitCode::from(2);
            }
        },
    };
    let mut buf = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).render(&mut buf) {
        unstick_core::eprintln_safe!("unstick man: {e}");
        return ExitCode::from(1);
    }
    write_all(out, &buf)
}

fn write_all(out: &mut dyn Write, bytes: &[u8]) -> ExitCode {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            unstick_core::eprintln_safe!("unstick: writing to stdout: {e}");
            ExitCode::from(1)
        }
    }
}
