//! `unstick collect --out DIR`: write a support bundle (layout in [`unstick_core::bundle`]) from the live
//! cluster: the Kubernetes objects as a `v1` `List`, and the raw stdout of `ceph osd blocklist ls`,
//! `rbd status`, `rbd lock ls` and `rbd info` for every RBD image the PVs reference. A read that
//! fails is recorded in `manifest.json` `errors` (and read back as missing).
//! Exit codes: 0 written (even with failed reads, which are printed), 2 error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use unstick_core::clock::Clock;

use super::args::ConsoleArgs;
use super::{ceph_cli, client, live, load_config, namespace};
use unstick_core::bundle::{self, BLOCKLIST, KUBE, Manifest, Writer};
use unstick_core::lineage::Lineage;
use unstick_core::sources::ceph::cli::{CephCli, Tool};

/// Options of `unstick collect`.
#[derive(Debug, Clone, clap::Args)]
pub struct CollectArgs {
    /// Directory to write the bundle to (created; existing files are overwritten).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Cluster, identity, request bound.
    #[command(flatten)]
    pub kube: super::args::KubeArgs,
    /// Namespaces.
    #[command(flatten)]
    pub scope: super::args::ScopeArgs,
    /// Ceph access.
    #[command(flatten)]
    pub ceph: super::args::CephArgs,
    /// Config file.
    #[command(flatten)]
    pub config: super::args::ConfigArg,
}

/// Collects and writes the bundle; prints a one-line summary (and each failed read) to stderr.
pub async fn run(console: ConsoleArgs, args: CollectArgs) -> ExitCode {
    match collect(&console, &args, &unstick_core::clock::WallClock).await {
        Ok(m) => {
            for (file, e) in &m.errors {
                unstick_core::eprintln_safe!("unstick collect: {file}: {e}");
            }
            unstick_core::eprintln_safe!(
                "unstick collect: bundle written to {} ({} read(s) failed)",
                args.out.display(),
                m.errors.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            // one line, the hint for a kubeconfig or config error; exit 2 whatever the kind
            let (_, text) = crate::startup::message_as("unstick collect", &e, crate::startup::want_detail());
            unstick_core::eprintln_safe!("{text}");
            ExitCode::from(2)
        }
    }
}

/// Writes the bundle and returns its manifest.
pub async fn collect(console: &ConsoleArgs, args: &CollectArgs, clock: &dyn Clock) -> color_eyre::Result<Manifest> {
    let cfg = load_config(console)?;
    let (client, context) = client(console).await?;
    let ns = namespace(console, &cfg);
    let timeout = Duration::from_secs(cfg.diagnose.list_timeout_seconds);
    let collected_at = clock.now();
    // Full objects for the bundle (what a person reads in it), slim ones for the lineage.
    let (full, missing, _) = live::kube_lists(&client, ns.as_deref(), timeout).await;
    let full: live::FullLists = full;
    let snap = full.slim(collected_at);
    if missing.len() == 6 {
        color_eyre::eyre::bail!("cannot list anything from context {context:?}: {}", missing.join("; "));
    }
    let w = Writer::create(&args.out)?;
    let mut manifest = Manifest {
        collected_at: Some(collected_at),
        context: Some(context),
        unstick_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        errors: Default::default(),
    };
    if !missing.is_empty() {
        manifest.errors.insert(KUBE.to_string(), missing.join("; "));
    }
    w.put(KUBE, &serde_json::to_string_pretty(&full.to_list())?)?;
    drop(full);
    match ceph_cli(console, &cfg, &client) {
        Some(cli) => ceph(&cli, &w, &Lineage::build(&snap), &mut manifest).await?,
        None => {
            manifest.errors.insert(BLOCKLIST.to_string(), "not read (--no-ceph)".into());
        }
    }
    w.manifest(&manifest)?;
    Ok(manifest)
}

/// Writes `rbd`/`ceph` raw outputs; failures go to `manifest.errors`.
async fn ceph(cli: &CephCli, w: &Writer, lin: &Lineage, manifest: &mut Manifest) -> color_eyre::Result<()> {
    match cli.run(Tool::Ceph, &["osd", "blocklist", "ls"]).await {
        Ok(out) => w.put(BLOCKLIST, &out.stdout)?,
        Err(e) => {
            manifest.errors.insert(BLOCKLIST.to_string(), e.to_string());
        }
    }
    let mut calls = vec![];
    for image in lin.images() {
        let Some(dir) = bundle::image_dir(&image) else {
            manifest.errors.insert(format!("ceph/images/{}", image.spec()), "name is not a safe path component".into());
            continue;
        };
        let spec = image.spec();
        for (file, args) in [
            ("status.json", vec!["status".to_string(), spec.clone()]),
            ("locks.json", vec!["lock".into(), "ls".into(), spec.clone()]),
            ("info.json", vec!["info".into(), spec.clone()]),
        ] {
            calls.push((format!("{dir}/{file}"), args));
        }
    }
    // The runner's semaphore bounds the processes; keep a few more futures in flight than that.
    let mut results = futures::stream::iter(calls)
        .map(|(rel, args)| async move {
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            (rel, cli.run(Tool::Rbd, &argv).await)
        })
        .buffer_unordered(8);
    while let Some((rel, r)) = results.next().await {
        match r {
            Ok(out) => w.put(&rel, &out.stdout)?,
            Err(e) => {
                manifest.errors.insert(rel, e.to_string());
            }
        }
    }
    Ok(())
}
