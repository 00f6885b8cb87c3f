use super::*;

fn img() -> ImageRef {
    ImageRef::new("replicapool", "index-api-image")
}

#[test]
fn argv_and_summary() {
    let a = WriteAction::RbdLockRm {
        image: img(),
        lock_id: "kubelet_lock_magic_node1".into(),
        locker: "client.4173".into(),
        address: "127.0.0.1:0/42490934".into(),
    };
    assert_eq!(a.summary(), "rbd lock rm replicapool/index-api-image kubelet_lock_magic_node1 client.4173");
    assert!(a.warning().unwrap().contains("1 hour"));
    assert!(!a.is_reversible());
    let cfg = crate::config::Config::defaults().ceph;
    let cli = CephCli::new(
        crate::sources::ceph::cli::Access::Local { conf: Some("/c.conf".into()), id: None, keyring: None },
        cfg,
        None,
    );
    let shown = a.display(Some(&cli));
    assert!(shown.starts_with("rbd --conf /c.conf --client_mount_timeout 5"), "{shown}");
    assert!(shown.ends_with("lock rm replicapool/index-api-image kubelet_lock_magic_node1 client.4173"), "{shown}");
    let b = WriteAction::BlocklistAdd { addr: "127.0.0.1:0/981268693".into() };
    assert!(b.display(Some(&cli)).ends_with("osd blocklist add 127.0.0.1:0/981268693 --format json"));
}

#[test]
fn inverses_round_trip() {
    let b = WriteAction::BlocklistAdd { addr: "1.2.3.4:0/5".into() };
    let Inverse::Action { action } = b.inverse() else { panic!() };
    assert_eq!(*action, WriteAction::BlocklistRm { addr: "1.2.3.4:0/5".into() });
    let m = WriteAction::SetMountPropagation {
        namespace: "ns".into(),
        daemonset: "ds".into(),
        container: "c".into(),
        mount_path: "/host".into(),
        from: None,
        to: Some(HOST_TO_CONTAINER.into()),
    };
    let Inverse::Action { action } = m.inverse() else { panic!() };
    let WriteAction::SetMountPropagation { from, to, .. } = &*action else { panic!() };
    assert_eq!((from.as_deref(), to.as_deref()), (Some(HOST_TO_CONTAINER), None));
    let Inverse::Action { action: back } = action.inverse() else { panic!() };
    assert_eq!(*back, m);
    for a in [
        WriteAction::DeletePod { namespace: "n".into(), name: "p".into(), uid: "u".into() },
        WriteAction::RemoveVaFinalizer { name: "csi-1".into(), finalizer: "external-attacher/x".into() },
        WriteAction::SnapCreate { image: img(), snap: "s".into() },
    ] {
        assert!(matches!(a.inverse(), Inverse::Irreversible { ref why } if !why.is_empty()), "{a:?}");
    }
}

#[test]
fn serde_shape_is_stable() {
    let a = WriteAction::TaintOutOfService { node: "node1".into() };
    let j = serde_json::to_string(&a).unwrap();
    assert_eq!(j, r#"{"kind":"taint-out-of-service","node":"node1"}"#);
    let back: WriteAction = serde_json::from_str(&j).unwrap();
    assert_eq!(back, a);
    let i = serde_json::to_value(a.inverse()).unwrap();
    assert_eq!(i["kind"], "action");
    assert_eq!(i["action"]["kind"], "untaint-out-of-service");
}

#[test]
fn range_forms() {
    assert_eq!(range_cli_form("10.1.0.0:0/16"), "10.1.0.0/16");
    assert_eq!(range_cli_form("cidr:10.1.0.0:0/16"), "10.1.0.0/16");
    assert_eq!(range_cli_form("10.1.0.0/16"), "10.1.0.0/16");
    let r = WriteAction::BlocklistRangeRm { range: "10.1.0.0:0/16".into() };
    assert_eq!(r.summary(), "ceph osd blocklist range rm 10.1.0.0/16");
}
