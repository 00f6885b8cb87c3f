use super::condition::Condition;
use super::*;
use crate::config::RemedyConfig;
use crate::remedy::action::WriteAction;

fn cfg() -> RemedyConfig {
    crate::config::Config::defaults().remedy
}

fn pod(ns: &str, name: &str, node: &str, waiting: bool) -> TargetPod {
    TargetPod {
        namespace: ns.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        node: Some(node.into()),
        terminating: false,
        waiting,
    }
}

fn acts(p: &Playbook) -> Vec<&WriteAction> {
    p.steps.iter().filter_map(|s| s.kind.act()).collect()
}

fn commands(p: &Playbook) -> Vec<String> {
    p.steps
        .iter()
        .filter_map(|s| if let StepKind::Manual { commands, .. } = &s.kind { Some(commands.clone()) } else { None })
        .flatten()
        .collect()
}

fn not_registered() -> Target {
    Target {
        pv: Some("pvc-1".into()),
        pvc: Some(("app".into(), "data".into())),
        driver: Some("rook-ceph.rbd.csi.ceph.com".into()),
        pods: vec![pod("app", "web-0", "n2", true)],
        node_plugins: vec![pod("rook-ceph", "csi-rbdplugin-x7k2p", "n2", false)],
        ..Target::default()
    }
}

#[test]
fn not_registered_restarts_the_plugin_pod_on_the_waiting_node_only() {
    let t = not_registered();
    let p = build("restart-node-plugin", &t, &cfg()).unwrap();
    assert_eq!(p.pattern, "csi-driver-not-registered");
    let kinds: Vec<&str> = p.steps.iter().map(|s| s.kind.name()).collect();
    assert_eq!(kinds, ["Backup", "Check", "Manual", "Act", "Wait", "Manual", "Act"]);
    let a = acts(&p);
    assert_eq!(
        *a[0],
        WriteAction::DeletePod {
            namespace: "rook-ceph".into(),
            name: "csi-rbdplugin-x7k2p".into(),
            uid: "uid-csi-rbdplugin-x7k2p".into()
        }
    );
    assert!(p.steps[6].optional && !p.steps[3].optional);
    // after the Wait, the CSINode is read again: the step that says whether the restart helped
    let StepKind::Manual { commands: after, .. } = &p.steps[5].kind else { panic!("{:?}", p.steps[5]) };
    assert_eq!(after[0], "kubectl get csinode n2 -o jsonpath={.spec.drivers[*].name}");
    assert!(a.iter().all(|a| !matches!(a, WriteAction::ForceDeletePod { .. } | WriteAction::TaintOutOfService { .. })));
    // the live re-check covers the plugin pod: a replaced plugin pod stops the playbook
    assert!(p.scope.pods.contains(&("rook-ceph".into(), "csi-rbdplugin-x7k2p".into())));
    let c = commands(&p);
    assert!(c.contains(&"kubectl get csinode n2 -o jsonpath={.spec.drivers[*].name}".to_string()), "{c:?}");
    assert!(c.contains(&"kubectl logs -n rook-ceph csi-rbdplugin-x7k2p -c driver-registrar --tail=50".to_string()));
}

#[test]
fn not_registered_without_a_plugin_pod_there_has_nothing_to_delete() {
    let mut t = not_registered();
    t.node_plugins.clear();
    let e = build("csi-driver-not-registered", &t, &cfg()).unwrap_err();
    assert!(e.to_string().contains("does not schedule there"), "{e}");
    t.pods[0].waiting = false;
    assert!(build("csi-driver-not-registered", &t, &cfg()).is_err());
}

#[test]
fn rwo_claim_shared_is_read_only_guidance() {
    let t = Target {
        pv: Some("pvc-2".into()),
        pods: vec![pod("app", "web-old", "n1", false), pod("app", "web-new", "n2", true)],
        ..Target::default()
    };
    let p = build("rwo-claim-guidance", &t, &cfg()).unwrap();
    assert_eq!(p.pattern, "rwo-claim-shared");
    assert!(acts(&p).is_empty(), "{:#?}", p.steps);
    let kinds: Vec<&str> = p.steps.iter().map(|s| s.kind.name()).collect();
    assert_eq!(kinds, ["Backup", "Check", "Manual", "Manual", "Wait"]);
    assert!(
        matches!(&p.steps[4].kind, StepKind::Wait { condition: Condition::PodGone { name, .. }, .. } if name == "web-old")
    );
    let c = commands(&p).join("\n");
    assert!(c.contains("kubectl get pod -n app web-old web-new -o wide"), "{c}");
    assert!(!c.contains("--force") && !c.contains("blocklist") && !c.contains("taint"), "{c}");
    // both on one node, or nobody waiting: nothing to guide
    let same = Target { pods: vec![pod("app", "a", "n1", false), pod("app", "b", "n1", true)], ..Target::default() };
    assert!(build("rwo-claim-shared", &same, &cfg()).is_err());
}

#[test]
fn the_target_finds_the_rbd_node_plugin_on_the_waiting_pods_node() {
    let mut snap = crate::fixtures::incidents();
    let lin = crate::lineage::Lineage::build(&snap);
    let v = lin.volumes.iter().find(|v| v.driver.ends_with("rbd.csi.ceph.com")).expect("a ceph-csi RBD volume");
    let before = Target::for_volume(&snap, &lin, &v.pv).unwrap();
    let node = before.pods.iter().find(|p| p.waiting).and_then(|p| p.node.clone()).expect("a waiting pod");
    let mk = |name: &str, owner: &str, node: &str| -> std::sync::Arc<crate::model::objects::Pod> {
        std::sync::Arc::new(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "namespace": "rook-ceph", "uid": format!("u-{name}"),
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner, "name": "x", "uid": "o"}]},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
                "status": {"phase": "Running"}
            }))
            .unwrap(),
        )
    };
    snap.pods.push(mk("csi-rbdplugin-abcde", "DaemonSet", &node));
    snap.pods.push(mk("csi-cephfsplugin-fghij", "DaemonSet", &node));
    snap.pods.push(mk("csi-rbdplugin-provisioner-7d9-xyz", "ReplicaSet", &node));
    snap.pods.push(mk("csi-rbdplugin-zzzzz", "DaemonSet", "some-other-node"));
    let t = Target::for_volume(&snap, &lin, &v.pv).unwrap();
    let names: Vec<&str> = t.node_plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["csi-rbdplugin-abcde"]);
}
