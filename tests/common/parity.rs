//! Training parity: each seed scenario (`stale-lock` = incident 000, `lost-node-multi-attach` =
//! 001, `dead-node-watcher` = 002, `unmap-busy` = 003, `same-node-restage` = 004) shows a trainee
//! the findings and playbooks an on-call engineer sees on the REAL harness, where the incident was
//! made by the real controllers (kube-controller-manager, kube-scheduler of the harness's version) and the harness's
//! node agents (`tests/harness/cluster incident NAME`, SEED.md "Live incidents").
//!
//! Each scenario is played at the harness's own version (its simulated API server reports the
//! harness's `GET /version`): on the current control plane (`cluster up --kube current`) a trainee
//! sees that release's events and playbook branches, and so does the comparison.
//!
//! [`live`] runs inside each live incident test (`tests/live_incidents_harness.rs`,
//! `tests/live_incidents_more_harness.rs`), on the incident that test made, before its playbook
//! changes anything: an incident takes 20-80 s to develop, so it is made once for both checks.
//! [`static_seed`] compares the static seeds (`cluster seed NNN`) as a fast check of the seeds
//! that other fast tests use (`tests/train_parity_harness.rs`).
//!
//! Both sides are read the way the console reads them: the harness with the live lists and the
//! Ceph scan (`unstick::cmd::live`), the scenario with its world's full snapshot; both diagnosed by
//! `unstick_core::diagnose::run`; for each pattern the scenario lists, the playbook of the first finding
//! of that pattern is built as the console's `p` builds it (`Target::for_volume` with the server
//! version read from `GET /version` of each API server, then `remedy::playbook::build`). Compared:
//! the pattern ids found, how many findings of each and their severities, and per playbook the
//! sequence of step kinds, each Act step's action variant and each Wait / Verify step's condition
//! variants (object names differ between the incidents and the scenarios), and which steps are
//! optional. The harness is diagnosed with its shortened clocks (`common::live::config`), the
//! simulation with the default settings, as `unstick train` runs it. A difference that is
//! real-cluster behaviour the simulation cannot have is an explicit, asserted exception in
//! [`Differences`] (measured: none).
//!
//! The incidents va-finalizer-stuck and blocklist-leftover have no training scenario, so nothing
//! to compare them with (a va-finalizer-stuck scenario could not even say that the node is gone:
//! an `[[attachment]]` must name a `[[node]]`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use unstick_core::config::Config;
use unstick_core::diagnose::{Finding, ObjectKind, PatternId};
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::remedy::playbook::version::{ServerVersion, read_server_version};
use unstick_core::remedy::playbook::{Playbook, StepKind, Target, build};
use unstick_core::sources::sim::scenario::Scenario;

use super::Harness;
use super::console::findings;

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
    /// Per pattern found, the severity of each of its findings (sorted): how many, how severe.
    severities: BTreeMap<String, Vec<&'static str>>,
    playbooks: Vec<(String, Result<Vec<StepShape>, String>)>,
    /// Titles of the steps, for failure messages.
    titles: Vec<(String, Vec<String>)>,
}

/// The console's `target_of`: the finding's volume, or its blocklist entries (its clients tied by
/// the console's address book afterwards, [`Target::tie_clients`]).
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

/// Diagnoses `snap` under `cfg` and builds the playbooks (with the default remedy settings, on
/// both sides) of the first finding of each of `patterns`.
fn seen(snap: &Snapshot, version: ServerVersion, now: jiff::Timestamp, patterns: &[String], cfg: &Config) -> Seen {
    let remedy = Config::defaults().remedy;
    let lin = Lineage::build(snap);
    let findings = unstick_core::diagnose::run(snap, &lin, &cfg.diagnose, now);
    let found = findings.iter().map(|f| f.pattern.to_string()).collect();
    let mut severities: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for f in &findings {
        severities.entry(f.pattern.to_string()).or_default().push(f.severity.as_str());
    }
    severities.values_mut().for_each(|v| v.sort_unstable());
    let mut playbooks = vec![];
    let mut titles = vec![];
    for p in patterns {
        let Some(f) = findings.iter().find(|f| f.pattern.to_string() == *p) else {
            playbooks.push((p.clone(), Err("no finding".to_string())));
            continue;
        };
        let book = unstick_core::attribution::AddressBook::build(snap, &cfg.diagnose);
        let pb = target_of(snap, &lin, f, Some(version))
            .map(|t| t.tie_clients(snap, &book))
            .ok_or_else(|| format!("no target for finding {}", f.id))
            .and_then(|t| build(p, &t, &remedy).map_err(|e| e.to_string()));
        if let Ok(pb) = &pb {
            titles.push((p.clone(), pb.steps.iter().map(|s| format!("{} {}", s.kind.name(), s.title)).collect()));
        }
        playbooks.push((p.clone(), pb.map(|pb| shape(&pb))));
    }
    Seen { version: (version.major, version.minor), found, severities, playbooks, titles }
}

/// The scenario's simulation, as the console on `unstick train NAME` first sees it (default
/// settings): the world as built, after the first reaction pass of its ticker (at the same
/// simulated instant: speed 0).
async fn on_simulation(s: &Scenario) -> Seen {
    let sim = s.start(jiff::Timestamp::now(), 0.0);
    sim.step();
    let v = read_server_version(&sim.client(), Duration::from_secs(5)).await.expect("GET /version of the simulation");
    let snap = sim.world().snapshot();
    seen(&snap, v, sim.now(), &s.patterns, &Config::defaults())
}

/// The harness as it is now, read as the console reads it, diagnosed under `cfg`.
async fn on_harness(h: &Harness, s: &Scenario, cfg: &Config) -> Seen {
    let v = h.server_version().await;
    let snap = super::console::snapshot(h).await;
    seen(&snap, v, jiff::Timestamp::now(), &s.patterns, cfg)
}

/// Where the real incident differs from the scenario for reasons the simulation cannot have;
/// each one is asserted to really be there (so a stale exception fails too).
#[derive(Default)]
pub struct Differences {
    /// Patterns found on the harness and not on the simulation.
    pub extra_live: &'static [&'static str],
    /// Per pattern, the severities of its findings on the harness, where the simulation's differ.
    pub severities: &'static [(&'static str, &'static [&'static str])],
}

/// Compares both sides; `what` names the live incident or the static seed.
fn compare(what: &str, s: &Scenario, live: &Seen, sim: &Seen, diff: &Differences) {
    let report = format!(
        "{} vs {what}\nharness: {live:#?}\nharness steps: {:#?}\nsimulation: {sim:#?}\nsimulation steps: {:#?}",
        s.name, live.titles, sim.titles
    );
    assert_eq!(sim.version, live.version, "the simulated API server reports the harness's version\n{report}");
    for p in &s.patterns {
        assert!(live.found.contains(p), "the harness shows {p}\n{report}");
        assert!(sim.found.contains(p), "the simulation shows {p}\n{report}");
    }
    let extra: BTreeSet<String> = diff.extra_live.iter().map(|p| p.to_string()).collect();
    for p in &extra {
        assert!(live.found.contains(p) && !sim.found.contains(p), "expected difference {p} is gone\n{report}");
    }
    let live_found: BTreeSet<String> = live.found.difference(&extra).cloned().collect();
    assert_eq!(live_found, sim.found, "the same patterns are found on both\n{report}");
    for p in &sim.found {
        match diff.severities.iter().find(|(q, _)| q == p) {
            Some((_, there)) => {
                assert_eq!(live.severities[p], *there, "{p}: expected severities on the harness\n{report}");
                assert_ne!(sim.severities[p], *there, "expected difference in {p}'s severities is gone\n{report}");
            }
            None => {
                assert_eq!(live.severities[p], sim.severities[p], "{p}: as many findings, as severe, on both\n{report}")
            }
        }
    }
    for ((p, a), (_, b)) in live.playbooks.iter().zip(&sim.playbooks) {
        let a = a.as_ref().unwrap_or_else(|e| panic!("harness playbook of {p}: {e}\n{report}"));
        let b = b.as_ref().unwrap_or_else(|e| panic!("simulation playbook of {p}: {e}\n{report}"));
        assert_eq!(a, b, "{p}: the same steps (kind, action or conditions, optional)\n{report}");
    }
    assert_eq!(live.playbooks.len(), s.patterns.len());
    eprintln!("{} vs {what}: agree; harness findings {:?}; playbooks {:?}", s.name, live.severities, live.playbooks);
}

/// The embedded scenario `name`, its simulated API server set to the harness's version.
pub async fn scenario(h: &Harness, name: &str) -> Scenario {
    let mut s = Scenario::embedded(name).expect("embedded scenario").expect("parses");
    let v = h.server_version().await;
    s.api_version = format!("{}.{}", v.major, v.minor);
    s
}

/// Polls a fresh diagnosis of the harness (every 2 s, bounded by `secs`) until every one of
/// `patterns` is found in one diagnosis; returns every pattern seen on the way (printed: an incident develops, and
/// findings may come and go before it has its final shape).
async fn wait_patterns(h: &Harness, cfg: &Config, patterns: &[String], secs: u64) -> BTreeSet<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut seen = BTreeSet::new();
    loop {
        let now: BTreeSet<String> = findings(h, cfg).await.iter().map(|f| f.pattern.to_string()).collect();
        seen.extend(now.iter().cloned());
        if patterns.iter().all(|p| now.contains(p)) {
            return seen;
        }
        assert!(Instant::now() < deadline, "not every one of {patterns:?} found after {secs} s: {seen:?}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// The scenario `name` against the live incident its seed names, made by the caller (the live
/// incident test, `cluster incident NNN`) at `t0`: once every pattern the scenario lists is found
/// on the harness (diagnosed with the harness's shortened clocks, `common::live::config` changed
/// by `tune`; polled every 2 s, at most 120 s), one reading of the harness is compared with the
/// simulation. Prints how long the findings took.
pub async fn live(h: &Harness, name: &str, t0: Instant, tune: fn(&mut Config), diff: Differences) {
    let s = scenario(h, name).await;
    let name = s.name.clone();
    let seed = s.seed.clone().expect("a seed scenario names its seed");
    let mut cfg = super::live::config();
    tune(&mut cfg);
    let on_the_way = wait_patterns(h, &cfg, &s.patterns, 120).await;
    let found = t0.elapsed();
    let live = on_harness(h, &s, &cfg).await;
    let sim = on_simulation(&s).await;
    eprintln!(
        "{name} vs incident {seed}: every pattern found {found:?} after the incident began; \
         patterns seen while it developed: {on_the_way:?}"
    );
    compare(&format!("incident {seed}"), &s, &live, &sim, &diff);
}

/// The scenario `name` against the harness statically seeded with its seed (`cluster seed NNN`).
/// Leaves that seed in place: the caller re-seeds `default` (`common::remedy::Reseed`) once at the end.
pub async fn static_seed(h: &Harness, name: &str, diff: Differences) {
    let s = scenario(h, name).await;
    let seed = s.seed.clone().expect("a seed scenario names its seed");
    super::cluster(&["seed", &seed]);
    let live = on_harness(h, &s, &Config::defaults()).await;
    let sim = on_simulation(&s).await;
    compare(&format!("seed {seed}"), &s, &live, &sim, &diff);
}

/// For [`live`]'s `tune`: the harness's shortened clocks unchanged.
pub fn same(_: &mut Config) {}

/// For [`live`]'s `tune` on 003 and 004: the replacement pod waits from the start, so past a grace
/// shortened like the harness's clocks it is blocked (critical), as in the scenario.
pub fn short_creating_grace(c: &mut Config) {
    c.diagnose.creating_grace_seconds = 5;
}
