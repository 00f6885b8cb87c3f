//! The generated cluster the benches share: 10,000 pods / 500 nodes / 2,000 PVs (see
//! [`generate`]). Included by each bench with `#[path]`.

use std::sync::Arc;

use jiff::Timestamp;
use unstick_core::fixtures::{csi_pv, event, node, pod, pvc, va};
use unstick_core::model::ceph::{BlocklistEntry, BlocklistTarget, Lock, Watcher};
use unstick_core::model::objects::Pod;
use unstick_core::model::{ImageFacts, ImageRef, Observed, Snapshot};

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

/// Generates the cluster: 500 Ready nodes (5 of them lost), 2,000 ceph-csi RWO volumes each used
/// by one pod, 8,000 pods without volumes, a VolumeAttachment and a watcher per used volume, 3
/// events per volume pod, 50 blocklist entries; plus scattered incidents (replacement pods waiting
/// with Multi-Attach events, stale locks, unmap-busy events) so every rule has work to do.
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
