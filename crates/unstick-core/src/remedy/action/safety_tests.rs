use super::*;
use crate::model::ceph::Watcher;
use crate::model::kube::Readiness;
use crate::remedy::action::precheck::{MountFact, MountRef, NodeFact, PodFact, VaFact};

fn live() -> LiveState {
    LiveState {
        at: jiff::Timestamp::UNIX_EPOCH,
        nodes: vec![
            NodeFact {
                name: "dead".into(),
                ready: Readiness::Unknown,
                ips: vec!["10.0.0.1".parse().unwrap()],
                out_of_service: false,
                attached: vec![],
                boot_id: None,
            },
            NodeFact {
                name: "live".into(),
                ready: Readiness::Ready,
                ips: vec!["10.0.0.2".parse().unwrap()],
                out_of_service: false,
                attached: vec![],
                boot_id: None,
            },
        ],
        watchers: Some(vec![]),
        locks: Some(vec![]),
        pods: vec![PodFact {
            namespace: "ns".into(),
            name: "old".into(),
            uid: Some("u1".into()),
            terminating: true,
            node: Some("dead".into()),
            finalizers: vec![],
        }],
        volume_attachments: vec![VaFact {
            name: "csi-1".into(),
            present: true,
            node: "dead".into(),
            deleting: true,
            finalizers: vec!["external-attacher/rbd-csi-ceph-com".into()],
        }],
        mounts: vec![MountFact {
            mount: MountRef {
                namespace: "ns".into(),
                daemonset: "ds".into(),
                container: "c".into(),
                mount_path: "/host".into(),
            },
            present: true,
            propagation: None,
            strategy: Some("OnDelete".into()),
        }],
        blocklist: None,
        remediation: Default::default(),
        fences: None,
        csiaddons_nodes: None,
    }
}

fn none() -> Overrides {
    Overrides::default()
}

#[test]
fn blocklist_exact_address_of_dead_node_is_allowed() {
    let a = approve(&WriteAction::BlocklistAdd { addr: "10.0.0.1:0/4208975345".into() }, &live(), &none()).unwrap();
    assert!(a.warnings().is_empty());
}

#[test]
fn blocklist_of_ready_node_needs_its_typed_name() {
    let act = WriteAction::BlocklistAdd { addr: "10.0.0.2:0/77".into() };
    assert_eq!(approve(&act, &live(), &none()).unwrap_err(), SafetyError::ReadyNode { node: "live".into() });
    let wrong = Overrides { fence_ready_node: Some("liv".into()), ..none() };
    assert!(approve(&act, &live(), &wrong).is_err());
    let ok = Overrides { fence_ready_node: Some("live".into()), ..none() };
    let a = approve(&act, &live(), &ok).unwrap();
    assert!(a.warnings()[0].contains("OVERRIDE"));
}

#[test]
fn blocklist_without_nonce_needs_override_and_loopback_never() {
    let act = WriteAction::BlocklistAdd { addr: "10.0.0.1:0/0".into() };
    assert!(matches!(approve(&act, &live(), &none()), Err(SafetyError::WideBlocklist { .. })));
    let ov = Overrides { wide_blocklist: Some("10.0.0.1:0/0".into()), ..none() };
    assert!(approve(&act, &live(), &ov).is_ok());
    for addr in ["127.0.0.1:0/0", "127.0.0.1"] {
        let act = WriteAction::BlocklistAdd { addr: addr.into() };
        let ov = Overrides { wide_blocklist: Some(addr.into()), fence_ready_node: Some("x".into()), ..none() };
        assert!(matches!(approve(&act, &live(), &ov), Err(SafetyError::OwnHost { .. })), "{addr}");
    }
    for bad in ["", "127.0.0.0/8", "nonsense", "10.0.0.1:x/1"] {
        let act = WriteAction::BlocklistAdd { addr: bad.into() };
        assert!(matches!(approve(&act, &live(), &none()), Err(SafetyError::BadAddress { .. })), "{bad}");
    }
}

#[test]
fn taint_rules() {
    assert!(approve(&WriteAction::TaintOutOfService { node: "dead".into() }, &live(), &none()).is_ok());
    assert!(matches!(
        approve(&WriteAction::TaintOutOfService { node: "live".into() }, &live(), &none()),
        Err(SafetyError::ReadyNode { .. })
    ));
    assert!(matches!(
        approve(&WriteAction::TaintOutOfService { node: "gone".into() }, &live(), &none()),
        Err(SafetyError::Missing(_))
    ));
    // no journaled fence of "live" to compare its bootID with: the untaint is guarded
    assert!(matches!(
        approve(&WriteAction::UntaintOutOfService { node: "live".into() }, &live(), &none()),
        Err(SafetyError::NotRebooted { .. })
    ));
}

fn booted(l: &mut LiveState, node: &str, boot: &str) {
    l.nodes.iter_mut().find(|n| n.name == node).unwrap().boot_id = Some(boot.into());
}

#[test]
fn unfence_needs_a_reboot_since_the_fence_or_the_typed_node_name() {
    let mut l = live();
    booted(&mut l, "dead", "boot-a");
    // the fence journals the live bootID of the node it fences
    let fence = approve(&WriteAction::BlocklistAdd { addr: "10.0.0.1:0/42".into() }, &l, &none()).unwrap();
    assert_eq!(fence.boot_ids().get("dead").map(String::as_str), Some("boot-a"));
    assert!(
        approve(&WriteAction::DeletePod { namespace: "ns".into(), name: "old".into(), uid: "u1".into() }, &l, &none())
            .unwrap()
            .boot_ids()
            .is_empty()
    );
    let fenced = Overrides { fenced_boot_ids: fence.boot_ids().clone(), ..none() };
    for unfence in [
        WriteAction::BlocklistRm { addr: "10.0.0.1:0/42".into() },
        WriteAction::BlocklistRm { addr: "10.0.0.1:0/0".into() },
        WriteAction::BlocklistRangeRm { range: "10.0.0.0:0/31".into() },
        WriteAction::UntaintOutOfService { node: "dead".into() },
    ] {
        // same boot: refused, naming the unchanged bootID
        let e = approve(&unfence, &l, &fenced).unwrap_err();
        assert!(
            matches!(&e, SafetyError::NotRebooted { node, why } if node == "dead" && why.contains("boot-a unchanged")),
            "{e}"
        );
        // typed override: allowed, with a warning
        let ov = Overrides { unfence_not_rebooted: Some("dead".into()), ..fenced.clone() };
        assert!(approve(&unfence, &l, &ov).unwrap().warnings().iter().any(|w| w.starts_with("OVERRIDE")));
        // rebooted (a new bootID): allowed, saying so
        let mut after = l.clone();
        booted(&mut after, "dead", "boot-b");
        let a = approve(&unfence, &after, &fenced).unwrap();
        assert!(a.warnings().iter().any(|w| w.contains("boot-a → boot-b")), "{:?}", a.warnings());
        // no journaled fence at all: refused
        assert!(matches!(approve(&unfence, &after, &none()), Err(SafetyError::NotRebooted { .. })));
    }
    // a range over both nodes needs both: "dead" rebooted, but "live" has no journaled fence
    let wide = WriteAction::BlocklistRangeRm { range: "10.0.0.0:0/24".into() };
    let mut after = l.clone();
    booted(&mut after, "dead", "boot-b");
    assert!(matches!(approve(&wide, &after, &fenced), Err(SafetyError::NotRebooted { node, .. }) if node == "live"));
    // an entry of no node's address concerns no node: allowed
    assert!(approve(&WriteAction::BlocklistRm { addr: "10.9.9.9:0/1".into() }, &l, &none()).is_ok());
}

#[test]
fn force_delete_rules() {
    let fd = WriteAction::ForceDeletePod { namespace: "ns".into(), name: "old".into(), uid: "u1".into() };
    let mut l = live();
    l.watchers = Some(vec![Watcher { address: "10.0.0.1:0/5".into(), client: 1, cookie: 1 }]);
    assert!(approve(&fd, &l, &none()).is_ok(), "watcher from a dead node is fine");
    l.watchers = Some(vec![Watcher { address: "10.0.0.2:0/5".into(), client: 1, cookie: 1 }]);
    let e = approve(&fd, &l, &Overrides { fence_ready_node: Some("live".into()), ..none() }).unwrap_err();
    assert_eq!(
        e,
        SafetyError::LiveWatcher { addr: "10.0.0.2:0/5".into(), node: "live".into() },
        "no override for this"
    );
    l.watchers = None;
    assert_eq!(approve(&fd, &l, &none()).unwrap_err(), SafetyError::WatchersUnknown);
    // a Running pod on a lost node (seed 001: the node never confirms anything) may be force-deleted
    let mut l = live();
    l.pods[0].terminating = false;
    assert!(approve(&fd, &l, &none()).is_ok());
    // ... but not one on a Ready node, nor an unscheduled one
    l.pods[0].node = Some("live".into());
    assert_eq!(
        approve(&fd, &l, &none()).unwrap_err(),
        SafetyError::NotTerminating { pod: "ns/old".into(), node: "live".into() }
    );
    l.pods[0].node = None;
    assert!(matches!(approve(&fd, &l, &none()), Err(SafetyError::NotTerminating { .. })));
    let mut l = live();
    l.pods[0].uid = Some("u2".into());
    assert!(matches!(approve(&fd, &l, &none()), Err(SafetyError::Stale { .. })));
    let mut l = live();
    l.pods[0].finalizers = vec!["unstick.test/hold".into()];
    let a = approve(&fd, &l, &none()).unwrap();
    assert!(a.warnings().iter().any(|w| w.contains("finalizers")), "{:?}", a.warnings());
}

#[test]
fn va_finalizer_rules() {
    let act =
        WriteAction::RemoveVaFinalizer { name: "csi-1".into(), finalizer: "external-attacher/rbd-csi-ceph-com".into() };
    assert!(approve(&act, &live(), &none()).is_ok());
    let mut l = live();
    l.watchers = Some(vec![Watcher { address: "10.0.0.1:0/5".into(), client: 1, cookie: 1 }]);
    assert!(matches!(approve(&act, &l, &none()), Err(SafetyError::HasWatchers(_))), "the VA's own node");
    // The replacement on another node attached and opened the image (1.37's controllers do that
    // before the old attachment's finalizer goes): its watcher does not block the release.
    l.watchers = Some(vec![Watcher { address: "10.0.0.2:0/9".into(), client: 2, cookie: 2 }]);
    let a = approve(&act, &l, &none()).unwrap();
    assert!(a.warnings().iter().any(|w| w.contains("node live's, not dead's")), "{:?}", a.warnings());
    // An address no node owns proves nothing: refused, and every blocking address is named.
    l.watchers = Some(vec![
        Watcher { address: "10.0.0.2:0/9".into(), client: 2, cookie: 2 },
        Watcher { address: "10.9.9.9:0/3".into(), client: 3, cookie: 3 },
        Watcher { address: "10.0.0.1:0/5".into(), client: 1, cookie: 1 },
    ]);
    assert_eq!(approve(&act, &l, &none()).unwrap_err(), SafetyError::HasWatchers("10.9.9.9:0/3, 10.0.0.1:0/5".into()));
    l.watchers = Some(vec![Watcher { address: "not-an-address".into(), client: 4, cookie: 4 }]);
    assert!(matches!(approve(&act, &l, &none()), Err(SafetyError::BadAddress { .. })));
    l.watchers = None;
    assert_eq!(approve(&act, &l, &none()).unwrap_err(), SafetyError::WatchersUnknown);
    let mut l = live();
    l.volume_attachments[0].deleting = false;
    assert!(matches!(approve(&act, &l, &none()), Err(SafetyError::NotDeleting { .. })));
}

#[test]
fn va_delete_rules() {
    let act = WriteAction::DeleteVolumeAttachment { name: "csi-1".into(), node: "dead".into() };
    let a = approve(&act, &live(), &none()).unwrap();
    assert!(a.warnings().iter().any(|w| w.contains("powered off")), "{:?}", a.warnings());
    let mut l = live();
    l.watchers = Some(vec![Watcher { address: "10.0.0.1:0/5".into(), client: 1, cookie: 1 }]);
    assert!(
        matches!(approve(&act, &l, &none()), Err(SafetyError::HasWatchers(_))),
        "even a dead node's watcher: fence it first"
    );
    l.watchers = None;
    assert_eq!(approve(&act, &l, &none()).unwrap_err(), SafetyError::WatchersUnknown);
    let mut l = live();
    l.volume_attachments[0].node = "live".into();
    assert!(matches!(approve(&act, &l, &none()), Err(SafetyError::Stale { .. })));
    let on_live = WriteAction::DeleteVolumeAttachment { name: "csi-1".into(), node: "live".into() };
    let ov = Overrides { fence_ready_node: Some("live".into()), ..none() };
    assert!(matches!(approve(&on_live, &l, &ov), Err(SafetyError::AttachedToReadyNode { .. })), "no override for this");
    let mut l = live();
    l.volume_attachments[0].present = false;
    assert!(matches!(approve(&act, &l, &none()), Err(SafetyError::Missing(_))));
}

#[test]
fn mount_and_lock_must_match_live() {
    let m = |from: Option<&str>| WriteAction::SetMountPropagation {
        namespace: "ns".into(),
        daemonset: "ds".into(),
        container: "c".into(),
        mount_path: "/host".into(),
        from: from.map(str::to_string),
        to: Some("HostToContainer".into()),
    };
    assert!(approve(&m(None), &live(), &none()).is_ok());
    assert!(matches!(approve(&m(Some("Bidirectional")), &live(), &none()), Err(SafetyError::Stale { .. })));
    let lock = WriteAction::RbdLockRm {
        image: crate::model::ImageRef::new("p", "i"),
        lock_id: "kubelet_lock_magic_node1".into(),
        locker: "client.1".into(),
        address: "10.0.0.1:0/1".into(),
    };
    assert!(matches!(approve(&lock, &live(), &none()), Err(SafetyError::Stale { .. })));
    let mut l = live();
    l.locks = Some(vec![crate::model::ceph::Lock {
        id: "kubelet_lock_magic_node1".into(),
        locker: "client.1".into(),
        address: "10.0.0.1:0/1".into(),
    }]);
    let a = approve(&lock, &l, &none()).unwrap();
    assert!(a.warnings()[0].contains("1 hour"));
}

#[test]
fn the_taint_is_gated_by_the_version_read_live() {
    use crate::remedy::playbook::version::ServerVersion;
    let taint = WriteAction::TaintOutOfService { node: "dead".into() };
    let at = |minor, gate: Option<&str>| Overrides {
        server_version: Some(ServerVersion { major: 1, minor }),
        feature_gate: gate.map(String::from),
        ..Overrides::default()
    };
    assert!(approve(&taint, &live(), &at(26, None)).is_ok());
    assert!(approve(&taint, &live(), &at(33, None)).is_ok());
    // 1.24–1.25: only with the gate's name typed, and the confirmation says it was
    let e = approve(&taint, &live(), &at(25, None)).unwrap_err();
    assert!(matches!(&e, SafetyError::FeatureGate { version } if version == "1.25"), "{e:?}");
    assert!(e.to_string().contains("type `NodeOutOfServiceVolumeDetach`"), "{e}");
    assert!(matches!(
        approve(&taint, &live(), &at(24, Some("nodeoutofservice"))),
        Err(SafetyError::FeatureGate { .. })
    ));
    let ok = approve(&taint, &live(), &at(24, Some("NodeOutOfServiceVolumeDetach"))).unwrap();
    assert!(ok.warnings().iter().any(|w| w.contains("OVERRIDE") && w.contains("NodeOutOfServiceVolumeDetach")));
    // before 1.24 nothing detaches for it: allowed (the playbook never proposes it), said in a warning
    let old = approve(&taint, &live(), &at(20, None)).unwrap();
    assert!(old.warnings().iter().any(|w| w.contains("before 1.24 no controller detaches")), "{:?}", old.warnings());
}

/// The console's book with `dead`'s Multus holder pod at 100.64.0.6 (a live node's own address
/// still wins).
fn book_with_holder() -> crate::attribution::AddressBook {
    let pod: crate::model::objects::Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"namespace": "rook-ceph", "name": "csi-rbdplugin-holder-rook-ceph-q9z8w", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "csi-rbdplugin-holder-rook-ceph", "uid": "d"}]},
        "spec": {"nodeName": "dead", "containers": []},
        "status": {"podIPs": [{"ip": "100.64.0.6"}]}
    }))
    .unwrap();
    let snap = crate::model::Snapshot { pods: vec![std::sync::Arc::new(pod)], ..Default::default() };
    crate::attribution::AddressBook::build(&snap, &crate::config::Config::defaults().diagnose)
}

#[test]
fn fencing_an_address_no_proof_ties_needs_the_address_typed() {
    let act = WriteAction::BlocklistAdd { addr: "100.64.0.6:0/3735928559".into() };
    let e = approve(&act, &live(), &none()).unwrap_err();
    assert!(
        matches!(&e, SafetyError::Unattributed { addr, attribution }
        if addr == "100.64.0.6:0/3735928559" && attribution == "unattributed (no candidate)"),
        "{e:?}"
    );
    let ov = Overrides { unattributed: Some("100.64.0.6:0/3735928559".into()), ..none() };
    let a = approve(&act, &live(), &ov).unwrap();
    assert!(
        a.warnings().iter().any(|w| w.starts_with("OVERRIDE: no proof ties 100.64.0.6:0/3735928559")),
        "{:?}",
        a.warnings()
    );
    // a holder pod's address is its node's: allowed (dead node), the proof said, its bootID journaled
    let ov = Overrides { address_book: std::sync::Arc::new(book_with_holder()), ..none() };
    let a = approve(&act, &live(), &ov).unwrap();
    assert_eq!(a.warnings(), ["100.64.0.6 is node dead's by pod rook-ceph/csi-rbdplugin-holder-rook-ceph-q9z8w"]);
}

#[test]
fn a_watcher_tied_by_a_pod_ip_to_a_ready_node_blocks_a_force_delete() {
    let mut l = live();
    l.watchers = Some(vec![Watcher { address: "100.64.0.6:0/1".into(), client: 1, cookie: 1 }]);
    l.nodes[0].ready = Readiness::Ready;
    let fd = WriteAction::ForceDeletePod { namespace: "ns".into(), name: "old".into(), uid: "u1".into() };
    let ov = Overrides { address_book: std::sync::Arc::new(book_with_holder()), ..none() };
    let e = approve(&fd, &l, &ov).unwrap_err();
    assert!(matches!(&e, SafetyError::LiveWatcher { node, .. } if node == "dead"), "{e:?}");
    // without the proof the watcher is nobody's: allowed, with a warning naming it unattributed
    let a = approve(&fd, &l, &none()).unwrap();
    assert!(
        a.warnings().iter().any(|w| w == "watcher 100.64.0.6:0/1: unattributed (no candidate)"),
        "{:?}",
        a.warnings()
    );
}

#[test]
fn every_action_on_a_node_under_remediation_needs_its_typed_name() {
    use crate::model::remediation::{Remediation, RemediationFacts};
    let mut l = live();
    l.remediation = RemediationFacts {
        signs: vec![Remediation {
            node: "dead".into(),
            by: "taint medik8s.io/remediation=self-node-remediation:NoExecute".into(),
            state: String::new(),
        }],
        unread: vec![],
    };
    let actions = [
        WriteAction::BlocklistAdd { addr: "10.0.0.1:0/4208975345".into() },
        WriteAction::TaintOutOfService { node: "dead".into() },
        WriteAction::ForceDeletePod { namespace: "ns".into(), name: "old".into(), uid: "u1".into() },
        WriteAction::DeleteVolumeAttachment { name: "csi-1".into(), node: "dead".into() },
    ];
    for a in &actions {
        match approve(a, &l, &none()) {
            Err(SafetyError::Remediating { node, by }) => {
                assert_eq!(node, "dead", "{a:?}");
                assert!(by.contains("self-node-remediation"), "{by}");
            }
            other => panic!("{a:?}: {other:?}"),
        }
        let ov = Overrides { remediating: Some("dead".into()), ..none() };
        let ok = approve(a, &l, &ov).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        assert!(
            ok.warnings().iter().any(|w| w.starts_with("OVERRIDE: automatic remediation acts on node dead")),
            "{a:?}"
        );
    }
    // the same actions on a node nothing remediates are not gated
    l.remediation.signs[0].node = "elsewhere".into();
    approve(&actions[0], &l, &none()).unwrap();
}

/// A live state where csi-addons is installed, with `fences`.
fn with_fences(fences: Vec<crate::model::fence::NetworkFence>) -> LiveState {
    LiveState { fences: Some(fences), ..live() }
}

fn fence_of(name: &str, state: &str, cidr: &str) -> crate::model::fence::NetworkFence {
    crate::model::fence::NetworkFence {
        name: name.into(),
        class: "ceph".into(),
        fence_state: state.into(),
        cidrs: vec![cidr.into()],
        result: "Succeeded".into(),
        ..Default::default()
    }
}

fn create(node: &str, cidr: &str) -> WriteAction {
    WriteAction::NetworkFenceCreate {
        name: format!("unstick-{node}"),
        node: node.into(),
        cidrs: vec![cidr.into()],
        class: "ceph".into(),
    }
}

#[test]
fn a_network_fence_takes_only_addresses_proven_to_be_the_nodes() {
    let l = with_fences(vec![]);
    let a = approve(&create("dead", "10.0.0.1/32"), &l, &none()).unwrap();
    assert_eq!(a.action(), &create("dead", "10.0.0.1/32"));
    let why = |cidr: &str, node: &str| match approve(&create(node, cidr), &l, &none()).unwrap_err() {
        SafetyError::FenceCidr { why, .. } => why,
        other => panic!("{other:?}"),
    };
    assert!(why("10.0.0.0/24", "dead").starts_with("not a single address"));
    assert!(why("10.0.0.9/32", "dead").starts_with("no proof ties it"), "an address nobody has");
    assert_eq!(why("10.0.0.2/32", "dead"), "it is node live's");
    assert!(why("127.0.0.1/32", "dead").contains("loopback"));
    // no override makes an unproven address acceptable
    let ov =
        Overrides { unattributed: Some("10.0.0.9/32".into()), wide_blocklist: Some("10.0.0.9/32".into()), ..none() };
    assert!(matches!(approve(&create("dead", "10.0.0.9/32"), &l, &ov), Err(SafetyError::FenceCidr { .. })));
    // a Ready node: the usual typed override
    assert!(matches!(approve(&create("live", "10.0.0.2/32"), &l, &none()), Err(SafetyError::ReadyNode { .. })));
    // csi-addons not installed
    assert_eq!(approve(&create("dead", "10.0.0.1/32"), &live(), &none()).unwrap_err(), SafetyError::NoCsiAddons);
}

#[test]
fn a_fences_entries_are_lifted_through_the_fence_with_the_reboot_guard() {
    let l = with_fences(vec![fence_of("unstick-dead", "Fenced", "10.0.0.1/32")]);
    for act in [
        WriteAction::BlocklistRangeRm { range: "10.0.0.1:0/32".into() },
        WriteAction::BlocklistRm { addr: "10.0.0.1:0/0".into() },
    ] {
        let ov = Overrides { unfence_not_rebooted: Some("dead".into()), ..none() };
        let e = approve(&act, &l, &ov).unwrap_err();
        assert_eq!(e, SafetyError::FenceOwned { entry: act.confirm_name(), fence: "unstick-dead".into() }, "{act:?}");
        assert!(e.to_string().contains("set it Unfenced"), "{e}");
    }
    let unfence =
        WriteAction::NetworkFenceState { name: "unstick-dead".into(), from: "Fenced".into(), to: "Unfenced".into() };
    assert!(unfence.is_unfence());
    assert!(matches!(approve(&unfence, &l, &none()), Err(SafetyError::NotRebooted { node, .. }) if node == "dead"));
    let mut rebooted = l.clone();
    rebooted.nodes[0].boot_id = Some("b2".into());
    let ov = Overrides { fenced_boot_ids: [("dead".to_string(), "b1".to_string())].into(), ..none() };
    assert!(approve(&unfence, &rebooted, &ov).is_ok());
    // an Unfenced fence owns nothing: its leftovers are removed as usual
    let l = with_fences(vec![fence_of("unstick-dead", "Unfenced", "10.0.0.1/32")]);
    let ov = Overrides { unfence_not_rebooted: Some("dead".into()), ..none() };
    assert!(approve(&WriteAction::BlocklistRangeRm { range: "10.0.0.1:0/32".into() }, &l, &ov).is_ok());
}

/// A fence of node `dead`'s storage address (not among its `status.addresses`): the unfence's
/// reboot guard finds the node through its CSIAddonsNode's fence client.
#[test]
fn an_unfence_guards_the_node_whose_csiaddons_fence_client_it_covers() {
    let mut l = with_fences(vec![fence_of("rook-dead", "Fenced", "198.18.5.18/32")]);
    let unfence =
        WriteAction::NetworkFenceState { name: "rook-dead".into(), from: "Fenced".into(), to: "Unfenced".into() };
    assert!(approve(&unfence, &l, &none()).is_ok(), "no node known to be behind 198.18.5.18: nothing to guard");
    l.csiaddons_nodes = Some(vec![crate::model::csiaddons_node::CsiAddonsNode {
        namespace: "rook-ceph".into(),
        name: "dead-rook-ceph-daemonset-csi-rbdplugin".into(),
        node_id: "dead".into(),
        fence_clients: vec![crate::model::csiaddons_node::FenceClient {
            cidrs: vec!["198.18.5.18/32".into()],
            ..Default::default()
        }],
        ..Default::default()
    }]);
    assert!(matches!(approve(&unfence, &l, &none()), Err(SafetyError::NotRebooted { node, .. }) if node == "dead"));
}
