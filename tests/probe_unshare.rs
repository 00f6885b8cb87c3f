//! `unstick probe` for real (seed 003): a process in its own mount namespace (`unshare -m`) keeps a
//! mount the host does not see; the probe must find it (PID, command, namespace, mount point) and
//! report nothing once that namespace is gone. Needs root and util-linux; skipped otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false)
}

fn have(bin: &str) -> bool {
    Command::new(bin).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// Starts `unshare -m` running `script` then `exec sleep`; returns once it printed `ready`.
/// `unshare` and `sh` exec, so the child's PID is the holder's.
fn holder(script: &str) -> Child {
    let mut child = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &format!("{script} && echo ready && exec sleep 120")])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("unshare starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "holder setup failed");
    child
}

fn probe(device: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_unstick")).args(["probe", "--device", device]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("probe prints JSON")
}

fn holders_of(report: &serde_json::Value, pid: u32) -> Vec<serde_json::Value> {
    report["holders"].as_array().unwrap().iter().filter(|h| h["pid"] == pid).cloned().collect()
}

fn stop(mut c: Child) {
    let _ = c.kill();
    let _ = c.wait();
}

#[test]
fn finds_a_tmpfs_holder_by_name_and_forgets_it_when_the_namespace_is_gone() {
    if !is_root() || !have("unshare") {
        eprintln!("skipped: needs root and unshare");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("host/data/kubelet/plugins/kubernetes.io/rbd/mounts/k8s-image");
    std::fs::create_dir_all(&mnt).unwrap();
    // A device name no real device has; tmpfs takes any source string.
    let dev = format!("rbdunstick{}", std::process::id());
    let child = holder(&format!("mount -t tmpfs /dev/{dev} '{}'", mnt.display()));
    let pid = child.id();

    let r = probe(&dev);
    let mine = holders_of(&r, pid);
    assert_eq!(mine.len(), 1, "{r:#}");
    let h = &mine[0];
    assert_eq!(h["comm"], "sleep");
    assert_eq!(h["source"], format!("/dev/{dev}"));
    assert_eq!(h["mount_point"], mnt.display().to_string());
    assert_eq!(h["host_namespace"], false);
    assert!(h["mount_namespace"].as_str().unwrap().starts_with("mnt:["), "{h}");
    // The host does not see the mount (that is why lsof finds nothing in seed 003).
    let host = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!host.contains(&dev));

    stop(child);
    let r = probe(&dev);
    assert!(r["holders"].as_array().unwrap().is_empty(), "{r:#}");
}

#[test]
fn finds_a_loop_device_holder_by_major_minor() {
    if !is_root() || !have("losetup") || !have("unshare") || !Path::new("/dev/loop-control").exists() {
        eprintln!("skipped: needs root, losetup and loop devices");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("disk.img");
    std::fs::File::create(&img).unwrap().set_len(8 << 20).unwrap();
    let out = Command::new("losetup").args(["-f", "--show"]).arg(&img).output().unwrap();
    if !out.status.success() {
        eprintln!("skipped: losetup failed: {}", String::from_utf8_lossy(&out.stderr));
        return;
    }
    let loopdev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let name = loopdev.trim_start_matches("/dev/").to_string();
    let detach = || {
        let _ = Command::new("losetup").args(["-d", &loopdev]).status();
    };
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img).status();
    if !mkfs.is_ok_and(|s| s.success()) {
        detach();
        eprintln!("skipped: mkfs.ext4 failed");
        return;
    }
    let mm = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap().trim().to_string();
    let (maj, min) = mm.split_once(':').unwrap();
    // Mount it through another device node with the same major:minor: only major:minor matches.
    let alias = d.path().join("alias");
    let mnt = d.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let child =
        holder(&format!("mknod '{a}' b {maj} {min} && mount '{a}' '{m}'", a = alias.display(), m = mnt.display()));
    let pid = child.id();
    let r = probe(&name);
    stop(child);
    let after = probe(&name);
    detach();

    assert_eq!(r["major_minor"], mm);
    let mine = holders_of(&r, pid);
    assert_eq!(mine.len(), 1, "{r:#}");
    assert_eq!(mine[0]["major_minor"], mm);
    assert_eq!(mine[0]["source"], alias.display().to_string());
    assert_eq!(mine[0]["host_namespace"], false);
    assert!(holders_of(&after, pid).is_empty(), "{after:#}");
}
