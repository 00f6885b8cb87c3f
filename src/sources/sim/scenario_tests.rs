use jiff::Timestamp;

use super::*;

fn start() -> Timestamp {
    "2026-11-22T03:00:00Z".parse().unwrap()
}

#[test]
fn every_embedded_scenario_parses() {
    for s in Scenario::all_embedded() {
        let s = s.unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.goals.is_empty() && !s.reference.is_empty(), "{}", s.name);
    }
    assert_eq!(Scenario::all_embedded().len(), EMBEDDED.len());
}

#[test]
fn every_embedded_scenario_starts_with_its_patterns_diagnosed() {
    let cfg = crate::config::Config::defaults().diagnose;
    for s in Scenario::all_embedded().into_iter().map(Result::unwrap) {
        let w = s.world(start(), 0.0);
        let snap = w.snapshot();
        let lin = crate::lineage::Lineage::build(&snap);
        let found: BTreeSet<String> = crate::diagnose::run(&snap, &lin, &cfg, start()).iter().map(|f| f.pattern.to_string()).collect();
        for p in &s.patterns {
            assert!(found.contains(p), "{}: expected {p}, found {found:?}", s.name);
        }
    }
}

#[test]
fn errors_name_the_file_key_and_line() {
    let text = include_str!("../../../assets/scenarios/stale-lock.toml");
    let bad = text.replacen("node = \"10.46.181.146\"\nclaim", "node = \"nowhere\"\nclaim", 1);
    let e = Scenario::parse("x.toml", &bad).unwrap_err();
    assert_eq!(e.file, "x.toml");
    assert!(e.message.contains("pod[0].node = \"nowhere\""), "{e}");
    let line = bad.lines().position(|l| l.trim() == "[[pod]]").unwrap() + 1;
    assert!(e.message.starts_with(&format!("line {line}:")), "{e}");

    let e = Scenario::parse("y.toml", &text.replacen("speed = 5.0", "speed = 5.0\nsped = 3", 1)).unwrap_err();
    assert!(e.message.contains("sped") && e.message.starts_with("line "), "{e}");

    let e = Scenario::parse("z.toml", &text.replacen("size_mib = 2048", "size_mib = \"big\"", 1)).unwrap_err();
    assert!(e.message.contains("line ") && e.to_string().starts_with("z.toml: "), "{e}");

    let e = Scenario::parse("d.toml", &text.replacen("after = \"1m\"", "after = \"1 fortnight\"", 1)).unwrap_err();
    assert!(e.message.contains("duration") || e.message.contains("unit"), "{e}");
}

#[test]
fn durations() {
    assert_eq!(parse_duration("90s"), Ok(90));
    assert_eq!(parse_duration("5m"), Ok(300));
    assert_eq!(parse_duration("2h"), Ok(7200));
    assert_eq!(parse_duration("30d"), Ok(2_592_000));
    assert_eq!(parse_duration("42"), Ok(42));
    assert!(parse_duration("m").is_err());
    assert!(parse_duration("5y").is_err());
}
