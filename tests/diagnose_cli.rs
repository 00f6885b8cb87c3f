//! `unstick diagnose --bundle` as a user runs it: exit codes, the three output formats, probe files,
//! missing and malformed bundle files.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::path::Path;
use std::process::{Command, Output};

use unstick_core::bundle::{Manifest, Writer, write_snapshot};
use unstick_core::fixtures;
use unstick_core::lineage::Lineage;
use unstick_core::model::{ImageFacts, Observed};

fn unstick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent") // no user config
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

fn incidents_bundle(dir: &Path) {
    let mut snap = fixtures::incidents();
    let at = fixtures::now();
    for img in Lineage::build(&snap).images() {
        snap.ceph.images.entry(img).or_insert_with(|| ImageFacts {
            watchers: Observed { value: Ok(vec![]), at },
            locks: Observed { value: Ok(vec![]), at },
        });
    }
    let m = Manifest { collected_at: Some(at), context: Some("kh".into()), ..Default::default() };
    write_snapshot(dir, &snap, &m).unwrap();
}

#[test]
fn json_output_and_exit_code_1_on_findings() {
    let d = tempfile::tempdir().unwrap();
    incidents_bundle(d.path());
    let out = unstick(&["diagnose", "--bundle", d.path().to_str().unwrap(), "--output", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let patterns: Vec<&str> =
        v["findings"].as_array().unwrap().iter().map(|f| f["pattern"].as_str().unwrap()).collect();
    // the five seed findings, and seed 004's web-0 stuck without any event: unexplained (issue 24)
    assert_eq!(patterns.len(), 6, "{patterns:?}");
    for p in ["stale-lock", "multi-attach-node-lost", "dead-node-watcher", "unmap-busy", "unexplained"] {
        assert!(patterns.contains(&p), "{p} not in {patterns:?}");
    }
    assert_eq!(v["missing"].as_array().unwrap().len(), 0);
    assert_eq!(v["generated_at"], "2026-11-22T03:00:00Z");
    let f = &v["findings"][0];
    assert_eq!(f["severity"], "critical");
    assert!(f["evidence"].as_array().unwrap().iter().all(|e| e["source"].is_string() && e["observed_at"].is_string()));
}

#[test]
fn text_and_markdown() {
    let d = tempfile::tempdir().unwrap();
    incidents_bundle(d.path());
    let dir = d.path().to_str().unwrap();
    let out = unstick(&["diagnose", "--bundle", dir]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[CRITICAL] stale-lock") && text.contains("playbook: remove-stale-lock"), "{text}");
    assert!(!text.contains('\u{1b}'), "control characters from events are stripped");
    let out = unstick(&["diagnose", "--bundle", dir, "-o", "md"]);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("# unstick diagnose") && md.contains("### Evidence"), "{md}");
}

#[test]
fn exit_code_0_without_findings_and_missing_files_listed() {
    let d = tempfile::tempdir().unwrap();
    let w = Writer::create(d.path()).unwrap();
    w.put("kube.json", "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}").unwrap();
    let out = unstick(&["diagnose", "--bundle", d.path().to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    assert_eq!(v["missing"], serde_json::json!(["ceph/blocklist.json"]));
}

#[test]
fn exit_code_2_on_malformed_or_absent_bundle() {
    let d = tempfile::tempdir().unwrap();
    let w = Writer::create(d.path()).unwrap();
    w.put("kube.json", "{\"kind\": \"List\",\n \"items\": [\n {\"kind\": }]}").unwrap();
    let out = unstick(&["diagnose", "--bundle", d.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kube.json") && err.contains("line 3, column"), "{err}");
    assert!(out.stdout.is_empty());
    let out = unstick(&["diagnose", "--bundle", "/nonexistent/bundle"]);
    assert_eq!(out.status.code(), Some(2));
    // Issue 10: a directory that is no bundle (neither kube.json nor manifest.json) was "No findings".
    let empty = tempfile::tempdir().unwrap();
    for dir in ["/".to_string(), empty.path().display().to_string()] {
        let out = unstick(&["diagnose", "--bundle", &dir]);
        assert_eq!(out.status.code(), Some(2), "{dir}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not a bundle"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // Live without a reachable cluster configuration is an error too, not "no findings".
    let out = unstick(&["diagnose", "--kubeconfig", "/nonexistent/kubeconfig"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn probe_file_adds_the_holder_to_unmap_busy() {
    let d = tempfile::tempdir().unwrap();
    incidents_bundle(d.path());
    let probe = serde_json::json!({
        "node": "k8s-node-c", "scanned_at": "2026-11-22T02:59:59Z", "device": "rbd3", "major_minor": "250:0",
        "processes": 200, "namespaces": 12, "unreadable": 0,
        "holders": [{"pid": 21839, "tid": 28447, "comm": "node_exporter", "cgroup": "/kubepods/besteffort/pod42/ne",
                     "mount_namespace": "mnt:[4026532201]", "host_namespace": false,
                     "mount_point": "/host/data/kubelet/plugins/kubernetes.io/rbd/mounts/k8s-image", "source": "/dev/rbd3",
                     "major_minor": "250:0", "fstype": "ext4"}]
    });
    Writer::create(d.path()).unwrap().put_json("probe/k8s-node-c.json", &probe).unwrap();
    let out = unstick(&["diagnose", "--bundle", d.path().to_str().unwrap(), "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["pattern"] == "unmap-busy").unwrap();
    let probe_lines: Vec<&str> = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == "probe")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(probe_lines.len(), 1);
    assert!(probe_lines[0].contains("pid 21839") && probe_lines[0].contains("node_exporter"), "{probe_lines:?}");
    // the summary names the holder only now that the probe shows it (issue 24)
    let summary = f["summary"].as_str().unwrap();
    assert!(summary.contains("pid 21839") && summary.contains("not the host's"), "{summary}");
}
