use super::*;
use crate::config::RemedyConfig;
use crate::fixtures;
use crate::lineage::Lineage;
use crate::model::ceph::{BlocklistEntry, BlocklistTarget};
use crate::remedy::action::{Inverse, WriteAction};
use crate::remedy::playbook::target::device_in;

fn cfg() -> RemedyConfig {
    crate::config::Config::defaults().remedy
}

fn target(pv: &str) -> Target {
    let snap = fixtures::incidents();
    let lin = Lineage::build(&snap);
    Target::for_volume(&snap, &lin, pv).expect("pv in fixtures")
}

fn acts(p: &Playbook) -> Vec<&WriteAction> {
    p.steps.iter().filter_map(|s| if let StepKind::Act(a) = &s.kind { Some(a) } else { None }).collect()
}

#[test]
fn ids_and_aliases() {
    assert_eq!(pattern_of("remove-stale-lock"), Some("stale-lock"));
    assert_eq!(pattern_of("dead-node-watcher"), Some("dead-node-watcher"));
    assert_eq!(pattern_of("nope"), None);
    assert!(matches!(build("nope", &Target::default(), &cfg()), Err(PlaybookError::Unknown(_))));
}

#[test]
fn stale_lock_playbook() {
    let t = target("index-api-pv");
    assert_eq!(t.locks.len(), 1);
    let p = build("stale-lock", &t, &cfg()).unwrap();
    assert!(matches!(p.steps[0].kind, StepKind::Backup(ref b) if b.image.is_some() && b.objects.len() >= 3));
    assert_eq!(p.steps[0].id, "stale-lock/1");
    let a = acts(&p);
    assert!(
        matches!(a[0], WriteAction::RbdLockRm { lock_id, locker, .. } if lock_id == "kubelet_lock_magic_k8s-node-lost" && locker == "client.24128")
    );
    assert!(matches!(a[1], WriteAction::DeletePod { name, .. } if name == "index-api-3362878852-pzxm8"));
    assert_eq!(p.volume.as_deref(), Some("index-api-pv"));
}

#[test]
fn dead_node_watcher_playbook() {
    let t = target("pvc-2de7d17c-04c6-11eb-b22b-5254002d96de");
    let p = build("blocklist-dead-watcher", &t, &cfg()).unwrap();
    let a = acts(&p);
    assert!(matches!(a[0], WriteAction::ForceDeletePod { name, .. } if name == "sleep-6f7c8cc954-rcpnc"));
    assert_eq!(*a[1], WriteAction::BlocklistAdd { addr: "127.0.0.1:0/4208975345".into() });
    assert!(matches!(&p.steps.last().unwrap().kind, StepKind::Verify(c) if c.len() == 1));
    // a stale-lock playbook on this volume has nothing to do
    assert!(matches!(build("stale-lock", &t, &cfg()), Err(PlaybookError::NothingToDo { .. })));
}

/// With csi-addons installed and a NetworkFenceClass for the volume's driver, the fencing step
/// creates a NetworkFence for the dead node's address instead of a raw blocklist entry, and waits
/// for it to act; without a class for that driver it stays the raw entry.
#[test]
fn dead_node_watcher_fences_through_csi_addons_when_it_can() {
    let pv = "pvc-2de7d17c-04c6-11eb-b22b-5254002d96de";
    let mut snap = fixtures::incidents();
    snap.network_fences = Some(vec![]);
    let lin = Lineage::build(&snap);
    let driver = lin.by_pv(pv).unwrap().driver.clone();
    let other =
        crate::model::fence::NetworkFenceClass { name: "cephfs".into(), provisioner: "cephfs.csi.ceph.com".into() };
    snap.network_fence_classes = vec![other.clone()];
    let t = Target::for_volume(&snap, &lin, pv).unwrap();
    assert_eq!(t.fence_class, None, "no class for {driver}");
    let class = crate::model::fence::NetworkFenceClass { name: "ceph-nfc".into(), provisioner: driver };
    snap.network_fence_classes = vec![other, class];
    let t = Target::for_volume(&snap, &lin, pv).unwrap();
    let p = build("dead-node-watcher", &t, &cfg()).unwrap();
    let a = acts(&p);
    let node = t.node_at("127.0.0.1".parse().unwrap()).unwrap().name.clone();
    assert_eq!(
        *a[1],
        WriteAction::NetworkFenceCreate {
            name: format!("unstick-{node}"),
            node: node.clone(),
            cidrs: vec!["127.0.0.1/32".into()],
            class: "ceph-nfc".into()
        }
    );
    assert!(!a.iter().any(|a| matches!(a, WriteAction::BlocklistAdd { .. })));
    assert!(p.scope.fences, "the re-check reads the fences");
    let i =
        p.steps.iter().position(|s| matches!(&s.kind, StepKind::Act(WriteAction::NetworkFenceCreate { .. }))).unwrap();
    assert!(matches!(&p.steps[i + 1].kind, StepKind::Wait { condition: Condition::NoWatcherFrom { .. }, .. }));
    // its undo is csi-addons' unfence
    assert!(matches!(a[1].inverse(), Inverse::Action { action } if action.is_unfence()));
}

#[test]
fn multi_attach_playbook_taint_from_1_24() {
    let v = |minor| crate::remedy::playbook::version::ServerVersion { major: 1, minor };
    // on by default from 1.26 (beta; GA 1.28); 1.24–1.25 behind the feature gate, said in the step
    for minor in [24, 25, 26, 27, 28, 34] {
        let t = target("user-pv").with_server_version(Some(v(minor)));
        let p = build("multi-attach-node-lost", &t, &cfg()).unwrap();
        assert_eq!(acts(&p), vec![&WriteAction::TaintOutOfService { node: "k8s-node-lost".into() }], "1.{minor}");
        // the Wait for the forced detach is bounded and says what to do when it does not come
        let wait = p.steps.iter().find(|s| matches!(s.kind, StepKind::Wait { .. })).unwrap();
        assert!(
            matches!(wait.kind, StepKind::Wait { timeout, .. } if timeout.as_secs() == cfg().wait_timeout_seconds),
            "1.{minor}"
        );
        for needle in ["If it does not come", "Ready again", "finalizer", "status.detachError", "ends at its timeout"] {
            assert!(wait.explain.contains(needle), "{needle}: {}", wait.explain);
        }
        let taint = p.steps.iter().find(|s| matches!(s.kind, StepKind::Act(_))).unwrap();
        assert!(taint.explain.contains(&format!("This API server is 1.{minor}")), "{}", taint.explain);
        assert_eq!(
            taint.explain.contains("--feature-gates=NodeOutOfServiceVolumeDetach=true"),
            minor < 26,
            "1.{minor}"
        );
    }
    // 1.23 and an unknown version: no taint anywhere, the release branch instead
    for t in [target("user-pv").with_server_version(Some(v(23))), target("user-pv")] {
        let p = build("multi-attach-node-lost", &t, &cfg()).unwrap();
        assert!(!acts(&p).iter().any(|a| matches!(a, WriteAction::TaintOutOfService { .. })), "{:?}", t.server_version);
        // the attach-detach controller releases the attachment itself: a Wait, no hand-made delete
        assert!(p.steps.iter().any(|s| matches!(&s.kind, StepKind::Wait { condition: Condition::VaGone { .. }, .. })));
        assert!(!acts(&p).iter().any(|a| matches!(a, WriteAction::DeleteVolumeAttachment { .. })));
    }
}

#[test]
fn multi_attach_playbook_before_1_24_force_deletes_and_releases() {
    let t = target("user-pv")
        .with_server_version(Some(crate::remedy::playbook::version::ServerVersion { major: 1, minor: 20 }));
    let (va, node) = (t.volume_attachments[0].name.clone(), t.volume_attachments[0].node.clone());
    let p = build("multi-attach-node-lost", &t, &cfg()).unwrap();
    let a = acts(&p);
    let on_lost: Vec<&TargetPod> = t.pods.iter().filter(|p| p.node.as_deref() == Some(node.as_str())).collect();
    assert!(!on_lost.is_empty(), "the fixture has the old pod on the lost node");
    for (i, pod) in on_lost.iter().enumerate() {
        assert_eq!(
            *a[i],
            WriteAction::ForceDeletePod {
                namespace: pod.namespace.clone(),
                name: pod.name.clone(),
                uid: pod.uid.clone()
            }
        );
    }
    let rest = &a[on_lost.len()..];
    let volume = t.unique_name.clone().expect("the fixture's unique volume name");
    assert_eq!(*rest[0], WriteAction::ReleaseVolumeInUse { node: node.clone(), volume });
    assert!(p.steps.iter().any(|s| s.explain.contains("1.20")), "says why the taint is not used");
    assert!(
        matches!(&p.steps.last().unwrap().kind, StepKind::Verify(c) if *c == vec![Condition::VaGone { name: va.clone() }])
    );
    // an attachment already being deleted with the attacher's finalizer: only the finalizer is released
    let mut t2 = t.clone();
    t2.volume_attachments[0].deleting = true;
    t2.volume_attachments[0].finalizers = vec!["external-attacher/rbd-csi-ceph-com".into()];
    let a2: Vec<WriteAction> =
        acts(&build("multi-attach-node-lost", &t2, &cfg()).unwrap()).into_iter().cloned().collect();
    assert!(!a2.iter().any(|a| matches!(a, WriteAction::DeleteVolumeAttachment { .. })));
    assert_eq!(
        a2.last().unwrap(),
        &WriteAction::RemoveVaFinalizer { name: va, finalizer: "external-attacher/rbd-csi-ceph-com".into() }
    );
}

#[test]
fn multi_attach_playbook_for_an_in_tree_volume_waits_for_the_detach() {
    // an in-tree volume has no VolumeAttachment: only the lost node's volumesAttached lists it
    let mut t = target("user-pv");
    let node = t.volume_attachments[0].node.clone();
    t.volume_attachments.clear();
    t.attached_on = vec![node.clone()];
    t.unique_name = Some("kubernetes.io/rbd/replicapool:user-image".into());
    let gone = Condition::NotAttached { node: node.clone(), volume: "kubernetes.io/rbd/replicapool:user-image".into() };
    let old = t.with_server_version(Some(crate::remedy::playbook::version::ServerVersion { major: 1, minor: 20 }));
    let p = build("multi-attach-node-lost", &old, &cfg()).unwrap();
    let a = acts(&p);
    let (last, pods) = a.split_last().expect("acts");
    assert!(!pods.is_empty() && pods.iter().all(|a| matches!(a, WriteAction::ForceDeletePod { .. })), "{a:?}");
    assert_eq!(
        **last,
        WriteAction::ReleaseVolumeInUse {
            node: node.clone(),
            volume: "kubernetes.io/rbd/replicapool:user-image".into()
        }
    );
    let wait = p.steps.iter().find_map(|s| {
        if let StepKind::Wait { condition, timeout, .. } = &s.kind { Some((condition, *timeout)) } else { None }
    });
    assert_eq!(
        wait,
        Some((&gone, Duration::from_secs(cfg().wait_timeout_seconds))),
        "the controller detaches at once once volumesInUse is released"
    );
    assert!(matches!(&p.steps.last().unwrap().kind, StepKind::Verify(c) if *c == vec![gone.clone()]));
    let new =
        old.clone().with_server_version(Some(crate::remedy::playbook::version::ServerVersion { major: 1, minor: 29 }));
    let p = build("multi-attach-node-lost", &new, &cfg()).unwrap();
    assert_eq!(acts(&p), vec![&WriteAction::TaintOutOfService { node: node.clone() }]);
    assert!(p.steps.iter().any(|s| matches!(&s.kind, StepKind::Wait { condition, .. } if *condition == gone)));
    // nothing attached on a lost node: nothing to do
    let mut none = old.clone();
    none.attached_on.clear();
    assert!(matches!(build("multi-attach-node-lost", &none, &cfg()), Err(PlaybookError::NothingToDo { .. })));
}

#[test]
fn va_finalizer_and_blocklist_playbooks() {
    let mut t = target("user-pv");
    assert!(build("va-finalizer-stuck", &t, &cfg()).is_err());
    t.volume_attachments[0].deleting = true;
    t.volume_attachments[0].finalizers = vec!["external-attacher/rbd-csi-ceph-com".into()];
    let p = build("va-finalizer-stuck", &t, &cfg()).unwrap();
    assert!(
        matches!(acts(&p)[0], WriteAction::RemoveVaFinalizer { finalizer, .. } if finalizer == "external-attacher/rbd-csi-ceph-com")
    );
    let snap = fixtures::incidents();
    let entries = vec![
        BlocklistEntry { target: BlocklistTarget::Addr("10.10.11.22:0/0".into()), until: None },
        BlocklistEntry { target: BlocklistTarget::Range("10.10.0.0:0/16".into()), until: None },
    ];
    let t = Target::for_blocklist(&snap, entries);
    assert_eq!(t.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), vec!["k8s-node-b"]);
    let p = build("blocklist-leftover", &t, &cfg()).unwrap();
    assert_eq!(*acts(&p)[1], WriteAction::BlocklistRangeRm { range: "10.10.0.0:0/16".into() });
}

#[test]
fn every_playbook_starts_with_backup_then_check() {
    let snap = fixtures::incidents();
    let lin = Lineage::build(&snap);
    let mut built = 0;
    for v in &lin.volumes {
        let t = Target::for_volume(&snap, &lin, &v.pv).unwrap();
        for p in PATTERNS {
            if let Ok(pb) = build(p, &t, &cfg()) {
                built += 1;
                assert!(matches!(pb.steps[0].kind, StepKind::Backup(_)), "{p}");
                assert!(matches!(pb.steps[1].kind, StepKind::Check), "{p}");
                let first_act = pb.steps.iter().position(|s| matches!(s.kind, StepKind::Act(_)));
                assert!(first_act.is_none_or(|i| i > 0), "{p}");
                for (i, s) in pb.steps.iter().enumerate() {
                    assert_eq!(s.id, format!("{p}/{}", i + 1));
                }
            }
        }
    }
    assert!(built >= 4, "built {built}");
}

#[test]
fn device_extraction() {
    assert_eq!(device_in("failed to unmap device /dev/rbd3, error"), Some("/dev/rbd3".into()));
    assert_eq!(device_in("/dev/rbd"), None);
}

#[test]
fn a_daemonsets_holders_on_two_nodes_put_its_mount_in_the_scope_once() {
    let mount = crate::remedy::action::precheck::MountRef {
        namespace: "monitoring".into(),
        daemonset: "node-exporter".into(),
        container: "node-exporter".into(),
        mount_path: "/host".into(),
    };
    let holder = |node: &str| super::target::HostMountHolder {
        mount: mount.clone(),
        pod: super::target::TargetPod {
            namespace: "monitoring".into(),
            name: format!("node-exporter-{node}"),
            uid: node.into(),
            node: Some(node.into()),
            terminating: false,
            waiting: false,
        },
    };
    let t = Target { holders: vec![holder("node133"), holder("node134")], ..Default::default() };
    assert_eq!(t.scope().mounts, [mount], "read and shown once in the re-check, not once per node");
}

/// unmap-busy waits for the watcher of the holder's node where its client really is: the storage
/// address attribution tied to the node, not its first InternalIP (from which nothing watches, so
/// the wait would pass at once); without such a watcher, the InternalIP.
#[test]
fn unmap_busy_waits_for_the_nodes_own_watcher_address() {
    let mount = crate::remedy::action::precheck::MountRef {
        namespace: "monitoring".into(),
        daemonset: "host-scanner".into(),
        container: "scanner".into(),
        mount_path: "/host".into(),
    };
    let pod = super::target::TargetPod {
        namespace: "monitoring".into(),
        name: "host-scanner-x".into(),
        uid: "u".into(),
        node: Some("worker-1".into()),
        terminating: false,
        waiting: false,
    };
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    let mut t = Target {
        pv: Some("pv1".into()),
        image: Some(crate::model::ImageRef::new("replicapool", "csi-vol-1")),
        holders: vec![super::target::HostMountHolder { mount, pod }],
        nodes: vec![TargetNode {
            name: "worker-1".into(),
            ready: crate::model::kube::Readiness::Ready,
            ips: vec![ip("198.18.2.2"), ip("198.18.2.18")],
        }],
        watchers: vec![Watcher { address: "198.18.2.18:0/31796882".into(), client: 4143, cookie: 1 }],
        ..Default::default()
    };
    let waited = |t: &Target| {
        let p = build("unmap-busy", t, &cfg()).unwrap();
        p.steps.iter().find_map(|s| match &s.kind {
            StepKind::Wait { condition: condition::Condition::NoWatcherFrom { ip, .. }, .. } => Some(*ip),
            _ => None,
        })
    };
    assert_eq!(waited(&t), Some(ip("198.18.2.18")));
    t.watchers.clear();
    assert_eq!(waited(&t), Some(ip("198.18.2.2")));
}
