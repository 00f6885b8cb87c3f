//! The non-interactive subcommands: `diagnose`, `collect`, `probe`, `journal`, `undo`,
//! `sessions`, `export`. Each returns the process exit
//! code it documents; errors are printed to stderr as one line with context.

pub mod args;
pub mod collect;
pub mod console;
pub mod diagnose;
pub mod fleet;
pub mod journal;
pub mod live;
pub mod probe;
pub mod raw_list;
pub mod sessions;
pub mod train;
pub mod undo;

use color_eyre::eyre::WrapErr;

pub use self::args::ConsoleArgs;
use unstick_core::config::Config;
use unstick_core::sources::ceph::cli::{Access, CephCli};

/// The config of `--config FILE` (must exist), else the XDG user file merged over the defaults.
pub fn load_config(args: &ConsoleArgs) -> color_eyre::Result<Config> {
    Ok(match &args.config.config {
        Some(p) => Config::load(Some(p), true)?,
        None => Config::load(Config::default_path().as_deref(), false)?,
    })
}

/// The namespace to read, as the console chooses it: `--namespace`, else all with
/// `--all-namespaces`, else `kube.namespace` from the config ("" = all).
pub fn namespace(args: &ConsoleArgs, cfg: &Config) -> Option<String> {
    match (&args.scope.namespace, args.scope.all_namespaces, cfg.kube.namespace.as_str()) {
        (Some(ns), _, _) => Some(ns.clone()),
        (None, true, _) | (None, false, "") => None,
        (None, false, ns) => Some(ns.to_string()),
    }
}

/// The Ceph runner for these options, or `None` with `--no-ceph`.
pub fn ceph_cli(args: &ConsoleArgs, cfg: &Config, client: &kube::Client) -> Option<CephCli> {
    let c = &args.ceph;
    if c.no_ceph {
        return None;
    }
    let access = match &c.rook_namespace {
        Some(ns) => Access::Rook { namespace: ns.clone(), selector: cfg.ceph.rook_toolbox_selector.clone() },
        None => cfg.ceph.access(c.ceph_conf.clone(), c.ceph_id.clone(), c.keyring.clone()),
    };
    Some(CephCli::new(access, cfg.ceph.clone(), Some(client.clone())))
}

/// A Kubernetes client for these options, and the context name.
pub async fn client(args: &ConsoleArgs) -> color_eyre::Result<(kube::Client, String)> {
    let conn = unstick_core::sources::kube::client::connect_with(&args.kube.connect_options())
        .await
        .wrap_err("connecting to the cluster (check --kubeconfig / --context)")?;
    Ok((conn.client, conn.context))
}
