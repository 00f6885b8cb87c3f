//! Bundles as people assemble them: the plain-text forms, files that are not regular files, a
//! directory that is no bundle, unreadable image directories, optional files that do not parse.

use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::config::Config;
use crate::diagnose;
use crate::fixtures;
use crate::lineage::Lineage;
use crate::model::ImageRef;

fn ids(b: &Bundle) -> Vec<String> {
    let f = diagnose::run(&b.snapshot, &Lineage::build(&b.snapshot), &Config::defaults().diagnose, fixtures::now());
    f.into_iter().map(|f| f.id).collect()
}

fn public(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/public").join(name))
        .unwrap()
}

/// Seed 000 with the Ceph outputs pasted as text: `status.txt`, `locks.txt`, `blocklist.txt`, and
/// `rbd showmapped` of a node.
fn text_bundle(dir: &Path) -> Writer {
    let w = Writer::create(dir).unwrap();
    w.put(KUBE, &serde_json::to_string(&kube_list(&fixtures::incidents())).unwrap()).unwrap();
    let img = "ceph/images/replicapool/index-api-image";
    w.put(&format!("{img}/status.txt"), &public("rbd-status-none.txt")).unwrap();
    w.put(
        &format!("{img}/locks.txt"),
        "There is 1 exclusive lock on this image.\nLocker       ID                       Address\nclient.24128 kubelet_lock_magic_node1 127.0.0.1:0/1864102866\n",
    )
    .unwrap();
    w.put(BLOCKLIST_TEXT, &public("blocklist-ls-pacific.txt")).unwrap();
    w.put("showmapped/node133.txt", &public("showmapped-nautilus.txt")).unwrap();
    w
}

#[test]
fn text_forms_are_read_and_diagnosed() {
    let d = tempfile::tempdir().unwrap();
    text_bundle(d.path());
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    let facts = &b.snapshot.ceph.images[&ImageRef::new("replicapool", "index-api-image")];
    assert_eq!(facts.watchers.value.as_ref().unwrap().len(), 0);
    assert_eq!(facts.locks.value.as_ref().unwrap()[0].id, "kubelet_lock_magic_node1");
    assert_eq!(b.snapshot.ceph.blocklist.as_ref().unwrap().value.as_ref().unwrap().len(), 3);
    assert_eq!(b.snapshot.ceph.mapped["node133"].len(), 2);
    assert!(!b.missing.iter().any(|m| m.contains("index-api-image") || m.contains("blocklist")), "{:?}", b.missing);
    assert!(ids(&b).iter().any(|i| i.starts_with("stale-lock:")), "{:?}", ids(&b));
    // JSON beside text: the JSON one is read.
    let w = Writer::create(d.path()).unwrap();
    w.put("ceph/images/replicapool/index-api-image/locks.json", "[]").unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert!(
        b.snapshot.ceph.images[&ImageRef::new("replicapool", "index-api-image")]
            .locks
            .value
            .as_ref()
            .unwrap()
            .is_empty()
    );
    // A text file that does not parse is as fatal as a JSON one: it is a required file.
    w.put(BLOCKLIST_TEXT, "Error EACCES: access denied\n").unwrap();
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("ceph/blocklist.txt") && e.contains("line 1"), "{e}");
}

/// Issue 10: a FIFO blocked forever, a link to /dev/zero read until memory ran out.
#[test]
fn only_regular_files_are_read() {
    let d = tempfile::tempdir().unwrap();
    let w = text_bundle(d.path());
    let status = d.path().join("ceph/images/replicapool/index-api-image/status.txt");
    std::fs::remove_file(&status).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&status).status().unwrap();
    assert!(made.success());
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("status.txt") && e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&status).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &status).unwrap();
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("status.txt") && e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&status).unwrap();
    // Over the cap: a sparse file, so the test writes nothing.
    let f = std::fs::File::create(&status).unwrap();
    f.set_len(FILE_MAX_BYTES + 1).unwrap();
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("status.txt") && e.contains("64 MiB"), "{e}");
    std::fs::remove_file(&status).unwrap();
    // A FIFO among the optional files is reported too, never waited on.
    w.put("ceph/images/replicapool/index-api-image/status.json", "{\"watchers\":[]}").unwrap();
    let probe = d.path().join("probe/node1.json");
    std::fs::create_dir_all(probe.parent().unwrap()).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&probe).status().unwrap().success());
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("probe/node1.json") && e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&probe).unwrap();
    // kube.json, of any size (issue 29), is still only read from a regular file.
    let kube = d.path().join(KUBE);
    std::fs::remove_file(&kube).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&kube).status().unwrap().success());
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("kube.json") && e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&kube).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &kube).unwrap();
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("kube.json") && e.contains("not a regular file"), "{e}");
}

/// Issue 10: `diagnose --bundle /` said "No findings".
#[test]
fn a_directory_without_kube_or_manifest_is_not_a_bundle() {
    for dir in [Path::new("/"), tempfile::tempdir().unwrap().path()] {
        let e = read(dir, &crate::clock::WallClock);
        assert!(matches!(e, Err(BundleError::NotABundle { .. }) | Err(BundleError::Io { .. })), "{e:?}");
    }
    let e = tempfile::tempdir().unwrap();
    assert!(matches!(read(e.path(), &crate::clock::WallClock), Err(BundleError::NotABundle { .. })));
    Writer::create(e.path()).unwrap().put(MANIFEST, "{}").unwrap();
    assert_eq!(read(e.path(), &crate::clock::WallClock).unwrap().missing, [KUBE, BLOCKLIST]);
}

/// Issue 10: an unreadable image directory was counted as missing and its finding disappeared.
#[test]
fn an_unreadable_image_directory_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    text_bundle(d.path());
    let img = d.path().join("ceph/images/replicapool/index-api-image");
    // A symlink loop cannot be looked at, even by root.
    std::os::unix::fs::symlink("status.json", img.join("status.json")).unwrap();
    let e = read(d.path(), &crate::clock::WallClock).unwrap_err().to_string();
    assert!(e.contains("index-api-image/status.json"), "{e}");
    std::fs::remove_file(img.join("status.json")).unwrap();
    assert!(read(d.path(), &crate::clock::WallClock).is_ok());
    // Without search permission (only effective when not running as root).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&img, std::fs::Permissions::from_mode(0o600)).unwrap();
    let root = std::fs::metadata(img.join("status.txt")).is_ok();
    let r = read(d.path(), &crate::clock::WallClock);
    std::fs::set_permissions(&img, std::fs::Permissions::from_mode(0o755)).unwrap();
    if !root {
        let e = r.unwrap_err().to_string();
        assert!(e.contains("index-api-image"), "{e}");
    }
}

/// Issue 14: an optional file that does not parse is listed with file, line and column; the
/// diagnosis goes on.
#[test]
fn optional_files_that_do_not_parse_are_listed_not_fatal() {
    let d = tempfile::tempdir().unwrap();
    let w = text_bundle(d.path());
    w.put("ceph/images/replicapool/index-api-image/info.json", "{\"name\": \"index-api-image\",\n \"size\": }")
        .unwrap();
    w.put("probe/node1.json", "{\"node\": 5}").unwrap();
    w.put("showmapped/node2.txt", "rbd: failed to load rbd kernel module (127)\n").unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    let info = b.missing.iter().find(|m| m.contains("info.json")).expect("info.json listed");
    assert!(info.contains("line 2, column") && info.contains("ignored"), "{info}");
    let probe = b.missing.iter().find(|m| m.contains("probe/node1.json")).expect("probe listed");
    assert!(probe.contains("line 1 column"), "{probe}");
    assert!(b.missing.iter().any(|m| m.contains("showmapped/node2.txt")), "{:?}", b.missing);
    assert!(b.info.is_empty() && b.probes.is_empty());
    assert!(ids(&b).iter().any(|i| i.starts_with("stale-lock:")));
}

proptest! {
    // Cases: proptest's default (256), or PROPTEST_CASES for a long local run.
    /// Garbage in any text file of a bundle: an error naming a file, or a bundle; never a panic
    /// or a hang.
    #[test]
    fn text_files_garbage_never_panics(which in 0usize..7, garbage in "(\\PC|\n|\t){0,300}") {
        let d = tempfile::tempdir().unwrap();
        let w = text_bundle(d.path());
        let files = [
            "ceph/images/replicapool/index-api-image/status.txt",
            "ceph/images/replicapool/index-api-image/locks.txt",
            BLOCKLIST_TEXT,
            "showmapped/node133.txt",
            "showmapped/node134.json",
            "probe/node1.json",
            "ceph/images/replicapool/index-api-image/info.json",
        ];
        w.put(files[which], &garbage).unwrap();
        match read(d.path(), &crate::clock::WallClock) {
            Ok(b) => { let _ = ids(&b); }
            Err(e) => prop_assert!(e.to_string().contains(files[which]), "{e}"),
        }
    }
}

/// What attribution reads from a bundle: an image's `meta.json` (ceph-csi's client address) and
/// the addresses a node's probe report lists.
#[test]
fn image_metadata_and_probe_addresses_come_back() {
    let d = tempfile::tempdir().unwrap();
    let w = text_bundle(d.path());
    let img = ImageRef::new("replicapool", "index-api-image");
    let key = ".rbd.csi.ceph.com/clientaddress/0001-0009-rook-ceph-0000000000000002-7e184c3c-6cff-48e8-a51f-058cf8540fd9/node133";
    let meta = crate::model::Observed {
        value: Ok([(key.to_string(), "100.64.0.5".to_string())].into_iter().collect()),
        at: fixtures::now(),
    };
    let mut errors = Default::default();
    w.put_image_meta(&img, &meta, &mut errors).unwrap();
    assert!(errors.is_empty());
    let probe = serde_json::json!({"node": "node133", "scanned_at": "2026-01-01T00:00:00Z", "device": null,
        "major_minor": null, "holders": [], "processes": 1, "namespaces": 1, "unreadable": 0,
        "addresses": ["192.168.50.33", "fd00::33"]});
    w.put("probe/node133.json", &probe.to_string()).unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    let m = b.snapshot.ceph.image_meta.get(&img).and_then(|m| m.value.as_ref().ok()).unwrap();
    assert_eq!(m.get(key).map(String::as_str), Some("100.64.0.5"));
    let addrs: Vec<String> = b.snapshot.probe_addresses["node133"].iter().map(|a| a.to_string()).collect();
    assert_eq!(addrs, ["192.168.50.33", "fd00::33"]);
    // an older probe report without addresses still reads
    let old = serde_json::json!({"node": "n2", "scanned_at": "2026-01-01T00:00:00Z", "device": null,
        "major_minor": null, "holders": [], "processes": 1, "namespaces": 1, "unreadable": 0});
    w.put("probe/n2.json", &old.to_string()).unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert!(b.probes.contains_key("n2") && !b.snapshot.probe_addresses.contains_key("n2"));
}

/// `remediators.json` (`unstick collect`): what the Medik8s lists said comes back; one that does
/// not parse is listed and ignored.
#[test]
fn remediators_come_back_and_a_broken_file_is_ignored() {
    use crate::model::remediation::RemediatorKind;
    let d = tempfile::tempdir().unwrap();
    let w = text_bundle(d.path());
    let r = serde_json::json!({"absent": ["FenceAgentsRemediation"], "unreadable": [],
        "objects": [{"node": "node1", "by": "SelfNodeRemediation medik8s/node1", "state": "phase Fencing-Completed"}]});
    w.put(REMEDIATORS, &r.to_string()).unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    let got = b.snapshot.remediators.unwrap();
    assert_eq!(got.absent, [RemediatorKind::FenceAgentsRemediation]);
    assert_eq!(got.objects[0].to_string(), "SelfNodeRemediation medik8s/node1 (phase Fencing-Completed)");
    w.put(REMEDIATORS, "{\"absent\": [\"Nope\"]}").unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert!(b.snapshot.remediators.is_none());
    assert!(b.missing.iter().any(|m| m.starts_with(REMEDIATORS)), "{:?}", b.missing);
}

/// csi-addons' NetworkFences and classes go into a bundle and come back; a bundle without the
/// files (an older one, or csi-addons not installed) reads them as unknown.
#[test]
fn network_fences_come_back_and_an_old_bundle_still_reads() {
    let d = tempfile::tempdir().unwrap();
    let w = text_bundle(d.path());
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert_eq!(b.snapshot.network_fences, None, "no file: not known");
    let fence = crate::model::fence::NetworkFence::from_json(serde_json::json!({
        "metadata": {"name": "unstick-worker-1"},
        "spec": {"networkFenceClassName": "ceph-nfc", "fenceState": "Fenced", "cidrs": ["198.18.0.98/32"]},
        "status": {"result": "Succeeded", "message": "fencing operation successful"},
    }))
    .unwrap();
    let class =
        crate::model::fence::NetworkFenceClass { name: "ceph-nfc".into(), provisioner: "rbd.csi.ceph.com".into() };
    crate::bundle::put_fences(&w, std::slice::from_ref(&fence), std::slice::from_ref(&class)).unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert_eq!(b.snapshot.network_fences, Some(vec![fence]));
    assert_eq!(b.snapshot.network_fence_classes, vec![class]);
    // the CSIAddonsNodes: their own file, unknown without it
    assert_eq!(b.snapshot.csiaddons_nodes, None);
    let node = crate::model::csiaddons_node::CsiAddonsNode {
        namespace: "live-csi".into(),
        name: "worker-3-live-csi-daemonset-csi-rbdplugin".into(),
        driver: "rbd.csi.ceph.com".into(),
        node_id: "worker-3".into(),
        state: "Connected".into(),
        fence_clients: vec![crate::model::csiaddons_node::FenceClient {
            class: "ceph-nfc".into(),
            id: "fsid".into(),
            cidrs: vec!["198.18.0.116/32".into()],
        }],
    };
    crate::bundle::put_csiaddons_nodes(&w, std::slice::from_ref(&node)).unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert_eq!(b.snapshot.csiaddons_nodes, Some(vec![node]));
    // not a List: noted and ignored, the rest of the bundle reads
    w.put(crate::bundle::NETWORK_FENCES, "[]").unwrap();
    let b = read(d.path(), &crate::clock::WallClock).unwrap();
    assert_eq!(b.snapshot.network_fences, None);
    assert!(b.missing.iter().any(|m| m.contains("networkfences.json")), "{:?}", b.missing);
}
