//! kubeconfig the way kubectl reads it, by running `unstick diagnose` against a fake API server on
//! 127.0.0.1 (plain HTTP; each GET answered with an empty list, each request's head recorded):
//! `KUBECONFIG` with several files merged (first `current-context` wins, contexts of every file
//! usable), an unknown context listing the contexts there are, `--as` / `--as-group` sent as
//! impersonation headers, `--request-timeout` bounding a request a server never answers, and no
//! kubeconfig at all said once with the hint. What a real API server does with the impersonation
//! headers (RBAC on `impersonate`) is not proven here.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A fake API server: the request heads it received (lower-cased), in order.
struct Fake {
    url: String,
    heads: Arc<Mutex<Vec<String>>>,
}

/// Starts a fake API server; `answer` false: it accepts and reads, and never answers.
fn fake(answer: bool) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(vec![]));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line.to_ascii_lowercase());
                }
                seen.lock().unwrap().push(head);
                if !answer {
                    // hold the connection open, unanswered, until the client gives up
                    let _ = std::io::copy(&mut reader, &mut std::io::sink());
                    return;
                }
                let body = r#"{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"1"},"items":[]}"#;
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    Fake { url, heads }
}

/// A kubeconfig with one context per `(name, server)`, and `current`.
fn kubeconfig(path: &Path, contexts: &[(&str, &str)], current: &str) {
    let mut y = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server) in contexts {
        y.push_str(&format!("- name: {name}\n  cluster:\n    server: {server}\n"));
    }
    y.push_str("users:\n");
    for (name, _) in contexts {
        y.push_str(&format!("- name: {name}\n  user:\n    token: t-{name}\n"));
    }
    y.push_str("contexts:\n");
    for (name, _) in contexts {
        y.push_str(&format!("- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"));
    }
    y.push_str(&format!("current-context: {current}\n"));
    std::fs::write(path, y).unwrap();
}

/// `unstick diagnose --no-ceph -o json ARGS` with `KUBECONFIG` = `kubeconfig` (unset: `None`)
/// and HOME in `dir`.
fn diagnose(dir: &Path, kubeconfig: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_unstick"));
    c.args(["diagnose", "--no-ceph", "-o", "json"])
        .args(args)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("NO_COLOR", "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null());
    match kubeconfig {
        Some(k) => c.env("KUBECONFIG", k),
        None => c.env_remove("KUBECONFIG"),
    };
    c.output().expect("runs unstick")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `input` of the JSON report diagnose printed (exit 3: complete but for --no-ceph).
fn input_of(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(3), "{}", stderr(o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["input"].as_str().unwrap().to_string()
}

#[test]
fn several_kubeconfig_files_merge_like_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (fake(true), fake(true));
    let (a, b) = (dir.path().join("a.yaml"), dir.path().join("b.yaml"));
    kubeconfig(&a, &[("one", &one.url)], "one");
    // b's current-context is not taken: the first file to set it wins
    kubeconfig(&b, &[("two", &two.url), ("one", "http://127.0.0.1:1")], "two");
    let joined = format!("{}:{}", a.display(), b.display());

    assert_eq!(input_of(&diagnose(dir.path(), Some(&joined), &[])), "live one");
    assert!(!one.heads.lock().unwrap().is_empty(), "context one reads a's server");
    assert!(two.heads.lock().unwrap().is_empty());
    // a context only b has, with b's server and b's user
    assert_eq!(input_of(&diagnose(dir.path(), Some(&joined), &["--context", "two"])), "live two");
    let heads = two.heads.lock().unwrap().clone();
    assert!(heads.iter().all(|h| h.contains("authorization: bearer t-two")), "{heads:?}");

    // an unknown context lists the merged contexts, in file order; exit 2 with the hint
    let bad = diagnose(dir.path(), Some(&joined), &["--context", "prod"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = stderr(&bad);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(r#"no context "prod" in the kubeconfig; its contexts: one, two"#), "{err}");
    assert!(err.contains("--context NAME"), "{err}");
}

#[test]
fn impersonation_is_sent_as_kubectl_sends_it() {
    let dir = tempfile::tempdir().unwrap();
    let api = fake(true);
    let kc = dir.path().join("kc.yaml");
    kubeconfig(&kc, &[("c", &api.url)], "c");
    let out = diagnose(
        dir.path(),
        None,
        &["--kubeconfig", kc.to_str().unwrap(), "--as", "oncall", "--as-group", "sre", "--as-group", "ceph-admins"],
    );
    assert_eq!(input_of(&out), "live c");
    let heads = api.heads.lock().unwrap().clone();
    assert!(!heads.is_empty());
    for h in &heads {
        assert!(h.contains("impersonate-user: oncall\r\n"), "{h}");
        assert!(h.contains("impersonate-group: sre\r\n") && h.contains("impersonate-group: ceph-admins\r\n"), "{h}");
    }
    // --as-group alone is refused, as kubectl refuses it
    let alone = diagnose(dir.path(), None, &["--kubeconfig", kc.to_str().unwrap(), "--as-group", "sre"]);
    assert_eq!(alone.status.code(), Some(2));
    assert!(stderr(&alone).contains("--as"), "{}", stderr(&alone));
}

#[test]
fn request_timeout_bounds_a_request_the_server_never_answers() {
    let dir = tempfile::tempdir().unwrap();
    let api = fake(false);
    let kc = dir.path().join("kc.yaml");
    kubeconfig(&kc, &[("mute", &api.url)], "mute");
    let started = Instant::now();
    let out = diagnose(dir.path(), None, &["--kubeconfig", kc.to_str().unwrap(), "--request-timeout", "1s"]);
    let took = started.elapsed();
    // nothing could be listed: an error, each list failed on the 1 s bound (not the default 15 s)
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no response headers within 1 s"), "{}", stderr(&out));
    assert!(took < Duration::from_secs(12), "took {took:?}");
    assert!(!api.heads.lock().unwrap().is_empty());
}

#[test]
fn no_kubeconfig_is_said_once_with_the_hint() {
    let dir = tempfile::tempdir().unwrap();
    let out = diagnose(dir.path(), None, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("unstick diagnose: "), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.contains("check --kubeconfig, --context or $KUBECONFIG"), "{err}");
}

/// A kubeconfig whose one context `c` (server `server`) has a user with an exec credential
/// plugin: `plugin`, run non-interactively.
fn exec_kubeconfig(path: &Path, server: &str, plugin: &Path) {
    let y = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      args: [\"--region\", \"r1\"]\n      interactiveMode: Never\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n",
        plugin.display()
    );
    std::fs::write(path, y).unwrap();
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_exec_credential_plugin_gives_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let api = fake(true);
    let (plugin, marker, kc) = (dir.path().join("plugin"), dir.path().join("calls"), dir.path().join("kc.yaml"));
    // it records its arguments and the ExecCredential request kubectl's protocol passes it
    script(
        &plugin,
        &format!(
            "echo \"$* $KUBERNETES_EXEC_INFO\" >> {}\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"from-plugin\"}}}}'\n",
            marker.display()
        ),
    );
    exec_kubeconfig(&kc, &api.url, &plugin);
    let out = diagnose(dir.path(), None, &["--kubeconfig", kc.to_str().unwrap()]);
    assert_eq!(input_of(&out), "live c");
    let heads = api.heads.lock().unwrap().clone();
    assert!(!heads.is_empty());
    assert!(heads.iter().all(|h| h.contains("authorization: bearer from-plugin\r\n")), "{heads:?}");
    let calls = std::fs::read_to_string(&marker).unwrap();
    assert!(calls.starts_with("--region r1 {"), "{calls}");
    assert!(calls.contains(r#""kind":"ExecCredential""#), "{calls}");
    // kube-rs (rustls) runs it while building the client: a few times, not once per request
    assert!(calls.lines().count() <= 3, "{calls}");
}

#[test]
fn a_failing_exec_plugin_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let api = fake(true);
    let (plugin, kc) = (dir.path().join("login"), dir.path().join("kc.yaml"));
    script(&plugin, "echo 'SECRET-IN-ENV-NOT-SHOWN' >&2\necho 'error: refresh token expired' >&2\nexit 1\n");
    exec_kubeconfig(&kc, &api.url, &plugin);
    let out = diagnose(dir.path(), None, &["--kubeconfig", kc.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let want = format!(
        "exec credential plugin {:?} failed (exit status: 1): error: refresh token expired",
        plugin.display().to_string()
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("check the exec plugin of the context's user"), "{err}");
    assert!(!err.contains("SECRET-IN-ENV") && !err.contains("--region"), "{err}");
    assert!(api.heads.lock().unwrap().is_empty(), "no request without a credential");

    // a plugin that is not there: said so, same exit code
    std::fs::remove_file(&plugin).unwrap();
    let out = diagnose(dir.path(), None, &["--kubeconfig", kc.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("exec credential plugin") && err.contains("No such file or directory"), "{err}");
}

#[test]
fn a_fleet_run_gives_one_row_per_context_whatever_each_one_does() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, mute) = (fake(true), fake(false));
    let kc = dir.path().join("fleet.yaml");
    kubeconfig(
        &kc,
        &[
            ("ok", &ok.url),
            ("closed", "http://127.0.0.1:1"),
            ("nowhere", "https://unstick-test.invalid:6443"),
            ("mute", &mute.url),
        ],
        "ok",
    );
    let kc = kc.to_str().unwrap();
    let started = Instant::now();
    let out = diagnose(
        dir.path(),
        None,
        &["--kubeconfig", kc, "--all-contexts", "--max-in-flight", "2", "--context-timeout", "3s"],
    );
    let took = started.elapsed();
    // one context could not be diagnosed: 4, the worst; the run itself did not fail
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["contexts"].as_array().unwrap();
    let got: Vec<(&str, &str, u64)> = rows
        .iter()
        .map(|r| (r["context"].as_str().unwrap(), r["status"].as_str().unwrap(), r["exit_code"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        [("ok", "diagnosed", 3), ("closed", "error", 4), ("nowhere", "error", 4), ("mute", "timed_out", 4)]
    );
    assert_eq!(rows[0]["incomplete"][0], "ceph (--no-ceph)");
    assert_eq!(rows[0]["findings"], serde_json::json!({"critical": 0, "warning": 0, "info": 0}));
    assert!(rows[1]["error"].as_str().unwrap().contains("Connection refused"), "{}", rows[1]);
    assert!(!rows[2]["error"].as_str().unwrap().is_empty());
    assert_eq!(rows[3]["after_seconds"], 3);

    // --contexts: those only, in the order given; the table as text
    let out = Command::new(env!("CARGO_BIN_EXE_unstick"))
        .args(["diagnose", "--no-ceph", "--kubeconfig", kc, "--contexts", "closed,ok"])
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("CONTEXT  STATUS") && lines[0].ends_with("INCOMPLETE / ERROR"), "{text}");
    assert!(lines[1].starts_with("closed   error") && lines[1].contains("Connection refused"), "{text}");
    assert!(lines[2].starts_with("ok       incomplete") && lines[2].ends_with("ceph (--no-ceph)"), "{text}");
    assert_eq!(lines.last(), Some(&"2 contexts: 0 clean, 0 with findings, 1 incomplete, 1 not diagnosed"), "{text}");

    // an unknown name is the run's own error: exit 2, one line listing the contexts
    let bad = diagnose(dir.path(), None, &["--kubeconfig", kc, "--contexts", "ok,prod"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains(r#"no context "prod" in the kubeconfig; its contexts: ok, closed, nowhere, mute"#));
}
