//! The incident corpus (`tests/fixtures/incidents/`, issue 24): every bundle, made from a public
//! thread, diagnosed as `unstick diagnose --bundle` does. Each must give a finding about its stuck
//! pod (or claim) — never silent — of the cause its thread's experts settled on, or `unexplained`
//! where the bundle's evidence cannot show that cause (`expected_from_bundle`); or no finding at
//! all where the thread settled that nothing is stuck (`none`). Run with
//! `cargo test --test incident_corpus -- --nocapture` for the report: per cause, and explained /
//! unexplained / silent / wrong.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use unstick_core::bundle;
use unstick_core::clock::FixedClock;
use unstick_core::config::Config;
use unstick_core::diagnose::{self, Finding, ObjectKind, PatternId};
use unstick_core::lineage::Lineage;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/incidents")
}

/// One incident's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    /// A finding of the expected named cause.
    Explained,
    /// `unexplained`, as the bundle's evidence allows no more.
    Unexplained,
    /// No finding at all where the thread settled that nothing is stuck (`expected` `none`:
    /// routine blocklist entries of a mgr failover).
    Quiet,
    /// No finding about the stuck pod or claim.
    Silent,
    /// A finding of another cause (or `unexplained` where a cause was expected).
    Wrong,
}

fn about(f: &Finding, ns: &str, pod: &str, pv: &str) -> bool {
    f.mentions(ObjectKind::Pod, Some(ns), pod) || f.volume.as_deref() == Some(pv)
}

fn verdict(dir: &Path) -> (String, String, Verdict, Vec<String>) {
    let inc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("incident.json")).unwrap()).unwrap();
    let expected = inc.get("expected_from_bundle").unwrap_or(&inc["expected"]).as_str().unwrap().to_string();
    let settled = inc["expected"].as_str().unwrap().to_string();
    let (ns, pod, pv) =
        (inc["pod"]["ns"].as_str().unwrap(), inc["pod"]["name"].as_str().unwrap(), inc["pv"].as_str().unwrap());
    let b = bundle::read(dir, &FixedClock(jiff::Timestamp::UNIX_EPOCH)).unwrap();
    let lin = Lineage::build(&b.snapshot);
    let findings = diagnose::run(&b.snapshot, &lin, &Config::defaults().diagnose, b.clock);
    let mine: Vec<&Finding> = findings.iter().filter(|f| about(f, ns, pod, pv)).collect();
    let shown: Vec<&Finding> = if expected == "none" { findings.iter().collect() } else { mine.clone() };
    let got: Vec<String> = shown.iter().map(|f| f.pattern.as_str().to_string()).collect();
    let v = if expected == "none" {
        if findings.is_empty() { Verdict::Quiet } else { Verdict::Wrong }
    } else if mine.is_empty() {
        Verdict::Silent
    } else if mine.iter().any(|f| f.pattern.as_str() == expected) {
        if expected == PatternId::Unexplained.as_str() { Verdict::Unexplained } else { Verdict::Explained }
    } else {
        Verdict::Wrong
    };
    (settled, expected, v, got)
}

#[test]
fn every_incident_is_diagnosed_as_its_thread_settled() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("incident.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 44, "corpus has {} incidents", dirs.len());
    let mut by_cause: BTreeMap<String, usize> = BTreeMap::new();
    let mut counts: BTreeMap<Verdict, usize> = BTreeMap::new();
    let mut bad = vec![];
    for d in &dirs {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let (settled, expected, v, got) = verdict(d);
        *by_cause.entry(settled).or_default() += 1;
        *counts.entry(v).or_default() += 1;
        println!("{name:45} expected {expected:26} {v:?} {got:?}");
        if matches!(v, Verdict::Silent | Verdict::Wrong) {
            bad.push(format!("{name}: expected {expected}, got {got:?}"));
        }
    }
    println!("\ncauses settled by the threads ({} incidents):", dirs.len());
    for (c, n) in &by_cause {
        println!("  {c:28} {n}");
    }
    let n = |v| counts.get(&v).copied().unwrap_or(0);
    println!(
        "\nexplained by a named cause: {}\nunexplained: {}\nquiet where quiet is right: {}\nsilent: {}\nwrong cause: {}",
        n(Verdict::Explained),
        n(Verdict::Unexplained),
        n(Verdict::Quiet),
        n(Verdict::Silent),
        n(Verdict::Wrong)
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The `operation … already exists` incidents name no predecessor pod: never `same-node-restage`.
#[test]
fn a_driver_busy_message_alone_is_not_a_restage() {
    for name in
        ["rook-6280-cephfs-mon-failover", "cephcsi-4851-deadline-already-exists", "rook-13778-cephfs-session-lost"]
    {
        let d = corpus().join(name);
        let b = bundle::read(&d, &FixedClock(jiff::Timestamp::UNIX_EPOCH)).unwrap();
        let lin = Lineage::build(&b.snapshot);
        let findings = diagnose::run(&b.snapshot, &lin, &Config::defaults().diagnose, b.clock);
        assert!(findings.iter().all(|f| f.pattern != PatternId::SameNodeRestage), "{name}: {findings:#?}");
        let f = findings.iter().find(|f| f.pattern == PatternId::Unexplained).expect("unexplained");
        assert!(f.summary.contains("hypothesis"), "{}", f.summary);
        assert!(f.explanation.contains("kubectl"), "{}", f.explanation);
    }
}

/// CephFS incidents are told apart from RBD: the lineage line names the subvolume, and the
/// finding's words are CephFS ones (no image, no `rbd map`/`rbd unmap`).
#[test]
fn cephfs_findings_speak_cephfs() {
    let mut seen = 0;
    for d in std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().path()) {
        let Ok(text) = std::fs::read_to_string(d.join("incident.json")) else { continue };
        let inc: serde_json::Value = serde_json::from_str(&text).unwrap();
        if !inc["driver"].as_str().unwrap().ends_with("cephfs.csi.ceph.com") {
            continue;
        }
        let b = bundle::read(&d, &FixedClock(jiff::Timestamp::UNIX_EPOCH)).unwrap();
        let lin = Lineage::build(&b.snapshot);
        for f in diagnose::run(&b.snapshot, &lin, &Config::defaults().diagnose, b.clock) {
            seen += 1;
            let words = format!("{} {}", f.summary, f.explanation);
            for rbd in ["rbd map", "rbd unmap", "rbd status", "RBD image", "image features"] {
                assert!(!words.contains(rbd), "{}: {:?} in {words}", d.display(), rbd);
            }
            assert!(f.evidence.iter().any(|e| e.text.contains("-> CephFS subvolume ")), "{}: {:#?}", d.display(), f);
        }
    }
    assert!(seen >= 8, "{seen} CephFS findings");
}
