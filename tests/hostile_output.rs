//! Issue 10: strings that did not come from unstick (file names, keys and values of scenario
//! and config files, command-line arguments) reach stdout and stderr without any raw control
//! character or escape sequence. JSON escaping of C1 and DEL is unit-tested in `crates/unstick-core/src/text.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::process::Command;
use unstick::ui::testing::press;

const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{7f}x";

fn bin() -> String {
    std::env::var("UNSTICK_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_unstick").to_string())
}

/// Runs unstick with an isolated XDG tree; returns (exit code, stdout + stderr).
fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(bin())
        .args(args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), all)
}

fn assert_clean(what: &str, out: &str) {
    let bad: Vec<char> = out.chars().filter(|c| c.is_control() && *c != '\n').collect();
    assert!(bad.is_empty(), "{what}: raw control characters {bad:?} in {out:?}");
    assert!(
        out.contains("pwned") || out.contains('x'),
        "{what}: the hostile text should still be shown, cleaned: {out:?}"
    );
}

#[test]
fn hostile_strings_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = include_str!("../assets/scenarios/stale-lock.toml");
    let toml_hostile = "\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u007fx";

    // a scenario file whose name, unknown key, enum value and name are hostile
    let file = d.join(format!("{HOSTILE}.toml"));
    for (label, text) in [
        ("unknown key", good.replacen("speed = 5.0", &format!("speed = 5.0\n\"{toml_hostile}\" = 1"), 1)),
        ("bad enum", good.replacen("difficulty = \"easy\"", &format!("difficulty = \"{toml_hostile}\""), 1)),
        ("bad name", good.replacen("name = \"stale-lock\"", &format!("name = \"{toml_hostile}\""), 1)),
        ("bad duration", good.replacen("after = \"1m\"", &format!("after = \"{toml_hostile}\""), 1)),
        (
            "bad pod node",
            good.replacen("node = \"10.46.181.146\"\nclaim", &format!("node = \"{toml_hostile}\"\nclaim"), 1),
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let (code, out) = run(d, &["train", "--file", file.to_str().unwrap()]);
        assert_eq!(code, 2, "{label}: {out}");
        assert_clean(label, &out);
    }

    // a config file with a hostile path and a hostile key / section / value
    let cfg = d.join(format!("{HOSTILE}.config.toml"));
    for (label, text) in [
        ("config key", format!("[ceph]\n\"{toml_hostile}\" = 1\n")),
        ("config section", format!("[\"{toml_hostile}\"]\n")),
        ("config enum", format!("[ceph]\nmode = \"{toml_hostile}\"\n")),
        ("config theme", format!("[ui]\ntheme = \"{toml_hostile}\"\n")),
    ] {
        std::fs::write(&cfg, text).unwrap();
        let (code, out) = run(d, &["--config", cfg.to_str().unwrap(), "train", "stale-lock"]);
        assert_eq!(code, 2, "{label}: {out}");
        assert_clean(label, &out);
    }
    let (_, out) = run(d, &["--config", d.join(HOSTILE).to_str().unwrap(), "train", "stale-lock"]);
    assert_clean("missing config path", &out);

    // arguments echoed by the command-line parser, and a scenario name that does not exist
    let (code, out) = run(d, &[HOSTILE]);
    assert_eq!(code, 2, "{out}");
    assert_clean("clap", &out);
    let (code, out) = run(d, &["train", HOSTILE]);
    assert_eq!(code, 2, "{out}");
    assert_clean("scenario name", &out);
    let (_, out) = run(d, &["export", HOSTILE, "--dir", d.to_str().unwrap()]);
    assert_clean("export id", &out);
    let (_, out) = run(d, &["journal", HOSTILE, "--dir", d.to_str().unwrap()]);
    assert_clean("journal id", &out);
}

/// A support bundle of the incidents fixture whose namespace, node and event texts carry
/// [`HOSTILE`] (JSON-escaped in `kube.json`, as a hostile cluster would serve them).
fn hostile_bundle(dir: &std::path::Path) -> std::path::PathBuf {
    let b = dir.join("bundle");
    let manifest = unstick_core::bundle::Manifest {
        collected_at: Some(unstick_core::fixtures::now()),
        context: Some(format!("ctx{HOSTILE}")),
        ..Default::default()
    };
    unstick_core::bundle::write_snapshot(&b, &unstick_core::fixtures::incidents(), &manifest).unwrap();
    let escaped = serde_json::to_string(HOSTILE).unwrap();
    let escaped = escaped.trim_matches('"');
    let kube = b.join("kube.json");
    let text = std::fs::read_to_string(&kube).unwrap();
    let text = text
        .replace("incident-000", &format!("incident-000{escaped}"))
        .replace("k8s-node-lost", &format!("k8s-node-lost{escaped}"))
        .replace("\"message\":\"", &format!("\"message\":\"{escaped}"));
    assert!(text.contains("pwned"), "the fixture has the names replaced");
    std::fs::write(&kube, text).unwrap();
    b
}

fn no_control(what: &str, s: &str) {
    let bad: Vec<char> = s.chars().filter(|c| c.is_control() && *c != '\n').collect();
    assert!(bad.is_empty(), "{what}: raw control characters {bad:?}:\n{s}");
}

/// Issue 10: the hostile names of a cluster reach the console's screen (every pane, the finding
/// detail, 80x24 and 200x50), `diagnose` in text, Markdown and JSON, and the session export in
/// Markdown and JSON without a raw control character; the names are still shown, cleaned.
#[test]
fn hostile_cluster_strings_reach_no_output_raw() {
    use unstick::ui::app::{App, Msg, Pane};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = hostile_bundle(d);
    let bundle = unstick_core::bundle::read(&b, &unstick_core::clock::WallClock).expect("the hostile bundle reads");
    // the TUI, on TestBackend
    let mut cfg = unstick_core::config::Config::defaults();
    cfg.ceph.scan_on_start = false;
    let mut app = App::new(
        cfg.clone(),
        unstick::theme::Theme::monochrome(),
        format!("ctx{HOSTILE}"),
        None,
        true,
        jiff::Timestamp::now(),
    );
    app.now = unstick_core::fixtures::now();
    for k in unstick_core::sources::kube::WatchedKind::ALL {
        app.update(Msg::KubeState(k, unstick_core::sources::kube::SourceState::Live));
    }
    let ceph = bundle.snapshot.ceph.clone();
    app.update(Msg::Objects(Box::new(bundle.snapshot.clone())));
    app.data.snap.ceph = ceph;
    app.data.diagnosed_at = None;
    app.update(Msg::Tick(unstick_core::fixtures::now()));
    assert!(!app.data.findings.is_empty(), "the hostile bundle still has findings");
    let mut shown = String::new();
    for (w, h) in [(80, 24), (200, 50)] {
        for pane in [Pane::Findings, Pane::Pods, Pane::Volumes, Pane::Nodes, Pane::Events] {
            app.focus = pane;
            for enter in [false, true] {
                if enter {
                    press(&mut app, crossterm::event::KeyCode::Enter);
                }
                let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
                t.draw(|f| unstick::ui::view::draw(f, &app)).unwrap();
                let buf = t.backend().buffer();
                let screen: String =
                    (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n").collect();
                no_control(&format!("screen {w}x{h} {pane:?} enter={enter}"), &screen);
                shown.push_str(&screen);
                press(&mut app, crossterm::event::KeyCode::Esc);
            }
        }
    }
    // OSC with its payload, CSI and DEL removed; the C1 CSI's parameters stay as plain text
    assert!(shown.contains("incident-00031mx") && shown.contains("k8s-node-lost31mx"), "shown, cleaned:\n{shown}");
    // diagnose in every format
    for fmt in ["text", "md", "json"] {
        let (code, out) = run(d, &["diagnose", "--bundle", b.to_str().unwrap(), "-o", fmt]);
        assert!(code == 1 || code == 3, "diagnose -o {fmt}: exit {code}: {out}");
        assert_clean(&format!("diagnose -o {fmt}"), &out);
    }
    // a session log holding the hostile findings, a note and an action, exported
    let sessions = d.join("state").join("unstick").join("sessions");
    let start = unstick_core::session::SessionEvent::Start {
        context: format!("ctx{HOSTILE}"),
        operator: format!("op{HOSTILE}@host"),
        version: "0".into(),
        mode: unstick_core::session::Mode::Live,
        writes: None,
    };
    let mut log = unstick_core::session::SessionLog::start(
        &sessions,
        "hostile",
        unstick_core::session::Redactor::builtin(),
        start,
        unstick_core::fixtures::now(),
    )
    .unwrap();
    log.findings_changed(app.now, &[], &app.data.findings).unwrap();
    log.note(app.now, &format!("note{HOSTILE}")).unwrap();
    drop(log);
    for fmt in ["md", "json"] {
        let (code, out) = run(d, &["export", "hostile", "-f", fmt, "--dir", sessions.to_str().unwrap()]);
        assert_eq!(code, 0, "export -f {fmt}: {out}");
        assert_clean(&format!("export -f {fmt}"), &out);
    }
}
