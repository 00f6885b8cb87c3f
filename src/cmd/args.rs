//! Options of the console, in groups: each subcommand flattens only the groups it reads, so its
//! `--help` lists only options that act on it. The console's own options ([`ConsoleArgs`], on
//! `cli::Cli`) may also stand before a subcommand (`unstick --context prod diagnose`, as with
//! kubectl); the subcommand's own, after it, win ([`ConsoleArgs::with_kube`] and siblings).

use std::path::PathBuf;
use std::time::Duration;

use unstick_core::sources::kube::client::{ConnectOptions, Impersonate};

/// Which cluster, as whom, and how long a request may take (kubectl's flags of the same names).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KubeArgs {
    /// kubeconfig file (default: $KUBECONFIG, several files joined by `:` merged as kubectl
    /// merges them, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Act as this user (Kubernetes impersonation, `Impersonate-User`).
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,
    /// Act as this group too (repeatable; needs --as).
    #[arg(long = "as-group", value_name = "GROUP", requires = "as_user")]
    pub as_group: Vec<String>,
    /// Bound each non-watch request (list, get, write) to this time, whole: `30s`, `2m`, or
    /// seconds as a bare number (default: response headers within 15 s, the body within 60 s).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub request_timeout: Option<Duration>,
}

impl KubeArgs {
    /// The connection options these flags give.
    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            impersonate: self.as_user.clone().map(|user| Impersonate { user, groups: self.as_group.clone() }),
            request_timeout: self.request_timeout,
        }
    }
}

/// `--request-timeout` and `--context-timeout`: `30s`, `2m`, `1h`, `1m30s` (jiff's friendly format) or bare seconds;
/// above zero (unstick always bounds its requests, so kubectl's `0` = unbounded is refused).
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = match s.trim().parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => {
            let d: jiff::SignedDuration = s.trim().parse().map_err(|e| format!("{e} (e.g. 30s, 2m, 90)"))?;
            Duration::try_from(d).map_err(|_| "must not be negative".to_string())?
        }
    };
    if d.is_zero() {
        return Err("must be above zero (unstick always bounds its requests)".into());
    }
    Ok(d)
}

/// Options of a fleet run (on `diagnose`).
#[derive(Debug, Clone, clap::Args)]
pub struct FleetArgs {
    /// Diagnose every context of the kubeconfig (the merged $KUBECONFIG files), concurrently:
    /// one row per context (findings by severity, stuck pods, incomplete inputs or the error).
    /// Exit codes then: the worst context's, 0 clean < 1 findings < 3 incomplete < 4 could not be
    /// diagnosed (unreachable, forbidden, bad credentials, timed out); 2 only when the run itself
    /// cannot start (kubeconfig, config, an unknown name in --contexts). Ceph options apply to
    /// every context.
    #[arg(long, conflicts_with_all = ["bundle", "contexts"])]
    pub all_contexts: bool,
    /// Diagnose these contexts (comma-separated or repeated), as --all-contexts does.
    #[arg(long, value_name = "A,B", value_delimiter = ',', conflicts_with = "bundle")]
    pub contexts: Vec<String>,
    /// Fleet runs: how many contexts are diagnosed at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_in_flight: u16,
    /// Fleet runs: how long one context may take, whole (`90s`, `2m`); past it its row says
    /// "timed out".
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout)]
    pub context_timeout: Duration,
}

impl FleetArgs {
    /// True when these options ask for a fleet run.
    pub fn is_fleet(&self) -> bool {
        self.all_contexts || !self.contexts.is_empty()
    }
}

/// Which namespaces to read.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScopeArgs {
    /// Read pods, PVCs and events in this namespace only.
    #[arg(short = 'n', long, value_name = "NS", conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Read all namespaces (the default unless the config sets kube.namespace).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

/// How to reach Ceph.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CephArgs {
    /// ceph.conf for rbd/ceph calls (default: $CEPH_CONF, then /etc/ceph/ceph.conf).
    #[arg(long, value_name = "FILE", env = "UNSTICK_CEPH_CONF")]
    pub ceph_conf: Option<PathBuf>,
    /// Ceph client id for rbd/ceph calls (`--id`; default: admin).
    #[arg(long, value_name = "ID")]
    pub ceph_id: Option<String>,
    /// Ceph keyring file (default: from ceph.conf).
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
    /// Run rbd/ceph inside the Rook toolbox pod of this namespace, or its operator pod where there
    /// is no toolbox (Kubernetes exec API).
    #[arg(long, value_name = "NS")]
    pub rook_namespace: Option<String>,
    /// Do not call Ceph at all (Kubernetes reads only).
    #[arg(long, conflicts_with_all = ["ceph_conf", "ceph_id", "keyring", "rook_namespace"])]
    pub no_ceph: bool,
}

/// Whether writes are made.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct WriteArgs {
    /// Never make a write call (shown as a READ-ONLY badge): no executor exists; playbooks show
    /// their steps and commands only.
    #[arg(long)]
    pub read_only: bool,
    /// Show every confirmation (re-checked live) but send nothing (shown as a DRY-RUN badge).
    #[arg(long, conflicts_with = "read_only")]
    pub dry_run: bool,
}

/// The config file.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConfigArg {
    /// Config file merged over the defaults (default: $XDG_CONFIG_HOME/unstick/config.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// The console's options: every group.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConsoleArgs {
    /// Cluster, identity, request bound.
    #[command(flatten)]
    pub kube: KubeArgs,
    /// Namespaces.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Ceph access.
    #[command(flatten)]
    pub ceph: CephArgs,
    /// Read-only / dry-run.
    #[command(flatten)]
    pub writes: WriteArgs,
    /// Config file.
    #[command(flatten)]
    pub config: ConfigArg,
    /// Open on the fleet view: every kubeconfig context diagnosed as `diagnose --all-contexts`
    /// does (4 at once, 60 s each), one row each; Enter opens that context in this console.
    #[arg(long)]
    pub fleet: bool,
}

impl ConsoleArgs {
    /// These options with a subcommand's kube flags over them (each flag given after the
    /// subcommand wins; `--as-group` values are joined).
    pub fn with_kube(mut self, sub: &KubeArgs) -> Self {
        let k = &mut self.kube;
        k.kubeconfig = sub.kubeconfig.clone().or(k.kubeconfig.take());
        k.context = sub.context.clone().or(k.context.take());
        k.as_user = sub.as_user.clone().or(k.as_user.take());
        k.as_group.extend(sub.as_group.iter().cloned());
        k.request_timeout = sub.request_timeout.or(k.request_timeout);
        self
    }

    /// These options with a subcommand's namespace choice over them (when it makes one).
    pub fn with_scope(mut self, sub: &ScopeArgs) -> Self {
        if sub.namespace.is_some() || sub.all_namespaces {
            self.scope = sub.clone();
        }
        self
    }

    /// These options with a subcommand's Ceph flags over them (`--no-ceph` anywhere wins).
    pub fn with_ceph(mut self, sub: &CephArgs) -> Self {
        let c = &mut self.ceph;
        c.ceph_conf = sub.ceph_conf.clone().or(c.ceph_conf.take());
        c.ceph_id = sub.ceph_id.clone().or(c.ceph_id.take());
        c.keyring = sub.keyring.clone().or(c.keyring.take());
        c.rook_namespace = sub.rook_namespace.clone().or(c.rook_namespace.take());
        c.no_ceph |= sub.no_ceph;
        self
    }

    /// These options with a subcommand's `--read-only` / `--dry-run` added.
    pub fn with_writes(mut self, sub: WriteArgs) -> Self {
        self.writes.read_only |= sub.read_only;
        self.writes.dry_run |= sub.dry_run && !self.writes.read_only;
        self
    }

    /// These options with a subcommand's `--config` over them.
    pub fn with_config(mut self, sub: &ConfigArg) -> Self {
        self.config.config = sub.config.clone().or(self.config.config.take());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeouts_parse_like_kubectl_s_but_never_unbounded() {
        assert_eq!(parse_timeout("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_timeout("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("45"), Ok(Duration::from_secs(45)));
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("0s").is_err());
        assert!(parse_timeout("-5s").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    #[test]
    fn a_subcommand_s_flags_win_over_the_console_s() {
        let top = ConsoleArgs {
            kube: KubeArgs { context: Some("a".into()), as_group: vec!["g1".into()], ..Default::default() },
            scope: ScopeArgs { namespace: Some("top".into()), all_namespaces: false },
            ceph: CephArgs { ceph_id: Some("admin".into()), ..Default::default() },
            writes: WriteArgs { read_only: true, dry_run: false },
            config: ConfigArg { config: Some("/top.toml".into()) },
            fleet: false,
        };
        let sub = KubeArgs { context: Some("b".into()), as_group: vec!["g2".into()], ..Default::default() };
        let merged = top
            .with_kube(&sub)
            .with_scope(&ScopeArgs { namespace: None, all_namespaces: true })
            .with_ceph(&CephArgs { no_ceph: true, ..Default::default() })
            .with_writes(WriteArgs { read_only: false, dry_run: true })
            .with_config(&ConfigArg::default());
        assert_eq!(merged.kube.context.as_deref(), Some("b"));
        assert_eq!(merged.kube.as_group, ["g1", "g2"]);
        assert!(merged.scope.all_namespaces && merged.scope.namespace.is_none());
        assert!(merged.ceph.no_ceph);
        assert_eq!(merged.ceph.ceph_id.as_deref(), Some("admin"));
        // read-only stays; a dry run under it is no dry run (the two conflict)
        assert!(merged.writes.read_only && !merged.writes.dry_run);
        assert_eq!(merged.config.config.as_deref(), Some(std::path::Path::new("/top.toml")));
    }
}
