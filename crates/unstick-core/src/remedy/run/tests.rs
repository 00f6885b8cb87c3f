//! Runner rules that need no cluster: backup first, read-only, interrupted steps, skipping.
//! (End-to-end runs are in tests/remedy_harness.rs against the real harness.)

use super::*;
use crate::config::Config;
use crate::lineage::Lineage;
use crate::remedy::journal::Author;
use crate::remedy::playbook::{Target, build};
use crate::sources::ceph::cli::{Access, CephCli};

fn parts(dir: &std::path::Path, executor: bool) -> RunnerParts {
    let snap = crate::fixtures::incidents();
    let lin = Lineage::build(&snap);
    let cfg = Config::defaults();
    let t = Target::for_volume(&snap, &lin, "index-api-pv").unwrap();
    let playbook = build("stale-lock", &t, &cfg.remedy).unwrap();
    let baseline = LiveState::from_snapshot(&snap, &playbook.scope, crate::fixtures::now());
    // an API server and a Ceph that do not exist: nothing may be sent in these tests
    let client = kube::Client::try_from(kube::Config::new("https://127.0.0.1:1".parse().unwrap())).unwrap();
    let ceph = CephCli::new(
        Access::Local { conf: Some("/nonexistent/ceph.conf".into()), id: None, keyring: None },
        cfg.ceph.clone(),
        None,
    );
    let reader = Reader {
        kube: client.clone(),
        ceph: ceph.clone(),
        api_timeout: Duration::from_secs(2),
        clock: crate::clock::wall(),
    };
    let executor = executor.then(|| Executor::new(false, client, ceph, Duration::from_secs(2)).unwrap());
    let journal = Journal::open(dir, "t-1", Author { operator: "a@b".into(), context: "kh".into() }).unwrap();
    RunnerParts { playbook, journal, reader, executor, baseline, cfg: cfg.remedy }
}

#[tokio::test]
async fn act_is_unreachable_before_the_backup() {
    let d = tempfile::tempdir().unwrap();
    let mut r = Runner::new(parts(d.path(), true)).unwrap();
    assert!(matches!(r.current().unwrap().kind, StepKind::Backup(_)));
    // every other kind of call is refused at the Backup step
    assert!(matches!(r.prepare(&Overrides::default()).await, Err(RunError::WrongStep { .. })));
    assert!(matches!(r.check().await, Err(RunError::WrongStep { .. })));
    assert!(matches!(r.skip("no"), Err(RunError::NotOptional(_))));
    assert!(r.manual_done().is_err());
    // even with the cursor forced past Backup and Check, Act needs the verified backup
    r.cursor = r.playbook().steps.iter().position(|s| matches!(s.kind, StepKind::Act(_))).unwrap();
    assert!(matches!(r.prepare(&Overrides::default()).await, Err(RunError::BackupFirst)));
    assert!(!r.journal().path().exists(), "nothing journaled, nothing sent: no journal file either");
}

#[tokio::test]
async fn backup_failure_keeps_the_cursor() {
    let d = tempfile::tempdir().unwrap();
    let mut r = Runner::new(parts(d.path(), true)).unwrap();
    // no Lease held: refused before anything is read or written
    assert!(matches!(r.run_backup(None, |_| {}).await, Err(RunError::Lease(_))));
    assert_eq!(r.cursor(), 0);
    assert!(r.backup().is_none());
}

#[tokio::test]
async fn read_only_runner_sends_nothing() {
    let d = tempfile::tempdir().unwrap();
    let mut r = Runner::new(parts(d.path(), false)).unwrap();
    assert!(matches!(r.run_backup(None, |_| {}).await, Err(RunError::NoWrites(_))));
    assert_eq!(r.cursor(), 0);
}

#[tokio::test]
async fn interrupted_steps_block_until_acknowledged() {
    let d = tempfile::tempdir().unwrap();
    {
        let mut j = Journal::open(d.path(), "t-1", Author { operator: "a@b".into(), context: "kh".into() }).unwrap();
        j.intent("stale-lock/3", &WriteAction::BlocklistAdd { addr: "127.0.0.1:0/1".into() }, None, vec![]).unwrap();
    }
    let mut r = Runner::new(parts(d.path(), true)).unwrap();
    assert_eq!(r.interrupted().len(), 1);
    assert!(matches!(r.run_backup(None, |_| {}).await, Err(RunError::Interrupted(1))));
    r.acknowledge_interrupted("blocklist checked by hand").unwrap();
    assert!(r.interrupted().is_empty());
    let rep = crate::remedy::journal::read(r.journal().path()).unwrap();
    assert_eq!(rep.interrupted().len(), 1, "the record itself stays as it was");
    assert!(rep.records.iter().any(
        |(_, rec)| matches!(&rec.body, crate::remedy::journal::Body::Note { text, .. } if text.contains("acknowledged"))
    ));
}

#[test]
fn scopes_for_undo() {
    let s = scope_for(&WriteAction::UntaintOutOfService { node: "n".into() });
    assert_eq!(s.nodes, vec!["n".to_string()]);
    assert!(scope_for(&WriteAction::BlocklistRm { addr: "a".into() }).blocklist);
}
