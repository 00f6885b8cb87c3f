//! `unstick train` on the command line: the list, and the errors for a bad name, a bad file and a
//! bad speed (exit 2, the message names the file, key and line). The console itself needs a
//! terminal; `train_scenarios.rs` drives it on `TestBackend`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::process::Command;

fn unstick(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_unstick")).args(args).output().expect("run unstick");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn train_lists_every_embedded_scenario_with_its_level() {
    let (code, out, _) = unstick(&["train"]);
    assert_eq!(code, 0);
    for name in [
        "stale-lock",
        "lost-node-multi-attach",
        "dead-node-watcher",
        "unmap-busy",
        "same-node-restage",
        "mass-unmap-busy",
        "node-loss-five-volumes",
        "driver-not-registered",
        "rwo-claim-shared",
    ] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} listed:\n{out}");
    }
    assert!(out.contains("easy") && out.contains("hard") && out.contains("9 scenarios embedded"), "{out}");
}

#[test]
fn an_unknown_scenario_is_a_usage_error_naming_the_choices() {
    let (code, _, err) = unstick(&["train", "no-such-thing"]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-thing: no such scenario") && err.contains("stale-lock"), "{err}");
}

#[test]
fn a_broken_scenario_file_names_file_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = include_str!("../assets/scenarios/stale-lock.toml");
    let path = dir.path().join("mine.toml");
    std::fs::write(
        &path,
        good.replacen(
            "[[node]]\nname = \"node1\"\nip = \"10.47.136.60\"",
            "[[node]]\nname = \"node1\"\nip = \"10.47.136.600\"",
            1,
        ),
    )
    .unwrap();
    let (code, _, err) = unstick(&["train", "--file", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let line = good.lines().position(|l| l.trim() == "[[node]]").unwrap() + 1;
    assert!(
        err.contains("mine.toml: ")
            && err.contains(&format!("line {line}: node[0].ip = \"10.47.136.600\": not an IP address")),
        "{err}"
    );

    std::fs::write(&path, "name = \"x\"\ntitle = 3\n").unwrap();
    let (code, _, err) = unstick(&["train", "--file", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("mine.toml: line 2, column 9: title: "), "{err}");

    let (code, _, err) = unstick(&["train", "--file", dir.path().join("missing.toml").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.toml"), "{err}");
}

#[test]
fn speed_must_be_positive() {
    let (code, _, err) = unstick(&["train", "stale-lock", "--speed", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--speed 0"), "{err}");
    // issue 10: an infinite or huge speed panicked in jiff's duration conversion
    for x in ["inf", "1e308", "NaN", "-1"] {
        let (code, _, err) = unstick(&["train", "stale-lock", "--speed", x]);
        assert_eq!(code, 2, "--speed {x}: {err}");
        assert!(!err.contains("panicked"), "--speed {x}: {err}");
    }
}

#[test]
fn help_explains_train() {
    let (code, out, _) = unstick(&["train", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("no cluster needed") && out.contains("--file") && out.contains("Exit codes"), "{out}");
}

#[test]
fn without_a_terminal_it_says_so_instead_of_crashing() {
    let (code, _, err) = unstick(&["train", "stale-lock"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs a terminal"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
