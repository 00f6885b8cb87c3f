//! Checks on the postmortem export of a training run played by keys (`tests/train_scenarios.rs`):
//! no placeholder anywhere, every write the simulation received appears with the exact body that
//! was sent, and a golden file of the export's reproducible part ([`stable_part`]) with only the
//! run-dependent values (times, durations, paths, ids) normalised (compared by `tests/common/golden.rs`).

#![allow(dead_code)]

use std::path::Path;

use regex::Regex;

/// Every `<word>` placeholder in `md` (Markdown escapes `\<`/`\>` removed first).
pub fn placeholders(md: &str) -> Vec<String> {
    let re = Regex::new(r"<[A-Za-z][A-Za-z0-9_.-]*>").unwrap();
    let plain = md.replace(r"\<", "<").replace(r"\>", ">");
    re.find_iter(&plain).map(|m| m.as_str().to_string()).collect()
}

/// The request bodies the export lists as sent (`actions[].sent`, the JSON after the request line).
pub fn sent_bodies(json: &serde_json::Value) -> Vec<serde_json::Value> {
    json["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["sent"].as_str())
        // `PATCH v1 nodes n (patch type: json) [...]`: the body starts at the first bracket
        .filter_map(|s| s.find(['[', '{']).map(|i| &s[i..]))
        .filter_map(|body| serde_json::from_str(body).ok())
        .collect()
}

/// The export with run-dependent values normalised: UTC times and dates, durations, the session
/// id, operator, version, temporary paths and snapshot timestamps. The values read from the
/// simulated cluster (UIDs, resourceVersions, list indexes, addresses) stay as they are.
pub fn normalise(md: &str, session: &str, tmp: &Path) -> String {
    let mut s = md.replace(session, "SESSION").replace(&tmp.display().to_string(), "TMP");
    s = s.replace(&unstick_core::remedy::journal::operator(), "OPERATOR").replace(env!("CARGO_PKG_VERSION"), "VERSION");
    for (re, to) in [
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "TIME"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)", "TIME"),
        // elapsed real and simulated times in the debrief (`solved in 0:06 (simulated 0:55)`, `at 0:03`)
        (r"\b\d+:\d\d\b", "M:SS"),
        (r"\d{8}[tT]\d{6}[zZ]", "STAMP"),
        (r"\(\d+(\.\d)? (ms|s)\)", "(DURATION)"),
        (r"\| \d+(\.\d)? (ms|s) \|", "| DURATION |"),
        (r"\| Duration \| [0-9hms ]+ \|", "| Duration | DURATION |"),
    ] {
        s = Regex::new(re).unwrap().replace_all(&s, to).into_owned();
    }
    s
}

/// The parts of a normalised export that a replay of the same key path reproduces exactly: the
/// affected objects, the confirmations and the actions with the requests sent. (The timeline and
/// the steps depend on how fast the simulation reacted between keys: a Check may find the
/// state changed, a Wait ends one poll earlier; they are checked by assertions instead.)
pub fn stable_part(md: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in md.lines() {
        if line.starts_with("## ") {
            keep = ["## Affected objects", "## Confirmations", "## Actions"].contains(&line);
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
