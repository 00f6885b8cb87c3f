//! What an installed unstick answers to, by running the binary: `kubectl-unstick` (the kubectl
//! plugin name) says `kubectl unstick` in its usage; `--version` names the commit; bash completion
//! (the script `unstick completions bash` prints, loaded in a real bash) proposes subcommands and
//! the `train` scenario names; `unstick man` prints roff; each subcommand's `--help` lists only the
//! options that act on it, and a console option stands before or after the subcommand alike.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_unstick");

fn run_as(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdin(Stdio::null())
        .output()
        .expect("runs the binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn unstick(args: &[&str]) -> Output {
    run_as(Path::new(BIN), args)
}

#[test]
fn as_kubectl_unstick_the_usage_says_kubectl_unstick() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("kubectl-unstick");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    let help = run_as(&link, &["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("Usage: kubectl unstick [OPTIONS] [COMMAND]"), "{}", stdout(&help));
    let sub = run_as(&link, &["diagnose", "--help"]);
    assert!(stdout(&sub).contains("Usage: kubectl unstick diagnose [OPTIONS]"), "{}", stdout(&sub));
    let bad = run_as(&link, &["--no-such-flag"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("kubectl unstick"));
    // and under its own name, its own name
    assert!(stdout(&unstick(&["--help"])).contains("Usage: unstick [OPTIONS] [COMMAND]"));
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = stdout(&unstick(&["--version"]));
    let re = regex::Regex::new(r"^unstick (\d+\.\d+\.\d+) \(([0-9a-f]{7,}|unknown)\)\n$").unwrap();
    let caps = re.captures(&out).unwrap_or_else(|| panic!("version line: {out:?}"));
    assert_eq!(&caps[1], env!("CARGO_PKG_VERSION"));
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(head) = head {
        // a git tree (CI's clean clone is one): the commit is HEAD's
        assert_eq!(&caps[2], String::from_utf8_lossy(&head.stdout).trim());
    }
}

/// `COMPREPLY` of the bash completion of `words` (the cursor on the last one), with the script of
/// `unstick completions bash` loaded in a non-interactive bash.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let script = unstick(&["completions", "bash"]);
    assert_eq!(script.status.code(), Some(0));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unstick.bash");
    std::fs::write(&path, &script.stdout).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let driver = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\n_unstick unstick '{}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        path.display(),
        quoted.join(" "),
        words[cword],
    );
    let out = Command::new("bash").args(["--norc", "--noprofile", "-c", &driver]).output().expect("bash runs");
    assert!(out.status.success(), "bash: {}", String::from_utf8_lossy(&out.stderr));
    stdout(&out).lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

#[test]
fn bash_completion_proposes_subcommands_and_scenario_names() {
    let top = bash_complete(&["unstick", ""]);
    for sub in ["diagnose", "train", "journal", "completions", "man"] {
        assert!(top.contains(&sub.to_string()), "{sub} not in {top:?}");
    }
    assert_eq!(bash_complete(&["unstick", "dia"]), ["diagnose"]);
    let scenarios = bash_complete(&["unstick", "train", ""]);
    let names = unstick_names();
    assert_eq!(names.len(), 9, "{names:?}");
    for n in &names {
        assert!(scenarios.contains(n), "{n} not in {scenarios:?}");
    }
    assert_eq!(bash_complete(&["unstick", "train", "stale"]), ["stale-lock"]);
    // options of the subcommand, not the console's others
    let diag = bash_complete(&["unstick", "diagnose", "--"]);
    assert!(diag.contains(&"--bundle".to_string()) && diag.contains(&"--context".to_string()), "{diag:?}");
    assert!(!diag.contains(&"--read-only".to_string()), "{diag:?}");
}

/// The scenario names as `unstick train` lists them (first column after the header).
fn unstick_names() -> Vec<String> {
    let list = stdout(&unstick(&["train"]));
    list.lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn every_shell_gets_a_script_with_the_scenarios() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = unstick(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = stdout(&out);
        assert!(text.contains("stale-lock") && text.contains("diagnose"), "{shell}: {text}");
    }
    assert_eq!(unstick(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn man_prints_roff_for_unstick_and_its_subcommands() {
    let page = unstick(&["man"]);
    assert_eq!(page.status.code(), Some(0));
    let text = stdout(&page);
    assert!(text.starts_with(".ie \\n(.g .ds Aq") || text.contains(".TH unstick 1"), "{text}");
    assert!(text.contains(".TH unstick 1") && text.contains("diagnose") && text.contains("Exit codes"), "{text}");
    let sub = stdout(&unstick(&["man", "diagnose"]));
    assert!(sub.contains(".TH unstick-diagnose 1") && sub.contains("\\-\\-bundle"), "{sub}");
    let bad = unstick(&["man", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("diagnose"), "names the subcommands there are");
}

#[test]
fn each_subcommand_help_lists_the_options_that_act_on_it() {
    let help = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("--help");
        stdout(&unstick(&a))
    };
    let console = help(&[]);
    for o in ["--kubeconfig", "--as ", "--request-timeout", "--ceph-conf", "--read-only", "--config", "--namespace"] {
        assert!(console.contains(o), "console help lacks {o}");
    }
    // (subcommand, has, has not)
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "diagnose",
            &["--kubeconfig", "--as-group", "--namespace", "--no-ceph", "--config"],
            &["--read-only", "--dry-run"],
        ),
        ("collect", &["--kubeconfig", "--rook-namespace", "--namespace"], &["--read-only"]),
        ("undo", &["--kubeconfig", "--ceph-conf", "--read-only", "--dry-run"], &["--namespace", "--all-namespaces"]),
        ("train", &["--read-only", "--config"], &["--kubeconfig", "--ceph-conf", "--namespace"]),
        ("journal", &["--config"], &["--kubeconfig", "--ceph-conf", "--read-only", "--namespace"]),
        ("sessions", &["--config"], &["--kubeconfig", "--ceph-conf", "--read-only"]),
        ("probe", &["--device"], &["--kubeconfig", "--config", "--read-only"]),
    ];
    for (sub, has, not) in cases {
        let text = help(&[sub]);
        for o in *has {
            assert!(text.contains(o), "{sub} --help lacks {o}:\n{text}");
        }
        for o in *not {
            assert!(!text.contains(o), "{sub} --help lists {o}:\n{text}");
        }
    }
}

#[test]
fn a_console_option_stands_before_or_after_the_subcommand() {
    for args in [&["--config", "/nonexistent/u.toml", "journal"][..], &["journal", "--config", "/nonexistent/u.toml"]] {
        let out = unstick(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/u.toml"), "{args:?}");
    }
}
