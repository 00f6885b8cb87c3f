//! Issue 10: strings that did not come from unstick (file names, keys and values of scenario
//! and config files, command-line arguments) reach stdout and stderr without any raw control
//! character or escape sequence. JSON escaping of C1 and DEL is unit-tested in `src/text.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::process::Command;

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
