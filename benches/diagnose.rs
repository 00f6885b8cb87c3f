//! Diagnosis time on a generated cluster of 10,000 pods / 500 nodes / 2,000 PVs (target: under
//! 50 ms for `diagnose::run`). Run with `cargo bench --bench diagnose`.
//!
//! The cluster: 500 Ready nodes (5 of them lost), 2,000 ceph-csi RWO volumes each used by one pod,
//! 8,000 pods without volumes, a VolumeAttachment and a watcher per used volume, 3 events per
//! volume pod, 50 blocklist entries; plus scattered incidents (replacement pods waiting with
//! Multi-Attach events, stale locks, unmap-busy events) so every rule has work to do.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::sync::{Arc, LazyLock};

use jiff::Timestamp;
use unstick::config::{Config, DiagnoseConfig};
use unstick::diagnose;
use unstick::fixtures::{csi_pv, event, node, pod, pvc, va};
use unstick::lineage::Lineage;
use unstick::model::ceph::{BlocklistEntry, BlocklistTarget, Lock, Watcher};
use unstick::model::objects::Pod;
use unstick::model::{ImageFacts, ImageRef, Observed, Snapshot};

const NODES: usize = 500;
const PODS: usize = 10_000;
const PVS: usize = 2_000;

fn ts(now: Timestamp, secs_ago: i64) -> String {
    (now - jiff::SignedDuration::from_secs(secs_ago)).to_string()
}

fn uuid(i: usize) -> String {
    format!("5b7c3f5e-1d2a-4c3b-9e8f-{i:012x}")
}

fn node_ip(n: usize) -> String {
    format!("10.{}.{}.{}", n / 65536, (n / 256) % 256, n % 256 + 1)
}

/// Generates the cluster described in the module doc.
pub fn generate(now: Timestamp) -> Snapshot {
    let mut snap = Snapshot { taken_at: Some(now), ..Default::default() };
    let lost = |n: usize| n % 100 == 7; // 5 lost nodes
    let unique =
        |i: usize| format!("kubernetes.io/csi/rbd.csi.ceph.com^0001-0009-rook-ceph-0000000000000002-{}", uuid(i));
    let mut in_use: Vec<Vec<String>> = vec![vec![]; NODES];
    for i in 0..PVS {
        in_use[i % NODES].push(unique(i));
    }
    for (n, vols) in in_use.iter().enumerate() {
        let refs: Vec<&str> = vols.iter().map(String::as_str).collect();
        let (ready, since) = if lost(n) { ("Unknown", ts(now, 900)) } else { ("True", ts(now, 86_400 * 20)) };
        snap.nodes.push(node(&format!("node-{n:03}"), &node_ip(n), ready, &since, &refs));
    }
    let at = now;
    let mut pods: Vec<Arc<Pod>> = Vec::with_capacity(PODS + 200);
    for i in 0..PVS {
        let ns = format!("ns-{}", i % 50);
        let n = i % NODES;
        let nodename = format!("node-{n:03}");
        let claim = format!("data-{i}");
        snap.pvcs.push(pvc(&ns, &claim, &format!("pv-{i}")));
        snap.pvs.push(csi_pv(&format!("pv-{i}"), &ns, &claim, &uuid(i)));
        snap.volume_attachments.push(va(&format!("csi-{i}"), &format!("pv-{i}"), &nodename, None));
        let state = if lost(n) { "Terminating" } else { "Running" };
        pods.push(pod(&ns, &format!("app-{i}-0"), &nodename, &claim, state, &ts(now, 86_400)));
        for (k, reason) in ["Scheduled", "Pulled", "Started"].iter().enumerate() {
            snap.events.push(event(
                &ns,
                &format!("app-{i}-0"),
                reason,
                "normal operation message",
                1,
                &ts(now, 600 + k as i64),
            ));
        }
        let image = ImageRef::new("replicapool", format!("csi-vol-{}", uuid(i)));
        let w =
            Watcher { address: format!("{}:0/{}", node_ip(n), 1000 + i), client: 4000 + i as u64, cookie: i as u64 };
        let mut locks = vec![];
        if i % 97 == 0 {
            // a stale advisory lock left by a node two along (the replacement runs on the next one)
            locks.push(Lock {
                id: "kubelet_lock_magic_x".into(),
                locker: "client.1".into(),
                address: format!("{}:0/7", node_ip((n + 2) % NODES)),
            });
        }
        snap.ceph.images.insert(
            image,
            ImageFacts { watchers: Observed { value: Ok(vec![w]), at }, locks: Observed { value: Ok(locks), at } },
        );
        if lost(n) || i % 97 == 0 {
            // replacement pod waiting on another node
            let other = format!("node-{:03}", (n + 1) % NODES);
            pods.push(pod(&ns, &format!("app-{i}-1"), &other, &claim, "ContainerCreating", &ts(now, 600)));
            snap.events.push(event(&ns, &format!("app-{i}-1"), "FailedAttachVolume",
                &format!("Multi-Attach error for volume \"pv-{i}\" Volume is already exclusively attached to one node and can't be attached to another"), 5, &ts(now, 30)));
        }
        if i % 101 == 0 {
            snap.events.push(event(&ns, &format!("app-{i}-0"), "FailedUnMount",
                &format!("UnmountDevice failed for volume \"pv-{i}\" : rbd: failed to unmap device /dev/rbd{n}, error exit status 16, rbd output: [114 98 100 58 32 117 110 109 97 112 32 102 97 105 108 101 100 58 32 40 49 54 41 32 68 101 118 105 99 101 32 111 114 32 114 101 115 111 117 114 99 101 32 98 117 115 121 10]"), 9, &ts(now, 20)));
        }
    }
    let mut i = 0;
    while pods.len() < PODS {
        let n = i % NODES;
        pods.push(pod(
            &format!("ns-{}", i % 50),
            &format!("web-{i}"),
            &format!("node-{n:03}"),
            "no-such-claim",
            "Running",
            &ts(now, 3600),
        ));
        i += 1;
    }
    snap.pods = pods;
    let entries = (0..50)
        .map(|k| BlocklistEntry { target: BlocklistTarget::Addr(format!("10.9.9.{k}:0/{}", 100 + k)), until: None })
        .chain([BlocklistEntry { target: BlocklistTarget::Addr(format!("{}:0/0", node_ip(3))), until: None }]);
    snap.ceph.blocklist = Some(Observed { value: Ok(entries.collect()), at });
    snap
}

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
    let m = unstick::bundle::Manifest { collected_at: Some(now), ..Default::default() };
    unstick::bundle::write_snapshot(bundle.path(), &snap, &m).unwrap();
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
        let bundle = unstick::bundle::read(f.bundle.path(), &unstick::clock::WallClock).unwrap();
        let l = Lineage::build(&bundle.snapshot);
        diagnose::run(&bundle.snapshot, &l, &f.cfg, bundle.clock)
    });
}
