//! Remediation helpers for the harness tests: live snapshots, runners holding the volume's Lease,
//! acting on the current step, a fresh diagnosis, and the node's and controllers' parts that the
//! harness has nobody for (no kubelet, no controller-manager).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ::kube::api::{Api, DeleteParams, ListParams};
use k8s_openapi::api::core::v1::Pod;
use unstick_core::config::Config;
use unstick_core::diagnose::{Finding, PatternId};
use unstick_core::lineage::Lineage;
use unstick_core::model::{ImageRef, Snapshot};
use unstick_core::remedy::action::WriteAction;
use unstick_core::remedy::action::executor::{ExecResult, Executor};
use unstick_core::remedy::action::precheck::{LiveState, Reader};
use unstick_core::remedy::action::safety::Overrides;
use unstick_core::remedy::journal::{self, Author, Journal};
use unstick_core::remedy::playbook::version::{ServerVersion, read_server_version};
use unstick_core::remedy::playbook::{Playbook, StepKind, Target, build};
use unstick_core::remedy::run::lease::{LeaseManager, lease_name};
use unstick_core::remedy::run::{Runner, RunnerParts};
use unstick_core::sources::ceph::cli::{Access, CephCli, Tool};
use unstick_core::sources::kube::watched::Watched;

use super::{Harness, cluster};

/// Listed slim objects (read through [`Watched`], as the console's watchers read them).
fn arcs<T>(v: Vec<Watched<T>>) -> Vec<Arc<T>> {
    v.into_iter().map(|w| Arc::new(w.into_inner())).collect()
}

/// Re-seeds `default` when dropped (also when the test panics).
pub struct Reseed;
impl Drop for Reseed {
    fn drop(&mut self) {
        cluster(&["seed", "default"]);
    }
}

/// `$UNSTICK_HARNESS_DIR/seed.json` of the last seed.
pub fn seed_json() -> serde_json::Value {
    let dir = std::env::var("UNSTICK_HARNESS_DIR").expect("UNSTICK_HARNESS_DIR");
    let text = std::fs::read_to_string(Path::new(&dir).join("seed.json")).expect("seed.json after seeding");
    serde_json::from_str(&text).expect("seed.json is JSON")
}

impl Harness {
    /// A Ceph runner on the harness cluster (admin).
    pub fn ceph(&self) -> CephCli {
        let access = Access::Local { conf: Some(self.ceph_conf.clone()), id: None, keyring: None };
        CephCli::new(access, Config::defaults().ceph, None)
    }

    /// An admin client.
    pub async fn client(&self) -> ::kube::Client {
        unstick_core::sources::kube::client(Some(&self.admin), None).await.expect("admin client").0
    }

    /// Live reads as admin.
    pub async fn reader(&self) -> Reader {
        Reader {
            kube: self.client().await,
            ceph: self.ceph(),
            api_timeout: Duration::from_secs(15),
            clock: unstick_core::clock::wall(),
        }
    }

    /// Writes as admin.
    pub async fn executor(&self) -> Executor {
        Executor::new(false, self.client().await, self.ceph(), Duration::from_secs(15)).expect("read-write executor")
    }

    /// The API server's version, read live like the console's worker does.
    pub async fn server_version(&self) -> ServerVersion {
        read_server_version(&self.client().await, Duration::from_secs(15)).await.expect("GET /version")
    }

    /// A snapshot of everything, read live (what the console would have when the finding is made).
    pub async fn snapshot(&self, images: &[ImageRef]) -> Snapshot {
        let c = self.client().await;
        let lp = ListParams::default();
        use unstick_core::model::objects::{
            Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment,
        };
        let mut snap = Snapshot {
            nodes: arcs(Api::<Watched<Node>>::all(c.clone()).list(&lp).await.unwrap().items),
            pods: arcs(Api::<Watched<Pod>>::all(c.clone()).list(&lp).await.unwrap().items),
            pvcs: arcs(Api::<Watched<PersistentVolumeClaim>>::all(c.clone()).list(&lp).await.unwrap().items),
            pvs: arcs(Api::<Watched<PersistentVolume>>::all(c.clone()).list(&lp).await.unwrap().items),
            volume_attachments: arcs(Api::<Watched<VolumeAttachment>>::all(c.clone()).list(&lp).await.unwrap().items),
            events: arcs(Api::<Watched<Event>>::all(c).list(&lp).await.unwrap().items),
            taken_at: Some(jiff::Timestamp::now()),
            ..Default::default()
        };
        let cli = self.ceph();
        for i in images {
            snap.ceph.images.insert(i.clone(), unstick_core::sources::ceph::read_image(&cli, i).await);
        }
        snap.ceph.blocklist = Some(unstick_core::sources::ceph::read_blocklist(&cli).await);
        snap
    }

    /// A runner for `pattern` on PV `pv`, built for the live server version, holding the volume's
    /// Lease, journaling under `base`.
    pub async fn runner(&self, base: &Path, pattern: &str, pv: &str, image: Option<ImageRef>) -> Runner {
        let v = self.server_version().await;
        self.runner_for(base, pattern, pv, image, Some(v)).await
    }

    /// [`Harness::runner`] with the playbook built for server version `version`.
    pub async fn runner_for(
        &self,
        base: &Path,
        pattern: &str,
        pv: &str,
        image: Option<ImageRef>,
        version: Option<ServerVersion>,
    ) -> Runner {
        let snap = self.snapshot(image.as_slice()).await;
        let lin = Lineage::build(&snap);
        let cfg = Config::defaults().remedy;
        let t = Target::for_volume(&snap, &lin, pv).expect("pv in the harness").with_server_version(version);
        let playbook = build(pattern, &t, &cfg).expect("playbook");
        let baseline = LiveState::from_snapshot(&snap, &playbook.scope, jiff::Timestamp::now());
        let incident = journal::new_incident_id(pattern, pv, jiff::Timestamp::now());
        let j = Journal::open(base, &incident, Author { operator: journal::operator(), context: "kh".into() }).unwrap();
        let exec = self.executor().await;
        let mgr = LeaseManager::new(
            &exec,
            "kube-system",
            &format!("test#{pattern}"),
            Duration::from_secs(60),
            unstick_core::clock::wall(),
        );
        let held = mgr.acquire(&lease_name(pv)).await.expect("lease");
        let parts =
            RunnerParts { playbook, journal: j, reader: self.reader().await, executor: Some(exec), baseline, cfg };
        let mut r = Runner::new(parts).expect("runner");
        r.set_lease(mgr, held);
        r
    }

    /// A fresh diagnosis of the live state, read the way the console reads it (every kind, then
    /// the Ceph facts of every RBD-backed volume).
    pub async fn diagnose(&self) -> Vec<Finding> {
        let c = self.client().await;
        let (mut snap, missing, _) =
            unstick::cmd::live::kube_snapshot(&c, None, Duration::from_secs(15), &unstick_core::clock::WallClock).await;
        assert!(missing.is_empty(), "{missing:?}");
        let lin = Lineage::build(&snap);
        unstick::cmd::live::ceph_facts(self.ceph(), &mut snap, &lin).await;
        let lin = Lineage::build(&snap);
        unstick_core::diagnose::run(&snap, &lin, &Config::defaults().diagnose, jiff::Timestamp::now())
    }

    /// Stops holder process `name` (`holder-003`) with SIGTERM, by the PID in its pidfile: it closes
    /// the image, so its watcher goes away (what `rbd unmap` on the node does).
    pub fn stop_holder(&self, name: &str) {
        let pidfile = self.state_dir.join("run").join(format!("{name}.pid"));
        let pid = std::fs::read_to_string(&pidfile).unwrap_or_else(|e| panic!("{}: {e}", pidfile.display()));
        let st = std::process::Command::new("kill").args(["-TERM", pid.trim()]).status().expect("kill");
        assert!(st.success(), "kill -TERM {} ({name})", pid.trim());
    }

    /// Deletes a pod with grace 0 (what kubelet sends once the containers stopped and the volumes
    /// were unmounted, finishing a Terminating pod).
    pub async fn finish_pod(&self, namespace: &str, name: &str) {
        let api: Api<Pod> = Api::namespaced(self.client().await, namespace);
        let dp = DeleteParams { grace_period_seconds: Some(0), ..Default::default() };
        api.delete(name, &dp).await.expect("delete pod");
    }
}

/// The findings of `pattern` about PV `pv`.
pub fn findings_of<'a>(fs: &'a [Finding], pattern: PatternId, pv: &str) -> Vec<&'a Finding> {
    fs.iter().filter(|f| f.pattern == pattern && f.volume.as_deref() == Some(pv)).collect()
}

/// Releases the runner's Lease.
pub async fn release(r: &mut Runner) {
    if let Some((mgr, held)) = r.take_lease() {
        mgr.release(held).await.expect("release lease");
    }
}

/// Index of the first Act step whose action matches.
pub fn act_index(p: &Playbook, pred: impl Fn(&WriteAction) -> bool) -> usize {
    p.steps.iter().position(|s| matches!(&s.kind, StepKind::Act(a) if pred(a))).expect("act step")
}

/// `rbd ARGS --format json`, parsed.
pub async fn rbd_json(h: &Harness, args: &[&str]) -> serde_json::Value {
    let out = h.ceph().run(Tool::Rbd, args).await.expect("rbd call");
    serde_json::from_str(out.stdout.trim()).expect("json")
}

/// Runs the current Act step: prepare, then confirm (typing the name if irreversible).
pub async fn act(r: &mut Runner) -> ExecResult {
    let c = r.prepare(&Overrides::default()).await.expect("prepare");
    let typed = c.typed_name.clone();
    let res = r.confirm(c, typed.as_deref()).await.expect("confirm");
    assert!(res.ok, "action failed: {res:?}");
    res
}
