//! Text and Markdown renderings of a [`Report`] (JSON is its `serde` form).

use std::fmt::Write;

use super::{Finding, Report};
use crate::text::sanitize;

fn ts(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Plain text for a terminal: one block per finding, then what was missing.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "unstick diagnose: {} at {}", r.input, ts(r.generated_at));
    if r.findings.is_empty() {
        let _ = writeln!(s, "\nNo findings.");
    }
    for (i, f) in r.findings.iter().enumerate() {
        let _ = writeln!(s, "\n{}. [{}] {}  ({})", i + 1, f.severity.as_str().to_uppercase(), f.pattern, f.id);
        let _ = writeln!(s, "   {}", f.summary);
        let _ = writeln!(s, "   objects: {}", objects(f));
        let _ = writeln!(s, "   evidence:");
        for e in &f.evidence {
            let _ = writeln!(s, "     - [{}] {}  (observed {})", source(e.source), e.text, ts(e.observed_at));
        }
        for u in &f.unverified {
            let _ = writeln!(s, "   {}", sanitize(&u.line()));
        }
        let _ = writeln!(s, "   why: {}", f.explanation);
        let _ = writeln!(s, "   playbook: {}", f.playbook);
    }
    missing(&mut s, r, "\nmissing (not taken into account):", "  - ");
    incomplete(&mut s, r, "\n");
    s
}

/// `incomplete: could not read X, Y` when the rules lacked an input (see [`Report::incomplete`]).
fn incomplete(s: &mut String, r: &Report, before: &str) {
    if !r.incomplete.is_empty() {
        let list: Vec<String> = r.incomplete.iter().map(|i| sanitize(i)).collect();
        let _ = writeln!(s, "{before}incomplete: could not read {}", list.join(", "));
    }
}

/// Markdown for a ticket or postmortem.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# unstick diagnose\n\n{} at {}\n", md(&r.input), ts(r.generated_at));
    if r.findings.is_empty() {
        let _ = writeln!(s, "No findings.\n");
    } else {
        let _ = writeln!(s, "| # | severity | pattern | summary |\n|---|---|---|---|");
        for (i, f) in r.findings.iter().enumerate() {
            let _ = writeln!(s, "| {} | {} | `{}` | {} |", i + 1, f.severity.as_str(), f.pattern, md(&f.summary));
        }
    }
    for (i, f) in r.findings.iter().enumerate() {
        let _ = writeln!(s, "\n## {}. {} — {}\n", i + 1, f.pattern, md(&f.summary));
        let _ =
            writeln!(s, "- severity: **{}**\n- id: `{}`\n- playbook: `{}`", f.severity.as_str(), md(&f.id), f.playbook);
        let _ = writeln!(s, "- objects: {}\n\n### Evidence\n", md(&objects(f)));
        for e in &f.evidence {
            let _ = writeln!(s, "- `{}` {} _(observed {})_", source(e.source), md(&e.text), ts(e.observed_at));
        }
        let _ = writeln!(s, "\n### Why\n\n{}", md(&f.explanation));
    }
    if !r.missing.is_empty() {
        s.push('\n');
    }
    missing(&mut s, r, "## Missing (not taken into account)\n", "- ");
    incomplete(&mut s, r, "\n");
    s
}

fn objects(f: &Finding) -> String {
    f.objects.iter().map(|o| o.label()).collect::<Vec<_>>().join(", ")
}

fn source(s: super::EvidenceSource) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn missing(s: &mut String, r: &Report, title: &str, bullet: &str) {
    if r.missing.is_empty() {
        return;
    }
    let _ = writeln!(s, "{title}");
    for m in &r.missing {
        let _ = writeln!(s, "{bullet}{}", sanitize(m));
    }
}

/// Escapes what Markdown would interpret in cluster-provided text (tables, emphasis, HTML).
pub(crate) fn md(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in sanitize(t).chars() {
        if matches!(c, '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']' | '#' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
