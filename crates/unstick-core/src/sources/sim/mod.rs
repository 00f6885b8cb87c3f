//! A scenario played as a cluster: an in-process Kubernetes API ([`apiserver`]) and Ceph CLI
//! ([`ceph`]) over one simulated [`World`], whose nodes, kubelets and controllers react to what the
//! operator does ([`kubelet`]). The console, diagnosis, playbooks, backup, confirmation, journal,
//! Lease and undo run unchanged on it: they get a [`kube::Client`] from [`Sim::client`] and a
//! [`crate::sources::ceph::cli::CephCli`] whose transport is the [`Sim`] itself ([`Sim::ceph_cli`]).
//!
//! Simulated time runs `speed` times faster than real time (or only when [`Sim::advance`]d, with
//! speed 0, as tests do). Every timestamp the world writes is simulated time; the console shows
//! ages against [`Sim::now`].

pub mod apiserver;
pub mod build;
pub mod ceph;
pub mod clock;
mod controllers;
mod kubelet;
mod objects;
mod react;
mod rollout;
pub mod scenario;
pub mod store;
pub mod world;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use self::store::{ApiError, ObjKey, Res};
pub use self::world::World;

/// A handle on a running simulation; cheap to clone.
#[derive(Clone)]
pub struct Sim {
    inner: Arc<Mutex<World>>,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim").finish_non_exhaustive()
    }
}

impl PartialEq for Sim {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Sim {}

/// Simulated time, for everything that takes the program's clock in training.
impl crate::clock::Clock for Sim {
    fn now(&self) -> Timestamp {
        Sim::now(self)
    }
}

impl Sim {
    /// Wraps a world.
    pub fn new(world: World) -> Self {
        Sim { inner: Arc::new(Mutex::new(world)) }
    }

    /// The world, locked. Never held across an `.await`.
    pub fn world(&self) -> MutexGuard<'_, World> {
        // a panic while locked would be a bug in the simulation; keep serving the last state
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A Kubernetes client whose requests this simulation answers (no network).
    pub fn client(&self) -> kube::Client {
        apiserver::client(self.clone())
    }

    /// Simulated now.
    pub fn now(&self) -> Timestamp {
        self.world().clock.now()
    }

    /// Moves simulated time forward by `d` and lets the world react.
    pub fn advance(&self, d: Duration) {
        let mut w = self.world();
        w.clock.advance(SignedDuration::try_from(d).unwrap_or(SignedDuration::ZERO));
        w.step();
    }

    /// Simulated seconds per real second now (0 while stopped).
    pub fn speed(&self) -> f64 {
        self.world().clock.speed()
    }

    /// Changes the speed of simulated time (0 stops it).
    pub fn set_speed(&self, speed: f64) {
        self.world().clock.set_speed(speed);
    }

    /// Lets the world react to the current time (kubelets, controllers, watch timeouts).
    pub fn step(&self) {
        self.world().step();
    }

    /// Starts a task that steps the world every `period` of real time, for as long as the runtime
    /// runs. A step that takes longer than a tenth of `period` (a 10k-node world) is followed by
    /// a pause of four times its cost, so the simulation never takes most of a core from the
    /// console it feeds.
    pub fn spawn_ticker(&self, period: Duration) -> tokio::task::JoinHandle<()> {
        let sim = self.clone();
        tokio::spawn(async move {
            loop {
                let start = tokio::time::Instant::now();
                sim.step();
                let cost = start.elapsed();
                let pause = if cost > period / 10 { period.max(cost * 4) } else { period };
                tokio::time::sleep_until(start + pause).await;
            }
        })
    }

    /// `/version` of the simulated API server.
    pub fn version_json(&self) -> Value {
        let w = self.world();
        let (major, minor) = w.version;
        serde_json::json!({"major": major.to_string(), "minor": minor.to_string(),
                           "gitVersion": format!("v{major}.{minor}.0-unstick-sim"), "platform": "linux/amd64"})
    }

    /// Objects of `res` and the list's resourceVersion.
    pub fn list(&self, res: Res, ns: Option<&str>) -> (Vec<Value>, u64) {
        let w = self.world();
        (w.store.list(res, ns), w.store.rv())
    }

    /// One object.
    pub fn get(&self, k: &ObjKey) -> Option<Value> {
        self.world().store.get(k).cloned()
    }

    /// Registers a watch on `res` (in `ns` or all namespaces) that first replays every change
    /// after `rv` (all objects as `ADDED` when `rv` is 0).
    pub fn watch(&self, res: Res, ns: Option<String>, rv: u64, tx: UnboundedSender<bytes::Bytes>) {
        self.world().watch(res, ns, rv, tx);
    }

    /// `POST`: creates an object (an operator's write).
    pub fn create(&self, res: Res, obj: Value) -> Result<Value, ApiError> {
        let mut w = self.world();
        let now = w.clock.now();
        w.record_write(format!("create {} {}", res.info().plural, obj["metadata"]["name"].as_str().unwrap_or("")));
        w.apply(|s| s.create(res, obj, now))
    }

    /// `PUT`.
    pub fn replace(&self, k: &ObjKey, obj: Value) -> Result<Value, ApiError> {
        let mut w = self.world();
        w.record_write(format!("replace {} {}", k.res.info().plural, k.name));
        w.apply(|s| s.replace(k, obj))
    }

    /// `PATCH`: a JSON patch when `json_patch`, else a merge patch.
    pub fn patch(&self, k: &ObjKey, patch: &Value, json_patch: bool) -> Result<Value, ApiError> {
        let mut w = self.world();
        w.record_write(format!("patch {} {}: {patch}", k.res.info().plural, k.name));
        let r = w.apply(|s| if json_patch { s.json_patch(k, patch) } else { s.merge_patch(k, patch) });
        w.step();
        r
    }

    /// `DELETE` with `DeleteOptions` preconditions and grace period (seconds).
    pub fn delete(
        &self,
        k: &ObjKey,
        uid: Option<&str>,
        rv: Option<&str>,
        grace: Option<i64>,
    ) -> Result<Value, ApiError> {
        let mut w = self.world();
        let now = w.clock.now();
        w.record_write(format!(
            "delete {} {}{}",
            k.res.info().plural,
            k.name,
            if grace == Some(0) { " (grace 0)" } else { "" }
        ));
        let r = w.apply(|s| s.delete(k, uid, rv, grace, now));
        w.step();
        r
    }

    /// A Ceph CLI runner answered by this simulation (no process is started), with the timeouts
    /// and limits of `cfg`, stamping its observations with simulated time.
    pub fn ceph_cli(&self, cfg: crate::config::CephConfig) -> crate::sources::ceph::cli::CephCli {
        crate::sources::ceph::cli::CephCli::with_transport(Arc::new(self.clone()), cfg)
            .with_clock(Arc::new(self.clone()))
    }

    /// Answers one `rbd` / `ceph` argv: `(exit code, stdout, stderr)`.
    pub fn run_ceph(&self, argv: &[String]) -> ceph::Run {
        let mut w = self.world();
        let now = w.clock.now();
        let r = w.ceph.run(argv, now);
        let (tool, words) = ceph::command(argv);
        if r.0 == 0 && ceph::is_write(&words) {
            let what = format!("{tool} {}", words.join(" "));
            w.record_write(what);
        }
        w.step();
        r
    }
}

impl crate::sources::ceph::cli::CephTransport for Sim {
    fn prefix(&self, tool: crate::sources::ceph::cli::Tool) -> Vec<String> {
        vec![match tool {
            crate::sources::ceph::cli::Tool::Rbd => "rbd".into(),
            crate::sources::ceph::cli::Tool::Ceph => "ceph".into(),
            crate::sources::ceph::cli::Tool::Python => "python3".into(),
        }]
    }

    fn run<'a>(
        &'a self,
        argv: &'a [String],
    ) -> futures::future::BoxFuture<
        'a,
        Result<crate::sources::ceph::cli::Completed, crate::sources::ceph::cli::StartError>,
    > {
        Box::pin(async move { Ok(self.run_ceph(argv)) })
    }

    fn name(&self) -> &'static str {
        "the simulation"
    }
}

#[cfg(test)]
#[path = "sim_tests.rs"]
mod tests;
