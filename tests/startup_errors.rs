//! Start-up errors of every command, by running the binary: one clean line (what failed, what to
//! do), exit 2 for usage and configuration errors, no color-eyre report ("Location: src/...") and
//! no escape sequence; `RUST_BACKTRACE` only adds detail below the line.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::process::{Command, Stdio};

fn bin() -> String {
    std::env::var("UNSTICK_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_unstick").to_string())
}

/// Runs unstick with `args` (no terminal, NO_COLOR, no RUST_BACKTRACE unless `backtrace`):
/// exit code and stderr.
fn run(dir: &std::path::Path, args: &[&str], backtrace: bool) -> (i32, String) {
    let mut c = Command::new(bin());
    c.args(args)
        .env("NO_COLOR", "1")
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("KUBECONFIG")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if backtrace {
        c.env("RUST_BACKTRACE", "1");
    }
    let out = c.output().expect("runs the binary");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_one_clean_line(what: &str, stderr: &str) {
    assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: one line: {stderr}");
    assert!(stderr.starts_with("unstick"), "{what}: {stderr}");
    assert!(!stderr.contains("Location") && !stderr.contains("src/"), "{what}: no report: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "{what}: no colour under NO_COLOR: {stderr:?}");
}

const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: ok\n  context:\n    cluster: c\n    user: u\ncurrent-context: ok\nusers:\n- name: u\n  user:\n    token: abc\n";

#[test]
fn the_console_says_what_failed_in_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad_kc = d.join("bad-kubeconfig");
    std::fs::write(&bad_kc, "garbage: [").unwrap();
    let good_kc = d.join("kubeconfig");
    std::fs::write(&good_kc, KUBECONFIG).unwrap();
    let bad_cfg = d.join("bad.toml");
    std::fs::write(&bad_cfg, "nokey = 1\n").unwrap();
    let missing = d.join("missing");
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        ("missing kubeconfig", vec!["--kubeconfig", missing.to_str().unwrap()], "--kubeconfig"),
        ("invalid kubeconfig", vec!["--kubeconfig", bad_kc.to_str().unwrap()], "kubeconfig"),
        ("unknown context", vec!["--kubeconfig", good_kc.to_str().unwrap(), "--context", "nope"], "nope"),
        ("bad config", vec!["--config", bad_cfg.to_str().unwrap()], "nokey"),
        ("no terminal", vec!["--kubeconfig", good_kc.to_str().unwrap(), "--no-ceph"], "terminal"),
    ];
    for (what, args, mention) in cases {
        let (code, err) = run(d, &args, false);
        assert_eq!(code, 2, "{what}: {err}");
        assert_one_clean_line(what, &err);
        assert!(err.contains(mention), "{what}: names {mention}: {err}");
    }
    // the other commands on the same bad config: one line, exit 2
    for sub in [&["diagnose"][..], &["sessions"], &["journal"], &["export", "latest"], &["train", "stale-lock"]] {
        let mut args = vec!["--config", bad_cfg.to_str().unwrap()];
        args.extend_from_slice(sub);
        let (code, err) = run(d, &args, false);
        assert_eq!(code, 2, "{sub:?}: {err}");
        assert_one_clean_line(&format!("{sub:?}"), &err);
    }
    // RUST_BACKTRACE adds the report below the same first line
    let (code, err) = run(d, &["--config", bad_cfg.to_str().unwrap()], true);
    assert_eq!(code, 2);
    assert!(err.lines().next().unwrap().contains("nokey"), "{err}");
    assert!(err.lines().count() > 1, "{err}");
}
