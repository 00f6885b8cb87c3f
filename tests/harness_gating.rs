//! The harness tests are skipped visibly, not passed silently: read from the sources of `tests/`
//! (no build needed), every test that takes the live harness (`harness()`, `tests/common/mod.rs`)
//!
//! - carries `#[ignore = "needs the harness: …"]`, so a plain `cargo test` reports it ignored;
//! - lives in a `tests/*_harness.rs` file, the targets `tests/run-all` runs with `--ignored`.
//!
//! The only other ignored tests in those files are child processes that a test starts itself
//! (named `child_*`, skipped by `tests/run-all`, so no harness test's name contains `child_`). A
//! test named `…on_1_20` runs on run-all's 1.20 harness only, so it must skip itself elsewhere
//! (`common::on_kube`).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::path::Path;

/// One `#[test]` function: its file, name, `#[ignore]` reason (if any) and body.
struct TestFn {
    file: String,
    name: String,
    ignore: Option<String>,
    body: String,
}

/// The test functions of one file: from each test attribute to the next line that closes an item
/// at the left margin.
fn test_fns(file: &str, text: &str) -> Vec<TestFn> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < lines.len() {
        if !(lines[i].starts_with("#[test]") || lines[i].starts_with("#[tokio::test")) {
            i += 1;
            continue;
        }
        let mut ignore = None;
        let mut j = i + 1;
        while j < lines.len() && lines[j].starts_with("#[") {
            if let Some(rest) = lines[j].strip_prefix("#[ignore") {
                ignore = Some(
                    rest.trim_start_matches([' ', '=']).trim_end_matches([']', '"']).trim_start_matches('"').into(),
                );
            }
            j += 1;
        }
        let sig = lines.get(j).copied().unwrap_or_default();
        let name = sig.split("fn ").nth(1).and_then(|s| s.split('(').next()).unwrap_or_default().to_string();
        let mut body = String::new();
        let mut k = j + 1;
        while k < lines.len() && lines[k] != "}" {
            body.push_str(lines[k]);
            body.push('\n');
            k += 1;
        }
        out.push(TestFn { file: file.into(), name, ignore, body });
        i = k;
    }
    out
}

/// The test functions of `tests/*.rs` but this file (whose samples would count).
fn all_test_fns() -> Vec<TestFn> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut out = vec![];
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") && name != "harness_gating.rs" {
            out.extend(test_fns(&name, &std::fs::read_to_string(e.path()).unwrap()));
        }
    }
    out
}

/// What is wrong with one test's gating, if anything.
fn problem(t: &TestFn) -> Option<String> {
    let takes = t.body.contains("harness()");
    let gated = t.ignore.as_deref().is_some_and(|r| r.starts_with("needs the harness"));
    let in_harness_file = t.file.ends_with("_harness.rs");
    let at = format!("tests/{}: {}", t.file, t.name);
    if takes && !gated {
        return Some(format!("{at} takes the harness without #[ignore = \"needs the harness: tests/run-all ...\"]"));
    }
    if gated && !in_harness_file {
        return Some(format!("{at} needs the harness but is not in a tests/*_harness.rs file (run-all would skip it)"));
    }
    if gated && t.name.contains("child_") {
        return Some(format!("{at}: run-all skips names with `child_` (the child processes); rename it"));
    }
    if gated && t.name.ends_with("on_1_20") && !t.body.contains("on_kube(") {
        return Some(format!("{at} runs on the 1.20 harness only: it must say `skipped` elsewhere (common::on_kube)"));
    }
    if in_harness_file && t.ignore.is_some() && !gated && !t.name.starts_with("child_") {
        return Some(format!("{at} is ignored for another reason: run-all runs it with --ignored"));
    }
    None
}

#[test]
fn every_harness_test_is_ignored_and_run_by_run_all() {
    let fns = all_test_fns();
    let gated = fns.iter().filter(|t| t.ignore.as_deref().is_some_and(|r| r.starts_with("needs the harness"))).count();
    assert!(gated >= 30, "found only {gated} harness tests: the scan is broken");
    let bad: Vec<String> = fns.iter().filter_map(problem).collect();
    assert!(bad.is_empty(), "{bad:#?}");
    let run_all = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run-all")).unwrap();
    assert!(run_all.contains("tests/*_harness.rs") && run_all.contains("--ignored"), "tests/run-all runs them");
    assert!(run_all.contains("--skip child_") && run_all.contains("on_1_20"), "and splits them by control plane");
}

#[test]
fn the_gating_check_can_fail() {
    let src = "#[test]\nfn a() {\n    let h = harness();\n}\n\n#[tokio::test]\n#[ignore = \"needs the harness: x\"]\n\
               async fn b() {\n    let h = harness();\n}\n#[test]\n#[ignore = \"slow\"]\nfn c() {\n}\n";
    let fns = test_fns("x_harness.rs", src);
    let names: Vec<_> = fns.iter().map(|t| (t.name.as_str(), t.ignore.as_deref())).collect();
    assert_eq!(names, [("a", None), ("b", Some("needs the harness: x")), ("c", Some("slow"))]);
    assert!(problem(&fns[0]).is_some_and(|p| p.contains("without #[ignore")));
    assert_eq!(problem(&fns[1]), None);
    assert!(problem(&fns[2]).is_some_and(|p| p.contains("another reason")));
    let elsewhere = test_fns("y.rs", src);
    assert!(problem(&elsewhere[1]).is_some_and(|p| p.contains("not in a tests/*_harness.rs")));
    let old = "#[test]\n#[ignore = \"needs the harness: x\"]\nfn d_on_1_20() {\n    let h = harness();\n}\n";
    assert!(problem(&test_fns("x_harness.rs", old)[0]).is_some_and(|p| p.contains("common::on_kube")));
    let skips =
        old.replace("    let h", "    if !common::on_kube(\"d\", \"1.20\") {\n        return;\n    }\n    let h");
    assert_eq!(problem(&test_fns("x_harness.rs", &skips)[0]), None);
}
