//! Diagnosis tests: the five seed incidents of `fixtures::incidents()` found with the right pattern
//! and evidence, and the healthy look-alikes of issue 3 not reported. Per-rule details live next
//! to the rules.

use std::sync::Arc;

use crate::model::objects::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment};

use super::*;
use crate::config::Config;
use crate::fixtures::{self, csi_pv, event, node, pod, pvc, va};
use crate::model::ceph::{BlocklistEntry, BlocklistTarget, Lock, Watcher};
use crate::model::{CephReadError, ImageFacts, ImageRef, Observed};

/// `fixtures::now()` plus `offset` seconds, RFC 3339.
pub(crate) fn at(offset: i64) -> String {
    (fixtures::now() + jiff::SignedDuration::from_secs(offset)).to_string()
}

/// Watchers and locks read at `fixtures::now()`.
pub(crate) fn facts(w: Vec<Watcher>, l: Vec<Lock>) -> ImageFacts {
    let at = fixtures::now();
    ImageFacts { watchers: Observed { value: Ok(w), at }, locks: Observed { value: Ok(l), at } }
}

/// A snapshot taken at `fixtures::now()`, no events, no Ceph facts.
pub(crate) fn snap_with(
    nodes: Vec<Arc<Node>>,
    pods: Vec<Arc<Pod>>,
    pvcs: Vec<Arc<PersistentVolumeClaim>>,
    pvs: Vec<Arc<PersistentVolume>>,
    volume_attachments: Vec<Arc<VolumeAttachment>>,
) -> Snapshot {
    Snapshot { nodes, pods, pvcs, pvs, volume_attachments, taken_at: Some(fixtures::now()), ..Default::default() }
}

/// One rule alone, default thresholds, clock at `fixtures::now()`.
pub(crate) fn run_one(snap: &Snapshot, p: PatternId) -> Vec<Finding> {
    let cfg = Config::defaults().diagnose;
    let lin = Lineage::build(snap);
    rule(p)(&Ctx::new(snap, &lin, &super::Index::build(snap), &cfg, fixtures::now()))
}

pub(crate) fn run_all(snap: &Snapshot) -> Vec<Finding> {
    run(snap, &Lineage::build(snap), &Config::defaults().diagnose, fixtures::now())
}

pub(crate) const UUID: &str = "5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4eff";

pub(crate) fn image() -> ImageRef {
    ImageRef::new("replicapool", format!("csi-vol-{UUID}"))
}

pub(crate) fn unique() -> String {
    format!("kubernetes.io/csi/rbd.csi.ceph.com^0001-0009-rook-ceph-0000000000000002-{UUID}")
}

pub(crate) fn watcher(addr: &str) -> Watcher {
    Watcher { address: addr.into(), client: 4155, cookie: 140645683434688 }
}

/// Two nodes (a 10.0.0.1, b 10.0.0.2), both Ready, one RWO CSI volume `pv1` for claim `ns/data`.
pub(crate) fn two_nodes(a_ready: &str, a_since: i64) -> Snapshot {
    snap_with(
        vec![node("a", "10.0.0.1", a_ready, &at(a_since), &[]), node("b", "10.0.0.2", "True", &at(-86400), &[])],
        vec![],
        vec![pvc("ns", "data", "pv1")],
        vec![csi_pv("pv1", "ns", "data", UUID)],
        vec![],
    )
}

pub(crate) fn patterns(f: &[Finding]) -> Vec<&'static str> {
    let mut v: Vec<_> = f.iter().map(|f| f.pattern.as_str()).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn incidents_give_their_patterns_and_nothing_else() {
    let f = run_all(&fixtures::incidents());
    assert_eq!(
        patterns(&f),
        // seed 004's web-0 waits past the grace with no event at all: unexplained (issue 24)
        ["dead-node-watcher", "multi-attach-node-lost", "stale-lock", "unexplained", "unmap-busy"],
        "{:#?}",
        f.iter().map(|f| &f.summary).collect::<Vec<_>>()
    );
    // 001 and 002 each: one multi-attach finding per volume.
    let ma: Vec<_> = f.iter().filter(|f| f.pattern == PatternId::MultiAttachNodeLost).collect();
    assert_eq!(ma.len(), 2);
    assert!(ma.iter().all(|f| f.node.as_deref() == Some("k8s-node-lost")));
    assert!(ma.iter().any(|f| f.volume.as_deref() == Some("user-pv")
        && f.evidence.iter().any(|e| e.text.contains("Volume is already used by pod(s) user-db-79f7876cbc-dl8b8"))
        && f.mentions(ObjectKind::VolumeAttachment, None, "csi-001")));
    // Sorted: critical first, and within a severity the oldest problem first.
    for w in f.windows(2) {
        assert!(w[0].severity <= w[1].severity);
    }
}

#[test]
fn seed_002_dead_node_watcher_evidence() {
    let f = run_one(&fixtures::incidents(), PatternId::DeadNodeWatcher);
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!(f.severity, Severity::Critical);
    assert_eq!(f.node.as_deref(), Some("k8s-node-lost"));
    assert!(
        f.evidence
            .iter()
            .any(|e| e.source == EvidenceSource::RbdStatus && e.text.contains("watcher=127.0.0.1:0/4208975345"))
    );
    assert!(f.evidence.iter().any(|e| e.source == EvidenceSource::NodeCondition && e.text.contains("Ready=Unknown")));
    assert!(f.evidence.iter().any(|e| e.source == EvidenceSource::Event && e.text.contains("is still being used")));
    assert!(f.mentions(ObjectKind::Pod, Some("incident-002"), "sleep-6f7c8cc954-5hptw"));
    assert_eq!(f.playbook, "blocklist-dead-watcher");
}

#[test]
fn seed_003_unmap_busy_evidence_decoded() {
    let f = run_one(&fixtures::incidents(), PatternId::UnmapBusy);
    assert_eq!(f.len(), 1, "{f:#?}");
    let f = &f[0];
    assert_eq!(f.node.as_deref(), Some("k8s-node-c"));
    assert_eq!(f.volume.as_deref(), Some("pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802"));
    let ev = f.evidence.iter().find(|e| e.source == EvidenceSource::Event).unwrap();
    assert!(ev.text.contains("unmap failed: (16) Device or resource busy") && ev.text.contains("(x30)"), "{}", ev.text);
    assert!(!ev.text.contains("[114 98"), "byte slice decoded");
    assert!(f.summary.contains("/dev/rbd3"));
}

#[test]
fn seed_004_same_node_restage_with_harness_event() {
    let mut s = fixtures::incidents();
    // The harness's seed 004: ceph-csi refuses the new pod's stage while the old one's is running.
    s.events.push(event(
        "incident-004",
        "web-0",
        "FailedMount",
        "MountVolume.MountDevice failed for volume \"pvc-www-web-0\" : rpc error: code = Aborted desc = an operation with the given Volume ID 0001-0009-rook-ceph-0000000000000002-5b7c3f5e-1d2a-4c3b-9e8f-0a1b2c3d4e04 already exists",
        6,
        "2026-11-22T02:59:40Z",
    ));
    // The message alone is no restage (issue 24): the driver may be hanging on unreachable monitors.
    assert!(run_one(&s, PatternId::SameNodeRestage).is_empty());
    assert_eq!(
        patterns(&run_all(&s).into_iter().filter(|f| f.volume.as_deref() == Some("pvc-www-web-0")).collect::<Vec<_>>()),
        ["unexplained"]
    );
    // With its predecessor: the old web-0 (another uid) stopped on the same node.
    let i = s.pods.iter().position(|p| p.metadata.name.as_deref() == Some("web-0")).unwrap();
    let mut web = (*s.pods[i]).clone();
    web.metadata.uid = Some("new-web-0".into());
    s.pods[i] = Arc::new(web);
    let mut killing =
        (*event("incident-004", "web-0", "Killing", "Stopping container nginx", 1, "2026-11-22T02:56:00Z")).clone();
    killing.involved_object.uid = Some("old-web-0".into());
    killing.source = Some(k8s_openapi::api::core::v1::EventSource {
        host: Some("k8s-node-d".into()),
        component: Some("kubelet".into()),
    });
    s.events.push(Arc::new(killing.clone()));
    let f = run_one(&s, PatternId::SameNodeRestage);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].node.as_deref(), Some("k8s-node-d"));
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].evidence.iter().any(|e| e.source == EvidenceSource::NodeStatus && e.text.contains("volumesInUse")));
    assert!(f[0].evidence.iter().any(|e| e.text.contains("already exists")));
    // Without that event (only a slow ContainerCreating, e.g. an image pull) it is not a finding.
    assert!(run_one(&fixtures::incidents(), PatternId::SameNodeRestage).is_empty());
}

#[test]
fn restage_old_pod_terminating_on_the_same_node() {
    let mut s = two_nodes("True", -86400);
    s.nodes[0] = node("a", "10.0.0.1", "True", &at(-86400), &[&unique()]);
    s.pods = vec![
        pod("ns", "web-old", "a", "data", "Terminating", &at(-200)),
        pod("ns", "web-new", "a", "data", "ContainerCreating", &at(-180)),
    ];
    s.volume_attachments = vec![va("va1", "pv1", "a", None)];
    let f = run_one(&s, PatternId::SameNodeRestage);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(f[0].mentions(ObjectKind::Pod, Some("ns"), "web-old"));
    // Attached to another node instead: that is multi-attach, not a restage.
    s.volume_attachments = vec![va("va1", "pv1", "a", None), va("va2", "pv1", "b", None)];
    assert!(run_one(&s, PatternId::SameNodeRestage).is_empty());
}

#[test]
fn ready_node_holding_rwo_volume_for_running_pod_is_healthy() {
    let mut s = two_nodes("True", -86400);
    s.pods = vec![
        pod("ns", "db-0", "a", "data", "Running", &at(-3600)),
        pod("ns", "db-1", "b", "data", "ContainerCreating", &at(-600)),
    ];
    s.volume_attachments = vec![va("va1", "pv1", "a", None)];
    s.events = vec![event(
        "ns",
        "db-1",
        "FailedAttachVolume",
        "Multi-Attach error for volume \"pv1\" Volume is already used by pod(s) db-0",
        3,
        &at(-30),
    )];
    s.ceph.images.insert(image(), facts(vec![watcher("10.0.0.1:0/981268693")], vec![]));
    let f = run_all(&s);
    // Not a lost node: the claim is shared by two healthy nodes (issue 24), never to be fenced.
    assert_eq!(patterns(&f), ["rwo-claim-shared"], "{f:#?}");
    // its playbook is read-only guidance (remedy/playbook/guidance.rs): no write at all
    assert_eq!(f[0].playbook, "rwo-claim-guidance");
}

#[test]
fn multi_attach_needs_a_lost_node_for_long_enough() {
    let mut s = two_nodes("Unknown", -10); // NotReady for 10 s: a kubelet restart
    s.pods = vec![pod("ns", "db-1", "b", "data", "ContainerCreating", &at(-600))];
    s.volume_attachments = vec![va("va1", "pv1", "a", None)];
    s.events = vec![event(
        "ns",
        "db-1",
        "FailedAttachVolume",
        "Multi-Attach error for volume \"pv1\" Volume is already exclusively attached to one node and can't be attached to another",
        3,
        &at(-30),
    )];
    assert!(run_one(&s, PatternId::MultiAttachNodeLost).is_empty());
    s.nodes[0] = node("a", "10.0.0.1", "Unknown", &at(-600), &[]);
    let f = run_one(&s, PatternId::MultiAttachNodeLost);
    assert_eq!(f.len(), 1);
    assert!(f[0].summary.contains("not Ready for 10m"), "{}", f[0].summary);
    // A RWX volume may be attached to many nodes: never multi-attach.
    let mut pv = (*s.pvs[0]).clone();
    pv.spec.as_mut().unwrap().access_modes = Some(vec!["ReadWriteMany".into()]);
    s.pvs = vec![Arc::new(pv)];
    assert!(run_one(&s, PatternId::MultiAttachNodeLost).is_empty());
}

#[test]
fn running_pod_whose_node_holds_the_watcher_is_healthy() {
    let mut s = two_nodes("True", -86400);
    s.pods = vec![pod("ns", "db-0", "a", "data", "Running", &at(-3600))];
    s.ceph.images.insert(image(), facts(vec![watcher("10.0.0.1:0/981268693")], vec![]));
    assert!(run_all(&s).is_empty());
    // Terminating within the grace: still unmounting normally, even with a pod waiting elsewhere.
    s.pods = vec![
        pod("ns", "db-0", "a", "data", "Terminating", &at(-60)),
        pod("ns", "db-0b", "b", "data", "ContainerCreating", &at(-30)),
    ];
    assert!(run_all(&s).is_empty(), "{:#?}", run_all(&s));
}

#[test]
fn live_node_stale_map_when_pod_left_the_node() {
    let mut s = two_nodes("True", -86400);
    s.pods = vec![pod("ns", "db-1", "b", "data", "ContainerCreating", &at(-600))];
    s.ceph.images.insert(image(), facts(vec![watcher("10.0.0.1:0/981268693")], vec![]));
    let f = run_one(&s, PatternId::LiveNodeStaleMap);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].severity, Severity::Critical);
    assert_eq!(f[0].node.as_deref(), Some("a"));
    assert!(run_one(&s, PatternId::DeadNodeWatcher).is_empty());
    // A ReadWriteMany volume may be open on several nodes: a slow pod elsewhere is not blamed
    // on the watcher without an event saying the image is in use.
    let mut rwx = s.clone();
    let mut pv = (*rwx.pvs[0]).clone();
    pv.spec.as_mut().unwrap().access_modes = Some(vec!["ReadWriteMany".into()]);
    rwx.pvs = vec![Arc::new(pv)];
    assert!(run_one(&rwx, PatternId::LiveNodeStaleMap).is_empty());
    rwx.events = vec![event(
        "ns",
        "db-1",
        "FailedMount",
        &format!(
            "MountVolume.WaitForAttach failed for volume \"pv1\" : rbd image replicapool/csi-vol-{UUID} is still being used"
        ),
        2,
        &at(-10),
    )];
    assert_eq!(run_one(&rwx, PatternId::LiveNodeStaleMap).len(), 1);
    // The same watcher already fenced by an exact blocklist entry: nothing left to do.
    s.ceph.blocklist = Some(Observed {
        value: Ok(vec![BlocklistEntry { target: BlocklistTarget::Addr("10.0.0.1:0/981268693".into()), until: None }]),
        at: fixtures::now(),
    });
    assert!(run_one(&s, PatternId::LiveNodeStaleMap).is_empty());
}

#[test]
fn dead_node_watcher_without_waiting_pod_is_a_warning() {
    let mut s = two_nodes("Unknown", -900);
    s.ceph.images.insert(image(), facts(vec![watcher("10.0.0.1:0/4208975345")], vec![]));
    let f = run_one(&s, PatternId::DeadNodeWatcher);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    // A watcher from an address that is no node's is not blamed on a node.
    s.ceph.images.insert(image(), facts(vec![watcher("192.0.2.7:0/1")], vec![]));
    assert!(run_one(&s, PatternId::DeadNodeWatcher).is_empty());
}

#[test]
fn va_finalizer_stuck_only_when_node_down_and_old() {
    let mut s = two_nodes("True", -86400);
    s.pods = vec![pod("ns", "db-1", "b", "data", "ContainerCreating", &at(-900))];
    // Deleted long ago, but its node is Ready: a normal (if slow) detach.
    s.volume_attachments = vec![va("va1", "pv1", "a", Some(&at(-3600)))];
    assert!(run_one(&s, PatternId::VaFinalizerStuck).is_empty());
    // Node gone, deleted 30 s ago: normal.
    s.volume_attachments = vec![va("va1", "pv1", "gone", Some(&at(-30)))];
    assert!(run_one(&s, PatternId::VaFinalizerStuck).is_empty());
    // Node gone, deleted 10 min ago: stuck.
    s.volume_attachments = vec![va("va1", "pv1", "gone", Some(&at(-600)))];
    s.ceph.images.insert(image(), facts(vec![], vec![]));
    let f = run_one(&s, PatternId::VaFinalizerStuck);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].severity, Severity::Critical);
    assert!(f[0].evidence.iter().any(|e| e.text.contains("does not exist")));
    assert!(f[0].evidence.iter().any(|e| e.source == EvidenceSource::RbdStatus && e.text.ends_with("no watchers")));
    assert!(f[0].evidence.iter().any(|e| e.text.contains("external-attacher/rbd-csi-ceph-com")));
}

fn blocklist(entries: &[BlocklistTarget]) -> Option<Observed<Result<Vec<BlocklistEntry>, CephReadError>>> {
    let value = entries
        .iter()
        .map(|t| BlocklistEntry { target: t.clone(), until: Some("2026-11-22T03:50:00.000000+0000".into()) });
    Some(Observed { value: Ok(value.collect()), at: fixtures::now() })
}

#[test]
fn blocklist_leftover_whole_host_and_range_only() {
    let mut s = two_nodes("True", -86400);
    s.pods = vec![pod("ns", "db-0", "a", "data", "Running", &at(-3600))];
    // A nonce-specific entry (what `rbd lock rm` and the dead-watcher playbook add): not a leftover.
    s.ceph.blocklist = blocklist(&[BlocklistTarget::Addr("10.0.0.1:0/1864102866".into())]);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty());
    s.ceph.blocklist = blocklist(&[BlocklistTarget::Addr("10.0.0.1:0/0".into())]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Critical, "a pod with an RBD volume runs there");
    assert!(f[0].mentions(ObjectKind::Node, None, "a") && !f[0].mentions(ObjectKind::Node, None, "b"));
    s.ceph.blocklist = blocklist(&[BlocklistTarget::Range("10.0.0.0:0/24".into())]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1);
    assert!(f[0].mentions(ObjectKind::Node, None, "a") && f[0].mentions(ObjectKind::Node, None, "b"));
    // Fencing a node that is down is the point of the entry.
    let mut s = two_nodes("Unknown", -900);
    s.ceph.blocklist = blocklist(&[BlocklistTarget::Addr("10.0.0.1:0/0".into())]);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty());
}

/// 300 Ready nodes, each running a pod with an RBD volume and one without; a whole-host entry
/// fences one of them: the finding names that node and its RBD pods only (found by the entry's
/// IP and the pods on the node, not by a walk over every node and volume). Two nodes sharing
/// the address are both named; a range names every node it covers, in name order.
#[test]
fn blocklist_leftover_among_many_nodes() {
    let mut s = snap_with(vec![], vec![], vec![], vec![], vec![]);
    for n in 0..300 {
        let (name, claim) = (format!("n-{n:03}"), format!("data-{n}"));
        s.nodes.push(node(&name, &format!("10.1.{}.{}", n / 200, n % 200 + 1), "True", &at(-86400), &[]));
        s.pvcs.push(pvc("ns", &claim, &format!("pv-{n}")));
        s.pvs.push(csi_pv(&format!("pv-{n}"), "ns", &claim, &format!("5b7c3f5e-1d2a-4c3b-9e8f-{n:012x}")));
        s.pods.push(pod("ns", &format!("db-{n}"), &name, &claim, "Running", &at(-3600)));
        s.pods.push(pod("ns", &format!("web-{n}"), &name, "no-such-claim", "Running", &at(-3600)));
    }
    // n-123 (10.1.0.124) runs a second RBD pod, and a finished one
    s.pods.push(pod("ns", "db-123-b", "n-123", "data-7", "Running", &at(-3600)));
    let mut done = (*pod("ns", "db-123-c", "n-123", "data-8", "Running", &at(-3600))).clone();
    done.status.get_or_insert_with(Default::default).phase = Some("Succeeded".into());
    s.pods.push(Arc::new(done));
    s.ceph.blocklist = blocklist(&[BlocklistTarget::Addr("10.1.0.124:0/0".into())]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1, "{f:#?}");
    let sum = &f[0].summary;
    assert!(
        sum.starts_with("Ready node n-123 is still fenced") && sum.ends_with("(2 pod(s) with RBD volumes)"),
        "{sum}"
    );
    let nodes: Vec<&str> =
        f[0].objects.iter().filter(|o| o.kind == ObjectKind::Node).map(|o| o.name.as_str()).collect();
    let pods: Vec<&str> = f[0].objects.iter().filter(|o| o.kind == ObjectKind::Pod).map(|o| o.name.as_str()).collect();
    assert_eq!((nodes, pods), (vec!["n-123"], vec!["db-123", "db-123-b"]), "in the volumes' order (ns/data-123 first)");
    // another node with the same InternalIP: both fenced
    let mut shared = s.clone();
    shared.nodes[200] = node("n-200", "10.1.0.124", "True", &at(-86400), &[]);
    let f = run_one(&shared, PatternId::BlocklistLeftover);
    assert!(f[0].summary.starts_with("Ready node n-123, n-200 is still fenced"), "{}", f[0].summary);
    // a range over 10.1.0.1-10.1.0.4 (the second block's 10.1.1.x are outside)
    s.ceph.blocklist = blocklist(&[BlocklistTarget::Range("10.1.0.0:0/30".into())]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert!(f[0].summary.starts_with("Ready node n-000, n-001, n-002 is still fenced"), "{}", f[0].summary);
}

#[test]
fn unmap_busy_needs_repeats_recency_and_presence() {
    let msg = "UnmapDevice failed for volume \"pv1\" on node \"a\" : rbd: failed to unmap device /dev/rbd0, error exit status 16, rbd output: [114 98 100 58 32 117 110 109 97 112]";
    let mut s = two_nodes("True", -86400);
    s.nodes[0] = node("a", "10.0.0.1", "True", &at(-86400), &[&unique()]);
    s.events = vec![event("ns", "gone-pod", "FailedUnMount", msg, 2, &at(-30))];
    assert!(run_one(&s, PatternId::UnmapBusy).is_empty(), "2 < unmap_busy_min_count");
    s.events = vec![event("ns", "gone-pod", "FailedUnMount", msg, 5, &at(-7200))];
    assert!(run_one(&s, PatternId::UnmapBusy).is_empty(), "older than event_max_age_seconds");
    s.events = vec![event("ns", "gone-pod", "FailedUnMount", msg, 5, &at(-30))];
    assert_eq!(run_one(&s, PatternId::UnmapBusy).len(), 1, "pod gone but volume still in use on a");
    s.nodes[0] = node("a", "10.0.0.1", "True", &at(-86400), &[]);
    assert!(run_one(&s, PatternId::UnmapBusy).is_empty(), "pod gone and volume detached: resolved");
}

#[test]
fn unmap_busy_hides_the_stale_map_it_causes() {
    let msg = "UnmountDevice failed for volume \"pv1\" : rbd: failed to unmap device /dev/rbd3, error exit status 16";
    let mut s = two_nodes("True", -86400);
    s.pods = vec![
        pod("ns", "db-0", "a", "data", "Terminating", &at(-1800)),
        pod("ns", "db-0b", "b", "data", "ContainerCreating", &at(-900)),
    ];
    s.events = vec![event("ns", "db-0", "FailedUnMount", msg, 9, &at(-20))];
    s.ceph.images.insert(image(), facts(vec![watcher("10.0.0.1:0/1")], vec![]));
    assert_eq!(run_one(&s, PatternId::LiveNodeStaleMap).len(), 1);
    let f = run_all(&s);
    assert_eq!(patterns(&f), ["unmap-busy"], "{f:#?}");
    assert_eq!(f[0].severity, Severity::Critical, "a pod waits elsewhere");
}

#[test]
fn probe_evidence_names_the_holder() {
    let mut f = run_one(&fixtures::incidents(), PatternId::UnmapBusy);
    let holder = |host: bool, pid| crate::probe::MountHolder {
        pid,
        tid: Some(28447),
        comm: "node_exporter".into(),
        cgroup: "/kubepods/besteffort/pod1/abc".into(),
        mount_namespace: "mnt:[4026532201]".into(),
        host_namespace: host,
        mount_point: "/host/data/kubelet/plugins/kubernetes.io/rbd/mounts/k8s-image".into(),
        source: "/dev/rbd3".into(),
        major_minor: "250:0".into(),
        fstype: "ext4".into(),
    };
    let report = crate::probe::ProbeReport {
        node: "k8s-node-c".into(),
        scanned_at: fixtures::now(),
        device: Some("rbd3".into()),
        major_minor: Some("250:0".into()),
        holders: vec![holder(true, 1200), holder(false, 21839)],
        processes: 10,
        namespaces: 3,
        unreadable: 0,
        addresses: vec![],
    };
    add_probe_evidence(&mut f, &[("k8s-node-c".to_string(), report)].into_iter().collect());
    let probe: Vec<_> = f[0].evidence.iter().filter(|e| e.source == EvidenceSource::Probe).collect();
    assert_eq!(probe.len(), 1, "{probe:#?}");
    assert!(probe[0].text.contains("pid 21839 thread 28447 (node_exporter)"), "{}", probe[0].text);
}

#[test]
fn json_shape() {
    let findings = run_all(&fixtures::incidents());
    let r = Report {
        findings,
        missing: vec!["ceph/blocklist.json".into()],
        incomplete: vec![],
        generated_at: fixtures::now(),
        input: "test".into(),
    };
    let v = serde_json::to_value(&r).unwrap();
    let f = &v["findings"][0];
    for k in ["pattern", "severity", "summary", "objects", "evidence", "explanation", "playbook", "id"] {
        assert!(f.get(k).is_some(), "{k} missing in {f}");
    }
    assert_eq!(f["severity"], "critical");
    assert!(f["evidence"][0]["observed_at"].as_str().unwrap().ends_with('Z'));
    assert!(f["evidence"][0]["source"].is_string());
    assert!(f["objects"][0]["kind"].is_string() && f["objects"][0]["name"].is_string());
    assert_eq!(v["missing"][0], "ceph/blocklist.json");
    let text = render::text(&r);
    assert!(text.contains("[CRITICAL] ") && text.contains("playbook: remove-stale-lock"), "{text}");
    let md = render::markdown(&r);
    assert!(md.contains("| 1 | critical |") && md.contains("## Missing"), "{md}");
}

#[test]
fn no_findings_on_an_empty_or_error_snapshot() {
    assert!(run_all(&Snapshot::default()).is_empty());
    let mut s = fixtures::incidents();
    for f in s.ceph.images.values_mut() {
        f.watchers.value = Err(fixtures::timed_out("rbd status"));
        f.locks.value = Err(fixtures::timed_out("rbd lock ls"));
    }
    s.ceph.blocklist = Some(Observed { value: Err(fixtures::timed_out("ceph osd blocklist ls")), at: fixtures::now() });
    // Kubernetes evidence alone still proves multi-attach and unmap-busy; the pods of the other
    // volumes are stuck without a recognised cause.
    assert_eq!(patterns(&run_all(&s)), ["multi-attach-node-lost", "unexplained", "unmap-busy"]);
}

#[test]
fn event_on_nonexistent_objects_and_odd_data_do_not_panic() {
    let mut s = two_nodes("True", -86400);
    let mut e: Event = (*event("ns", "x", "FailedMount", "Multi-Attach error for volume \"", 1, &at(0))).clone();
    e.last_timestamp = None;
    e.first_timestamp = None;
    e.involved_object = Default::default();
    s.events = vec![Arc::new(e)];
    s.ceph.images.insert(
        ImageRef::new("p", "orphan"),
        facts(vec![watcher("garbage")], vec![Lock { id: String::new(), locker: String::new(), address: "::".into() }]),
    );
    assert!(run_all(&s).is_empty());
}

#[test]
fn failed_ceph_reads_keep_the_finding_marked_unverified() {
    let cfg = Config::defaults().diagnose;
    let mut s = fixtures::incidents();
    let lin = Lineage::build(&s);
    let before = run(&s, &lin, &cfg, fixtures::now());
    let dead = before.iter().find(|f| f.pattern == PatternId::DeadNodeWatcher).expect("seed 002").clone();
    let image = s.ceph.images.keys().find(|i| dead.objects.contains(&ObjectRef::image(i))).unwrap().clone();
    let later = fixtures::now() + jiff::SignedDuration::from_secs(60);
    fn err<T>(cmd: &str, at: jiff::Timestamp) -> Observed<Result<T, CephReadError>> {
        Observed { value: Err(fixtures::timed_out(cmd)), at }
    }
    // The mon is down: every read fails. Nothing is cleared.
    s.ceph.apply_image(
        image.clone(),
        ImageFacts { watchers: err("rbd status", later), locks: err("rbd lock ls", later) },
    );
    s.ceph.apply_blocklist(err("ceph osd blocklist ls", later));
    let after = run(&s, &lin, &cfg, later);
    let ids = |v: &[Finding]| v.iter().map(|f| f.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before));
    let kept = after.iter().find(|f| f.id == dead.id).unwrap();
    let reads: Vec<&str> = kept.unverified.iter().map(|u| u.read.as_str()).collect();
    assert!(
        reads.contains(&format!("rbd status {image}").as_str()) && reads.contains(&"ceph osd blocklist ls"),
        "{reads:?}"
    );
    assert!(kept.unverified[0].line().contains("unverified since") && kept.unverified[0].line().contains("timed out"));
    // A second failure keeps the first time; a success clears the mark and decides alone.
    s.ceph.apply_image(
        image.clone(),
        ImageFacts {
            watchers: err("rbd status", later + jiff::SignedDuration::from_secs(5)),
            locks: err("rbd lock ls", later),
        },
    );
    let since = s.ceph.unverified[&crate::model::CephRead::Watchers(image.clone())].since;
    assert_eq!(since, later);
    s.ceph.apply_image(image.clone(), facts(vec![], vec![]));
    assert!(!s.ceph.unverified.contains_key(&crate::model::CephRead::Watchers(image.clone())));
    let healed = run(&s, &lin, &cfg, later);
    assert!(!healed.iter().any(|f| f.id == dead.id), "an empty watcher list that was read clears it");
}
