//! Tests of [`super`]: layered configuration, its errors and defaults.

use super::*;

fn user(text: &str) -> Result<Config, ConfigError> {
    Config::from_layers(Some((Path::new("/home/u/.config/unstick/config.toml"), text)))
}

#[test]
fn defaults_parse() {
    let c = Config::defaults();
    assert_eq!(c.ceph.timeout_seconds, 10);
    assert_eq!(c.ceph.mode, CephMode::Local);
}

#[test]
fn user_layer_overrides_one_key() {
    let c = user("[ceph]\ntimeout_seconds = 3\n").unwrap();
    assert_eq!(c.ceph.timeout_seconds, 3);
    assert_eq!(c.ceph.max_concurrent, 4);
}

#[test]
fn unknown_key_names_key_and_file() {
    let e = user("[ceph]\ntimeout_secnds = 3\n").unwrap_err().to_string();
    assert!(e.contains("ceph.timeout_secnds") && e.contains("config.toml"), "{e}");
    let e = user("[nope]\n").unwrap_err().to_string();
    assert!(e.contains("`nope`"), "{e}");
}

#[test]
fn diagnose_thresholds() {
    let c = Config::defaults();
    assert_eq!(c.diagnose.node_lost_grace_seconds, 60);
    assert_eq!(c.diagnose.unmap_busy_min_count, 3);
    let c = user("[diagnose]\nnode_lost_grace_seconds = 0\n").unwrap();
    assert_eq!(c.diagnose.node_lost_grace_seconds, 0);
    let e = user("[diagnose]\nevent_max_age_seconds = -1\n").unwrap_err().to_string();
    assert!(e.contains("diagnose.event_max_age_seconds"), "{e}");
    let e = user("[diagnose]\nunmap_busy_min_count = 0\n").unwrap_err().to_string();
    assert!(e.contains("diagnose.unmap_busy_min_count"), "{e}");
    let e = user("[diagnose]\nlist_timeout_seconds = 0\n").unwrap_err().to_string();
    assert!(e.contains("diagnose.list_timeout_seconds"), "{e}");
}

#[test]
fn remedy_section() {
    let c = Config::defaults();
    assert_eq!(c.remedy.lease_namespace, "kube-system");
    assert_eq!(c.remedy.journal_dir, "");
    let e = user("[remedy]\nlease_duration_seconds = 0\n").unwrap_err().to_string();
    assert!(e.contains("remedy.lease_duration_seconds"), "{e}");
    let e = user("[remedy]\nlease_ns = \"x\"\n").unwrap_err().to_string();
    assert!(e.contains("remedy.lease_ns"), "{e}");
}

#[test]
fn session_section() {
    let c = Config::defaults();
    assert_eq!(c.session.dir, "");
    assert!(c.session.redact_patterns.is_empty());
    let c = user("[session]\nredact_patterns = [\"corp-[0-9]+\"]\n").unwrap();
    assert_eq!(crate::session::redactor(&c.session).unwrap().redact("id corp-42"), "id [REDACTED]");
    let e = user("[session]\nredact_patterns = [\"ok\", \"(bad\"]\n").unwrap_err().to_string();
    assert!(e.contains("session.redact_patterns[1]") && e.contains("config.toml"), "{e}");
    let e = user("[session]\nredact_patterns = \"x\"\n").unwrap_err().to_string();
    assert!(e.contains("session.redact_patterns") && e.contains("an array"), "{e}");
}

#[test]
fn wrong_type_and_bad_values() {
    let e = user("[ceph]\ntimeout_seconds = \"ten\"\n").unwrap_err().to_string();
    assert!(e.contains("ceph.timeout_seconds") && e.contains("an integer"), "{e}");
    let e = user("[ceph]\nmode = \"ssh\"\n").unwrap_err().to_string();
    assert!(e.contains("config.toml"), "{e}");
    let e = user("[ceph]\ntimeout_seconds = 0\n").unwrap_err().to_string();
    assert!(e.contains("ceph.timeout_seconds"), "{e}");
    let e = user("[ui]\ntheme = \"neon\"\n").unwrap_err().to_string();
    assert!(e.contains("ui.theme"), "{e}");
    let e = user("[ui\n").unwrap_err().to_string();
    assert!(e.contains("not valid TOML"), "{e}");
}

/// Issue 10: every typed error names its key (never `?`), and out-of-range values too.
#[test]
fn typed_errors_name_their_key() {
    for (text, key) in [
        ("[ceph]\nmode = \"ssh\"\n", "ceph.mode"),
        ("[ceph]\ntimeout_seconds = -1\n", "ceph.timeout_seconds"),
        ("[ceph]\nmax_concurrent = -3\n", "ceph.max_concurrent"),
        ("[diagnose]\nunmap_busy_min_count = 9999999999\n", "diagnose.unmap_busy_min_count"),
        ("[ui]\ntick_seconds = 9223372036854775807\n", "ui.tick_seconds"),
    ] {
        let e = user(text).unwrap_err().to_string();
        assert!(e.contains(&format!("`{key}`")) && !e.contains("`?`"), "{text}: {e}");
    }
}

/// Issue 10: hostile keys and paths reach the terminal sanitized; OS errors appear once.
#[test]
fn errors_are_sanitized_and_not_doubled() {
    let e = user("[ceph]\n\"\\u001b]0;pwn\\u0007x\" = 1\n").unwrap_err().to_string();
    assert!(!e.chars().any(char::is_control), "{e:?}");
    let e = Config::from_layers(Some((Path::new("/tmp/\u{1b}[2Jx.toml"), "[nope]\n"))).unwrap_err().to_string();
    assert!(!e.chars().any(char::is_control), "{e:?}");
    let dir = tempfile::tempdir().unwrap();
    let e = Config::load(Some(dir.path()), true).unwrap_err();
    let shown = format!("{:#}", color_eyre::eyre::Report::new(e));
    assert_eq!(shown.matches("os error 21").count(), 1, "{shown}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(1000)))]

    /// Fuzz: the default file with one line replaced by arbitrary text loads or fails with
    /// a one-line error without control characters, never panics.
    #[test]
    fn mutated_configs_never_panic(line in 0usize..200, junk in "\\PC{0,40}|-?[0-9]{1,22}|[-+0-9.e]{1,12}") {
        let mut lines: Vec<String> = DEFAULT_TOML.lines().map(String::from).collect();
        let i = line % lines.len();
        let key = lines[i].split('=').next().unwrap_or("").to_string();
        lines[i] = if lines[i].contains('=') { format!("{key}= {junk}") } else { junk.clone() };
        if let Err(e) = user(&lines.join("\n")) {
            let e = e.to_string();
            proptest::prop_assert!(!e.chars().any(char::is_control) && !e.contains("`?`"), "{e:?}");
        }
    }
}
