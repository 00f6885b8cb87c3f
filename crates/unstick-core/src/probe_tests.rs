use super::*;

const SEED_003: &str = "2892 2729 250:0 / /host/data/kubelet/plugins/kubernetes.io/rbd/mounts/k8s-image-kubernetes-dynamic-pvc-c838258f-9c7a-11e9-a3b2-fa163ed7c802 rw,relatime - ext4 /dev/rbd3 rw,stripe=1024,data=ordered";

#[test]
fn parses_the_seed_003_line() {
    let m = parse_mountinfo_line(SEED_003).unwrap();
    assert_eq!(m.major_minor, "250:0");
    assert_eq!(m.source, "/dev/rbd3");
    assert_eq!(m.fstype, "ext4");
    assert!(m.mount_point.starts_with("/host/data/kubelet/plugins/"));
    // optional fields (shared:N master:N) before the separator
    let m =
        parse_mountinfo_line("36 35 98:0 /mnt1 /mnt/a\\040b rw,noatime master:1 shared:2 - ext3 /dev/root rw").unwrap();
    assert_eq!(m.mount_point, "/mnt/a b");
    for bad in ["", "x", "1 2 3 4 5 6", "1 2 nocolon / /m rw - ext4 /dev/x rw", " - "] {
        assert_eq!(parse_mountinfo_line(bad), None, "{bad:?}");
    }
}

#[test]
fn cgroup_hints() {
    assert_eq!(
        cgroup_hint("0::/kubepods.slice/kubepods-besteffort.slice/cri-containerd-abc.scope\n"),
        "/kubepods.slice/kubepods-besteffort.slice/cri-containerd-abc.scope"
    );
    assert_eq!(cgroup_hint("12:pids:/kubepods/besteffort/pod1/abc\n11:cpu:/\n"), "/kubepods/besteffort/pod1/abc");
    assert_eq!(cgroup_hint("0::/\n"), "/");
    assert_eq!(cgroup_hint(""), "");
}

/// A fake /proc with: pid 1 (host ns, kubelet's global mount of rbd3), pid 21839 whose thread 28447
/// is in another namespace holding rbd3 (seed 003), and pid 50 with nothing.
fn fake_proc() -> tempfile::TempDir {
    use std::os::unix::fs::symlink;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("proc");
    let host = "1 0 253:1 / / rw - ext4 /dev/vda1 rw\n30 1 250:0 / /var/lib/kubelet/plugins/kubernetes.io/rbd/mounts/x rw - ext4 /dev/rbd3 rw\n";
    let mk = |dir: &std::path::Path, ns: &str, mi: &str| {
        std::fs::create_dir_all(dir.join("ns")).unwrap();
        symlink(ns, dir.join("ns/mnt")).unwrap();
        std::fs::write(dir.join("mountinfo"), mi).unwrap();
    };
    mk(&p.join("1"), "mnt:[1]", host);
    std::fs::write(p.join("1/comm"), "systemd\n").unwrap();
    mk(&p.join("21839"), "mnt:[1]", host);
    std::fs::write(p.join("21839/comm"), "node_exporter\n").unwrap();
    std::fs::write(p.join("21839/cgroup"), "0::/kubepods/besteffort/pod9/ne\n").unwrap();
    mk(&p.join("21839/task/21839"), "mnt:[1]", host);
    mk(&p.join("21839/task/28447"), "mnt:[2]", &format!("1 0 0:5 / / rw - overlay overlay rw\n{SEED_003}\n"));
    mk(&p.join("50"), "mnt:[3]", "1 0 0:5 / / rw - overlay overlay rw\n");
    std::fs::create_dir_all(p.join("sys/kernel")).unwrap();
    std::fs::write(p.join("sys/kernel/hostname"), "node133\n").unwrap();
    std::fs::write(p.join("devices"), "Block devices:\n  7 loop\n250 rbd\n").unwrap();
    let s = d.path().join("sys/block/rbd3");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(s.join("dev"), "250:0\n").unwrap();
    d
}

#[test]
fn finds_the_thread_in_another_namespace() {
    let d = fake_proc();
    let opts = ProbeOptions {
        device: Some("/dev/rbd3".into()),
        proc_root: d.path().join("proc"),
        sys_root: d.path().join("sys"),
    };
    let r = scan(&opts, &crate::clock::WallClock);
    assert_eq!(r.node, "node133");
    assert_eq!(r.major_minor.as_deref(), Some("250:0"));
    assert_eq!(r.processes, 3);
    let foreign: Vec<_> = r.holders.iter().filter(|h| !h.host_namespace).collect();
    assert_eq!(foreign.len(), 1, "{:#?}", r.holders);
    assert_eq!((foreign[0].pid, foreign[0].tid), (21839, Some(28447)));
    assert_eq!(foreign[0].comm, "node_exporter");
    assert_eq!(foreign[0].cgroup, "/kubepods/besteffort/pod9/ne");
    assert_eq!(foreign[0].mount_namespace, "mnt:[2]");
    // host-namespace mounts (pid 1 and pid 21839's main thread) are reported and marked.
    assert_eq!(r.holders.iter().filter(|h| h.host_namespace).count(), 2);
    // Another device: nothing.
    let r = scan(&ProbeOptions { device: Some("rbd9".into()), ..opts.clone() }, &crate::clock::WallClock);
    assert!(r.holders.is_empty());
    // All RBD devices.
    let r = scan(&ProbeOptions { device: None, ..opts }, &crate::clock::WallClock);
    assert_eq!(r.holders.len(), 3);
}

#[test]
fn missing_proc_is_not_a_panic() {
    let r = scan(
        &ProbeOptions {
            device: Some("../../etc".into()),
            proc_root: "/nonexistent".into(),
            sys_root: "/nonexistent".into(),
        },
        &crate::clock::WallClock,
    );
    assert!(r.holders.is_empty());
    assert_eq!(r.unreadable, 1);
}

proptest::proptest! {
    #[test]
    fn mountinfo_parser_never_panics(s in ".*") {
        let _ = parse_mountinfo_line(&s);
        let _ = cgroup_hint(&s);
    }
}

#[test]
fn the_node_addresses_from_its_fib_trie_and_if_inet6() {
    // as this machine's /proc/1/net shows them (a bridge, veths, eth0 with a ULA)
    let trie = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n     +-- 127.0.0.0/8 2 0 2\n           |-- 127.0.0.1\n              /32 host LOCAL\n              |-- 192.0.2.0\n                 /24 link UNICAST\n              |-- 192.0.2.2\n                 /32 host LOCAL\n           |-- 192.0.2.255\n              /32 link BROADCAST\nLocal:\n              |-- 192.0.2.2\n                 /32 host LOCAL\n";
    assert_eq!(fib_trie_local(trie), vec!["192.0.2.2".parse::<std::net::IpAddr>().unwrap()]);
    let v6 = "00000000000000000000000000000001 01 80 10 80       lo\nfe8000000000000000fc00fffe000001 04 40 20 80     eth0\nfd000000000000000000000000000002 04 40 00 82     eth0\n";
    assert_eq!(if_inet6_global(v6), vec!["fd00::2".parse::<std::net::IpAddr>().unwrap()]);
}
