//! Diagnosis time on a generated cluster of 10,000 pods / 500 nodes / 2,000 PVs (target: under
//! 50 ms for `diagnose::run`). Run with `cargo bench --bench diagnose`.
//!
//! The cluster: 500 Ready nodes (5 of them lost), 2,000 ceph-csi RWO volumes each used by one pod,
//! 8,000 pods without volumes, a VolumeAttachment and a watcher per used volume, 3 events per
//! volume pod, 50 blocklist entries; plus scattered incidents (replacement pods waiting with
//! Multi-Attach events, stale locks, unmap-busy events) so every rule has work to do.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

#[path = "support/cluster.rs"]
mod cluster;

use std::sync::LazyLock;

use cluster::generate;
use jiff::Timestamp;
use unstick_core::config::{Config, DiagnoseConfig};
use unstick_core::diagnose;
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;

struct Fixture {
    snap: Snapshot,
    lineage: Lineage,
    cfg: DiagnoseConfig,
    now: Timestamp,
    bundle: tempfile::TempDir,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let now: Timestamp = "2026-11-22T03:00:00Z".parse().unwrap();
    let snap = generate(now);
    let lineage = Lineage::build(&snap);
    let bundle = tempfile::tempdir().unwrap();
    let m = unstick_core::bundle::Manifest { collected_at: Some(now), ..Default::default() };
    unstick_core::bundle::write_snapshot(bundle.path(), &snap, &m).unwrap();
    Fixture { snap, lineage, cfg: Config::defaults().diagnose, now, bundle }
});

fn main() {
    let f = &*FIXTURE;
    let t = std::time::Instant::now();
    let findings = diagnose::run(&f.snap, &f.lineage, &f.cfg, f.now);
    let first = t.elapsed();
    let mut by: std::collections::BTreeMap<&str, usize> = Default::default();
    for x in &findings {
        *by.entry(x.pattern.as_str()).or_default() += 1;
    }
    println!(
        "generated: {} nodes, {} pods, {} PVs, {} VAs, {} events, {} images; first diagnose::run {:.1} ms -> {} findings {:?}",
        f.snap.nodes.len(),
        f.snap.pods.len(),
        f.snap.pvs.len(),
        f.snap.volume_attachments.len(),
        f.snap.events.len(),
        f.snap.ceph.images.len(),
        first.as_secs_f64() * 1e3,
        findings.len(),
        by
    );
    // Each public rule builds its own context: the per-rule cost includes that shared setup.
    type Rule = fn(&Snapshot, &Lineage, &DiagnoseConfig, Timestamp) -> Vec<diagnose::Finding>;
    let rules: [(&str, Rule); 8] = [
        ("stale-lock", diagnose::stale_lock),
        ("multi-attach-node-lost", diagnose::multi_attach_node_lost),
        ("dead-node-watcher", diagnose::dead_node_watcher),
        ("live-node-stale-map", diagnose::live_node_stale_map),
        ("unmap-busy", diagnose::unmap_busy),
        ("same-node-restage", diagnose::same_node_restage),
        ("va-finalizer-stuck", diagnose::va_finalizer_stuck),
        ("blocklist-leftover", diagnose::blocklist_leftover),
    ];
    for (name, rule) in rules {
        let t = std::time::Instant::now();
        for _ in 0..10 {
            std::hint::black_box(rule(&f.snap, &f.lineage, &f.cfg, f.now));
        }
        println!("  {name:<24} {:.2} ms (context + rule, mean of 10)", t.elapsed().as_secs_f64() * 100.0);
    }
    divan::main();
}

/// The rules alone, on a prebuilt lineage (what the console does on each change).
#[divan::bench]
fn diagnose_run(b: divan::Bencher) {
    let f = &*FIXTURE;
    b.bench(|| diagnose::run(&f.snap, &f.lineage, &f.cfg, f.now));
}

/// Lineage join plus the rules (what `unstick diagnose` does after reading).
#[divan::bench]
fn lineage_and_diagnose(b: divan::Bencher) {
    let f = &*FIXTURE;
    b.bench(|| {
        let l = Lineage::build(&f.snap);
        diagnose::run(&f.snap, &l, &f.cfg, f.now)
    });
}

/// The whole offline path: read the bundle from disk, join, diagnose.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn bundle_read_and_diagnose(b: divan::Bencher) {
    let f = &*FIXTURE;
    b.bench(|| {
        let bundle = unstick_core::bundle::read(f.bundle.path(), &unstick_core::clock::WallClock).unwrap();
        let l = Lineage::build(&bundle.snapshot);
        diagnose::run(&bundle.snapshot, &l, &f.cfg, bundle.clock)
    });
}
