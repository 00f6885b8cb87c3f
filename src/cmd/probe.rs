//! `unstick probe [--device rbdN]`: run [`unstick_core::probe::scan`] on this node and print the JSON
//! report (the `probe/<node>.json` file of a support bundle).

use std::path::PathBuf;
use std::process::ExitCode;

use unstick_core::probe::{ProbeOptions, scan};

/// Options of `unstick probe`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Device to look for: `rbd3` or `/dev/rbd3` (default: every RBD/NBD device).
    #[arg(long, value_name = "DEV")]
    pub device: Option<String>,
    /// Node name to report (default: the host name); use the Kubernetes node name when they differ.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// The proc filesystem to scan (e.g. /host/proc when run in a container).
    #[arg(long, value_name = "DIR", default_value = "/proc")]
    pub proc: PathBuf,
    /// The sys filesystem (for /sys/block/<dev>/dev).
    #[arg(long, value_name = "DIR", default_value = "/sys")]
    pub sys: PathBuf,
}

/// Prints the report as JSON. Exit codes: 0 scanned (whatever it found), 2 the output could not
/// be written.
pub fn run(args: ProbeArgs) -> ExitCode {
    let mut report = scan(
        &ProbeOptions { device: args.device, proc_root: args.proc, sys_root: args.sys },
        &unstick_core::clock::WallClock,
    );
    if let Some(n) = args.node {
        report.node = n;
    }
    match serde_json::to_string_pretty(&report).map(unstick_core::text::json_escape_controls) {
        Ok(s) => {
            unstick_core::println_safe!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            unstick_core::eprintln_safe!("unstick probe: {e}");
            ExitCode::from(2)
        }
    }
}
