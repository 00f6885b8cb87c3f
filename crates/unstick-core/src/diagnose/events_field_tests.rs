//! Wordings and forms seen in the field (issue 14), with messages written from the public sources
//! that print them; each rule must find its pattern from them, and the look-alikes must not.

use std::sync::Arc;

use crate::model::objects::{Event, Node};
use k8s_openapi::api::core::v1::NodeAddress;

use super::*;
use crate::diagnose::PatternId;
use crate::diagnose::tests::{at, facts, run_one, snap_with};
use crate::fixtures::{self, csi_pv, event, node, pod, pvc, rbd_pv, va};
use crate::model::Observed;
use crate::model::ceph::{BlocklistEntry, BlocklistTarget, Watcher};

const UUID: &str = "0b1c0d2e-1111-4a2b-9c3d-4e5f6a7b8c9d";

/// kubernetes/kubernetes `pkg/volume/rbd/disk_manager.go` (1.8–1.9): the in-tree plugin's fencing
/// failure, `rbd: failed to lock image %s (maybe locked by other nodes), error %v`.
const LOCK_1_8: &str = "MountVolume.SetUp failed for volume \"index-api-pv\" : rbd: failed to lock image index-api-image (maybe locked by other nodes), error exit status 22";
/// ceph/ceph-csi `internal/rbd/rbd_attach.go`: `rbd: unmap for spec (%s) failed (%w): (%s)`, as the
/// CSI node plugin logs it (no kubelet prefix).
const CSI_UNMAP: &str = "rbd: unmap for spec (replicapool/csi-vol-0b1c0d2e-1111-4a2b-9c3d-4e5f6a7b8c9d) failed (exit status 16): (rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy\n)";
/// kubernetes/kubernetes `pkg/volume/csi/csi_attacher.go` (1.20) `waitForVolumeAttachmentInternal`.
const VA_DELETING: &str =
    "MountVolume.WaitForAttach failed for volume \"pvc-0b1c\" : volume attachment is being deleted";
/// ceph/ceph-csi `internal/rbd/rbd_attach.go` `rbd: map failed with error %w, rbd error output: %s`,
/// for a blocklisted client (ESHUTDOWN, 108).
const MAP_108: &str = "MountVolume.MountDevice failed for volume \"pvc-0b1c\" : rpc error: code = Internal desc = rbd: map failed with error an error (exit status 108) occurred while running rbd args: [--id csi-rbd-node -m 10.0.0.1:3300 map replicapool/csi-vol-0b1c --device-type krbd], rbd error output: rbd: sysfs write failed\nrbd: map failed: (108) Cannot send after transport endpoint shutdown";
/// The same call failing for other reasons: a read-only filesystem, unsupported image features.
const MAP_RO: &str = "MountVolume.MountDevice failed for volume \"pvc-0b1c\" : rpc error: code = Internal desc = rbd: map failed with error exit status 30, rbd error output: rbd: sysfs write failed\nrbd: map failed: (30) Read-only file system";
const MAP_FEATURES: &str = "MountVolume.WaitForAttach failed for volume \"pvc-0b1c\" : rbd: map failed exit status 6, rbd output: rbd: sysfs write failed\nRBD image feature set mismatch. You can disable features unsupported by the kernel with \"rbd feature disable kube/img object-map fast-diff deep-flatten\".\nIn some cases useful info is found in syslog - try \"dmesg | tail\".\nrbd: map failed: (6) No such device or address";

fn view(m: &str) -> (Arc<Event>, String) {
    (event("ns", "p", "FailedMount", m, 1, &at(-60)), m.to_string())
}

fn check(m: &str, f: fn(&EventView) -> bool) -> bool {
    let (e, _) = view(m);
    f(&EventView::of(&e))
}

#[test]
fn field_wordings_match_and_look_alikes_do_not() {
    assert!(check(LOCK_1_8, is_locked_by_other_nodes));
    assert!(check("rbd: image index-api-image is locked by other nodes", is_locked_by_other_nodes));
    assert!(check(CSI_UNMAP, is_unmap_busy));
    assert!(check(VA_DELETING, is_attachment_being_deleted));
    assert!(check(MAP_108, is_fenced_map_failure));
    assert!(!check(MAP_RO, is_fenced_map_failure));
    assert!(!check(MAP_FEATURES, is_fenced_map_failure));
    assert!(!check(MAP_FEATURES, is_unmap_busy));
    let (e, _) = view(CSI_UNMAP);
    let v = EventView::of(&e);
    assert_eq!(v.unmap_spec(), Some(crate::model::ImageRef::new("replicapool", format!("csi-vol-{UUID}"))));
    let (e, _) = view("rbd: unmap for spec (/dev/rbd0) failed (exit status 16)");
    assert_eq!(EventView::of(&e).unmap_spec(), None);
}

/// Messages wrapped by a terminal or a web page: split mid-word, a Volume ID on a second line.
#[test]
fn wrapped_messages_still_match() {
    assert!(check("rbd image replicapool/img is still be\ning used", is_still_being_used));
    assert!(check(
        "Multi-Attach error for vol\nume \"user-pv\" Volume is already exclusively attached",
        is_multi_attach
    ));
    let (e, _) =
        view("Multi-Attach error for volume \"pvc-9984bdab-9c79-\n11e9-b8ba-fa163ed7c802\" Volume is already used");
    assert_eq!(EventView::of(&e).volume_name().as_deref(), Some("pvc-9984bdab-9c79-11e9-b8ba-fa163ed7c802"));
    let m = "rpc error: code = Aborted desc = an operation with the given Volume ID 0001-0009-rook-ceph-0000000000000002-\n0b1c0d2e-1111-4a2b-9c3d-4e5f6a7b8c9d already exists";
    assert!(check(m, is_operation_pending));
    let (e, _) = view("failed to unmap device /dev/rb\nd3, error exit status 16");
    assert_eq!(EventView::of(&e).device().as_deref(), Some("/dev/rbd3"));
}

/// ceph-csi's own unmap error names pool/image only: resolved to the PV through volumeAttributes.
#[test]
fn csi_unmap_error_alone_finds_unmap_busy() {
    let mut s = snap_with(
        vec![node("node-a", "10.0.0.5", "True", &at(-86400), &[])],
        vec![pod("ns", "db-0", "node-a", "data", "Terminating", &at(-900))],
        vec![pvc("ns", "data", "pvc-0b1c")],
        vec![csi_pv("pvc-0b1c", "ns", "data", UUID)],
        vec![],
    );
    s.events = vec![event("ns", "db-0", "FailedUnMount", CSI_UNMAP, 5, &at(-60))];
    let f = run_one(&s, PatternId::UnmapBusy);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].volume.as_deref(), Some("pvc-0b1c"));
    // Only a device named: `rbd showmapped` of the node ties it to the image.
    s.events = vec![event(
        "ns",
        "db-0",
        "FailedUnMount",
        "rbd: unmap for spec (/dev/rbd0) failed (exit status 16)",
        5,
        &at(-60),
    )];
    assert_eq!(run_one(&s, PatternId::UnmapBusy)[0].volume, None);
    let shown = crate::sources::ceph::parse::showmapped(&format!(
        "id pool namespace image snap device\n0 replicapool  csi-vol-{UUID} - /dev/rbd0\n"
    ))
    .unwrap();
    s.ceph.mapped.insert("node-a".into(), shown);
    assert_eq!(run_one(&s, PatternId::UnmapBusy)[0].volume.as_deref(), Some("pvc-0b1c"));
}

#[test]
fn lock_wording_of_kubernetes_1_8_is_lock_evidence() {
    let mut s = snap_with(
        vec![
            node("node1", "10.47.136.60", "True", &at(-86400), &[]),
            node("node2", "10.46.181.146", "True", &at(-86400), &[]),
        ],
        vec![pod("ns", "api-2", "node2", "claim", "ContainerCreating", &at(-30))],
        vec![pvc("ns", "claim", "index-api-pv")],
        vec![rbd_pv("index-api-pv", "ns", "claim", "mioss", "index-api-image")],
        vec![],
    );
    let lock = crate::model::ceph::Lock {
        id: "kubelet_lock_magic_node1".into(),
        locker: "client.24128".into(),
        address: "10.47.136.60:0/1864102866".into(),
    };
    s.ceph.images.insert(crate::model::ImageRef::new("mioss", "index-api-image"), facts(vec![], vec![lock]));
    assert!(run_one(&s, PatternId::StaleLock).is_empty(), "young pod, no event: not yet");
    s.events = vec![event("ns", "api-2", "FailedMount", LOCK_1_8, 3, &at(-10))];
    let f = run_one(&s, PatternId::StaleLock);
    assert_eq!(f.len(), 1);
    assert!(f[0].evidence.iter().any(|e| e.text.contains("maybe locked by other nodes")));
}

#[test]
fn attachment_being_deleted_is_va_finalizer_evidence() {
    let mut s = snap_with(
        vec![node("node1", "10.0.0.5", "False", &at(-3600), &[]), node("node2", "10.0.0.6", "True", &at(-86400), &[])],
        vec![pod("ns", "db-0", "node2", "data", "ContainerCreating", &at(-1200))],
        vec![pvc("ns", "data", "pvc-0b1c")],
        vec![csi_pv("pvc-0b1c", "ns", "data", UUID)],
        vec![va("csi-abc", "pvc-0b1c", "node1", Some(&at(-3000)))],
    );
    s.events = vec![event("ns", "db-0", "FailedMount", VA_DELETING, 12, &at(-30))];
    let f = run_one(&s, PatternId::VaFinalizerStuck);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert!(
        f[0].evidence.iter().any(|e| e.text.contains("volume attachment is being deleted")),
        "{:#?}",
        f[0].evidence
    );
}

fn entry(target: BlocklistTarget, until: &str) -> BlocklistEntry {
    BlocklistEntry { target, until: Some(until.into()) }
}

/// Blocklist-leftover: ESHUTDOWN map failures are evidence; an expired entry, a nonce entry, and
/// other map failures are no finding.
#[test]
fn blocklist_leftover_evidence_and_negatives() {
    let mut s = snap_with(
        vec![node("node-a", "10.0.0.5", "True", &at(-600), &[])],
        vec![pod("ns", "db-0", "node-a", "data", "ContainerCreating", &at(-900))],
        vec![pvc("ns", "data", "pvc-0b1c")],
        vec![csi_pv("pvc-0b1c", "ns", "data", UUID)],
        vec![],
    );
    s.events = vec![event("ns", "db-0", "FailedMount", MAP_108, 7, &at(-30))];
    let set = |s: &mut crate::model::Snapshot, e: Vec<BlocklistEntry>| {
        s.ceph.blocklist = Some(Observed { value: Ok(e), at: fixtures::now() });
    };
    // `until` in the legacy text form (no T, no zone): an hour after the clock.
    set(&mut s, vec![entry(BlocklistTarget::Addr("10.0.0.5:0/0".into()), "2026-11-22 04:00:00.000000")]);
    let f = run_one(&s, PatternId::BlocklistLeftover);
    assert_eq!(f.len(), 1);
    assert!(f[0].evidence.iter().any(|e| { e.text.contains("(108) Cannot send after transport endpoint shutdown") }));
    // Expired before the collection time: fences nothing.
    set(&mut s, vec![entry(BlocklistTarget::Addr("10.0.0.5:0/0".into()), "2026-11-22T02:59:59.999999+0000")]);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty());
    // A nonce entry fences one client instance only.
    set(&mut s, vec![entry(BlocklistTarget::Addr("10.0.0.5:0/3129404212".into()), "2026-11-22T04:00:00Z")]);
    assert!(run_one(&s, PatternId::BlocklistLeftover).is_empty());
    // A Ceph 17+ range entry still counts.
    set(&mut s, vec![entry(BlocklistTarget::Range("cidr:10.0.0.0:0/24".into()), "2026-11-22T04:00:00Z")]);
    assert_eq!(run_one(&s, PatternId::BlocklistLeftover).len(), 1);
    // Other map failures without any entry: no blocklist finding; the stuck pod gets the cause its
    // message names (issue 24: never silent), or `unexplained`.
    s.ceph.blocklist = Some(Observed { value: Ok(vec![]), at: fixtures::now() });
    for (m, p) in [
        (MAP_RO, PatternId::Unexplained),
        (MAP_FEATURES, PatternId::KernelCannotMap),
        (MAP_108, PatternId::ClientBlocklisted),
    ] {
        s.events = vec![event("ns", "db-0", "FailedMount", m, 7, &at(-30))];
        let all = crate::diagnose::run(
            &s,
            &crate::lineage::Lineage::build(&s),
            &crate::config::Config::defaults().diagnose,
            fixtures::now(),
        );
        let got: Vec<PatternId> = all.iter().map(|f| f.pattern).collect();
        assert_eq!(got, vec![p], "{m}: {all:#?}");
    }
}

fn dual_stack(name: &str, v4: &str, v6: &str, ready: &str, since: &str) -> Arc<Node> {
    let mut n: Node = (*node(name, v4, ready, since, &[])).clone();
    let addrs = n.status.as_mut().and_then(|s| s.addresses.as_mut()).expect("addresses");
    addrs.push(NodeAddress { type_: "InternalIP".into(), address: v6.into() });
    Arc::new(n)
}

/// Dead-node-watcher on a dual-stack node seen over IPv6 and in vector form; an expired
/// blocklist entry does not fence the watcher, an unexpired one does; ESHUTDOWN map failures of
/// the waiting pod are evidence.
#[test]
fn dead_node_watcher_ipv6_and_expiry() {
    let mut s = snap_with(
        vec![
            dual_stack("node1", "10.0.0.5", "fd00::5", "False", &at(-3600)),
            node("node2", "10.0.0.6", "True", &at(-86400), &[]),
        ],
        vec![pod("ns", "db-1", "node2", "data", "ContainerCreating", &at(-1200))],
        vec![pvc("ns", "data", "pvc-0b1c")],
        vec![csi_pv("pvc-0b1c", "ns", "data", UUID)],
        vec![],
    );
    let image = crate::model::ImageRef::new("replicapool", format!("csi-vol-{UUID}"));
    for addr in ["[fd00::5]:0/3129404212", "[v2:[fd00::5]:0/3129404212,v1:[fd00::5]:0/3129404212]"] {
        let w = Watcher { address: addr.into(), client: 14163, cookie: 1 };
        s.ceph.images.insert(image.clone(), facts(vec![w], vec![]));
        s.events = vec![event("ns", "db-1", "FailedMount", MAP_108, 4, &at(-30))];
        let f = run_one(&s, PatternId::DeadNodeWatcher);
        assert_eq!(f.len(), 1, "{addr}: {f:#?}");
        assert_eq!(f[0].node.as_deref(), Some("node1"));
        assert!(f[0].evidence.iter().any(|e| e.text.contains("(108)")), "{:#?}", f[0].evidence);
        let fence = |until: &str| {
            Some(Observed {
                value: Ok(vec![entry(BlocklistTarget::Addr("[fd00::5]:0/3129404212".into()), until)]),
                at: fixtures::now(),
            })
        };
        s.ceph.blocklist = fence("2026-11-22T02:00:00.000000+0000");
        assert_eq!(run_one(&s, PatternId::DeadNodeWatcher).len(), 1, "an expired entry fences nothing");
        s.ceph.blocklist = fence("2026-11-22T04:00:00.000000+0000");
        assert!(run_one(&s, PatternId::DeadNodeWatcher).is_empty(), "fenced already");
        s.ceph.blocklist = None;
    }
}

proptest::proptest! {
    // fuzz target of issue 10: the event decoder and every event rule, on the incidents fixture
    // with one more event whose reason and message are garbage, field-like or byte-slice-like
    // (cases: UNSTICK_FUZZ_CASES, else 1000)
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(1000)))]

    #[test]
    fn event_rules_never_panic(
        reason in proptest::sample::select(vec!["FailedMount", "FailedAttachVolume", "FailedMapVolume", "Unmap", ""]),
        head in proptest::sample::select(vec![LOCK_1_8, CSI_UNMAP, VA_DELETING, MAP_108, MAP_RO, MAP_FEATURES, ""]),
        cut in 0usize..400,
        garbage in "(.|\n|\\[[0-9 ]{0,20}\\]?){0,60}",
    ) {
        let head: String = head.chars().take(cut).collect();
        let mut snap = fixtures::incidents();
        snap.events.push(event("incident-000", "index-api-3362878852-pzxm8", reason, &format!("{head}{garbage}"), 3, &at(-30)));
        let found = crate::diagnose::run(&snap, &crate::lineage::Lineage::build(&snap), &crate::config::Config::defaults().diagnose, fixtures::now());
        proptest::prop_assert!(found.iter().all(|f| !f.summary.chars().any(char::is_control)));
    }
}
