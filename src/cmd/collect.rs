//! `unstick collect --out DIR`: write a support bundle (layout in [`unstick_core::bundle`]) from the live
//! cluster, in the memory of one page of objects, not of the cluster (issue 29):
//!
//! - the Kubernetes objects as a `v1` `List` (`kube.json`, one item a line): the six kinds are
//!   listed concurrently, 500 objects a page, each page written to the bundle as it arrives, each
//!   item as the API server sent it (only `managedFields` and the last-applied annotation
//!   dropped: nothing is decoded into typed objects and encoded again); only the PVs are kept
//!   (slim), for the images to read;
//! - Ceph with the console's scan, started as soon as the PVs are listed (beside the other
//!   lists): one `ceph osd blocklist ls`, `rbd ls -l` per pool beside one
//!   `ceph tell osd.N dump_watchers` per OSD, then `rbd lock ls` for the images `ls -l` says are
//!   locked and `rbd image-meta list` for those with a client (without the caps for
//!   `dump_watchers`: `rbd status` and `rbd lock ls` per image), `ceph.max_concurrent` reads at a
//!   time, each with its timeouts, every image's files written as soon as it is read. `rbd ls -l`
//!   stays: it is the only bulk read of which images are locked (one `rbd lock ls` per image
//!   costs a process each: 20 times the time at 2,000 images, README "Scale benchmark"). A Ceph
//!   that stops answering ends the scan (three images in a row without an answer, or the fast
//!   path unanswered) and the manifest says how many images were not read and why (`ceph`,
//!   typed, and `errors["ceph"]` in words);
//! - csi-addons' NetworkFences and NetworkFenceClasses when their CRDs exist
//!   (`csiaddons/*.json`): a Fenced fence's blocklist entries are its own, not leftovers.
//!
//! A read that fails is recorded in `manifest.json` `errors` (and read back as missing). A
//! progress bar is drawn on stderr when it is a terminal.
//! Exit codes: 0 written (even with failed reads, which are printed), 2 error.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use k8s_openapi::api as k8s;
use unstick_core::clock::Clock;

use super::args::ConsoleArgs;
use super::raw_list;
use super::raw_list::ListError;
use super::{ceph_cli, client, load_config, namespace};
use unstick_core::bundle::{self, KUBE, ListPart, Manifest, Writer};
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::model::objects::PersistentVolume;

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

/// Failed reads printed one a line; past this many, a count (they are all in `manifest.json`).
const ERRORS_PRINTED: usize = 10;

/// Collects and writes the bundle; prints a one-line summary (and the failed reads) to stderr.
pub async fn run(console: ConsoleArgs, args: CollectArgs) -> ExitCode {
    match collect(&console, &args, &unstick_core::clock::WallClock, &progress_bar()).await {
        Ok(m) => {
            for (file, e) in m.errors.iter().take(ERRORS_PRINTED) {
                unstick_core::eprintln_safe!("unstick collect: {file}: {e}");
            }
            if m.errors.len() > ERRORS_PRINTED {
                let more = m.errors.len() - ERRORS_PRINTED;
                unstick_core::eprintln_safe!("unstick collect: … and {more} more failed read(s) in manifest.json");
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

/// The progress bars on stderr when it is a terminal (objects listed, images read: both move at
/// once), else bars that draw nothing.
fn progress_bar() -> MultiProgress {
    if std::io::stderr().is_terminal() {
        MultiProgress::with_draw_target(ProgressDrawTarget::stderr())
    } else {
        MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
    }
}

/// Writes the bundle and returns its manifest; `bars` show the objects listed and the images
/// read. The PVs are listed beside the other kinds; once they are (and name the images), the
/// Ceph part runs while the other lists go on.
pub async fn collect(
    console: &ConsoleArgs,
    args: &CollectArgs,
    clock: &dyn Clock,
    bars: &MultiProgress,
) -> color_eyre::Result<Manifest> {
    let cfg = load_config(console)?;
    let (client, context) = client(console).await?;
    let ns = namespace(console, &cfg);
    let timeout = Duration::from_secs(cfg.diagnose.list_timeout_seconds);
    let collected_at = clock.now();
    let w = Writer::create(&args.out)?;
    let kube_bar = bars.add(ProgressBar::no_length());
    kube_bar.set_style(ProgressStyle::with_template("{spinner} kubernetes: {pos} objects listed ({elapsed})")?);
    kube_bar.enable_steady_tick(Duration::from_millis(120));
    let mut manifest = Manifest {
        collected_at: Some(collected_at),
        context: Some(context.clone()),
        unstick_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        server_version: unstick_core::remedy::playbook::version::read_server_version(&client, timeout)
            .await
            .ok()
            .map(|v| format!("{}.{}", v.major, v.minor)),
        ..Default::default()
    };
    let ceph = ceph_cli(console, &cfg, &client);
    let ceph_bar = bars.add(ProgressBar::no_length());
    ceph_bar.set_style(ProgressStyle::with_template("{spinner} ceph: {bar:30} {pos}/{len} images ({elapsed})")?);
    let width = cfg.ceph.max_concurrent;
    // the Ceph part once the PVs are listed, unless their list failed (then after every list)
    let pvs_then_ceph = async {
        let listed = list_pvs(&client, timeout, &w, &kube_bar).await?;
        let mut part = Manifest::default();
        if let (Some(cli), Ok(_)) = (&ceph, &listed.1.1) {
            ceph_part(cli, &w, &listed.0, width, &mut part, &ceph_bar).await?;
        }
        Ok::<_, color_eyre::Report>((listed, part))
    };
    let (others, pvs) = tokio::join!(list_others(&client, ns.as_deref(), timeout, &w, &kube_bar), pvs_then_ceph);
    let ((pvs, (pv_part, pv_listed)), ceph_part_read) = pvs?;
    let ceph_done = pv_listed.is_ok();
    let [n, p, pc, va, ev] = others?;
    let missing = put_kube(&w, [n, p, pc, (pv_part, pv_listed), va, ev])?;
    if missing.len() == 6 {
        let _ = std::fs::remove_dir(&args.out); // only when empty: the directory was ours
        color_eyre::eyre::bail!("cannot list anything from context {context:?}: {}", missing.join("; "));
    }
    if !missing.is_empty() {
        manifest.errors.insert(KUBE.to_string(), missing.join("; "));
    }
    manifest.errors.extend(ceph_part_read.errors);
    manifest.ceph = ceph_part_read.ceph;
    // Medik8s remediators acting on nodes: the diagnosis says so (not installed = 404, kept)
    w.put_json(bundle::REMEDIATORS, &unstick_core::sources::kube::remediators::list(&client, timeout).await)?;
    // csi-addons' fences own the blocklist entries they made: written when csi-addons is installed
    match unstick_core::sources::kube::network_fence::read_all(&client, timeout).await {
        Ok(c) => {
            if let Some(fences) = &c.fences {
                bundle::put_fences(&w, fences, &c.classes)?;
            }
            if let Some(nodes) = &c.nodes {
                bundle::put_csiaddons_nodes(&w, nodes)?;
            }
        }
        Err(e) => {
            manifest.errors.insert(unstick_core::bundle::NETWORK_FENCES.to_string(), e.to_string());
        }
    }
    match &ceph {
        Some(cli) if !ceph_done => ceph_part(cli, &w, &pvs, width, &mut manifest, &ceph_bar).await?,
        Some(_) => {}
        None => {
            manifest.errors.insert(unstick_core::bundle::BLOCKLIST.to_string(), "not read (--no-ceph)".into());
        }
    }
    kube_bar.finish_and_clear();
    ceph_bar.finish_and_clear();
    w.manifest(&manifest)?;
    Ok(manifest)
}

/// The Ceph part: the images the PVs name, read into the bundle (see [`bundle::ceph_to_bundle`]).
async fn ceph_part(
    cli: &unstick_core::sources::ceph::cli::CephCli,
    w: &Writer,
    pvs: &[Arc<PersistentVolume>],
    width: usize,
    manifest: &mut Manifest,
    bar: &ProgressBar,
) -> color_eyre::Result<()> {
    let snap = Snapshot { pvs: pvs.to_vec(), ..Default::default() };
    let images = Lineage::build(&snap).images();
    bar.set_length(images.len() as u64);
    bar.enable_steady_tick(Duration::from_millis(120));
    let progress = |done: usize, _| bar.set_position(done as u64);
    bundle::ceph_to_bundle(cli, w, images, width, manifest, &progress).await?;
    Ok(())
}

/// A kind's part of `kube.json` and how its list ended.
type Listed = (ListPart, Result<(), ListError>);

/// Lists the PVs into their part of `kube.json`, keeping them (slim) for the images to read.
async fn list_pvs(
    client: &kube::Client,
    timeout: Duration,
    w: &Writer,
    bar: &ProgressBar,
) -> color_eyre::Result<(Vec<Arc<PersistentVolume>>, Listed)> {
    let part = w.list_part(KUBE, "pvs")?;
    let (pvs, listed) = stream_kind::<k8s::core::v1::PersistentVolume>(client, None, timeout, part, bar, true).await;
    Ok((pvs, listed))
}

/// Lists the other five kinds concurrently into their parts of `kube.json` (nodes, pods, PVCs,
/// VolumeAttachments, events, each in the API server's order).
async fn list_others(
    client: &kube::Client,
    namespace: Option<&str>,
    timeout: Duration,
    w: &Writer,
    bar: &ProgressBar,
) -> color_eyre::Result<[Listed; 5]> {
    let part = |name: &str| w.list_part(KUBE, name);
    let (c, ns, t) = (client, namespace, timeout);
    let (n, p, pc, va, ev) = tokio::join!(
        stream_kind::<k8s::core::v1::Node>(c, None, t, part("nodes")?, bar, false),
        stream_kind::<k8s::core::v1::Pod>(c, ns, t, part("pods")?, bar, false),
        stream_kind::<k8s::core::v1::PersistentVolumeClaim>(c, ns, t, part("pvcs")?, bar, false),
        stream_kind::<k8s::storage::v1::VolumeAttachment>(c, None, t, part("vas")?, bar, false),
        stream_kind::<k8s::core::v1::Event>(c, ns, t, part("events")?, bar, false),
    );
    Ok([n.1, p.1, pc.1, va.1, ev.1])
}

/// Joins the six kinds' parts into `kube.json` (unless none could be listed) and returns one line
/// per kind that could not be listed (whole or in part: the pages before the error are in the
/// file, and the line says how many items).
fn put_kube(w: &Writer, listed: [Listed; 6]) -> color_eyre::Result<Vec<String>> {
    let mut missing = vec![];
    let mut parts = vec![];
    let names = ["nodes", "pods", "persistentvolumeclaims", "persistentvolumes", "volumeattachments", "events"];
    for (what, (part, r)) in names.into_iter().zip(listed) {
        if let Err(e) = r {
            let written = match part.items() {
                0 => String::new(),
                k => format!(" ({k} items written before the error)"),
            };
            missing.push(format!("kubernetes {what}: {}{written}", e.message));
        }
        parts.push(part);
    }
    if missing.len() < 6 {
        w.put_list(KUBE, parts)?;
    }
    Ok(missing)
}

/// Where one kind's listed items go: its part of `kube.json`, the progress bar, the slim PVs.
struct KindSink {
    api_version: &'static str,
    kind: &'static str,
    part: ListPart,
    bar: ProgressBar,
    /// Kept when asked for (the PVs, for the images to read).
    pvs: Option<Vec<Arc<PersistentVolume>>>,
    /// Items that were not JSON objects (left out).
    bad: usize,
}

impl KindSink {
    fn item(&mut self, raw: &str) {
        self.bar.inc(1);
        if !self.part.push_raw(self.api_version, self.kind, raw) {
            self.bad += 1;
        } else if let Some(pvs) = &mut self.pvs {
            pvs.extend(serde_json::from_str::<PersistentVolume>(raw).ok().map(Arc::new));
        }
    }
}

/// Lists kind `K` (in `namespace`, else all; `None` for a cluster-scoped kind) into `part`, each
/// item written as the API server sent it (see [`ListPart::push_raw`] and
/// [`raw_list::list_raw`]); with `keep_pvs`, also returns the slim PVs. An item that is not a
/// JSON object is left out and the kind's list reported as failed.
async fn stream_kind<K>(
    client: &kube::Client,
    namespace: Option<&str>,
    timeout: Duration,
    part: ListPart,
    bar: &ProgressBar,
    keep_pvs: bool,
) -> (Vec<Arc<PersistentVolume>>, Listed)
where
    K: kube::Resource<DynamicType = ()> + k8s_openapi::Resource,
{
    let sink = KindSink {
        api_version: K::API_VERSION,
        kind: K::KIND,
        part,
        bar: bar.clone(),
        pvs: keep_pvs.then(Vec::new),
        bad: 0,
    };
    let (sink, r) = raw_list::list_raw::<K, _>(client, namespace, timeout, sink, KindSink::item).await;
    let r = r.and_then(|()| match sink.bad {
        0 => Ok(()),
        n => Err(ListError::bad_items(&K::plural(&()), n, "not JSON objects, left out")),
    });
    (sink.pvs.unwrap_or_default(), (sink.part, r))
}
