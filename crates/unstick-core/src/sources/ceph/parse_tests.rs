use super::*;

// Real outputs: harness/ceph.md (Ceph 16.2.15) and the seeds (plain text, older releases).

#[test]
fn status_json_pacific() {
    let w = rbd_status(r#"{"watchers":[{"address":"127.0.0.1:0/981268693","client":4155,"cookie":140645683434688}]}"#)
        .unwrap();
    assert_eq!(w, vec![Watcher { address: "127.0.0.1:0/981268693".into(), client: 4155, cookie: 140645683434688 }]);
    assert_eq!(rbd_status(r#"{"watchers":[]}"#).unwrap(), vec![]);
}

#[test]
fn status_json_old_shape() {
    let w =
        rbd_status(r#"{"watchers":{"watcher":{"address":"10.16.153.105:0/710245699","client":"14163","cookie":"1"}}}"#)
            .unwrap();
    assert_eq!(w[0].client, 14163);
    assert_eq!(w[0].cookie, 1);
}

#[test]
fn status_text_seed_002() {
    // Seed 002, as the author pasted it (one line).
    let raw = "Watchers: watcher=10.10.11.23:0/4208975345 client.364378 cookie=18446462598732840961";
    let w = rbd_status_text(raw).unwrap();
    assert_eq!(
        w,
        vec![Watcher { address: "10.10.11.23:0/4208975345".into(), client: 364378, cookie: 18446462598732840961 }]
    );
    // Seed 001's comment form.
    let w = rbd_status_text("Watchers:\n\twatcher=10.16.153.105:0/710245699 client.14163 cookie=1\n").unwrap();
    assert_eq!(w[0].address, "10.16.153.105:0/710245699");
    assert_eq!(rbd_status_text("Watchers: none\n").unwrap(), vec![]);
    assert!(rbd_status_text("Watchers: watcher=1.2.3.4:0/1 client.x").is_err());
}

#[test]
fn lock_ls_json_both_shapes() {
    let l =
        rbd_lock_ls(r#"[{"id":"kubelet_lock_magic_node1","locker":"client.4173","address":"127.0.0.1:0/42490934"}]"#)
            .unwrap();
    assert_eq!(l[0].id, "kubelet_lock_magic_node1");
    let l =
        rbd_lock_ls(r#"{"kubelet_lock_magic_node1":{"locker":"client.24128","address":"10.47.136.60:0/1864102866"}}"#)
            .unwrap();
    assert_eq!(
        l,
        vec![Lock {
            id: "kubelet_lock_magic_node1".into(),
            locker: "client.24128".into(),
            address: "10.47.136.60:0/1864102866".into()
        }]
    );
    assert_eq!(rbd_lock_ls("[]").unwrap(), vec![]);
}

#[test]
fn lock_list_text_seed_000() {
    let raw = "There is 1 exclusive lock on this image.\nLocker       ID                       Address\nclient.24128 kubelet_lock_magic_node1 10.47.136.60:0/1864102866\n";
    let l = rbd_lock_ls_text(raw).unwrap();
    assert_eq!(
        l,
        vec![Lock {
            id: "kubelet_lock_magic_node1".into(),
            locker: "client.24128".into(),
            address: "10.47.136.60:0/1864102866".into()
        }]
    );
    let l = rbd_lock_ls_text("Locker ID Address\nclient.4155 auto 140645683434688 127.0.0.1:0/981268693\n").unwrap();
    assert_eq!(l[0].id, "auto 140645683434688");
    assert_eq!(rbd_lock_ls_text("").unwrap(), vec![]);
    assert!(rbd_lock_ls_text("garbage").is_err());
}

#[test]
fn blocklist_two_documents() {
    let raw = "\n[{\"addr\":\"127.0.0.1:0/42490934\",\"until\":\"2026-11-22T03:47:53.562837+0000\"}][{\"range\":\"10.1.0.0:0/16\",\"until\":\"2026-11-22T04:18:39.712824+0000\"}]";
    let b = blocklist_ls(raw).unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].target, BlocklistTarget::Addr("127.0.0.1:0/42490934".into()));
    assert_eq!(b[1].target, BlocklistTarget::Range("10.1.0.0:0/16".into()));
    assert_eq!(blocklist_ls("\n[][]").unwrap(), vec![]);
    assert_eq!(blocklist_ls("[]").unwrap(), vec![]);
    assert!(blocklist_ls("").is_err());
    assert!(blocklist_ls("[{\"until\":\"x\"}]").is_err());
}

#[test]
fn ls_long_skips_snapshots() {
    let raw = r#"[{"image":"a","id":"1015a4ab3a21","size":67108864,"format":2,"lock_type":"exclusive"},
 {"image":"b","id":"1017aa1f550c","size":67108864,"format":2},
 {"image":"b","id":"1017aa1f550c","snapshot":"s1","snapshot_id":4,"size":67108864,"format":2,"protected":"false"}]"#;
    let l = rbd_ls_long(raw).unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].lock_type.as_deref(), Some("exclusive"));
    assert_eq!(l[1].id.as_deref(), Some("1017aa1f550c"));
}

#[test]
fn osd_dump_watchers() {
    let raw = r#"[{"namespace":"","object":"rbd_header.37fe98e970fe","entity_name":{"type":"client","num":14392},"cookie":140047609255984,
  "timeout":30,"entity_addr_t":{"type":"any","addr":"127.0.0.1:0","nonce":2065918759}}]"#;
    let w = dump_watchers(raw).unwrap();
    assert_eq!(w[0].object, "rbd_header.37fe98e970fe");
    assert_eq!(w[0].watcher.address, "127.0.0.1:0/2065918759");
    assert_eq!(w[0].watcher.client, 14392);
    assert_eq!(osd_ls("\n[0,1]").unwrap(), vec![0, 1]);
}

#[test]
fn malformed_inputs_are_errors_with_position() {
    let e = rbd_status("{\"watchers\":[{\"address\":").unwrap_err();
    assert!(e.detail.contains("line 1"), "{e}");
    assert!(rbd_status("{}").is_err());
    assert!(rbd_status("{\"watchers\":5}").is_err());
    assert!(rbd_lock_ls("5").is_err());
    assert!(rbd_ls_long("{").is_err());
    assert!(dump_watchers("[{}]").is_err());
}

/// A fixture written from a public format (see tests/fixtures/public/README.md for its source).
fn public(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/public").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn status_text_public_forms() {
    assert_eq!(rbd_status_text(&public("rbd-status-none.txt")).unwrap(), vec![]);
    let w = rbd_status_text(&public("rbd-status-watchers.txt")).unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!(w[1], Watcher { address: "[fd00::6]:0/2065918759".into(), client: 14392, cookie: 140047609255984 });
    // The Migration section after the watchers is not a watcher.
    let w = rbd_status_text(&public("rbd-status-migration.txt")).unwrap();
    assert_eq!(w, vec![Watcher { address: "10.0.0.5:0/3129404212".into(), client: 14163, cookie: 1 }]);
    // Newer JSON with a `migration` object next to `watchers`.
    assert_eq!(rbd_status(&public("rbd-status-migration.json")).unwrap(), w);
}

#[test]
fn lock_text_and_object_public_forms() {
    let l = rbd_lock_ls_text(&public("rbd-lock-ls-in-tree.txt")).unwrap();
    assert_eq!(
        l,
        vec![Lock {
            id: "kubelet_lock_magic_compute-worker-1".into(),
            locker: "client.4239".into(),
            address: "10.0.2.190:0/3340152652".into()
        }]
    );
    let l = rbd_lock_ls_text(&public("rbd-lock-ls-shared.txt")).unwrap();
    assert_eq!(l.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(), ["id1", "id2", "id3"]);
    assert_eq!(l[2].address, "[fd00::7]:0/1003");
    let l = rbd_lock_ls(&public("rbd-lock-ls-object.json")).unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[1], Lock { id: "id2".into(), locker: "client.4171".into(), address: "10.0.0.6:0/1002".into() });
}

#[test]
fn blocklist_text_public_forms() {
    let b = blocklist_ls_text(&public("blocklist-ls-pacific.txt")).unwrap();
    assert_eq!(b.len(), 3, "{b:?}");
    assert_eq!(b[0].until.as_deref(), Some("2026-11-22T04:47:53.562837+0000"));
    assert_eq!(b[2].target, BlocklistTarget::Range("cidr:10.1.0.0:0/16".into()));
    let b = blocklist_ls_text(&public("blacklist-ls-luminous.txt")).unwrap();
    assert_eq!(b[1].target, BlocklistTarget::Addr("10.0.0.6:0/0".into()));
    assert_eq!(b[1].until.as_deref(), Some("2018-03-19 12:29:36.473127"));
    assert!(b[1].until_time().is_some());
    // "listed 0 entries" alone (pasted with the empty output) is an empty list.
    assert_eq!(blocklist_ls_text("listed 0 entries\n").unwrap(), vec![]);
    assert_eq!(blocklist_ls_text("").unwrap(), vec![]);
    let e = blocklist_ls_text("10.0.0.5:0/1 2026-11-22T04:47:53Z\nError EACCES: access denied\n").unwrap_err();
    assert!(e.detail.contains("line 2"), "{e}");
}

#[test]
fn showmapped_public_forms() {
    let img = |pool: &str, ns: &str, image: &str| crate::model::ImageRef {
        pool: pool.into(),
        namespace: ns.into(),
        image: image.into(),
    };
    let t = showmapped(&public("showmapped-nautilus.txt")).unwrap();
    assert_eq!(t.len(), 2, "{t:?}");
    assert_eq!(t[0].image, img("replicapool", "", "csi-vol-0b1c0d2e-1111-4a2b-9c3d-4e5f6a7b8c9d"));
    assert_eq!((t[0].device.as_str(), t[0].snap.as_deref(), t[0].id.as_str()), ("/dev/rbd0", None, "0"));
    assert_eq!(t[1].image, img("replicapool", "tenant-a", "csi-vol-22222222-3333-4444-5555-666666666666"));
    let j = showmapped(&public("showmapped-nautilus.json")).unwrap();
    assert_eq!(j[0], t[0]);
    let old = showmapped(&public("showmapped-luminous.txt")).unwrap();
    assert_eq!(old[0].image, img("kube", "", "kubernetes-dynamic-pvc-1"));
    assert_eq!(showmapped(&public("showmapped-luminous.json")).unwrap(), old);
    let nbd = showmapped(&public("showmapped-nbd.json")).unwrap();
    assert_eq!((nbd[0].id.as_str(), nbd[0].device.as_str()), ("41233", "/dev/nbd0"));
    assert_eq!(showmapped("").unwrap(), vec![]);
    assert_eq!(showmapped("[]\n").unwrap(), vec![]);
    assert!(showmapped("id pool image snap device\n0 rbd\n").is_err());
    assert!(showmapped("rbd: failed to load rbd kernel module (127)\n").is_err());
}

proptest::proptest! {
    // fuzz target of issue 10: every Ceph parser (cases: UNSTICK_FUZZ_CASES, else 10000 a target)
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(10000)))]

    #[test]
    fn parsers_never_panic(s in ".{0,200}") {
        let _ = rbd_status(&s);
        let _ = rbd_lock_ls(&s);
        let _ = blocklist_ls(&s);
        let _ = rbd_ls_long(&s);
        let _ = dump_watchers(&s);
        let _ = osd_ls(&s);
        let _ = rbd_status_text(&s);
        let _ = rbd_lock_ls_text(&s);
        let _ = blocklist_ls_text(&s);
        let _ = showmapped(&s);
    }

    /// Text-like garbage built from the words of the real outputs, in any order.
    #[test]
    fn text_parsers_never_panic_on_text_like(words in proptest::collection::vec(proptest::sample::select(vec![
        "Watchers:", "none", "watcher=10.0.0.5:0/1", "client.4", "cookie=7", "Locker", "ID", "Address", "There", "is", "1",
        "exclusive", "lock", "cidr:10.1.0.0:0/16", "listed", "entries", "2026-11-22T04:47:53.562837+0000", "id", "pool",
        "namespace", "image", "snap", "device", "/dev/rbd0", "-", "[fd00::1]:0/9", "\n", "\t", "[", "{", "}", "]",
    ]), 0..60)) {
        let s = words.join(" ");
        let _ = rbd_status_text(&s);
        let _ = rbd_lock_ls_text(&s);
        let _ = blocklist_ls_text(&s);
        let _ = showmapped(&s);
    }

    #[test]
    fn json_parsers_never_panic_on_json_like(s in r#"[\[\]{}":,0-9a-z ]{0,80}"#) {
        let _ = rbd_status(&s);
        let _ = rbd_lock_ls(&s);
        let _ = blocklist_ls(&s);
        let _ = dump_watchers(&s);
    }
}

#[test]
fn image_meta_as_ceph_16_prints_it() {
    // seen from rbd 16.2.15: `image-meta list --format json` of an image with two keys, and of one
    // with none (empty stdout, exit 0)
    let raw = r#"{".rbd.csi.ceph.com/clientaddress/0001-0009-rook-ceph-0000000000000002-7e184c3c-6cff-48e8-a51f-058cf8540fd9/worker-1":"100.64.0.5","other":"k"}"#;
    let m = rbd_image_meta(raw).unwrap();
    assert_eq!(m.len(), 2);
    let c = crate::model::ceph::client_addresses(&m);
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].node.as_str(), c[0].ip.to_string().as_str()), ("worker-1", "100.64.0.5"));
    assert_eq!(c[0].volume_handle, "0001-0009-rook-ceph-0000000000000002-7e184c3c-6cff-48e8-a51f-058cf8540fd9");
    assert!(rbd_image_meta("").unwrap().is_empty());
    assert!(rbd_image_meta("\n").unwrap().is_empty());
    assert!(rbd_image_meta("[1]").is_err());
}
