#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail by panicking")]

use serde_json::json;

use super::*;

fn node(name: &str, taints: serde_json::Value) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"taints": taints}})).unwrap()
}

#[test]
fn a_node_health_check_names_each_unhealthy_node_it_remediates() {
    let nhc = json!({"metadata": {"name": "nhc-workers"}, "status": {"phase": "Remediating",
        "unhealthyNodes": [
            {"name": "worker-2", "remediations": [{"resource": {"kind": "SelfNodeRemediation",
                "namespace": "openshift-workload-availability", "name": "worker-2"}, "started": "2026-11-26T22:00:00Z"}]},
            {"name": "worker-9"}],
        "inFlightRemediations": {"worker-2": "2026-11-26T22:00:00Z", "worker-3": "2026-11-26T22:01:00Z"}}});
    let r = from_object(RemediatorKind::NodeHealthCheck, &nhc);
    let nodes: Vec<&str> = r.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(nodes, ["worker-2", "worker-3"], "worker-9 has no remediation yet: {r:?}");
    assert_eq!(
        r[0].to_string(),
        "NodeHealthCheck nhc-workers (phase Remediating, remediating with SelfNodeRemediation worker-2)"
    );
    assert_eq!(r[1].state, "phase Remediating, remediation in flight");
}

#[test]
fn a_remediation_object_names_its_node_by_annotation_else_by_name() {
    let snr = json!({"metadata": {"name": "worker-1", "namespace": "medik8s"},
        "spec": {"remediationStrategy": "OutOfServiceTaint"},
        "status": {"phase": "Fencing-Completed", "conditions": [
            {"type": "Processing", "status": "False"}, {"type": "Succeeded", "status": "True"}]}});
    let r = from_object(RemediatorKind::SelfNodeRemediation, &snr);
    assert_eq!(r.len(), 1);
    assert_eq!(
        r[0].to_string(),
        "SelfNodeRemediation medik8s/worker-1 (phase Fencing-Completed, strategy OutOfServiceTaint, Succeeded=True)"
    );
    let far = json!({"metadata": {"name": "far-x1", "namespace": "medik8s", "deletionTimestamp": "2026-11-26T22:00:00Z",
        "annotations": {NODE_NAME_ANNOTATION: "worker-3"}}});
    let r = from_object(RemediatorKind::FenceAgentsRemediation, &far);
    assert_eq!((r[0].node.as_str(), r[0].state.as_str()), ("worker-3", "being deleted"));
}

#[test]
fn taints_count_and_the_out_of_service_taint_only_with_a_remediator() {
    let oos = json!({"key": OUT_OF_SERVICE_TAINT, "value": "nodeshutdown", "effect": "NoExecute"});
    // the out-of-service taint alone may be an operator's (or this console's): not a remediator
    assert!(acting_on(None, &node("worker-1", json!([oos]))).is_empty());
    let snr_taint = json!({"key": REMEDIATION_TAINT, "value": "self-node-remediation", "effect": "NoExecute"});
    let signs = acting_on(None, &node("worker-1", json!([snr_taint, oos])));
    let by: Vec<&str> = signs.iter().map(|r| r.by.as_str()).collect();
    assert_eq!(
        by,
        [
            "taint medik8s.io/remediation=self-node-remediation:NoExecute",
            "taint node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
        ]
    );
    let old = json!({"key": FAR_TAINT_OLD, "effect": "NoExecute"});
    assert_eq!(acting_on(None, &node("w", json!([old]))).len(), 1);
    // an object naming another node does not count
    let r = Remediators {
        objects: vec![Remediation {
            node: "worker-2".into(),
            by: "SelfNodeRemediation m/worker-2".into(),
            state: String::new(),
        }],
        ..Remediators::default()
    };
    assert!(acting_on(Some(&r), &node("worker-1", json!([]))).is_empty());
    let signs = acting_on(Some(&r), &node("worker-2", json!([])));
    assert_eq!(
        describe("worker-2", &signs),
        "automatic remediation acts on node worker-2: SelfNodeRemediation m/worker-2"
    );
}

#[test]
fn a_finding_on_a_node_under_remediation_says_so() {
    let mut snap = crate::fixtures::incidents();
    let run = |snap: &crate::model::Snapshot| {
        let lin = crate::lineage::Lineage::build(snap);
        crate::diagnose::run(snap, &lin, &crate::config::Config::defaults().diagnose, crate::fixtures::now())
    };
    let said = |fs: &[crate::diagnose::Finding]| -> Vec<String> {
        fs.iter()
            .flat_map(|f| f.evidence.iter())
            .filter(|e| e.source == crate::diagnose::EvidenceSource::Remediator)
            .map(|e| e.text.clone())
            .collect()
    };
    let before = run(&snap);
    assert!(said(&before).is_empty());
    let node = before.iter().find_map(|f| f.node.clone()).expect("the fixture has a finding about a node");
    let on_node = before.iter().filter(|f| f.node.as_deref() == Some(node.as_str())).count();
    snap.remediators = Some(Remediators {
        objects: vec![Remediation {
            node: node.clone(),
            by: format!("SelfNodeRemediation medik8s/{node}"),
            state: String::new(),
        }],
        ..Remediators::default()
    });
    let after = run(&snap);
    let lines = said(&after);
    assert_eq!(lines.len(), on_node, "one line per finding on {node}: {lines:?}");
    assert_eq!(
        lines[0],
        format!(
            "automatic remediation acts on node {node}: SelfNodeRemediation medik8s/{node}; acting on the node races it"
        )
    );
}
