//! Not racing a remediator, live: incident 002 (kubelet stopped on a node, its watcher stays),
//! then the Medik8s CRDs installed from their published API and the objects a NodeHealthCheck and
//! Self Node Remediation write while they remediate that node (`tests/harness/medik8s.py`). The
//! remediators read as not installed by the 404 of their lists first; then dead-node-watcher says
//! which remediator acts on the node, and the console's playbook is refused on that node until
//! the node's name is typed, its confirmation saying what it races.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use unstick_core::diagnose::{EvidenceSource, PatternId};
use unstick_core::model::remediation::RemediatorKind;
use unstick_core::remedy::playbook::StepKind;
use unstick_core::sources::kube::remediators;

mod common;

use common::live::{config, incident, on, open_playbook, run_playbook, s, wait_finding};
use common::remedy::Reseed;

/// Removes the CRDs when dropped (also when the test panics); the reseed would too.
struct RemoveCrds;
impl Drop for RemoveCrds {
    fn drop(&mut self) {
        common::cluster(&["medik8s", "remove"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_a_node_under_medik8s_remediation_is_said_and_acting_there_needs_its_name() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident(&h, "002");
    let (pv, node) = (s(&live, "pv"), s(&live, "old_node"));
    let client = h.client().await;
    let timeout = Duration::from_secs(15);

    // not installed: every list answers 404
    let r = remediators::list(&client, timeout).await;
    assert_eq!(r.absent, RemediatorKind::ALL.to_vec(), "{r:?}");
    assert!(r.objects.is_empty() && r.unreadable.is_empty(), "{r:?}");

    let _crds = RemoveCrds;
    common::cluster(&["medik8s", "install"]);
    let r = remediators::list(&client, timeout).await;
    assert!(r.absent.is_empty() && r.objects.is_empty() && r.unreadable.is_empty(), "installed, idle: {r:?}");
    common::cluster(&["medik8s", "remediate", node]);
    let r = remediators::list(&client, timeout).await;
    let by: Vec<String> = r.objects.iter().map(ToString::to_string).collect();
    assert_eq!(
        by,
        [
            format!("NodeHealthCheck nhc-workers (phase Remediating, remediating with SelfNodeRemediation {node})"),
            format!(
                "SelfNodeRemediation medik8s/{node} (phase Pre-Reboot-Completed, strategy OutOfServiceTaint, Processing=True)"
            ),
        ]
    );
    assert!(r.objects.iter().all(|o| o.node == node), "{r:?}");

    // the finding says so
    let cfg = config();
    let f = wait_finding(&h, &cfg, 90, |f| on(f, PatternId::DeadNodeWatcher, pv)).await;
    let said: Vec<&str> =
        f.evidence.iter().filter(|e| e.source == EvidenceSource::Remediator).map(|e| e.text.as_str()).collect();
    assert_eq!(said.len(), 1, "{:#?}", f.evidence);
    assert!(
        said[0].starts_with(&format!("automatic remediation acts on node {node}: NodeHealthCheck nhc-workers"))
            && said[0].contains(&format!("SelfNodeRemediation medik8s/{node}")),
        "{}",
        said[0]
    );
    eprintln!("remediation: finding {:?} after the incident began: {}", t0.elapsed(), said[0]);

    // the playbook: its first action on the node is refused until the node's name is typed; the
    // confirmation then says what acts there, and the override holds for the playbook's steps
    let dir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, dir.path(), &cfg, |f| on(f, PatternId::DeadNodeWatcher, pv)).await;
    assert!(a[0].starts_with("force-delete (grace 0) pod"), "{a:?}");
    // backup and re-check first, as an operator does
    loop {
        let (cur, _) = d.cursor();
        if matches!(d.app.playbook().unwrap().playbook.steps[cur].kind, StepKind::Act(_)) {
            break;
        }
        d.key(KeyCode::Enter).await;
        assert!(d.cursor().0 > cur, "step {cur} did not advance: {}", d.message());
    }
    d.key(KeyCode::Enter).await;
    let refused = d.message();
    assert!(refused.contains("automatic remediation acts on node") && refused.contains("races it"), "{refused}");
    d.type_override(node).await;
    d.key(KeyCode::Enter).await;
    let c = d.popup("act after the override");
    let w = c.view.warnings.clone();
    assert!(
        w.iter()
            .any(|w| w.starts_with(&format!("OVERRIDE: automatic remediation acts on node {node}: NodeHealthCheck"))),
        "{w:?}"
    );
    d.confirm().await;
    assert!(d.message().contains("done"), "{}", d.message());
    run_playbook(&mut d, "remediation dead-node-watcher").await;
    eprintln!("remediation: total {:?}", t0.elapsed());
}
