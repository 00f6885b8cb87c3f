//! Shared by the end-to-end tests on live incidents (`tests/harness/cluster incident NAME`, SEED.md
//! "Live incidents"): the incident's description (`live.json`), the diagnosis clocks shortened
//! like the harness's, waits on the workload and on findings (bounded, polled), the marker read
//! back through librbd, the playbook's Act summaries, and `unstick undo` as an operator runs it.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams};
use unstick_core::config::Config;
use unstick_core::diagnose::{Finding, PatternId};
use unstick_core::remedy::journal::{self, WriteStatus};
use unstick_core::remedy::playbook::StepKind;

use super::Harness;
use super::console::{Driver, findings};

/// Makes incident `name` (`cluster incident NAME`), prints and returns how long that took, and
/// reads its `live.json`.
pub fn incident(h: &Harness, name: &str) -> (serde_json::Value, Duration) {
    incident_pinned(h, name, None)
}

/// [`incident`] with its workload started on `node` (`UNSTICK_INCIDENT_NODE`: the other nodes are
/// cordoned until it runs, `tests/harness/incident.py`).
pub fn incident_on(h: &Harness, name: &str, node: &str) -> (serde_json::Value, Duration) {
    incident_pinned(h, name, Some(node))
}

fn incident_pinned(h: &Harness, name: &str, node: Option<&str>) -> (serde_json::Value, Duration) {
    let t0 = Instant::now();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harness/cluster");
    let mut cmd = Command::new(script);
    cmd.args(["incident", name]);
    if let Some(n) = node {
        cmd.env("UNSTICK_INCIDENT_NODE", n);
    }
    let st = cmd.status().expect("run tests/harness/cluster");
    assert!(st.success(), "tests/harness/cluster incident {name} (on {node:?}) failed: {st}");
    let took = t0.elapsed();
    eprintln!("incident {name} made in {took:?}");
    let text = std::fs::read_to_string(h.state_dir.join("live.json")).expect("live.json after an incident");
    (serde_json::from_str(&text).expect("live.json is JSON"), took)
}

/// `v[k]` as a string; panics naming the key when absent.
pub fn s<'a>(v: &'a serde_json::Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("live.json has no {k}: {v}"))
}

/// The Node annotation listing a live node's storage addresses (`tests/harness/agent.py`: worker-1
/// and worker-2 carry it; worker-3's storage address is its ceph-csi node plugin pod's IP).
pub const STORAGE_ANNOTATION: &str = "unstick.test/storage-addresses";

/// The diagnosis clocks shortened like the harness's (node monitor grace 16 s), and the storage
/// addresses' annotation ([`STORAGE_ANNOTATION`]) as `diagnose.node_address_annotation`.
pub fn config() -> Config {
    let mut cfg = Config::defaults();
    cfg.diagnose.node_address_annotation = STORAGE_ANNOTATION.to_string();
    cfg.ceph.scan_on_start = false;
    cfg.diagnose.node_lost_grace_seconds = 5;
    cfg.diagnose.terminating_grace_seconds = 5;
    cfg.remedy.wait_poll_seconds = 1;
    cfg.remedy.wait_timeout_seconds = 120;
    cfg
}

/// Waits (bounded by `secs`) until a pod of `app` runs Ready on a Ready node; returns the pod's
/// name and its node.
pub async fn wait_running_within(h: &Harness, ns: &str, app: &str, secs: u64) -> (String, String) {
    let client = h.client().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let nodes: Api<Node> = Api::all(client);
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        for p in pods.list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap() {
            let st = p.status.clone().unwrap_or_default();
            let ready = st.container_statuses.iter().flatten().all(|c| c.ready);
            let node = p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
            if st.phase.as_deref() == Some("Running") && ready && p.metadata.deletion_timestamp.is_none() {
                let n = nodes.get(&node).await.unwrap();
                let node_ready = n
                    .status
                    .and_then(|s| s.conditions)
                    .into_iter()
                    .flatten()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                if node_ready {
                    return (p.metadata.name.unwrap_or_default(), node);
                }
            }
        }
        assert!(Instant::now() < deadline, "no Running pod of {ns}/{app} on a Ready node after {secs} s");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// [`wait_running_within`] 120 s; returns the node.
pub async fn wait_running(h: &Harness, ns: &str, app: &str) -> String {
    wait_running_within(h, ns, app, 120).await.1
}

/// Polls a fresh diagnosis every 2 s until one finding satisfies `pick` (bounded by `secs`).
pub async fn wait_finding(h: &Harness, cfg: &Config, secs: u64, pick: impl Fn(&Finding) -> bool) -> Finding {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let f = findings(h, cfg).await;
        if let Some(f) = f.into_iter().find(&pick) {
            return f;
        }
        assert!(Instant::now() < deadline, "no such finding after {secs} s");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Polls a fresh diagnosis every 2 s until no finding satisfies `pick` (bounded by `secs`);
/// panics with what is left.
pub async fn wait_no_finding(h: &Harness, cfg: &Config, secs: u64, pick: impl Fn(&Finding) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let f = findings(h, cfg).await;
        let left: Vec<_> = f.iter().filter(|f| pick(f)).collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "finding still there after {secs} s: {left:#?}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// The node's `status.nodeInfo.bootID`.
pub async fn boot_id(h: &Harness, node: &str) -> String {
    let n = Api::<Node>::all(h.client().await).get(node).await.unwrap();
    n.status.and_then(|s| s.node_info).map(|i| i.boot_id).unwrap_or_default()
}

/// Waits (60 s) until the node reports a bootID other than `before` and is Ready; returns it.
pub async fn wait_boot_id_change(h: &Harness, node: &str, before: &str) -> String {
    let nodes = Api::<Node>::all(h.client().await);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = nodes.get(node).await.unwrap();
        let st = n.status.unwrap_or_default();
        let boot = st.node_info.map(|i| i.boot_id).unwrap_or_default();
        let ready = st.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True");
        if ready && !boot.is_empty() && boot != before {
            return boot;
        }
        assert!(Instant::now() < deadline, "node {node} did not come back Ready with a new bootID in 60 s");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Reboots a harness node (`tests/harness/cluster node NODE reboot`: its agent restarts with a new
/// bootID and its old Ceph clients gone) and waits (60 s) until it is Ready again with a new bootID.
/// Returns `(bootID before, bootID after, seconds until Ready)`.
pub async fn reboot(h: &Harness, node: &str) -> (String, String, Duration) {
    let before = boot_id(h, node).await;
    super::cluster(&["node", node, "reboot"]);
    let t = Instant::now();
    let after = wait_boot_id_change(h, node, &before).await;
    (before, after, t.elapsed())
}

/// `rbd ARGS` run inside the node's network namespace (`ush<offset>-<node>`), i.e. a Ceph client
/// of that node, from its storage address; bounded by Ceph's own timeouts.
pub fn node_rbd(h: &Harness, node: &str, args: &[&str]) -> Output {
    let po = std::env::var("UNSTICK_HARNESS_PORT_OFFSET").unwrap_or_else(|_| "0".into());
    Command::new("timeout")
        .args(["60", "ip", "netns", "exec", &format!("ush{po}-{node}"), "rbd", "--conf", h.ceph_conf.to_str().unwrap()])
        .args(args)
        .env("CEPH_ARGS", "--client_mount_timeout 5 --rados_mon_op_timeout 10 --rados_osd_op_timeout 10")
        .output()
        .expect("run rbd in the node's namespace")
}

/// Whether `f` is about `pattern` on the PV `pv`.
pub fn on(f: &Finding, pattern: PatternId, pv: &str) -> bool {
    f.pattern == pattern && f.volume.as_deref() == Some(pv)
}

/// The marker read back through librbd from the live incident's image (`cluster marker NAME`).
pub fn marker(incident: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harness/cluster");
    let out = Command::new(script).args(["marker", incident]).output().expect("cluster marker");
    assert!(out.status.success(), "cluster marker {incident}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The summaries of the open playbook's Act steps, in order.
pub fn acts(d: &Driver) -> Vec<String> {
    let pb = d.app.playbook().expect("playbook open");
    pb.playbook
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Act(a) => Some(a.summary()),
            _ => None,
        })
        .collect()
}

/// A console on the live harness (journal under `dir`) with the first finding `pick` accepts
/// selected and its playbook opened (`p`); returns it with the summaries of its Act steps.
pub async fn open_playbook(
    h: &Harness,
    dir: &Path,
    cfg: &Config,
    pick: impl Fn(&Finding) -> bool,
) -> (Driver, Vec<String>) {
    let mut d = super::console::setup(h, dir, cfg, pick).await;
    d.key(crossterm::event::KeyCode::Char('p')).await;
    let a = acts(&d);
    (d, a)
}

/// The workload of live incident `name` (its `live.json` is `live`) after the playbook: waits
/// (120 s) until a pod of its app runs on a Ready node, prints how long that took (from this call
/// and from `t0`, the incident's start), waits (30 s) until no finding is left on its PV and checks
/// that the marker written before the incident reads back. Returns the node.
pub async fn recovered(h: &Harness, cfg: &Config, name: &str, live: &serde_json::Value, t0: Instant) -> String {
    let t1 = Instant::now();
    let node = wait_running(h, s(live, "namespace"), s(live, "app")).await;
    eprintln!(
        "{name}: Running again on {node} {:?} after the playbook, {:?} after the start",
        t1.elapsed(),
        t0.elapsed()
    );
    let pv = s(live, "pv");
    wait_no_finding(h, cfg, 30, |f| f.volume.as_deref() == Some(pv)).await;
    assert_eq!(marker(name), s(live, "marker"), "the data written before the incident reads back");
    node
}

/// Runs the open playbook to its end with the console's keys, closes it (Esc) and checks its
/// journal: no problems, a backup, every step that wrote Done. Returns the
/// journal's path.
pub async fn run_playbook(d: &mut Driver, what: &str) -> std::path::PathBuf {
    let took = d.run_all().await;
    eprintln!("{what} steps: {took:?}");
    let r = d.app.playbook().expect("playbook open").runner.clone().expect("runner");
    d.key(crossterm::event::KeyCode::Esc).await;
    let rep = journal::read(&r.journal).unwrap();
    assert!(rep.problems.is_empty(), "{:?}", rep.problems);
    assert!(rep.steps().iter().all(|s| s.status == WriteStatus::Done), "{:?}", rep.steps());
    assert!(!rep.backups().is_empty(), "backup journaled");
    r.journal.clone()
}

/// `unstick undo INCIDENT --dir BASE --yes-i-typed y` for the incident whose journal is `journal`
/// (`BASE/INCIDENT/journal.jsonl`), as an operator runs it after the console.
pub fn undo_cli(h: &Harness, journal: &Path, extra: &[&str]) -> Output {
    let incident = journal.parent().expect("incident dir");
    let base = incident.parent().expect("journal base").to_str().unwrap();
    let id = incident.file_name().unwrap().to_str().unwrap();
    Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(["undo", id, "--dir", base])
        .args(extra)
        .args(["--kubeconfig", h.admin.to_str().unwrap(), "--ceph-conf", h.ceph_conf.to_str().unwrap()])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("run unstick undo")
}
