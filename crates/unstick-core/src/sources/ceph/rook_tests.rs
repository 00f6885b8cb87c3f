use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodStatus};
use kube::api::ObjectMeta;

use super::*;

fn pod(name: &str, phase: &str, containers: &[&str]) -> Pod {
    Pod {
        metadata: ObjectMeta { name: Some(name.into()), namespace: Some("rook-ceph".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: containers.iter().map(|c| Container { name: (*c).into(), ..Default::default() }).collect(),
            ..Default::default()
        }),
        status: Some(PodStatus { phase: Some(phase.into()), ..Default::default() }),
    }
}

const SEL: &str = "app=rook-ceph-tools";

#[test]
fn a_running_toolbox_wins() {
    let toolbox = [
        pod("rook-ceph-tools-1", "Pending", &["rook-ceph-tools"]),
        pod("rook-ceph-tools-2", "Running", &["rook-ceph-tools"]),
    ];
    let operator = [pod("rook-ceph-operator-1", "Running", &["rook-ceph-operator"])];
    let t = choose("rook-ceph", SEL, &toolbox, Some(&operator)).unwrap();
    assert_eq!(t.role, RookRole::Toolbox);
    assert_eq!(t.pod, "rook-ceph-tools-2");
    assert_eq!(t.container, "rook-ceph-tools");
    assert_eq!(t.describe(), "rook toolbox rook-ceph/rook-ceph-tools-2");
    let argv: Vec<String> = ["rbd", "status", "p/i"].map(String::from).into();
    assert_eq!(t.argv(&argv), argv);
}

#[test]
fn without_a_running_toolbox_the_operator_runs_with_the_clusters_files() {
    let mut deleting = pod("rook-ceph-tools-1", "Running", &["rook-ceph-tools"]);
    deleting.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH));
    let operator = [pod("rook-ceph-operator-7c9", "Running", &["rook-ceph-operator"])];
    let t = choose("storage", SEL, &[deleting], Some(&operator)).unwrap();
    assert_eq!(t.role, RookRole::Operator);
    assert_eq!(t.describe(), "rook operator storage/rook-ceph-operator-7c9");
    let argv: Vec<String> = ["ceph", "--rados_mon_op_timeout", "10", "osd", "blocklist", "ls"].map(String::from).into();
    assert_eq!(
        t.argv(&argv),
        [
            "ceph",
            "--conf=/var/lib/rook/storage/storage.config",
            "--keyring=/var/lib/rook/storage/client.admin.keyring",
            "--rados_mon_op_timeout",
            "10",
            "osd",
            "blocklist",
            "ls"
        ]
    );
}

#[test]
fn the_roles_container_is_used_when_the_pod_has_it_else_the_first() {
    let operator = [pod("op", "Running", &["sidecar", "rook-ceph-operator"])];
    assert_eq!(choose("rook-ceph", SEL, &[], Some(&operator)).unwrap().container, "rook-ceph-operator");
    let odd = [pod("tools", "Running", &["toolbox"])];
    assert_eq!(choose("rook-ceph", SEL, &odd, None).unwrap().container, "toolbox");
}

#[test]
fn neither_pod_is_a_typed_one_line_error() {
    let operator = [pod("rook-ceph-operator-1", "Failed", &["rook-ceph-operator"])];
    let e = choose("rook-ceph", SEL, &[], Some(&operator)).unwrap_err();
    assert_eq!(
        e,
        RookError::NoPod { namespace: "rook-ceph".into(), toolbox: SEL.into(), operator: OPERATOR_SELECTOR.into() }
    );
    assert_eq!(
        e.to_string(),
        "no running Rook toolbox (app=rook-ceph-tools) or operator (app=rook-ceph-operator) pod in namespace rook-ceph"
    );
    assert!(!e.to_string().contains('\n'));
}

#[tokio::test]
async fn rook_without_a_client_fails_typed_before_running() {
    let c = super::super::cli::CephCli::new(
        super::super::cli::Access::Rook { namespace: "rook-ceph".into(), selector: SEL.into() },
        crate::config::Config::defaults().ceph,
        None,
    );
    let e = c.run(Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap_err();
    assert!(
        matches!(&e, crate::model::ceph_error::CephError::Rook { error, .. } if **error == RookError::NoClient),
        "{e}"
    );
    assert!(e.is_unanswered());
}

#[test]
fn the_operators_identity_follows_the_bulk_readers_script() {
    let operator = [pod("rook-ceph-operator-7c9", "Running", &["rook-ceph-operator"])];
    let t = choose("storage", SEL, &[], Some(&operator)).unwrap();
    let argv: Vec<String> =
        ["python3", "-c", "import sys\nprint(1)\n", "--threads", "16", "replicapool"].map(String::from).into();
    assert_eq!(
        t.argv(&argv),
        [
            "python3",
            "-c",
            "import sys\nprint(1)\n",
            "--conf=/var/lib/rook/storage/storage.config",
            "--keyring=/var/lib/rook/storage/client.admin.keyring",
            "--threads",
            "16",
            "replicapool"
        ]
    );
}
