use super::*;

pub(crate) fn state() -> LiveState {
    LiveState {
        at: Timestamp::UNIX_EPOCH,
        nodes: vec![
            NodeFact {
                name: "node1".into(),
                ready: Readiness::Unknown,
                ips: vec!["127.0.0.1".parse().unwrap()],
                out_of_service: false,
                attached: vec![],
                boot_id: None,
            },
            NodeFact {
                name: "10.10.11.22".into(),
                ready: Readiness::Ready,
                ips: vec!["10.10.11.22".parse().unwrap()],
                out_of_service: false,
                attached: vec![],
                boot_id: None,
            },
        ],
        watchers: Some(vec![Watcher { address: "127.0.0.1:0/981268693".into(), client: 4155, cookie: 1 }]),
        locks: Some(vec![]),
        pods: vec![PodFact {
            namespace: "incident-002".into(),
            name: "sleep-old".into(),
            uid: Some("u1".into()),
            terminating: true,
            node: Some("node1".into()),
            finalizers: vec![],
        }],
        volume_attachments: vec![VaFact {
            name: "csi-1".into(),
            present: true,
            node: "node1".into(),
            deleting: false,
            finalizers: vec!["external-attacher/rbd-csi-ceph-com".into()],
        }],
        mounts: vec![],
        blocklist: None,
        remediation: Default::default(),
        fences: None,
        csiaddons_nodes: None,
    }
}

fn scope() -> Scope {
    Scope {
        image: Some(ImageRef::new("replicapool", "csi-vol-1")),
        nodes: vec!["node1".into()],
        pods: vec![("incident-002".into(), "sleep-old".into())],
        volume_attachments: vec!["csi-1".into()],
        mounts: vec![],
        blocklist: false,
        fences: false,
    }
}

#[test]
fn unchanged_state_passes_and_cookies_are_ignored() {
    let a = state();
    let mut b = state();
    b.at = Timestamp::now();
    b.watchers.as_mut().unwrap()[0].cookie = 99;
    b.nodes[1].ready = Readiness::NotReady; // not in scope.nodes
    assert!(compare(&a, &b, &scope()).is_empty());
}

#[test]
fn every_change_is_explained() {
    let a = state();
    let mut b = state();
    b.nodes[0].ready = Readiness::Ready;
    b.watchers = Some(vec![]);
    b.locks = Some(vec![Lock { id: "x".into(), locker: "client.1".into(), address: "1.2.3.4:0/1".into() }]);
    b.pods[0].uid = Some("u2".into());
    b.volume_attachments[0].present = false;
    let changes = compare(&a, &b, &scope());
    let text: Vec<String> = changes.iter().map(|c| c.to_string()).collect();
    assert_eq!(changes.len(), 5, "{text:#?}");
    assert!(text[0].contains("node node1: was Ready=Unknown, now Ready=True"), "{}", text[0]);
    assert!(text[1].contains("watchers of replicapool/csi-vol-1: was 127.0.0.1:0/981268693, now none"), "{}", text[1]);
    assert!(text[3].contains("uid u1") && text[3].contains("uid u2"));
    assert!(text[4].contains("now absent"));
    let e = PrecheckError::Changed(changes).to_string();
    assert!(e.contains("nothing was done"), "{e}");
}

/// The backup's `rbd snap create` on an exclusive-lock image whose owner died breaks that owner's
/// `auto` lock (seen in live_000_csi): no drift. An advisory lock that goes is one.
#[test]
fn an_exclusive_lock_owner_changing_is_no_drift() {
    let auto =
        |addr: &str| Lock { id: "auto 140148876606400".into(), locker: "client.5429".into(), address: addr.into() };
    let mut a = state();
    a.locks = Some(vec![auto("198.18.2.18:0/4164174048")]);
    let mut b = state();
    b.locks = Some(vec![]);
    assert!(compare(&a, &b, &scope()).is_empty());
    b.locks = Some(vec![auto("198.18.2.19:0/1")]);
    assert!(compare(&a, &b, &scope()).is_empty());
    a.locks.as_mut().unwrap().push(Lock {
        id: "kubelet_lock_magic_n".into(),
        locker: "client.1".into(),
        address: "1.2.3.4:0/1".into(),
    });
    assert_eq!(compare(&a, &b, &scope()).len(), 1);
}

#[test]
fn unknown_baseline_facts_are_not_compared() {
    let mut a = state();
    a.watchers = None;
    let mut b = state();
    b.watchers = Some(vec![]);
    assert!(compare(&a, &b, &scope()).is_empty());
}

#[test]
fn describe_names_nodes_of_watchers() {
    let lines = state().describe(&scope());
    assert!(lines.iter().any(|l| l == "node node1: Ready=Unknown"), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("127.0.0.1:0/981268693 (node1 Ready=Unknown)")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("sleep-old") && l.contains("Terminating")), "{lines:?}");
}

#[test]
fn baseline_from_snapshot() {
    let snap = crate::fixtures::incidents();
    let s = Scope { nodes: vec!["node1".into()], ..Default::default() };
    let b = LiveState::from_snapshot(&snap, &s, crate::fixtures::now());
    assert!(!b.nodes.is_empty());
    assert!(b.watchers.is_none() && b.blocklist.is_none());
}
