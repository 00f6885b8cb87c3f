//! Training parity: for each seed scenario (`stale-lock` = seed 000, `lost-node-multi-attach` =
//! 001, `dead-node-watcher` = 002, `unmap-busy` = 003, `same-node-restage` = 004), the findings and
//! playbooks a trainee sees on the simulation are the ones an on-call engineer sees on the REAL
//! harness (kube-apiserver 1.20 + etcd + single-node Ceph, `tests/harness/cluster up`) seeded with
//! the same incident.
//!
//! Both sides are read the way the console reads them: the harness with the live lists and the
//! Ceph scan (`unstick::cmd::live`), the scenario with its world's full snapshot; both diagnosed by
//! `unstick::diagnose::run`; for each pattern the scenario lists, the playbook of the first finding
//! of that pattern is built as the console's `p` builds it (`Target::for_volume` with the server
//! version read from `GET /version` of each API server, then `remedy::playbook::build`). Compared:
//! the pattern ids found, and per playbook the sequence of step kinds, each Act step's action
//! variant and each Wait / Verify step's condition variants (object names differ between the seeds
//! and the scenarios), and which steps are optional.
//!
//! Each test seeds its incident and re-seeds `default` at the end (also on panic).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::collections::BTreeSet;
use std::time::Duration;

use unstick::config::Config;
use unstick::diagnose::{Finding, ObjectKind, PatternId};
use unstick::lineage::Lineage;
use unstick::model::Snapshot;
use unstick::remedy::playbook::{Playbook, StepKind, Target, build};
use unstick::remedy::version::{ServerVersion, read_server_version};
use unstick::sources::sim::scenario::Scenario;

mod common;

use common::cluster;
use common::remedy::Reseed;

/// One step as compared: kind name, what it acts on or checks (the Act step's action variant, the
/// Wait / Verify steps' condition variants), optional.
type StepShape = (&'static str, Vec<String>, bool);

/// The name of an enum value's variant (`RbdLockRm`, `WatcherGone`), from its `Debug` form.
fn variant(v: &impl std::fmt::Debug) -> String {
    let d = format!("{v:?}");
    d.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default().to_string()
}

fn shape(p: &Playbook) -> Vec<StepShape> {
    p.steps
        .iter()
        .map(|s| {
            let what = match &s.kind {
                StepKind::Act(a) => vec![variant(a)],
                StepKind::Wait { condition, .. } => vec![variant(condition)],
                StepKind::Verify(cs) => cs.iter().map(variant).collect(),
                _ => vec![],
            };
            (s.kind.name(), what, s.optional)
        })
        .collect()
}

/// What one side shows: every pattern found, and per scenario pattern the first finding's
/// playbook (or why none could be built).
#[derive(Debug)]
struct Seen {
    /// `GET /version` of the API server, `(major, minor)`.
    version: (u32, u32),
    found: BTreeSet<String>,
    playbooks: Vec<(String, Result<Vec<StepShape>, String>)>,
    /// Titles of the steps, for failure messages.
    titles: Vec<(String, Vec<String>)>,
}

/// The console's `target_of`: the finding's volume, or its blocklist entries.
fn target_of(snap: &Snapshot, lin: &Lineage, f: &Finding, v: Option<ServerVersion>) -> Option<Target> {
    if let Some(pv) = &f.volume {
        return Target::for_volume(snap, lin, pv).map(|t| t.with_server_version(v));
    }
    if f.pattern == PatternId::BlocklistLeftover {
        let names: Vec<&str> =
            f.objects.iter().filter(|o| o.kind == ObjectKind::BlocklistEntry).map(|o| o.name.as_str()).collect();
        let entries = snap.ceph.blocklist.as_ref()?.value.as_ref().ok()?;
        let mine = entries.iter().filter(|e| names.contains(&e.text())).cloned().collect();
        return Some(Target::for_blocklist(snap, mine));
    }
    None
}

fn seen(snap: &Snapshot, version: ServerVersion, now: jiff::Timestamp, patterns: &[String]) -> Seen {
    let cfg = Config::defaults();
    let lin = Lineage::build(snap);
    let findings = unstick::diagnose::run(snap, &lin, &cfg.diagnose, now);
    let found = findings.iter().map(|f| f.pattern.to_string()).collect();
    let mut playbooks = vec![];
    let mut titles = vec![];
    for p in patterns {
        let Some(f) = findings.iter().find(|f| f.pattern.to_string() == *p) else {
            playbooks.push((p.clone(), Err("no finding".to_string())));
            continue;
        };
        let pb = target_of(snap, &lin, f, Some(version))
            .ok_or_else(|| format!("no target for finding {}", f.id))
            .and_then(|t| build(p, &t, &cfg.remedy).map_err(|e| e.to_string()));
        if let Ok(pb) = &pb {
            titles.push((p.clone(), pb.steps.iter().map(|s| format!("{} {}", s.kind.name(), s.title)).collect()));
        }
        playbooks.push((p.clone(), pb.map(|pb| shape(&pb))));
    }
    Seen { version: (version.major, version.minor), found, playbooks, titles }
}

/// The scenario's simulation, as the console on `unstick train NAME` first sees it: the world as
/// built, after the first reaction pass of its ticker (at the same simulated instant: speed 0).
async fn on_simulation(s: &Scenario) -> Seen {
    let sim = s.start(jiff::Timestamp::now(), 0.0);
    sim.step();
    let v = read_server_version(&sim.client(), Duration::from_secs(5)).await.expect("GET /version of the simulation");
    let snap = sim.world().snapshot();
    seen(&snap, v, sim.now(), &s.patterns)
}

/// The harness seeded with `seed`, read as the console reads it.
async fn on_harness(h: &common::Harness, s: &Scenario) -> Seen {
    let client = h.client().await;
    let v = h.server_version().await;
    let (mut snap, missing, _) =
        unstick::cmd::live::kube_snapshot(&client, None, Duration::from_secs(15), &unstick::clock::WallClock).await;
    assert!(missing.is_empty(), "{missing:?}");
    let lin = Lineage::build(&snap);
    let missing = unstick::cmd::live::ceph_facts(h.ceph(), &mut snap, &lin).await;
    assert!(missing.is_empty(), "{missing:?}");
    seen(&snap, v, jiff::Timestamp::now(), &s.patterns)
}

async fn parity(name: &str) {
    let Some(h) = common::harness() else { return };
    let s = Scenario::embedded(name).expect("embedded scenario").expect("parses");
    let seed = s.seed.clone().expect("a seed scenario names its seed");
    assert_eq!(s.api_version(), Some((1, 20)), "{name}: the harness is 1.20");
    cluster(&["seed", &seed]);
    let _reseed = Reseed;
    let live = on_harness(&h, &s).await;
    let sim = on_simulation(&s).await;
    let report = format!(
        "{name} (seed {seed})\nharness: {live:#?}\nharness steps: {:#?}\nsimulation: {sim:#?}\nsimulation steps: {:#?}",
        live.titles, sim.titles
    );

    assert_eq!(live.version, (1, 20), "the harness's API server\n{report}");
    assert_eq!(sim.version, live.version, "the simulated API server reports the harness's version\n{report}");
    for p in &s.patterns {
        assert!(live.found.contains(p), "the harness shows {p}\n{report}");
        assert!(sim.found.contains(p), "the simulation shows {p}\n{report}");
    }
    assert_eq!(live.found, sim.found, "the same patterns are found on both\n{report}");
    for ((p, a), (_, b)) in live.playbooks.iter().zip(&sim.playbooks) {
        let a = a.as_ref().unwrap_or_else(|e| panic!("harness playbook of {p}: {e}\n{report}"));
        let b = b.as_ref().unwrap_or_else(|e| panic!("simulation playbook of {p}: {e}\n{report}"));
        assert_eq!(a, b, "{p}: the same steps (kind, action or conditions, optional)\n{report}");
    }
    assert_eq!(live.playbooks.len(), s.patterns.len());
    eprintln!("{name}: same findings {:?}; playbooks {:?}", live.found, live.playbooks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_lock_matches_seed_000() {
    parity("stale-lock").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_node_multi_attach_matches_seed_001() {
    parity("lost-node-multi-attach").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_node_watcher_matches_seed_002() {
    parity("dead-node-watcher").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unmap_busy_matches_seed_003() {
    parity("unmap-busy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_node_restage_matches_seed_004() {
    parity("same-node-restage").await;
}
