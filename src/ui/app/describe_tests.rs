use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::*;
use crate::ui::app::Msg;
use crate::ui::app::tests::incidents_app;
use crate::ui::testing::screen;
use unstick_core::sources::describe::slim;

use crate::ui::testing::press as key;

fn pod_json(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "incident-001",
            "managedFields": [{"manager": "kubelet"}],
            "annotations": {"note": "password=hunter2", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"nodeName": "node2", "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-user-db"}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]}
    })
}

#[test]
fn y_asks_the_api_server_for_the_selected_pod_and_shows_it_redacted() {
    let mut a = incidents_app(false);
    a.focus = Pane::Pods;
    a.select(Pane::Pods, 1);
    let fx = key(&mut a, KeyCode::Char('y'));
    let [Effect::Describe(target)] = &fx[..] else { panic!("{fx:?}") };
    assert_eq!(target.label(), "Pod incident-001/user-db-79f7876cbc-dl8b8");
    assert!(screen(&a, 80, 24).contains("reading from the API server…"));
    let v = slim(pod_json("user-db-79f7876cbc-dl8b8"));
    a.update(Msg::Described(DescribeMsg { target: target.clone(), result: Ok(v) }));
    let s = screen(&a, 80, 24);
    assert!(s.contains("nodeName: node2"), "{s}");
    assert!(!s.contains("hunter2") && s.contains("[REDACTED]"), "secrets never shown: {s}");
    assert!(!s.contains("managedFields") && !s.contains("last-applied"), "{s}");
    insta::assert_snapshot!("yaml_80x24", s);
    // d switches to describe: the fields that matter and the conditions
    key(&mut a, KeyCode::Char('d'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("Node:") && s.contains("node2") && s.contains("Claims:") && s.contains("Conditions:"), "{s}");
    insta::assert_snapshot!("describe_80x24", s);
    insta::assert_snapshot!("describe_60x20", screen(&a, 60, 20));
    key(&mut a, KeyCode::Esc);
    assert!(!a.is_open(crate::ui::popups::Kind::Describe));
}

#[test]
fn an_answer_for_another_object_is_dropped_and_errors_are_one_line() {
    let mut a = incidents_app(false);
    a.focus = Pane::Volumes;
    let fx = key(&mut a, KeyCode::Char('d'));
    let [Effect::Describe(first)] = &fx[..] else { panic!("{fx:?}") };
    assert_eq!(first.kind, ObjectKind::PersistentVolumeClaim, "the claim first");
    let n = a.popups().describe().unwrap().targets.len();
    assert!(n >= 2, "PVC, PV (and VolumeAttachments)");
    // Tab: the next object of the row, read anew
    let fx = key(&mut a, KeyCode::Tab);
    let [Effect::Describe(second)] = &fx[..] else { panic!("{fx:?}") };
    assert_eq!(second.kind, ObjectKind::PersistentVolume);
    a.update(Msg::Described(DescribeMsg { target: first.clone(), result: Ok(json!({"kind": "x"})) }));
    assert!(a.popups().describe().unwrap().object.is_none(), "a late answer for the PVC is not shown as the PV");
    a.update(Msg::Described(DescribeMsg { target: second.clone(), result: Err("forbidden: get PV x: no".into()) }));
    assert!(screen(&a, 80, 24).contains("cannot read: forbidden: get PV x: no"));
    // Ctrl-C closes too
    a.update(Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)));
    assert!(!a.is_open(crate::ui::popups::Kind::Describe) && !a.quit);
}

#[test]
fn long_yaml_scrolls_and_says_what_is_below() {
    let mut a = incidents_app(false);
    a.focus = Pane::Pods;
    a.update(Msg::Resize(80, 24));
    let fx = key(&mut a, KeyCode::Char('y'));
    let [Effect::Describe(t)] = &fx[..] else { panic!() };
    let mut v = pod_json("p");
    v["metadata"]["labels"] = json!((0..40).map(|i| (format!("l{i}"), json!("v"))).collect::<serde_json::Map<_, _>>());
    a.update(Msg::Described(DescribeMsg { target: t.clone(), result: Ok(v) }));
    assert!(screen(&a, 80, 24).contains("more below"));
    key(&mut a, KeyCode::Char('G'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("above") && !s.contains("more below"), "{s}");
}
