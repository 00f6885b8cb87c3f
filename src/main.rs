//! The `unstick` binary: parses the command line ([`unstick::cli`]) and runs the command.

use std::process::ExitCode;

use unstick::cli::Subcommand;

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
        None => rt.block_on(unstick::cmd::console::run(top)),
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
