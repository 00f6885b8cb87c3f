//! `docs/scenarios.md` stays true: its complete example parses, its patterns are diagnosed on the
//! world it builds, and every top-level key and table of the format is documented.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::collections::BTreeSet;

use unstick_core::config::Config;
use unstick_core::lineage::Lineage;
use unstick_core::sources::sim::scenario::Scenario;

const DOC: &str = include_str!("../docs/scenarios.md");

/// The body of the first ```toml block after `## A complete example`.
fn example() -> &'static str {
    let from = DOC.find("## A complete example").expect("example section");
    let rest = &DOC[from..];
    let start = rest.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let len = rest[start..].find("```").expect("closed block");
    &rest[start..start + len]
}

#[test]
fn the_documented_example_parses_and_shows_its_patterns() {
    let s = Scenario::parse("example.toml", example()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.name, "example-stale-lock");
    let start: jiff::Timestamp = "2026-11-22T03:00:00Z".parse().unwrap();
    let snap = s.world(start, 0.0).snapshot();
    let lin = Lineage::build(&snap);
    let found: BTreeSet<String> = unstick_core::diagnose::run(&snap, &lin, &Config::defaults().diagnose, start)
        .iter()
        .map(|f| f.pattern.to_string())
        .collect();
    for p in &s.patterns {
        assert!(found.contains(p), "{p} not found: {found:?}");
    }
}

#[test]
fn every_table_is_documented() {
    for t in [
        "[timings]",
        "[ceph]",
        "[[node]]",
        "[[volume]]",
        "[[pod]]",
        "[[controller]]",
        "[[attachment]]",
        "[[event]]",
        "[[watcher]]",
        "[[lock]]",
        "[[blocklist]]",
        "[[daemonset]]",
        "[[holder]]",
        "[[operation]]",
        "[[goal]]",
        "[[hint]]",
        "[[reference]]",
        "[[risk]]",
    ] {
        assert!(DOC.contains(&format!("### `{t}`")) || DOC.contains(&format!("`{t}`")), "{t} is not documented");
    }
    for k in unstick_core::sources::sim::scenario::RISK_KINDS {
        assert!(DOC.contains(&format!("| `{k}` |")), "risk kind {k} is not documented");
    }
}
