//! What real Ceph printed on the harness (`tests/harness/record_ceph.py`), one directory per
//! release under `tests/fixtures/public/` (`pacific` = 16, `reef` = 18; each `SOURCE` names the
//! version that printed it): every parser the console uses reads each release's output, and what
//! one command says agrees with what the others say about the same image, client and lock.

use super::*;
use crate::model::ceph::{BlocklistTarget, parse_range};

const RELEASES: &[&str] = &["pacific", "reef"];

fn recorded(release: &str, name: &str) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/public").join(release).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one watcher of the held image, as `rbd status --format json` printed it.
fn held(release: &str) -> Watcher {
    let w = rbd_status(&recorded(release, "rbd-status-watcher.json")).unwrap();
    assert_eq!(w.len(), 1, "{release}: one holder");
    w[0].clone()
}

#[test]
fn status_json_and_text_name_the_same_watcher() {
    for rel in RELEASES {
        let w = held(rel);
        assert_eq!(rbd_status_text(&recorded(rel, "rbd-status-watcher.txt")).unwrap(), vec![w], "{rel}");
        for none in ["rbd-status-none", "rbd-status-after-blocklist"] {
            assert_eq!(rbd_status(&recorded(rel, &format!("{none}.json"))).unwrap(), vec![], "{rel} {none}");
            assert_eq!(rbd_status_text(&recorded(rel, &format!("{none}.txt"))).unwrap(), vec![], "{rel} {none}");
        }
    }
}

#[test]
fn dump_watchers_finds_the_watcher_on_the_images_header() {
    for rel in RELEASES {
        let info: Value = serde_json::from_str(&recorded(rel, "rbd-info.json")).unwrap();
        let header = format!("rbd_header.{}", info["id"].as_str().unwrap());
        let on_header: Vec<Watcher> = dump_watchers(&recorded(rel, "dump-watchers.json"))
            .unwrap()
            .into_iter()
            .filter(|o| o.object == header)
            .map(|o| o.watcher)
            .collect();
        assert_eq!(on_header, vec![held(rel)], "{rel}");
        assert_eq!(osd_ls(&recorded(rel, "ceph-osd-ls.json")).unwrap(), vec![0], "{rel}");
    }
}

#[test]
fn the_exclusive_lock_owner_is_the_watcher() {
    for rel in RELEASES {
        let w = held(rel);
        let owner =
            Lock { id: format!("auto {}", w.cookie), locker: format!("client.{}", w.client), address: w.address };
        let json = rbd_lock_ls(&recorded(rel, "rbd-lock-ls-exclusive.json")).unwrap();
        assert_eq!(json, vec![owner], "{rel}");
        assert_eq!(rbd_lock_ls_text(&recorded(rel, "rbd-lock-ls-exclusive.txt")).unwrap(), json, "{rel}");
    }
}

#[test]
fn the_in_tree_lock_and_no_lock() {
    for rel in RELEASES {
        let json = rbd_lock_ls(&recorded(rel, "rbd-lock-ls-in-tree.json")).unwrap();
        assert_eq!(json.len(), 1, "{rel}");
        assert_eq!(json[0].id, "kubelet_lock_magic_worker-1", "{rel}");
        assert!(json[0].locker.starts_with("client."), "{rel}: {:?}", json[0]);
        assert_eq!(rbd_lock_ls_text(&recorded(rel, "rbd-lock-ls-in-tree.txt")).unwrap(), json, "{rel}");
        assert_eq!(rbd_lock_ls(&recorded(rel, "rbd-lock-ls-none.json")).unwrap(), vec![], "{rel}");
        assert_eq!(rbd_lock_ls_text(&recorded(rel, "rbd-lock-ls-none.txt")).unwrap(), vec![], "{rel}");
    }
}

#[test]
fn blocklist_holds_the_watcher_and_the_range() {
    for rel in RELEASES {
        let w = held(rel);
        let want_range = parse_range("192.0.2.0/24");
        let json = blocklist_ls(&recorded(rel, "blocklist-ls.json")).unwrap();
        let text = blocklist_ls_text(&recorded(rel, "blocklist-ls.txt")).unwrap();
        for (form, entries) in [("json", &json), ("text", &text)] {
            let addrs: Vec<&str> = entries
                .iter()
                .filter_map(|e| match &e.target {
                    BlocklistTarget::Addr(a) => Some(a.as_str()),
                    BlocklistTarget::Range(_) => None,
                })
                .collect();
            assert_eq!(addrs, vec![w.address.as_str()], "{rel} {form}");
            let ranges: Vec<_> = entries
                .iter()
                .filter_map(|e| match &e.target {
                    BlocklistTarget::Range(r) => Some(parse_range(r)),
                    BlocklistTarget::Addr(_) => None,
                })
                .collect();
            assert_eq!(ranges, vec![want_range], "{rel} {form}");
            assert!(entries.iter().all(|e| e.until.is_some()), "{rel} {form}: {entries:?}");
        }
        assert_eq!(blocklist_ls(&recorded(rel, "blocklist-ls-empty.json")).unwrap(), vec![], "{rel}");
        assert_eq!(blocklist_ls_text(&recorded(rel, "blocklist-ls-empty.txt")).unwrap(), vec![], "{rel}");
    }
}

#[test]
fn ls_long_marks_the_locked_images() {
    for rel in RELEASES {
        let info: Value = serde_json::from_str(&recorded(rel, "rbd-info.json")).unwrap();
        let ls = rbd_ls_long(&recorded(rel, "rbd-ls-l.json")).unwrap();
        let find = |name: &str| {
            let rows: Vec<_> = ls.iter().filter(|l| l.image == name).collect();
            assert_eq!(rows.len(), 1, "{rel}: {name} once (its snapshot row skipped): {ls:?}");
            rows[0].clone()
        };
        let csi = find("unstick-record-csi");
        assert_eq!(csi.id.as_deref(), info["id"].as_str(), "{rel}");
        assert_eq!(csi.size, 64 << 20, "{rel}");
        assert_eq!(csi.lock_type.as_deref(), Some("exclusive"), "{rel}");
        assert!(find("unstick-record-intree").lock_type.is_some(), "{rel}");
        assert_eq!(find("unstick-record-unused").lock_type, None, "{rel}");
    }
}

#[test]
fn image_meta_holds_the_client_address_key() {
    for rel in RELEASES {
        let meta = rbd_image_meta(&recorded(rel, "rbd-image-meta-list.json")).unwrap();
        let keys: Vec<&String> = meta.keys().collect();
        assert_eq!(keys.len(), 1, "{rel}: {meta:?}");
        assert!(keys[0].starts_with(".rbd.csi.ceph.com/clientaddress/"), "{rel}: {meta:?}");
        assert_eq!(
            rbd_image_meta(&recorded(rel, "rbd-image-meta-list-none.json")).unwrap(),
            Default::default(),
            "{rel}"
        );
    }
}
