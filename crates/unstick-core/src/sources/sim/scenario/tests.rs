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
        let found: BTreeSet<String> =
            crate::diagnose::run(&snap, &lin, &cfg, start()).iter().map(|f| f.pattern.to_string()).collect();
        for p in &s.patterns {
            assert!(found.contains(p), "{}: expected {p}, found {found:?}", s.name);
        }
    }
}

#[test]
fn errors_name_the_file_key_and_line() {
    let text = include_str!("../../../../../../assets/scenarios/stale-lock.toml");
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

fn stale_lock() -> &'static str {
    include_str!("../../../../../../assets/scenarios/stale-lock.toml")
}

/// Issue 10: values past jiff's range or infinite speeds are errors naming the key and the
/// allowed range, never a panic later in the simulation.
#[test]
fn out_of_range_values_name_the_key_and_range() {
    let t = stale_lock();
    for (from, to, want) in [
        ("speed = 5.0", "speed = inf", "speed = inf: must be a number between 0 and 1000"),
        ("speed = 5.0", "speed = 1e308", "between 0 and 1000"),
        ("speed = 5.0", "speed = -1.0", "between 0 and 1000"),
        ("after = \"1m\"", "after = \"3000000d\"", "hint[0].after: "),
        ("after = \"1m\"", "after = \"99999999999999999d\"", "hint[0].after: "),
        ("after = \"1m\"", "after = 9223372036854775807", "between 0s and 3650d"),
        ("after = \"1m\"", "after = -5", "between 0s and 3650d"),
        ("size_mib = 2048", "size_mib = 18446744073709551615", "size_mib"),
    ] {
        assert!(t.contains(from), "{from}");
        let e = Scenario::parse("x.toml", &t.replacen(from, to, 1)).unwrap_err().to_string();
        assert!(e.contains(want), "{to}: {e}");
    }
    let with_ceph = format!("{t}\n[ceph]\nwatch_timeout_seconds = 9223372036854775807\n");
    let e = Scenario::parse("x.toml", &with_ceph).unwrap_err().to_string();
    assert!(e.contains("ceph.watch_timeout_seconds") && e.contains("86400"), "{e}");
    let with_bl = format!("{t}\n[[blocklist]]\nentry = \"10.0.0.1\"\nexpires_in = \"3000000d\"\n");
    let e = Scenario::parse("x.toml", &with_bl).unwrap_err().to_string();
    assert!(e.contains("blocklist[0].expires_in") && e.contains("3650d"), "{e}");
}

/// A reference Act step names a journaled write kind (never a piece of its summary's wording):
/// an unknown kind, a missing one or a namespace without one is refused with the key and line.
#[test]
fn reference_actions_are_write_kinds() {
    let t = stale_lock();
    let e = Scenario::parse("x.toml", &t.replacen("action = \"rbd-lock-rm\"", "action = \"lock rm\"", 1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("reference[") && e.contains("action") && e.contains("rbd-lock-rm, blocklist-add"), "{e}");
    let e = Scenario::parse("x.toml", &t.replacen("action = \"rbd-lock-rm\"\n", "", 1)).unwrap_err().to_string();
    assert!(e.contains("an Act step names its action"), "{e}");
    let e = Scenario::parse("x.toml", &t.replacen("kind = \"Verify\"", "kind = \"Verify\"\nnamespace = \"x\"", 1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("only it may name a namespace"), "{e}");
}

/// Issue 10: typed errors name the key, never serde's internals ("untagged enum Raw",
/// "map, expected a string").
#[test]
fn typed_errors_name_the_key() {
    let t = stale_lock();
    let e = Scenario::parse("x.toml", &t.replacen("after = \"1m\"", "after = true", 1)).unwrap_err().to_string();
    assert!(e.contains("hint[0].after") && e.contains("duration") && !e.contains("Raw"), "{e}");
    let e = Scenario::parse("x.toml", &t.replacen("after = \"1m\"", "after = { a = 1 }", 1)).unwrap_err().to_string();
    assert!(e.contains("hint[0].after") && !e.contains("Raw"), "{e}");
    let e = Scenario::parse("x.toml", &t.replacen("difficulty = \"easy\"", "difficulty = \"x\\u001b[2J\"", 1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("difficulty") && !e.contains('\u{1b}'), "{e}");
    let e = Scenario::parse("x.toml", &t.replacen("speed = 5.0", "speed = 5.0\n\"\\u001b]0;x\\u0007\" = 1", 1))
        .unwrap_err()
        .to_string();
    assert!(!e.chars().any(char::is_control), "{e:?}");
}

/// Issue 10: a name that would leave `unstick/training/` is refused.
#[test]
fn names_that_are_paths_are_refused() {
    let t = stale_lock();
    let name = t.lines().find(|l| l.starts_with("name = ")).unwrap();
    for bad in [r#""../../../../x""#, r#""a/b""#, r#"".hidden""#, r#""""#, r#""x\u001b[2J""#] {
        let text = t.replacen(name, &format!("name = {bad}"), 1);
        let e = Scenario::parse("x.toml", &text).unwrap_err().to_string();
        assert!(e.contains("name = ") && !e.contains('\u{1b}'), "{bad}: {e}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(1000)))]

    /// Fuzz: a scenario with one line replaced by arbitrary text, or cut anywhere, parses or
    /// fails with a one-line error free of control characters; a parsed one builds its world.
    #[test]
    fn mutated_scenarios_never_panic(line in 0usize..200, junk in "\\PC{0,40}|[-+0-9.e]{1,25}|\"[0-9]{1,22}[smhd]\"", cut in 0usize..6000) {
        let t = stale_lock();
        let mut lines: Vec<String> = t.lines().map(String::from).collect();
        let i = line % lines.len();
        let key = lines[i].split('=').next().unwrap_or("").to_string();
        lines[i] = if lines[i].contains('=') { format!("{key}= {junk}") } else { junk.clone() };
        let text = lines.join("\n");
        let cut = text.char_indices().map(|(i, _)| i).nth(cut).unwrap_or(text.len());
        for text in [&text[..], &text[..cut]] {
            match Scenario::parse("f.toml", text) {
                Ok(s) => { let _ = s.world(start(), s.speed); }
                Err(e) => proptest::prop_assert!(!e.to_string().chars().any(char::is_control), "{e:?}"),
            }
        }
    }
}
