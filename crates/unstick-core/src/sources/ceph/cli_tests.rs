use super::*;
use crate::config::Config;

fn cli(access: Access) -> CephCli {
    CephCli::new(access, Config::defaults().ceph, None)
}

#[test]
fn local_argv_has_identity_timeouts_and_json() {
    let c = cli(Access::Local {
        conf: Some("/etc/ceph/x.conf".into()),
        id: Some("csi".into()),
        keyring: Some("/k".into()),
    });
    assert_eq!(
        c.argv(Tool::Rbd, &["status", "replicapool/img"]),
        [
            "rbd",
            "--conf",
            "/etc/ceph/x.conf",
            "--id",
            "csi",
            "--keyring",
            "/k",
            "--client_mount_timeout",
            "5",
            "--rados_mon_op_timeout",
            "10",
            "--rados_osd_op_timeout",
            "10",
            "status",
            "replicapool/img",
            "--format",
            "json"
        ]
    );
}

#[test]
fn rook_argv_runs_plain_binaries_in_the_toolbox() {
    // The pod's identity options are added once the pod is chosen (`rook_tests.rs`).
    let c = cli(Access::Rook { namespace: "rook-ceph".into(), selector: "app=rook-ceph-tools".into() });
    let argv = c.argv(Tool::Ceph, &["osd", "blocklist", "ls"]);
    assert_eq!(
        argv,
        [
            "ceph",
            "--client_mount_timeout",
            "5",
            "--rados_mon_op_timeout",
            "10",
            "--rados_osd_op_timeout",
            "10",
            "osd",
            "blocklist",
            "ls",
            "--format",
            "json"
        ]
    );
    assert!(!argv.iter().any(|a| a == "--conf" || a == "--keyring"));
}

#[test]
fn rook_mode_comes_from_config() {
    let mut cfg = Config::defaults().ceph;
    cfg.mode = crate::config::CephMode::Rook;
    cfg.rook_namespace = "storage".into();
    assert_eq!(
        cfg.access(Some("/ignored".into()), None, None),
        Access::Rook { namespace: "storage".into(), selector: "app=rook-ceph-tools".into() }
    );
}

#[test]
fn exec_status_exit_codes() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};
    assert_eq!(exit_code_of(None), -1);
    let ok = Status { status: Some("Success".into()), ..Default::default() };
    assert_eq!(exit_code_of(Some(&ok)), 0);
    let failed = Status {
        status: Some("Failure".into()),
        reason: Some("NonZeroExitCode".into()),
        details: Some(StatusDetails {
            causes: Some(vec![StatusCause {
                reason: Some("ExitCode".into()),
                message: Some("16".into()),
                field: None,
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(exit_code_of(Some(&failed)), 16);
}

#[test]
fn display_quotes_only_when_needed() {
    let argv: Vec<String> = ["rbd", "lock", "rm", "p/i", "auto 1406", "it's"].map(String::from).into();
    assert_eq!(display_argv(&argv), r#"rbd lock rm p/i 'auto 1406' "it's""#);
    // what is shown reads back as the argv that runs
    assert_eq!(shlex::split(&display_argv(&argv)), Some(argv));
    let odd: Vec<String> =
        ["ceph", "osd", "blocklist", "add", "198.18.0.12:0/3344", "$(x)`y`", "a\nb", ""].map(String::from).into();
    assert_eq!(shlex::split(&display_argv(&odd)), Some(odd));
}

#[tokio::test]
async fn timeout_kills_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::defaults().ceph;
    cfg.rbd = script(dir.path(), "rbd", "exec sleep 30"); // a dead monitor
    cfg.timeout_seconds = 1;
    let c = CephCli::new(Access::Local { conf: None, id: None, keyring: None }, cfg, None);
    let started = Instant::now();
    let e = c.run(Tool::Rbd, &["status", "p/i"]).await.unwrap_err();
    assert!(matches!(e, CephError::Timeout { secs: 1, .. }), "{e}");
    assert!(started.elapsed() < Duration::from_secs(20), "the call was not bounded");
}

#[tokio::test]
async fn missing_binary_is_a_spawn_error() {
    let mut cfg = Config::defaults().ceph;
    cfg.rbd = "/nonexistent/rbd".into();
    let c = CephCli::new(Access::Local { conf: None, id: None, keyring: None }, cfg, None);
    let e = c.run(Tool::Rbd, &["status", "p/i"]).await.unwrap_err();
    assert!(matches!(e, CephError::Spawn { .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/rbd"));
}

/// A fake binary running `body` under /bin/sh.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

fn local_with_rbd(rbd: String) -> CephCli {
    let mut cfg = Config::defaults().ceph;
    cfg.rbd = rbd;
    CephCli::new(Access::Local { conf: None, id: None, keyring: None }, cfg, None)
}

#[tokio::test]
async fn stream_hands_every_byte_to_the_sink_and_reports_failures_typed() {
    let dir = tempfile::tempdir().unwrap();
    let mut got = Vec::new();
    let mut sink = |b: &[u8]| -> std::io::Result<()> {
        got.extend_from_slice(b);
        Ok(())
    };
    let ok = local_with_rbd(script(dir.path(), "ok", "head -c 3000000 /dev/zero; printf end"));
    let n = ok.stream(Tool::Rbd, &["export", "p/i@s", "-"], Duration::from_secs(10), &mut sink).await.unwrap();
    assert_eq!(n, 3_000_003);
    assert_eq!(got.len(), 3_000_003);
    assert!(got.ends_with(b"end"));

    let failing =
        local_with_rbd(script(dir.path(), "fail", "printf 'rbd: error opening image i: (2) No such file' >&2; exit 2"));
    let e = failing.stream(Tool::Rbd, &["export"], Duration::from_secs(10), &mut |_| Ok(())).await.unwrap_err();
    assert_eq!(e, StreamError::Exit { code: 2, stderr: "rbd: error opening image i: (2) No such file".into() });

    let stalled = local_with_rbd(script(dir.path(), "stall", "printf abc; exec sleep 30"));
    let t0 = Instant::now();
    let e = stalled.stream(Tool::Rbd, &["export"], Duration::from_millis(300), &mut |_| Ok(())).await.unwrap_err();
    assert_eq!(e, StreamError::Stalled { secs: 0, bytes: 3 });
    assert!(t0.elapsed() < Duration::from_secs(20), "the stall was not bounded");

    let refused = local_with_rbd(script(dir.path(), "ok2", "printf abc"));
    let e = refused
        .stream(Tool::Rbd, &["export"], Duration::from_secs(10), &mut |_| Err(std::io::Error::other("disk full")))
        .await
        .unwrap_err();
    assert_eq!(e, StreamError::Io("disk full".into()));
}

#[tokio::test]
async fn only_local_access_streams() {
    let c = cli(Access::Rook { namespace: "rook-ceph".into(), selector: "app=rook-ceph-tools".into() });
    let e = c.stream(Tool::Rbd, &["export"], Duration::from_secs(1), &mut |_| Ok(())).await.unwrap_err();
    let rook = "Rook (exec into the toolbox or operator pod)";
    assert_eq!(e, StreamError::Unsupported(rook));
    assert_eq!(c.transport_name(), rook);
    // nothing chosen before the first call
    assert_eq!(c.via(), None);
}

#[test]
fn the_bulk_reader_runs_the_configured_python_with_the_identity_after_its_script() {
    let c = cli(Access::Local { conf: Some("/etc/ceph/x.conf".into()), id: None, keyring: None });
    let argv = c.argv_plain(Tool::Python, &["--threads", "16", "replicapool"]);
    assert_eq!(argv[..3], ["/usr/bin/python3", "-c", super::super::transport::BULK_SCRIPT]);
    assert_eq!(argv[3..5], ["--conf", "/etc/ceph/x.conf"]);
    assert_eq!(argv.last().map(String::as_str), Some("replicapool"));
    // messages name the script by its size, not its text
    let shown = display_argv(&argv);
    assert!(shown.starts_with("/usr/bin/python3 -c '<script of "), "{shown}");
    assert!(!shown.contains("import"), "{shown}");
}
