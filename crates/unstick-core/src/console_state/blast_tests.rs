use std::sync::Arc;

use super::*;
use crate::lineage::Lineage;
use crate::model::objects::Pod;

fn pod(name: &str, node: &str, owner: Option<(&str, &str)>) -> Arc<Pod> {
    let mut meta = serde_json::json!({"namespace": "ns", "name": name, "uid": format!("u-{name}")});
    if let Some((kind, n)) = owner {
        meta["ownerReferences"] =
            serde_json::json!([{"apiVersion": "apps/v1", "kind": kind, "name": n, "uid": "o", "controller": true}]);
    }
    Arc::new(
        serde_json::from_value(serde_json::json!({"metadata": meta, "spec": {"nodeName": node, "containers": []}}))
            .unwrap(),
    )
}

fn snap() -> Snapshot {
    Snapshot {
        pods: vec![
            pod("exporter-a", "n1", Some(("DaemonSet", "exporter"))),
            pod("exporter-b", "n2", Some(("DaemonSet", "exporter"))),
            pod("db-5b8c7d9f6-x", "n1", Some(("ReplicaSet", "db-5b8c7d9f6"))),
            pod("db-5b8c7d9f6-y", "n2", Some(("ReplicaSet", "db-5b8c7d9f6"))),
            pod("web-0", "n2", Some(("StatefulSet", "web"))),
            pod("bare", "n1", None),
        ],
        ..Default::default()
    }
}

fn view(action: WriteAction, strategy: Option<&str>) -> ConfirmView {
    ConfirmView {
        step_id: "x/1".into(),
        action,
        summary: String::new(),
        command: String::new(),
        objects: vec![],
        precheck: vec![],
        reversible: true,
        inverse: String::new(),
        warnings: vec![],
        typed_name: None,
        undo_of: None,
        dry_run: false,
        update_strategy: strategy.map(String::from),
    }
}

fn texts(b: &Blast) -> Vec<&str> {
    b.lines.iter().map(|l| l.text.as_str()).collect()
}

fn patch() -> WriteAction {
    WriteAction::SetMountPropagation {
        namespace: "ns".into(),
        daemonset: "exporter".into(),
        container: "c".into(),
        mount_path: "/host".into(),
        from: None,
        to: Some("HostToContainer".into()),
    }
}

#[test]
fn a_daemonset_patch_lists_every_pod_with_its_node_and_what_its_strategy_does() {
    let s = snap();
    let rolling = of(
        &view(patch(), Some("RollingUpdate (maxUnavailable 1, maxSurge 0)")),
        &s,
        &Lineage::default(),
        &Default::default(),
    );
    assert_eq!(
        texts(&rolling),
        [
            "daemonset/ns/exporter: updateStrategy RollingUpdate (maxUnavailable 1, maxSurge 0)",
            "pod/ns/exporter-a on n1: deleted and recreated from the new template by the controller",
            "pod/ns/exporter-b on n2: deleted and recreated from the new template by the controller",
        ]
    );
    let on_delete = of(&view(patch(), Some("OnDelete")), &s, &Lineage::default(), &Default::default());
    assert_eq!(texts(&on_delete)[0], "daemonset/ns/exporter: updateStrategy OnDelete");
    assert!(texts(&on_delete)[1..].iter().all(|l| l.contains("keeps the old template")), "{on_delete:?}");
    assert_eq!(on_delete.lines.len(), 3);
}

#[test]
fn a_deleted_pod_names_the_workload_that_recreates_it_and_its_replicas() {
    let s = snap();
    let del = |name: &str| {
        let a = WriteAction::DeletePod { namespace: "ns".into(), name: name.into(), uid: format!("u-{name}") };
        of(&view(a, None), &s, &Lineage::default(), &Default::default())
    };
    assert_eq!(
        texts(&del("db-5b8c7d9f6-y")),
        [
            "deployment/ns/db: creates a replacement (new name, any node); 2 pod(s): ns/db-5b8c7d9f6-x on n1, ns/db-5b8c7d9f6-y on n2 (this one)"
        ]
    );
    assert!(
        texts(&del("web-0"))[0].starts_with("statefulset/ns/web: recreates it under the same name"),
        "{:?}",
        del("web-0")
    );
    assert!(texts(&del("exporter-a"))[0].starts_with("daemonset/ns/exporter: recreates it on the same node"));
    assert_eq!(texts(&del("bare")), ["pod/ns/bare: no controller owns it; nothing recreates it"]);
}

#[test]
fn the_taint_says_which_force_deleted_pods_come_back_elsewhere() {
    let s = snap();
    let b = of(
        &view(WriteAction::TaintOutOfService { node: "n1".into() }, None),
        &s,
        &Lineage::default(),
        &Default::default(),
    );
    let t = texts(&b);
    assert_eq!(t.len(), 3, "the three pods on n1: {t:?}");
    assert!(
        t[0].starts_with("pod/ns/exporter-a (DaemonSet ns/exporter)")
            && t[0].ends_with("does not recreate it while the taint stays")
    );
    assert!(
        t[1].starts_with("pod/ns/db-5b8c7d9f6-x (Deployment ns/db)") && t[1].contains("replacement on another node")
    );
    assert!(t[2].ends_with("no controller recreates it"), "{t:?}");
}
