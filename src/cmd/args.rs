//! Options shared by the console and the live subcommands (flattened into `cli::Cli`).

use std::path::PathBuf;

/// Connection options shared by the console and live subcommands.
#[derive(Debug, clap::Args)]
pub struct ConsoleArgs {
    /// kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// Watch pods, PVCs and events in this namespace only.
    #[arg(short = 'n', long, value_name = "NS", conflicts_with = "all_namespaces", global = true)]
    pub namespace: Option<String>,
    /// Watch all namespaces (the default unless the config sets kube.namespace).
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,
    /// ceph.conf for rbd/ceph calls (default: $CEPH_CONF, then /etc/ceph/ceph.conf).
    #[arg(long, value_name = "FILE", env = "UNSTICK_CEPH_CONF", global = true)]
    pub ceph_conf: Option<PathBuf>,
    /// Ceph client id for rbd/ceph calls (`--id`; default: admin).
    #[arg(long, value_name = "ID", global = true)]
    pub ceph_id: Option<String>,
    /// Ceph keyring file (default: from ceph.conf).
    #[arg(long, value_name = "FILE", global = true)]
    pub keyring: Option<PathBuf>,
    /// Run rbd/ceph inside the Rook toolbox pod of this namespace (Kubernetes exec API).
    #[arg(long, value_name = "NS", global = true)]
    pub rook_namespace: Option<String>,
    /// Do not call Ceph at all (Kubernetes panes only).
    #[arg(long, conflicts_with_all = ["ceph_conf", "ceph_id", "keyring", "rook_namespace"], global = true)]
    pub no_ceph: bool,
    /// Never make a write call (shown as a READ-ONLY badge): no executor exists; playbooks show
    /// their steps and commands only.
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Show every confirmation (re-checked live) but send nothing (shown as a DRY-RUN badge).
    #[arg(long, global = true, conflicts_with = "read_only")]
    pub dry_run: bool,
    /// Config file merged over the defaults (default: $XDG_CONFIG_HOME/unstick/config.toml).
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
}
