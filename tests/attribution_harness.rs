//! Attribution on the harness's storage network, live (`src/attribution.rs` in unstick-core):
//! every node's Ceph clients come from a storage address that is not its InternalIP
//! (`tests/harness/live.sh`), tied by worker-1/2's Node annotation (`common::live::config` sets it
//! as `diagnose.node_address_annotation`) or, on worker-3, by its ceph-csi node plugin pod whose
//! podIP it is (a holder pod). Incident 002 on worker-3 (kubelet stopped, its watcher stays), then
//! a watcher from worker-1 or worker-2 whose kubelet is stopped too, and one from the host's
//! bridge address, which no proof ties to anybody. dead-node-watcher names each lost node with the
//! proof; the fencing step's safety rules (`remedy::action::safety::approve`, on a live re-read)
//! accept the tied watchers with the proof in their warnings and refuse the unattributed one until
//! its address is typed; the console's playbook fences worker-3's watcher and journals its bootID.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use unstick_core::attribution::{AddressBook, Attribution, Proof};
use unstick_core::diagnose::{Finding, PatternId};
use unstick_core::remedy::action::WriteAction;
use unstick_core::remedy::action::precheck::read_live;
use unstick_core::remedy::action::safety::{Overrides, SafetyError, approve};
use unstick_core::remedy::action::scope::scope_for;
use unstick_core::remedy::journal;

mod common;

use common::console::snapshot;
use common::live::{STORAGE_ANNOTATION, config, incident_on, on, open_playbook, run_playbook, s, wait_finding};
use common::remedy::Reseed;

/// A `holder.py` (a real librbd watcher) started by this test; killed by its pid when dropped.
struct Holder {
    child: Child,
    addr: String,
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Opens `image` with `holder.py` in the network namespace `netns` (the host's when `None`);
/// `ip` is the address it connects from. Waits (30 s) for its `.addr` file.
fn holder(h: &common::Harness, dir: &Path, name: &str, netns: Option<&str>, ip: &str, image: &str) -> Holder {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harness/holder.py");
    let pidfile = dir.join(format!("{name}.pid"));
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, "/usr/bin/python3"]);
            c
        }
        None => Command::new("/usr/bin/python3"),
    };
    cmd.args([script, "replicapool", image, "--pidfile", pidfile.to_str().unwrap(), "--ip", ip])
        .args(["--conf", h.ceph_conf.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = cmd.spawn().expect("start holder.py");
    let addr_file: PathBuf = dir.join(format!("{name}.addr"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut held = Holder { child, addr: String::new() };
    while held.addr.is_empty() {
        assert!(Instant::now() < deadline, "{name}: holder.py did not open {image} in 30 s");
        assert!(held.child.try_wait().unwrap().is_none(), "{name}: holder.py exited");
        std::thread::sleep(Duration::from_millis(200));
        held.addr = std::fs::read_to_string(&addr_file).unwrap_or_default().trim().to_string();
    }
    held
}

/// `(storage address, tie)` a live node's agent uses (`run/agent-NODE.storage`).
fn storage_of(h: &common::Harness, node: &str) -> (String, String) {
    let text = std::fs::read_to_string(h.state_dir.join("run").join(format!("agent-{node}.storage"))).unwrap();
    let mut w = text.split_whitespace().map(str::to_string);
    (w.next().unwrap(), w.next().unwrap())
}

fn evidence(f: &Finding) -> String {
    f.evidence.iter().map(|e| e.text.as_str()).collect::<Vec<_>>().join("\n")
}

fn dead_on(f: &Finding, pv: &str, node: &str) -> bool {
    on(f, PatternId::DeadNodeWatcher, pv) && f.node.as_deref() == Some(node)
}

/// The fencing step's safety rules for `blocklist add addr` on a live re-read, with the address
/// book of a live snapshot under the live tests' config.
async fn fence_check(
    h: &common::Harness,
    book: &AddressBook,
    addr: &str,
    typed: Option<&str>,
) -> Result<Vec<String>, SafetyError> {
    let action = WriteAction::BlocklistAdd { addr: addr.to_string() };
    let live = read_live(&h.reader().await, &scope_for(&action)).await.expect("live re-read");
    let ov = Overrides {
        unattributed: typed.map(str::to_string),
        address_book: std::sync::Arc::new(book.clone()),
        ..Overrides::default()
    };
    approve(&action, &live, &ov).map(|a| a.warnings().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn live_storage_address_and_holder_pod_watchers_are_tied_and_nobodys_is_refused() {
    let h = common::harness();
    let _reseed = Reseed;
    let t0 = Instant::now();
    let (live, _) = incident_on(&h, "002", "worker-3");
    let (pv, image) = (s(&live, "pv"), s(&live, "image"));
    assert_eq!(s(&live, "old_node"), "worker-3");
    let (pod_ip, tie) = storage_of(&h, "worker-3");
    assert_eq!((s(&live, "old_node_storage_ip"), tie.as_str()), (pod_ip.as_str(), "client-pod"));
    assert_ne!(pod_ip, s(&live, "old_node_ip"), "the storage address is not the InternalIP");
    let cfg = config();

    // 1. worker-3's watcher (its plugin pod's IP): dead-node-watcher names the node and the proof
    let f3 = wait_finding(&h, &cfg, 90, |f| dead_on(f, pv, "worker-3")).await;
    eprintln!("attribution: worker-3's finding {:?} after the incident began", t0.elapsed());
    let e3 = evidence(&f3);
    eprintln!("worker-3:\n{e3}");
    assert!(
        e3.contains(&format!("{pod_ip}:0/")) && e3.contains("node worker-3 by pod live-csi/csi-rbdplugin-"),
        "{e3}"
    );
    // the fencing step's safety rules accept it and say by which proof
    let snap = snapshot(&h).await;
    let book = AddressBook::build(&snap, &cfg.diagnose);
    let w3 = snap.ceph.images.values().flat_map(|f| f.watchers.value.iter().flatten()).map(|w| w.address.clone());
    let w3 = w3.into_iter().find(|a| a.starts_with(&format!("{pod_ip}:0/"))).expect("worker-3's watcher");
    assert!(
        matches!(book.attribute(&w3, &[]), Some(Attribution::Tied(t)) if t.node == "worker-3" && matches!(&t.proof, Proof::ClientPod { pod } if pod.starts_with("live-csi/csi-rbdplugin-")))
    );
    let warn = fence_check(&h, &book, &w3, None).await.expect("worker-3's watcher may be fenced");
    assert!(warn.iter().any(|w| w.starts_with(&format!("{pod_ip} is node worker-3's by pod live-csi/"))), "{warn:?}");
    // the console's playbook fences it and journals worker-3's bootID with the fence
    let jdir = tempfile::tempdir().unwrap();
    let (mut d, a) = open_playbook(&h, jdir.path(), &cfg, |f| dead_on(f, pv, "worker-3")).await;
    assert!(a.iter().any(|a| a.contains(&format!("blocklist add {w3}"))), "{a:?}");
    let j = run_playbook(&mut d, "attribution dead-node-watcher").await;
    let rep = journal::read(&j).unwrap();
    let steps = rep.steps();
    let fence = steps.iter().find(|st| matches!(st.intent.action, WriteAction::BlocklistAdd { .. })).unwrap();
    assert!(fence.intent.boot_ids.contains_key("worker-3"), "{:?}", fence.intent.boot_ids);

    // 2. a watcher from another node's storage address (its annotation) whose kubelet stops, and
    // one from the host's bridge address, which nothing ties
    let other = ["worker-1", "worker-2"].into_iter().find(|n| *n != s(&live, "new_node")).unwrap();
    let (other_ip, tie) = storage_of(&h, other);
    assert_eq!(tie, "annotation");
    let dir = tempfile::tempdir().unwrap();
    let po = std::env::var("UNSTICK_HARNESS_PORT_OFFSET").unwrap_or_else(|_| "0".into());
    let from_other = holder(&h, dir.path(), "other", Some(&format!("ush{po}-{other}")), &other_ip, image);
    let nobodys = holder(&h, dir.path(), "nobody", None, &common::host_ip(), image);
    assert!(from_other.addr.starts_with(&format!("{other_ip}:0/")), "{}", from_other.addr);
    common::cluster(&["node", other, "stop"]);
    let fo = wait_finding(&h, &cfg, 90, |f| dead_on(f, pv, other)).await;
    let eo = evidence(&fo);
    eprintln!("attribution: {other}'s finding {:?} after the incident began\n{eo}", t0.elapsed());
    assert!(eo.contains(&format!("node {other} by annotation {STORAGE_ANNOTATION}")), "{eo}");
    let snap = snapshot(&h).await;
    let book = AddressBook::build(&snap, &cfg.diagnose);
    let warn = fence_check(&h, &book, &from_other.addr, None).await.expect("the other node's watcher may be fenced");
    let by = format!("{other_ip} is node {other}'s by annotation {STORAGE_ANNOTATION}");
    assert!(warn.contains(&by), "{warn:?}");
    assert!(matches!(book.attribute(&nobodys.addr, &[]), Some(Attribution::Unattributed { .. })));
    match fence_check(&h, &book, &nobodys.addr, None).await {
        Err(SafetyError::Unattributed { addr, attribution }) => {
            assert_eq!(addr, nobodys.addr);
            eprintln!("attribution: {addr} refused: {attribution}");
            assert!(attribution.starts_with("unattributed"), "{attribution}");
        }
        other => panic!("the host's watcher must be refused as unattributed: {other:?}"),
    }
    let warn = fence_check(&h, &book, &nobodys.addr, Some(&nobodys.addr)).await.expect("typed override");
    assert!(warn.iter().any(|w| w.starts_with(&format!("OVERRIDE: no proof ties {}", nobodys.addr))), "{warn:?}");
    // without the annotation key configured, the other node's storage address is nobody's
    let bare = AddressBook::build(&snap, &unstick_core::config::Config::defaults().diagnose);
    assert!(matches!(bare.attribute(&from_other.addr, &[]), Some(Attribution::Unattributed { .. })));
    let cli = common::console::ceph(&h);
    let bl = cli.run(unstick_core::sources::ceph::cli::Tool::Ceph, &["osd", "blocklist", "ls"]).await.unwrap();
    assert!(bl.stdout.contains(&w3) && !bl.stdout.contains(&nobodys.addr), "{}", bl.stdout);
    eprintln!("attribution: total {:?}", t0.elapsed());
}
